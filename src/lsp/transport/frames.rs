//! LSP base-protocol framing: splits a byte stream into frames, with
//! header names case-insensitive, bounded sizes and resynchronisation on the
//! next `Content-Length` after a wrong length.

use std::time::Duration;

use bytes::{Buf, BytesMut};
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{HEADER, IDLE, MAX_BODY, MAX_HEADER, PIPE};

pub(super) enum Frame {
    Body(Vec<u8>),
    /// A header announced more than [`MAX_BODY`]; its body is skipped.
    TooLarge(u64),
    /// The body stalled as a whole JSON value `got` bytes into `length`.
    Short {
        length: usize,
        got: usize,
    },
    End {
        partial: bool,
    },
}

/// Splits a byte stream into LSP base-protocol frames.
pub(super) struct Frames<R> {
    input: R,
    buffer: BytesMut,
    /// Bytes discarded while looking for a header, since last reset.
    pub(super) skipped: usize,
    /// Largest body accepted.
    limit: u64,
    /// How long a body may stall before it is checked for a wrong length.
    idle: Option<Duration>,
}

enum Head {
    Incomplete,
    NotHeader,
    Complete { length: u64, header: usize },
}

impl<R: AsyncRead + Unpin> Frames<R> {
    /// The client's frames: bounded, and a stalled body that is already a
    /// whole JSON value ends there.
    pub(super) fn client(input: R) -> Self {
        Frames {
            input,
            buffer: BytesMut::with_capacity(PIPE),
            skipped: 0,
            limit: MAX_BODY as u64,
            idle: Some(IDLE),
        }
    }

    /// Our own server's frames: trusted, and not bounded like the client's.
    pub(super) fn server(input: R) -> Self {
        Frames {
            limit: u64::MAX,
            idle: None,
            ..Frames::client(input)
        }
    }

    /// Reads more input; false at its end.
    async fn fill(&mut self) -> std::io::Result<bool> {
        self.buffer.reserve(PIPE);
        Ok(self.input.read_buf(&mut self.buffer).await? > 0)
    }

    pub(super) async fn next(&mut self) -> std::io::Result<Frame> {
        loop {
            // Tolerate blank lines between frames.
            let blank = self
                .buffer
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            self.buffer.advance(blank);
            match head(&self.buffer) {
                Head::Complete { length, header } => {
                    self.buffer.advance(header);
                    if length > self.limit {
                        return Ok(Frame::TooLarge(length));
                    }
                    let length = length as usize;
                    while self.buffer.len() < length {
                        let filled = match self.idle {
                            Some(idle) => tokio::time::timeout(idle, self.fill()).await,
                            None => Ok(self.fill().await),
                        };
                        match filled {
                            Ok(Ok(true)) => {}
                            Ok(Ok(false)) => {
                                self.skipped += self.buffer.len();
                                self.buffer.clear();
                                return Ok(Frame::End { partial: true });
                            }
                            Ok(Err(e)) => return Err(e),
                            // A client that announced too many bytes and now
                            // waits for the answer: it gets one.
                            Err(_)
                                if serde_json::from_slice::<IgnoredAny>(&self.buffer).is_ok() =>
                            {
                                let got = self.buffer.len();
                                self.buffer.clear();
                                return Ok(Frame::Short { length, got });
                            }
                            Err(_) => {}
                        }
                    }
                    return Ok(Frame::Body(self.buffer.split_to(length).to_vec()));
                }
                Head::Incomplete if self.buffer.len() < MAX_HEADER => {
                    if !self.fill().await? {
                        let partial = !self.buffer.is_empty();
                        self.skipped += self.buffer.len();
                        self.buffer.clear();
                        return Ok(Frame::End { partial });
                    }
                }
                Head::Incomplete | Head::NotHeader => self.resync(),
            }
        }
    }

    /// Drops bytes up to the next `Content-Length` after the first byte.
    fn resync(&mut self) {
        let found = self
            .buffer
            .windows(HEADER.len())
            .skip(1)
            .position(|w| w.eq_ignore_ascii_case(HEADER))
            .map(|at| at + 1);
        // Without a match, keep a tail that may be the start of one.
        let drop = found.unwrap_or_else(|| {
            self.buffer
                .len()
                .saturating_sub(HEADER.len() - 1)
                .max(1)
                .min(self.buffer.len())
        });
        self.skipped += drop;
        self.buffer.advance(drop);
    }

    /// Puts a refused body back, to be searched for the next header.
    pub(super) fn rewind(&mut self, body: Vec<u8>) {
        let mut buffer = BytesMut::from(&body[..]);
        buffer.extend_from_slice(&self.buffer);
        self.buffer = buffer;
        self.resync();
    }
}

/// Parses a header block at the start of `buffer`: `Name: value` lines up to
/// an empty line, names case-insensitive, `Content-Length` required, other
/// headers (`Content-Type`) ignored.
fn head(buffer: &[u8]) -> Head {
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"-_".contains(b);
    let mut at = 0;
    let mut length = None;
    loop {
        let rest = &buffer[at..];
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            // Give up early on what cannot become a header line.
            let name = rest.split(|&b| b == b':').next().unwrap_or_default();
            return if name.iter().all(token) {
                Head::Incomplete
            } else {
                Head::NotHeader
            };
        };
        let line = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
        at += end + 1;
        if line.is_empty() {
            return match length {
                Some(length) => Head::Complete { length, header: at },
                None => Head::NotHeader,
            };
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Head::NotHeader;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.is_empty() || !name.iter().all(token) {
            return Head::NotHeader;
        }
        if name.eq_ignore_ascii_case(HEADER) {
            match std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                Some(value) => length = Some(value),
                None => return Head::NotHeader,
            }
        }
    }
}
