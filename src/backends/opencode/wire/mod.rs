//! OpenCode 1.x on the wire: its events and question requests, and how they
//! map to ask-lsp's prompt model. Shapes follow the real 1.18.33 server
//! (docs/opencode.md; `tests/it/real_opencode.rs` runs it): `question.asked`
//! carries the whole request; the `question` tool part goes
//! `pending → running → completed | error`;
//! `question.replied` / `question.rejected` follow an answer; an abort sends
//! `session.error` + `session.idle` and leaves the question listed.
//!
//! Permissions (as 1.18.33 sends them; `tests/it/permissions.rs`):
//! `permission.asked` carries the whole request (`permission` is the tool, `patterns` the
//! sub-commands or paths, `metadata.command` the full command line, edits
//! `metadata.filepath` + `metadata.diff`, `always` what "always" would
//! approve); `permission.replied` follows every reply, including the ones the
//! server makes by itself: a `reject` rejects the session's other pending
//! permissions and an `always` approves the ones it covers, each with its own
//! `permission.replied`. A deleted session sends `session.deleted` and its
//! permission stays listed (answering it `once` still runs the command).
//!
//! SDK 1.19.3's additions (tests/fixtures/opencode-1.19): `question.v2.*`
//! with the same properties, `sync` envelopes around durable events, a
//! `workspace` in the `/global/event` wrapper, the dispose events.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::backends::shared::{QuestionInfo, default_true};
use crate::prompt::{
    ChoiceLabel, Effect, Kind, Origin, Permission, PermissionChoice, PermissionTitle, Prompt,
    SessionTitle,
};
use crate::text;

/// An OpenCode event, reduced to what matters for prompts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OcEvent {
    Connected,
    Heartbeat,
    /// `server.instance.disposed` / `global.disposed`: what was pending may be
    /// gone, and `/event` ends.
    Disposed,
    Asked(Prompt),
    /// `question.v2.asked` / `permission.v2.asked`: asked by 1.18.34's new
    /// session engine, answered on its own routes (`super::next`).
    AskedNext(Prompt),
    Replied {
        id: String,
    },
    /// `permission.replied`: `rejected` when the reply was `reject`.
    PermissionReplied {
        id: String,
        rejected: bool,
    },
    Rejected {
        id: String,
    },
    ToolRunning {
        call_id: String,
    },
    ToolEnded {
        call_id: String,
        ok: bool,
    },
    SessionEnded {
        session: String,
    },
    /// `session.created` / `session.updated`: which agent runs a session,
    /// and its title.
    Session {
        session: String,
        agent: Option<String>,
        title: Option<SessionTitle>,
    },
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    /// The `/global/event` wrapper's directory.
    pub directory: Option<String>,
    /// The `/global/event` wrapper's workspace (SDK 1.19), to route requests.
    pub workspace: Option<String>,
    pub event: OcEvent,
}

/// `GET /question`'s items and `question.asked`'s properties.
#[derive(Deserialize)]
pub(super) struct QuestionRequest {
    id: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    questions: Vec<QuestionInfo>,
    tool: Option<ToolRef>,
}

#[derive(Deserialize)]
struct ToolRef {
    #[serde(rename = "callID")]
    call_id: String,
}

/// A `GET /question` item read as [`QuestionRequest`] is, field by field and
/// type by type, without building anything: its id, session and call
/// borrowed from the text (copied only when escaped), the questions only
/// checked. An item this accepts, [`QuestionRequest`] reads (the tests
/// hold the two to the same input), so a listed question can stay text
/// until the broker finds it is new.
#[derive(Deserialize)]
pub(super) struct QuestionHead<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(rename = "sessionID", borrow)]
    pub session_id: Cow<'a, str>,
    #[serde(rename = "questions")]
    _questions: Checked<QuestionInfoCheck>,
    #[serde(borrow)]
    pub tool: Option<ToolHead<'a>>,
}

#[derive(Deserialize)]
pub(super) struct ToolHead<'a> {
    #[serde(rename = "callID", borrow)]
    pub call_id: Cow<'a, str>,
}

/// [`QuestionInfo`]'s shape, checked.
#[derive(Deserialize)]
struct QuestionInfoCheck {
    #[serde(rename = "question")]
    _question: Text,
    #[serde(default, rename = "header")]
    _header: Text,
    #[serde(default, rename = "options")]
    _options: Checked<QuestionOptionCheck>,
    #[serde(default, rename = "multiple")]
    _multiple: bool,
    #[serde(default = "default_true", rename = "custom")]
    _custom: bool,
}

/// The shape of a question's option (`shared::QuestionOption`), checked.
#[derive(Deserialize)]
struct QuestionOptionCheck {
    #[serde(rename = "label")]
    _label: Text,
    #[serde(default, rename = "description")]
    _description: Text,
}

/// A string, read and not kept.
#[derive(Default)]
struct Text;

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Text, E> {
                Ok(Text)
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Text, E> {
                // As `String` does.
                std::str::from_utf8(bytes)
                    .map(|_| Text)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Bytes(bytes), &self))
            }
        }
        deserializer.deserialize_string(Visitor)
    }
}

/// A sequence of `T`, each read as `Vec<T>` would and none kept.
struct Checked<T>(std::marker::PhantomData<T>);

impl<T> Default for Checked<T> {
    fn default() -> Self {
        Checked(std::marker::PhantomData)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Checked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Checked<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Checked<T>, A::Error> {
                while seq.next_element::<T>()?.is_some() {}
                Ok(Checked::default())
            }
        }
        deserializer.deserialize_seq(Visitor(std::marker::PhantomData))
    }
}

impl QuestionRequest {
    pub(super) fn into_prompt(self, directory: Option<String>) -> Prompt {
        Prompt {
            id: self.id,
            session: self.session_id,
            directory,
            origin: Origin {
                tool_call: self.tool.map(|t| t.call_id),
                agent: None,
                session_title: None,
                requester: None,
            },
            kind: Kind::Questions(
                self.questions
                    .into_iter()
                    .map(QuestionInfo::into_question)
                    .collect(),
            ),
        }
    }
}

/// `GET /permission`'s items and `permission.asked`'s properties.
#[derive(Deserialize)]
pub(super) struct PermissionRequest {
    id: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    permission: String,
    #[serde(default)]
    patterns: Vec<String>,
    #[serde(default)]
    metadata: PermissionMetadata,
    #[serde(default)]
    always: Vec<String>,
    tool: Option<ToolRef>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PermissionMetadata {
    command: Option<String>,
    filepath: Option<String>,
    diff: Option<String>,
}

/// How much of a command or path goes into a title (it is shown whole
/// beside it).
const TITLE_DETAIL_CHARS: usize = 120;
/// How much of the patterns an "Allow always" label names; a longer list is
/// cut with a note of how much is hidden.
const ALWAYS_LABEL_CHARS: usize = 200;

impl PermissionRequest {
    pub(super) fn into_prompt(self, directory: Option<String>) -> Prompt {
        let PermissionMetadata {
            command,
            filepath,
            diff,
        } = self.metadata;
        let subject = command
            .clone()
            .or_else(|| filepath.clone())
            .unwrap_or_else(|| self.patterns.join(", "));
        let subject = text::cut(&subject, TITLE_DETAIL_CHARS).into_owned();
        let title = match self.permission.as_str() {
            "bash" | "shell" => PermissionTitle::Run(subject),
            "edit" => PermissionTitle::Edit(subject),
            _ => PermissionTitle::Action(subject),
        };
        let choice = |id: &str, label, effect| PermissionChoice {
            id: id.into(),
            label,
            effect,
        };
        let always = self.always.join(", ");
        let always = text::cut(&always, ALWAYS_LABEL_CHARS).into_owned();
        let always = ChoiceLabel::Effect {
            patterns: (!always.kept.is_empty()).then_some(always),
        };
        // A file edit names its file; keep the full path beside the patterns.
        let mut patterns = self.patterns;
        if let Some(path) = filepath
            && !patterns.contains(&path)
        {
            patterns.push(path);
        }
        Prompt {
            id: self.id,
            session: self.session_id,
            directory,
            origin: Origin {
                tool_call: self.tool.map(|t| t.call_id),
                agent: None,
                session_title: None,
                requester: None,
            },
            kind: Kind::Permission(Box::new(Permission {
                action: self.permission,
                title,
                patterns,
                command,
                diff,
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

/// The new engine's permission request (`permission.v2.asked`, `GET
/// /api/permission/request`), as the real 1.18.34 sends it: `action` is the
/// tool, `resources` what it acts on (a shell command whole, as one item),
/// `save` what "always" would approve.
#[derive(Deserialize)]
pub(super) struct PermissionV2Request {
    id: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    action: String,
    resources: Vec<String>,
    #[serde(default)]
    save: Vec<String>,
    #[serde(default)]
    metadata: PermissionMetadata,
    source: Option<ToolRef>,
}

impl PermissionV2Request {
    pub(super) fn into_prompt(self, directory: Option<String>) -> Prompt {
        let mut metadata = self.metadata;
        // A shell command is its one resource, whole (1.18.34).
        if matches!(self.action.as_str(), "bash" | "shell")
            && metadata.command.is_none()
            && let [command] = self.resources.as_slice()
        {
            metadata.command = Some(command.clone());
        }
        PermissionRequest {
            id: self.id,
            session_id: self.session_id,
            permission: self.action,
            patterns: self.resources,
            metadata,
            always: self.save,
            tool: self.source,
        }
        .into_prompt(directory)
    }
}

#[derive(Deserialize)]
struct PermissionReplied {
    #[serde(rename = "requestID")]
    request_id: String,
    reply: String,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    properties: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GlobalEnvelope<'a> {
    directory: Option<String>,
    /// SDK 1.19: the workspace the directory belongs to, if any.
    workspace: Option<String>,
    /// None: the event itself, unwrapped (sandbox-agent's `/opencode`).
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SyncEnvelope<'a> {
    #[serde(rename = "syncEvent", borrow)]
    sync: SyncEvent<'a>,
}

#[derive(Deserialize)]
struct SyncEvent<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    data: &'a RawValue,
}

#[derive(Deserialize)]
struct RequestRef {
    #[serde(rename = "requestID")]
    request_id: String,
}

#[derive(Deserialize)]
struct SessionRef {
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct SessionInfo {
    info: SessionAgent,
}

#[derive(Deserialize)]
struct SessionAgent {
    id: String,
    agent: Option<String>,
    title: Option<String>,
}

#[derive(Deserialize)]
struct PartUpdated {
    part: ToolPart,
}

#[derive(Deserialize)]
struct ToolPart {
    #[serde(rename = "type")]
    kind: String,
    tool: Option<String>,
    #[serde(rename = "callID")]
    call_id: Option<String>,
    state: Option<ToolState>,
}

#[derive(Deserialize)]
struct ToolEnded {
    #[serde(rename = "callID")]
    call_id: String,
}

#[derive(Deserialize)]
struct ToolState {
    status: String,
}

/// Decodes one SSE `data` payload from `/event` (or `/global/event` when
/// `global`). Events of no interest are `Other` (and not parsed: see
/// [`super::prefilter`]); a relevant-looking event with a broken body is an error.
pub(crate) fn parse_event(data: &str, global: bool) -> Result<Parsed, serde_json::Error> {
    if !super::prefilter::opencode(data.as_bytes(), global) {
        return Ok(Parsed {
            directory: None,
            workspace: None,
            event: OcEvent::Other,
        });
    }
    let (directory, workspace, payload) = if global {
        let wrapper: GlobalEnvelope = serde_json::from_str(data)?;
        let payload = wrapper.payload.map_or(data, RawValue::get);
        (wrapper.directory, wrapper.workspace, payload)
    } else {
        (None, None, data)
    };
    let envelope: Envelope = serde_json::from_str(payload)?;
    let event = match envelope.kind {
        // SDK 1.19: a durable event's twin, `{type: "sync", syncEvent: {type:
        // "session.created.1", data: {properties}}}`.
        "sync" => {
            let SyncEnvelope { sync } = serde_json::from_str(payload)?;
            decode(unversioned(&sync.kind), sync.data.get(), &directory)?
        }
        kind => decode(
            kind,
            envelope.properties.map_or("null", RawValue::get),
            &directory,
        )?,
    };
    Ok(Parsed {
        directory,
        workspace,
        event,
    })
}

/// A sync event's type without its schema version (`session.created.1`).
fn unversioned(kind: &str) -> &str {
    match kind.rsplit_once('.') {
        Some((name, version))
            if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) =>
        {
            name
        }
        _ => kind,
    }
}

/// One event by its type and properties. SDK 1.19 names the question events
/// `question.v2.*` beside `question.*`, with the same properties; a build may
/// send either or both (the broker takes each request id once).
fn decode(
    kind: &str,
    props: &str,
    directory: &Option<String>,
) -> Result<OcEvent, serde_json::Error> {
    Ok(match kind {
        "server.heartbeat" => OcEvent::Heartbeat,
        "server.connected" => OcEvent::Connected,
        // An instance (or every instance) was torn down with whatever it had
        // pending; `/event` ends after it.
        "server.instance.disposed" | "global.disposed" => OcEvent::Disposed,
        "question.asked" => OcEvent::Asked(
            serde_json::from_str::<QuestionRequest>(props)?.into_prompt(directory.clone()),
        ),
        "question.v2.asked" => OcEvent::AskedNext(
            serde_json::from_str::<QuestionRequest>(props)?.into_prompt(directory.clone()),
        ),
        "permission.v2.asked" => OcEvent::AskedNext(
            serde_json::from_str::<PermissionV2Request>(props)?.into_prompt(directory.clone()),
        ),
        "question.replied" | "question.v2.replied" => OcEvent::Replied {
            id: serde_json::from_str::<RequestRef>(props)?.request_id,
        },
        "question.rejected" | "question.v2.rejected" => OcEvent::Rejected {
            id: serde_json::from_str::<RequestRef>(props)?.request_id,
        },
        "permission.asked" => OcEvent::Asked(
            serde_json::from_str::<PermissionRequest>(props)?.into_prompt(directory.clone()),
        ),
        "permission.replied" | "permission.v2.replied" => {
            let replied: PermissionReplied = serde_json::from_str(props)?;
            OcEvent::PermissionReplied {
                id: replied.request_id,
                rejected: replied.reply == "reject",
            }
        }
        // The hot path: one per streamed token. Only question tool parts matter.
        "message.part.updated" if props.contains("\"question\"") => {
            let PartUpdated { part } = serde_json::from_str(props)?;
            match (
                part.kind.as_str(),
                part.tool.as_deref(),
                part.call_id,
                part.state,
            ) {
                ("tool", Some("question"), Some(call_id), Some(state)) => {
                    match state.status.as_str() {
                        "running" => OcEvent::ToolRunning { call_id },
                        "completed" => OcEvent::ToolEnded { call_id, ok: true },
                        "error" => OcEvent::ToolEnded { call_id, ok: false },
                        _ => OcEvent::Other,
                    }
                }
                _ => OcEvent::Other,
            }
        }
        // The new engine's tool call ended (an interrupt fails it): its
        // prompt is moot.
        "session.next.tool.success" | "session.next.tool.failed" => {
            let ended: ToolEnded = serde_json::from_str(props)?;
            OcEvent::ToolEnded {
                call_id: ended.call_id,
                ok: kind == "session.next.tool.success",
            }
        }
        // A deleted session's permission stays listed and still runs if
        // answered: its prompts go with it.
        "session.error" | "session.idle" | "session.deleted" => {
            match serde_json::from_str::<SessionRef>(props)?.session_id {
                Some(session) => OcEvent::SessionEnded { session },
                None => OcEvent::Other,
            }
        }
        "session.created" | "session.updated" => {
            match serde_json::from_str::<SessionInfo>(props)?.info {
                SessionAgent {
                    agent: None,
                    title: None,
                    ..
                } => OcEvent::Other,
                SessionAgent { id, agent, title } => OcEvent::Session {
                    session: id,
                    agent,
                    title: title.as_deref().and_then(SessionTitle::new),
                },
            }
        }
        _ => OcEvent::Other,
    })
}

/// Splits a JSON array into its items' text without parsing them, so that
/// one broken item (too deep, a number out of range) fails alone. `None`
/// when the text is not an array.
pub(super) fn array_items(json: &str) -> Option<Vec<&str>> {
    let body = json.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut items = Vec::new();
    let bytes = body.as_bytes();
    let (mut depth, mut start, mut at) = (0usize, 0usize, 0usize);
    while at < bytes.len() {
        match bytes[at] {
            // A string's contents are skipped to its closing quote in one
            // search (most of a listing is text).
            b'"' => loop {
                at += 1 + memchr::memchr2(b'"', b'\\', bytes.get(at + 1..)?)?;
                if bytes[at] == b'"' {
                    break;
                }
                at += 1; // the escaped byte
            },
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => {
                items.push(body[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    let last = body[start..].trim();
    if !last.is_empty() || !items.is_empty() {
        items.push(last);
    }
    Some(items)
}

#[cfg(test)]
mod tests;
