use std::process::ExitCode;
use std::time::Duration;

use ask_lsp::terminal::{WatchOptions, watch};
use serde_json::json;

const USAGE: &str = "\
ask-lsp: brings an AI coding agent's questions into your editor

Usage:
  ask-lsp [lsp]       LSP server on stdio (what editors start)
  ask-lsp watch [--url URL]... [--sandbox-agent SERVER_ID] [--directory DIR] [--policy MODE] [--timeout-ms N] [--policy-json JSON]
                      answer questions in this terminal
  ask-lsp --version

Try it without an agent: `cargo run --release -p ask-sim -- demo` in the
source tree runs a simulated agent server and this terminal mode.

Environment: ASK_LSP_URL (default server URL), OPENCODE_SERVER_PASSWORD,
OPENCODE_SERVER_USERNAME, ASK_LSP_LOG (log filter, e.g. debug; logs go to stderr).";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = args.first().map(String::as_str).unwrap_or("lsp");
    let default_log = if command == "lsp" {
        "ask_lsp=info"
    } else {
        "ask_lsp=warn"
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ASK_LSP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_log)),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let result = runtime.block_on(async {
        match command {
            "lsp" => {
                ask_lsp::lsp::serve_stdio().await;
                Ok(())
            }
            "watch" => watch_command(&args[1..]).await,
            "--version" | "-V" => {
                println!("ask-lsp {}", env!("CARGO_PKG_VERSION"));
                Ok(())
            }
            "--help" | "-h" | "help" => {
                println!("{USAGE}");
                Ok(())
            }
            other => Err(format!("unknown command {other:?}\n\n{USAGE}")),
        }
    });
    // Background tasks (streams, timers) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ask-lsp: {message}");
            ExitCode::from(2)
        }
    }
}

/// Splits `--flag value` pairs, rejecting unknown flags.
fn flags<'a>(args: &'a [String], known: &[&str]) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut pairs = Vec::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag:?}\n\n{USAGE}"));
        }
        let value = iter.next().ok_or_else(|| format!("{flag} needs a value"))?;
        pairs.push((flag.as_str(), value.as_str()));
    }
    Ok(pairs)
}

async fn watch_command(args: &[String]) -> Result<(), String> {
    let mut urls = Vec::new();
    let mut directory = None;
    let mut sandbox_agent = None;
    let mut policy = serde_json::Map::new();
    for (flag, value) in flags(
        args,
        &[
            "--url",
            "--sandbox-agent",
            "--directory",
            "--policy",
            "--timeout-ms",
            "--policy-json",
        ],
    )? {
        match flag {
            "--url" => urls.push((None, value.to_owned())),
            "--directory" => directory = Some(value.to_owned()),
            "--sandbox-agent" => sandbox_agent = Some(value.to_owned()),
            "--policy" => {
                policy.insert("mode".into(), json!(value));
            }
            "--timeout-ms" => {
                let ms: u64 = value
                    .parse()
                    .map_err(|_| format!("--timeout-ms {value:?}: not a number"))?;
                policy.insert("timeoutMs".into(), json!(ms));
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
        servers: urls,
        directory,
        sandbox_agent,
        policy: (!policy.is_empty()).then_some(serde_json::Value::Object(policy)),
        exit_on_eof: true,
        environment: true,
    };
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    watch(options, input, std::io::stdout()).await
}
