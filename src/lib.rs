//! ask-lsp: brings an AI coding agent's prompts (questions, permission
//! requests) into the editor over LSP.
//!
//! Data flows one way: a backend ([`backends`]) turns an agent server's events
//! into prompts of ask-lsp's own model ([`prompt`]), the [`broker`] owns the
//! pending ones and applies [`policy`], a presenter ([`lsp`] or [`terminal`])
//! shows them, and decisions go back through the broker to the backend
//! exactly once.

mod backends;
mod broker;
mod config;
mod discovery;
#[cfg(unix)]
pub mod hook;
pub mod lsp;
mod notify;
mod policy;
mod present;
mod prompt;
mod sse;
pub mod status;
pub mod terminal;
mod text;

/// For the fuzz target (`fuzz/`): not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::backends::fuzzing::{Dechunker, http_head, opencode_prefilter};
    pub use crate::sse::{SseDecoder, SseItem};

    /// Parses an OpenCode event; a prompt in it is checked and answered the
    /// way the broker would. Never panics.
    pub fn opencode_event(data: &str, global: bool) {
        use crate::backends::fuzzing::parse_opencode;
        use crate::prompt::{Answer, Kind, Reply};
        if let Some(prompt) = parse_opencode(data, global)
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
