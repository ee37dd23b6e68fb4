//! Clients with no plugin: `window/showMessageRequest`, code actions and
//! commands, against the real binary and the simulated server.

use crate::common::*;
use serde_json::{Value, json};

async fn plain_client(sim: &Sim) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(plain_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    client
}

#[tokio::test]
async fn show_message_request_per_question_then_one_reply() {
    let sim = sim().await;
    let mut client = plain_client(&sim).await;
    let mut two = database();
    two.extend(checks());
    let request = sim.ask(None, two);
    let first = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        first["params"],
        json!({"type": 3,
               "message": "(1 of 2) [Database] Which database?\n  Postgres: Relational\n  SQLite: Embedded",
               "actions": [{"title": "✗ Reject"}, {"title": "Postgres"}, {"title": "SQLite"}]})
    );
    client
        .respond(&first["id"], json!({"title": "SQLite"}))
        .await;
    let second = client.next_method("window/showMessageRequest").await;
    // The hint only where the buttons cannot give the answer (multi-select).
    assert_eq!(
        second["params"]["message"],
        "(2 of 2) [Checks] Which checks?\n  Unit\n  Lint\n  E2E\n(For several options or a typed answer, use a code action or the askLsp.answer command.)"
    );
    assert_eq!(
        second["params"]["actions"],
        json!([{"title": "✗ Reject"}, {"title": "Unit"}, {"title": "Lint"}, {"title": "E2E"}])
    );
    assert!(
        sim.received().is_empty(),
        "nothing is sent before every question has an answer"
    );
    client
        .respond(&second["id"], json!({"title": "Lint"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["SQLite"], ["Lint"]]))]
    );
}

#[tokio::test]
async fn reject_action_and_closing_the_message_defers() {
    let sim = sim().await;
    let mut client = plain_client(&sim).await;
    let first = sim.ask(None, database());
    let second = sim.ask(None, database());
    let message = client.next_method("window/showMessageRequest").await;
    client.respond(&message["id"], json!(null)).await; // closed: deferred
    let message = client.next_method("window/showMessageRequest").await;
    assert!(
        message["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which database?")
    );
    client
        .respond(&message["id"], json!({"title": "✗ Reject"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(sim.received(), vec![Received::Reject { id: second.id }]);
    // The deferred one comes back on request.
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.show"}),
        )
        .await;
    let message = client.next_method("window/showMessageRequest").await;
    client
        .respond(&message["id"], json!({"title": "Postgres"}))
        .await;
    wait_for(|| sim.received().len() == 2).await;
    assert_eq!(sim.received()[1], reply(&first.id, json!([["Postgres"]])));
}

#[tokio::test]
async fn answered_elsewhere_withdraws_the_message_and_says_so() {
    let sim = sim().await;
    let mut client = plain_client(&sim).await;
    let request = sim.ask(None, database());
    let message = client.next_method("window/showMessageRequest").await;
    sim.answer_elsewhere(&request.id, vec![vec!["Postgres".into()]]);
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": message["id"]}})
    );
    assert_eq!(
        client.next().await["params"],
        json!({"type": 3, "message": "\"Database\" was answered elsewhere"})
    );
    client
        .respond(&message["id"], json!({"title": "SQLite"}))
        .await;
    client
        .expect_quiet(std::time::Duration::from_millis(300))
        .await;
    assert_eq!(sim.received(), vec![]);
}

#[tokio::test]
async fn code_actions_answer_multi_select_and_typed_text_by_command() {
    let sim = sim().await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            plain_caps(),
            json!({"servers": [{"url": sim.url()}], "surface": "none"}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    let mut two = database();
    two.extend(checks());
    let request = sim.ask(None, two);
    let key = format!("default/{}", request.id);
    wait_for(|| sim.pending().len() == 1).await;
    let actions = loop {
        let response = client
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": "file:///tmp/any.rs"},
                       "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                       "context": {"diagnostics": []}}),
            )
            .await;
        if response["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break response["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        vec![
            "Reject \"Database\"",
            "Answer \"Database\": Postgres",
            "Answer \"Database\": SQLite",
            "Reject \"Checks\"",
            "Answer \"Checks\": Unit",
            "Answer \"Checks\": Lint",
            "Answer \"Checks\": E2E"
        ]
    );
    assert_eq!(
        actions[1]["command"],
        json!({"title": "Answer \"Database\": Postgres", "command": "askLsp.answer", "arguments": [{"key": key, "question": 0, "answer": ["Postgres"]}]})
    );
    // Run the first answer's command, then answer the multi-select by command.
    let partial = client
        .request("workspace/executeCommand", actions[1]["command"].clone())
        .await;
    assert_eq!(
        partial["result"],
        json!({"state": "partial", "remaining": [1]})
    );
    let sent = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": key, "question": 1, "answer": ["Unit", "E2E"]}]}),
        )
        .await;
    assert_eq!(sent["result"], json!({"state": "sent"}));
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"], ["Unit", "E2E"]]))]
    );
    let again = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.reject", "arguments": [key]}),
        )
        .await;
    assert_eq!(
        again["error"],
        json!({"code": -32602, "message": format!("no pending prompt {key}")})
    );
}

#[tokio::test]
async fn configuration_changes_switch_servers_and_surface() {
    let old = sim().await;
    let new = sim().await;
    let mut client = plain_client(&old).await;
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"servers": [{"url": new.url()}], "surface": "messageRequest"}}}),
        )
        .await;
    wait_for(|| new.subscribers() > 0 && old.subscribers() == 0).await;
    let request = new.ask(None, database());
    let message = client.next_method("window/showMessageRequest").await;
    client
        .respond(&message["id"], json!({"title": "Postgres"}))
        .await;
    wait_for(|| !new.received().is_empty()).await;
    assert_eq!(
        new.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": [{"url": "ftp://nope"}]}}),
        )
        .await;
    let error = client.next_method("window/showMessage").await;
    assert_eq!(
        error["params"]["message"],
        "ask-lsp: invalid ask-lsp configuration: servers[0].url \"ftp://nope\": expected an http:// or https:// URL with a host; keeping the previous configuration"
    );
    assert!(new.subscribers() > 0);
}

#[tokio::test]
async fn bad_initialization_options_fail_initialize_clearly() {
    let mut client = LspClient::start(&[]).await;
    let response = client
        .request(
            "initialize",
            json!({"capabilities": {}, "initializationOptions": {"servers": [{"url": "not a url"}]}}),
        )
        .await;
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "invalid ask-lsp configuration: servers[0].url \"not a url\": relative URL without a base"})
    );
}

/// A plain prompt nobody answers does not hide the ones after it: after the
/// rotation time it is withdrawn from the screen (still pending), the next
/// one is shown, and it comes back once that one is answered.
#[tokio::test]
async fn an_unanswered_plain_prompt_lets_the_next_one_through() {
    let sim = sim().await;
    let mut client = LspClient::start(&[("ASK_LSP_ROTATE_MS", "300")]).await;
    client
        .initialize(plain_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    let first = sim.ask(None, database());
    let shown = client.next_method("window/showMessageRequest").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which database?")
    );
    // Alone, it stays however long it waits.
    client
        .expect_quiet(std::time::Duration::from_millis(700))
        .await;
    let second = sim.ask(None, checks());
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], shown["id"]);
    let next = client.next_method("window/showMessageRequest").await;
    assert!(
        next["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which checks?")
    );
    // A late answer to the withdrawn request is not taken.
    client
        .respond(&shown["id"], json!({"title": "SQLite"}))
        .await;
    client.respond(&next["id"], json!({"title": "Lint"})).await;
    wait_for(|| !sim.received().is_empty()).await;
    let again = client.next_method("window/showMessageRequest").await;
    assert!(
        again["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which database?")
    );
    client
        .respond(&again["id"], json!({"title": "Postgres"}))
        .await;
    wait_for(|| sim.received().len() == 2).await;
    assert_eq!(
        sim.received(),
        vec![
            reply(&second.id, json!([["Lint"]])),
            reply(&first.id, json!([["Postgres"]]))
        ]
    );
}

/// Answers given a question at a time (a code action, a command) wait in
/// ask-lsp until the last one: then exactly one reply leaves, each picked
/// option as the agent sent it, even one shown neutralised. A prompt
/// answered elsewhere meanwhile takes its answers with it: the next piece
/// is refused and nothing is sent.
#[tokio::test]
async fn answers_by_piece_leave_once_whole_and_go_with_a_prompt_answered_elsewhere() {
    let sim = sim().await;
    let mut client = plain_client(&sim).await;
    let raw = "Red\u{1b}[2J";
    let request = sim.ask(
        None,
        questions(json!([
            {"question": "Which color?", "header": "Color", "custom": false,
             "options": [{"label": raw, "description": ""}, {"label": "Blue", "description": ""}]},
            {"question": "Which checks?", "header": "Checks", "multiple": true, "custom": false,
             "options": [{"label": "Unit", "description": ""}, {"label": "Lint", "description": ""}]}
        ])),
    );
    let key = format!("default/{}", request.id);
    client.next_method("window/showMessageRequest").await;
    let anywhere = json!({"textDocument": {"uri": "file:///tmp/any.rs"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}});
    let actions = client
        .request("textDocument/codeAction", anywhere.clone())
        .await;
    let red = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Answer \"Color\": Red␛[2J")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    let partial = client
        .request("workspace/executeCommand", red["command"].clone())
        .await;
    assert_eq!(
        partial["result"],
        json!({"state": "partial", "remaining": [1]})
    );
    // Only the open question is offered now.
    let actions = client.request("textDocument/codeAction", anywhere).await;
    let titles: Vec<&str> = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Reject \"Checks\"",
            "Answer \"Checks\": Unit",
            "Answer \"Checks\": Lint"
        ]
    );
    assert!(
        sim.received().is_empty(),
        "nothing leaves before the last piece"
    );
    let unit = actions["result"][1].clone();
    assert_eq!(unit["title"], "Answer \"Checks\": Unit");
    let sent = client
        .request("workspace/executeCommand", unit["command"].clone())
        .await;
    assert_eq!(sent["result"], json!({"state": "sent"}), "{sent}");
    let answer = |key: &str, question: usize, answer: Value| {
        json!({"command": "askLsp.answer",
               "arguments": [{"key": key, "question": question, "answer": answer}]})
    };
    let again = client
        .request("workspace/executeCommand", answer(&key, 1, json!(["Unit"])))
        .await;
    assert_eq!(
        again["error"]["message"],
        json!(format!("no pending prompt {key}"))
    );
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([[raw], ["Unit"]]))]
    );

    let mut both = database();
    both.extend(checks());
    let second = sim.ask(None, both);
    let key = format!("default/{}", second.id);
    client.next_method("window/showMessageRequest").await;
    let partial = client
        .request(
            "workspace/executeCommand",
            answer(&key, 0, json!(["Postgres"])),
        )
        .await;
    assert_eq!(
        partial["result"],
        json!({"state": "partial", "remaining": [1]})
    );
    assert!(sim.answer_elsewhere(&second.id, vec![vec!["SQLite".into()], vec![]]));
    client.next_method("$/cancelRequest").await;
    let late = client
        .request("workspace/executeCommand", answer(&key, 1, json!(["Unit"])))
        .await;
    assert_eq!(
        late["error"]["message"],
        json!(format!("no pending prompt {key}"))
    );
    assert_eq!(sim.received().len(), 1, "{:?}", sim.received());
}
