//! A sandbox-agent ACP endpoint (`/v1/acp/{serverId}`), the part ask-lsp's
//! `sandbox-agent` backend uses, so editor suites can show forms
//! (`elicitation/create`) without the real server. As sandbox-agent 0.4.2
//! does (captures/sandbox-agent/released-0.4.2): `GET` is an SSE stream
//! (`event: message`, numbered ids) that replays everything after
//! `Last-Event-ID`, or everything without it; a client's JSON-RPC response
//! is `POST`ed and answered 202, known id or not. There is no agent: tests
//! send its requests through `POST /_sim/acp/request` and read the
//! responses in `/_sim/log`.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::{Received, SimState, bad_request};

/// Messages kept for replay; older ones are dropped.
const HISTORY: usize = 4096;

pub(crate) struct Acp {
    /// `(event id, JSON-RPC message)`, oldest first.
    history: Mutex<Vec<(u64, Arc<str>)>>,
    next_id: Mutex<u64>,
    events: broadcast::Sender<(u64, Arc<str>)>,
}

impl Default for Acp {
    fn default() -> Self {
        Acp {
            history: Mutex::default(),
            next_id: Mutex::new(0),
            events: broadcast::channel(1024).0,
        }
    }
}

impl SimState {
    /// Sends an agent → client message on every ACP stream.
    pub(crate) fn emit_acp(&self, message: &Value) {
        let mut next = self.acp.next_id.lock().expect("not poisoned");
        *next += 1;
        let event = (*next, Arc::<str>::from(message.to_string()));
        let mut history = self.acp.history.lock().expect("not poisoned");
        if history.len() >= HISTORY {
            history.remove(0);
        }
        history.push(event.clone());
        let _ = self.acp.events.send(event);
    }

    /// Sends the agent's request `method` (`elicitation/create`,
    /// `session/request_permission`, …); returns its JSON-RPC id.
    pub fn acp_request(&self, method: &str, params: Value) -> String {
        let id = self.next("acp");
        self.emit_acp(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }
}

fn frame((id, data): &(u64, Arc<str>)) -> Bytes {
    Bytes::from(format!("event: message\nid: {id}\ndata: {data}\n\n"))
}

pub(crate) async fn stream(
    State(inner): State<Arc<SimState>>,
    Path(_server): Path<String>,
    headers: HeaderMap,
) -> Response {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    // Subscribed before the history is read: nothing falls in between.
    let mut events = inner.acp.events.subscribe();
    let (replay, mut last) = {
        let history = inner.acp.history.lock().expect("not poisoned");
        let replay: Vec<Bytes> = history
            .iter()
            .filter(|(id, _)| *id > after)
            .map(frame)
            .collect();
        (
            replay,
            history.last().map_or(after, |(id, _)| (*id).max(after)),
        )
    };
    let mut generation = inner.generation.subscribe();
    generation.mark_unchanged();
    let heartbeat = inner.options.heartbeat;
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1024);
    tokio::spawn(async move {
        for bytes in replay {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
        loop {
            let bytes = tokio::select! {
                _ = generation.changed() => return,
                _ = tx.closed() => return,
                _ = ticks.tick() => Bytes::from_static(b": keep-alive\n\n"),
                event = events.recv() => match event {
                    // Already replayed.
                    Ok(event) if event.0 <= last => continue,
                    Ok(event) => {
                        last = event.0;
                        frame(&event)
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), rx))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .expect("static response parts")
}

/// A client's JSON-RPC response to one of the agent's requests.
pub(crate) async fn respond(
    State(inner): State<Arc<SimState>>,
    Path(_server): Path<String>,
    body: Bytes,
) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("not JSON");
    };
    let (Some(id), true) = (
        message.get("id"),
        message.get("result").is_some() || message.get("error").is_some(),
    ) else {
        return bad_request("expected a JSON-RPC response (id and result or error)");
    };
    inner.log.lock().expect("not poisoned").push(Received::Acp {
        id: id.clone(),
        result: message.get("result").cloned(),
        error: message.get("error").cloned(),
    });
    StatusCode::ACCEPTED.into_response()
}

#[derive(serde::Deserialize)]
pub(crate) struct RequestBody {
    method: String,
    params: Value,
}

pub(crate) async fn control_request(State(inner): State<Arc<SimState>>, body: Bytes) -> Response {
    match serde_json::from_slice::<RequestBody>(&body) {
        Ok(request) => {
            axum::Json(json!({"id": inner.acp_request(&request.method, request.params)}))
                .into_response()
        }
        Err(e) => bad_request(&e.to_string()),
    }
}

/// The agent withdraws its request (`$/cancel_request`).
pub(crate) async fn control_cancel(
    State(inner): State<Arc<SimState>>,
    Path(id): Path<String>,
) -> Response {
    inner.emit_acp(
        &json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": id}}),
    );
    axum::Json(true).into_response()
}
