//! The SSE decoder, the OpenCode prefilter and the event parser on arbitrary
//! bytes in arbitrary chunks: never a panic, chunking never changes what is
//! decoded, filtering in the decoder equals filtering after it, and the
//! prefilter never rejects an event the parser would act on.
#![no_main]

use ask_lsp::fuzzing::{SseDecoder, SseItem, opencode_event, opencode_prefilter};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde_json::value::RawValue;

fn decode(data: &[u8], chunk: usize, relevant: fn(&[u8]) -> bool) -> Vec<SseItem> {
    let mut decoder = SseDecoder::new(1024);
    let mut items = Vec::new();
    for piece in data.chunks(chunk) {
        decoder.feed_filtered(piece, relevant, &mut items);
    }
    items
}

/// The envelope as `parse_event` reads it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    properties: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Global<'a> {
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct PartProps {
    part: Part,
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
}

/// Whether the event is one the prefilter promises to keep.
fn matters(data: &str, global: bool) -> bool {
    let payload = if global {
        match serde_json::from_str::<Global>(data) {
            Ok(wrapper) => wrapper.payload.get(),
            Err(_) => return false,
        }
    } else {
        data
    };
    let Ok(envelope) = serde_json::from_str::<Envelope>(payload) else {
        return false;
    };
    match envelope.kind {
        "session.error" | "session.idle" | "session.deleted" | "session.status" => true,
        "session.created" | "session.updated" => true,
        "server.connected" | "server.heartbeat" | "server.instance.disposed" => true,
        "message.part.updated" => envelope
            .properties
            .and_then(|p| serde_json::from_str::<PartProps>(p.get()).ok())
            .is_some_and(|p| p.part.kind == "tool"),
        kind => kind.starts_with("question.") || kind.starts_with("permission"),
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&chunk, data)) = input.split_first() else {
        return;
    };
    let chunk = usize::from(chunk).max(1);
    let whole = decode(data, data.len().max(1), |_| true);
    assert_eq!(whole, decode(data, chunk, |_| true));
    let kept: Vec<SseItem> = whole
        .iter()
        .filter(|item| match item {
            SseItem::Event(event) => opencode_prefilter(event.data.as_bytes(), false),
            SseItem::Oversized => true,
        })
        .cloned()
        .collect();
    assert_eq!(
        kept,
        decode(data, chunk, |data| opencode_prefilter(data, false))
    );
    for item in whole {
        if let SseItem::Event(event) = item {
            for global in [false, true] {
                assert!(
                    !matters(&event.data, global) || opencode_prefilter(event.data.as_bytes(), global),
                    "the prefilter rejected {:?} (global: {global})",
                    event.data
                );
                opencode_event(&event.data, global);
            }
        }
    }
});
