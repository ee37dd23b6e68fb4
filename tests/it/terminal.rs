//! Terminal mode as a person runs it: the real binary with typed input.

use std::process::Stdio;

use crate::common::*;
use ask_sim::PermissionAsk;
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

/// In a terminal, a server lost while a prompt waits is said as `!` lines,
/// each reason once (closed, then refused, is two reasons), never again as a
/// log line written into the `> ` prompt.
#[tokio::test]
async fn in_a_terminal_a_lost_server_is_one_line_and_no_log_line() {
    let sim = sim().await;
    sim.ask(None, database());
    let mut typist = Typist::in_terminal(&["watch", "--url", &sim.url()]);
    typist.until("> ", 1).await;
    sim.stop();
    typist.until("! default: ", 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    typist.type_line("\x04").await; // Ctrl-D
    let _ = tokio::time::timeout(WAIT, typist.child.wait()).await;
    let screen = typist.out();
    assert!(!screen.contains("WARN"), "{screen}");
    let said: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with("! default: "))
        .collect();
    let mut once = said.clone();
    once.sort_unstable();
    once.dedup();
    assert!(!said.is_empty() && once.len() == said.len(), "{screen}");
}

#[tokio::test]
async fn watch_writes_no_log_lines_unless_asked() {
    let (out, err) = watch_refused(&[]).await;
    assert!(out.contains("connection refused"), "{out}");
    assert_eq!(err, "", "no log line beside the `!` line");
    let (_, err) = watch_refused(&[("ASK_LSP_LOG", "warn")]).await;
    assert!(err.contains("WARN"), "{err}");
}

/// The `!` line in the person's language: the operating system's words
/// and the command to run stay as they are.
#[tokio::test]
async fn watch_names_an_unreachable_server_in_chinese() {
    let (out, _) = watch_refused(&[("LC_ALL", "zh_CN.UTF-8")]).await;
    let line = out.lines().find(|l| l.starts_with("! ")).expect("a ! line");
    assert!(
        line.starts_with("! default: 无法连接 http://127.0.0.1:"),
        "{out}"
    );
    assert!(
        line.ends_with(" 上的 OpenCode：connection refused — `opencode serve` 是否在那里运行？"),
        "{out}"
    );
}

/// `watch` as a person types at it: stdout gathered as it comes, lines
/// written once the screen asks for them.
struct Typist {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    out: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Typist {
    fn start(args: &[&str]) -> Typist {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
        command.args(args);
        Typist::spawn(command)
    }

    /// In a terminal (`script` gives it one): stdout and stderr both on it,
    /// as a person sees them.
    fn in_terminal(args: &[&str]) -> Typist {
        let mut line = env!("CARGO_BIN_EXE_ask-lsp").to_owned();
        for arg in args {
            line.push(' ');
            line.push_str(arg);
        }
        let mut command = Command::new("script");
        command.args(["-q", "-e", "-c", &line, "/dev/null"]);
        Typist::spawn(command)
    }

    fn spawn(mut command: Command) -> Typist {
        use tokio::io::AsyncReadExt;
        let mut child = command
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .env_remove("ASK_LSP_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = out.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buffer).await {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Typist { child, stdin, out }
    }

    fn out(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// Waits until the screen shows `shown` (`count` times in all).
    async fn until(&self, shown: &str, count: usize) {
        let out = self.out.clone();
        tokio::time::timeout(WAIT, async {
            while out.lock().unwrap().matches(shown).count() < count {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("never showed {shown:?}:\n{}", self.out()));
    }

    async fn type_line(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
}

/// A typo close to an option asks before anything is sent; `1 3` picks
/// two; the screen says what waits behind the current prompt; an allowed
/// permission says what was decided; good news carries no `!`.
#[tokio::test]
async fn watch_asks_about_typos_counts_what_waits_and_says_what_was_allowed() {
    let sim = sim().await;
    let database = sim.ask(None, database());
    let checks = sim.ask(None, checks());
    let mut typist = Typist::start(&["watch", "--url", &sim.url()]);
    typist.until("+ 1 prompt waiting after this one", 1).await;

    typist.type_line("postgre").await;
    typist
        .until(
            "did you mean 1. Postgres? 1 picks it; =postgre sends what you typed",
            1,
        )
        .await;
    assert_eq!(sim.received(), vec![], "a typo is not sent");
    typist.type_line("sqlite").await;
    typist.until("✓ Answered \"Database\"", 1).await;

    let first = sim.ask_permission(PermissionAsk::bash("ls")).unwrap();
    sim.ask_permission(PermissionAsk::bash("pwd")).unwrap();
    typist.until("+ 2 prompts waiting after this one", 1).await;
    typist.type_line("1 3").await;
    typist.until("✓ Answered \"Checks\"", 1).await;
    assert_eq!(
        sim.received(),
        vec![
            reply(&database.id, serde_json::json!([["SQLite"]])),
            reply(&checks.id, serde_json::json!([["Unit", "E2E"]])),
        ]
    );

    typist.until("(1 prompt waiting after this one)", 1).await;
    let out = typist.out();
    let allow_once = out
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_suffix(". Allow once"))
        .expect("an Allow once choice");
    typist.type_line(allow_once).await;
    typist.until("✓ Allowed once \"Run ls\"", 1).await;
    assert_eq!(
        sim.received().last(),
        Some(&Received::Permission {
            id: first.id,
            reply: "once".into(),
            message: None
        })
    );
    drop(typist.stdin);
    let status = tokio::time::timeout(WAIT, typist.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    // The exit can come before the reader task has taken the last line.
    let _ = tokio::time::timeout(WAIT, async {
        while !typist.out.lock().unwrap().contains("input closed") {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    let out = typist.out.lock().unwrap().clone();
    assert!(
        out.contains("· default: OpenCode 1.x at ") && !out.lines().any(|l| l.starts_with('!')),
        "{out}"
    );
    assert!(
        out.ends_with(
            "ask-lsp: input closed; 1 prompt left unanswered (still pending on the server)\n"
        ),
        "{out}"
    );
}

/// A typed answer the question cannot take is refused as it is typed: the
/// same question is asked again, the answers before it kept, and one reply
/// leaves once the last is right.
#[tokio::test]
async fn watch_refuses_a_bad_answer_at_once_and_keeps_the_earlier_ones() {
    let sim = sim().await;
    let mut both = database();
    both.extend(questions(serde_json::json!([
        {"question": "Why?", "header": "Why", "options": []}
    ])));
    let request = sim.ask(None, both);
    let mut typist = Typist::start(&["watch", "--url", &sim.url()]);
    typist.until("(1/2)", 1).await;
    typist.type_line("2").await;
    typist.until("(2/2)", 1).await;
    typist.type_line(&"x".repeat(8_001)).await;
    typist
        .until("  typed answer is 8001 characters long (at most 8000)", 1)
        .await;
    typist.until("(2/2)", 2).await;
    assert_eq!(sim.received(), vec![], "nothing is sent before it is whole");
    typist.type_line("because").await;
    typist.until("✓ Answered \"Database (+1 more)\"", 1).await;
    assert_eq!(
        sim.received(),
        vec![reply(
            &request.id,
            serde_json::json!([["SQLite"], ["because"]])
        )]
    );
    assert!(!typist.out().contains("not sent"), "{}", typist.out());
}
