//! A client that stops reading ask-lsp's stdout (a busy or frozen editor)
//! while the server floods prompts: what waits for it stays bounded, and
//! when it reads again it gets the current state, not the backlog (issue
//! #48). The real binary; a raw HTTP server in the test sends the flood as
//! one prepared event stream, so it costs the test nothing per event.
//!
//! `ASK_LSP_TEST_FLOOD=pairs,pending` sets the flood's size: by default
//! 10,000 prompts come and go and 2,000 stay. The flood is
//! 60000,10000: in a debug build on a busy 2-core machine 60,000 pairs took
//! over ten minutes (the time grows faster than the number of pairs, before
//! anything reaches the presenter), and 10,000 prompts still pending cost
//! about 2.3 KB each wherever ask-lsp holds them, which puts a debug build
//! over 64 MiB with them alone (docs/performance.md, "A client that stops
//! reading").

use crate::common;
use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

/// Under this much resident memory while the client does not read.
const MAX_RSS_MIB: u64 = 64;

/// How many prompts come and go, and how many stay.
fn flood_size() -> (usize, usize) {
    std::env::var("ASK_LSP_TEST_FLOOD")
        .ok()
        .and_then(|v| {
            let (pairs, pending) = v.split_once(',')?;
            Some((pairs.trim().parse().ok()?, pending.trim().parse().ok()?))
        })
        .unwrap_or((10_000, 2_000))
}

/// One `question.asked` event of about 1 KB.
fn asked(id: &str, text: &str) -> String {
    let event = json!({"type": "question.asked", "properties": {
        "id": id, "sessionID": "ses_flood",
        "questions": [{"question": text, "header": "Flood",
            "options": [{"label": "yes", "description": ""}, {"label": "no", "description": ""}]}],
        "tool": {"messageID": "msg_1", "callID": format!("call_{id}")}}});
    format!("data: {event}\n\n")
}

fn replied(id: &str) -> String {
    let event = json!({"type": "question.replied", "properties": {
        "sessionID": "ses_flood", "requestID": id, "answers": [["yes"]]}});
    format!("data: {event}\n\n")
}

/// An OpenCode 1.x server as far as ask-lsp's connect goes; its event
/// stream sends the flood once `go` is set.
async fn flood_server(
    flood: Arc<Vec<u8>>,
    go: watch::Receiver<bool>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (flood, mut go, seen) = (flood.clone(), go.clone(), seen.clone());
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut read = BufReader::new(read);
                let mut line = String::new();
                if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                    return;
                }
                let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut length = 0;
                loop {
                    let mut header = String::new();
                    if read.read_line(&mut header).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let header = header.trim_end().to_ascii_lowercase();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(value) = header.strip_prefix("content-length:") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = read.read_exact(&mut body).await;
                let path = target.split('?').next().unwrap_or("").to_owned();
                seen.lock().unwrap().push(path.clone());
                if path == "/event" {
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                    let _ = write.write_all(head.as_bytes()).await;
                    let _ = write.write_all(b": connected\n\n").await;
                    let _ = go.wait_for(|go| *go).await;
                    let _ = write.write_all(&flood).await;
                    let mut sink = Vec::new();
                    let _ = read.read_to_end(&mut sink).await;
                    return;
                }
                let (content_type, body) = match path.as_str() {
                    // OpenCode 1.x: no /api/info (the web app's page).
                    "/api/info" => ("text/html", "<html></html>".to_owned()),
                    "/session/status" => ("application/json", "{}".to_owned()),
                    _ => ("application/json", "[]".to_owned()),
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = write.write_all(head.as_bytes()).await;
                let _ = write.write_all(body.as_bytes()).await;
                let _ = write.shutdown().await;
            });
        }
    });
    (url, requests)
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

/// CPU time the process has used, in clock ticks.
fn cpu_ticks(child: &Child) -> u64 {
    let pid = child.id().expect("running");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime: fields 14 and 15, counting the pid as 1.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Waits until the process has used no CPU for a second: it has taken
/// everything it could (the flood is in, the rest waits on the client).
async fn until_idle(child: &Child, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = cpu_ticks(child);
    let mut still = 0;
    while still < 4 {
        assert!(tokio::time::Instant::now() < deadline, "never idle");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = cpu_ticks(child);
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
}

fn key_of(message: &Value) -> Option<&str> {
    message["params"]["key"].as_str()
}

/// ask-lsp with a client that stops reading once `initialize` is
/// answered, following a server whose event stream sends `pairs` prompts
/// that come and go and then `pending` that stay, once the returned sender
/// says go.
struct Stalled {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    before_stall: Vec<Value>,
    go: watch::Sender<bool>,
    flood_bytes: usize,
}

async fn stalled(pairs: usize, pending: usize) -> Stalled {
    let text = "Which of these should the flood pick? ".repeat(24);
    let mut flood = String::with_capacity((pairs * 2 + pending) * 1_200);
    for n in 0..pairs {
        let id = format!("que_gone{n}");
        flood.push_str(&asked(&id, &text));
        flood.push_str(&replied(&id));
    }
    for n in 0..pending {
        flood.push_str(&asked(&format!("que_stay{n}"), &text));
    }
    let flood_bytes = flood.len();
    let (go_tx, go) = watch::channel(false);
    let (url, requests) = flood_server(Arc::new(flood.into_bytes()), go).await;

    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_remove("ASK_LSP_LOG")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("ASK_LSP_URL")
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .env("ASK_LSP_HOOK", "0")
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
            "initializationOptions": {"servers": [{"url": url, "directory": "/p"}]}}}),
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
    // From here the client reads nothing until the flood is in.
    let listed = || requests.lock().unwrap().iter().any(|p| p == "/question");
    let deadline = tokio::time::Instant::now() + common::WAIT;
    while !listed() {
        assert!(tokio::time::Instant::now() < deadline, "never listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Stalled {
        child,
        stdin,
        stdout,
        before_stall,
        go: go_tx,
        flood_bytes,
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_costs_a_bound_and_gets_the_current_state() {
    let (pairs, pending) = flood_size();
    let Stalled {
        mut child,
        mut stdin,
        mut stdout,
        before_stall,
        go: go_tx,
        flood_bytes,
    } = stalled(pairs, pending).await;
    let started = std::time::Instant::now();
    go_tx.send_replace(true);
    until_idle(&child, Duration::from_secs(600)).await;
    let took = started.elapsed();
    let rss = proc_mib(&child, "VmRSS:");
    let peak = proc_mib(&child, "VmHWM:");
    eprintln!(
        "{pairs} asked+replied and {pending} pending ({} MiB of events) taken in {took:.1?} \
         with the client not reading: {rss} MiB resident, {peak} MiB at the peak",
        flood_bytes >> 20
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
    let deadline = tokio::time::Instant::now() + 6 * common::WAIT;
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
    let expected: HashSet<String> = (0..pending)
        .map(|n| format!("default/que_stay{n}"))
        .collect();
    assert_eq!(listed.len(), pending, "each pending prompt once");
    assert_eq!(
        listed.iter().map(|k| k.to_string()).collect::<HashSet<_>>(),
        expected
    );

    // Prompts that came and went: only those the client was asked about
    // before its pipe and ask-lsp's bounded queue were full were ever
    // mentioned, and nothing after it was told the current state.
    let all: Vec<&Value> = before_stall.iter().chain(after.iter()).collect();
    let mut mentioned: HashMap<&str, usize> = HashMap::new();
    for message in &all {
        if let Some(key) = key_of(message)
            && key.contains("que_gone")
        {
            *mentioned.entry(key).or_default() += 1;
        }
    }
    eprintln!(
        "{} of {pairs} prompts that came and went were mentioned to the client",
        mentioned.len()
    );
    assert!(
        mentioned.len() <= 2_000,
        "{} prompts that came and went reached the client",
        mentioned.len()
    );
    let asks: Vec<&str> = all
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .filter_map(|m| key_of(m))
        .collect();
    let distinct: HashSet<&&str> = asks.iter().collect();
    assert_eq!(distinct.len(), asks.len(), "no prompt asked twice");
    let _ = child.start_kill();
}
