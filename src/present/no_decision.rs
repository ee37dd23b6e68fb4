//! Why `ask-lsp hook` made no decision (src/hook.rs), in one line for its
//! stderr, which Claude Code and Codex show the person. What goes to the
//! agent on stdout is never worded here: the model reads it (English).

use std::fmt;
use std::time::Duration;

use super::i18n::tr;

/// Why the hook printed no decision, with its facts. Error details (an OS
/// error, where serde found the input malformed) stay as their libraries
/// write them.
#[derive(Debug)]
pub enum NoDecision {
    UnsupportedAgent {
        agent: String,
    },
    ReadingInput(std::io::Error),
    InputTooLarge {
        max: usize,
    },
    InputNotJson(serde_json::Error),
    /// No ask-lsp's socket found (`error`: why the directory was unusable).
    NoInstance {
        error: Option<std::io::Error>,
    },
    /// Sockets, but none took the connection or gave an answer.
    NoInstanceAnswers,
    Timeout(Duration),
    Sending(std::io::Error),
    ReadingAnswer(std::io::Error),
    ClosedWithoutDecision,
    MalformedAnswer(serde_json::Error),
    /// ask-lsp refused the request; `error` is its own text (another
    /// process, maybe of another version: English).
    Refused {
        error: String,
    },
    /// The editor's side decided nothing (cancelled, a policy's timeout).
    Undecided,
    WritingDecision(std::io::Error),
}

impl fmt::Display for NoDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = match self {
            NoDecision::UnsupportedAgent { agent } => {
                tr!("hook.unsupported_agent", agent = format!("{agent:?}"))
            }
            NoDecision::ReadingInput(error) => tr!("hook.reading_input", error = error),
            NoDecision::InputTooLarge { max } => tr!("hook.input_too_large", max = max),
            NoDecision::InputNotJson(error) => tr!("hook.input_not_json", error = error),
            NoDecision::NoInstance { error: None } => tr!("hook.no_instance"),
            NoDecision::NoInstance { error: Some(error) } => {
                tr!("hook.no_instance_because", error = error)
            }
            NoDecision::NoInstanceAnswers => tr!("hook.no_instance_answers"),
            NoDecision::Timeout(after) => tr!("hook.timeout", after = format!("{after:?}")),
            NoDecision::Sending(error) => tr!("hook.sending", error = error),
            NoDecision::ReadingAnswer(error) => tr!("hook.reading_answer", error = error),
            NoDecision::ClosedWithoutDecision => tr!("hook.closed_without_decision"),
            NoDecision::MalformedAnswer(error) => tr!("hook.malformed_answer", error = error),
            NoDecision::Refused { error } => tr!("hook.refused", error = error),
            NoDecision::Undecided => tr!("hook.undecided"),
            NoDecision::WritingDecision(error) => tr!("hook.writing_decision", error = error),
        };
        f.write_str(&line)
    }
}
