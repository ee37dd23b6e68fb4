//! Claude Code's `Elicitation` hook: an MCP server's form (its
//! `elicitation/create`) as ask-lsp's form prompt, mapped, bounded and
//! refused as ACP's forms are (`crate::backends::elicitation`), and the
//! person's reply as Claude's answer (docs/hook.md).
//!
//! Claude Code 2.1.332 runs this hook before it shows its own form and
//! waits for it (`cws` and the MCP elicitation handler in its bundle), so
//! `ask-lsp hook claude` hands it over only when opted in, within its own
//! bound (src/hook.rs). Only the person's submit accepts; a reject
//! declines; anything else decides nothing and Claude shows its own form.
//! A link (`mode: "url"`) is left to Claude's dialog, which opens it and
//! follows its completion: ask-lsp would only show it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Agent, Refusal, next_id, routable};
use crate::backends::elicitation::{self, Schema};
use crate::prompt::{Answer, Form, Kind, Origin, Prompt, Reply};

/// Claude Code's `Elicitation` hook input (the fields used).
#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    message: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    requested_schema: Option<Value>,
}

/// The form prompt an `Elicitation` input asks, or why it is left to
/// Claude's own form.
pub(super) fn prompt(input: &str) -> Result<(Prompt, Agent), Refusal> {
    // Counted before anything is built, as ACP's forms are: a schema of
    // thousands of tiny values would build a tree many times its size.
    elicitation::count_values(input, elicitation::MAX_VALUES).map_err(|e| {
        Refusal::FormNotShown {
            reason: e.to_string(),
        }
    })?;
    let parsed: Input = serde_json::from_str(input).map_err(|e| Refusal::NotClaudeInput {
        detail: e.to_string(),
    })?;
    routable(&parsed.session_id, parsed.cwd.as_deref())?;
    let not_shown = |reason: String| Refusal::FormNotShown { reason };
    match parsed.mode.as_deref() {
        Some("form") => {}
        Some("url") => return Err(Refusal::ElicitationUrl),
        other => {
            return Err(not_shown(format!(
                "mode {:?} is not form",
                other.map(|m| crate::text::for_display(m, 40))
            )));
        }
    }
    let schema = parsed
        .requested_schema
        .ok_or_else(|| not_shown("no requested_schema".into()))?;
    // The fields in the order the MCP server wrote them.
    #[derive(Deserialize)]
    struct Ordered {
        requested_schema: Schema,
    }
    let order = serde_json::from_str::<Ordered>(input)
        .map(|o| o.requested_schema.order())
        .unwrap_or_default();
    let form = elicitation::form(parsed.message, &schema, &order).map_err(not_shown)?;
    let prompt = Prompt {
        id: next_id(),
        session: parsed.session_id,
        directory: parsed.cwd,
        origin: Origin {
            tool_call: None,
            agent: Some("claude".into()),
            session_title: None,
            requester: None,
        },
        kind: Kind::Form(Box::new(form.clone())),
    }
    // Over a bound (text lengths, options): Claude's own form shows it.
    .into_checked()
    .map_err(|e| not_shown(e.to_string()))?;
    Ok((prompt, Agent::ClaudeForm { form }))
}

/// The answer in Claude's terms (what src/hook.rs turns into its hook
/// output): the person's submit is `accept` with the content typed as the
/// schema says, a reject `decline`; anything else (a timeout's or a
/// policy's cancel) `{}`, no decision.
pub(super) fn decision(reply: &Reply, form: &Form) -> Value {
    match reply {
        Reply::Answer(Answer::Form(values)) => elicitation::accept(form, values),
        Reply::Reject { .. } => json!({"action": "decline"}),
        Reply::Answer(_) | Reply::Cancel => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{FieldKind, FieldValue, FormValues};

    /// Claude's input as sent: the schema's properties in the server's
    /// order (not sorted, as `json!` would).
    const SCHEMA: &str = r#"{"type": "object", "required": ["target"], "properties": {
        "target": {"type": "string", "enum": ["staging", "prod"], "title": "Target"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9}}}"#;

    fn input(extra: Value) -> String {
        let mut base = json!({
            "session_id": "s1", "transcript_path": "/t", "cwd": "/p", "permission_mode": "default",
            "hook_event_name": "Elicitation", "mcp_server_name": "deploy",
            "message": "Where should it deploy?", "mode": "form", "elicitation_id": null,
        });
        base.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let base = base.to_string();
        match extra.get("requested_schema") {
            Some(_) => base,
            None => format!(
                "{},\"requested_schema\":{SCHEMA}}}",
                &base[..base.len() - 1]
            ),
        }
    }

    /// Claude's input becomes the form ACP's mapping makes, fields in the
    /// server's order, and each reply its answer.
    #[test]
    fn a_form_is_asked_as_acps_and_answered_as_claude_expects() {
        let (prompt, agent) = prompt(&input(json!({}))).unwrap();
        assert_eq!(
            (prompt.session.as_str(), prompt.directory.as_deref()),
            ("s1", Some("/p"))
        );
        let Kind::Form(form) = &prompt.kind else {
            panic!("{prompt:?}")
        };
        let ids: Vec<&str> = form.fields.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["target", "replicas"], "the server's order");
        let order = ["target".to_owned(), "replicas".to_owned()];
        let schema = serde_json::from_str(SCHEMA).unwrap();
        let acp = elicitation::form("Where should it deploy?".into(), &schema, &order).unwrap();
        let acp = Prompt {
            kind: Kind::Form(Box::new(acp)),
            ..prompt.clone()
        }
        .into_checked()
        .unwrap();
        assert_eq!(prompt.kind, acp.kind, "the form ACP's mapping makes");
        assert!(matches!(form.fields[0].kind, FieldKind::Choice { .. }));
        let Agent::ClaudeForm { form } = agent else {
            panic!("{agent:?}")
        };
        let values: FormValues = [
            ("target".to_owned(), FieldValue::Choice("prod".into())),
            ("replicas".to_owned(), FieldValue::Number(3.0)),
        ]
        .into_iter()
        .collect();
        let table = [
            (
                Reply::Answer(Answer::Form(values)),
                json!({"action": "accept", "content": {"target": "prod", "replicas": 3}}),
            ),
            (
                Reply::Reject {
                    message: Some("not now".into()),
                },
                json!({"action": "decline"}),
            ),
            (
                Reply::Reject { message: None },
                json!({"action": "decline"}),
            ),
            (Reply::Cancel, json!({})),
            (
                Reply::Answer(Answer::Permission {
                    choice: "allow-once".into(),
                }),
                json!({}),
            ),
        ];
        for (reply, expected) in table {
            assert_eq!(decision(&reply, &form), expected, "{reply:?}");
        }
    }

    /// What ACP declines, and a link, are left to Claude's own form.
    #[test]
    fn links_and_forms_ask_lsp_cannot_show_are_left_to_claude() {
        let refused = |extra: Value| prompt(&input(extra)).err();
        assert_eq!(
            refused(
                json!({"mode": "url", "url": "https://example.com/\u{202e}x", "elicitation_id": "e1"})
            ),
            Some(Refusal::ElicitationUrl)
        );
        assert!(matches!(
            refused(json!({"requested_schema": {"type": "object", "properties": {"a": {"type": "object"}}}})),
            Some(Refusal::FormNotShown { reason }) if reason.contains("nested object")
        ));
        let many: serde_json::Map<String, Value> = (0..=crate::prompt::limits::FIELDS)
            .map(|i| (format!("f{i}"), json!({"type": "boolean"})))
            .collect();
        assert!(matches!(
            refused(json!({"requested_schema": {"type": "object", "properties": many}})),
            Some(Refusal::FormNotShown { .. })
        ));
        let values = vec![0; elicitation::MAX_VALUES];
        assert!(matches!(
            refused(json!({"requested_schema": {"type": "object", "properties": {}, "x": values}})),
            Some(Refusal::FormNotShown { reason }) if reason.contains("values")
        ));
        assert!(matches!(
            refused(json!({"mode": "voice"})),
            Some(Refusal::FormNotShown { .. })
        ));
        assert!(matches!(
            refused(json!({"requested_schema": null})),
            Some(Refusal::FormNotShown { .. })
        ));
        assert_eq!(
            refused(json!({"session_id": "s".repeat(300)})),
            Some(Refusal::TooLong)
        );
    }
}
