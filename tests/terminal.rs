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

/// Until the first `! ` line of a watch on a refused port; what stdout
/// and stderr held by then.
async fn watch_refused(env: &[(&str, &str)]) -> (String, String) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    let refused = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &refused])
        .env_remove("ASK_LSP_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut out = String::new();
    tokio::time::timeout(WAIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push_str(&line);
            out.push('\n');
            if line.starts_with("! ") {
                break;
            }
        }
    })
    .await
    .expect("a ! line");
    drop(child.stdin.take());
    tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    (out, err)
}

#[tokio::test]
async fn watch_writes_no_log_lines_unless_asked() {
    let (out, err) = watch_refused(&[]).await;
    assert!(out.contains("connection refused"), "{out}");
    assert_eq!(err, "", "no log line beside the `!` line");
    let (_, err) = watch_refused(&[("ASK_LSP_LOG", "warn")]).await;
    assert!(err.contains("WARN"), "{err}");
}
