//! Exactly once: a decision marks its prompt `sending` until the backend
//! answers, so no second decision can leave meanwhile. A failed send returns
//! the prompt to the person, unless the server shows it was resolved anyway
//! (what arrived during the send, or its state re-checked after a failure
//! that leaves open whether the server applied it).

use super::actor::Broker;
use super::{BrokerError, Human, Input, Reason, ReplyTo, State};
use crate::backends::BackendError;
use crate::prompt::{Answer, Decider, Effect, Kind, Reply, Why};

use super::Notice;

/// A send's result, back in the broker's task.
pub(super) struct Sent {
    key: String,
    reply: Reply,
    reason: Reason,
    by: Decider,
    /// A rejection sent as `cancelled`: the permission has no reject option.
    as_cancelled: bool,
    result: Result<(), BackendError>,
    /// After a failure that may have been applied: is it still pending there?
    still_pending: Option<bool>,
    to: Option<ReplyTo>,
}

impl Broker {
    pub(super) fn decide(&mut self, key: String, human: Human, to: ReplyTo) {
        let Some(entry) = self.store.get_mut(&key) else {
            let _ = to.send(Err(BrokerError::UnknownKey(key)));
            return;
        };
        if entry.sending {
            let _ = to.send(Err(BrokerError::Busy(key)));
            return;
        }
        let prompt = &entry.pending.prompt;
        // A stand-in for a prompt that could not be shown takes typed answers
        // to its questions at most; anything else would answer blind.
        if entry.pending.unshowable.is_some()
            && !matches!(prompt.kind, Kind::Questions(_))
            && matches!(&human, Human::Answer(answer) if !answer_refuses(&prompt.kind, answer))
        {
            let _ = to.send(Err(BrokerError::OnlyRejected(key)));
            return;
        }
        let (reply, reason) = match human {
            Human::Reject { message } => (Reply::Reject { message }, Reason::RejectedHere),
            Human::Answer(answer) => {
                let reply = Reply::Answer(answer);
                if refuses(&prompt.kind, &reply) {
                    (reply, Reason::RejectedHere)
                } else {
                    (reply, Reason::AnsweredHere)
                }
            }
        };
        match prompt.validate(reply) {
            Ok(reply) => self.start_send(&key, reply, reason, Decider::Person, Some(to)),
            Err(e) => {
                let _ = to.send(Err(e.into()));
            }
        }
    }

    /// Sends a validated decision; the prompt is `sending` until it is back.
    pub(super) fn start_send(
        &mut self,
        key: &str,
        reply: Reply,
        reason: Reason,
        by: Decider,
        to: Option<ReplyTo>,
    ) {
        let Some(entry) = self.store.get_mut(key) else {
            return;
        };
        let Some(backend) = self.registry.backend(&entry.pending.server) else {
            return;
        };
        entry.sending = true;
        if let Some(timer) = self.timers.remove(key) {
            timer.abort();
        }
        let pending = entry.pending.clone();
        // Announced as sent: a permission that offers no genuine reject
        // option is refused with `cancelled` (docs/security.md).
        let as_cancelled = matches!(
            (&pending.prompt.kind, &reply),
            (Kind::Permission(permission), Reply::Reject { .. })
                if permission.reject_choice().is_none()
        );
        let inbox = self.inbox.clone();
        let key = key.to_owned();
        tokio::spawn(async move {
            let result = backend.send(&pending.prompt, &reply).await;
            let still_pending = match &result {
                Err(error) if ambiguous(error) => backend.still_pending(&pending.prompt).await,
                _ => None,
            };
            let _ = inbox.send(Input::Sent(Sent {
                key,
                reply,
                reason,
                by,
                as_cancelled,
                result,
                still_pending,
                to,
            }));
        });
    }

    pub(super) fn sent(&mut self, sent: Sent) {
        let Sent {
            key,
            reply,
            reason,
            by,
            as_cancelled,
            result,
            still_pending,
            to,
        } = sent;
        let sent_why = |applied_despite_failure| Why::Sent {
            by,
            as_cancelled,
            applied_despite_failure,
        };
        let refused = self
            .store
            .get(&key)
            .is_some_and(|e| refuses(&e.pending.prompt.kind, &reply));
        let state = match reply {
            Reply::Answer(_) if !refused => State::Replied,
            Reply::Answer(_) | Reply::Reject { .. } | Reply::Cancel => State::Rejected,
        };
        let error = match result {
            Ok(()) => {
                self.count(state, reason);
                self.resolve(&key, state, reason, sent_why(false));
                if let Some(to) = to {
                    let _ = to.send(Ok(()));
                }
                return;
            }
            Err(error) => error,
        };
        let elsewhere = self.store.get(&key).and_then(|e| e.elsewhere);
        if still_pending == Some(false) && elsewhere.is_none() {
            // The server took it before the connection failed.
            tracing::info!(%key, "the send failed ({}), but the server has it", error.for_log());
            self.count(state, reason);
            self.resolve(&key, state, reason, sent_why(true));
            if let Some(to) = to {
                let _ = to.send(Ok(()));
            }
            return;
        }
        if let Some(state) = elsewhere {
            let reason = match state {
                State::Replied => Reason::AnsweredElsewhere,
                State::Rejected => Reason::RejectedElsewhere,
                State::Dismissed => Reason::SessionEnded,
            };
            self.counters.resolved_elsewhere += 1;
            self.resolve(&key, state, reason, Why::Overtaken);
            if let Some(to) = to {
                let _ = to.send(Err(error.into()));
            }
            return;
        }
        if let BackendError::NotFound { .. } = error {
            self.resolve(&key, State::Dismissed, Reason::Gone, Why::GoneOnSend);
            match to {
                Some(to) => {
                    let _ = to.send(Err(error.into()));
                }
                None => tracing::info!(%key, "automatic decision found the prompt gone"),
            }
            return;
        }
        tracing::warn!(%key, "sending failed: {}", error.for_log());
        let Some(entry) = self.store.get_mut(&key) else {
            return;
        };
        entry.sending = false;
        let title = entry.pending.title.clone();
        match to {
            Some(to) => {
                let _ = to.send(Err(error.into()));
            }
            None => {
                self.notice(Notice::AutomaticNotSent { title, error });
                self.present(&key);
                self.emit_status();
            }
        }
    }

    fn count(&mut self, state: State, reason: Reason) {
        let counter = match (state, reason) {
            (State::Replied, Reason::AnsweredHere) => &mut self.counters.answered_here,
            (State::Rejected, Reason::RejectedHere) => &mut self.counters.rejected_here,
            (_, Reason::Timeout) => &mut self.counters.timeouts,
            (State::Replied, _) => &mut self.counters.policy_answered,
            _ => &mut self.counters.policy_rejected,
        };
        *counter += 1;
    }
}

fn refuses(kind: &Kind, reply: &Reply) -> bool {
    matches!(reply, Reply::Answer(answer) if answer_refuses(kind, answer))
}

/// A permission answered with one of its reject choices is a rejection.
fn answer_refuses(kind: &Kind, answer: &Answer) -> bool {
    match (kind, answer) {
        (Kind::Permission(permission), Answer::Permission { choice }) => {
            permission.choices.iter().any(|c| {
                &c.id == choice && matches!(c.effect, Effect::RejectOnce | Effect::RejectAlways)
            })
        }
        _ => false,
    }
}

/// A failure after which the server may or may not have applied the reply.
fn ambiguous(error: &BackendError) -> bool {
    matches!(
        error,
        BackendError::Timeout { .. } | BackendError::Connect { .. } | BackendError::Server { .. }
    )
}
