//! Codex through ACP, for real: `@zed-industries/codex-acp` (pinned with
//! `@openai/codex` in tests/codex/install.sh) hosted by sandbox-agent
//! (tests/sandbox_agent/install.sh), offline against tests/codex/mock-openai,
//! ask-lsp following sandbox-agent as the editor's server.
//!
//! Needs `SANDBOX_AGENT_BIN` and `CODEX_ACP_BIN`; without them each test
//! says SKIP and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

fn required(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) => Some(path.into()),
        None => {
            assert!(
                std::env::var_os("ASK_LSP_REQUIRE_E2E").is_none(),
                "ASK_LSP_REQUIRE_E2E is set but {var} is not (tests/codex/install.sh, tests/sandbox_agent/install.sh)"
            );
            eprintln!("SKIP: {var} not set");
            None
        }
    }
}

/// sandbox-agent running codex-acp as its agent `mock` (the name its agent
/// directory gives a custom agent), a mock Responses API, and a project.
/// Everything codex-acp reads on stdin is also written to `stdin.log`.
struct Codex {
    _sandbox_agent: Child,
    _api: Child,
    api_port: u16,
    url: String,
    http: reqwest::Client,
    dir: tempfile::TempDir,
}

impl Codex {
    async fn start() -> Option<Codex> {
        let sandbox_agent = required("SANDBOX_AGENT_BIN")?;
        let codex_acp = required("CODEX_ACP_BIN")?;
        let api_port = free_port();
        let mut api = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codex/mock-openai"))
            .arg(api_port.to_string())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut ready = tokio::io::BufReader::new(api.stdout.take().unwrap());
        let mut line = String::new();
        ready.read_line(&mut line).await.unwrap();
        assert_eq!(line.trim(), "listening");

        let dir = tempfile::tempdir().unwrap();
        for sub in [
            "project",
            "home",
            "codex",
            "data/sandbox-agent/bin/agent_processes",
        ] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        // Codex's defaults for an ACP session: read-only, asking on request.
        let config = format!(
            r#"model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{api_port}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"#
        );
        std::fs::write(dir.path().join("codex/config.toml"), config).unwrap();
        let agent = format!(
            "#!/bin/sh\nexport CODEX_HOME='{codex_home}'\ntee -a '{log}' | exec '{bin}'\n",
            codex_home = dir.path().join("codex").display(),
            log = dir.path().join("stdin.log").display(),
            bin = codex_acp.display(),
        );
        let script = dir
            .path()
            .join("data/sandbox-agent/bin/agent_processes/mock-acp");
        std::fs::write(&script, agent).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let port = free_port();
        let process = Command::new(sandbox_agent)
            .args([
                "--no-token",
                "server",
                "--no-telemetry",
                "--port",
                &port.to_string(),
            ])
            .env("HOME", dir.path().join("home"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("sandbox-agent starts");
        let codex = Codex {
            _sandbox_agent: process,
            _api: api,
            api_port,
            url: format!("http://127.0.0.1:{port}"),
            http: common::http_client(),
            dir,
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        while codex
            .http
            .get(format!("{}/v1/acp", codex.url))
            .timeout(Duration::from_secs(1))
            .send()
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "sandbox-agent did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Some(codex)
    }

    fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("project")).unwrap()
    }

    async fn rpc(&self, query: &str, id: u64, method: &str, params: Value) -> Value {
        self.http
            .post(format!("{}/v1/acp/ask{query}", self.url))
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `initialize` and `session/new` in the project, as the agent's UI
    /// client does.
    async fn session(&self) -> String {
        let init = self
            .rpc(
                "?agent=mock",
                1,
                "initialize",
                json!({"protocolVersion": 1,
                       "clientCapabilities": {"elicitation": {"form": {}, "url": {}}}}),
            )
            .await;
        assert_eq!(init["result"]["agentInfo"]["name"], "codex-acp", "{init}");
        assert_eq!(init["result"]["agentInfo"]["version"], "0.16.0", "{init}");
        let session = self
            .rpc(
                "",
                2,
                "session/new",
                json!({"cwd": self.project(), "mcpServers": []}),
            )
            .await;
        session["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{session}"))
            .to_owned()
    }

    /// A turn in `session`; resolves to the prompt's whole response.
    fn turn(&self, session: &str, id: u64, text: &str) -> tokio::task::JoinHandle<Value> {
        let (http, url) = (self.http.clone(), format!("{}/v1/acp/ask", self.url));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}});
        tokio::spawn(async move {
            http.post(url)
                .json(&body)
                .timeout(Duration::from_secs(60))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    }

    /// ask-lsp following this sandbox-agent (its ACP server id `ask`).
    async fn editor(&self) -> LspClient {
        let mut client = LspClient::start(&[]).await;
        client
            .initialize(
                extension_caps(),
                json!({"servers": [{"name": "sa", "backend": "sandbox-agent",
                                    "url": self.url, "serverId": "ask"}]}),
            )
            .await;
        client
    }

    /// What Codex sent back to the model for each tool call.
    async fn received(&self) -> Vec<Value> {
        let body: Value = self
            .http
            .get(format!("http://127.0.0.1:{}/received", self.api_port))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        body.as_array().cloned().unwrap_or_default()
    }

    /// The responses codex-acp read for its own requests (messages without
    /// a method), as read.
    fn responses(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("stdin.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m.get("method").is_none() && m.get("id").is_some())
            .collect()
    }
}

/// The command Codex asks to run, as ask-lsp shows it; the ids of the
/// choices offered.
fn asked(ask: &Value, command: &str) -> Vec<String> {
    let params = &ask["params"];
    assert_eq!(params["server"], "sa", "{params}");
    assert_eq!(params["kind"], "permission", "{params}");
    assert!(
        params["permission"].to_string().contains(command),
        "{params}"
    );
    params["permission"]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn codex_runs_a_command_the_editor_allows_once() {
    let Some(codex) = Codex::start().await else {
        return;
    };
    let session = codex.session().await;
    let mut client = codex.editor().await;
    let target = codex.project().join("allowed");
    let command = format!("touch {}", target.display());
    let turn = codex.turn(&session, 50, &format!("RUN: {command}"));
    let ask = client.next_method("askQuestions/ask").await;
    let choices = asked(&ask, &command);
    assert_eq!(
        choices,
        ["approved", "approved-execpolicy-amendment", "abort"],
        "{ask}"
    );
    assert_eq!(ask["params"]["sessionID"], session.as_str());
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "approved"}),
        )
        .await;
    let result = turn.await.unwrap();
    assert_eq!(result["result"]["stopReason"], "end_turn", "{result}");
    assert!(target.exists(), "the allowed command ran");
    let told = codex.received().await;
    assert!(
        told.iter().any(|r| r["output"]
            .as_str()
            .is_some_and(|o| o.contains("Process exited with code 0"))),
        "{told:?}"
    );
    let responses = codex.responses();
    let answers: Vec<&Value> = responses
        .iter()
        .filter(|r| r["result"]["outcome"].is_object())
        .collect();
    assert_eq!(
        answers.len(),
        1,
        "one answer to the one request: {responses:?}"
    );
    assert_eq!(
        answers[0]["result"]["outcome"],
        json!({"outcome": "selected", "optionId": "approved"})
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_does_not_run_a_command_the_editor_rejects() {
    let Some(codex) = Codex::start().await else {
        return;
    };
    let session = codex.session().await;
    let mut client = codex.editor().await;
    let target = codex.project().join("rejected");
    let command = format!("touch {}", target.display());
    let turn = codex.turn(&session, 50, &format!("RUN: {command}"));
    let ask = client.next_method("askQuestions/ask").await;
    asked(&ask, &command);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let result = tokio::time::timeout(Duration::from_secs(30), turn)
        .await
        .expect("the turn ends")
        .unwrap();
    assert!(result["result"]["stopReason"].is_string(), "{result}");
    assert!(!target.exists(), "the rejected command did not run");
    // Codex's reject_once option ("abort") ends the turn: the model is
    // told nothing more (ACP carries no message with a permission).
    let told = codex.received().await;
    assert!(told.is_empty(), "{told:?}");
    let responses = codex.responses();
    let answers: Vec<&Value> = responses
        .iter()
        .filter(|r| r["result"]["outcome"].is_object())
        .collect();
    assert_eq!(answers.len(), 1, "{responses:?}");
    assert_eq!(
        answers[0]["result"]["outcome"],
        json!({"outcome": "selected", "optionId": "abort"})
    );
    assert!(client.shutdown().await.success());
}
