//! Claude Code's `PermissionRequest` hook input as a prompt, and the
//! person's reply as Claude's decision (docs/hook.md).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ALLOW_ONCE, Agent, DEFAULT_DENIAL, REJECT, Refusal, choice, next_id, routable};
use crate::prompt::{
    Answer, Asker, ChoiceLabel, Effect, Kind, Origin, Permission, PermissionTitle, Prompt, Reply,
};

const ALLOW_ALWAYS: &str = "allow-always";

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
pub(super) fn prompt(input: &str) -> Result<(Prompt, Agent), Refusal> {
    let input: ClaudeInput = serde_json::from_str(input).map_err(|e| Refusal::NotClaudeInput {
        detail: e.to_string(),
    })?;
    claude_prompt(input)
}

fn claude_prompt(input: ClaudeInput) -> Result<(Prompt, Agent), Refusal> {
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
    let details = match &input.tool_input {
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
    let title = match field("description") {
        Some(description) => PermissionTitle::Action(description.to_owned()),
        None => PermissionTitle::Tool {
            asker: Asker::ClaudeCode,
            tool: input.tool_name.clone(),
        },
    };
    let suggestions = input
        .permission_suggestions
        .filter(|s| s.as_array().is_some_and(|a| !a.is_empty()));
    let mut choices = vec![choice(ALLOW_ONCE, ChoiceLabel::EFFECT, Effect::AllowOnce)];
    // Shown as Claude will store them; left out when too long to show whole.
    if let Some(suggested) = &suggestions {
        let rules = suggested.to_string();
        if rules.chars().count() <= crate::prompt::limits::LABEL_LEN {
            let label = ChoiceLabel::Adds { rules };
            choices.push(choice(ALLOW_ALWAYS, label, Effect::AllowAlways));
        }
    }
    choices.push(choice(REJECT, ChoiceLabel::EFFECT, Effect::RejectOnce));
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
    Ok((prompt, Agent::Claude { suggestions }))
}

/// The decision in Claude's terms: `{}` decides nothing (Claude asks in
/// its own dialog).
pub(super) fn decision(reply: &Reply, suggestions: Option<Value>) -> Value {
    match reply {
        Reply::Answer(Answer::Permission { choice }) => match choice.as_str() {
            ALLOW_ONCE => json!({"behavior": "allow"}),
            ALLOW_ALWAYS => match suggestions {
                Some(suggestions) => {
                    json!({"behavior": "allow", "updatedPermissions": suggestions})
                }
                None => json!({}),
            },
            REJECT => json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            _ => json!({}),
        },
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

    /// The prompt and the suggestions "always" gives back.
    fn claude_prompt(input: ClaudeInput) -> Result<(Prompt, Option<Value>), Refusal> {
        super::claude_prompt(input).map(|(prompt, agent)| match agent {
            Agent::Claude { suggestions } => (prompt, suggestions),
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
        let (prompt, suggestions) = claude_prompt(input(json!({}))).unwrap();
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
        assert_eq!(ids, [ALLOW_ONCE, REJECT]);
        assert_eq!(suggestions, None);

        let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}],
                            "behavior": "allow", "destination": "localSettings"}]);
        let (prompt, suggestions) =
            claude_prompt(input(json!({"permission_suggestions": rules}))).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.choices[1].id, ALLOW_ALWAYS);
        assert!(
            permission.choices[1]
                .english_label()
                .contains("\"ruleContent\":\"rm:*\"")
        );
        assert_eq!(
            decision(
                &Reply::Answer(Answer::Permission {
                    choice: ALLOW_ALWAYS.into()
                }),
                suggestions
            ),
            json!({"behavior": "allow", "updatedPermissions": rules})
        );
    }

    #[test]
    fn decisions_map_to_the_hook_and_nobody_choosing_decides_nothing() {
        let pick = |choice: &str| {
            Reply::Answer(Answer::Permission {
                choice: choice.into(),
            })
        };
        assert_eq!(
            decision(&pick(ALLOW_ONCE), None),
            json!({"behavior": "allow"})
        );
        assert_eq!(
            decision(&pick(REJECT), None),
            json!({"behavior": "deny", "message": DEFAULT_DENIAL})
        );
        assert_eq!(
            decision(
                &Reply::Reject {
                    message: Some("use make clean".into())
                },
                None
            ),
            json!({"behavior": "deny", "message": "use make clean"})
        );
        assert_eq!(decision(&Reply::Cancel, None), json!({}));
        // "always" without suggestions to store is no decision, not a plain allow.
        assert_eq!(decision(&pick(ALLOW_ALWAYS), None), json!({}));
    }

    #[test]
    fn other_events_agents_and_bad_json_are_refused() {
        assert!(claude_prompt(input(json!({"hook_event_name": "PreToolUse"}))).is_err());
        // Without its questions, AskUserQuestion is left to Claude.
        assert!(claude_prompt(input(json!({"tool_name": "AskUserQuestion"}))).is_err());
        assert!(claude_prompt(input(json!({"session_id": "s".repeat(257)}))).is_err());
        assert!(claude_prompt(input(json!({"cwd": "/".repeat(2001)}))).is_err());
        assert!(request_prompt(b"{not json").is_err());
        assert!(request_prompt(br#"{"agent":"gemini","input":{}}"#).is_err());
        assert!(request_prompt(br#"{"agent":"claude","input":{"cwd":"/p"}}"#).is_err());
        let ok = br#"{"agent":"claude","input":{"tool_name":"Write","tool_input":{"file_path":"/p/a","content":"x"}}}"#;
        let (prompt, _) = request_prompt(ok).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.patterns, ["/p/a"]);
        assert!(
            permission
                .diff
                .as_deref()
                .unwrap()
                .contains("\"content\": \"x\"")
        );
    }
}
