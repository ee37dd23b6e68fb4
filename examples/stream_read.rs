//! The stream read path for `scripts/bench`: the bench's replayed event
//! stream read through ask-lsp's own reader (64 KiB socket reads, chunked
//! framing taken apart in place: what ask-lsp does for `http://`), through
//! reqwest (what it does for `https://`), or through hyper's HTTP/1.1
//! connection directly with a bounded read buffer, each feeding
//! ask-lsp's SSE decoder and OpenCode prefilter on a current-thread runtime,
//! until the sentinel question arrives. Prints
//! `{"events": N, "wall_s": S, "rss_kib": R}` (R: VmRSS with the stream
//! still open, so what the connection keeps is in it); the bench takes the
//! CPU time from `wait4`.
//!
//! `own-blocking` is the own reader with a blocking `std` socket instead of
//! the runtime's readiness-driven reads (an A/B of the runtime's share:
//! about a tenth of the gap to the scan limit when it was measured).
//!
//! Usage: stream_read own|own-blocking|reqwest|hyper HOST:PORT SENTINEL

use std::time::Instant;

use ask_lsp::fuzzing::{Dechunker, SseDecoder, SseItem, opencode_prefilter};
use futures_util::StreamExt;
use http_body_util::BodyExt;

/// hyper's default lets the read buffer grow to ~400 KiB, and it keeps
/// that capacity for the life of the connection.
const MAX_READ_BUFFER: usize = 64 << 10;
/// ask-lsp's reads (src/backends/h1.rs `MAX_READ`).
const OWN_READ: usize = 64 << 10;

struct Events {
    decoder: SseDecoder,
    items: Vec<SseItem>,
    relevant: usize,
    sentinel: String,
}

impl Events {
    /// Feeds one chunk; true once the sentinel went by.
    fn feed(&mut self, chunk: &[u8]) -> bool {
        self.decoder.feed_filtered(
            chunk,
            |data| opencode_prefilter(data, false),
            &mut self.items,
        );
        let mut done = false;
        for item in self.items.drain(..) {
            if let SseItem::Event(event) = item {
                self.relevant += 1;
                done |= event.data.contains(&self.sentinel);
            }
        }
        done
    }
}

/// ask-lsp's own read path after the socket: the head skipped, the chunked
/// framing taken apart in place, the body fed to [`Events`].
#[derive(Default)]
struct Own {
    dechunker: Dechunker,
    /// The head read so far, until its blank line has gone by.
    head: Vec<u8>,
    in_body: bool,
}

impl Own {
    fn request(address: &str) -> Vec<u8> {
        format!("GET /event HTTP/1.1\r\nhost: {address}\r\naccept: text/event-stream\r\n\r\n")
            .into_bytes()
    }

    /// Feeds what one read brought; true once the sentinel went by.
    fn feed(&mut self, mut bytes: &[u8], events: &mut Events) -> bool {
        assert!(!bytes.is_empty(), "the stream ended before the sentinel");
        if !self.in_body {
            self.head.extend_from_slice(bytes);
            let Some(end) = memchr::memmem::find(&self.head, b"\r\n\r\n") else {
                return false;
            };
            bytes = &bytes[end + 4 - (self.head.len() - bytes.len())..];
            self.in_body = true;
        }
        let mut done = false;
        self.dechunker
            .feed(bytes, |data| done |= events.feed(data))
            .expect("framing");
        done
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, address, sentinel] = &args[..] else {
        eprintln!("usage: stream_read own|own-blocking|reqwest|hyper HOST:PORT SENTINEL");
        std::process::exit(2);
    };
    let mut events = Events {
        decoder: SseDecoder::default(),
        items: Vec::new(),
        relevant: 0,
        sentinel: format!("\"{sentinel}\""),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    runtime.block_on(async {
        match mode.as_str() {
            "own" => {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut tcp = tokio::net::TcpStream::connect(address)
                    .await
                    .expect("connect");
                tcp.set_nodelay(true).expect("nodelay");
                tcp.write_all(&Own::request(address))
                    .await
                    .expect("request");
                let mut own = Own::default();
                let mut buffer = vec![0u8; OWN_READ];
                loop {
                    let read = tcp.read(&mut buffer).await.expect("read");
                    if own.feed(&buffer[..read], &mut events) {
                        break;
                    }
                }
                report(&events, started);
            }
            "own-blocking" => {
                use std::io::{Read, Write};
                let mut tcp = std::net::TcpStream::connect(address).expect("connect");
                tcp.write_all(&Own::request(address)).expect("request");
                let mut own = Own::default();
                let mut buffer = vec![0u8; OWN_READ];
                loop {
                    let read = tcp.read(&mut buffer).expect("read");
                    if own.feed(&buffer[..read], &mut events) {
                        break;
                    }
                }
                report(&events, started);
            }
            "reqwest" => {
                // reqwest has no crypto provider of its own (Cargo.toml).
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::new();
                let response = client
                    .get(format!("http://{address}/event"))
                    .header("accept", "text/event-stream")
                    .send()
                    .await
                    .expect("subscribed");
                let mut body = response.bytes_stream();
                while let Some(chunk) = body.next().await {
                    if events.feed(&chunk.expect("chunk")) {
                        break;
                    }
                }
                report(&events, started);
            }
            "hyper" => {
                let tcp = tokio::net::TcpStream::connect(address)
                    .await
                    .expect("connect");
                tcp.set_nodelay(true).expect("nodelay");
                let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
                    .max_buf_size(MAX_READ_BUFFER)
                    .handshake(hyper_util::rt::TokioIo::new(tcp))
                    .await
                    .expect("handshake");
                tokio::spawn(connection);
                let request = http::Request::get("/event")
                    .header("host", address.as_str())
                    .header("accept", "text/event-stream")
                    .body(http_body_util::Empty::<bytes::Bytes>::new())
                    .expect("request");
                let mut body = sender
                    .send_request(request)
                    .await
                    .expect("subscribed")
                    .into_body();
                while let Some(frame) = body.frame().await {
                    if let Ok(data) = frame.expect("frame").into_data()
                        && events.feed(&data)
                    {
                        break;
                    }
                }
                report(&events, started);
            }
            other => panic!("unknown mode {other}"),
        }
    });
}

fn report(events: &Events, started: Instant) {
    let rss_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .unwrap_or(0);
    println!(
        "{{\"events\": {}, \"wall_s\": {}, \"rss_kib\": {rss_kib}}}",
        events.relevant,
        started.elapsed().as_secs_f64()
    );
}
