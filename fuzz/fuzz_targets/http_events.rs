//! The event stream's HTTP/1.1 reader (src/backends/net/h1.rs) on arbitrary
//! bytes: the response head never panics; the chunked framing taken apart
//! in arbitrary pieces gives what it gives whole (the same body bytes, then
//! the same end or error); any body framed in chunks of any size comes back
//! as itself; and the SSE decoder behind it decodes the same events however
//! the reads fell.
#![no_main]

use ask_lsp::fuzzing::{ChunkFault, Dechunker, SseDecoder, SseItem, http_head};
use libfuzzer_sys::fuzz_target;

/// The body and the end (`Ok(more)` or the error) of `wire` fed in pieces.
fn dechunk(wire: &[u8], piece: usize) -> (Vec<u8>, Result<bool, ChunkFault>) {
    let mut dechunker = Dechunker::default();
    let mut body = Vec::new();
    let mut end = Ok(true);
    for piece in wire.chunks(piece) {
        end = dechunker.feed(piece, |data| body.extend_from_slice(data));
        if !matches!(end, Ok(true)) {
            break;
        }
    }
    (body, end)
}

/// The events in `wire`'s body, decoded run by run as the reader hands them on.
fn events(wire: &[u8], piece: usize) -> Vec<SseItem> {
    let mut dechunker = Dechunker::default();
    let mut decoder = SseDecoder::new(1024);
    let mut items = Vec::new();
    for piece in wire.chunks(piece) {
        let fed = dechunker.feed(piece, |data| decoder.feed(data, &mut items));
        if !matches!(fed, Ok(true)) {
            break;
        }
    }
    items
}

fuzz_target!(|input: &[u8]| {
    let Some((&split, data)) = input.split_first() else {
        return;
    };
    let piece = usize::from(split).max(1);
    http_head(data);

    // Arbitrary bytes as chunked framing.
    let whole = dechunk(data, data.len().max(1));
    assert_eq!(whole, dechunk(data, piece));
    assert_eq!(events(data, data.len().max(1)), events(data, piece));

    // Arbitrary bytes as a body, framed in chunks of `piece` bytes.
    let mut wire = Vec::new();
    for chunk in data.chunks(piece) {
        wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        wire.extend_from_slice(chunk);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(dechunk(&wire, 1 + piece / 3), (data.to_vec(), Ok(false)));
});
