//! A small WebSocket client (RFC 6455) over the daemon's Unix socket: the
//! upgrade, text messages out (masked, as a client must), text messages in,
//! pings answered, everything bounded. Nothing else of the protocol is
//! used: the app-server speaks JSON-RPC in text messages
//! (`codex app-server --listen unix://`; it announces
//! `x-codex-websocket-max-unfragmented-message-bytes: 16777216`).

use std::io;

use ring::rand::SecureRandom;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The most one message may be once its fragments are joined: a thread's
/// resume answer carries its metadata only (`excludeTurns`), a request a
/// command or a few questions; more is not one of ours to read.
pub(super) const MAX_MESSAGE: usize = 8 << 20;
/// The upgrade answer's head.
const MAX_HEAD: usize = 16 << 10;
/// RFC 6455 §1.3.
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CONTINUATION: u8 = 0x0;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The system's generator; it does not fail on Linux once booted.
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The `Sec-WebSocket-Accept` a server must answer to `key`.
fn accept_for(key: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{ACCEPT_GUID}").as_bytes(),
    );
    base64(digest.as_ref())
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Upgrades `stream` to a WebSocket: sends the request, reads the answer's
/// head (bounded) and checks its status and accept key.
pub(super) async fn upgrade<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S) -> io::Result<()> {
    let key = base64(&random::<16>());
    let request = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    // Byte by byte up to the blank line: nothing of the first frame is read.
    let mut head = Vec::with_capacity(256);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_HEAD {
            return Err(invalid("the upgrade answer's head is too large"));
        }
        let byte = stream.read_u8().await?;
        head.push(byte);
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    response
        .parse(&head)
        .map_err(|e| invalid(format!("not an HTTP answer: {e}")))?;
    if response.code != Some(101) {
        return Err(invalid(format!(
            "the upgrade was answered {}",
            response.code.unwrap_or(0)
        )));
    }
    let accept = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("sec-websocket-accept"))
        .map(|h| h.value);
    if accept != Some(accept_for(&key).as_bytes()) {
        return Err(invalid("the upgrade's accept key is wrong"));
    }
    Ok(())
}

/// One frame, masked with a fresh key.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 14);
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= u16::MAX as usize => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mask = random::<4>();
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Sends one text message.
pub(super) async fn send_text<W: AsyncWrite + Unpin>(write: &mut W, text: &str) -> io::Result<()> {
    write.write_all(&frame(TEXT, text.as_bytes())).await?;
    write.flush().await
}

/// What [`Reader::next`] read.
#[derive(Debug, PartialEq)]
pub(super) enum Incoming {
    Text(String),
    /// A ping's payload, to be answered with [`pong`].
    Ping(Vec<u8>),
    /// The server closed the connection.
    Closed,
}

/// The pong answering a ping.
pub(super) async fn pong<W: AsyncWrite + Unpin>(write: &mut W, payload: &[u8]) -> io::Result<()> {
    write.write_all(&frame(PONG, payload)).await?;
    write.flush().await
}

/// Reads messages, joining fragments, never holding more than
/// [`MAX_MESSAGE`] bytes.
pub(super) struct Reader<R> {
    read: R,
    /// A text message's fragments so far (a ping may come between them).
    message: Vec<u8>,
    in_text: bool,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    pub fn new(read: R) -> Self {
        Reader {
            read,
            message: Vec::new(),
            in_text: false,
        }
    }

    pub async fn next(&mut self) -> io::Result<Incoming> {
        loop {
            let mut head = [0u8; 2];
            match self.read.read_exact(&mut head).await {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Incoming::Closed),
                Err(e) => return Err(e),
            }
            let fin = head[0] & 0x80 != 0;
            let opcode = head[0] & 0x0f;
            if head[1] & 0x80 != 0 {
                return Err(invalid("a masked frame from the server"));
            }
            let len = match head[1] & 0x7f {
                126 => u64::from(self.read.read_u16().await?),
                127 => self.read.read_u64().await?,
                n => u64::from(n),
            };
            let control = opcode & 0x8 != 0;
            if (control && len > 125) || self.message.len() as u64 + len > MAX_MESSAGE as u64 {
                return Err(invalid(format!("a message over {MAX_MESSAGE} bytes")));
            }
            let mut payload = vec![0u8; len as usize];
            self.read.read_exact(&mut payload).await?;
            match opcode {
                PING => return Ok(Incoming::Ping(payload)),
                PONG => continue,
                CLOSE => return Ok(Incoming::Closed),
                TEXT if !self.in_text => {
                    self.message = payload;
                    self.in_text = true;
                }
                CONTINUATION if self.in_text => self.message.extend_from_slice(&payload),
                BINARY => return Err(invalid("a binary message")),
                other => return Err(invalid(format!("an unexpected frame ({other:#x})"))),
            }
            if fin {
                self.in_text = false;
                return String::from_utf8(std::mem::take(&mut self.message))
                    .map(Incoming::Text)
                    .map_err(|_| invalid("a text message that is not UTF-8"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_is_rfc_6455s_example() {
        // RFC 6455 §1.3.
        assert_eq!(
            accept_for("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    fn server_frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
        match payload.len() {
            n if n < 126 => out.push(n as u8),
            n if n <= u16::MAX as usize => {
                out.push(126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(payload);
        out
    }

    #[tokio::test]
    async fn fragments_join_pings_surface_and_sizes_are_bounded() {
        let mut bytes = server_frame(false, TEXT, b"{\"a\":");
        bytes.extend(server_frame(true, PING, b"p"));
        bytes.extend(server_frame(true, CONTINUATION, b"1}"));
        bytes.extend(server_frame(true, CLOSE, b""));
        let mut reader = Reader::new(bytes.as_slice());
        assert_eq!(reader.next().await.unwrap(), Incoming::Ping(b"p".to_vec()));
        // The ping came between two fragments: the message goes on.
        assert_eq!(
            reader.next().await.unwrap(),
            Incoming::Text("{\"a\":1}".into())
        );
        assert_eq!(reader.next().await.unwrap(), Incoming::Closed);

        // A length over the bound is refused before anything is allocated.
        let mut huge = vec![0x81, 127];
        huge.extend_from_slice(&(u64::MAX / 2).to_be_bytes());
        assert!(Reader::new(huge.as_slice()).next().await.is_err());
        // A masked frame from a server is a protocol error.
        assert!(
            Reader::new([0x81u8, 0x81, 0, 0, 0, 0, b'x'].as_slice())
                .next()
                .await
                .is_err()
        );
        assert!(
            Reader::new(server_frame(true, BINARY, b"x").as_slice())
                .next()
                .await
                .is_err()
        );
    }

    #[test]
    fn client_frames_are_masked() {
        let framed = frame(TEXT, b"hello");
        assert_eq!(framed[0], 0x81);
        assert_eq!(framed[1], 0x80 | 5);
        let mask = &framed[2..6];
        let unmasked: Vec<u8> = framed[6..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect();
        assert_eq!(unmasked, b"hello");
    }
}
