//! The sandbox-agent backend: ACP over HTTP.
//!
//! `GET /v1/acp/{serverId}` is an SSE stream (`event: message`, numbered ids,
//! replay with `Last-Event-ID`) of everything the agent process sends. The
//! agent's requests to its client that need a person become questions:
//! `session/request_permission` (single-select over its options) and
//! `_sandboxagent/session/request_question` (either param shape). The answer
//! is a JSON-RPC response POSTed to `/v1/acp/{serverId}`.
//!
//! A request stops being pending when the agent cancels it
//! (`$/cancel_request`), exits (`_adapter/agent_exited`), or ends its turn (a
//! result with a `stopReason`: the turn could not end with a request open).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::backend::{
    Backend, BackendError, BackendEvent, EventSink, EventStream, Incoming, Source, Timing, bounded,
    connect_message, http_client,
};
use crate::config::Secret;
use crate::model::{Answers, QuestionInfo, QuestionOption, QuestionRequest, ToolRef};

const PERMISSION: &str = "session/request_permission";
const QUESTION: &str = "_sandboxagent/session/request_question";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxAgentSpec {
    pub url: String,
    pub server_id: String,
    pub token: Option<Secret>,
}

pub struct SandboxAgent {
    spec: SandboxAgentSpec,
    http: reqwest::Client,
    timing: Timing,
}

/// How to answer one agent request, kept as the question's route.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Route {
    /// `session/request_permission`: `[optionId, name]` per option.
    Permission {
        rpc_id: Value,
        options: Vec<(String, String)>,
    },
    /// `_sandboxagent/session/request_question`; `ids` is set for the
    /// `prompt` + `options: [[id, label]]` shape, whose answers are ids.
    Question {
        rpc_id: Value,
        ids: Option<Vec<(String, String)>>,
    },
}

#[derive(Deserialize)]
struct PermissionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    options: Vec<PermissionOption>,
    #[serde(rename = "toolCall")]
    tool_call: Option<Value>,
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

/// What one SSE message means for the broker.
#[derive(Debug, Clone, PartialEq)]
pub enum AcpEvent {
    Asked {
        request: QuestionRequest,
        route: Route,
    },
    /// The agent cancelled its request with this JSON-RPC id.
    Cancelled {
        rpc_id: Value,
    },
    /// A turn ended: requests made before it are resolved.
    TurnEnded,
    AgentExited,
    Other,
}

/// Decodes one SSE `data` payload; `event_id` (the SSE id) keeps question
/// ids unique when a restarted agent reuses JSON-RPC ids.
pub fn parse_message(data: &str, event_id: &str) -> Result<AcpEvent, serde_json::Error> {
    let message: Value = serde_json::from_str(data)?;
    let method = message.get("method").and_then(Value::as_str);
    let rpc_id = message.get("id").cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let id_text = |id: &Value| match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(match (method, rpc_id) {
        (Some(PERMISSION), Some(rpc_id)) => {
            let p: PermissionParams = serde_json::from_value(params)?;
            let title = p
                .tool_call
                .as_ref()
                .and_then(|t| t.get("title"))
                .and_then(Value::as_str)
                .unwrap_or("The agent asks for permission");
            let request = QuestionRequest {
                id: format!("{}@{event_id}", id_text(&rpc_id)),
                session_id: p.session_id,
                questions: vec![QuestionInfo {
                    question: title.to_owned(),
                    header: "Permission".into(),
                    options: p
                        .options
                        .iter()
                        .map(|o| QuestionOption {
                            label: o.name.clone(),
                            description: o.kind.clone().unwrap_or_default(),
                        })
                        .collect(),
                    multiple: false,
                    custom: false,
                }],
                tool: Some(ToolRef {
                    message_id: String::new(),
                    call_id: id_text(&rpc_id),
                }),
            };
            let options = p
                .options
                .into_iter()
                .map(|o| (o.option_id, o.name))
                .collect();
            AcpEvent::Asked {
                request,
                route: Route::Permission { rpc_id, options },
            }
        }
        (Some(QUESTION), Some(rpc_id)) => {
            let p: QuestionParams = serde_json::from_value(params)?;
            let (questions, ids) = match p.questions {
                Some(questions) if !questions.is_empty() => (questions, None),
                _ => {
                    let question = QuestionInfo {
                        question: p.prompt.unwrap_or_default(),
                        header: String::new(),
                        options: p
                            .options
                            .iter()
                            .map(|(_, label)| QuestionOption {
                                label: label.clone(),
                                description: String::new(),
                            })
                            .collect(),
                        multiple: false,
                        custom: false,
                    };
                    (vec![question], Some(p.options))
                }
            };
            AcpEvent::Asked {
                request: QuestionRequest {
                    id: format!("{}@{event_id}", id_text(&rpc_id)),
                    session_id: p.session_id,
                    questions,
                    tool: Some(ToolRef {
                        message_id: String::new(),
                        call_id: id_text(&rpc_id),
                    }),
                },
                route: Route::Question { rpc_id, ids },
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
        (Some("_adapter/agent_exited"), _) => AcpEvent::AgentExited,
        (None, Some(_)) if message.pointer("/result/stopReason").is_some() => AcpEvent::TurnEnded,
        _ => AcpEvent::Other,
    })
}

/// The JSON-RPC result that answers (`Some`) or rejects (`None`) a request.
pub fn result_for(route: &Route, answers: Option<&Answers>) -> Value {
    match (route, answers) {
        (Route::Permission { options, .. }, Some(answers)) => {
            let label = answers.first().and_then(|a| a.first());
            let option_id = options
                .iter()
                .find(|(_, name)| Some(name) == label)
                .map(|(id, _)| id.clone());
            match option_id {
                Some(option_id) => {
                    json!({"outcome": {"outcome": "selected", "optionId": option_id}})
                }
                None => json!({"outcome": {"outcome": "cancelled"}}),
            }
        }
        (Route::Permission { .. }, None) => json!({"outcome": {"outcome": "cancelled"}}),
        (Route::Question { ids, .. }, Some(answers)) => {
            let answers: Answers = match ids {
                // The `prompt` + `options` shape is answered with option ids.
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
        (Route::Question { .. }, None) => json!({"outcome": "rejected", "status": "rejected"}),
    }
}

impl SandboxAgent {
    pub fn new(spec: SandboxAgentSpec, timing: Timing) -> Self {
        SandboxAgent {
            spec,
            http: http_client(&timing),
            timing,
        }
    }

    fn endpoint(&self) -> String {
        format!("{}/v1/acp/{}", self.spec.url, self.spec.server_id)
    }

    fn server(&self) -> String {
        format!(
            "sandbox-agent at {} ({})",
            self.spec.url, self.spec.server_id
        )
    }

    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.spec.token {
            Some(token) => builder.bearer_auth(token.expose()),
            None => builder,
        }
    }

    async fn respond(
        &self,
        route: Option<&str>,
        answers: Option<&Answers>,
    ) -> Result<(), BackendError> {
        let server = self.server();
        let route: Route = route
            .and_then(|r| serde_json::from_str(r).ok())
            .ok_or_else(|| BackendError::NotFound {
                server: server.clone(),
            })?;
        let rpc_id = match &route {
            Route::Permission { rpc_id, .. } | Route::Question { rpc_id, .. } => rpc_id.clone(),
        };
        let body = json!({"jsonrpc": "2.0", "id": rpc_id, "result": result_for(&route, answers)});
        let send = self
            .authorized(self.http.post(self.endpoint()))
            .json(&body)
            .send();
        let response = bounded(&server, &self.timing, send).await?;
        match response.status().as_u16() {
            200..=299 => Ok(()),
            300..=399 => Err(BackendError::Redirect {
                server,
                status: response.status().as_u16(),
            }),
            401 | 403 => Err(BackendError::Unauthorized { server }),
            404 => Err(BackendError::NotFound { server }),
            status => Err(BackendError::Server {
                server,
                status,
                message: String::new(),
            }),
        }
    }

    async fn event_loop(self: Arc<Self>, name: Arc<str>, sink: EventSink) {
        let emit = |event| sink.send((name.clone(), event)).is_ok();
        let mut last_event_id: Option<String> = None;
        // Open requests by JSON-RPC id, in arrival order.
        let mut open: Vec<String> = Vec::new();
        let mut backoff = self.timing.backoff_min;
        loop {
            let error = self
                .stream_once(&emit, &mut last_event_id, &mut open, &mut backoff)
                .await;
            if let Some(error) = error
                && !emit(BackendEvent::Disconnected { error })
            {
                return;
            }
            if sink.is_closed() {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(self.timing.backoff_max);
        }
    }

    /// One connection; `None` when it closed cleanly.
    async fn stream_once(
        &self,
        emit: &impl Fn(BackendEvent) -> bool,
        last_event_id: &mut Option<String>,
        open: &mut Vec<String>,
        backoff: &mut std::time::Duration,
    ) -> Option<String> {
        let mut request = self
            .authorized(self.http.get(self.endpoint()))
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(id) = last_event_id.as_deref() {
            request = request.header("Last-Event-ID", id);
        }
        let response = match tokio::time::timeout(self.timing.request, request.send()).await {
            Err(_) => {
                return Some(format!(
                    "{}: no answer within {:?}",
                    self.server(),
                    self.timing.request
                ));
            }
            Ok(Err(e)) => return Some(format!("{}: {}", self.server(), connect_message(&e))),
            Ok(Ok(response)) => response,
        };
        match response.status().as_u16() {
            200 => {}
            401 | 403 => {
                return Some(
                    BackendError::Unauthorized {
                        server: self.server(),
                    }
                    .to_string(),
                );
            }
            status => {
                return Some(format!(
                    "{}: the event stream answered {status}",
                    self.server()
                ));
            }
        }
        if !emit(BackendEvent::Connected) {
            return None;
        }
        *backoff = self.timing.backoff_min;
        let mut events = EventStream::new(response, self.timing.stall, self.server());
        loop {
            let batch = match events.next().await {
                Ok(Some(batch)) => batch,
                Ok(None) => return None,
                Err(error) => return Some(error),
            };
            for event in batch {
                let event_id = event.id.clone().unwrap_or_default();
                if event.id.is_some() {
                    *last_event_id = event.id.clone();
                }
                let parsed = match parse_message(&event.data, &event_id) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        tracing::warn!("skipped an undecodable ACP message: {e}");
                        continue;
                    }
                };
                let events: Vec<BackendEvent> = match parsed {
                    AcpEvent::Asked { request, route } => {
                        if let Some(tool) = &request.tool {
                            open.push(tool.call_id.clone());
                        }
                        let route = serde_json::to_string(&route).expect("serializable");
                        vec![BackendEvent::Asked(Incoming {
                            request,
                            route: Some(route),
                        })]
                    }
                    AcpEvent::Cancelled { rpc_id } => {
                        let call_id = match rpc_id {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        open.retain(|id| *id != call_id);
                        vec![BackendEvent::ToolEnded { call_id, ok: false }]
                    }
                    AcpEvent::TurnEnded | AcpEvent::AgentExited => open
                        .drain(..)
                        .map(|call_id| BackendEvent::ToolEnded { call_id, ok: false })
                        .collect(),
                    AcpEvent::Other => Vec::new(),
                };
                for event in events {
                    if !emit(event) {
                        return None;
                    }
                }
            }
        }
    }
}

impl Backend for SandboxAgent {
    fn source(&self, _route: Option<&str>) -> Source {
        Source {
            backend: "sandbox-agent",
            url: self.endpoint(),
            directory: None,
        }
    }

    fn reply<'a>(
        &'a self,
        _request: &'a QuestionRequest,
        route: Option<&'a str>,
        answers: &'a Answers,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.respond(route, Some(answers)))
    }

    fn reject<'a>(
        &'a self,
        _request: &'a QuestionRequest,
        route: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.respond(route, None))
    }

    fn run(self: Arc<Self>, name: Arc<str>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(self.event_loop(name, sink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From captures/sandbox-agent/released-0.4.2/A_acp_sse_raw.txt.
    const CAPTURED: &str = r#"{"id":"q-1","jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"options":[["option-a","Option A"],["option-b","Option B"]],"prompt":"Which option?","questionId":"question-1","questions":[{"custom":false,"header":"Pick one","multiple":false,"options":[{"description":"option-a","label":"Option A"},{"description":"option-b","label":"Option B"}],"question":"Which option?"}],"sessionId":"mock-session-1"}}"#;

    fn asked(data: &str) -> (QuestionRequest, Route) {
        match parse_message(data, "3").unwrap() {
            AcpEvent::Asked { request, route } => (request, route),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn opencode_style_questions_are_used_as_they_are() {
        let (request, route) = asked(CAPTURED);
        assert_eq!(request.id, "q-1@3");
        assert_eq!(request.session_id, "mock-session-1");
        assert_eq!(request.questions[0].header, "Pick one");
        assert_eq!(request.questions[0].options[1].label, "Option B");
        assert_eq!(
            result_for(&route, Some(&vec![vec!["Option B".into()]])),
            json!({"outcome": "selected", "status": "answered", "answers": [["Option B"]],
                   "_meta": {"sandboxagent.dev": {"answers": [["Option B"]]}}})
        );
        assert_eq!(
            result_for(&route, None),
            json!({"outcome": "rejected", "status": "rejected"})
        );
    }

    #[test]
    fn prompt_and_option_pairs_are_answered_with_ids() {
        let data = r#"{"id":7,"jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"sessionId":"s","prompt":"Which option?","options":[["option-a","Option A"],["option-b","Option B"]]}}"#;
        let (request, route) = asked(data);
        assert_eq!(request.id, "7@3");
        assert_eq!(request.questions[0].question, "Which option?");
        assert!(!request.questions[0].custom);
        assert_eq!(
            result_for(&route, Some(&vec![vec!["Option A".into()]])),
            json!({"outcome": "selected", "status": "answered", "answers": [["option-a"]],
                   "_meta": {"sandboxagent.dev": {"answers": [["option-a"]]}}})
        );
    }

    #[test]
    fn permission_requests_are_single_select_over_their_options() {
        let data = r#"{"id":"p-1","jsonrpc":"2.0","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","title":"Run `rm -rf build/`"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#;
        let (request, route) = asked(data);
        let question = &request.questions[0];
        assert_eq!(question.question, "Run `rm -rf build/`");
        assert_eq!(question.options[0].label, "Allow once");
        assert_eq!(question.options[0].description, "allow_once");
        assert!(!question.multiple && !question.custom);
        assert_eq!(
            result_for(&route, Some(&vec![vec!["Allow once".into()]])),
            json!({"outcome": {"outcome": "selected", "optionId": "allow-once"}})
        );
        assert_eq!(
            result_for(&route, None),
            json!({"outcome": {"outcome": "cancelled"}})
        );
    }

    #[test]
    fn cancellation_exit_and_turn_end() {
        assert_eq!(
            parse_message(
                r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"q-1"}}"#,
                "9"
            )
            .unwrap(),
            AcpEvent::Cancelled {
                rpc_id: json!("q-1")
            }
        );
        assert_eq!(
            parse_message(
                r#"{"jsonrpc":"2.0","method":"_adapter/agent_exited","params":{}}"#,
                "9"
            )
            .unwrap(),
            AcpEvent::AgentExited
        );
        assert_eq!(
            parse_message(
                r#"{"id":11,"jsonrpc":"2.0","result":{"stopReason":"end_turn"}}"#,
                "9"
            )
            .unwrap(),
            AcpEvent::TurnEnded
        );
        assert_eq!(
            parse_message(
                r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
                "9"
            )
            .unwrap(),
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
