//! The event stream of a plain `http://` server, read off the socket in one
//! pass: large reads, the chunked framing taken apart in place, and each run
//! of body bytes handed to the SSE decoder without being copied or sent
//! through a channel. OpenCode writes one HTTP chunk per event; a general
//! client hands each chunk through its own body channel to our task, which
//! cost ten times what the SSE decoding does (docs/performance.md).
//!
//! Only the event stream is read here. Every other request, and event
//! streams over `https://`, go through reqwest. The response head is parsed
//! by `httparse` (hyper's parser); the chunked framing follows RFC 9112
//! §7.1 and is fuzzed with the SSE decoder behind it
//! (fuzz/fuzz_targets/http_events.rs).

use std::io;

use crate::backends::cause::{Cause, ChunkFault};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most a response head may take (status line and headers).
const MAX_HEAD: usize = 64 << 10;
const MAX_HEADERS: usize = 64;
/// A chunk-size line's extensions, and all trailer lines together.
const MAX_CHUNK_LINE: usize = 4 << 10;
const MAX_TRAILERS: usize = 16 << 10;
/// The head is read in steps of this size (bounded by `MAX_HEAD`).
const HEAD_READ: usize = 8 << 10;
/// The most one read takes off a socket. 64 KiB, as the scan limit reads:
/// what the kernel copies in is still in the core's cache when the decoder
/// reads it (256 KiB reads followed the bench's stream at 9.6 M events/s,
/// these at 12 M; docs/performance.md). One buffer for all streams.
const MAX_READ: usize = 64 << 10;

thread_local! {
    /// One read buffer for every stream on this thread: what a read brings
    /// is handed on before the next await, so no stream keeps a buffer while
    /// it waits (50 servers after a burst kept 0.5 MiB each in a client's).
    static READ_BUFFER: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; MAX_READ].into_boxed_slice());
}

/// What the server answered before the body.
pub(in crate::backends) struct Head {
    pub status: u16,
    pub content_type: String,
}

/// Why an event stream could not be opened (here or through reqwest).
pub(in crate::backends) enum OpenError {
    /// Connecting or writing the request failed: the server is not there.
    Connect(Cause),
    /// reqwest could not reach it (`https://`): kept whole, for the hint
    /// its cause chooses (an untrusted certificate).
    Unreachable(reqwest::Error),
    /// It answered something that is not an HTTP/1.1 response, or the
    /// request could not be built.
    Malformed(Cause),
}

/// Opens `request` (a GET without a body, to an `http://` URL) on a
/// connection of its own and reads the response head.
pub(in crate::backends) async fn open(
    request: &reqwest::Request,
    connect_bound: Duration,
) -> Result<(Head, Body), OpenError> {
    let url = request.url();
    let port = url.port_or_known_default().unwrap_or(80);
    // An IPv6 literal comes bracketed, as in the URL.
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let mut socket = connect((host, port), connect_bound)
        .await
        .map_err(|error| OpenError::Connect(io_cause(&error)))?;
    socket
        .write_all(&request_bytes(request))
        .await
        .map_err(|error| OpenError::Connect(io_cause(&error)))?;
    let mut buffer = vec![0; HEAD_READ];
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            if buffer.len() >= MAX_HEAD {
                return Err(OpenError::Malformed(Cause::HeadTooLarge {
                    kib: MAX_HEAD >> 10,
                }));
            }
            buffer.resize((buffer.len() * 2).min(MAX_HEAD), 0);
        }
        let read = socket
            .read(&mut buffer[filled..])
            .await
            .map_err(|error| OpenError::Connect(io_cause(&error)))?;
        if read == 0 {
            return Err(OpenError::Malformed(Cause::ClosedBeforeResponse));
        }
        filled += read;
        if let Some((head, framing, used)) = parse_head(&buffer[..filled])? {
            buffer.copy_within(used..filled, 0);
            buffer.truncate(filled - used);
            buffer.shrink_to_fit();
            let body = Body {
                socket,
                early: buffer,
                framing,
            };
            return Ok((head, body));
        }
    }
}

async fn connect<A: tokio::net::ToSocketAddrs>(
    address: A,
    bound: Duration,
) -> io::Result<TcpStream> {
    let socket = tokio::time::timeout(bound, TcpStream::connect(address))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "timed out"))??;
    socket.set_nodelay(true)?;
    Ok(socket)
}

/// The request as written on the wire. Header values cannot hold CR or LF
/// (`HeaderValue` refuses them), so nothing can be smuggled into the head.
fn request_bytes(request: &reqwest::Request) -> Vec<u8> {
    let url = request.url();
    let mut target = url.path().to_owned();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let host = url.host_str().unwrap_or_default();
    let mut bytes = format!("{} {target} HTTP/1.1\r\nhost: {host}", request.method()).into_bytes();
    if let Some(port) = url.port() {
        bytes.extend_from_slice(format!(":{port}").as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    for (name, value) in request.headers() {
        bytes.extend_from_slice(name.as_str().as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(value.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"\r\n");
    bytes
}

/// The head, how the body is framed and how many bytes the head took; `None`
/// while it is incomplete. Interim (1xx) responses are skipped.
fn parse_head(bytes: &[u8]) -> Result<Option<(Head, Framing, usize)>, OpenError> {
    let mut offset = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let used = match response.parse(&bytes[offset..]) {
            Ok(httparse::Status::Complete(used)) => used,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(error) => {
                return Err(OpenError::Malformed(Cause::NotHttp {
                    detail: error.to_string(),
                }));
            }
        };
        let status = response.code.unwrap_or_default();
        offset += used;
        if (100..200).contains(&status) {
            continue;
        }
        let mut content_type = String::new();
        let mut chunked = false;
        let mut length = None;
        for header in response.headers.iter() {
            let value = String::from_utf8_lossy(header.value);
            if header.name.eq_ignore_ascii_case("content-type") {
                content_type = value.into_owned();
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value
                    .rsplit(',')
                    .next()
                    .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
            } else if header.name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<u64>().ok();
            }
        }
        // A transfer coding wins over a length (RFC 9112 §6.3).
        let framing = match (chunked, length) {
            (true, _) => Framing::Chunked(Dechunker::default()),
            (false, Some(length)) => Framing::Length(length),
            (false, None) => Framing::UntilClose,
        };
        return Ok(Some((
            Head {
                status,
                content_type,
            },
            framing,
            offset,
        )));
    }
}

/// For the fuzz target: whether `bytes` hold a whole, well-formed head.
pub(crate) fn head_is_complete(bytes: &[u8]) -> bool {
    matches!(parse_head(bytes), Ok(Some(_)))
}

enum Framing {
    Chunked(Dechunker),
    Length(u64),
    UntilClose,
}

impl Framing {
    /// Whether the body can still have bytes to come.
    fn more(&self) -> bool {
        match self {
            Framing::Chunked(dechunker) => !matches!(dechunker.state, Chunk::Done),
            Framing::Length(left) => *left > 0,
            Framing::UntilClose => true,
        }
    }
}

/// The response body, read as it arrives.
pub(in crate::backends) struct Body {
    socket: TcpStream,
    /// Body bytes that came with the head, handed on first.
    early: Vec<u8>,
    framing: Framing,
}

impl Body {
    /// Reads once from the socket and hands each run of body bytes in it to
    /// `data`: `Ok(false)` once the body has ended.
    pub async fn read(&mut self, mut data: impl FnMut(&[u8])) -> Result<bool, Cause> {
        if !self.framing.more() {
            return Ok(false);
        }
        if !self.early.is_empty() {
            let early = std::mem::take(&mut self.early);
            return deliver(&mut self.framing, &early, data);
        }
        loop {
            self.socket
                .readable()
                .await
                .map_err(|error| io_cause(&error))?;
            let read = READ_BUFFER.with_borrow_mut(|buffer| match self.socket.try_read(buffer) {
                Ok(0) => Some(match self.framing {
                    Framing::UntilClose => Ok(false),
                    _ => Err(Cause::ClosedMidResponse),
                }),
                Ok(read) => Some(deliver(&mut self.framing, &buffer[..read], &mut data)),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => None,
                Err(error) => Some(Err(io_cause(&error))),
            });
            if let Some(read) = read {
                return read;
            }
        }
    }
}

fn deliver(
    framing: &mut Framing,
    bytes: &[u8],
    mut data: impl FnMut(&[u8]),
) -> Result<bool, Cause> {
    match framing {
        Framing::Chunked(dechunker) => Ok(dechunker.feed(bytes, data)?),
        Framing::Length(left) => {
            let take = bytes
                .len()
                .min(usize::try_from(*left).unwrap_or(usize::MAX));
            data(&bytes[..take]);
            *left -= take as u64;
            Ok(*left > 0)
        }
        Framing::UntilClose => {
            data(bytes);
            Ok(true)
        }
    }
}

/// Takes `Transfer-Encoding: chunked` apart as bytes arrive, split anywhere.
#[derive(Debug, Default)]
pub struct Dechunker {
    state: Chunk,
}

#[derive(Debug, Default, Clone, Copy)]
enum Chunk {
    /// At the start of a chunk-size line.
    #[default]
    Size,
    Digits {
        size: u64,
    },
    /// Past the size: extensions (ignored), then CRLF.
    Extension {
        size: u64,
        taken: usize,
    },
    Data {
        left: u64,
    },
    /// After a chunk's data: CR then LF.
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until an empty one.
    Trailer {
        line: usize,
        taken: usize,
    },
    Done,
}

impl Dechunker {
    /// Feeds received bytes; each run of chunk data goes to `data`.
    /// `Ok(false)` once the last chunk and the trailers have been read
    /// (anything after them is ignored); `Err` on broken framing.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        mut data: impl FnMut(&[u8]),
    ) -> Result<bool, ChunkFault> {
        while let Some((&byte, rest)) = bytes.split_first() {
            self.state = match self.state {
                Chunk::Data { left } => {
                    let take = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    data(&bytes[..take]);
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        Chunk::DataCr
                    } else {
                        Chunk::Data { left }
                    };
                    continue;
                }
                // The common case, a whole `fd\r\n` line at hand, read at once.
                Chunk::Size if let Some((size, used)) = size_line(bytes) => {
                    bytes = &bytes[used..];
                    self.state = match size {
                        0 => Chunk::Trailer { line: 0, taken: 0 },
                        size => Chunk::Data { left: size },
                    };
                    continue;
                }
                Chunk::DataCr if bytes.starts_with(b"\r\n") => {
                    bytes = &bytes[2..];
                    self.state = Chunk::Size;
                    continue;
                }
                Chunk::Size => match hex(byte) {
                    Some(digit) => Chunk::Digits { size: digit },
                    None => return Err(ChunkFault::ChunkSize),
                },
                Chunk::Digits { size } => match hex(byte) {
                    // Room for one more digit (leading zeros take none).
                    Some(digit) if size >> 60 == 0 => Chunk::Digits {
                        size: size << 4 | digit,
                    },
                    Some(_) => return Err(ChunkFault::ChunkSizeTooLarge),
                    None => Self::after_size(size, byte, 0)?,
                },
                Chunk::Extension { size, taken } => Self::after_size(size, byte, taken + 1)?,
                Chunk::DataCr => match byte {
                    b'\r' => Chunk::DataLf,
                    b'\n' => Chunk::Size,
                    _ => return Err(ChunkFault::ChunkEnd),
                },
                Chunk::DataLf => match byte {
                    b'\n' => Chunk::Size,
                    _ => return Err(ChunkFault::ChunkEnd),
                },
                Chunk::Trailer { line, taken } => {
                    if taken >= MAX_TRAILERS {
                        return Err(ChunkFault::TrailersTooLarge);
                    }
                    match byte {
                        b'\n' if line == 0 => Chunk::Done,
                        b'\n' => Chunk::Trailer {
                            line: 0,
                            taken: taken + 1,
                        },
                        b'\r' => Chunk::Trailer {
                            line,
                            taken: taken + 1,
                        },
                        _ => Chunk::Trailer {
                            line: line + 1,
                            taken: taken + 1,
                        },
                    }
                }
                Chunk::Done => return Ok(false),
            };
            bytes = rest;
        }
        Ok(!matches!(self.state, Chunk::Done))
    }

    /// A byte on a chunk-size line after its digits: extensions and
    /// whitespace are skipped (bounded), LF ends the line.
    fn after_size(size: u64, byte: u8, taken: usize) -> Result<Chunk, ChunkFault> {
        if taken > MAX_CHUNK_LINE {
            return Err(ChunkFault::ChunkLineTooLong);
        }
        Ok(match byte {
            b'\n' if size == 0 => Chunk::Trailer { line: 0, taken: 0 },
            b'\n' => Chunk::Data { left: size },
            b'\r' | b';' | b' ' | b'\t' | b'=' | b'"' => Chunk::Extension { size, taken },
            byte if byte.is_ascii_graphic() && taken > 0 => Chunk::Extension { size, taken },
            _ => return Err(ChunkFault::ChunkSize),
        })
    }
}

/// A chunk-size line of 1 to 15 hex digits and CRLF at the start of
/// `bytes`: the size and the bytes it took. Anything else (extensions, a
/// line split between reads) is left to the byte-by-byte path.
fn size_line(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut size = 0;
    for (at, &byte) in bytes.iter().enumerate().take(16) {
        match hex(byte) {
            Some(digit) => size = size << 4 | digit,
            None if at > 0 && bytes[at..].starts_with(b"\r\n") => return Some((size, at + 2)),
            None => return None,
        }
    }
    None
}

fn hex(byte: u8) -> Option<u64> {
    (byte as char).to_digit(16).map(u64::from)
}

/// "connection refused", as reqwest's errors are shown (`http::cause`).
fn io_cause(error: &io::Error) -> Cause {
    match error.kind() {
        io::ErrorKind::TimedOut => Cause::TimedOut,
        _ => Cause::said(&error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` framed in chunks of the given sizes (cycled), with an
    /// extension on some and a trailer.
    fn chunked(body: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut rest = body;
        for (i, &size) in sizes.iter().cycle().enumerate() {
            if rest.is_empty() {
                break;
            }
            let size = size.clamp(1, rest.len());
            if i % 3 == 1 {
                out.extend_from_slice(format!("{size:X};name=\"v\"\r\n").as_bytes());
            } else {
                out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
            }
            out.extend_from_slice(&rest[..size]);
            out.extend_from_slice(b"\r\n");
            rest = &rest[size..];
        }
        out.extend_from_slice(b"0\r\nx-trailer: 1\r\n\r\nafter");
        out
    }

    /// Decodes `wire` fed in pieces of the given sizes (cycled).
    fn decode(wire: &[u8], pieces: &[usize]) -> Result<(Vec<u8>, bool), ChunkFault> {
        let mut dechunker = Dechunker::default();
        let mut body = Vec::new();
        let mut more = true;
        let mut rest = wire;
        for &size in pieces.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let size = size.clamp(1, rest.len());
            more = dechunker.feed(&rest[..size], |data| body.extend_from_slice(data))?;
            rest = &rest[size..];
        }
        Ok((body, more))
    }

    #[test]
    fn a_chunked_body_split_anywhere_decodes_to_itself() {
        let body: Vec<u8> = (0..5_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for sizes in [&[1][..], &[3, 250], &[4096], &[17, 1, 300]] {
            let wire = chunked(&body, sizes);
            for pieces in [&[1][..], &[2, 7], &[64 << 10], &[5, 1000, 3]] {
                assert_eq!(
                    decode(&wire, pieces),
                    Ok((body.clone(), false)),
                    "{sizes:?} {pieces:?}"
                );
            }
        }
    }

    #[test]
    fn broken_framing_is_an_error_not_a_guess() {
        for (wire, error) in [
            (&b"zz\r\n"[..], ChunkFault::ChunkSize),
            (b"3\r\nabcX", ChunkFault::ChunkEnd),
            (b"3\r\nabc\rX", ChunkFault::ChunkEnd),
            (b"11111111111111111\r\n", ChunkFault::ChunkSizeTooLarge),
            (b"\r\n", ChunkFault::ChunkSize),
        ] {
            assert_eq!(decode(wire, &[1]), Err(error), "{wire:?}");
        }
        let long_extension = [&b"5;"[..], &[b'a'; MAX_CHUNK_LINE + 2]].concat();
        assert_eq!(
            decode(&long_extension, &[100]),
            Err(ChunkFault::ChunkLineTooLong)
        );
        let long_trailers = [&b"0\r\n"[..], &[b'a'; MAX_TRAILERS + 2]].concat();
        assert_eq!(
            decode(&long_trailers, &[100]),
            Err(ChunkFault::TrailersTooLarge)
        );
    }

    #[test]
    fn an_unfinished_body_says_there_is_more() {
        assert_eq!(decode(b"5\r\nab", &[3]), Ok((b"ab".to_vec(), true)));
        // Leading zeros and bare LF line ends are taken as hyper takes them.
        assert_eq!(
            decode(b"0005\nhello\n0\n\n", &[4]),
            Ok((b"hello".to_vec(), false))
        );
    }

    #[test]
    fn heads_are_parsed_with_their_framing() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: gzip, chunked\r\n\r\nrest";
        let Ok(Some((head, Framing::Chunked(_), used))) = parse_head(wire) else {
            panic!("not parsed");
        };
        assert_eq!(
            (head.status, head.content_type.as_str()),
            (200, "text/event-stream")
        );
        assert_eq!(&wire[used..], b"rest");
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Le"),
            Ok(None)
        ));
        let Ok(Some((_, Framing::Length(5), _))) =
            parse_head(b"HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\n")
        else {
            panic!("no length");
        };
        let Err(OpenError::Malformed(error)) = parse_head(b"<html><body>hi</body></html>\r\n\r\n")
        else {
            panic!("HTML taken for a head");
        };
        assert_eq!(
            error,
            Cause::NotHttp {
                detail: "invalid HTTP version".into()
            }
        );
    }

    #[test]
    fn the_request_carries_the_url_and_headers() {
        let request = crate::backends::net::http::builder()
            .build()
            .expect("client")
            .get("http://127.0.0.1:4096/event?directory=%2Fp%20q")
            .header("accept", "text/event-stream")
            .basic_auth("opencode", Some("secret"))
            .build()
            .expect("request");
        assert_eq!(
            String::from_utf8(request_bytes(&request)).expect("utf-8"),
            "GET /event?directory=%2Fp%20q HTTP/1.1\r\nhost: 127.0.0.1:4096\r\naccept: text/event-stream\r\nauthorization: Basic b3BlbmNvZGU6c2VjcmV0\r\n\r\n"
        );
    }
}
