//! What is pending on an OpenCode server and still live: the listings
//! (`GET /question`, `GET /permission` per directory), which sessions run
//! (`GET /session/status`, `GET /session/{id}`), and the directories to
//! resync when following every directory.

use std::collections::{HashMap, HashSet};

use super::OpenCode;
use super::wire::{PermissionRequest, QuestionRequest, array_items};
use crate::backends::BackendError;
use crate::prompt::{Kind, Prompt};
use crate::text;

/// How many recently updated sessions name the directories to resync at
/// start-up when following every directory.
const RECENT_SESSIONS: usize = 50;

impl OpenCode {
    /// `GET /question` for one directory (or the server's default).
    pub(super) async fn list(&self, directory: Option<&str>) -> Result<Vec<Prompt>, BackendError> {
        self.list_route("/question", directory, |item, directory| {
            serde_json::from_str::<QuestionRequest>(item).map(|r| r.into_prompt(directory))
        })
        .await
    }

    /// `GET /permission` for one directory (without `directory` OpenCode
    /// lists nothing, so the server's default instance has none to show).
    pub(super) async fn list_permissions(
        &self,
        directory: Option<&str>,
    ) -> Result<Vec<Prompt>, BackendError> {
        self.list_route("/permission", directory, |item, directory| {
            serde_json::from_str::<PermissionRequest>(item).map(|r| r.into_prompt(directory))
        })
        .await
    }

    /// One listing route. Items that cannot be read are skipped, each alone,
    /// with one log line.
    async fn list_route(
        &self,
        path: &str,
        directory: Option<&str>,
        parse: impl Fn(&str, Option<String>) -> Result<Prompt, serde_json::Error>,
    ) -> Result<Vec<Prompt>, BackendError> {
        let answered = self
            .call(self.request(reqwest::Method::GET, path, directory))
            .await?;
        let text = std::str::from_utf8(&answered.body).unwrap_or("");
        let items = array_items(text).ok_or_else(|| {
            self.peer
                .server_error(answered.status, format!("the {path} list is not a list"))
        })?;
        let directory = directory
            .or(self.spec.directory.as_deref())
            .map(str::to_owned);
        let mut prompts = Vec::with_capacity(items.len());
        let (mut skipped, mut first_error) = (0usize, None);
        for item in items {
            match parse(item, directory.clone()) {
                Ok(mut prompt) => {
                    prompt.origin.agent = self.agent(&prompt.session);
                    prompts.push(prompt);
                }
                Err(e) => {
                    skipped += 1;
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(error) = first_error {
            tracing::warn!(server = %self.spec.name, "skipped {skipped} item(s) of {path} that could not be read; the first: {error}");
        }
        Ok(prompts)
    }

    /// Sessions the server is working on in a directory (`GET /session/status`
    /// lists the busy ones); `None` when the server cannot say.
    async fn busy_sessions(&self, directory: Option<&str>) -> Option<HashSet<String>> {
        let answered = self
            .call(self.request(reqwest::Method::GET, "/session/status", directory))
            .await
            .ok()?;
        let status: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&answered.body).ok()?;
        Some(
            status
                .into_iter()
                .filter(|(_, s)| s.get("type").and_then(|t| t.as_str()) != Some("idle"))
                .map(|(id, _)| id)
                .collect(),
        )
    }

    /// Allowing a permission of a session that ended would still run its
    /// command (OpenCode keeps it listed): refused unless the server says
    /// the session is running. A missed `session.deleted` cannot slip by.
    pub(super) async fn check_session_running(&self, prompt: &Prompt) -> Result<(), BackendError> {
        let directory = prompt.directory.as_deref();
        let running = match self.busy_sessions(directory).await {
            Some(busy) if busy.contains(&prompt.session) => {
                self.session_exists(&prompt.session, directory).await
            }
            Some(_) => Some(false),
            None => None,
        };
        match running {
            Some(true) => Ok(()),
            Some(false) => Err(BackendError::NotFound {
                server: self.peer.label.clone(),
            }),
            None => Err(BackendError::Refused {
                server: self.peer.label.clone(),
                reason: "cannot confirm that the permission's session is still running".into(),
            }),
        }
    }

    /// `GET /session/{id}`: a deleted session's run goes on (it stays busy in
    /// `/session/status` while its permission waits), but the session is
    /// gone. `None` when the server cannot say.
    async fn session_exists(&self, session: &str, directory: Option<&str>) -> Option<bool> {
        let id = text::url_segment(session).ok()?;
        match self
            .call(self.request(reqwest::Method::GET, &format!("/session/{id}"), directory))
            .await
        {
            Ok(_) => Some(true),
            Err(BackendError::NotFound { .. }) => Some(false),
            Err(_) => None,
        }
    }

    /// What is pending in one directory and still live. A listed prompt
    /// whose session is not busy (aborted, idle) is stale, and so is a
    /// permission whose session was deleted. When the
    /// server cannot say which sessions are busy, questions are shown but
    /// permissions are not: answering a dead session's permission can still
    /// run its command (captures/opencode-1.18.33/permission.txt, 10).
    async fn live(&self, directory: Option<&str>) -> Result<Vec<Prompt>, BackendError> {
        let mut listed = self.list(directory).await?;
        // Without a directory OpenCode lists no permissions: skip the call.
        if directory.or(self.spec.directory.as_deref()).is_some() {
            listed.extend(self.list_permissions(directory).await?);
        }
        if listed.is_empty() {
            return Ok(listed);
        }
        let busy = self.busy_sessions(directory).await;
        if busy.is_none() {
            tracing::warn!(server = %self.spec.name, "cannot tell which sessions are running: listed permissions are not shown");
        }
        // A busy session may have been deleted: its permission would still
        // run. Asked once per session that has one.
        let mut exists: HashMap<String, bool> = HashMap::new();
        for prompt in &listed {
            if matches!(prompt.kind, Kind::Permission(_))
                && busy.as_ref().is_some_and(|b| b.contains(&prompt.session))
                && !exists.contains_key(&prompt.session)
            {
                let found = self.session_exists(&prompt.session, directory).await;
                exists.insert(prompt.session.clone(), found == Some(true));
            }
        }
        Ok(listed
            .into_iter()
            .filter(|p| {
                let live = match (&busy, &p.kind) {
                    (Some(busy), Kind::Questions(_)) => busy.contains(&p.session),
                    (Some(_), Kind::Permission(_)) => exists.get(&p.session) == Some(&true),
                    (None, kind) => matches!(kind, Kind::Questions(_)),
                    // OpenCode 1.x lists no forms.
                    (Some(_), Kind::Form(_)) => false,
                };
                if !live {
                    tracing::info!(server = %self.spec.name, id = %p.id, kind = p.kind.name(), "listed prompt skipped: its session is not running");
                }
                live
            })
            .collect())
    }

    /// Everything pending and live: the configured directory, or (following
    /// `/global/event`) the default instance plus every directory seen. A
    /// seen directory that fails is dropped alone.
    pub(super) async fn snapshot(&self) -> Result<Vec<Prompt>, BackendError> {
        let mut all = self.live(None).await?;
        if !self.global() {
            return Ok(all);
        }
        if !all.is_empty()
            && let Some(directory) = self.default_directory().await
        {
            for prompt in &mut all {
                prompt.directory = Some(directory.clone());
            }
        }
        self.discover_directories().await;
        let seen: Vec<String> = {
            let dirs = self.directories.lock().expect("not poisoned");
            dirs.iter().map(|(d, _)| d.clone()).collect()
        };
        let mut ids: HashSet<String> = all.iter().map(|p| p.id.clone()).collect();
        for dir in seen {
            match self.live(Some(&dir)).await {
                Ok(prompts) => {
                    all.extend(prompts.into_iter().filter(|p| ids.insert(p.id.clone())));
                }
                Err(error) => {
                    tracing::warn!(server = %self.spec.name, "stopped following a directory: {}", error.for_log());
                    self.directories.lock().expect("not poisoned").pop(&dir);
                }
            }
        }
        Ok(all)
    }

    /// The default instance's directory (`GET /path`), so that what it lists
    /// says which project it is; `None` when the server cannot say.
    async fn default_directory(&self) -> Option<String> {
        let answered = self
            .call(self.request(reqwest::Method::GET, "/path", None))
            .await
            .ok()?;
        let path: serde_json::Value = serde_json::from_slice(&answered.body).ok()?;
        let directory = path.get("directory")?.as_str()?;
        (directory.len() <= super::MAX_DIRECTORY_LEN).then(|| directory.to_owned())
    }

    /// Following every directory, ask-lsp learns them from events; at
    /// start-up nothing has been seen yet, and without a directory OpenCode
    /// lists no permissions. The most recently updated sessions (`GET
    /// /session` lists every directory's, newest first) name the directories
    /// where something may be pending. Best effort: a failure changes nothing.
    async fn discover_directories(&self) {
        #[derive(serde::Deserialize)]
        struct SessionDirectory {
            directory: Option<String>,
            /// SDK 1.19 (`GlobalSession.workspaceID`).
            #[serde(rename = "workspaceID")]
            workspace: Option<String>,
        }
        let request = self
            .request(reqwest::Method::GET, "/session", None)
            .query(&[("limit", RECENT_SESSIONS)]);
        let Ok(answered) = self.call(request).await else {
            return;
        };
        match serde_json::from_slice::<Vec<SessionDirectory>>(&answered.body) {
            Ok(sessions) => {
                for session in &sessions {
                    self.remember_directory(
                        session.directory.as_deref(),
                        session.workspace.as_deref(),
                    );
                }
            }
            Err(e) => tracing::debug!(server = %self.spec.name, "session list not read: {e}"),
        }
    }
}
