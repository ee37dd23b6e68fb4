//! `ask-sim demo`: a simulated agent server asks a few questions and
//! ask-lsp's terminal mode answers them, so the whole flow can be seen with
//! nothing installed.

use std::time::Duration;

use ask_lsp::terminal::WatchOptions;
use ask_lsp::terminal::line::watch_here;
use serde_json::json;

use crate::{QuestionInfo, Received, Sim, SimOptions};

fn questions(value: serde_json::Value) -> Vec<QuestionInfo> {
    serde_json::from_value(value).expect("the demo's questions are well-formed")
}

/// The agent's side of the demo: ask, wait for the outcome, say what came back.
async fn agent(sim: Sim) {
    let script = [
        questions(json!([{
            "header": "Database", "question": "Which database should the new service use?",
            "options": [{"label": "Postgres", "description": "Relational, the team's default"},
                        {"label": "SQLite", "description": "Embedded, zero setup"}]}])),
        questions(json!([{
            "header": "Checks", "question": "Which checks should run before merging?", "multiple": true,
            "options": [{"label": "Unit tests", "description": "cargo test"},
                        {"label": "Lint", "description": "clippy and fmt"},
                        {"label": "End-to-end", "description": "the slow suite"}]}])),
        questions(json!([
            {"header": "Target", "question": "Where should this deploy?", "custom": false,
             "options": [{"label": "Staging", "description": ""}, {"label": "Production", "description": ""}]},
            {"header": "Release name", "question": "What should the release be called?", "options": []}])),
        questions(json!([{
            "header": "Migration", "question": "Run the database migration now?",
            "options": [{"label": "Yes", "description": ""}, {"label": "No", "description": ""}]}])),
    ];
    let last = script.len() - 1;
    for (n, questions) in script.into_iter().enumerate() {
        // As OpenCode does at each turn: the session, with its title.
        sim.title_session("ses_demo", "Set up the new service");
        let request = sim.ask(Some("ses_demo"), questions);
        if n == last {
            println!("\n(this one will be answered in another editor in 5 s: watch it disappear)");
            let elsewhere = sim.clone();
            let id = request.id.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                elsewhere.answer_elsewhere(&id, vec![vec!["No".into()]]);
            });
        }
        while sim.pending().iter().any(|r| r.id == request.id) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let outcome = sim.received().into_iter().find_map(|r| match r {
            Received::Reply { id, answers } if id == request.id => {
                Some(format!("answers {answers:?}"))
            }
            Received::Reject { id } if id == request.id => Some("a rejection".to_owned()),
            _ => None,
        });
        println!(
            "  agent received {}",
            outcome.unwrap_or_else(|| "an answer from another client".into())
        );
    }
}

/// Runs the demo until its agent has asked everything (or input ends).
pub async fn run() -> std::io::Result<()> {
    let sim = Sim::start(SimOptions::default()).await?;
    println!(
        "ask-lsp demo: a simulated OpenCode server is running at {}.",
        sim.url()
    );
    println!("Its agent will ask four questions; answer them here.");
    let options = WatchOptions {
        servers: vec![(Some("demo".into()), sim.url())],
        directory: None,
        sandbox_agent: None,
        codex_homes: Vec::new(),
        policy: None,
        notify: None,
        exit_on_eof: false,
        environment: false,
    };
    let watching = watch_here(options);
    tokio::pin!(watching);
    let finished = tokio::select! {
        result = &mut watching => {
            if let Err(error) = result {
                eprintln!("ask-sim demo: {error}");
            }
            false
        }
        () = agent(sim.clone()) => true,
    };
    if finished {
        // The agent is done as soon as the server is; give the terminal a
        // moment to say what the last event led to before the closing line.
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut watching).await;
        println!(
            "\nDemo finished. Next: `ask-lsp watch --url http://127.0.0.1:4096` against a real `opencode serve`, or an editor plugin from editors/."
        );
    }
    sim.stop();
    Ok(())
}
