//! OpenCode 2's events, v2 permissions and listings, and their mapping to
//! ask-lsp's prompt model (forms are in [`super::form`]).
//!
//! Mirrored from anomalyco/opencode (docs/opencode2.md lists the files and
//! commits): `packages/schema/src/permission.ts` (`permission.v2.*`),
//! `packages/schema/src/event.ts` (the `{id, type, data, location}`
//! envelope), `packages/schema/src/location.ts` (listings).

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::form::FormInfo;
use crate::prompt::{
    ChoiceLabel, Effect, Kind, Origin, Permission, PermissionChoice, PermissionTitle, Prompt,
};
use crate::text;

/// One event from `GET /api/event`, as ask-lsp uses it.
#[derive(Debug)]
pub(super) enum V2Event {
    FormCreated(Box<FormInfo>, Option<String>),
    FormReplied { id: String },
    FormCancelled { id: String },
    PermissionAsked(Box<PermissionRequest>, Option<String>),
    PermissionReplied { id: String, rejected: bool },
    Other,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    location: Option<LocationRef>,
}

#[derive(Deserialize)]
struct LocationRef {
    directory: Option<String>,
}

/// Reads one event's `data`; an event ask-lsp does not act on is `Other`.
pub(super) fn parse_event(text: &str) -> Result<V2Event, serde_json::Error> {
    #[derive(Deserialize)]
    struct Created {
        form: FormInfo,
    }
    #[derive(Deserialize)]
    struct Settled {
        id: String,
    }
    #[derive(Deserialize)]
    struct Replied {
        #[serde(rename = "requestID")]
        request_id: String,
        reply: String,
    }
    let envelope: Envelope = serde_json::from_str(text)?;
    let data = envelope.data.map_or("null", RawValue::get);
    let directory = envelope.location.and_then(|l| l.directory);
    Ok(match envelope.kind {
        "form.created" => V2Event::FormCreated(
            Box::new(serde_json::from_str::<Created>(data)?.form),
            directory,
        ),
        "form.replied" => V2Event::FormReplied {
            id: serde_json::from_str::<Settled>(data)?.id,
        },
        "form.cancelled" => V2Event::FormCancelled {
            id: serde_json::from_str::<Settled>(data)?.id,
        },
        "permission.v2.asked" => {
            V2Event::PermissionAsked(Box::new(serde_json::from_str(data)?), directory)
        }
        "permission.v2.replied" => {
            let replied: Replied = serde_json::from_str(data)?;
            V2Event::PermissionReplied {
                id: replied.request_id,
                rejected: replied.reply == "reject",
            }
        }
        _ => V2Event::Other,
    })
}

/// Whether an event's raw `data` may be one of those [`parse_event`] acts on
/// (a false positive only costs a parse).
pub(super) fn relevant(data: &[u8]) -> bool {
    memchr::memmem::find(data, b"form.").is_some()
        || memchr::memmem::find(data, b"permission.v2.").is_some()
}

/// `PermissionV2.Request`.
#[derive(Debug, Deserialize)]
pub(super) struct PermissionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    action: String,
    resources: Vec<String>,
    #[serde(default)]
    save: Vec<String>,
    #[serde(default)]
    metadata: PermissionMetadata,
    reason: Option<String>,
    source: Option<PermissionSource>,
}

/// The metadata a shell or edit tool attaches (free-form upstream: only
/// strings under these keys are read).
#[derive(Debug, Default, Deserialize)]
struct PermissionMetadata {
    #[serde(default, deserialize_with = "string_or_none")]
    command: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    diff: Option<String>,
}

fn string_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

#[derive(Debug, Deserialize)]
struct PermissionSource {
    #[serde(rename = "callID")]
    call_id: Option<String>,
}

/// How much of a command or resource list goes into a title.
const TITLE_DETAIL_CHARS: usize = 120;
/// How much of the patterns an "Allow always" label names; a longer list is
/// cut with a note of how much is hidden.
const ALWAYS_LABEL_CHARS: usize = 200;

impl PermissionRequest {
    pub(super) fn into_prompt(self, directory: Option<String>) -> Prompt {
        let subject = self
            .metadata
            .command
            .clone()
            .unwrap_or_else(|| self.resources.join(", "));
        let subject = text::cut(&subject, TITLE_DETAIL_CHARS).into_owned();
        let title = match self.reason.as_deref().map(str::trim) {
            Some(reason) if !reason.is_empty() => PermissionTitle::Agent(reason.to_owned()),
            // OpenCode 2 renamed the action `bash` to `shell`.
            _ if matches!(self.action.as_str(), "bash" | "shell") => PermissionTitle::Run(subject),
            _ => PermissionTitle::Action(subject),
        };
        let save = self.save.join(", ");
        let save = text::cut(&save, ALWAYS_LABEL_CHARS).into_owned();
        let always = ChoiceLabel::Effect {
            patterns: (!save.kept.is_empty()).then_some(save),
        };
        let choice = |id: &str, label, effect| PermissionChoice {
            id: id.into(),
            label,
            effect,
        };
        Prompt {
            id: self.id,
            session: self.session_id,
            directory,
            origin: Origin {
                tool_call: self.source.and_then(|s| s.call_id),
                agent: None,
                session_title: None,
                requester: None,
            },
            kind: Kind::Permission(Box::new(Permission {
                action: self.action,
                title,
                patterns: self.resources,
                command: self.metadata.command,
                diff: self.metadata.diff,
                raw_command: None,
                raw_patterns: Vec::new(),
                choices: vec![
                    choice("once", ChoiceLabel::EFFECT, Effect::AllowOnce),
                    choice("always", always, Effect::AllowAlways),
                    choice("reject", ChoiceLabel::EFFECT, Effect::RejectOnce),
                ],
            })),
        }
    }
}

/// A listing as read: at most the items asked for, each left raw (borrowed
/// from the body) so that one unreadable item is skipped alone.
pub(super) struct Listed<'a> {
    pub items: Vec<&'a RawValue>,
    /// Items past the bound, skipped unread.
    pub left_out: usize,
    /// `location.directory`, when the listing names one.
    pub directory: Option<String>,
}

/// Reads a listing (`{"data": [...]}`, with or without `location`) in one
/// pass, keeping at most `max` items: nothing beyond them is built, not even
/// their place. `None` when it is not such a listing.
pub(super) fn listed(body: &[u8], max: usize) -> Option<Listed<'_>> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

    struct Top(usize);
    struct Items(usize);

    impl<'de> Visitor<'de> for Top {
        type Value = Listed<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a listing")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Listed<'de>, A::Error> {
            let (mut data, mut directory) = (None, None);
            while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
                match &*key {
                    "data" if data.is_none() => data = Some(map.next_value_seed(Items(self.0))?),
                    "location" => {
                        directory = map
                            .next_value::<Option<LocationRef>>()?
                            .and_then(|l| l.directory)
                    }
                    _ => drop(map.next_value::<IgnoredAny>()?),
                }
            }
            let (items, left_out) = data.ok_or_else(|| serde::de::Error::missing_field("data"))?;
            Ok(Listed {
                items,
                left_out,
                directory,
            })
        }
    }

    impl<'de> serde::de::DeserializeSeed<'de> for Items {
        type Value = (Vec<&'de RawValue>, usize);
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for Items {
        type Value = (Vec<&'de RawValue>, usize);
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while items.len() < self.0 {
                match seq.next_element()? {
                    Some(item) => items.push(item),
                    None => return Ok((items, 0)),
                }
            }
            let mut left_out = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                left_out += 1;
            }
            Ok((items, left_out))
        }
    }

    let mut reader = serde_json::Deserializer::from_slice(body);
    let listed = reader.deserialize_map(Top(max)).ok()?;
    reader.end().ok()?;
    Some(listed)
}

/// `GET /api/info`: the server's identity, which the official client reads
/// to recognise an OpenCode 2 server (`packages/client/src/effect/service.ts`).
#[derive(Debug, Deserialize)]
pub(in crate::backends) struct ServerInfo {
    pub version: String,
    pub pid: u64,
}

impl ServerInfo {
    /// The identity in a `GET /api/info` answer, if it is OpenCode 2's
    /// (JSON with `version` and `pid`); a 1.x server's HTML page is not.
    pub(super) fn from_answer(status: u16, content_type: &str, body: &[u8]) -> Option<ServerInfo> {
        let is_json = content_type.starts_with("application/json");
        (status == 200 && is_json)
            .then(|| serde_json::from_slice(body).ok())
            .flatten()
    }
}
