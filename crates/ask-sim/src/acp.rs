//! A minimal sandbox-agent ACP endpoint, so editor suites can show forms
//! (`elicitation/create`) without a real sandbox-agent: `GET /v1/acp/{id}`
//! is an SSE stream of what the "agent" sends (`event: message`, numbered
//! ids, replay after `Last-Event-ID`), `POST /v1/acp/{id}` takes the
//! client's JSON-RPC responses (recorded in the log). What the agent sends
//! is whatever a test posts to `/_sim/acp/{id}`: the sim does not interpret
//! ACP. Each server id has its own stream, so tests sharing a sim do not
//! see each other's requests replayed.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::{Received, SimState, bad_request};

/// Everything sent on each server id's stream, in order: event id = index + 1.
#[derive(Default)]
pub(crate) struct AcpLog {
    messages: HashMap<String, Vec<Arc<str>>>,
}

/// One message on a server id's stream: (server id, event id, JSON).
pub(crate) type AcpEvent = (String, usize, Arc<str>);

fn frame(id: usize, data: &str) -> Bytes {
    Bytes::from(format!("id: {id}\nevent: message\ndata: {data}\n\n"))
}

/// `POST /_sim/acp/{serverId}`: any JSON-RPC message, sent on that stream.
pub(crate) async fn control_send(
    State(inner): State<Arc<SimState>>,
    Path(server): Path<String>,
    body: Bytes,
) -> Response {
    if !matches!(serde_json::from_slice::<Value>(&body), Ok(Value::Object(_))) {
        return bad_request("expected a JSON-RPC message (an object)");
    }
    // Sent as written, so key order (a form's field order) is kept; a raw
    // newline in JSON is whitespace, and SSE data must be one line.
    let data: Arc<str> = String::from_utf8_lossy(&body)
        .replace(['\n', '\r'], " ")
        .into();
    let mut log = inner.acp.lock().expect("not poisoned");
    let messages = log.messages.entry(server.clone()).or_default();
    messages.push(data.clone());
    let id = messages.len();
    let _ = inner.acp_events.send((server, id, data));
    axum::Json(json!({"eventId": id})).into_response()
}

/// `POST /v1/acp/{serverId}`: a client's response to an agent request.
pub(crate) async fn respond(State(inner): State<Arc<SimState>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(message @ Value::Object(_)) => {
            inner
                .log
                .lock()
                .expect("not poisoned")
                .push(Received::Acp { message });
            StatusCode::ACCEPTED.into_response()
        }
        _ => bad_request("expected a JSON-RPC message (an object)"),
    }
}

/// `GET /v1/acp/{serverId}`: the stream, replayed after `Last-Event-ID`.
pub(crate) async fn stream(
    State(inner): State<Arc<SimState>>,
    Path(server): Path<String>,
    headers: HeaderMap,
) -> Response {
    let after: usize = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Subscribed under the lock: nothing falls between replay and live.
    let (replay, mut live) = {
        let log = inner.acp.lock().expect("not poisoned");
        let messages = log.messages.get(&server).map_or(&[][..], Vec::as_slice);
        let replay: Vec<Bytes> = messages
            .iter()
            .enumerate()
            .skip(after)
            .map(|(i, data)| frame(i + 1, data))
            .collect();
        (replay, inner.acp_events.subscribe())
    };
    let mut generation = inner.generation.subscribe();
    generation.mark_unchanged();
    // sandbox-agent 0.4.2 writes `: heartbeat` every 15 s on a quiet stream.
    let heartbeat = inner.options.heartbeat;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1024);
    tokio::spawn(async move {
        for bytes in replay {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        loop {
            let bytes = tokio::select! {
                _ = generation.changed() => return,
                _ = tx.closed() => return,
                _ = ticks.tick() => Bytes::from_static(b": heartbeat\n\n"),
                event = live.recv() => match event {
                    Ok((to, id, data)) if to == server => frame(id, &data),
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
    });
    crate::sse_response(rx)
}
