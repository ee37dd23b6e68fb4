//! Claude Code's `PermissionRequest` hook input as a prompt, and the
//! person's reply as Claude's decision (docs/hook.md); its `Elicitation`
//! goes to `claude_form`.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use super::claude_edit::edit_diff;
use super::claude_suggestions::{self, Suggested};
use super::{Agent, Refusal, next_id, routable};
use crate::prompt::{Asker, Kind, Origin, Permission, PermissionTitle, Prompt, Reply};

/// Claude Code's `PermissionRequest` hook input (the fields used).
#[derive(Deserialize)]
struct ClaudeInput {
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    permission_suggestions: Option<Value>,
}

/// The prompt Claude's hook input asks, with the suggestions "always" gives
/// back.
/// `roots`: the workspace, where an edited file may be read for its diff.
pub(super) fn prompt(input: &str, roots: &[PathBuf]) -> Result<(Prompt, Agent), Refusal> {
    #[derive(Deserialize)]
    struct Event {
        #[serde(default)]
        hook_event_name: Option<String>,
    }
    if let Ok(Event {
        hook_event_name: Some(event),
    }) = serde_json::from_str(input)
        && event == "Elicitation"
    {
        return super::claude_form::prompt(input);
    }
    let input: ClaudeInput = serde_json::from_str(input).map_err(|e| Refusal::NotClaudeInput {
        detail: e.to_string(),
    })?;
    claude_prompt(input, roots)
}

fn claude_prompt(input: ClaudeInput, roots: &[PathBuf]) -> Result<(Prompt, Agent), Refusal> {
    if let Some(event) = &input.hook_event_name
        && event != "PermissionRequest"
    {
        return Err(Refusal::OtherEvent {
            event: crate::text::for_display(event, 40).into_owned(),
        });
    }
    routable(&input.session_id, input.cwd.as_deref())?;
    if input.tool_name == "AskUserQuestion" {
        return super::claude_question::prompt(input.session_id, input.cwd, input.tool_input);
    }
    let field = |name: &str| input.tool_input.get(name).and_then(Value::as_str);
    let command = match input.tool_name.as_str() {
        "Bash" => field("command").map(str::to_owned),
        _ => None,
    };
    // Everything else the tool would get is shown whole (a Bash call's
    // `dangerouslyDisableSandbox` too), beside the command and title.
    let edit = edit_diff(
        &input.tool_name,
        &input.tool_input,
        input.cwd.as_deref(),
        roots,
    );
    let details = match &input.tool_input {
        _ if edit.is_some() => edit.as_ref().map(|e| e.diff.clone()),
        Value::Object(map) => {
            let mut rest = map.clone();
            if command.is_some() {
                rest.remove("command");
                if field("description").is_some() {
                    rest.remove("description");
                }
            }
            (!rest.is_empty()).then(|| serde_json::to_string_pretty(&rest).unwrap_or_default())
        }
        _ => None,
    };
    let patterns = match &command {
        Some(command) => vec![command.clone()],
        None => ["file_path", "path", "url", "pattern"]
            .into_iter()
            .filter_map(field)
            .map(str::to_owned)
            .collect(),
    };
    let title = match (edit, field("description")) {
        (Some(edit), _) => PermissionTitle::EditFile {
            asker: Asker::ClaudeCode,
            path: edit.path,
            note: edit.note,
        },
        (None, Some(description)) => PermissionTitle::Action(description.to_owned().into()),
        (None, None) => PermissionTitle::Tool {
            asker: Asker::ClaudeCode,
            tool: input.tool_name.clone(),
        },
    };
    let (choices, suggested) = claude_suggestions::choices(input.permission_suggestions.as_ref());
    let prompt = Prompt {
        id: next_id(),
        session: input.session_id,
        directory: input.cwd,
        origin: Origin {
            tool_call: None,
            agent: Some("claude".into()),
            session_title: None,
            requester: None,
        },
        kind: Kind::Permission(Box::new(Permission {
            action: input.tool_name,
            title,
            patterns,
            command,
            diff: details,
            choices,
            raw_command: None,
            raw_patterns: Vec::new(),
        })),
    };
    Ok((prompt, Agent::Claude { suggested }))
}

/// The decision in Claude's terms ([`claude_suggestions::decision`]).
pub(super) fn decision(reply: &Reply, suggested: &Suggested) -> Value {
    claude_suggestions::decision(reply, suggested)
}

#[cfg(test)]
mod tests {
    use super::super::request_prompt;
    use super::*;
    use crate::prompt::{Answer, ChoiceLabel};
    use serde_json::json;

    /// The prompt and what its "always" choices store.
    fn claude_prompt(input: ClaudeInput) -> Result<(Prompt, Suggested), Refusal> {
        super::claude_prompt(input, &[]).map(|(prompt, agent)| match agent {
            Agent::Claude { suggested } => (prompt, suggested),
            other => panic!("{other:?}"),
        })
    }

    fn input(extra: Value) -> ClaudeInput {
        let mut base = json!({
            "hook_event_name": "PermissionRequest",
            "session_id": "s1",
            "cwd": "/p",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build/", "description": "Clean"},
        });
        base.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_bash_request_shows_its_whole_command_and_offers_always_only_with_suggestions() {
        let (prompt, suggested) = claude_prompt(input(json!({}))).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!("{prompt:?}")
        };
        assert_eq!(permission.command.as_deref(), Some("rm -rf build/"));
        assert_eq!(permission.english_title(), "Bash: Clean");
        assert_eq!(permission.diff, None);
        let mut unsandboxed = input(json!({}));
        unsandboxed.tool_input["dangerouslyDisableSandbox"] = json!(true);
        let (prompt, _) = claude_prompt(unsandboxed).unwrap();
        let Kind::Permission(shown) = &prompt.kind else {
            panic!()
        };
        assert_eq!(
            shown.diff.as_deref(),
            Some("{\n  \"dangerouslyDisableSandbox\": true\n}")
        );
        let ids: Vec<&str> = permission.choices.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["allow-once", "reject"]);
        assert!(suggested.is_empty());

        let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}],
                            "behavior": "allow", "destination": "localSettings"}]);
        let (prompt, suggested) =
            claude_prompt(input(json!({"permission_suggestions": rules}))).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        let always = &permission.choices[1];
        assert_eq!(always.id, "always-0");
        assert!(matches!(always.label, ChoiceLabel::Stores(_)));
        assert!(
            always.english_label().contains("\"ruleContent\":\"rm:*\""),
            "{}",
            always.english_label()
        );
        assert_eq!(
            decision(
                &Reply::Answer(Answer::Permission {
                    choice: "always-0".into()
                }),
                &suggested
            ),
            json!({"behavior": "allow", "updatedPermissions": rules})
        );
    }

    #[test]
    fn other_events_agents_and_bad_json_are_refused() {
        assert!(claude_prompt(input(json!({"hook_event_name": "PreToolUse"}))).is_err());
        // Without its questions, AskUserQuestion is left to Claude.
        assert!(claude_prompt(input(json!({"tool_name": "AskUserQuestion"}))).is_err());
        assert!(claude_prompt(input(json!({"session_id": "s".repeat(257)}))).is_err());
        assert!(claude_prompt(input(json!({"cwd": "/".repeat(2001)}))).is_err());
        assert!(request_prompt(b"{not json", &[]).is_err());
        assert!(request_prompt(br#"{"agent":"gemini","input":{}}"#, &[]).is_err());
        assert!(request_prompt(br#"{"agent":"claude","input":{"cwd":"/p"}}"#, &[]).is_err());
    }

    /// A Write names its file in the title and shows a unified diff; a file
    /// outside the project is not read and the title says so.
    #[test]
    fn a_write_is_a_diff_with_its_path_in_the_title() {
        let ok = br#"{"agent":"claude","input":{"tool_name":"Write","tool_input":{"file_path":"/nonexistent-dir/a","content":"x"}}}"#;
        let (prompt, _) = request_prompt(ok, &[]).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.patterns, ["/nonexistent-dir/a"]);
        assert_eq!(
            permission.diff.as_deref(),
            Some(
                "Index: /nonexistent-dir/a\n--- /nonexistent-dir/a\n+++ /nonexistent-dir/a\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"
            )
        );
        assert_eq!(
            permission.english_title(),
            "Claude Code asks to edit /nonexistent-dir/a (outside the project: only the new content is shown)"
        );
    }
}
