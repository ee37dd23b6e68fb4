//! OpenCode 1.x on the wire: its events and question requests, and how they
//! map to ask-lsp's prompt model. Shapes follow the real 1.18.33 server
//! (captures/opencode-1.18.33): `question.asked` carries the whole request;
//! the `question` tool part goes `pending → running → completed | error`;
//! `question.replied` / `question.rejected` follow an answer; an abort sends
//! `session.error` + `session.idle` and leaves the question listed.
//!
//! Permissions (captures/opencode-1.18.33/permission.txt): `permission.asked`
//! carries the whole request (`permission` is the tool, `patterns` the
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
//!
//! (Over 500 lines: a third is tests on lines copied from the captures and
//! the 1.19 fixture.)

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::prompt::{
    Answer, Choice, Effect, Kind, Origin, Permission, PermissionChoice, Prompt, Question, Reply,
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

/// One question as OpenCode writes it (sandbox-agent forwards this shape too).
#[derive(Deserialize)]
pub(in crate::backends) struct QuestionInfo {
    question: String,
    #[serde(default)]
    header: String,
    #[serde(default)]
    options: Vec<QuestionOption>,
    #[serde(default)]
    multiple: bool,
    /// OpenCode's default is `true`: typed answers unless the agent said no.
    #[serde(default = "default_true")]
    custom: bool,
}

fn default_true() -> bool {
    true
}

#[derive(Deserialize)]
struct QuestionOption {
    label: String,
    #[serde(default)]
    description: String,
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

/// [`QuestionOption`]'s shape, checked.
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

impl QuestionInfo {
    pub(in crate::backends) fn into_question(self) -> Question {
        Question {
            header: self.header,
            text: self.question,
            options: self
                .options
                .into_iter()
                .map(|o| Choice::new(o.label, o.description))
                .collect(),
            multiple: self.multiple,
            custom: self.custom,
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
        let subject = text::bounded(&subject, TITLE_DETAIL_CHARS);
        let title = match self.permission.as_str() {
            "bash" => format!("Run {subject}"),
            "edit" => format!("Edit {subject}"),
            other => format!("{other}: {subject}"),
        };
        let choice = |id: &str, label: String, effect| PermissionChoice {
            id: id.into(),
            label,
            effect,
        };
        let always = self.always.join(", ");
        let always = text::bounded(&always, ALWAYS_LABEL_CHARS);
        let always = match &*always {
            "" => "Allow always".to_owned(),
            patterns => format!("Allow always ({patterns})"),
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
                    choice("once", "Allow once".into(), Effect::AllowOnce),
                    choice("always", always, Effect::AllowAlways),
                    choice("reject", "Reject".into(), Effect::RejectOnce),
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
    #[serde(borrow)]
    payload: &'a RawValue,
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
        (wrapper.directory, wrapper.workspace, wrapper.payload.get())
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

/// OpenCode's permission reply (both generations): `once`, `always` or
/// `reject`, with the person's message where there is one; the flag says
/// whether it allows anything.
pub(in crate::backends) fn permission_reply(
    permission: &Permission,
    reply: &Reply,
) -> Result<(serde_json::Value, bool), &'static str> {
    match reply {
        Reply::Answer(Answer::Permission { choice }) => {
            let effect = permission
                .choices
                .iter()
                .find(|c| &c.id == choice)
                .map(|c| c.effect)
                .ok_or("not one of the permission's choices")?;
            let (reply, allows) = match effect {
                Effect::AllowOnce => ("once", true),
                Effect::AllowAlways => ("always", true),
                Effect::RejectOnce | Effect::RejectAlways => ("reject", false),
            };
            Ok((serde_json::json!({ "reply": reply }), allows))
        }
        Reply::Reject {
            message: Some(message),
        } => Ok((
            serde_json::json!({ "reply": "reject", "message": message }),
            false,
        )),
        Reply::Reject { message: None } | Reply::Cancel => {
            Ok((serde_json::json!({ "reply": "reject" }), false))
        }
        Reply::Answer(_) => Err("not an answer to a permission"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines copied from captures/opencode-1.18.33.
    const ASKED: &str = r#"{"id":"evt_20377fa670029JW7vvWBU0fEBc","type":"question.asked","properties":{"id":"que_20377fa670012yFjmtDQ35vRZs","sessionID":"ses_dfc8806f9ffegvgSo6J0BvqL16","questions":[{"question":"Which color should the button be?","header":"Button color","options":[{"label":"Red","description":"Warm and loud"},{"label":"Blue","description":"Calm and default"}]}],"tool":{"messageID":"msg_20377f962001VbBJYD07q1vo5X","callID":"call_mock_5"}}}"#;

    #[test]
    fn question_asked_becomes_a_questions_prompt() {
        let parsed = parse_event(ASKED, false).unwrap();
        let OcEvent::Asked(prompt) = parsed.event else {
            panic!("{parsed:?}")
        };
        assert_eq!(prompt.id, "que_20377fa670012yFjmtDQ35vRZs");
        assert_eq!(prompt.session, "ses_dfc8806f9ffegvgSo6J0BvqL16");
        assert_eq!(prompt.origin.tool_call.as_deref(), Some("call_mock_5"));
        let Kind::Questions(questions) = prompt.kind else {
            panic!()
        };
        assert_eq!(questions[0].options[1].label, "Blue");
        assert!(questions[0].custom && !questions[0].multiple);
    }

    #[test]
    fn global_wrapper_gives_the_directory() {
        let global = format!(r#"{{"directory":"/tmp/p","project":"global","payload":{ASKED}}}"#);
        let parsed = parse_event(&global, true).unwrap();
        assert_eq!(parsed.directory.as_deref(), Some("/tmp/p"));
        let OcEvent::Asked(prompt) = parsed.event else {
            panic!()
        };
        assert_eq!(prompt.directory.as_deref(), Some("/tmp/p"));
        let heartbeat = r#"{"payload":{"id":"evt_1","type":"server.heartbeat","properties":{}}}"#;
        assert_eq!(
            parse_event(heartbeat, true).unwrap(),
            Parsed {
                directory: None,
                workspace: None,
                event: OcEvent::Heartbeat
            }
        );
    }

    #[test]
    fn tool_parts_session_ends_and_agents() {
        let part = |status: &str| {
            format!(
                r#"{{"id":"e","type":"message.part.updated","properties":{{"sessionID":"ses_1","part":{{"type":"tool","tool":"question","callID":"call_mock_19","state":{{"status":"{status}","input":{{}}}},"id":"prt_1"}},"time":1}}}}"#
            )
        };
        assert_eq!(
            parse_event(&part("running"), false).unwrap().event,
            OcEvent::ToolRunning {
                call_id: "call_mock_19".into()
            }
        );
        assert_eq!(
            parse_event(&part("error"), false).unwrap().event,
            OcEvent::ToolEnded {
                call_id: "call_mock_19".into(),
                ok: false
            }
        );
        assert_eq!(
            parse_event(&part("pending"), false).unwrap().event,
            OcEvent::Other
        );
        let aborted = r#"{"id":"e","type":"session.error","properties":{"sessionID":"ses_x","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}"#;
        assert_eq!(
            parse_event(aborted, false).unwrap().event,
            OcEvent::SessionEnded {
                session: "ses_x".into()
            }
        );
        // From captures/opencode-1.18.33/abort.txt, shortened.
        let updated = r#"{"id":"e","type":"session.updated","properties":{"sessionID":"ses_d","info":{"id":"ses_d","slug":"nimble-forest","projectID":"global","agent":"build","version":"1.18.33"}}}"#;
        assert_eq!(
            parse_event(updated, false).unwrap().event,
            OcEvent::Session {
                session: "ses_d".into(),
                agent: Some("build".into()),
                title: None,
            }
        );
        // A title alone is read too, shown and cut as it is read.
        let titled = format!(
            r#"{{"id":"e","type":"session.updated","properties":{{"sessionID":"ses_d","info":{{"id":"ses_d","title":"\u001b[2JMock title{}"}}}}}}"#,
            "x".repeat(1 << 20)
        );
        let OcEvent::Session { agent, title, .. } = parse_event(&titled, false).unwrap().event
        else {
            panic!()
        };
        let title = title.expect("a title");
        assert_eq!(agent, None);
        assert!(title.as_str().starts_with("␛[2JMock title"), "{title:?}");
        assert!(title.as_str().len() < 400, "{}", title.as_str().len());
        let text = r#"{"id":"e","type":"message.part.delta","properties":{"sessionID":"s","delta":"question"}}"#;
        assert_eq!(parse_event(text, false).unwrap().event, OcEvent::Other);
    }

    #[test]
    fn broken_input_is_an_error_not_a_panic() {
        assert!(parse_event("not json about a question", false).is_err());
        assert_eq!(
            parse_event("not json", false).unwrap().event,
            OcEvent::Other
        );
        assert!(parse_event(r#"{"type":"question.asked","properties":{"id":1}}"#, false).is_err());
        assert!(parse_event(r#"{"type":"question.replied"}"#, false).is_err());
        assert_eq!(
            parse_event(r#"{"type":"brand.new","properties":[1,2]}"#, false)
                .unwrap()
                .event,
            OcEvent::Other
        );
    }

    #[test]
    fn a_question_head_accepts_what_a_question_request_reads() {
        let base = r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"}],"multiple":true,"custom":false}],"tool":{"messageID":"m","callID":"call_1"}}"#;
        let cases = [
            base.to_owned(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q"}],"tool":null}"#.into(),
            r#"{"id":"q\u0031","sessionID":"s\"1","questions":[{"question":"\ud83d\ude00","options":[{"label":"\n"}]}],"tool":{"callID":"c\\1"}}"#.into(),
            r#"["que_1","ses_1",[{"question":"Q"}],null]"#.into(),
            r#"["que_1","ses_1",[["Q","H",[["A"]],true,false]]]"#.into(),
            r#"["que_1","ses_1"]"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[],"extra":{"deep":[1,{"x":null}]}}"#.into(),
            // Each broken in one way.
            r#"{"id":1,"sessionID":"ses_1","questions":[]}"#.into(),
            r#"{"id":"que_1","questions":[]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1"}"#.into(),
            r#"{"id":"que_1","id":"que_2","sessionID":"ses_1","questions":[]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":{}}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"header":"H"}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","question":"R"}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":5}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","header":null}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":null}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":[{"description":"d"}]}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":[{"label":true}]}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","multiple":"yes"}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","custom":0}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":{}}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":{"callID":7}}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":"call_1"}"#.into(),
            r#"{"id":"\ud800","sessionID":"ses_1","questions":[]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"\ud800"}]}"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[]} x"#.into(),
            r#"{"id":"que_1","sessionID":"ses_1","questions":[1e999]}"#.into(),
            r#"["que_1","ses_1",[],null,5]"#.into(),
            r#"["que_1"]"#.into(),
            "null".into(),
            "".into(),
        ];
        for case in &cases {
            let full = serde_json::from_str::<QuestionRequest>(case).map(|r| r.into_prompt(None));
            let head = serde_json::from_str::<QuestionHead>(case);
            assert_eq!(full.is_ok(), head.is_ok(), "{case}");
            if let (Ok(full), Ok(head)) = (full, head) {
                assert_eq!(full.id, head.id, "{case}");
                assert_eq!(full.session, head.session_id, "{case}");
                assert_eq!(
                    full.origin.tool_call.as_deref(),
                    head.tool.as_ref().map(|t| &*t.call_id),
                    "{case}"
                );
            }
        }
        // Ids are borrowed from the text unless escaped.
        let head = serde_json::from_str::<QuestionHead>(base).unwrap();
        assert!(matches!(head.id, Cow::Borrowed(_)));
    }

    #[test]
    fn array_items_fail_alone() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let listing = format!(r#"[{{"a":"x,]\"y"}}, 1e999 ,{deep}, {{"b":[1,2]}}]"#);
        let items = array_items(&listing).unwrap();
        assert_eq!(items.len(), 4);
        assert_eq!(items[0], r#"{"a":"x,]\"y"}"#);
        assert_eq!(items[1], "1e999");
        assert_eq!(items[3], r#"{"b":[1,2]}"#);
        assert_eq!(array_items("[]").unwrap(), Vec::<&str>::new());
        assert_eq!(array_items("{}"), None);
        assert_eq!(array_items("[1]]"), None);
    }

    #[test]
    fn array_items_skip_strings_with_escapes_and_brackets() {
        let listing = r#"["a\\", "b\\\\\"],{", {"c":"}\\\\"}, "\"", "é,[ü"]"#;
        assert_eq!(
            array_items(listing).unwrap(),
            [
                r#""a\\""#,
                r#""b\\\\\"],{""#,
                r#"{"c":"}\\\\"}"#,
                r#""\"""#,
                r#""é,[ü""#
            ]
        );
        // A string left open (never valid JSON): not a list, not a panic.
        assert_eq!(array_items(r#"["abc\]"#), None);
        assert_eq!(array_items(r#"["abc"#), None);
    }

    /// OpenCode (1.x and 2 reply alike): each decision × the choices ask-lsp
    /// builds for its permissions, and what the server receives.
    #[test]
    fn each_permission_decision_maps_to_one_reply() {
        let OcEvent::Asked(prompt) = parse_event(EDIT_ASKED, false).unwrap().event else {
            panic!()
        };
        let Kind::Permission(permission) = prompt.kind else {
            panic!()
        };
        let pick = |choice: &str| {
            Reply::Answer(Answer::Permission {
                choice: choice.into(),
            })
        };
        let reply = |reply: &str| Ok((serde_json::json!({ "reply": reply }), reply != "reject"));
        let table = [
            (pick("once"), reply("once")),
            (pick("always"), reply("always")),
            (pick("reject"), reply("reject")),
            (
                pick("allow-session"),
                Err("not one of the permission's choices"),
            ),
            (Reply::Reject { message: None }, reply("reject")),
            (
                Reply::Reject {
                    message: Some("not now".into()),
                },
                Ok((
                    serde_json::json!({"reply": "reject", "message": "not now"}),
                    false,
                )),
            ),
            // Nobody chose: OpenCode has no cancel for a permission.
            (Reply::Cancel, reply("reject")),
            (
                Reply::Answer(Answer::Questions(vec![])),
                Err("not an answer to a permission"),
            ),
        ];
        for (decision, expected) in table {
            assert_eq!(
                permission_reply(&permission, &decision),
                expected,
                "{decision:?}"
            );
        }
    }

    // From captures/opencode-1.18.33/permission.txt (scenarios 12, 11-reject, 10).
    const EDIT_ASKED: &str = r#"{"id":"evt_2076e86460028ueZP44fATlqmp","type":"permission.asked","properties":{"id":"per_2076e86460018eQ1mTI45Jy4yp","sessionID":"ses_df8917f7fffeZdovkR57PVB9iw","permission":"edit","patterns":["home/user/projects/edit/hello.txt"],"metadata":{"filepath":"/home/user/projects/edit/hello.txt","diff":"Index: /home/user/projects/edit/hello.txt\n--- /home/user/projects/edit/hello.txt\n+++ /home/user/projects/edit/hello.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"},"always":["*"],"tool":{"messageID":"msg_2076e82bb001TtTzYXR","callID":"call_mock_1795421013_21"}}}"#;

    #[test]
    fn permission_events_become_permission_prompts() {
        let bash = r#"{"directory":"/home/user/projects/compound","project":"global","payload":{"id":"evt_2076e99ba002w1DvXOUJ6j4qoq","type":"permission.asked","properties":{"id":"per_2076e99ba001ue3BObJ3cqn6J4","sessionID":"ses_df8916a2dffeaVlm241jMWiql3","permission":"bash","patterns":["echo A_c13","touch b_c13","git status","head -1"],"metadata":{"command":"echo A_c13 && touch b_c13; git status | head -1"},"always":["echo *","touch *","git status *","head *"],"tool":{"messageID":"msg_2076e97a2001r9AjD51Pbtd4cZ","callID":"call_mock_1795421018_24"}}}}"#;
        let parsed = parse_event(bash, true).unwrap();
        let OcEvent::Asked(prompt) = parsed.event else {
            panic!("{parsed:?}")
        };
        assert_eq!(
            prompt.directory.as_deref(),
            Some("/home/user/projects/compound")
        );
        assert_eq!(
            prompt.origin.tool_call.as_deref(),
            Some("call_mock_1795421018_24")
        );
        let Kind::Permission(permission) = prompt.kind else {
            panic!()
        };
        assert_eq!(permission.action, "bash");
        assert_eq!(
            permission.title,
            "Run echo A_c13 && touch b_c13; git status | head -1"
        );
        assert_eq!(
            permission.command.as_deref(),
            Some("echo A_c13 && touch b_c13; git status | head -1")
        );
        assert_eq!(permission.patterns.len(), 4);
        let choices: Vec<_> = permission
            .choices
            .iter()
            .map(|c| (c.id.as_str(), c.label.as_str(), c.effect))
            .collect();
        assert_eq!(
            choices,
            [
                ("once", "Allow once", Effect::AllowOnce),
                (
                    "always",
                    "Allow always (echo *, touch *, git status *, head *)",
                    Effect::AllowAlways
                ),
                ("reject", "Reject", Effect::RejectOnce)
            ]
        );

        let OcEvent::Asked(edit) = parse_event(EDIT_ASKED, false).unwrap().event else {
            panic!()
        };
        let Kind::Permission(permission) = edit.kind else {
            panic!()
        };
        assert_eq!(permission.title, "Edit /home/user/projects/edit/hello.txt");
        assert!(
            permission
                .diff
                .as_deref()
                .unwrap()
                .ends_with("+hello\n+world\n")
        );
        assert_eq!(
            permission.patterns,
            [
                "home/user/projects/edit/hello.txt",
                "/home/user/projects/edit/hello.txt"
            ]
        );
    }

    #[test]
    fn permission_replies_and_deleted_sessions() {
        let replied = |reply: &str| {
            format!(
                r#"{{"id":"evt_2076e4bf0002Odv00uHGmK8ETD","type":"permission.replied","properties":{{"sessionID":"ses_df891b844ffe4Nj5DzNyRaHcTW","requestID":"per_2076e4bb7001d0O3CttKUDBT2P","reply":"{reply}"}}}}"#
            )
        };
        assert_eq!(
            parse_event(&replied("reject"), false).unwrap().event,
            OcEvent::PermissionReplied {
                id: "per_2076e4bb7001d0O3CttKUDBT2P".into(),
                rejected: true
            }
        );
        assert_eq!(
            parse_event(&replied("always"), false).unwrap().event,
            OcEvent::PermissionReplied {
                id: "per_2076e4bb7001d0O3CttKUDBT2P".into(),
                rejected: false
            }
        );
        let deleted = r#"{"id":"evt_2076e31c4001A4KhTWQoQjCf8E","type":"session.deleted","properties":{"sessionID":"ses_df891d21bffeCRg6wpToeC2X9A","info":{"id":"ses_df891d21bffeCRg6wpToeC2X9A","slug":"kind-lagoon","projectID":"global","directory":"/home/user/projects/delete","title":"Mock title","agent":"build","version":"1.18.33"}}}"#;
        assert_eq!(
            parse_event(deleted, false).unwrap().event,
            OcEvent::SessionEnded {
                session: "ses_df891d21bffeCRg6wpToeC2X9A".into()
            }
        );
        assert!(
            parse_event(
                r#"{"type":"permission.asked","properties":{"id":"per_1"}}"#,
                false
            )
            .is_err()
        );
    }
    /// SDK 1.19.3 shapes (tests/fixtures/opencode-1.19/README.md).
    const STREAM_119: &str =
        include_str!("../../../tests/fixtures/opencode-1.19/global-stream.jsonl");
    const DISPOSED_119: &str = include_str!("../../../tests/fixtures/opencode-1.19/disposed.jsonl");

    #[test]
    fn sdk_119_names_envelopes_and_workspaces_are_read() {
        let parsed: Vec<Parsed> = STREAM_119
            .lines()
            .map(|line| parse_event(line, true).unwrap())
            .collect();
        // The wrapper is read for every event acted on (filtered ones are not parsed).
        assert!(
            parsed
                .iter()
                .filter(|p| p.event != OcEvent::Other)
                .all(|p| p.workspace.as_deref() == Some("wrk_fixture")
                    && p.directory.as_deref() == Some("/sim/project"))
        );
        let events: Vec<&OcEvent> = parsed.iter().map(|p| &p.event).collect();
        assert_eq!(
            events[0],
            &OcEvent::Session {
                session: "ses_fx1".into(),
                agent: Some("plan".into()),
                title: SessionTitle::new("Fixture"),
            }
        );
        assert_eq!(events[1], &OcEvent::Other, "a token delta");
        assert_eq!(events[2], &OcEvent::Other, "the tool part, pending");
        let (OcEvent::Asked(v1), OcEvent::AskedNext(v2)) = (events[3], events[4]) else {
            panic!("{events:?}")
        };
        assert_eq!(v1, v2, "question.asked and question.v2.asked read alike");
        assert_eq!(v1.id, "que_fx1");
        assert_eq!(v1.directory.as_deref(), Some("/sim/project"));
        assert_eq!(
            events[5],
            &OcEvent::ToolRunning {
                call_id: "call_fx1".into()
            }
        );
        let OcEvent::AskedNext(only_v2) = events[6] else {
            panic!("{events:?}")
        };
        assert_eq!(only_v2.id, "que_fx2");
        let Kind::Questions(questions) = &only_v2.kind else {
            panic!()
        };
        assert!(!questions[0].custom);
        assert_eq!(
            events[7],
            &OcEvent::SessionEnded {
                session: "ses_fx2".into()
            }
        );
        for line in DISPOSED_119.lines() {
            assert_eq!(
                parse_event(line, true).unwrap().event,
                OcEvent::Disposed,
                "{line}"
            );
        }
        // `/event` carries the same events unwrapped.
        let plain = r#"{"id":"e","type":"question.v2.replied","properties":{"sessionID":"s","requestID":"que_1","answers":[["A"]]}}"#;
        assert_eq!(
            parse_event(plain, false).unwrap().event,
            OcEvent::Replied { id: "que_1".into() }
        );
        let rejected = r#"{"id":"e","type":"question.v2.rejected","properties":{"sessionID":"s","requestID":"que_1"}}"#;
        assert_eq!(
            parse_event(rejected, false).unwrap().event,
            OcEvent::Rejected { id: "que_1".into() }
        );
    }

    /// Lines from the real 1.18.34's `/event` (a new-engine session).
    #[test]
    fn new_engine_events_of_1_18_34() {
        let asked = r#"{"id":"evt_2183df781002tKqpiVIpLkEAuB","type":"permission.v2.asked","properties":{"id":"per_2183df781001iTmQ2wpjz2OcKi","sessionID":"ses_de7c20db0ffemT7DhgfZhSTdW3","action":"bash","resources":["echo A1 && touch b1; git status | head -1"],"save":["echo A1 && touch b1; git status | head -1"],"source":{"type":"tool","messageID":"msg_2183df761001tHXu30r6DBJnan","callID":"call_mock_3"}}}"#;
        let OcEvent::AskedNext(prompt) = parse_event(asked, false).unwrap().event else {
            panic!()
        };
        assert_eq!(prompt.origin.tool_call.as_deref(), Some("call_mock_3"));
        let Kind::Permission(permission) = prompt.kind else {
            panic!()
        };
        assert_eq!(permission.action, "bash");
        assert_eq!(
            permission.command.as_deref(),
            Some("echo A1 && touch b1; git status | head -1"),
            "the one resource is the whole command"
        );
        assert_eq!(
            permission.title,
            "Run echo A1 && touch b1; git status | head -1"
        );
        assert!(
            permission.choices[1]
                .label
                .starts_with("Allow always (echo A1")
        );
        // Several resources name no single command.
        let edit = r#"{"id":"e","type":"permission.v2.asked","properties":{"id":"per_1","sessionID":"ses_1","action":"bash","resources":["a","b"]}}"#;
        let OcEvent::AskedNext(prompt) = parse_event(edit, false).unwrap().event else {
            panic!()
        };
        let Kind::Permission(permission) = prompt.kind else {
            panic!()
        };
        assert_eq!(permission.command, None);
        assert_eq!(permission.patterns, ["a", "b"]);
        let replied = r#"{"id":"evt_2183dea030011v5I2cDMCYrD1s","type":"permission.v2.replied","properties":{"sessionID":"ses_de7c23944ffe1npmqFpzQQM6pV","requestID":"per_2183dcd2f0010MxTZMl2zoayxq","reply":"reject"}}"#;
        assert_eq!(
            parse_event(replied, false).unwrap().event,
            OcEvent::PermissionReplied {
                id: "per_2183dcd2f0010MxTZMl2zoayxq".into(),
                rejected: true
            }
        );
        let failed = r#"{"id":"evt_2183ef4f5001Tc7JXrf63esluj","type":"session.next.tool.failed","properties":{"sessionID":"ses_de7c11919ffeliK817rcVX9ax9","timestamp":"2026-11-26T14:25:08.853Z","assistantMessageID":"msg_2183eebcb001Qv6cKb0H1mhbrR","callID":"call_mock_5","error":{"type":"unknown","message":"Tool execution interrupted"},"provider":{"executed":false}}}"#;
        assert_eq!(
            parse_event(failed, false).unwrap().event,
            OcEvent::ToolEnded {
                call_id: "call_mock_5".into(),
                ok: false
            }
        );
        let question = r#"{"id":"evt_2183d8f85002X6H54ABpOgK14e","type":"question.v2.asked","properties":{"id":"que_2183d8f85001lztwin8oybKBss","sessionID":"ses_de7c277f4ffe4wKj2SJpLryQDM","questions":[{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}],"tool":{"messageID":"msg_2183d8f380010bQBAlyccpVXs5","callID":"call_mock_1"}}}"#;
        assert!(matches!(
            parse_event(question, false).unwrap().event,
            OcEvent::AskedNext(_)
        ));
    }

    #[test]
    fn sync_envelopes_are_read_by_their_unversioned_type() {
        assert_eq!(unversioned("session.created.1"), "session.created");
        assert_eq!(unversioned("session.created.12"), "session.created");
        assert_eq!(unversioned("session.created"), "session.created");
        assert_eq!(unversioned("session.v2"), "session.v2");
        assert_eq!(unversioned("x."), "x.");
        let sync = |kind: &str, data: &str| {
            format!(
                r#"{{"type":"sync","id":"evt_1","syncEvent":{{"type":"{kind}","id":"evt_2","seq":1,"aggregateID":"ses_1","data":{data}}}}}"#
            )
        };
        assert_eq!(
            parse_event(
                &sync("session.deleted.1", r#"{"sessionID":"ses_1","info":{}}"#),
                false
            )
            .unwrap()
            .event,
            OcEvent::SessionEnded {
                session: "ses_1".into()
            }
        );
        assert_eq!(
            parse_event(&sync("session.next.step.ended.1", "{}"), false)
                .unwrap()
                .event,
            OcEvent::Other
        );
        // A broken envelope is an error, not a panic.
        assert!(
            parse_event(
                r#"{"type":"sync","id":"evt_1","syncEvent":{"type":"session.deleted.1"}}"#,
                false
            )
            .is_err()
        );
        assert!(
            parse_event(
                r#"{"type":"sync","id":"evt_1","syncEvent":"session.deleted"}"#,
                false
            )
            .is_err()
        );
    }
}
