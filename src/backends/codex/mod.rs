//! Codex's app-server daemon, followed as one more client (docs/codex.md).
//!
//! Codex's terminal UI runs its threads on a per-user daemon
//! ([`discovery`]); any client of it, after `initialize` with
//! `experimentalApi`, hears every thread's `thread/status/changed`, and once
//! it has resumed a thread (`thread/resume`, which also replays the
//! thread's pending requests) it receives that thread's requests for a
//! person as the terminal UI does. The first response wins; the others
//! hear `serverRequest/resolved`, which withdraws the editor's prompt.
//!
//! Only the threads whose `cwd` lies in the editor's workspace are kept
//! (the others are unsubscribed at once); a request ask-lsp does not show
//! is never answered: Codex's own clients still have it.

mod discovery;
mod wire;
mod ws;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use self::discovery::Unfollowed;
use self::wire::{Asked, Expect};
use super::{Backend, BackendError, BackendEvent, EventSink, Snapshot, Source, id_within};
use crate::prompt::{Prompt, Reply, SessionTitle};
use crate::settings::{BackendKind, ServerKind, ServerSpec, UrlSource};

/// How often a missing daemon is looked for again: a stat and a refused
/// connect, cheap; a daemon started later is followed within this.
const RECHECK: Duration = Duration::from_secs(2);
/// Bound on `initialize`'s answer.
const INITIALIZE_WITHIN: Duration = Duration::from_secs(10);
/// Threads remembered at most, and requests held or open at most.
const MAX_THREADS: usize = 512;
const MAX_OPEN: usize = 1024;
/// File changes remembered for their diffs, at most.
const MAX_CHANGES: usize = 64;

/// Threads some daemon follower keeps for this process: `ask-lsp hook
/// codex` leaves their requests to it (they would be shown twice).
static FOLLOWED: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

/// Whether a daemon follower of this process receives thread `thread`'s
/// requests itself (the hook's `session_id` is the thread's id).
pub(crate) fn follows(thread: &str) -> bool {
    FOLLOWED
        .lock()
        .expect("not poisoned")
        .as_ref()
        .is_some_and(|threads| threads.contains_key(thread))
}

fn note_followed(thread: &str, followed: bool) {
    let mut all = FOLLOWED.lock().expect("not poisoned");
    let threads = all.get_or_insert_with(HashMap::new);
    match followed {
        true => *threads.entry(thread.to_owned()).or_default() += 1,
        false => {
            if let Some(count) = threads.get_mut(thread) {
                *count -= 1;
                if *count == 0 {
                    threads.remove(thread);
                }
            }
        }
    }
}

/// The follower's spec for a Codex home (`crate::app` adds one per home).
pub(crate) fn spec(name: String, home: PathBuf, roots: Vec<PathBuf>) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        url: format!("unix:{}", discovery::control_socket(&home).display()),
        directory: None,
        username: String::new(),
        password: None,
        backend: BackendKind::CodexDaemon { home, roots },
        url_source: UrlSource::BuiltIn,
    }
}

/// Whether Codex has been used from `home`: only then is its daemon looked
/// for (a person without Codex hears nothing of it).
pub(crate) fn used(home: &Path) -> bool {
    ["config.toml", "auth.json", "app-server-control"]
        .iter()
        .any(|name| home.join(name).exists())
}

pub(crate) struct CodexDaemon {
    home: PathBuf,
    roots: Vec<PathBuf>,
    state: Mutex<State>,
}

struct State {
    /// Where responses go while connected.
    outbox: Option<mpsc::UnboundedSender<String>>,
    threads: HashMap<String, Thread>,
    /// Requests shown (or to be listed), by prompt id.
    open: HashMap<String, Route>,
    /// Requests of threads whose `cwd` is not known yet, by thread.
    held: Vec<(String, Asked, Value)>,
    /// File changes' paths and diffs from `item/started`, by item id.
    changes: lru::LruCache<String, (Vec<String>, String)>,
    /// Before the first listing: what is asked is listed, not announced.
    listing: bool,
    /// What the first listing will hold.
    listed: Vec<Prompt>,
    /// The connection that ended had listed (it was followed, not refused).
    was_listed: bool,
    /// `thread/resume`s of the first listing not answered yet.
    resumes_pending: usize,
    /// Prompts shown by a connection that ended: withdrawn if no daemon
    /// takes the next connection (a daemon that stopped forgot them).
    stale: Vec<String>,
}

#[derive(Default)]
struct Thread {
    /// In the workspace (`Some(true)`), outside (`Some(false)`), not known.
    ours: Option<bool>,
    title: Option<SessionTitle>,
    /// Its working directory, the prompts' directory.
    cwd: Option<String>,
    /// A `thread/resume` is on its way or succeeded.
    resumed: bool,
    /// Counted in [`FOLLOWED`].
    noted: bool,
}

struct Route {
    rpc_id: Value,
    thread: String,
    expect: Expect,
}

impl CodexDaemon {
    pub fn new(home: PathBuf, roots: Vec<PathBuf>) -> Self {
        CodexDaemon {
            home,
            roots,
            state: Mutex::new(State {
                outbox: None,
                threads: HashMap::new(),
                open: HashMap::new(),
                held: Vec::new(),
                changes: lru::LruCache::new(
                    std::num::NonZeroUsize::new(MAX_CHANGES).expect("non-zero"),
                ),
                listing: false,
                listed: Vec::new(),
                was_listed: false,
                resumes_pending: 0,
                stale: Vec::new(),
            }),
        }
    }

    fn label(&self) -> String {
        format!("Codex daemon ({})", self.home.display())
    }

    fn in_workspace(&self, cwd: &str) -> bool {
        self.roots.is_empty()
            || self
                .roots
                .iter()
                .any(|root| Path::new(cwd).starts_with(root))
    }

    fn unfollowed(&self, why: Unfollowed) -> BackendError {
        match why {
            Unfollowed::NoDaemon => BackendError::NoCodexDaemon {
                home: self.home.display().to_string(),
            },
            Unfollowed::NotTheirs(what) => BackendError::CodexSocketRefused { what },
        }
    }

    /// Follows one connection until it ends; the error says why.
    async fn follow(&self, sink: &EventSink) -> BackendError {
        let mut stream = match discovery::connect(&self.home).await {
            Ok(stream) => stream,
            Err(why) => {
                tracing::debug!(home = %self.home.display(), "no Codex daemon followed: {why:?}");
                return self.unfollowed(why);
            }
        };
        let broken = |e: std::io::Error| BackendError::Stream {
            server: self.label(),
            message: e.to_string(),
        };
        if let Err(e) = ws::upgrade(&mut stream).await {
            return broken(e);
        }
        let (read, mut write) = stream.into_split();
        let mut reader = ws::Reader::new(read);
        let (outbox, mut outgoing) = mpsc::unbounded_channel::<String>();
        let (pongs, mut ponging) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            loop {
                let sent = tokio::select! {
                    Some(text) = outgoing.recv() => ws::send_text(&mut write, &text).await,
                    Some(payload) = ponging.recv() => ws::pong(&mut write, &payload).await,
                    else => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        });
        let _writer = AbortOnDrop(writer);
        let send = |message: Value| {
            let _ = outbox.send(message.to_string());
        };
        send(
            json!({"jsonrpc": "2.0", "id": "initialize", "method": "initialize",
                    "params": {"clientInfo": {"name": "ask-lsp", "title": "ask-lsp",
                                              "version": env!("CARGO_PKG_VERSION")},
                               "capabilities": {"experimentalApi": true}}}),
        );
        // Nothing else is read before `initialize` is answered.
        let initialized = tokio::time::timeout(INITIALIZE_WITHIN, async {
            loop {
                match reader.next().await? {
                    ws::Incoming::Text(text) => {
                        let message: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        if message.get("id") == Some(&json!("initialize")) {
                            return Ok(message.get("result").is_some());
                        }
                    }
                    ws::Incoming::Ping(payload) => {
                        let _ = pongs.send(payload);
                    }
                    ws::Incoming::Closed => return Ok::<bool, std::io::Error>(false),
                }
            }
        })
        .await;
        match initialized {
            Ok(Ok(true)) => {}
            Ok(Err(e)) => return broken(e),
            Ok(Ok(false)) | Err(_) => {
                return BackendError::Unanswered {
                    server: self.label(),
                };
            }
        }
        send(json!({"jsonrpc": "2.0", "method": "initialized"}));
        send(
            json!({"jsonrpc": "2.0", "id": "loaded", "method": "thread/loaded/list",
                    "params": {}}),
        );
        {
            let mut state = self.state.lock().expect("not poisoned");
            state.outbox = Some(outbox.clone());
            state.listing = true;
        }
        tracing::info!(home = %self.home.display(), "following the Codex daemon");
        let error = loop {
            let incoming = match reader.next().await {
                Ok(incoming) => incoming,
                Err(e) => break broken(e),
            };
            let text = match incoming {
                ws::Incoming::Text(text) => text,
                ws::Incoming::Ping(payload) => {
                    let _ = pongs.send(payload);
                    continue;
                }
                ws::Incoming::Closed => {
                    break BackendError::Stream {
                        server: self.label(),
                        message: "the daemon closed the connection".into(),
                    };
                }
            };
            let Ok(message) = serde_json::from_str::<Value>(&text) else {
                tracing::warn!("{}: skipped a message that is not JSON", self.label());
                continue;
            };
            drop(text);
            if !self.handle(message, &send, sink) {
                break BackendError::Closed;
            }
        };
        self.disconnected();
        error
    }

    /// Forgets the connection: its JSON-RPC ids die with it (a new one
    /// hears the requests again, numbered anew).
    fn disconnected(&self) {
        let mut state = self.state.lock().expect("not poisoned");
        state.outbox = None;
        let shown: Vec<String> = state.open.drain().map(|(id, _)| id).collect();
        state.stale.extend(shown);
        state.held.clear();
        state.listed.clear();
        state.listing = false;
        state.resumes_pending = 0;
        for (id, thread) in state.threads.drain() {
            if thread.noted {
                note_followed(&id, false);
            }
        }
    }

    /// Handles one message; false once nobody listens for events.
    fn handle(&self, mut message: Value, send: &impl Fn(Value), sink: &EventSink) -> bool {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let params = message
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let events = match (method.as_deref(), message.get("id").cloned()) {
            (Some(method), Some(rpc_id)) => self.request(method, rpc_id, params, send),
            (Some(method), None) => self.notification(method, &params, send),
            (None, Some(id)) => self.answered(&id, &message, send),
            (None, None) => Vec::new(),
        };
        events.into_iter().all(|event| sink.send(event).is_ok())
    }

    /// Resumes `thread` (subscribes to its requests) unless done already.
    fn resume(&self, state: &mut State, thread: &str, send: &impl Fn(Value)) {
        if !id_within(thread) {
            return;
        }
        if state.threads.len() >= MAX_THREADS && !state.threads.contains_key(thread) {
            return;
        }
        let known = state.threads.entry(thread.to_owned()).or_default();
        if known.resumed || known.ours == Some(false) {
            return;
        }
        known.resumed = true;
        send(
            json!({"jsonrpc": "2.0", "id": format!("resume:{thread}"), "method": "thread/resume",
                    "params": {"threadId": thread, "excludeTurns": true}}),
        );
    }

    fn request(
        &self,
        method: &str,
        rpc_id: Value,
        params: Value,
        send: &impl Fn(Value),
    ) -> Vec<BackendEvent> {
        let Some(thread) = wire::thread_of(&params).map(str::to_owned) else {
            return Vec::new();
        };
        let mut state = self.state.lock().expect("not poisoned");
        let changes = &mut state.changes;
        let asked = wire::asked(method, params, |_, item| changes.get(item).cloned());
        let mut asked = match asked {
            Ok(Some(asked)) => asked,
            // Not one ask-lsp shows: Codex's own clients answer it.
            Ok(None) => return Vec::new(),
            Err(e) => {
                tracing::warn!("{}: skipped a malformed {method}: {e}", self.label());
                return Vec::new();
            }
        };
        if !id_within(&asked.prompt.id) || state.open.len() + state.held.len() >= MAX_OPEN {
            return Vec::new();
        }
        match state.threads.get(&thread).and_then(|t| t.ours) {
            Some(false) => Vec::new(),
            Some(true) => {
                if let Some(known) = state.threads.get(&thread) {
                    asked.prompt.origin.session_title = known.title.clone();
                    if asked.prompt.directory.is_none() {
                        asked.prompt.directory = known.cwd.clone();
                    }
                }
                self.open(&mut state, asked, rpc_id)
            }
            None => {
                // Its thread's `cwd` comes with the resume's answer.
                self.resume(&mut state, &thread, send);
                state.held.push((thread, asked, rpc_id));
                Vec::new()
            }
        }
    }

    /// Keeps a request's route; announces it unless the first listing is
    /// still being made. A request heard twice (live, then replayed by a
    /// resume) is one prompt.
    fn open(&self, state: &mut State, asked: Asked, rpc_id: Value) -> Vec<BackendEvent> {
        let route = Route {
            rpc_id,
            thread: asked.thread,
            expect: asked.expect,
        };
        let known = state.open.insert(asked.prompt.id.clone(), route).is_some();
        match (known, state.listing) {
            (true, _) => Vec::new(),
            (false, true) => {
                state.listed.push(asked.prompt);
                Vec::new()
            }
            (false, false) => vec![BackendEvent::Asked(asked.prompt)],
        }
    }

    fn notification(
        &self,
        method: &str,
        params: &Value,
        send: &impl Fn(Value),
    ) -> Vec<BackendEvent> {
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        let mut state = self.state.lock().expect("not poisoned");
        match method {
            "thread/status/changed" => {
                let active =
                    params.pointer("/status/type").and_then(Value::as_str) == Some("active");
                if let Some(thread) = text("threadId")
                    && active
                {
                    self.resume(&mut state, thread, send);
                }
                Vec::new()
            }
            "thread/started" => {
                // A new thread of the workspace: the hook leaves its
                // requests to this follower from now on (its first turn's
                // status change resumes it; the resume replays what it asks).
                let Some(thread) = params.get("thread") else {
                    return Vec::new();
                };
                let id = thread.get("id").and_then(Value::as_str).unwrap_or_default();
                let cwd = thread
                    .get("cwd")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let ephemeral = thread.get("ephemeral").and_then(Value::as_bool) == Some(true);
                tracing::debug!(thread = id, cwd, ephemeral, "a Codex thread started");
                if ephemeral
                    || !id_within(id)
                    || !self.in_workspace(cwd)
                    || (state.threads.len() >= MAX_THREADS && !state.threads.contains_key(id))
                {
                    return Vec::new();
                }
                let known = state.threads.entry(id.to_owned()).or_default();
                known.ours = Some(true);
                known.cwd = Some(cwd.to_owned());
                known.title = thread
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(SessionTitle::new);
                if !known.noted {
                    known.noted = true;
                    note_followed(id, true);
                }
                Vec::new()
            }
            "thread/name/updated" => {
                if let Some(thread) = text("threadId")
                    && let Some(known) = state.threads.get_mut(thread)
                {
                    known.title = text("threadName").and_then(SessionTitle::new);
                }
                Vec::new()
            }
            "item/started" => {
                let item = params.get("item");
                if item.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("fileChange")
                    && let Some(item) = item
                    && let Some(id) = item.get("id").and_then(Value::as_str)
                    && id_within(id)
                {
                    state.changes.put(id.to_owned(), file_changes(item));
                }
                Vec::new()
            }
            "serverRequest/resolved" => {
                let Some(request) = params.get("requestId") else {
                    return Vec::new();
                };
                let thread = text("threadId").unwrap_or_default();
                let resolved: Vec<String> = state
                    .open
                    .iter()
                    .filter(|(_, route)| &route.rpc_id == request && route.thread == thread)
                    .map(|(id, _)| id.clone())
                    .collect();
                state
                    .held
                    .retain(|(_, asked, _)| !resolved.contains(&asked.prompt.id));
                for id in &resolved {
                    state.open.remove(id);
                }
                if state.listing {
                    return Vec::new();
                }
                resolved
                    .into_iter()
                    .map(|id| BackendEvent::ResolvedElsewhere {
                        id,
                        rejected: false,
                    })
                    .collect()
            }
            "turn/completed" | "thread/closed" | "thread/archived" => {
                // Nothing of the thread waits any more.
                let Some(thread) = text("threadId") else {
                    return Vec::new();
                };
                let ended: Vec<String> = state
                    .open
                    .iter()
                    .filter(|(_, route)| route.thread == thread)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in &ended {
                    state.open.remove(id);
                }
                if method != "turn/completed"
                    && let Some(known) = state.threads.remove(thread)
                    && known.noted
                {
                    note_followed(thread, false);
                }
                ended
                    .into_iter()
                    .map(|id| BackendEvent::Withdrawn { id })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// A response to one of ask-lsp's own requests.
    fn answered(&self, id: &Value, message: &Value, send: &impl Fn(Value)) -> Vec<BackendEvent> {
        let mut state = self.state.lock().expect("not poisoned");
        match id.as_str() {
            Some("loaded") => {
                let threads: Vec<String> = message
                    .pointer("/result/data")
                    .and_then(Value::as_array)
                    .map(|ids| {
                        ids.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                for thread in &threads {
                    let before = state.threads.get(thread).is_some_and(|t| t.resumed);
                    self.resume(&mut state, thread, send);
                    if !before && state.threads.get(thread).is_some_and(|t| t.resumed) {
                        state.resumes_pending += 1;
                    }
                }
                self.list_if_done(&mut state)
            }
            Some(resume) if resume.starts_with("resume:") => {
                let thread = &resume["resume:".len()..];
                let found = message.pointer("/result/thread");
                tracing::debug!(thread, resumed = found.is_some(), "a Codex thread resumed");
                let mut events = Vec::new();
                match found {
                    Some(found) => {
                        let cwd = found.get("cwd").and_then(Value::as_str).unwrap_or_default();
                        let ours = self.in_workspace(cwd);
                        let title = found
                            .get("name")
                            .and_then(Value::as_str)
                            .and_then(SessionTitle::new);
                        if let Some(known) = state.threads.get_mut(thread) {
                            known.ours = Some(ours);
                            known.title = title.clone();
                            known.cwd = Some(cwd.to_owned());
                            if ours && !known.noted {
                                known.noted = true;
                                note_followed(thread, true);
                            }
                        }
                        if !ours {
                            // Its traffic is not ours to read.
                            send(json!({"jsonrpc": "2.0", "id": "unsubscribe",
                                        "method": "thread/unsubscribe",
                                        "params": {"threadId": thread}}));
                        }
                        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut state.held)
                            .into_iter()
                            .partition(|(held_thread, _, _)| held_thread == thread);
                        state.held = rest;
                        for (_, mut asked, rpc_id) in mine {
                            if ours {
                                asked.prompt.directory =
                                    asked.prompt.directory.or_else(|| Some(cwd.to_owned()));
                                asked.prompt.origin.session_title = title.clone();
                                events.extend(self.open(&mut state, asked, rpc_id));
                            }
                        }
                    }
                    None => {
                        // "no rollout found" before the thread's first turn:
                        // tried again when its status changes.
                        if let Some(known) = state.threads.get_mut(thread) {
                            known.resumed = false;
                        }
                        state
                            .held
                            .retain(|(held_thread, _, _)| held_thread != thread);
                    }
                }
                if state.listing && state.resumes_pending > 0 {
                    state.resumes_pending -= 1;
                }
                events.extend(self.list_if_done(&mut state));
                events
            }
            _ => Vec::new(),
        }
    }

    /// The first listing, once every resume it waited for is answered: what
    /// is pending now, replacing what an earlier connection showed.
    fn list_if_done(&self, state: &mut State) -> Vec<BackendEvent> {
        if !state.listing || state.resumes_pending > 0 {
            return Vec::new();
        }
        state.listing = false;
        state.was_listed = true;
        state.stale.clear();
        let listed: Vec<Prompt> = std::mem::take(&mut state.listed)
            .into_iter()
            .filter(|prompt| state.open.contains_key(&prompt.id))
            .collect();
        vec![
            BackendEvent::Connected,
            BackendEvent::Snapshot(Snapshot::from(listed)),
        ]
    }
}

/// A file change item's paths and its changes as one unified diff
/// (`FileUpdateChange`: `path`, `kind` `add` | `delete` | `update`, `diff`:
/// an added or deleted file's whole text, an update's hunks).
fn file_changes(item: &Value) -> (Vec<String>, String) {
    let mut paths = Vec::new();
    let mut diff = String::new();
    let changes = item.get("changes").and_then(Value::as_array);
    for change in changes
        .into_iter()
        .flatten()
        .take(crate::prompt::limits::PATTERNS)
    {
        let path = change
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = change
            .pointer("/kind/type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = change
            .get("diff")
            .and_then(Value::as_str)
            .unwrap_or_default();
        paths.push(path.to_owned());
        let lines = || text.lines().count();
        let whole = |sign: char| {
            text.lines()
                .map(|l| format!("{sign}{l}\n"))
                .collect::<String>()
        };
        match kind {
            "add" => {
                diff.push_str(&format!(
                    "--- /dev/null\n+++ {path}\n@@ -0,0 +1,{} @@\n",
                    lines()
                ));
                diff.push_str(&whole('+'));
            }
            "delete" => {
                diff.push_str(&format!(
                    "--- {path}\n+++ /dev/null\n@@ -1,{} +0,0 @@\n",
                    lines()
                ));
                diff.push_str(&whole('-'));
            }
            _ => {
                let to = change
                    .pointer("/kind/move_path")
                    .and_then(Value::as_str)
                    .unwrap_or(path);
                if !text.starts_with("---") {
                    diff.push_str(&format!("--- {path}\n+++ {to}\n"));
                }
                diff.push_str(text);
                if !diff.ends_with('\n') {
                    diff.push('\n');
                }
            }
        }
    }
    (paths, diff)
}

/// Aborts the writer when the connection's reader stops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Backend for CodexDaemon {
    fn source(&self) -> Source {
        Source {
            kind: ServerKind::CodexDaemon,
            url: format!("unix:{}", discovery::control_socket(&self.home).display()),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let mut state = self.state.lock().expect("not poisoned");
            // Gone: Codex's terminal (or another client) answered first.
            let route = state
                .open
                .get(&prompt.id)
                .ok_or_else(|| BackendError::NotFound {
                    server: self.label(),
                })?;
            let result = wire::response(&route.expect, prompt, reply).map_err(|reason| {
                BackendError::Refused {
                    server: self.label(),
                    reason: reason.into(),
                }
            })?;
            let outbox = state.outbox.clone().ok_or_else(|| BackendError::NotFound {
                server: self.label(),
            })?;
            // Taken out as it is sent: exactly once.
            let route = state.open.remove(&prompt.id).expect("found above");
            let body = json!({"jsonrpc": "2.0", "id": route.rpc_id, "result": result});
            outbox
                .send(body.to_string())
                .map_err(|_| BackendError::NotFound {
                    server: self.label(),
                })
        })
    }

    fn still_pending<'a>(&'a self, prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        Box::pin(async move {
            Some(
                self.state
                    .lock()
                    .expect("not poisoned")
                    .open
                    .contains_key(&prompt.id),
            )
        })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut last: Option<BackendError> = None;
            loop {
                let error = self.follow(&sink).await;
                if error == BackendError::Closed {
                    return;
                }
                let found_none = matches!(
                    error,
                    BackendError::NoCodexDaemon { .. } | BackendError::CodexSocketRefused { .. }
                );
                let was_listed =
                    std::mem::take(&mut self.state.lock().expect("not poisoned").was_listed);
                if was_listed {
                    last = None;
                }
                if last.as_ref() != Some(&error) {
                    tracing::info!("{}", error.for_log());
                    if sink
                        .send(BackendEvent::Disconnected {
                            error: error.clone(),
                        })
                        .is_err()
                    {
                        return;
                    }
                    last = Some(error);
                }
                if was_listed {
                    // A followed connection that broke: the daemon may well
                    // still be there.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                // What an ended connection showed is moot: no daemon took
                // the next one (a daemon that stopped forgot its requests).
                let stale = match found_none {
                    true => std::mem::take(&mut self.state.lock().expect("not poisoned").stale),
                    false => Vec::new(),
                };
                if !stale
                    .into_iter()
                    .all(|id| sink.send(BackendEvent::Withdrawn { id }).is_ok())
                {
                    return;
                }
                tokio::time::sleep(RECHECK).await;
            }
        })
    }
}
