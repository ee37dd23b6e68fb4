//! Qwen Code's `PermissionRequest` hook input (`@qwen-code/qwen-code`
//! 0.24.4: Claude Code's shape, its shell tool `run_shell_command`) as a
//! prompt (docs/hook.md). Its decision is Claude's without "always"
//! (`once`).

use serde::Deserialize;
use serde_json::Value;

use super::{Agent, Refusal, once};
use crate::prompt::{Asker, Prompt};

/// Qwen Code's shell tool.
const SHELL: &str = "run_shell_command";

/// Qwen Code's `PermissionRequest` hook input (the fields used). It also
/// sends `transcript_path`, `timestamp`, `permission_mode`, `prompt_id`.
#[derive(Deserialize)]
struct QwenInput {
    hook_event_name: String,
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
}

/// The prompt Qwen Code's hook input asks.
pub(super) fn prompt(input: &str) -> Result<(Prompt, Agent), Refusal> {
    let input: QwenInput = serde_json::from_str(input).map_err(|e| Refusal::NotQwenInput {
        detail: e.to_string(),
    })?;
    if input.hook_event_name != "PermissionRequest" {
        return Err(Refusal::OtherEvent {
            event: crate::text::for_display(&input.hook_event_name, 40).into_owned(),
        });
    }
    let prompt = once::prompt(once::Request {
        agent: "qwen",
        asker: Asker::QwenCode,
        session: input.session_id,
        cwd: input.cwd,
        shell: input.tool_name == SHELL,
        tool: input.tool_name,
        input: input.tool_input,
    })?;
    Ok((prompt, Agent::Qwen))
}

#[cfg(test)]
mod tests {
    use super::super::request_prompt;
    use super::*;
    use crate::prompt::{Kind, Permission};
    use serde_json::json;

    /// What Qwen Code 0.24.4 sent for `touch /tmp/q/project/made`, captured
    /// from the real CLI (its terminal UI, `--approval-mode default`).
    fn real_input() -> Value {
        json!({"session_id": "60169830-f500-4ea4-8a89-2fd112b31213",
               "transcript_path": "/h/.qwen/projects/-tmp-q-project/chats/60169830.jsonl",
               "cwd": "/tmp/q/project", "hook_event_name": "PermissionRequest",
               "timestamp": "2026-11-28T23:36:20.269Z", "permission_mode": "default",
               "prompt_id": "60169830-f500-4ea4-8a89-2fd112b31213########0",
               "tool_name": "run_shell_command",
               "tool_input": {"command": "touch /tmp/q/project/made",
                              "description": "Run the requested command"}})
    }

    fn parsed(input: Value) -> Result<Prompt, Refusal> {
        let line = json!({"agent": "qwen", "input": input}).to_string();
        let (prompt, agent) = request_prompt(line.as_bytes(), &[])?;
        assert!(matches!(agent, Agent::Qwen));
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
        assert_eq!(shown.command.as_deref(), Some("touch /tmp/q/project/made"));
        assert_eq!(shown.patterns, ["touch /tmp/q/project/made"]);
        assert_eq!(
            shown.english_title(),
            "Qwen Code asks to run a command: Run the requested command"
        );
        assert_eq!(shown.diff, None);
        let ids: Vec<&str> = shown.choices.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["allow-once", "reject"]);
        assert_eq!(prompt.directory.as_deref(), Some("/tmp/q/project"));
        assert_eq!(prompt.origin.agent.as_deref(), Some("qwen"));

        // Whatever else the command would get is shown, not dropped.
        let mut background = real_input();
        background["tool_input"]["is_background"] = json!(true);
        let prompt = parsed(background).unwrap();
        assert_eq!(
            permission(&prompt).diff.as_deref(),
            Some("{\n  \"is_background\": true\n}")
        );

        let mut write = real_input();
        write["tool_name"] = json!("write_file");
        write["tool_input"] = json!({"file_path": "/tmp/q/project/a", "content": "x"});
        let prompt = parsed(write).unwrap();
        let shown = permission(&prompt);
        assert_eq!(shown.command, None);
        assert_eq!(shown.patterns, ["/tmp/q/project/a"]);
        assert_eq!(shown.english_title(), "Qwen Code asks to use write_file");
        assert!(
            shown
                .diff
                .as_deref()
                .unwrap()
                .contains("\"content\": \"x\"")
        );
    }

    #[test]
    fn other_events_and_incomplete_inputs_are_refused() {
        let mut other = real_input();
        other["hook_event_name"] = json!("PreToolUse");
        assert!(matches!(parsed(other), Err(Refusal::OtherEvent { .. })));
        let mut no_command = real_input();
        no_command["tool_input"] = json!({"description": "x"});
        assert_eq!(parsed(no_command).unwrap_err(), Refusal::BashWithoutCommand);
        let mut no_session = real_input();
        no_session.as_object_mut().unwrap().remove("session_id");
        assert!(matches!(
            parsed(no_session),
            Err(Refusal::NotQwenInput { .. })
        ));
        let mut long = real_input();
        long["session_id"] = json!("s".repeat(257));
        assert_eq!(parsed(long).unwrap_err(), Refusal::TooLong);
    }
}
