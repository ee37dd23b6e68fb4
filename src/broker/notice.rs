//! What the broker has to tell a person that is not a prompt's
//! resolution, as facts (worded in `present/sentences.rs`).

use crate::backends::{BackendError, Problem};
use crate::prompt::{PromptError, Title};

/// Something the person should know that is not a prompt's resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Notice {
    /// A prompt's id is too long to be kept; it was not taken in.
    IdTooLong { server: String, max: usize },
    /// A prompt failed its checks: `stand_in` when it is listed anyway so
    /// that it can be rejected.
    Unshowable {
        server: String,
        key: String,
        error: PromptError,
        stand_in: bool,
    },
    /// The pending store is full.
    StoreFull { max: usize },
    /// A policy's or timeout's answer failed validation.
    AutomaticInvalid { title: Title, error: PromptError },
    /// A policy's or timeout's decision could not be sent.
    AutomaticNotSent { title: Title, error: BackendError },
    /// What a server's adapter could not do with what the server sent.
    Problem { server: String, problem: Problem },
    /// Desktop notifications failed.
    NotificationsFailed { error: String },
    /// The presenter was too busy to take `dropped` notices.
    Dropped { dropped: usize },
}
