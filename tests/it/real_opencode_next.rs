//! Against the real OpenCode 1.18.34 and its second session engine (sessions
//! created with `POST /api/session`, prompted with `POST
//! /api/session/{s}/prompt`), offline with the mock LLM in
//! `tests/opencode/mock_llm.py`. ask-lsp is driven over stdio as an editor
//! would; assertions are on what the real server received or did: the tool
//! result OpenCode sent the mock LLM, the file a command made, its listing.
//!
//! Needs `ASK_LSP_OPENCODE_NEXT_BIN` and `ASK_LSP_OPENCODE_PLUGIN_DIR`
//! (printed by `tests/opencode/install.sh`); without them each test says
//! SKIP and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

use crate::common;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::opencode_harness as harness;

use harness::{Offline, STARTUP, Serve};

/// The real server and the mock LLM, each killed (by PID) when dropped.
struct OpenCode {
    root: tempfile::TempDir,
    port: u16,
    llm: Child,
    llm_url: String,
    server: Child,
    http: reqwest::Client,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl OpenCode {
    async fn start() -> Option<OpenCode> {
        let (bin, plugin) = harness::installed("ASK_LSP_OPENCODE_NEXT_BIN")?;
        let Offline {
            root,
            llm,
            llm_url,
            turn,
        } = Offline::prepare(&plugin).await;
        let http = common::http_client();
        let serve = Serve {
            bin: &bin,
            root: root.path(),
            hostname: "127.0.0.1",
            password: None,
        };
        let (server, port) = serve
            .on_a_free_port(|port| http.get(format!("http://127.0.0.1:{port}/global/health")))
            .await;
        let opencode = OpenCode {
            server,
            root,
            port,
            llm,
            llm_url,
            http,
            _turn: turn,
        };
        opencode.warm_up().await;
        Some(opencode)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn directory(&self) -> String {
        self.root
            .path()
            .join("project")
            .to_string_lossy()
            .into_owned()
    }

    /// On a fresh 1.18.34 the first new-engine prompts are sometimes never
    /// run (admitted, no model request). A throwaway turn that reaches the
    /// model, retried in new sessions, warms the engine up.
    async fn warm_up(&self) {
        let deadline = tokio::time::Instant::now() + STARTUP;
        loop {
            self.say("warm up").await;
            let turn = tokio::time::Instant::now() + Duration::from_secs(5);
            while tokio::time::Instant::now() < turn {
                if self.model_requests().await > 0 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the new engine never called the model within {STARTUP:?}"
            );
        }
    }

    /// How many requests the model has had.
    async fn model_requests(&self) -> usize {
        let records: Value = self
            .http
            .get(format!("{}/_mock/records", self.llm_url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        records["requests"].as_array().unwrap().len()
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.http
            .post(format!("{}{path}", self.url()))
            .json(&body)
            .timeout(WAIT)
            .send()
            .await
            .unwrap()
    }

    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.url()))
            .timeout(WAIT)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// A new-engine session whose first user message is `text` (see
    /// mock_llm.py). The new engine needs the model named per session.
    async fn say(&self, text: &str) -> String {
        let created: Value = self
            .post(
                "/api/session",
                json!({"location": {"directory": self.directory()},
                       "model": {"id": "mock-model", "providerID": "mock"}}),
            )
            .await
            .json()
            .await
            .unwrap();
        let id = created["data"]["id"].as_str().unwrap().to_owned();
        let response = self
            .post(
                &format!("/api/session/{id}/prompt"),
                json!({"prompt": {"text": text}}),
            )
            .await;
        assert_eq!(response.status(), 200);
        id
    }

    async fn ask(&self, scenario: &str) -> String {
        self.say(&format!("ASK:{scenario}")).await
    }

    /// A classic session (`POST /session`) whose turn asks `scenario`.
    async fn ask_classic(&self, scenario: &str) -> String {
        let dir = self.directory();
        let session: Value = self
            .http
            .post(format!("{}/session", self.url()))
            .query(&[("directory", &dir)])
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = session["id"].as_str().unwrap().to_owned();
        let response = self
            .http
            .post(format!("{}/session/{id}/prompt_async", self.url()))
            .query(&[("directory", &dir)])
            .json(&json!({"parts": [{"type": "text", "text": format!("ASK:{scenario}")}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204);
        id
    }

    /// The tool results the agent received, in order.
    async fn received(&self) -> Vec<String> {
        let records: Value = self
            .http
            .get(format!("{}/_mock/records", self.llm_url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        records["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["content"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn wait_received(&self, count: usize) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let received = self.received().await;
            if received.len() >= count {
                return received;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "agent received {received:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The new engine's pending questions, as its listing route says.
    async fn pending_questions(&self) -> Vec<Value> {
        self.get("/api/question/request")
            .await
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap()
    }
}

impl Drop for OpenCode {
    fn drop(&mut self) {
        let _ = self.server.start_kill();
        let _ = self.llm.start_kill();
    }
}

async fn sidecar(opencode: &OpenCode, server: Value) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    let mut server = server;
    server["url"] = json!(opencode.url());
    client
        .initialize(extension_caps(), json!({"servers": [server]}))
        .await;
    client
}

async fn next_ask(client: &mut LspClient, session: &str) -> Value {
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["sessionID"], session, "{ask:#}");
    ask
}

async fn choose(client: &mut LspClient, ask: &Value, choice: &str) {
    client
        .respond(&ask["id"], json!({"outcome": "answered", "choice": choice}))
        .await;
}

#[tokio::test]
async fn new_engine_questions_single_several_reject_and_answered_elsewhere() {
    let Some(opencode) = OpenCode::start().await else {
        return;
    };
    // No directory: ask-lsp follows /global/event.
    let mut client = sidecar(&opencode, json!({})).await;

    let started = std::time::Instant::now();
    let session = opencode.ask("single").await;
    let ask = next_ask(&mut client, &session).await;
    eprintln!(
        "measured: prompt → askQuestions/ask (new engine, fresh server) {:?}",
        started.elapsed()
    );
    assert_eq!(
        ask["params"]["questions"][0]["question"], "Which database?",
        "{ask:#}"
    );
    assert_eq!(ask["params"]["source"]["directory"], opencode.directory());
    let answered = std::time::Instant::now();
    client.answer(&ask, json!([["Postgres"]])).await;
    let received = opencode.wait_received(1).await;
    eprintln!(
        "measured: answer → tool result at the model {:?}",
        answered.elapsed()
    );
    assert!(
        received[0].contains(r#""Which database?"="Postgres""#),
        "{received:?}"
    );
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied", "{resolved:#}");

    // Two questions in one request.
    let session = opencode.ask("two").await;
    let ask = next_ask(&mut client, &session).await;
    assert_eq!(ask["params"]["questions"].as_array().unwrap().len(), 2);
    client.answer(&ask, json!([["SQLite"], ["us-east"]])).await;
    let received = opencode.wait_received(2).await;
    assert!(
        received[1].contains(r#""Which database?"="SQLite", "Which region?"="us-east""#),
        "{received:?}"
    );

    // Reject: the server no longer waits, and no answer reached the model.
    let session = opencode.ask("single").await;
    let ask = next_ask(&mut client, &session).await;
    let id = ask["params"]["requestID"].as_str().unwrap().to_owned();
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "rejected", "{resolved:#}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        opencode
            .pending_questions()
            .await
            .iter()
            .all(|q| q["id"] != id.as_str()),
        "still pending after the reject"
    );
    let received = opencode.received().await;
    assert!(
        received[2..].iter().all(|r| !r.contains("=\"")),
        "an answer reached the model after a reject: {received:?}"
    );

    // Answered elsewhere (a direct reply on the new engine's route).
    let before = opencode.received().await.len();
    let session = opencode.ask("single").await;
    let ask = next_ask(&mut client, &session).await;
    let id = ask["params"]["requestID"].as_str().unwrap();
    let response = opencode
        .post(
            &format!("/api/session/{session}/question/{id}/reply"),
            json!({"answers": [["SQLite"]]}),
        )
        .await;
    assert_eq!(response.status(), 204);
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredElsewhere");
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    let received = opencode.wait_received(before + 1).await;
    assert!(
        received[before].contains(r#""Which database?"="SQLite""#),
        "{received:?}"
    );
}

#[tokio::test]
async fn new_engine_permissions_once_reject_elsewhere_and_interrupted() {
    let Some(opencode) = OpenCode::start().await else {
        return;
    };
    let mut client = sidecar(&opencode, json!({"directory": opencode.directory()})).await;

    let session = opencode.say("BASH:touch NEXT_ONCE && echo RAN_ONCE").await;
    let ask = next_ask(&mut client, &session).await;
    assert_eq!(ask["params"]["kind"], "permission", "{ask:#}");
    assert_eq!(ask["params"]["permission"]["action"], "bash");
    assert_eq!(
        ask["params"]["permission"]["command"],
        "touch NEXT_ONCE && echo RAN_ONCE"
    );
    choose(&mut client, &ask, "once").await;
    let received = opencode.wait_received(1).await;
    assert!(received[0].contains("RAN_ONCE"), "{received:?}");
    assert!(opencode.root.path().join("project/NEXT_ONCE").exists());
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied", "{resolved:#}");

    // Reject: the command does not run and the server no longer waits (the
    // run stops, as the classic engine's does without a message).
    let session = opencode.say("BASH:touch NEXT_REJECTED").await;
    let ask = next_ask(&mut client, &session).await;
    let id = ask["params"]["requestID"].as_str().unwrap().to_owned();
    choose(&mut client, &ask, "reject").await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "rejected", "{resolved:#}");
    let gone = opencode
        .http
        .get(format!(
            "{}/api/session/{session}/permission/{id}",
            opencode.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404, "still pending after the reject");
    assert!(!opencode.root.path().join("project/NEXT_REJECTED").exists());

    // Rejected with a message: the model is told the command did not run
    // (1.18.34 does not pass the message on).
    let session = opencode.say("BASH:touch NEXT_REFUSED").await;
    let ask = next_ask(&mut client, &session).await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Not now (R2)"}),
        )
        .await;
    let received = opencode.wait_received(2).await;
    assert!(
        received[1].contains("Unable to execute command: touch NEXT_REFUSED"),
        "{received:?}"
    );
    assert!(!opencode.root.path().join("project/NEXT_REFUSED").exists());

    // Answered in another client on the new engine's route: withdrawn here,
    // and the command ran once.
    let session = opencode
        .say("BASH:touch NEXT_ELSEWHERE && echo RAN_ELSEWHERE")
        .await;
    let ask = next_ask(&mut client, &session).await;
    let id = ask["params"]["requestID"].as_str().unwrap();
    let response = opencode
        .post(
            &format!("/api/session/{session}/permission/{id}/reply"),
            json!({"reply": "once"}),
        )
        .await;
    assert_eq!(response.status(), 204);
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredElsewhere");
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    let received = opencode.wait_received(3).await;
    assert!(received[2].contains("RAN_ELSEWHERE"), "{received:?}");

    // The run is interrupted while its permission waits: withdrawn here
    // (`session.next.tool.failed`), nothing ran.
    let session = opencode.say("BASH:touch NEXT_INTERRUPTED").await;
    let ask = next_ask(&mut client, &session).await;
    let response = opencode
        .post(&format!("/api/session/{session}/interrupt"), json!({}))
        .await;
    assert!(response.status().is_success());
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "dismissed", "{resolved:#}");
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    assert!(
        !opencode
            .root
            .path()
            .join("project/NEXT_INTERRUPTED")
            .exists()
    );
}

#[tokio::test]
async fn new_engine_prompts_pending_before_start_are_shown_once() {
    let Some(opencode) = OpenCode::start().await else {
        return;
    };
    // Asked before ask-lsp starts: only its listing route can show it.
    let session = opencode.ask("single").await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while opencode.pending_questions().await.is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "never asked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut client = sidecar(&opencode, json!({"directory": opencode.directory()})).await;
    let ask = next_ask(&mut client, &session).await;
    client.answer(&ask, json!([["SQLite"]])).await;
    let received = opencode.wait_received(1).await;
    assert!(
        received[0].contains(r#""Which database?"="SQLite""#),
        "{received:?}"
    );
    client.next_method("askQuestions/resolved").await;
    client.shutdown().await;

    // Restarted: the answered one is not shown again; a new one is.
    let mut client = sidecar(&opencode, json!({"directory": opencode.directory()})).await;
    let session = opencode.ask("two").await;
    let ask = next_ask(&mut client, &session).await;
    client
        .answer(&ask, json!([["Postgres"], ["eu-west"]]))
        .await;
    let received = opencode.wait_received(2).await;
    assert!(
        received[1].contains(r#""Which database?"="Postgres", "Which region?"="eu-west""#),
        "{received:?}"
    );
    assert_eq!(
        client
            .seen
            .iter()
            .filter(|m| m["method"] == "askQuestions/ask")
            .count(),
        1,
        "the answered question was shown again"
    );
}

#[tokio::test]
async fn classic_and_new_engine_sessions_on_one_server() {
    let Some(opencode) = OpenCode::start().await else {
        return;
    };
    let mut client = sidecar(&opencode, json!({"directory": opencode.directory()})).await;

    // Both engines ask at once; each answer goes to its own route.
    // (One is shown at a time: each is answered as it comes.)
    let classic = opencode.ask_classic("single").await;
    let next = opencode.ask("single").await;
    for _ in 0..2 {
        let ask = client.next_method("askQuestions/ask").await;
        let session = ask["params"]["sessionID"].as_str().unwrap();
        let answer = if session == classic {
            "Postgres"
        } else {
            assert_eq!(session, next, "{ask:#}");
            "SQLite"
        };
        client.answer(&ask, json!([[answer]])).await;
    }
    let received = opencode.wait_received(2).await;
    let mut answers: Vec<&str> = received
        .iter()
        .map(|r| {
            if r.contains(r#""Which database?"="SQLite""#) {
                "new engine"
            } else if r.contains(r#""Which database?"="Postgres""#) {
                "classic"
            } else {
                "other"
            }
        })
        .collect();
    answers.sort_unstable();
    assert_eq!(answers, ["classic", "new engine"], "{received:?}");

    // 1.18.34 closes /api/event about 2 s after a classic session runs;
    // ask-lsp follows /event, and a new-engine prompt after that is shown
    // and answered.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let next = opencode.ask("two").await;
    let ask = next_ask(&mut client, &next).await;
    client
        .answer(&ask, json!([["Postgres"], ["us-east"]]))
        .await;
    let received = opencode.wait_received(3).await;
    assert!(
        received[2].contains(r#""Which database?"="Postgres", "Which region?"="us-east""#),
        "{received:?}"
    );
}
