use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use ask_lsp::app::cli::{self, Usage};
use ask_lsp::status::{StatusOptions, status};
use ask_lsp::terminal::WatchOptions;
use ask_lsp::terminal::line::watch_here;
use serde_json::json;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

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
    // `--locale TAG`: the language of what is said here, chosen before
    // anything is (help and usage errors included); else the environment's.
    // The LSP server learns the editor's at `initialize`.
    let (locale, args) = match take_locale(&args) {
        Ok(taken) => taken,
        Err(()) => {
            ask_lsp::app::use_locale(None, None);
            eprintln!("ask-lsp: {}", cli::locale_needs_value());
            return ExitCode::from(2);
        }
    };
    ask_lsp::app::use_locale(locale.as_deref(), None);
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
            eprintln!("ask-lsp: {}", cli::unknown_command(other));
            return ExitCode::from(2);
        }
    };
    let usage = match command {
        Command::Lsp => Usage::Lsp,
        Command::Watch => Usage::Watch,
        Command::Status => Usage::Status,
        Command::Hook => Usage::Hook,
        Command::Version | Command::Help => Usage::Main,
    };
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        print(&cli::usage(usage));
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
                print(&cli::usage(Usage::Main));
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

/// `--locale TAG` taken out of `args`; `Err` when it lacks its value.
fn take_locale(args: &[String]) -> Result<(Option<String>, Vec<String>), ()> {
    let mut locale = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--locale" => {
                let tag = iter.next().ok_or(())?;
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

fn no_arguments(args: &[String], usage: Usage) -> Result<(), String> {
    match args.first() {
        None => Ok(()),
        Some(arg) => Err(cli::unexpected_argument(arg, usage)),
    }
}

async fn lsp(args: &[String]) -> Result<ExitCode, String> {
    if let Some(arg) = args.iter().find(|a| *a != "--stdio") {
        return Err(cli::unknown_option(arg, Usage::Lsp));
    }
    if std::io::stdin().is_terminal() {
        eprintln!("{}", cli::try_it());
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
    usage: Usage,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut pairs = Vec::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        if !known.contains(&flag.as_str()) {
            return Err(cli::unknown_option(flag, usage));
        }
        let value = iter.next().ok_or_else(|| cli::needs_value(flag))?;
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
                self.directory = Some(absolute(flag, value)?);
            }
            "--sandbox-agent" => self.sandbox_agent = Some(value.to_owned()),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// `value` made absolute against this shell's directory.
fn absolute(flag: &str, value: &str) -> Result<String, String> {
    let absolute = std::path::absolute(value).map_err(|e| cli::bad_path(flag, value, &e))?;
    Ok(absolute.to_string_lossy().into_owned())
}

fn milliseconds(flag: &str, value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| cli::not_a_number(flag, value))
}

async fn watch_command(args: &[String]) -> Result<(), String> {
    let mut servers = ServerFlags::default();
    let mut policy = serde_json::Map::new();
    let mut notify = serde_json::Map::new();
    let mut codex_homes = Vec::new();
    let mut known = SERVER_FLAGS.to_vec();
    known.extend([
        "--codex-home",
        "--policy",
        "--timeout-ms",
        "--policy-json",
        "--notify",
        "--notify-after-ms",
        "--notify-interval-ms",
    ]);
    for (flag, value) in flags(args, &known, Usage::Watch)? {
        if servers.take(flag, value)? {
            continue;
        }
        match flag {
            "--codex-home" => codex_homes.push(absolute(flag, value)?),
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
                    return Err(cli::bad_notify(value));
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
                    serde_json::from_str(value).map_err(|e| cli::bad_policy_json(&e))?;
                let serde_json::Value::Object(map) = parsed else {
                    return Err(cli::policy_json_not_object());
                };
                policy.extend(map);
            }
        }
    }
    let options = WatchOptions {
        servers: servers.urls,
        directory: servers.directory,
        sandbox_agent: servers.sandbox_agent,
        codex_homes,
        policy: (!policy.is_empty()).then_some(serde_json::Value::Object(policy)),
        notify: (!notify.is_empty()).then_some(serde_json::Value::Object(notify)),
        exit_on_eof: true,
        environment: true,
    };
    watch_here(options).await
}

/// `ask-lsp hook claude`'s opt-in for Claude Code's MCP forms, and its bound.
const ELICITATION: &str = "--elicitation-timeout-ms";

/// Always exits 0: a failing hook must leave the agent to ask by itself.
async fn hook_command(args: &[String]) -> ExitCode {
    let parsed = match args {
        [agent, rest @ ..] => {
            flags(rest, &["--timeout-ms", ELICITATION], Usage::Hook).and_then(|pairs| {
                let given = |flag: &str, from_env: Option<&'static str>| {
                    let value = pairs
                        .iter()
                        .rev()
                        .find(|(f, _)| *f == flag)
                        .map(|(_, v)| *v);
                    value
                        .or(from_env)
                        .map(|v| milliseconds(flag, v).map(Duration::from_millis))
                        .transpose()
                };
                let timeout = given("--timeout-ms", ask_lsp::app::hook_timeout_ms())?;
                let elicitation = given(ELICITATION, ask_lsp::app::hook_elicitation_timeout_ms())?;
                Ok((agent.as_str(), timeout, elicitation))
            })
        }
        [] => Err(cli::which_agent()),
    };
    let result = match parsed {
        Ok((agent, timeout, elicitation)) => {
            ask_lsp::hook::run(
                agent,
                ask_lsp::hook::Bounds {
                    timeout,
                    elicitation,
                },
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
    for (flag, value) in flags(&args, &SERVER_FLAGS, Usage::Status)? {
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
