//! The SSE decoder and OpenCode event parser on arbitrary bytes in arbitrary
//! chunks: never a panic, and chunking never changes what is decoded.
#![no_main]

use ask_lsp::fuzzing::{SseDecoder, SseItem, opencode_event};
use libfuzzer_sys::fuzz_target;

fn decode(data: &[u8], chunk: usize) -> Vec<SseItem> {
    let mut decoder = SseDecoder::new(1024);
    let mut items = Vec::new();
    for piece in data.chunks(chunk) {
        decoder.feed(piece, &mut items);
    }
    items
}

fuzz_target!(|input: &[u8]| {
    let Some((&chunk, data)) = input.split_first() else {
        return;
    };
    let whole = decode(data, data.len().max(1));
    assert_eq!(whole, decode(data, usize::from(chunk).max(1)));
    for item in whole {
        if let SseItem::Event(event) = item {
            for global in [false, true] {
                opencode_event(&event.data, global);
            }
        }
    }
});
