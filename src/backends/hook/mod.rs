//! The hook socket: `ask-lsp hook` (run by Claude Code or Codex as its
//! `PermissionRequest` hook, src/hook.rs) hands the agent's permission
//! request to this running ask-lsp over a per-user Unix socket, and gets the
//! decision back on the same connection (docs/hook.md).
//!
//! Each instance listens on its own `ask-lsp-<pid>.sock` beside an
//! `ask-lsp-<pid>.json` naming its workspace roots, in a directory only this
//! user can enter. A connection is one prompt: its request line, then one
//! answer line. The hook closing the connection (killed, timed out)
//! withdraws the prompt, and so does Claude's news that it no longer waits
//! for it (`claude_ends`).

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::{Backend, BackendError, BackendEvent, EventSink, ServerLabel, Source};
use crate::prompt::{ChoiceLabel, Effect, PermissionChoice, Prompt, Reply};
use crate::settings::{BackendKind, ServerKind, ServerSpec, UrlSource};

mod claude;
mod claude_ends;
pub(crate) use claude_ends::NEWS as CLAUDE_NEWS;
mod claude_edit;
mod claude_form;
mod claude_question;
mod claude_suggestions;
mod codex;
mod copilot;
pub(crate) mod instances;
mod once;
mod qwen;

/// The most a hook input may be: Claude's is a few KiB; more is not one.
pub(crate) const MAX_INPUT: usize = 1 << 20;
/// A request line: the input and its envelope.
const MAX_REQUEST: usize = MAX_INPUT + 1024;
/// A connection that has not sent its request by then is dropped.
const REQUEST_WITHIN: Duration = Duration::from_secs(5);
/// Connections whose request is being read at once; one more is refused
/// (`busy`), not queued. A hook sends its request at once, so this is
/// reached only by a flood; request bytes in flight stay under
/// `READERS * MAX_REQUEST` (16 MiB), whatever the number of connections.
const READERS: usize = 16;
/// A prompt still waiting for its decision after this long (a person's)
/// has its request written in the description file meanwhile.
const NOTE_WHILE_WAITING: Duration = Duration::from_millis(200);
/// The registry's name for the hook socket.
pub(crate) const HOOK_SERVER: &str = "hook";

const ALLOW_ONCE: &str = "allow-once";
const REJECT: &str = "reject";

/// Prompt ids, unique for the process: a restarted listener must not reuse
/// an id the broker remembers as resolved.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The directory the sockets live in (`crate::app::hook_socket_dir`).
/// Created 0700; refused unless it is a directory (not a link) owned by this
/// user and closed to others.
pub(crate) fn socket_dir(dir: PathBuf, create: bool) -> io::Result<PathBuf> {
    if create {
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != euid() || meta.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a directory of this user's closed to others",
                dir.display()
            ),
        ));
    }
    Ok(dir)
}

pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether process `pid` exists (signal 0 only checks).
pub(crate) fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing.
    let ok = unsafe { libc::kill(pid, 0) } == 0;
    ok || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The pid an instance's socket file is named by.
pub(crate) fn socket_pid(name: &std::ffi::OsStr) -> Option<i32> {
    name.to_str()?
        .strip_prefix("ask-lsp-")?
        .strip_suffix(".sock")?
        .parse::<i32>()
        .ok()
        .filter(|p| *p > 0)
}

/// Removes the socket and description files of processes that are gone
/// (killed instances cannot remove their own).
fn remove_stale(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(1024) {
        if let Some(pid) = socket_pid(&entry.file_name())
            && !alive(pid)
        {
            let _ = std::fs::remove_file(entry.path());
            let _ = std::fs::remove_file(dir.join(format!("ask-lsp-{pid}.json")));
        }
    }
}

/// Whether the other end of `stream` runs as this user (SO_PEERCRED).
pub(crate) fn same_user(stream: &UnixStream) -> bool {
    stream.peer_cred().is_ok_and(|cred| cred.uid() == euid())
}

/// The hook socket's spec, added to every instance's servers unless
/// `ASK_LSP_HOOK=0` turns it off (`crate::app::with_hook`).
pub(crate) fn spec(roots: Vec<PathBuf>) -> ServerSpec {
    ServerSpec {
        name: HOOK_SERVER.into(),
        url: format!("unix:ask-lsp-{}.sock", std::process::id()),
        directory: None,
        username: String::new(),
        password: None,
        backend: BackendKind::Hook { roots },
        url_source: UrlSource::BuiltIn,
    }
}

/// A prompt waiting for its decision, and its connection.
struct Waiting {
    agent: Agent,
    /// Claude's call it waits for, by which Claude's other hook events end it.
    call: Option<claude_ends::Call>,
    /// The decision for the connection, which says whether it was written.
    answer: oneshot::Sender<(Value, oneshot::Sender<bool>)>,
}

pub(crate) struct HookListener {
    roots: Vec<PathBuf>,
    /// Where the socket goes.
    dir: PathBuf,
    waiting: Mutex<HashMap<String, Waiting>>,
    /// The hook requests that reached this instance, for `ask-lsp status`.
    reached: Mutex<Reached>,
}

#[derive(Default)]
struct Reached {
    /// The description file, once bound.
    info: Option<PathBuf>,
    requests: u64,
    /// When the last request arrived (ms since the epoch) and from which
    /// agent, if it named a known one.
    last: Option<(u64, Option<&'static str>)>,
}

impl HookListener {
    pub fn new(roots: Vec<PathBuf>, dir: PathBuf) -> Self {
        HookListener {
            roots,
            dir,
            waiting: Mutex::new(HashMap::new()),
            reached: Mutex::default(),
        }
    }

    /// Writes the description file `ask-lsp hook` and `ask-lsp status`
    /// read: pid, roots, and the requests so far. Replaced whole (rename),
    /// so a reader never sees half of it.
    fn describe(&self, info: &std::path::Path, reached: &Reached) -> io::Result<()> {
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect();
        let (last_request_ms, last_agent) = match reached.last {
            Some((at, agent)) => (Some(at), agent),
            None => (None, None),
        };
        let written = json!({"pid": std::process::id(), "roots": roots,
                             "requests": reached.requests, "lastRequestMs": last_request_ms,
                             "lastAgent": last_agent})
        .to_string();
        let mut tmp = info.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, written)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&tmp, info)
    }

    /// Notes that a hook request arrived (`agent`: the one it named, if
    /// known), for `ask-lsp status`: in memory only; [`Self::write_note`]
    /// writes it down once the hook has its answer.
    fn note_request(&self, agent: Option<&'static str>) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut reached = self.reached.lock().expect("not poisoned");
        reached.requests += 1;
        reached.last = Some((at, agent));
    }

    /// Rewrites the description file with the requests noted so far. Not
    /// on the way to a decision: with several editors on one folder every
    /// instance takes each request, and a file rewrite (0.3 ms, several
    /// under load) in each one before deciding was most of the hook's time
    /// (docs/hook.md, "Cost with several editors on one folder").
    fn write_note(&self) {
        let reached = self.reached.lock().expect("not poisoned");
        if let Some(info) = reached.info.clone()
            && let Err(e) = self.describe(&info, &reached)
        {
            tracing::warn!("hook socket: cannot update {}: {e}", info.display());
        }
    }

    fn bind(&self) -> io::Result<(UnixListener, Cleanup)> {
        let dir = socket_dir(self.dir.clone(), true)?;
        remove_stale(&dir);
        let pid = std::process::id();
        let socket = dir.join(format!("ask-lsp-{pid}.sock"));
        let info = dir.join(format!("ask-lsp-{pid}.json"));
        // Ours from before (a restarted listener) or a dead process's.
        let _ = std::fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket)?;
        let cleanup = Cleanup(vec![socket.clone(), info.clone()]);
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        let mut reached = self.reached.lock().expect("not poisoned");
        self.describe(&info, &reached)?;
        reached.info = Some(info);
        Ok((listener, cleanup))
    }

    async fn serve(
        self: Arc<Self>,
        stream: UnixStream,
        sink: EventSink,
        reading: Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        if !same_user(&stream) {
            tracing::warn!("hook socket: a connection from another user was refused");
            return;
        }
        let sender = stream.peer_cred().ok().and_then(|cred| cred.pid());
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        let prompt = match reading {
            Some(permit) => {
                // Reserved whole: a request never grows (and copies) its
                // buffer, and untouched pages cost nothing.
                let mut line = Vec::with_capacity(MAX_REQUEST + 1);
                let request = tokio::time::timeout(
                    REQUEST_WITHIN,
                    (&mut read)
                        .take(MAX_REQUEST as u64 + 1)
                        .read_until(b'\n', &mut line),
                )
                .await;
                let prompt = match request {
                    Ok(Ok(_)) if line.ends_with(b"\n") => parse(&line, &self.roots),
                    Ok(Ok(_)) if line.len() > MAX_REQUEST => Err(Refusal::TooLarge),
                    _ => Err(Refusal::Incomplete),
                };
                drop((line, permit));
                prompt
            }
            None => Err(Refusal::Busy { readers: READERS }),
        };
        self.note_request(prompt.as_ref().ok().map(Parsed::agent_name));
        let (mut prompt, agent, call) = match prompt {
            Ok(Parsed::Asks(prompt, agent, call)) => (*prompt, agent, call),
            Ok(Parsed::Ended(ended)) => {
                self.withdraw(|waits| ended.ends(waits), &sink);
                let _ = write.write_all(b"{}\n").await;
                self.write_note();
                return;
            }
            Err(refusal) => {
                tracing::warn!("hook socket: {refusal}");
                let answer = json!({"error": refusal.to_string(), "refusal": refusal});
                let _ = write.write_all(format!("{answer}\n").as_bytes()).await;
                self.write_note();
                return;
            }
        };
        let outside_workspace =
            !instances::holds_directory(&self.roots, prompt.directory.as_deref());
        prompt.origin.requester = Some(Box::new(instances::requester(sender, outside_workspace)));
        // Claude asks one thing at a time per session: an older prompt of
        // the session is no longer waited for, and must not hold the
        // editor's slot.
        if let Some(asks) = &call {
            self.withdraw(|waits| waits.session == asks.session, &sink);
        }
        let id = prompt.id.clone();
        let (answer, answered) = oneshot::channel();
        self.waiting.lock().expect("not poisoned").insert(
            id.clone(),
            Waiting {
                agent,
                call,
                answer,
            },
        );
        if sink.send(BackendEvent::Asked(prompt)).is_err() {
            self.waiting.lock().expect("not poisoned").remove(&id);
            self.write_note();
            return;
        }
        // The hook sends nothing more: anything read means it is gone. The
        // description is rewritten once the decision is out, or while the
        // prompt waits for a person.
        let mut rest = [0u8; 64];
        let waiting = tokio::time::sleep(NOTE_WHILE_WAITING);
        tokio::pin!(waiting, answered);
        let (mut noted, mut dropped) = (false, false);
        loop {
            tokio::select! {
                decided = &mut answered, if !dropped => {
                    let Ok((decision, written)) = decided else {
                        dropped = true; // no decision will come: wait for the hook to go
                        continue;
                    };
                    let line = format!("{decision}\n");
                    let ok = write.write_all(line.as_bytes()).await.is_ok()
                        && write.flush().await.is_ok();
                    let _ = written.send(ok);
                    break;
                }
                _ = read.read(&mut rest) => {
                    if self.waiting.lock().expect("not poisoned").remove(&id).is_some() {
                        let _ = sink.send(BackendEvent::Withdrawn { id });
                    }
                    break;
                }
                () = &mut waiting, if !noted => {
                    noted = true;
                    self.write_note();
                }
            }
        }
        if !noted {
            self.write_note();
        }
    }
}

impl HookListener {
    /// Ends the prompts whose call `ended` says Claude no longer waits for:
    /// their hooks get "no decision", the editors see them withdrawn.
    fn withdraw(&self, ended: impl Fn(&claude_ends::Call) -> bool, sink: &EventSink) {
        let gone: Vec<(String, Waiting)> = {
            let mut waiting = self.waiting.lock().expect("not poisoned");
            let ids: Vec<String> = waiting
                .iter()
                .filter(|(_, w)| w.call.as_ref().is_some_and(&ended))
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| waiting.remove(&id).map(|w| (id, w)))
                .collect()
        };
        for (id, waiting) in gone {
            let (written, _) = oneshot::channel();
            let _ = waiting.answer.send((json!({}), written));
            let _ = sink.send(BackendEvent::Withdrawn { id });
        }
    }
}

/// Removes the socket and its description when the listener stops.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What `ask-lsp hook` sends: the agent and its hook input, unchanged.
#[derive(Deserialize)]
struct Request {
    agent: String,
    input: Box<serde_json::value::RawValue>,
}

/// Why a hook request was refused (no prompt, no decision). Sent back as
/// `{"error": <these words>, "refusal": <this>}`: the hook says it in the
/// person's language (`crate::present::no_decision`); `error` is for the
/// log and for hooks of an older version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "camelCase")]
pub(crate) enum Refusal {
    TooLarge,
    Incomplete,
    Malformed {
        detail: String,
    },
    UnknownAgent {
        agent: String,
    },
    NotClaudeInput {
        detail: String,
    },
    NotCodexInput {
        detail: String,
    },
    NotQwenInput {
        detail: String,
    },
    NotCopilotInput {
        detail: String,
    },
    OtherEvent {
        event: String,
    },
    AskUserQuestion,
    /// Claude's `Elicitation` in url mode: its own dialog opens the link.
    ElicitationUrl,
    /// Claude's `Elicitation` whose form ask-lsp cannot show (English, as
    /// ACP's decline reasons): Claude's own form shows it.
    FormNotShown {
        reason: String,
    },
    TooLong,
    BashWithoutCommand,
    /// As many connections as it reads at once are being read.
    Busy {
        readers: usize,
    },
    FollowedByDaemon,
}

/// A hook request: a prompt to ask, or news that Claude no longer waits
/// for some.
enum Parsed {
    Asks(Box<Prompt>, Agent, Option<claude_ends::Call>),
    Ended(claude_ends::Ended),
}

impl Parsed {
    fn agent_name(&self) -> &'static str {
        match self {
            Parsed::Asks(_, agent, _) => agent.name(),
            Parsed::Ended(_) => "claude",
        }
    }
}

fn parse(line: &[u8], roots: &[PathBuf]) -> Result<Parsed, Refusal> {
    let claude_input = || {
        serde_json::from_slice::<Request>(line)
            .ok()
            .filter(|r| r.agent == "claude" && r.input.get().len() <= MAX_INPUT)
    };
    if let Some(ended) = claude_input().and_then(|r| claude_ends::ended(r.input.get())) {
        return Ok(Parsed::Ended(ended));
    }
    let (prompt, agent) = request_prompt(line, roots)?;
    let call = match agent {
        Agent::Codex => None,
        _ => claude_input().and_then(|r| claude_ends::asking(r.input.get())),
    };
    Ok(Parsed::Asks(Box::new(prompt), agent, call))
}

/// The prompt a request asks, with what its agent's decision needs.
fn request_prompt(line: &[u8], roots: &[PathBuf]) -> Result<(Prompt, Agent), Refusal> {
    let request: Request = serde_json::from_slice(line).map_err(|e| Refusal::Malformed {
        detail: e.to_string(),
    })?;
    if request.input.get().len() > MAX_INPUT {
        return Err(Refusal::TooLarge);
    }
    match request.agent.as_str() {
        "claude" => claude::prompt(request.input.get(), roots),
        "codex" => codex::prompt(request.input.get()),
        "qwen" => qwen::prompt(request.input.get()),
        "copilot" => copilot::prompt(request.input.get()),
        other => Err(Refusal::UnknownAgent {
            agent: crate::text::for_display(other, 40).into_owned(),
        }),
    }
}

/// What a decision in an agent's terms needs beside the reply.
#[derive(Debug)]
enum Agent {
    /// What each of Claude's "always" choices stores, by choice id.
    Claude {
        suggested: claude_suggestions::Suggested,
    },
    /// `AskUserQuestion`: its input, given back with the answers under the
    /// questions' texts as sent.
    ClaudeQuestion {
        tool_input: Value,
        texts: Vec<String>,
    },
    /// An MCP server's form (Claude's `Elicitation`): an accept's content
    /// is typed by its fields.
    ClaudeForm {
        form: crate::prompt::Form,
    },
    Codex,
    Qwen,
    Copilot,
}

impl Agent {
    fn name(&self) -> &'static str {
        match self {
            Agent::Claude { .. } | Agent::ClaudeQuestion { .. } | Agent::ClaudeForm { .. } => {
                "claude"
            }
            Agent::Codex => "codex",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
        }
    }
}

/// The decision in the hook's terms: `{}` decides nothing (the agent asks
/// in its own dialog).
fn decision(reply: &Reply, agent: Agent) -> Value {
    match agent {
        Agent::Claude { suggested } => claude::decision(reply, &suggested),
        Agent::ClaudeQuestion { tool_input, texts } => {
            claude_question::decision(reply, tool_input, &texts)
        }
        Agent::ClaudeForm { form } => claude_form::decision(reply, &form),
        Agent::Codex => codex::decision(reply),
        Agent::Qwen | Agent::Copilot => once::decision(reply),
    }
}

/// What both agents' models read for a rejection without a message.
const DEFAULT_DENIAL: &str = "The person rejected this in their editor (ask-lsp).";

/// What the broker routes by must fit, or it would drop the prompt and the
/// hook would wait for nothing.
fn routable(session: &str, cwd: Option<&str>) -> Result<(), Refusal> {
    if session.len() > crate::prompt::limits::ID_LEN
        || cwd.is_some_and(|cwd| cwd.len() > crate::prompt::limits::DESCRIPTION_LEN)
    {
        return Err(Refusal::TooLong);
    }
    Ok(())
}

/// A prompt id unique for the process.
fn next_id() -> String {
    format!("hook-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

fn choice(id: &str, label: ChoiceLabel, effect: Effect) -> PermissionChoice {
    PermissionChoice {
        id: id.into(),
        label,
        effect,
    }
}

impl Backend for HookListener {
    fn source(&self) -> Source {
        Source {
            kind: ServerKind::Hook,
            url: format!("unix:ask-lsp-{}.sock", std::process::id()),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let gone = || BackendError::NotFound {
                server: ServerLabel::Hook,
            };
            let waiting = self
                .waiting
                .lock()
                .expect("not poisoned")
                .remove(&prompt.id)
                .ok_or_else(gone)?;
            let (written, was_written) = oneshot::channel();
            let decision = decision(reply, waiting.agent);
            waiting
                .answer
                .send((decision, written))
                .map_err(|_| gone())?;
            match was_written.await {
                Ok(true) => Ok(()),
                _ => Err(gone()),
            }
        })
    }

    fn still_pending<'a>(&'a self, prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        Box::pin(async move {
            Some(
                self.waiting
                    .lock()
                    .expect("not poisoned")
                    .contains_key(&prompt.id),
            )
        })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let (listener, _cleanup) = match self.bind() {
                Ok(bound) => bound,
                Err(e) => {
                    let error = BackendError::HookSocket {
                        message: e.to_string(),
                    };
                    tracing::warn!("{error}; `ask-lsp hook` cannot reach this instance");
                    let _ = sink.send(BackendEvent::Disconnected { error });
                    // Not returning: the registry stops forwarding events
                    // once `run` ends, and this one is for the person.
                    std::future::pending::<()>().await;
                    return;
                }
            };
            let _ = sink.send(BackendEvent::Connected);
            // Connections live inside this task: stopping it closes them,
            // and each hook then falls back to the agent's own prompt.
            let mut connections = JoinSet::new();
            let readers = Arc::new(tokio::sync::Semaphore::new(READERS));
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            let reading = readers.clone().try_acquire_owned().ok();
                            connections.spawn(self.clone().serve(stream, sink.clone(), reading));
                        }
                        Err(e) => {
                            tracing::warn!("hook socket: {e}");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    },
                    Some(_) = connections.join_next() => {}
                }
            }
        })
    }
}
