//! A bounded Server-Sent Events decoder. It is fed raw byte chunks as they
//! arrive and yields whole events; an event larger than the bound is skipped
//! and reported instead of growing memory without limit.

/// The default bound on one event (all its `data:` lines together).
pub const MAX_EVENT_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    Event(SseEvent),
    /// An event (or one line) went over the size bound and was dropped.
    Oversized,
}

#[derive(Debug)]
pub struct SseDecoder {
    max_event: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    /// Set while the rest of an oversized event is being dropped.
    skipping: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new(MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    pub fn new(max_event: usize) -> Self {
        Self {
            max_event,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event: None,
            id: None,
            skipping: false,
        }
    }

    /// Feeds one chunk; completed events are appended to `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseItem>) {
        while !chunk.is_empty() {
            let Some(end) = memchr::memchr(b'\n', chunk) else {
                self.push_partial(chunk);
                return;
            };
            let (head, rest) = chunk.split_at(end);
            chunk = &rest[1..];
            if self.skipping {
                // While skipping, `line` keeps at most two bytes: enough to
                // tell a blank line ("" or "\r"), which ends the event.
                let total = self.line.len() + head.len();
                let blank = total == 0 || (total == 1 && (self.line == b"\r" || head == b"\r"));
                self.line.clear();
                if blank {
                    out.push(SseItem::Oversized);
                    self.reset_event();
                }
                continue;
            }
            if self.line.len() + head.len() > self.max_event {
                self.start_skipping();
                continue;
            }
            if self.line.is_empty() {
                // The common case: the whole line is in this chunk.
                self.process_line(strip_cr(head), out);
            } else {
                self.line.extend_from_slice(head);
                let line = std::mem::take(&mut self.line);
                self.process_line(strip_cr(&line), out);
                self.line = line;
                self.line.clear();
            }
        }
    }

    fn push_partial(&mut self, chunk: &[u8]) {
        if self.skipping {
            let keep = chunk.len().min(2 - self.line.len().min(2));
            self.line.extend_from_slice(&chunk[..keep]);
        } else if self.line.len() + chunk.len() > self.max_event {
            self.start_skipping();
            // Mid-line: mark the line as not blank.
            self.line.extend_from_slice(b"..");
        } else {
            self.line.extend_from_slice(chunk);
        }
    }

    fn start_skipping(&mut self) {
        self.skipping = true;
        self.line.clear();
        self.data.clear();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.event = None;
        self.id = None;
        self.skipping = false;
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseItem>) {
        if line.is_empty() {
            if self.has_data {
                let bytes = std::mem::take(&mut self.data);
                let data = String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                out.push(SseItem::Event(SseEvent {
                    event: self.event.take(),
                    id: self.id.take(),
                    data,
                }));
            }
            self.reset_event();
            return;
        }
        if line[0] == b':' {
            return; // comment, e.g. a keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    self.start_skipping();
                    return;
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" => self.id = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // `retry` and unknown fields: the reconnect policy is ours
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]], max: usize) -> Vec<SseItem> {
        let mut decoder = SseDecoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut out);
        }
        out
    }

    fn event(data: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: None,
            id: None,
            data: data.into(),
        })
    }

    #[test]
    fn events_split_across_chunks_in_any_place() {
        let stream = b"data: {\"a\":1}\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\n";
        for split in 0..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                decode(&[a, b], 1024),
                vec![event("{\"a\":1}"), event("x\ny")],
                "split at {split}"
            );
        }
    }

    #[test]
    fn fields_event_and_id_are_kept() {
        assert_eq!(
            decode(&[b"event: message\nid: 7\ndata:raw\n\n"], 1024),
            vec![SseItem::Event(SseEvent {
                event: Some("message".into()),
                id: Some("7".into()),
                data: "raw".into()
            })]
        );
    }

    #[test]
    fn oversized_event_is_skipped_and_the_next_one_survives() {
        let big = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        for split in [3, 50, 104, 107] {
            let (a, b) = big.as_bytes().split_at(split);
            assert_eq!(
                decode(&[a, b], 64),
                vec![SseItem::Oversized, event("ok")],
                "split at {split}"
            );
        }
        let many_lines = format!("{}\ndata: ok\n\n", "data: 0123456789\n".repeat(10));
        let out = decode(&[many_lines.as_bytes()], 64);
        assert_eq!(out.last(), Some(&event("ok")));
        assert_eq!(out[0], SseItem::Oversized);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(
            decode(&[b"data: \xff\xfe\n\n"], 64),
            vec![event("\u{fffd}\u{fffd}")]
        );
    }
}
