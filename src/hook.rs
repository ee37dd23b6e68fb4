//! `ask-lsp hook claude` / `ask-lsp hook codex`: Claude Code's or Codex's
//! `PermissionRequest` hook. Hands the hook input to a running ask-lsp
//! (src/backends/hook/) and prints its decision in the agent's hook format
//! (docs/hook.md).
//!
//! Never worse than no hook: whatever goes wrong (no ask-lsp, no answer in
//! time, bad input), it prints nothing and exits 0, and the agent asks in
//! its own dialog. It never allows by itself and never writes to the
//! terminal the agent draws on (stderr gets at most one line).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::backends::hook::{MAX_INPUT, alive, euid, same_user, socket_dir, socket_pid};

/// Below the agents' hook timeout as docs/hook.md configures it (60 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(50);
/// An answer line is a decision: small.
const MAX_ANSWER: u64 = 64 * 1024;
/// An instance's description file is a pid and a few roots.
const MAX_INFO: u64 = 64 * 1024;

/// Runs the hook for `agent` with `timeout` (None: the default), reading
/// the input from `input` and writing a decision to `output`. Every failure
/// is a one-line reason for stderr, and nothing on `output`.
pub async fn run(
    agent: &str,
    timeout: Option<Duration>,
    input: impl Read,
    output: &mut impl std::io::Write,
) -> Result<(), String> {
    if !["claude", "codex"].contains(&agent) {
        return Err(format!(
            "unsupported agent {agent:?} (expected claude or codex)"
        ));
    }
    let mut raw = Vec::new();
    input
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("reading the hook input: {e}"))?;
    if raw.len() > MAX_INPUT {
        return Err(format!("the hook input is over {MAX_INPUT} bytes"));
    }
    let parsed: Value =
        serde_json::from_slice(&raw).map_err(|e| format!("the hook input is not JSON: {e}"))?;
    let cwd = parsed.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let mut request =
        serde_json::to_vec(&json!({"agent": agent, "input": parsed})).map_err(|e| e.to_string())?;
    drop(parsed);
    request.push(b'\n');
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    let answer = tokio::time::timeout(timeout, ask(cwd.as_deref(), &request))
        .await
        .map_err(|_| format!("no decision within {timeout:?}"))??;
    let decision = hook_output(agent, &answer)?;
    writeln!(output, "{decision}").map_err(|e| e.to_string())?;
    Ok(())
}

/// Asks every instance whose workspace holds `cwd` at once, else the most
/// recent that takes the connection; the first decision wins. Returning
/// drops the other connections, which withdraws the prompt there.
async fn ask(cwd: Option<&Path>, request: &[u8]) -> Result<Value, String> {
    let dir = socket_dir(crate::app::hook_socket_dir(), false)
        .map_err(|e| format!("no ask-lsp running ({e})"))?;
    let (holding, others) = instances(&dir, cwd);
    if holding.is_empty() && others.is_empty() {
        return Err("no ask-lsp running".into());
    }
    let mut asked = FuturesUnordered::new();
    for socket in &holding {
        if let Some(stream) = connect(socket).await {
            asked.push(exchange(stream, request));
        }
    }
    if asked.is_empty() {
        for socket in &others {
            if let Some(stream) = connect(socket).await {
                asked.push(exchange(stream, request));
                break;
            }
        }
    }
    let mut outcome = Err("no ask-lsp running answers".to_owned());
    while let Some(answer) = asked.next().await {
        match answer {
            Ok(answer) if answer.get("behavior").is_some() => return Ok(answer),
            other => outcome = other,
        }
    }
    outcome
}

/// A connection to an instance of this user's, or `None`.
async fn connect(socket: &Path) -> Option<UnixStream> {
    let stream = UnixStream::connect(socket).await.ok()?;
    if !same_user(&stream) {
        tracing::warn!("{} belongs to another user; skipped", socket.display());
        return None;
    }
    Some(stream)
}

/// Sends the request; the answer line. The connection stays open until
/// then: closing it withdraws the prompt.
async fn exchange(stream: UnixStream, request: &[u8]) -> Result<Value, String> {
    let (read, mut write) = stream.into_split();
    write
        .write_all(request)
        .await
        .map_err(|e| format!("sending to ask-lsp: {e}"))?;
    let mut line = Vec::new();
    BufReader::new(read)
        .take(MAX_ANSWER)
        .read_until(b'\n', &mut line)
        .await
        .map_err(|e| format!("reading ask-lsp's answer: {e}"))?;
    drop(write);
    if !line.ends_with(b"\n") {
        return Err("ask-lsp closed without a decision".into());
    }
    serde_json::from_slice(&line).map_err(|e| format!("ask-lsp's answer: {e}"))
}

/// The running instances' sockets: those whose workspace holds `cwd`, and
/// the others, the most recently started first. Sockets of dead processes
/// are removed; another user's are skipped.
fn instances(dir: &Path, cwd: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let cwd = cwd.map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.to_owned()));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut found: Vec<(bool, SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten().take(1024) {
        let Some(pid) = socket_pid(&entry.file_name()) else {
            continue;
        };
        let socket = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&socket) else {
            continue;
        };
        if !meta.file_type().is_socket() || meta.uid() != euid() {
            continue;
        }
        let info = dir.join(format!("ask-lsp-{pid}.json"));
        if !alive(pid) {
            let _ = std::fs::remove_file(&socket);
            let _ = std::fs::remove_file(&info);
            continue;
        }
        let holds_cwd = cwd.as_deref().is_some_and(|cwd| holds(&roots(&info), cwd));
        found.push((
            holds_cwd,
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            socket,
        ));
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.1));
    let (holding, others): (Vec<_>, Vec<_>) = found.into_iter().partition(|(holds, _, _)| *holds);
    let sockets =
        |found: Vec<(bool, SystemTime, PathBuf)>| found.into_iter().map(|f| f.2).collect();
    (sockets(holding), sockets(others))
}

/// An instance's description file (src/backends/hook/mod.rs writes it).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Info {
    #[serde(default)]
    roots: Vec<PathBuf>,
    #[serde(default)]
    requests: u64,
    #[serde(default)]
    last_request_ms: Option<u64>,
    #[serde(default)]
    last_agent: Option<String>,
}

fn info(path: &Path) -> Info {
    let mut text = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_INFO).read_to_end(&mut text));
    match read {
        Ok(_) => serde_json::from_slice::<Info>(&text).unwrap_or_default(),
        Err(_) => Info::default(),
    }
}

fn roots(path: &Path) -> Vec<PathBuf> {
    info(path).roots
}

/// What `ask-lsp status` says of hooks: where `ask-lsp hook` looks, and
/// each running instance there with when a hook request last reached it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reach {
    directory: Option<String>,
    /// Why hooks can reach no instance here, if so.
    error: Option<String>,
    listeners: Vec<Listener>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listener {
    socket: String,
    pid: i32,
    roots: Vec<String>,
    requests: u64,
    last_request_ms: Option<u64>,
    last_agent: Option<String>,
}

/// The instances `ask-lsp hook` would find now, as it finds them (live,
/// this user's sockets), the most recently started first.
pub fn reach() -> Reach {
    let shown = |path: &Path| {
        crate::text::for_display(&path.to_string_lossy(), crate::text::DISPLAY_MESSAGE_CHARS)
            .into_owned()
    };
    let dir = match socket_dir(crate::app::hook_socket_dir(), false) {
        Ok(dir) => dir,
        Err(e) => {
            return Reach {
                directory: None,
                error: Some(format!("no ask-lsp listens for hooks ({e})")),
                listeners: Vec::new(),
            };
        }
    };
    let (holding, others) = instances(&dir, None);
    let listeners: Vec<Listener> = holding
        .into_iter()
        .chain(others)
        .filter_map(|socket| {
            let pid = socket_pid(socket.file_name()?)?;
            let found = info(&dir.join(format!("ask-lsp-{pid}.json")));
            Some(Listener {
                socket: shown(&socket),
                pid,
                roots: found.roots.iter().map(|r| shown(r)).collect(),
                requests: found.requests,
                last_request_ms: found.last_request_ms,
                last_agent: found.last_agent.map(|a| {
                    crate::text::for_display(&a, crate::text::DISPLAY_ID_CHARS).into_owned()
                }),
            })
        })
        .collect();
    Reach {
        directory: Some(shown(&dir)),
        error: listeners
            .is_empty()
            .then(|| "no ask-lsp listens for hooks".to_owned()),
        listeners,
    }
}

impl Reach {
    /// For a person: one line for where hooks look, one per instance.
    pub fn write(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        match (&self.directory, &self.error) {
            (Some(dir), Some(error)) => writeln!(out, "hooks ({dir}): {error}")?,
            (Some(dir), None) => writeln!(out, "hooks ({dir}):")?,
            (None, error) => writeln!(out, "hooks: {}", error.as_deref().unwrap_or_default())?,
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        for listener in &self.listeners {
            let workspace = match listener.roots.as_slice() {
                [] => "no workspace".to_owned(),
                roots => format!("workspace {}", roots.join(", ")),
            };
            let reached = match (listener.last_request_ms, &listener.last_agent) {
                (None, _) => "no hook request has reached it yet".to_owned(),
                (Some(at), agent) => format!(
                    "last hook request {} ago{}, {} in all",
                    ago(now.saturating_sub(at)),
                    agent
                        .as_deref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default(),
                    listener.requests
                ),
            };
            writeln!(
                out,
                "  {} (pid {}, {workspace}): {reached}",
                listener.socket, listener.pid
            )?;
        }
        Ok(())
    }
}

/// `ms` as a person reads an age: "12 s", "3 min", "2 h".
fn ago(ms: u64) -> String {
    match ms / 1000 {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

/// Whether one of `roots` holds `cwd`.
fn holds(roots: &[PathBuf], cwd: &Path) -> bool {
    roots
        .iter()
        .any(|root| !root.as_os_str().is_empty() && cwd.starts_with(root))
}

/// ask-lsp's answer as the agent's hook output (Claude's and Codex's have
/// one shape; Codex takes no `updatedPermissions`). Only an explicit allow
/// or deny decides; anything else is an error (no decision).
fn hook_output(agent: &str, answer: &Value) -> Result<Value, String> {
    let mut decision = serde_json::Map::new();
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            decision.insert("behavior".into(), json!("allow"));
            if let Some(rules) = answer.get("updatedPermissions")
                && agent == "claude"
            {
                decision.insert("updatedPermissions".into(), rules.clone());
            }
        }
        Some("deny") => {
            decision.insert("behavior".into(), json!("deny"));
            if let Some(message) = answer.get("message").and_then(Value::as_str) {
                decision.insert("message".into(), json!(message));
            }
        }
        _ => {
            return Err(match answer.get("error").and_then(Value::as_str) {
                Some(error) => format!("ask-lsp refused the request: {error}"),
                None => "no decision in the editor".into(),
            });
        }
    }
    Ok(json!({
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allow_and_deny_decide() {
        let claude_output = |answer: &Value| hook_output("claude", answer);
        assert_eq!(
            claude_output(&json!({"behavior": "allow"})).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            claude_output(&json!({"behavior": "deny", "message": "no"})).unwrap()["hookSpecificOutput"]
                ["decision"],
            json!({"behavior": "deny", "message": "no"})
        );
        assert!(claude_output(&json!({})).is_err());
        assert!(claude_output(&json!({"behavior": "ask"})).is_err());
        assert!(claude_output(&json!({"error": "malformed"})).is_err());
        for agent in ["claude", "codex"] {
            assert!(hook_output(agent, &json!({})).is_err());
            assert!(hook_output(agent, &json!({"behavior": "ask"})).is_err());
        }
    }

    #[test]
    fn codex_gets_the_same_shape_without_stored_rules() {
        let rules = json!([{"type": "addRules"}]);
        assert_eq!(
            hook_output(
                "codex",
                &json!({"behavior": "allow", "updatedPermissions": rules})
            )
            .unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            hook_output("codex", &json!({"behavior": "deny", "message": "use make"})).unwrap()["hookSpecificOutput"]
                ["decision"],
            json!({"behavior": "deny", "message": "use make"})
        );
    }

    #[test]
    fn ages_read_as_a_person_reads_them() {
        assert_eq!(ago(0), "0 s");
        assert_eq!(ago(12_400), "12 s");
        assert_eq!(ago(180_000), "3 min");
        assert_eq!(ago(3 * 3_600_000), "3 h");
    }

    #[test]
    fn a_workspace_holds_the_directories_under_it() {
        let roots = [PathBuf::from("/w/sub")];
        assert!(holds(&roots, Path::new("/w/sub/x")));
        assert!(holds(&roots, Path::new("/w/sub")));
        assert!(!holds(&roots, Path::new("/w/subx")));
        assert!(!holds(&roots, Path::new("/w")));
        assert!(!holds(&[PathBuf::new()], Path::new("/w")));
    }
}
