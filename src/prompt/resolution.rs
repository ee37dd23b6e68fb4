//! How a prompt's life ends and what the broker has to tell a person, as
//! facts: the broker emits these, the presentation floor (`present`) words
//! them, so no sentence is written below the faces.

use std::time::Duration;

use super::{PromptError, Title};

/// Where a prompt ended on its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Replied,
    Rejected,
    Dismissed,
}

/// Who or what resolved it, as the extension protocol names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    AnsweredHere,
    AnsweredElsewhere,
    Policy,
    Timeout,
    RejectedHere,
    RejectedElsewhere,
    SessionEnded,
    Gone,
}

impl Reason {
    /// The person answered or rejected it through ask-lsp.
    pub fn here(self) -> bool {
        matches!(self, Reason::AnsweredHere | Reason::RejectedHere)
    }
}

/// The facts behind a resolution, beyond its [`Reason`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// A decision was sent: the person's (answer or rejection by the
    /// reason), a policy's or a timeout's.
    Sent {
        by: Decider,
        /// A rejection of a permission with no reject option, sent as
        /// `cancelled` (docs/security.md).
        as_cancelled: bool,
        /// The connection failed after the server took it.
        applied_despite_failure: bool,
    },
    /// Answered or rejected elsewhere (by the reason).
    Elsewhere,
    /// The agent stopped waiting (session or tool call ended, withdrawn).
    AgentStopped,
    /// Resolved elsewhere (by the reason) while our own decision was being
    /// sent, which was then not sent.
    Overtaken,
    /// Sending found it gone from the server.
    GoneOnSend,
    /// A resync of `server` no longer lists it.
    NoLongerListed { server: String },
    /// Its server was removed from the configuration.
    ServerRemoved { server: String },
}

/// Who took a decision that was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decider {
    Person,
    /// A policy, with the explanation its rule gives.
    Policy {
        explanation: String,
    },
    /// A policy's timeout passed; the fallback's explanation.
    Timeout {
        after: Duration,
        explanation: String,
    },
}

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
    AutomaticNotSent { title: Title, error: String },
    /// A server sent something that is not valid; its backend's own words.
    Invalid { server: String, error: String },
    /// Desktop notifications failed.
    NotificationsFailed { error: String },
    /// The presenter was too busy to take `dropped` notices.
    Dropped { dropped: usize },
}
