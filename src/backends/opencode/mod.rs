//! The OpenCode 1.x backend: `opencode serve`'s HTTP API and event stream.
//!
//! It follows `/event` (a configured directory) or `/global/event` (every
//! directory), and resyncs from `GET /question` and `GET /permission` (per
//! directory: without one OpenCode lists no permissions) after every
//! (re)connect since the stream has no replay. A listed prompt whose session
//! is no longer busy is stale (OpenCode keeps an aborted session's prompts
//! listed forever; answering a question reaches nobody), so it is not shown.
//! Permissions get more care: answering a deleted session's permission
//! `once` still runs its command, so a permission is shown and allowed only
//! when the server confirms its session runs and exists.
//!
//! It also reads the 1.x line as SDK 1.19 describes it (docs/opencode.md):
//! `question.v2.*`, `sync` envelopes, `workspace` beside `directory`, and the
//! dispose events, after which it reconnects and lists again.
//!
//! 1.18.34's second session engine (`next.rs`) asks on the same streams
//! under `question.v2.*` / `permission.v2.*` and is answered and listed on
//! its own `/api/…` routes, taken from the server's `/doc`.

pub(crate) mod discovery;
mod listing;
mod next;
mod pending;
pub(crate) mod prefilter;
mod titles;
mod wire;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use lru::LruCache;
use serde_json::json;

use self::next::{Engine, Routes};
use self::wire::{OcEvent, parse_event};
use super::net::http::{self, Answered, Peer};
use super::net::stream::{Flow, Follow};
use super::shared::permission_reply;
use super::{
    AnswerIn, BackendError, BackendEvent, EventSink, Expected, Problem, RefuseReason, ServerLabel,
    Snapshot, Timing, id_within,
};
use crate::backends::net::sse::SseEvent;
use crate::prompt::{Answer, Kind, KindName, Prompt, Reply, SessionTitle};
use crate::settings::ServerSpec;
use crate::text;

/// The prompt an event asks, if any (for the fuzz target).
pub(crate) fn asked(data: &str, global: bool) -> Option<Prompt> {
    match parse_event(data, global).ok()?.event {
        OcEvent::Asked(prompt) | OcEvent::AskedNext(prompt) => Some(prompt),
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
    /// Directories seen on `/global/event`, resynced one by one, each with
    /// the workspace the server named for it (SDK 1.19), which requests for
    /// that directory carry beside it.
    directories: Mutex<LruCache<String, Option<String>>>,
    /// Tool calls whose question this connection has seen.
    seen_calls: Mutex<SeenCalls>,
    /// Which agent runs each session, from session events.
    agents: Mutex<LruCache<String, String>>,
    /// Each session's title, from the same events (shown and bounded), or
    /// asked for at connect (`None`: it has none).
    titles: Mutex<LruCache<String, Option<SessionTitle>>>,
    /// Ids already reported as unusable, so a resync does not repeat it.
    reported: Mutex<LruCache<String, ()>>,
    /// Which engine asked each prompt (1.18.34 runs two), for its routes.
    engines: Mutex<LruCache<String, Engine>>,
    /// The new engine's routes, from `/doc` at its first event.
    routes: Arc<Mutex<Routes>>,
}

/// Tool calls seen, each with the resync listing it was last seen in (or
/// after): a resync leaves exactly the listed ones, without copying again
/// those it already has.
struct SeenCalls {
    calls: LruCache<Box<str>, u32>,
    listing: u32,
}

impl SeenCalls {
    /// Whether `call` was seen before. An over-long call is never remembered
    /// and counts as seen, so it never costs a listing (a prompt carrying it
    /// is refused anyway).
    fn put(&mut self, call: &str) -> bool {
        if !id_within(call) {
            return true;
        }
        match self.calls.get_mut(call) {
            Some(listing) => {
                *listing = self.listing;
                true
            }
            None => {
                self.calls.put(call.into(), self.listing);
                false
            }
        }
    }

    /// A resync starts: what it lists is seen again, [`SeenCalls::put`].
    fn start_listing(&mut self) {
        self.listing = self.listing.wrapping_add(1);
    }

    /// The resync's listing is read: calls it did not list are forgotten.
    /// They are the least recently seen.
    fn end_listing(&mut self) {
        while self
            .calls
            .peek_lru()
            .is_some_and(|(_, listing)| *listing != self.listing)
        {
            self.calls.pop_lru();
        }
    }
}

/// Allocated as it fills, not up front: most servers never need the room.
fn lru<V>(size: usize) -> Mutex<LruCache<String, V>> {
    Mutex::new(LruCache::sparse(NonZeroUsize::new(size).expect("non-zero")))
}

impl OpenCode {
    pub fn new(spec: ServerSpec, timing: Timing) -> Self {
        OpenCode {
            peer: Peer {
                label: ServerLabel::OpenCode {
                    url: spec.url.clone(),
                },
                expected: Expected::OpenCode,
            },
            http: http::client(&timing),
            timing,
            spec,
            directories: lru(64),
            // Every pending question's call: a running tool part whose call
            // fell out of this would cost a full listing.
            seen_calls: Mutex::new(SeenCalls {
                calls: LruCache::sparse(
                    NonZeroUsize::new(crate::prompt::limits::PENDING).expect("non-zero"),
                ),
                listing: 0,
            }),
            agents: lru(1024),
            titles: lru(1024),
            reported: lru(1024),
            // Every pending prompt's, and room for the classic twins.
            engines: lru(2 * crate::prompt::limits::PENDING),
            routes: Arc::default(),
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
            if let Some(workspace) = self.workspace(dir) {
                builder = builder.query(&[("workspace", workspace)]);
            }
        }
        if let Some(password) = &self.spec.password {
            builder = builder.basic_auth(&self.spec.username, Some(password.expose()));
        }
        builder
    }

    /// Sends a request whose answer must be JSON.
    async fn call(&self, builder: reqwest::RequestBuilder) -> Result<Answered, BackendError> {
        http::json_answer(&self.peer, self.peer.exchange(&self.timing, builder).await?)
    }

    fn agent(&self, session: &str) -> Option<String> {
        self.agents
            .lock()
            .expect("not poisoned")
            .get(session)
            .cloned()
    }

    fn title(&self, session: &str) -> Option<SessionTitle> {
        self.titles
            .lock()
            .expect("not poisoned")
            .get(session)
            .cloned()
            .flatten()
    }

    /// Remembers a directory to resync, and its workspace when the server
    /// names one (a directory seen without one keeps what was named before).
    fn remember_directory(&self, directory: Option<&str>, workspace: Option<&str>) {
        let workspace = workspace.filter(|w| w.len() <= MAX_DIRECTORY_LEN);
        if let (true, Some(dir)) = (self.global(), directory)
            && dir.len() <= MAX_DIRECTORY_LEN
        {
            let mut directories = self.directories.lock().expect("not poisoned");
            let known = directories.get_or_insert_mut(dir.to_owned(), || None);
            if let Some(workspace) = workspace {
                *known = Some(workspace.to_owned());
            }
        }
    }

    /// The workspace the server named for a directory.
    fn workspace(&self, directory: &str) -> Option<String> {
        self.directories
            .lock()
            .expect("not poisoned")
            .peek(directory)
            .cloned()
            .flatten()
    }

    /// A prompt whose id cannot go into a URL can be neither answered nor
    /// rejected: said once, not shown.
    fn usable(&self, id: &str, kind: KindName, sink: &EventSink) -> bool {
        let Err(refused) = text::url_segment(id) else {
            return true;
        };
        if self
            .reported
            .lock()
            .expect("not poisoned")
            .put(id.chars().take(256).collect(), ())
            .is_none()
        {
            let _ = sink.send(BackendEvent::Problem(Problem::CannotAnswer {
                kind,
                refused,
                answer_in: AnswerIn::AgentsOwnInterface,
            }));
        }
        false
    }

    async fn handle(&self, event: SseEvent, sink: &EventSink) -> Flow {
        let parsed = match parse_event(&event.data, self.global()) {
            Ok(parsed) => parsed,
            Err(e) => {
                // serde quotes the value it refused: the server's text.
                let e = text::for_display(&e.to_string(), text::DISPLAY_MESSAGE_CHARS).into_owned();
                tracing::warn!("skipped an undecodable event: {e}");
                return Flow::Continue;
            }
        };
        let directory = parsed.directory;
        let workspace = parsed.workspace;
        let (event, engine) = match parsed.event {
            OcEvent::AskedNext(prompt) => (OcEvent::Asked(prompt), Engine::Next),
            event => (event, Engine::Classic),
        };
        let out = match event {
            OcEvent::Asked(mut prompt) => {
                if let Some(call) = &prompt.origin.tool_call {
                    self.seen_calls.lock().expect("not poisoned").put(call);
                }
                self.remember_directory(directory.as_deref(), workspace.as_deref());
                if prompt.directory.is_none() {
                    prompt.directory = self.spec.directory.clone();
                }
                prompt.origin.agent = self.agent(&prompt.session);
                prompt.origin.session_title = self.title(&prompt.session);
                if !self.usable(&prompt.id, prompt.kind.kind_name(), sink) {
                    return Flow::while_open(!sink.is_closed());
                }
                let engine = match engine {
                    Engine::Classic => Engine::Classic,
                    _ => {
                        self.learn_routes().await;
                        self.v2_engine(&prompt.kind)
                    }
                };
                self.note_engine(&prompt.id, engine);
                if engine == Engine::Next {
                    self.check_listed(&prompt.kind, sink);
                }
                BackendEvent::Asked(prompt)
            }
            OcEvent::ToolRunning { call_id } => {
                let seen = self.seen_calls.lock().expect("not poisoned").put(&call_id);
                if seen {
                    return Flow::Continue;
                }
                // The asked event was missed: find the request by its call.
                match self.list(directory.as_deref()).await {
                    Ok(list) => match list.take_by_call(&call_id) {
                        Some(prompt) if self.usable(&prompt.id, prompt.kind.kind_name(), sink) => {
                            BackendEvent::Asked(prompt)
                        }
                        _ => return Flow::Continue,
                    },
                    Err(e) => BackendEvent::Problem(Problem::ToolLookup(e)),
                }
            }
            OcEvent::Replied { id } => BackendEvent::ResolvedElsewhere {
                id,
                rejected: false,
            },
            OcEvent::Rejected { id } => BackendEvent::ResolvedElsewhere { id, rejected: true },
            // Also how the server's own cascades arrive: a reject rejects the
            // session's other permissions, an always approves the covered ones.
            OcEvent::PermissionReplied { id, rejected } => {
                BackendEvent::ResolvedElsewhere { id, rejected }
            }
            OcEvent::ToolEnded { call_id, ok } => BackendEvent::ToolEnded { call_id, ok },
            OcEvent::SessionEnded { session } => BackendEvent::SessionEnded { session },
            OcEvent::Session {
                session,
                agent,
                title,
            } => {
                if !id_within(&session) {
                    return Flow::Continue;
                }
                if let Some(agent) = agent.filter(|agent| id_within(agent)) {
                    self.agents
                        .lock()
                        .expect("not poisoned")
                        .put(session.clone(), text::one_line(&agent).into_owned());
                }
                // A prompt shown already keeps the title it was shown with;
                // the session's next prompts show the new one.
                if let Some(title) = title {
                    let mut titles = self.titles.lock().expect("not poisoned");
                    titles.put(session, Some(title));
                }
                return Flow::Continue;
            }
            OcEvent::Disposed => {
                tracing::info!(server = %self.spec.name, directory = directory.as_deref().unwrap_or(""), "the server disposed an instance; reconnecting to list what is still pending");
                return Flow::Reconnect;
            }
            OcEvent::AskedNext(_) | OcEvent::Connected | OcEvent::Heartbeat | OcEvent::Other => {
                return Flow::Continue;
            }
        };
        Flow::while_open(sink.send(out).is_ok())
    }
}

impl Follow for OpenCode {
    fn peer(&self) -> &Peer {
        &self.peer
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn relevant(&self) -> fn(&[u8]) -> bool {
        if self.global() {
            prefilter::opencode_global_event
        } else {
            prefilter::opencode_event
        }
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

    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            self.seen_calls
                .lock()
                .expect("not poisoned")
                .start_listing();
            let mut all = match self.snapshot().await {
                Ok(all) => all,
                Err(e) => {
                    // Nothing of this connection seen yet.
                    self.seen_calls.lock().expect("not poisoned").calls.clear();
                    return Err(e);
                }
            };
            self.look_up_titles(&mut all).await;
            {
                let mut seen = self.seen_calls.lock().expect("not poisoned");
                all.retain(|listed| {
                    self.remember_directory(listed.directory, None);
                    if let Some(call) = listed.call {
                        seen.put(call);
                    }
                    // Nothing is taken yet while the resync sorts the listing.
                    listed
                        .kind
                        .kind_name()
                        .is_some_and(|kind| self.usable(listed.id, kind, sink))
                });
                seen.end_listing();
            }
            sink.send(BackendEvent::Snapshot(Snapshot::new(all)))
                .map_err(|_| BackendError::Closed)
        })
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow> {
        Box::pin(self.handle(event, sink))
    }
}

/// What `OpenCodeAny` (backends/generation.rs) sends through while 1.x
/// runs at the URL; OpenCode 2's adapter has the same two.
impl OpenCode {
    /// Sends a decision on a prompt this backend produced.
    pub(super) async fn send(&self, prompt: &Prompt, reply: &Reply) -> Result<(), BackendError> {
        {
            let refused = |reason: RefuseReason| BackendError::Refused {
                server: self.peer.label.clone(),
                reason,
            };
            let engine = self.engine(&prompt.id);
            if engine == Engine::Next {
                return self.send_next(prompt, reply).await;
            }
            let id = text::url_segment(&prompt.id).map_err(|e| refused(RefuseReason::BadId(e)))?;
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
                (Kind::Permission(permission), reply) => {
                    let (body, allows) = permission_reply(permission, reply).map_err(refused)?;
                    if allows {
                        match self.check_session_running(prompt).await {
                            Err(BackendError::NotFound { .. }) if engine == Engine::Either => {
                                return self.send_next(prompt, reply).await;
                            }
                            checked => checked?,
                        }
                    }
                    self.request(
                        reqwest::Method::POST,
                        &format!("/permission/{id}/reply"),
                        directory,
                    )
                    .json(&body)
                }
                _ => return Err(refused(RefuseReason::NotAnAnswerToQuestions)),
            };
            // Not applied there: the new engine's route is tried (at most one
            // of them knows the id).
            match (engine, self.call(request).await) {
                (Engine::Either, Err(BackendError::NotFound { .. })) => {
                    self.send_next(prompt, reply).await
                }
                (_, sent) => sent.map(drop),
            }
        }
    }

    /// Whether the server still lists the prompt; `None`: cannot tell.
    pub(super) async fn still_pending(&self, prompt: &Prompt) -> Option<bool> {
        {
            match self.engine(&prompt.id) {
                Engine::Next => return self.still_pending_next(prompt).await,
                // Which engine has it is not known.
                Engine::Either => return None,
                Engine::Classic => {}
            }
            let directory = prompt.directory.as_deref();
            Some(match prompt.kind {
                Kind::Questions(_) => self
                    .list(directory)
                    .await
                    .ok()?
                    .iter()
                    .any(|p| p.id == prompt.id),
                Kind::Permission(_) => self
                    .list_permissions(directory)
                    .await
                    .ok()?
                    .iter()
                    .any(|p| p.id == prompt.id),
                Kind::Form(_) => return None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resync_leaves_exactly_the_calls_it_listed() {
        let mut seen = SeenCalls {
            calls: LruCache::new(NonZeroUsize::new(3).unwrap()),
            listing: 0,
        };
        assert!(!seen.put("a") && !seen.put("b") && !seen.put("c"));
        seen.start_listing();
        assert!(seen.put("b"), "seen before");
        assert!(!seen.put("d"), "new: the least recent (a) makes room");
        assert!(seen.put("b"), "listed twice");
        seen.end_listing();
        let mut calls: Vec<&str> = seen.calls.iter().map(|(call, _)| &**call).collect();
        calls.sort_unstable();
        assert_eq!(calls, ["b", "d"]);
        // An event's call after the listing stays until the next one.
        assert!(!seen.put("e"));
        seen.start_listing();
        seen.end_listing();
        assert_eq!(seen.calls.len(), 0);
    }

    #[test]
    fn an_over_long_call_is_never_remembered_and_counts_as_seen() {
        let mut seen = SeenCalls {
            calls: LruCache::new(NonZeroUsize::new(3).unwrap()),
            listing: 0,
        };
        let long = "c".repeat(crate::prompt::limits::ID_LEN + 1);
        assert!(seen.put(&long), "never looked up");
        assert!(seen.put(&long));
        assert_eq!(seen.calls.len(), 0);
    }
}
