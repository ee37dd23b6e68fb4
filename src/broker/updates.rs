//! The broker's updates for its one presenter, coalesced while the presenter
//! is busy. A client that stops reading holds the presenter up; it then gets
//! the current state when it reads again, not a backlog that grows for as
//! long as it does not: a prompt added and resolved meanwhile is neither,
//! only the latest status and connection change per server are kept, and
//! notices beyond [`NOTICES`] are summed up. What stays queued is bounded by
//! the pending store (an `Added` per pending prompt, a `Resolved` per prompt
//! the presenter already has), the servers, and [`NOTICES`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::Notice;
use super::Update;

/// Notices kept while the presenter is busy; later ones are counted.
const NOTICES: usize = 32;

pub(crate) fn channel() -> (UpdateSender, Updates) {
    let shared = Arc::new(Shared::default());
    (
        UpdateSender {
            shared: shared.clone(),
        },
        Updates { shared },
    )
}

#[derive(Default)]
struct Shared {
    mailbox: Mutex<Mailbox>,
    ready: Notify,
}

#[derive(Default)]
struct Mailbox {
    /// In arrival order, by sequence number.
    queued: BTreeMap<u64, Update>,
    next: u64,
    /// Where a prompt's queued `Added` is, so that its `Resolved` cancels it.
    added: HashMap<String, u64>,
    status: Option<u64>,
    /// A server's queued connection change, replaced by a newer one.
    connection: HashMap<String, u64>,
    notices: usize,
    dropped_notices: usize,
    sender_gone: bool,
    receiver_gone: bool,
}

pub(crate) struct UpdateSender {
    shared: Arc<Shared>,
}

pub(crate) struct Updates {
    shared: Arc<Shared>,
}

impl Mailbox {
    fn push(&mut self, update: Update) {
        let at = self.next;
        self.next += 1;
        match &update {
            Update::Added(pending) => {
                self.added.insert(pending.key.clone(), at);
            }
            Update::Resolved(resolution) => {
                if let Some(added) = self.added.remove(&resolution.key) {
                    // Never seen by the presenter: nothing to take back.
                    self.queued.remove(&added);
                    return;
                }
            }
            Update::Status(_) => {
                if let Some(old) = self.status.replace(at) {
                    self.queued.remove(&old);
                }
            }
            Update::Connection { server, .. } => {
                if let Some(old) = self.connection.insert(server.clone(), at) {
                    self.queued.remove(&old);
                }
            }
            Update::Notice { .. } => {
                if self.notices >= NOTICES {
                    self.dropped_notices += 1;
                    return;
                }
                self.notices += 1;
            }
        }
        self.queued.insert(at, update);
    }

    fn pop(&mut self) -> Option<Update> {
        let (at, update) = self.queued.pop_first()?;
        match &update {
            Update::Added(pending) => {
                self.added.remove(&pending.key);
            }
            Update::Status(_) => self.status = None,
            Update::Connection { server, .. } => {
                if self.connection.get(server) == Some(&at) {
                    self.connection.remove(server);
                }
            }
            Update::Notice { .. } => {
                self.notices -= 1;
                if self.notices == 0 && self.dropped_notices > 0 {
                    let dropped = std::mem::take(&mut self.dropped_notices);
                    self.push(Update::Notice(Notice::Dropped { dropped }));
                }
            }
            Update::Resolved(_) => {}
        }
        Some(update)
    }
}

impl UpdateSender {
    /// Queues an update; `false` once the presenter is gone.
    pub fn send(&self, update: Update) -> bool {
        let mut mailbox = self.shared.mailbox.lock().expect("not poisoned");
        if mailbox.receiver_gone {
            return false;
        }
        mailbox.push(update);
        drop(mailbox);
        self.shared.ready.notify_one();
        true
    }

    pub fn is_closed(&self) -> bool {
        self.shared
            .mailbox
            .lock()
            .expect("not poisoned")
            .receiver_gone
    }
}

impl Drop for UpdateSender {
    fn drop(&mut self) {
        self.shared
            .mailbox
            .lock()
            .expect("not poisoned")
            .sender_gone = true;
        self.shared.ready.notify_one();
    }
}

impl Updates {
    /// The next update; `None` once the broker is gone and all are read.
    pub async fn recv(&mut self) -> Option<Update> {
        loop {
            {
                let mut mailbox = self.shared.mailbox.lock().expect("not poisoned");
                if let Some(update) = mailbox.pop() {
                    return Some(update);
                }
                if mailbox.sender_gone {
                    return None;
                }
            }
            self.shared.ready.notified().await;
        }
    }

    /// The next update if one is queued.
    pub fn try_recv(&mut self) -> Option<Update> {
        self.shared.mailbox.lock().expect("not poisoned").pop()
    }
}

impl Drop for Updates {
    fn drop(&mut self) {
        self.shared
            .mailbox
            .lock()
            .expect("not poisoned")
            .receiver_gone = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::Problem;
    use crate::broker::{Reason, Resolution, State, store};

    fn resolved(key: &str) -> Update {
        Update::Resolved(Resolution {
            key: key.into(),
            state: State::Replied,
            reason: Reason::AnsweredElsewhere,
            why: crate::prompt::Why::Elsewhere,
            title: "".into(),
            pending: 0,
        })
    }

    fn added(key: &str) -> Update {
        let (server, id) = key.split_once('/').expect("a key");
        Update::Added(store::tests::pending(server, id, "ses", None))
    }

    fn name(update: &Update) -> String {
        match update {
            Update::Added(p) => format!("added {}", p.key),
            Update::Resolved(r) => format!("resolved {}", r.key),
            Update::Status(s) => format!("status {}", s.pending),
            Update::Connection { server, error } => {
                format!("{server} {:?}", error.as_ref().map(ToString::to_string))
            }
            Update::Notice(Notice::Problem {
                problem: Problem::NoNewEngineListing { route },
                ..
            }) => route.clone(),
            Update::Notice(notice) => format!("{notice:?}"),
        }
    }

    #[tokio::test]
    async fn a_busy_presenter_gets_the_current_state_not_a_backlog() {
        let (tx, mut rx) = channel();
        let status = |pending| {
            Update::Status(crate::broker::Status {
                pending,
                servers: Vec::new(),
                counters: Default::default(),
            })
        };
        tx.send(added("s/seen"));
        assert_eq!(name(&rx.recv().await.unwrap()), "added s/seen");
        for n in 0..10_000 {
            let key = format!("s/{n}");
            tx.send(added(&key));
            tx.send(status(n));
            tx.send(Update::Connection {
                server: "s".into(),
                error: Some(crate::backends::BackendError::Stream {
                    server: crate::backends::ServerLabel::Hook,
                    cause: crate::backends::Cause::Said(format!("down {n}")),
                }),
            });
            tx.send(resolved(&key));
        }
        tx.send(added("s/last"));
        tx.send(resolved("s/seen"));
        for n in 0..100 {
            tx.send(Update::Notice(Notice::Problem {
                server: "s".into(),
                problem: Problem::NoNewEngineListing {
                    route: format!("notice {n}"),
                },
            }));
        }
        drop(tx);
        let mut got = Vec::new();
        while let Some(update) = rx.recv().await {
            got.push(name(&update));
        }
        let mut expected = vec![
            "status 9999".to_owned(),
            "s Some(\"hook: down 9999\")".into(),
            "added s/last".into(),
            "resolved s/seen".into(),
        ];
        expected.extend((0..NOTICES).map(|n| format!("notice {n}")));
        expected.push(format!(
            "{:?}",
            Notice::Dropped {
                dropped: 100 - NOTICES
            }
        ));
        assert_eq!(got, expected);
    }
}
