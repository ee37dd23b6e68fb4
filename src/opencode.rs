//! The OpenCode backend: HTTP + SSE against `opencode serve`.
//!
//! Event shapes follow the real 1.18.33 server: `question.asked` carries the
//! whole request; the `question` tool part goes `pending → running →
//! completed | error`; `question.replied` / `question.rejected` follow an
//! answer; an abort sends `session.error` + `session.idle` but leaves the
//! question listed by `GET /question`. The stream has no replay, so every
//! (re)connect is followed by a resync from `GET /question`.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use lru::LruCache;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::backend::{
    Backend, BackendError, BackendEvent, EventSink, EventStream, Incoming, Source, Timing, bounded,
    connect_message, http_client,
};
use crate::config::ServerSpec;
use crate::model::{Answers, QuestionRequest};

pub struct OpenCode {
    spec: ServerSpec,
    http: reqwest::Client,
    timing: Timing,
    /// Directories seen on `/global/event`, resynced one by one.
    directories: Mutex<LruCache<String, ()>>,
}

/// An OpenCode event, reduced to what matters for questions.
#[derive(Debug, Clone, PartialEq)]
pub enum OcEvent {
    Connected,
    Heartbeat,
    Asked(QuestionRequest),
    Replied { request_id: String },
    Rejected { request_id: String },
    ToolRunning { call_id: String },
    ToolEnded { call_id: String, ok: bool },
    SessionEnded { session_id: String },
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The `/global/event` wrapper's directory.
    pub directory: Option<String>,
    pub event: OcEvent,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    properties: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GlobalEnvelope<'a> {
    directory: Option<String>,
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct RequestRef {
    #[serde(rename = "requestID")]
    request_id: String,
}

#[derive(Deserialize)]
struct SessionRef {
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct PartUpdated {
    part: ToolPart,
}

#[derive(Deserialize)]
struct ToolPart {
    #[serde(rename = "type")]
    kind: String,
    tool: Option<String>,
    #[serde(rename = "callID")]
    call_id: Option<String>,
    state: Option<ToolState>,
}

#[derive(Deserialize)]
struct ToolState {
    status: String,
}

/// Every event ask-lsp acts on has one of these in its text. Streamed-token
/// events (nearly all of a busy stream) have none, and are skipped without
/// being parsed.
const RELEVANT: [&str; 3] = ["question", "session.", "server."];

fn relevant(data: &str) -> bool {
    use std::sync::LazyLock;
    static FINDERS: LazyLock<[memchr::memmem::Finder<'static>; 3]> =
        LazyLock::new(|| RELEVANT.map(memchr::memmem::Finder::new));
    FINDERS.iter().any(|f| f.find(data.as_bytes()).is_some())
}

/// Decodes one SSE `data` payload from `/event` (or `/global/event` when
/// `global`). Events of no interest are `Other` (and not parsed: see
/// [`RELEVANT`]); a relevant-looking event with a broken body is an error.
pub fn parse_event(data: &str, global: bool) -> Result<Parsed, serde_json::Error> {
    if !relevant(data) {
        return Ok(Parsed {
            directory: None,
            event: OcEvent::Other,
        });
    }
    let (directory, payload) = if global {
        let wrapper: GlobalEnvelope = serde_json::from_str(data)?;
        (wrapper.directory, wrapper.payload.get())
    } else {
        (None, data)
    };
    let envelope: Envelope = serde_json::from_str(payload)?;
    let props = || envelope.properties.map_or("null", RawValue::get);
    let event = match envelope.kind {
        "server.heartbeat" => OcEvent::Heartbeat,
        "server.connected" => OcEvent::Connected,
        "question.asked" => OcEvent::Asked(serde_json::from_str(props())?),
        "question.replied" => OcEvent::Replied {
            request_id: serde_json::from_str::<RequestRef>(props())?.request_id,
        },
        "question.rejected" => OcEvent::Rejected {
            request_id: serde_json::from_str::<RequestRef>(props())?.request_id,
        },
        // The hot path: one per streamed token. Only question tool parts matter.
        "message.part.updated" if props().contains("\"question\"") => {
            let PartUpdated { part } = serde_json::from_str(props())?;
            match (
                part.kind.as_str(),
                part.tool.as_deref(),
                part.call_id,
                part.state,
            ) {
                ("tool", Some("question"), Some(call_id), Some(state)) => {
                    match state.status.as_str() {
                        "running" => OcEvent::ToolRunning { call_id },
                        "completed" => OcEvent::ToolEnded { call_id, ok: true },
                        "error" => OcEvent::ToolEnded { call_id, ok: false },
                        _ => OcEvent::Other,
                    }
                }
                _ => OcEvent::Other,
            }
        }
        "session.error" | "session.idle" => {
            match serde_json::from_str::<SessionRef>(props())?.session_id {
                Some(session_id) => OcEvent::SessionEnded { session_id },
                None => OcEvent::Other,
            }
        }
        _ => OcEvent::Other,
    };
    Ok(Parsed { directory, event })
}

enum StreamEnd {
    Closed,
    Failed(String),
}

impl OpenCode {
    pub fn new(spec: ServerSpec, timing: Timing) -> Self {
        OpenCode {
            spec,
            http: http_client(&timing),
            timing,
            directories: Mutex::new(LruCache::new(NonZeroUsize::new(64).expect("non-zero"))),
        }
    }

    fn server(&self) -> String {
        format!("opencode at {}", self.spec.url)
    }

    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        directory: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(method, format!("{}{}", self.spec.url, path));
        if let Some(dir) = directory.or(self.spec.directory.as_deref()) {
            builder = builder.query(&[("directory", dir)]);
        }
        if let Some(password) = &self.spec.password {
            builder = builder.basic_auth(&self.spec.username, Some(password.expose()));
        }
        builder
    }

    /// Sends a request whose answer must be JSON, mapping failures to clear errors.
    async fn call(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<serde_json::Value, BackendError> {
        let server = self.server();
        let exchange = async {
            let response = builder.send().await?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, content_type, body))
        };
        let (status, content_type, body) = bounded(&server, &self.timing, exchange).await?;
        let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let message = || {
            json.as_ref()
                .and_then(|j| {
                    j.pointer("/data/message")
                        .or_else(|| j.get("message"))
                        .and_then(|m| m.as_str())
                })
                .unwrap_or("")
                .to_owned()
        };
        match status {
            401 => Err(BackendError::Unauthorized { server }),
            300..=399 => Err(BackendError::Redirect { server, status }),
            404 if json.is_some() => Err(BackendError::NotFound { server }),
            400 => Err(BackendError::BadRequest {
                server,
                message: message(),
            }),
            _ if json.is_none() => Err(BackendError::NotJson {
                server,
                status,
                kind: if content_type.contains("html") {
                    "an HTML page".into()
                } else {
                    format!("{:?}", content_type)
                },
            }),
            200..=299 => Ok(json.expect("checked above")),
            _ => Err(BackendError::Server {
                server,
                status,
                message: message(),
            }),
        }
    }

    /// `GET /question` for one directory (or the server's default).
    async fn list(&self, directory: Option<&str>) -> Result<Vec<Incoming>, BackendError> {
        let value = self
            .call(self.request(reqwest::Method::GET, "/question", directory))
            .await?;
        let serde_json::Value::Array(items) = value else {
            return Err(BackendError::NotJson {
                server: self.server(),
                status: 200,
                kind: "something other than a list".into(),
            });
        };
        let route = directory.map(str::to_owned);
        Ok(items
            .into_iter()
            .filter_map(|item| match serde_json::from_value(item) {
                Ok(request) => Some(Incoming {
                    request,
                    route: route.clone(),
                }),
                Err(e) => {
                    tracing::warn!(server = %self.spec.name, "skipping a listed question: {e}");
                    None
                }
            })
            .collect())
    }

    /// Everything pending: the configured directory, or (following
    /// `/global/event`) the default instance plus every directory seen.
    async fn snapshot(&self) -> Result<Vec<Incoming>, BackendError> {
        if self.spec.directory.is_some() {
            return self.list(None).await;
        }
        let seen: Vec<String> = {
            let dirs = self.directories.lock().expect("not poisoned");
            dirs.iter().map(|(d, _)| d.clone()).collect()
        };
        let mut all = self.list(None).await?;
        for dir in seen {
            for incoming in self.list(Some(&dir)).await? {
                if !all.iter().any(|i| i.request.id == incoming.request.id) {
                    all.push(incoming);
                }
            }
        }
        Ok(all)
    }

    fn global(&self) -> bool {
        self.spec.directory.is_none()
    }

    async fn event_loop(self: Arc<Self>, name: Arc<str>, sink: EventSink) {
        let emit = |event| sink.send((name.clone(), event)).is_ok();
        let mut backoff = self.timing.backoff_min;
        loop {
            match self.stream_once(&emit).await {
                // A clean close is worth a warning only if reconnecting fails.
                StreamEnd::Closed => {
                    backoff = self.timing.backoff_min;
                    tracing::info!(server = %name, "event stream closed; reconnecting");
                }
                StreamEnd::Failed(error) => {
                    if !emit(BackendEvent::Disconnected {
                        error: error.clone(),
                    }) {
                        return;
                    }
                    tracing::info!(server = %name, "event stream down ({error}); retrying in {backoff:?}");
                }
            }
            if sink.is_closed() {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(self.timing.backoff_max);
        }
    }

    /// One connection: subscribe, resync, then follow events until the
    /// stream ends or stalls.
    async fn stream_once(&self, emit: &impl Fn(BackendEvent) -> bool) -> StreamEnd {
        let path = if self.global() {
            "/global/event"
        } else {
            "/event"
        };
        let response = match tokio::time::timeout(
            self.timing.request,
            self.request(reqwest::Method::GET, path, None)
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .send(),
        )
        .await
        {
            Err(_) => {
                return StreamEnd::Failed(format!(
                    "{}: no answer to {path} within {:?}",
                    self.server(),
                    self.timing.request
                ));
            }
            Ok(Err(e)) => {
                return StreamEnd::Failed(format!("{}: {}", self.server(), connect_message(&e)));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if status == 401 {
            return StreamEnd::Failed(
                BackendError::Unauthorized {
                    server: self.server(),
                }
                .to_string(),
            );
        }
        if status != 200 || !is_sse {
            return StreamEnd::Failed(format!(
                "{}: {path} answered {status} without an event stream: is this an OpenCode server?",
                self.server()
            ));
        }
        if !emit(BackendEvent::Connected) {
            return StreamEnd::Closed;
        }
        // Subscribed first, then listed: nothing falls in between.
        match self.snapshot().await {
            Ok(all) => {
                for incoming in &all {
                    self.remember_directory(incoming.route.as_deref());
                }
                if !emit(BackendEvent::Snapshot(all)) {
                    return StreamEnd::Closed;
                }
            }
            Err(e) => return StreamEnd::Failed(e.to_string()),
        }
        let mut seen_calls: LruCache<String, ()> =
            LruCache::new(NonZeroUsize::new(1024).expect("non-zero"));
        let mut events = EventStream::new(response, self.timing.stall, self.server());
        loop {
            let batch = match events.next().await {
                Ok(Some(batch)) => batch,
                Ok(None) => return StreamEnd::Closed,
                Err(error) => return StreamEnd::Failed(error),
            };
            for event in batch {
                let parsed = match parse_event(&event.data, self.global()) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        tracing::warn!("skipped an undecodable event: {e}");
                        continue;
                    }
                };
                let route = parsed.directory;
                let out = match parsed.event {
                    OcEvent::Asked(request) => {
                        if let Some(tool) = &request.tool {
                            seen_calls.put(tool.call_id.clone(), ());
                        }
                        self.remember_directory(route.as_deref());
                        BackendEvent::Asked(Incoming { request, route })
                    }
                    OcEvent::ToolRunning { call_id } if !seen_calls.contains(&call_id) => {
                        // The asked event was missed: find the request by callID.
                        seen_calls.put(call_id.clone(), ());
                        match self.list(route.as_deref()).await {
                            Ok(list) => match list.into_iter().find(|i| {
                                i.request
                                    .tool
                                    .as_ref()
                                    .is_some_and(|t| t.call_id == call_id)
                            }) {
                                Some(incoming) => BackendEvent::Asked(incoming),
                                None => continue,
                            },
                            Err(e) => BackendEvent::Invalid {
                                error: format!(
                                    "could not look up question for call {call_id}: {e}"
                                ),
                            },
                        }
                    }
                    OcEvent::Replied { request_id } => BackendEvent::Replied { request_id },
                    OcEvent::Rejected { request_id } => BackendEvent::Rejected { request_id },
                    OcEvent::ToolEnded { call_id, ok } => BackendEvent::ToolEnded { call_id, ok },
                    OcEvent::SessionEnded { session_id } => {
                        BackendEvent::SessionEnded { session_id }
                    }
                    OcEvent::Connected
                    | OcEvent::Heartbeat
                    | OcEvent::ToolRunning { .. }
                    | OcEvent::Other => continue,
                };
                if !emit(out) {
                    return StreamEnd::Closed;
                }
            }
        }
    }

    fn remember_directory(&self, directory: Option<&str>) {
        if let (true, Some(dir)) = (self.global(), directory) {
            self.directories
                .lock()
                .expect("not poisoned")
                .put(dir.to_owned(), ());
        }
    }
}

impl Backend for OpenCode {
    fn source(&self, route: Option<&str>) -> Source {
        Source {
            backend: "opencode",
            url: self.spec.url.clone(),
            directory: self.spec.directory.clone().or(route.map(str::to_owned)),
        }
    }

    fn reply<'a>(
        &'a self,
        request: &'a QuestionRequest,
        route: Option<&'a str>,
        answers: &'a Answers,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let path = format!("/question/{}/reply", request.id);
            self.call(
                self.request(reqwest::Method::POST, &path, route)
                    .json(&serde_json::json!({ "answers": answers })),
            )
            .await
            .map(drop)
        })
    }

    fn reject<'a>(
        &'a self,
        request: &'a QuestionRequest,
        route: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let path = format!("/question/{}/reject", request.id);
            self.call(self.request(reqwest::Method::POST, &path, route))
                .await
                .map(drop)
        })
    }

    fn run(self: Arc<Self>, name: Arc<str>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(self.event_loop(name, sink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines copied from captures/opencode-1.18.33.
    const ASKED: &str = r#"{"id":"evt_20377fa670029JW7vvWBU0fEBc","type":"question.asked","properties":{"id":"que_20377fa670012yFjmtDQ35vRZs","sessionID":"ses_dfc8806f9ffegvgSo6J0BvqL16","questions":[{"question":"Which color should the button be?","header":"Button color","options":[{"label":"Red","description":"Warm and loud"},{"label":"Blue","description":"Calm and default"}]}],"tool":{"messageID":"msg_20377f962001VbBJYD07q1vo5X","callID":"call_mock_5"}}}"#;

    #[test]
    fn question_asked_carries_the_request() {
        let parsed = parse_event(ASKED, false).unwrap();
        let OcEvent::Asked(request) = parsed.event else {
            panic!("{parsed:?}")
        };
        assert_eq!(request.id, "que_20377fa670012yFjmtDQ35vRZs");
        assert_eq!(request.tool.unwrap().call_id, "call_mock_5");
        assert_eq!(request.questions[0].options[1].label, "Blue");
    }

    #[test]
    fn global_wrapper_gives_the_directory() {
        let global = format!(r#"{{"directory":"/tmp/p","project":"global","payload":{ASKED}}}"#);
        let parsed = parse_event(&global, true).unwrap();
        assert_eq!(parsed.directory.as_deref(), Some("/tmp/p"));
        assert!(matches!(parsed.event, OcEvent::Asked(_)));
        let heartbeat = r#"{"payload":{"id":"evt_1","type":"server.heartbeat","properties":{}}}"#;
        assert_eq!(
            parse_event(heartbeat, true).unwrap(),
            Parsed {
                directory: None,
                event: OcEvent::Heartbeat
            }
        );
    }

    #[test]
    fn tool_parts_and_session_ends() {
        let part = |status: &str| {
            format!(
                r#"{{"id":"e","type":"message.part.updated","properties":{{"sessionID":"ses_1","part":{{"type":"tool","tool":"question","callID":"call_mock_19","state":{{"status":"{status}","input":{{}}}},"id":"prt_1"}},"time":1}}}}"#
            )
        };
        assert_eq!(
            parse_event(&part("running"), false).unwrap().event,
            OcEvent::ToolRunning {
                call_id: "call_mock_19".into()
            }
        );
        assert_eq!(
            parse_event(&part("error"), false).unwrap().event,
            OcEvent::ToolEnded {
                call_id: "call_mock_19".into(),
                ok: false
            }
        );
        assert_eq!(
            parse_event(&part("pending"), false).unwrap().event,
            OcEvent::Other
        );
        let aborted = r#"{"id":"e","type":"session.error","properties":{"sessionID":"ses_x","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}"#;
        assert_eq!(
            parse_event(aborted, false).unwrap().event,
            OcEvent::SessionEnded {
                session_id: "ses_x".into()
            }
        );
        let text = r#"{"id":"e","type":"message.part.delta","properties":{"sessionID":"s","delta":"question"}}"#;
        assert_eq!(parse_event(text, false).unwrap().event, OcEvent::Other);
    }

    #[test]
    fn broken_input_is_an_error_not_a_panic() {
        assert!(parse_event("not json about a question", false).is_err());
        assert_eq!(
            parse_event("not json", false).unwrap().event,
            OcEvent::Other
        );
        assert!(parse_event(r#"{"type":"question.asked","properties":{"id":1}}"#, false).is_err());
        assert!(parse_event(r#"{"type":"question.replied"}"#, false).is_err());
        assert_eq!(
            parse_event(r#"{"type":"brand.new","properties":[1,2]}"#, false)
                .unwrap()
                .event,
            OcEvent::Other
        );
    }
}
