//! Notifications out of the editor (`notify`), as they reach a person: a
//! fake `notify-send` on PATH records its arguments, and `watch`'s stdout
//! carries the OSC 9 sequences.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// A `notify-send` that appends each call's arguments to a file (unit
/// separator between arguments, record separator after each call).
struct FakeNotifySend {
    dir: tempfile::TempDir,
}

impl FakeNotifySend {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("notify-send");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s\\037' \"$@\" >> '{log}'\nprintf '\\036' >> '{log}'\n",
                log = dir.path().join("calls").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeNotifySend { dir }
    }

    /// PATH with the fake first.
    fn path(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn calls(&self) -> Vec<Vec<String>> {
        let log: PathBuf = self.dir.path().join("calls");
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.split_terminator('\u{1e}')
            .map(|call| call.split_terminator('\u{1f}').map(str::to_owned).collect())
            .collect()
    }
}

fn watch(sim: &Sim, path: &str, extra: &[&str]) -> tokio::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &sim.url()])
        .args(extra)
        .env("PATH", path)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn one_question(header: &str) -> Vec<ask_sim::QuestionInfo> {
    questions(json!([{"question": "Pick one?", "header": header,
        "options": [{"label": "Hidden label", "description": "Hidden description"}]}]))
}

#[tokio::test]
async fn watch_announces_an_unanswered_prompt_once_and_a_burst_as_one() {
    let fake = FakeNotifySend::new();
    let sim = sim().await;
    let first = sim.ask(None, database());
    let mut child = watch(
        &sim,
        &fake.path(),
        &[
            "--notify",
            "desktop",
            "--notify",
            "osc9",
            "--notify-after-ms",
            "300",
            "--notify-interval-ms",
            "3000",
        ],
    );
    let started = tokio::time::Instant::now();
    wait_for(|| !fake.calls().is_empty()).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        fake.calls(),
        vec![vec![
            "--app-name=ask-lsp",
            "--",
            "ask-lsp: question from the agent in project (default)",
            "Database",
        ]]
    );

    // Three at once, after the first: one notification, and not before the
    // interval since the first is over.
    for header in ["Alpha", "Beta", "Gamma"] {
        sim.ask(None, one_question(header));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.calls().len(), 1, "{:?}", fake.calls());
    wait_for(|| fake.calls().len() == 2).await;
    let from = "question from the agent in project (default)";
    assert_eq!(
        fake.calls()[1],
        vec![
            "--app-name=ask-lsp".to_owned(),
            "--".into(),
            "ask-lsp: 3 prompts waiting".into(),
            format!("{from}: Alpha\n{from}: Beta\n{from}: Gamma"),
        ]
    );

    // The person answers the first with typed text; nothing more is owed.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"my typed secret\n").await.unwrap();
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received(),
        vec![reply(&first.id, json!([["my typed secret"]]))]
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(stdin);
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("exits at end of input")
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    let sequences: Vec<&str> = out
        .split("\x1b]9;")
        .skip(1)
        .map(|s| s.split('\x07').next().unwrap())
        .collect();
    assert_eq!(
        sequences,
        vec![
            format!("ask-lsp: {from}: Database"),
            format!("ask-lsp: 3 prompts waiting: {from}: Alpha, {from}: Beta, {from}: Gamma"),
        ],
        "{out}"
    );
    let everything = format!("{:?}{sequences:?}", fake.calls());
    for never in [
        "my typed secret",
        "Postgres",
        "Hidden label",
        "Hidden description",
    ] {
        assert!(!everything.contains(never), "{never} in {everything}");
    }
    assert_eq!(fake.calls().len(), 2);
}

#[tokio::test]
async fn a_prompt_answered_in_time_is_not_announced() {
    let fake = FakeNotifySend::new();
    let sim = sim().await;
    sim.ask(None, database());
    let mut child = watch(
        &sim,
        &fake.path(),
        &["--notify", "desktop", "--notify-after-ms", "1500"],
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"1\n").await.unwrap();
    wait_for(|| !sim.received().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(fake.calls(), Vec::<Vec<String>>::new());
}

#[tokio::test]
async fn watch_says_once_when_notify_send_is_missing() {
    let empty = tempfile::tempdir().unwrap();
    let sim = sim().await;
    sim.ask(None, database());
    let path = empty.path().display().to_string();
    let mut child = watch(
        &sim,
        &path,
        &[
            "--notify",
            "desktop",
            "--notify-after-ms",
            "100",
            "--notify-interval-ms",
            "100",
        ],
    );
    let notice = "! desktop notifications (notify.desktop) do not work: notify-send is not on PATH (Debian/Ubuntu: libnotify-bin, Fedora: libnotify)";
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    let mut read_until = async |wanted: &str| {
        tokio::time::timeout(WAIT, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(wanted) {
                    return;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no {wanted:?}; saw:\n{seen}"));
        seen.clone()
    };
    read_until(notice).await;
    // A second notification fails too, silently.
    sim.ask(None, one_question("Later"));
    tokio::time::sleep(Duration::from_millis(600)).await;
    drop(child.stdin.take());
    let out = read_until("left unanswered").await;
    assert_eq!(out.matches(notice).count(), 1, "{out}");
}

#[tokio::test]
async fn the_language_server_notifies_on_the_desktop_and_refuses_terminal_sequences() {
    let fake = FakeNotifySend::new();
    let sim = sim().await;
    let mut client = LspClient::start(&[("PATH", &fake.path())]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": sim.url()}], "notify": {"desktop": true, "afterMs": 200}}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    wait_for(|| !fake.calls().is_empty()).await;
    assert_eq!(
        fake.calls(),
        vec![vec![
            "--app-name=ask-lsp",
            "--",
            "ask-lsp: question from the agent in project (default)",
            "Database",
        ]]
    );
    client.answer(&ask, json!([["Postgres"]])).await;
    wait_for(|| !sim.received().is_empty()).await;
    client.shutdown().await;

    let mut client = LspClient::start(&[("PATH", &fake.path())]).await;
    let response = client
        .initialize(
            plain_caps(),
            json!({"servers": [{"url": sim.url()}], "notify": {"terminal": "osc9"}}),
        )
        .await;
    assert_eq!(
        response["error"]["message"],
        "invalid ask-lsp configuration: notify.terminal works only in `ask-lsp watch` (a language server's stdout is the LSP channel); use notify.desktop"
    );
}

#[tokio::test]
async fn notifications_switched_on_by_a_configuration_update_cover_prompts_already_waiting() {
    let fake = FakeNotifySend::new();
    let sim = sim().await;
    let mut client = LspClient::with_extension_env(&sim, &[("PATH", &fake.path())]).await;
    sim.ask(None, database());
    client.next_method("askQuestions/ask").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.calls(), Vec::<Vec<String>>::new());
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"notify": {"desktop": true, "afterMs": 200}}}}),
        )
        .await;
    wait_for(|| !fake.calls().is_empty()).await;
    assert_eq!(fake.calls()[0][3], "Database");
    // A bad update is refused and the notifications stay as they were.
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"notify": {"terminal": "osc9"}}}}),
        )
        .await;
    let message = client.next_method("window/showMessage").await;
    assert_eq!(
        message["params"]["message"],
        "ask-lsp: invalid ask-lsp configuration: notify.terminal works only in `ask-lsp watch` (a language server's stdout is the LSP channel); use notify.desktop; keeping the previous configuration"
    );
}

#[tokio::test]
async fn a_permission_is_announced_by_its_action_never_its_command() {
    let fake = FakeNotifySend::new();
    let sim = sim().await;
    let token = "Bearer sk-live-0123456789abcdef";
    let command = format!("curl -H 'Authorization: {token}' https://example.com");
    sim.ask_permission(ask_sim::PermissionAsk::bash(&command))
        .expect("asked");
    let mut child = watch(
        &sim,
        &fake.path(),
        &[
            "--notify",
            "desktop",
            "--notify",
            "osc9",
            "--notify-after-ms",
            "200",
        ],
    );
    wait_for(|| !fake.calls().is_empty()).await;
    assert_eq!(
        fake.calls(),
        vec![vec![
            "--app-name=ask-lsp",
            "--",
            "ask-lsp: permission from the agent in project (default)",
            "bash",
        ]]
    );
    drop(child.stdin.take());
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("exits at end of input")
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let sequence = out.split("\x1b]9;").nth(1).expect("an OSC 9 sequence");
    assert!(
        sequence.starts_with("ask-lsp: permission from the agent in project (default): bash\x07"),
        "{sequence:?}"
    );
    // The person saw the command in the prompt itself; the notification never.
    assert!(out.contains(token), "the prompt shows the whole command");
    assert!(!sequence.contains("sk-live"), "{sequence:?}");
}

#[tokio::test]
async fn watch_rings_the_bell_for_an_unanswered_prompt_when_asked_to() {
    let sim = sim().await;
    sim.ask(None, database());
    let mut child = watch(
        &sim,
        &std::env::var("PATH").unwrap_or_default(),
        &["--notify", "bell", "--notify-after-ms", "300"],
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    let started = tokio::time::Instant::now();
    // The prompt's text and its options come first; the bell after 300 ms.
    let rung = tokio::time::timeout(WAIT, async {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 4096];
        loop {
            let n = stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "watch ended");
            out.extend_from_slice(&buf[..n]);
            if out.contains(&0x07) {
                return;
            }
        }
    })
    .await;
    assert!(
        rung.is_ok(),
        "no bell in {:?}",
        String::from_utf8_lossy(&out)
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    // A bare BEL: no OSC sequence around it.
    assert!(!out.contains(&0x1b), "{:?}", String::from_utf8_lossy(&out));
    stdin.write_all(b"1\n").await.unwrap();
    wait_for(|| !sim.received().is_empty()).await;
}
