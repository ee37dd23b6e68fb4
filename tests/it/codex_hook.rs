//! The real Codex CLI (`@openai/codex`, pinned in tests/codex/install.sh),
//! offline against tests/codex/mock-openai, with `ask-lsp hook codex` as its
//! `PermissionRequest` hook and an ask-lsp LSP server as the editor.
//!
//! Codex asks for approval only in its terminal UI (`codex exec` runs with
//! the approval policy `never`), so the approvals run in tmux; the headless
//! case shows that `codex exec` never asks.
//!
//! Needs `ASK_LSP_CODEX_BIN` (and tmux); without them each test says SKIP
//! and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::agents;
use crate::common::tmux::Tmux;
use crate::common::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

fn codex_bin() -> Option<PathBuf> {
    agents::required("ASK_LSP_CODEX_BIN", "tests/codex/install.sh")
}

/// Codex's dialog for a command it wants to run outside its sandbox.
const CODEX_DIALOG: &str = "Would you like to run the following command?";

/// A mock Responses API, a project, a `CODEX_HOME` and a runtime dir of its
/// own; the hook configured in `CODEX_HOME/config.toml` as docs/hook.md says.
struct Setup {
    codex: PathBuf,
    _api: Child,
    api_port: u16,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new(codex: PathBuf) -> Setup {
        let (api, api_port) = agents::mock_api("tests/codex/mock-openai").await;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home", "runtime"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let config = agents::codex_mock_provider(api_port)
            + &format!(
                r#"
[[hooks.PermissionRequest]]
matcher = "*"
[[hooks.PermissionRequest.hooks]]
type = "command"
command = "{hook} hook codex"
timeout = 60
"#,
                hook = env!("CARGO_BIN_EXE_ask-lsp"),
            );
        std::fs::write(dir.path().join("home/config.toml"), config).unwrap();
        Setup {
            codex,
            _api: api,
            api_port,
            dir,
        }
    }

    fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("project")).unwrap()
    }

    fn runtime(&self) -> PathBuf {
        self.dir.path().join("runtime")
    }

    /// The editor: an ask-lsp LSP server whose workspace is the project.
    async fn editor(&self, sim: &ask_sim::Sim) -> LspClient {
        agents::hook_editor(&self.runtime(), &self.project(), sim).await
    }

    /// Codex's terminal UI in tmux, asking for approval when the model asks
    /// to leave the read-only sandbox; `env` is added to its environment
    /// (and so to the hook's). The hook is not in Codex's trust store, hence
    /// `--dangerously-bypass-hook-trust` (a person trusts it once in `/hooks`).
    async fn interactive(&self, env: &str) -> Option<Tmux> {
        let command = format!(
            "env CODEX_HOME={home} HOME={home} XDG_RUNTIME_DIR={runtime} {env} {codex} \
             -a on-request -s read-only --dangerously-bypass-hook-trust",
            home = self.dir.path().join("home").display(),
            runtime = self.runtime().display(),
            codex = self.codex.display(),
        );
        let tmux = Tmux::start(&command, &self.project(), Duration::from_secs(40))?;
        tmux.wait_for("Ask Codex to do anything").await;
        Some(tmux)
    }

    /// What Codex sent back to the model for each tool call, in order.
    async fn received(&self) -> Vec<Value> {
        agents::mock_received(self.api_port).await
    }

    /// The model's last tool result, once there is one past `seen`.
    async fn told_after(&self, seen: usize) -> String {
        agents::told_after(self.api_port, seen).await["output"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The pid of the `ask-lsp hook codex` Codex started for this runtime dir.
fn running_hook(runtime: &Path) -> Option<i32> {
    agents::running_hook(runtime, "codex")
}

/// Presses `key` in Codex's dialog until `done` (given the screen), and
/// again while the dialog still shows 5 s after (run 9 of 2026-11-29: an
/// Escape pressed as the dialog showed left it on screen 40 s).
async fn answer_dialog(tmux: &Tmux, key: &str, done: impl Fn(&str) -> bool) {
    tmux.keys(&[key]);
    tmux.press_again_until(
        key,
        Duration::from_secs(5),
        |screen| screen.contains(CODEX_DIALOG),
        done,
    )
    .await;
}

/// An editor on the project, then Codex's terminal UI with the hook.
async fn editor_and_codex() -> Option<(Setup, ask_sim::Sim, LspClient, Tmux)> {
    let setup = Setup::new(codex_bin()?).await;
    let sim = sim().await;
    let client = setup.editor(&sim).await;
    let tmux = setup.interactive("").await?;
    Some((setup, sim, client, tmux))
}

#[tokio::test]
async fn codex_runs_what_the_editor_allows_and_hears_why_it_rejects() {
    let Some((setup, _sim, mut client, tmux)) = editor_and_codex().await else {
        return;
    };

    let allowed = setup.project().join("allowed");
    let seen = setup.received().await.len();
    tmux.type_line(&format!("RUN: touch {}", allowed.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["server"], "hook", "{params}");
    assert_eq!(
        params["permission"]["command"],
        format!("touch {}", allowed.display())
    );
    assert_eq!(params["source"]["directory"], json!(setup.project()));
    let choices: Vec<&Value> = params["permission"]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(
        choices,
        [&json!("allow-once"), &json!("reject")],
        "{params}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert!(told.contains("Process exited with code 0"), "{told}");
    assert!(allowed.exists(), "the allowed command ran");
    // Codex did not ask again in its own dialog.
    assert!(!tmux.screen().contains(CODEX_DIALOG), "{}", tmux.screen());

    let rejected = setup.project().join("rejected");
    let seen = setup.received().await.len();
    tmux.type_line(&format!("RUN: touch {}", rejected.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert!(
        told.contains("Use make instead"),
        "the model reads it: {told}"
    );
    tmux.wait_for("Blocked by hook").await;
    assert!(!rejected.exists(), "the rejected command did not run");
    assert!(client.shutdown().await.success());
}

/// No ask-lsp, or an editor not answering within the hook's bound: Codex
/// asks in its own dialog, as with no hook, and nothing runs until the
/// person answers there.
#[tokio::test]
async fn without_an_answer_from_the_editor_codex_asks_in_its_own_dialog() {
    let Some(codex) = codex_bin() else { return };
    let setup = Setup::new(codex).await;
    let Some(tmux) = setup.interactive("ASK_LSP_HOOK_TIMEOUT_MS=1500").await else {
        return;
    };
    let project = setup.project();

    // No ask-lsp running.
    let own = project.join("no-ask-lsp");
    tmux.type_line(&format!("RUN: touch {}", own.display()))
        .await;
    tmux.wait_for(CODEX_DIALOG).await;
    assert!(!own.exists());
    answer_dialog(&tmux, "Escape", |screen| {
        screen.contains("Conversation interrupted")
    })
    .await;

    // An editor that does not answer in time: the prompt leaves it. (The
    // same conversation: the mock model follows the latest `RUN:`.)
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let unanswered = project.join("unanswered");
    tmux.type_line(&format!("RUN: touch {}", unanswered.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    tmux.wait_for(CODEX_DIALOG).await;
    assert!(!unanswered.exists());
    // The person answers in Codex's dialog: Codex's own prompt works.
    answer_dialog(&tmux, "y", |_| unanswered.exists()).await;
    assert!(client.shutdown().await.success());
}

/// The hook killed while it waits (with its default bound, so only the
/// kill ends it): the prompt leaves the editor and Codex asks in its own
/// dialog; nothing runs.
#[tokio::test]
async fn a_hook_killed_while_it_waits_leaves_the_editor_and_codex_asks() {
    let Some((setup, _sim, mut client, tmux)) = editor_and_codex().await else {
        return;
    };
    let killed = setup.project().join("killed");
    tmux.type_line(&format!("RUN: touch {}", killed.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    let pid = running_hook(&setup.runtime()).expect("the hook runs");
    // SAFETY: kill on the pid of the hook this test's Codex started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    tmux.wait_for(CODEX_DIALOG).await;
    assert!(!killed.exists());
    assert!(client.shutdown().await.success());
}

/// Headless `codex exec` runs with the approval policy `never`: it never
/// asks, so the hook never runs; a command outside the sandbox is refused
/// and the model is told so (Codex's documented non-interactive behaviour).
#[tokio::test]
async fn headless_codex_exec_never_asks_and_refuses_by_itself() {
    let Some(codex) = codex_bin() else { return };
    let setup = Setup::new(codex).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let target = setup.project().join("headless");
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        Command::new(&setup.codex)
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
                "-s",
                "read-only",
            ])
            .arg(format!("RUN: touch {}", target.display()))
            .current_dir(setup.project())
            .env("CODEX_HOME", setup.dir.path().join("home"))
            .env("HOME", setup.dir.path().join("home"))
            .env("XDG_RUNTIME_DIR", setup.runtime())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("codex exec finishes")
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("approval: never"),
        "{out:?}"
    );
    let told = setup.told_after(0).await;
    assert!(
        told.contains("cannot ask for escalated permissions if the approval policy is Never"),
        "{told}"
    );
    assert!(!target.exists());
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}

/// An ask-lsp stand-in (any process of the person's can bind a socket named
/// like an instance's) gets no request from `ask-lsp hook codex`: only this
/// ask-lsp executable is asked (docs/hook.md, "Trust"). What the hook makes
/// of each answer line is unit-tested in src/hook.rs.
#[tokio::test]
async fn a_stand_in_listener_gets_no_request_from_codex() {
    let runtime = tempfile::tempdir().unwrap();
    let sockets = runtime.path().join("ask-lsp");
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(
        &sockets,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    // Named by this (live) process, as an instance's socket is.
    let listener = tokio::net::UnixListener::bind(
        sockets.join(format!("ask-lsp-{}.sock", std::process::id())),
    )
    .unwrap();
    let mut hook = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["hook", "codex", "--timeout-ms", "5000"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env_remove("ASK_LSP_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let input = json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/p",
                       "hook_event_name": "PermissionRequest", "model": "m",
                       "permission_mode": "default", "tool_name": "Bash",
                       "tool_input": {"command": "rm -rf /p", "description": "Clean"}});
    let mut stdin = hook.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(30), hook.wait_with_output())
        .await
        .expect("the hook exits")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(accepted.is_err(), "the stand-in was connected to");
}
