//! Terminal mode as a person runs it: the real binary with typed input.

mod common;

use std::process::Stdio;

use common::*;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

async fn run_with_input(args: &[&str], input: &str) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .await
        .unwrap();
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("finishes")
        .unwrap();
    (output.status, String::from_utf8(output.stdout).unwrap())
}

#[tokio::test]
async fn watch_answers_and_rejects_against_a_server() {
    let sim = sim().await;
    let first = sim.ask(None, checks());
    let second = sim.ask(None, database());
    let (status, out) = run_with_input(&["watch", "--url", &sim.url()], "2, 3\n\n").await;
    assert!(status.success(), "{out}");
    assert!(out.contains("[Checks] Which checks?\n  1. Unit\n  2. Lint\n  3. E2E\nNumbers separated by commas, or type your own answer (=text sends text that looks like a number); an empty line rejects."), "{out}");
    assert!(out.contains("✓ Rejected \"Database\""), "{out}");
    wait_for(|| sim.received().len() == 2).await;
    assert_eq!(
        sim.received(),
        vec![
            reply(&first.id, serde_json::json!([["Lint", "E2E"]])),
            Received::Reject { id: second.id }
        ]
    );
}

#[tokio::test]
async fn watch_applies_a_policy_from_flags_and_says_what_it_did() {
    let sim = sim().await;
    let request = sim.ask(None, database());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &sim.url(), "--policy", "accept-first"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_for(|| !sim.received().is_empty()).await;
    drop(child.stdin.take()); // Ctrl-D
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("exits at end of input")
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, serde_json::json!([["Postgres"]]))]
    );
    assert!(
        out.contains("⚙ accept-first: \"Which database?\" → \"Postgres\""),
        "{out}"
    );
}

/// A link in `watch`: the host a browser opens, its warning and the URL come
/// before the agent's message, whose lines are quoted (a `Domain:` line of
/// the agent's cannot pass for ask-lsp's).
#[tokio::test]
async fn watch_shows_a_links_real_host_before_the_agents_message() {
    let sim = ask_sim::opencode2::Sim2::start(Default::default())
        .await
        .unwrap();
    sim.create_form(
        serde_json::json!({"title": "Sign in", "mode": "url",
               "url": "https://evil.example\\@accounts.google.com/login",
               "metadata": {"kind": "mcp-elicitation", "message": "Sign in\n  Domain: accounts.google.com"}}),
        None,
        true,
    );
    let (status, out) = run_with_input(&["watch", "--url", &sim.url()], "\n").await;
    assert!(status.success(), "{out}");
    assert!(
        out.contains(
            "[Link] ask-lsp does not open links: open it yourself only if you trust evil.example.\n  Domain: evil.example\n  ⚠ Check the host: the link shows \"evil.example\\@accounts.google.com\" where its host goes, but a browser opens evil.example.\n  URL: https://evil.example\\@accounts.google.com/login\n  The agent's message:\n  │ Sign in\n  │\n  │ Sign in\n  │   Domain: accounts.google.com\ny: accept"
        ),
        "{out}"
    );
    wait_for(|| !sim.received().is_empty()).await;
}
