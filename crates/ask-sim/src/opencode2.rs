//! A simulated OpenCode 2 server (`ask-sim serve --opencode2`), built from
//! upstream's schema and route files (anomalyco/opencode; docs/sim.md and
//! docs/opencode2.md cite paths and commits):
//!
//! - `GET /api/event`: `{id, type, data, location?}` envelopes, first
//!   `server.connected`, then `: heartbeat` SSE comments (every 15 s
//!   upstream), no replay (`packages/server/src/handlers/event.ts`);
//! - forms (`packages/schema/src/form.ts`, `packages/protocol/src/groups/
//!   session.ts` @ 01fd0c85 and, for the older [`Profile`]s, `groups/
//!   form.ts`, `packages/core/src/form.ts`): `form.created` / `form.replied`
//!   / `form.cancelled`, listed per location and per session, answered by
//!   value (checked as upstream checks it), cancelled with the person's
//!   message ([`forms`]);
//! - permissions v2 (`packages/schema/src/permission.ts`,
//!   `packages/protocol/src/groups/permission.ts`): `permission.v2.asked` /
//!   `permission.v2.replied`, `{reply: once|always|reject, message?}`;
//! - `GET /api/info` `{version, pid, urls, paths}`, what the official client
//!   probes (`packages/protocol/src/groups/server.ts`,
//!   `packages/client/src/effect/service.ts`).
//!
//! Over 500 lines: the server, its state, and its control API.

mod control;
mod forms;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use crate::authorized;

#[derive(Debug, Clone)]
pub struct Options {
    pub port: u16,
    pub password: Option<String>,
    /// Upstream sends a comment every 15 s.
    pub heartbeat: Duration,
    /// The server's default location.
    pub directory: String,
    /// Which generation's form routes it serves.
    pub profile: Profile,
    /// Whether `GET /doc` describes the routes (OpenAPI), as 1.18.34's does.
    pub doc: bool,
    /// Form routes of the profile it does not serve (paths as in
    /// `forms::routes`, e.g. `/api/session/{session}/form/{id}/state`): a
    /// server between generations. They answer the JSON 404 of any
    /// missing route.
    pub missing_routes: Vec<&'static str>,
}

/// The generations of upstream's form routes (docs/opencode2.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Profile {
    /// `groups/session.ts` @ 01fd0c85: `GET /api/form`, `GET …/form/{id}`
    /// answers `Form.Detail` (the form with its state), `DELETE
    /// …/form/{id}?message=`; forms have no `mode`.
    #[default]
    Current,
    /// `groups/form.ts` @ 8c6ff624: `GET /api/form/request`, `…/state`,
    /// `POST …/cancel`.
    Requests,
    /// `groups/form.ts` @ 23699db9: as `Requests` without a location listing.
    Unlisted,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            port: 0,
            password: None,
            heartbeat: Duration::from_secs(15),
            directory: "/sim/project".into(),
            profile: Profile::default(),
            doc: true,
            missing_routes: Vec::new(),
        }
    }
}

/// What the server received from clients, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Received {
    /// `POST /api/session/{s}/form/{id}/reply`.
    FormReply {
        id: String,
        session: String,
        answer: Value,
    },
    /// `DELETE /api/session/{s}/form/{id}?message=…` (current generation).
    FormDelete {
        id: String,
        session: String,
        message: Option<String>,
    },
    /// `POST /api/session/{s}/form/{id}/cancel` (older generations).
    FormCancel {
        id: String,
        session: String,
        message: Option<String>,
    },
    /// `POST /api/session/{s}/permission/{id}/reply`.
    Permission {
        id: String,
        session: String,
        reply: String,
        message: Option<String>,
    },
}

struct Form {
    info: Value,
    directory: String,
    state: Value,
}

struct PermissionEntry {
    request: Value,
    directory: String,
    pending: bool,
}

pub struct State2 {
    options: Options,
    forms: Mutex<Vec<Form>>,
    permissions: Mutex<Vec<PermissionEntry>>,
    /// Sessions the server knows (`GET /api/session/{s}/…` is 404 for others).
    sessions: Mutex<Vec<String>>,
    log: Mutex<Vec<Received>>,
    counter: Mutex<u64>,
    instance: String,
    events: broadcast::Sender<Arc<str>>,
    /// Bumped to close every open stream.
    streams: watch::Sender<u64>,
    events_up: watch::Sender<bool>,
    /// While true, open streams send nothing, heartbeats included.
    stalled: watch::Sender<bool>,
    /// Event streams opened so far.
    connections: std::sync::atomic::AtomicUsize,
    /// Form replies still to answer 503 without taking them.
    reply_faults: std::sync::atomic::AtomicUsize,
    /// `GET /doc` requests answered so far.
    doc_reads: std::sync::atomic::AtomicUsize,
}

/// A running simulated OpenCode 2 server; [`Sim2::stop`] ends it.
#[derive(Clone)]
pub struct Sim2 {
    inner: Arc<State2>,
    pub addr: SocketAddr,
    serving: Arc<crate::Serving>,
}

impl std::ops::Deref for Sim2 {
    type Target = State2;
    fn deref(&self) -> &State2 {
        &self.inner
    }
}

type Shared = State<Arc<State2>>;

impl Sim2 {
    pub async fn start(options: Options) -> std::io::Result<Sim2> {
        let listener =
            std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], options.port)))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(State2 {
            options,
            forms: Mutex::default(),
            permissions: Mutex::default(),
            sessions: Mutex::default(),
            log: Mutex::default(),
            counter: Mutex::new(0),
            instance: crate::instance_id(),
            events: broadcast::channel(65_536).0,
            streams: watch::channel(0).0,
            events_up: watch::channel(true).0,
            stalled: watch::channel(false).0,
            connections: Default::default(),
            reply_faults: Default::default(),
            doc_reads: Default::default(),
        });
        let mut routes = forms::routes(inner.options.profile);
        routes.retain(|(path, _, _)| !inner.options.missing_routes.contains(path));
        let doc = forms::openapi(&routes);
        let mut app = Router::new()
            .route("/api/info", get(info))
            .route("/api/health", get(health))
            .route("/api/event", get(event_stream))
            .route("/api/permission/request", get(list_location_permissions));
        for (path, route, _) in routes {
            app = app.route(path, route);
        }
        if inner.options.doc {
            let counted = inner.clone();
            app = app.route(
                "/doc",
                get(move || async move {
                    counted
                        .doc_reads
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    axum::Json(doc.clone())
                }),
            );
        }
        let app = app
            .route(
                "/api/session/{session}/permission",
                get(list_session_permissions),
            )
            .route(
                "/api/session/{session}/permission/{id}",
                get(get_permission),
            )
            .route(
                "/api/session/{session}/permission/{id}/reply",
                post(reply_permission),
            )
            .route("/_sim/question", post(control::question))
            .route("/_sim/form", post(control::form))
            .route("/_sim/permission", post(control::permission))
            .route("/_sim/form/{id}/reply", post(control::reply))
            .route("/_sim/form/{id}/cancel", post(control::cancel))
            .route("/_sim/drop", post(control::drop))
            .route("/_sim/log", get(control::log))
            // A JSON 404, so that a missing route reads like a missing form.
            .fallback(|| async {
                error(
                    StatusCode::NOT_FOUND,
                    "RouteNotFound",
                    "Route not found".into(),
                )
            })
            .layer(middleware::from_fn_with_state(inner.clone(), basic_auth))
            .with_state(inner.clone());
        let serving = crate::serve(listener, app)?;
        Ok(Sim2 {
            inner,
            addr,
            serving: Arc::new(serving),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Ends the server the way a killed process does: every connection closes.
    pub fn stop(&self) {
        self.drop_streams();
        self.serving.stop();
    }
}

/// A question as the question tool takes it (`Question.Prompt`).
#[derive(Debug, Clone, Deserialize)]
pub struct QuestionPrompt {
    pub question: String,
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub options: Vec<QuestionPromptOption>,
    #[serde(default)]
    pub multiple: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct QuestionPromptOption {
    pub label: String,
    #[serde(default)]
    pub description: Option<String>,
}

impl State2 {
    fn next(&self, prefix: &str) -> String {
        let mut counter = self.counter.lock().expect("not poisoned");
        *counter += 1;
        format!("{prefix}_sim{}_{:06}", self.instance, *counter)
    }

    fn know(&self, session: &str) {
        let mut sessions = self.sessions.lock().expect("not poisoned");
        if !sessions.iter().any(|s| s == session) {
            sessions.push(session.to_owned());
        }
    }

    fn emit(&self, kind: &str, data: Value, directory: Option<&str>) {
        let mut event = json!({"id": self.next("evt"), "type": kind, "created": 0, "data": data});
        if let Some(directory) = directory {
            event["location"] = json!({"directory": directory});
        }
        let _ = self.events.send(event.to_string().into());
    }

    /// Asks as the question tool does: one form, `metadata.kind: "question"`,
    /// a field `q{i}` per question, option values equal to their labels,
    /// typed answers allowed (`packages/core/src/tool/plugin/question.ts`).
    pub fn ask_questions(&self, session: Option<&str>, questions: &[QuestionPrompt]) -> Value {
        let fields: Vec<Value> = questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let options: Vec<Value> = q
                    .options
                    .iter()
                    .map(|o| {
                        let mut option = json!({"value": o.label, "label": o.label});
                        if let Some(description) = &o.description {
                            option["description"] = json!(description);
                        }
                        option
                    })
                    .collect();
                json!({
                    "key": format!("q{i}"), "title": q.header, "description": q.question,
                    "type": if q.multiple { "multiselect" } else { "string" },
                    "options": options, "custom": true,
                })
            })
            .collect();
        let tool = json!({"messageID": self.next("msg"), "id": self.next("call")});
        self.create_form(
            json!({
                "sessionID": session, "title": "Questions",
                "metadata": {"kind": "question", "tool": tool},
                "fields": fields,
            }),
            None,
            true,
        )
    }

    /// Creates a form from `Form.CreatePayload` plus `sessionID` (a new
    /// session when absent), in `directory` (the default location when
    /// absent); with `announce` false no event is sent, as if it was missed.
    pub fn create_form(
        &self,
        mut payload: Value,
        directory: Option<&str>,
        announce: bool,
    ) -> Value {
        let session = payload["sessionID"]
            .as_str()
            .map_or_else(|| self.next("ses"), str::to_owned);
        self.know(&session);
        payload["sessionID"] = json!(session);
        if payload.get("id").and_then(Value::as_str).is_none() {
            payload["id"] = json!(self.next("frm"));
        }
        let directory = directory.unwrap_or(&self.options.directory).to_owned();
        self.forms.lock().expect("not poisoned").push(Form {
            info: payload.clone(),
            directory: directory.clone(),
            state: json!({"status": "pending"}),
        });
        if announce {
            self.emit("form.created", json!({"form": payload}), Some(&directory));
        }
        payload
    }

    /// `permission.v2.asked` with the whole request (`PermissionV2.Request`).
    pub fn ask_permission(&self, mut request: Value, announce: bool) -> Value {
        let session = request["sessionID"]
            .as_str()
            .map_or_else(|| self.next("ses"), str::to_owned);
        self.know(&session);
        request["sessionID"] = json!(session);
        request["id"] = json!(self.next("per"));
        let directory = self.options.directory.clone();
        self.permissions
            .lock()
            .expect("not poisoned")
            .push(PermissionEntry {
                request: request.clone(),
                directory: directory.clone(),
                pending: true,
            });
        if announce {
            self.emit("permission.v2.asked", request.clone(), Some(&directory));
        }
        request
    }

    /// Answers a form as another client would (the event included).
    pub fn reply_elsewhere(&self, id: &str, answer: Value) -> Result<(), String> {
        self.settle(id, None, Some(answer), None)
    }

    /// Cancels a form as another client (or the agent stopping) would.
    pub fn cancel_elsewhere(&self, id: &str) -> Result<(), String> {
        self.settle(id, None, None, None)
    }

    /// Settles a pending form: answered (checked as upstream checks it) or
    /// cancelled; emits the event. `Err` says why not, upstream's words.
    fn settle(
        &self,
        id: &str,
        session: Option<&str>,
        answer: Option<Value>,
        message: Option<String>,
    ) -> Result<(), String> {
        let mut forms = self.forms.lock().expect("not poisoned");
        let form = forms
            .iter_mut()
            .find(|f| f.info["id"] == id && session.is_none_or(|s| f.info["sessionID"] == s))
            .ok_or_else(|| format!("Form not found: {id}"))?;
        if form.state["status"] != "pending" {
            return Err(format!("Form already settled: {id}"));
        }
        let session = form.info["sessionID"].as_str().unwrap_or("").to_owned();
        match answer {
            Some(answer) => {
                forms::validate_answer(&form.info, &answer)?;
                form.state = json!({"status": "answered", "answer": answer});
                self.emit(
                    "form.replied",
                    json!({"id": id, "sessionID": session, "answer": answer}),
                    Some(&form.directory),
                );
            }
            None => {
                form.state = match &message {
                    Some(message) => json!({"status": "cancelled", "message": message}),
                    None => json!({"status": "cancelled"}),
                };
                self.emit(
                    "form.cancelled",
                    json!({"id": id, "sessionID": session}),
                    Some(&form.directory),
                );
            }
        }
        Ok(())
    }

    pub fn drop_streams(&self) {
        self.streams.send_modify(|g| *g += 1);
    }

    /// While down, `/api/event` answers 503 (a restarting server).
    pub fn set_events_up(&self, up: bool) {
        self.events_up.send_replace(up);
        if !up {
            self.drop_streams();
        }
    }

    /// While stalled, open streams stay open and send nothing (not even
    /// the heartbeat comment), like a hung server.
    pub fn set_stalled(&self, stalled: bool) {
        self.stalled.send_replace(stalled);
    }

    /// How many event streams were opened so far (reconnects count).
    /// The next `n` form replies answer 503 and are not taken (a server
    /// failing under load).
    pub fn fail_replies(&self, n: usize) {
        self.reply_faults
            .store(n, std::sync::atomic::Ordering::SeqCst);
    }

    fn take_reply_fault(&self) -> bool {
        self.reply_faults
            .fetch_update(
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
                |n| n.checked_sub(1),
            )
            .is_ok()
    }

    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many times `GET /doc` was answered.
    pub fn doc_reads(&self) -> usize {
        self.doc_reads.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn received(&self) -> Vec<Received> {
        self.log.lock().expect("not poisoned").clone()
    }

    /// The pending forms' ids.
    pub fn pending_forms(&self) -> Vec<String> {
        let forms = self.forms.lock().expect("not poisoned");
        forms
            .iter()
            .filter(|f| f.state["status"] == "pending")
            .filter_map(|f| f.info["id"].as_str().map(str::to_owned))
            .collect()
    }

    pub fn subscribers(&self) -> usize {
        self.events.receiver_count()
    }

    fn session_known(&self, session: &str) -> bool {
        self.sessions
            .lock()
            .expect("not poisoned")
            .iter()
            .any(|s| s == session)
    }
}

async fn basic_auth(State(inner): Shared, request: Request, next: Next) -> Response {
    if !authorized(inner.options.password.as_deref(), &request) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"Secure Area\"")],
        )
            .into_response();
    }
    next.run(request).await
}

fn error(status: StatusCode, tag: &str, message: String) -> Response {
    (status, axum::Json(json!({"_tag": tag, "message": message}))).into_response()
}

fn session_not_found(session: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "SessionNotFoundError",
        format!("Session not found: {session}"),
    )
}

async fn info() -> Response {
    axum::Json(json!({"version": "2.0.0-sim", "pid": std::process::id(),
        "urls": [], "paths": {"tmp": "/tmp"}}))
    .into_response()
}

async fn health() -> Response {
    axum::Json(json!({"healthy": true, "version": "2.0.0-sim", "pid": std::process::id()}))
        .into_response()
}

/// Upstream: `server.connected` first, then live events only; a comment
/// heartbeat on its own clock.
async fn event_stream(State(inner): Shared) -> Response {
    if !*inner.events_up.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "restarting").into_response();
    }
    inner
        .connections
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut events = inner.events.subscribe();
    let mut streams = inner.streams.subscribe();
    let stalled = inner.stalled.subscribe();
    streams.mark_unchanged();
    let heartbeat = inner.options.heartbeat;
    let connected = json!({"id": inner.next("evt"), "type": "server.connected", "data": {}});
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1024);
    tokio::spawn(async move {
        if tx
            .send(Bytes::from(format!("data: {connected}\n\n")))
            .await
            .is_err()
        {
            return;
        }
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
        loop {
            let bytes = tokio::select! {
                _ = streams.changed() => return,
                _ = tx.closed() => return,
                _ = ticks.tick() => Bytes::from_static(b": heartbeat\n\n"),
                event = events.recv() => match event {
                    Ok(event) => Bytes::from(format!("data: {event}\n\n")),
                    // Upstream fails a slow consumer's stream.
                    Err(_) => return,
                },
            };
            if *stalled.borrow() {
                continue; // lost, as on a hung server
            }
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
    });
    crate::sse_response(rx)
}

/// `location[directory]` (deepObject), else the default location.
fn location(inner: &State2, query: &HashMap<String, String>) -> String {
    query
        .get("location[directory]")
        .cloned()
        .unwrap_or_else(|| inner.options.directory.clone())
}

fn located(directory: &str, data: Vec<Value>) -> Response {
    axum::Json(json!({
        "location": {"directory": directory, "project": {"id": "global", "directory": "/"}},
        "data": data,
    }))
    .into_response()
}

async fn list_location_permissions(
    State(inner): Shared,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let directory = location(&inner, &query);
    let permissions = inner.permissions.lock().expect("not poisoned");
    let data = permissions
        .iter()
        .filter(|p| p.pending && p.directory == directory)
        .map(|p| p.request.clone())
        .collect();
    located(&directory, data)
}

async fn list_session_permissions(State(inner): Shared, Path(session): Path<String>) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let permissions = inner.permissions.lock().expect("not poisoned");
    let data: Vec<Value> = permissions
        .iter()
        .filter(|p| p.pending && p.request["sessionID"] == session.as_str())
        .map(|p| p.request.clone())
        .collect();
    axum::Json(json!({"data": data})).into_response()
}

async fn get_permission(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let permissions = inner.permissions.lock().expect("not poisoned");
    match permissions.iter().find(|p| {
        p.pending && p.request["id"] == id.as_str() && p.request["sessionID"] == session.as_str()
    }) {
        Some(p) => axum::Json(json!({"data": p.request})).into_response(),
        None => permission_not_found(&id),
    }
}

fn permission_not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "PermissionNotFoundError",
        format!("Permission not found: {id}"),
    )
}

async fn reply_permission(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    #[derive(Deserialize)]
    struct Body {
        reply: String,
        message: Option<String>,
    }
    let Some(body) = serde_json::from_slice::<Body>(&body)
        .ok()
        .filter(|b| matches!(b.reply.as_str(), "once" | "always" | "reject"))
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidRequestError",
            "Expected {reply: \"once\" | \"always\" | \"reject\", message?}".into(),
        );
    };
    {
        let mut permissions = inner.permissions.lock().expect("not poisoned");
        let Some(entry) = permissions.iter_mut().find(|p| {
            p.pending
                && p.request["id"] == id.as_str()
                && p.request["sessionID"] == session.as_str()
        }) else {
            return permission_not_found(&id);
        };
        entry.pending = false;
        inner.emit(
            "permission.v2.replied",
            json!({"sessionID": session, "requestID": id, "reply": body.reply}),
            Some(&entry.directory),
        );
    }
    inner
        .log
        .lock()
        .expect("not poisoned")
        .push(Received::Permission {
            id,
            session,
            reply: body.reply,
            message: body.message,
        });
    StatusCode::NO_CONTENT.into_response()
}
