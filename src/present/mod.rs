//! The presentation floor: what every face (plain LSP messages, the
//! extension's titles, the terminal, notifications, status) says to a
//! person, written once: the plain text of a prompt ([`prompt_text`]), who
//! asks ([`who`]), the sentences for what the broker reports
//! ([`sentences`]), answers given a piece at a time ([`draft`]), the
//! command line's help and errors ([`cli`]), why `ask-lsp hook` decided
//! nothing ([`no_decision`]) and a server's failures ([`backend_error`]),
//! every word from the message catalogue ([`i18n`]). It reads the prompt
//! model, `text` and the backends' error types, so any face can use it.

pub(crate) mod backend_error;
pub mod cli;
pub(crate) mod draft;
pub(crate) mod i18n;
pub(crate) mod invalid;
#[cfg(unix)]
pub(crate) mod no_decision;
pub(crate) mod prompt_text;
pub(crate) mod sentences;
pub(crate) mod stores;
pub(crate) mod who;
