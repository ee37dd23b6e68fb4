//! A bounded Server-Sent Events decoder. It is fed raw byte chunks as they
//! arrive and yields whole events; an event larger than the bound is skipped
//! and reported instead of growing memory without limit.
//!
//! Line endings are CRLF, LF or CR, and a UTF-8 byte order mark at the start
//! of the stream is skipped, as the WHATWG event-stream format says.
//! [`SseDecoder::feed_filtered`] lets the caller reject an event on its raw
//! bytes before anything is copied or UTF-8-validated: on a busy stream
//! nearly every event is a streamed token nobody acts on.

/// The default bound on one event (all its `data:` lines together).
pub const MAX_EVENT_BYTES: usize = 4 << 20;

/// Buffers above this are given back after an event, so one burst of large
/// events does not pin memory for the life of the connection.
const KEEP_CAPACITY: usize = 64 << 10;

const BOM: &[u8] = b"\xEF\xBB\xBF";

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
    /// The start of a line that continues in the next chunk.
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    /// Set while the rest of an oversized event is being dropped.
    skipping: bool,
    /// The last chunk ended in CR: an LF starting the next one belongs to it.
    after_cr: bool,
    /// How much of a byte order mark the stream has started with so far;
    /// `None` once past the start.
    bom: Option<usize>,
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
            after_cr: false,
            bom: Some(0),
        }
    }

    /// Feeds one chunk; completed events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) {
        self.feed_filtered(chunk, |_| true, out);
    }

    /// Feeds one chunk; completed events whose data `relevant` accepts are
    /// appended to `out`. `relevant` sees the event's data (its `data:` lines
    /// joined by LF) as raw bytes, borrowed from the chunk when the event lies
    /// within it; rejected events are never copied or validated. Oversized
    /// events are reported whatever `relevant` would have said.
    pub fn feed_filtered(
        &mut self,
        chunk: &[u8],
        relevant: impl Fn(&[u8]) -> bool,
        out: &mut Vec<SseItem>,
    ) {
        let mut chunk = self.skip_bom(chunk);
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        // The data of the current event while it is one line of this chunk:
        // the common case, decided on without a copy.
        let mut borrowed: Option<&[u8]> = None;
        loop {
            if let Some(rest) = self.whole_data_event(chunk, &relevant, out) {
                chunk = rest;
                continue;
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                break;
            };
            let line = &chunk[..end];
            let mut next = end + 1;
            if chunk[end] == b'\r' {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            chunk = &chunk[next..];
            if self.skipping {
                // While skipping, `line` only marks a line as not blank.
                let blank = self.line.is_empty() && line.is_empty();
                self.line.clear();
                if blank {
                    out.push(SseItem::Oversized);
                    self.reset_event();
                }
                continue;
            }
            if self.line.len() + line.len() > self.max_event {
                self.start_skipping();
                borrowed = None;
                continue;
            }
            if self.line.is_empty() {
                self.process_line(line, Some(&mut borrowed), &relevant, out);
            } else {
                self.line.extend_from_slice(line);
                let whole = std::mem::take(&mut self.line);
                self.process_line(&whole, None, &relevant, out);
                self.line = whole;
                self.line.clear();
            }
            if self.skipping {
                borrowed = None;
            }
        }
        if let Some(data) = borrowed {
            self.data.extend_from_slice(data);
        }
        if !chunk.is_empty() {
            self.push_partial(chunk);
        }
    }

    /// The common event, one `data: ` line and a blank line (LF endings)
    /// wholly at the start of `chunk` with nothing before it in the event:
    /// handed out as [`Self::process_line`] and [`Self::dispatch`] would,
    /// with one search. Returns the rest of `chunk`, or `None` for the
    /// general path.
    fn whole_data_event<'c>(
        &self,
        chunk: &'c [u8],
        relevant: &impl Fn(&[u8]) -> bool,
        out: &mut Vec<SseItem>,
    ) -> Option<&'c [u8]> {
        let value = chunk.strip_prefix(b"data: ")?;
        if !self.line.is_empty() || self.skipping || self.has_data {
            return None;
        }
        if self.event.is_some() || self.id.is_some() {
            return None;
        }
        let end = memchr::memchr2(b'\n', b'\r', value)?;
        let rest = value[end..].strip_prefix(b"\n\n")?;
        if end + 6 > self.max_event {
            return None;
        }
        emit(None, None, &value[..end], relevant, out);
        Some(rest)
    }

    /// Returns what follows a byte order mark at the start of the stream; the
    /// start of one is held back until it is known whether it is whole.
    fn skip_bom<'c>(&mut self, chunk: &'c [u8]) -> &'c [u8] {
        let Some(matched) = self.bom else {
            return chunk;
        };
        let want = &BOM[matched..];
        let n = want.len().min(chunk.len());
        if chunk[..n] == want[..n] {
            if n == want.len() {
                self.bom = None;
                return &chunk[n..];
            }
            self.bom = Some(matched + n);
            return &[];
        }
        // Not a byte order mark: what was held back starts the first line.
        self.bom = None;
        self.push_partial(&BOM[..matched]);
        chunk
    }

    fn push_partial(&mut self, chunk: &[u8]) {
        if self.skipping {
            if self.line.is_empty() && !chunk.is_empty() {
                self.line.push(b'.');
            }
        } else if self.line.len() + chunk.len() > self.max_event {
            self.start_skipping();
            // Mid-line: mark the line as not blank.
            self.line.push(b'.');
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
        self.data.shrink_to(KEEP_CAPACITY);
        self.line.shrink_to(KEEP_CAPACITY);
        self.has_data = false;
        self.event = None;
        self.id = None;
        self.skipping = false;
    }

    /// One whole line. `borrowed` is given when `line` lives in the chunk
    /// being fed, so an event's first data line can be kept as a slice.
    fn process_line<'c>(
        &mut self,
        line: &'c [u8],
        borrowed: Option<&mut Option<&'c [u8]>>,
        relevant: &impl Fn(&[u8]) -> bool,
        out: &mut Vec<SseItem>,
    ) {
        if line.is_empty() {
            let data = borrowed.and_then(Option::take);
            self.dispatch(data, relevant, out);
            return;
        }
        if line[0] == b':' {
            return; // comment, e.g. a keep-alive
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if let Some(borrowed) = borrowed {
                    if !self.has_data {
                        self.has_data = true;
                        *borrowed = Some(value);
                        return;
                    }
                    // A second data line: the event is copied after all.
                    if let Some(first) = borrowed.take() {
                        self.data.extend_from_slice(first);
                    }
                }
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
            b"event" => self.event = Some(value.to_vec()),
            b"id" => self.id = Some(value.to_vec()),
            _ => {} // `retry` and unknown fields: the reconnect policy is ours
        }
    }

    /// The blank line that ends an event: hands it out if it has data and is
    /// relevant. `borrowed` is its data when that was never copied.
    fn dispatch(
        &mut self,
        borrowed: Option<&[u8]>,
        relevant: &impl Fn(&[u8]) -> bool,
        out: &mut Vec<SseItem>,
    ) {
        if self.has_data {
            let data = borrowed.unwrap_or(&self.data);
            emit(
                self.event.as_deref(),
                self.id.as_deref(),
                data,
                relevant,
                out,
            );
        }
        self.reset_event();
    }
}

/// Hands out an event with data, if `relevant` accepts its data: the only
/// place an event's bytes are copied and validated.
fn emit(
    event: Option<&[u8]>,
    id: Option<&[u8]>,
    data: &[u8],
    relevant: &impl Fn(&[u8]) -> bool,
    out: &mut Vec<SseItem>,
) {
    if relevant(data) {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        out.push(SseItem::Event(SseEvent {
            event: event.map(text),
            id: id.map(text),
            data: text(data),
        }));
    }
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

    /// A whole `data: ` line and blank line is decided with one search
    /// (`whole_data_event`); anything else before, in or after it in the
    /// event takes the line-by-line path, and both decode alike.
    #[test]
    fn one_line_events_decode_as_every_other_shape() {
        let at_bound = format!("data: {}\n\n", "x".repeat(58));
        let over_bound = format!("data: {}\n\n", "x".repeat(59));
        let stream = [
            "data: a\n\n",
            "id: 7\ndata: b\n\n",
            "data: c\ndata: d\n\n",
            "data: e\nevent: named\n\n",
            "data: f\r\n\r\n",
            "data: g\n\r\n",
            "data: \n\n",
            "data:h\n\n",
            &at_bound,
            &over_bound,
            "data: i\n\n",
        ]
        .concat();
        let with = |event: Option<&str>, id: Option<&str>, data: &str| {
            SseItem::Event(SseEvent {
                event: event.map(Into::into),
                id: id.map(Into::into),
                data: data.into(),
            })
        };
        let expected = vec![
            event("a"),
            with(None, Some("7"), "b"),
            event("c\nd"),
            with(Some("named"), None, "e"),
            event("f"),
            event("g"),
            event(""),
            event("h"),
            event(&"x".repeat(58)),
            SseItem::Oversized,
            event("i"),
        ];
        assert_eq!(decode(&[stream.as_bytes()], 64), expected);
        let bytes: Vec<&[u8]> = stream.as_bytes().chunks(1).collect();
        assert_eq!(decode(&bytes, 64), expected);
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

    #[test]
    fn cr_only_line_endings_end_lines() {
        // WHATWG: a line ends in CRLF, LF or CR.
        let stream = b"data: a\r\rdata: b\rdata: c\r\r: keep-alive\r\rdata: d\n\r";
        for split in 0..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                decode(&[a, b], 1024),
                vec![event("a"), event("b\nc"), event("d")],
                "split at {split}"
            );
        }
    }

    #[test]
    fn cr_then_lf_in_the_next_chunk_is_one_line_ending() {
        // Were the LF a second line ending, it would end the event early.
        assert_eq!(
            decode(&[b"data: a\r", b"\ndata: b\r", b"", b"\n\r", b"\n"], 1024),
            vec![event("a\nb")]
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_first_event_is_skipped() {
        let stream = b"\xEF\xBB\xBFdata: first\n\ndata: second\n\n";
        for split in 0..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                decode(&[a, b], 1024),
                vec![event("first"), event("second")],
                "split at {split}"
            );
        }
        // Only at the very start, and only a whole one.
        assert_eq!(
            decode(&[b"\xEF\xBB", b"data: x\n\n"], 1024),
            Vec::<SseItem>::new()
        );
        assert_eq!(
            decode(&[b"data: 1\n\n\xEF\xBB\xBFdata: 2\n\n"], 1024),
            vec![event("1")]
        );
    }

    #[test]
    fn oversized_event_with_cr_line_endings_ends_at_the_blank_line() {
        let stream = format!("data: {}\r\rdata: ok\r\r", "x".repeat(100));
        for split in [3, 50, 106, 107, 108] {
            let (a, b) = stream.as_bytes().split_at(split);
            assert_eq!(
                decode(&[a, b], 64),
                vec![SseItem::Oversized, event("ok")],
                "split at {split}"
            );
        }
    }

    #[test]
    fn the_filter_sees_whole_events_and_drops_only_rejected_ones() {
        let stream: &[u8] = b"data: skip 1\n\ndata: keep\ndata: 2\r\n\r\nevent: e\ndata: skip\ndata: 3\n\ndata: keep 4\n\n: c\n\ndata: skip 5\n\n";
        let keep = |data: &[u8]| data.starts_with(b"keep");
        for split in 0..stream.len() {
            let seen = std::cell::RefCell::new(Vec::new());
            let (a, b) = stream.split_at(split);
            let mut decoder = SseDecoder::new(1024);
            let mut out = Vec::new();
            for chunk in [a, b] {
                decoder.feed_filtered(
                    chunk,
                    |data| {
                        seen.borrow_mut().push(data.to_vec());
                        keep(data)
                    },
                    &mut out,
                );
            }
            assert_eq!(
                out,
                vec![event("keep\n2"), event("keep 4")],
                "split at {split}"
            );
            let expected: [&[u8]; 5] = [b"skip 1", b"keep\n2", b"skip\n3", b"keep 4", b"skip 5"];
            assert_eq!(
                seen.into_inner(),
                expected.map(<[u8]>::to_vec),
                "split at {split}"
            );
        }
    }

    #[test]
    fn oversized_events_are_reported_even_when_the_filter_would_drop_them() {
        let stream = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        let mut decoder = SseDecoder::new(64);
        let mut out = Vec::new();
        decoder.feed_filtered(stream.as_bytes(), |_| false, &mut out);
        assert_eq!(out, vec![SseItem::Oversized]);
    }
}
