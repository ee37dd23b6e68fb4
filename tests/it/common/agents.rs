//! What the tests of real agents with `ask-lsp hook` (Claude Code, Codex,
//! Copilot, Qwen Code) share: the agent's path from the install script, a
//! mock model API and what it was told, the editor whose hook socket the
//! agent's hook finds, and the hook process while it waits.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use super::{LspClient, extension_caps, free_port, http_client, wait_for};

/// The path in `$var`; else, with `ASK_LSP_REQUIRE_E2E` set, a failure that
/// names `install` (the script that sets it), without it a SKIP line.
pub fn required(var: &str, install: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) => Some(path.into()),
        None => {
            assert!(
                std::env::var_os("ASK_LSP_REQUIRE_E2E").is_none(),
                "ASK_LSP_REQUIRE_E2E is set but {var} is not ({install})"
            );
            eprintln!("SKIP: {var} not set (run {install})");
            None
        }
    }
}

/// A mock model API (`script`, a path under the crate such as
/// `tests/codex/mock-openai`) on a free port, once it listens; its port.
pub async fn mock_api(script: &str) -> (Child, u16) {
    let port = free_port();
    let mut api = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(script))
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut ready = tokio::io::BufReader::new(api.stdout.take().unwrap());
    let mut line = String::new();
    ready.read_line(&mut line).await.unwrap();
    assert_eq!(line.trim(), "listening");
    (api, port)
}

/// What the mock model API on `port` was told for each tool call, in order.
pub async fn mock_received(port: u16) -> Vec<Value> {
    let body = http_client()
        .get(format!("http://127.0.0.1:{port}/received"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    body.as_array().cloned().unwrap_or_default()
}

/// The model's last tool result on `port`, once there is one past `seen`.
pub async fn told_after(port: u16, seen: usize) -> Value {
    let deadline = tokio::time::Instant::now() + super::WAIT;
    loop {
        let received = mock_received(port).await;
        if received.len() > seen {
            return received[received.len() - 1].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "{received:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Codex's `config.toml` start: the mock Responses API on `api_port` as
/// its model provider, no retries.
pub fn codex_mock_provider(api_port: u16) -> String {
    format!(
        r#"model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{api_port}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"#
    )
}

/// The editor: an ask-lsp LSP server started with `env`, whose workspace is
/// `project` and which follows `sim`.
pub async fn editor_in(project: &Path, sim: &ask_sim::Sim, env: &[(&str, &str)]) -> LspClient {
    editor_with_caps(project, sim, env, extension_caps()).await
}

/// [`editor_in`] for a client declaring `capabilities`.
pub async fn editor_with_caps(
    project: &Path,
    sim: &ask_sim::Sim,
    env: &[(&str, &str)],
    capabilities: Value,
) -> LspClient {
    let mut client = LspClient::start(env).await;
    client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": format!("file://{}", project.display()),
                   "capabilities": capabilities,
                   "initializationOptions": {"servers": [{"url": sim.url()}]}}),
        )
        .await;
    client.notify("initialized", json!({})).await;
    client
}

/// [`editor_in`] with its hook socket in `runtime`, returned once the
/// socket is there for the agent's hook to find.
pub async fn hook_editor(runtime: &Path, project: &Path, sim: &ask_sim::Sim) -> LspClient {
    let mut client = editor_in(
        project,
        sim,
        &[
            ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
            ("ASK_LSP_HOOK", "1"),
        ],
    )
    .await;
    let socket = runtime
        .join("ask-lsp")
        .join(format!("ask-lsp-{}.sock", client.child().id().unwrap()));
    wait_for(|| socket.exists()).await;
    client
}

/// The pid of an `ask-lsp hook {agent}` started for the runtime dir
/// `runtime`.
pub fn running_hook(runtime: &Path, agent: &str) -> Option<i32> {
    let wanted = format!("XDG_RUNTIME_DIR={}", runtime.display());
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let ours = args.first() == Some(&env!("CARGO_BIN_EXE_ask-lsp").as_bytes())
            && args.get(1) == Some(&b"hook".as_slice())
            && args.get(2) == Some(&agent.as_bytes());
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if ours
            && environ
                .split(|b| *b == 0)
                .any(|var| var == wanted.as_bytes())
        {
            return Some(pid);
        }
    }
    None
}
