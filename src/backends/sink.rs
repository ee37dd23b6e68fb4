//! Where a server's events go: to the broker, through a queue bounded in
//! events. Sending never waits (backends send from plain functions too);
//! instead a backend's read loop waits for [`Sink::room`] before it
//! takes in more of its stream, so a server that floods ask-lsp is held up
//! at its own socket while the broker catches up, rather than queued in
//! memory without bound (issue #48: the flood outran the broker and grew
//! the queue by ~1 KB an event).
//!
//! An event keeps its place in the bound until whoever takes it last (the
//! broker) drops its [`Queued`]: the hop that tags it with its server's
//! name does not count as taking it.
//!
//! Cost: two atomics per event; a reader held up waits until half the
//! bound is handled, so it is woken once per [`EVENTS`]` / 2` events, not
//! once per event.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, mpsc};

/// Events a server may have queued for the broker before its reader waits.
pub(crate) const EVENTS: usize = 256;
/// Where a waiting reader goes on.
const RESUME: usize = EVENTS / 2;

#[derive(Default)]
struct Count {
    queued: AtomicUsize,
    drained: Notify,
}

/// The sending side; clones share the bound. Generic so that this floor
/// names no backend type (`backends::EventSink` is the one used).
pub(crate) struct Sink<T> {
    tx: mpsc::UnboundedSender<Queued<T>>,
    count: Arc<Count>,
}

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Sink {
            tx: self.tx.clone(),
            count: self.count.clone(),
        }
    }
}

/// Nobody receives any more.
#[derive(Debug)]
pub(crate) struct Closed;

/// An event on its way, holding its place in the bound until dropped.
pub(crate) struct Queued<T> {
    pub event: T,
    _place: Place,
}

struct Place(Arc<Count>);

impl Drop for Place {
    fn drop(&mut self) {
        if self.0.queued.fetch_sub(1, Ordering::SeqCst) == RESUME + 1 {
            self.0.drained.notify_waiters();
        }
    }
}

pub(crate) struct Receiver<T> {
    rx: mpsc::UnboundedReceiver<Queued<T>>,
}

/// A sink and the receiver of what it sends.
pub(crate) fn channel<T>() -> (Sink<T>, Receiver<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        Sink {
            tx,
            count: Arc::default(),
        },
        Receiver { rx },
    )
}

impl<T> Sink<T> {
    /// Queues an event without waiting.
    pub fn send(&self, event: T) -> Result<(), Closed> {
        self.count.queued.fetch_add(1, Ordering::SeqCst);
        let queued = Queued {
            event,
            _place: Place(self.count.clone()),
        };
        self.tx.send(queued).map_err(|_| Closed)
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// At once while fewer than [`EVENTS`] are queued (or nobody
    /// receives); else waits until no more than half of them are.
    pub async fn room(&self) {
        if self.count.queued.load(Ordering::SeqCst) < EVENTS {
            return;
        }
        loop {
            let drained = self.count.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.count.queued.load(Ordering::SeqCst) <= RESUME || self.tx.is_closed() {
                return;
            }
            tokio::select! {
                () = drained => {}
                () = self.tx.closed() => return,
            }
        }
    }
}

impl<T> Receiver<T> {
    /// The next event; `None` once every sink is gone and all are read.
    pub async fn recv(&mut self) -> Option<Queued<T>> {
        self.rx.recv().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reader_held_up_at_the_bound_goes_on_once_half_is_handled() {
        let (sink, mut events) = channel::<u8>();
        for _ in 0..EVENTS {
            sink.send(0).unwrap();
        }
        let waiting = tokio::spawn({
            let sink = sink.clone();
            async move { sink.room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        for _ in 0..EVENTS - RESUME - 1 {
            drop(events.recv().await.unwrap());
        }
        // Taken but still held (the tagging hop): not handled yet.
        let held = events.recv().await.unwrap();
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(held);
        waiting.await.unwrap();
        // Nobody receiving: the event is refused.
        drop(events);
        assert!(sink.send(0).is_err());
        sink.room().await;
    }
}
