//! Bounds that hold while reading, measured from outside: hostile servers
//! (a raw HTTP server in the test, so every byte and every request is the
//! test's) against the real `ask-lsp` binary, whose peak memory is read
//! from `/proc/PID/status` (VmHWM).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// What the fake answers one request with.
enum Answer {
    /// Status, content type, body; the connection is closed after it.
    Body(u16, &'static str, Arc<Vec<u8>>),
    /// An event stream: these bytes, then nothing (the connection held open
    /// until the client leaves), or closed when `close` is set.
    Events { bytes: Arc<Vec<u8>>, close: bool },
}

fn json_answer(status: u16, value: Value) -> Answer {
    Answer::Body(
        status,
        "application/json",
        Arc::new(value.to_string().into_bytes()),
    )
}

/// One request as the fake received it.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    /// Path and query, as sent.
    target: String,
    body: Vec<u8>,
    at: std::time::Instant,
}

type Handler = Arc<dyn Fn(&Request) -> Answer + Send + Sync>;

/// A raw HTTP/1.1 server that records every request.
struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Fake {
    async fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let recorded = requests.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (handler, recorded) = (handler.clone(), recorded.clone());
                tokio::spawn(async move {
                    let (read, mut write) = socket.into_split();
                    let mut read = BufReader::new(read);
                    let Some(request) = read_request(&mut read).await else {
                        return;
                    };
                    recorded.lock().unwrap().push(request.clone());
                    match handler(&request) {
                        Answer::Body(status, content_type, body) => {
                            let head = format!(
                                "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            );
                            let _ = write.write_all(head.as_bytes()).await;
                            let _ = write.write_all(&body).await;
                        }
                        Answer::Events { bytes, close } => {
                            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                            let _ = write.write_all(head.as_bytes()).await;
                            let _ = write.write_all(&bytes).await;
                            if !close {
                                // Held open until the client goes.
                                let mut sink = Vec::new();
                                let _ = read.read_to_end(&mut sink).await;
                            }
                        }
                    }
                    let _ = write.shutdown().await;
                });
            }
        });
        Fake { url, requests }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    fn count(&self, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.target.split('?').next() == Some(path))
            .count()
    }
}

async fn read_request(read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Request> {
    let mut line = String::new();
    read.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if read.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some(Request {
        method,
        target,
        body,
        at: std::time::Instant::now(),
    })
}

/// ask-lsp's peak resident memory so far, in MiB.
fn peak_rss_mib(client: &mut LspClient) -> u64 {
    let pid = client.child().id().expect("running");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kib / 1024
}

/// Every message received for `span`, noise included.
async fn collect(client: &mut LspClient, span: Duration) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + span;
    let mut all = Vec::new();
    while tokio::time::Instant::now() < deadline {
        all.extend(client.drain(Duration::from_millis(20)).await);
    }
    all
}

fn method_count(messages: &[Value], method: &str) -> usize {
    messages.iter().filter(|m| m["method"] == method).count()
}

/// An OpenCode 1.x server as far as recognising it goes: no `/api/info`.
fn opencode1_info() -> Answer {
    Answer::Body(200, "text/html", Arc::new(b"<html></html>".to_vec()))
}

#[tokio::test]
async fn a_listing_that_keeps_failing_backs_off_and_is_said_once_per_reason() {
    let locked = Arc::new(AtomicBool::new(false));
    let lock = locked.clone();
    let fake = Fake::start(move |request| {
        if lock.load(Ordering::SeqCst) {
            return json_answer(401, json!({"message": "unauthorized"}));
        }
        match request.target.split('?').next().unwrap() {
            "/api/info" => opencode1_info(),
            "/event" => Answer::Events {
                bytes: Arc::new(b": hello\n\n".to_vec()),
                close: false,
            },
            "/question" => json_answer(500, json!({"message": "listing broke"})),
            _ => json_answer(200, json!([])),
        }
    })
    .await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": fake.url, "directory": "/p"}]}),
        )
        .await;
    wait_for(|| fake.count("/question") > 0).await;
    let started = std::time::Instant::now();
    let seen = collect(&mut client, Duration::from_secs(4)).await;
    // After the first second (the back-off grows: 200 ms, 400 ms, 800 ms)
    // it is at its 1 s cap: three rounds of info, subscription and listing.
    let requests = fake
        .requests()
        .iter()
        .filter(|r| r.at > started + Duration::from_secs(1))
        .count();
    assert!(requests <= 12, "{requests} requests in 3 s");
    let statuses = method_count(&seen, "askQuestions/status");
    assert!(statuses <= 4, "{statuses} status notifications in 4 s");
    let said = method_count(&seen, "window/showMessage");
    assert!(said <= 1, "the same failure said again: {seen:#?}");

    // A new reason is said, once.
    locked.store(true, Ordering::SeqCst);
    let seen = collect(&mut client, Duration::from_secs(3)).await;
    let said: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .collect();
    assert_eq!(said.len(), 1, "{said:#?}");
    let message = said[0]["params"]["message"].as_str().unwrap();
    assert!(message.contains("401 Unauthorized"), "{message}");
}

/// A `message.part.updated` event for a running question tool call.
fn running(call: &str) -> String {
    let event = json!({"id": "evt_1", "type": "message.part.updated",
        "properties": {"part": {"id": "prt_1", "sessionID": "ses_1", "type": "tool",
            "tool": "question", "callID": call, "state": {"status": "running"}}}});
    format!("data: {event}\n\n")
}

#[tokio::test]
async fn over_long_tool_call_ids_are_never_remembered_nor_looked_up() {
    const EVENTS: usize = 100;
    let filler = "x".repeat(1 << 20);
    let mut stream = String::new();
    for n in 0..EVENTS {
        stream.push_str(&running(&format!("call_{n}_{filler}")));
    }
    // A question after them: once it is asked, every event before it was handled.
    let asked = json!({"id": "evt_2", "type": "question.asked", "properties": {
        "id": "que_1", "sessionID": "ses_1",
        "questions": [{"question": "Which?", "header": "Pick",
            "options": [{"label": "a", "description": ""}]}],
        "tool": {"messageID": "msg_1", "callID": "call_ordinary"}}});
    stream.push_str(&format!("data: {asked}\n\n"));
    let stream = Arc::new(stream.into_bytes());
    let fake = Fake::start(
        move |request| match request.target.split('?').next().unwrap() {
            "/api/info" => opencode1_info(),
            "/event" => Answer::Events {
                bytes: stream.clone(),
                close: false,
            },
            "/session/status" => json_answer(200, json!({})),
            _ => json_answer(200, json!([])),
        },
    )
    .await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": fake.url, "directory": "/p"}]}),
        )
        .await;
    // 100 MiB of events take a while through a debug build.
    let deadline = tokio::time::Instant::now() + 6 * WAIT;
    loop {
        let seen = client.drain(Duration::from_millis(200)).await;
        if let Some(ask) = seen.iter().find(|m| m["method"] == "askQuestions/ask") {
            assert_eq!(ask["params"]["requestID"], "que_1");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the question after the events"
        );
    }
    let peak = peak_rss_mib(&mut client);
    eprintln!("peak RSS after {EVENTS} 1 MiB tool-call ids: {peak} MiB");
    assert_eq!(fake.count("/question"), 1, "the resync's listing alone");
    assert!(peak < 64, "{peak} MiB");
}

/// `count` small question forms of one session, ids starting `prefix`.
fn forms(prefix: &str, session: &str, count: usize) -> Vec<Value> {
    (0..count)
        .map(|n| {
            json!({"id": format!("frm_{prefix}{n}"), "sessionID": session, "title": "Pick",
                "metadata": {"kind": "question"},
                "fields": [{"key": "q0", "type": "string", "title": "Which?",
                    "options": [{"value": "a", "label": "a"}, {"value": "b", "label": "b"}]}]})
        })
        .collect()
}

#[tokio::test]
async fn an_opencode2_resync_is_bounded_while_its_listings_are_read() {
    // About 15 MiB per listing (under the 16 MiB body bound), four listings.
    const PER_LISTING: usize = 60_000;
    const SESSIONS: [&str; 3] = ["ses_a", "ses_b", "ses_c"];
    let location = Arc::new(
        json!({"location": {"directory": "/p"}, "data": forms("l", "ses_a", PER_LISTING)})
            .to_string()
            .into_bytes(),
    );
    let mut by_session = std::collections::HashMap::new();
    for session in SESSIONS {
        let body = json!({"data": forms(session, session, PER_LISTING)}).to_string();
        by_session.insert(
            format!("/api/session/{session}/form"),
            Arc::new(body.into_bytes()),
        );
    }
    eprintln!("listings of {} MiB each", location.len() >> 20);
    // The first stream names the sessions (one form each) and closes: the
    // resync after it lists every session.
    let mut named = String::new();
    for session in SESSIONS {
        let form = &forms(&format!("{session}_event"), session, 1)[0];
        let event = json!({"id": "evt", "type": "form.created", "data": {"form": form}});
        named.push_str(&format!("data: {event}\n\n"));
    }
    let named = Arc::new(named.into_bytes());
    let streams = Arc::new(AtomicUsize::new(0));
    let opened = streams.clone();
    let fake = Fake::start(move |request| {
        let path = request.target.split('?').next().unwrap();
        match path {
            "/api/info" => json_answer(200, json!({"version": "2.0.0", "pid": 1})),
            "/api/event" => Answer::Events {
                bytes: named.clone(),
                close: opened.fetch_add(1, Ordering::SeqCst) == 0,
            },
            // The location listing, as the current generation and the one before name it.
            "/api/form" | "/api/form/request" => {
                Answer::Body(200, "application/json", location.clone())
            }
            _ => match by_session.get(path) {
                Some(body) => Answer::Body(200, "application/json", body.clone()),
                None => json_answer(200, json!({"data": []})),
            },
        }
    })
    .await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(extension_caps(), json!({"servers": [{"url": fake.url}]}))
        .await;
    let deadline = tokio::time::Instant::now() + 6 * WAIT;
    while fake.count("/api/session/ses_c/permission") == 0 {
        let targets: Vec<String> = fake.requests().into_iter().map(|r| r.target).collect();
        assert!(
            tokio::time::Instant::now() < deadline,
            "{targets:?}\n{}",
            client.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Taken in: the broker's cap, from the first listing.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = client.status().await;
        let pending = status["pending"].as_u64().unwrap_or(0);
        if pending >= 10_000 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let peak = peak_rss_mib(&mut client);
    eprintln!("peak RSS after a resync of 4 listings: {peak} MiB");
    assert!(peak < 160, "{peak} MiB");
}

#[tokio::test]
async fn an_oversized_elicitation_schema_is_declined_before_it_is_built() {
    // 4 MiB of tiny properties: within the event bound.
    let mut properties = String::new();
    let mut n = 0;
    while properties.len() < (4 << 20) - 4096 {
        if n > 0 {
            properties.push(',');
        }
        properties.push_str(&format!("\"p{n}\":{{}}"));
        n += 1;
    }
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{{"sessionId":"ses_1","mode":"form","message":"Fill in","requestedSchema":{{"type":"object","properties":{{{properties}}}}}}}}}"#
    );
    let stream = Arc::new(format!("id: 1\nevent: message\ndata: {message}\n\n").into_bytes());
    let fake = Fake::start(move |request| match request.method.as_str() {
        "GET" => Answer::Events {
            bytes: stream.clone(),
            close: false,
        },
        _ => Answer::Body(202, "application/json", Arc::new(Vec::new())),
    })
    .await;
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"backend": "sandbox-agent", "url": fake.url, "serverId": "s1"}]}),
        )
        .await;
    let posted = |fake: &Fake| {
        fake.requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap())
            .collect::<Vec<Value>>()
    };
    // The stream opens with it, so it is the server's history; still open
    // when the history settles, it is declined once (issue #42: a request
    // that cannot be shown is declined whenever it arrives), then said.
    let said = client.next_method("window/showMessage").await;
    let text = said["params"]["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("cannot be shown") && text.contains("more than"),
        "{said}"
    );
    let posted = posted(&fake);
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!(posted[0]["id"], 7, "{posted:?}");
    assert_eq!(posted[0]["result"]["action"], "decline", "{posted:?}");
    let peak = peak_rss_mib(&mut client);
    eprintln!("peak RSS after a 4 MiB schema of {n} properties: {peak} MiB");
    assert!(peak < 64, "{peak} MiB");
}

#[tokio::test]
async fn watch_says_a_changed_reason_and_not_the_same_one_again() {
    let locked = Arc::new(AtomicBool::new(false));
    let lock = locked.clone();
    let fake = Fake::start(move |request| {
        if lock.load(Ordering::SeqCst) {
            return json_answer(401, json!({"message": "unauthorized"}));
        }
        match request.target.split('?').next().unwrap() {
            "/api/info" => opencode1_info(),
            "/event" => Answer::Events {
                bytes: Arc::new(b": hello\n\n".to_vec()),
                close: false,
            },
            "/question" => json_answer(500, json!({"message": "listing broke"})),
            _ => json_answer(200, json!([])),
        }
    })
    .await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &fake.url, "--directory", "/p"])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let into = said.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            into.lock().unwrap().push(line);
        }
    });
    let count = |said: &Mutex<Vec<String>>, reason: &str| {
        let said = said.lock().unwrap();
        said.iter().filter(|l| l.contains(reason)).count()
    };
    wait_for(|| count(&said, "listing broke") > 0).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        count(&said, "listing broke"),
        1,
        "{:#?}",
        said.lock().unwrap()
    );

    locked.store(true, Ordering::SeqCst);
    wait_for(|| count(&said, "401 Unauthorized") > 0).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        count(&said, "401 Unauthorized"),
        1,
        "{:#?}",
        said.lock().unwrap()
    );
    assert_eq!(
        count(&said, "listing broke"),
        1,
        "{:#?}",
        said.lock().unwrap()
    );
}
