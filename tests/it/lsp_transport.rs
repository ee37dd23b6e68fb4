//! The LSP transport under a broken client: the real binary driven over raw
//! stdin/stdout bytes. Malformed messages get their JSON-RPC error and ask-lsp
//! keeps serving; exit codes follow the spec and say why; start-up works
//! whatever the order; no log level writes secrets; the command line.

use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// A frame whose Content-Length is `delta` bytes off.
fn frame_off(body: &str, delta: isize) -> Vec<u8> {
    let length = body.len() as isize + delta;
    format!("Content-Length: {length}\r\n\r\n{body}").into_bytes()
}

const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":99,"method":"shutdown"}"#;

/// Sends `broken` to an initialized ask-lsp, then checks it answered with
/// `expected` and still answers a valid request.
async fn answered_then_served(broken: Vec<u8>, expected: Value) {
    let sim = sim().await;
    // The log filter ask-lsp uses when ASK_LSP_LOG is not set.
    let mut client = LspClient::start(&[("ASK_LSP_LOG", "ask_lsp=info")]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    client.send_raw(&broken).await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["name"], "default", "{status}");
    let error = client.next().await;
    assert_eq!(error, expected);
    // One answer per broken message, nothing else.
    let more = client.drain(Duration::from_millis(300)).await;
    assert!(more.iter().all(|m| m.get("id").is_none()), "{more:#?}");
    // Visible on stderr at the default level.
    wait_for(|| client.logs().contains("answered a malformed LSP message")).await;
    assert_eq!(client.shutdown().await.code(), Some(0));
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[tokio::test]
async fn invalid_json_is_a_parse_error_and_serving_goes_on() {
    answered_then_served(
        frame(r#"{"jsonrpc":"2.0","id":3,"method""#),
        error(
            Value::Null,
            -32700,
            "Parse error: EOF while parsing an object at line 1 column 32",
        ),
    )
    .await;
}

#[tokio::test]
async fn a_batch_is_an_invalid_request_and_serving_goes_on() {
    answered_then_served(
        frame("[]"),
        error(
            Value::Null,
            -32600,
            "Invalid request: batches are not supported",
        ),
    )
    .await;
}

#[tokio::test]
async fn a_fractional_id_is_an_invalid_request_with_a_null_id() {
    answered_then_served(
        frame(r#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#),
        error(
            Value::Null,
            -32600,
            "Invalid request: \"id\" must be an integer, a string or null",
        ),
    )
    .await;
}

#[tokio::test]
async fn an_invalid_request_with_a_valid_id_echoes_it() {
    answered_then_served(
        frame(r#"{"jsonrpc":"1.0","id":42,"method":"shutdown"}"#),
        error(
            json!(42),
            -32600,
            "Invalid request: \"jsonrpc\" must be \"2.0\"",
        ),
    )
    .await;
}

#[tokio::test]
async fn a_content_length_too_short_is_answered_and_the_next_message_found() {
    answered_then_served(
        frame_off(SHUTDOWN, -3),
        error(
            Value::Null,
            -32700,
            "Parse error: EOF while parsing a string at line 1 column 42",
        ),
    )
    .await;
}

#[tokio::test]
async fn a_content_length_too_long_is_answered_and_the_next_message_found() {
    // The extra bytes are the start of the next message's header.
    answered_then_served(
        frame_off(SHUTDOWN, 4),
        error(
            Value::Null,
            -32700,
            "Parse error: trailing characters at line 1 column 46",
        ),
    )
    .await;
}

#[tokio::test]
async fn a_content_length_too_long_on_the_last_message_is_answered_without_more_input() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    // The client then waits for an answer before sending anything else.
    client.send_raw(&frame_off(SHUTDOWN, 3)).await;
    let error = client.next().await;
    assert_eq!(
        error,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!(
            "Parse error: Content-Length is {} but the message ended after {} bytes",
            SHUTDOWN.len() + 3, SHUTDOWN.len())}})
    );
    let status = client.status().await;
    assert_eq!(status["servers"][0]["name"], "default", "{status}");
    assert_eq!(client.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn an_over_large_content_length_is_refused_and_serving_goes_on() {
    let mut broken = b"Content-Length: 104857600\r\n\r\n".to_vec();
    broken.extend_from_slice(SHUTDOWN.as_bytes());
    answered_then_served(
        broken,
        error(
            Value::Null,
            -32600,
            "Invalid request: a message of 104857600 bytes is over the 64 MiB limit",
        ),
    )
    .await;
}

#[tokio::test]
async fn header_names_are_case_insensitive_and_content_type_is_tolerated() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let body = r#"{"jsonrpc":"2.0","id":"lower","method":"workspace/executeCommand","params":{"command":"askLsp.status"}}"#;
    let message = format!(
        "content-length: {}\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}",
        body.len()
    );
    client.send_raw(message.as_bytes()).await;
    let status = client.next().await;
    assert_eq!(status["id"], "lower", "{status}");
    assert_eq!(status["result"]["servers"][0]["name"], "default");
    assert_eq!(client.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn exit_without_shutdown_exits_1_and_says_why() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    client.notify("exit", Value::Null).await;
    let status = tokio::time::timeout(WAIT, client.child().wait())
        .await
        .expect("exits")
        .unwrap();
    assert_eq!(status.code(), Some(1));
    // stderr is read by another task, which may lag the exit.
    wait_for(|| client.logs().contains("`exit` without `shutdown` first")).await;
}

#[tokio::test]
async fn shutdown_and_exit_sent_together_shut_down_cleanly() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    // A client that does not wait for the shutdown response: `exit` must
    // not cancel it.
    let mut both = frame(SHUTDOWN);
    both.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    client.send_raw(&both).await;
    let response = client.next().await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 99, "result": null})
    );
    let status = tokio::time::timeout(WAIT, client.child().wait())
        .await
        .expect("exits")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn closing_stdin_without_shutdown_is_said_on_stderr() {
    let sim = sim().await;
    let client = LspClient::with_extension(&sim).await;
    let stderr = client.logs_handle();
    let mut child = client.close_stdin();
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("exits when stdin closes")
        .unwrap();
    // Status 0: the client chose to stop us (see tests/it/lsp_extension.rs).
    assert_eq!(status.code(), Some(0));
    wait_for(|| {
        stderr
            .lock()
            .unwrap()
            .contains("the client closed stdin without `shutdown`")
    })
    .await;
}

#[tokio::test]
async fn no_request_reaches_the_client_after_shutdown() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    let response = client.request("shutdown", Value::Null).await;
    assert_eq!(response["result"], Value::Null, "{response}");
    sim.ask(None, database());
    let arrived = client.drain(Duration::from_millis(500)).await;
    assert!(
        arrived.iter().all(|m| m.get("id").is_none()),
        "requests after shutdown: {arrived:#?}"
    );
    // The presenter did try, and was refused by the transport.
    wait_for(|| {
        client
            .logs()
            .contains("not sending a request to the client after shutdown")
    })
    .await;
    client.notify("exit", Value::Null).await;
    let status = tokio::time::timeout(WAIT, client.child().wait())
        .await
        .expect("exits")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn initialized_before_the_initialize_response_still_starts_the_backends() {
    let sim = sim().await;
    let mut client = LspClient::start(&[]).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": extension_caps(),
                   "initializationOptions": {"servers": [{"url": sim.url()}]}}});
    // Both in one write, as a client that does not wait would send them.
    let mut both = frame(&initialize.to_string());
    both.extend(frame(
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
    ));
    client.send_raw(&both).await;
    let response = client.next().await;
    assert_eq!(response["id"], 1);
    assert!(response["result"]["capabilities"].is_object(), "{response}");
    wait_for(|| sim.subscribers() > 0).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(request.id));
}

#[tokio::test]
async fn trace_logs_carry_no_password_and_no_answer() {
    let password = "hunter2-pass-\u{1F511}";
    let sim = Sim::start(SimOptions {
        password: Some(password.into()),
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let mut client = LspClient::start(&[("ASK_LSP_LOG", "trace")]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url(), "password": password}]}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    let typed = "typed-answer-4711";
    client.answer(&ask, json!([[typed]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(sim.received(), vec![reply(&request.id, json!([[typed]]))]);
    let stderr = client.logs_handle();
    assert_eq!(client.shutdown().await.code(), Some(0));
    // Let the stderr reader catch up with the exited process.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let logs = stderr.lock().unwrap().clone();
    assert!(logs.contains("TRACE"), "trace level is on: {logs}");
    assert!(!logs.contains("hunter2"), "password in the logs: {logs}");
    assert!(!logs.contains(typed), "typed answer in the logs: {logs}");
}

/// Runs `ask-lsp ARGS` with stdin closed; returns (status, stdout, stderr).
async fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("ask-lsp {args:?} did not finish"))
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn every_subcommand_answers_help() {
    for (args, usage) in [
        (&["--help"][..], "ask-lsp watch [--url URL]"),
        (&["lsp", "--help"], "Usage: ask-lsp [lsp] [--stdio]"),
        (&["watch", "--help"], "Usage: ask-lsp watch [--url URL]"),
    ] {
        let (code, stdout, stderr) = run(args).await;
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(
            stdout.starts_with(usage) || stdout.contains(usage),
            "{args:?}: {stdout}"
        );
    }
    let (code, stdout, _) = run(&["--version"]).await;
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        format!(
            "ask-lsp {} (askQuestions extension 2)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[tokio::test]
async fn unknown_flags_are_errors_everywhere() {
    for args in [
        &["--bogus"][..],
        &["lsp", "--bogus"],
        &["watch", "--bogus", "x"],
    ] {
        let (code, stdout, stderr) = run(args).await;
        assert_eq!(code, Some(2), "{args:?}: {stdout} {stderr}");
        assert!(
            stderr.starts_with("ask-lsp: unknown option \"--bogus\"")
                || stderr.starts_with("ask-lsp: unexpected argument \"--bogus\""),
            "{args:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "{args:?}: stdout is LSP's: {stdout}");
    }
}

#[tokio::test]
async fn started_by_hand_in_a_terminal_it_says_how_to_use_it() {
    // `script` gives ask-lsp a terminal on stdin; Ctrl-D then ends it.
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", env!("CARGO_BIN_EXE_ask-lsp"), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("script(1) from util-linux");
    let mut stdin = child.stdin.take().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stdin.write_all(b"\x04").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("ask-lsp stops on Ctrl-D")
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains("this is an LSP server speaking JSON-RPC on stdin/stdout"),
        "{shown}"
    );
    assert!(shown.contains("ask-lsp watch --url"), "{shown}");
}
