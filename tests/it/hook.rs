//! `ask-lsp hook claude` against a running ask-lsp (LSP server or `watch`):
//! the hook input goes over the per-user socket, the editor's decision comes
//! back in Claude Code's hook format, and every failure decides nothing.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// A fresh `$XDG_RUNTIME_DIR`: each test's instances and hooks meet only there.
struct Runtime(tempfile::TempDir);

impl Runtime {
    fn new() -> Runtime {
        Runtime(tempfile::tempdir().unwrap())
    }

    fn path(&self) -> &str {
        self.0.path().to_str().unwrap()
    }

    fn sockets(&self) -> PathBuf {
        self.0.path().join("ask-lsp")
    }

    fn socket_of(&self, pid: u32) -> PathBuf {
        self.sockets().join(format!("ask-lsp-{pid}.sock"))
    }

    /// An LSP server with the extension, following `sim`, its workspace `root`.
    async fn editor(&self, sim: &ask_sim::Sim, root: Option<&Path>) -> LspClient {
        self.editor_in(sim, root, None).await
    }

    /// [`Runtime::editor`] in the editor's language `locale`.
    async fn editor_in(
        &self,
        sim: &ask_sim::Sim,
        root: Option<&Path>,
        locale: Option<&str>,
    ) -> LspClient {
        self.editor_with(sim, root, locale, None).await
    }

    /// [`Runtime::editor_in`] with the workspace's `policy`.
    async fn editor_with(
        &self,
        sim: &ask_sim::Sim,
        root: Option<&Path>,
        locale: Option<&str>,
        policy: Option<Value>,
    ) -> LspClient {
        let mut client =
            LspClient::start(&[("XDG_RUNTIME_DIR", self.path()), ("ASK_LSP_HOOK", "1")]).await;
        let root_uri = root.map(|r| format!("file://{}", r.display()));
        let mut options = json!({"servers": [{"url": sim.url()}]});
        if let Some(policy) = policy {
            options["policy"] = policy;
        }
        client
            .request(
                "initialize",
                json!({"processId": null, "rootUri": root_uri, "capabilities": extension_caps(),
                       "initializationOptions": options, "locale": locale}),
            )
            .await;
        client.notify("initialized", json!({})).await;
        let socket = self.socket_of(client.child().id().unwrap());
        wait_for(|| socket.exists()).await;
        client
    }

    fn hook(&self, args: &[&str]) -> Child {
        self.run_in(&[], &[&["hook"], args].concat())
    }

    /// `ask-lsp ARGS` as [`Runtime::hook`] runs it, with only `env` for a
    /// language.
    fn run_in(&self, env: &[(&str, &str)], args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(args)
            .env("XDG_RUNTIME_DIR", self.path())
            .env_remove("ASK_LSP_LOG")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }
}

fn bash(command: &str, cwd: &str) -> Value {
    json!({
        "session_id": "5f0c", "transcript_path": "/nonexistent/t.jsonl", "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Make a file"},
    })
}

fn rules() -> Value {
    json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow", "destination": "localSettings"}])
}

/// Feeds `input` to a started hook and closes its stdin.
async fn feed(hook: &mut Child, input: &[u8]) {
    let mut stdin = hook.stdin.take().unwrap();
    // A hook that stops reading early (too large) closes the pipe: fine.
    let _ = stdin.write_all(input).await;
    drop(stdin);
}

/// The hook's stdout, stderr, and that it exited 0.
async fn finish(hook: Child) -> (String, String) {
    let out = tokio::time::timeout(Duration::from_secs(20), hook.wait_with_output())
        .await
        .expect("the hook exits")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn decision(stdout: &str) -> Value {
    let output: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    assert_eq!(
        output["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    output["hookSpecificOutput"]["decision"].clone()
}

#[tokio::test]
async fn the_editor_allows_once_rejects_with_a_message_and_allows_always() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("touch made", "/p").to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["server"], "hook");
    assert_eq!(params["kind"], "permission");
    assert_eq!(params["permission"]["command"], "touch made");
    assert_eq!(params["permission"]["title"], "Bash: Make a file");
    assert_eq!(
        params["permission"]["choices"],
        json!([{"id": "allow-once", "label": "Allow once", "effect": "allowOnce"},
               {"id": "reject", "label": "Reject", "effect": "rejectOnce"}])
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let (stdout, stderr) = finish(hook).await;
    assert_eq!(decision(&stdout), json!({"behavior": "allow"}));
    assert_eq!(stderr, "");
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["here"], true);

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("rm -rf /", "/p").to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "use make clean"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "deny", "message": "use make clean"})
    );

    let mut input = bash("touch again", "/p");
    input["permission_suggestions"] = rules();
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, input.to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let always = &ask["params"]["permission"]["choices"][1];
    assert_eq!(always["id"], "always-0");
    // In words, beside exactly what Claude Code will store.
    assert_eq!(
        always["label"],
        format!(
            "Allow, and always allow commands starting with `touch` in this project (your local settings) — stores {}",
            rules()[0]
        )
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "always-0"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "allow", "updatedPermissions": rules()})
    );
    // The agent server of the editor was never touched.
    assert!(sim.received().is_empty());
    assert!(client.shutdown().await.success());
}

/// Claude Code's suggestions for `touch x` (2.1.332: a directory and
/// acceptEdits for the session) are one choice each, in words: the mode
/// change is marked broad and comes after the narrow one, and choosing it
/// stores exactly that one update, never the directory with it.
#[tokio::test]
async fn each_claude_suggestion_is_its_own_choice_and_stores_exactly_itself() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;
    let directory = json!({"type": "addDirectories", "directories": ["/srv/data"],
                           "destination": "session"});
    let mode = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
    let mut input = bash("touch x", "/p");
    input["permission_suggestions"] = json!([mode, directory]);
    for (choice, stored) in [("always-0", &mode), ("always-1", &directory)] {
        let mut hook = runtime.hook(&["claude"]);
        feed(&mut hook, input.to_string().as_bytes()).await;
        let ask = client.next_method("askQuestions/ask").await;
        let choices = &ask["params"]["permission"]["choices"];
        assert_eq!(
            choices,
            &json!([
                {"id": "allow-once", "label": "Allow once", "effect": "allowOnce"},
                {"id": "always-1", "effect": "allowAlways", "label": format!(
                    "Allow, and let Claude Code use /srv/data in this session — stores {directory}")},
                {"id": "always-0", "effect": "allowAlways", "label": format!(
                    "Broad: allow, and accept every file edit in this session — stores {mode}")},
                {"id": "reject", "label": "Reject", "effect": "rejectOnce"},
            ])
        );
        client
            .respond(&ask["id"], json!({"outcome": "answered", "choice": choice}))
            .await;
        let (stdout, _) = finish(hook).await;
        assert_eq!(
            decision(&stdout),
            json!({"behavior": "allow", "updatedPermissions": [stored]})
        );
        client.next_method("askQuestions/resolved").await;
    }
    assert!(client.shutdown().await.success());
}

/// A Write is a unified diff of the project's file beside the new content,
/// its path in the title; a file outside the project is not read.
#[tokio::test]
async fn a_claude_write_is_a_diff_of_the_project_file_with_its_path() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let project = root.join("project");
    std::fs::create_dir(&project).unwrap();
    let mut client = runtime.editor(&sim, Some(&project)).await;
    let file = project.join("notes.txt");
    std::fs::write(&file, "keep\nold\n").unwrap();
    let outside = root.join("secret.txt");
    std::fs::write(&outside, "do not read\n").unwrap();
    let write = |path: &Path| {
        json!({"session_id": "5f0c", "cwd": "/elsewhere", "hook_event_name": "PermissionRequest",
               "tool_name": "Write", "tool_input": {"file_path": path, "content": "keep\nnew\n"}})
    };
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, write(&file).to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let path = file.display();
    let permission = &ask["params"]["permission"];
    assert_eq!(
        permission["title"],
        format!("Claude Code asks to edit {path}")
    );
    assert_eq!(
        permission["diff"],
        format!("Index: {path}\n--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n keep\n-old\n+new")
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    assert_eq!(
        decision(&finish(hook).await.0),
        json!({"behavior": "allow"})
    );

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, write(&outside).to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let permission = &ask["params"]["permission"];
    assert_eq!(
        permission["title"],
        format!(
            "Claude Code asks to edit {} (outside the project: only the new content is shown)",
            outside.display()
        )
    );
    let diff = permission["diff"].as_str().unwrap();
    assert!(diff.ends_with("@@ -0,0 +1,2 @@\n+keep\n+new"), "{diff}");
    assert!(!diff.contains("do not read"), "{diff}");
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    finish(hook).await;
    assert!(client.shutdown().await.success());
}

/// What ask-lsp says around a hook's request is in the editor's language;
/// the tool, the reason and the rules stay as the agent sent them.
#[tokio::test]
async fn a_hook_permission_is_worded_in_the_editors_language() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor_in(&sim, None, Some("zh-CN")).await;

    let mut input = bash("touch made", "/p");
    input["tool_input"] = json!({"command": "touch made"});
    input["permission_suggestions"] = rules();
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, input.to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["title"], "Claude Code 请求使用 Bash");
    assert_eq!(params["permission"]["title"], "Claude Code 请求使用 Bash");
    assert_eq!(
        params["permission"]["choices"][1]["label"],
        format!(
            "允许，并在本项目中（你的本地设置）始终允许 以 `touch` 开头的命令 — 存储 {}",
            rules()[0]
        )
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "always-0"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "allow", "updatedPermissions": rules()})
    );
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(
        resolved["params"]["message"],
        "已回答“Claude Code 请求使用 Bash”"
    );

    let codex = |tool: &str, input: Value| {
        json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/p",
               "hook_event_name": "PermissionRequest", "model": "m",
               "permission_mode": "default", "tool_name": tool, "tool_input": input})
    };
    for (input, title) in [
        (
            codex(
                "Bash",
                json!({"command": "rm -rf /p", "description": "Clean up"}),
            ),
            "Codex 请求运行命令：Clean up",
        ),
        (
            codex("Bash", json!({"command": "ls"})),
            "Codex 请求运行命令",
        ),
        (codex("NetworkAccess", json!({})), "Codex 请求访问网络"),
        (codex("WebFetch", json!({})), "Codex 请求使用 WebFetch"),
    ] {
        let mut hook = runtime.hook(&["codex"]);
        feed(&mut hook, input.to_string().as_bytes()).await;
        let ask = client.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["permission"]["title"], title);
        client
            .respond(&ask["id"], json!({"outcome": "rejected"}))
            .await;
        let (stdout, _) = finish(hook).await;
        assert_eq!(decision(&stdout)["behavior"], "deny");
        let resolved = client.next_method("askQuestions/resolved").await;
        assert_eq!(resolved["params"]["message"], format!("已拒绝“{title}”"));
    }
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn with_no_ask_lsp_running_the_hook_decides_nothing_at_once() {
    let runtime = Runtime::new();
    let started = Instant::now();
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("ls", "/p").to_string().as_bytes()).await;
    let (stdout, stderr) = finish(hook).await;
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("ask-lsp hook: no ask-lsp running"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Why the hook decided nothing is said on stderr, which Claude Code and
/// Codex show the person, in the person's language (`LANG`, or `--locale`
/// before or after the command); English as before. Nothing on stdout (the
/// agent's), exit 0.
#[tokio::test]
async fn why_the_hook_decided_nothing_is_said_in_the_persons_language() {
    let runtime = Runtime::new();
    // The socket directory, with no ask-lsp in it.
    std::fs::create_dir(runtime.sockets()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(runtime.sockets(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let zh = [("LANG", "zh_CN.UTF-8")];
    let english = [("LANG", "zh_CN.UTF-8"), ("LC_ALL", "en_US.UTF-8")];
    let request = bash("ls", "/p").to_string();
    let malformed = b"{\"tool_name\": \"Bash\"".as_slice();
    let cases = [
        (
            &zh[..],
            &["hook", "claude"][..],
            request.as_bytes(),
            "没有正在运行的 ask-lsp",
        ),
        (
            &[],
            &["hook", "codex", "--locale", "zh-CN"],
            request.as_bytes(),
            "没有正在运行的 ask-lsp",
        ),
        (
            &[],
            &["--locale", "zh-CN", "hook", "claude"],
            malformed,
            "钩子输入不是 JSON：EOF while parsing an object at line 1 column 20",
        ),
        (
            &zh,
            &["hook", "gemini"],
            b"{}".as_slice(),
            "不支持的代理 \"gemini\"（应为 claude、codex、qwen 或 copilot）",
        ),
        (
            &english,
            &["hook", "claude"],
            request.as_bytes(),
            "no ask-lsp running",
        ),
        (
            &[],
            &["hook", "codex"],
            malformed,
            "the hook input is not JSON: EOF while parsing an object at line 1 column 20",
        ),
    ];
    for (env, args, input, reason) in cases {
        let mut hook = runtime.run_in(env, args);
        feed(&mut hook, input).await;
        let (stdout, stderr) = finish(hook).await;
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(
            stderr,
            format!("ask-lsp hook: {reason}\n"),
            "{env:?} {args:?}"
        );
    }
}

#[tokio::test]
async fn a_stale_socket_is_removed_and_another_users_socket_is_not_spoken_to() {
    let runtime = Runtime::new();
    std::fs::create_dir(runtime.sockets()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(runtime.sockets(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // A pid that is surely dead: a child that has exited and been reaped.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let stale = runtime.socket_of(dead_pid);
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    assert!(stale.exists());

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("ls", "/p").to_string().as_bytes()).await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(stdout, "");
    assert!(!stale.exists(), "a dead process's socket is removed");

    // A listener whose process runs as another user (it binds as this one,
    // then drops to nobody before listening: SO_PEERCRED says nobody).
    if !running_as_root() {
        return; // only root can become another user
    }
    let received = runtime.0.path().join("received");
    // Named by its own pid, as an instance would be.
    let mut other = Command::new("python3")
        .arg("-c")
        .arg(
            "import os, socket, sys\n\
             path = sys.argv[1] % os.getpid()\n\
             s = socket.socket(socket.AF_UNIX)\n\
             s.bind(path); os.chmod(path, 0o600); os.setgid(65534); os.setuid(65534); s.listen(1)\n\
             print('listening', flush=True)\n\
             s.settimeout(5); got = b''\n\
             try:\n\
             \x20   c, _ = s.accept(); c.settimeout(3)\n\
             \x20   while (b := c.recv(65536)): got += b\n\
             except OSError: pass\n\
             open(sys.argv[2], 'w').write(str(len(got)))\n",
        )
        .arg(runtime.sockets().join("ask-lsp-%d.sock"))
        .arg(&received)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = [0u8; 10];
    other
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut line)
        .await
        .unwrap();
    // nobody cannot write `received` in a root-only temp dir: make it so.
    std::fs::set_permissions(runtime.0.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("ls", "/p").to_string().as_bytes()).await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(stdout, "");
    tokio::time::timeout(Duration::from_secs(10), other.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&received).unwrap(),
        "0",
        "nothing is sent to another user's listener"
    );
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[tokio::test]
async fn a_huge_or_malformed_input_decides_nothing_and_shows_nothing() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;

    let huge = bash(&"x".repeat(10 << 20), "/p").to_string();
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, huge.as_bytes()).await;
    let (stdout, stderr) = finish(hook).await;
    assert_eq!(stdout, "");
    assert!(stderr.contains("over 1048576 bytes"), "{stderr}");

    for bad in [
        b"{\"tool_name\": \"Bash\"".as_slice(),
        b"",
        // JSON, but not a PermissionRequest: ask-lsp refuses it.
        br#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}"#,
        br#"[1, 2]"#,
    ] {
        let mut hook = runtime.hook(&["claude"]);
        feed(&mut hook, bad).await;
        let (stdout, stderr) = finish(hook).await;
        assert_eq!(stdout, "", "{bad:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}

/// Input ask-lsp refuses (another hook event, not a Codex request): the
/// hook says why in the person's language, as ask-lsp said it in English.
#[tokio::test]
async fn why_ask_lsp_refused_is_said_in_the_persons_language() {
    let runtime = Runtime::new();
    let sim = sim().await;
    // The editor speaks English; the hook's line follows the hook's locale.
    let mut client = runtime.editor(&sim, None).await;
    let other_event =
        br#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}"#.as_slice();
    let not_codex = br#"{"hook_event_name": "PermissionRequest"}"#.as_slice();
    let zh = [("LANG", "zh_CN.UTF-8")];
    for (env, agent, input, reason) in [
        (
            &zh[..],
            "claude",
            other_event,
            "ask-lsp 拒绝了该请求：钩子事件 \"PreToolUse\" 不是 PermissionRequest",
        ),
        (
            &[][..],
            "claude",
            other_event,
            "ask-lsp refused the request: hook event \"PreToolUse\" is not PermissionRequest",
        ),
        (
            &zh[..],
            "codex",
            not_codex,
            "ask-lsp 拒绝了该请求：不是 Codex 的 PermissionRequest：missing field `session_id`",
        ),
        (
            &[][..],
            "codex",
            not_codex,
            "ask-lsp refused the request: not a Codex PermissionRequest: missing field `session_id`",
        ),
    ] {
        let mut hook = runtime.run_in(env, &["hook", agent]);
        feed(&mut hook, input).await;
        let (stdout, stderr) = finish(hook).await;
        assert_eq!(stdout, "");
        assert!(
            stderr.starts_with(&format!("ask-lsp hook: {reason}")),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn a_hook_killed_or_timing_out_withdraws_its_prompt() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("sleep 1", "/p").to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    hook.kill().await.unwrap();
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["here"], false);
    assert_eq!(resolved["params"]["pending"], 0);

    let started = Instant::now();
    let mut hook = runtime.hook(&["claude", "--timeout-ms", "700"]);
    feed(&mut hook, bash("sleep 2", "/p").to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let (stdout, stderr) = finish(hook).await;
    assert_eq!(stdout, "");
    assert!(stderr.contains("no decision within"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], ask["id"]);
    // An answer after the hook left is not sent anywhere.
    let late = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": ask["params"]["key"], "choice": "allow-once"}]}),
        )
        .await;
    let key = ask["params"]["key"].as_str().unwrap();
    assert_eq!(
        late["error"]["message"],
        json!(format!("no pending prompt {key}")),
        "{late}"
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn the_instance_whose_workspace_holds_the_agents_directory_is_asked() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let mut first = runtime.editor(&sim, Some(one.path())).await;
    let mut second = runtime.editor(&sim, Some(two.path())).await;

    for (cwd, to_first) in [
        (one.path().join("src"), true),
        (two.path().to_owned(), false),
    ] {
        let (asked, quiet) = match to_first {
            true => (&mut first, &mut second),
            false => (&mut second, &mut first),
        };
        let cwd = cwd.to_str().unwrap();
        let mut hook = runtime.hook(&["claude"]);
        feed(&mut hook, bash("ls", cwd).to_string().as_bytes()).await;
        let ask = asked.next_method("askQuestions/ask").await;
        assert_eq!(ask["params"]["permission"]["command"], "ls");
        asked
            .respond(
                &ask["id"],
                json!({"outcome": "answered", "choice": "allow-once"}),
            )
            .await;
        let (stdout, _) = finish(hook).await;
        assert_eq!(decision(&stdout), json!({"behavior": "allow"}));
        asked.next_method("askQuestions/resolved").await;
        quiet.expect_quiet(Duration::from_millis(200)).await;
    }
    assert!(first.shutdown().await.success());
    // An instance that exits removes its socket.
    let socket = runtime.socket_of(second.child().id().unwrap());
    assert!(second.shutdown().await.success());
    assert!(!socket.exists());
}

#[tokio::test]
async fn watch_answers_a_hook_in_its_terminal() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut watch = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &sim.url()])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let socket = runtime.socket_of(watch.id().unwrap());
    wait_for(|| socket.exists()).await;
    let mut hook = runtime.hook(&["claude"]);
    feed(
        &mut hook,
        bash("touch from-watch", "/p").to_string().as_bytes(),
    )
    .await;
    let mut stdout = watch.stdout.take().unwrap();
    let mut shown = String::new();
    let mut buf = [0u8; 4096];
    while !shown.contains("> ") || !shown.contains("touch from-watch") {
        let n = tokio::time::timeout(Duration::from_secs(10), stdout.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("watch showed: {shown}"))
            .unwrap();
        assert!(n > 0, "{shown}");
        shown.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let mut stdin = watch.stdin.take().unwrap();
    stdin.write_all(b"1\n").await.unwrap();
    let (out, _) = finish(hook).await;
    assert_eq!(decision(&out), json!({"behavior": "allow"}), "{shown}");
    drop(stdin);
    tokio::time::timeout(Duration::from_secs(10), watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(!socket.exists());
}

/// Every editor on the workspace is asked, the most recent first: its rule
/// decides without the others being asked at all (20 woken instances
/// delayed the answer on busy cores, #47; fails on the old code, where every
/// editor got the request at once). What it leaves to a person reaches the
/// others too; the first answer, in any of them, withdraws it from the rest.
#[tokio::test]
async fn every_editor_is_asked_the_most_recent_first_and_the_first_answer_withdraws_the_others() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let mut older = runtime.editor(&sim, Some(&root)).await;
    let policy =
        json!({"permissions": [{"action": "Bash", "match": "touch *", "decision": "allow"}]});
    let mut recent = runtime
        .editor_with(&sim, Some(&root), None, Some(policy))
        .await;
    let cwd = root.to_str().unwrap();

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("touch made", cwd).to_string().as_bytes()).await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(decision(&stdout)["behavior"], "allow");

    // Left to a person by the recent one's rules: the older one is asked
    // too, and this is the first request it ever got.
    let sent_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, bash("rm made", cwd).to_string().as_bytes()).await;
    let asked = older.next_method("askQuestions/ask").await;
    assert_eq!(
        asked["params"]["permission"]["command"], "rm made",
        "{asked}"
    );
    let shown_recent = recent.next_method("askQuestions/ask").await;
    assert_eq!(shown_recent["params"]["permission"]["command"], "rm made");
    older
        .respond(
            &asked["id"],
            json!({"outcome": "rejected", "message": "no"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "deny", "message": "no"})
    );
    let cancel = recent.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], shown_recent["id"]);
    let resolved = recent.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["here"], false);
    // What the older one counts of the requests that reached it (its
    // description file, rewritten after its decision): this one alone.
    let description = runtime
        .sockets()
        .join(format!("ask-lsp-{}.json", older.child().id().unwrap()));
    let read = || -> Value {
        std::fs::read(&description)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    };
    wait_for(|| {
        read()["lastRequestMs"]
            .as_u64()
            .is_some_and(|at| at >= sent_ms)
    })
    .await;
    assert_eq!(read()["requests"], 1, "{}", read());
    assert!(older.shutdown().await.success());
    assert!(recent.shutdown().await.success());
}

#[tokio::test]
async fn a_starting_instance_removes_the_sockets_of_dead_ones() {
    use std::os::unix::fs::PermissionsExt;
    let runtime = Runtime::new();
    std::fs::create_dir(runtime.sockets()).unwrap();
    std::fs::set_permissions(runtime.sockets(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let stale = runtime.socket_of(dead_pid);
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let info = runtime.sockets().join(format!("ask-lsp-{dead_pid}.json"));
    std::fs::write(&info, "{}").unwrap();
    let sim = sim().await;
    let client = runtime.editor(&sim, None).await;
    assert!(!stale.exists() && !info.exists());
    assert!(client.shutdown().await.success());
}

/// Defence in depth: with the directory and socket opened to everyone, a
/// connection from another user is still refused by its SO_PEERCRED.
#[tokio::test]
async fn a_connection_from_another_user_is_refused_even_through_open_modes() {
    use std::os::unix::fs::PermissionsExt;
    if !running_as_root() {
        return; // only root can become another user
    }
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;
    let socket = runtime.socket_of(client.child().id().unwrap());
    for (path, mode) in [
        (runtime.0.path(), 0o777),
        (runtime.sockets().as_path(), 0o777),
        (socket.as_path(), 0o666),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let request = json!({"agent": "claude", "input": bash("touch /tmp/x", "/p")}).to_string();
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import os, socket, sys\n\
             os.setgid(65534); os.setuid(65534)\n\
             s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n\
             s.settimeout(5)\n\
             try:\n\
             \x20   s.sendall(sys.argv[2].encode() + b'\\n'); got = s.recv(65536)\n\
             except (ConnectionResetError, BrokenPipeError): got = b''\n\
             print(repr(got))\n",
        )
        .arg(&socket)
        .arg(&request)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Closed without an answer, and nothing shown.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "b''");
    client.expect_quiet(Duration::from_millis(300)).await;
    assert!(
        client
            .logs()
            .contains("a connection from another user was refused")
    );
    assert!(client.shutdown().await.success());
}

/// `ask-lsp status` says where hooks look, which instance listens there and
/// when a hook request last reached it.
#[tokio::test]
async fn status_says_whether_hooks_reach_this_ask_lsp() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let status = || async {
        let out = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(["status", "--hooks", "--url", &sim.url()])
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env_remove("ASK_LSP_LOG")
            .output()
            .await
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let json_status = || async {
        let out = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(["status", "--json", "--hooks", "--url", &sim.url()])
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env_remove("ASK_LSP_LOG")
            .output()
            .await
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["hooks"].clone()
    };
    let text = status().await;
    assert!(text.contains("no ask-lsp listens for hooks"), "{text}");
    // `--hooks` alone speaks of hooks only: no default server probed.
    let out = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["status", "--hooks"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("ASK_LSP_URL", "http://127.0.0.1:9")
        .env_remove("ASK_LSP_LOG")
        .output()
        .await
        .unwrap();
    let alone = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(alone.starts_with("hooks"), "{alone}");
    assert!(!alone.contains("127.0.0.1:9"), "{alone}");
    assert!(out.status.success(), "{out:?}");

    let root = tempfile::tempdir().unwrap();
    let mut client = runtime.editor(&sim, Some(root.path())).await;
    let pid = client.child().id().unwrap();
    let hooks = json_status().await;
    assert_eq!(hooks["listeners"][0]["pid"], pid, "{hooks}");
    assert_eq!(hooks["listeners"][0]["requests"], 0, "{hooks}");
    assert_eq!(
        hooks["listeners"][0]["socket"],
        runtime.socket_of(pid).to_str().unwrap()
    );
    let text = status().await;
    assert!(
        text.contains(&format!(
            "{} (pid {pid}, workspace {}): no hook request has reached it yet",
            runtime.socket_of(pid).display(),
            root.path().display()
        )),
        "{text}"
    );

    let mut hook = runtime.hook(&["codex"]);
    let input = json!({"session_id": "s", "turn_id": "t", "transcript_path": null,
                       "cwd": root.path(), "hook_event_name": "PermissionRequest", "model": "m",
                       "permission_mode": "default", "tool_name": "Bash",
                       "tool_input": {"command": "make", "description": "Build"}});
    feed(&mut hook, input.to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    // Written down while the prompt waits for the person (not before the
    // decision: the hook's time with many editors, docs/hook.md).
    let deadline = Instant::now() + Duration::from_secs(30);
    while json_status().await["listeners"][0]["requests"] != 1 {
        assert!(Instant::now() < deadline, "{}", json_status().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(decision(&stdout), json!({"behavior": "allow"}));
    let hooks = json_status().await;
    assert_eq!(hooks["listeners"][0]["requests"], 1, "{hooks}");
    assert_eq!(hooks["listeners"][0]["lastAgent"], "codex", "{hooks}");
    let text = status().await;
    assert!(
        text.contains("last hook request 0 s ago (codex), 1 in all")
            || text.contains("last hook request 1 s ago (codex), 1 in all"),
        "{text}"
    );
    assert!(client.shutdown().await.success());
}

/// Claude's `AskUserQuestion` through the hook: its questions in the editor,
/// the answers back in `updatedInput` (the tool's input plus `answers` keyed
/// by question text), a refusal as `deny` with the person's words.
#[tokio::test]
async fn claudes_questions_are_asked_and_answered_in_updated_input() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;
    let tool_input = json!({"questions": [
        {"question": "Which database?\u{202e}", "header": "Database", "multiSelect": false,
         "options": [{"label": "SQLite", "description": "One file"},
                     {"label": "Postgres", "description": "A server"}]},
        {"question": "Which checks?", "header": "Checks", "multiSelect": true,
         "options": [{"label": "Lint", "description": "clippy"},
                     {"label": "Tests", "description": "cargo test"}]}]});
    let input = json!({"session_id": "q1", "cwd": "/p", "hook_event_name": "PermissionRequest",
                       "tool_name": "AskUserQuestion", "tool_input": tool_input});

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, input.to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    let questions = &ask["params"]["questions"];
    assert_eq!(questions[0]["header"], "Database", "{ask}");
    // Agent text is shown neutralised; the answer goes back under the raw text.
    assert!(
        !questions[0]["question"]
            .as_str()
            .unwrap()
            .contains('\u{202e}')
    );
    assert_eq!(questions[0]["options"][0]["description"], "One file");
    assert_eq!(
        (
            questions[0]["multiple"].clone(),
            questions[1]["multiple"].clone()
        ),
        (json!(false), json!(true))
    );
    assert_eq!(questions[1]["custom"], true);
    client
        .answer(&ask, json!([["My own"], ["Lint", "Tests"]]))
        .await;
    let (stdout, _) = finish(hook).await;
    let mut expected = tool_input.clone();
    expected["answers"] =
        json!({"Which database?\u{202e}": "My own", "Which checks?": "Lint, Tests"});
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "allow", "updatedInput": expected})
    );

    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, input.to_string().as_bytes()).await;
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "rejected", "message": "Not now"}),
        )
        .await;
    let (stdout, _) = finish(hook).await;
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "deny", "message": "Not now"})
    );
    assert!(client.shutdown().await.success());
}

/// Claude asks one thing at a time per session: a newer request of the
/// session withdraws the older prompt (its hook decides nothing, Claude's
/// own dialog has it), and Claude's `PostToolUse` for the call withdraws its
/// prompt; both print nothing.
#[tokio::test]
async fn a_prompt_claude_no_longer_waits_for_leaves_the_editor_at_once() {
    let runtime = Runtime::new();
    let sim = sim().await;
    let mut client = runtime.editor(&sim, None).await;

    let mut older = runtime.hook(&["claude"]);
    feed(&mut older, bash("touch a", "/p").to_string().as_bytes()).await;
    let first = client.next_method("askQuestions/ask").await;
    let mut newer = runtime.hook(&["claude"]);
    feed(&mut newer, bash("touch b", "/p").to_string().as_bytes()).await;
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], first["id"]);
    let (stdout, _) = finish(older).await;
    assert_eq!(stdout, "");
    let second = client.next_method("askQuestions/ask").await;
    assert_eq!(second["params"]["permission"]["command"], "touch b");

    // Another session's request leaves it be.
    let mut other = bash("touch c", "/p");
    other["session_id"] = json!("other");
    let mut elsewhere = runtime.hook(&["claude"]);
    feed(&mut elsewhere, other.to_string().as_bytes()).await;

    // Claude ran it (answered in its terminal): its PostToolUse says so.
    let mut ran = bash("touch b", "/p");
    ran["hook_event_name"] = json!("PostToolUse");
    ran["tool_use_id"] = json!("toolu_2");
    ran["tool_response"] = json!({"stdout": ""});
    let mut news = runtime.hook(&["claude"]);
    feed(&mut news, ran.to_string().as_bytes()).await;
    let (stdout, stderr) = finish(news).await;
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
    let cancel = client.next_method("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], second["id"]);
    let (stdout, _) = finish(newer).await;
    assert_eq!(stdout, "");
    let third = client.next_method("askQuestions/ask").await;
    assert_eq!(third["params"]["permission"]["command"], "touch c");
    client
        .respond(
            &third["id"],
            json!({"outcome": "answered", "choice": "allow-once"}),
        )
        .await;
    let (stdout, _) = finish(elsewhere).await;
    assert_eq!(decision(&stdout), json!({"behavior": "allow"}));
    assert!(client.shutdown().await.success());
}

/// A policy answers Claude's questions as it answers OpenCode's: scoped to
/// the agent `claude`, by the question's text.
#[tokio::test]
async fn a_policy_answers_claudes_questions() {
    let runtime = Runtime::new();
    let sim = sim().await;
    // A workspace's policy decides only what comes from a directory it
    // holds (hook_socket.rs shows the other side).
    let project = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(project.path()).unwrap();
    let policy = json!({"agents": {"claude": {"mode": "auto",
                        "rules": [{"match": "database", "answers": ["Postgres"]}]}}});
    let client = runtime
        .editor_with(&sim, Some(&project), None, Some(policy))
        .await;
    let tool_input = json!({"questions": [{"question": "Which database?", "header": "Database",
        "multiSelect": false, "options": [{"label": "SQLite", "description": ""},
                                          {"label": "Postgres", "description": ""}]}]});
    let input = json!({"session_id": "q1", "cwd": project, "hook_event_name": "PermissionRequest",
                       "tool_name": "AskUserQuestion", "tool_input": tool_input});
    let mut hook = runtime.hook(&["claude"]);
    feed(&mut hook, input.to_string().as_bytes()).await;
    let (stdout, _) = finish(hook).await;
    let mut expected = tool_input.clone();
    expected["answers"] = json!({"Which database?": "Postgres"});
    assert_eq!(
        decision(&stdout),
        json!({"behavior": "allow", "updatedInput": expected})
    );
    assert!(client.shutdown().await.success());
}
