//! The one boundary between ask-lsp's model and the wire: method names, the
//! `askQuestions` extension's shapes, and reading clients' answers.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::ClientCapabilities;

use crate::broker::{Pending, Resolution, Status};
use crate::model::Answers;

pub const ASK: &str = "askQuestions/ask";
pub const RESOLVED: &str = "askQuestions/resolved";
pub const STATUS: &str = "askQuestions/status";
pub const EXTENSION_VERSION: u32 = 1;

pub const CMD_LIST: &str = "askLsp.list";
pub const CMD_ANSWER: &str = "askLsp.answer";
pub const CMD_REJECT: &str = "askLsp.reject";
pub const CMD_SHOW: &str = "askLsp.show";
pub const CMD_STATUS: &str = "askLsp.status";
pub const COMMANDS: [&str; 5] = [CMD_LIST, CMD_ANSWER, CMD_REJECT, CMD_SHOW, CMD_STATUS];

/// What the client can do, reduced once at `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFlags {
    /// Opted into `askQuestions` via `capabilities.experimental`.
    pub ask_extension: bool,
}

impl ClientFlags {
    pub fn from_capabilities(capabilities: &ClientCapabilities) -> Self {
        let ask_extension = capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get("askQuestions"))
            .is_some_and(|v| v.is_object() || v == &Value::Bool(true));
        ClientFlags { ask_extension }
    }
}

pub fn ask_params(pending: &Pending, queued: usize) -> Value {
    json!({
        "key": pending.key,
        "server": &*pending.server,
        "requestID": pending.request.id,
        "sessionID": pending.request.session_id,
        "source": pending.source,
        "tool": pending.request.tool,
        "questions": pending.request.questions,
        "timeoutMs": pending.timeout.map(|t| t.as_millis() as u64),
        "pending": queued,
    })
}

pub fn resolved_params(resolution: &Resolution) -> Value {
    serde_json::to_value(resolution).expect("serializable")
}

pub fn status_params(status: &Status) -> Value {
    serde_json::to_value(status).expect("serializable")
}

/// A client's answer to `askQuestions/ask`.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum AskResult {
    Answered { answers: Answers },
    Rejected,
    Deferred,
}

/// Arguments of `askLsp.answer`: `[key, answers]` or `[key, index, answer]`.
#[derive(Debug, PartialEq, Eq)]
pub enum AnswerArgs {
    All {
        key: String,
        answers: Answers,
    },
    One {
        key: String,
        index: usize,
        answer: Vec<String>,
    },
}

pub fn answer_args(arguments: &[Value]) -> Result<AnswerArgs, String> {
    const USAGE: &str =
        "askLsp.answer takes [key, answers: string[][]] or [key, questionIndex, answer: string[]]";
    let key = key_arg(arguments).ok_or(USAGE)?;
    match arguments {
        [_, answers] => serde_json::from_value(answers.clone())
            .map(|answers| AnswerArgs::All { key, answers })
            .map_err(|e| format!("{USAGE}: answers: {e}")),
        [_, index, answer] => {
            let index = index.as_u64().ok_or(USAGE)? as usize;
            serde_json::from_value(answer.clone())
                .map(|answer| AnswerArgs::One { key, index, answer })
                .map_err(|e| format!("{USAGE}: answer: {e}"))
        }
        _ => Err(USAGE.into()),
    }
}

pub fn key_arg(arguments: &[Value]) -> Option<String> {
    arguments.first()?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_arguments_in_both_shapes() {
        assert_eq!(
            answer_args(&[json!("d/que_1"), json!([["Red"], []])]),
            Ok(AnswerArgs::All {
                key: "d/que_1".into(),
                answers: vec![vec!["Red".into()], vec![]]
            })
        );
        assert_eq!(
            answer_args(&[json!("d/que_1"), json!(1), json!(["S", "M"])]),
            Ok(AnswerArgs::One {
                key: "d/que_1".into(),
                index: 1,
                answer: vec!["S".into(), "M".into()]
            })
        );
        let err = answer_args(&[json!("d/que_1"), json!("Red")]).unwrap_err();
        assert!(
            err.contains("answers: invalid type: string \"Red\", expected a sequence"),
            "{err}"
        );
        assert!(answer_args(&[json!(3)]).is_err());
    }

    #[test]
    fn ask_results() {
        let parse = |v: Value| serde_json::from_value::<AskResult>(v);
        assert_eq!(
            parse(json!({"outcome": "answered", "answers": [["a"]]})).unwrap(),
            AskResult::Answered {
                answers: vec![vec!["a".into()]]
            }
        );
        assert_eq!(
            parse(json!({"outcome": "deferred"})).unwrap(),
            AskResult::Deferred
        );
        assert!(parse(json!({"outcome": "maybe"})).is_err());
        assert!(parse(json!(null)).is_err());
    }
}
