//! The broker: the one owner of pending prompts.
//!
//! It runs as a single task ([`actor`]). Backend events add and resolve
//! prompts in the [`store`]; presenters (LSP front, terminal) get
//! [`Update`]s and send decisions back through a [`BrokerHandle`]. A prompt
//! is `sending` from the first decision until the backend answers, so every
//! reply leaves at most once ([`send`]); the servers are kept in the
//! [`registry`].

mod actor;
mod ending;
mod notice;
mod registry;
mod send;
mod store;
#[cfg(test)]
mod tests;
mod updates;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

pub(crate) use ending::ends;
pub(crate) use notice::Notice;
#[cfg(test)]
pub(crate) use store::tests::pending as test_pending;
pub(crate) use updates::{UpdateSender, Updates, channel as update_channel};

use crate::backends::{BackendError, Factory, Source};
use crate::prompt::{Answer, Prompt, PromptError, Title, Why};
pub(crate) use crate::prompt::{Reason, State};
use crate::settings::policy::Policies;
use crate::settings::{ServerKind, ServerSpec};

/// A pending prompt as presenters see it.
#[derive(Debug)]
pub(crate) struct Pending {
    /// `server/id`: unique across servers.
    pub key: String,
    pub server: Arc<str>,
    pub prompt: Prompt,
    /// The prompt's short name ([`Prompt::title`]), computed once.
    pub title: Title,
    pub source: Source,
    /// Set when a policy decides by itself after this long.
    pub timeout: Option<Duration>,
    /// Why the agent's prompt could not be shown: `prompt` is then a stand-in
    /// that says so and takes only a refusal (or typed answers).
    pub unshowable: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolution {
    pub key: String,
    pub state: State,
    pub reason: Reason,
    pub why: Why,
    /// The prompt's title ([`Pending::title`]): the prompt may be gone
    /// when the resolution is worded.
    pub title: Title,
    pub pending: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerStatus {
    pub name: String,
    /// What it is: the backend and, once found, OpenCode's generation.
    pub kind: ServerKind,
    pub url: String,
    pub connected: bool,
    pub error: Option<BackendError>,
    /// The configuration gave no URL: ask-lsp follows a server found
    /// running, `$ASK_LSP_URL` or the built-in default.
    pub defaulted: bool,
    /// Where discovery found the server.
    pub discovered: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub answered_here: u64,
    pub rejected_here: u64,
    pub resolved_elsewhere: u64,
    pub policy_answered: u64,
    pub policy_rejected: u64,
    pub timeouts: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub pending: usize,
    pub servers: Vec<ServerStatus>,
    pub counters: Counters,
}

#[derive(Debug, Clone)]
pub(crate) enum Update {
    Added(Arc<Pending>),
    Resolved(Resolution),
    Status(Status),
    /// Something the person should know (a prompt that cannot be shown, a
    /// failed automatic decision); always a problem.
    Notice(Notice),
    /// A server's connection was lost (`error`) or is back (`None`); sent
    /// once per change, not for every retry.
    Connection {
        server: String,
        error: Option<BackendError>,
    },
}

/// Why the broker refused a decision, as facts; worded (in the person's
/// language, and in English as `Display`) in `present/sentences.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BrokerError {
    // Keys come from the client (`askLsp.answer`): shown and bounded when worded.
    UnknownKey(String),
    Busy(String),
    OnlyRejected(String),
    Invalid(PromptError),
    Backend(BackendError),
    Closed,
}

impl From<PromptError> for BrokerError {
    fn from(error: PromptError) -> Self {
        BrokerError::Invalid(error)
    }
}

impl From<BackendError> for BrokerError {
    fn from(error: BackendError) -> Self {
        BrokerError::Backend(error)
    }
}

impl BrokerError {
    /// The server no longer has the prompt: showing it again is pointless.
    pub fn prompt_gone(&self) -> bool {
        matches!(self, BrokerError::Backend(BackendError::NotFound { .. }))
    }
}

/// A person's decision, whole: answers given a piece at a time are put
/// together by the face that asked (`prompt::draft`).
#[derive(Debug)]
pub(crate) enum Human {
    Answer(Answer),
    Reject { message: Option<String> },
}

type ReplyTo = oneshot::Sender<Result<(), BrokerError>>;

/// What presenters and the front send the broker.
enum Input {
    Decide {
        key: String,
        human: Human,
        reply: ReplyTo,
    },
    Sent(send::Sent),
    Timeout {
        key: String,
    },
    List(oneshot::Sender<Vec<Arc<Pending>>>),
    /// One prompt open to a decision: pending and not being answered.
    Open {
        key: String,
        reply: oneshot::Sender<Result<Arc<Pending>, BrokerError>>,
    },
    /// How many decisions are on their way to a server.
    Sending(oneshot::Sender<usize>),
    Status(oneshot::Sender<Status>),
    Configure {
        servers: Vec<ServerSpec>,
        policies: Policies,
    },
    /// Something the person should know, from beside the broker.
    Notice(Notice),
}

#[derive(Clone)]
pub(crate) struct BrokerHandle {
    inbox: mpsc::UnboundedSender<Input>,
}

impl BrokerHandle {
    /// Starts the broker and the backends `factory` builds for `servers`.
    /// Updates for the presenter come out of the returned receiver; an
    /// `observer` gets them too, from the first, coalesced likewise.
    pub fn spawn(
        servers: Vec<ServerSpec>,
        policies: Policies,
        factory: Factory,
        observer: Option<UpdateSender>,
    ) -> (BrokerHandle, Updates) {
        let (inbox, inbox_rx) = mpsc::unbounded_channel();
        let (updates, updates_rx) = updates::channel();
        let (broker, events) = actor::Broker::new(factory, updates, observer, inbox.clone());
        tokio::spawn(broker.run(servers, policies, inbox_rx, events));
        (BrokerHandle { inbox }, updates_rx)
    }

    pub async fn decide(&self, key: &str, human: Human) -> Result<(), BrokerError> {
        let (reply, rx) = oneshot::channel();
        self.inbox
            .send(Input::Decide {
                key: key.to_owned(),
                human,
                reply,
            })
            .map_err(|_| BrokerError::Closed)?;
        rx.await.map_err(|_| BrokerError::Closed)?
    }

    /// How many decisions are on their way to a server (each ends in an
    /// update).
    pub async fn sending(&self) -> usize {
        let (tx, rx) = oneshot::channel();
        let _ = self.inbox.send(Input::Sending(tx));
        rx.await.unwrap_or_default()
    }

    /// The prompts open to a decision, oldest first.
    pub async fn list(&self) -> Vec<Arc<Pending>> {
        let (tx, rx) = oneshot::channel();
        let _ = self.inbox.send(Input::List(tx));
        rx.await.unwrap_or_default()
    }

    /// The prompt `key` if a decision on it may be taken now: pending and
    /// not being answered.
    pub async fn open(&self, key: &str) -> Result<Arc<Pending>, BrokerError> {
        let (reply, rx) = oneshot::channel();
        self.inbox
            .send(Input::Open {
                key: key.to_owned(),
                reply,
            })
            .map_err(|_| BrokerError::Closed)?;
        rx.await.map_err(|_| BrokerError::Closed)?
    }

    pub async fn status(&self) -> Option<Status> {
        let (tx, rx) = oneshot::channel();
        self.inbox.send(Input::Status(tx)).ok()?;
        rx.await.ok()
    }

    pub fn configure(&self, servers: Vec<ServerSpec>, policies: Policies) {
        let _ = self.inbox.send(Input::Configure { servers, policies });
    }

    /// Tells the person through the presenter (`Update::Notice`).
    pub fn notice(&self, notice: Notice) {
        let _ = self.inbox.send(Input::Notice(notice));
    }
}
