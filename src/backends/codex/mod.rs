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
mod messages;
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
use super::Cause;
use super::{Backend, BackendError, BackendEvent, EventSink, ServerLabel, Source};
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

    fn label(&self) -> ServerLabel {
        ServerLabel::CodexDaemon {
            home: self.home.display().to_string(),
        }
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
        // A home not made yet is looked at again (Codex makes it at its
        // first start); a file where a home should be is said.
        if std::fs::metadata(&self.home).is_ok_and(|meta| !meta.is_dir()) {
            return BackendError::CodexHomeNotDirectory {
                home: self.home.display().to_string(),
            };
        }
        let mut stream = match discovery::connect(&self.home).await {
            Ok(stream) => stream,
            Err(why) => {
                tracing::debug!(home = %self.home.display(), "no Codex daemon followed: {why:?}");
                return self.unfollowed(why);
            }
        };
        let broken = |e: std::io::Error| BackendError::Stream {
            server: self.label(),
            cause: Cause::said(&e.to_string()),
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
                        cause: Cause::DaemonClosed,
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
                    reason,
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
                    BackendError::NoCodexDaemon { .. }
                        | BackendError::CodexSocketRefused { .. }
                        | BackendError::CodexHomeNotDirectory { .. }
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
