//! Codex through ACP, for real: `@zed-industries/codex-acp` (pinned with
//! `@openai/codex` in tests/codex/install.sh) hosted by sandbox-agent
//! (tests/sandbox_agent/install.sh), offline against tests/codex/mock-openai,
//! ask-lsp following sandbox-agent as the editor's server.
//!
//! Needs `SANDBOX_AGENT_BIN` and `CODEX_ACP_BIN`; without them each test
//! says SKIP and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::ops::Deref;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::acp_agent::{AcpAgent, asked, required};
use serde_json::{Value, json};

/// sandbox-agent running codex-acp as its agent `mock`, a mock Responses
/// API, and a project (`common::acp_agent`).
struct Codex(AcpAgent);

impl Deref for Codex {
    type Target = AcpAgent;
    fn deref(&self) -> &AcpAgent {
        &self.0
    }
}

impl Codex {
    async fn start() -> Option<Codex> {
        let install = "tests/codex/install.sh, tests/sandbox_agent/install.sh";
        let sandbox_agent = required("SANDBOX_AGENT_BIN", install)?;
        let codex_acp: PathBuf = required("CODEX_ACP_BIN", install)?;
        let agent = AcpAgent::start(
            &sandbox_agent,
            "tests/codex/mock-openai",
            &["home", "codex"],
            |dir, api_port| {
                // Codex's defaults for an ACP session: read-only, asking on request.
                let config = crate::common::agents::codex_mock_provider(api_port);
                std::fs::write(dir.join("codex/config.toml"), config).unwrap();
                format!(
                    "#!/bin/sh\nexport CODEX_HOME='{codex_home}'\ntee -a '{log}' | exec '{bin}'\n",
                    codex_home = dir.join("codex").display(),
                    log = dir.join("stdin.log").display(),
                    bin = codex_acp.display(),
                )
            },
        )
        .await;
        Some(Codex(agent))
    }

    async fn session(&self) -> String {
        self.0.session("codex-acp", "0.16.0").await
    }

    /// What Codex sent back to the model for each tool call.
    async fn received(&self) -> Vec<Value> {
        self.api("/received")
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
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
