//! Test harness: the real `ask-lsp` binary driven over stdio as an LSP client
//! would, against the in-process simulated OpenCode server.
#![allow(dead_code)] // each test binary uses a different part of it

pub mod acp_agent;
pub mod agents;
pub mod tmux;

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ask_sim::QuestionInfo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

pub use ask_sim::{Received, Sim, SimOptions};

/// How long a test waits for what must come: generous, so that a busy
/// machine (another build on the same cores) is slow, not a failure; a
/// passing test never waits it out.
pub const WAIT: Duration = Duration::from_secs(60);

/// Messages every test may ignore: status updates and log lines.
const NOISE: [&str; 2] = ["askQuestions/status", "window/logMessage"];

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    incoming: mpsc::UnboundedReceiver<Value>,
    /// Messages read while waiting for something else.
    backlog: VecDeque<Value>,
    next_id: i64,
    /// Everything received, noise included, for assertions on absence.
    pub seen: Vec<Value>,
    stderr: Arc<Mutex<String>>,
}

impl LspClient {
    pub async fn start(env: &[(&str, &str)]) -> LspClient {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("ASK_LSP_LOG", "ask_lsp=debug")
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .env_remove("ASK_LSP_URL")
            // No service.json of the person running the tests is discovered.
            .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
            // No hook of the person's own Claude Code reaches a test's
            // instance (tests/it/hook.rs turns it on in a runtime dir of its own).
            .env("ASK_LSP_HOOK", "0")
            // Nor the daemon of the person's own Codex (tests/it/codex_daemon.rs
            // points CODEX_HOME at one of its own).
            .env("ASK_LSP_CODEX", "0")
            // English, whatever the language of the person running the
            // tests (a test that wants another passes LANG or a setting).
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("ask-lsp starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut child_stderr = BufReader::new(child.stderr.take().expect("piped"));
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut line = String::new();
            while child_stderr.read_line(&mut line).await.unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = Some(value.parse::<usize>().expect("numeric length"));
                    }
                }
                let mut body = vec![0; length.expect("Content-Length header")];
                reader.read_exact(&mut body).await.expect("whole body");
                let message = serde_json::from_slice(&body).expect("stdout carries only JSON-RPC");
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        LspClient {
            child,
            stdin,
            incoming,
            backlog: VecDeque::new(),
            next_id: 0,
            seen: Vec::new(),
            stderr,
        }
    }

    /// What ask-lsp logged so far (at debug level).
    pub fn logs(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// What ask-lsp logs, also once the client is gone.
    pub fn logs_handle(&self) -> Arc<Mutex<String>> {
        self.stderr.clone()
    }

    pub async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.stdin
            .write_all(frame.as_bytes())
            .await
            .expect("ask-lsp reads stdin");
        self.stdin.flush().await.expect("flush");
    }

    /// Writes bytes as they are, for framing ask-lsp must cope with.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin
            .write_all(bytes)
            .await
            .expect("ask-lsp reads stdin");
        self.stdin.flush().await.expect("flush");
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    pub async fn respond(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// Answers an `askQuestions/ask` request.
    pub async fn answer(&mut self, ask: &Value, answers: Value) {
        self.respond(
            &ask["id"],
            json!({"outcome": "answered", "answers": answers}),
        )
        .await;
    }

    pub async fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .await;
    }

    async fn read(&mut self) -> Value {
        let message = tokio::time::timeout(WAIT, self.incoming.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no message from ask-lsp within {WAIT:?}; seen: {:#?}\nits log:\n{}",
                    self.seen,
                    self.stderr.lock().unwrap()
                )
            })
            .expect("ask-lsp closed stdout");
        self.seen.push(message.clone());
        message
    }

    /// Sends a request and returns its response; anything else that arrives
    /// meanwhile is kept for [`next`](Self::next).
    /// What the `askLsp.status` command answers (its `result`).
    pub async fn status(&mut self) -> Value {
        self.request(
            "workspace/executeCommand",
            json!({"command": "askLsp.status"}),
        )
        .await["result"]
            .clone()
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.read().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// The next message from ask-lsp that is not noise.
    pub async fn next(&mut self) -> Value {
        loop {
            let message = match self.backlog.pop_front() {
                Some(message) => message,
                None => self.read().await,
            };
            let method = message.get("method").and_then(Value::as_str).unwrap_or("");
            if !NOISE.contains(&method) {
                return message;
            }
        }
    }

    /// The next message with this method, skipping any other.
    pub async fn next_method(&mut self, method: &str) -> Value {
        loop {
            let message = self.next().await;
            if message["method"] == method {
                return message;
            }
        }
    }

    /// Every message (noise included) that arrives until none has for `quiet`.
    pub async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut drained: Vec<Value> = self.backlog.drain(..).collect();
        while let Ok(Some(message)) = tokio::time::timeout(quiet, self.incoming.recv()).await {
            self.seen.push(message.clone());
            drained.push(message);
        }
        drained
    }

    /// Asserts nothing but noise arrives for `quiet`.
    pub async fn expect_quiet(&mut self, quiet: Duration) {
        for message in self.backlog.drain(..) {
            let method = message.get("method").and_then(Value::as_str).unwrap_or("");
            assert!(NOISE.contains(&method), "expected quiet, got {message:#}");
        }
        let deadline = tokio::time::Instant::now() + quiet;
        while let Ok(Some(message)) = tokio::time::timeout_at(deadline, self.incoming.recv()).await
        {
            self.seen.push(message.clone());
            let method = message.get("method").and_then(Value::as_str).unwrap_or("");
            assert!(NOISE.contains(&method), "expected quiet, got {message:#}");
        }
    }

    /// `initialize` + `initialized`; returns the `initialize` result.
    pub async fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        let response = self
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": capabilities,
                       "initializationOptions": options}),
            )
            .await;
        self.notify("initialized", json!({})).await;
        response
    }

    /// Initializes with the extension opted in and one server, then waits
    /// until ask-lsp is connected to it.
    pub async fn with_extension(sim: &Sim) -> LspClient {
        LspClient::with_extension_env(sim, &[]).await
    }

    /// [`with_extension`](Self::with_extension), ask-lsp started with `env`.
    pub async fn with_extension_env(sim: &Sim, env: &[(&str, &str)]) -> LspClient {
        let mut client = LspClient::start(env).await;
        client
            .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
            .await;
        wait_for(|| sim.subscribers() > 0).await;
        client
    }

    pub async fn shutdown(mut self) -> std::process::ExitStatus {
        let response = self.request("shutdown", Value::Null).await;
        assert_eq!(response["result"], Value::Null, "{response}");
        self.notify("exit", Value::Null).await;
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("ask-lsp exits after `exit`")
            .expect("wait")
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    pub fn close_stdin(self) -> Child {
        drop(self.stdin);
        self.child
    }
}

pub fn extension_caps() -> Value {
    json!({"experimental": {"askQuestions": {"version": 2, "kinds": ["permission", "form"]}},
           "window": {"showMessage": {}}})
}

pub fn plain_caps() -> Value {
    json!({"window": {"showMessage": {"messageActionItem": {"additionalPropertiesSupport": false}}}})
}

pub async fn sim() -> Sim {
    Sim::start(SimOptions::default())
        .await
        .expect("sim listens")
}

/// An HTTP client for a test's own requests. reqwest is built without a
/// crypto provider (Cargo.toml): ring is installed first, as ask-lsp does.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A process in a process group of its own, the whole group killed when
/// dropped: what it started goes with it (sandbox-agent's agents outlived
/// it, codex-acp for an hour after the run).
pub struct Group(tokio::process::Child);

impl Group {
    pub fn spawn(command: &mut tokio::process::Command) -> std::io::Result<Group> {
        command
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map(Group)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0.id().and_then(|pid| i32::try_from(pid).ok()) {
            // SAFETY: signals the process group this test started.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

/// A port nothing listens on now, for a server the test starts. Chosen below
/// the kernel's ephemeral range: a port from `bind(0)` is free only until the
/// next outgoing connection or `bind(0)` takes it, and with hundreds of
/// those in parallel a server started a moment later sometimes found its
/// port taken.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, RandomState};
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    const LOWEST: u16 = 10_000;
    let span = ephemeral_from.saturating_sub(LOWEST).max(1);
    let random = RandomState::new();
    for attempt in 0u16..1000 {
        let port = LOWEST + (random.hash_one(attempt) % u64::from(span)) as u16;
        // A machine without IPv6 has no `::1` to take.
        let free = |ip: &str| match std::net::TcpListener::bind((ip, port)) {
            Ok(_) => true,
            Err(error) => error.kind() != std::io::ErrorKind::AddrInUse,
        };
        if free("127.0.0.1") && free("::1") {
            return port;
        }
    }
    panic!("no free loopback port below {ephemeral_from}")
}

pub async fn wait_for(mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub fn questions(value: Value) -> Vec<QuestionInfo> {
    serde_json::from_value(value).expect("well-formed questions")
}

pub fn database() -> Vec<QuestionInfo> {
    questions(json!([{
        "question": "Which database?", "header": "Database",
        "options": [{"label": "Postgres", "description": "Relational"},
                    {"label": "SQLite", "description": "Embedded"}]}]))
}

pub fn checks() -> Vec<QuestionInfo> {
    questions(json!([{
        "question": "Which checks?", "header": "Checks", "multiple": true,
        "options": [{"label": "Unit", "description": ""}, {"label": "Lint", "description": ""},
                    {"label": "E2E", "description": ""}]}]))
}

pub fn reply(id: &str, answers: Value) -> Received {
    Received::Reply {
        id: id.into(),
        answers: serde_json::from_value(answers).expect("string[][]"),
    }
}
