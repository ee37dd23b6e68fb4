//! The stream writer for `scripts/bench`'s throughput part: serves a
//! pre-built event stream (the file the bench wrote: OpenCode's chunked
//! framing and event mix) to every `GET /event`, as fast as the reader
//! takes it; other requests (ask-lsp's resync) find nothing pending.
//! Prints its address, the stream's size, then for each stream the time
//! its body started (wall clock, Python's `time.time()`). A connection
//! stays open after the stream until its reader closes it, as an idle
//! OpenCode stream would.
//!
//! Usage: replay_stream STREAM_FILE

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
const CONNECTED: &str = r#"{"id":"evt_c","type":"server.connected","properties":{}}"#;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = &args[..] else {
        eprintln!("usage: replay_stream STREAM_FILE");
        std::process::exit(2);
    };
    let stream: Arc<[u8]> = std::fs::read(path).expect("stream file").into();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    println!("{}", listener.local_addr().expect("address"));
    println!("{}", stream.len());
    for connection in listener.incoming() {
        let Ok(connection) = connection else { continue };
        let stream = stream.clone();
        std::thread::spawn(move || serve(connection, &stream));
    }
}

fn serve(connection: TcpStream, stream: &[u8]) {
    connection.set_nodelay(true).ok();
    let mut reader = BufReader::new(connection.try_clone().expect("clone"));
    let mut writer = connection;
    // Requests on a kept-alive connection until one asks for the stream.
    loop {
        let Some((method, path, length)) = request(&mut reader) else {
            return;
        };
        if method == "GET" && path.starts_with("/event") {
            break;
        }
        // ask-lsp's resync and replies: nothing pending, nobody busy.
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let answer = match (method.as_str(), path.split('?').next()) {
            ("POST", _) => "true",
            (_, Some("/session/status")) => "{}",
            _ => "[]",
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
    let connected = format!("data: {CONNECTED}\n\n");
    let first = format!("{:x}\r\n{connected}\r\n", connected.len());
    if writer
        .write_all(&[HEAD, first.as_bytes()].concat())
        .is_err()
    {
        return;
    }
    println!(
        "{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64())
    );
    // One call: the kernel takes it as fast as the reader frees room.
    if writer.write_all(stream).is_err() {
        return;
    }
    // Held open until the reader goes.
    let mut sink = [0u8; 1024];
    while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
}

/// One request's method, path and `content-length`; `None` at the end.
fn request(reader: &mut impl BufRead) -> Option<(String, String, usize)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
        let header = line.trim_end();
        if header.is_empty() {
            return Some((method, path, length));
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
}
