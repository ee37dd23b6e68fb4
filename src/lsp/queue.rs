//! The presenter's prompts in the order they are shown: oldest first, except
//! one a person asked to see again (first) or put off (`Later`: skipped
//! until asked for). Every operation is `O(log n)`, so thousands of pending
//! prompts cost no more per prompt than a few.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::broker::Pending;

#[derive(Default)]
pub(super) struct Queue {
    entries: HashMap<String, Entry>,
    /// Shown in this order, by position.
    ready: BTreeMap<i64, String>,
    /// Put off, by position (kept for when they are asked for again).
    deferred: BTreeMap<i64, String>,
    /// Positions for the back (counting up) and the front (counting down).
    back: i64,
    front: i64,
}

struct Entry {
    pending: Arc<Pending>,
    at: i64,
    deferred: bool,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn get(&self, key: &str) -> Option<&Arc<Pending>> {
        self.entries.get(key).map(|e| &e.pending)
    }

    /// Adds a prompt at the back; one already queued keeps its place.
    pub fn push(&mut self, pending: Arc<Pending>) {
        if self.entries.contains_key(&pending.key) {
            return;
        }
        self.back += 1;
        self.ready.insert(self.back, pending.key.clone());
        self.entries.insert(
            pending.key.clone(),
            Entry {
                pending,
                at: self.back,
                deferred: false,
            },
        );
    }

    pub fn remove(&mut self, key: &str) -> Option<Arc<Pending>> {
        let entry = self.entries.remove(key)?;
        self.list(entry.deferred).remove(&entry.at);
        Some(entry.pending)
    }

    /// The next prompt to show: the first one not put off.
    pub fn next(&self) -> Option<&Arc<Pending>> {
        let (_, key) = self.ready.first_key_value()?;
        self.get(key)
    }

    /// Whether any prompt besides `key` waits to be shown.
    pub fn others_ready(&self, key: &str) -> bool {
        self.ready.len() > usize::from(self.entries.get(key).is_some_and(|e| !e.deferred))
    }

    /// Puts a prompt off until it is asked for.
    pub fn defer(&mut self, key: &str) {
        self.place(key, true, None);
    }

    /// Moves a prompt behind the others, still to be shown.
    pub fn move_back(&mut self, key: &str) {
        self.back += 1;
        self.place(key, false, Some(self.back));
    }

    /// Shows a prompt next, put off or not.
    pub fn move_front(&mut self, key: &str) {
        self.front -= 1;
        self.place(key, false, Some(self.front));
    }

    /// Takes every put-off prompt back, in its old place.
    pub fn undefer_all(&mut self) {
        for (at, key) in std::mem::take(&mut self.deferred) {
            if let Some(entry) = self.entries.get_mut(&key) {
                entry.deferred = false;
            }
            self.ready.insert(at, key);
        }
    }

    fn list(&mut self, deferred: bool) -> &mut BTreeMap<i64, String> {
        if deferred {
            &mut self.deferred
        } else {
            &mut self.ready
        }
    }

    fn place(&mut self, key: &str, deferred: bool, at: Option<i64>) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        let (old_at, was_deferred) = (entry.at, entry.deferred);
        entry.at = at.unwrap_or(old_at);
        entry.deferred = deferred;
        let new_at = entry.at;
        let key = self
            .list(was_deferred)
            .remove(&old_at)
            .expect("indexed at its place");
        self.list(deferred).insert(new_at, key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::test_pending;

    fn pending(key: &str) -> Arc<Pending> {
        test_pending("s", key, "ses", None)
    }

    fn order(queue: &mut Queue) -> Vec<String> {
        let mut keys = Vec::new();
        while let Some(next) = queue.next().cloned() {
            keys.push(next.key.clone());
            queue.remove(&next.key);
        }
        keys
    }

    #[test]
    fn oldest_first_with_put_off_and_shown_again() {
        let mut queue = Queue::default();
        for id in ["a", "b", "c", "d", "a"] {
            queue.push(pending(id));
        }
        assert_eq!(queue.len(), 4);
        queue.defer("s/a");
        queue.move_front("s/c");
        queue.move_back("s/b");
        assert!(queue.others_ready("s/c"));
        assert_eq!(queue.next().unwrap().key, "s/c");
        queue.undefer_all();
        assert_eq!(order(&mut queue), ["s/c", "s/a", "s/d", "s/b"]);
        assert_eq!(queue.len(), 0);
        queue.push(pending("x"));
        assert!(!queue.others_ready("s/x"));
        queue.defer("s/x");
        assert!(queue.next().is_none());
        queue.move_front("s/x");
        assert_eq!(queue.next().unwrap().key, "s/x");
    }
}
