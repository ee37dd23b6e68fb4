//! GitHub Copilot CLI's `permissionRequest` hook input (`@github/copilot`
//! 1.0.102, configured under the camelCase event name: camelCase fields,
//! its shell tool `bash`) as a prompt (docs/hook.md). Copilot runs it
//! before its own permission service; an answer `behavior: allow|deny`
//! (+ `message`) settles the request (`once`).

use serde::Deserialize;
use serde_json::Value;

use super::{Agent, Refusal, once};
use crate::prompt::{Asker, Prompt};

/// Copilot's shell tool.
const SHELL: &str = "bash";

/// Copilot's `permissionRequest` hook input (the fields used). It also
/// sends `timestamp` (ms) and `permissionSuggestions` (empty).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CopilotInput {
    hook_name: String,
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
}

/// The prompt Copilot's hook input asks.
pub(super) fn prompt(input: &str) -> Result<(Prompt, Agent), Refusal> {
    let input: CopilotInput =
        serde_json::from_str(input).map_err(|e| Refusal::NotCopilotInput {
            detail: e.to_string(),
        })?;
    if input.hook_name != "permissionRequest" {
        return Err(Refusal::OtherEvent {
            event: crate::text::for_display(&input.hook_name, 40).into_owned(),
        });
    }
    let prompt = once::prompt(once::Request {
        agent: "copilot",
        asker: Asker::Copilot,
        session: input.session_id,
        cwd: input.cwd,
        shell: input.tool_name == SHELL,
        tool: input.tool_name,
        input: input.tool_input,
    })?;
    Ok((prompt, Agent::Copilot))
}

#[cfg(test)]
mod tests {
    use super::super::request_prompt;
    use super::*;
    use crate::prompt::{Kind, Permission};
    use serde_json::json;

    /// What Copilot CLI 1.0.102 sent for `touch /tmp/c/project/made`,
    /// captured from the real CLI (its terminal UI).
    fn real_input() -> Value {
        json!({"hookName": "permissionRequest",
               "sessionId": "78365d4c-aac1-4c2d-b7c7-b32fd0f56bed",
               "timestamp": 1795909132975u64, "cwd": "/tmp/c/project", "toolName": "bash",
               "toolInput": {"command": "touch /tmp/c/project/made"},
               "permissionSuggestions": []})
    }

    fn parsed(input: Value) -> Result<Prompt, Refusal> {
        let line = json!({"agent": "copilot", "input": input}).to_string();
        let (prompt, agent) = request_prompt(line.as_bytes(), &[])?;
        assert!(matches!(agent, Agent::Copilot));
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
        assert_eq!(shown.command.as_deref(), Some("touch /tmp/c/project/made"));
        assert_eq!(shown.patterns, ["touch /tmp/c/project/made"]);
        assert_eq!(
            shown.english_title(),
            "GitHub Copilot CLI asks to run a command"
        );
        assert_eq!(shown.diff, None);
        let ids: Vec<&str> = shown.choices.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["allow-once", "reject"]);
        assert_eq!(prompt.session, "78365d4c-aac1-4c2d-b7c7-b32fd0f56bed");
        assert_eq!(prompt.directory.as_deref(), Some("/tmp/c/project"));
        assert_eq!(prompt.origin.agent.as_deref(), Some("copilot"));

        let mut edit = real_input();
        edit["toolName"] = json!("edit");
        edit["toolInput"] = json!({"path": "/tmp/c/project/a", "old_str": "x", "new_str": "y"});
        let prompt = parsed(edit).unwrap();
        let shown = permission(&prompt);
        assert_eq!(shown.command, None);
        assert_eq!(shown.patterns, ["/tmp/c/project/a"]);
        assert_eq!(shown.english_title(), "GitHub Copilot CLI asks to use edit");
        assert!(
            shown
                .diff
                .as_deref()
                .unwrap()
                .contains("\"new_str\": \"y\"")
        );
    }

    #[test]
    fn other_hooks_claude_shaped_and_incomplete_inputs_are_refused() {
        let mut other = real_input();
        other["hookName"] = json!("preToolUse");
        assert!(matches!(parsed(other), Err(Refusal::OtherEvent { .. })));
        // The PascalCase event's VS Code-style input is not what the
        // snippet configures.
        let snake = json!({"hook_event_name": "PermissionRequest", "session_id": "s",
                           "tool_name": "bash", "tool_input": {"command": "ls"}});
        assert!(matches!(
            parsed(snake),
            Err(Refusal::NotCopilotInput { .. })
        ));
        let mut no_command = real_input();
        no_command["toolInput"] = json!({});
        assert_eq!(parsed(no_command).unwrap_err(), Refusal::BashWithoutCommand);
    }
}
