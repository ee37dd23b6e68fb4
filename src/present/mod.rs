//! The presentation floor: what every face (plain LSP messages, the
//! extension's titles, the terminal, notifications, status) says to a
//! person, written once: the plain text of a prompt ([`prompt_text`]), who
//! asks ([`who`]), the sentences for what the broker reports
//! ([`sentences`]: also the broker's errors and a refused piece of an
//! answer), the command line's help and errors ([`cli`]), why `ask-lsp
//! hook` decided nothing ([`no_decision`]), a server's failures
//! ([`backend_error`]), an adapter's problems ([`problem`]) and why a
//! prompt was refused ([`invalid`]), what a cut of long text hid ([`cut`]),
//! every word from the message catalogue ([`i18n`]). The English of an error is its `Display`, implemented here
//! from the same catalogue, so each sentence exists once. It reads the
//! prompt model, `text`, the backends' and the broker's types, so any face
//! can use it.

pub(crate) mod backend_error;
pub mod cli;
pub(crate) mod cut;
pub(crate) mod i18n;
pub(crate) mod invalid;
#[cfg(unix)]
pub(crate) mod no_decision;
pub(crate) mod problem;
pub(crate) mod prompt_text;
pub(crate) mod sentences;
pub(crate) mod stores;
pub(crate) mod who;
