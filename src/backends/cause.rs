//! Why a connection to a server failed or broke off, as facts: what
//! ask-lsp itself found is a variant (worded by the presentation floor in
//! the person's language), what the operating system or a library said is
//! kept in its own words ([`Cause::Said`]), as a server's message is.

/// Why a connection failed or broke off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cause {
    /// Nothing within the bound.
    TimedOut,
    /// It failed, and nothing said why.
    Failed,
    /// The connection closed before a response.
    ClosedBeforeResponse,
    /// The connection closed in the middle of the response.
    ClosedMidResponse,
    /// The Codex daemon closed its socket.
    DaemonClosed,
    /// The response head is larger than ask-lsp reads (KiB).
    HeadTooLarge { kib: usize },
    /// The answer is not HTTP/1.1: the parser's words.
    NotHttp { detail: String },
    /// The server broke a chunked body's framing.
    Framing(ChunkFault),
    /// The operating system's or a library's words, lower case and without
    /// the OS's error number ("connection refused").
    Said(String),
}

/// Where a chunked body's framing broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkFault {
    /// Not a hex chunk size.
    ChunkSize,
    /// A chunk size over 2⁶⁴.
    ChunkSizeTooLarge,
    /// A chunk-size line longer than ask-lsp reads.
    ChunkLineTooLong,
    /// No CRLF after a chunk's data.
    ChunkEnd,
    /// Trailers larger than ask-lsp reads.
    TrailersTooLarge,
}

impl Cause {
    /// What the system or a library said (`io::Error`, reqwest's innermost
    /// cause), without the OS's error number.
    pub(crate) fn said(text: &str) -> Cause {
        let text = match text.find(" (os error") {
            Some(at) => &text[..at],
            None => text,
        };
        let mut chars = text.chars();
        match chars.next() {
            Some(first) => Cause::Said(first.to_lowercase().chain(chars).collect()),
            None => Cause::Failed,
        }
    }
}

impl From<ChunkFault> for Cause {
    fn from(fault: ChunkFault) -> Cause {
        Cause::Framing(fault)
    }
}
