//! The hook socket: `ask-lsp hook` (run by Claude Code as its
//! `PermissionRequest` hook, src/hook.rs) hands the agent's permission
//! request to this running ask-lsp over a per-user Unix socket, and gets the
//! decision back on the same connection (docs/hook.md).
//!
//! Each instance listens on its own `ask-lsp-<pid>.sock` beside an
//! `ask-lsp-<pid>.json` naming its workspace roots, in a directory only this
//! user can enter. A connection is one prompt: its request line, then one
//! answer line. The hook closing the connection (killed, timed out)
//! withdraws the prompt.

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::{Backend, BackendError, BackendEvent, EventSink, Source};
use crate::config::{BackendKind, ServerSpec, UrlSource};
use crate::prompt::{Answer, Effect, Kind, Origin, Permission, PermissionChoice, Prompt, Reply};

/// The most a hook input may be: Claude's is a few KiB; more is not one.
pub(crate) const MAX_INPUT: usize = 1 << 20;
/// A request line: the input and its envelope.
const MAX_REQUEST: usize = MAX_INPUT + 1024;
/// A connection that has not sent its request by then is dropped.
const REQUEST_WITHIN: Duration = Duration::from_secs(5);
/// The registry's name for the hook socket.
pub(crate) const HOOK_SERVER: &str = "hook";

const ALLOW_ONCE: &str = "allow-once";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT: &str = "reject";
/// What Claude's model reads for a rejection without a message.
const DEFAULT_DENIAL: &str = "The person rejected this in their editor (ask-lsp).";

/// Prompt ids, unique for the process: a restarted listener must not reuse
/// an id the broker remembers as resolved.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The directory the sockets live in: `$XDG_RUNTIME_DIR/ask-lsp`, else
/// `/tmp/ask-lsp-<uid>`. Created 0700; refused unless it is a directory (not
/// a link) owned by this user and closed to others.
pub(crate) fn socket_dir(create: bool) -> io::Result<PathBuf> {
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("ask-lsp"),
        None => std::env::temp_dir().join(format!("ask-lsp-{}", euid())),
    };
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

/// The hook socket's spec, added to every instance's servers; `None` when
/// `ASK_LSP_HOOK=0` turns it off.
pub(crate) fn spec(roots: Vec<PathBuf>) -> Option<ServerSpec> {
    if std::env::var("ASK_LSP_HOOK").is_ok_and(|v| v == "0") {
        return None;
    }
    Some(ServerSpec {
        name: HOOK_SERVER.into(),
        url: format!("unix:ask-lsp-{}.sock", std::process::id()),
        directory: None,
        username: String::new(),
        password: None,
        backend: BackendKind::Hook { roots },
        url_source: UrlSource::BuiltIn,
    })
}

/// `servers` and the hook socket.
pub(crate) fn with_hook(mut servers: Vec<ServerSpec>, roots: Vec<PathBuf>) -> Vec<ServerSpec> {
    servers.extend(spec(roots));
    servers
}

/// A prompt waiting for its decision, and its connection.
struct Waiting {
    /// Claude's `permission_suggestions`, given back for "always".
    suggestions: Option<Value>,
    /// The decision for the connection, which says whether it was written.
    answer: oneshot::Sender<(Value, oneshot::Sender<bool>)>,
}

pub(crate) struct HookListener {
    roots: Vec<PathBuf>,
    waiting: Mutex<HashMap<String, Waiting>>,
}

impl HookListener {
    pub fn new(roots: Vec<PathBuf>) -> Self {
        HookListener {
            roots,
            waiting: Mutex::new(HashMap::new()),
        }
    }

    fn bind(&self) -> io::Result<(UnixListener, Cleanup)> {
        let dir = socket_dir(true)?;
        remove_stale(&dir);
        let pid = std::process::id();
        let socket = dir.join(format!("ask-lsp-{pid}.sock"));
        let info = dir.join(format!("ask-lsp-{pid}.json"));
        // Ours from before (a restarted listener) or a dead process's.
        let _ = std::fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket)?;
        let cleanup = Cleanup(vec![socket.clone(), info.clone()]);
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect();
        let written = json!({"pid": pid, "roots": roots}).to_string();
        let tmp = dir.join(format!("ask-lsp-{pid}.json.tmp"));
        std::fs::write(&tmp, written)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&tmp, &info)?;
        Ok((listener, cleanup))
    }

    async fn serve(self: Arc<Self>, stream: UnixStream, sink: EventSink) {
        if !same_user(&stream) {
            tracing::warn!("hook socket: a connection from another user was refused");
            return;
        }
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        let mut line = Vec::new();
        let request = tokio::time::timeout(
            REQUEST_WITHIN,
            (&mut read)
                .take(MAX_REQUEST as u64 + 1)
                .read_until(b'\n', &mut line),
        )
        .await;
        let prompt = match request {
            Ok(Ok(_)) if line.ends_with(b"\n") => request_prompt(&line),
            Ok(Ok(_)) if line.len() > MAX_REQUEST => Err("the hook input is too large".into()),
            _ => Err("no complete request".into()),
        };
        drop(line);
        let (prompt, suggestions) = match prompt {
            Ok(parsed) => parsed,
            Err(error) => {
                tracing::warn!("hook socket: {error}");
                let _ = write
                    .write_all(format!("{}\n", json!({"error": error})).as_bytes())
                    .await;
                return;
            }
        };
        let id = prompt.id.clone();
        let (answer, answered) = oneshot::channel();
        self.waiting.lock().expect("not poisoned").insert(
            id.clone(),
            Waiting {
                suggestions,
                answer,
            },
        );
        if sink.send(BackendEvent::Asked(prompt)).is_err() {
            self.waiting.lock().expect("not poisoned").remove(&id);
            return;
        }
        // The hook sends nothing more: anything read means it is gone.
        let mut rest = [0u8; 64];
        tokio::select! {
            Ok((decision, written)) = answered => {
                let line = format!("{decision}\n");
                let ok = write.write_all(line.as_bytes()).await.is_ok()
                    && write.flush().await.is_ok();
                let _ = written.send(ok);
            }
            _ = read.read(&mut rest) => {
                if self.waiting.lock().expect("not poisoned").remove(&id).is_some() {
                    let _ = sink.send(BackendEvent::Withdrawn { id });
                }
            }
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

/// Claude Code's `PermissionRequest` hook input (the fields used).
#[derive(Deserialize)]
struct ClaudeInput {
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    permission_suggestions: Option<Value>,
}

/// The prompt a request asks, with the suggestions "always" gives back.
fn request_prompt(line: &[u8]) -> Result<(Prompt, Option<Value>), String> {
    let request: Request =
        serde_json::from_slice(line).map_err(|e| format!("malformed request: {e}"))?;
    if request.agent != "claude" {
        return Err(format!(
            "agent {:?} is not supported",
            crate::text::for_display(&request.agent, 40)
        ));
    }
    if request.input.get().len() > MAX_INPUT {
        return Err("the hook input is too large".into());
    }
    let input: ClaudeInput = serde_json::from_str(request.input.get())
        .map_err(|e| format!("not a Claude Code PermissionRequest: {e}"))?;
    claude_prompt(input)
}

fn claude_prompt(input: ClaudeInput) -> Result<(Prompt, Option<Value>), String> {
    if let Some(event) = &input.hook_event_name
        && event != "PermissionRequest"
    {
        return Err(format!(
            "hook event {:?} is not PermissionRequest",
            crate::text::for_display(event, 40)
        ));
    }
    // Its answers would go back in `updatedInput`, which this does not do
    // yet: Claude Code asks its questions itself.
    if input.tool_name == "AskUserQuestion" {
        return Err("AskUserQuestion is left to Claude Code".into());
    }
    // What the broker routes by must fit, or it would drop the prompt and
    // the hook would wait for nothing.
    if input.session_id.len() > crate::prompt::limits::ID_LEN
        || input
            .cwd
            .as_ref()
            .is_some_and(|cwd| cwd.len() > crate::prompt::limits::DESCRIPTION_LEN)
    {
        return Err("the session id or directory is too long".into());
    }
    let field = |name: &str| input.tool_input.get(name).and_then(Value::as_str);
    let command = match input.tool_name.as_str() {
        "Bash" => field("command").map(str::to_owned),
        _ => None,
    };
    // Everything else the tool would get is shown whole (a Bash call's
    // `dangerouslyDisableSandbox` too), beside the command and title.
    let details = match &input.tool_input {
        Value::Object(map) => {
            let mut rest = map.clone();
            if command.is_some() {
                rest.remove("command");
                if field("description").is_some() {
                    rest.remove("description");
                }
            }
            (!rest.is_empty()).then(|| serde_json::to_string_pretty(&rest).unwrap_or_default())
        }
        _ => None,
    };
    let patterns = match &command {
        Some(command) => vec![command.clone()],
        None => ["file_path", "path", "url", "pattern"]
            .into_iter()
            .filter_map(field)
            .map(str::to_owned)
            .collect(),
    };
    let title = match field("description") {
        Some(description) => format!("{}: {description}", input.tool_name),
        None => format!("Claude Code asks to use {}", input.tool_name),
    };
    let suggestions = input
        .permission_suggestions
        .filter(|s| s.as_array().is_some_and(|a| !a.is_empty()));
    let choice = |id: &str, label: String, effect| PermissionChoice {
        id: id.into(),
        label,
        effect,
    };
    let mut choices = vec![choice(ALLOW_ONCE, "Allow once".into(), Effect::AllowOnce)];
    // Shown as Claude will store them; left out when too long to show whole.
    if let Some(suggested) = &suggestions {
        let label = format!("Allow always (adds {suggested})");
        if label.chars().count() <= crate::prompt::limits::LABEL_LEN {
            choices.push(choice(ALLOW_ALWAYS, label, Effect::AllowAlways));
        }
    }
    choices.push(choice(REJECT, "Reject".into(), Effect::RejectOnce));
    let prompt = Prompt {
        id: format!("hook-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)),
        session: input.session_id,
        directory: input.cwd,
        origin: Origin {
            tool_call: None,
            agent: Some("claude".into()),
            session_title: None,
        },
        kind: Kind::Permission(Box::new(Permission {
            action: input.tool_name,
            title,
            patterns,
            command,
            diff: details,
            choices,
            raw_command: None,
            raw_patterns: Vec::new(),
        })),
    };
    Ok((prompt, suggestions))
}

/// The decision in the hook's terms: `{}` decides nothing (Claude asks in
/// its own dialog).
fn decision(reply: &Reply, suggestions: Option<Value>) -> Value {
    match reply {
        Reply::Answer(Answer::Permission { choice }) => match choice.as_str() {
            ALLOW_ONCE => json!({"behavior": "allow"}),
            ALLOW_ALWAYS => match suggestions {
                Some(suggestions) => {
                    json!({"behavior": "allow", "updatedPermissions": suggestions})
                }
                None => json!({}),
            },
            REJECT => json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            _ => json!({}),
        },
        Reply::Reject { message } => json!({
            "behavior": "deny",
            "message": message.as_deref().unwrap_or(DEFAULT_DENIAL),
        }),
        Reply::Answer(_) | Reply::Cancel => json!({}),
    }
}

impl Backend for HookListener {
    fn source(&self) -> Source {
        Source {
            backend: "hook",
            url: format!("unix:ask-lsp-{}.sock", std::process::id()),
            generation: None,
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let gone = || BackendError::NotFound {
                server: HOOK_SERVER.into(),
            };
            let waiting = self
                .waiting
                .lock()
                .expect("not poisoned")
                .remove(&prompt.id)
                .ok_or_else(gone)?;
            let (written, was_written) = oneshot::channel();
            let decision = decision(reply, waiting.suggestions);
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
                    let error = format!("hook socket: {e}");
                    tracing::warn!("{error}; `ask-lsp hook` cannot reach this instance");
                    let _ = sink.send(BackendEvent::Disconnected { error });
                    return;
                }
            };
            let _ = sink.send(BackendEvent::Connected);
            // Connections live inside this task: stopping it closes them,
            // and each hook then falls back to the agent's own prompt.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            connections.spawn(self.clone().serve(stream, sink.clone()));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn input(extra: Value) -> ClaudeInput {
        let mut base = json!({
            "hook_event_name": "PermissionRequest",
            "session_id": "s1",
            "cwd": "/p",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build/", "description": "Clean"},
        });
        base.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_bash_request_shows_its_whole_command_and_offers_always_only_with_suggestions() {
        let (prompt, suggestions) = claude_prompt(input(json!({}))).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!("{prompt:?}")
        };
        assert_eq!(permission.command.as_deref(), Some("rm -rf build/"));
        assert_eq!(permission.title, "Bash: Clean");
        assert_eq!(permission.diff, None);
        let mut unsandboxed = input(json!({}));
        unsandboxed.tool_input["dangerouslyDisableSandbox"] = json!(true);
        let (prompt, _) = claude_prompt(unsandboxed).unwrap();
        let Kind::Permission(shown) = &prompt.kind else {
            panic!()
        };
        assert_eq!(
            shown.diff.as_deref(),
            Some("{\n  \"dangerouslyDisableSandbox\": true\n}")
        );
        let ids: Vec<&str> = permission.choices.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, [ALLOW_ONCE, REJECT]);
        assert_eq!(suggestions, None);

        let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}],
                            "behavior": "allow", "destination": "localSettings"}]);
        let (prompt, suggestions) =
            claude_prompt(input(json!({"permission_suggestions": rules}))).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.choices[1].id, ALLOW_ALWAYS);
        assert!(
            permission.choices[1]
                .label
                .contains("\"ruleContent\":\"rm:*\"")
        );
        assert_eq!(
            decision(
                &Reply::Answer(Answer::Permission {
                    choice: ALLOW_ALWAYS.into()
                }),
                suggestions
            ),
            json!({"behavior": "allow", "updatedPermissions": rules})
        );
    }

    #[test]
    fn decisions_map_to_the_hook_and_nobody_choosing_decides_nothing() {
        let pick = |choice: &str| {
            Reply::Answer(Answer::Permission {
                choice: choice.into(),
            })
        };
        assert_eq!(
            decision(&pick(ALLOW_ONCE), None),
            json!({"behavior": "allow"})
        );
        assert_eq!(
            decision(&pick(REJECT), None),
            json!({"behavior": "deny", "message": DEFAULT_DENIAL})
        );
        assert_eq!(
            decision(
                &Reply::Reject {
                    message: Some("use make clean".into())
                },
                None
            ),
            json!({"behavior": "deny", "message": "use make clean"})
        );
        assert_eq!(decision(&Reply::Cancel, None), json!({}));
        // "always" without suggestions to store is no decision, not a plain allow.
        assert_eq!(decision(&pick(ALLOW_ALWAYS), None), json!({}));
    }

    #[test]
    fn other_events_agents_and_bad_json_are_refused() {
        assert!(claude_prompt(input(json!({"hook_event_name": "PreToolUse"}))).is_err());
        assert!(claude_prompt(input(json!({"tool_name": "AskUserQuestion"}))).is_err());
        assert!(claude_prompt(input(json!({"session_id": "s".repeat(257)}))).is_err());
        assert!(claude_prompt(input(json!({"cwd": "/".repeat(2001)}))).is_err());
        assert!(request_prompt(b"{not json").is_err());
        assert!(request_prompt(br#"{"agent":"codex","input":{}}"#).is_err());
        assert!(request_prompt(br#"{"agent":"claude","input":{"cwd":"/p"}}"#).is_err());
        let ok = br#"{"agent":"claude","input":{"tool_name":"Write","tool_input":{"file_path":"/p/a","content":"x"}}}"#;
        let (prompt, _) = request_prompt(ok).unwrap();
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        assert_eq!(permission.patterns, ["/p/a"]);
        assert!(
            permission
                .diff
                .as_deref()
                .unwrap()
                .contains("\"content\": \"x\"")
        );
    }
}
