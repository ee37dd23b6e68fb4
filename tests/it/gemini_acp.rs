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

use std::ops::Deref;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::acp_agent::{AcpAgent, asked, required};
use serde_json::{Value, json};

/// sandbox-agent running `gemini --acp` as its agent `mock` (sandbox-agent
/// 0.4.2 has no `gemini`), a mock Gemini API, and a project
/// (`common::acp_agent`).
struct Gemini(AcpAgent);

impl Deref for Gemini {
    type Target = AcpAgent;
    fn deref(&self) -> &AcpAgent {
        &self.0
    }
}

impl Gemini {
    async fn start() -> Option<Gemini> {
        let install = "tests/agents/install.sh, tests/sandbox_agent/install.sh";
        let sandbox_agent = required("SANDBOX_AGENT_BIN", install)?;
        let gemini: PathBuf = required("ASK_LSP_GEMINI_BIN", install)?;
        let agent = AcpAgent::start(
            &sandbox_agent,
            "tests/agents/mock-gemini",
            &["home/.gemini"],
            |dir, api_port| {
                // Its API key, chosen in its settings as a person does once;
                // no Google sign-in.
                std::fs::write(
                    dir.join("home/.gemini/settings.json"),
                    json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
                )
                .unwrap();
                format!(
                    "#!/bin/sh\nexport HOME='{home}' GEMINI_API_KEY=test-key \
                     GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{api_port}\n\
                     tee -a '{log}' | exec '{bin}' --acp\n",
                    home = dir.join("home").display(),
                    log = dir.join("stdin.log").display(),
                    bin = gemini.display(),
                )
            },
        )
        .await;
        Some(Gemini(agent))
    }

    async fn session(&self) -> String {
        self.0.session("gemini-cli", "0.61.0").await
    }

    /// The paths of the model API Gemini asked, in order.
    async fn model_calls(&self) -> Vec<String> {
        serde_json::from_value(self.api("/requests").await).unwrap_or_default()
    }

    /// The function responses Gemini sent back to the model.
    async fn received(&self) -> Vec<Value> {
        self.api("/received")
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
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
