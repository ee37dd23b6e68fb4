//! Which OpenCode events can matter, decided on an event's raw bytes before
//! anything is copied or parsed. Nearly every event on a busy stream is a
//! streamed token (`message.part.delta`); this rejects those after reading
//! their first ~60 bytes.
//!
//! It must never reject an event the parser acts on (a false positive only
//! costs a parse). OpenCode writes `JSON.stringify` output, where the event's
//! `type` follows its `id` with no spaces: that shape is read directly. For
//! anything else (spaces, other key orders, escapes) it falls back to a
//! conservative substring search.

use memchr::memmem;

/// Whether the `data` of an event from `/event` (`global == false`) or from
/// `/global/event` (`{"directory":…,"payload":{event}}`) may matter.
pub(crate) fn opencode(data: &[u8], global: bool) -> bool {
    if !global && is_token_delta(data) {
        return false;
    }
    match event_type(data, global) {
        Some((kind, rest)) => type_relevant(kind, rest),
        None => fallback(data),
    }
}

/// A streamed token as OpenCode 1.x writes it, `{"id":"evt_…",
/// "type":"message.part.delta",…`: 97.5 % of a busy stream, told by one
/// search over the id and one comparison.
fn is_token_delta(data: &[u8]) -> bool {
    const AFTER_ID: &[u8] = b",\"type\":\"message.part.delta\"";
    let Some(id) = data.strip_prefix(b"{\"id\":\"") else {
        return false;
    };
    memchr::memchr2(b'"', b'\\', id)
        .is_some_and(|end| id[end] == b'"' && id[end + 1..].starts_with(AFTER_ID))
}

/// [`opencode`] for `/event`, as a plain function for a decoder filter.
pub(crate) fn opencode_event(data: &[u8]) -> bool {
    opencode(data, false)
}

/// [`opencode`] for `/global/event`.
pub(crate) fn opencode_global_event(data: &[u8]) -> bool {
    opencode(data, true)
}

fn type_relevant(kind: &[u8], rest: &[u8]) -> bool {
    match kind {
        b"session.error" | b"session.idle" | b"session.deleted" | b"session.status" => true,
        // Which agent runs a session (for `agents` policies).
        b"session.created" | b"session.updated" => true,
        // The new engine's tool calls ending (1.18.34).
        b"session.next.tool.success" | b"session.next.tool.failed" => true,
        b"server.connected" | b"server.heartbeat" => true,
        b"server.instance.disposed" | b"global.disposed" => true,
        // SDK 1.19's envelope around a durable event: judged by the inner
        // event's type, without its version (`session.created.1`).
        b"sync" => match sync_type(rest) {
            Some((inner, after)) => inner != b"sync" && type_relevant(inner, after),
            None => fallback(rest),
        },
        // Only tool parts matter; a tool part has the string "tool" as its
        // type (an escaped quote inside text is `\"`, so cannot match) unless
        // that is written with `\u` escapes.
        b"message.part.updated" => {
            memmem::find(rest, b"\"tool\"").is_some() || memmem::find(rest, b"\\u").is_some()
        }
        _ => kind.starts_with(b"question.") || kind.starts_with(b"permission"),
    }
}

/// The words every relevant event's type contains, for events whose shape is
/// not the one OpenCode writes.
fn fallback(data: &[u8]) -> bool {
    [
        "question",
        "permission",
        "session.",
        "server.",
        "disposed",
        "\"tool\"",
        "\\u",
    ]
    .iter()
    .any(|word| memmem::find(data, word.as_bytes()).is_some())
}

/// The event's `type` value and the bytes after it, when the event starts as
/// OpenCode writes it: an object whose keys before `type` (and before
/// `payload` when `global`) have plain string values. `None` otherwise.
fn event_type(data: &[u8], global: bool) -> Option<(&[u8], &[u8])> {
    let mut rest = data.strip_prefix(b"{")?;
    let mut want: &[u8] = if global { b"payload" } else { b"type" };
    loop {
        let (key, after, _) = string(rest)?;
        rest = after.strip_prefix(b":")?;
        if key == want {
            if want == b"payload" {
                rest = rest.strip_prefix(b"{")?;
                want = b"type";
                continue;
            }
            let (value, after, escaped) = string(rest)?;
            // The parser reads `type` borrowed, so it takes no escapes either.
            return (!escaped).then_some((value, after));
        }
        let (_, after, _) = string(rest)?;
        rest = after.strip_prefix(b",")?;
    }
}

/// In what follows a sync envelope's `type`, the inner event's type without
/// its version and the bytes after it, when written as OpenCode writes it
/// (`,"id":"…","syncEvent":{"type":"message.part.updated.1",…`).
fn sync_type(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    const KEY: &[u8] = b"\"syncEvent\":";
    let at = memmem::find(rest, KEY)?;
    let (kind, after) = event_type(&rest[at + KEY.len()..], false)?;
    let name = match kind.iter().rposition(|&b| b == b'.') {
        Some(dot) if dot + 1 < kind.len() && kind[dot + 1..].iter().all(u8::is_ascii_digit) => {
            &kind[..dot]
        }
        _ => kind,
    };
    Some((name, after))
}

/// A JSON string at the start of `bytes`: its raw contents, what follows,
/// and whether it holds an escape. The strings read here are ids and short
/// keys: a plain loop beats a vectorised search's set-up on them.
fn string(bytes: &[u8]) -> Option<(&[u8], &[u8], bool)> {
    let body = bytes.strip_prefix(b"\"")?;
    let mut escaped = false;
    let mut at = 0;
    while let Some(&byte) = body.get(at) {
        match byte {
            b'"' => return Some((&body[..at], &body[at + 1..], escaped)),
            // An escape and the byte it escapes.
            b'\\' => {
                escaped = true;
                at += 2;
            }
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines from a real OpenCode 1.18.33 `/event` stream.
    const DELTA: &str = r#"{"id":"evt_20377f5d4001ZQ6BLj9UE2Uazq","type":"message.part.delta","properties":{"sessionID":"ses_dfc881d0bffezSP70hMi551Xe5","messageID":"msg_20377f4f0001DyMmX3nhojXwUS","partID":"prt_20377f5d000177EpRM1pLYIQnL","field":"text","delta":"User has answered your questions: \"Which color should the button be?\"=\"Blue\"."}}"#;
    const TEXT_PART: &str = r#"{"id":"evt_2036e4c8a001X3LuV24yDA78FN","type":"message.part.updated","properties":{"sessionID":"ses_dfc91f191ffe9Nb2oUqPwT6EL9","part":{"type":"text","text":"Please ask me a \"tool\" question","messageID":"msg_2036e4c64001rC6YRq5bUiFqFD","sessionID":"ses_dfc91f191ffe9Nb2oUqPwT6EL9","id":"prt_2036e4c7a001XzoxZabEw5V1QN"},"time":1795353889930}}"#;
    const TOOL_PART: &str = r#"{"id":"evt_2036e57b0001GyCkCn5JH6iB3N","type":"message.part.updated","properties":{"sessionID":"ses_dfc91f191ffe9Nb2oUqPwT6EL9","part":{"id":"prt_2036e57af001Gg2ij1kNxLtB8y","messageID":"msg_2036e555b001QpWmYmmoK0bVWE","sessionID":"ses_dfc91f191ffe9Nb2oUqPwT6EL9","type":"tool","tool":"question","callID":"call_mock_2","state":{"status":"pending","input":{},"raw":""}},"time":1795353892784}}"#;
    const STATUS: &str = r#"{"id":"evt_2036e4cca001gFzwhMyKaE3VQQ","type":"session.status","properties":{"sessionID":"ses_dfc91f191ffe9Nb2oUqPwT6EL9","status":{"type":"busy"}}}"#;
    const UPDATED: &str = r#"{"id":"evt_2036e4cca001gFzwhMyKaE3VQQ","type":"message.updated","properties":{"info":{"title":"server.connected question"}}}"#;

    fn ev(kind: &str) -> String {
        format!(r#"{{"id":"evt_1","type":"{kind}","properties":{{"sessionID":"ses_1"}}}}"#)
    }

    #[test]
    fn real_events_are_told_apart_by_their_type() {
        assert!(
            !opencode(DELTA.as_bytes(), false),
            "delta mentioning questions"
        );
        assert!(
            !opencode(TEXT_PART.as_bytes(), false),
            "text part quoting \"tool\""
        );
        assert!(!opencode(UPDATED.as_bytes(), false));
        assert!(opencode(TOOL_PART.as_bytes(), false));
        assert!(opencode(STATUS.as_bytes(), false));
        for kind in [
            "question.asked",
            "question.replied",
            "question.rejected",
            "permission.asked",
            "permission.replied",
            "session.error",
            "session.idle",
            "session.deleted",
            "session.created",
            "session.updated",
            "server.connected",
            "server.heartbeat",
            "server.instance.disposed",
            "global.disposed",
            "question.v2.asked",
            "question.v2.replied",
            "question.v2.rejected",
        ] {
            assert!(opencode(ev(kind).as_bytes(), false), "{kind}");
        }
        for kind in ["session.diff", "message.updated", "plugin.added"] {
            assert!(!opencode(ev(kind).as_bytes(), false), "{kind}");
        }
    }

    #[test]
    fn the_global_wrapper_is_looked_through() {
        let wrap = |e: &str| format!(r#"{{"directory":"C:\\work \"x\"","payload":{e}}}"#);
        assert!(opencode(wrap(&ev("question.asked")).as_bytes(), true));
        assert!(opencode(wrap(TOOL_PART).as_bytes(), true));
        assert!(!opencode(wrap(DELTA).as_bytes(), true));
        // Not read as the global shape when it is not: falls back.
        assert!(opencode(ev("question.asked").as_bytes(), true));
    }

    #[test]
    fn other_shapes_fall_back_to_a_search_that_keeps_anything_relevant() {
        for data in [
            r#"{ "id": "evt_1", "type": "session.idle", "properties": {} }"#,
            r#"{"properties":{"id":"que_1"},"type":"question.asked"}"#,
            r#"{"id":1,"type":"server.heartbeat"}"#,
            r#"{"type":"question\u002easked"}"#,
            r#"{"id":"evt_1","type": "message.part.updated","properties":{"part":{"type": "tool"}}}"#,
            r#"{"id":"evt_1\"","type":"permission.asked"}"#,
        ] {
            assert!(opencode(data.as_bytes(), false), "{data}");
        }
        for data in [
            "",
            "{",
            "{\"",
            "{\"id\":\"\\",
            "not json",
            "{\"id\":\"x\",\"type\":",
        ] {
            assert!(!opencode(data.as_bytes(), false), "{data}");
        }
    }
    #[test]
    fn sync_envelopes_are_judged_by_the_event_inside() {
        let sync = |kind: &str, data: &str| {
            format!(
                r#"{{"directory":"/p","project":"global","workspace":"wrk_1","payload":{{"type":"sync","id":"evt_1","syncEvent":{{"type":"{kind}","id":"evt_2","seq":1,"aggregateID":"ses_1","data":{data}}}}}}}"#
            )
        };
        for kind in [
            "session.created.1",
            "session.updated.1",
            "session.deleted.1",
        ] {
            assert!(opencode(sync(kind, "{}").as_bytes(), true), "{kind}");
        }
        let tool = r#"{"sessionID":"ses_1","part":{"type":"tool","tool":"question"}}"#;
        let text = r#"{"sessionID":"ses_1","part":{"type":"text","text":"a question"}}"#;
        assert!(opencode(
            sync("message.part.updated.1", tool).as_bytes(),
            true
        ));
        assert!(!opencode(
            sync("message.part.updated.1", text).as_bytes(),
            true
        ));
        assert!(!opencode(sync("message.updated.1", "{}").as_bytes(), true));
        assert!(!opencode(
            sync("session.next.text.started.1", "{}").as_bytes(),
            true
        ));
        // Every line of the 1.19 fixture the parser acts on is kept.
        for line in include_str!("../../../tests/fixtures/opencode-1.19/global-stream.jsonl")
            .lines()
            .chain(include_str!("../../../tests/fixtures/opencode-1.19/disposed.jsonl").lines())
        {
            let acted_on = super::super::wire::parse_event(line, true)
                .map(|p| p.event != super::super::wire::OcEvent::Other)
                .unwrap_or(true);
            assert!(!acted_on || opencode(line.as_bytes(), true), "{line}");
        }
    }
}
