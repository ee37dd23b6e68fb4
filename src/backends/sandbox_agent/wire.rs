//! What the agent sends over ACP, read into prompts and routes, and the
//! JSON-RPC results that answer it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Route, elicitation};
use crate::backends::shared::QuestionInfo;
use crate::prompt::{
    Answer, Choice, Effect, Kind, Origin, Permission, PermissionChoice, Prompt, Question, Reply,
    SessionTitle,
};

pub(super) const PERMISSION: &str = "session/request_permission";
pub(super) const QUESTION: &str = "_sandboxagent/session/request_question";
pub(super) use crate::backends::elicitation::MAX_VALUES;
pub(super) const ELICIT: &str = "elicitation/create";
pub(super) const ELICIT_COMPLETE: &str = "elicitation/complete";

#[derive(Deserialize)]
pub(super) struct PermissionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    options: Vec<PermissionOption>,
    #[serde(rename = "toolCall")]
    tool_call: Option<ToolCall>,
}

#[derive(Deserialize)]
pub(super) struct ToolCall {
    #[serde(rename = "toolCallId")]
    tool_call_id: Option<String>,
    title: Option<String>,
    kind: Option<String>,
    #[serde(rename = "rawInput")]
    raw_input: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct PermissionOption {
    #[serde(rename = "optionId")]
    option_id: String,
    name: String,
    kind: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct QuestionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    prompt: Option<String>,
    #[serde(default)]
    options: Vec<(String, String)>,
    questions: Option<Vec<QuestionInfo>>,
}

/// What one SSE message means.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum AcpEvent {
    Asked {
        prompt: Prompt,
        route: Route,
    },
    /// A request ask-lsp cannot show: `response` goes back at once (a
    /// decline, or an invalid-params error) and `reason` to the person.
    Refused {
        response: Value,
        reason: String,
        route: Route,
    },
    /// A link's out-of-band interaction finished.
    Completed {
        elicitation_id: String,
    },
    /// The agent cancelled its request with this JSON-RPC id.
    Cancelled {
        rpc_id: Value,
    },
    /// A tool call finished (`ok`) or failed: its requests are resolved.
    ToolCallEnded {
        session: String,
        tool_call: String,
        ok: bool,
    },
    /// `session_info_update`: the session's title changed (`None`: cleared).
    SessionTitled {
        session: String,
        title: Option<SessionTitle>,
    },
    /// A turn ended: requests made before it are resolved.
    TurnEnded,
    AgentExited,
    Other,
}

pub(super) fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What an option of one of ACP's four kinds does. Any other kind, or none,
/// is `None`: ask-lsp cannot say what choosing it would do (`allow_session`
/// allows), so such an option is never offered, picked or sent.
pub(super) fn effect(kind: Option<&str>) -> Option<Effect> {
    match kind? {
        "allow_once" => Some(Effect::AllowOnce),
        "allow_always" => Some(Effect::AllowAlways),
        "reject_once" => Some(Effect::RejectOnce),
        "reject_always" => Some(Effect::RejectAlways),
        _ => None,
    }
}

/// The one place a decision on a permission becomes what the agent
/// receives: the person's or a rule's choice as `selected`; a refusal as the
/// genuine `reject_once` option, else `cancelled` (never another option).
pub(super) fn permission_outcome(
    permission: &Permission,
    reply: &Reply,
) -> Result<Value, &'static str> {
    let selected = |id: &str| json!({"outcome": "selected", "optionId": id});
    let cancelled = json!({"outcome": "cancelled"});
    Ok(match reply {
        Reply::Answer(Answer::Permission { choice }) => {
            match permission.choices.iter().find(|c| &c.id == choice) {
                Some(choice) => selected(&choice.id),
                None => return Err("not one of the permission's choices"),
            }
        }
        Reply::Reject { .. } => permission
            .reject_choice()
            .map_or(cancelled, |choice| selected(&choice.id)),
        Reply::Cancel => cancelled,
        Reply::Answer(_) => return Err("not an answer to a permission"),
    })
}

/// Decodes one SSE `data` payload; `event_id` (the SSE id) keeps prompt ids
/// unique when a restarted agent reuses JSON-RPC ids.
pub(super) fn parse_message(data: &str, event_id: &str) -> Result<AcpEvent, serde_json::Error> {
    // Counted before anything is built: a 4 MiB event of tiny values (a
    // schema of thousands of properties) would build a tree of hundreds of MiB.
    if let Err(error) = elicitation::count_values(data, MAX_VALUES) {
        return over_bounds(data, error);
    }
    let mut message: Value = serde_json::from_str(data)?;
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str);
    let rpc_id = message.get("id").cloned();
    Ok(match (method, rpc_id) {
        (Some(PERMISSION), Some(rpc_id)) => {
            let p: PermissionParams = serde_json::from_value(params)?;
            let tool = p.tool_call;
            let command = tool
                .as_ref()
                .and_then(|t| t.raw_input.as_ref())
                .and_then(|input| input.get("command"))
                .and_then(|c| match c {
                    Value::String(s) => Some(s.clone()),
                    Value::Array(parts) => Some(
                        parts
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    _ => None,
                });
            let prompt = Prompt {
                id: format!("{}@{event_id}", id_text(&rpc_id)),
                session: p.session_id,
                directory: None,
                origin: Origin {
                    tool_call: tool.as_ref().and_then(|t| t.tool_call_id.clone()),
                    agent: None,
                    session_title: None,
                    requester: None,
                },
                kind: Kind::Permission(Box::new(Permission {
                    action: tool
                        .as_ref()
                        .and_then(|t| t.kind.clone())
                        .unwrap_or_else(|| "tool".into()),
                    title: tool.and_then(|t| t.title).unwrap_or_default().into(),
                    patterns: Vec::new(),
                    command,
                    diff: None,
                    raw_command: None,
                    raw_patterns: Vec::new(),
                    choices: p
                        .options
                        .into_iter()
                        .filter_map(|o| {
                            Some(PermissionChoice {
                                effect: effect(o.kind.as_deref())?,
                                id: o.option_id,
                                label: o.name.into(),
                            })
                        })
                        .collect(),
                })),
            };
            AcpEvent::Asked {
                route: Route {
                    rpc_id,
                    session: prompt.session.clone(),
                    tool_call: prompt.origin.tool_call.clone(),
                    answer_ids: None,
                    elicitation_id: None,
                },
                prompt,
            }
        }
        (Some(ELICIT), Some(rpc_id)) => elicit(
            &params,
            &elicitation::property_order(data),
            rpc_id,
            event_id,
        ),
        (Some(ELICIT_COMPLETE), None) => {
            match params.get("elicitationId").and_then(Value::as_str) {
                Some(id) => AcpEvent::Completed {
                    elicitation_id: id.to_owned(),
                },
                None => AcpEvent::Other,
            }
        }
        (Some(QUESTION), Some(rpc_id)) => {
            let p: QuestionParams = serde_json::from_value(params)?;
            let (questions, answer_ids) = match p.questions {
                Some(questions) if !questions.is_empty() => (
                    questions
                        .into_iter()
                        .map(QuestionInfo::into_question)
                        .collect(),
                    None,
                ),
                _ => {
                    let question = Question {
                        header: String::new(),
                        text: p.prompt.unwrap_or_default(),
                        options: p
                            .options
                            .iter()
                            .map(|(_, label)| Choice::new(label.clone(), String::new()))
                            .collect(),
                        multiple: false,
                        custom: false,
                        secret: false,
                        cannot_show: None,
                    };
                    (vec![question], Some(p.options))
                }
            };
            AcpEvent::Asked {
                prompt: Prompt {
                    id: format!("{}@{event_id}", id_text(&rpc_id)),
                    session: p.session_id.clone(),
                    directory: None,
                    origin: Origin::default(),
                    kind: Kind::Questions(questions),
                },
                route: Route {
                    rpc_id,
                    session: p.session_id,
                    tool_call: None,
                    answer_ids,
                    elicitation_id: None,
                },
            }
        }
        (Some("$/cancel_request"), None) => {
            match params.get("requestId").or_else(|| params.get("id")) {
                Some(rpc_id) => AcpEvent::Cancelled {
                    rpc_id: rpc_id.clone(),
                },
                None => AcpEvent::Other,
            }
        }
        (Some("session/update"), None) => tool_call_ended(&params)
            .or_else(|| session_titled(&params))
            .unwrap_or(AcpEvent::Other),
        (Some("_adapter/agent_exited"), _) => AcpEvent::AgentExited,
        (None, Some(_)) if message.pointer("/result/stopReason").is_some() => AcpEvent::TurnEnded,
        _ => AcpEvent::Other,
    })
}

/// A message over [`MAX_VALUES`], read for its method and id alone: an
/// elicitation is declined (its agent must not wait), anything else skipped.
pub(super) fn over_bounds(
    data: &str,
    error: serde_json::Error,
) -> Result<AcpEvent, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let head: Head = serde_json::from_str(data)?;
    let rpc_id = head
        .id
        .filter(|id| id.get().len() <= crate::prompt::limits::ID_LEN)
        .and_then(|id| serde_json::from_str::<Value>(id.get()).ok());
    match (head.method.as_deref(), rpc_id) {
        (Some(ELICIT), Some(rpc_id)) => Ok(AcpEvent::Refused {
            response: json!({"jsonrpc": "2.0", "id": rpc_id.clone(), "result": {"action": "decline"}}),
            reason: error.to_string(),
            // Too large to read its session or tool call from.
            route: Route {
                rpc_id,
                session: String::new(),
                tool_call: None,
                answer_ids: None,
                elicitation_id: None,
            },
        }),
        _ => Err(error),
    }
}

/// A `session_info_update` naming the session's title (ACP's RFD "Session
/// Info Update": `title` is a string, or null to clear it).
fn session_titled(params: &Value) -> Option<AcpEvent> {
    let update = params.get("update")?;
    if update.get("sessionUpdate")?.as_str()? != "session_info_update" {
        return None;
    }
    let title = match update.get("title")? {
        Value::String(title) => SessionTitle::new(title),
        Value::Null => None,
        _ => return None,
    };
    Some(AcpEvent::SessionTitled {
        session: params.get("sessionId")?.as_str()?.to_owned(),
        title,
    })
}

/// A `tool_call_update` that ends its tool call.
pub(super) fn tool_call_ended(params: &Value) -> Option<AcpEvent> {
    let update = params.get("update")?;
    if update.get("sessionUpdate")?.as_str()? != "tool_call_update" {
        return None;
    }
    let ok = match update.get("status")?.as_str()? {
        "completed" => true,
        "failed" => false,
        _ => return None,
    };
    Some(AcpEvent::ToolCallEnded {
        session: params.get("sessionId")?.as_str()?.to_owned(),
        tool_call: update.get("toolCallId")?.as_str()?.to_owned(),
        ok,
    })
}

/// An `elicitation/create` as a form prompt, or refused with its reason.
pub(super) fn elicit(params: &Value, order: &[String], rpc_id: Value, event_id: &str) -> AcpEvent {
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let refused = |member: &str, body: Value, reason: String| {
        let mut response = json!({"jsonrpc": "2.0", "id": rpc_id.clone()});
        response[member] = body;
        AcpEvent::Refused {
            response,
            reason,
            route: Route {
                rpc_id: rpc_id.clone(),
                session: text("sessionId").unwrap_or_default(),
                tool_call: text("toolCallId"),
                answer_ids: None,
                elicitation_id: text("elicitationId"),
            },
        }
    };
    let e = match elicitation::parse(params, order) {
        Ok(e) => e,
        Err(elicitation::Refusal::Decline(reason)) => {
            return refused("result", json!({"action": "decline"}), reason);
        }
        Err(elicitation::Refusal::InvalidParams(reason)) => {
            return refused(
                "error",
                json!({"code": -32602, "message": reason.clone()}),
                reason,
            );
        }
    };
    let prompt = Prompt {
        id: format!("{}@{event_id}", id_text(&rpc_id)),
        session: e.session,
        directory: None,
        origin: e.origin,
        kind: Kind::Form(Box::new(e.form)),
    };
    // Checked here as well as in the broker: a form over the bounds must be
    // declined, not left waiting.
    if let Err(error) = prompt.clone().into_checked() {
        return refused("result", json!({"action": "decline"}), error.to_string());
    }
    AcpEvent::Asked {
        route: Route {
            rpc_id,
            session: prompt.session.clone(),
            tool_call: prompt.origin.tool_call.clone(),
            answer_ids: None,
            elicitation_id: e.elicitation_id,
        },
        prompt,
    }
}

/// The JSON-RPC result that answers a request.
pub(super) fn result_for(route: &Route, prompt: &Prompt, reply: &Reply) -> Option<Value> {
    Some(match (&prompt.kind, reply) {
        (Kind::Permission(permission), reply) => {
            json!({"outcome": permission_outcome(permission, reply).ok()?})
        }
        (Kind::Questions(_), Reply::Answer(Answer::Questions(answers))) => {
            let answers: Vec<Vec<String>> = match &route.answer_ids {
                Some(ids) => answers
                    .iter()
                    .map(|answer| {
                        answer
                            .iter()
                            .map(|label| {
                                ids.iter()
                                    .find(|(_, l)| l == label)
                                    .map_or_else(|| label.clone(), |(id, _)| id.clone())
                            })
                            .collect()
                    })
                    .collect(),
                None => answers.clone(),
            };
            json!({"outcome": "selected", "status": "answered", "answers": answers,
                   "_meta": {"sandboxagent.dev": {"answers": answers}}})
        }
        (Kind::Questions(_), Reply::Reject { .. } | Reply::Cancel) => {
            json!({"outcome": "rejected", "status": "rejected"})
        }
        (Kind::Form(form), Reply::Answer(Answer::Form(values))) => {
            elicitation::accept(form, values)
        }
        (Kind::Form(_), Reply::Reject { .. }) => json!({"action": "decline"}),
        (Kind::Form(_), Reply::Cancel) => json!({"action": "cancel"}),
        _ => return None,
    })
}
