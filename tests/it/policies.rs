//! Policies end to end: what the simulated server receives, and what the
//! editor is told, for each mode; the timeout racing a late human answer.

use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

async fn client_with_policy(sim: &Sim, policy: Value) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    let response = client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url()}], "policy": policy}),
        )
        .await;
    assert!(response.get("error").is_none(), "{response}");
    wait_for(|| sim.subscribers() > 0).await;
    client
}

#[tokio::test]
async fn accept_first_answers_the_first_option_and_says_so() {
    let sim = sim().await;
    let mut client = client_with_policy(&sim, json!({"mode": "accept-first"})).await;
    let mut both = database();
    both.extend(checks());
    let request = sim.ask(None, both);
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied");
    assert_eq!(resolved["params"]["reason"], "policy");
    let message = resolved["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("Which database?") && message.contains("Postgres"),
        "{message}"
    );
    client.drain(Duration::from_millis(200)).await;
    let logged = client.seen.iter().any(|m| {
        m["method"] == "window/logMessage"
            && m["params"]["message"] == format!("ask-lsp: {message}")
    });
    assert!(logged, "{:#?}", client.seen);
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"], ["Unit"]]))]
    );
    let status = client.status().await;
    assert_eq!(status["counters"]["policyAnswered"], 1);
    assert!(
        client
            .seen
            .iter()
            .all(|m| m["method"] != "askQuestions/ask")
    );
}

#[tokio::test]
async fn accept_first_rejects_a_free_text_only_question() {
    let sim = sim().await;
    let mut client = client_with_policy(&sim, json!({"mode": "accept-first"})).await;
    let request = sim.ask(
        None,
        questions(json!([{"question": "Name?", "header": "Name", "options": []}])),
    );
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "rejected");
    assert_eq!(resolved["params"]["reason"], "policy");
    assert_eq!(sim.received(), vec![Received::Reject { id: request.id }]);
}

#[tokio::test]
async fn reject_mode_rejects_at_once() {
    let sim = sim().await;
    let mut client = client_with_policy(&sim, json!({"mode": "reject"})).await;
    let request = sim.ask(None, database());
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "rejected");
    assert_eq!(sim.received(), vec![Received::Reject { id: request.id }]);
}

#[tokio::test]
async fn forward_with_timeout_falls_back_to_the_first_option_and_withdraws_the_prompt() {
    let sim = sim().await;
    let mut client = client_with_policy(&sim, json!({"mode": "forward", "timeoutMs": 300})).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["timeoutMs"], 300);
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ask["id"]}})
    );
    let resolved = client.next().await;
    assert_eq!(resolved["params"]["state"], "replied");
    assert_eq!(resolved["params"]["reason"], "timeout");
    let message = resolved["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("no answer within 0.3 s"), "{message}");
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
}

#[tokio::test]
async fn a_late_human_answer_racing_the_timeout_sends_exactly_one_reply() {
    // Run the race many times with the answer landing around the deadline.
    for round in 0..20u64 {
        let sim = sim().await;
        let mut client =
            client_with_policy(&sim, json!({"mode": "forward", "timeoutMs": 100})).await;
        let request = sim.ask(None, database());
        let ask = client.next_method("askQuestions/ask").await;
        tokio::time::sleep(Duration::from_millis(90 + round % 5 * 5)).await;
        client.answer(&ask, json!([["SQLite"]])).await;
        client.next_method("askQuestions/resolved").await;
        client.drain(Duration::from_millis(200)).await;
        let received = sim.received();
        assert_eq!(received.len(), 1, "round {round}: {received:?}");
        assert!(
            received == vec![reply(&request.id, json!([["SQLite"]]))]
                || received == vec![reply(&request.id, json!([["Postgres"]]))],
            "{received:?}"
        );
        sim.stop();
    }
}

#[tokio::test]
async fn auto_rules_answer_matching_questions_and_a_bad_rule_answer_asks_the_person() {
    let sim = sim().await;
    let policy = json!({"mode": "auto", "rules": [
        {"match": "/^Which data/", "answers": ["SQLite"]},
        {"match": "checks", "answers": ["Nightly"]}
    ]});
    let mut client = client_with_policy(&sim, policy).await;
    let matched = sim.ask(None, database());
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(
        resolved["params"]["message"],
        "rule \"/^Which data/\": \"Which database?\" → \"SQLite\""
    );
    assert_eq!(
        sim.received(),
        vec![reply(&matched.id, json!([["SQLite"]]))]
    );
    // "Nightly" is not an option and typed answers are off: not sent.
    let mut strict = checks();
    strict[0].custom = false;
    let unmatched = sim.ask(None, strict);
    let notice = client.next_method("window/showMessage").await;
    assert_eq!(
        notice["params"]["message"],
        "ask-lsp: \"Checks\": the automatic answer is not valid (question 0: \"Nightly\" is not one of the options and this question does not allow a typed answer); asking you instead"
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(unmatched.id));
    client.answer(&ask, json!([["Unit"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(sim.received()[1], reply(&unmatched.id, json!([["Unit"]])));
}

#[tokio::test]
async fn invalid_policies_are_configuration_errors() {
    let sim = sim().await;
    for (policy, expected) in [
        (
            json!({"mode": "sometimes"}),
            "policy: unknown variant `sometimes`",
        ),
        (
            json!({"mode": "auto", "rules": [{"match": "/(/", "answers": ["x"]}]}),
            "policy.rules[0].match: invalid regex \"/(/\"",
        ),
    ] {
        let mut client = LspClient::start(&[]).await;
        let response = client
            .request(
                "initialize",
                json!({"capabilities": {}, "initializationOptions": {"servers": [{"url": sim.url()}], "policy": policy}}),
            )
            .await;
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("invalid ask-lsp configuration: ") && message.contains(expected),
            "{policy}: {response}"
        );
    }
}
