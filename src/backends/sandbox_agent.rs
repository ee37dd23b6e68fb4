//! The sandbox-agent backend: ACP over HTTP.
//!
//! `GET /v1/acp/{serverId}` is an SSE stream (`event: message`, numbered ids,
//! replay with `Last-Event-ID`) of everything the agent process sends. The
//! agent's requests that need a person become prompts:
//! `session/request_permission` (a permission over its options) and
//! `_sandboxagent/session/request_question` (questions, in either param
//! shape) and `elicitation/create` (a form, or a link; see [`elicitation`]).
//! The answer is a JSON-RPC response POSTed to `/v1/acp/{serverId}`.
//!
//! A request stops being pending when the agent cancels it
//! (`$/cancel_request`), exits (`_adapter/agent_exited`: JSON-RPC ids start
//! again with the next process), or its tool call ends (a `tool_call_update`
//! that is `completed` or `failed`, per session). A turn's end does not: its
//! result names no session, and another session's request may still be open.
//! A link's `elicitation/complete` finishes the flow: ask-lsp accepts the
//! request, as the agent expects after the flow. An elicitation ask-lsp
//! cannot show is declined at once, and the person is told why.
//!
//! The stream starts with the server's history, without its clients'
//! responses: what was asked is held until that burst is over (quiet for
//! [`SETTLE`]), then only what the history leaves open is shown, and nothing
//! is sent for it unless someone decides now (see docs/protocol.md).
//!
//! Over 500 lines: the ACP message mapping for three request kinds and their
//! replies, kept beside the routing and the replay's bookkeeping it needs; a
//! sixth is tests.

mod elicitation;

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Peer};
use super::opencode::QuestionInfo;
use super::stream::{Flow, Follow, follow};
use super::{Backend, BackendError, BackendEvent, EventSink, Source, Timing, id_within};
use crate::config::Secret;
use crate::prompt::{
    Answer, Choice, Effect, Kind, Origin, Permission, PermissionChoice, Prompt, Question, Reply,
    SessionTitle,
};
use crate::sse::SseEvent;

const PERMISSION: &str = "session/request_permission";
const QUESTION: &str = "_sandboxagent/session/request_question";
/// The most JSON values one agent message may hold: a form of 64 fields
/// with 500 options each fits.
const MAX_VALUES: usize = 128 << 10;
const ELICIT: &str = "elicitation/create";
const ELICIT_COMPLETE: &str = "elicitation/complete";
/// Open requests kept at most (each is a blocked agent turn; more is abuse).
const MAX_OPEN: usize = 1024;
/// Quiet that ends the replayed history at the start of the stream.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);
/// Quiet after connecting that means there is no history (sandbox-agent
/// itself always has some: the `initialize` result).
const NO_HISTORY: std::time::Duration = std::time::Duration::from_millis(1000);

pub(crate) struct SandboxAgent {
    endpoint: String,
    token: Option<Secret>,
    http: reqwest::Client,
    timing: Timing,
    peer: Peer,
    state: Mutex<State>,
    /// Signalled by each event while the history is replayed.
    activity: tokio::sync::Notify,
}

struct State {
    last_event_id: Option<String>,
    /// How to answer each open request, by prompt id, in arrival order.
    open: Vec<(String, Route)>,
    /// The stream is still replaying the server's history.
    replaying: bool,
    /// What the history asked, not yet shown, by prompt id.
    held: Vec<(String, Held)>,
    /// Each session's title, from `session_info_update` (shown and cut as
    /// read); the session's next prompts carry it.
    titles: lru::LruCache<String, SessionTitle>,
}

enum Held {
    Asked(Prompt),
    /// Unshowable: never declined from history (it may be answered already).
    Refused(String),
}

/// What a reply to one agent request needs.
#[derive(Debug, Clone, PartialEq)]
struct Route {
    rpc_id: Value,
    session: String,
    /// The tool call it belongs to, whose end resolves it.
    tool_call: Option<String>,
    /// For the `prompt` + `options: [[id, label]]` question shape, whose
    /// answers are ids.
    answer_ids: Option<Vec<(String, String)>>,
    /// A link's `elicitationId`, which `elicitation/complete` names.
    elicitation_id: Option<String>,
}

#[derive(Deserialize)]
struct PermissionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    options: Vec<PermissionOption>,
    #[serde(rename = "toolCall")]
    tool_call: Option<ToolCall>,
}

#[derive(Deserialize)]
struct ToolCall {
    #[serde(rename = "toolCallId")]
    tool_call_id: Option<String>,
    title: Option<String>,
    kind: Option<String>,
    #[serde(rename = "rawInput")]
    raw_input: Option<Value>,
}

#[derive(Deserialize)]
struct PermissionOption {
    #[serde(rename = "optionId")]
    option_id: String,
    name: String,
    kind: Option<String>,
}

#[derive(Deserialize)]
struct QuestionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    prompt: Option<String>,
    #[serde(default)]
    options: Vec<(String, String)>,
    questions: Option<Vec<QuestionInfo>>,
}

/// What one SSE message means.
#[derive(Debug, Clone, PartialEq)]
enum AcpEvent {
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

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What an option of one of ACP's four kinds does. Any other kind, or none,
/// is `None`: ask-lsp cannot say what choosing it would do (`allow_session`
/// allows), so such an option is never offered, picked or sent.
fn effect(kind: Option<&str>) -> Option<Effect> {
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
fn permission_outcome(permission: &Permission, reply: &Reply) -> Result<Value, &'static str> {
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
fn parse_message(data: &str, event_id: &str) -> Result<AcpEvent, serde_json::Error> {
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
                },
                kind: Kind::Permission(Box::new(Permission {
                    action: tool
                        .as_ref()
                        .and_then(|t| t.kind.clone())
                        .unwrap_or_else(|| "tool".into()),
                    title: tool.and_then(|t| t.title).unwrap_or_default(),
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
                                label: o.name,
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
fn over_bounds(data: &str, error: serde_json::Error) -> Result<AcpEvent, serde_json::Error> {
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
fn tool_call_ended(params: &Value) -> Option<AcpEvent> {
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
fn elicit(params: &Value, order: &[String], rpc_id: Value, event_id: &str) -> AcpEvent {
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
fn result_for(route: &Route, prompt: &Prompt, reply: &Reply) -> Option<Value> {
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

impl SandboxAgent {
    pub fn new(url: &str, server_id: &str, token: Option<Secret>, timing: Timing) -> Self {
        SandboxAgent {
            endpoint: format!("{url}/v1/acp/{server_id}"),
            token,
            http: http::client(&timing),
            timing,
            peer: Peer {
                label: format!("sandbox-agent at {url} ({server_id})"),
                expected: "a sandbox-agent server",
                start_hint: "is `sandbox-agent server` running there?",
                auth_hint: "check the token in the configuration",
            },
            state: Mutex::new(State {
                last_event_id: None,
                open: Vec::new(),
                replaying: true,
                held: Vec::new(),
                titles: lru::LruCache::new(std::num::NonZeroUsize::new(256).expect("non-zero")),
            }),
            activity: tokio::sync::Notify::new(),
        }
    }

    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => builder.bearer_auth(token.expose()),
            None => builder,
        }
    }

    async fn respond(&self, prompt: &Prompt, reply: &Reply) -> Result<(), BackendError> {
        let label = self.peer.label.clone();
        let route = {
            let state = self.state.lock().expect("not poisoned");
            state
                .open
                .iter()
                .find(|(id, _)| *id == prompt.id)
                .map(|(_, route)| route.clone())
        };
        let route = route.ok_or_else(|| BackendError::NotFound {
            server: label.clone(),
        })?;
        let result = result_for(&route, prompt, reply).ok_or_else(|| BackendError::Refused {
            server: label.clone(),
            reason: "the answer does not fit the request".into(),
        })?;
        // Taken out while it is sent: an `elicitation/complete` or a tool
        // call's end meanwhile cannot answer or resolve it a second time.
        let Some((_, route)) = self.take(&prompt.id) else {
            return Err(BackendError::NotFound { server: label });
        };
        let body = json!({"jsonrpc": "2.0", "id": route.rpc_id, "result": result});
        let failed = match self.post(&body).await {
            Ok(answered) => match answered.status {
                200..=299 => return Ok(()),
                404 => BackendError::NotFound { server: label },
                status => self.peer.server_error(status, String::new()),
            },
            Err(e) => e,
        };
        self.state
            .lock()
            .expect("not poisoned")
            .open
            .push((prompt.id.clone(), route));
        Err(failed)
    }

    fn take(&self, prompt_id: &str) -> Option<(String, Route)> {
        let mut state = self.state.lock().expect("not poisoned");
        let at = state.open.iter().position(|(id, _)| id == prompt_id)?;
        Some(state.open.remove(at))
    }

    /// Forgets the open requests `which` picks; returns the prompt ids of
    /// those already shown (held ones are dropped unseen).
    fn close_where(&self, which: impl Fn(&String, &Route) -> bool) -> Vec<String> {
        let mut state = self.state.lock().expect("not poisoned");
        let mut closed = Vec::new();
        state.open.retain(|(id, route)| {
            let close = which(id, route);
            if close {
                closed.push(id.clone());
            }
            !close
        });
        let was_held = |id: &String| state.held.iter().any(|(held, _)| held == id);
        let (unseen, shown): (Vec<String>, Vec<String>) = closed.into_iter().partition(was_held);
        state.held.retain(|(id, _)| !unseen.contains(id));
        shown
    }

    /// Posts one JSON-RPC message (a response to an agent request) to the
    /// server's ACP endpoint.
    async fn post(&self, message: &Value) -> Result<http::Answered, BackendError> {
        let request = self
            .authorized(self.http.post(&self.endpoint))
            .json(message);
        self.peer.exchange(&self.timing, request).await
    }

    /// Declines a request ask-lsp cannot show and tells the person why.
    async fn refuse(&self, response: Value, reason: String, sink: &EventSink) -> bool {
        let outcome = match self.post(&response).await {
            Ok(answered) if (200..300).contains(&answered.status) => "declined it".to_owned(),
            Ok(answered) => format!("could not decline it ({})", answered.status),
            Err(e) => format!("could not decline it ({})", e.for_log()),
        };
        sink.send(BackendEvent::Invalid {
            error: format!("an agent's form cannot be shown ({reason}); ask-lsp {outcome}"),
        })
        .is_ok()
    }

    /// Accepts a link whose flow the agent says is over (the spec's
    /// sequence: consent, then the flow, then `elicitation/complete`); the
    /// editor's prompt is withdrawn: nobody needs to act on it any more.
    async fn complete(&self, prompt_id: String, rpc_id: Value, sink: &EventSink) -> bool {
        let body = json!({"jsonrpc": "2.0", "id": rpc_id, "result": {"action": "accept"}});
        match self.post(&body).await {
            Ok(answered) if (200..300).contains(&answered.status) => {}
            Ok(answered) => tracing::warn!(
                "could not accept a completed link ({}); the agent may still wait",
                answered.status
            ),
            Err(e) => tracing::warn!(
                "could not accept a completed link ({}); the agent may still wait",
                e.for_log()
            ),
        }
        sink.send(BackendEvent::Withdrawn { id: prompt_id }).is_ok()
    }

    fn handle(&self, event: SseEvent, sink: &EventSink) -> Result<bool, Post> {
        let event_id = event.id.clone().unwrap_or_default();
        let replaying = {
            let mut state = self.state.lock().expect("not poisoned");
            if event.id.is_some() {
                state.last_event_id = event.id;
            }
            state.replaying
        };
        if replaying {
            self.activity.notify_one();
        }
        let parsed = match parse_message(&event.data, &event_id) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("skipped an undecodable ACP message: {e}");
                return Ok(true);
            }
        };
        let ended: Vec<BackendEvent> = match parsed {
            AcpEvent::Asked { mut prompt, route } => {
                // Not ours to keep (the broker refuses such ids): up to
                // 1024 open routes of 4 MiB ids each would be kept otherwise.
                if !id_within(&prompt.id) || !route.elicitation_id.as_deref().is_none_or(id_within)
                {
                    tracing::warn!(
                        "skipped an agent request whose id is over {} bytes",
                        crate::prompt::limits::ID_LEN
                    );
                    return Ok(true);
                }
                let mut state = self.state.lock().expect("not poisoned");
                if state.open.len() >= MAX_OPEN {
                    let (dropped, _) = state.open.remove(0);
                    state.held.retain(|(id, _)| *id != dropped);
                }
                state.open.push((prompt.id.clone(), route));
                prompt.origin.session_title = state.titles.get(&prompt.session).cloned();
                if state.replaying {
                    state.held.push((prompt.id.clone(), Held::Asked(prompt)));
                    return Ok(true);
                }
                drop(state);
                return Ok(sink.send(BackendEvent::Asked(prompt)).is_ok());
            }
            AcpEvent::Refused {
                response,
                reason,
                route,
            } => {
                let mut state = self.state.lock().expect("not poisoned");
                if !state.replaying {
                    return Err(Post::Decline { response, reason });
                }
                if state.open.len() < MAX_OPEN {
                    let id = format!("{}@{event_id}", id_text(&route.rpc_id));
                    state.open.push((id.clone(), route));
                    state.held.push((id, Held::Refused(reason)));
                }
                return Ok(true);
            }
            AcpEvent::Completed { elicitation_id } => {
                let mut state = self.state.lock().expect("not poisoned");
                let Some(at) = state.open.iter().position(|(_, route)| {
                    route.elicitation_id.as_deref() == Some(elicitation_id.as_str())
                }) else {
                    // Answered here already.
                    return Ok(true);
                };
                let (id, route) = state.open.remove(at);
                let unseen = state.held.iter().any(|(held, _)| *held == id);
                state.held.retain(|(held, _)| *held != id);
                // From the history: it may have been answered then.
                if replaying || unseen {
                    return Ok(true);
                }
                return Err(Post::Complete {
                    id,
                    rpc_id: route.rpc_id,
                });
            }
            AcpEvent::Cancelled { rpc_id } => {
                let prefix = format!("{}@", id_text(&rpc_id));
                withdrawn(self.close_where(|id, _| id.starts_with(&prefix)))
            }
            AcpEvent::SessionTitled { session, title } => {
                if id_within(&session) {
                    let mut state = self.state.lock().expect("not poisoned");
                    match title {
                        Some(title) => state.titles.put(session, title),
                        None => state.titles.pop(&session),
                    };
                }
                return Ok(true);
            }
            AcpEvent::ToolCallEnded {
                session,
                tool_call,
                ok,
            } => self
                .close_where(|_, route| {
                    route.session == session && route.tool_call.as_deref() == Some(&tool_call)
                })
                .into_iter()
                .map(|id| match ok {
                    true => BackendEvent::ResolvedElsewhere {
                        id,
                        rejected: false,
                    },
                    false => BackendEvent::Withdrawn { id },
                })
                .collect(),
            // Names no session; in the history it may end the turn of a
            // request without a tool call, answered then: not shown.
            AcpEvent::TurnEnded if replaying => {
                self.close_where(|_, route| route.tool_call.is_none());
                Vec::new()
            }
            AcpEvent::TurnEnded | AcpEvent::Other => return Ok(true),
            AcpEvent::AgentExited => withdrawn(self.close_where(|_, _| true)),
        };
        Ok(ended.into_iter().all(|event| sink.send(event).is_ok()))
    }

    /// Waits for the replayed history to be over, then lists what it left open.
    async fn settle(&self, sink: &EventSink) {
        // Connected (or the first event).
        self.activity.notified().await;
        let mut quiet = NO_HISTORY;
        while tokio::time::timeout(quiet, self.activity.notified())
            .await
            .is_ok()
        {
            quiet = SETTLE;
        }
        let mut state = self.state.lock().expect("not poisoned");
        state.replaying = false;
        let mut pending = Vec::new();
        for (id, held) in std::mem::take(&mut state.held) {
            match held {
                Held::Asked(prompt) => pending.push(prompt),
                Held::Refused(reason) => {
                    state.open.retain(|(open, _)| *open != id);
                    let _ = sink.send(BackendEvent::Invalid {
                        error: format!(
                            "an agent's form from before ask-lsp started cannot be shown ({reason}); \
                             ask-lsp did not decline it, since the server's history cannot say whether it was answered"
                        ),
                    });
                }
            }
        }
        // Under the lock: before any later event about them.
        let _ = sink.send(BackendEvent::Snapshot(pending.into()));
    }
}

/// What must be POSTed before the stream goes on.
enum Post {
    /// Refuse a request ask-lsp cannot show.
    Decline { response: Value, reason: String },
    /// Accept the link behind this prompt: its flow is over.
    Complete { id: String, rpc_id: Value },
}

fn withdrawn(ids: Vec<String>) -> Vec<BackendEvent> {
    ids.into_iter()
        .map(|id| BackendEvent::Withdrawn { id })
        .collect()
}

impl Follow for SandboxAgent {
    fn peer(&self) -> &Peer {
        &self.peer
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn subscribe(&self) -> reqwest::RequestBuilder {
        let mut request = self
            .authorized(self.http.get(&self.endpoint))
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(id) = &self.state.lock().expect("not poisoned").last_event_id {
            request = request.header("Last-Event-ID", id.as_str());
        }
        request
    }

    fn resync<'a>(&'a self, _sink: &'a EventSink) -> BoxFuture<'a, Result<(), String>> {
        // The stream replays from Last-Event-ID: nothing to list; the first
        // connection starts the wait for the end of the history.
        if self.state.lock().expect("not poisoned").replaying {
            self.activity.notify_one();
        }
        Box::pin(async { Ok(()) })
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow> {
        Box::pin(async move {
            Flow::while_open(match self.handle(event, sink) {
                Ok(go_on) => go_on,
                Err(Post::Decline { response, reason }) => {
                    self.refuse(response, reason, sink).await
                }
                Err(Post::Complete { id, rpc_id }) => self.complete(id, rpc_id, sink).await,
            })
        })
    }
}

impl Backend for SandboxAgent {
    fn source(&self) -> Source {
        Source {
            backend: "sandbox-agent",
            url: self.endpoint.clone(),
            generation: None,
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.respond(prompt, reply))
    }

    fn still_pending<'a>(&'a self, _prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        // ACP cannot be asked what the agent received.
        Box::pin(async { None })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let settling = self.clone();
            let settle_sink = sink.clone();
            futures_util::future::join(
                async move { settling.settle(&settle_sink).await },
                follow(self, sink),
            )
            .await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From captures/sandbox-agent/released-0.4.2/A_acp_sse_raw.txt.
    const CAPTURED: &str = r#"{"id":"q-1","jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"options":[["option-a","Option A"],["option-b","Option B"]],"prompt":"Which option?","questionId":"question-1","questions":[{"custom":false,"header":"Pick one","multiple":false,"options":[{"description":"option-a","label":"Option A"},{"description":"option-b","label":"Option B"}],"question":"Which option?"}],"sessionId":"mock-session-1"}}"#;

    fn asked(data: &str) -> (Prompt, Route) {
        match parse_message(data, "3").unwrap() {
            AcpEvent::Asked { prompt, route } => (prompt, route),
            other => panic!("{other:?}"),
        }
    }

    fn answer(labels: &[&str]) -> Reply {
        Reply::Answer(Answer::Questions(vec![
            labels.iter().map(|l| l.to_string()).collect(),
        ]))
    }

    const REJECT: Reply = Reply::Reject { message: None };

    #[test]
    fn a_message_over_the_value_bound_is_refused_before_it_is_built() {
        let values = vec![0; MAX_VALUES];
        let elicit = json!({"jsonrpc": "2.0", "id": 7, "method": ELICIT,
            "params": {"sessionId": "s", "mode": "form", "requestedSchema": {"properties": {}},
                "padding": values}})
        .to_string();
        match parse_message(&elicit, "1").unwrap() {
            AcpEvent::Refused {
                response, reason, ..
            } => {
                assert_eq!(
                    response,
                    json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}})
                );
                assert!(reason.contains("more than 131072 values"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let other =
            json!({"jsonrpc": "2.0", "id": 8, "method": PERMISSION, "params": values}).to_string();
        assert!(parse_message(&other, "1").is_err());
        // Within the bound, read as before.
        let small = json!({"jsonrpc": "2.0", "id": 9, "method": ELICIT,
            "params": {"sessionId": "s", "mode": "form", "requestedSchema": {"properties": {}},
                "padding": vec![0; MAX_VALUES - 100]}})
        .to_string();
        match parse_message(&small, "1").unwrap() {
            AcpEvent::Asked { .. } => {}
            AcpEvent::Refused { reason, .. } => assert!(!reason.contains("values"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert!(elicitation::count_values("[1, 2", 10).is_err(), "not JSON");
    }

    #[test]
    fn opencode_style_questions_are_used_as_they_are() {
        let (prompt, route) = asked(CAPTURED);
        assert_eq!(prompt.id, "q-1@3");
        assert_eq!(prompt.session, "mock-session-1");
        assert_eq!(prompt.origin, Origin::default());
        let Kind::Questions(questions) = &prompt.kind else {
            panic!()
        };
        assert_eq!(questions[0].header, "Pick one");
        assert_eq!(
            result_for(&route, &prompt, &answer(&["Option B"])),
            Some(
                json!({"outcome": "selected", "status": "answered", "answers": [["Option B"]],
                   "_meta": {"sandboxagent.dev": {"answers": [["Option B"]]}}})
            )
        );
        assert_eq!(
            result_for(&route, &prompt, &REJECT),
            Some(json!({"outcome": "rejected", "status": "rejected"}))
        );
    }

    #[test]
    fn prompt_and_option_pairs_are_answered_with_ids() {
        let data = r#"{"id":7,"jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"sessionId":"s","prompt":"Which option?","options":[["option-a","Option A"],["option-b","Option B"]]}}"#;
        let (prompt, route) = asked(data);
        assert_eq!(prompt.id, "7@3");
        assert_eq!(route.rpc_id, json!(7));
        assert_eq!(
            result_for(&route, &prompt, &answer(&["Option A"])).unwrap()["answers"],
            json!([["option-a"]])
        );
    }

    #[test]
    fn permission_requests_become_permissions() {
        let data = r#"{"id":"p-1","jsonrpc":"2.0","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","title":"Run `rm -rf build/`","kind":"execute","rawInput":{"command":["rm","-rf","build/"]}},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#;
        let (prompt, route) = asked(data);
        assert_eq!(prompt.origin.tool_call.as_deref(), Some("t"));
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.title, "Run `rm -rf build/`");
        assert_eq!(permission.action, "execute");
        assert_eq!(permission.command.as_deref(), Some("rm -rf build/"));
        assert_eq!(permission.choices[0].effect, Effect::AllowOnce);
        let allow = Reply::Answer(Answer::Permission {
            choice: "allow-once".into(),
        });
        assert_eq!(
            result_for(&route, &prompt, &allow),
            Some(json!({"outcome": {"outcome": "selected", "optionId": "allow-once"}}))
        );
        assert_eq!(
            result_for(&route, &prompt, &REJECT),
            Some(json!({"outcome": {"outcome": "selected", "optionId": "reject"}}))
        );
        assert_eq!(result_for(&route, &prompt, &answer(&["Allow once"])), None);
    }

    /// Every option kind an ACP server may send × every decision: what the
    /// agent receives. The option of that kind is listed first, alone or
    /// before a genuine `reject_once`.
    #[test]
    fn each_option_kind_and_decision_maps_to_one_outcome() {
        const SELECTED: &str = "selected";
        const CANCELLED: &str = "cancelled";
        const NOT_OFFERED: &str = "not offered";
        // kind, then: the person picks it; a refusal when it is alone; a
        // refusal beside `reject_once`; `cancel`.
        let table: [(Option<&str>, &str, &str, &str); 7] = [
            (Some("allow_once"), SELECTED, CANCELLED, "reject"),
            (Some("allow_always"), SELECTED, CANCELLED, "reject"),
            (Some("reject_once"), SELECTED, "hostile", "hostile"),
            (Some("reject_always"), SELECTED, CANCELLED, "reject"),
            (Some("allow_session"), NOT_OFFERED, CANCELLED, "reject"),
            (Some(""), NOT_OFFERED, CANCELLED, "reject"),
            (None, NOT_OFFERED, CANCELLED, "reject"),
        ];
        let outcome = |options: Value, reply: &Reply| {
            let data = json!({"id": 1, "jsonrpc": "2.0", "method": PERMISSION, "params": {
                "sessionId": "s", "options": options}});
            let (prompt, route) = asked(&data.to_string());
            let Kind::Permission(permission) = &prompt.kind else {
                panic!()
            };
            let offered = permission.choices.iter().any(|c| c.id == "hostile");
            let sent = result_for(&route, &prompt, reply).map(|r| r["outcome"].clone());
            (offered, sent)
        };
        let selected = |id: &str| Some(json!({"outcome": SELECTED, "optionId": id}));
        let cancelled = Some(json!({"outcome": CANCELLED}));
        let pick = Reply::Answer(Answer::Permission {
            choice: "hostile".into(),
        });
        for (kind, picked, alone, beside) in table {
            let mut hostile = json!({"optionId": "hostile", "name": "Reject"});
            if let Some(kind) = kind {
                hostile["kind"] = json!(kind);
            }
            let genuine = json!({"optionId": "reject", "name": "No", "kind": "reject_once"});
            let alone_list = json!([hostile.clone()]);
            let both = json!([hostile, genuine]);
            let (offered, sent) = outcome(alone_list.clone(), &pick);
            match picked {
                SELECTED => assert!(offered && sent == selected("hostile"), "{kind:?}"),
                _ => assert!(!offered && sent.is_none(), "{kind:?}: {sent:?}"),
            }
            let expect = |what: &str| match what {
                CANCELLED => cancelled.clone(),
                id => selected(id),
            };
            assert_eq!(
                outcome(alone_list.clone(), &REJECT).1,
                expect(alone),
                "{kind:?}"
            );
            assert_eq!(outcome(both.clone(), &REJECT).1, expect(beside), "{kind:?}");
            // Nobody chose: never an option, whatever is offered.
            assert_eq!(outcome(alone_list, &Reply::Cancel).1, cancelled, "{kind:?}");
            assert_eq!(outcome(both, &Reply::Cancel).1, cancelled, "{kind:?}");
        }
    }

    #[test]
    fn cancellation_exit_turn_end_and_tool_call_end() {
        let parse = |data: &str| parse_message(data, "9").unwrap();
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"q-1"}}"#),
            AcpEvent::Cancelled {
                rpc_id: json!("q-1")
            }
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"_adapter/agent_exited","params":{}}"#),
            AcpEvent::AgentExited
        );
        assert_eq!(
            parse(r#"{"id":11,"jsonrpc":"2.0","result":{"stopReason":"end_turn"}}"#),
            AcpEvent::TurnEnded
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#),
            AcpEvent::Other
        );
        // From Claude (claude-agent-acp 0.101.0) once AskUserQuestion is answered.
        assert_eq!(
            parse(
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed"}}}"#
            ),
            AcpEvent::ToolCallEnded {
                session: "s1".into(),
                tool_call: "toolu_1".into(),
                ok: true
            }
        );
        assert_eq!(
            parse(
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"in_progress"}}}"#
            ),
            AcpEvent::Other
        );
        assert!(parse_message("{", "9").is_err());
        assert!(
            parse_message(
                r#"{"id":1,"method":"session/request_permission","params":{}}"#,
                "9"
            )
            .is_err()
        );
    }
}
