//! The demo as a person runs it: `ask-sim demo` with typed answers.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// Runs the demo with `input` typed and stdin kept open (a person at the
/// keyboard), until it finishes; returns what it printed.
async fn demo(input: &str) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-sim"))
        .arg("demo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut out = String::new();
    let status = tokio::time::timeout(Duration::from_secs(30), async {
        stdout.read_to_string(&mut out).await.unwrap();
        child.wait().await.unwrap()
    })
    .await
    .unwrap_or_else(|_| panic!("the demo did not finish: {out}"));
    drop(stdin);
    (status, out)
}

#[tokio::test]
async fn demo_runs_start_to_finish_on_typed_answers() {
    let (status, out) = demo("1\n3,1\nx\n2\nv1.2\n").await;
    assert!(status.success(), "{out}");
    assert!(
        out.contains("agent received answers [[\"Postgres\"]]"),
        "{out}"
    );
    assert!(
        out.contains("agent received answers [[\"End-to-end\", \"Unit tests\"]]"),
        "{out}"
    );
    // "x" is not an option of a question without typed answers: asked again.
    assert!(
        out.contains("  this question takes no typed answer: pick a number from 1 to 2"),
        "{out}"
    );
    assert!(
        out.contains("agent received answers [[\"Production\"], [\"v1.2\"]]"),
        "{out}"
    );
    assert!(
        out.contains("↷ \"Migration\" was answered elsewhere"),
        "{out}"
    );
    assert!(out.contains("Demo finished."), "{out}");
}

#[tokio::test]
async fn ctrl_d_at_a_prompt_leaves_with_a_message() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-sim"))
        .arg("demo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    drop(child.stdin.take()); // Ctrl-D before answering anything
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the demo leaves at end of input instead of hanging")
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{out}");
    // The demo's server stops with it: nothing stays pending anywhere.
    assert!(
        out.contains("ask-lsp: input closed; 1 prompt left unanswered\n"),
        "{out}"
    );
    assert!(!out.contains("pending on the server"), "{out}");
}

#[tokio::test]
async fn help_and_unknown_flags() {
    let run = |args: &'static [&'static str]| async move {
        let output = Command::new(env!("CARGO_BIN_EXE_ask-sim"))
            .args(args)
            .output()
            .await
            .unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
        )
    };
    for args in [&["--help"][..], &["serve", "--help"], &["demo", "-h"]] {
        let (code, out) = run(args).await;
        assert_eq!(code, Some(0), "{args:?}");
        assert!(
            out.contains(
                "ask-sim serve [--opencode2 [--forms current|8c6ff624|23699db9]] [--port N]"
            ),
            "{args:?}: {out}"
        );
    }
    assert_eq!(run(&["serve", "--bogus", "1"]).await.0, Some(2));
    assert_eq!(run(&["demo", "extra"]).await.0, Some(2));
}
