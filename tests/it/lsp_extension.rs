//! The `askQuestions` extension end to end: the real binary over stdio, the
//! simulated OpenCode server on loopback, assertions on what the server got.

use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

/// The `askQuestions/ask` params ask-lsp must send for a request.
fn expected_ask(
    sim: &Sim,
    request: &ask_sim::QuestionRequest,
    title: &str,
    pending: usize,
) -> Value {
    json!({
        "key": format!("default/{}", request.id),
        "server": "default",
        "requestID": request.id,
        "sessionID": request.session_id,
        "kind": "questions",
        "title": title,
        "source": {"backend": "opencode", "url": sim.url(), "directory": "/sim/project"},
        "origin": {"toolCallID": request.tool.as_ref().unwrap().call_id, "agent": null},
        "questions": request.questions,
        "timeoutMs": null,
        "pending": pending,
    })
}

#[tokio::test]
async fn initialize_advertises_the_extension_and_commands() {
    let sim = sim().await;
    let mut client = LspClient::start(&[]).await;
    let response = client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    assert_eq!(
        response["result"],
        json!({
            "capabilities": {
                "codeActionProvider": true,
                "executeCommandProvider": {"commands": ["askLsp.list", "askLsp.answer", "askLsp.reject", "askLsp.show", "askLsp.status"]},
                "experimental": {"askQuestions": {"version": 2}},
                "textDocumentSync": 0
            },
            "serverInfo": {"name": "ask-lsp", "version": env!("CARGO_PKG_VERSION")}
        })
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn single_select_answer_reaches_the_server() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"], expected_ask(&sim, &request, "Database", 1));
    client.answer(&ask, json!([["Postgres"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(
        resolved["params"],
        json!({"key": format!("default/{}", request.id), "state": "replied", "reason": "answeredHere", "here": true,
               "message": "Answered \"Database\"", "pending": 0})
    );
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn multi_select_two_questions_and_custom_text() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let mut both = checks();
    both.extend(questions(
        json!([{"question": "Release name?", "header": "Name", "options": []}]),
    ));
    let request = sim.ask(None, both);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"],
        expected_ask(&sim, &request, "Checks (+1 more)", 1)
    );
    client
        .answer(&ask, json!([["Lint", "Unit"], ["  v1.2 final \n"]]))
        .await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![reply(
            &request.id,
            json!([["Lint", "Unit"], ["v1.2 final"]])
        )]
    );
    let logs = client.logs();
    assert!(logs.contains("prompt resolved"), "{logs}");
    assert!(
        !logs.contains("v1.2"),
        "answer text must never be logged: {logs}"
    );
}

#[tokio::test]
async fn reject_reaches_the_server() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "rejected");
    assert_eq!(resolved["params"]["reason"], "rejectedHere");
    assert_eq!(sim.received(), vec![Received::Reject { id: request.id }]);
}

#[tokio::test]
async fn answered_elsewhere_cancels_the_prompt_and_sends_nothing() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert!(sim.answer_elsewhere(&request.id, vec![vec!["SQLite".into()]]));
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ask["id"]}})
    );
    let resolved = client.next().await;
    assert_eq!(
        resolved["params"],
        json!({"key": format!("default/{}", request.id), "state": "replied", "reason": "answeredElsewhere", "here": false,
               "message": "\"Database\" was answered elsewhere", "pending": 0})
    );
    // The editor answers the cancelled request as the spec says it must.
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), vec![]);
}

/// A client that never answers the requests ask-lsp cancels does not make
/// it keep them: after the grace time they are answered for the client
/// (tower-lsp-server would otherwise hold each one for good). One the
/// client does answer in time is left alone.
#[tokio::test]
async fn cancelled_requests_the_client_never_answers_are_released() {
    let sim = sim().await;
    let mut client =
        LspClient::with_extension_env(&sim, &[("ASK_LSP_CANCELLED_GRACE_MS", "200")]).await;
    let released = "released a cancelled request the client never answered";
    let answered = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert!(sim.answer_elsewhere(&answered.id, vec![vec!["SQLite".into()]]));
    client.next_method("$/cancelRequest").await;
    client.next_method("askQuestions/resolved").await;
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    client.expect_quiet(Duration::from_millis(500)).await;
    assert!(!client.logs().contains(released), "{}", client.logs());
    let ignored = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert!(sim.answer_elsewhere(&ignored.id, vec![vec!["SQLite".into()]]));
    client.next_method("$/cancelRequest").await;
    client.next_method("askQuestions/resolved").await;
    wait_for(|| {
        client
            .logs()
            .contains(&format!("{released} id={}", ask["id"]))
    })
    .await;
    // Nothing more reaches the client, nor the server.
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(sim.received().is_empty());
}

#[tokio::test]
async fn aborted_session_dismisses_and_the_stale_listing_is_not_shown_again() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.abort(&request.session_id);
    assert_eq!(client.next().await["method"], "$/cancelRequest");
    let resolved = client.next().await;
    assert_eq!(resolved["params"]["state"], "dismissed");
    assert_eq!(resolved["params"]["reason"], "sessionEnded");
    client.respond_error(&ask["id"], -32800, "cancelled").await;
    // Like the real server, the aborted question stays listed; a reconnect
    // resyncs from that list and must not bring it back.
    assert_eq!(sim.pending().len(), 1);
    sim.drop_streams();
    wait_for(|| sim.subscribers() > 0).await;
    let next = sim.ask(None, checks());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(next.id));
}

#[tokio::test]
async fn after_an_editor_restart_an_aborted_sessions_question_is_not_shown() {
    let sim = sim().await;
    let aborted = sim.ask(None, database());
    sim.abort(&aborted.session_id);
    let live = sim.ask_silently(None, checks());
    // Both stay listed, as on the real server; only the live one is shown.
    assert_eq!(sim.pending().len(), 2);
    let mut client = LspClient::with_extension(&sim).await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(live.id));
    client.expect_quiet(Duration::from_millis(300)).await;
    let listed = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.list"}),
        )
        .await;
    assert_eq!(listed["result"].as_array().unwrap().len(), 1, "{listed}");
}

#[tokio::test]
async fn reconnect_resyncs_without_losing_or_repeating_questions() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let shown = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(shown.id));
    // The server goes away; meanwhile a question is asked and another one is
    // answered elsewhere: both events are lost with the stream.
    sim.set_events_up(false);
    wait_for(|| sim.subscribers() == 0).await;
    let missed = sim.ask(None, checks());
    let answered_while_down = sim.ask(None, database());
    sim.forget(&answered_while_down.id);
    sim.set_events_up(true);
    wait_for(|| sim.subscribers() > 0).await;
    // The shown one is still the one on screen: no second `askQuestions/ask`.
    client.answer(&ask, json!([["SQLite"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(
        resolved["params"]["key"],
        json!(format!("default/{}", shown.id))
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(missed.id));
    client.answer(&ask, json!([["E2E"]])).await;
    client.next_method("askQuestions/resolved").await;
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        vec![
            reply(&shown.id, json!([["SQLite"]])),
            reply(&missed.id, json!([["E2E"]]))
        ]
    );
    let asks = client
        .seen
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .count();
    assert_eq!(asks, 2, "each question shown exactly once");
}

#[tokio::test]
async fn missing_password_is_a_clear_error_and_the_right_one_works() {
    let sim = Sim::start(SimOptions {
        password: Some("s3cret".into()),
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    let message = client.next_method("window/showMessage").await;
    assert_eq!(
        message["params"],
        json!({"type": 2, "message": format!(
            "ask-lsp: OpenCode at {}: 401 Unauthorized: check OPENCODE_SERVER_PASSWORD / OPENCODE_SERVER_USERNAME (or password in the configuration)",
            sim.url())})
    );
    let status = client.status().await;
    assert_eq!(status["servers"][0]["connected"], false);
    assert!(!format!("{:?}", client.seen).contains("s3cret"));

    let mut client =
        LspClient::with_extension_env(&sim, &[("OPENCODE_SERVER_PASSWORD", "s3cret")]).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    client.answer(&ask, json!([["Postgres"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
    let logs = client.logs();
    assert!(logs.contains("prompt resolved"), "{logs}");
    assert!(!logs.contains("s3cret"), "{logs}");
}

#[tokio::test]
async fn late_answer_to_a_vanished_question_reports_404_as_gone() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.forget(&request.id); // answered elsewhere, event missed
    client.answer(&ask, json!([["Postgres"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(
        resolved["params"],
        json!({"key": format!("default/{}", request.id), "state": "dismissed", "reason": "gone", "here": false,
               "message": "\"Database\" was already answered elsewhere or its session ended", "pending": 0})
    );
    assert_eq!(sim.received(), vec![]);
}

#[tokio::test]
async fn invalid_answers_are_refused_and_the_question_is_asked_again() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let mut strict = database();
    strict[0].custom = false;
    let request = sim.ask(None, strict);
    let ask = client.next_method("askQuestions/ask").await;
    client.answer(&ask, json!([["MySQL"]])).await;
    let error = client.next_method("window/showMessage").await;
    assert_eq!(
        error["params"],
        json!({"type": 1, "message": "ask-lsp: question 0: \"MySQL\" is not one of the options and this question does not allow a typed answer"})
    );
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["requestID"], json!(request.id));
    client.answer(&again, json!([["SQLite"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["SQLite"]]))]
    );
}

#[tokio::test]
async fn deferred_requests_wait_while_the_next_one_is_shown_in_order() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let first = sim.ask(Some("ses_a"), database());
    let second = sim.ask(Some("ses_b"), checks());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(first.id));
    client
        .respond(&ask["id"], json!({"outcome": "deferred"}))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(second.id));
    assert_eq!(ask["params"]["pending"], 2);
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    client.next_method("askQuestions/resolved").await;
    // The deferred one is still answerable, by command.
    let listed = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.list"}),
        )
        .await;
    assert_eq!(listed["result"][0]["requestID"], json!(first.id));
    let answered = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": format!("default/{}", first.id), "answers": [["Postgres"]]}]}),
        )
        .await;
    assert_eq!(answered["result"], json!({"state": "sent"}));
    assert_eq!(
        sim.received(),
        vec![
            Received::Reject { id: second.id },
            reply(&first.id, json!([["Postgres"]]))
        ]
    );
}

#[tokio::test]
async fn commands_answer_one_question_at_a_time_and_report_errors() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let mut both = database();
    both.extend(checks());
    let request = sim.ask(None, both);
    let key = format!("default/{}", request.id);
    client.next_method("askQuestions/ask").await;
    let command = |arguments: Value| json!({"command": "askLsp.answer", "arguments": arguments});
    let partial = client
        .request(
            "workspace/executeCommand",
            command(json!([{"key": key, "question": 1, "answer": ["E2E", "Lint"]}])),
        )
        .await;
    assert_eq!(
        partial["result"],
        json!({"state": "partial", "remaining": [0]})
    );
    let unknown = client
        .request(
            "workspace/executeCommand",
            command(json!([{"key": "default/que_nope", "answers": [["x"]]}])),
        )
        .await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "no pending prompt default/que_nope"})
    );
    let shape = client
        .request(
            "workspace/executeCommand",
            command(json!([{"key": key, "question": 7, "answer": ["x"]}])),
        )
        .await;
    assert_eq!(
        shape["error"]["message"],
        json!(format!("prompt {key} has no question 7"))
    );
    let sent = client
        .request(
            "workspace/executeCommand",
            command(json!([{"key": key, "question": 0, "answer": ["SQLite"]}])),
        )
        .await;
    assert_eq!(sent["result"], json!({"state": "sent"}));
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["SQLite"], ["E2E", "Lint"]]))]
    );
    // The open prompt for it is withdrawn.
    assert_eq!(client.next().await["method"], "$/cancelRequest");
}

/// A key the client made up is echoed in the error shown, never raw:
/// escapes, bidi and NUL visible, 100,000 characters cut with a count.
#[tokio::test]
async fn an_unknown_key_is_echoed_visibly_and_bounded() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let hostile = format!(
        "default/que_\u{1b}]0;pwn\u{7}\u{202e}\u{0}{}",
        "k".repeat(100_000)
    );
    for (command, arguments) in [
        (
            "askLsp.answer",
            json!([{"key": hostile, "answers": [["x"]]}]),
        ),
        ("askLsp.reject", json!([hostile])),
    ] {
        let error = client
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .await;
        let message = error["error"]["message"].as_str().unwrap();
        let shown = "no pending prompt default/que_␛]0;pwn␇⟨U+202E⟩␀kkk";
        assert!(message.starts_with(shown), "{message}");
        assert!(
            message.ends_with(" more characters)") && message.len() < 200,
            "{message}"
        );
        assert!(!message.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{0}']));
    }
    assert!(sim.received().is_empty());
}

#[tokio::test]
async fn closing_stdin_ends_the_process_with_questions_pending() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    sim.ask(None, database());
    client.next_method("askQuestions/ask").await;
    let mut child = client.close_stdin();
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("exits when stdin closes")
        .unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(sim.received(), vec![]);
}

#[tokio::test]
async fn a_missed_asked_event_is_recovered_from_the_running_tool_part() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    // Only the tool part arrives (as from a server that does not forward
    // question.asked): ask-lsp finds the request by its callID.
    let request = sim.ask_silently(None, database());
    let call_id = request.tool.as_ref().unwrap().call_id.clone();
    sim.emit(
        "message.part.updated",
        json!({"sessionID": request.session_id, "part": {"id": "prt_x", "type": "tool", "tool": "question",
               "callID": call_id, "state": {"status": "running", "input": {"questions": request.questions}}}}),
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(request.id));
    client.answer(&ask, json!([["Postgres"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
}
