//! The OpenCode 1.x backend: `opencode serve`'s HTTP API and event stream.
//!
//! It follows `/event` (a configured directory) or `/global/event` (every
//! directory), and resyncs from `GET /question` after every (re)connect since
//! the stream has no replay. A listed question whose session is no longer
//! busy is stale (OpenCode keeps an aborted session's question listed
//! forever; answering it reaches nobody), so it is not shown.

mod wire;

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use lru::LruCache;
use serde_json::json;

use self::wire::{OcEvent, QuestionRequest, array_items, parse_event};
use super::http::{self, Answered, Peer};
use super::stream::{Follow, follow};
use super::{Backend, BackendError, BackendEvent, EventSink, Source, Timing};
use crate::config::ServerSpec;
use crate::prompt::{Answer, Kind, Prompt, Reply};
use crate::sse::SseEvent;
use crate::text;

/// The prompt an event asks, if any (for the fuzz target).
pub(super) fn asked(data: &str, global: bool) -> Option<Prompt> {
    match parse_event(data, global).ok()?.event {
        OcEvent::Asked(prompt) => Some(prompt),
        _ => None,
    }
}

/// A directory name longer than this (from an event) is not followed.
const MAX_DIRECTORY_LEN: usize = 4096;

pub(crate) struct OpenCode {
    spec: ServerSpec,
    http: reqwest::Client,
    timing: Timing,
    peer: Peer,
    /// Directories seen on `/global/event`, resynced one by one.
    directories: Mutex<LruCache<String, ()>>,
    /// Tool calls whose question this connection has seen.
    seen_calls: Mutex<LruCache<String, ()>>,
    /// Which agent runs each session, from session events.
    agents: Mutex<LruCache<String, String>>,
    /// Ids already reported as unusable, so a resync does not repeat it.
    reported: Mutex<LruCache<String, ()>>,
}

fn lru<V>(size: usize) -> Mutex<LruCache<String, V>> {
    Mutex::new(LruCache::new(NonZeroUsize::new(size).expect("non-zero")))
}

impl OpenCode {
    pub fn new(spec: ServerSpec, timing: Timing) -> Self {
        OpenCode {
            peer: Peer {
                label: format!("OpenCode at {}", spec.url),
                expected: "an OpenCode server",
                start_hint: "is `opencode serve` running there?",
                auth_hint: "check OPENCODE_SERVER_PASSWORD / OPENCODE_SERVER_USERNAME (or password in the configuration)",
            },
            http: http::client(&timing),
            timing,
            spec,
            directories: lru(64),
            seen_calls: lru(1024),
            agents: lru(1024),
            reported: lru(1024),
        }
    }

    fn global(&self) -> bool {
        self.spec.directory.is_none()
    }

    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        directory: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(method, format!("{}{}", self.spec.url, path));
        if let Some(dir) = directory.or(self.spec.directory.as_deref()) {
            builder = builder.query(&[("directory", dir)]);
        }
        if let Some(password) = &self.spec.password {
            builder = builder.basic_auth(&self.spec.username, Some(password.expose()));
        }
        builder
    }

    /// Sends a request whose answer must be JSON.
    async fn call(&self, builder: reqwest::RequestBuilder) -> Result<Answered, BackendError> {
        let answered = self.peer.exchange(&self.timing, builder).await?;
        let is_json = serde_json::from_slice::<serde::de::IgnoredAny>(&answered.body).is_ok();
        let message = || {
            serde_json::from_slice::<serde_json::Value>(&answered.body)
                .ok()
                .and_then(|j| {
                    j.pointer("/data/message")
                        .or_else(|| j.get("message"))
                        .and_then(|m| m.as_str())
                        .map(|m| text::for_display(m, text::DISPLAY_MESSAGE_CHARS).into_owned())
                })
                .unwrap_or_default()
        };
        match answered.status {
            404 if is_json => Err(BackendError::NotFound {
                server: self.peer.label.clone(),
            }),
            400 => Err(BackendError::BadRequest {
                server: self.peer.label.clone(),
                message: message(),
            }),
            status if !is_json => Err(self.peer.not_json(status, &answered.content_type)),
            200..=299 => Ok(answered),
            status => Err(self.peer.server_error(status, message())),
        }
    }

    /// `GET /question` for one directory (or the server's default). Items
    /// that cannot be read are skipped, each alone, with one log line.
    async fn list(&self, directory: Option<&str>) -> Result<Vec<Prompt>, BackendError> {
        let answered = self
            .call(self.request(reqwest::Method::GET, "/question", directory))
            .await?;
        let text = std::str::from_utf8(&answered.body).unwrap_or("");
        let items = array_items(text).ok_or_else(|| {
            self.peer
                .server_error(answered.status, "the question list is not a list".into())
        })?;
        let mut prompts = Vec::with_capacity(items.len());
        let (mut skipped, mut first_error) = (0usize, None);
        for item in items {
            match serde_json::from_str::<QuestionRequest>(item) {
                Ok(request) => prompts.push(self.prompt(request, directory)),
                Err(e) => {
                    skipped += 1;
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(error) = first_error {
            tracing::warn!(server = %self.spec.name, "skipped {skipped} listed question(s) that could not be read; the first: {error}");
        }
        Ok(prompts)
    }

    fn prompt(&self, request: QuestionRequest, directory: Option<&str>) -> Prompt {
        let directory = directory
            .or(self.spec.directory.as_deref())
            .map(str::to_owned);
        let mut prompt = request.into_prompt(directory);
        prompt.origin.agent = self.agent(&prompt.session);
        prompt
    }

    fn agent(&self, session: &str) -> Option<String> {
        self.agents
            .lock()
            .expect("not poisoned")
            .get(session)
            .cloned()
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

    /// What is pending in one directory and still live.
    async fn live(&self, directory: Option<&str>) -> Result<Vec<Prompt>, BackendError> {
        let listed = self.list(directory).await?;
        if listed.is_empty() {
            return Ok(listed);
        }
        let Some(busy) = self.busy_sessions(directory).await else {
            return Ok(listed);
        };
        Ok(listed
            .into_iter()
            .filter(|p| {
                let live = busy.contains(&p.session);
                if !live {
                    tracing::info!(server = %self.spec.name, id = %p.id, "listed question skipped: its session is not running");
                }
                live
            })
            .collect())
    }

    /// Everything pending and live: the configured directory, or (following
    /// `/global/event`) the default instance plus every directory seen. A
    /// seen directory that fails is dropped alone.
    async fn snapshot(&self) -> Result<Vec<Prompt>, BackendError> {
        let mut all = self.live(None).await?;
        if !self.global() {
            return Ok(all);
        }
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

    fn remember_directory(&self, directory: Option<&str>) {
        if let (true, Some(dir)) = (self.global(), directory)
            && dir.len() <= MAX_DIRECTORY_LEN
        {
            self.directories
                .lock()
                .expect("not poisoned")
                .put(dir.to_owned(), ());
        }
    }

    /// A prompt whose id cannot go into a URL can be neither answered nor
    /// rejected: said once, not shown.
    fn usable(&self, prompt: &Prompt, sink: &EventSink) -> bool {
        let Err(refused) = text::url_segment(&prompt.id) else {
            return true;
        };
        if self
            .reported
            .lock()
            .expect("not poisoned")
            .put(prompt.id.chars().take(256).collect(), ())
            .is_none()
        {
            let _ = sink.send(BackendEvent::Invalid {
                error: format!("a question cannot be answered from here ({refused}); answer it in the agent's own interface"),
            });
        }
        false
    }

    async fn handle(&self, event: SseEvent, sink: &EventSink) -> bool {
        let parsed = match parse_event(&event.data, self.global()) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("skipped an undecodable event: {e}");
                return true;
            }
        };
        let directory = parsed.directory;
        let out = match parsed.event {
            OcEvent::Asked(mut prompt) => {
                if let Some(call) = &prompt.origin.tool_call {
                    self.seen_calls
                        .lock()
                        .expect("not poisoned")
                        .put(call.clone(), ());
                }
                self.remember_directory(directory.as_deref());
                if prompt.directory.is_none() {
                    prompt.directory = self.spec.directory.clone();
                }
                prompt.origin.agent = self.agent(&prompt.session);
                if !self.usable(&prompt, sink) {
                    return !sink.is_closed();
                }
                BackendEvent::Asked(prompt)
            }
            OcEvent::ToolRunning { call_id } => {
                let seen = self
                    .seen_calls
                    .lock()
                    .expect("not poisoned")
                    .put(call_id.clone(), ())
                    .is_some();
                if seen {
                    return true;
                }
                // The asked event was missed: find the request by its call.
                match self.list(directory.as_deref()).await {
                    Ok(list) => match list
                        .into_iter()
                        .find(|p| p.origin.tool_call.as_deref() == Some(call_id.as_str()))
                    {
                        Some(prompt) if self.usable(&prompt, sink) => BackendEvent::Asked(prompt),
                        _ => return true,
                    },
                    Err(e) => BackendEvent::Invalid {
                        error: format!("could not look up the question of a running tool: {e}"),
                    },
                }
            }
            OcEvent::Replied { id } => BackendEvent::ResolvedElsewhere {
                id,
                rejected: false,
            },
            OcEvent::Rejected { id } => BackendEvent::ResolvedElsewhere { id, rejected: true },
            OcEvent::ToolEnded { call_id, ok } => BackendEvent::ToolEnded { call_id, ok },
            OcEvent::SessionEnded { session } => BackendEvent::SessionEnded { session },
            OcEvent::SessionAgent { session, agent } => {
                self.agents
                    .lock()
                    .expect("not poisoned")
                    .put(session, text::one_line(&agent).into_owned());
                return true;
            }
            OcEvent::Connected | OcEvent::Heartbeat | OcEvent::Other => return true,
        };
        sink.send(out).is_ok()
    }
}

impl Follow for OpenCode {
    fn peer(&self) -> &Peer {
        &self.peer
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn subscribe(&self) -> reqwest::RequestBuilder {
        let path = if self.global() {
            "/global/event"
        } else {
            "/event"
        };
        self.request(reqwest::Method::GET, path, None)
            .header(reqwest::header::ACCEPT, "text/event-stream")
    }

    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.seen_calls.lock().expect("not poisoned").clear();
            let all = self.snapshot().await.map_err(|e| e.to_string())?;
            let mut usable = Vec::with_capacity(all.len());
            for prompt in all {
                self.remember_directory(prompt.directory.as_deref());
                if let Some(call) = &prompt.origin.tool_call {
                    self.seen_calls
                        .lock()
                        .expect("not poisoned")
                        .put(call.clone(), ());
                }
                if self.usable(&prompt, sink) {
                    usable.push(prompt);
                }
            }
            sink.send(BackendEvent::Snapshot(usable))
                .map_err(|_| "closed".to_owned())
        })
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, bool> {
        Box::pin(self.handle(event, sink))
    }
}

impl Backend for OpenCode {
    fn source(&self) -> Source {
        Source {
            backend: "opencode",
            url: self.spec.url.clone(),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let refused = |reason: &str| BackendError::Refused {
                server: self.peer.label.clone(),
                reason: reason.to_owned(),
            };
            let id = text::url_segment(&prompt.id).map_err(|e| refused(&e.to_string()))?;
            let directory = prompt.directory.as_deref();
            let request = match (&prompt.kind, reply) {
                (Kind::Questions(_), Reply::Answer(Answer::Questions(answers))) => self
                    .request(
                        reqwest::Method::POST,
                        &format!("/question/{id}/reply"),
                        directory,
                    )
                    .json(&json!({ "answers": answers })),
                (Kind::Questions(_), Reply::Reject { .. } | Reply::Cancel) => self.request(
                    reqwest::Method::POST,
                    &format!("/question/{id}/reject"),
                    directory,
                ),
                _ => return Err(refused("OpenCode 1.x asks only questions here")),
            };
            self.call(request).await.map(drop)
        })
    }

    fn still_pending<'a>(&'a self, prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        Box::pin(async move {
            let listed = self.list(prompt.directory.as_deref()).await.ok()?;
            Some(listed.iter().any(|p| p.id == prompt.id))
        })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(follow(self, sink))
    }
}
