//! Agent servers, each behind one adapter: it follows the server's events,
//! turns them into [`BackendEvent`]s in ask-lsp's prompt model, and sends
//! replies back in the server's own shapes. What a backend needs to route a
//! reply (OpenCode's directory, ACP's JSON-RPC ids) stays inside it.
//!
//! The HTTP exchange ([`http`]) and the event-stream loop with reconnect,
//! backoff and stall watchdog ([`stream`]) are shared.

mod generation;
mod h1;
#[cfg(unix)]
pub(crate) mod hook;
mod http;
mod openapi;
mod opencode;
mod opencode2;
mod sandbox_agent;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::config::{BackendKind, ServerSpec};
use crate::prompt::{Prompt, Reply};

#[cfg(unix)]
pub(crate) use hook::with_hook;

/// No hook socket off Unix (docs/hook.md).
#[cfg(not(unix))]
pub(crate) fn with_hook(
    servers: Vec<ServerSpec>,
    _roots: Vec<std::path::PathBuf>,
) -> Vec<ServerSpec> {
    servers
}

pub(crate) mod fuzzing {
    use crate::prompt::Prompt;

    pub use super::h1::Dechunker;

    /// Parses a response head as the event stream's reader does; true when
    /// it is complete and well formed.
    pub fn http_head(bytes: &[u8]) -> bool {
        super::h1::head_is_complete(bytes)
    }

    /// The prompt in an OpenCode event, if it has one.
    pub fn parse_opencode(data: &str, global: bool) -> Option<Prompt> {
        super::opencode::asked(data, global)
    }

    /// Whether the OpenCode prefilter keeps an event.
    pub fn opencode_prefilter(data: &[u8], global: bool) -> bool {
        super::opencode::prefilter::opencode(data, global)
    }
}

/// Whether a server's id (request, session, tool call) may be remembered or
/// acted on: one over [`crate::prompt::limits::ID_LEN`] bytes is not one of
/// ours to keep, and never costs a listing.
fn id_within(id: &str) -> bool {
    id.len() <= crate::prompt::limits::ID_LEN
}

/// What a backend saw, in ask-lsp's terms.
#[derive(Debug)]
pub(crate) enum BackendEvent {
    Connected,
    Disconnected {
        error: String,
    },
    /// Everything the server lists as pending right after a (re)connect: the
    /// event streams have no replay, so this is how missed prompts and missed
    /// answers are found.
    Snapshot(Snapshot),
    Asked(Prompt),
    /// Answered (`rejected: false`) or refused by someone else.
    ResolvedElsewhere {
        id: String,
        rejected: bool,
    },
    /// The agent no longer waits for this prompt (cancelled, turn over).
    Withdrawn {
        id: String,
    },
    /// The tool call behind a prompt finished; `ok` is false for an error.
    ToolEnded {
        call_id: String,
        ok: bool,
    },
    /// The session stopped (aborted, errored, idle): its prompts are moot.
    SessionEnded {
        session: String,
    },
    /// Input the backend could not use, worth telling the person about.
    Invalid {
        error: String,
    },
}

/// A server's listing of what is pending, in its order. Each prompt is
/// built only when taken: a resync of a long listing mostly finds prompts
/// the broker already has, which it recognises by their ids alone.
pub(crate) struct Snapshot(Box<dyn Listing>);

/// What a [`Snapshot`] is read from.
pub(crate) trait Listing: Send {
    fn len(&self) -> usize;
    /// The id of the prompt at `index`, before it is taken.
    fn id(&self, index: usize) -> &str;
    /// The prompt at `index`, once: `None` when taken already.
    fn take(&mut self, index: usize) -> Option<Prompt>;
    /// Prompts the server listed that are left out (their session is not
    /// running), so that "nothing pending" can say what it hides.
    fn hidden(&self) -> usize {
        0
    }
}

impl Snapshot {
    pub fn new(listing: impl Listing + 'static) -> Self {
        Snapshot(Box::new(listing))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn id(&self, index: usize) -> &str {
        self.0.id(index)
    }

    pub fn take(&mut self, index: usize) -> Option<Prompt> {
        self.0.take(index)
    }

    pub fn hidden(&self) -> usize {
        self.0.hidden()
    }

    /// Every prompt, built.
    pub fn into_prompts(mut self) -> Vec<Prompt> {
        (0..self.len()).filter_map(|i| self.take(i)).collect()
    }
}

impl From<Vec<Prompt>> for Snapshot {
    fn from(prompts: Vec<Prompt>) -> Self {
        Snapshot::new(Built(prompts.into_iter().map(Some).collect()))
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({} listed)", self.len())
    }
}

/// Prompts built already.
struct Built(Vec<Option<Prompt>>);

impl Listing for Built {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn id(&self, index: usize) -> &str {
        self.0[index].as_ref().map_or("", |p| p.id.as_str())
    }

    fn take(&mut self, index: usize) -> Option<Prompt> {
        self.0[index].take()
    }
}

/// Where a server's events go.
pub(crate) type EventSink = tokio::sync::mpsc::UnboundedSender<BackendEvent>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BackendError {
    /// The server does not know the prompt (answered elsewhere, or gone).
    #[error("{server}: not found (already answered elsewhere, or its session ended)")]
    NotFound { server: String },
    #[error("{server}: 401 Unauthorized: {advice}")]
    Unauthorized {
        server: String,
        advice: &'static str,
    },
    #[error("{server}: the server refused the request (400): {message}")]
    BadRequest { server: String, message: String },
    #[error("{server}: server error {status}: {message}")]
    Server {
        server: String,
        status: u16,
        message: String,
    },
    #[error(
        "{server}: answered {status} with {kind} instead of JSON: is this {expected}, and is the route right?"
    )]
    NotJson {
        server: String,
        status: u16,
        kind: String,
        expected: &'static str,
    },
    #[error(
        "{server}: answered with a redirect ({status}), which is not followed: ask-lsp only talks to the configured URL"
    )]
    Redirect { server: String, status: u16 },
    #[error("{server}: no answer within {after:?}")]
    Timeout { server: String, after: Duration },
    /// Nothing was sent: the prompt cannot be answered this way.
    #[error("{server}: not sent: {reason}")]
    Refused { server: String, reason: String },
    #[error("cannot reach {server}: {message} — {hint}")]
    Connect {
        server: String,
        message: String,
        hint: &'static str,
    },
}

impl BackendError {
    /// The error for logs: a 400's message can quote the request body (the
    /// answers), so it is left out.
    pub fn for_log(&self) -> String {
        match self {
            BackendError::BadRequest { server, .. } => {
                format!("{server}: the server refused the request (400)")
            }
            other => other.to_string(),
        }
    }
}

/// Describes a server for status and editors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    pub backend: &'static str,
    pub url: String,
    /// Which generation of the server was found there (OpenCode: "1" or
    /// "2"), once known.
    pub generation: Option<&'static str>,
}

pub(crate) trait Backend: Send + Sync {
    fn source(&self) -> Source;
    /// Sends a decision on a prompt this backend produced.
    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>>;
    /// After a send failed in a way that leaves open whether the server
    /// applied it: is the prompt still pending there? `None`: cannot tell.
    fn still_pending<'a>(&'a self, prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>>;
    /// Follows the server until the task is aborted or the sink closes:
    /// connects, resyncs, reconnects with backoff.
    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()>;
}

/// Builds the backend for a configured server (tests hand in fakes).
pub(crate) type Factory = Arc<dyn Fn(&ServerSpec) -> Arc<dyn Backend> + Send + Sync>;

/// The real backends, by configured kind.
pub(crate) fn factory(timing: Timing) -> Factory {
    Arc::new(move |spec: &ServerSpec| -> Arc<dyn Backend> {
        match &spec.backend {
            BackendKind::OpenCode => Arc::new(generation::OpenCodeAny::new(spec.clone(), timing)),
            BackendKind::SandboxAgent { server_id, token } => Arc::new(
                sandbox_agent::SandboxAgent::new(&spec.url, server_id, token.clone(), timing),
            ),
            #[cfg(unix)]
            BackendKind::Hook { roots } => Arc::new(hook::HookListener::new(roots.clone())),
            #[cfg(not(unix))]
            BackendKind::Hook { .. } => unreachable!("with_hook adds no hook socket off Unix"),
        }
    })
}

/// Timing knobs; the defaults suit a real server (heartbeat every 10 s).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Bound on one HTTP request (a starting server can accept and never answer).
    pub request: Duration,
    /// No bytes for this long (not even a heartbeat) means the stream is dead.
    pub stall: Duration,
    pub backoff_min: Duration,
    /// Low, so that a server coming back (a restart) is found within about a
    /// second: retrying a refused connection costs next to nothing.
    pub backoff_max: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            request: Duration::from_secs(10),
            stall: Duration::from_secs(30),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(1),
        }
    }
}

impl Timing {
    /// Defaults, with `ASK_LSP_STALL_MS` / `ASK_LSP_REQUEST_TIMEOUT_MS` overrides.
    pub fn from_env() -> Self {
        let ms = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let mut timing = Timing::default();
        if let Some(stall) = ms("ASK_LSP_STALL_MS") {
            timing.stall = stall;
        }
        if let Some(request) = ms("ASK_LSP_REQUEST_TIMEOUT_MS") {
            timing.request = request;
        }
        timing
    }
}
