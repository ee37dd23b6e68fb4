//! Agent servers, each behind one adapter: it follows the server's events,
//! turns them into [`BackendEvent`]s in ask-lsp's prompt model, and sends
//! replies back in the server's own shapes. What a backend needs to route a
//! reply (OpenCode's directory, ACP's JSON-RPC ids) stays inside it.
//!
//! The plumbing they share is in [`net`]: the HTTP exchange, the
//! event-stream loop with reconnect, backoff and stall watchdog, and the SSE
//! decoder.

#[cfg(unix)]
pub(crate) mod cause;
pub(crate) mod codex;
mod elicitation;
pub(crate) mod generation;
#[cfg(unix)]
pub(crate) mod hook;
pub(crate) mod net;
pub(crate) mod opencode;
mod opencode2;
pub(crate) mod sandbox_agent;
mod shared;
pub(crate) mod sink;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

pub(crate) use self::cause::Cause;
use crate::prompt::{KindName, Prompt, Reply};
use crate::settings::{ServerKind, ServerSpec};
use crate::text::IdError;

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
        error: BackendError,
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
    Problem(Problem),
}

/// What an adapter could not do with what its server sent, worth telling
/// the person: facts only, worded on the presentation floor
/// (`present/problem.rs`); a detail the server's data gave (why a form
/// cannot be shown) stays as the adapter's protocol words, shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A prompt whose ids cannot go into a URL: it can be neither answered
    /// nor rejected from here, so it is not shown.
    CannotAnswer {
        kind: KindName,
        refused: IdError,
        answer_in: AnswerIn,
    },
    /// An OpenCode 2 form the prompt model cannot show.
    FormUnshowable { detail: String },
    /// This OpenCode 2 has no route listing forms: only live ones are shown.
    NoFormListing,
    /// OpenCode's new engine publishes no listing (`route` is not in its
    /// `/doc`): only live prompts are shown.
    NoNewEngineListing { route: String },
    /// The question behind a running tool could not be looked up.
    ToolLookup(BackendError),
    /// An ACP agent's form that cannot be shown, and what became of the
    /// decline ask-lsp sent; `early`: asked before ask-lsp was following.
    AgentFormRefused {
        detail: String,
        declined: Declined,
        early: bool,
    },
}

/// Where a prompt that cannot be answered from here can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerIn {
    OpenCode,
    AgentsOwnInterface,
}

/// What became of a decline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declined {
    Yes,
    /// The server answered the decline with this status.
    Refused(u16),
    /// The decline could not be sent.
    Failed(BackendError),
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

/// Why an answer was not sent ([`BackendError::Refused`]), as facts; worded
/// in `present/backend_error.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefuseReason {
    /// The reply is not of a kind the prompt's request takes.
    AnswerDoesNotFit,
    NotAnAnswerToQuestions,
    NotAnAnswerToForm,
    NotAnAnswerToPermission,
    /// The chosen option is not one the permission offered.
    NotAChoice,
    /// Codex: the amendment was chosen, but none was proposed.
    NoAmendment,
    NotOneAnswerPerQuestion,
    /// The server's id may not go into a URL path.
    BadId(crate::text::IdError),
    /// OpenCode 2: the form cannot be shown, so it cannot be answered.
    FormUnshowable {
        detail: String,
    },
    /// OpenCode 1.x: allowing runs the command, and the server cannot say
    /// whether the permission's session still runs.
    SessionUnconfirmed,
    /// OpenCode's new engine: asking whether the permission still waits failed.
    PermissionUnconfirmed(Box<BackendError>),
}

/// Where a backend's events go, bounded ([`sink`]).
pub(crate) type EventSink = sink::Sink<BackendEvent>;

/// A server's failure, as facts. Its words, in the person's language and in
/// English (`Display`, for logs and `status --json`), come from one
/// catalogue on the presentation floor (`present/backend_error.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BackendError {
    /// The server does not know the prompt (answered elsewhere, or gone).
    NotFound {
        server: ServerLabel,
    },
    Unauthorized {
        server: ServerLabel,
        advice: AuthAdvice,
    },
    /// `message`: what the server said, as cut for showing.
    BadRequest {
        server: ServerLabel,
        message: crate::text::Cut<'static>,
    },
    Server {
        server: ServerLabel,
        status: u16,
        message: crate::text::Cut<'static>,
    },
    NotJson {
        server: ServerLabel,
        status: u16,
        kind: BodyKind,
        expected: Expected,
    },
    Redirect {
        server: ServerLabel,
        status: u16,
    },
    Timeout {
        server: ServerLabel,
        after: Duration,
    },
    /// Nothing was sent: the prompt cannot be answered this way.
    Refused {
        server: ServerLabel,
        reason: RefuseReason,
    },
    Connect {
        server: ServerLabel,
        cause: Cause,
        hint: ConnectHint,
    },
    /// The server took the connection and answered nothing in time.
    Unanswered {
        server: ServerLabel,
    },
    SubscriptionUnanswered {
        server: ServerLabel,
    },
    /// The event stream's request could not be made, or its answer was not
    /// HTTP.
    Malformed {
        server: ServerLabel,
        cause: Cause,
        expected: Expected,
    },
    NoEvents {
        server: ServerLabel,
        status: u16,
        expected: Expected,
    },
    /// The event stream broke off.
    Stream {
        server: ServerLabel,
        cause: Cause,
    },
    Stalled {
        server: ServerLabel,
        after: Duration,
    },
    /// `ask-lsp hook`'s socket could not be opened: said with the fix, for
    /// until then every hook prompt stays in the agent's terminal.
    HookSocket {
        message: String,
    },
    /// No Codex app-server daemon runs for the Codex home `home` (none
    /// started, one started with `--no-daemon`, or one that stopped).
    NoCodexDaemon {
        home: String,
    },
    /// The Codex daemon's socket is not the person's alone (`what` says
    /// which path and why): not followed.
    CodexSocketRefused {
        what: String,
    },
    /// A Codex home named in the settings is there but is not a directory:
    /// not followed (looked at again, as for a missing daemon).
    CodexHomeNotDirectory {
        home: String,
    },
    /// Nobody listens for the events any more (shutting down).
    Closed,
}

/// The server an error names, as facts: its kind and where it is. Worded
/// ("OpenCode at http://…", and in the person's language) in
/// `present/backend_error.rs`; its English `Display` is for logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerLabel {
    /// Either generation of OpenCode.
    OpenCode { url: String },
    /// An agent server behind sandbox-agent.
    SandboxAgent { url: String, server_id: String },
    /// The Codex app-server daemon of a Codex home.
    CodexDaemon { home: String },
    /// `ask-lsp hook`'s socket, which agents' hooks ask.
    Hook,
}

/// The kind of server ask-lsp expected at a URL, as errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    OpenCode,
    OpenCode2,
    SandboxAgent,
}

impl Expected {
    /// What to check when the server cannot be reached.
    pub fn start_hint(self) -> StartHint {
        match self {
            Expected::OpenCode | Expected::OpenCode2 => StartHint::OpenCodeServe,
            Expected::SandboxAgent => StartHint::SandboxAgentServer,
        }
    }

    /// What to check on a 401.
    pub fn auth_advice(self) -> AuthAdvice {
        match self {
            Expected::OpenCode | Expected::OpenCode2 => AuthAdvice::OpenCodePassword,
            Expected::SandboxAgent => AuthAdvice::SandboxAgentToken,
        }
    }
}

/// What to check when a server cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StartHint {
    OpenCodeServe,
    SandboxAgentServer,
}

/// What to check on a 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthAdvice {
    OpenCodePassword,
    SandboxAgentToken,
}

/// What to check when a server could not be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnectHint {
    Start(StartHint),
    /// TLS refused the server's certificate.
    UntrustedCertificate,
}

/// What a server answered instead of JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Html,
    /// Any other content type, quoted.
    Other(String),
}

impl BackendError {
    /// A state of things rather than a fault: shown in the status only,
    /// never as a window message (a Codex installed but not running is
    /// the common case, docs/codex.md).
    pub fn is_normal_state(&self) -> bool {
        matches!(self, BackendError::NoCodexDaemon { .. })
    }

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
    pub kind: ServerKind,
    pub url: String,
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
