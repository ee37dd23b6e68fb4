//! ask-lsp: brings an AI coding agent's prompts (questions, permission
//! requests) into the editor over LSP.
//!
//! Data flows one way: a backend ([`backends`]) turns an agent server's events
//! into prompts of ask-lsp's own model ([`prompt`]), the [`broker`] owns the
//! pending ones and applies [`settings::policy`], a presenter ([`lsp`] or [`terminal`])
//! shows them, and decisions go back through the broker to the backend
//! exactly once.

pub mod app;
mod backends;
mod broker;
#[cfg(unix)]
pub mod hook;
pub mod lsp;
mod notify;
mod present;
mod prompt;
mod settings;
pub mod status;
pub mod terminal;
mod text;

/// For the fuzz target (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::backends::cause::ChunkFault;
    pub use crate::backends::net::h1::Dechunker;
    pub use crate::backends::net::sse::{SseDecoder, SseItem};

    /// Parses a response head as the event stream's reader does; true when
    /// it is complete and well formed.
    pub fn http_head(bytes: &[u8]) -> bool {
        crate::backends::net::h1::head_is_complete(bytes)
    }

    /// Whether the OpenCode prefilter keeps an event.
    pub fn opencode_prefilter(data: &[u8], global: bool) -> bool {
        crate::backends::opencode::prefilter::opencode(data, global)
    }

    /// Parses an OpenCode event; a prompt in it is checked and answered the
    /// way the broker would. Never panics.
    pub fn opencode_event(data: &str, global: bool) {
        use crate::prompt::{Answer, Kind, Reply};
        if let Some(prompt) = crate::backends::opencode::asked(data, global)
            && let Ok(prompt) = prompt.into_checked()
        {
            let answers = match &prompt.kind {
                Kind::Questions(questions) => vec![vec!["x".to_owned()]; questions.len()],
                Kind::Permission(_) | Kind::Form(_) => Vec::new(),
            };
            let _ = prompt.validate(Reply::Answer(Answer::Questions(answers)));
        }
    }
}
