//! Gemini CLI through ACP, for real: `@google/gemini-cli` (pinned in
//! tests/agents/install.sh) as `gemini --acp`, hosted by sandbox-agent
//! (tests/sandbox_agent/install.sh) as a custom agent, offline against
//! tests/agents/mock-gemini (`GOOGLE_GEMINI_BASE_URL`, an API key; no Google
//! sign-in), ask-lsp following sandbox-agent as the editor's server.
//!
//! Gemini's own hook (`BeforeTool`) can block or force its dialog but never
//! allow, so it is reached through ACP (docs/hook.md, "Gemini CLI").
//!
//! Needs `SANDBOX_AGENT_BIN` and `ASK_LSP_GEMINI_BIN`; without them each
//! test says SKIP and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

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
                "ASK_LSP_REQUIRE_E2E is set but {var} is not (tests/agents/install.sh, tests/sandbox_agent/install.sh)"
            );
            eprintln!("SKIP: {var} not set");
            None
        }
    }
}

/// sandbox-agent running `gemini --acp` as its agent `mock` (the name its
/// agent directory gives a custom agent: sandbox-agent 0.4.2 has no
/// `gemini`), a mock Gemini API, and a project. Everything Gemini reads on
/// stdin is also written to `stdin.log`.
struct Gemini {
    _sandbox_agent: Child,
    _api: Child,
    api_port: u16,
    url: String,
    http: reqwest::Client,
    dir: tempfile::TempDir,
}

impl Gemini {
    async fn start() -> Option<Gemini> {
        let sandbox_agent = required("SANDBOX_AGENT_BIN")?;
        let gemini = required("ASK_LSP_GEMINI_BIN")?;
        let api_port = free_port();
        let mut api = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/mock-gemini"))
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
            "home/.gemini",
            "data/sandbox-agent/bin/agent_processes",
        ] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        // Its API key, chosen in its settings as a person does once; no
        // Google sign-in.
        std::fs::write(
            dir.path().join("home/.gemini/settings.json"),
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
        )
        .unwrap();
        let agent = format!(
            "#!/bin/sh\nexport HOME='{home}' GEMINI_API_KEY=test-key \
             GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{api_port}\n\
             tee -a '{log}' | exec '{bin}' --acp\n",
            home = dir.path().join("home").display(),
            log = dir.path().join("stdin.log").display(),
            bin = gemini.display(),
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
        let gemini = Gemini {
            _sandbox_agent: process,
            _api: api,
            api_port,
            url: format!("http://127.0.0.1:{port}"),
            http: common::http_client(),
            dir,
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        while gemini
            .http
            .get(format!("{}/v1/acp", gemini.url))
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
        Some(gemini)
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
        assert_eq!(init["result"]["agentInfo"]["name"], "gemini-cli", "{init}");
        assert_eq!(init["result"]["agentInfo"]["version"], "0.61.0", "{init}");
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

    /// The paths of the model API Gemini asked, in order.
    async fn model_calls(&self) -> Vec<String> {
        let body: Value = self
            .http
            .get(format!("http://127.0.0.1:{}/requests", self.api_port))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        serde_json::from_value(body).unwrap_or_default()
    }

    /// The function responses Gemini sent back to the model.
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

    /// The responses Gemini read for its own requests (messages without
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

/// The command Gemini asks to run, as ask-lsp shows it; the ids of the
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

/// The outcomes Gemini read for its permission requests.
fn answers(gemini: &Gemini) -> Vec<Value> {
    gemini
        .responses()
        .into_iter()
        .filter(|r| r["result"]["outcome"].is_object())
        .map(|r| r["result"]["outcome"].clone())
        .collect()
}

#[tokio::test]
async fn gemini_runs_a_command_the_editor_allows_once() {
    let Some(gemini) = Gemini::start().await else {
        return;
    };
    let session = gemini.session().await;
    let mut client = gemini.editor().await;
    let target = gemini.project().join("allowed");
    let command = format!("touch {}", target.display());
    let turn = gemini.turn(&session, 50, &format!("RUN: {command}"));
    let ask = client.next_method("askQuestions/ask").await;
    let choices = asked(&ask, &command);
    assert_eq!(
        choices,
        ["proceed_always", "proceed_once", "cancel"],
        "{ask}"
    );
    assert_eq!(ask["params"]["sessionID"], session.as_str());
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "proceed_once"}),
        )
        .await;
    let result = turn.await.unwrap();
    assert_eq!(result["result"]["stopReason"], "end_turn", "{result}");
    assert!(target.exists(), "the allowed command ran");
    let told = gemini.received().await;
    assert!(
        told.iter()
            .any(|r| r["functionResponse"]["response"]["output"].is_string()),
        "{told:?}"
    );
    assert_eq!(
        answers(&gemini),
        [json!({"outcome": "selected", "optionId": "proceed_once"})],
        "one answer to the one request"
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn gemini_does_not_run_a_command_the_editor_rejects() {
    let Some(gemini) = Gemini::start().await else {
        return;
    };
    let session = gemini.session().await;
    let mut client = gemini.editor().await;
    let target = gemini.project().join("rejected");
    let command = format!("touch {}", target.display());
    let turn = gemini.turn(&session, 50, &format!("RUN: {command}"));
    let ask = client.next_method("askQuestions/ask").await;
    asked(&ask, &command);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let result = tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .expect("the turn ends")
        .unwrap();
    assert!(result["result"]["stopReason"].is_string(), "{result}");
    assert!(!target.exists(), "the rejected command did not run");
    // Gemini's reject_once option ("cancel"): the model is told the user
    // cancelled the tool; ACP carries no message with a permission, so the
    // person's words do not reach it.
    let told = gemini.received().await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        told[0]["functionResponse"]["response"]["error"],
        "Tool \"run_shell_command\" was canceled by the user."
    );
    assert!(!told[0].to_string().contains("Use make instead"));
    assert_eq!(
        answers(&gemini),
        [json!({"outcome": "selected", "optionId": "cancel"})]
    );
    assert!(client.shutdown().await.success());
}

/// With no ask-lsp following sandbox-agent, Gemini's request waits there
/// (sandbox-agent holds it for its clients; nothing runs, nothing is
/// answered for the person); an editor started later shows it, and its
/// answer is the one Gemini reads.
#[tokio::test]
async fn without_an_editor_gemini_waits_and_a_later_editor_answers() {
    let Some(gemini) = Gemini::start().await else {
        return;
    };
    let session = gemini.session().await;
    let target = gemini.project().join("later");
    let command = format!("touch {}", target.display());
    let turn = gemini.turn(&session, 50, &format!("RUN: {command}"));
    // The model has called the tool: Gemini asks, and nothing answers.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !gemini
        .model_calls()
        .await
        .iter()
        .any(|p| p.contains(":streamGenerateContent"))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the model was never asked"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!turn.is_finished());
    assert!(!target.exists());
    assert!(answers(&gemini).is_empty());

    let mut client = gemini.editor().await;
    let ask = client.next_method("askQuestions/ask").await;
    asked(&ask, &command);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "proceed_once"}),
        )
        .await;
    let result = tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .expect("the turn ends")
        .unwrap();
    assert_eq!(result["result"]["stopReason"], "end_turn", "{result}");
    assert!(target.exists());
    assert_eq!(answers(&gemini).len(), 1);
    assert!(client.shutdown().await.success());
}
