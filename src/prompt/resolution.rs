//! How a prompt's life ends, as facts: the broker emits these, the
//! presentation floor (`present`) words them, so no sentence is written
//! below the faces.

use std::time::Duration;

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
