//! OpenCode 2's form routes as upstream has moved them (anomalyco/opencode
//! `packages/protocol/src/groups/session.ts` @ 01fd0c8548b2adb12ad40fd3573b2cfa80f130c4
//! for the current generation; `groups/form.ts` @ 8c6ff62466bac8cfbe5b85dfae50804f8f43fbdf
//! and @ 23699db9682c24c6217d86ea1133bfb20b08d769 for the older ones),
//! against the simulated server's profiles (docs/sim.md). Assertions are on
//! what the server received and on what the person is told.

use std::time::Duration;

use crate::common::*;
use ask_sim::opencode2::{Options, Profile, Received, Sim2};
use serde_json::{Value, json};

async fn sim2(profile: Profile, doc: bool) -> Sim2 {
    Sim2::start(Options {
        profile,
        doc,
        ..Options::default()
    })
    .await
    .expect("sim listens")
}

async fn client(sim: &Sim2) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    client
}

fn database() -> Vec<ask_sim::opencode2::QuestionPrompt> {
    serde_json::from_value(json!([{"question": "Which database?", "header": "Database",
        "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]))
    .unwrap()
}

fn id(form: &Value) -> String {
    form["id"].as_str().unwrap().to_owned()
}

fn session(form: &Value) -> String {
    form["sessionID"].as_str().unwrap().to_owned()
}

/// The current generation cancels with `DELETE …/form/{id}?message=`: the
/// person's message is what the model reads.
#[tokio::test]
async fn a_refusal_deletes_the_form_with_the_persons_message() {
    for doc in [true, false] {
        let sim = sim2(Profile::Current, doc).await;
        let mut client = client(&sim).await;
        let with_message = sim.ask_questions(None, &database());
        let ask = client.next_method("askQuestions/ask").await;
        client
            .respond(
                &ask["id"],
                json!({"outcome": "rejected", "message": "Use the existing schema & keep it"}),
            )
            .await;
        let resolved = client.next_method("askQuestions/resolved").await;
        assert_eq!(resolved["params"]["reason"], "rejectedHere", "{resolved}");
        let without = sim.ask_questions(None, &database());
        let ask = client.next_method("askQuestions/ask").await;
        client
            .respond(&ask["id"], json!({"outcome": "rejected"}))
            .await;
        client.next_method("askQuestions/resolved").await;
        assert_eq!(
            sim.received(),
            vec![
                Received::FormDelete {
                    id: id(&with_message),
                    session: session(&with_message),
                    message: Some("Use the existing schema & keep it".into()),
                },
                Received::FormDelete {
                    id: id(&without),
                    session: session(&without),
                    message: None,
                },
            ],
            "doc: {doc}"
        );
    }
}

/// The generation of 8c6ff624 cancels with `POST …/cancel`; the message
/// goes as `{message}`, which that route does not declare (an older server
/// ignores it), routes read from `/doc` or found by its listing.
#[tokio::test]
async fn on_the_8c6ff624_routes_a_refusal_posts_the_cancel_with_the_message() {
    for doc in [true, false] {
        let sim = sim2(Profile::Requests, doc).await;
        let mut client = client(&sim).await;
        let form = sim.ask_questions(None, &database());
        let ask = client.next_method("askQuestions/ask").await;
        client
            .respond(
                &ask["id"],
                json!({"outcome": "rejected", "message": "Use the existing schema instead"}),
            )
            .await;
        client.next_method("askQuestions/resolved").await;
        assert_eq!(
            sim.received(),
            vec![Received::FormCancel {
                id: id(&form),
                session: session(&form),
                message: Some("Use the existing schema instead".into()),
            }],
            "doc: {doc}"
        );
    }
}

/// A reply the server failed (503) is checked against the form's state
/// (`GET …/form/{id}`, `Form.Detail`): still pending, so it is not reported
/// sent; the person is told and asked again, and the retry is sent once.
#[tokio::test]
async fn a_reply_the_server_failed_is_not_reported_sent() {
    let sim = sim2(Profile::Current, true).await;
    let mut client = client(&sim).await;
    let form = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.fail_replies(1);
    client.answer(&ask, json!([["SQLite"]])).await;
    let shown = client.next_method("window/showMessage").await;
    let said = shown["params"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("server error 503"), "{shown}");
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["requestID"], json!(id(&form)));
    client.answer(&again, json!([["SQLite"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved}");
    assert_eq!(
        sim.received(),
        vec![Received::FormReply {
            id: id(&form),
            session: session(&form),
            answer: json!({"q0": "SQLite"}),
        }]
    );
}

/// Forms asked while ask-lsp was away, in a session it never saw, are found
/// by the location listing `GET /api/form` (from `/doc`, or tried first).
#[tokio::test]
async fn forms_waiting_at_start_are_listed_at_api_form() {
    for doc in [true, false] {
        let sim = sim2(Profile::Current, doc).await;
        let waiting = sim.create_form(
            json!({"title": "Port?", "fields": [{"key": "port", "type": "integer"}]}),
            None,
            false,
        );
        let mut client = client(&sim).await;
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(
            ask["params"]["requestID"],
            json!(id(&waiting)),
            "doc: {doc}"
        );
        client
            .respond(
                &ask["id"],
                json!({"outcome": "answered", "values": {"port": 8080}}),
            )
            .await;
        client.next_method("askQuestions/resolved").await;
        assert_eq!(
            sim.received(),
            vec![Received::FormReply {
                id: id(&waiting),
                session: session(&waiting),
                answer: json!({"port": 8080}),
            }]
        );
        assert_eq!(sim.connections(), 1, "doc: {doc}");
    }
}

/// The oldest generation has no location listing: said once, in words; the
/// connection stays (one stream opened, no reconnect loop); live forms are
/// shown and refused on that generation's route with the message.
#[tokio::test]
async fn a_server_without_a_form_listing_says_so_once_and_stays_connected() {
    for doc in [true, false] {
        let sim = sim2(Profile::Unlisted, doc).await;
        let mut client = client(&sim).await;
        let said = client.next_method("window/showMessage").await;
        let message = said["params"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("this OpenCode has no form listing route; live forms only"),
            "{said}"
        );
        let mut status = client.status().await;
        while status["servers"][0]["connected"] != true {
            tokio::time::sleep(Duration::from_millis(20)).await;
            status = client.status().await;
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(sim.connections(), 1, "doc: {doc}");

        // Said once: a form asked and refused brings no second notice.
        let form = sim.create_form(
            json!({"title": "Deploy?", "mode": "form",
                   "fields": [{"key": "ok", "type": "boolean",
                               "when": {"key": "ok", "op": "neq", "value": "x"}}]}),
            None,
            true,
        );
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["requestID"], json!(id(&form)));
        client
            .respond(
                &ask["id"],
                json!({"outcome": "rejected", "message": "not now"}),
            )
            .await;
        client.next_method("askQuestions/resolved").await;
        assert_eq!(
            sim.received(),
            vec![Received::FormCancel {
                id: id(&form),
                session: session(&form),
                message: Some("not now".into()),
            }]
        );
        let notices = client
            .seen
            .iter()
            .filter(|m| {
                m["method"] == "window/showMessage"
                    && m["params"]["message"]
                        .as_str()
                        .is_some_and(|t| t.contains("no form listing route"))
            })
            .count();
        assert_eq!(notices, 1, "doc: {doc}");
    }
}

/// A multi-select question keeps upstream's `custom: true` (a typed answer
/// is allowed besides the options) and is answered with it.
#[tokio::test]
async fn a_multi_select_question_keeps_its_typed_answer() {
    let sim = sim2(Profile::Current, true).await;
    let mut client = client(&sim).await;
    let questions = serde_json::from_value::<Vec<ask_sim::opencode2::QuestionPrompt>>(json!([
        {"question": "Which checks?", "header": "Checks",
         "options": [{"label": "Lint"}, {"label": "Unit"}], "multiple": true}
    ]))
    .unwrap();
    let form = sim.ask_questions(None, &questions);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["questions"][0]["multiple"], true, "{ask}");
    assert_eq!(ask["params"]["questions"][0]["custom"], true, "{ask}");
    client.answer(&ask, json!([["Lint", "Fuzz"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![Received::FormReply {
            id: id(&form),
            session: session(&form),
            answer: json!({"q0": ["Lint", "Fuzz"]}),
        }]
    );
}

/// Builds `/doc` at the cost of seconds on a fresh server: read once, and
/// the routes kept across reconnects (each of which lists the forms asked
/// meanwhile on the described route).
#[tokio::test]
async fn doc_is_read_once_across_reconnects() {
    let sim = sim2(Profile::Current, true).await;
    let mut client = client(&sim).await;
    wait_for(|| sim.doc_reads() > 0).await;
    for round in 0..3 {
        sim.set_events_up(false);
        wait_for(|| sim.subscribers() == 0).await;
        let waiting = sim.create_form(
            json!({"title": "Port?", "fields": [{"key": "port", "type": "integer"}]}),
            None,
            false,
        );
        sim.set_events_up(true);
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(
            ask["params"]["requestID"],
            json!(id(&waiting)),
            "round {round}"
        );
        client
            .respond(
                &ask["id"],
                json!({"outcome": "answered", "values": {"port": round}}),
            )
            .await;
        client.next_method("askQuestions/resolved").await;
    }
    assert_eq!(sim.received().len(), 3);
    assert_eq!(sim.connections(), 4);
    assert_eq!(sim.doc_reads(), 1);
}

/// A server upgraded in place (same port, newer routes): the listing the
/// kept description names answers 404, so `/doc` is read again, once, and
/// the new generation's routes list and cancel.
#[tokio::test]
async fn a_described_route_gone_after_an_upgrade_has_doc_read_again() {
    let sim = sim2(Profile::Requests, true).await;
    let mut client = client(&sim).await;
    wait_for(|| sim.doc_reads() > 0).await;
    sim.stop();
    wait_for(|| sim.subscribers() == 0).await;
    let upgraded = Sim2::start(Options {
        port: sim.addr.port(),
        profile: Profile::Current,
        ..Options::default()
    })
    .await
    .expect("the port is free again");
    let waiting = upgraded.create_form(
        json!({"title": "Port?", "fields": [{"key": "port", "type": "integer"}]}),
        None,
        false,
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(id(&waiting)));
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "not now"}),
        )
        .await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        upgraded.received(),
        vec![Received::FormDelete {
            id: id(&waiting),
            session: session(&waiting),
            message: Some("not now".into()),
        }]
    );
    assert_eq!(upgraded.doc_reads(), 1);
    assert_eq!(upgraded.connections(), 1);
}

/// A server without the state route (between generations, no `/doc`): the
/// reply fails (503), the check of the form's state meets the JSON 404 of a
/// missing route, which says nothing of the form. The reply is not claimed
/// sent: the person is told and asked again (docs/opencode2.md: a missing
/// route counts as no answer).
#[tokio::test]
async fn a_missing_state_route_is_no_answer_and_the_reply_is_not_claimed_sent() {
    let sim = Sim2::start(Options {
        profile: Profile::Requests,
        doc: false,
        missing_routes: vec!["/api/session/{session}/form/{id}/state"],
        ..Options::default()
    })
    .await
    .expect("sim listens");
    let mut client = client(&sim).await;
    let form = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.fail_replies(1);
    client.answer(&ask, json!([["SQLite"]])).await;
    let shown = client.next_method("window/showMessage").await;
    let said = shown["params"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("server error 503"), "{shown}");
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["requestID"], json!(id(&form)));
    assert_eq!(sim.received(), vec![], "the server took nothing");
    assert_eq!(sim.pending_forms(), vec![id(&form)]);
}
