//! The stream writer for `scripts/bench`:
//!
//! - `replay_stream STREAM_FILE` (the bulk part) serves a pre-built event
//!   stream (the file the bench wrote: OpenCode's chunked framing and event
//!   mix) to every `GET /event`, as fast as the reader takes it. Prints its
//!   address, the stream's size, then for each stream the time its body
//!   started (wall clock, Python's `time.time()`).
//! - `replay_stream --paced STREAM_FILE RATE SUBSCRIBERS` (the per-event
//!   part) waits for SUBSCRIBERS streams (printing its address, then
//!   `ready`), then for a line on stdin, then writes the file's chunks at
//!   RATE events/s, each in one `send()` to each subscriber, as OpenCode
//!   does while a model streams. Prints `done EVENTS SECONDS LATE`: how
//!   long the writing took, and how many events went out over a millisecond
//!   after their time.
//! - `replay_stream --idle SERVERS HEARTBEAT_S` (the wake-up part) serves
//!   SERVERS ports (printed on one line) whose streams send only a
//!   `server.heartbeat` every HEARTBEAT_S seconds, as an idle OpenCode does;
//!   each server's first stream ends at its own point of the first period,
//!   so that the streams are out of phase.
//!
//! Other requests (ask-lsp's resync) find nothing pending. A connection
//! stays open after its stream until its reader closes it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
const CONNECTED: &str = r#"{"id":"evt_c","type":"server.connected","properties":{}}"#;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match &args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [path] if !path.starts_with("--") => bulk(path),
        ["--paced", path, rate, subscribers] => paced(path, number(rate), number(subscribers)),
        ["--idle", servers, heartbeat] => idle(number(servers), number(heartbeat)),
        _ => {
            eprintln!(
                "usage: replay_stream STREAM_FILE | --paced STREAM_FILE RATE SUBSCRIBERS | --idle SERVERS HEARTBEAT_S"
            );
            std::process::exit(2);
        }
    }
}

fn number(text: &str) -> u64 {
    text.parse().unwrap_or_else(|_| {
        eprintln!("replay_stream: not a number: {text}");
        std::process::exit(2)
    })
}

fn bulk(path: &str) {
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

/// The file's chunks (`LEN\r\nEVENT\r\n`), each whole.
fn chunks(stream: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let line = stream[at..]
            .iter()
            .position(|&b| b == b'\r')
            .expect("chunk size");
        let size = std::str::from_utf8(&stream[at..at + line]).expect("hex");
        let size = usize::from_str_radix(size, 16).expect("hex");
        let end = at + line + 2 + size + 2;
        out.push(&stream[at..end]);
        at = end;
    }
    out
}

fn paced(path: &str, rate: u64, subscribers: u64) {
    let stream = std::fs::read(path).expect("stream file");
    let chunks = chunks(&stream);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    println!("{}", listener.local_addr().expect("address"));
    let (opened, streams) = mpsc::channel();
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            let Ok(connection) = connection else { continue };
            let opened = opened.clone();
            std::thread::spawn(move || {
                if let Some((reader, writer)) = open_stream(connection) {
                    let _ = opened.send(writer);
                    hold(reader);
                }
            });
        }
    });
    let mut writers: Vec<TcpStream> = streams.iter().take(subscribers as usize).collect();
    println!("ready");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).expect("stdin");
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let started = Instant::now();
    let mut late = 0;
    for (n, chunk) in chunks.iter().enumerate() {
        let due = started + interval * n as u32;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        } else if now - due > Duration::from_millis(1) {
            late += 1;
        }
        // One event, one send() to each; each event starts with the next
        // subscriber, so none is always woken first. A reader that went is
        // left out.
        let start = n % writers.len();
        for index in (start..writers.len()).chain(0..start) {
            let _ = writers[index].write_all(chunk);
        }
    }
    println!(
        "done {} {:.3} {late}",
        chunks.len(),
        started.elapsed().as_secs_f64()
    );
    // Held open until the bench is done reading the consumers.
    let mut sink = String::new();
    while matches!(std::io::stdin().read_line(&mut sink), Ok(n) if n > 0) {}
}

fn idle(servers: u64, heartbeat: u64) {
    let listeners: Vec<TcpListener> = (0..servers)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind"))
        .collect();
    let addresses: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().expect("address").to_string())
        .collect();
    println!("{}", addresses.join(" "));
    let beat = chunk_of(HEARTBEAT);
    let period = Duration::from_secs(heartbeat);
    for (index, listener) in listeners.into_iter().enumerate() {
        let beat = beat.clone();
        // Servers started at different times: each one's first stream ends
        // (cleanly) at its own point of one period, so the streams that
        // follow, and their heartbeats, are out of phase, as real ones are.
        let first_close = period * index as u32 / servers as u32;
        let first = Arc::new(AtomicBool::new(true));
        std::thread::spawn(move || {
            for connection in listener.incoming() {
                let Ok(connection) = connection else { continue };
                let beat = beat.clone();
                let first = first.clone();
                std::thread::spawn(move || {
                    let Some((_reader, mut writer)) = open_stream(connection) else {
                        return;
                    };
                    if first.swap(false, Ordering::Relaxed) {
                        std::thread::sleep(first_close);
                        let _ = writer.write_all(b"0\r\n\r\n");
                        return;
                    }
                    loop {
                        std::thread::sleep(period);
                        if writer.write_all(beat.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
    }
    let mut sink = String::new();
    while matches!(std::io::stdin().read_line(&mut sink), Ok(n) if n > 0) {}
}

const HEARTBEAT: &str = r#"{"id":"evt_h","type":"server.heartbeat","properties":{}}"#;

fn chunk_of(data: &str) -> String {
    let event = format!("data: {data}\n\n");
    format!("{:x}\r\n{event}\r\n", event.len())
}

/// Answers requests until one asks for the stream, then sends its head and
/// `server.connected`: the connection's two halves, or `None` if it went.
fn open_stream(connection: TcpStream) -> Option<(BufReader<TcpStream>, TcpStream)> {
    connection.set_nodelay(true).ok();
    let mut reader = BufReader::new(connection.try_clone().ok()?);
    let mut writer = connection;
    loop {
        let (method, path, length) = request(&mut reader)?;
        if method == "GET" && path.starts_with("/event") {
            break;
        }
        // ask-lsp's resync and replies: nothing pending, nobody busy.
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        let answer = match (method.as_str(), path.split('?').next()) {
            ("POST", _) => "true",
            (_, Some("/session/status")) => "{}",
            _ => "[]",
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        writer.write_all(response.as_bytes()).ok()?;
    }
    let first = chunk_of(CONNECTED);
    writer.write_all(&[HEAD, first.as_bytes()].concat()).ok()?;
    Some((reader, writer))
}

/// Holds a stream open until its reader goes.
fn hold(mut reader: BufReader<TcpStream>) {
    let mut sink = [0u8; 1024];
    while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
}

fn serve(connection: TcpStream, stream: &[u8]) {
    let Some((reader, mut writer)) = open_stream(connection) else {
        return;
    };
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
    hold(reader);
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
