//! Bad input from either side: broken event streams, oversized or hostile
//! questions, malformed answers from the editor. ask-lsp keeps working, shows
//! nothing harmful and says clearly what it refused.

use std::time::Duration;

use crate::common::*;
use ask_sim::QuestionRequest;
use serde_json::json;

#[tokio::test]
async fn broken_frames_and_events_are_skipped_and_the_stream_keeps_working() {
    let sim = sim().await;
    // With a directory, events come unwrapped from `/event`.
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url(), "directory": "/p"}]}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    sim.emit_raw("data: {not json, about a question\n\n");
    sim.emit_raw("data: {\"type\":\"question.asked\",\"properties\":{\"id\":7}}\n\n");
    sim.emit_raw("data: {\"type\":\"question.asked\"}\n\n");
    sim.emit_raw("data: {\"type\":\"brand.new.event\",\"properties\":[1,2,3]}\n\n");
    sim.emit_raw("event: weird\nid: 1\nretry: x\n: a comment\n\n\n\n");
    sim.emit_raw("data: [\"\u{0}\u{1b}[2J question\"]\r\n\r\n");
    sim.emit_raw(&format!("data: {}\n\n", "x".repeat(5 << 20)));
    sim.emit(
        "message.part.updated",
        json!({"part": {"type": "tool", "tool": "question"}}),
    );
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(request.id));
    let logs = client.logs();
    assert!(
        logs.contains("skipped an event over the 4 MiB bound"),
        "{logs}"
    );
    for error in [
        "key must be a string at line 1 column 2",
        "invalid type: integer `7`, expected a string",
        "invalid type: null, expected struct QuestionRequest",
        "control character (\\u0000-\\u001F) found while parsing a string",
    ] {
        assert!(
            logs.contains(&format!("skipped an undecodable event: {error}")),
            "{error}: {logs}"
        );
    }
    assert_eq!(
        client
            .seen
            .iter()
            .filter(|m| m["method"] == "askQuestions/ask")
            .count(),
        1
    );
}

/// A request over the bounds is not shown, but stays listed with its reason
/// so the agent is not left waiting: rejectable, and answerable by typed
/// text where every question takes it. Nothing of its text is shown.
#[tokio::test]
async fn oversized_prompts_are_listed_with_their_reason_and_can_be_rejected() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let options: Vec<_> = (0..10_000)
        .map(|n| json!({"label": format!("option {n}"), "description": ""}))
        .collect();
    let many = sim.ask(
        None,
        questions(json!([{"question": "Pick", "header": "Huge", "options": options}])),
    );
    let message = client.next_method("window/showMessage").await;
    assert_eq!(
        message["params"],
        json!({"type": 1, "message": format!(
            "ask-lsp: A prompt from default cannot be shown (default/{}): question 0 has 10000 options (at most 64). It is listed so that you can reject it.",
            many.id)})
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"],
        json!([{"header": "Cannot be shown", "question": "This question cannot be shown here (question 0 has 10000 options (at most 64)). Reject it, or type an answer.",
                "options": [], "multiple": false, "custom": true}])
    );
    // OpenCode takes typed text for this question: the agent gets it.
    client.answer(&ask, json!([["option 7"]])).await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(sim.received()[0], reply(&many.id, json!([["option 7"]])));

    // No typed answers allowed: only a refusal goes.
    let long = sim.ask(
        None,
        questions(json!([{"question": "y".repeat(100_000), "header": "Long", "options": [{"label": "yes", "description": ""}], "custom": false}])),
    );
    let message = client.next_method("window/showMessage").await;
    assert!(
        message["params"]["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!("(default/{}): question is 100000 characters long (at most 8000). It is listed so that you can reject it.", long.id)),
        "{message}"
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["questions"][0]["custom"], json!(false));
    let fine = sim.ask(None, database());
    // Listed for every surface (code actions, commands) with the others.
    wait_for(|| sim.subscribers() > 0).await;
    let mut listed = 0;
    for _ in 0..100 {
        let list = client
            .request(
                "workspace/executeCommand",
                json!({"command": "askLsp.list"}),
            )
            .await;
        listed = list["result"].as_array().unwrap().len();
        if listed == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(listed, 2);
    client.answer(&ask, json!([["yes"]])).await;
    let error = client.next_method("window/showMessage").await;
    assert!(
        error["params"]["message"]
            .as_str()
            .unwrap()
            .contains("is not one of the options and this question does not allow a typed answer"),
        "{error}"
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(long.id));
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    wait_for(|| sim.received().len() == 2).await;
    assert_eq!(
        sim.received()[1],
        Received::Reject {
            id: long.id.clone()
        }
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(fine.id));
    // Not shown again on resync: the answered ones are gone from the server.
    sim.drop_streams();
    wait_for(|| sim.subscribers() > 0).await;
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(sim.received().len(), 2);
}

#[tokio::test]
async fn escapes_controls_and_bidi_overrides_are_shown_harmlessly() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    sim.ask(
        None,
        questions(json!([{
            "question": "Delete \u{1b}[31mprod\u{1b}[0m?\u{7}\nReally\u{202e}?",
            "header": "\u{1b}]0;pwned\u{7}Danger\u{0}",
            "options": [{"label": "Yes\u{202e}oN", "description": "\u{1b}[2Jwipes\tall"},
                        {"label": "No", "description": ""}]}])),
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"],
        json!([{"question": "Delete ␛[31mprod␛[0m?␇\nReally⟨U+202E⟩?", "header": "␛]0;pwned␇Danger␀",
                "options": [{"label": "Yes⟨U+202E⟩oN", "description": "␛[2Jwipes all"}, {"label": "No", "description": ""}],
                "multiple": false, "custom": true}])
    );
    // The person picks what they saw; the agent gets its own option back.
    client.answer(&ask, json!([["Yes⟨U+202E⟩oN"]])).await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received()[0],
        Received::Reply {
            id: ask["params"]["requestID"].as_str().unwrap().into(),
            answers: vec![vec!["Yes\u{202e}oN".into()]]
        }
    );
}

/// A listed question's id reaches the log when its session is not
/// running, and a value serde refuses is quoted in its error: neutralised
/// and bounded there as everywhere.
#[tokio::test]
async fn hostile_ids_and_values_are_logged_harmlessly() {
    let sim = sim().await;
    let id = format!("que_\u{202e}\u{7}{}", "x".repeat(10_000));
    sim.add_pending(QuestionRequest {
        id: id.clone(),
        session_id: "ses_gone".into(),
        questions: database(),
        tool: None,
    });
    sim.abort("ses_gone");
    let client = LspClient::with_extension(&sim).await;
    // The first log line holding `what`, once there is one.
    let logged = async |what: &str| {
        wait_for(|| client.logs().contains(what)).await;
        let logs = client.logs();
        logs.lines()
            .find(|line| line.contains(what))
            .unwrap()
            .to_owned()
    };
    let line = logged("listed prompt skipped").await;
    assert!(line.contains("que_"), "{line}");
    assert!(!line.contains(['\u{202e}', '\u{7}']), "{line}");
    assert!(line.len() < 400, "{line}");
    assert!(
        !client.logs().contains(&"x".repeat(100)),
        "the id is bounded"
    );

    let hostile = format!("\u{202e}\u{7}{}", "y".repeat(10_000));
    // Without a directory configured, events come from `/global/event`.
    let event = json!({"directory": "/p", "payload": {"type": "question.asked", "properties": {
        "id": "que_1", "sessionID": "ses_1", "questions": [{"question": "Q", "multiple": hostile}]}}});
    sim.emit_raw(&format!("data: {event}\n\n"));
    let line = logged("skipped an undecodable event").await;
    assert!(line.contains("invalid type: string"), "{line}");
    assert!(!line.contains(['\u{202e}', '\u{7}']), "{line}");
    assert!(
        !client.logs().contains(&"y".repeat(400)),
        "the value is bounded"
    );
}

#[tokio::test]
async fn malformed_answers_from_the_editor_are_errors_and_nothing_is_sent() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let key = format!("default/{}", request.id);
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "answers": "Postgres"}),
        )
        .await;
    let message = client.next_method("window/showMessage").await;
    assert_eq!(
        message["params"],
        json!({"type": 1, "message": format!(
            "ask-lsp: the editor's answer to {key} is not valid: invalid type: string \"Postgres\", expected a sequence")})
    );
    const USAGE: &str = "askLsp.answer takes one object: [{key, answers: string[][]}], [{key, question: number, answer: string[]}], [{key, choice: string}] or [{key, values: {fieldId: value}}]";
    let several = format!(
        "{USAGE}: one of `answers`, `question` with `answer`, `choice` or `values`, not several"
    );
    let positional = format!("{USAGE}; positional arguments ([key, …]) are no longer taken");
    let wrong_shapes = [
        (
            json!([{"key": key, "choice": "Postgres"}]),
            "this is a questions prompt; the answer is for a permission prompt",
        ),
        (
            json!([{"key": key, "answers": [["Postgres"], ["extra"]]}]),
            "expected 1 answers (one per question), got 2",
        ),
        (
            json!([{"key": key, "answers": [["Postgres", "SQLite"]]}]),
            "question 0 takes exactly one answer, got 2",
        ),
        (
            json!([{"key": key, "answers": [[""]]}]),
            "question 0: an answer is empty",
        ),
        // A piece that fails validation is refused, and nothing is kept.
        (
            json!([{"key": key, "question": 0, "answer": ["Postgres", "SQLite"]}]),
            "question 0 takes exactly one answer, got 2",
        ),
        (json!([]), USAGE),
        (
            json!([{"key": key, "answers": [["Postgres"]], "choice": "x"}]),
            several.as_str(),
        ),
        (json!([key, [["Postgres"]]]), positional.as_str()),
    ];
    for (arguments, message) in wrong_shapes {
        let response = client
            .request(
                "workspace/executeCommand",
                json!({"command": "askLsp.answer", "arguments": arguments}),
            )
            .await;
        assert_eq!(
            response["error"],
            json!({"code": -32602, "message": message}),
            "{arguments}"
        );
    }
    let unknown = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.nope"}),
        )
        .await;
    assert_eq!(
        unknown["error"]["message"],
        "unknown command \"askLsp.nope\""
    );
    assert_eq!(sim.received(), vec![]);
    // Still pending and answerable.
    let sent = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": key, "answers": [["Postgres"]]}]}),
        )
        .await;
    assert_eq!(sent["result"], json!({"state": "sent"}));
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
}
