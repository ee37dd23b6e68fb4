//! A real agent through ACP (codex-acp, `gemini --acp`), hosted by
//! sandbox-agent (tests/sandbox_agent/install.sh) as its custom agent
//! `mock`, offline against a mock model API; ask-lsp follows sandbox-agent
//! as the editor's server. The agent's own setup (its config, its model
//! API's address) is the caller's; the rest is the same for every agent.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use super::{Group, LspClient, WAIT, extension_caps, free_port, http_client};

pub use super::agents::required;

/// sandbox-agent running an agent as `mock` (the name its agent directory
/// gives a custom agent), a mock model API, and a project. Everything the
/// agent reads on stdin is also written to `stdin.log`.
pub struct AcpAgent {
    _sandbox_agent: Group,
    _api: Child,
    pub api_port: u16,
    pub url: String,
    pub http: reqwest::Client,
    pub dir: tempfile::TempDir,
}

/// sandbox-agent serving on `port`, its home, data and state in `root`
/// (its agents under `root/data/sandbox-agent/bin/agent_processes`), in a
/// process group killed whole when dropped.
pub fn sandbox_agent_server(bin: &Path, root: &Path, port: u16) -> Group {
    Group::spawn(
        Command::new(bin)
            .args([
                "--no-token",
                "server",
                "--no-telemetry",
                "--port",
                &port.to_string(),
            ])
            .env("HOME", root.join("home"))
            .env("XDG_DATA_HOME", root.join("data"))
            // Its OpenCode API's state, else shared in /tmp.
            .env("OPENCODE_COMPAT_DB_PATH", root.join("opencode.db"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .expect("sandbox-agent starts")
}

impl AcpAgent {
    /// Starts `mock_api` (a script under the crate, given its port),
    /// makes `dirs` in a temporary folder beside `project` and sandbox-agent's
    /// own, and runs sandbox-agent with the agent `script(folder, api_port)`
    /// writes: a shell script that reads stdin, given the command to `exec`
    /// after `tee -a '<folder>/stdin.log' |`.
    pub async fn start(
        sandbox_agent: &Path,
        mock_api: &str,
        dirs: &[&str],
        script: impl FnOnce(&Path, u16) -> String,
    ) -> AcpAgent {
        let (api, api_port) = super::agents::mock_api(mock_api).await;

        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "data/sandbox-agent/bin/agent_processes"]
            .iter()
            .chain(dirs)
        {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let agent = script(dir.path(), api_port);
        let script = dir
            .path()
            .join("data/sandbox-agent/bin/agent_processes/mock-acp");
        std::fs::write(&script, agent).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let port = free_port();
        let process = sandbox_agent_server(sandbox_agent, dir.path(), port);
        let agent = AcpAgent {
            _sandbox_agent: process,
            _api: api,
            api_port,
            url: format!("http://127.0.0.1:{port}"),
            http: http_client(),
            dir,
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        while agent
            .http
            .get(format!("{}/v1/acp", agent.url))
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
        agent
    }

    pub fn project(&self) -> PathBuf {
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
    /// client does; the agent must say it is `name` `version`.
    pub async fn session(&self, name: &str, version: &str) -> String {
        let init = self
            .rpc(
                "?agent=mock",
                1,
                "initialize",
                json!({"protocolVersion": 1,
                       "clientCapabilities": {"elicitation": {"form": {}, "url": {}}}}),
            )
            .await;
        assert_eq!(init["result"]["agentInfo"]["name"], name, "{init}");
        assert_eq!(init["result"]["agentInfo"]["version"], version, "{init}");
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
    pub fn turn(&self, session: &str, id: u64, text: &str) -> tokio::task::JoinHandle<Value> {
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
    pub async fn editor(&self) -> LspClient {
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

    /// What the mock model API answers at `path` (`/received`, `/requests`).
    pub async fn api(&self, path: &str) -> Value {
        self.http
            .get(format!("http://127.0.0.1:{}{path}", self.api_port))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The responses the agent read for its own requests (messages without
    /// a method), as read.
    pub fn responses(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("stdin.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m.get("method").is_none() && m.get("id").is_some())
            .collect()
    }
}

/// The command an ACP agent asks to run, as ask-lsp shows it (server `sa`);
/// the ids of the choices offered.
pub fn asked(ask: &Value, command: &str) -> Vec<String> {
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
