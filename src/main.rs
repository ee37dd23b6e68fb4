use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use ask_lsp::status::{StatusOptions, status};
use ask_lsp::terminal::WatchOptions;
use ask_lsp::terminal::line::watch_here;
use serde_json::json;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const USAGE: &str = "\
ask-lsp: brings an AI coding agent's questions and permission requests into your editor

Usage:
  ask-lsp [lsp]       LSP server on stdio (what editors start)
  ask-lsp watch [--url URL]... [--sandbox-agent SERVER_ID] [--directory DIR] [--policy MODE] [--timeout-ms N] [--policy-json JSON] [--notify WHERE]...
                      answer prompts in this terminal
  ask-lsp status [--url URL]... [--sandbox-agent SERVER_ID] [--directory DIR] [--json] [--hooks]
                      each server's state and what is pending there
  ask-lsp hook claude|codex [--timeout-ms N]
                      Claude Code's or Codex's PermissionRequest hook: their
                      prompts in the editor of a running ask-lsp (docs/hook.md)
  ask-lsp --version
  ask-lsp COMMAND --help

To see it work with nothing installed: `cargo run --profile demo -p ask-sim -- demo`
in the source tree (a simulated agent server and this terminal mode).

Environment: ASK_LSP_URL (default server URL), OPENCODE_SERVER_PASSWORD,
OPENCODE_SERVER_USERNAME, ASK_LSP_LOG (log filter, e.g. debug; logs go to stderr).";

const LSP_USAGE: &str = "\
Usage: ask-lsp [lsp] [--stdio]

Serves the Language Server Protocol on stdin/stdout; editors start it. The
servers to follow come from `initializationOptions` (docs/protocol.md), else
ASK_LSP_URL, else the OpenCode servers found running for the workspace on
loopback (docs/discovery.md), else http://127.0.0.1:4096. `--stdio` is
accepted for clients that add it. Logs go to stderr (ASK_LSP_LOG, default
ask_lsp=info).";

const WATCH_USAGE: &str = "\
Usage: ask-lsp watch [--url URL]... [--sandbox-agent SERVER_ID] [--directory DIR]
                     [--policy MODE] [--timeout-ms N] [--policy-json JSON]
                     [--notify WHERE]... [--notify-after-ms N] [--notify-interval-ms N]
                     [--locale TAG]

Answers an agent server's questions and permission requests in this
terminal (Ctrl-D to quit).
  --url URL          a server to follow (repeatable; `127.0.0.1:4096` means
                     http://127.0.0.1:4096; default ASK_LSP_URL, else the
                     OpenCode servers found running for the current directory
                     (docs/discovery.md), else http://127.0.0.1:4096)
  --sandbox-agent ID follow sandbox-agent's ACP server ID at each URL
  --directory DIR    the project directory to follow on each server (a
                     relative one is taken from this shell's directory)
  --policy MODE      forward, reject, accept-first or auto (docs/policies.md)
  --timeout-ms N     decide by the policy after N ms without an answer
  --policy-json JSON a full policy object (docs/policies.md)
  --notify WHERE     announce a prompt left unanswered: desktop (notify-send,
                     osascript, a PowerShell toast), osc9 or osc777 (a
                     terminal notification on stdout) or bell (a BEL on
                     stdout); repeatable
  --notify-after-ms N     announce after N ms unanswered (default 10000)
  --notify-interval-ms N  at most one notification per N ms (default 30000)
  --locale TAG       the language of what ask-lsp says here: en or zh-CN
                     (default: LC_ALL, LC_MESSAGES or LANG, else English)

No logs unless ASK_LSP_LOG asks for them (e.g. ASK_LSP_LOG=debug, to stderr:
`2>watch.log`); what goes wrong is said here as `!` lines.";

const STATUS_USAGE: &str = "\
Usage: ask-lsp status [--url URL]... [--sandbox-agent SERVER_ID] [--directory DIR] [--json] [--hooks]
                      [--locale TAG]

Connects once to each server (the same flags and environment as `watch`),
prints its kind, whether it answers (with advice when it does not) and the
prompts pending there, and exits: 0 when every server answered, 1 otherwise.
Nothing is answered.
  --json             one JSON object instead of text
  --hooks            also where `ask-lsp hook` looks, the instances listening
                     there and when a hook request last reached each
  --locale TAG       the language of the lines: en or zh-CN (default: LC_ALL,
                     LC_MESSAGES or LANG, else English)";

const HOOK_USAGE: &str = "\
Usage: ask-lsp hook claude|codex [--timeout-ms N]

Claude Code's or Codex's PermissionRequest hook (command hook; docs/hook.md): reads the
hook input on stdin, hands it to the running ask-lsp (LSP server or `watch`)
whose workspace holds the agent's directory, else the most recent, and
prints the decision made there. With no ask-lsp running, no decision within
N ms (default 50000, or ASK_LSP_HOOK_TIMEOUT_MS) or any error it prints
nothing and exits 0: the agent then asks in its own dialog.";

const TRY_IT: &str = "\
ask-lsp: this is an LSP server speaking JSON-RPC on stdin/stdout; editors
start it. To answer an agent's prompts in a terminal instead, run
`ask-lsp watch --url http://127.0.0.1:4096`; for more, `ask-lsp --help`.
Serving LSP now (Ctrl-D to stop).";

enum Command {
    Lsp,
    Watch,
    Status,
    Hook,
    Version,
    Help,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.first().map(String::as_str) {
        // Flags without a command are the LSP server's, as editors pass them.
        None => (Command::Lsp, &args[..]),
        Some("--version" | "-V") => (Command::Version, &args[1..]),
        Some("--help" | "-h" | "help") => (Command::Help, &args[1..]),
        Some(flag) if flag.starts_with('-') => (Command::Lsp, &args[..]),
        Some("lsp") => (Command::Lsp, &args[1..]),
        Some("watch") => (Command::Watch, &args[1..]),
        Some("status") => (Command::Status, &args[1..]),
        Some("hook") => (Command::Hook, &args[1..]),
        Some(other) => {
            eprintln!("ask-lsp: unknown command {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // `--locale TAG` (watch, status, hook): the language of what is said
    // here; else the environment's. The LSP server learns the editor's at
    // `initialize`.
    let (locale, rest) = match take_locale(rest) {
        Ok(taken) => taken,
        Err(message) => {
            eprintln!("ask-lsp: {message}");
            return ExitCode::from(2);
        }
    };
    let rest = &rest[..];
    ask_lsp::app::use_locale(locale.as_deref(), None);
    let usage = match command {
        Command::Lsp => LSP_USAGE,
        Command::Watch => WATCH_USAGE,
        Command::Status => STATUS_USAGE,
        Command::Hook => HOOK_USAGE,
        Command::Version | Command::Help => USAGE,
    };
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        print(usage);
        return ExitCode::SUCCESS;
    }
    match command {
        // The terminal is the conversation (`watch`), or the agent's
        // (`hook`): a log line would land in it; logs only when asked for.
        Command::Watch | Command::Hook if !ask_lsp::app::logs_asked() => {}
        _ => init_logs(matches!(command, Command::Lsp)),
    }
    // One thread: the work is a few sockets and one editor, and wake-ups
    // between worker threads cost more than the work (docs/performance.md).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        match command {
            Command::Lsp => lsp(rest).await,
            Command::Watch => watch_command(rest).await.map(|()| ExitCode::SUCCESS),
            Command::Status => status_command(rest).await,
            Command::Hook => Ok(hook_command(rest).await),
            Command::Version => {
                no_arguments(rest, usage)?;
                print(&format!(
                    "ask-lsp {} (askQuestions extension {})",
                    env!("CARGO_PKG_VERSION"),
                    ask_lsp::lsp::EXTENSION_VERSION
                ));
                Ok(ExitCode::SUCCESS)
            }
            Command::Help => {
                no_arguments(rest, usage)?;
                print(USAGE);
                Ok(ExitCode::SUCCESS)
            }
        }
    });
    // Background tasks (streams, timers) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result.unwrap_or_else(|message| {
        eprintln!("ask-lsp: {message}");
        ExitCode::from(2)
    })
}

/// `--locale TAG` taken out of `args`.
fn take_locale(args: &[String]) -> Result<(Option<String>, Vec<String>), String> {
    let mut locale = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--locale" => {
                let tag = iter.next().ok_or("--locale needs a value (e.g. zh-CN)")?;
                locale = Some(tag.clone());
            }
            _ => rest.push(arg.clone()),
        }
    }
    Ok((locale, rest))
}

/// Logs go to stderr, filtered by ASK_LSP_LOG.
fn init_logs(lsp: bool) {
    let default = if lsp { "ask_lsp=info" } else { "ask_lsp=warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASK_LSP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // tower-lsp-server traces every message it reads or writes, passwords
    // and answers included: nothing below info from it, whatever the filter.
    let no_message_bodies = tracing_subscriber::filter::filter_fn(|meta| {
        !meta.target().starts_with("tower_lsp_server") || *meta.level() <= tracing::Level::INFO
    });
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_filter(filter)
                .with_filter(no_message_bodies),
        )
        .init();
}

/// Writes a line to stdout; a reader that left (`ask-lsp --help | head -1`)
/// is not an error, as `println!` would make it (a panic).
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

fn no_arguments(args: &[String], usage: &str) -> Result<(), String> {
    match args.first() {
        None => Ok(()),
        Some(arg) => Err(format!("unexpected argument {arg:?}\n\n{usage}")),
    }
}

async fn lsp(args: &[String]) -> Result<ExitCode, String> {
    if let Some(arg) = args.iter().find(|a| *a != "--stdio") {
        return Err(format!("unknown option {arg:?}\n\n{LSP_USAGE}"));
    }
    if std::io::stdin().is_terminal() {
        eprintln!("{TRY_IT}");
    }
    let stopped = ask_lsp::lsp::serve_stdio().await;
    if let Some(reason) = stopped.reason {
        eprintln!("ask-lsp: {reason}");
    }
    Ok(ExitCode::from(stopped.code))
}

/// Splits `--flag value` pairs, rejecting unknown flags.
fn flags<'a>(
    args: &'a [String],
    known: &[&str],
    usage: &str,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut pairs = Vec::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag:?}\n\n{usage}"));
        }
        let value = iter.next().ok_or_else(|| format!("{flag} needs a value"))?;
        pairs.push((flag.as_str(), value.as_str()));
    }
    Ok(pairs)
}

/// The servers `watch` and `status` follow, from their shared flags.
#[derive(Default)]
struct ServerFlags {
    urls: Vec<(Option<String>, String)>,
    directory: Option<String>,
    sandbox_agent: Option<String>,
}

const SERVER_FLAGS: [&str; 3] = ["--url", "--sandbox-agent", "--directory"];

impl ServerFlags {
    /// Takes the flag if it is one of [`SERVER_FLAGS`].
    fn take(&mut self, flag: &str, value: &str) -> Result<bool, String> {
        match flag {
            // `127.0.0.1:4096` as `opencode serve` prints it.
            "--url" if !value.contains("://") => self.urls.push((None, format!("http://{value}"))),
            "--url" => self.urls.push((None, value.to_owned())),
            // The server resolves a relative directory against its own.
            "--directory" => {
                let absolute = std::path::absolute(value)
                    .map_err(|e| format!("--directory {value:?}: {e}"))?;
                self.directory = Some(absolute.to_string_lossy().into_owned());
            }
            "--sandbox-agent" => self.sandbox_agent = Some(value.to_owned()),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn milliseconds(flag: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} {value:?}: not a number"))
}

async fn watch_command(args: &[String]) -> Result<(), String> {
    let mut servers = ServerFlags::default();
    let mut policy = serde_json::Map::new();
    let mut notify = serde_json::Map::new();
    let mut known = SERVER_FLAGS.to_vec();
    known.extend([
        "--policy",
        "--timeout-ms",
        "--policy-json",
        "--notify",
        "--notify-after-ms",
        "--notify-interval-ms",
    ]);
    for (flag, value) in flags(args, &known, WATCH_USAGE)? {
        if servers.take(flag, value)? {
            continue;
        }
        match flag {
            "--policy" => {
                policy.insert("mode".into(), json!(value));
            }
            "--timeout-ms" => {
                policy.insert("timeoutMs".into(), json!(milliseconds(flag, value)?));
            }
            "--notify" => match value {
                "desktop" => {
                    notify.insert("desktop".into(), json!(true));
                }
                "osc9" | "osc777" | "bell" => {
                    notify.insert("terminal".into(), json!(value));
                }
                _ => {
                    return Err(format!(
                        "--notify {value:?}: expected desktop, osc9, osc777 or bell"
                    ));
                }
            },
            "--notify-after-ms" => {
                notify.insert("afterMs".into(), json!(milliseconds(flag, value)?));
            }
            "--notify-interval-ms" => {
                notify.insert("intervalMs".into(), json!(milliseconds(flag, value)?));
            }
            _ => {
                let parsed: serde_json::Value =
                    serde_json::from_str(value).map_err(|e| format!("--policy-json: {e}"))?;
                let serde_json::Value::Object(map) = parsed else {
                    return Err("--policy-json takes a JSON object".into());
                };
                policy.extend(map);
            }
        }
    }
    let options = WatchOptions {
        servers: servers.urls,
        directory: servers.directory,
        sandbox_agent: servers.sandbox_agent,
        policy: (!policy.is_empty()).then_some(serde_json::Value::Object(policy)),
        notify: (!notify.is_empty()).then_some(serde_json::Value::Object(notify)),
        exit_on_eof: true,
        environment: true,
    };
    watch_here(options).await
}

/// Always exits 0: a failing hook must leave the agent to ask by itself.
async fn hook_command(args: &[String]) -> ExitCode {
    let parsed = match args {
        [agent, rest @ ..] => flags(rest, &["--timeout-ms"], HOOK_USAGE).and_then(|pairs| {
            let from_env = ask_lsp::app::hook_timeout_ms();
            let timeout = match pairs.last().map(|(_, v)| *v).or(from_env) {
                Some(value) => Some(Duration::from_millis(milliseconds("--timeout-ms", value)?)),
                None => None,
            };
            Ok((agent.as_str(), timeout))
        }),
        [] => Err(format!("which agent?\n\n{HOOK_USAGE}")),
    };
    let result = match parsed {
        Ok((agent, timeout)) => {
            ask_lsp::hook::run(
                agent,
                timeout,
                std::io::stdin().lock(),
                &mut std::io::stdout(),
            )
            .await
        }
        Err(message) => Err(message),
    };
    if let Err(reason) = result {
        eprintln!(
            "ask-lsp hook: {}",
            reason.lines().next().unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}

async fn status_command(args: &[String]) -> Result<ExitCode, String> {
    let json = args.iter().any(|a| a == "--json");
    let hooks = args.iter().any(|a| a == "--hooks");
    let args: Vec<String> = args
        .iter()
        .filter(|a| *a != "--json" && *a != "--hooks")
        .cloned()
        .collect();
    let mut servers = ServerFlags::default();
    for (flag, value) in flags(&args, &SERVER_FLAGS, STATUS_USAGE)? {
        servers.take(flag, value)?;
    }
    let options = StatusOptions {
        servers: servers.urls,
        directory: servers.directory,
        sandbox_agent: servers.sandbox_agent,
        json,
        hooks,
    };
    Ok(match status(options, std::io::stdout()).await? {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}
