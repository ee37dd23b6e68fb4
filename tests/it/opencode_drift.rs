//! OpenCode 1.x as the 1.19 SDK describes it: `question.v2.*` beside
//! `question.*`, `sync` envelopes and a `workspace` on `/global/event`, and
//! the dispose events. The real binary over stdio against the simulated
//! server, which replays tests/fixtures/opencode-1.19 or speaks its 1.19
//! dialect.

use std::time::Duration;

use crate::common::*;
use ask_sim::{Dialect, QuestionRequest, SIM_WORKSPACE};
use serde_json::{Value, json};

const STREAM: &str = include_str!("../fixtures/opencode-1.19/global-stream.jsonl");

/// The question requests asked in the fixture, once each.
fn fixture_requests() -> Vec<QuestionRequest> {
    let mut requests: Vec<QuestionRequest> = Vec::new();
    for line in STREAM.lines() {
        let data: Value = serde_json::from_str(line).expect("fixture lines are JSON");
        let payload = &data["payload"];
        if payload["type"]
            .as_str()
            .is_some_and(|t| t.ends_with(".asked"))
        {
            let request: QuestionRequest =
                serde_json::from_value(payload["properties"].clone()).expect("a request");
            if !requests.iter().any(|r| r.id == request.id) {
                requests.push(request);
            }
        }
    }
    requests
}

/// Waits until ask-lsp's `n`th resync (following every directory) is over:
/// its last request lists recent sessions.
async fn resynced(sim: &Sim, n: usize) {
    wait_for(|| {
        sim.requests()
            .iter()
            .filter(|r| r.starts_with("GET /session?limit="))
            .count()
            >= n
    })
    .await;
}

async fn sim_with(dialect: Dialect) -> Sim {
    Sim::start(SimOptions {
        dialect,
        ..SimOptions::default()
    })
    .await
    .expect("sim listens")
}

#[tokio::test]
async fn a_119_stream_shows_each_question_once_and_the_answer_goes_once() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    resynced(&sim, 1).await;
    // Pending on the server only now, after the resync: what ask-lsp shows
    // comes from the replayed events.
    for request in fixture_requests() {
        sim.add_pending(request);
    }
    for line in STREAM.lines() {
        sim.emit_global_data(line);
    }
    let first = client.next_method("askQuestions/ask").await;
    assert_eq!(first["params"]["requestID"], "que_fx1");
    // The agent and the title come from the `sync` session.updated.1 envelope.
    assert_eq!(
        first["params"]["origin"],
        json!({"toolCallID": "call_fx1", "agent": "plan", "sessionTitle": "Fixture"})
    );
    // que_fx2, sent as question.v2.asked only, is taken in (pending behind
    // the first, so not shown yet) and ends with its session, deleted by a
    // `sync` session.deleted.1 envelope. (The editor, busy with the first,
    // may not hear of it at all: it never saw it.)
    wait_for(|| {
        let logs = client.logs();
        logs.contains("prompt asked key=default/que_fx2")
            && logs
                .contains("prompt resolved key=default/que_fx2 state=Dismissed reason=SessionEnded")
    })
    .await;

    client.answer(&first, json!([["Blue"]])).await;
    let resolved = loop {
        let resolved = client.next_method("askQuestions/resolved").await;
        if resolved["params"]["key"] != "default/que_fx2" {
            break resolved;
        }
    };
    assert_eq!(resolved["params"]["key"], "default/que_fx1");
    assert_eq!(resolved["params"]["reason"], "answeredHere");
    // The second name of que_fx1 and the server's reply events bring
    // nothing new.
    client.expect_quiet(Duration::from_millis(500)).await;
    assert_eq!(sim.received(), vec![reply("que_fx1", json!([["Blue"]]))]);
    // The reply names the workspace the stream named for its directory.
    let replies: Vec<String> = sim
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("POST /question/"))
        .collect();
    assert_eq!(
        replies,
        ["POST /question/que_fx1/reply?directory=%2Fsim%2Fproject&workspace=wrk_fixture"]
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn both_question_names_live_show_once_and_answer_once() {
    for dialect in [Dialect::V119, Dialect::V119Both] {
        let sim = sim_with(dialect).await;
        let mut client = LspClient::with_extension(&sim).await;
        let request = sim.ask(None, database());
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["requestID"], json!(request.id), "{dialect:?}");
        client.answer(&ask, json!([["SQLite"]])).await;
        client.next_method("askQuestions/resolved").await;
        client.expect_quiet(Duration::from_millis(500)).await;
        assert_eq!(
            sim.received(),
            vec![reply(&request.id, json!([["SQLite"]]))],
            "{dialect:?}"
        );
        let workspace = format!("workspace={SIM_WORKSPACE}");
        assert!(
            sim.requests()
                .iter()
                .any(|r| r.starts_with("POST /question/") && r.ends_with(&workspace)),
            "{dialect:?}: {:?}",
            sim.requests()
        );

        // Answered elsewhere: resolved once, whichever names it comes under.
        let other = sim.ask(None, checks());
        client.next_method("askQuestions/ask").await;
        assert!(sim.answer_elsewhere(&other.id, vec![vec!["Lint".into()]]));
        let resolved = client.next_method("askQuestions/resolved").await;
        assert_eq!(resolved["params"]["reason"], "answeredElsewhere");
        client.expect_quiet(Duration::from_millis(300)).await;
        assert!(client.shutdown().await.success());
    }
}

#[tokio::test]
async fn a_disposed_instance_makes_ask_lsp_reconnect_and_find_what_is_pending() {
    let sim = sim_with(Dialect::V119).await;
    let mut client = LspClient::with_extension(&sim).await;
    for (round, all) in [false, true].into_iter().enumerate() {
        resynced(&sim, round + 1).await;
        // No event: only a new listing can find it, and `/global/event`
        // stays open across a disposal.
        let request = sim.ask_silently(None, database());
        client.expect_quiet(Duration::from_millis(300)).await;
        sim.dispose(all);
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["requestID"], json!(request.id), "all: {all}");
        assert!(sim.forget(&request.id));
    }
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn following_one_directory_reconnects_after_its_instance_is_disposed() {
    let sim = sim_with(Dialect::V119).await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url(), "directory": "/sim/project"}]}),
        )
        .await;
    // Resynced: the one directory's permissions are listed last.
    wait_for(|| {
        sim.requests()
            .iter()
            .any(|r| r.starts_with("GET /permission"))
    })
    .await;
    let request = sim.ask_silently(None, database());
    client.expect_quiet(Duration::from_millis(300)).await;
    sim.dispose(false);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(request.id));
    client.answer(&ask, json!([["Postgres"]])).await;
    client.next_method("askQuestions/resolved").await;
    // Followed again: a question asked now arrives as an event.
    let next = sim.ask(None, checks());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(next.id));
    assert!(client.shutdown().await.success());
}
