//! What the hooks that can only allow once or deny share (Qwen Code's
//! `PermissionRequest`, GitHub Copilot CLI's `permissionRequest`): their
//! request as a prompt, and the person's reply as the decision.
//!
//! Neither agent stores a rule a hook hands back (Qwen 0.24.4 passes no
//! `permission_suggestions` and reads only `behavior`, `message`,
//! `updatedInput` and `interrupt`; Copilot 1.0.102 sends
//! `permissionSuggestions: []`), so no "always" is offered: their own
//! dialogs offer it.

use serde_json::{Value, json};

use super::{ALLOW_ONCE, DEFAULT_DENIAL, REJECT, Refusal, choice, next_id, routable};
use crate::prompt::{
    Answer, Asker, ChoiceLabel, Effect, Kind, Origin, Permission, PermissionTitle, Prompt, Reply,
};

/// One hook request, as the agent's own module read it.
pub(super) struct Request {
    /// The agent's name in `origin.agent` (`qwen`, `copilot`).
    pub agent: &'static str,
    pub asker: Asker,
    pub session: String,
    pub cwd: Option<String>,
    pub tool: String,
    /// Whether `tool` is the agent's shell: its `command` is what runs.
    pub shell: bool,
    pub input: Value,
}

/// The prompt the request asks: a shell command whole and raw (rules match
/// it), anything else the tool would act on as indented JSON.
pub(super) fn prompt(request: Request) -> Result<Prompt, Refusal> {
    routable(&request.session, request.cwd.as_deref())?;
    let field = |name: &str| request.input.get(name).and_then(Value::as_str);
    let command = match request.shell {
        true => Some(
            field("command")
                .ok_or(Refusal::BashWithoutCommand)?
                .to_owned(),
        ),
        false => None,
    };
    let details = match &request.input {
        Value::Object(map) => {
            let mut rest = map.clone();
            if command.is_some() {
                rest.remove("command");
                rest.remove("description");
            }
            (!rest.is_empty()).then(|| serde_json::to_string_pretty(&rest).unwrap_or_default())
        }
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let patterns = match &command {
        Some(command) => vec![command.clone()],
        None => ["file_path", "path", "url", "pattern", "command"]
            .into_iter()
            .filter_map(field)
            .map(str::to_owned)
            .collect(),
    };
    let asker = request.asker;
    let title = match command {
        Some(_) => PermissionTitle::RunCommand {
            asker,
            reason: field("description").map(str::to_owned),
        },
        None => PermissionTitle::Tool {
            asker,
            tool: request.tool.clone(),
        },
    };
    Ok(Prompt {
        id: next_id(),
        session: request.session,
        directory: request.cwd,
        origin: Origin {
            tool_call: None,
            agent: Some(request.agent.into()),
            session_title: None,
            requester: None,
        },
        kind: Kind::Permission(Box::new(Permission {
            action: request.tool,
            title,
            patterns,
            command,
            diff: details,
            choices: vec![
                choice(ALLOW_ONCE, ChoiceLabel::EFFECT, Effect::AllowOnce),
                choice(REJECT, ChoiceLabel::EFFECT, Effect::RejectOnce),
            ],
            raw_command: None,
            raw_patterns: Vec::new(),
        })),
    })
}

/// The decision in the hook's terms: only the person's allow once or
/// reject decides; anything else is `{}` (no decision: the agent asks in
/// its own dialog).
pub(super) fn decision(reply: &Reply) -> Value {
    match reply {
        Reply::Answer(Answer::Permission { choice }) if choice == ALLOW_ONCE => {
            json!({"behavior": "allow"})
        }
        Reply::Answer(Answer::Permission { choice }) if choice == REJECT => {
            json!({"behavior": "deny", "message": DEFAULT_DENIAL})
        }
        Reply::Reject { message } => json!({
            "behavior": "deny",
            "message": message.as_deref().unwrap_or(DEFAULT_DENIAL),
        }),
        Reply::Answer(_) | Reply::Cancel => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reply the broker can hand over, and what the hook is told.
    #[test]
    fn only_allow_once_and_reject_decide() {
        let pick = |choice: &str| {
            Reply::Answer(Answer::Permission {
                choice: choice.into(),
            })
        };
        let table = [
            (pick(ALLOW_ONCE), json!({"behavior": "allow"})),
            (
                pick(REJECT),
                json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            ),
            (
                Reply::Reject {
                    message: Some("use make".into()),
                },
                json!({"behavior": "deny", "message": "use make"}),
            ),
            (
                Reply::Reject { message: None },
                json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            ),
            (pick("allow-always"), json!({})),
            (pick("Allow"), json!({})),
            (pick(""), json!({})),
            (
                Reply::Answer(Answer::Questions(vec![vec!["yes".into()]])),
                json!({}),
            ),
            (Reply::Cancel, json!({})),
        ];
        for (reply, expected) in table {
            assert_eq!(decision(&reply), expected, "{reply:?}");
        }
    }
}
