//! A simulated OpenCode server: the routes ask-lsp uses, with the event
//! shapes of the real 1.18.33 server, plus a control API to ask questions,
//! answer them "elsewhere", abort sessions and inject faults. The demo runs it
//! in-process; tests and editor suites use it as their fake server. It is
//! not part of the `ask-lsp` binary. See `docs/sim.md`.
//!
//! Over 500 lines: one simulated server with its control API and fault
//! injection; permission routes are in permission.rs, the ACP endpoint
//! (forms for editor suites) in acp.rs.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

mod acp;
pub mod demo;
pub mod opencode2;
mod permission;
mod routes;
mod wire;

pub use permission::{PermissionAsk, PermissionRequest};
pub use wire::{QuestionInfo, QuestionOption, QuestionRequest, ToolRef};

use routes::*;

#[derive(Debug, Clone)]
pub struct SimOptions {
    pub port: u16,
    pub password: Option<String>,
    pub heartbeat: Duration,
    /// The directory reported on `/global/event`.
    pub directory: String,
    pub dialect: Dialect,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            port: 0,
            password: None,
            heartbeat: Duration::from_secs(10),
            directory: "/sim/project".into(),
            dialect: Dialect::default(),
        }
    }
}

/// How the sim writes OpenCode 1.x events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// As the real 1.18.33 server does.
    #[default]
    V118,
    /// As SDK 1.19.3 lists them: `question.v2.*` instead of `question.*`;
    /// on `/global/event` the durable events (session, message part) only
    /// as `sync` envelopes, and the wrapper names a workspace
    /// ([`SIM_WORKSPACE`]).
    V119,
    /// [`Dialect::V119`], with every question event sent under both names.
    V119Both,
}

/// How many requests [`SimState::requests`] keeps (the latest).
const MAX_REQUESTS_KEPT: usize = 4096;

/// The workspace named on `/global/event` in the 1.19 dialects.
pub const SIM_WORKSPACE: &str = "wrk_sim";

/// Events that SDK 1.19 also writes as `sync` envelopes (`SyncEvent*`).
const DURABLE: [&str; 4] = [
    "session.created",
    "session.updated",
    "session.deleted",
    "message.part.updated",
];

impl Dialect {
    /// From `--dialect`: `1.18`, `1.19` or `1.19-both`.
    pub fn parse(name: &str) -> Option<Dialect> {
        match name {
            "1.18" => Some(Dialect::V118),
            "1.19" => Some(Dialect::V119),
            "1.19-both" => Some(Dialect::V119Both),
            _ => None,
        }
    }

    /// The names an event goes out under.
    fn names(self, kind: &str) -> Vec<String> {
        match (self, kind.strip_prefix("question.")) {
            (Dialect::V119, Some(rest)) => vec![format!("question.v2.{rest}")],
            (Dialect::V119Both, Some(rest)) => vec![kind.to_owned(), format!("question.v2.{rest}")],
            _ => vec![kind.to_owned()],
        }
    }
}

/// One item for the open event streams.
#[derive(Debug)]
enum Outgoing {
    /// An event, wrapped on `/global/event`.
    Event(String),
    /// A durable event in the 1.19 dialects: plain on `/event`, the `sync`
    /// envelope on `/global/event`.
    Durable { plain: String, sync: String },
    /// Disposal: `/global/event` gets it with its wrapper's directory;
    /// `/event` ends after it, as upstream's event route does.
    Disposed { event: String, directory: String },
    /// Bytes sent verbatim to every stream.
    Raw(String),
    /// One event's `data` sent as written to `/global/event` streams only
    /// (recorded streams).
    GlobalData(String),
}

/// What the server received from clients, in order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Received {
    Reply {
        id: String,
        answers: Vec<Vec<String>>,
    },
    Reject {
        id: String,
    },
    /// `POST /permission/{id}/reply`.
    Permission {
        id: String,
        reply: String,
        message: Option<String>,
    },
    /// `POST /v1/acp/{serverId}`: a JSON-RPC response to an agent request.
    Acp {
        message: Value,
    },
}

/// How the next replies/rejects are mishandled (fault injection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Fault {
    /// 500 with OpenCode's error body; nothing recorded.
    Status500,
    /// 200 with an HTML page, like OpenCode's unknown routes.
    Html,
    /// Never answers.
    Hang,
    /// 307 to another address (a client must not follow it).
    Redirect,
}

/// The server's state; [`Sim`] derefs to it for the control methods.
pub struct SimState {
    options: SimOptions,
    pending: Mutex<Vec<QuestionRequest>>,
    permissions: Mutex<Vec<permission::PermissionRequest>>,
    /// Patterns approved by `always` replies.
    approved: Mutex<Vec<String>>,
    /// Aborted sessions (not busy any more).
    ended: Mutex<HashSet<String>>,
    /// Deleted sessions (`GET /session/{id}` is 404).
    deleted: Mutex<HashSet<String>>,
    /// Session titles set by [`SimState::title_session`].
    titles: Mutex<HashMap<String, String>>,
    log: Mutex<Vec<Received>>,
    faults: Mutex<VecDeque<Fault>>,
    counter: Mutex<u64>,
    /// Keeps ids unique across restarts, as real ids are.
    instance: String,
    events: broadcast::Sender<Arc<Outgoing>>,
    acp: Mutex<acp::AcpLog>,
    acp_events: broadcast::Sender<acp::AcpEvent>,
    /// Every request to the OpenCode routes: method, path and query.
    requests: Mutex<Vec<String>>,
    /// Bumped to close every open stream.
    generation: watch::Sender<u64>,
    events_up: watch::Sender<bool>,
    stalled: watch::Sender<bool>,
    /// Events handed to open streams so far, for a test that paces a flood
    /// by what the client takes in.
    sent: watch::Sender<u64>,
}

/// A running simulated server. Dropping it does not stop it; call [`Sim::stop`].
#[derive(Clone)]
pub struct Sim {
    inner: Arc<SimState>,
    pub addr: SocketAddr,
    serving: Arc<Serving>,
}

impl Sim {
    /// Starts serving on its own runtime thread, so that [`Sim::stop`] can
    /// end every connection at once, the way a killed server process does.
    pub async fn start(options: SimOptions) -> std::io::Result<Sim> {
        let listener =
            std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], options.port)))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (events, _) = broadcast::channel(65_536);
        let inner = Arc::new(SimState {
            options,
            pending: Mutex::default(),
            permissions: Mutex::default(),
            approved: Mutex::default(),
            ended: Mutex::default(),
            deleted: Mutex::default(),
            titles: Mutex::default(),
            log: Mutex::default(),
            faults: Mutex::default(),
            counter: Mutex::new(0),
            instance: instance_id(),
            events,
            requests: Mutex::default(),
            acp: Mutex::default(),
            acp_events: broadcast::channel(1024).0,
            generation: watch::channel(0).0,
            events_up: watch::channel(true).0,
            stalled: watch::channel(false).0,
            sent: watch::channel(0).0,
        });
        let app = Router::new()
            .route(
                "/global/health",
                get(|| async { axum::Json(json!({"healthy": true, "version": "sim"})) }),
            )
            .route("/path", get(path))
            .route("/event", get(event_stream))
            .route("/global/event", get(global_event_stream))
            .route("/question", get(list))
            .route("/question/{id}/reply", post(reply))
            .route("/question/{id}/reject", post(reject))
            .route("/permission", get(permission::list))
            .route("/permission/{id}/reply", post(permission::reply))
            .route("/session", get(permission::list_sessions))
            .route("/session/status", get(permission::session_status))
            .route(
                "/session/{id}",
                get(permission::get_session).delete(permission::delete_session),
            )
            .route("/v1/acp/{server}", get(acp::stream).post(acp::respond))
            .route("/_sim/acp/{server}", post(acp::control_send))
            .route("/_sim/permission", post(permission::control_ask))
            .route("/_sim/ask", post(control_ask))
            .route("/_sim/answer/{id}", post(control_answer))
            .route("/_sim/abort/{session}", post(control_abort))
            .route("/_sim/session/{session}", post(control_title))
            .route("/_sim/drop", post(control_drop))
            .route("/_sim/log", get(control_log))
            .fallback(|| async {
                // Like OpenCode: unknown routes get the web app's HTML, 200.
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    "<!doctype html><html><title>OpenCode</title></html>",
                )
            })
            .layer(middleware::from_fn_with_state(inner.clone(), basic_auth))
            .with_state(inner.clone());
        let serving = serve(listener, app)?;
        Ok(Sim {
            inner,
            addr,
            serving: Arc::new(serving),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn stop(&self) {
        self.drop_streams();
        self.serving.stop();
    }
}

impl std::ops::Deref for Sim {
    type Target = SimState;
    fn deref(&self) -> &SimState {
        &self.inner
    }
}

impl SimState {
    fn next(&self, prefix: &str) -> String {
        let mut counter = self.counter.lock().expect("not poisoned");
        *counter += 1;
        format!("{prefix}_sim{}_{:06}", self.instance, *counter)
    }

    /// Asks a question as OpenCode's question tool does; returns the request.
    pub fn ask(&self, session_id: Option<&str>, questions: Vec<QuestionInfo>) -> QuestionRequest {
        let request = self.new_request(session_id, questions);
        self.ended
            .lock()
            .expect("not poisoned")
            .remove(&request.session_id);
        self.pending
            .lock()
            .expect("not poisoned")
            .push(request.clone());
        let part = |status: &str| tool_part(&request, status, json!({}));
        self.emit("message.part.updated", part("pending"));
        self.emit(
            "question.asked",
            serde_json::to_value(&request).expect("serializable"),
        );
        self.emit(
            "message.part.updated",
            tool_part(&request, "running", json!({"questions": request.questions})),
        );
        request
    }

    /// Makes a question pending with no event at all, as if its events were
    /// lost (a resync must find it).
    pub fn ask_silently(
        &self,
        session_id: Option<&str>,
        questions: Vec<QuestionInfo>,
    ) -> QuestionRequest {
        let request = self.new_request(session_id, questions);
        self.pending
            .lock()
            .expect("not poisoned")
            .push(request.clone());
        request
    }

    /// While stalled, open streams stay open and send nothing (not even
    /// heartbeats), like a hung server.
    pub fn set_stalled(&self, stalled: bool) {
        self.stalled.send_replace(stalled);
    }

    /// Answers a question as another client would (events included).
    pub fn answer_elsewhere(&self, id: &str, answers: Vec<Vec<String>>) -> bool {
        self.resolve(
            Received::Reply {
                id: id.to_owned(),
                answers,
            },
            false,
        )
    }

    /// Takes a pending request out with a reply or a rejection, optionally
    /// records it as received from a client, and emits what OpenCode emits.
    fn resolve(&self, outcome: Received, record: bool) -> bool {
        let id = match &outcome {
            Received::Reply { id, .. } | Received::Reject { id } => id,
            Received::Permission { .. } | Received::Acp { .. } => return false, // not a question
        };
        let Some(request) = self.take(id) else {
            return false;
        };
        let session = &request.session_id;
        match &outcome {
            Received::Reply { answers, .. } => {
                self.emit(
                    "question.replied",
                    json!({"sessionID": session, "requestID": id, "answers": answers}),
                );
                self.emit(
                    "message.part.updated",
                    tool_part(&request, "completed", json!({})),
                );
            }
            _ => {
                self.emit(
                    "question.rejected",
                    json!({"sessionID": session, "requestID": id}),
                );
                self.emit(
                    "message.part.updated",
                    tool_part(&request, "error", json!({})),
                );
                self.emit("session.idle", json!({"sessionID": session}));
            }
        }
        if record {
            self.log.lock().expect("not poisoned").push(outcome);
        }
        true
    }

    /// Removes a question with no event at all, as if its events were missed.
    pub fn forget(&self, id: &str) -> bool {
        self.take(id).is_some()
    }

    /// Aborts a session like the real server: error + idle events, and the
    /// question stays listed.
    pub fn abort(&self, session_id: &str) {
        self.ended
            .lock()
            .expect("not poisoned")
            .insert(session_id.to_owned());
        self.emit(
            "session.error",
            json!({"sessionID": session_id, "error": {"name": "MessageAbortedError", "data": {"message": "Aborted"}}}),
        );
        self.emit("session.idle", json!({"sessionID": session_id}));
    }

    /// Titles a session as OpenCode does once its first message is in:
    /// `session.updated` with the title, which `GET /session/{id}` then
    /// answers too.
    pub fn title_session(&self, session_id: &str, title: &str) {
        self.titles
            .lock()
            .expect("not poisoned")
            .insert(session_id.to_owned(), title.to_owned());
        self.emit(
            "session.updated",
            json!({"sessionID": session_id, "info": {"id": session_id, "projectID": "global",
                "directory": self.options.directory, "title": title, "agent": "build"}}),
        );
    }

    pub(crate) fn session_title(&self, session_id: &str) -> Option<String> {
        self.titles
            .lock()
            .expect("not poisoned")
            .get(session_id)
            .cloned()
    }

    /// Sends any event, e.g. `message.part.delta` noise, named and wrapped
    /// as the sim's [`Dialect`] does.
    pub fn emit(&self, kind: &str, properties: Value) {
        let dialect = self.options.dialect;
        for kind in dialect.names(kind) {
            let id = self.next("evt");
            let event = json!({"id": id, "type": kind, "properties": properties}).to_string();
            let outgoing = if dialect != Dialect::V118 && DURABLE.contains(&kind.as_str()) {
                let sync = json!({"type": "sync", "id": id, "syncEvent": {
                    "type": format!("{kind}.1"), "id": self.next("evt"), "seq": 1,
                    "aggregateID": properties.get("sessionID"), "data": properties}});
                Outgoing::Durable {
                    plain: event,
                    sync: sync.to_string(),
                }
            } else {
                Outgoing::Event(event)
            };
            let _ = self.events.send(Arc::new(outgoing));
        }
    }

    /// Disposes the instance (`server.instance.disposed`) or, with `all`,
    /// every instance (`global.disposed`), as upstream does. What is pending
    /// stays pending here: a client must reconnect and list it again.
    pub fn dispose(&self, all: bool) {
        let directory = &self.options.directory;
        let (kind, properties, wrapper) = match all {
            false => (
                "server.instance.disposed",
                json!({"directory": directory}),
                directory.as_str(),
            ),
            true => ("global.disposed", json!({}), "global"),
        };
        let event = json!({"id": self.next("evt"), "type": kind, "properties": properties});
        let _ = self.events.send(Arc::new(Outgoing::Disposed {
            event: event.to_string(),
            directory: wrapper.to_owned(),
        }));
    }

    /// Sends raw bytes, verbatim, to every open stream (malformed framing tests).
    pub fn emit_raw(&self, raw: &str) {
        let _ = self.events.send(Arc::new(Outgoing::Raw(raw.to_owned())));
    }

    /// Sends one recorded `/global/event` payload as written, to
    /// `/global/event` streams only (`/event` streams get nothing).
    pub fn emit_global_data(&self, data: &str) {
        let _ = self
            .events
            .send(Arc::new(Outgoing::GlobalData(data.to_owned())));
    }

    /// Makes a request pending as given (ids from a recording), with no event.
    pub fn add_pending(&self, request: QuestionRequest) {
        self.pending.lock().expect("not poisoned").push(request);
    }

    /// Every request received on the OpenCode routes (`GET /question?directory=…`).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("not poisoned").clone()
    }

    pub fn drop_streams(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    /// While down, `/event` answers 503 (a restarting server).
    pub fn set_events_up(&self, up: bool) {
        self.events_up.send_replace(up);
        if !up {
            self.drop_streams();
        }
    }

    pub fn push_fault(&self, fault: Fault) {
        self.faults.lock().expect("not poisoned").push_back(fault);
    }

    pub fn received(&self) -> Vec<Received> {
        self.log.lock().expect("not poisoned").clone()
    }

    pub fn pending(&self) -> Vec<QuestionRequest> {
        self.pending.lock().expect("not poisoned").clone()
    }

    /// Events handed to open streams so far (every stream counted).
    pub fn events_sent(&self) -> u64 {
        *self.sent.borrow()
    }

    /// Waits until [`SimState::events_sent`] reaches `count`.
    pub async fn until_sent(&self, count: u64) {
        let _ = self.sent.subscribe().wait_for(|sent| *sent >= count).await;
    }

    /// Open event streams.
    pub fn subscribers(&self) -> usize {
        self.events.receiver_count()
    }

    fn new_request(
        &self,
        session_id: Option<&str>,
        questions: Vec<QuestionInfo>,
    ) -> QuestionRequest {
        QuestionRequest {
            id: self.next("que"),
            session_id: session_id.map_or_else(|| self.next("ses"), str::to_owned),
            questions,
            tool: Some(ToolRef {
                message_id: self.next("msg"),
                call_id: self.next("call"),
            }),
        }
    }

    fn take(&self, id: &str) -> Option<QuestionRequest> {
        let mut pending = self.pending.lock().expect("not poisoned");
        let index = pending.iter().position(|r| r.id == id)?;
        Some(pending.remove(index))
    }
}

fn tool_part(request: &QuestionRequest, status: &str, input: Value) -> Value {
    let tool = request.tool.as_ref();
    json!({
        "sessionID": request.session_id,
        "part": {
            "id": format!("prt_{}", request.id),
            "messageID": tool.map(|t| t.message_id.as_str()),
            "sessionID": request.session_id,
            "type": "tool", "tool": "question",
            "callID": tool.map(|t| t.call_id.as_str()),
            "state": {"status": status, "input": input},
        },
        "time": 0,
    })
}

async fn basic_auth(State(inner): State<Arc<SimState>>, request: Request, next: Next) -> Response {
    let uri = request.uri();
    if !uri.path().starts_with("/_sim/") {
        let line = format!("{} {}", request.method(), uri);
        let mut requests = inner.requests.lock().expect("not poisoned");
        if requests.len() >= MAX_REQUESTS_KEPT {
            requests.remove(0);
        }
        requests.push(line);
    }
    if !authorized(inner.options.password.as_deref(), &request) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"Secure Area\"")],
        )
            .into_response();
    }
    next.run(request).await
}

/// Basic auth `opencode:<password>`, when the server has a password.
pub(crate) fn authorized(password: Option<&str>, request: &Request) -> bool {
    let Some(password) = password else {
        return true;
    };
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("opencode:{password}"))
    );
    let given = request.headers().get(header::AUTHORIZATION);
    given.and_then(|v| v.to_str().ok()) == Some(expected.as_str())
}

/// Keeps ids unique across restarts, as real ids are.
pub(crate) fn instance_id() -> String {
    format!(
        "{:08x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u32)
    )
}

/// A server's thread; [`Serving::stop`] ends it.
pub(crate) struct Serving {
    shutdown: watch::Sender<bool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Serving {
    /// Closes every connection and the listener, the way a killed server
    /// process's close, and returns once they are closed (the port is free).
    pub(crate) fn stop(&self) {
        let _ = self.shutdown.send(true);
        if let Some(thread) = self.thread.lock().expect("not poisoned").take() {
            let _ = thread.join();
        }
    }
}

/// Serves `app` on its own runtime thread until [`Serving::stop`].
pub(crate) fn serve(listener: std::net::TcpListener, app: Router) -> std::io::Result<Serving> {
    let (shutdown, mut stop) = watch::channel(false);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let thread = std::thread::spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            tokio::select! {
                _ = axum::serve(listener, app) => {}
                _ = stop.wait_for(|s| *s) => {}
            }
        });
        // Dropping the runtime drops every connection task: sockets close.
        runtime.shutdown_background();
    });
    Ok(Serving {
        shutdown,
        thread: Mutex::new(Some(thread)),
    })
}
