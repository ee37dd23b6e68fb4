//! What is pending on an OpenCode server and still live: the listings
//! (`GET /question`, `GET /permission` per directory), which sessions run
//! (`GET /session/status`, `GET /session/{id}`), and the directories to
//! resync when following every directory.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use super::OpenCode;
use super::listing::{ListedKind, Listing, Skipped};
use super::wire::{PermissionRequest, array_items};
use crate::backends::net::http::{self, Answered};
use crate::backends::{BackendError, RefuseReason};
use crate::prompt::Prompt;
use crate::text;

/// How many recently updated sessions name the directories to resync at
/// start-up when following every directory.
const RECENT_SESSIONS: usize = 50;

impl OpenCode {
    /// `GET /question` for one directory (or the server's default): the
    /// questions stay text until taken ([`Listing`]).
    pub(super) async fn list(&self, directory: Option<&str>) -> Result<Listing, BackendError> {
        let path = "/question";
        let answered = self
            .peer
            .exchange(
                &self.timing,
                self.request(reqwest::Method::GET, path, directory),
            )
            .await?;
        let directory = directory
            .or(self.spec.directory.as_deref())
            .map(str::to_owned);
        let mut listing = Listing::default();
        let Answered {
            status,
            content_type,
            body,
        } = answered;
        // The usual answer, a JSON array of question requests, is read in
        // one pass, which shows it is JSON as `json_answer` would.
        // Not copied: the body is handed over whole.
        let body = match String::from_utf8(Vec::from(body)) {
            Ok(text) if (200..=299).contains(&status) && status != 204 => {
                match listing.read_questions(text, directory.clone()) {
                    Ok(()) => {
                        listing
                            .look_up_agents(|session| (self.agent(session), self.title(session)));
                        return Ok(listing);
                    }
                    Err(text) => Bytes::from(text.into_bytes()),
                }
            }
            Ok(text) => Bytes::from(text.into_bytes()),
            Err(error) => Bytes::from(error.into_bytes()),
        };
        // Anything else gets the checks every answer gets, then is read
        // item by item.
        let answered = http::json_answer(
            &self.peer,
            Answered {
                status,
                content_type,
                body,
            },
        )?;
        let text = String::from_utf8(Vec::from(answered.body)).unwrap_or_default();
        let mut skipped = Skipped::default();
        listing
            .add_questions(text, directory, &mut skipped)
            .ok_or_else(|| self.not_a_list(status, path))?;
        listing.look_up_agents(|session| (self.agent(session), self.title(session)));
        self.skipped(path, skipped);
        Ok(listing)
    }

    /// `GET /permission` for one directory (without `directory` OpenCode
    /// lists nothing, so the server's default instance has none to show).
    pub(super) async fn list_permissions(
        &self,
        directory: Option<&str>,
    ) -> Result<Vec<Prompt>, BackendError> {
        let path = "/permission";
        let answered = self
            .call(self.request(reqwest::Method::GET, path, directory))
            .await?;
        let text = std::str::from_utf8(&answered.body).unwrap_or("");
        let items = array_items(text).ok_or_else(|| self.not_a_list(answered.status, path))?;
        let directory = directory
            .or(self.spec.directory.as_deref())
            .map(str::to_owned);
        let mut prompts = Vec::with_capacity(items.len());
        let mut skipped = Skipped::default();
        for item in items {
            match serde_json::from_str::<PermissionRequest>(item) {
                Ok(request) => {
                    let mut prompt = request.into_prompt(directory.clone());
                    prompt.origin.agent = self.agent(&prompt.session);
                    prompts.push(prompt);
                }
                Err(e) => skipped.add(e),
            }
        }
        self.skipped(path, skipped);
        Ok(prompts)
    }

    fn not_a_list(&self, status: u16, path: &str) -> BackendError {
        self.peer
            .server_error(status, format!("the {path} list is not a list"))
    }

    /// Items that cannot be read are skipped, each alone, with one log line.
    pub(super) fn skipped(&self, path: &str, skipped: Skipped) {
        if let Some(error) = skipped.first {
            let skipped = skipped.count;
            // serde quotes the value it refused: the server's text.
            let error =
                text::for_display(&error.to_string(), text::DISPLAY_MESSAGE_CHARS).into_owned();
            tracing::warn!(server = %self.spec.name, "skipped {skipped} item(s) of {path} that could not be read; the first: {error}");
        }
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
                reason: RefuseReason::SessionUnconfirmed,
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
    /// run its command (as 1.18.33 does; `tests/it/permissions.rs`).
    async fn live(&self, directory: Option<&str>) -> Result<Listing, BackendError> {
        let mut listed = self.live_classic(directory).await?;
        // The new engine lists only what still waits (an interrupted run's
        // prompts leave its listing), so nothing is filtered.
        listed.add_built(self.list_next(directory).await);
        Ok(listed)
    }

    /// [`OpenCode::live`] for the classic engine.
    async fn live_classic(&self, directory: Option<&str>) -> Result<Listing, BackendError> {
        let mut listed = self.list(directory).await?;
        // Without a directory OpenCode lists no permissions: skip the call.
        if directory.or(self.spec.directory.as_deref()).is_some() {
            listed.add_built(self.list_permissions(directory).await?);
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
        let asked: Vec<String> = listed
            .iter()
            .filter(|p| {
                p.kind == ListedKind::Permission
                    && busy.as_ref().is_some_and(|b| b.contains(p.session))
            })
            .map(|p| p.session.to_owned())
            .collect();
        let mut exists: HashMap<String, bool> = HashMap::new();
        for session in asked {
            if let Entry::Vacant(unknown) = exists.entry(session) {
                let found = self.session_exists(unknown.key(), directory).await;
                unknown.insert(found == Some(true));
            }
        }
        let mut stale = Vec::new();
        listed.retain(|p| {
            let live = match (&busy, p.kind) {
                (Some(busy), ListedKind::Questions) => busy.contains(p.session),
                (Some(_), ListedKind::Permission) => exists.get(p.session) == Some(&true),
                (None, kind) => kind == ListedKind::Questions,
                // OpenCode 1.x lists no forms.
                (Some(_), _) => false,
            };
            if !live {
                stale.push(p.id.to_owned());
                let id = text::for_display(p.id, text::DISPLAY_ID_CHARS);
                tracing::info!(server = %self.spec.name, %id, kind = ?p.kind, "listed prompt skipped: its session is not running");
            }
            live
        });
        listed.stale.extend(stale);
        Ok(listed)
    }

    /// Everything pending and live: the configured directory, or (following
    /// `/global/event`) the default instance plus every directory seen. A
    /// seen directory that fails is dropped alone.
    pub(super) async fn snapshot(&self) -> Result<Listing, BackendError> {
        self.new_connection();
        let mut all = self.live(None).await?;
        if !self.global() {
            return Ok(all);
        }
        if !all.is_empty()
            && let Some(directory) = self.default_directory().await
        {
            all.set_directory(&directory);
        }
        self.discover_directories().await;
        let seen: Vec<String> = {
            let dirs = self.directories.lock().expect("not poisoned");
            dirs.iter().map(|(d, _)| d.clone()).collect()
        };
        let mut ids: HashSet<String> = all.iter().map(|p| p.id.to_owned()).collect();
        for dir in seen {
            match self.live(Some(&dir)).await {
                Ok(mut prompts) => {
                    prompts.retain(|p| ids.insert(p.id.to_owned()));
                    all.append(prompts);
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
