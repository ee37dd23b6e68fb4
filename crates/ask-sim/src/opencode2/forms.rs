//! The simulated OpenCode 2 server's form routes, per generation
//! ([`Profile`]): listings, the form and its state, reply, cancel; and
//! upstream's checks of an answer.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::{Value, json};

use super::{Form, Profile, Received, Shared, State2, error, located, location, session_not_found};
use std::sync::Arc;

/// One form route: path, handler, and the methods `/doc` names.
pub(super) type FormRoute = (
    &'static str,
    MethodRouter<Arc<State2>>,
    &'static [&'static str],
);

/// The form routes a generation serves.
pub(super) fn routes(profile: Profile) -> Vec<FormRoute> {
    const FORM: &str = "/api/session/{session}/form/{id}";
    let mut routes: Vec<FormRoute> = vec![
        (
            "/api/session/{session}/form",
            get(list_session_forms),
            &["get"],
        ),
        (
            "/api/session/{session}/form/{id}/reply",
            post(reply_form),
            &["post"],
        ),
    ];
    match profile {
        Profile::Current => routes.extend([
            ("/api/form", get(list_location_forms), &["get"][..]),
            (FORM, get(get_form).delete(delete_form), &["get", "delete"]),
        ]),
        Profile::Requests | Profile::Unlisted => {
            routes.extend([
                (FORM, get(get_form), &["get"][..]),
                (
                    "/api/session/{session}/form/{id}/state",
                    get(form_state),
                    &["get"],
                ),
                (
                    "/api/session/{session}/form/{id}/cancel",
                    post(cancel_form),
                    &["post"],
                ),
            ]);
            if profile == Profile::Requests {
                routes.push(("/api/form/request", get(list_location_forms), &["get"]));
            }
        }
    }
    routes
}

/// An OpenAPI description naming the form routes and the others served,
/// path parameters spelled as upstream's (`{sessionID}`, `{formID}`).
pub(super) fn openapi(routes: &[FormRoute]) -> Value {
    let mut paths = serde_json::Map::new();
    for (path, _, methods) in routes {
        let path = path
            .replace("{session}", "{sessionID}")
            .replace("{id}", "{formID}");
        let methods: serde_json::Map<String, Value> = methods
            .iter()
            .map(|m| ((*m).to_owned(), json!({})))
            .collect();
        paths.insert(path, Value::Object(methods));
    }
    for path in ["/api/info", "/api/event", "/api/permission/request"] {
        paths.insert(path.into(), json!({"get": {}}));
    }
    json!({"openapi": "3.1.0", "info": {"title": "ask-sim"}, "paths": paths})
}

pub(super) async fn list_location_forms(
    State(inner): Shared,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let directory = location(&inner, &query);
    let forms = inner.forms.lock().expect("not poisoned");
    let data = forms
        .iter()
        .filter(|f| f.state["status"] == "pending" && f.directory == directory)
        .map(|f| f.info.clone())
        .collect();
    located(&directory, data)
}

pub(super) async fn list_session_forms(
    State(inner): Shared,
    Path(session): Path<String>,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let forms = inner.forms.lock().expect("not poisoned");
    let data: Vec<Value> = forms
        .iter()
        .filter(|f| f.state["status"] == "pending" && f.info["sessionID"] == session.as_str())
        .map(|f| f.info.clone())
        .collect();
    axum::Json(json!({"data": data})).into_response()
}

fn form_not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "FormNotFoundError",
        format!("Form not found: {id}"),
    )
}

/// A form of a session, read with `pick`.
fn with_form(inner: &State2, session: &str, id: &str, pick: impl Fn(&Form) -> Value) -> Response {
    if !inner.session_known(session) {
        return session_not_found(session);
    }
    let forms = inner.forms.lock().expect("not poisoned");
    match forms
        .iter()
        .find(|f| f.info["id"] == id && f.info["sessionID"] == session)
    {
        Some(form) => axum::Json(json!({"data": pick(form)})).into_response(),
        None => form_not_found(id),
    }
}

/// `Form.Info`, or in the current generation `Form.Detail`: the form with
/// its state.
pub(super) async fn get_form(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
) -> Response {
    let detail = inner.options.profile == Profile::Current;
    with_form(&inner, &session, &id, |f| match detail {
        true => {
            let mut detail = f.info.clone();
            detail["state"] = f.state.clone();
            detail
        }
        false => f.info.clone(),
    })
}

pub(super) async fn form_state(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
) -> Response {
    with_form(&inner, &session, &id, |f| f.state.clone())
}

pub(super) fn settled(id: &str, result: Result<(), String>) -> Response {
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(message) if message.starts_with("Form not found") => form_not_found(id),
        Err(message) if message.starts_with("Form already settled") => {
            error(StatusCode::CONFLICT, "FormAlreadySettledError", message)
        }
        Err(message) => error(StatusCode::BAD_REQUEST, "FormInvalidAnswerError", message),
    }
}

pub(super) async fn reply_form(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let Some(answer) = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b.get("answer").cloned())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidRequestError",
            "Expected Form.Reply {answer}".into(),
        );
    };
    if inner.take_reply_fault() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailableError",
            "Service unavailable".into(),
        );
    }
    let result = inner.settle(&id, Some(&session), Some(answer.clone()), None);
    if result.is_ok() {
        inner
            .log
            .lock()
            .expect("not poisoned")
            .push(Received::FormReply {
                id: id.clone(),
                session: session.clone(),
                answer,
            });
    }
    settled(&id, result)
}

/// The current generation's cancel: `DELETE …/form/{id}?message=…`, the
/// message the model reads (`groups/session.ts` @ 01fd0c85).
pub(super) async fn delete_form(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let message = query.get("message").cloned();
    let result = inner.settle(&id, Some(&session), None, message.clone());
    if result.is_ok() {
        inner
            .log
            .lock()
            .expect("not poisoned")
            .push(Received::FormDelete {
                id: id.clone(),
                session: session.clone(),
                message,
            });
    }
    settled(&id, result)
}

/// The older generations' cancel: no body, or `{message}` (which the route
/// at 8c6ff624 does not declare).
pub(super) async fn cancel_form(
    State(inner): Shared,
    Path((session, id)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    if !inner.session_known(&session) {
        return session_not_found(&session);
    }
    let message = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b.get("message")?.as_str().map(str::to_owned));
    let result = inner.settle(&id, Some(&session), None, message.clone());
    if result.is_ok() {
        inner
            .log
            .lock()
            .expect("not poisoned")
            .push(Received::FormCancel {
                id: id.clone(),
                session: session.clone(),
                message,
            });
    }
    settled(&id, result)
}

/// Upstream's `validateAnswer` (`packages/core/src/form.ts`), the parts a
/// client can get wrong: unknown or inactive keys, missing required fields,
/// value types, closed options; `Err` in upstream's words.
pub(super) fn validate_answer(form: &Value, answer: &Value) -> Result<(), String> {
    let answer = answer.as_object().ok_or("Expected an object answer")?;
    if form["mode"] == "url" {
        return match answer.is_empty() {
            true => Ok(()),
            false => Err("URL forms must be answered with an empty answer".into()),
        };
    }
    let fields = form["fields"].as_array().cloned().unwrap_or_default();
    for key in answer.keys() {
        if !fields.iter().any(|f| f["key"] == key.as_str()) {
            return Err(format!("Unknown form field: {key}"));
        }
    }
    for field in &fields {
        let key = field["key"].as_str().unwrap_or("");
        if field["type"] == "external" {
            if answer.get(key) != Some(&Value::Bool(true)) {
                return Err(format!("External form field must be acknowledged: {key}"));
            }
            continue;
        }
        // A list of conditions, or one (the oldest generation, @23699db).
        let when = match &field["when"] {
            Value::Array(when) => when.clone(),
            Value::Object(_) => vec![field["when"].clone()],
            _ => Vec::new(),
        };
        let active = {
            when.iter().all(|w| {
                let Some(value) = answer.get(w["key"].as_str().unwrap_or("")) else {
                    return false;
                };
                let hit = match value {
                    Value::Array(items) => items.contains(&w["value"]),
                    other => *other == w["value"],
                };
                (w["op"] == "eq") == hit
            })
        };
        let Some(value) = answer.get(key) else {
            if field["required"] == true && active {
                return Err(format!("Missing required form field: {key}"));
            }
            continue;
        };
        if !active {
            return Err(format!("Form field is not active: {key}"));
        }
        let closed = field["custom"] != true;
        let in_options = |v: &Value| {
            field["options"]
                .as_array()
                .is_some_and(|o| o.iter().any(|o| o["value"] == *v))
        };
        let ok = match field["type"].as_str() {
            Some("string") => {
                value.is_string() && !(closed && field["options"].is_array() && !in_options(value))
            }
            Some("number") => value.is_number(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("boolean") => value.is_boolean(),
            Some("multiselect") => value.as_array().is_some_and(|items| {
                items
                    .iter()
                    .all(|i| i.is_string() && (!closed || in_options(i)))
            }),
            _ => false,
        };
        if !ok {
            return Err(format!("Invalid value for form field: {key}"));
        }
    }
    Ok(())
}
