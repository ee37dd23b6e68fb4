//! When Claude Code no longer waits for a hook prompt (docs/hook.md,
//! "Withdrawal"). Claude 2.1.332 leaves its `PermissionRequest` hook running
//! when the person answers in its own dialog ("Yes", or a question
//! answered there; "No" and Esc end the hook), so the prompt would stay in
//! the editor until the hook's bound. What it does give, measured in tmux:
//!
//! - its other hook events, when `ask-lsp hook claude` is registered for
//!   them too: `PostToolUse` / `PostToolUseFailure` / `PermissionDenied` of
//!   the same call (same session, tool and input; about 0.8 s after a
//!   question was answered in the terminal, when a command has run), and
//!   `Stop` / `UserPromptSubmit` / `SessionEnd` of the session;
//! - its next `PermissionRequest` of the same session: Claude asks one
//!   thing at a time per session, so an older prompt of that session may be
//!   stale and must not hold the editor's one-at-a-time slot.

use serde::Deserialize;
use serde_json::Value;

/// A waiting Claude prompt's call: what its end is recognised by.
#[derive(Debug)]
pub(super) struct Call {
    pub session: String,
    /// `None` for a form, which no tool's event ends.
    tool: Option<String>,
    /// The tool input without what the answer adds to it.
    input: Value,
}

/// What one of Claude's hook events ends.
#[derive(Debug)]
pub(super) enum Ended {
    /// The call ran, failed or was refused.
    Call(Call),
    /// The turn ended or a new one began: nothing of the session waits.
    Session(String),
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Value,
}

/// Claude's hook events that say what it no longer waits for: `ask-lsp hook
/// claude` tells them to every instance and prints nothing. The first
/// [`CALL_ENDS`] end a call, the others the session.
pub(crate) const NEWS: [&str; 7] = [
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionDenied",
    "Stop",
    "StopFailure",
    "UserPromptSubmit",
    "SessionEnd",
];
const CALL_ENDS: usize = 3;

/// Fields the answer adds to `AskUserQuestion`'s input.
const ADDED_BY_ANSWERS: [&str; 2] = ["answers", "annotations"];

fn call(session: String, tool: String, mut input: Value) -> Call {
    if let Value::Object(map) = &mut input {
        for added in ADDED_BY_ANSWERS {
            map.remove(added);
        }
    }
    Call {
        session,
        tool: Some(tool),
        input,
    }
}

/// The call a `PermissionRequest` input waits for. An `Elicitation` (an MCP
/// server's form) is asked inside a tool call Claude already runs: no call
/// of its own ends it, its session's news does, and it withdraws the older
/// prompts of its session as a new request does.
pub(super) fn asking(input: &str) -> Option<Call> {
    let input: Input = serde_json::from_str(input).ok()?;
    if input.hook_event_name.as_deref() == Some("Elicitation") {
        return Some(Call {
            session: input.session_id,
            tool: None,
            input: Value::Null,
        });
    }
    Some(call(input.session_id, input.tool_name?, input.tool_input))
}

/// What a hook input of another event ends; `None` for `PermissionRequest`
/// and events that end nothing.
pub(super) fn ended(input: &str) -> Option<Ended> {
    let input: Input = serde_json::from_str(input).ok()?;
    let event = input.hook_event_name.as_deref()?;
    if NEWS.iter().position(|news| *news == event)? < CALL_ENDS {
        let ended = call(input.session_id, input.tool_name?, input.tool_input);
        Some(Ended::Call(ended))
    } else {
        Some(Ended::Session(input.session_id))
    }
}

impl Ended {
    /// Whether the prompt waiting for `waits` is no longer waited for.
    pub fn ends(&self, waits: &Call) -> bool {
        match self {
            Ended::Call(call) => {
                call.session == waits.session
                    && call.tool.is_some()
                    && call.tool == waits.tool
                    && call.input == waits.input
            }
            Ended::Session(session) => *session == waits.session,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(event: &str, session: &str, tool_input: Value) -> String {
        json!({"hook_event_name": event, "session_id": session, "tool_name": "AskUserQuestion",
               "tool_input": tool_input, "tool_use_id": "toolu_1"})
        .to_string()
    }

    #[test]
    fn the_same_calls_end_its_session_end_ends_all_other_events_nothing() {
        let asked = json!({"questions": [{"question": "Why?"}]});
        let waits = asking(&input("PermissionRequest", "s1", asked.clone())).unwrap();
        let mut answered = asked.clone();
        answered["answers"] = json!({"Why?": "Because"});
        for event in ["PostToolUse", "PostToolUseFailure", "PermissionDenied"] {
            assert!(
                ended(&input(event, "s1", answered.clone()))
                    .unwrap()
                    .ends(&waits)
            );
            assert!(
                !ended(&input(event, "s2", asked.clone()))
                    .unwrap()
                    .ends(&waits)
            );
            let other = json!({"questions": [{"question": "When?"}]});
            assert!(!ended(&input(event, "s1", other)).unwrap().ends(&waits));
        }
        for event in ["Stop", "UserPromptSubmit", "SessionEnd"] {
            assert!(
                ended(&input(event, "s1", Value::Null))
                    .unwrap()
                    .ends(&waits)
            );
            assert!(
                !ended(&input(event, "s2", Value::Null))
                    .unwrap()
                    .ends(&waits)
            );
        }
        for event in ["PermissionRequest", "PreToolUse", "Notification"] {
            assert!(ended(&input(event, "s1", asked.clone())).is_none());
        }
        assert!(ended("{not json").is_none());
    }

    /// A form waits for no tool call: only its session's news ends it.
    #[test]
    fn a_form_is_ended_by_its_session_only() {
        let form = asking(&input("Elicitation", "s1", Value::Null)).unwrap();
        for event in ["PostToolUse", "PostToolUseFailure", "PermissionDenied"] {
            assert!(!ended(&input(event, "s1", Value::Null)).unwrap().ends(&form));
        }
        assert!(
            ended(&input("Stop", "s1", Value::Null))
                .unwrap()
                .ends(&form)
        );
        assert!(
            !ended(&input("Stop", "s2", Value::Null))
                .unwrap()
                .ends(&form)
        );
    }
}
