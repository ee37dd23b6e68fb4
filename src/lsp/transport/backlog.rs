//! What waits for a client that does not read, bounded: the presenter's
//! messages not yet taken by the transport (at most [`MESSAGES`]), and the
//! bytes of the frames between the transport and stdout (at most
//! [`BYTES`], plus one frame). tower-lsp-server's `Client` queues every
//! message without waiting (each send clones its channel's sender, which
//! brings a slot of its own), so nothing else would hold the presenter up:
//! here it waits before each message while the client is behind, and the
//! broker meanwhile coalesces its updates (`broker/updates.rs`), so the
//! client gets the current state when it reads again, not the backlog.
//!
//! Cost: two atomics and a wake-up per message.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// Presenter messages handed to tower-lsp-server and not yet taken by the
/// transport.
pub(crate) const MESSAGES: usize = 64;
/// Bytes of frames taken by the transport and not yet written to stdout.
pub(crate) const BYTES: usize = 1 << 20;

#[derive(Default)]
pub(crate) struct Backlog {
    messages: AtomicUsize,
    bytes: AtomicUsize,
    changed: Notify,
}

impl Backlog {
    /// Waits until the client has room for one more presenter message,
    /// then counts it as on its way.
    pub(crate) async fn reserve(&self) {
        self.until(|| self.messages.load(Ordering::SeqCst) < MESSAGES && self.bytes_room())
            .await;
        self.messages.fetch_add(1, Ordering::SeqCst);
    }

    /// The transport took a message from the server to the client (a
    /// request or notification). Another part of ask-lsp than the
    /// presenter may have sent it: the count then runs low until it is
    /// back at zero, never below.
    pub(super) fn taken(&self) {
        let _ = self
            .messages
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        self.changed.notify_waiters();
    }

    /// Waits until the frames waiting for stdout are under [`BYTES`], then
    /// counts `len` more.
    pub(super) async fn queue_bytes(&self, len: usize) {
        self.until(|| self.bytes_room()).await;
        self.bytes.fetch_add(len, Ordering::SeqCst);
    }

    /// `len` bytes were written to stdout.
    pub(super) fn written(&self, len: usize) {
        let _ = self
            .bytes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n.saturating_sub(len))
            });
        self.changed.notify_waiters();
    }

    fn bytes_room(&self) -> bool {
        self.bytes.load(Ordering::SeqCst) < BYTES
    }

    async fn until(&self, room: impl Fn() -> bool) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if room() {
                return;
            }
            changed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_presenter_waits_while_the_client_is_behind() {
        let backlog = std::sync::Arc::new(Backlog::default());
        for _ in 0..MESSAGES {
            backlog.reserve().await;
        }
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.reserve().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        backlog.taken();
        waiting.await.unwrap();
        // Bytes: over the bound, everything waits until stdout takes some.
        backlog.queue_bytes(BYTES).await;
        for _ in 0..MESSAGES {
            backlog.taken();
        }
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.reserve().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        backlog.written(1);
        waiting.await.unwrap();
    }
}
