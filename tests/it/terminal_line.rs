//! `watch` in a terminal as a person meets it: the session a prompt comes
//! from by its title, and the prompt line's editing keys. The real binary in
//! a pseudo-terminal (`script` gives it one), keys typed as bytes.

use crate::common;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use crate::common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// `ask-lsp` under `script`: what it writes to its terminal, and its keyboard.
struct Terminal {
    child: tokio::process::Child,
    keys: tokio::process::ChildStdin,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    fn start(args: &[&str]) -> Terminal {
        let mut line = env!("CARGO_BIN_EXE_ask-lsp").to_owned();
        for arg in args {
            line.push(' ');
            line.push_str(arg);
        }
        Terminal::shell(&line)
    }

    /// A shell command line in the terminal.
    fn shell(line: &str) -> Terminal {
        let mut command = Command::new("script");
        // A shell started with Ctrl-C ignored may not trap it (POSIX), and
        // a runner started in the background of a script has it ignored:
        // the terminal starts as a person's does, with the default.
        // SAFETY: only resets a signal disposition between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = command
            .args(["-q", "-e", "-c", line, "/dev/null"])
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .env_remove("ASK_LSP_LOG")
            // English, as the assertions are.
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let keys = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let sink = screen.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 65536];
            while let Ok(n @ 1..) = stdout.read(&mut buffer).await {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Terminal {
            child,
            keys,
            screen,
        }
    }

    fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits until the screen shows `shown` `count` times in all.
    async fn until(&self, shown: &str, count: usize) {
        let screen = self.screen.clone();
        tokio::time::timeout(WAIT, async {
            while screen.lock().unwrap().matches(shown).count() < count {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("never showed {shown:?}:\n{}", self.screen()));
    }

    async fn keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).await.unwrap();
        self.keys.flush().await.unwrap();
    }
}

/// What OpenCode sends when a session is created or changes (its title
/// among the rest), as the real 1.18.33 writes it.
fn session_updated(sim: &Sim, session: &str, title: &str) {
    sim.emit(
        "session.updated",
        json!({"sessionID": session, "info": {"id": session, "slug": "calm-nebula",
            "projectID": "global", "directory": "/sim/project", "title": title, "agent": "build",
            "version": "1.18.33", "time": {"created": 1, "updated": 2}}}),
    );
}

/// Waits until ask-lsp has read the server's first listing: events from
/// then on reach it after the listing, not raced by it.
async fn connected(client: &mut LspClient) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while client.status().await["servers"][0]["connected"] != true {
        assert!(tokio::time::Instant::now() < deadline, "never connected");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A title longer than anyone reads, with an escape that would retitle the
/// terminal and a right-to-left override.
fn hostile_title() -> String {
    format!("\u{1b}]0;pwned\u{7}\u{202e}gol{}", "x".repeat(1 << 20))
}

#[tokio::test]
async fn watch_names_the_session_by_its_title_shown_neutralised_and_bounded() {
    let sim = sim().await;
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("· default: OpenCode", 1).await;
    session_updated(&sim, "ses_titled", "Fix the login bug");
    session_updated(&sim, "ses_hostile", &hostile_title());
    sim.ask(Some("ses_titled"), database());
    terminal
        .until(
            "── Question from default · /sim/project (session “Fix the login bug” (ses_titled)) ──",
            1,
        )
        .await;
    terminal.keys("1\r").await;
    sim.ask(Some("ses_hostile"), database());
    terminal
        .until("(session “␛]0;pwned␇⟨U+202E⟩golxxx", 1)
        .await;
    let screen = terminal.screen();
    let header = screen
        .lines()
        .find(|l| l.contains("ses_hostile"))
        .expect("the header");
    assert!(
        header.contains("more characters)"),
        "the cut is marked: {header}"
    );
    assert!(header.chars().count() < 200, "{header}");
    assert!(!screen.contains("\u{1b}]0;"), "no raw OSC");
    assert!(!screen.contains('\u{202e}'));
    terminal.keys("\u{4}").await;
    let _ = tokio::time::timeout(WAIT, terminal.child.wait()).await;
}

/// A prompt pending before `watch` started: its session's title is asked
/// for once (`GET /session/{id}`), and not again after a reconnect.
#[tokio::test]
async fn watch_names_a_session_titled_before_it_started() {
    let sim = sim().await;
    sim.title_session("ses_before", "Set up CI");
    sim.ask(Some("ses_before"), database());
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal
        .until("(session “Set up CI” (ses_before)) ──", 1)
        .await;
    let count = |sim: &Sim, start: &str| {
        sim.requests()
            .iter()
            .filter(|r| r.starts_with(start))
            .count()
    };
    let listed = count(&sim, "GET /question");
    sim.drop_streams();
    wait_for(|| count(&sim, "GET /question") > listed).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        count(&sim, "GET /session/ses_before"),
        1,
        "{:?}",
        sim.requests()
    );
    terminal.keys("\u{4}").await;
    let _ = tokio::time::timeout(WAIT, terminal.child.wait()).await;
}

#[tokio::test]
async fn the_extension_names_the_session_by_its_title() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    connected(&mut client).await;
    session_updated(&sim, "ses_titled", "Fix the login bug");
    session_updated(&sim, "ses_hostile", &hostile_title());
    sim.ask(Some("ses_titled"), database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["origin"],
        json!({"toolCallID": ask["params"]["origin"]["toolCallID"], "agent": "build",
               "sessionTitle": "Fix the login bug"})
    );
    client.answer(&ask, json!([["Postgres"]])).await;
    sim.ask(Some("ses_hostile"), database());
    let ask = client.next_method("askQuestions/ask").await;
    let title = ask["params"]["origin"]["sessionTitle"].as_str().unwrap();
    assert!(title.starts_with("␛]0;pwned␇⟨U+202E⟩golxxx"), "{title}");
    assert!(title.ends_with("more characters)"), "{title}");
    assert!(title.chars().count() < 200, "{title}");
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn a_plain_prompt_names_the_session_by_its_title() {
    let sim = sim().await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(plain_caps(), json!({"servers": [{"url": sim.url()}]}))
        .await;
    connected(&mut client).await;
    session_updated(&sim, "ses_titled", "Fix the login bug");
    sim.ask(Some("ses_titled"), database());
    let shown = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        shown["params"]["message"],
        "[Database] Which database?\n  Postgres: Relational\n  SQLite: Embedded\n— session “Fix the login bug” (ses_titled)"
    );
}

/// A typo fixed with the editing keys is sent fixed; Ctrl-L shows the
/// question again with what is typed; nothing of the keys reaches the
/// screen as `^L`; Ctrl-D still ends `watch` and gives the terminal back.
#[tokio::test]
async fn the_prompt_line_edits_in_place_and_ctrl_l_redraws_the_question() {
    let sim = sim().await;
    let database = sim.ask(None, database());
    let asked = sim.ask(None, checks());
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("\n> ", 1).await;
    // "sqlx", backspace, Ctrl-W, "Sqlit", Left, "e" missing at the end…
    terminal.keys("sqlx\x7f\x17Sqlit\x1b[D\x1b[Ce\r").await;
    terminal.until("✓ Answered \"Database\"", 1).await;
    assert_eq!(
        sim.received(),
        vec![reply(&database.id, json!([["SQLite"]]))]
    );
    // Ctrl-U, Home and Right; then Ctrl-L: the question drawn again, the
    // line kept.
    terminal.keys("9\x15").await;
    terminal.keys("1 3\x1b[H\x1b[C,").await;
    terminal.keys("\x0c").await;
    terminal.until("\x1b[H\x1b[2J── Question from", 1).await;
    terminal.until("[Checks] Which checks?", 2).await;
    terminal.keys("\r").await;
    terminal.until("✓ Answered \"Checks\"", 1).await;
    assert_eq!(
        sim.received().last(),
        Some(&reply(&asked.id, json!([["Unit", "E2E"]])))
    );
    let screen = terminal.screen();
    assert!(!screen.contains("^L") && !screen.contains("^["), "{screen}");
    // Up brings the last line back.
    sim.ask(None, checks());
    terminal.until("[Checks] Which checks?", 3).await;
    terminal.keys("\x1b[A\r").await;
    terminal.until("✓ Answered \"Checks\"", 2).await;
    assert_eq!(
        sim.received().last().map(|r| matches!(r, Received::Reply { answers, .. } if answers == &[vec!["Unit".to_owned(), "E2E".to_owned()]])),
        Some(true)
    );
    terminal.keys("\x04").await;
    let status = tokio::time::timeout(WAIT, terminal.child.wait())
        .await
        .expect("Ctrl-D ends watch")
        .unwrap();
    assert!(status.success());
}

/// Ctrl-C and SIGTERM end `watch` as before, and the terminal is given
/// back as it was (`stty` run after it in the same terminal says so). The
/// shell around it traps Ctrl-C, so it goes on to say how `watch` ended.
#[tokio::test]
async fn the_terminal_is_given_back_on_ctrl_c_and_sigterm() {
    let sim = sim().await;
    sim.ask(None, database());
    for how in ["ctrl-c", "sigterm"] {
        let mode = "echo mode=$(stty -g)";
        let line = format!(
            "trap 'echo trapped' INT; {mode}; sh -c 'echo pid=$$; exec {} watch --url {}'; echo exit=$?; {mode}",
            env!("CARGO_BIN_EXE_ask-lsp"),
            sim.url()
        );
        let mut terminal = Terminal::shell(&line);
        terminal.until("\n> ", 1).await;
        terminal.keys("abc").await;
        if how == "ctrl-c" {
            terminal.keys("\x03").await;
        } else {
            let screen = terminal.screen();
            let pid = screen
                .split("pid=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .expect("the pid");
            let killed = std::process::Command::new("kill")
                .args(["-TERM", pid])
                .status()
                .unwrap();
            assert!(killed.success());
        }
        // The second mode line is the last thing the shell writes.
        terminal.until("mode=", 2).await;
        let screen = terminal.screen();
        let modes: Vec<&str> = screen.lines().filter(|l| l.starts_with("mode=")).collect();
        assert_eq!(modes.len(), 2, "{how}: {screen}");
        assert_eq!(
            modes[0], modes[1],
            "{how}: the terminal as before: {screen}"
        );
        let code = match how {
            "ctrl-c" => "exit=130",
            _ => "exit=143",
        };
        assert!(screen.contains(code), "{how}: {screen}");
        // Ctrl-C reaches the whole foreground group, as outside raw mode.
        assert_eq!(screen.contains("trapped"), how == "ctrl-c", "{screen}");
    }
}

/// An ACP agent names its session with `session_info_update`: its next
/// permission request carries the title, neutralised; a null clears it.
#[tokio::test]
async fn an_acp_sessions_title_reaches_the_extension() {
    const SERVER_ID: &str = "titled";
    let sim = sim().await;
    let send = |message: serde_json::Value| {
        let url = format!("{}/_sim/acp/{SERVER_ID}", sim.url());
        async move {
            let status = common::http_client()
                .post(url)
                .json(&message)
                .send()
                .await
                .unwrap()
                .status();
            assert!(status.is_success(), "{status}");
        }
    };
    let titled = |title: serde_json::Value| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "ses_1",
               "update": {"sessionUpdate": "session_info_update", "title": title,
                          "updatedAt": "2026-11-26T17:00:00Z"}}})
    };
    let permission = |id: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission",
               "params": {"sessionId": "ses_1",
                          "options": [{"optionId": "no", "name": "Reject", "kind": "reject_once"}],
                          "toolCall": {"toolCallId": format!("call-{id}"), "title": "Run ls",
                                       "kind": "execute", "rawInput": {"command": "ls"}}}})
    };
    send(titled(json!("Fix auth bug\u{202e}\u{1b}[31m"))).await;
    send(permission("p1")).await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"name": "h", "backend": "sandbox-agent", "url": sim.url(),
                                "serverId": SERVER_ID}]}),
        )
        .await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["origin"]["sessionTitle"],
        "Fix auth bug⟨U+202E⟩␛[31m"
    );
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    send(titled(serde_json::Value::Null)).await;
    send(permission("p2")).await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["origin"].get("sessionTitle"), None, "{ask}");
    assert!(client.shutdown().await.success());
}

/// A permission's one-line choices in `watch`: the number of "Allow once".
fn allow_once_number(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_suffix(". Allow once"))
        .expect("an Allow once choice")
        .to_owned()
}

/// Waits until the permission is on screen, then types a line no choice
/// takes: once `watch` has refused it, everything typed before the prompt
/// has had its chance to answer. True when the server got nothing by then.
async fn nothing_answered_once_shown(terminal: &mut Terminal, sim: &Sim) -> bool {
    terminal.until("── Permission from", 1).await;
    terminal.keys("99\r").await;
    let _ = tokio::time::timeout(WAIT, async {
        while !terminal.screen().contains("pick a number from 1 to") && sim.received().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    sim.received().is_empty()
}

/// `1` typed while nothing waits is said to be dropped and never allows the
/// permission that comes next; the permission stays pending until a line
/// typed after it was shown answers it. (Fails on the old code: the line
/// waited and allowed the permission as soon as it arrived.)
#[tokio::test]
async fn a_line_typed_before_a_permission_arrives_answers_nothing() {
    let sim = sim().await;
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("· default: OpenCode", 1).await;
    terminal.keys("1\r").await;
    // Drawn as typed: the line editor has taken it.
    terminal.until("\x1b[J1", 1).await;
    let asked = sim
        .ask_permission(ask_sim::PermissionAsk::bash("rm -rf ~/project"))
        .unwrap();
    assert!(
        nothing_answered_once_shown(&mut terminal, &sim).await,
        "answered by a line typed before it was shown: {:?}",
        sim.received()
    );
    assert!(
        terminal
            .screen()
            .contains("not sent: no prompt was waiting for this line"),
        "{}",
        terminal.screen()
    );
    assert_eq!(sim.pending_permissions().len(), 1, "still pending");
    let once = allow_once_number(&terminal.screen());
    terminal.keys(&format!("{once}\r")).await;
    terminal.until("✓ Allowed once", 1).await;
    assert_eq!(
        sim.received(),
        vec![Received::Permission {
            id: asked.id,
            reply: "once".into(),
            message: None
        }]
    );
    terminal.keys("\x04").await;
    let status = tokio::time::timeout(WAIT, terminal.child.wait())
        .await
        .expect("Ctrl-D ends watch")
        .unwrap();
    assert!(status.success());
}

/// Half a line typed before a permission arrives is dropped when it shows:
/// Enter then sends an empty line (a rejection), never the `1` typed
/// before. (Fails on the old code: the `1` stayed on the line.)
#[tokio::test]
async fn half_a_line_typed_before_a_prompt_never_reaches_it() {
    let sim = sim().await;
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("· default: OpenCode", 1).await;
    terminal.keys("1").await;
    // The `1` is on the line before the permission is asked.
    terminal.until("\x1b[J1", 1).await;
    let asked = sim
        .ask_permission(ask_sim::PermissionAsk::bash("rm -rf ~/project"))
        .unwrap();
    terminal.until("── Permission from", 1).await;
    terminal.until("rejects and tells the agent why.", 1).await;
    terminal.keys("\r").await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received(),
        vec![Received::Permission {
            id: asked.id,
            reply: "reject".into(),
            message: None
        }]
    );
    terminal.keys("\x04").await;
    let _ = tokio::time::timeout(WAIT, terminal.child.wait()).await;
}

/// A line entered while nothing waits is dropped at once, so Ctrl-D after
/// it still ends `watch`. (Fails on the old code: the line waited for a
/// prompt, and `watch` with it.)
#[tokio::test]
async fn ctrl_d_after_a_line_typed_while_nothing_waits_leaves() {
    let sim = sim().await;
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("· default: OpenCode", 1).await;
    terminal.keys("1\r").await;
    terminal.until("\x1b[J1", 1).await;
    terminal.keys("\x04").await;
    let status = tokio::time::timeout(WAIT, terminal.child.wait())
        .await
        .expect("Ctrl-D ends watch")
        .unwrap();
    assert!(status.success());
}

/// A 4,000-character paste is drawn in a few writes, not once per
/// character (the old code wrote the whole line again for each: 8 MB), and
/// arrives whole.
#[tokio::test]
async fn a_paste_is_not_redrawn_per_character() {
    let sim = sim().await;
    let request = sim.ask(
        None,
        questions(json!([{"question": "Why?", "header": "Why", "options": []}])),
    );
    let mut terminal = Terminal::start(&["watch", "--url", &sim.url()]);
    terminal.until("[Why] Why?", 1).await;
    terminal.until("\n> ", 1).await;
    let before = terminal.screen().len();
    let pasted: String = (0..4_000)
        .map(|n| (b'a' + (n % 26) as u8) as char)
        .collect();
    terminal.keys(&pasted).await;
    terminal.until(&pasted, 1).await;
    terminal.keys("\r").await;
    wait_for(|| !sim.received().is_empty()).await;
    let written = terminal.screen().len() - before;
    eprintln!("a 4,000-character paste wrote {written} bytes to the terminal");
    assert!(written < 100_000, "{written} bytes for one paste");
    assert_eq!(sim.received(), vec![reply(&request.id, json!([[pasted]]))]);
    terminal.keys("\x04").await;
    let _ = tokio::time::timeout(WAIT, terminal.child.wait()).await;
}
