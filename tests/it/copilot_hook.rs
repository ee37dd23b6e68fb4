//! The real GitHub Copilot CLI (`@github/copilot`, pinned in
//! tests/agents/install.sh), offline (`COPILOT_OFFLINE=true`) against
//! tests/agents/mock-anthropic (`COPILOT_PROVIDER_TYPE=anthropic`,
//! `COPILOT_PROVIDER_BASE_URL`; no GitHub sign-in), with `ask-lsp hook
//! copilot` as its `permissionRequest` hook (a user-level hook file,
//! `~/.copilot/hooks/ask-lsp.json`, as docs/hook.md says) and an ask-lsp
//! LSP server as the editor.
//!
//! Copilot runs the hook in its terminal UI (tmux here) and headless
//! (`copilot -p`); both are tested.
//!
//! Needs `ASK_LSP_COPILOT_BIN` (and tmux); without them each test says SKIP
//! and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::agents;
use crate::common::tmux::Tmux;
use crate::common::*;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

fn copilot_bin() -> Option<PathBuf> {
    agents::required("ASK_LSP_COPILOT_BIN", "tests/agents/install.sh")
}

/// Copilot's own dialog for a shell command.
const COPILOT_DIALOG: &str = "Do you want to run this command?";
/// Its input, ready for a line (the footer).
const COPILOT_READY: &str = "/ commands";

/// A mock Messages API, a project, a home (with the hook file) and a
/// runtime dir of its own.
struct Setup {
    copilot: PathBuf,
    _api: Child,
    api_port: u16,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new(copilot: PathBuf) -> Setup {
        let (api, api_port) = agents::mock_api("tests/agents/mock-anthropic").await;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home/.copilot/hooks", "runtime"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        // The snippet of docs/hook.md, with this build's ask-lsp.
        let hooks = json!({"version": 1, "hooks": {"permissionRequest": [
            {"type": "command", "bash": format!("{} hook copilot", env!("CARGO_BIN_EXE_ask-lsp")),
             "timeoutSec": 60}]}});
        std::fs::write(
            dir.path().join("home/.copilot/hooks/ask-lsp.json"),
            hooks.to_string(),
        )
        .unwrap();
        Setup {
            copilot,
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

    /// Copilot's environment: offline, the mock as its model provider, its
    /// unpacked package from the install script's cache (else it unpacks
    /// it into this home on its first run).
    fn env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = [
            ("HOME", self.dir.path().join("home").display().to_string()),
            ("XDG_RUNTIME_DIR", self.runtime().display().to_string()),
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
            ("COPILOT_PROVIDER_TYPE", "anthropic".into()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("http://127.0.0.1:{}", self.api_port),
            ),
            ("COPILOT_PROVIDER_API_KEY", "sk-test".into()),
            ("COPILOT_MODEL", "claude-sonnet-4.5".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        if let Some(cache) = std::env::var_os("ASK_LSP_COPILOT_CACHE") {
            env.push((
                "XDG_CACHE_HOME".into(),
                cache.to_string_lossy().into_owned(),
            ));
        }
        env
    }

    /// The editor: an ask-lsp LSP server whose workspace is the project.
    async fn editor(&self, sim: &ask_sim::Sim) -> LspClient {
        agents::hook_editor(&self.runtime(), &self.project(), sim).await
    }

    /// Copilot's terminal UI in tmux, past its folder-trust question
    /// (answered "Yes" as a person would); `env` is added to its
    /// environment (and so to the hook's).
    async fn interactive(&self, env: &str) -> Option<Tmux> {
        let vars: Vec<String> = self.env().iter().map(|(k, v)| format!("{k}={v}")).collect();
        let command = format!(
            "env {vars} {env} {copilot}",
            vars = vars.join(" "),
            copilot = self.copilot.display(),
        );
        let tmux = Tmux::start(&command, &self.project(), Duration::from_secs(60))?;
        tmux.wait_for("Do you trust the files in this folder?")
            .await;
        tmux.keys(&["Enter"]);
        tmux.wait_for(COPILOT_READY).await;
        Some(tmux)
    }

    /// `copilot -p` asked to run `command`; its output.
    async fn headless(&self, command: &str) -> std::process::Output {
        tokio::time::timeout(
            Duration::from_secs(90),
            Command::new(&self.copilot)
                .envs(self.env())
                .arg("-p")
                .arg(format!("RUN: {command}"))
                .current_dir(self.project())
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("copilot -p finishes")
        .unwrap()
    }

    /// The tool results the model was told, in order.
    async fn received(&self) -> Vec<Value> {
        agents::mock_received(self.api_port).await
    }

    /// What the model was last told, once there is a tool result past
    /// `seen`.
    async fn told_after(&self, seen: usize) -> String {
        agents::told_after(self.api_port, seen).await["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
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

/// Types `line` into Copilot's input and submits it. Copilot may drop an
/// Enter that comes while it redraws (its MCP reload just after start):
/// until the line shows as sent (indented; in the input it sits at the
/// left edge), Enter again.
async fn submit(tmux: &Tmux, line: &str) {
    tmux.type_line(line).await;
    let sent = format!(" ❯ {line}");
    tmux.press_again_until(
        "Enter",
        Duration::from_millis(1500),
        |_| true,
        |screen| screen.lines().any(|l| l.starts_with(&sent)),
    )
    .await;
}

#[tokio::test]
async fn copilot_runs_what_the_editor_allows_and_hears_why_it_rejects() {
    let Some(copilot) = copilot_bin() else { return };
    let setup = Setup::new(copilot).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive("").await else {
        return;
    };

    let allowed = setup.project().join("allowed");
    submit(&tmux, &format!("RUN: touch {}", allowed.display())).await;
    hook_started(&setup.runtime(), "copilot").await;
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
    let told = setup.told_after(0).await;
    assert!(told.contains("completed with exit code 0"), "{told}");
    assert!(allowed.exists(), "the allowed command ran");
    assert!(!tmux.screen().contains(COPILOT_DIALOG), "{}", tmux.screen());

    let rejected = setup.project().join("rejected");
    let seen = setup.received().await.len();
    submit(&tmux, &format!("RUN: touch {}", rejected.display())).await;
    hook_started(&setup.runtime(), "copilot").await;
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert_eq!(
        told, "Permission denied by a PermissionRequest hook: Use make instead",
        "the model reads it"
    );
    tmux.wait_for("Use make instead").await;
    assert!(!rejected.exists(), "the rejected command did not run");
    assert!(!tmux.screen().contains(COPILOT_DIALOG), "{}", tmux.screen());
    assert!(client.shutdown().await.success());
}

/// No ask-lsp, or an editor not answering within the hook's bound: Copilot
/// asks in its own dialog, as with no hook, and the person's answer there
/// works.
#[tokio::test]
async fn without_an_answer_from_the_editor_copilot_asks_in_its_own_dialog() {
    let Some(copilot) = copilot_bin() else { return };
    let setup = Setup::new(copilot).await;
    let Some(tmux) = setup.interactive("ASK_LSP_HOOK_TIMEOUT_MS=3000").await else {
        return;
    };
    let project = setup.project();

    // No ask-lsp running: the person allows in Copilot's dialog.
    let own = project.join("no-ask-lsp");
    submit(&tmux, &format!("RUN: touch {}", own.display())).await;
    tmux.wait_for(COPILOT_DIALOG).await;
    assert!(!own.exists());
    tmux.keys(&["Enter"]);
    wait_for(|| own.exists()).await;

    // An editor that does not answer in time: the prompt leaves it, and
    // nothing runs until the person answers in Copilot's dialog.
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let unanswered = project.join("unanswered");
    submit(&tmux, &format!("RUN: touch {}", unanswered.display())).await;
    hook_started(&setup.runtime(), "copilot").await;
    let ask = client.next_method("askQuestions/ask").await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    tmux.wait_for(COPILOT_DIALOG).await;
    assert!(!unanswered.exists());
    tmux.keys(&["Enter"]);
    wait_for(|| unanswered.exists()).await;
    assert!(client.shutdown().await.success());
}

/// Headless `copilot -p` runs the hook too: the editor's allow runs the
/// command; with no ask-lsp running Copilot refuses by itself (nobody to
/// ask) and tells the model so.
#[tokio::test]
async fn headless_copilot_asks_the_editor_and_refuses_without_one() {
    let Some(copilot) = copilot_bin() else { return };
    let setup = Setup::new(copilot).await;

    let alone = setup.project().join("alone");
    let out = setup.headless(&format!("touch {}", alone.display())).await;
    assert!(out.status.success(), "{out:?}");
    let told = setup.told_after(0).await;
    assert!(
        told.contains("no interactive user response was available"),
        "{told}"
    );
    assert!(!alone.exists());

    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let allowed = setup.project().join("headless");
    let command = format!("touch {}", allowed.display());
    let run = {
        let setup = &setup;
        let command = command.clone();
        async move { setup.headless(&command).await }
    };
    let answer = async {
        hook_started(&setup.runtime(), "copilot").await;
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["permission"]["command"], command.as_str());
        client
            .respond(
                &ask["id"],
                json!({"outcome": "answered", "choice": "allow-once"}),
            )
            .await;
    };
    let (out, ()) = tokio::join!(run, answer);
    assert!(out.status.success(), "{out:?}");
    assert!(allowed.exists(), "the allowed command ran");
    assert!(client.shutdown().await.success());
}
