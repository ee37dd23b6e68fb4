//! A minimal sandbox-agent ACP endpoint, so editor suites can show forms
//! (`elicitation/create`) without a real sandbox-agent: `GET /v1/acp/{id}`
//! is an SSE stream of what the "agent" sends (`event: message`, numbered
//! ids, replay after `Last-Event-ID`), `POST /v1/acp/{id}` takes the
//! client's JSON-RPC responses (recorded in the log). What the agent sends
//! is whatever a test posts to `/_sim/acp`: the sim does not interpret ACP.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::{Received, SimState, bad_request};

/// Everything sent on the ACP stream, in order: event id = index + 1.
#[derive(Default)]
pub(crate) struct AcpLog {
    messages: Vec<Arc<str>>,
}

fn frame(id: usize, data: &str) -> Bytes {
    Bytes::from(format!("id: {id}\nevent: message\ndata: {data}\n\n"))
}

/// `POST /_sim/acp`: any JSON-RPC message, sent to every ACP stream.
pub(crate) async fn control_send(State(inner): State<Arc<SimState>>, body: Bytes) -> Response {
    let message = match serde_json::from_slice::<Value>(&body) {
        Ok(message @ Value::Object(_)) => message,
        _ => return bad_request("expected a JSON-RPC message (an object)"),
    };
    let data: Arc<str> = message.to_string().into();
    let mut log = inner.acp.lock().expect("not poisoned");
    log.messages.push(data.clone());
    let id = log.messages.len();
    let _ = inner.acp_events.send((id, data));
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
pub(crate) async fn stream(State(inner): State<Arc<SimState>>, headers: HeaderMap) -> Response {
    let after: usize = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Subscribed under the lock: nothing falls between replay and live.
    let (replay, mut live) = {
        let log = inner.acp.lock().expect("not poisoned");
        let replay: Vec<Bytes> = (after..log.messages.len())
            .map(|i| frame(i + 1, &log.messages[i]))
            .collect();
        (replay, inner.acp_events.subscribe())
    };
    let mut generation = inner.generation.subscribe();
    generation.mark_unchanged();
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
                event = live.recv() => match event {
                    Ok((id, data)) => frame(id, &data),
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
