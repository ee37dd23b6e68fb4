//! Codex's `PermissionRequest` hook input (openai/codex `codex-rs/hooks`,
//! 0.169.0: shell commands as `Bash`, network access as `NetworkAccess`) as
//! a prompt, and the person's reply as Codex's decision (docs/hook.md).
//!
//! Codex's hook can allow or deny, nothing more: no "always" (it fails
//! closed on `updatedPermissions`), so none is offered.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ALLOW_ONCE, Agent, DEFAULT_DENIAL, REJECT, Refusal, choice, next_id, routable};
use crate::prompt::{
    Answer, Asker, ChoiceLabel, Effect, Kind, Origin, Permission, PermissionTitle, Prompt, Reply,
};

/// Codex's `PermissionRequest` hook input (the fields used).
#[derive(Deserialize)]
struct CodexInput {
    hook_event_name: String,
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
}

/// The prompt Codex's hook input asks.
pub(super) fn prompt(input: &str) -> Result<(Prompt, Agent), Refusal> {
    let input: CodexInput = serde_json::from_str(input).map_err(|e| Refusal::NotCodexInput {
        detail: e.to_string(),
    })?;
    codex_prompt(input).map(|prompt| (prompt, Agent::Codex))
}

fn codex_prompt(input: CodexInput) -> Result<Prompt, Refusal> {
    if input.hook_event_name != "PermissionRequest" {
        return Err(Refusal::OtherEvent {
            event: crate::text::for_display(&input.hook_event_name, 40).into_owned(),
        });
    }
    routable(&input.session_id, input.cwd.as_deref())?;
    // The daemon's own request follows when the hook decides nothing: the
    // same prompt, answerable both ways, shown once.
    if crate::backends::codex::follows(&input.session_id) {
        return Err(Refusal::FollowedByDaemon);
    }
    let field = |name: &str| input.tool_input.get(name).and_then(Value::as_str);
    // The command Codex runs once allowed, whole and raw (rules match it).
    let command = match input.tool_name.as_str() {
        "Bash" => Some(
            field("command")
                .ok_or(Refusal::BashWithoutCommand)?
                .to_owned(),
        ),
        _ => None,
    };
    // Anything else Codex would act on is shown whole beside the command.
    let details = match &input.tool_input {
        Value::Object(map) => {
            let mut rest = map.clone();
            rest.remove("description");
            if command.is_some() {
                rest.remove("command");
            }
            (!rest.is_empty()).then(|| serde_json::to_string_pretty(&rest).unwrap_or_default())
        }
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let patterns = match &command {
        Some(command) => vec![command.clone()],
        None => field("command").map(str::to_owned).into_iter().collect(),
    };
    let asker = Asker::Codex;
    let title = match input.tool_name.as_str() {
        "Bash" => PermissionTitle::RunCommand {
            asker,
            reason: field("description").map(str::to_owned),
        },
        "NetworkAccess" => PermissionTitle::NetworkAccess { asker },
        tool => PermissionTitle::Tool {
            asker,
            tool: tool.to_owned(),
        },
    };
    Ok(Prompt {
        id: next_id(),
        session: input.session_id,
        directory: input.cwd,
        origin: Origin {
            tool_call: None,
            agent: Some("codex".into()),
            session_title: None,
            requester: None,
        },
        kind: Kind::Permission(Box::new(Permission {
            action: input.tool_name,
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

/// The decision in Codex's terms: `{}` decides nothing (Codex asks in its
/// own dialog).
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
    use super::super::request_prompt;
    use super::*;

    /// What Codex 0.169.0 sent for `touch /tmp/cx/project/made` (an
    /// escalated `exec_command`), captured from the real CLI.
    fn real_input() -> Value {
        json!({"session_id": "01a218ab-e49e-79b0-8518-1c089d7b93ff",
               "turn_id": "01a218ac-0179-70a1-afbf-cb62965b29ad",
               "transcript_path": "/h/sessions/rollout.jsonl",
               "cwd": "/tmp/cx/project", "hook_event_name": "PermissionRequest",
               "model": "mock-model", "permission_mode": "default", "tool_name": "Bash",
               "tool_input": {"command": "touch /tmp/cx/project/made",
                              "description": "Run the requested command"}})
    }

    fn parsed(input: Value) -> Result<Prompt, Refusal> {
        let line = json!({"agent": "codex", "input": input}).to_string();
        let (prompt, agent) = request_prompt(line.as_bytes(), &[])?;
        assert!(matches!(agent, Agent::Codex));
        Ok(prompt)
    }

    fn permission(prompt: &Prompt) -> &Permission {
        match &prompt.kind {
            Kind::Permission(permission) => permission,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_shell_request_shows_its_whole_command_and_offers_no_always() {
        let prompt = parsed(real_input()).unwrap();
        let shown = permission(&prompt);
        assert_eq!(shown.command.as_deref(), Some("touch /tmp/cx/project/made"));
        assert_eq!(shown.patterns, ["touch /tmp/cx/project/made"]);
        assert_eq!(
            shown.english_title(),
            "Codex asks to run a command: Run the requested command"
        );
        assert_eq!(shown.diff, None);
        let ids: Vec<&str> = shown.choices.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, [ALLOW_ONCE, REJECT]);
        assert_eq!(prompt.directory.as_deref(), Some("/tmp/cx/project"));
        assert_eq!(prompt.origin.agent.as_deref(), Some("codex"));

        // Whatever else Codex would act on is shown, not dropped.
        let mut more = real_input();
        more["tool_input"]["sandbox_permissions"] = json!("require_escalated");
        let prompt = parsed(more).unwrap();
        assert_eq!(
            permission(&prompt).diff.as_deref(),
            Some("{\n  \"sandbox_permissions\": \"require_escalated\"\n}")
        );

        let mut network = real_input();
        network["tool_name"] = json!("NetworkAccess");
        network["tool_input"] = json!({"command": "curl https://example.com"});
        let prompt = parsed(network).unwrap();
        let shown = permission(&prompt);
        assert_eq!(shown.command, None);
        assert_eq!(shown.patterns, ["curl https://example.com"]);
        assert_eq!(shown.english_title(), "Codex asks for network access");
    }

    #[test]
    fn only_allow_and_reject_decide_and_nothing_else_does() {
        let pick = |choice: &str| {
            Reply::Answer(Answer::Permission {
                choice: choice.into(),
            })
        };
        assert_eq!(decision(&pick(ALLOW_ONCE)), json!({"behavior": "allow"}));
        assert_eq!(
            decision(&pick(REJECT)),
            json!({"behavior": "deny", "message": DEFAULT_DENIAL})
        );
        assert_eq!(
            decision(&Reply::Reject {
                message: Some("use make".into())
            }),
            json!({"behavior": "deny", "message": "use make"})
        );
        assert_eq!(decision(&pick("allow-always")), json!({}));
        assert_eq!(decision(&pick("")), json!({}));
        assert_eq!(decision(&Reply::Cancel), json!({}));
    }

    #[test]
    fn other_events_and_incomplete_inputs_are_refused() {
        let mut other = real_input();
        other["hook_event_name"] = json!("PreToolUse");
        assert!(parsed(other).is_err());
        let mut no_command = real_input();
        no_command["tool_input"] = json!({"description": "x"});
        assert!(parsed(no_command).is_err());
        let mut no_session = real_input();
        no_session.as_object_mut().unwrap().remove("session_id");
        assert!(parsed(no_session).is_err());
        let mut long = real_input();
        long["session_id"] = json!("s".repeat(257));
        assert!(parsed(long).is_err());
    }
}
