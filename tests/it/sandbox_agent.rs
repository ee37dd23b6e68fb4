//! Against the real sandbox-agent server (npm `@sandbox-agent/cli-linux-x64`,
//! installed by `tests/sandbox_agent/install.sh`) running the test agent
//! `tests/sandbox_agent/mock-acp`; ask-lsp is driven over stdio as an editor
//! would. The agent reports what its client answered in its prompt result,
//! which is what these tests assert.
//!
//! Needs `SANDBOX_AGENT_BIN`; without it each test says SKIP and passes,
//! unless `ASK_LSP_REQUIRE_E2E` is set.

use crate::common;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

struct Server {
    _root: tempfile::TempDir,
    _process: common::Group,
    url: String,
    http: reqwest::Client,
}

impl Server {
    async fn start() -> Option<Server> {
        let mock = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_agent/mock-acp");
        Server::start_with(&std::fs::read_to_string(mock).unwrap()).await
    }

    /// Starts sandbox-agent with `agent` (a script) as its agent `mock`.
    async fn start_with(agent: &str) -> Option<Server> {
        Server::start_as(agent, "mock").await
    }

    /// Starts sandbox-agent with `agent` (a script) as its agent `name`.
    async fn start_as(agent: &str, name: &str) -> Option<Server> {
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
        let script = agents.join(format!("{name}-acp"));
        std::fs::write(&script, agent).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let port = free_port();
        let process = common::acp_agent::sandbox_agent_server(Path::new(&bin), root.path(), port);
        let server = Server {
            _root: root,
            _process: process,
            url: format!("http://127.0.0.1:{port}"),
            http: common::http_client(),
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

    /// ask-lsp following this server as `sa` (its ACP server id `ask`),
    /// with the `settings` given beside it.
    async fn client(&self, capabilities: Value, settings: Value) -> LspClient {
        let mut config = json!({"servers": [{"name": "sa", "backend": "sandbox-agent",
                                              "url": self.url, "serverId": "ask"}]});
        if let (Some(config), Value::Object(settings)) = (config.as_object_mut(), settings) {
            config.extend(settings);
        }
        let mut client = LspClient::start(&[]).await;
        client.initialize(capabilities, config).await;
        client
    }

    /// `initialize` (with these client capabilities) and `session/new`, as
    /// the agent's UI client does; checks the agent's name.
    async fn open_session(&self, capabilities: Value, agent: &str) -> String {
        let init = self
            .rpc(
                "?agent=mock",
                1,
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
            )
            .await;
        assert_eq!(init["result"]["agentInfo"]["name"], agent, "{init}");
        let session = self
            .rpc(
                "",
                2,
                "session/new",
                json!({"cwd": "/tmp", "mcpServers": []}),
            )
            .await;
        session["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{session}"))
            .to_owned()
    }

    /// A response to one of the agent's requests from another client.
    async fn respond_as_other_client(&self, rpc_id: &str, result: Value) {
        let status = self
            .http
            .post(format!("{}/v1/acp/ask", self.url))
            .json(&json!({"jsonrpc": "2.0", "id": rpc_id, "result": result}))
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "{status}");
    }

    /// A turn that resolves to the whole `_meta` the agent ended it with.
    fn turn(&self, id: u64, text: &str) -> tokio::task::JoinHandle<Value> {
        let turn = self.turn_in("mock-session-1", id, text);
        tokio::spawn(async move { turn.await.unwrap()["_meta"].clone() })
    }

    /// A turn in `session`; resolves to the prompt's whole result.
    fn turn_in(&self, session: &str, id: u64, text: &str) -> tokio::task::JoinHandle<Value> {
        let (http, url) = (self.http.clone(), format!("{}/v1/acp/ask", self.url));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}});
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
            response["result"].clone()
        })
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
    let mut client = server.client(extension_caps(), json!({})).await;

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
    assert_eq!(ask["params"]["kind"], "permission");
    assert_eq!(ask["params"]["permission"]["title"], "Run `rm -rf build/`");
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
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

const MOCK: &str = "ask-lsp-mock-acp";
const FORM_CAPS: &str = r#"{"elicitation": {"form": {}, "url": {}}}"#;

async fn resolved_for(client: &mut LspClient, ask: &Value) -> Value {
    loop {
        let resolved = client.next_method("askQuestions/resolved").await;
        if resolved["params"]["key"] == ask["params"]["key"] {
            return resolved["params"].clone();
        }
    }
}

/// The next `window/showMessage` that says `needle`.
async fn message_saying(client: &mut LspClient, needle: &str) -> String {
    loop {
        let shown = client.next_method("window/showMessage").await;
        let text = shown["params"]["message"].as_str().unwrap_or_default();
        if text.contains(needle) {
            return text.to_owned();
        }
    }
}

#[tokio::test]
async fn forms_from_acp_elicitation() {
    let Some(server) = Server::start().await else {
        return;
    };
    server
        .open_session(serde_json::from_str(FORM_CAPS).unwrap(), MOCK)
        .await;
    let mut client = server.client(extension_caps(), json!({})).await;

    // Every field type; a wrong value is refused and the form shown again.
    let turn = server.turn(20, "form-all");
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["kind"], "form", "{params}");
    assert_eq!(params["title"], "Configure the new project");
    assert_eq!(params["sessionID"], "mock-session-1");
    assert_eq!(params["origin"]["toolCallID"], "tool-7");
    let form = &params["form"];
    assert_eq!(form["url"], Value::Null);
    let field = |id: &str| {
        form["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no field {id} in {form}"))
    };
    assert_eq!(
        field("port"),
        json!({"id": "port", "title": "Port", "description": "", "required": true,
               "type": "integer", "minimum": 1024.0, "maximum": 65535.0, "default": 3000.0})
    );
    assert_eq!(
        field("strategy")["options"],
        json!([{"value": "conservative", "label": "Conservative", "description": "Minimal changes"},
               {"value": "balanced", "label": "Balanced (Recommended)"}])
    );
    assert_eq!(field("colors")["type"], "multi");
    assert_eq!(field("colors")["maxItems"], 2);
    assert_eq!(field("name")["pattern"], "^[a-z][a-z0-9-]*$");
    assert_eq!(field("start")["format"], "date");
    assert_eq!(field("logging")["default"], true);
    assert_eq!(
        field("size")["options"][1],
        json!({"value": "M", "label": "M"})
    );
    assert_eq!(form["fields"].as_array().unwrap().len(), 12);
    // sandbox-agent 0.4.2 forwards the request with its keys sorted: that
    // is the order ask-lsp gets.
    assert_eq!(form["fields"][0]["id"], "at");
    assert_eq!(form["fields"][11]["id"], "strategy");
    let all = json!({"name": "my-app", "email": "dev@example.com", "site": "https://example.com/x",
        "start": "2026-11-23", "at": "2026-11-23T10:00:00Z", "port": 8080, "ratio": 0.25,
        "logging": false, "strategy": "conservative", "size": "M", "colors": ["#f00", "#00f"],
        "langs": ["rust", "lua"]});
    let mut wrong = all.clone();
    wrong["port"] = json!(80);
    client
        .respond(&ask["id"], json!({"outcome": "answered", "values": wrong}))
        .await;
    message_saying(&mut client, "Port takes at least 1024").await;
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["key"], ask["params"]["key"]);
    client
        .respond(&again["id"], json!({"outcome": "answered", "values": all}))
        .await;
    let meta = turn.await.unwrap();
    assert_eq!(
        meta["received"],
        json!({"action": "accept", "content": all})
    );
    assert_eq!(meta["schemaErrors"], json!([]));

    // Only the required fields: optional ones are left out.
    let turn = server.turn(21, "form-all");
    let ask = client.next_method("askQuestions/ask").await;
    let required = json!({"name": "ab", "port": 3000, "strategy": "balanced", "colors": ["#0f0"]});
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": required}),
        )
        .await;
    let meta = turn.await.unwrap();
    assert_eq!(
        meta["received"],
        json!({"action": "accept", "content": required})
    );
    assert_eq!(meta["schemaErrors"], json!([]));

    // Declined by the person.
    let turn = server.turn(22, "form-all");
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    assert_eq!(
        turn.await.unwrap()["received"],
        json!({"action": "decline"})
    );
    assert_eq!(
        resolved_for(&mut client, &ask).await["reason"],
        "rejectedHere"
    );

    // Url mode, request scope: the domain behind the userinfo, consent only.
    let turn = server.turn(23, "form-url");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["sessionID"], "");
    assert_eq!(
        ask["params"]["form"],
        json!({"message": "Authorize access to your repositories.", "fields": [],
               "url": {"url": "https://github.com@login.example.com/oauth/authorize?state=xyz",
                       "domain": "login.example.com",
                       "warning": "Check the host: the link shows \"github.com@login.example.com\" where its host goes, but a browser opens login.example.com."}})
    );
    client
        .respond(&ask["id"], json!({"outcome": "answered", "values": {}}))
        .await;
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "accept"}));

    // The agent says the link's flow is over while its request is open (as
    // Claude does): the request is accepted, as the spec's sequence has it,
    // and the editor's prompt withdrawn, not called answered elsewhere.
    let turn = server.turn(24, "form-complete");
    let ask = client.next_method("askQuestions/ask").await;
    let resolved = resolved_for(&mut client, &ask).await;
    assert_eq!(resolved["state"], "dismissed", "{resolved}");
    assert_eq!(
        resolved["message"],
        "\"Authorize access to your repositories.\": the agent no longer waits for an answer"
    );
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "accept"}));

    // Cancelled by the agent: withdrawn.
    let turn = server.turn(25, "form-all cancel");
    let ask = client.next_method("askQuestions/ask").await;
    let resolved = resolved_for(&mut client, &ask).await;
    assert_eq!(resolved["state"], "dismissed", "{resolved}");
    assert_eq!(turn.await.unwrap()["received"], Value::Null);

    // Answered by another client: the agent has that answer; its tool call's
    // end resolves ours, and a late answer here reaches nobody.
    let turn = server.turn(26, "form-all");
    let ask = client.next_method("askQuestions/ask").await;
    let rpc_id = ask["params"]["requestID"]
        .as_str()
        .unwrap()
        .split('@')
        .next()
        .unwrap()
        .to_owned();
    server
        .respond_as_other_client(&rpc_id, json!({"action": "cancel"}))
        .await;
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "cancel"}));
    let resolved = resolved_for(&mut client, &ask).await;
    assert_eq!(resolved["reason"], "answeredElsewhere", "{resolved}");

    // Schemas outside the subset: declined at once, the reason shown.
    for (text, reason) in [
        ("form-nested", "field \"server\" is a nested object"),
        ("form-ref", "field \"host\" uses $ref"),
        (
            "form-huge-enum",
            "field options has 20000 entries (at most 10000)",
        ),
    ] {
        let meta = server.turn(27, text).await.unwrap();
        assert_eq!(meta["received"], json!({"action": "decline"}), "{text}");
        let shown = message_saying(&mut client, reason).await;
        assert!(shown.contains("ask-lsp declined it"), "{shown}");
    }
    assert!(
        client
            .seen
            .iter()
            .all(|m| m["method"] != "askQuestions/ask" || m["params"]["kind"] == "form"),
    );
}

#[tokio::test]
async fn no_elicitation_without_the_client_advertising_it() {
    let Some(server) = Server::start().await else {
        return;
    };
    server.open_session(json!({}), MOCK).await;
    let meta = server.turn(20, "form-all").await.unwrap();
    assert_eq!(
        meta["refused"],
        "the client did not advertise elicitation.form"
    );
}

#[tokio::test]
async fn forms_on_a_plain_lsp_client() {
    let Some(server) = Server::start().await else {
        return;
    };
    server
        .open_session(serde_json::from_str(FORM_CAPS).unwrap(), MOCK)
        .await;
    let mut client = server.client(plain_caps(), json!({})).await;

    // Typed fields: the message says how; code actions offer the choices.
    let turn = server.turn(30, "form-all");
    let shown = client.next_method("window/showMessageRequest").await;
    let message = shown["params"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("(1 of 12) [Configure the new project] at (text, date-time)"),
        "{message}"
    );
    assert!(
        message.contains("askLsp.answer command: [{\"key\": \"sa/q-1@"),
        "{message}"
    );
    assert_eq!(
        shown["params"]["actions"],
        json!([{"title": "✗ Reject"}, {"title": "↷ Skip"}])
    );
    let key = message
        .split("[{\"key\": \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": "file:///tmp/any.rs"},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": []}}),
        )
        .await;
    let conservative = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "\"Configure the new project\": Strategy = Conservative")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    assert_eq!(
        conservative["command"]["arguments"],
        json!([{"key": key, "values": {"strategy": "conservative"}}])
    );
    // One field from the code action, the rest typed: sent once all
    // required fields have a value.
    let partial = client
        .request("workspace/executeCommand", conservative["command"].clone())
        .await;
    assert_eq!(
        partial["result"],
        json!({"state": "partial", "remaining": [1, 5, 6]}),
        "{partial}"
    );
    let sent = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer",
                   "arguments": [{"key": key, "values": {"name": "web-app", "port": 8080, "colors": ["#0f0"]}}]}),
        )
        .await;
    assert_eq!(sent["result"], json!({"state": "sent"}), "{sent}");
    let meta = turn.await.unwrap();
    assert_eq!(
        meta["received"],
        json!({"action": "accept", "content": {"name": "web-app", "port": 8080,
               "strategy": "conservative", "colors": ["#0f0"]}})
    );
    assert_eq!(meta["schemaErrors"], json!([]));

    // Buttons only: one message per field: no, skip, a choice.
    let turn = server.turn(31, "form-small");
    let shown = client.next_method("window/showMessageRequest").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("(1 of 3) [Configure the new project] Enable logging (boolean)"),
        "{shown}"
    );
    assert_eq!(
        shown["params"]["actions"],
        json!([{"title": "✗ Reject"}, {"title": "Yes"}, {"title": "No"},
               {"title": "↩ Default: yes"}, {"title": "↷ Skip"}])
    );
    client.respond(&shown["id"], json!({"title": "No"})).await;
    let shown = client.next_method("window/showMessageRequest").await;
    client
        .respond(&shown["id"], json!({"title": "↷ Skip"}))
        .await;
    let shown = client.next_method("window/showMessageRequest").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .ends_with("(choice, required)\n  Conservative: Minimal changes"),
        "{shown}"
    );
    assert_eq!(
        shown["params"]["actions"],
        json!([{"title": "✗ Reject"}, {"title": "Conservative"}, {"title": "Balanced (Recommended)"},
               {"title": "↩ Default: Balanced (Recommended)"}])
    );
    client
        .respond(&shown["id"], json!({"title": "Conservative"}))
        .await;
    assert_eq!(
        turn.await.unwrap()["received"],
        json!({"action": "accept", "content": {"strategy": "conservative", "logging": false}})
    );

    // A link: the domain, a warning that its text names another host, and
    // the whole URL, never opened; ask-lsp's lines before the agent's quoted
    // message. Declined here.
    let turn = server.turn(32, "form-url");
    let shown = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        shown["params"]["message"],
        "[Link] ask-lsp does not open links: open it yourself only if you trust login.example.com.\n  Domain: login.example.com\n  ⚠ Check the host: the link shows \"github.com@login.example.com\" where its host goes, but a browser opens login.example.com.\n  URL: https://github.com@login.example.com/oauth/authorize?state=xyz\n  The agent's message:\n  │ Authorize access to your repositories."
    );
    assert_eq!(
        shown["params"]["actions"],
        json!([{"title": "✗ Reject"}, {"title": "I will open it"}])
    );
    client
        .respond(&shown["id"], json!({"title": "✗ Reject"}))
        .await;
    assert_eq!(
        turn.await.unwrap()["received"],
        json!({"action": "decline"})
    );
}

#[tokio::test]
async fn forms_in_the_terminal() {
    use tokio::io::AsyncWriteExt;
    let Some(server) = Server::start().await else {
        return;
    };
    server
        .open_session(serde_json::from_str(FORM_CAPS).unwrap(), MOCK)
        .await;
    let turn = server.turn(40, "form-all");
    // One line per field, in the order received (at, colors, email, langs,
    // logging, name, port, ratio, site, size, start, strategy); wrong lines
    // are explained and asked again; an empty line keeps the default or
    // leaves an optional field empty. Then the link: y consents.
    let input = "2026-13-01T00:00:00Z\n2026-11-23T10:00:00Z\n1,3\n\n\nn\nBad Name\nmy-app\n\n2\n0.5\n\n2\n\n\ny\n";
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &server.url, "--sandbox-agent", "ask"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    let meta = turn.await.unwrap();
    assert_eq!(
        meta["received"],
        json!({"action": "accept", "content": {"at": "2026-11-23T10:00:00Z",
               "colors": ["#f00", "#00f"], "langs": ["rust"], "logging": false, "name": "my-app",
               "port": 3000, "ratio": 0.5, "size": "M", "strategy": "balanced"}})
    );
    assert_eq!(meta["schemaErrors"], json!([]));
    let turn = server.turn(41, "form-url");
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "accept"}));
    drop(stdin);
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("watch ends with its input")
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    for said in [
        "── Form from default (session mock-session-1) ──",
        "Configure the new project\n(1/12) at [text, date-time]",
        "  at is not a valid date-time",
        "  Project name does not match the pattern ^[a-z][a-z0-9-]*$",
        "  ratio takes at most 1",
        "(7/12) Port [integer, at least 1024, at most 65535, required]\nType a number; an empty line keeps the default. (default: 3000)",
        "  2. Green",
        "  1. Conservative — Minimal changes\n  2. Balanced (Recommended)\n",
        "── Link from default (session ) ──",
        "[Link] ask-lsp does not open links: open it yourself only if you trust login.example.com.\n  Domain: login.example.com\n  ⚠ Check the host: the link shows \"github.com@login.example.com\" where its host goes, but a browser opens login.example.com.\n  URL: https://github.com@login.example.com/oauth/authorize?state=xyz\n  The agent's message:\n  │ Authorize access to your repositories.\ny: accept",
    ] {
        assert!(out.contains(said), "{said:?} not in:\n{out}");
    }
}

/// The real Claude agent (`@agentclientprotocol/claude-agent-acp`, installed
/// by install.sh) hosted by sandbox-agent, its model `mock-anthropic` (a mock
/// Messages API that calls AskUserQuestion once a turn). Everything the agent
/// reads on stdin is also written to `stdin.log` in `log`.
struct Claude {
    server: Server,
    _api: Child,
    api_port: u16,
    log: tempfile::TempDir,
}

impl Claude {
    async fn start() -> Option<Claude> {
        let Some(claude) = std::env::var_os("CLAUDE_AGENT_ACP") else {
            assert!(
                std::env::var_os("ASK_LSP_REQUIRE_E2E").is_none(),
                "ASK_LSP_REQUIRE_E2E is set but CLAUDE_AGENT_ACP is not (tests/sandbox_agent/install.sh)"
            );
            eprintln!("SKIP: CLAUDE_AGENT_ACP not set (run tests/sandbox_agent/install.sh)");
            return None;
        };
        let api_port = free_port();
        let mut api = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_agent/mock-anthropic"))
            .arg(api_port.to_string())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut ready = tokio::io::BufReader::new(api.stdout.take().unwrap());
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut ready, &mut line)
            .await
            .unwrap();
        assert_eq!(line.trim(), "listening");
        let log = tempfile::tempdir().unwrap();
        // IS_SANDBOX: Claude Code refuses to run as root otherwise (this
        // machine's tests run as root); nothing else leaves 127.0.0.1.
        let agent = format!(
            "#!/bin/sh\nexport ANTHROPIC_BASE_URL=http://127.0.0.1:{api_port} ANTHROPIC_API_KEY=sk-test \
             IS_SANDBOX=1 ENABLE_TOOL_SEARCH=false CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1\n\
             tee -a '{}' | node '{}'\n",
            log.path().join("stdin.log").display(),
            claude.to_string_lossy()
        );
        let server = Server::start_with(&agent).await?;
        // Permissions asked through ACP, not judged by Claude's auto-mode
        // classifier (which would ask the mock model).
        let settings = server._root.path().join("home/.claude");
        std::fs::create_dir_all(&settings).unwrap();
        std::fs::write(
            settings.join("settings.json"),
            r#"{"permissions": {"defaultMode": "default"}}"#,
        )
        .unwrap();
        Some(Claude {
            server,
            _api: api,
            api_port,
            log,
        })
    }

    /// A new session, as a client advertising forms and links opens it.
    async fn session(&self, id: u64) -> String {
        let session = self
            .server
            .rpc(
                "",
                id,
                "session/new",
                json!({"cwd": "/tmp", "mcpServers": []}),
            )
            .await;
        session["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{session}"))
            .to_owned()
    }

    /// The tool results the model was given.
    async fn tool_results(&self) -> Vec<Value> {
        let received: Value = self
            .server
            .http
            .get(format!("http://127.0.0.1:{}/received", self.api_port))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        received.as_array().unwrap().clone()
    }

    /// How many responses the agent read for each of its own requests
    /// (JSON-RPC messages without a method), by id.
    fn responses(&self) -> std::collections::BTreeMap<String, usize> {
        let log = std::fs::read_to_string(self.log.path().join("stdin.log")).unwrap_or_default();
        let mut counts = std::collections::BTreeMap::new();
        for line in log.lines() {
            let message: Value = serde_json::from_str(line).unwrap_or_default();
            if message.get("method").is_none() && message.get("id").is_some() {
                *counts.entry(message["id"].to_string()).or_default() += 1;
            }
        }
        counts
    }
}

/// The form Claude's AskUserQuestion becomes; returns its choice field's id.
fn database_field(ask: &Value) -> String {
    let params = &ask["params"];
    assert_eq!(params["kind"], "form", "{params}");
    assert_eq!(params["form"]["message"], "Which database should I use?");
    let choice = params["form"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["type"] == "choice")
        .unwrap_or_else(|| panic!("{params}"))
        .clone();
    assert_eq!(choice["title"], "Database");
    // The agent's trade-offs (ACP `EnumOption.description`) reach the editor.
    assert_eq!(
        choice["options"],
        json!([{"value": "Postgres", "label": "Postgres", "description": "Relational"},
               {"value": "SQLite", "label": "SQLite", "description": "Embedded"}])
    );
    choice["id"].as_str().unwrap().to_owned()
}

/// The person's answer in the editor must come back to the model as the
/// tool's result.
#[tokio::test]
async fn claude_code_asks_through_ask_lsp() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let session = server
        .open_session(
            serde_json::from_str(FORM_CAPS).unwrap(),
            "@agentclientprotocol/claude-agent-acp",
        )
        .await;
    let mut client = server.client(extension_caps(), json!({})).await;
    let turn = server.turn_in(&session, 50, "Pick a database for me.");
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["sessionID"], session.as_str());
    assert_eq!(params["origin"]["toolCallID"], "toolu_1");
    let field = database_field(&ask);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {field: "SQLite"}}),
        )
        .await;
    let result = turn.await.unwrap();
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    // The model may be asked again with the same result (a retry sends
    // the block with other cache marks): one tool call, one answer.
    let results = claude.tool_results().await;
    assert!(
        results.iter().all(|r| r["tool_use_id"] == "toolu_1"
            && r["content"]
                .to_string()
                .contains(r#"\"Which database should I use?\"=\"SQLite\""#)),
        "{results:?}"
    );
    assert!(!results.is_empty());
    assert_eq!(
        claude.responses().get("0"),
        Some(&1),
        "{:?}",
        claude.responses()
    );
}

/// Two sessions on one server: the end of one session's turn leaves the
/// other's question open, and its answer reaches the model.
#[tokio::test]
async fn claude_code_two_sessions_at_once() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let first = server
        .open_session(
            serde_json::from_str(FORM_CAPS).unwrap(),
            "@agentclientprotocol/claude-agent-acp",
        )
        .await;
    let second = claude.session(3).await;
    let mut client = server.client(extension_caps(), json!({})).await;
    let turn_a = server.turn_in(&first, 50, "Pick a database for me.");
    let ask_a = client.next_method("askQuestions/ask").await;
    assert_eq!(ask_a["params"]["sessionID"], first.as_str());
    let turn_b = server.turn_in(&second, 51, "Pick a database for me too.");
    // The editor shows one prompt at a time: B's waits behind A's.
    let deadline = tokio::time::Instant::now() + WAIT;
    while client.status().await["pending"] != 2 {
        assert!(tokio::time::Instant::now() < deadline, "B never asked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let field = database_field(&ask_a);
    client
        .respond(
            &ask_a["id"],
            json!({"outcome": "answered", "values": {field: "SQLite"}}),
        )
        .await;
    assert_eq!(turn_a.await.unwrap()["stopReason"], "end_turn");
    // A's turn is over; B's question must still be open.
    let ask_b = client.next_method("askQuestions/ask").await;
    assert_eq!(ask_b["params"]["sessionID"], second.as_str());
    client.drain(Duration::from_millis(500)).await;
    assert!(
        client
            .seen
            .iter()
            .all(|m| m["method"] != "askQuestions/resolved"
                || m["params"]["key"] != ask_b["params"]["key"]),
        "B's question was withdrawn when A's turn ended: {:?}",
        client.seen
    );
    let field = database_field(&ask_b);
    client
        .respond(
            &ask_b["id"],
            json!({"outcome": "answered", "values": {field: "Postgres"}}),
        )
        .await;
    let result = tokio::time::timeout(WAIT, turn_b)
        .await
        .expect("B's turn ends once answered")
        .unwrap();
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let answers: Vec<String> = claude
        .tool_results()
        .await
        .iter()
        .map(|r| r["content"].to_string())
        .collect();
    assert!(
        answers.iter().any(|a| a.contains(r#"=\"SQLite\""#)),
        "{answers:?}"
    );
    assert!(
        answers.iter().any(|a| a.contains(r#"=\"Postgres\""#)),
        "{answers:?}"
    );
    assert!(
        claude.responses().values().all(|n| *n == 1),
        "{:?}",
        claude.responses()
    );
}

/// The editor (ask-lsp) restarts mid-turn, after a question was answered
/// and while another is open: the answered one is not shown again, the open
/// one is, and the agent reads exactly one response for each request.
#[tokio::test]
async fn claude_code_across_an_editor_restart() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let first = server
        .open_session(
            serde_json::from_str(FORM_CAPS).unwrap(),
            "@agentclientprotocol/claude-agent-acp",
        )
        .await;
    let second = claude.session(3).await;
    let mut client = server.client(extension_caps(), json!({})).await;
    // The model takes 5 s after the answer: the turn goes on.
    let slow_turn = server.turn_in(&first, 50, "Pick a database for me, slowly.");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["sessionID"], first.as_str());
    let field = database_field(&ask);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {field: "SQLite"}}),
        )
        .await;
    let turn = server.turn_in(&second, 51, "Pick a database for me too.");
    let open = client.next_method("askQuestions/ask").await;
    assert_eq!(open["params"]["sessionID"], second.as_str(), "{open}");
    client.shutdown().await;
    let (_, report) = status_json(server).await;
    let pending = &report["servers"][0]["pending"];
    assert_eq!(pending.as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(pending[0]["session"], second.as_str(), "{report}");

    let mut client = server.client(extension_caps(), json!({})).await;
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["sessionID"], second.as_str(), "{again}");
    let field = database_field(&again);
    client
        .respond(
            &again["id"],
            json!({"outcome": "answered", "values": {field: "Postgres"}}),
        )
        .await;
    let result = tokio::time::timeout(WAIT, turn).await.unwrap().unwrap();
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let result = tokio::time::timeout(WAIT, slow_turn)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    client.drain(Duration::from_millis(500)).await;
    let asked: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .collect();
    assert_eq!(asked.len(), 1, "the answered question came back: {asked:?}");
    // Ids 0 and 1: the two elicitations; each answered once.
    let responses = claude.responses();
    assert_eq!(responses.get("0"), Some(&1), "{responses:?}");
    assert_eq!(responses.get("1"), Some(&1), "{responses:?}");
    let answers: Vec<String> = claude
        .tool_results()
        .await
        .iter()
        .map(|r| r["content"].to_string())
        .collect();
    assert!(
        answers.iter().any(|a| a.contains(r#"=\"SQLite\""#)),
        "{answers:?}"
    );
    assert!(
        answers.iter().any(|a| a.contains(r#"=\"Postgres\""#)),
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_timeout_cancels_a_form() {
    let Some(server) = Server::start().await else {
        return;
    };
    server
        .open_session(serde_json::from_str(FORM_CAPS).unwrap(), MOCK)
        .await;
    let mut client = server
        .client(
            extension_caps(),
            json!({"policy": {"mode": "forward", "timeoutMs": 300}}),
        )
        .await;
    // Every required field has a default or a first option: nobody chose
    // them, so `cancel`, never the agent's own defaults.
    let turn = server.turn(60, "form-small");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(resolved_for(&mut client, &ask).await["reason"], "timeout");
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "cancel"}));
    // A required field without a default: `cancel` too.
    let turn = server.turn(61, "form-all");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(resolved_for(&mut client, &ask).await["reason"], "timeout");
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "cancel"}));
    // A link is never accepted by a timeout.
    let turn = server.turn(62, "form-url");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(resolved_for(&mut client, &ask).await["reason"], "timeout");
    assert_eq!(turn.await.unwrap()["received"], json!({"action": "cancel"}));
}

/// `ask-lsp status --sandbox-agent`: what the replayed stream leaves pending.
async fn status_json(server: &Server) -> (Option<i32>, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["status", "--json", "--sandbox-agent", "ask", "--url"])
        .arg(&server.url)
        .output()
        .await
        .unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    (output.status.code(), report)
}

#[tokio::test]
async fn status_lists_what_an_acp_agent_waits_for() {
    let Some(server) = Server::start().await else {
        return;
    };
    server.open_session(json!({}), "ask-lsp-mock-acp").await;
    let (code, report) = status_json(&server).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["servers"][0]["generation"], "sandbox-agent");
    assert_eq!(report["servers"][0]["pending"], json!([]));

    let _turn = server.prompt(10, "question please");
    let deadline = tokio::time::Instant::now() + WAIT;
    let report = loop {
        let (code, report) = status_json(&server).await;
        assert_eq!(code, Some(0), "{report}");
        if report["servers"][0]["pending"] != json!([]) {
            break report;
        }
        assert!(tokio::time::Instant::now() < deadline, "{report}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let pending = &report["servers"][0]["pending"];
    assert_eq!(pending.as_array().unwrap().len(), 1, "{report}");
    assert_eq!(pending[0]["kind"], "question");
    assert_eq!(pending[0]["title"], "Database");
    assert_eq!(pending[0]["session"], "mock-session-1");
}

/// Each fresh ask-lsp reads the server's whole history: what was declined
/// before is not declined again, and an unshowable request still waiting
/// from before it started (or from its first second, not yet told from
/// history) is declined, not left waiting for good; the person is told.
#[tokio::test]
async fn replayed_history_is_not_answered_again() {
    let Some(server) = Server::start().await else {
        return;
    };
    server
        .open_session(serde_json::from_str(FORM_CAPS).unwrap(), MOCK)
        .await;
    let mut client = server.client(extension_caps(), json!({})).await;
    // Past the replayed history: what comes now is live.
    let deadline = tokio::time::Instant::now() + WAIT;
    while client.status().await["servers"][0]["connected"] != true {
        assert!(tokio::time::Instant::now() < deadline, "never connected");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    let meta = server.turn(20, "form-nested").await.unwrap();
    assert_eq!(meta["received"], json!({"action": "decline"}));
    message_saying(&mut client, "ask-lsp declined it").await;
    client.shutdown().await;

    // Asked while no ask-lsp runs: the next one declines it.
    let waiting = server.turn(21, "form-ref");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut client = server.client(extension_caps(), json!({})).await;
    let shown = message_saying(&mut client, "asked before ask-lsp was following").await;
    assert!(shown.contains("field \"host\" uses $ref"), "{shown}");
    assert!(shown.contains("ask-lsp declined it"), "{shown}");
    let meta = tokio::time::timeout(WAIT, waiting)
        .await
        .expect("the agent no longer waits")
        .unwrap();
    assert_eq!(meta["received"], json!({"action": "decline"}));
    client.shutdown().await;
    for _ in 0..2 {
        let mut client = server.client(extension_caps(), json!({})).await;
        client.drain(Duration::from_millis(2000)).await;
        assert!(
            client
                .seen
                .iter()
                .all(|m| m["method"] != "window/showMessage"
                    || !["\"server\"", "\"host\""]
                        .iter()
                        .any(|field| m["params"]["message"]
                            .as_str()
                            .unwrap_or_default()
                            .contains(field))),
            "a declined form came back: {:?}",
            client.seen
        );
        client.shutdown().await;
    }
    // Another session: the server goes on.
    let other = server
        .rpc(
            "",
            22,
            "session/new",
            json!({"cwd": "/tmp", "mcpServers": []}),
        )
        .await;
    let other = other["result"]["sessionId"].as_str().unwrap().to_owned();
    let report = server.turn_in(&other, 23, "report").await.unwrap();
    // Each request answered exactly once, the one from before too.
    assert_eq!(
        report["_meta"]["responses"],
        json!({"q-1": 1, "q-2": 1}),
        "{report}"
    );
}

impl Claude {
    /// `initialize` (forms and links advertised) and a session whose Claude
    /// also runs the MCP server `forms` (tests/sandbox_agent/mcp-forms),
    /// which records each elicitation's result in `mcp.log`.
    async fn open_with_forms(&self) -> String {
        self.server
            .open_session(
                serde_json::from_str(FORM_CAPS).unwrap(),
                "@agentclientprotocol/claude-agent-acp",
            )
            .await;
        self.session_with_forms(3).await
    }

    async fn session_with_forms(&self, id: u64) -> String {
        let mcp = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_agent/mcp-forms");
        let record = self.log.path().join("mcp.log");
        let session = self
            .server
            .rpc(
                "",
                id,
                "session/new",
                json!({"cwd": "/tmp", "mcpServers": [{"name": "forms", "command": "python3",
                        "args": [mcp, record], "env": []}]}),
            )
            .await;
        session["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{session}"))
            .to_owned()
    }

    /// What the MCP server's elicitations got back, in order.
    fn elicitation_results(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log.path().join("mcp.log"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The text of the tool results the model got that contain `needle`.
    async fn results_saying(&self, needle: &str) -> Vec<String> {
        self.tool_results()
            .await
            .iter()
            .map(|r| r["content"].to_string())
            .filter(|text| text.contains(needle))
            .collect()
    }
}

/// The ids of a form's fields, in order.
fn field_ids(ask: &Value) -> Vec<String> {
    ask["params"]["form"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("{ask}"))
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect()
}

/// AskUserQuestion with several questions (one a multi-select), then the
/// free-text "Other", then a decline: each reaches the model as Claude's
/// own tool result.
#[tokio::test]
async fn claude_code_several_questions_multi_select_other_and_decline() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let first = server
        .open_session(
            serde_json::from_str(FORM_CAPS).unwrap(),
            "@agentclientprotocol/claude-agent-acp",
        )
        .await;
    let mut client = server.client(extension_caps(), json!({})).await;

    let turn = server.turn_in(&first, 50, "Ask me several questions.");
    let ask = client.next_method("askQuestions/ask").await;
    let form = &ask["params"]["form"];
    assert_eq!(form["message"], "Please answer the following questions.");
    let fields = form["fields"].as_array().unwrap();
    assert_eq!(
        field_ids(&ask),
        [
            "question_0",
            "question_0_custom",
            "question_1",
            "question_1_custom"
        ],
        "{form}"
    );
    assert_eq!(fields[0]["type"], "choice", "{form}");
    assert_eq!(fields[2]["type"], "multi", "{form}");
    assert_eq!(fields[2]["title"], "Features", "{form}");
    assert_eq!(
        fields[2]["options"][2],
        json!({"value": "Billing", "label": "Billing", "description": "Invoices"})
    );
    assert_eq!(fields[3]["title"], "Other", "{form}");
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"question_0": "Postgres",
                   "question_1": ["Auth", "Billing"], "question_1_custom": "Audit log"}}),
        )
        .await;
    assert_eq!(turn.await.unwrap()["stopReason"], "end_turn");
    let answered = claude
        .results_saying(r#"\"Which features do you want?\"=\"Auth, Billing, Audit log\""#)
        .await;
    assert!(
        answered
            .iter()
            .all(|a| a.contains(r#"\"Which database should I use?\"=\"Postgres\""#))
            && !answered.is_empty(),
        "{:?}",
        claude.tool_results().await
    );

    // "Other": nothing picked, an answer typed.
    let second = claude.session(4).await;
    let turn = server.turn_in(&second, 51, "Pick a database for me.");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(field_ids(&ask), ["question_0", "question_0_custom"]);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"question_0_custom": "MariaDB"}}),
        )
        .await;
    assert_eq!(turn.await.unwrap()["stopReason"], "end_turn");
    assert!(
        !claude
            .results_saying(r#"\"Which database should I use?\"=\"MariaDB\""#)
            .await
            .is_empty(),
        "{:?}",
        claude.tool_results().await
    );

    // Declined: Claude tells the model the person skipped the questions.
    let before = claude.tool_results().await.len();
    let third = claude.session(5).await;
    let turn = server.turn_in(&third, 52, "Pick a database for me.");
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    assert_eq!(turn.await.unwrap()["stopReason"], "end_turn");
    let results = claude.tool_results().await;
    let declined: Vec<String> = results[before..]
        .iter()
        .map(|r| r["content"].to_string())
        .collect();
    assert!(
        !declined.is_empty() && declined.iter().all(|d| !d.contains("=\\\"")),
        "{declined:?}"
    );
    let responses = claude.responses();
    assert_eq!(
        (responses.get("0"), responses.get("1"), responses.get("2")),
        (Some(&1), Some(&1), Some(&1)),
        "{responses:?}"
    );
}

/// The turn is cancelled while its question is open: the editor's prompt is
/// withdrawn and nothing is sent for it.
#[tokio::test]
async fn claude_code_cancelled_turn_withdraws_its_question() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let session = server
        .open_session(
            serde_json::from_str(FORM_CAPS).unwrap(),
            "@agentclientprotocol/claude-agent-acp",
        )
        .await;
    let mut client = server.client(extension_caps(), json!({})).await;
    let turn = server.turn_in(&session, 50, "Pick a database for me.");
    let ask = client.next_method("askQuestions/ask").await;
    let status = server
        .http
        .post(format!("{}/v1/acp/ask", server.url))
        .json(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                      "params": {"sessionId": session}}))
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "{status}");
    let resolved = resolved_for(&mut client, &ask).await;
    assert_eq!(resolved["reason"], "sessionEnded", "{resolved}");
    assert_eq!(
        tokio::time::timeout(WAIT, turn).await.unwrap().unwrap()["stopReason"],
        "cancelled"
    );
    // A late answer goes nowhere: the agent reads no response.
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"question_0": "SQLite"}}),
        )
        .await;
    client.drain(Duration::from_millis(500)).await;
    assert_eq!(
        claude.responses().get("0"),
        None,
        "{:?}",
        claude.responses()
    );
}

/// Claude's own permission to run `tool` (it asks before an MCP tool runs):
/// allowed once.
async fn allow_once(client: &mut LspClient, tool: &str) {
    let ask = client.next_method("askQuestions/ask").await;
    let permission = &ask["params"]["permission"];
    assert_eq!(permission["title"], tool, "{ask}");
    let allow = permission["choices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["effect"] == "allowOnce")
        .unwrap_or_else(|| panic!("{ask}"))["id"]
        .clone();
    client
        .respond(&ask["id"], json!({"outcome": "answered", "choice": allow}))
        .await;
}

/// An MCP server's form and link through the real Claude: the form's values
/// and the link's completion reach the MCP server, once each.
#[tokio::test]
async fn claude_code_passes_an_mcp_servers_form_and_link() {
    let Some(claude) = Claude::start().await else {
        return;
    };
    let server = &claude.server;
    let session = claude.open_with_forms().await;
    let mut client = server.client(extension_caps(), json!({})).await;

    let turn = server.turn_in(&session, 50, "Configure it (mcp-form).");
    allow_once(&mut client, "mcp__forms__configure").await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["form"]["message"], "Configure the project",
        "{ask}"
    );
    // In the order Claude sent them (not the MCP server's).
    assert_eq!(field_ids(&ask), ["port", "strategy"]);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"strategy": "balanced", "port": 8080}}),
        )
        .await;
    assert_eq!(turn.await.unwrap()["stopReason"], "end_turn");
    assert_eq!(
        claude.elicitation_results(),
        [json!({"tool": "configure", "result": {"action": "accept",
                "content": {"strategy": "balanced", "port": 8080}}})]
    );
    assert!(
        !claude.results_saying("balanced").await.is_empty(),
        "{:?}",
        claude.tool_results().await
    );

    // The link: its flow completes while the request is open.
    let second = claude.session_with_forms(4).await;
    let turn = server.turn_in(&second, 51, "Sign me in (mcp-link).");
    allow_once(&mut client, "mcp__forms__login").await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["form"]["url"]["url"], "https://login.example.com/device?code=XYZ",
        "{ask}"
    );
    let resolved = resolved_for(&mut client, &ask).await;
    assert_ne!(resolved["reason"], "answeredElsewhere", "{resolved}");
    let result = tokio::time::timeout(WAIT, turn)
        .await
        .expect("the turn ends once the link's flow is over")
        .unwrap();
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    // A time-zone picker: 600 options, shown and answered.
    let third = claude.session_with_forms(5).await;
    let turn = server.turn_in(&third, 52, "Which zone (mcp-zones)?");
    allow_once(&mut client, "mcp__forms__zones").await;
    let ask = client.next_method("askQuestions/ask").await;
    let options = ask["params"]["form"]["fields"][0]["options"]
        .as_array()
        .unwrap_or_else(|| panic!("{ask}"));
    assert_eq!(options.len(), 600);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"zone": "Zone/City_599"}}),
        )
        .await;
    assert_eq!(turn.await.unwrap()["stopReason"], "end_turn");
    assert_eq!(
        claude.elicitation_results()[2],
        json!({"tool": "zones", "result": {"action": "accept", "content": {"zone": "Zone/City_599"}}})
    );

    // Claude adds an empty `content` to the accept ask-lsp sent.
    let link = &claude.elicitation_results()[1];
    assert_eq!(link["tool"], "login", "{link}");
    assert_eq!(link["result"]["action"], "accept", "{link}");
}

/// sandbox-agent's OpenCode-compatible API (`/opencode`) followed by
/// ask-lsp's OpenCode backend at that base path: the permission and question
/// of an agent it runs (the test agent as agent `claude`, started by the API
/// itself, whose `initialize` advertises no elicitation) reach the editor,
/// and the answers reach the agent.
#[tokio::test]
async fn opencode_api_of_sandbox_agent_is_followed_at_its_base_path() {
    let mock = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_agent/mock-acp");
    let Some(server) = Server::start_as(&std::fs::read_to_string(mock).unwrap(), "claude").await
    else {
        return;
    };
    // sandbox-agent installs an agent's native CLI before its ACP adapter
    // (a download); a stand-in is enough for the test agent.
    let cli = server._root.path().join("data/sandbox-agent/bin/claude");
    std::fs::write(&cli, "#!/bin/sh\necho 2.1.318\n").unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let api = format!("{}/opencode", server.url);
    let directory = server._root.path().join("project");
    std::fs::create_dir_all(&directory).unwrap();
    let directory = directory.to_str().unwrap().to_owned();
    let created: Value = server
        .http
        .post(format!("{api}/session"))
        .query(&[("directory", &directory)])
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let session = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"name": "oc", "backend": "opencode", "url": api}]}),
        )
        .await;
    let prompt = |text: &str| {
        let (http, url) = (
            server.http.clone(),
            format!("{api}/session/{session}/prompt_async"),
        );
        let body = json!({"model": {"providerID": "claude", "modelID": "default"},
                          "parts": [{"type": "text", "text": text}]});
        tokio::spawn(async move {
            http.post(url)
                .json(&body)
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .map(|r| r.status())
        })
    };
    // What the agent said it received, from the session's messages.
    let received = async |n: usize| -> Vec<String> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let messages: Value = server
                .http
                .get(format!("{api}/session/{session}/message"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let said: Vec<String> = messages
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
                .filter_map(|p| p["text"].as_str().map(str::to_owned))
                .filter(|t| t.starts_with("received: "))
                .collect();
            if said.len() >= n {
                return said;
            }
            assert!(tokio::time::Instant::now() < deadline, "{messages}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };

    let turn = prompt("permission please");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["kind"], "permission", "{ask}");
    assert_eq!(ask["params"]["sessionID"], session.as_str(), "{ask}");
    assert_eq!(ask["params"]["source"]["url"], api.as_str(), "{ask}");
    client
        .respond(&ask["id"], json!({"outcome": "answered", "choice": "once"}))
        .await;
    assert!(turn.await.unwrap().unwrap().is_success());
    let said = received(1).await;
    assert!(said[0].contains(r#""allow_once""#), "{said:?}");

    let turn = prompt("question please");
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"][0]["question"], "Which database?",
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "answers": [["SQLite"]]}),
        )
        .await;
    assert!(turn.await.unwrap().unwrap().is_success());
    let said = received(2).await;
    assert!(said[1].contains(r#"[["SQLite"]]"#), "{said:?}");
    assert_eq!(
        resolved_for(&mut client, &ask).await["reason"],
        "answeredHere"
    );
}
