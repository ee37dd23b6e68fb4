//! The OpenCode 1.x backend learns the new session engine's routes from the
//! server's `/doc`, against a minimal fake of 1.18.34 (its unknown routes
//! answer the web app's page with 200, as the real one's do): the cases the
//! real server cannot be made to show on demand. Assertions are on what the
//! fake received.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request the fake received: method, path (no query), body.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// What `/doc` answers.
#[derive(Clone, Copy)]
enum Doc {
    /// 503: the description cannot be read now.
    Unavailable,
    /// A description with the reply routes but no listing route.
    WithoutListing,
}

const QUESTION: &str = r#"{"id":"evt_1","type":"question.v2.asked","properties":{"id":"que_n1","sessionID":"ses_n1","questions":[{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":""},{"label":"SQLite","description":""}]}],"tool":{"messageID":"msg_1","callID":"call_n1"}}}"#;

/// A fake whose event streams stay open (as a live one does).
async fn fake(doc: Doc) -> (String, Seen) {
    fake_streaming_for(doc, Duration::from_secs(60)).await
}

/// A fake whose event streams end `stream_for` after the question, as a
/// dropped connection's do.
async fn fake_streaming_for(doc: Doc, stream_for: Duration) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, doc, stream_for, record.clone()));
        }
    });
    (url, seen)
}

async fn serve(mut stream: TcpStream, doc: Doc, stream_for: Duration, seen: Seen) {
    let mut buffer = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let Ok(read) = stream.read(&mut chunk).await else {
            return;
        };
        if read == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let mut chunk = [0u8; 4096];
        let read = stream.read(&mut chunk).await.unwrap_or(0);
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = String::from_utf8_lossy(&buffer[head_end..]).into_owned();
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or("").to_owned();
    let target = words.next().unwrap_or("");
    let path = target.split('?').next().unwrap_or("").to_owned();
    seen.lock()
        .unwrap()
        .push((method.clone(), path.clone(), body));
    if path == "/event" {
        let connected = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {}\n\n",
            json!({"id": "evt_0", "type": "server.connected", "properties": {}})
        );
        let _ = stream.write_all(connected.as_bytes()).await;
        // Asked once ask-lsp has listed what is pending.
        for _ in 0..250 {
            let listed = seen
                .lock()
                .unwrap()
                .iter()
                .any(|(_, p, _)| p == "/question");
            if listed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = stream
            .write_all(format!("data: {QUESTION}\n\n").as_bytes())
            .await;
        tokio::time::sleep(stream_for).await;
        return;
    }
    let json =
        |status: &str, body: Value| (status.to_owned(), "application/json", body.to_string());
    let (status, kind, body) = match (method.as_str(), path.as_str()) {
        ("GET", "/doc") => match doc {
            Doc::Unavailable => json("503 Service Unavailable", json!({"message": "busy"})),
            Doc::WithoutListing => json(
                "200 OK",
                json!({"openapi": "3.1.0", "paths": {
                    "/question": {"get": {}},
                    "/api/session/{sessionID}/question/{requestID}/reply": {"post": {}},
                    "/api/session/{sessionID}/question/{requestID}/reject": {"post": {}}
                }}),
            ),
        },
        ("GET", "/question" | "/permission") => json("200 OK", json!([])),
        ("GET", "/session/status") => json("200 OK", json!({})),
        // The classic route does not know the new engine's requests.
        ("POST", "/question/que_n1/reply") => json(
            "404 Not Found",
            json!({"_tag": "QuestionNotFoundError", "requestID": "que_n1"}),
        ),
        ("POST", "/api/session/ses_n1/question/que_n1/reply") => (
            "204 No Content".to_owned(),
            "application/json",
            String::new(),
        ),
        _ => (
            "200 OK".to_owned(),
            "text/html",
            "<!doctype html><title>OpenCode</title>".to_owned(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
}

fn posts(seen: &Seen) -> Vec<(String, String)> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(method, _, _)| method == "POST")
        .map(|(_, path, body)| (path.clone(), body.clone()))
        .collect()
}

async fn sidecar(url: &str) -> LspClient {
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": url, "directory": "/fake/project"}]}),
        )
        .await;
    client
}

#[tokio::test]
async fn without_a_readable_doc_a_new_engine_answer_is_not_lost() {
    let (url, seen) = fake(Doc::Unavailable).await;
    let mut client = sidecar(&url).await;
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], "que_n1");
    client.answer(&ask, json!([["SQLite"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied", "{resolved:#}");
    assert_eq!(resolved["params"]["reason"], "answeredHere", "{resolved:#}");
    // The classic route first (404), then the new engine's, once.
    assert_eq!(
        posts(&seen),
        [
            (
                "/question/que_n1/reply".to_owned(),
                r#"{"answers":[["SQLite"]]}"#.to_owned()
            ),
            (
                "/api/session/ses_n1/question/que_n1/reply".to_owned(),
                r#"{"answers":[["SQLite"]]}"#.to_owned()
            )
        ]
    );
}

#[tokio::test]
async fn a_missing_listing_route_is_said_once_and_never_reconnects() {
    let (url, seen) = fake(Doc::WithoutListing).await;
    let mut client = sidecar(&url).await;
    // The notice comes before the prompt it is about.
    let said = client.next_method("window/showMessage").await;
    let message = said["params"]["message"].as_str().unwrap().to_owned();
    let ask = client.next_method("askQuestions/ask").await;
    assert!(
        message.contains("publishes no listing of its new engine's prompts")
            && message.contains("/api/question/request"),
        "{message}"
    );
    client.answer(&ask, json!([["Postgres"]])).await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied", "{resolved:#}");
    // Straight to the new engine's route: the description names it.
    assert_eq!(
        posts(&seen),
        [(
            "/api/session/ses_n1/question/que_n1/reply".to_owned(),
            r#"{"answers":[["Postgres"]]}"#.to_owned()
        )]
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let requests = seen.lock().unwrap().clone();
    let count = |path: &str| requests.iter().filter(|(_, p, _)| p == path).count();
    assert_eq!(count("/event"), 1, "{requests:?}");
    // Tried once at connect, before the description was read; not since.
    assert_eq!(count("/api/question/request"), 1, "{requests:?}");
    client.expect_quiet(Duration::from_millis(300)).await;
}

fn count(seen: &Seen, path: &str) -> usize {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(_, p, _)| p == path)
        .count()
}

/// A fresh OpenCode builds its description for seconds on the first `GET
/// /doc` and serves nothing else meanwhile: a new-engine server is asked
/// once, at its first new-engine event, and not again when ask-lsp
/// reconnects to it.
#[tokio::test]
async fn a_new_engine_server_is_asked_for_its_description_once_across_reconnects() {
    let (url, seen) = fake_streaming_for(Doc::WithoutListing, Duration::from_millis(200)).await;
    let _client = sidecar(&url).await;
    wait_for(|| count(&seen, "/event") >= 4).await;
    assert_eq!(count(&seen, "/doc"), 1, "{:?}", seen.lock().unwrap());
}

/// A classic server (no new-engine event) is never asked for its
/// description, at connect or when ask-lsp reconnects.
#[tokio::test]
async fn a_classic_server_is_never_asked_for_its_description() {
    let sim = sim().await;
    let mut client = LspClient::with_extension(&sim).await;
    sim.ask(
        None,
        questions(json!([{"question": "Which?", "header": "H",
        "options": [{"label": "A", "description": ""}]}])),
    );
    client.next_method("askQuestions/ask").await;
    for reconnects in 1..=2 {
        sim.drop_streams();
        wait_for(|| {
            let events = sim
                .requests()
                .iter()
                .filter(|r| r.contains("/event"))
                .count();
            events > reconnects && sim.subscribers() > 0
        })
        .await;
    }
    let requests = sim.requests();
    assert!(
        !requests.iter().any(|r| r.starts_with("GET /doc")),
        "{requests:?}"
    );
}
