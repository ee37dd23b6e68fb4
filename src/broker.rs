//! The broker: the one owner of pending questions.
//!
//! It runs as a single task. Backend events add and resolve questions;
//! presenters (LSP front, terminal) get [`Update`]s and send decisions back
//! through a [`BrokerHandle`]. A question is `sending` from the first decision
//! until the backend answers, so every answer leaves at most once; a failed
//! send returns it to pending.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use lru::LruCache;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::backend::{Backend, BackendError, BackendEvent, Incoming, Source, Timing};
use crate::config::{BackendKind, ServerSpec};
use crate::model::{Answers, ModelError, QuestionRequest};
use crate::opencode::OpenCode;
use crate::policy::{Decision, Policies, Scope};
use crate::sandbox_agent::{SandboxAgent, SandboxAgentSpec};

/// More pending requests than this are not taken in (they stay on the server).
pub const MAX_PENDING: usize = 10_000;
/// Resolved keys remembered so that late events and stale listings (an
/// aborted session's question stays listed forever) do not bring them back.
const RESOLVED_MEMORY: usize = 16_384;

/// A pending request as presenters see it.
#[derive(Debug)]
pub struct Pending {
    pub key: String,
    pub server: Arc<str>,
    pub request: QuestionRequest,
    pub source: Source,
    /// Set when a policy answers by itself after this long.
    pub timeout: Option<Duration>,
}

impl Pending {
    /// A short, safe name for messages: the header (or question) of the
    /// first question, never an answer.
    pub fn title(&self) -> String {
        title(&self.request)
    }
}

fn title(request: &QuestionRequest) -> String {
    let first = request.questions.first();
    let name = first
        .map(|q| {
            if q.header.is_empty() {
                &q.question
            } else {
                &q.header
            }
        })
        .map(|s| s.chars().take(80).collect::<String>())
        .unwrap_or_default();
    match request.questions.len() {
        0 | 1 => format!("\"{name}\""),
        n => format!("\"{name}\" (+{} more)", n - 1),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum State {
    Replied,
    Rejected,
    Dismissed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Reason {
    AnsweredHere,
    AnsweredElsewhere,
    Policy,
    Timeout,
    RejectedHere,
    RejectedElsewhere,
    SessionEnded,
    Gone,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolution {
    pub key: String,
    pub state: State,
    pub reason: Reason,
    pub message: String,
    pub pending: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub url: String,
    pub connected: bool,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counters {
    pub answered_here: u64,
    pub rejected_here: u64,
    pub resolved_elsewhere: u64,
    pub policy_answered: u64,
    pub policy_rejected: u64,
    pub timeouts: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    pub pending: usize,
    pub servers: Vec<ServerStatus>,
    pub counters: Counters,
}

#[derive(Debug, Clone)]
pub enum Update {
    Added(Arc<Pending>),
    Resolved(Resolution),
    Status(Status),
    /// Something the person should know (a question that cannot be shown, a
    /// failed automatic answer).
    Notice {
        error: bool,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent,
    /// Answers recorded for some questions; these indices still need one.
    Partial {
        remaining: Vec<usize>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    #[error("no pending question {0}")]
    UnknownKey(String),
    #[error("question {0} is already being answered")]
    Busy(String),
    #[error("question {0} has no question {1}")]
    NoSuchQuestion(String, usize),
    #[error("{0}")]
    Invalid(#[from] ModelError),
    #[error("{0}")]
    Backend(#[from] BackendError),
    #[error("ask-lsp is shutting down")]
    Closed,
}

#[derive(Debug)]
pub enum Human {
    Answers(Answers),
    One { index: usize, answer: Vec<String> },
    Reject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sending {
    Answer(Reason),
    Reject(Reason),
}

type Reply = oneshot::Sender<Result<Outcome, BrokerError>>;

enum Input {
    Decide {
        key: String,
        human: Human,
        reply: Reply,
    },
    Sent {
        key: String,
        sending: Sending,
        message: String,
        result: Result<(), BackendError>,
        reply: Option<Reply>,
    },
    Timeout {
        key: String,
    },
    List(oneshot::Sender<Vec<Listed>>),
    Status(oneshot::Sender<Status>),
    Configure {
        servers: Vec<ServerSpec>,
        policies: Policies,
    },
}

/// A pending request with the questions that still need an answer.
#[derive(Debug, Clone)]
pub struct Listed {
    pub pending: Arc<Pending>,
    pub remaining: Vec<usize>,
}

#[derive(Clone)]
pub struct BrokerHandle {
    inbox: mpsc::UnboundedSender<Input>,
}

impl BrokerHandle {
    /// Starts the broker and its backends. Updates for the presenter come out
    /// of the returned receiver.
    pub fn spawn(
        servers: Vec<ServerSpec>,
        policies: Policies,
        timing: Timing,
    ) -> (BrokerHandle, mpsc::UnboundedReceiver<Update>) {
        Self::spawn_with(servers, policies, timing, None)
    }

    /// Like [`spawn`](Self::spawn), with a fixed set of backends instead of
    /// OpenCode ones built from the specs (other backends, tests).
    pub fn spawn_with(
        servers: Vec<ServerSpec>,
        policies: Policies,
        timing: Timing,
        backends: Option<Vec<Arc<dyn Backend>>>,
    ) -> (BrokerHandle, mpsc::UnboundedReceiver<Update>) {
        let (inbox, inbox_rx) = mpsc::unbounded_channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let (updates, updates_rx) = mpsc::unbounded_channel();
        let mut broker = Broker {
            servers: HashMap::new(),
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_seq: 0,
            resolved: LruCache::new(NonZeroUsize::new(RESOLVED_MEMORY).expect("non-zero")),
            policies: Policies::from_json(None).expect("no policy is a valid policy"),
            counters: Counters::default(),
            updates,
            inbox: inbox.clone(),
            events,
            timing,
        };
        match backends {
            Some(backends) => {
                for (spec, backend) in servers.into_iter().zip(backends) {
                    broker.start_server(spec, backend);
                }
                broker.policies = policies;
            }
            None => broker.configure(servers, policies),
        }
        tokio::spawn(broker.run(inbox_rx, events_rx));
        (BrokerHandle { inbox }, updates_rx)
    }

    pub async fn decide(&self, key: &str, human: Human) -> Result<Outcome, BrokerError> {
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

    pub async fn list(&self) -> Vec<Listed> {
        let (tx, rx) = oneshot::channel();
        let _ = self.inbox.send(Input::List(tx));
        rx.await.unwrap_or_default()
    }

    pub async fn status(&self) -> Option<Status> {
        let (tx, rx) = oneshot::channel();
        self.inbox.send(Input::Status(tx)).ok()?;
        rx.await.ok()
    }

    pub fn configure(&self, servers: Vec<ServerSpec>, policies: Policies) {
        let _ = self.inbox.send(Input::Configure { servers, policies });
    }
}

struct Server {
    spec: ServerSpec,
    backend: Arc<dyn Backend>,
    task: JoinHandle<()>,
    connected: bool,
    error: Option<String>,
}

struct Entry {
    pending: Arc<Pending>,
    seq: u64,
    route: Option<String>,
    drafts: Vec<Option<Vec<String>>>,
    sending: bool,
    presented: bool,
    timer: Option<JoinHandle<()>>,
}

struct Broker {
    servers: HashMap<Arc<str>, Server>,
    entries: HashMap<String, Entry>,
    /// Arrival order (FIFO across sessions and servers).
    order: BTreeMap<u64, String>,
    next_seq: u64,
    resolved: LruCache<String, ()>,
    policies: Policies,
    counters: Counters,
    updates: mpsc::UnboundedSender<Update>,
    inbox: mpsc::UnboundedSender<Input>,
    events: mpsc::UnboundedSender<(Arc<str>, BackendEvent)>,
    timing: Timing,
}

impl Broker {
    async fn run(
        mut self,
        mut inbox: mpsc::UnboundedReceiver<Input>,
        mut events: mpsc::UnboundedReceiver<(Arc<str>, BackendEvent)>,
    ) {
        loop {
            tokio::select! {
                input = inbox.recv() => match input {
                    Some(input) => self.handle_input(input),
                    None => break,
                },
                Some((server, event)) = events.recv() => self.handle_event(server, event),
            }
            if self.updates.is_closed() {
                break;
            }
        }
        for server in self.servers.values() {
            server.task.abort();
        }
    }

    fn emit(&self, update: Update) {
        let _ = self.updates.send(update);
    }

    fn status(&self) -> Status {
        let mut servers: Vec<ServerStatus> = self
            .servers
            .values()
            .map(|s| ServerStatus {
                name: s.spec.name.to_string(),
                url: s.spec.url.clone(),
                connected: s.connected,
                error: s.error.clone(),
            })
            .collect();
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        Status {
            pending: self.entries.len(),
            servers,
            counters: self.counters.clone(),
        }
    }

    fn emit_status(&self) {
        self.emit(Update::Status(self.status()));
    }

    fn configure(&mut self, servers: Vec<ServerSpec>, policies: Policies) {
        self.policies = policies;
        let keep: Vec<Arc<str>> = servers
            .iter()
            .filter(|spec| {
                self.servers
                    .get(&spec.name)
                    .is_some_and(|s| s.spec == **spec)
            })
            .map(|spec| spec.name.clone())
            .collect();
        let dropped: Vec<Arc<str>> = self
            .servers
            .keys()
            .filter(|name| !keep.contains(name))
            .cloned()
            .collect();
        for name in dropped {
            if let Some(server) = self.servers.remove(&name) {
                server.task.abort();
            }
            let keys: Vec<String> = self
                .entries
                .values()
                .filter(|e| e.pending.server == name)
                .map(|e| e.pending.key.clone())
                .collect();
            for key in keys {
                self.resolve(&key, State::Dismissed, Reason::Gone, |t| {
                    format!("{t}: its server {name} was removed from the configuration")
                });
            }
        }
        for spec in servers {
            if !self.servers.contains_key(&spec.name) {
                let backend: Arc<dyn Backend> = match &spec.backend {
                    BackendKind::OpenCode => Arc::new(OpenCode::new(spec.clone(), self.timing)),
                    BackendKind::SandboxAgent { server_id, token } => Arc::new(SandboxAgent::new(
                        SandboxAgentSpec {
                            url: spec.url.clone(),
                            server_id: server_id.clone(),
                            token: token.clone(),
                        },
                        self.timing,
                    )),
                };
                self.start_server(spec, backend);
            }
        }
        self.emit_status();
    }

    fn start_server(&mut self, spec: ServerSpec, backend: Arc<dyn Backend>) {
        let task = tokio::spawn(backend.clone().run(spec.name.clone(), self.events.clone()));
        self.servers.insert(
            spec.name.clone(),
            Server {
                spec,
                backend,
                task,
                connected: false,
                error: None,
            },
        );
    }

    fn handle_event(&mut self, server: Arc<str>, event: BackendEvent) {
        if !self.servers.contains_key(&server) {
            return; // a removed server's last words
        }
        match event {
            BackendEvent::Connected => self.set_connection(&server, true, None),
            BackendEvent::Disconnected { error } => {
                self.set_connection(&server, false, Some(error))
            }
            BackendEvent::Snapshot(all) => {
                let listed: Vec<String> = all
                    .iter()
                    .map(|i| format!("{server}/{}", i.request.id))
                    .collect();
                for incoming in all {
                    self.add(&server, incoming);
                }
                let gone: Vec<String> = self
                    .entries
                    .values()
                    .filter(|e| e.pending.server == server && !e.sending)
                    .map(|e| e.pending.key.clone())
                    .filter(|key| !listed.contains(key))
                    .collect();
                for key in gone {
                    self.resolve(&key, State::Dismissed, Reason::Gone, |t| {
                        format!("{t} is no longer pending on {server}")
                    });
                }
            }
            BackendEvent::Asked(incoming) => self.add(&server, incoming),
            BackendEvent::Replied { request_id } => {
                self.resolve_elsewhere(format!("{server}/{request_id}"), State::Replied)
            }
            BackendEvent::Rejected { request_id } => {
                self.resolve_elsewhere(format!("{server}/{request_id}"), State::Rejected)
            }
            BackendEvent::ToolEnded { call_id, ok } => {
                let key = self.entries.values().find_map(|e| {
                    let same_call = e.pending.server == server
                        && e.pending
                            .request
                            .tool
                            .as_ref()
                            .is_some_and(|t| t.call_id == call_id);
                    same_call.then(|| e.pending.key.clone())
                });
                if let Some(key) = key {
                    if ok {
                        self.resolve_elsewhere(key, State::Replied);
                    } else {
                        self.dismiss_ended(&key);
                    }
                }
            }
            BackendEvent::SessionEnded { session_id } => {
                let keys: Vec<String> = self
                    .entries
                    .values()
                    .filter(|e| {
                        e.pending.server == server && e.pending.request.session_id == session_id
                    })
                    .map(|e| e.pending.key.clone())
                    .collect();
                for key in keys {
                    self.dismiss_ended(&key);
                }
            }
            BackendEvent::Invalid { error } => self.emit(Update::Notice {
                error: true,
                message: format!("{server}: {error}"),
            }),
        }
    }

    fn set_connection(&mut self, name: &str, connected: bool, error: Option<String>) {
        let Some(server) = self.servers.get_mut(name) else {
            return;
        };
        if server.connected == connected && server.error == error {
            return; // a retry loop repeating the same failure
        }
        if let Some(error) = &error {
            tracing::warn!(server = name, "{error}");
        }
        server.connected = connected;
        server.error = error;
        self.emit_status();
    }

    fn add(&mut self, server: &Arc<str>, incoming: Incoming) {
        let key = format!("{server}/{}", incoming.request.id);
        if self.entries.contains_key(&key) || self.resolved.contains(&key) {
            return;
        }
        let request = match incoming.request.into_checked() {
            Ok(request) => request,
            Err(e) => {
                self.resolved.put(key.clone(), ());
                self.emit(Update::Notice {
                    error: true,
                    message: format!(
                        "A question from {server} cannot be shown ({key}): {e}. Answer it in the agent's own interface."
                    ),
                });
                return;
            }
        };
        if self.entries.len() >= MAX_PENDING {
            self.emit(Update::Notice {
                error: true,
                message: format!(
                    "{MAX_PENDING} questions are already pending; {key} was not taken in. Answer some first."
                ),
            });
            return;
        }
        let backend = &self.servers[server].backend;
        let decision = self.policies.decide(
            &Scope {
                server,
                session_id: &request.session_id,
                agent: None,
            },
            &request,
        );
        let timeout = match &decision {
            Decision::Forward { timeout } => *timeout,
            _ => None,
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let pending = Arc::new(Pending {
            key: key.clone(),
            server: server.clone(),
            source: backend.source(incoming.route.as_deref()),
            request,
            timeout,
        });
        let questions = pending.request.questions.len();
        self.order.insert(seq, key.clone());
        self.entries.insert(
            key.clone(),
            Entry {
                pending: pending.clone(),
                seq,
                route: incoming.route,
                drafts: vec![None; questions],
                sending: false,
                presented: false,
                timer: None,
            },
        );
        tracing::info!(%key, "question asked");
        match decision {
            Decision::Forward { timeout } => {
                self.present(&key);
                if let Some(after) = timeout {
                    let inbox = self.inbox.clone();
                    let timer_key = key.clone();
                    let timer = tokio::spawn(async move {
                        tokio::time::sleep(after).await;
                        let _ = inbox.send(Input::Timeout { key: timer_key });
                    });
                    if let Some(entry) = self.entries.get_mut(&key) {
                        entry.timer = Some(timer);
                    }
                }
                self.emit_status();
            }
            Decision::Answer { answers, reason } => {
                self.automatic(&key, Some(answers), Reason::Policy, reason)
            }
            Decision::Reject { reason } => self.automatic(&key, None, Reason::Policy, reason),
        }
    }

    fn present(&mut self, key: &str) {
        if let Some(entry) = self.entries.get_mut(key)
            && !entry.presented
        {
            entry.presented = true;
            let pending = entry.pending.clone();
            self.emit(Update::Added(pending));
        }
    }

    /// A policy or timeout decision: validated like a person's, logged and
    /// announced, falling back to asking the person if it cannot be sent.
    fn automatic(&mut self, key: &str, answers: Option<Answers>, reason: Reason, message: String) {
        let Some(entry) = self.entries.get(key) else {
            return;
        };
        tracing::info!(%key, "automatic decision: {message}");
        let sending = match answers {
            Some(answers) => match entry.pending.request.validate_answers(answers) {
                Ok(answers) => {
                    self.start_send(key, Sending::Answer(reason), Some(answers), message, None);
                    return;
                }
                Err(e) => {
                    self.emit(Update::Notice {
                        error: true,
                        message: format!(
                            "{}: the automatic answer is not valid ({e}); asking you instead",
                            entry.pending.title()
                        ),
                    });
                    None
                }
            },
            None => Some(Sending::Reject(reason)),
        };
        match sending {
            Some(sending) => self.start_send(key, sending, None, message, None),
            None => {
                self.present(key);
                self.emit_status();
            }
        }
    }

    fn handle_input(&mut self, input: Input) {
        match input {
            Input::Decide { key, human, reply } => self.decide(key, human, reply),
            Input::Sent {
                key,
                sending,
                message,
                result,
                reply,
            } => self.sent(key, sending, message, result, reply),
            Input::Timeout { key } => {
                let Some(entry) = self.entries.get(&key) else {
                    return;
                };
                if entry.sending {
                    return; // a person's answer is already on its way
                }
                let seconds = entry.pending.timeout.map_or(0.0, |t| t.as_secs_f64());
                match Policies::timeout_fallback(&entry.pending.request) {
                    Decision::Answer { answers, reason } => self.automatic(
                        &key,
                        Some(answers),
                        Reason::Timeout,
                        format!("no answer within {seconds} s: {reason}"),
                    ),
                    Decision::Reject { reason } => self.automatic(
                        &key,
                        None,
                        Reason::Timeout,
                        format!("no answer within {seconds} s: {reason}"),
                    ),
                    Decision::Forward { .. } => {}
                }
            }
            Input::List(tx) => {
                let listed = self
                    .order
                    .values()
                    .filter_map(|key| self.entries.get(key))
                    .filter(|e| !e.sending)
                    .map(|e| Listed {
                        pending: e.pending.clone(),
                        remaining: remaining(&e.drafts),
                    })
                    .collect();
                let _ = tx.send(listed);
            }
            Input::Status(tx) => {
                let _ = tx.send(self.status());
            }
            Input::Configure { servers, policies } => self.configure(servers, policies),
        }
    }

    fn decide(&mut self, key: String, human: Human, reply: Reply) {
        let Some(entry) = self.entries.get_mut(&key) else {
            let _ = reply.send(Err(BrokerError::UnknownKey(key)));
            return;
        };
        if entry.sending {
            let _ = reply.send(Err(BrokerError::Busy(key)));
            return;
        }
        let request = &entry.pending.request;
        let title = entry.pending.title();
        let answers = match human {
            Human::Reject => {
                let message = format!("Rejected {title}");
                self.start_send(
                    &key,
                    Sending::Reject(Reason::RejectedHere),
                    None,
                    message,
                    Some(reply),
                );
                return;
            }
            Human::Answers(answers) => match request.validate_answers(answers) {
                Ok(answers) => answers,
                Err(e) => {
                    let _ = reply.send(Err(e.into()));
                    return;
                }
            },
            Human::One { index, answer } => {
                let Some(question) = request.questions.get(index) else {
                    let _ = reply.send(Err(BrokerError::NoSuchQuestion(key, index)));
                    return;
                };
                match question.validate_answer(index, answer) {
                    Ok(answer) => entry.drafts[index] = Some(answer),
                    Err(e) => {
                        let _ = reply.send(Err(e.into()));
                        return;
                    }
                }
                let remaining = remaining(&entry.drafts);
                if !remaining.is_empty() {
                    let _ = reply.send(Ok(Outcome::Partial { remaining }));
                    return;
                }
                entry.drafts.iter().flatten().cloned().collect()
            }
        };
        let message = format!("Answered {title}");
        self.start_send(
            &key,
            Sending::Answer(Reason::AnsweredHere),
            Some(answers),
            message,
            Some(reply),
        );
    }

    fn start_send(
        &mut self,
        key: &str,
        sending: Sending,
        answers: Option<Answers>,
        message: String,
        reply: Option<Reply>,
    ) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        let Some(server) = self.servers.get(&entry.pending.server) else {
            return;
        };
        entry.sending = true;
        if let Some(timer) = entry.timer.take() {
            timer.abort();
        }
        let backend = server.backend.clone();
        let pending = entry.pending.clone();
        let route = entry.route.clone();
        let inbox = self.inbox.clone();
        let key = key.to_owned();
        tokio::spawn(async move {
            let route = route.as_deref();
            let result = match &answers {
                Some(answers) => backend.reply(&pending.request, route, answers).await,
                None => backend.reject(&pending.request, route).await,
            };
            let _ = inbox.send(Input::Sent {
                key,
                sending,
                message,
                result,
                reply,
            });
        });
    }

    fn sent(
        &mut self,
        key: String,
        sending: Sending,
        message: String,
        result: Result<(), BackendError>,
        reply: Option<Reply>,
    ) {
        match result {
            Ok(()) => {
                let (state, reason) = match sending {
                    Sending::Answer(reason) => (State::Replied, reason),
                    Sending::Reject(reason) => (State::Rejected, reason),
                };
                let counter = match (state, reason) {
                    (State::Replied, Reason::AnsweredHere) => &mut self.counters.answered_here,
                    (State::Rejected, Reason::RejectedHere) => &mut self.counters.rejected_here,
                    (_, Reason::Timeout) => &mut self.counters.timeouts,
                    (State::Replied, _) => &mut self.counters.policy_answered,
                    _ => &mut self.counters.policy_rejected,
                };
                *counter += 1;
                self.resolve(&key, state, reason, |_| message);
                if let Some(reply) = reply {
                    let _ = reply.send(Ok(Outcome::Sent));
                }
            }
            Err(error @ BackendError::NotFound { .. }) => {
                self.resolve(&key, State::Dismissed, Reason::Gone, |t| {
                    format!("{t} was already answered elsewhere or its session ended")
                });
                match reply {
                    Some(reply) => {
                        let _ = reply.send(Err(error.into()));
                    }
                    None => tracing::info!(%key, "automatic decision found the question gone"),
                }
            }
            Err(error) => {
                tracing::warn!(%key, "sending failed: {}", error.for_log());
                let Some(entry) = self.entries.get_mut(&key) else {
                    return;
                };
                entry.sending = false;
                match reply {
                    Some(reply) => {
                        let _ = reply.send(Err(error.into()));
                    }
                    None => {
                        let title = entry.pending.title();
                        self.emit(Update::Notice {
                            error: true,
                            message: format!("{title}: the automatic decision could not be sent ({error}); asking you instead"),
                        });
                        self.present(&key);
                        self.emit_status();
                    }
                }
            }
        }
    }

    fn resolve_elsewhere(&mut self, key: String, state: State) {
        match self.entries.get(&key) {
            // Our own send decides what happened to it.
            Some(entry) if entry.sending => {}
            Some(_) => {
                self.counters.resolved_elsewhere += 1;
                let (reason, verb) = match state {
                    State::Rejected => (Reason::RejectedElsewhere, "rejected"),
                    _ => (Reason::AnsweredElsewhere, "answered"),
                };
                self.resolve(&key, state, reason, |t| format!("{t} was {verb} elsewhere"));
            }
            None => {
                self.resolved.put(key, ());
            }
        }
    }

    fn dismiss_ended(&mut self, key: &str) {
        if self.entries.get(key).is_some_and(|e| !e.sending) {
            self.counters.resolved_elsewhere += 1;
            self.resolve(key, State::Dismissed, Reason::SessionEnded, |t| {
                format!("{t}: the session ended before it was answered")
            });
        }
    }

    fn resolve(
        &mut self,
        key: &str,
        state: State,
        reason: Reason,
        message: impl FnOnce(String) -> String,
    ) {
        let Some(entry) = self.entries.remove(key) else {
            return;
        };
        if let Some(timer) = entry.timer {
            timer.abort();
        }
        self.order.remove(&entry.seq);
        self.resolved.put(key.to_owned(), ());
        tracing::info!(%key, ?state, ?reason, "question resolved");
        self.emit(Update::Resolved(Resolution {
            key: key.to_owned(),
            state,
            reason,
            message: message(entry.pending.title()),
            pending: self.entries.len(),
        }));
        self.emit_status();
    }
}

fn remaining(drafts: &[Option<Vec<String>>]) -> Vec<usize> {
    drafts
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_none())
        .map(|(i, _)| i)
        .collect()
}
