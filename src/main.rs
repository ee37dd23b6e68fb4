use std::process::ExitCode;
use std::time::Duration;

use ask_lsp::backend::Timing;
use ask_lsp::broker::BrokerHandle;
use ask_lsp::config::{EnvDefaults, RawServer, servers_from_raw};
use ask_lsp::policy::Policies;
use ask_lsp::sim::{Sim, SimOptions};
use ask_lsp::terminal::Watch;
use serde_json::json;

const USAGE: &str = "\
ask-lsp: brings an AI coding agent's questions into your editor

Usage:
  ask-lsp [lsp]       LSP server on stdio (what editors start)
  ask-lsp watch [--url URL]... [--directory DIR] [--policy MODE] [--timeout-ms N] [--policy-json JSON]
                      answer questions in this terminal
  ask-lsp demo        a simulated agent asks questions; answer them here
  ask-lsp sim [--port N] [--password P] [--heartbeat-ms N]
                      run the simulated OpenCode server (docs/sim.md)
  ask-lsp --version

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
            "watch" => watch(&args[1..]).await,
            "demo" => ask_lsp::demo::run().await.map_err(|e| e.to_string()),
            "sim" => sim(&args[1..]).await,
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

async fn watch(args: &[String]) -> Result<(), String> {
    let mut servers = Vec::new();
    let mut directory = None;
    let mut policy = serde_json::Map::new();
    for (flag, value) in flags(
        args,
        &[
            "--url",
            "--directory",
            "--policy",
            "--timeout-ms",
            "--policy-json",
        ],
    )? {
        match flag {
            "--url" => servers.push(RawServer {
                url: Some(value.to_owned()),
                ..Default::default()
            }),
            "--directory" => directory = Some(value.to_owned()),
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
    if servers.is_empty() {
        servers.push(RawServer::default());
    }
    for server in &mut servers {
        server.directory = directory.clone();
    }
    let servers =
        servers_from_raw(servers, &EnvDefaults::from_process()).map_err(|e| e.to_string())?;
    let policy = (!policy.is_empty()).then_some(serde_json::Value::Object(policy));
    let policies = Policies::from_json(policy.as_ref()).map_err(|e| e.to_string())?;
    for server in &servers {
        println!(
            "ask-lsp: watching {} for questions (Ctrl-D to quit)",
            server.url
        );
    }
    let (broker, updates) = BrokerHandle::spawn(servers, policies, Timing::from_env());
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    Watch::new(broker, std::io::stdout(), true)
        .run(updates, input)
        .await;
    Ok(())
}

async fn sim(args: &[String]) -> Result<(), String> {
    let mut options = SimOptions::default();
    for (flag, value) in flags(args, &["--port", "--password", "--heartbeat-ms"])? {
        match flag {
            "--port" => {
                options.port = value
                    .parse()
                    .map_err(|_| format!("--port {value:?}: not a port"))?
            }
            "--password" => options.password = Some(value.to_owned()),
            _ => {
                let ms: u64 = value
                    .parse()
                    .map_err(|_| format!("--heartbeat-ms {value:?}: not a number"))?;
                options.heartbeat = Duration::from_millis(ms.max(1));
            }
        }
    }
    let sim = Sim::start(options)
        .await
        .map_err(|e| format!("cannot listen: {e}"))?;
    println!("listening on {}", sim.url());
    // Runs until killed, or until stdin is closed when it is a pipe.
    tokio::signal::ctrl_c().await.map_err(|e| e.to_string())?;
    sim.stop();
    Ok(())
}
