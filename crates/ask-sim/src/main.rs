//! `ask-sim`: the simulated OpenCode server (`serve`) and the demo (`demo`).

use std::process::ExitCode;
use std::time::Duration;

use ask_sim::opencode2::Sim2;
use ask_sim::{Dialect, Sim, SimOptions};

const USAGE: &str = "\
ask-sim: a simulated OpenCode server for trying and testing ask-lsp

Usage:
  ask-sim demo        a simulated agent asks questions; answer them in this terminal
  ask-sim serve [--opencode2 [--forms current|8c6ff624|23699db9]] [--port N] [--password P] [--heartbeat-ms N] [--dialect 1.18|1.19|1.19-both]
                      run the simulated server until Ctrl-C (docs/sim.md);
                      --opencode2 speaks OpenCode 2 (forms, /api/event),
                      --forms picks the generation of its form routes
  ask-sim --help";

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ASK_LSP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") || args.first().is_none_or(|a| a == "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let result = runtime.block_on(async {
        match args[0].as_str() {
            "demo" if args.len() == 1 => ask_sim::demo::run().await.map_err(|e| e.to_string()),
            "demo" => Err(format!("demo takes no options\n\n{USAGE}")),
            "serve" => serve(&args[1..]).await,
            other => Err(format!("unknown command {other:?}\n\n{USAGE}")),
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ask-sim: {message}");
            ExitCode::from(2)
        }
    }
}

async fn serve(args: &[String]) -> Result<(), String> {
    let opencode2 = args.iter().any(|a| a == "--opencode2");
    let mut options = SimOptions::default();
    let mut profile = ask_sim::opencode2::Profile::default();
    if opencode2 {
        options.heartbeat = ask_sim::opencode2::Options::default().heartbeat;
    }
    let mut iter = args.iter().filter(|a| *a != "--opencode2");
    while let Some(flag) = iter.next() {
        let value = iter
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n\n{USAGE}"))?;
        let number = |what: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} {value:?}: not {what}"))
        };
        match flag.as_str() {
            "--port" => {
                options.port = u16::try_from(number("a port")?)
                    .map_err(|_| format!("--port {value:?}: not a port"))?
            }
            "--password" => options.password = Some(value.clone()),
            "--forms" if opencode2 => {
                use ask_sim::opencode2::Profile;
                profile = match value.as_str() {
                    "current" => Profile::Current,
                    "8c6ff624" => Profile::Requests,
                    "23699db9" => Profile::Unlisted,
                    _ => return Err(format!("--forms {value:?}: current, 8c6ff624 or 23699db9")),
                }
            }
            "--heartbeat-ms" => {
                options.heartbeat = Duration::from_millis(number("a number")?.max(1))
            }
            "--dialect" => {
                options.dialect = Dialect::parse(value)
                    .ok_or_else(|| format!("--dialect {value:?}: 1.18, 1.19 or 1.19-both"))?
            }
            _ => return Err(format!("unknown option {flag:?}\n\n{USAGE}")),
        }
    }
    let cannot = |e: std::io::Error| format!("cannot listen: {e}");
    let stop: Box<dyn Fn()> = if opencode2 {
        let sim = Sim2::start(ask_sim::opencode2::Options {
            port: options.port,
            password: options.password,
            heartbeat: options.heartbeat,
            directory: options.directory,
            profile,
            ..ask_sim::opencode2::Options::default()
        })
        .await
        .map_err(cannot)?;
        println!("listening on {}", sim.url());
        Box::new(move || sim.stop())
    } else {
        let sim = Sim::start(options).await.map_err(cannot)?;
        println!("listening on {}", sim.url());
        Box::new(move || sim.stop())
    };
    tokio::signal::ctrl_c().await.map_err(|e| e.to_string())?;
    stop();
    Ok(())
}
