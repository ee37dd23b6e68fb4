//! ACP `elicitation/create` ↔ ask-lsp's form prompt.
//!
//! Shapes mirrored from agentclientprotocol/agent-client-protocol at
//! b7f0005493b98de32fabee3e9540e2b64da68535
//! (`agent-client-protocol-schema/src/v1/elicitation.rs`,
//! `docs/protocol/v1/elicitation.mdx`): params are a scope (`sessionId` with
//! an optional `toolCallId`, or `requestId`), `mode` (`form` with a
//! restricted JSON Schema `requestedSchema`, or `url` with `elicitationId`
//! and `url`) and `message`; the result is `{"action": "accept", "content"?}`,
//! `{"action": "decline"}` or `{"action": "cancel"}`. The schema crate is not
//! used: it pulls in `derive_more`, `serde_with` and `schemars`, and it
//! accepts what ask-lsp must refuse with a reason (`$ref`, nested objects).
//! MCP's legacy `enumNames` is read too. The schema → form mapping is
//! shared with Claude Code's `Elicitation` hook (`crate::backends::elicitation`).

use serde_json::Value;

use crate::backends::elicitation::{Schema, form};
pub(super) use crate::backends::elicitation::{accept, count_values};
use crate::prompt::{Form, Link, Origin};

/// A request ask-lsp can show, or why not.
pub(super) struct Elicitation {
    pub session: String,
    pub origin: Origin,
    pub form: Form,
    /// Url mode: the id `elicitation/complete` names.
    pub elicitation_id: Option<String>,
}

/// Why a request is refused: a decline the agent gets, with the reason shown
/// to the person; or, for a mode ACP does not define, JSON-RPC -32602.
#[derive(Debug, PartialEq)]
pub(super) enum Refusal {
    Decline(String),
    InvalidParams(String),
}

/// The property names of `params.requestedSchema.properties` in the order
/// the agent wrote them: fields are shown in the order received.
/// (sandbox-agent 0.4.2 itself forwards the request with sorted keys, so
/// through it that order is alphabetical.)
pub(super) fn property_order(data: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Message {
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestedSchema")]
        requested_schema: Schema,
    }
    serde_json::from_str::<Message>(data)
        .map(|m| m.params.requested_schema.order())
        .unwrap_or_default()
}

pub(super) fn parse(params: &Value, order: &[String]) -> Result<Elicitation, Refusal> {
    let params = params
        .as_object()
        .ok_or_else(|| Refusal::InvalidParams("params are not an object".into()))?;
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let (session, origin) = match (params.get("sessionId"), params.get("requestId")) {
        (Some(Value::String(session)), _) => (
            session.clone(),
            Origin {
                tool_call: text("toolCallId"),
                agent: None,
                session_title: None,
                requester: None,
            },
        ),
        // Request-scoped (outside a session): no session to name.
        (None, Some(_)) => (String::new(), Origin::default()),
        _ => {
            return Err(Refusal::InvalidParams(
                "no scope: neither sessionId nor requestId".into(),
            ));
        }
    };
    let message = text("message").unwrap_or_default();
    let (form, elicitation_id) = match params.get("mode").and_then(Value::as_str) {
        Some("form") => {
            let schema = params.get("requestedSchema").ok_or_else(|| {
                Refusal::InvalidParams("form mode without requestedSchema".into())
            })?;
            (
                form(message, schema, order).map_err(Refusal::Decline)?,
                None,
            )
        }
        Some("url") => {
            let (Some(url), Some(id)) = (text("url"), text("elicitationId")) else {
                return Err(Refusal::InvalidParams(
                    "url mode needs url and elicitationId".into(),
                ));
            };
            (
                Form {
                    message,
                    fields: Vec::new(),
                    url: Some(Link {
                        url,
                        domain: String::new(),
                    }),
                    cannot_show: None,
                },
                Some(id),
            )
        }
        Some(other) => {
            return Err(Refusal::InvalidParams(format!(
                "mode {:?} is not supported (form and url are)",
                // The agent reads it: English, whatever the person's language.
                crate::text::for_display(other, 40)
            )));
        }
        None => return Err(Refusal::InvalidParams("no mode".into())),
    };
    Ok(Elicitation {
        session,
        origin,
        form,
        elicitation_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_keep_the_agents_order() {
        let data = r#"{"params": {"sessionId": "s", "mode": "form", "message": "m", "requestedSchema":
            {"type": "object", "properties": {"zeta": {"type": "boolean"}, "alpha": {"type": "boolean"}}}}}"#;
        let order = property_order(data);
        assert_eq!(order, ["zeta", "alpha"]);
        let message: Value = serde_json::from_str(data).unwrap();
        let Ok(e) = parse(&message["params"], &order) else {
            panic!()
        };
        let ids: Vec<&str> = e.form.fields.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["zeta", "alpha"]);
    }

    #[test]
    fn scopes_and_modes() {
        let e = parse(
            &json!({"sessionId": "s", "toolCallId": "t", "mode": "url",
            "elicitationId": "e1", "url": "https://a.example/x", "message": "Sign in"}),
            &[],
        )
        .ok()
        .unwrap();
        assert_eq!(e.session, "s");
        assert_eq!(e.origin.tool_call.as_deref(), Some("t"));
        assert_eq!(e.elicitation_id.as_deref(), Some("e1"));
        let e = parse(
            &json!({"requestId": 12, "mode": "form", "message": "m",
            "requestedSchema": {"type": "object", "properties": {}}}),
            &[],
        )
        .ok()
        .unwrap();
        assert_eq!(e.session, "");
        assert_eq!(
            parse(
                &json!({"sessionId": "s", "mode": "voice", "message": "m"}),
                &[]
            )
            .err(),
            Some(Refusal::InvalidParams(
                "mode \"voice\" is not supported (form and url are)".into()
            ))
        );
        assert_eq!(
            parse(&json!({"mode": "form", "message": "m"}), &[]).err(),
            Some(Refusal::InvalidParams(
                "no scope: neither sessionId nor requestId".into()
            ))
        );
    }
}
