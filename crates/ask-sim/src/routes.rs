//! The simulated OpenCode 1.x server's HTTP handlers: the event streams,
//! the question and permission routes ask-lsp uses, and the control API.

use super::*;

pub(super) async fn event_stream(State(inner): State<Arc<SimState>>) -> Response {
    stream(inner, false)
}

pub(super) async fn global_event_stream(State(inner): State<Arc<SimState>>) -> Response {
    stream(inner, true)
}

pub(super) fn stream(inner: Arc<SimState>, global: bool) -> Response {
    if !*inner.events_up.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "restarting").into_response();
    }
    let mut events = inner.events.subscribe();
    let mut generation = inner.generation.subscribe();
    let mut stalled = inner.stalled.subscribe();
    generation.mark_unchanged();
    let directory = inner.options.directory.clone();
    let workspace = (inner.options.dialect != Dialect::V118).then_some(SIM_WORKSPACE);
    let heartbeat = inner.options.heartbeat;
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1024);
    let state = inner.clone();
    let wrap = move |directory: Option<&str>, event: &str| -> String {
        let mut wrapper = serde_json::Map::new();
        if let Some(directory) = directory {
            wrapper.insert("directory".into(), json!(directory));
            wrapper.insert("project".into(), json!("global"));
            if let Some(workspace) = workspace {
                wrapper.insert("workspace".into(), json!(workspace));
            }
        }
        // Spliced in as written: the wrapper's keys first, as OpenCode's.
        let head = Value::Object(wrapper).to_string();
        let head = head.strip_suffix('}').expect("an object");
        let comma = if head.len() > 1 { "," } else { "" };
        format!("{head}{comma}\"payload\":{event}}}")
    };
    // The frame of one outgoing item, and whether the stream ends after it.
    let frame = move |outgoing: &Outgoing| -> (Bytes, bool) {
        let (data, end) = match outgoing {
            Outgoing::Raw(raw) => return (Bytes::from(raw.clone()), false),
            Outgoing::GlobalData(data) if global => (data.clone(), false),
            Outgoing::GlobalData(_) => return (Bytes::new(), false),
            Outgoing::Event(event) if global => {
                let is_server_event = event.contains("\"type\":\"server.");
                (wrap((!is_server_event).then_some(&directory), event), false)
            }
            Outgoing::Event(event) => (event.clone(), false),
            Outgoing::Durable { sync, .. } if global => (wrap(Some(&directory), sync), false),
            Outgoing::Durable { plain, .. } => (plain.clone(), false),
            Outgoing::Disposed { event, directory } if global => {
                (wrap(Some(directory), event), false)
            }
            Outgoing::Disposed { event, .. } => (event.clone(), true),
        };
        (Bytes::from(format!("data: {data}\n\n")), end)
    };
    tokio::spawn(async move {
        let connected =
            json!({"id": "evt_connected", "type": "server.connected", "properties": {}});
        if tx
            .send(frame(&Outgoing::Event(connected.to_string())).0)
            .await
            .is_err()
        {
            return;
        }
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
        loop {
            let (bytes, end) = tokio::select! {
                _ = generation.changed() => return,
                _ = tx.closed() => return,
                _ = ticks.tick() => frame(&Outgoing::Event(json!({"id": "evt_hb", "type": "server.heartbeat", "properties": {}}).to_string())),
                event = events.recv() => match event {
                    Ok(event) => frame(&event),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("sim: a slow subscriber missed {n} events");
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if *stalled.borrow() {
                tokio::select! {
                    _ = stalled.wait_for(|s| !*s) => {}
                    _ = generation.changed() => return,
                    _ = tx.closed() => return,
                }
                continue; // what came in while stalled is lost
            }
            if bytes.is_empty() {
                continue;
            }
            if tx.send(bytes).await.is_err() {
                return;
            }
            state.sent.send_modify(|sent| *sent += 1);
            if end {
                return;
            }
        }
    });
    sse_response(rx)
}

/// An SSE response whose body is what the stream's task sends on `rx`.
pub(crate) fn sse_response(rx: tokio::sync::mpsc::Receiver<Bytes>) -> Response {
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

/// Like OpenCode's: the default instance's directory (the server's cwd there).
pub(super) async fn path(State(inner): State<Arc<SimState>>) -> Response {
    let directory = &inner.options.directory;
    axum::Json(
        json!({"home": "/home/sim", "state": directory, "config": directory,
                      "worktree": directory, "directory": directory}),
    )
    .into_response()
}

pub(super) async fn list(State(inner): State<Arc<SimState>>) -> Response {
    axum::Json(inner.pending.lock().expect("not poisoned").clone()).into_response()
}

pub(super) fn not_found(id: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"_tag": "QuestionNotFoundError", "requestID": id,
            "message": format!("Question request not found: {id}")})),
    )
        .into_response()
}

pub(crate) fn bad_request(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"name": "BadRequest", "data": {"message": message, "kind": "Payload"}})),
    )
        .into_response()
}

/// Applies the next injected fault, if any.
pub(crate) async fn fault(inner: &SimState) -> Option<Response> {
    let fault = inner.faults.lock().expect("not poisoned").pop_front()?;
    Some(match fault {
        Fault::Status500 => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"name": "UnknownError", "data": {"message": "Unexpected server error. Check server logs for details."}})),
        )
            .into_response(),
        Fault::Html => ([(header::CONTENT_TYPE, "text/html")], "<!doctype html><html></html>").into_response(),
        Fault::Hang => std::future::pending().await,
        Fault::Redirect => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, "http://127.0.0.1:9/elsewhere")],
        )
            .into_response(),
    })
}

pub(super) async fn reply(
    State(inner): State<Arc<SimState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if !id.starts_with("que") {
        return bad_request(&format!(
            "Expected a string starting with \"que\", got {id:?}"
        ));
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"name": "UnknownError"})),
        )
            .into_response();
    };
    let Some(answers) = body
        .get("answers")
        .and_then(|a| serde_json::from_value::<Vec<Vec<String>>>(a.clone()).ok())
    else {
        return bad_request("Expected QuestionAnswer at [\"answers\"]");
    };
    if let Some(response) = fault(&inner).await {
        return response;
    }
    if inner.resolve(
        Received::Reply {
            id: id.clone(),
            answers,
        },
        true,
    ) {
        axum::Json(true).into_response()
    } else {
        not_found(&id)
    }
}

pub(super) async fn reject(State(inner): State<Arc<SimState>>, Path(id): Path<String>) -> Response {
    if !id.starts_with("que") {
        return bad_request(&format!(
            "Expected a string starting with \"que\", got {id:?}"
        ));
    }
    if let Some(response) = fault(&inner).await {
        return response;
    }
    if inner.resolve(Received::Reject { id: id.clone() }, true) {
        axum::Json(true).into_response()
    } else {
        not_found(&id)
    }
}

#[derive(Deserialize)]
pub(super) struct AskBody {
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
    questions: Vec<QuestionInfo>,
}

pub(super) async fn control_ask(State(inner): State<Arc<SimState>>, body: Bytes) -> Response {
    match serde_json::from_slice::<AskBody>(&body) {
        Ok(ask) => axum::Json(inner.ask(ask.session_id.as_deref(), ask.questions)).into_response(),
        Err(e) => bad_request(&e.to_string()),
    }
}

pub(super) async fn control_answer(
    State(inner): State<Arc<SimState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let answers = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| serde_json::from_value::<Vec<Vec<String>>>(b.get("answers")?.clone()).ok());
    match answers {
        Some(answers) if inner.answer_elsewhere(&id, answers.clone()) => {
            axum::Json(true).into_response()
        }
        Some(_) => not_found(&id),
        None => bad_request("expected {\"answers\": string[][]}"),
    }
}

pub(super) async fn control_abort(
    State(inner): State<Arc<SimState>>,
    Path(session): Path<String>,
) -> Response {
    inner.abort(&session);
    axum::Json(true).into_response()
}

#[derive(Deserialize)]
pub(super) struct TitleBody {
    title: String,
}

pub(super) async fn control_title(
    State(inner): State<Arc<SimState>>,
    Path(session): Path<String>,
    body: Bytes,
) -> Response {
    match serde_json::from_slice::<TitleBody>(&body) {
        Ok(TitleBody { title }) => {
            inner.title_session(&session, &title);
            axum::Json(true).into_response()
        }
        Err(_) => bad_request("expected {\"title\": string}"),
    }
}

pub(super) async fn control_drop(State(inner): State<Arc<SimState>>) -> Response {
    inner.drop_streams();
    axum::Json(true).into_response()
}

pub(super) async fn control_log(
    State(inner): State<Arc<SimState>>,
    _headers: HeaderMap,
) -> Response {
    axum::Json(inner.log.lock().expect("not poisoned").clone()).into_response()
}
