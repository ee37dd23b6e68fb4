//! The `askQuestions` LSP extension and the `askLsp.*` commands, as typed
//! definitions: every method and every wire shape is here, and
//! `docs/protocol.md` documents exactly these (a test keeps the two in step).
//! Conversions from ask-lsp's own types are in [`super::to_proto`].
//!
//! Over 500 lines: every wire shape in one place (under 360 lines); the rest is
//! the test that checks them against docs/protocol.md.

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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Question {
    pub question: String,
    pub header: String,
    pub options: Vec<QuestionOption>,
    pub multiple: bool,
    /// A typed answer is allowed.
    pub custom: bool,
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
    pub error: Option<String>,
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
mod doc_tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde_json::Value;

    use super::*;

    const DOC: &str = include_str!("../../docs/protocol.md");

    #[derive(Debug, Default)]
    struct Documented {
        /// Interface → field → (optional, nullable).
        interfaces: BTreeMap<String, BTreeMap<String, (bool, bool)>>,
        /// String unions → their members.
        unions: BTreeMap<String, BTreeSet<String>>,
        /// Unions of interfaces.
        aliases: BTreeMap<String, Vec<String>>,
    }

    /// Reads the `ts` blocks: `interface X { a?: T | null; }` and
    /// `type Y = "a" | "b";` (comments after `//` ignored).
    fn documented() -> Documented {
        let mut doc = Documented::default();
        let mut code = String::new();
        let mut inside = false;
        for line in DOC.lines() {
            match (inside, line.trim()) {
                (false, "```ts") => inside = true,
                (true, "```") => inside = false,
                (true, text) => {
                    code.push_str(text.split("//").next().unwrap_or(""));
                    code.push('\n');
                }
                _ => {}
            }
        }
        let mut rest = code.as_str();
        while let Some(at) = rest.find(|c: char| !c.is_whitespace()) {
            rest = &rest[at..];
            if let Some(body) = rest.strip_prefix("interface ") {
                let open = body.find('{').expect("interface body");
                let close = body.find('}').expect("interface end");
                let name = body[..open].trim().to_owned();
                let fields = body[open + 1..close]
                    .split(';')
                    .filter(|f| !f.trim().is_empty())
                    .map(|field| {
                        let (name, ty) = field.split_once(':').expect("name: type");
                        let name = name.trim();
                        let optional = name.ends_with('?');
                        let nullable = ty.split('|').any(|t| t.trim() == "null");
                        (name.trim_end_matches('?').to_owned(), (optional, nullable))
                    })
                    .collect();
                assert!(doc.interfaces.insert(name, fields).is_none());
                rest = &body[close + 1..];
            } else if let Some(body) = rest.strip_prefix("type ") {
                let end = body.find(';').expect("type ends with ;");
                let (name, members) = body[..end].split_once('=').expect("type X = …");
                let members: Vec<&str> = members.split('|').map(str::trim).collect();
                if members.iter().all(|m| m.starts_with('"')) {
                    doc.unions.insert(
                        name.trim().to_owned(),
                        members
                            .iter()
                            .map(|m| m.trim_matches('"').to_owned())
                            .collect(),
                    );
                } else {
                    doc.aliases.insert(
                        name.trim().to_owned(),
                        members.iter().map(|m| m.to_string()).collect(),
                    );
                }
                rest = &body[end + 1..];
            } else {
                panic!("unexpected TypeScript in docs/protocol.md: {rest:.60}");
            }
        }
        doc
    }

    fn json(value: impl Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    /// One field of every type, every bound set: all the keys a field sends.
    fn field_kinds() -> Vec<FieldKind> {
        let option = FieldOption {
            value: "v".into(),
            label: "l".into(),
            description: String::new(),
        };
        vec![
            FieldKind::Text {
                format: Some(TextFormat::Email),
                pattern: Some("x".into()),
                min_length: Some(1),
                max_length: Some(2),
                default: Some("d".into()),
            },
            FieldKind::Number {
                minimum: Some(0.0),
                maximum: Some(1.0),
                default: Some(0.5),
            },
            FieldKind::Integer {
                minimum: None,
                maximum: None,
                default: None,
            },
            FieldKind::Boolean { default: None },
            FieldKind::Choice {
                options: vec![option.clone()],
                default: None,
            },
            FieldKind::Multi {
                options: vec![option.clone()],
                min_items: Some(0),
                max_items: Some(1),
                default: None,
            },
        ]
    }

    /// Each wire shape with every field set, and with every optional field
    /// left out: their keys are the interface's fields and its required ones.
    fn exemplars() -> BTreeMap<&'static str, (Value, Value)> {
        let source = Source {
            backend: "opencode".into(),
            url: "http://x".into(),
            directory: None,
        };
        let origin = Origin {
            tool_call_id: None,
            agent: None,
            session_title: None,
        };
        let question = Question {
            question: "q".into(),
            header: "h".into(),
            options: vec![],
            multiple: false,
            custom: true,
        };
        let permission = Permission {
            action: "bash".into(),
            title: "t".into(),
            patterns: vec![],
            command: None,
            diff: None,
            choices: vec![],
        };
        let ask = AskParams {
            key: "s/1".into(),
            server: "s".into(),
            request_id: "1".into(),
            session_id: "ses".into(),
            kind: PromptKind::Questions,
            title: "t".into(),
            source: source.clone(),
            origin: origin.clone(),
            questions: None,
            permission: None,
            form: None,
            timeout_ms: None,
            pending: 1,
        };
        let option = FieldOption {
            value: "v".into(),
            label: "l".into(),
            description: String::new(),
        };
        let field = |kind: FieldKind| FormField {
            id: "f".into(),
            title: "F".into(),
            description: String::new(),
            required: false,
            kind,
        };
        let field_kinds = field_kinds();
        // Every key any field type sends, and what a bare boolean sends.
        let mut all_field_keys = serde_json::Map::new();
        for kind in &field_kinds {
            all_field_keys.extend(json(field(kind.clone())).as_object().unwrap().clone());
        }
        let form = Form {
            message: "m".into(),
            url: None,
            fields: vec![],
        };
        let full_ask = AskParams {
            questions: Some(vec![question.clone()]),
            permission: Some(permission.clone()),
            form: Some(form.clone()),
            timeout_ms: Some(1),
            ..ask.clone()
        };
        let server = ServerStatus {
            name: "s".into(),
            backend: "opencode".into(),
            url: "http://x".into(),
            connected: true,
            error: None,
            defaulted: false,
            discovered: None,
            generation: None,
        };
        let counters = Counters {
            answered_here: 0,
            rejected_here: 0,
            resolved_elsewhere: 0,
            policy_answered: 0,
            policy_rejected: 0,
            timeouts: 0,
        };
        let status = StatusParams {
            pending: 0,
            servers: vec![],
            counters: counters.clone(),
        };
        let resolved = ResolvedParams {
            key: "s/1".into(),
            state: ResolvedState::Replied,
            reason: ResolvedReason::AnsweredHere,
            here: true,
            message: "m".into(),
            pending: 0,
        };
        let same = |value: Value| (value.clone(), value);
        BTreeMap::from([
            ("AskParams", (json(&full_ask), json(&ask))),
            ("Source", same(json(&source))),
            (
                "Origin",
                (
                    json(Origin {
                        session_title: Some("t".into()),
                        ..origin.clone()
                    }),
                    json(&origin),
                ),
            ),
            ("Question", same(json(&question))),
            (
                "QuestionOption",
                same(json(QuestionOption {
                    label: "l".into(),
                    description: "d".into(),
                })),
            ),
            ("Permission", same(json(&permission))),
            (
                "PermissionChoice",
                same(json(PermissionChoice {
                    id: "once".into(),
                    label: "Allow once".into(),
                    effect: Effect::AllowOnce,
                })),
            ),
            (
                "AskAnswered",
                (
                    json(AskResult::Answered {
                        answers: Some(vec![]),
                        choice: Some("c".into()),
                        values: Some(Default::default()),
                    }),
                    json(AskResult::Answered {
                        answers: None,
                        choice: None,
                        values: None,
                    }),
                ),
            ),
            (
                "AskRejected",
                (
                    json(AskResult::Rejected {
                        message: Some("m".into()),
                    }),
                    json(AskResult::Rejected { message: None }),
                ),
            ),
            ("AskDeferred", same(json(AskResult::Deferred))),
            ("ResolvedParams", same(json(&resolved))),
            ("StatusParams", same(json(&status))),
            (
                "ServerStatus",
                (
                    json(ServerStatus {
                        generation: Some("2".into()),
                        ..server.clone()
                    }),
                    json(&server),
                ),
            ),
            ("Counters", same(json(&counters))),
            ("AnswerSent", same(json(AnswerResult::Sent))),
            ("Form", same(json(&form))),
            (
                "FormLink",
                (
                    json(FormLink {
                        url: "https://x".into(),
                        domain: "x".into(),
                        warning: Some("w".into()),
                    }),
                    json(FormLink {
                        url: "https://x".into(),
                        domain: "x".into(),
                        warning: None,
                    }),
                ),
            ),
            (
                "FormField",
                (
                    Value::Object(all_field_keys),
                    json(field(FieldKind::Boolean { default: None })),
                ),
            ),
            (
                "FieldOption",
                (
                    json(FieldOption {
                        description: "d".into(),
                        ..option.clone()
                    }),
                    json(&option),
                ),
            ),
            (
                "AnswerPartial",
                same(json(AnswerResult::Partial { remaining: vec![] })),
            ),
        ])
    }

    /// Every variant of each string union, as serialized. The matches have
    /// no wildcard, so a new variant does not compile until it is listed.
    fn unions() -> BTreeMap<&'static str, BTreeSet<String>> {
        fn names<T: Serialize>(all: &[T]) -> BTreeSet<String> {
            all.iter()
                .map(|v| json(v).as_str().unwrap().to_owned())
                .collect()
        }
        let kinds = [
            PromptKind::Questions,
            PromptKind::Permission,
            PromptKind::Form,
        ];
        for kind in kinds {
            match kind {
                PromptKind::Questions | PromptKind::Permission | PromptKind::Form => {}
            }
        }
        let formats = [
            TextFormat::Email,
            TextFormat::Uri,
            TextFormat::Date,
            TextFormat::DateTime,
        ];
        for format in formats {
            match format {
                TextFormat::Email | TextFormat::Uri | TextFormat::Date | TextFormat::DateTime => {}
            }
        }
        // Each field type, by the tag it is sent with.
        let field_types: BTreeSet<String> = field_kinds()
            .iter()
            .map(|kind| {
                match kind {
                    FieldKind::Text { .. }
                    | FieldKind::Number { .. }
                    | FieldKind::Integer { .. }
                    | FieldKind::Boolean { .. }
                    | FieldKind::Choice { .. }
                    | FieldKind::Multi { .. } => {}
                }
                json(kind)["type"].as_str().unwrap().to_owned()
            })
            .collect();
        let effects = [
            Effect::AllowOnce,
            Effect::AllowAlways,
            Effect::RejectOnce,
            Effect::RejectAlways,
        ];
        for effect in effects {
            match effect {
                Effect::AllowOnce
                | Effect::AllowAlways
                | Effect::RejectOnce
                | Effect::RejectAlways => {}
            }
        }
        let states = [
            ResolvedState::Replied,
            ResolvedState::Rejected,
            ResolvedState::Dismissed,
        ];
        for state in states {
            match state {
                ResolvedState::Replied | ResolvedState::Rejected | ResolvedState::Dismissed => {}
            }
        }
        use ResolvedReason::*;
        let reasons = [
            AnsweredHere,
            AnsweredElsewhere,
            Policy,
            Timeout,
            RejectedHere,
            RejectedElsewhere,
            SessionEnded,
            Gone,
        ];
        for reason in reasons {
            match reason {
                AnsweredHere | AnsweredElsewhere | Policy | Timeout | RejectedHere
                | RejectedElsewhere | SessionEnded | Gone => {}
            }
        }
        BTreeMap::from([
            ("PromptKind", names(&kinds)),
            ("Effect", names(&effects)),
            ("ResolvedState", names(&states)),
            ("ResolvedReason", names(&reasons)),
            ("TextFormat", names(&formats)),
            ("FieldType", field_types),
        ])
    }

    #[test]
    fn every_documented_interface_matches_the_code() {
        let doc = documented();
        let exemplars = exemplars();
        let documented: BTreeSet<&str> = doc.interfaces.keys().map(String::as_str).collect();
        let coded: BTreeSet<&str> = exemplars.keys().copied().collect();
        assert_eq!(
            documented, coded,
            "interfaces in docs/protocol.md vs ext.rs"
        );
        for (name, (full, minimal)) in &exemplars {
            let fields = &doc.interfaces[*name];
            let all: BTreeSet<&str> = full
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let documented: BTreeSet<&str> = fields.keys().map(String::as_str).collect();
            assert_eq!(documented, all, "fields of {name}");
            let minimal = minimal.as_object().unwrap();
            for (field, (optional, nullable)) in fields {
                assert_eq!(
                    !optional,
                    minimal.contains_key(field),
                    "{name}.{field}: documented {} but the code {} it",
                    if *optional { "optional" } else { "required" },
                    if minimal.contains_key(field) {
                        "always sends"
                    } else {
                        "may leave out"
                    },
                );
                if let Some(value) = minimal.get(field) {
                    assert_eq!(*nullable, value.is_null(), "{name}.{field}: null or not");
                }
            }
        }
    }

    #[test]
    fn every_documented_union_matches_the_code() {
        let doc = documented();
        let unions = unions();
        let coded: BTreeMap<String, BTreeSet<String>> = unions
            .into_iter()
            .map(|(name, members)| (name.to_owned(), members))
            .collect();
        assert_eq!(doc.unions, coded);
        for (alias, members) in &doc.aliases {
            // Named members (not `string`, `number[]`, …) must be documented.
            for member in members.iter().filter(|m| m.starts_with(char::is_uppercase)) {
                assert!(
                    doc.interfaces.contains_key(member),
                    "{alias}: {member} is not a documented interface"
                );
            }
        }
    }

    #[test]
    fn every_method_and_command_is_documented() {
        for method in [Ask::METHOD, Resolved::METHOD, Status::METHOD] {
            assert!(DOC.contains(&format!("### `{method}`")), "{method}");
        }
        for command in COMMANDS {
            assert!(DOC.contains(&format!("| `{command}` |")), "{command}");
        }
        assert!(DOC.contains(&format!(
            "\"askQuestions\": {{ \"version\": {EXTENSION_VERSION} }}"
        )));
    }
}
