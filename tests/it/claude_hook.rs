//! The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in
//! tests/claude_hook/install.sh) headless (`claude -p`) and interactive (in
//! tmux), offline against tests/claude_hook/mock-anthropic, with `ask-lsp
//! hook claude` as its `PermissionRequest` hook (and for the events that
//! withdraw a prompt) and an ask-lsp LSP server as the editor.
//!
//! Needs `ASK_LSP_CLAUDE_BIN`; without it each test says SKIP and passes,
//! unless `ASK_LSP_REQUIRE_E2E` is set.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::agents;
use crate::common::tmux::Tmux;
use crate::common::*;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

fn claude_bin() -> Option<PathBuf> {
    agents::required("ASK_LSP_CLAUDE_BIN", "tests/claude_hook/install.sh")
}

/// A mock Messages API, a project, a home and a runtime dir of its own.
struct Setup {
    claude: PathBuf,
    _api: Child,
    api_port: u16,
    dir: tempfile::TempDir,
}

impl Setup {
    async fn new(claude: PathBuf) -> Setup {
        let (api, api_port) = agents::mock_api("tests/claude_hook/mock-anthropic").await;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home", "runtime"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        // As docs/hook.md configures it: every PermissionRequest, and the
        // events that say Claude no longer waits for a prompt.
        let hook = json!([{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("{} hook claude", env!("CARGO_BIN_EXE_ask-lsp")),
             "timeout": 60}]}]);
        let events = [
            "PermissionRequest",
            "PostToolUse",
            "PostToolUseFailure",
            "PermissionDenied",
            "Stop",
            "UserPromptSubmit",
        ];
        let settings = json!({"hooks": events.iter().map(|e| (e.to_string(), hook.clone())).collect::<serde_json::Map<_, _>>()});
        std::fs::write(dir.path().join("settings.json"), settings.to_string()).unwrap();
        Setup {
            claude,
            _api: api,
            api_port,
            dir,
        }
    }

    /// tests/claude_hook/mcp-forms as the project's MCP server `forms`
    /// (its tool allowed, so only its form is asked), and `ask-lsp hook
    /// claude` as the `Elicitation` hook too, opted in with `opt_in`
    /// (`--elicitation-timeout-ms`) or not. Returns the server's log.
    fn with_forms(&self, opt_in: Option<&str>) -> PathBuf {
        let log = self.dir.path().join("mcp-forms.log");
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/claude_hook/mcp-forms");
        let mcp = json!({"mcpServers": {"forms": {"command": "python3", "args": [server, log]}}});
        std::fs::write(self.project().join(".mcp.json"), mcp.to_string()).unwrap();
        let path = self.dir.path().join("settings.json");
        let mut settings: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut command = format!("{} hook claude", env!("CARGO_BIN_EXE_ask-lsp"));
        if let Some(ms) = opt_in {
            command = format!("{command} --elicitation-timeout-ms {ms}");
        }
        settings["hooks"]["Elicitation"] = json!([{"matcher": "*", "hooks": [
            {"type": "command", "command": command, "timeout": 60}]}]);
        settings["enableAllProjectMcpServers"] = json!(true);
        settings["permissions"] = json!({"allow": ["mcp__forms__deploy"]});
        std::fs::write(&path, settings.to_string()).unwrap();
        log
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

    /// `claude -p` asked to run `command` through Bash (` ||| ` between
    /// commands run one after the other); IS_SANDBOX because Claude Code
    /// refuses root otherwise, and nothing leaves 127.0.0.1.
    fn run(&self, command: &str) -> Child {
        self.run_with(command, &[])
    }

    /// `claude -p` given `prompt` as it is (`WRITE: <path> ||| <content>`).
    fn run_write(&self, prompt: &str) -> Child {
        self.claude_p(prompt, &[])
    }

    fn run_with(&self, command: &str, env: &[(&str, &str)]) -> Child {
        self.claude_p(&format!("RUN: {command}"), env)
    }

    fn claude_p(&self, prompt: &str, env: &[(&str, &str)]) -> Child {
        Command::new(&self.claude)
            .envs(env.iter().copied())
            .args(["-p", "--output-format", "json", "--settings"])
            .arg(self.dir.path().join("settings.json"))
            .arg(prompt)
            .current_dir(self.project())
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_RUNTIME_DIR", self.runtime())
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.api_port),
            )
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("IS_SANDBOX", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env_remove("ASK_LSP_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }

    /// What the model was told as the tool's result, for the last call.
    async fn last_tool_result(&self) -> Value {
        let body = self.received().await;
        body.as_array()
            .and_then(|r| r.last().cloned())
            .unwrap_or_else(|| panic!("no tool result: {body}"))
    }

    /// The tool results the mock model API received so far.
    async fn received(&self) -> Value {
        Value::from(agents::mock_received(self.api_port).await)
    }

    /// The `n`th tool result (from 1) the model receives, once it has.
    async fn tool_result(&self, n: usize) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let body = self.received().await;
            if let Some(result) = body.as_array().and_then(|r| r.get(n - 1)) {
                return result["content"].to_string();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no tool result {n}: {body}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Interactive Claude Code in tmux (`--permission-mode default`), past
    /// its first-run screens (onboarding, the API key, the folder's trust),
    /// ready for a prompt.
    async fn interactive(&self) -> Option<Tmux> {
        let project = self.project();
        let state = json!({"hasCompletedOnboarding": true,
                           "customApiKeyResponses": {"approved": ["sk-test"], "rejected": []},
                           "projects": {project.to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
        std::fs::write(self.dir.path().join("home/.claude.json"), state.to_string()).unwrap();
        let command = format!(
            "env HOME={home} XDG_RUNTIME_DIR={runtime} ANTHROPIC_BASE_URL=http://127.0.0.1:{port} \
             ANTHROPIC_API_KEY=sk-test IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
             DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 ENABLE_TOOL_SEARCH=false \
             {claude} --permission-mode default --settings {settings}",
            home = self.dir.path().join("home").display(),
            runtime = self.runtime().display(),
            port = self.api_port,
            claude = self.claude.display(),
            settings = self.dir.path().join("settings.json").display(),
        );
        let tmux = Tmux::start(&command, &project, WAIT)?;
        tmux.wait_for("manual mode on").await;
        Some(tmux)
    }
}

/// Claude's `-p --output-format json` result.
async fn finished(run: Child) -> Value {
    let out = tokio::time::timeout(Duration::from_secs(90), run.wait_with_output())
        .await
        .expect("claude -p finishes")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[tokio::test]
async fn claude_code_runs_what_the_editor_allows_and_hears_why_it_rejects() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;

    let allowed = setup.project().join("allowed");
    let run = setup.run(&format!("touch {}", allowed.display()));
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["server"], "hook", "{params}");
    assert_eq!(
        params["permission"]["command"],
        format!("touch {}", allowed.display())
    );
    assert_eq!(
        params["source"]["directory"],
        json!(setup.project()),
        "{params}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let result = finished(run).await;
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert!(allowed.exists(), "the allowed command ran");
    let told = setup.last_tool_result().await;
    assert_ne!(told["is_error"], true, "{told}");

    let rejected = setup.project().join("rejected");
    let run = setup.run(&format!("touch {}", rejected.display()));
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Use make instead"}),
        )
        .await;
    let result = finished(run).await;
    assert!(!rejected.exists(), "the rejected command did not run");
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Bash",
        "{result}"
    );
    let told = setup.last_tool_result().await;
    assert!(
        told["content"].to_string().contains("Use make instead"),
        "the model reads the message: {told}"
    );
    assert!(client.shutdown().await.success());
}

/// Without an ask-lsp (or without an answer in time) Claude Code behaves as
/// with no hook: headless, it refuses the tool with its own message.
#[tokio::test]
async fn without_ask_lsp_claude_code_falls_back_to_its_own_handling() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let target = setup.project().join("never");
    let result = finished(setup.run(&format!("touch {}", target.display()))).await;
    assert!(!target.exists());
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Bash",
        "{result}"
    );
    let told = setup.last_tool_result().await;
    assert!(
        told["content"].to_string().contains("needs approval"),
        "Claude Code's own refusal: {told}"
    );
}

/// Claude Code's suggestions (headless, 2.1.332: the working directory and
/// acceptEdits, both for the session) are one choice each, in words, the
/// mode change marked broad. Choosing it stores acceptEdits: the next
/// command of the kind runs without a second prompt.
#[tokio::test]
async fn the_broad_accept_edits_choice_says_so_and_is_not_asked_again() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let (first, second) = (
        setup.project().join("first"),
        setup.project().join("second"),
    );
    let run = setup.run(&format!(
        "touch {} ||| touch {}",
        first.display(),
        second.display()
    ));
    let ask = client.next_method("askQuestions/ask").await;
    let choices = ask["params"]["permission"]["choices"].as_array().unwrap();
    let ids: Vec<&str> = choices.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.first(), Some(&"allow-once"), "{ask}");
    assert_eq!(ids.last(), Some(&"reject"), "{ask}");
    let mode = choices
        .iter()
        .find(|c| c["label"].as_str().unwrap().contains("\"setMode\""))
        .unwrap_or_else(|| panic!("{ask}"));
    let label = mode["label"].as_str().unwrap();
    let exact = label.split(" — stores ").nth(1).unwrap();
    let exact: Value = serde_json::from_str(exact).unwrap();
    assert_eq!(
        exact,
        json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
    );
    assert!(
        label.starts_with("Broad: allow, and accept every file edit in this session — stores "),
        "{label}"
    );
    // The broad one comes after the narrow one (the directory).
    assert!(
        choices[1]["label"]
            .as_str()
            .unwrap()
            .contains("\"addDirectories\""),
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": mode["id"]}),
        )
        .await;
    let result = finished(run).await;
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert!(first.exists() && second.exists(), "{result}");
    // Answered, then nothing more was asked.
    assert_eq!(
        client.next_method("askQuestions/resolved").await["params"]["here"],
        true
    );
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}

/// With "allow once" instead, the next command is asked again.
#[tokio::test]
async fn allow_once_is_asked_again() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let (first, second) = (setup.project().join("one"), setup.project().join("two"));
    let run = setup.run(&format!(
        "touch {} ||| touch {}",
        first.display(),
        second.display()
    ));
    for _ in 0..2 {
        let ask = client.next_method("askQuestions/ask").await;
        client
            .respond(
                &ask["id"],
                json!({"outcome": "answered", "choice": "allow-once"}),
            )
            .await;
    }
    let result = finished(run).await;
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert!(first.exists() && second.exists(), "{result}");
    assert!(client.shutdown().await.success());
}

/// A Write reaches the editor as a unified diff with its path in the title.
#[tokio::test]
async fn a_write_reaches_the_editor_as_a_diff_with_its_path() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let file = setup.project().join("notes.txt");
    let path = file.display().to_string();
    let run = setup.run_write(&format!("WRITE: {path} ||| hello from claude"));
    let ask = client.next_method("askQuestions/ask").await;
    let permission = &ask["params"]["permission"];
    assert_eq!(permission["action"], "Write", "{ask}");
    assert_eq!(
        permission["title"],
        format!("Claude Code asks to edit {path}")
    );
    assert_eq!(
        permission["diff"],
        format!(
            "Index: {path}\n--- {path}\n+++ {path}\n@@ -0,0 +1 @@\n+hello from claude\n\\ No newline at end of file"
        ),
        "{ask}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let result = finished(run).await;
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello from claude");
    assert!(client.shutdown().await.success());
}

/// The person not answering within the hook's bound: the prompt leaves the
/// editor and Claude Code decides as with no hook (headless: refuses).
#[tokio::test]
async fn an_editor_not_answering_in_time_leaves_the_decision_to_claude_code() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let target = setup.project().join("unanswered");
    let run = setup.run_with(
        &format!("touch {}", target.display()),
        &[("ASK_LSP_HOOK_TIMEOUT_MS", "1000")],
    );
    let ask = client.next_method("askQuestions/ask").await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let result = finished(run).await;
    assert!(!target.exists());
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Bash",
        "{result}"
    );
    let told = setup.last_tool_result().await;
    assert!(
        told["content"].to_string().contains("needs approval"),
        "{told}"
    );
    assert!(client.shutdown().await.success());
}

/// Interactive Claude Code in tmux: it shows its own dialog while the hook
/// waits (so with no ask-lsp, that dialog is the prompt), and an allow from
/// the editor closes it and runs the command.
#[tokio::test]
async fn interactive_claude_code_shows_its_dialog_and_takes_the_editors_allow() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let project = setup.project();
    let Some(tmux) = setup.interactive().await else {
        return;
    };

    // No ask-lsp: Claude Code's own dialog is the prompt.
    let own = project.join("own-dialog");
    tmux.type_line(&format!("RUN: touch {}", own.display()))
        .await;
    tmux.wait_for("Do you want to proceed?").await;
    assert!(!own.exists());
    tmux.keys(&["Escape"]);
    tmux.wait_for("Interrupted").await;

    // An editor: its allow closes the dialog and the command runs.
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    tmux.type_line("/clear").await;
    tmux.wait_gone("Interrupted").await;
    let allowed = project.join("from-editor");
    tmux.type_line(&format!("RUN: touch {}", allowed.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["permission"]["command"],
        format!("touch {}", allowed.display())
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    tmux.wait_for("Allowed by PermissionRequest hook").await;
    wait_for(|| allowed.exists()).await;
    assert!(client.shutdown().await.success());
}

/// Claude's `AskUserQuestion` in the editor (interactive only: `claude -p`
/// does not offer the tool): one question, several, a multi-select, a typed
/// answer and a refusal, each answered in the editor while Claude's own
/// dialog shows it too; the model reads exactly the person's answer.
#[tokio::test]
async fn claudes_questions_are_answered_in_the_editor() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    tmux.type_line("RUN: ASK one ||| ASK several ||| ASK multi ||| ASK one ||| ASK one")
        .await;

    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["server"], "hook", "{params}");
    assert_eq!(
        params["questions"],
        json!([{"question": "Which database should I use?", "header": "Database",
                "options": [{"label": "SQLite", "description": "One file, no server"},
                            {"label": "Postgres", "description": "A server"}],
                "multiple": false, "custom": true}]),
        "{params}"
    );
    tmux.wait_for("Which database should I use?").await;
    client.answer(&ask, json!([["SQLite"]])).await;
    let told = setup.tool_result(1).await;
    assert!(
        told.contains(r#"\"Which database should I use?\"=\"SQLite\""#),
        "{told}"
    );

    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["questions"][1]["header"], "Port", "{ask}");
    client.answer(&ask, json!([["Postgres"], ["3000"]])).await;
    let told = setup.tool_result(2).await;
    assert!(
        told.contains(r#"\"Which database should I use?\"=\"Postgres\""#)
            && told.contains(r#"\"Which port should it listen on?\"=\"3000\""#),
        "{told}"
    );

    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["questions"][0]["multiple"], true, "{ask}");
    client.answer(&ask, json!([["Lint", "Format"]])).await;
    let told = setup.tool_result(3).await;
    assert!(
        told.contains(r#"\"Which checks should run?\"=\"Lint, Format\""#),
        "{told}"
    );

    // Typed text (Claude's "Other").
    let ask = client.next_method("askQuestions/ask").await;
    client
        .answer(&ask, json!([["MariaDB, on port 3307"]]))
        .await;
    let told = setup.tool_result(4).await;
    assert!(
        told.contains(r#"\"Which database should I use?\"=\"MariaDB, on port 3307\""#),
        "{told}"
    );

    // A refusal: the model reads the person's words.
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Ask me after lunch"}),
        )
        .await;
    let told = setup.tool_result(5).await;
    assert!(told.contains("Ask me after lunch"), "{told}");
    assert!(client.shutdown().await.success());
}

/// A question answered in Claude's own dialog first: Claude leaves the hook
/// running, but its `PostToolUse` withdraws the editor's prompt at once,
/// and the session's next prompt (a command) shows in the editor at once.
#[tokio::test]
async fn a_question_answered_in_claudes_terminal_leaves_the_editor_at_once() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    let after = setup.project().join("after");
    tmux.type_line(&format!("RUN: ASK one ||| touch {}", after.display()))
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    tmux.wait_for("1. SQLite").await;
    // The first option is focused: Enter picks it.
    let answered = tmux.press_until_gone("Enter", "Enter to select").await;
    let cancel = client.next_method("$/cancelRequest").await;
    let withdrawn = answered.elapsed();
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let next = client.next_method("askQuestions/ask").await;
    let shown = answered.elapsed();
    eprintln!("withdrawn {withdrawn:?} after the terminal's answer, next prompt after {shown:?}");
    // Generous for a busy machine; without the withdrawal it takes the
    // hook's whole bound (50 s).
    assert!(withdrawn < Duration::from_secs(10), "{withdrawn:?}");
    assert_eq!(
        next["params"]["permission"]["command"],
        format!("touch {}", after.display())
    );
    assert!(
        setup
            .tool_result(1)
            .await
            .contains(r#"\"Which database should I use?\"=\"SQLite\""#)
    );
    client
        .respond(
            &next["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    wait_for(|| after.exists()).await;
    assert!(client.shutdown().await.success());
}

/// A command allowed in Claude's own dialog ("Yes"): Claude leaves the hook
/// running, its `PostToolUse` withdraws the editor's prompt, and the next
/// command of the session shows in the editor at once (not after the
/// hook's 50 s bound).
#[tokio::test]
async fn a_command_allowed_in_claudes_terminal_leaves_the_editor_at_once() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    let (first, second) = (setup.project().join("a"), setup.project().join("b"));
    tmux.type_line(&format!(
        "RUN: touch {} ||| touch {}",
        first.display(),
        second.display()
    ))
    .await;
    let ask = client.next_method("askQuestions/ask").await;
    tmux.wait_for("Do you want to proceed?").await;
    // "1. Yes" is focused.
    let answered = tmux
        .press_until_gone("Enter", "Do you want to proceed?")
        .await;
    let cancel = client.next_method("$/cancelRequest").await;
    eprintln!(
        "withdrawn {:?} after the terminal's Yes",
        answered.elapsed()
    );
    assert_eq!(cancel["params"]["id"], ask["id"]);
    assert!(first.exists());
    let next = client.next_method("askQuestions/ask").await;
    eprintln!("next prompt after {:?}", answered.elapsed());
    assert_eq!(
        next["params"]["permission"]["command"],
        format!("touch {}", second.display())
    );
    client
        .respond(
            &next["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    wait_for(|| second.exists()).await;
    assert!(client.shutdown().await.success());
}

/// Once Claude Code has listed the MCP server's tools (it connects to MCP
/// servers after its prompt shows), so the model is offered the tool.
async fn listed(log: &Path) {
    wait_for(|| std::fs::read_to_string(log).is_ok_and(|t| t.contains(r#"{"listed": true}"#)))
        .await;
}

/// The `n`th line (from 1) the MCP server logged about the forms it asked:
/// what Claude Code answered it.
async fn form_answer(log: &Path, n: usize) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let answers: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l.get("elicitation").is_some())
            .collect();
        if let Some(answer) = answers.get(n - 1) {
            return answer["elicitation"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answer {n}: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Claude Code's `Elicitation` hook opted in: an MCP server's form (its
/// tool's `elicitation/create`) comes to the editor as ACP's forms do, in
/// the server's field order; the person's submit reaches the server as
/// `accept` with exactly their values, a reject as `decline`; unanswered
/// within the bound, the editor's form is withdrawn and Claude shows its own.
#[tokio::test]
async fn claudes_mcp_forms_are_filled_in_the_editor_when_opted_in() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let log = setup.with_forms(Some("15000"));
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    listed(&log).await;
    tmux.type_line("RUN: MCP deploy ||| MCP deploy ||| MCP deploy")
        .await;

    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["server"], "hook", "{params}");
    assert_eq!(params["kind"], "form", "{params}");
    assert_eq!(params["title"], "Where should it deploy?", "{params}");
    let fields = &params["form"]["fields"];
    let ids: Vec<&str> = fields
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["target", "replicas", "notify"], "{params}");
    assert_eq!(
        fields[0]["options"],
        json!([{"value": "staging", "label": "staging"}, {"value": "prod", "label": "prod"}])
    );
    assert_eq!(fields[1]["type"], "integer", "{params}");
    // Claude's own form waits behind the hook.
    assert!(!tmux.screen().contains("requests your input"));
    let values = json!({"target": "prod", "replicas": 3, "notify": true});
    client
        .respond(&ask["id"], json!({"outcome": "answered", "values": values}))
        .await;
    assert_eq!(
        form_answer(&log, 1).await,
        json!({"action": "accept", "content": values})
    );
    assert!(setup.tool_result(1).await.contains("accept"));

    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "not today"}),
        )
        .await;
    assert_eq!(form_answer(&log, 2).await, json!({"action": "decline"}));

    // Unanswered: withdrawn at the bound, then Claude's own form.
    let ask = client.next_method("askQuestions/ask").await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    tmux.wait_for("requests your input").await;
    tmux.keys(&["Escape"]);
    assert_eq!(form_answer(&log, 3).await["action"], "cancel");
    assert!(client.shutdown().await.success());
}

/// Without the opt-in the `Elicitation` hook hands nothing over: Claude
/// shows its own form at once and the editor sees nothing.
#[tokio::test]
async fn claudes_mcp_forms_stay_in_claude_without_the_opt_in() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let log = setup.with_forms(None);
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    listed(&log).await;
    tmux.type_line("RUN: MCP deploy").await;
    tmux.wait_for("requests your input").await;
    client.expect_quiet(Duration::from_millis(500)).await;
    tmux.keys(&["Escape"]);
    assert_eq!(form_answer(&log, 1).await["action"], "cancel");
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}

/// Interactive Claude Code (tmux): "allow always" for the mode-changing
/// suggestion shows its words and the exact JSON, and what Claude applies
/// is exactly that: the session switches to accept-edits (its footer says
/// so), the next command runs without a prompt, and nothing else is
/// stored (no rule in the project's local settings).
#[tokio::test]
async fn interactive_allow_always_for_the_mode_stores_exactly_that() {
    let Some(claude) = claude_bin() else { return };
    let setup = Setup::new(claude).await;
    let sim = sim().await;
    let mut client = setup.editor(&sim).await;
    let Some(tmux) = setup.interactive().await else {
        return;
    };
    let (first, second) = (
        setup.project().join("first"),
        setup.project().join("second"),
    );
    tmux.type_line(&format!(
        "RUN: touch {} ||| touch {}",
        first.display(),
        second.display()
    ))
    .await;
    let ask = client.next_method("askQuestions/ask").await;
    let choices = ask["params"]["permission"]["choices"].as_array().unwrap();
    assert_eq!(choices[0]["id"], "allow-once", "{ask}");
    let mode = choices
        .iter()
        .find(|c| c["label"].as_str().unwrap().contains("\"setMode\""))
        .unwrap_or_else(|| panic!("{ask}"));
    let label = mode["label"].as_str().unwrap();
    assert!(
        label.starts_with("Broad: allow, and accept every file edit in this session — stores "),
        "{label}"
    );
    let exact: Value = serde_json::from_str(label.split(" — stores ").nth(1).unwrap()).unwrap();
    assert_eq!(
        exact,
        json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
    );
    assert_ne!(
        choices[1]["id"], mode["id"],
        "never the first always: {ask}"
    );
    tmux.wait_for("Do you want to proceed?").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": mode["id"]}),
        )
        .await;
    tmux.wait_for("accept edits on").await;
    wait_for(|| first.exists() && second.exists()).await;
    // Nothing more was asked, and no rule was written anywhere.
    assert_eq!(
        client.next_method("askQuestions/resolved").await["params"]["here"],
        true
    );
    client.expect_quiet(Duration::from_millis(500)).await;
    assert!(!setup.project().join(".claude/settings.local.json").exists());
    assert!(client.shutdown().await.success());
}
