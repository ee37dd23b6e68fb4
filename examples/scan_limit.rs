//! The scan limit for `scripts/bench`: the least work any consumer of the
//! event stream can do. It reads `GET /event` from the bench's replay server
//! over plain TCP into a 64 KiB buffer and counts event ends with `memchr`,
//! without decoding the chunked framing, until the sentinel question's id
//! goes by. Prints `{"events": N, "wall_s": S}`; the bench takes its CPU
//! time from the exit status (`wait4`).
//!
//! Usage: scan_limit HOST:PORT SENTINEL

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use memchr::memmem;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, sentinel] = &args[..] else {
        eprintln!("usage: scan_limit HOST:PORT SENTINEL");
        std::process::exit(2);
    };
    let started = Instant::now();
    let mut stream = TcpStream::connect(address).expect("connect");
    write!(
        stream,
        "GET /event HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .expect("request");
    let event_end = memmem::Finder::new(b"\n\n");
    let sentinel = memmem::Finder::new(sentinel.as_bytes());
    let keep = sentinel.needle().len().max(2) - 1;
    let mut buffer = vec![0u8; 64 << 10];
    // Bytes carried over from the previous read, so that a needle split
    // across two reads is still found (and an event end counted once).
    let mut carried = 0;
    let mut events = 0usize;
    loop {
        let read = stream.read(&mut buffer[carried..]).expect("read");
        if read == 0 {
            eprintln!("scan_limit: the stream ended before the sentinel");
            std::process::exit(1);
        }
        let filled = carried + read;
        let window = &buffer[..filled];
        // An event end lying wholly in the carried bytes was counted already.
        let new_from = carried.saturating_sub(1);
        events += event_end
            .find_iter(window)
            .filter(|&at| at >= new_from)
            .count();
        if sentinel.find(window).is_some() {
            break;
        }
        carried = keep.min(filled);
        buffer.copy_within(filled - carried..filled, 0);
    }
    println!(
        "{{\"events\": {events}, \"wall_s\": {}}}",
        started.elapsed().as_secs_f64()
    );
}
