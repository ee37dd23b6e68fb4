//! Permissions as OpenCode 1.18.33 handles them
//! (captures/opencode-1.18.33/permission.txt): `permission.asked` with the
//! whole request, `GET /permission?directory=` (nothing without a
//! directory, or for another one), `POST /permission/{id}/reply?directory=`
//! with `{"reply": "once" | "always" | "reject", "message"?}`. A `reject`
//! rejects the session's other pending permissions too, an `always`
//! approves every pending permission its patterns cover, each with its own
//! `permission.replied`; a reject without a message ends the turn
//! (`session.idle`). A deleted or aborted session's permission stays listed.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Received, SimState, bad_request, fault};

/// A permission request as OpenCode lists and announces it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// The tool: `bash`, `edit`, …
    pub permission: String,
    pub patterns: Vec<String>,
    /// `command` for bash; `filepath` and `diff` for edits.
    pub metadata: Value,
    /// What an `always` reply approves from then on (`echo *`).
    pub always: Vec<String>,
    pub tool: crate::ToolRef,
}

/// What a test asks for: the session (new if absent) and the request body.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PermissionAsk {
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    pub permission: String,
    pub patterns: Vec<String>,
    #[serde(default)]
    pub metadata: Value,
    #[serde(default)]
    pub always: Vec<String>,
}

impl PermissionAsk {
    /// A bash permission the way OpenCode builds it for a one-part command.
    pub fn bash(command: &str) -> PermissionAsk {
        PermissionAsk {
            session_id: None,
            permission: "bash".into(),
            patterns: vec![command.into()],
            metadata: json!({"command": command}),
            always: vec![format!(
                "{} *",
                command.split_whitespace().next().unwrap_or(command)
            )],
        }
    }
}

/// OpenCode's wildcard: `*` matches any run of characters, the rest literally.
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

impl SimState {
    /// Asks a permission as a tool call of the agent would: tool part
    /// `pending`, `permission.asked`, tool part `running`. `None` when an
    /// earlier `always` covers it (approved with no event, as OpenCode does).
    pub fn ask_permission(&self, ask: PermissionAsk) -> Option<PermissionRequest> {
        let covered = {
            let approved = self.approved.lock().expect("not poisoned");
            !ask.patterns.is_empty()
                && ask
                    .patterns
                    .iter()
                    .all(|p| approved.iter().any(|a| wildcard(a, p)))
        };
        if covered {
            return None;
        }
        let session_id = ask.session_id.unwrap_or_else(|| self.next("ses"));
        self.ended.lock().expect("not poisoned").remove(&session_id);
        let request = PermissionRequest {
            id: self.next("per"),
            session_id,
            permission: ask.permission,
            patterns: ask.patterns,
            metadata: ask.metadata,
            always: ask.always,
            tool: crate::ToolRef {
                message_id: self.next("msg"),
                call_id: self.next("call"),
            },
        };
        self.permissions
            .lock()
            .expect("not poisoned")
            .push(request.clone());
        self.emit(
            "message.part.updated",
            self.permission_part(&request, "pending"),
        );
        self.emit(
            "permission.asked",
            serde_json::to_value(&request).expect("serializable"),
        );
        self.emit(
            "message.part.updated",
            self.permission_part(&request, "running"),
        );
        Some(request)
    }

    pub fn pending_permissions(&self) -> Vec<PermissionRequest> {
        self.permissions.lock().expect("not poisoned").clone()
    }

    /// Deletes a session like `DELETE /session/{id}`: `session.deleted`;
    /// as on the real server its permission stays listed and its run goes
    /// on (still busy), but `GET /session/{id}` answers 404.
    pub fn delete_session(&self, session_id: &str) {
        self.deleted
            .lock()
            .expect("not poisoned")
            .insert(session_id.to_owned());
        self.emit(
            "session.deleted",
            json!({"sessionID": session_id, "info": {"id": session_id, "projectID": "global",
                "directory": self.options.directory, "title": "Sim session"}}),
        );
    }

    /// Sessions with something pending that were not aborted: what
    /// `GET /session/status` reports as busy.
    pub(crate) fn busy(&self) -> HashMap<String, Value> {
        let ended = self.ended.lock().expect("not poisoned").clone();
        let questions = self.pending.lock().expect("not poisoned");
        let permissions = self.permissions.lock().expect("not poisoned");
        questions
            .iter()
            .map(|q| q.session_id.clone())
            .chain(permissions.iter().map(|p| p.session_id.clone()))
            .filter(|s| !ended.contains(s))
            .map(|s| (s, json!({"type": "busy"})))
            .collect()
    }

    /// Applies a reply to a pending permission and everything the server
    /// resolves with it; `false` when the id is not pending.
    fn reply_permission(&self, id: &str, reply: &str, message: Option<&str>) -> bool {
        let mut permissions = self.permissions.lock().expect("not poisoned");
        let Some(index) = permissions.iter().position(|p| p.id == id) else {
            return false;
        };
        let first = permissions.remove(index);
        let mut resolved = vec![first.clone()];
        match reply {
            "reject" => {
                let (same, others) = permissions
                    .drain(..)
                    .partition(|p| p.session_id == first.session_id);
                *permissions = others;
                resolved.extend(same);
            }
            "always" => {
                let mut approved = self.approved.lock().expect("not poisoned");
                approved.extend(first.always.iter().cloned());
                let (covered, others) = permissions.drain(..).partition(|p: &PermissionRequest| {
                    p.patterns
                        .iter()
                        .all(|pattern| approved.iter().any(|a| wildcard(a, pattern)))
                });
                *permissions = others;
                resolved.extend(covered);
            }
            _ => {}
        }
        drop(permissions);
        for request in &resolved {
            self.emit(
                "permission.replied",
                json!({"sessionID": request.session_id, "requestID": request.id, "reply": reply}),
            );
            let status = if reply == "reject" {
                "error"
            } else {
                "completed"
            };
            self.emit(
                "message.part.updated",
                self.permission_part(request, status),
            );
        }
        if reply == "reject" && message.is_none() {
            self.emit("session.idle", json!({"sessionID": first.session_id}));
        }
        true
    }

    fn permission_part(&self, request: &PermissionRequest, status: &str) -> Value {
        json!({
            "sessionID": request.session_id,
            "part": {
                "id": format!("prt_{}", request.id),
                "messageID": request.tool.message_id,
                "sessionID": request.session_id,
                "type": "tool", "tool": request.permission,
                "callID": request.tool.call_id,
                "state": {"status": status, "input": request.metadata},
            },
            "time": 0,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct DirectoryQuery {
    directory: Option<String>,
}

fn not_found(id: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"_tag": "PermissionNotFoundError", "requestID": id,
            "message": format!("Permission request not found: {id}")})),
    )
        .into_response()
}

pub(crate) async fn list(
    State(inner): State<Arc<SimState>>,
    Query(query): Query<DirectoryQuery>,
) -> Response {
    // Like OpenCode: without the project's directory, nothing is listed.
    if query.directory.as_deref() != Some(inner.options.directory.as_str()) {
        return axum::Json(json!([])).into_response();
    }
    axum::Json(inner.pending_permissions()).into_response()
}

pub(crate) async fn reply(
    State(inner): State<Arc<SimState>>,
    Path(id): Path<String>,
    Query(query): Query<DirectoryQuery>,
    body: Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("Expected an object");
    };
    let reply = match body.get("reply") {
        None => return bad_request("Missing key\n  at [\"reply\"]"),
        Some(Value::String(r)) if ["once", "always", "reject"].contains(&r.as_str()) => r.clone(),
        Some(other) => {
            return bad_request(&format!(
                "Expected \"once\" | \"always\" | \"reject\", got {other}\n  at [\"reply\"]"
            ));
        }
    };
    let message = match body.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => {
            return bad_request(&format!(
                "Expected string | null, got {other}\n  at [\"message\"]"
            ));
        }
    };
    if query.directory.as_deref() != Some(inner.options.directory.as_str()) {
        return not_found(&id);
    }
    if let Some(response) = fault(&inner).await {
        return response;
    }
    if !inner.reply_permission(&id, &reply, message.as_deref()) {
        return not_found(&id);
    }
    inner
        .log
        .lock()
        .expect("not poisoned")
        .push(Received::Permission { id, reply, message });
    axum::Json(true).into_response()
}

pub(crate) async fn session_status(State(inner): State<Arc<SimState>>) -> Response {
    axum::Json(inner.busy()).into_response()
}

/// `GET /session`: the sessions with something pending, newest first, each
/// with the sim's directory (enough for a client to find the directory).
pub(crate) async fn list_sessions(State(inner): State<Arc<SimState>>) -> Response {
    let mut sessions: Vec<String> = inner.busy().into_keys().collect();
    sessions.sort_unstable_by(|a, b| b.cmp(a));
    let sessions: Vec<Value> = sessions
        .into_iter()
        .map(|id| json!({"id": id, "projectID": "global", "directory": inner.options.directory}))
        .collect();
    axum::Json(sessions).into_response()
}

pub(crate) async fn get_session(
    State(inner): State<Arc<SimState>>,
    Path(session): Path<String>,
) -> Response {
    if inner
        .deleted
        .lock()
        .expect("not poisoned")
        .contains(&session)
    {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"name": "NotFoundError",
                "data": {"message": format!("Session not found: {session}")}})),
        )
            .into_response();
    }
    let mut info = json!({"id": session, "directory": inner.options.directory});
    if let Some(title) = inner.session_title(&session) {
        info["title"] = title.into();
    }
    axum::Json(info).into_response()
}

pub(crate) async fn delete_session(
    State(inner): State<Arc<SimState>>,
    Path(session): Path<String>,
) -> Response {
    inner.delete_session(&session);
    axum::Json(true).into_response()
}

pub(crate) async fn control_ask(State(inner): State<Arc<SimState>>, body: Bytes) -> Response {
    match serde_json::from_slice::<PermissionAsk>(&body) {
        Ok(ask) => axum::Json(inner.ask_permission(ask)).into_response(),
        Err(e) => bad_request(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wildcards_match_like_opencode() {
        use super::wildcard;
        assert!(wildcard("echo *", "echo hi there"));
        assert!(!wildcard("echo *", "ls"));
        assert!(wildcard("*", "anything"));
        assert!(wildcard("git status", "git status"));
        assert!(!wildcard("git status", "git status -s"));
        assert!(wildcard("a*b*c", "a-b-c"));
    }
}
