//! A client that stops reading ask-lsp's stdout (a busy or frozen editor)
//! while the server floods prompts: what waits for it stays bounded, and
//! when it reads again it gets the current state, not the backlog (issue
//! #48). The real binary and the simulated OpenCode server: 60,000
//! questions (~1 KB of text each) asked and answered elsewhere, then 10,000
//! that stay, the flood paced by what ask-lsp's event stream takes in (the
//! sim's count of events sent), never by sleeps.
//!
//! `ASK_LSP_TEST_FLOOD=pairs,pending` changes the flood's size (the
//! pending store holds 10,000 at most).

use crate::common;
use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ask_sim::Sim;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Under this much resident memory while the client does not read.
const MAX_RSS_MIB: u64 = 64;
/// Events the sim may have queued beyond what ask-lsp's stream took: well
/// under what its broadcast keeps for a slow stream (65,536).
const IN_FLIGHT: u64 = 20_000;
/// How long the whole flood may take in a debug build on a busy machine.
const FLOOD_BOUND: Duration = Duration::from_secs(20 * 60);
/// Prompts that came and went the client may still hear of: those whose
/// messages were written before the bound on its queue held ask-lsp up
/// (1 MiB and 64 messages, the pipe's 64 KiB; about 1.7 KB an `ask`).
/// However large the flood, never more.
const MENTIONED_AT_MOST: usize = 1_000;

fn flood_size() -> (usize, usize) {
    std::env::var("ASK_LSP_TEST_FLOOD")
        .ok()
        .and_then(|v| {
            let (pairs, pending) = v.split_once(',')?;
            Some((pairs.trim().parse().ok()?, pending.trim().parse().ok()?))
        })
        .unwrap_or((60_000, 10_000))
}

async fn send(stdin: &mut ChildStdin, message: Value) {
    let body = message.to_string();
    let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    stdin.write_all(frame.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
}

async fn read_message(stdout: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse().ok();
        }
    }
    let mut body = vec![0; length?];
    stdout.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

/// A field of `/proc/PID/status`, in MiB.
fn proc_mib(child: &Child, field: &str) -> u64 {
    let pid = child.id().expect("running");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the field in /proc/PID/status");
    kib / 1024
}

fn listings(sim: &Sim) -> usize {
    sim.requests()
        .iter()
        .filter(|r| r.starts_with("GET /question"))
        .count()
}

async fn until(what: &str, deadline: tokio::time::Instant, mut condition: impl FnMut() -> bool) {
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asks `count` questions, each answered elsewhere at once when `answer`;
/// the keys of those that stay. At most [`IN_FLIGHT`] events wait in the
/// sim for ask-lsp to take them.
async fn flood(sim: &Sim, count: usize, answer: bool, text: &str) -> HashSet<String> {
    let questions = common::questions(json!([{"question": text, "header": "Flood",
        "options": [{"label": "yes", "description": ""}, {"label": "no", "description": ""}]}]));
    let mut stay = HashSet::new();
    let mut emitted = sim.events_sent();
    for n in 0..count {
        let request = sim.ask(Some("ses_flood"), questions.clone());
        // The tool part pending and running, and the question.
        emitted += 3;
        if answer {
            assert!(sim.answer_elsewhere(&request.id, vec![vec!["yes".into()]]));
            emitted += 2;
        } else {
            stay.insert(format!("default/{}", request.id));
        }
        if n % 1_000 == 999 {
            let deadline = tokio::time::Instant::now() + FLOOD_BOUND;
            tokio::time::timeout_at(deadline, sim.until_sent(emitted.saturating_sub(IN_FLIGHT)))
                .await
                .expect("ask-lsp takes the flood in");
        }
    }
    stay
}

#[tokio::test]
async fn a_client_that_stops_reading_costs_a_bound_and_gets_the_current_state() {
    let (pairs, pending) = flood_size();
    let sim = common::sim().await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_remove("ASK_LSP_LOG")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("ASK_LSP_URL")
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .env("ASK_LSP_HOOK", "0")
        .env("ASK_LSP_CODEX", "0")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "rootUri": null, "capabilities": common::extension_caps(),
            "initializationOptions": {"servers": [{"url": sim.url()}]}}}),
    )
    .await;
    let mut before_stall = Vec::new();
    loop {
        let message = read_message(&mut stdout)
            .await
            .expect("initialize answered");
        if message["id"] == 1 {
            break;
        }
        before_stall.push(message);
    }
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    )
    .await;
    // From here the client reads nothing until the flood is in: subscribed
    // and listed, ask-lsp follows the sim.
    let deadline = tokio::time::Instant::now() + common::WAIT;
    until("listed", deadline, || {
        sim.subscribers() > 0 && listings(&sim) > 0
    })
    .await;

    let started = Instant::now();
    let text = "Which of these should the flood pick? ".repeat(24);
    flood(&sim, pairs, true, &text).await;
    let stay = flood(&sim, pending, false, &text).await;
    // A running tool part for a call never asked makes ask-lsp list the
    // questions: it has then taken in every event before it.
    let listed_before = listings(&sim);
    sim.emit(
        "message.part.updated",
        json!({"sessionID": "ses_flood", "time": 0, "part": {
            "id": "prt_last", "messageID": "msg_last", "sessionID": "ses_flood",
            "type": "tool", "tool": "question", "callID": "call_last",
            "state": {"status": "running", "input": {}}}}),
    );
    let deadline = tokio::time::Instant::now() + FLOOD_BOUND;
    until("through the flood", deadline, || {
        listings(&sim) > listed_before
    })
    .await;
    let took = started.elapsed();
    let rss = proc_mib(&child, "VmRSS:");
    let peak = proc_mib(&child, "VmHWM:");
    eprintln!(
        "{pairs} asked+replied and {pending} pending ({} events) taken in {took:.1?} \
         with the client not reading: {rss} MiB resident, {peak} MiB at the peak",
        sim.events_sent()
    );
    assert!(
        peak < MAX_RSS_MIB,
        "{peak} MiB at the peak while the client did not read"
    );

    // The client reads again: the current state, then the whole list.
    let (tx, mut incoming) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = read_message(&mut stdout).await {
            if tx.send(message).is_err() {
                return;
            }
        }
    });
    let mut after = Vec::new();
    let deadline = tokio::time::Instant::now() + 10 * common::WAIT;
    loop {
        let message = tokio::time::timeout_at(deadline, incoming.recv())
            .await
            .expect("a status with every prompt still pending")
            .expect("ask-lsp runs");
        let done =
            message["method"] == "askQuestions/status" && message["params"]["pending"] == pending;
        after.push(message);
        if done {
            break;
        }
    }
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
               "params": {"command": "askLsp.list", "arguments": []}}),
    )
    .await;
    let list = loop {
        let message = tokio::time::timeout_at(deadline, incoming.recv())
            .await
            .expect("askLsp.list answered")
            .expect("ask-lsp runs");
        if message["id"] == 2 {
            break message;
        }
        after.push(message);
    };
    let listed: Vec<&str> = list["result"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), pending, "each pending prompt once");
    assert_eq!(
        listed.iter().map(|k| k.to_string()).collect::<HashSet<_>>(),
        stay,
        "exactly the prompts still pending"
    );

    // Prompts that came and went: only those the client was told of before
    // the bound on its queue held ask-lsp up, however large the flood; each
    // of them was asked once and resolved once.
    let all: Vec<&Value> = before_stall.iter().chain(after.iter()).collect();
    let mut asked: HashMap<&str, usize> = HashMap::new();
    let mut resolved: HashMap<&str, usize> = HashMap::new();
    for message in &all {
        let Some(key) = message["params"]["key"].as_str() else {
            continue;
        };
        if message["method"] == "askQuestions/ask" {
            *asked.entry(key).or_default() += 1;
        }
        if message["method"] == "askQuestions/resolved" {
            *resolved.entry(key).or_default() += 1;
        }
    }
    let gone_asked = asked.keys().filter(|k| !stay.contains(**k)).count();
    eprintln!("{gone_asked} of {pairs} prompts that came and went were shown to the client");
    assert!(
        gone_asked <= MENTIONED_AT_MOST,
        "{gone_asked} prompts that came and went reached the client"
    );
    assert!(asked.values().all(|&n| n == 1), "no prompt asked twice");
    assert!(resolved.values().all(|&n| n == 1), "none resolved twice");
    for (key, _) in resolved.iter() {
        assert!(asked.contains_key(key), "{key} resolved, never asked");
    }
    let _ = child.start_kill();
}
