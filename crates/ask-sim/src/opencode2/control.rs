//! The simulated OpenCode 2 server's control API (docs/sim.md): what tests
//! and editor suites use to ask, settle elsewhere, drop streams, and read
//! what clients sent.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use super::{QuestionPrompt, Shared, error};

#[derive(Deserialize)]
struct QuestionBody {
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
    questions: Vec<QuestionPrompt>,
}

pub(super) async fn question(State(inner): Shared, body: Bytes) -> Response {
    match serde_json::from_slice::<QuestionBody>(&body) {
        Ok(ask) => axum::Json(inner.ask_questions(ask.session_id.as_deref(), &ask.questions))
            .into_response(),
        Err(e) => error(
            StatusCode::BAD_REQUEST,
            "InvalidRequestError",
            e.to_string(),
        ),
    }
}

pub(super) async fn form(State(inner): Shared, body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(payload) if payload.is_object() => {
            axum::Json(inner.create_form(payload, None, true)).into_response()
        }
        _ => error(
            StatusCode::BAD_REQUEST,
            "InvalidRequestError",
            "expected a Form.CreatePayload object".into(),
        ),
    }
}

pub(super) async fn permission(State(inner): Shared, body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(request) if request.is_object() => {
            axum::Json(inner.ask_permission(request, true)).into_response()
        }
        _ => error(
            StatusCode::BAD_REQUEST,
            "InvalidRequestError",
            "expected a PermissionV2.Request object".into(),
        ),
    }
}

pub(super) async fn reply(State(inner): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let answer = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b.get("answer").cloned())
        .unwrap_or(Value::Null);
    super::forms::settled(&id, inner.reply_elsewhere(&id, answer))
}

pub(super) async fn cancel(State(inner): Shared, Path(id): Path<String>) -> Response {
    super::forms::settled(&id, inner.cancel_elsewhere(&id))
}

pub(super) async fn drop(State(inner): Shared) -> Response {
    inner.drop_streams();
    axum::Json(true).into_response()
}

pub(super) async fn log(State(inner): Shared) -> Response {
    axum::Json(inner.received()).into_response()
}
