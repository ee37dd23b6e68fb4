//! The `askQuestions` LSP extension and the `askLsp.*` commands, as typed
//! definitions: every method and every wire shape is here, and
//! `docs/protocol.md` documents exactly these (a test keeps the two in step).
//! Conversions from ask-lsp's own types are in [`super::to_proto`], back in
//! [`super::from_proto`].

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;

/// Bumped when a shape changes incompatibly. 2: prompt kinds, `title`,
/// `origin`, `here`.
pub const EXTENSION_VERSION: u32 = 2;

/// Server → client request: show a prompt; the result is the decision.
pub(crate) enum Ask {}
impl Request for Ask {
    type Params = AskParams;
    type Result = AskResult;
    const METHOD: &'static str = "askQuestions/ask";
}

/// Server → client notification: a prompt is no longer pending.
pub(crate) enum Resolved {}
impl Notification for Resolved {
    type Params = ResolvedParams;
    const METHOD: &'static str = "askQuestions/resolved";
}

/// Server → client notification: connection state, pending count, counters.
pub(crate) enum Status {}
impl Notification for Status {
    type Params = StatusParams;
    const METHOD: &'static str = "askQuestions/status";
}

pub(crate) const CMD_LIST: &str = "askLsp.list";
pub(crate) const CMD_ANSWER: &str = "askLsp.answer";
pub(crate) const CMD_REJECT: &str = "askLsp.reject";
pub(crate) const CMD_SHOW: &str = "askLsp.show";
pub(crate) const CMD_STATUS: &str = "askLsp.status";
pub(crate) const COMMANDS: [&str; 5] = [CMD_LIST, CMD_ANSWER, CMD_REJECT, CMD_SHOW, CMD_STATUS];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AskParams {
    /// `server/requestID`: what every answer and notification names.
    pub key: String,
    pub server: String,
    #[serde(rename = "requestID")]
    pub request_id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub kind: PromptKind,
    /// A short display title, computed once by ask-lsp.
    pub title: String,
    pub source: Source,
    pub origin: Origin,
    /// Set when `kind` is `questions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub questions: Option<Vec<Question>>,
    /// Set when `kind` is `permission`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<Permission>,
    /// Set when `kind` is `form`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<Form>,
    /// A policy decides by itself after this long.
    pub timeout_ms: Option<u64>,
    /// Prompts pending, this one included.
    pub pending: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum PromptKind {
    Questions,
    Permission,
    Form,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Source {
    pub backend: String,
    pub url: String,
    /// The project directory the agent works in.
    pub directory: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Origin {
    #[serde(rename = "toolCallID")]
    pub tool_call_id: Option<String>,
    pub agent: Option<String>,
    /// The session's title, when the server names it: one line, shown
    /// neutralised and cut.
    #[serde(
        rename = "sessionTitle",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub session_title: Option<String>,
    /// What ask-lsp knows of a local requester (a hook request's sender,
    /// and its directory when outside the workspace), in the person's
    /// language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Question {
    pub question: String,
    pub header: String,
    pub options: Vec<QuestionOption>,
    pub multiple: bool,
    /// A typed answer is allowed.
    pub custom: bool,
    /// The typed answer is a secret: type it masked, never show or keep
    /// it. Sent only to a client that declared `"secret"` in its kinds;
    /// left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QuestionOption {
    pub label: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Permission {
    /// The tool or action: `bash`, `edit`, an ACP tool kind.
    pub action: String,
    pub title: String,
    pub patterns: Vec<String>,
    /// The full command line: show it whole.
    pub command: Option<String>,
    /// A unified diff, for edits.
    pub diff: Option<String>,
    pub choices: Vec<PermissionChoice>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PermissionChoice {
    pub id: String,
    pub label: String,
    pub effect: Effect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Effect {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Form {
    /// What is asked and why (may span lines).
    pub message: String,
    /// Url mode: the person may open this link themselves; `fields` is empty
    /// and an answer (with no values) means they consent.
    pub url: Option<FormLink>,
    pub fields: Vec<FormField>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FormLink {
    /// The full URL: show it whole; never open it without the person.
    pub url: String,
    /// The host a browser opens, in ASCII (`xn--…` for an
    /// internationalised name; userinfo and port left out): show it
    /// prominently.
    pub domain: String,
    /// Why the host deserves a second look (the link's text names another
    /// host, a punycode or mixed-script name): show it beside the domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FormField {
    /// The key of this field's value in the answer.
    pub id: String,
    pub title: String,
    pub description: String,
    pub required: bool,
    #[serde(flatten)]
    pub kind: FieldKind,
}

/// A field's type and its constraints; absent bounds are omitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum FieldKind {
    #[serde(rename_all = "camelCase")]
    Text {
        #[serde(skip_serializing_if = "Option::is_none")]
        format: Option<TextFormat>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pattern: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        min_length: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max_length: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    Number {
        #[serde(skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
    },
    Integer {
        #[serde(skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
    },
    Boolean {
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    Choice {
        options: Vec<FieldOption>,
        /// An option's `value`.
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Multi {
        options: Vec<FieldOption>,
        #[serde(skip_serializing_if = "Option::is_none")]
        min_items: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max_items: Option<u32>,
        /// Options' `value`s.
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<Vec<String>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum TextFormat {
    #[serde(rename = "email")]
    Email,
    #[serde(rename = "uri")]
    Uri,
    #[serde(rename = "date")]
    Date,
    #[serde(rename = "date-time")]
    DateTime,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FieldOption {
    /// What the answer carries.
    pub value: String,
    /// What the person sees.
    pub label: String,
    /// What the agent says about it; left out when it says nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One field's value in an answer: a string (text, choice), a number
/// (number, integer), a boolean, or a list of option values (multi).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum FieldValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

/// The client's decision on an `askQuestions/ask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub(crate) enum AskResult {
    /// `answers` for questions (per question: labels and/or typed text);
    /// `choice` (a choice's `id`) for a permission; `values` (by field id)
    /// for a form, `{}` to consent to a link.
    Answered {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answers: Option<Vec<Vec<String>>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<std::collections::BTreeMap<String, FieldValue>>,
    },
    /// `message` reaches the agent where its server takes one.
    Rejected {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Not now: shown again later (`askLsp.show`).
    Deferred,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ResolvedParams {
    pub key: String,
    pub state: ResolvedState,
    pub reason: ResolvedReason,
    /// This editor answered or rejected it.
    pub here: bool,
    /// A sentence for the person, naming the prompt (never an answer).
    pub message: String,
    pub pending: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ResolvedState {
    Replied,
    Rejected,
    Dismissed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ResolvedReason {
    AnsweredHere,
    AnsweredElsewhere,
    Policy,
    Timeout,
    RejectedHere,
    RejectedElsewhere,
    SessionEnded,
    Gone,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatusParams {
    pub pending: usize,
    pub servers: Vec<ServerStatus>,
    pub counters: Counters,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ServerStatus {
    pub name: String,
    pub backend: String,
    pub url: String,
    pub connected: bool,
    /// Why it is not connected, in the person's language.
    pub error: Option<String>,
    /// Not connected as a state, not a fault (no Codex daemon running):
    /// nothing for the person to fix. Sent only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
    /// No URL was configured: found running, `$ASK_LSP_URL` or the
    /// built-in default.
    pub defaulted: bool,
    /// Where discovery found the server (a `service.json`, a process).
    pub discovered: Option<String>,
    /// Which generation of the server was found ("1" or "2" for OpenCode),
    /// once it answered.
    pub generation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Counters {
    pub answered_here: u64,
    pub rejected_here: u64,
    pub resolved_elsewhere: u64,
    pub policy_answered: u64,
    pub policy_rejected: u64,
    pub timeouts: u64,
}

/// The one argument of `askLsp.answer`: its fields say what it answers,
/// exactly one of `answers` (every question), `question` with `answer`
/// (one question), `choice` (a permission) or `values` (some or all of a
/// form's fields, `{}` to consent to a link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerArguments {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<std::collections::BTreeMap<String, FieldValue>>,
}

/// What `askLsp.answer` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub(crate) enum AnswerResult {
    Sent,
    Partial { remaining: Vec<usize> },
}

/// `docs/protocol.md` against these definitions: every interface's fields,
/// optionality and nullability, and every string union.
#[cfg(test)]
mod doc_tests;
