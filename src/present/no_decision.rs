//! Why `ask-lsp hook` made no decision (src/hook.rs), in one line for its
//! stderr, which Claude Code and Codex show the person. What goes to the
//! agent on stdout is never worded here: the model reads it (English).

use std::fmt;
use std::time::Duration;

use super::i18n::{Locale, in_locale, tr};
use crate::backends::hook::Refusal;
use crate::backends::hook::instances::Unreached;

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
    /// ask-lsp refused the request.
    Refused(Refusal),
    /// An ask-lsp of an older version refused it, saying only `error`
    /// (English).
    RefusedSaying {
        error: String,
    },
    /// The editor's side decided nothing (cancelled, a policy's timeout).
    Undecided,
    /// Claude Code's `Elicitation` without `--elicitation-timeout-ms`: its
    /// own form shows at once.
    ElicitationOff,
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
            NoDecision::InputNotJson(error) => tr!("hook.input_not_json", error = shown(error)),
            NoDecision::NoInstance { error: None } => tr!("hook.no_instance"),
            NoDecision::NoInstance { error: Some(error) } => {
                tr!("hook.no_instance_because", error = error)
            }
            NoDecision::NoInstanceAnswers => tr!("hook.no_instance_answers"),
            NoDecision::Timeout(after) => tr!("hook.timeout", after = format!("{after:?}")),
            NoDecision::Sending(error) => tr!("hook.sending", error = error),
            NoDecision::ReadingAnswer(error) => tr!("hook.reading_answer", error = error),
            NoDecision::ClosedWithoutDecision => tr!("hook.closed_without_decision"),
            NoDecision::MalformedAnswer(error) => {
                tr!("hook.malformed_answer", error = shown(error))
            }
            NoDecision::Refused(why) => tr!("hook.refused", error = refusal(why)),
            NoDecision::RefusedSaying { error } => tr!("hook.refused", error = shown(error)),
            NoDecision::Undecided => tr!("hook.undecided"),
            NoDecision::ElicitationOff => tr!("hook.elicitation_off"),
            NoDecision::WritingDecision(error) => tr!("hook.writing_decision", error = error),
        };
        f.write_str(&line)
    }
}

/// A detail that may quote the agent's input (serde's account of it), on
/// one line with control characters shown, bounded.
fn shown(detail: &impl fmt::Display) -> String {
    super::cut::for_display(&detail.to_string(), crate::text::DISPLAY_MESSAGE_CHARS).into_owned()
}

/// What `ask-lsp status --hooks` says when hooks reach no instance.
pub(crate) fn unreached(why: &Unreached) -> String {
    match why {
        Unreached::Directory(error) => tr!("hook.unreached.directory", error = error),
        Unreached::NoListener => tr!("hook.unreached.no_listener"),
    }
}

impl fmt::Display for Unreached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || unreached(self)))
    }
}

/// The refusal's English, as the `error` an ask-lsp sends beside it (an
/// older hook reads only that): the same catalogue's.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || refusal(self)))
    }
}

/// Why an ask-lsp refused the request, in the person's language.
fn refusal(why: &Refusal) -> String {
    match why {
        Refusal::TooLarge => tr!("hook.refusal.too_large"),
        Refusal::Incomplete => tr!("hook.refusal.incomplete"),
        Refusal::Malformed { detail } => tr!("hook.refusal.malformed", detail = shown(detail)),
        Refusal::UnknownAgent { agent } => {
            tr!("hook.refusal.unknown_agent", agent = format!("{agent:?}"))
        }
        Refusal::NotClaudeInput { detail } => {
            tr!(
                "hook.refusal.not_input",
                agent = "Claude Code",
                detail = shown(detail)
            )
        }
        Refusal::NotCodexInput { detail } => {
            tr!(
                "hook.refusal.not_input",
                agent = "Codex",
                detail = shown(detail)
            )
        }
        Refusal::NotQwenInput { detail } => {
            tr!(
                "hook.refusal.not_input",
                agent = "Qwen Code",
                detail = shown(detail)
            )
        }
        Refusal::NotCopilotInput { detail } => {
            tr!(
                "hook.refusal.not_input",
                agent = "GitHub Copilot CLI",
                detail = shown(detail)
            )
        }
        Refusal::OtherEvent { event } => {
            tr!("hook.refusal.other_event", event = format!("{event:?}"))
        }
        Refusal::AskUserQuestion => tr!("hook.refusal.ask_user_question"),
        Refusal::ElicitationUrl => tr!("hook.refusal.elicitation_url"),
        Refusal::FormNotShown { reason } => {
            tr!("hook.refusal.form_not_shown", reason = shown(reason))
        }
        Refusal::TooLong => tr!("hook.refusal.too_long"),
        Refusal::BashWithoutCommand => tr!("hook.refusal.bash_without_command"),
        Refusal::Busy { readers } => tr!("hook.refusal.busy", readers = readers),
        Refusal::FollowedByDaemon => tr!("hook.refusal.followed_by_daemon"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::i18n::{Locale, in_locale};

    fn every_refusal() -> Vec<Refusal> {
        let detail = || "missing field `x` at line 1 column 2".to_owned();
        vec![
            Refusal::TooLarge,
            Refusal::Incomplete,
            Refusal::Malformed { detail: detail() },
            Refusal::UnknownAgent {
                agent: "gemini".into(),
            },
            Refusal::NotClaudeInput { detail: detail() },
            Refusal::NotCodexInput { detail: detail() },
            Refusal::NotQwenInput { detail: detail() },
            Refusal::NotCopilotInput { detail: detail() },
            Refusal::OtherEvent {
                event: "PreToolUse".into(),
            },
            Refusal::AskUserQuestion,
            Refusal::TooLong,
            Refusal::BashWithoutCommand,
            Refusal::Busy { readers: 16 },
            Refusal::FollowedByDaemon,
        ]
    }

    /// The hook's English line is what the ask-lsp that refused said, and
    /// every refusal has its own Chinese.
    #[test]
    fn a_refusal_reads_in_english_as_ask_lsp_said_it_and_in_chinese() {
        let mut chinese = std::collections::BTreeSet::new();
        for refusal in every_refusal() {
            let said = format!("ask-lsp refused the request: {refusal}");
            let why = NoDecision::Refused(refusal);
            assert_eq!(in_locale(Locale::En, || why.to_string()), said);
            let zh = in_locale(Locale::ZhCn, || why.to_string());
            assert!(zh.starts_with("ask-lsp 拒绝了该请求："), "{zh}");
            assert!(chinese.insert(zh));
        }
    }

    #[test]
    fn what_the_input_held_is_shown_not_obeyed() {
        // serde names an unknown field as the input spelled it.
        let detail = "unknown field `\u{1b}[2J\nx`".to_owned();
        for why in [
            NoDecision::Refused(Refusal::NotCodexInput {
                detail: detail.clone(),
            }),
            NoDecision::RefusedSaying { error: detail },
        ] {
            let line = in_locale(Locale::En, || why.to_string());
            assert!(!line.contains(['\u{1b}', '\n']), "{line:?}");
            assert!(line.contains("[2J"), "{line:?}");
        }
    }

    #[test]
    fn the_refusal_travels_as_sent() {
        for refusal in every_refusal() {
            let wire = serde_json::to_value(&refusal).unwrap();
            assert_eq!(serde_json::from_value::<Refusal>(wire).unwrap(), refusal);
        }
        assert_eq!(
            serde_json::to_value(Refusal::OtherEvent {
                event: "PreToolUse".into()
            })
            .unwrap(),
            serde_json::json!({"why": "otherEvent", "event": "PreToolUse"})
        );
    }
}
