//! What every agent backend gives the broker: a stream of [`BackendEvent`]s
//! and a way to send answers back ([`Backend`]).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde::Serialize;

use crate::model::{Answers, QuestionRequest};
use crate::sse::{SseDecoder, SseEvent, SseItem};

/// A question as a backend saw it, before the broker checked it.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub request: QuestionRequest,
    /// Backend-specific routing for the reply (OpenCode: the directory the
    /// question came from).
    pub route: Option<String>,
}

#[derive(Debug, Clone)]
pub enum BackendEvent {
    Connected,
    Disconnected {
        error: String,
    },
    /// Everything the server lists as pending right after a (re)connect: the
    /// event stream has no replay, so this is how missed questions and missed
    /// answers are found.
    Snapshot(Vec<Incoming>),
    Asked(Incoming),
    Replied {
        request_id: String,
    },
    Rejected {
        request_id: String,
    },
    /// The tool call behind a question finished; `ok` is false for `error`.
    ToolEnded {
        call_id: String,
        ok: bool,
    },
    /// The session stopped (aborted, errored or idle): its questions are moot.
    SessionEnded {
        session_id: String,
    },
    /// Input the backend could not use, worth telling the person about.
    Invalid {
        error: String,
    },
}

/// Where a server's events go: tagged with the server's name.
pub type EventSink = tokio::sync::mpsc::UnboundedSender<(Arc<str>, BackendEvent)>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The server does not know the question (answered elsewhere, or gone).
    #[error("{server}: question not found (already answered elsewhere, or its session ended)")]
    NotFound { server: String },
    #[error(
        "{server}: 401 Unauthorized: check OPENCODE_SERVER_PASSWORD / OPENCODE_SERVER_USERNAME"
    )]
    Unauthorized { server: String },
    #[error("{server}: the server refused the request (400): {message}")]
    BadRequest { server: String, message: String },
    #[error("{server}: server error {status}: {message}")]
    Server {
        server: String,
        status: u16,
        message: String,
    },
    #[error(
        "{server}: answered {status} with {kind} instead of JSON: is this an OpenCode server, and is the route right?"
    )]
    NotJson {
        server: String,
        status: u16,
        kind: String,
    },
    #[error(
        "{server}: answered with a redirect ({status}), which is not followed: ask-lsp only talks to the configured URL"
    )]
    Redirect { server: String, status: u16 },
    #[error("{server}: no answer within {after:?}")]
    Timeout {
        server: String,
        after: std::time::Duration,
    },
    #[error("{server}: {message}")]
    Connect { server: String, message: String },
}

impl BackendError {
    /// The error for logs: a 400's message can quote the request body (the
    /// answers), so it is left out.
    pub fn for_log(&self) -> String {
        match self {
            BackendError::BadRequest { server, .. } => {
                format!("{server}: the server refused the request (400)")
            }
            other => other.to_string(),
        }
    }

    /// Whether sending the same thing again may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            BackendError::Server { .. }
                | BackendError::Timeout { .. }
                | BackendError::Connect { .. }
        )
    }
}

/// Describes a backend for the editor (`source` in `askQuestions/ask`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub backend: &'static str,
    pub url: String,
    pub directory: Option<String>,
}

pub trait Backend: Send + Sync {
    fn source(&self, route: Option<&str>) -> Source;
    fn reply<'a>(
        &'a self,
        request: &'a QuestionRequest,
        route: Option<&'a str>,
        answers: &'a Answers,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    fn reject<'a>(
        &'a self,
        request: &'a QuestionRequest,
        route: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    /// Runs the event loop until the task is aborted: connects, resyncs,
    /// reconnects with backoff.
    fn run(self: Arc<Self>, name: Arc<str>, sink: EventSink) -> BoxFuture<'static, ()>;
}

/// Timing knobs; the defaults suit a real server (heartbeat every 10 s).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Bound on one HTTP request (a starting server can accept and never answer).
    pub request: Duration,
    /// No bytes for this long (not even a heartbeat) means the stream is dead.
    pub stall: Duration,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            request: Duration::from_secs(10),
            stall: Duration::from_secs(30),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(5),
        }
    }
}

impl Timing {
    /// Defaults, with `ASK_LSP_STALL_MS` / `ASK_LSP_REQUEST_TIMEOUT_MS` overrides.
    pub fn from_env() -> Self {
        let ms = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let mut timing = Timing::default();
        if let Some(stall) = ms("ASK_LSP_STALL_MS") {
            timing.stall = stall;
        }
        if let Some(request) = ms("ASK_LSP_REQUEST_TIMEOUT_MS") {
            timing.request = request;
        }
        timing
    }
}

/// Runs one HTTP exchange within the request bound, naming the server in a
/// timeout or connection error.
pub async fn bounded<T>(
    server: &str,
    timing: &Timing,
    exchange: impl std::future::Future<Output = Result<T, reqwest::Error>>,
) -> Result<T, BackendError> {
    tokio::time::timeout(timing.request, exchange)
        .await
        .map_err(|_| BackendError::Timeout {
            server: server.to_owned(),
            after: timing.request,
        })?
        .map_err(|e| BackendError::Connect {
            server: server.to_owned(),
            message: connect_message(&e),
        })
}

/// An SSE response read with a stall watchdog, in batches of whole events.
pub struct EventStream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: SseDecoder,
    stall: Duration,
    server: String,
}

impl EventStream {
    pub fn new(response: reqwest::Response, stall: Duration, server: String) -> Self {
        EventStream {
            body: Box::pin(response.bytes_stream()),
            decoder: SseDecoder::default(),
            stall,
            server,
        }
    }

    /// The events in the next chunk received: `Ok(None)` when the server
    /// closed the stream, `Err` (a message) when it failed or went silent for
    /// longer than the stall bound. Oversized events are logged and skipped.
    pub async fn next(&mut self) -> Result<Option<Vec<SseEvent>>, String> {
        let chunk = match tokio::time::timeout(self.stall, self.body.next()).await {
            Err(_) => {
                return Err(format!(
                    "{}: no event or heartbeat for {:?}",
                    self.server, self.stall
                ));
            }
            Ok(None) => return Ok(None),
            Ok(Some(Err(e))) => return Err(format!("{}: {}", self.server, connect_message(&e))),
            Ok(Some(Ok(chunk))) => chunk,
        };
        let mut items = Vec::new();
        self.decoder.feed(&chunk, &mut items);
        Ok(Some(
            items
                .into_iter()
                .filter_map(|item| match item {
                    SseItem::Event(event) => Some(event),
                    SseItem::Oversized => {
                        tracing::warn!(
                            "skipped an event over the {} MiB bound",
                            crate::sse::MAX_EVENT_BYTES >> 20
                        );
                        None
                    }
                })
                .collect(),
        ))
    }
}

/// The HTTP client every backend uses.
pub fn http_client(timing: &Timing) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(timing.request)
        // Only the configured URL is ever contacted.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest client with static settings")
}

/// reqwest's errors nest the useful part ("Connection refused") in sources.
pub fn connect_message(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message = format!("{message}: {inner}");
        source = inner.source();
    }
    message
}
