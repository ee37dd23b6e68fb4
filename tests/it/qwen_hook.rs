//! The real Qwen Code (`@qwen-code/qwen-code`, pinned in
//! tests/agents/install.sh), offline against tests/agents/mock-anthropic
//! (`ANTHROPIC_BASE_URL`), with `ask-lsp hook qwen` as its
//! `PermissionRequest` hook (configured in `~/.qwen/settings.json` as
//! docs/hook.md says) and an ask-lsp LSP server as the editor.
//!
//! Qwen Code runs the hook only where it would ask: its terminal UI (in
//! tmux here); headless `qwen -p` refuses before any hook runs (the last
//! test shows it).
//!
//! Needs `ASK_LSP_QWEN_BIN` (and tmux); without them each test says SKIP and
//! passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::agents;
use crate::common::tmux::Tmux;
use crate::common::*;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

fn qwen_bin() -> Option<PathBuf> {
    agents::required("ASK_LSP_QWEN_BIN", "tests/agents/install.sh")
}

/// Qwen Code's own dialog for a shell command.
const QWEN_DIALOG: &str = "Allow execution of";
/// Its input, ready for a line.
const QWEN_READY: &str = "Type your message";

/// A mock Messages API, a project, a home (with the hook in
/// `.qwen/settings.json`) and a runtime dir of its own.
struct Setup {
    qwen: PathBuf,
    _api: Child,
    api_port: u16,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new(qwen: PathBuf) -> Setup {
        let (api, api_port) = agents::mock_api("tests/agents/mock-anthropic").await;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home/.qwen", "runtime"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        // The snippet of docs/hook.md, with this build's ask-lsp.
        let settings = json!({"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("{} hook qwen", env!("CARGO_BIN_EXE_ask-lsp")),
             "timeout": 60}]}]}});
        std::fs::write(
            dir.path().join("home/.qwen/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        Setup {
            qwen,
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

    fn env(&self) -> String {
        format!(
            "HOME={home} XDG_RUNTIME_DIR={runtime} ANTHROPIC_BASE_URL=http://127.0.0.1:{port} \
             ANTHROPIC_API_KEY=sk-test ANTHROPIC_MODEL=mock-model",
            home = self.dir.path().join("home").display(),
            runtime = self.runtime().display(),
            port = self.api_port,
        )
    }

    /// The editor: an ask-lsp LSP server whose workspace is the project.
    async fn editor(&self, sim: &ask_sim::Sim) -> LspClient {
        agents::hook_editor(&self.runtime(), &self.project(), sim).await
    }

    /// Qwen Code's terminal UI in tmux, asking before it runs a command
    /// (`--approval-mode default`: its default, auto mode, asks the model
    /// instead); `env` is added to its environment (and so to the hook's).
    async fn interactive(&self, env: &str) -> Option<Tmux> {
        let command = format!(
            "env {vars} {env} {qwen} --approval-mode default",
            vars = self.env(),
            qwen = self.qwen.display(),
        );
        let tmux = Tmux::start(&command, &self.project(), Duration::from_secs(60))?;
        tmux.wait_for(QWEN_READY).await;
        Some(tmux)
    }

    /// The tool results the model was told, in order.
    async fn received(&self) -> Vec<Value> {
        agents::mock_received(self.api_port).await
    }

    /// The model's last tool result, once there is one past `seen`.
    async fn told_after(&self, seen: usize) -> Value {
        agents::told_after(self.api_port, seen).await
    }
}

/// The pid of an `ask-lsp hook {agent}` started for this runtime dir.
fn running_hook(runtime: &Path, agent: &str) -> Option<i32> {
    agents::running_hook(runtime, agent)
}

/// Waits until the agent runs the hook: its model turn comes first, slow
/// on a busy machine (Qwen Code took 15 s there), longer than the editor's
/// 10 s wait for a message.
async fn hook_started(runtime: &Path, agent: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while running_hook(runtime, agent).is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "`ask-lsp hook {agent}` never seen waiting (not run, or it decided nothing at once)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn qwen_code_runs_what_the_editor_allows_and_hears_why_it_rejects() {
    let Some(qwen) = qwen_bin() else { return };
    let setup = Setup::new(qwen).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive("").await else {
        return;
    };

    let allowed = setup.project().join("allowed");
    tmux.type_line(&format!("RUN: touch {}", allowed.display()))
        .await;
    hook_started(&setup.runtime(), "qwen").await;
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
    // Qwen Code waits for the hook before it shows its dialog.
    assert!(!tmux.screen().contains(QWEN_DIALOG), "{}", tmux.screen());
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let told = setup.told_after(0).await;
    assert_ne!(told["is_error"], true, "{told}");
    assert!(allowed.exists(), "the allowed command ran");
    tmux.wait_for(QWEN_READY).await;
    assert!(!tmux.screen().contains(QWEN_DIALOG), "{}", tmux.screen());

    let rejected = setup.project().join("rejected");
    let seen = setup.received().await.len();
    tmux.type_line(&format!("RUN: touch {}", rejected.display()))
        .await;
    hook_started(&setup.runtime(), "qwen").await;
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert_eq!(told["content"], "Use make instead", "the model reads it");
    assert_eq!(told["is_error"], true, "{told}");
    assert!(!rejected.exists(), "the rejected command did not run");
    assert!(!tmux.screen().contains(QWEN_DIALOG), "{}", tmux.screen());
    assert!(client.shutdown().await.success());
}

/// No ask-lsp, or an editor not answering within the hook's bound: Qwen
/// Code asks in its own dialog, as with no hook, and the person's answer
/// there works.
#[tokio::test]
async fn without_an_answer_from_the_editor_qwen_code_asks_in_its_own_dialog() {
    let Some(qwen) = qwen_bin() else { return };
    let setup = Setup::new(qwen).await;
    let Some(tmux) = setup.interactive("ASK_LSP_HOOK_TIMEOUT_MS=3000").await else {
        return;
    };
    let project = setup.project();

    // No ask-lsp running: the person allows in Qwen Code's dialog.
    let own = project.join("no-ask-lsp");
    tmux.type_line(&format!("RUN: touch {}", own.display()))
        .await;
    tmux.wait_for(QWEN_DIALOG).await;
    assert!(!own.exists());
    tmux.keys(&["Enter"]);
    wait_for(|| own.exists()).await;
    tmux.wait_for(QWEN_READY).await;

    // An editor that does not answer in time: the prompt leaves it, and
    // nothing runs until the person answers in Qwen Code's dialog.
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let unanswered = project.join("unanswered");
    tmux.type_line(&format!("RUN: touch {}", unanswered.display()))
        .await;
    hook_started(&setup.runtime(), "qwen").await;
    let ask = client.next_method("askQuestions/ask").await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    tmux.wait_for(QWEN_DIALOG).await;
    assert!(!unanswered.exists());
    tmux.keys(&["Enter"]);
    wait_for(|| unanswered.exists()).await;
    assert!(client.shutdown().await.success());
}

/// Headless `qwen -p` refuses a command that needs approval without
/// running the hook (Qwen Code 0.24.4's scheduler declines in
/// non-interactive mode before it fires `PermissionRequest`), and the model
/// is told so: the editor is never asked.
#[tokio::test]
async fn headless_qwen_never_runs_the_hook_and_refuses_by_itself() {
    let Some(qwen) = qwen_bin() else { return };
    let setup = Setup::new(qwen).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let target = setup.project().join("headless");
    let mut command = Command::new(&setup.qwen);
    for pair in setup.env().split(' ') {
        let (name, value) = pair.split_once('=').unwrap();
        command.env(name, value);
    }
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        command
            .args(["--approval-mode", "default", "-p"])
            .arg(format!("RUN: touch {}", target.display()))
            .current_dir(setup.project())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("qwen -p finishes")
    .unwrap();
    // What Qwen Code tells the model varies with the rule that refused
    // (0.24.4 said "denied by permission rules" here); it is refused.
    let told = setup.told_after(0).await;
    assert_eq!(told["is_error"], true, "{told} {out:?}");
    assert!(
        told["content"]
            .as_str()
            .is_some_and(|c| c.contains("denied") || c.contains("declined")),
        "{told} {out:?}"
    );
    assert!(!target.exists());
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}
