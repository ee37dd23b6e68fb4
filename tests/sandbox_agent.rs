//! Against the real sandbox-agent server (npm `@sandbox-agent/cli-linux-x64`,
//! installed by `tests/sandbox_agent/install.sh`) running the test agent
//! `tests/sandbox_agent/mock-acp`; ask-lsp is driven over stdio as an editor
//! would. The agent reports what its client answered in its prompt result,
//! which is what these tests assert.
//!
//! Needs `SANDBOX_AGENT_BIN`; without it each test says SKIP and passes,
//! unless `ASK_LSP_REQUIRE_E2E` is set.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

struct Server {
    _root: tempfile::TempDir,
    process: Child,
    url: String,
    http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.process.start_kill();
    }
}

impl Server {
    async fn start() -> Option<Server> {
        let Some(bin) = std::env::var_os("SANDBOX_AGENT_BIN") else {
            assert!(
                std::env::var_os("ASK_LSP_REQUIRE_E2E").is_none(),
                "ASK_LSP_REQUIRE_E2E is set but SANDBOX_AGENT_BIN is not (tests/sandbox_agent/install.sh)"
            );
            eprintln!("SKIP: SANDBOX_AGENT_BIN not set (run tests/sandbox_agent/install.sh)");
            return None;
        };
        let root = tempfile::tempdir().unwrap();
        let agents = root.path().join("data/sandbox-agent/bin/agent_processes");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_agent/mock-acp"),
            agents.join("mock-acp"),
        )
        .unwrap();
        let port = free_port();
        let process = Command::new(bin)
            .args([
                "--no-token",
                "server",
                "--no-telemetry",
                "--port",
                &port.to_string(),
            ])
            .env("HOME", root.path().join("home"))
            .env("XDG_DATA_HOME", root.path().join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("sandbox-agent starts");
        let server = Server {
            _root: root,
            process,
            url: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        while server
            .http
            .get(format!("{}/v1/acp", server.url))
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
        Some(server)
    }

    async fn rpc(&self, query: &str, id: u64, method: &str, params: Value) -> Value {
        self.http
            .post(format!("{}/v1/acp/ask{query}", self.url))
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// A turn whose prompt text picks what the agent asks; resolves to what
    /// the agent received.
    fn prompt(&self, id: u64, text: &str) -> tokio::task::JoinHandle<Value> {
        let (http, url) = (self.http.clone(), format!("{}/v1/acp/ask", self.url));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": "mock-session-1", "prompt": [{"type": "text", "text": text}]}});
        tokio::spawn(async move {
            let response: Value = http
                .post(url)
                .json(&body)
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            response["result"]["_meta"]["received"].clone()
        })
    }
}

#[tokio::test]
async fn permissions_and_questions_from_an_acp_agent() {
    let Some(server) = Server::start().await else {
        return;
    };
    let init = server
        .rpc(
            "?agent=mock",
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(
        init["result"]["agentInfo"]["name"], "ask-lsp-mock-acp",
        "{init}"
    );
    server
        .rpc(
            "",
            2,
            "session/new",
            json!({"cwd": "/tmp", "mcpServers": []}),
        )
        .await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"name": "sa", "backend": "sandbox-agent", "url": server.url, "serverId": "ask"}]}),
        )
        .await;

    // OpenCode-style questions, answered with labels.
    let turn = server.prompt(10, "question please");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["source"],
        json!({"backend": "sandbox-agent", "url": format!("{}/v1/acp/ask", server.url), "directory": null})
    );
    assert_eq!(ask["params"]["sessionID"], "mock-session-1");
    assert_eq!(ask["params"]["questions"][0]["header"], "Database");
    client.answer(&ask, json!([["SQLite"]])).await;
    assert_eq!(
        turn.await.unwrap(),
        json!({"outcome": "selected", "status": "answered", "answers": [["SQLite"]],
               "_meta": {"sandboxagent.dev": {"answers": [["SQLite"]]}}})
    );

    // `prompt` + `options: [[id, label]]`: shown by label, answered by id.
    let turn = server.prompt(11, "prompt-options please");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"],
        json!([{"question": "Which option?", "header": "", "multiple": false, "custom": false,
                "options": [{"label": "Option A", "description": ""}, {"label": "Option B", "description": ""}]}])
    );
    client.answer(&ask, json!([["Option B"]])).await;
    assert_eq!(turn.await.unwrap()["answers"], json!([["option-b"]]));

    // A standard ACP permission request.
    let turn = server.prompt(12, "permission please");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"][0]["question"],
        "Run `rm -rf build/`"
    );
    client.answer(&ask, json!([["Allow once"]])).await;
    assert_eq!(
        turn.await.unwrap(),
        json!({"outcome": {"outcome": "selected", "optionId": "allow-once"}})
    );

    // Rejected.
    let turn = server.prompt(13, "question please");
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    assert_eq!(
        turn.await.unwrap(),
        json!({"outcome": "rejected", "status": "rejected"})
    );
    loop {
        let resolved = client.next_method("askQuestions/resolved").await;
        if resolved["params"]["key"] == ask["params"]["key"] {
            assert_eq!(resolved["params"]["reason"], "rejectedHere");
            break;
        }
    }

    // The agent withdraws its request: the editor's prompt is dismissed.
    let turn = server.prompt(14, "cancel question");
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "dismissed", "{resolved}");
    assert_eq!(turn.await.unwrap(), json!({"cancelled": true}));
    assert!(
        client
            .seen
            .iter()
            .all(|m| m["method"] != "window/showMessage" || m["params"]["type"] != 1)
    );
}
