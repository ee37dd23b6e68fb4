//! The real Codex CLI's terminal UI (`@openai/codex` 0.169.0 and 0.171.0,
//! tests/codex/install.sh) in tmux, offline against tests/codex/mock-openai,
//! running its threads on its app-server daemon as it does by default; an
//! ask-lsp LSP server as the editor, following that daemon
//! (src/backends/codex/, docs/codex.md) through `CODEX_HOME`.
//!
//! Needs `ASK_LSP_CODEX_BIN` / `ASK_LSP_CODEX_NEXT_BIN` (and tmux); without
//! them each test says SKIP and passes, unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::agents;
use crate::common::tmux::Tmux;
use crate::common::*;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

/// The pinned Codex (`ASK_LSP_CODEX_BIN`) or the newer one beside it
/// (`ASK_LSP_CODEX_NEXT_BIN`).
fn codex_bin(var: &str) -> Option<PathBuf> {
    agents::required(var, "tests/codex/install.sh")
}

const PINNED: &str = "ASK_LSP_CODEX_BIN";
const NEXT: &str = "ASK_LSP_CODEX_NEXT_BIN";

/// Codex's dialog for a command it wants to run outside its sandbox.
const CODEX_DIALOG: &str = "Would you like to run the following command?";
/// Codex's dialog for a file change.
const EDIT_DIALOG: &str = "Would you like to make the following edits?";

/// A mock Responses API, a project, a `CODEX_HOME` and a runtime dir of its
/// own. The daemon Codex starts for that home is stopped when dropped.
struct Setup {
    codex: PathBuf,
    _api: Child,
    api_port: u16,
    dir: tempfile::TempDir,
}

impl Setup {
    /// `extra` goes at the end of `config.toml`.
    async fn new(codex: PathBuf, extra: &str) -> Setup {
        let (api, api_port) = agents::mock_api("tests/codex/mock-openai").await;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home", "runtime"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let config = agents::codex_mock_provider(api_port)
            + &format!(
                r#"
[features]
default_mode_request_user_input = true
{extra}"#
            );
        std::fs::write(dir.path().join("home/config.toml"), config).unwrap();
        Setup {
            codex,
            _api: api,
            api_port,
            dir,
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("project")).unwrap()
    }

    fn runtime(&self) -> PathBuf {
        self.dir.path().join("runtime")
    }

    /// The editor: an ask-lsp LSP server whose workspace is the project and
    /// whose `CODEX_HOME` is the test's.
    async fn editor(&self, sim: &ask_sim::Sim) -> LspClient {
        self.editor_with(sim, extension_caps(), "ask_lsp=debug")
            .await
    }

    /// [`Setup::editor`] with these client capabilities and `ASK_LSP_LOG`.
    async fn editor_with(&self, sim: &ask_sim::Sim, caps: Value, log: &str) -> LspClient {
        let runtime = self.runtime();
        let home = self.home();
        agents::editor_with_caps(
            &self.project(),
            sim,
            &[
                ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
                ("CODEX_HOME", home.to_str().unwrap()),
                ("ASK_LSP_CODEX", "1"),
                ("ASK_LSP_HOOK", "1"),
                ("ASK_LSP_LOG", log),
            ],
            caps,
        )
        .await
    }

    /// Codex's terminal UI in tmux, asking before it leaves its read-only
    /// sandbox; `flags` are added to its command line.
    async fn interactive(&self, flags: &str) -> Option<Tmux> {
        self.interactive_in(flags, &self.project()).await
    }

    /// [`Setup::interactive`] with `cwd` as Codex's working directory.
    async fn interactive_in(&self, flags: &str, cwd: &Path) -> Option<Tmux> {
        let command = format!(
            "env CODEX_HOME={home} HOME={home} XDG_RUNTIME_DIR={runtime} {codex} \
             -a on-request -s read-only {flags}",
            home = self.home().display(),
            runtime = self.runtime().display(),
            codex = self.codex.display(),
        );
        let tmux = Tmux::start(&command, cwd, Duration::from_secs(60))?;
        tmux.wait_for("Ask Codex to do anything").await;
        Some(tmux)
    }

    /// `ask-lsp watch` in a tmux of its own, following this project with
    /// `env` and `flags` added (no hook socket, no OpenCode); then Codex's
    /// UI beside it.
    async fn watch_beside(&self, env: &str, flags: &str) -> Option<(Tmux, Tmux)> {
        let command = format!(
            "env XDG_RUNTIME_DIR={runtime} ASK_LSP_HOOK=0 LANG=C.UTF-8 {env} {bin} watch \
             --url http://127.0.0.1:1 --directory {project} {flags}",
            runtime = self.runtime().display(),
            bin = env!("CARGO_BIN_EXE_ask-lsp"),
            project = self.project().display(),
        );
        let watch = Tmux::start(&command, &self.project(), Duration::from_secs(60))?;
        watch.wait_for("ask-lsp:").await;
        let tui = self.interactive("").await?;
        Some((watch, tui))
    }

    /// Starts Codex's daemon for this home (`codex app-server daemon
    /// start`), as Codex's terminal UI does at its first start: the UI then
    /// joins it. Started first so that its install (seconds on a busy
    /// machine) is over before the UI runs.
    async fn start_daemon(&self) {
        let out = tokio::time::timeout(
            Duration::from_secs(120),
            Command::new(&self.codex)
                .args(["app-server", "daemon", "start"])
                .env("CODEX_HOME", self.home())
                .env("HOME", self.home())
                // Where its hooks (`ask-lsp hook codex`) find the editor.
                .env("XDG_RUNTIME_DIR", self.runtime())
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the daemon starts")
        .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

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

impl Drop for Setup {
    /// Stops the daemon (and its updater) Codex started for this home: it
    /// outlives the terminal UI.
    fn drop(&mut self) {
        let home = self.home();
        let wanted = home.join("packages");
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            if Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(first))
                .starts_with(&wanted)
                || (first.ends_with(b"codex")
                    && std::fs::read(entry.path().join("environ"))
                        .unwrap_or_default()
                        .split(|b| *b == 0)
                        .any(|v| v == format!("CODEX_HOME={}", home.display()).as_bytes()))
            {
                // SAFETY: kill on a pid of this test's own Codex.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// The common start: an editor following the daemon of Codex `var` (none:
/// the test is skipped), and Codex's terminal UI on it.
async fn on_the_daemon(var: &str) -> Option<(Setup, ask_sim::Sim, LspClient, Tmux)> {
    let setup = Setup::new(codex_bin(var)?, "").await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    setup.start_daemon().await;
    daemon_status_once(&mut client, true).await;
    let tmux = setup.interactive("").await?;
    Some((setup, sim, client, tmux))
}

/// The editor's next prompt from the Codex daemon.
async fn next_daemon_prompt(client: &mut LspClient) -> Value {
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["server"],
        "codex-daemon",
        "{ask}\nits log:\n{}",
        client.logs()
    );
    ask
}

/// The editor allows one command and rejects another: each reaches Codex
/// through its daemon, its terminal follows.
async fn accepts_and_declines(var: &str) {
    let Some((setup, _sim, mut client, tmux)) = on_the_daemon(var).await else {
        return;
    };

    let allowed = setup.project().join("allowed");
    let seen = setup.received().await.len();
    tmux.type_line(&format!("RUN: touch {}", allowed.display()))
        .await;
    // Codex asks in its own dialog at the same time (waited for first: the
    // turn can take seconds on a busy machine).
    tmux.wait_for(CODEX_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    let params = &ask["params"];
    assert_eq!(
        params["permission"]["command"],
        format!("/bin/bash -lc 'touch {}'", allowed.display()),
        "{params}"
    );
    assert_eq!(params["source"]["directory"], json!(setup.project()));
    let choices: Vec<&Value> = params["permission"]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert!(choices.contains(&&json!("accept")), "{params}");
    assert!(choices.contains(&&json!("decline")), "{params}");
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "accept"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert!(told.contains("Process exited with code 0"), "{told}");
    assert!(allowed.exists(), "the allowed command ran");
    tmux.wait_for(&format!("Ran touch {}", allowed.display()))
        .await;
    assert!(!tmux.screen().contains(CODEX_DIALOG), "{}", tmux.screen());

    let declined = setup.project().join("declined");
    let seen = setup.received().await.len();
    tmux.type_line(&format!("RUN: touch {}", declined.display()))
        .await;
    tmux.wait_for(CODEX_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "decline"}),
        )
        .await;
    let told = setup.told_after(seen).await;
    assert!(
        told.contains("rejected by user"),
        "the model is told: {told}"
    );
    tmux.wait_for("Ask Codex to do anything").await;
    assert!(!declined.exists(), "the declined command did not run");
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_runs_what_the_editor_accepts_through_its_daemon() {
    accepts_and_declines(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_runs_what_the_editor_accepts_through_its_daemon() {
    accepts_and_declines(NEXT).await;
}

/// `y` in Codex's own dialog withdraws the editor's prompt within a second;
/// an answer from the editor after that is not sent.
async fn answered_in_the_terminal(var: &str) {
    let Some((setup, _sim, mut client, tmux)) = on_the_daemon(var).await else {
        return;
    };
    let target = setup.project().join("in-terminal");
    tmux.type_line(&format!("RUN: touch {}", target.display()))
        .await;
    tmux.wait_for(CODEX_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    let pressed = tmux.press_until_gone("y", CODEX_DIALOG).await;
    let cancel = client.next_method("$/cancelRequest").await;
    let took = pressed.elapsed();
    assert_eq!(cancel["params"]["id"], ask["id"]);
    eprintln!("withdrawn {took:?} after `y` in Codex");
    assert!(took < Duration::from_secs(1), "withdrawn after {took:?}");
    wait_for(|| target.exists()).await;
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_y_in_the_terminal_withdraws_the_editors_prompt() {
    answered_in_the_terminal(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_y_in_the_terminal_withdraws_the_editors_prompt() {
    answered_in_the_terminal(NEXT).await;
}

/// Codex's own question tool, answered in the editor: the model reads the
/// answer exactly as chosen.
async fn question_answered_in_the_editor(var: &str) {
    let Some((setup, _sim, mut client, tmux)) = on_the_daemon(var).await else {
        return;
    };
    let seen = setup.received().await.len();
    tmux.type_line("ASK: Which database should I use").await;
    tmux.wait_for("Postgres").await;
    let ask = next_daemon_prompt(&mut client).await;
    let questions = &ask["params"]["questions"];
    assert_eq!(questions[0]["question"], "Which database should I use");
    assert_eq!(questions[0]["header"], "Database");
    let labels: Vec<&Value> = questions[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["label"])
        .collect();
    assert_eq!(labels, [&json!("Postgres"), &json!("SQLite")], "{ask}");
    client.answer(&ask, json!([["SQLite"]])).await;
    let told = setup.told_after(seen).await;
    assert_eq!(
        serde_json::from_str::<Value>(&told).unwrap(),
        json!({"answers": {"db": {"answers": ["SQLite"]}}}),
        "{told}"
    );
    tmux.wait_for("Ask Codex to do anything").await;
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_question_answered_in_the_editor_reaches_the_model() {
    question_answered_in_the_editor(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_question_answered_in_the_editor_reaches_the_model() {
    question_answered_in_the_editor(NEXT).await;
}

/// What a test types as a secret: spaces around it are part of it.
const SECRET: &str = " s3cr3t-Tok3n 42 ";

/// A question Codex marks `isSecret`, in an editor that types it masked
/// (it lists `"secret"`): the editor is told it is a secret, the model
/// receives the text exactly as typed, and nothing ask-lsp writes to
/// stderr (every log, at trace level) holds it.
async fn secret_answered_in_the_editor(var: &str) {
    let Some(codex) = codex_bin(var) else { return };
    let setup = Setup::new(codex, "").await;
    let sim = sim().await;
    let caps = json!({"experimental": {"askQuestions": {"version": 2,
                      "kinds": ["permission", "form", "secret"]}},
                      "window": {"showMessage": {}}});
    let mut client = setup.editor_with(&sim, caps, "trace").await;
    setup.start_daemon().await;
    daemon_status_once(&mut client, true).await;
    let Some(tmux) = setup.interactive("").await else {
        return;
    };
    let seen = setup.received().await.len();
    tmux.type_line("SECRET: Which API token should I use").await;
    let ask = next_daemon_prompt(&mut client).await;
    let question = &ask["params"]["questions"][0];
    assert_eq!(
        question["question"], "Which API token should I use",
        "{ask}"
    );
    assert_eq!(question["secret"], true, "{ask}");
    assert_eq!(question["custom"], true, "{ask}");
    client.answer(&ask, json!([[SECRET]])).await;
    let told = setup.told_after(seen).await;
    assert_eq!(
        serde_json::from_str::<Value>(&told).unwrap(),
        json!({"answers": {"token": {"answers": [SECRET]}}}),
        "{told}"
    );
    client.next_method("askQuestions/resolved").await;
    tmux.wait_for("Ask Codex to do anything").await;
    let logs = client.logs();
    assert!(client.shutdown().await.success());
    assert!(logs.contains("prompt resolved"), "traced: {logs}");
    assert!(
        !logs.contains(SECRET.trim()),
        "the secret is in ask-lsp's stderr"
    );
}

#[tokio::test]
async fn codex_0_169_secret_answered_in_the_editor_reaches_the_model_and_no_log() {
    secret_answered_in_the_editor(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_secret_answered_in_the_editor_reaches_the_model_and_no_log() {
    secret_answered_in_the_editor(NEXT).await;
}

/// An editor that cannot type a secret masked (it does not list
/// `"secret"`) is never asked it: it is told to answer in Codex's
/// terminal, and the question stays there.
async fn secret_left_to_the_terminal(var: &str) {
    let Some((_setup, _sim, mut client, tmux)) = on_the_daemon(var).await else {
        return;
    };
    tmux.type_line("SECRET: Which API token should I use").await;
    loop {
        let said = client.next_method("window/showMessage").await;
        let message = said["params"]["message"].as_str().unwrap_or_default();
        if message.contains("answer it in Codex's terminal") {
            assert!(message.contains("Token"), "{said}");
            break;
        }
    }
    assert!(
        !client
            .seen
            .iter()
            .any(|m| m["method"] == "askQuestions/ask"),
        "{:?}",
        client.seen
    );
    tmux.wait_for("Which API token should I use").await;
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_secret_in_an_editor_that_cannot_mask_stays_in_the_terminal() {
    secret_left_to_the_terminal(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_secret_in_an_editor_that_cannot_mask_stays_in_the_terminal() {
    secret_left_to_the_terminal(NEXT).await;
}

/// `ask-lsp watch` in a terminal (tmux), following the same daemon: a
/// secret typed at its `> ` line is never echoed, not in the pane's
/// scrollback, not in its stderr (trace), and reaches the model exactly.
async fn secret_typed_in_watch(var: &str) {
    let Some(codex) = codex_bin(var) else { return };
    let setup = Setup::new(codex, "").await;
    setup.start_daemon().await;
    let log = setup.dir.path().join("watch.log");
    let env = format!(
        "CODEX_HOME={home} HOME={home} ASK_LSP_CODEX=1 ASK_LSP_LOG=trace",
        home = setup.home().display()
    );
    let Some((watch, tmux)) = setup
        .watch_beside(&env, &format!("2>{}", log.display()))
        .await
    else {
        return;
    };
    let seen = setup.received().await.len();
    tmux.type_line("SECRET: Which API token should I use").await;
    watch.wait_for("Which API token should I use").await;
    watch.wait_for("not shown as you type").await;
    watch.keys(&["-l", SECRET]);
    watch.keys(&["Enter"]);
    let told = setup.told_after(seen).await;
    assert_eq!(
        serde_json::from_str::<Value>(&told).unwrap(),
        json!({"answers": {"token": {"answers": [SECRET]}}}),
        "{told}"
    );
    watch.wait_for("✓").await;
    let pane = std::process::Command::new("tmux")
        .args([
            "-L",
            &watch.name(),
            "capture-pane",
            "-p",
            "-S",
            "-",
            "-t",
            "0",
        ])
        .output()
        .unwrap();
    let pane = String::from_utf8_lossy(&pane.stdout);
    assert!(!pane.contains(SECRET.trim()), "on watch's screen:\n{pane}");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.contains(SECRET.trim()), "in watch's stderr");
    assert!(logged.contains("prompt resolved"), "traced: {logged}");
}

#[tokio::test]
async fn codex_0_169_secret_typed_in_watch_is_never_echoed() {
    secret_typed_in_watch(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_secret_typed_in_watch_is_never_echoed() {
    secret_typed_in_watch(NEXT).await;
}

/// `ask-lsp watch --codex-home DIR` with `$CODEX_HOME` not followed
/// (`ASK_LSP_CODEX=0`): the home named on the command line is followed, and
/// its daemon's question is answered in watch's terminal.
#[tokio::test]
async fn a_codex_home_named_on_watchs_command_line_is_followed() {
    let Some(codex) = codex_bin(PINNED) else {
        return;
    };
    let setup = Setup::new(codex, "").await;
    setup.start_daemon().await;
    let flags = format!("--codex-home {}", setup.home().display());
    let Some((watch, tmux)) = setup.watch_beside("ASK_LSP_CODEX=0", &flags).await else {
        return;
    };
    let seen = setup.received().await.len();
    tmux.type_line("ASK: Which database should I use").await;
    watch.wait_for("Which database should I use").await;
    watch.wait_for("SQLite").await;
    watch.keys(&["-l", "2"]);
    watch.keys(&["Enter"]);
    let told = setup.told_after(seen).await;
    assert_eq!(
        serde_json::from_str::<Value>(&told).unwrap(),
        json!({"answers": {"db": {"answers": ["SQLite"]}}}),
        "{told}"
    );
}

/// A file change is shown as a diff; declined, nothing is written; accepted,
/// the file is written.
async fn file_change_as_a_diff(var: &str) {
    let Some((setup, _sim, mut client, tmux)) = on_the_daemon(var).await else {
        return;
    };
    let declined = setup.project().join("declined.txt");
    tmux.type_line("PATCH: declined.txt not wanted").await;
    tmux.wait_for(EDIT_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    let permission = &ask["params"]["permission"];
    assert_eq!(
        permission["diff"],
        format!(
            "--- /dev/null\n+++ {}\n@@ -0,0 +1,1 @@\n+not wanted",
            declined.display()
        ),
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "decline"}),
        )
        .await;
    tmux.wait_for("Ask Codex to do anything").await;
    assert!(!declined.exists(), "a declined change is not written");

    let accepted = setup.project().join("notes.txt");
    tmux.type_line("PATCH: notes.txt hello").await;
    tmux.wait_for(EDIT_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    assert!(
        ask["params"]["permission"]["diff"]
            .as_str()
            .unwrap()
            .ends_with("+hello"),
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "accept"}),
        )
        .await;
    wait_for(|| accepted.exists()).await;
    assert_eq!(std::fs::read_to_string(&accepted).unwrap(), "hello\n");
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_file_change_is_a_diff_applied_only_when_accepted() {
    file_change_as_a_diff(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_file_change_is_a_diff_applied_only_when_accepted() {
    file_change_as_a_diff(NEXT).await;
}

/// The server entry of the Codex daemon in the editor's status.
async fn daemon_status(client: &mut LspClient) -> Value {
    let status = client.status().await;
    status["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "codex-daemon")
        .cloned()
        .unwrap_or_else(|| panic!("{status}"))
}

/// Types `line` into Codex and submits it; Enter again if Codex took it as
/// part of a paste (the line still in its input, nothing after it).
async fn submit(tmux: &Tmux, line: &str) {
    tmux.type_line(line).await;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let screen = tmux.screen();
        let lines: Vec<&str> = screen.lines().collect();
        let Some(last) = lines.iter().rposition(|l| l.trim_start().starts_with('›')) else {
            return;
        };
        let unsent = lines[last].contains(line)
            && !lines[last + 1..]
                .iter()
                .any(|l| l.trim_start().starts_with('•'));
        if !unsent {
            return;
        }
        tmux.keys(&["Enter"]);
    }
}

/// Whether an `ask-lsp hook codex` of this build runs.
fn hook_running() -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.first() == Some(&env!("CARGO_BIN_EXE_ask-lsp").as_bytes())
            && args.get(1) == Some(&b"hook".as_slice())
    })
}

/// The daemon's entry once it is `connected` (or has said why not).
async fn daemon_status_once(client: &mut LspClient, connected: bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let status = daemon_status(client).await;
        if status["connected"] == json!(connected) && (connected || !status["error"].is_null()) {
            return status;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Control: Codex with `--no-daemon` has no daemon to follow: the editor's
/// status says so, nothing comes from a daemon, and the hook still brings
/// its approvals. (`--dangerously-bypass-hook-trust` runs the thread
/// in-process, not on the daemon; the hook's dedupe against the daemon is
/// in `hook_and_daemon_show_one_prompt`, with the hook trusted instead.)
#[tokio::test]
async fn without_a_daemon_the_status_says_so_and_the_hook_still_works() {
    let Some(codex) = codex_bin(PINNED) else {
        return;
    };
    let hook = format!(
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
    let setup = Setup::new(codex, &hook).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let socket = setup
        .runtime()
        .join("ask-lsp")
        .join(format!("ask-lsp-{}.sock", client.child().id().unwrap()));
    wait_for(|| socket.exists()).await;
    let Some(tmux) = setup
        .interactive("--no-daemon --dangerously-bypass-hook-trust")
        .await
    else {
        return;
    };
    let status = daemon_status_once(&mut client, false).await;
    assert_eq!(
        status["error"],
        json!(format!("no Codex daemon for {}", setup.home().display())),
        "{status}"
    );

    let allowed = setup.project().join("by-hook");
    submit(&tmux, &format!("RUN: touch {}", allowed.display())).await;
    // The turn can take seconds on a busy machine: the hook runs first.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !hook_running() {
        assert!(tokio::time::Instant::now() < deadline, "{}", tmux.screen());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["server"], "hook", "{ask}");
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    wait_for(|| allowed.exists()).await;
    // Nothing came from a daemon.
    for message in client.drain(Duration::from_millis(500)).await {
        assert_ne!(message["method"], "askQuestions/ask", "{message}");
    }
    let status = daemon_status(&mut client).await;
    assert_eq!(status["connected"], json!(false), "{status}");
    assert!(client.shutdown().await.success());
}

/// An editor (an ask-lsp LSP server) on `project`, with `CODEX_HOME` =
/// `home` and `options` as its `initializationOptions` besides the sim.
async fn editor_on(
    sim: &ask_sim::Sim,
    project: &Path,
    runtime: &Path,
    home: &Path,
    options: Value,
) -> LspClient {
    let mut client = LspClient::start(&[
        ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ("CODEX_HOME", home.to_str().unwrap()),
        ("ASK_LSP_CODEX", "1"),
        ("ASK_LSP_HOOK", "1"),
    ])
    .await;
    let mut options = options;
    options["servers"] = json!([{"url": sim.url()}]);
    client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": format!("file://{}", project.display()),
                   "capabilities": extension_caps(), "initializationOptions": options}),
        )
        .await;
    client.notify("initialized", json!({})).await;
    client
}

/// The status entry of server `name` once it is `connected` (or has said
/// why not).
async fn server_status_once(client: &mut LspClient, name: &str, connected: bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let status = client.status().await;
        let entry = status["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {status}"));
        if entry["connected"] == json!(connected) && (connected || !entry["error"].is_null()) {
            return entry;
        }
        assert!(tokio::time::Instant::now() < deadline, "{entry}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The `window/showMessage`s the editor received so far.
fn shown_messages(client: &LspClient) -> Vec<Value> {
    client
        .seen
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .cloned()
        .collect()
}

/// Codex set up but no daemon running: the status says "no Codex daemon",
/// and no window message does (a state, not a fault). A home whose socket
/// is not the person's alone, and a home that is a file, stay warnings;
/// a relative home is refused with the setting named. No Codex needed.
#[tokio::test]
async fn no_daemon_is_said_in_the_status_only_and_bad_homes_are_warned() {
    let sim = sim().await;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let runtime = dir.path().join("runtime");
    let home = dir.path().join("home");
    let refused = dir.path().join("refused");
    let file = dir.path().join("a-file");
    for made in [&project, &runtime, &home, &refused] {
        std::fs::create_dir(made).unwrap();
    }
    std::fs::write(home.join("config.toml"), "").unwrap();
    // A plain file where the control socket should be: never connected to.
    std::fs::create_dir(refused.join("app-server-control")).unwrap();
    std::fs::write(
        refused.join("app-server-control/app-server-control.sock"),
        "",
    )
    .unwrap();
    std::fs::write(&file, "").unwrap();
    let mut client = editor_on(&sim, &project, &runtime, &home, json!({})).await;
    let quiet = server_status_once(&mut client, "codex-daemon", false).await;
    assert_eq!(
        quiet["error"],
        json!(format!("no Codex daemon for {}", home.display())),
        "{quiet}"
    );
    client.drain(Duration::from_millis(500)).await;
    let shown = shown_messages(&client);
    assert!(
        shown.is_empty(),
        "no daemon is not a window message: {shown:#?}"
    );

    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"codexHomes": [refused, file]}}}),
        )
        .await;
    let refused_status = server_status_once(&mut client, "codex-daemon-2", false).await;
    assert!(
        refused_status["error"]
            .as_str()
            .unwrap()
            .starts_with("Codex daemon not followed"),
        "{refused_status}"
    );
    let file_status = server_status_once(&mut client, "codex-daemon-3", false).await;
    assert_eq!(
        file_status["error"],
        json!(format!(
            "Codex home {} is not a directory: not followed",
            file.display()
        )),
        "{file_status}"
    );
    client.drain(Duration::from_millis(500)).await;
    let shown = shown_messages(&client);
    assert!(
        !shown.iter().any(|m| m["params"]["message"]
            .as_str()
            .unwrap()
            .contains("no Codex daemon")),
        "no daemon is not a window message: {shown:#?}"
    );
    for said in ["Codex daemon not followed", "is not a directory"] {
        let warning = shown
            .iter()
            .find(|m| m["params"]["message"].as_str().unwrap().contains(said))
            .unwrap_or_else(|| panic!("{said}: {shown:#?}"));
        assert_eq!(warning["params"]["type"], 2, "a warning: {warning}");
    }
    // Looked at again every 2 s: no new message while nothing changes.
    let before = client.seen.len();
    client.drain(Duration::from_millis(4500)).await;
    let again: Vec<&Value> = client.seen[before..]
        .iter()
        .filter(|m| m["method"] == "window/showMessage" || m["method"] == "window/logMessage")
        .collect();
    assert!(again.is_empty(), "{again:#?}");

    // A relative home is refused, the setting named.
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"codexHomes": ["relative/codex"]}}}),
        )
        .await;
    let error = client.next_method("window/showMessage").await;
    let message = error["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("codexHomes[0] \"relative/codex\": not an absolute path"),
        "{error}"
    );
    assert_eq!(error["params"]["type"], 1, "{error}");
    assert!(client.shutdown().await.success());
}

/// Runs `RUN: touch <target>` in `tmux` and accepts the prompt that comes
/// from server `server` in the editor: the command runs, Codex shows it.
async fn accepted_through(client: &mut LspClient, tmux: &Tmux, server: &str, target: &Path) {
    tmux.type_line(&format!("RUN: touch {}", target.display()))
        .await;
    tmux.wait_for(CODEX_DIALOG).await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["server"], server, "{ask}");
    assert_eq!(
        ask["params"]["permission"]["command"],
        format!("/bin/bash -lc 'touch {}'", target.display()),
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "accept"}),
        )
        .await;
    wait_for(|| target.exists()).await;
    tmux.wait_for(&format!("Ran touch {}", target.display()))
        .await;
}

/// Two Codex homes, each with its own daemon and terminal UI: `$CODEX_HOME`
/// and one named in the `codexHomes` setting. Each has its own status line,
/// the prompts of both reach the editor, and each answer goes back to the
/// daemon that asked (the command runs in the UI that asked for it).
#[tokio::test]
async fn two_codex_homes_are_followed_each_answered_on_its_own_daemon() {
    let Some(codex) = codex_bin(PINNED) else {
        return;
    };
    let first = Setup::new(codex.clone(), "").await;
    let second = Setup::new(codex, "").await;
    let sim = sim().await;
    let mut client = editor_on(
        &sim,
        &first.project(),
        &first.runtime(),
        &first.home(),
        json!({"codexHomes": [second.home()]}),
    )
    .await;
    first.start_daemon().await;
    second.start_daemon().await;
    let one = server_status_once(&mut client, "codex-daemon", true).await;
    let two = server_status_once(&mut client, "codex-daemon-2", true).await;
    assert_eq!(
        one["url"],
        json!(format!(
            "unix:{}/app-server-control/app-server-control.sock",
            first.home().display()
        ))
    );
    assert_eq!(
        two["url"],
        json!(format!(
            "unix:{}/app-server-control/app-server-control.sock",
            second.home().display()
        ))
    );
    // Both UIs work in the editor's workspace (the second in a folder of it).
    let Some(tmux_one) = first.interactive("").await else {
        return;
    };
    let below = first.project().join("below");
    std::fs::create_dir(&below).unwrap();
    let Some(tmux_two) = second.interactive_in("", &below).await else {
        return;
    };
    accepted_through(
        &mut client,
        &tmux_two,
        "codex-daemon-2",
        &below.join("from-second"),
    )
    .await;
    accepted_through(
        &mut client,
        &tmux_one,
        "codex-daemon",
        &first.project().join("from-first"),
    )
    .await;
    assert!(
        !tmux_two.screen().contains("from-first"),
        "{}",
        tmux_two.screen()
    );
    assert!(client.shutdown().await.success());
}

/// A Codex home that does not exist when the editor starts is followed
/// once Codex makes it and starts its daemon, without a restart, and
/// without a message per look while it was missing.
#[tokio::test]
async fn a_codex_home_made_after_the_editor_started_is_followed() {
    let Some(codex) = codex_bin(PINNED) else {
        return;
    };
    let setup = Setup::new(codex, "").await;
    // Not there yet when the editor starts.
    let later = setup.dir.path().join("home-later");
    std::fs::rename(setup.home(), &later).unwrap();
    let sim = sim().await;
    let mut client = editor_on(
        &sim,
        &setup.project(),
        &setup.runtime(),
        &setup.home(),
        json!({}),
    )
    .await;
    let missing = server_status_once(&mut client, "codex-daemon", false).await;
    assert_eq!(
        missing["error"],
        json!(format!("no Codex daemon for {}", setup.home().display())),
        "{missing}"
    );
    // Several looks (every 2 s) while it is missing.
    client.drain(Duration::from_secs(5)).await;
    std::fs::rename(&later, setup.home()).unwrap();
    setup.start_daemon().await;
    server_status_once(&mut client, "codex-daemon", true).await;
    let Some(tmux) = setup.interactive("").await else {
        return;
    };
    accepted_through(
        &mut client,
        &tmux,
        "codex-daemon",
        &setup.project().join("after"),
    )
    .await;
    let said: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| {
            m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("no Codex daemon"))
        })
        .collect();
    assert!(said.len() <= 1, "said once at most: {said:#?}");
    assert!(
        said.iter().all(|m| m["method"] == "window/logMessage"),
        "{said:#?}"
    );
    assert!(client.shutdown().await.success());
}

impl Setup {
    /// Trusts every hook of this home as `/hooks` does: Codex keeps a
    /// hook's trust in `config.toml` as `[hooks.state."<key>"] trusted_hash
    /// = "<currentHash>"`, the key and hash being those its app-server's
    /// `hooks/list` reports (Codex 0.169.0 and 0.171.0; an untrusted hook
    /// does not run, and `--dangerously-bypass-hook-trust` takes the
    /// thread off the daemon).
    async fn trust_hooks(&self) {
        let mut server = Command::new(&self.codex)
            .arg("app-server")
            .env("CODEX_HOME", self.home())
            .env("HOME", self.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut input = server.stdin.take().unwrap();
        let project = self.project();
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"clientInfo": {"name": "ask-lsp-tests", "version": "1"},
                              "capabilities": {"experimentalApi": true}}}),
            json!({"jsonrpc": "2.0", "method": "initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
                   "params": {"cwds": [project]}}),
        ] {
            tokio::io::AsyncWriteExt::write_all(&mut input, format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
        let listed = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let message: Value = serde_json::from_str(&line).unwrap_or_default();
                if message["id"] == 2 {
                    return message;
                }
            }
            panic!("the app-server ended before listing its hooks");
        })
        .await
        .expect("hooks/list answered");
        let mut trust = String::new();
        for hook in listed["result"]["data"][0]["hooks"].as_array().unwrap() {
            trust.push_str(&format!(
                "\n[hooks.state.{key}]\ntrusted_hash = {hash}\n",
                key = hook["key"],
                hash = hook["currentHash"]
            ));
        }
        assert!(!trust.is_empty(), "{listed}");
        let config = self.home().join("config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&trust);
        std::fs::write(&config, text).unwrap();
    }
}

/// `ask-lsp hook codex` configured and trusted, Codex on its daemon: the
/// hook runs first and ask-lsp, following the daemon for that thread,
/// answers it "no decision" (`followedByDaemon`); the request reaches the
/// editor once, from the daemon, answerable there.
async fn hook_and_daemon_show_one_prompt(var: &str) {
    let Some(codex) = codex_bin(var) else { return };
    let log = tempfile::NamedTempFile::new().unwrap();
    let hook = format!(
        r#"
[[hooks.PermissionRequest]]
matcher = "*"
[[hooks.PermissionRequest.hooks]]
type = "command"
command = "{hook} hook codex 2>>{log}"
timeout = 60
"#,
        hook = env!("CARGO_BIN_EXE_ask-lsp"),
        log = log.path().display(),
    );
    let setup = Setup::new(codex, &hook).await;
    setup.trust_hooks().await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let socket = setup
        .runtime()
        .join("ask-lsp")
        .join(format!("ask-lsp-{}.sock", client.child().id().unwrap()));
    wait_for(|| socket.exists()).await;
    setup.start_daemon().await;
    daemon_status_once(&mut client, true).await;
    let Some(tmux) = setup.interactive("").await else {
        return;
    };
    let target = setup.project().join("once");
    tmux.type_line(&format!("RUN: touch {}", target.display()))
        .await;
    tmux.wait_for(CODEX_DIALOG).await;
    let ask = next_daemon_prompt(&mut client).await;
    let said = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        said.contains("left to the Codex daemon this ask-lsp follows"),
        "the hook decided nothing, saying why: {said:?}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "accept"}),
        )
        .await;
    wait_for(|| target.exists()).await;
    tmux.wait_for(&format!("Ran touch {}", target.display()))
        .await;
    client.drain(Duration::from_millis(500)).await;
    let asks: Vec<Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .cloned()
        .collect();
    assert_eq!(asks.len(), 1, "one prompt, from the daemon: {asks:#?}");
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn codex_0_169_hook_and_daemon_bring_one_prompt() {
    hook_and_daemon_show_one_prompt(PINNED).await;
}

#[tokio::test]
async fn codex_0_171_hook_and_daemon_bring_one_prompt() {
    hook_and_daemon_show_one_prompt(NEXT).await;
}
