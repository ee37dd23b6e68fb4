//! The broker's task: takes backend events and presenters' inputs one at a
//! time, so every rule about a prompt's life is applied in one place.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::ending::{self, Which};
use super::registry::{Registry, Transition};
use super::store::Store;
use super::updates::UpdateSender;
use super::{BrokerError, Counters, Input, Pending, Reason, Resolution, State, Status, Update};
use crate::backends::sink::Queued;
use crate::backends::{BackendError, BackendEvent, Factory};
use crate::prompt::{Decider, Why};

use super::Notice;
use crate::prompt::{Prompt, Refused, Reply, limits};
use crate::settings::ServerSpec;
use crate::settings::policy::{Decision, Policies, Scope};

/// Resolved keys remembered so that late events and stale listings do not
/// bring them back.
const RESOLVED_MEMORY: usize = 16_384;

pub(super) struct Broker {
    pub(super) registry: Registry,
    pub(super) store: Store,
    pub(super) policies: Policies,
    pub(super) counters: Counters,
    /// A policy's timeout per prompt that has one.
    pub(super) timers: HashMap<String, JoinHandle<()>>,
    /// The person was told the store is full.
    cap_noticed: bool,
    updates: UpdateSender,
    /// Gets the updates too, beside the presenter (the notifier),
    /// coalesced the same way: a follower slower than the broker costs a
    /// bound, not a queue of every step.
    observer: Option<UpdateSender>,
    pub(super) inbox: mpsc::UnboundedSender<Input>,
}

/// Each event holds its place in its server's bound (`backends/sink.rs`)
/// until it is handled.
type Events = mpsc::UnboundedReceiver<(Arc<str>, Queued<BackendEvent>)>;

impl Broker {
    pub fn new(
        factory: Factory,
        updates: UpdateSender,
        observer: Option<UpdateSender>,
        inbox: mpsc::UnboundedSender<Input>,
    ) -> (Broker, Events) {
        let (events, events_rx) = mpsc::unbounded_channel();
        let broker = Broker {
            registry: Registry::new(factory, events),
            store: Store::new(RESOLVED_MEMORY),
            policies: Policies::default(),
            counters: Counters::default(),
            timers: HashMap::new(),
            cap_noticed: false,
            updates,
            observer,
            inbox,
        };
        (broker, events_rx)
    }

    pub async fn run(
        mut self,
        servers: Vec<ServerSpec>,
        policies: Policies,
        mut inbox: mpsc::UnboundedReceiver<Input>,
        mut events: Events,
    ) {
        self.configure(servers, policies);
        loop {
            tokio::select! {
                input = inbox.recv() => match input {
                    Some(input) => self.input(input),
                    None => break,
                },
                Some((server, queued)) = events.recv() => self.event(server, queued.event),
            }
            if self.updates.is_closed() {
                break;
            }
        }
        for (_, timer) in self.timers.drain() {
            timer.abort();
        }
    }

    pub(super) fn emit(&self, update: Update) {
        if let Some(observer) = &self.observer {
            observer.send(update.clone());
        }
        let _ = self.updates.send(update);
    }

    pub(super) fn notice(&self, notice: Notice) {
        self.emit(Update::Notice(notice));
    }

    fn status(&self) -> Status {
        Status {
            pending: self.store.len(),
            servers: self.registry.status(),
            counters: self.counters.clone(),
        }
    }

    pub(super) fn emit_status(&self) {
        self.emit(Update::Status(self.status()));
    }

    fn configure(&mut self, servers: Vec<ServerSpec>, policies: Policies) {
        self.policies = policies;
        for name in self.registry.reconcile(servers) {
            for key in self.store.on_server(&name) {
                let why = Why::ServerRemoved {
                    server: name.to_string(),
                };
                self.resolve(&key, State::Dismissed, Reason::Gone, why);
            }
        }
        self.emit_status();
    }

    fn input(&mut self, input: Input) {
        match input {
            Input::Decide { key, human, reply } => self.decide(key, human, reply),
            Input::Sent(sent) => self.sent(sent),
            Input::Timeout { key } => self.timed_out(&key),
            Input::List(tx) => {
                let listed = self
                    .store
                    .ordered()
                    .filter(|e| !e.sending)
                    .map(|e| e.pending.clone())
                    .collect();
                let _ = tx.send(listed);
            }
            Input::Open { key, reply } => {
                let open = match self.store.get(&key) {
                    None => Err(BrokerError::UnknownKey(key)),
                    Some(entry) if entry.sending => Err(BrokerError::Busy(key)),
                    Some(entry) => Ok(entry.pending.clone()),
                };
                let _ = reply.send(open);
            }
            Input::Status(tx) => {
                let _ = tx.send(self.status());
            }
            Input::Sending(tx) => {
                let _ = tx.send(self.store.ordered().filter(|e| e.sending).count());
            }
            Input::Configure { servers, policies } => self.configure(servers, policies),
            Input::Notice(notice) => self.notice(notice),
        }
    }

    fn event(&mut self, server: Arc<str>, event: BackendEvent) {
        if !self.registry.contains(&server) {
            return; // a removed server's last words
        }
        match event {
            BackendEvent::Connected => self.set_connection(&server, true, None),
            BackendEvent::Disconnected { error } => {
                self.set_connection(&server, false, Some(error))
            }
            BackendEvent::Snapshot(mut listed) => {
                // By set difference: what the server lists is taken in (new)
                // or marked (known), what it no longer lists goes; one status
                // after. A prompt already pending is recognised by its key
                // alone, built in one buffer: nothing of it is parsed,
                // built or copied again.
                let listing = self.store.new_listing();
                let mut key = String::new();
                for index in 0..listed.len() {
                    if write_key(&mut key, &server, listed.id(index))
                        && (self.store.mark_listed(&key, listing) || self.store.knows(&key))
                    {
                        // Pending, or resolved: `take_in` would keep it as
                        // it is.
                        continue;
                    }
                    if let Some(prompt) = listed.take(index)
                        && let Some(key) = self.take_in(&server, prompt)
                    {
                        self.store.mark_listed(&key, listing);
                    }
                }
                drop(listed);
                for key in self.store.gone(&server, listing) {
                    let why = Why::NoLongerListed {
                        server: server.to_string(),
                    };
                    self.resolve(&key, State::Dismissed, Reason::Gone, why);
                }
                self.emit_status();
            }
            BackendEvent::Asked(prompt) => {
                if self.take_in(&server, prompt).is_some() {
                    self.emit_status();
                }
            }
            BackendEvent::ResolvedElsewhere { .. }
            | BackendEvent::Withdrawn { .. }
            | BackendEvent::ToolEnded { .. }
            | BackendEvent::SessionEnded { .. } => {
                let Some(ends) = ending::ends(&event) else {
                    return;
                };
                let keys: Vec<String> = match ends.which {
                    Which::Id(id) => key_for(&server, id).into_iter().collect(),
                    Which::Call(call) => self
                        .store
                        .by_call(&server, call)
                        .map(str::to_owned)
                        .into_iter()
                        .collect(),
                    Which::Session(session) => self.store.in_session(&server, session),
                };
                for key in keys {
                    match ends.elsewhere {
                        Some(state) => self.resolved_elsewhere(key, state),
                        None => self.dismiss_ended(&key),
                    }
                }
            }
            BackendEvent::Problem(problem) => self.notice(Notice::Problem {
                server: server.to_string(),
                problem,
            }),
        }
    }

    /// One message per change of state: a connection lost, its reason
    /// changed (a restarted server now asking for a password), or back; the
    /// same failure repeated while retrying is not said again.
    fn set_connection(&mut self, name: &str, connected: bool, error: Option<BackendError>) {
        let transition = self.registry.set_connection(name, connected, error.clone());
        match (transition, error) {
            (Transition::Same, _) => return,
            (Transition::Lost | Transition::StillDown, Some(error)) => {
                tracing::warn!(server = name, "{error}");
                self.emit(Update::Connection {
                    server: name.to_owned(),
                    error: Some(error),
                });
            }
            (Transition::Restored, _) => {
                tracing::info!(server = name, "connected again");
                self.emit(Update::Connection {
                    server: name.to_owned(),
                    error: None,
                });
            }
            _ => tracing::info!(server = name, "connected"),
        }
        self.emit_status();
    }

    /// Takes a prompt in (checking it, applying policy); returns its key when
    /// it is pending (new or already known). The caller says the new status.
    fn take_in(&mut self, server: &Arc<str>, prompt: Prompt) -> Option<String> {
        // Bounded before anything keeps it: ids go into keys and memories.
        let Some(key) = key_for(server, &prompt.id) else {
            self.notice(Notice::IdTooLong {
                server: server.to_string(),
                max: limits::ID_LEN,
            });
            return None;
        };
        if self.store.get(&key).is_some() {
            return Some(key);
        }
        if self.store.knows(&key) {
            return None;
        }
        let (prompt, unshowable) = match prompt.checked() {
            Ok(prompt) => (prompt, None),
            Err(Refused {
                error,
                stand_in: Some(stand_in),
            }) => {
                self.notice(Notice::Unshowable {
                    server: server.to_string(),
                    key: key.clone(),
                    error: error.clone(),
                    stand_in: true,
                });
                (*stand_in, Some(error.to_string()))
            }
            Err(Refused {
                error,
                stand_in: None,
            }) => {
                self.notice(Notice::Unshowable {
                    server: server.to_string(),
                    key: key.clone(),
                    error,
                    stand_in: false,
                });
                self.store.remember(key);
                return None;
            }
        };
        if self.store.len() >= limits::PENDING {
            // Said once per time the store fills, not for every prompt (nor
            // again at every resync).
            if !std::mem::replace(&mut self.cap_noticed, true) {
                self.notice(Notice::StoreFull {
                    max: limits::PENDING,
                });
            }
            tracing::debug!(%key, "not taken in: the pending store is full");
            return None;
        }
        self.cap_noticed = false;
        let backend = self.registry.backend(server)?;
        let decision = self.policies.decide(
            &Scope {
                server,
                session: &prompt.session,
                agent: prompt.origin.agent.as_deref(),
            },
            &prompt,
        );
        let timeout = match &decision {
            Decision::Forward { timeout } => *timeout,
            _ => None,
        };
        let pending = Arc::new(Pending {
            key: key.clone(),
            server: server.clone(),
            title: prompt.title(),
            source: backend.source(),
            prompt,
            timeout,
            unshowable,
        });
        self.store.insert(pending);
        tracing::info!(%key, "prompt asked");
        match decision.into_reply() {
            None => {
                self.present(&key);
                if let Some(after) = timeout {
                    let inbox = self.inbox.clone();
                    let timer_key = key.clone();
                    let timer = tokio::spawn(async move {
                        tokio::time::sleep(after).await;
                        let _ = inbox.send(Input::Timeout { key: timer_key });
                    });
                    self.timers.insert(key.clone(), timer);
                }
            }
            Some((reply, explanation)) => {
                self.automatic(&key, reply, Reason::Policy, Decider::Policy { explanation })
            }
        }
        Some(key)
    }

    pub(super) fn present(&mut self, key: &str) {
        if let Some(entry) = self.store.get_mut(key)
            && !entry.presented
        {
            entry.presented = true;
            let pending = entry.pending.clone();
            self.emit(Update::Added(pending));
        }
    }

    fn timed_out(&mut self, key: &str) {
        self.timers.remove(key);
        let Some(entry) = self.store.get(key) else {
            return;
        };
        if entry.sending {
            return; // a person's answer is already on its way
        }
        let after = entry.pending.timeout.unwrap_or_default();
        let Some((reply, explanation)) =
            Policies::timeout_fallback(&entry.pending.prompt).into_reply()
        else {
            return;
        };
        self.automatic(
            key,
            reply,
            Reason::Timeout,
            Decider::Timeout { after, explanation },
        );
    }

    /// A policy or timeout decision: validated like a person's, logged and
    /// announced, falling back to asking the person if it is not valid.
    fn automatic(&mut self, key: &str, reply: Reply, reason: Reason, by: Decider) {
        let Some(entry) = self.store.get(key) else {
            return;
        };
        let (Decider::Policy { explanation } | Decider::Timeout { explanation, .. }) = &by else {
            return; // a person's decision is not automatic
        };
        tracing::info!(%key, ?reason, "automatic decision: {explanation}");
        match entry.pending.prompt.validate(reply) {
            Ok(reply) => self.start_send(key, reply, reason, by, None),
            Err(e) => {
                self.notice(Notice::AutomaticInvalid {
                    title: entry.pending.title.clone(),
                    error: e,
                });
                self.present(key);
                self.emit_status();
            }
        }
    }

    fn resolved_elsewhere(&mut self, key: String, state: State) {
        match self.store.get_mut(&key) {
            // Our own send decides what happened; remember this in case it fails.
            Some(entry) if entry.sending => entry.elsewhere = Some(state),
            Some(_) => {
                self.counters.resolved_elsewhere += 1;
                let reason = match state {
                    State::Rejected => Reason::RejectedElsewhere,
                    _ => Reason::AnsweredElsewhere,
                };
                self.resolve(&key, state, reason, Why::Elsewhere);
            }
            None => self.store.remember(key),
        }
    }

    fn dismiss_ended(&mut self, key: &str) {
        match self.store.get_mut(key) {
            Some(entry) if entry.sending => entry.elsewhere = Some(State::Dismissed),
            Some(_) => {
                self.counters.resolved_elsewhere += 1;
                self.resolve(
                    key,
                    State::Dismissed,
                    Reason::SessionEnded,
                    Why::AgentStopped,
                );
            }
            None => {}
        }
    }

    pub(super) fn resolve(&mut self, key: &str, state: State, reason: Reason, why: Why) {
        let Some(entry) = self.store.remove(key) else {
            return;
        };
        if let Some(timer) = self.timers.remove(key) {
            timer.abort();
        }
        tracing::info!(%key, ?state, ?reason, "prompt resolved");
        self.emit(Update::Resolved(Resolution {
            key: key.to_owned(),
            state,
            reason,
            why,
            title: entry.pending.title.clone(),
            pending: self.store.len(),
        }));
        self.emit_status();
    }
}

/// The key for an id from a server; `None` for an id too long to be one of
/// ours (it was never taken in).
fn key_for(server: &str, id: &str) -> Option<String> {
    let mut key = String::new();
    write_key(&mut key, server, id).then_some(key)
}

/// [`key_for`] into a buffer kept across many ids; `false` (the buffer
/// left empty) for an id too long to be one of ours.
fn write_key(key: &mut String, server: &str, id: &str) -> bool {
    key.clear();
    if id.len() > limits::ID_LEN {
        return false;
    }
    key.reserve(server.len() + 1 + id.len());
    key.push_str(server);
    key.push('/');
    key.push_str(id);
    true
}
