//! The pending store: prompts by key in arrival order, indexed by tool call,
//! session and server, plus a memory of resolved keys so that late events
//! and stale listings do not bring a prompt back. Pure data, no I/O.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::num::NonZeroUsize;
use std::sync::Arc;

use lru::LruCache;

use super::{Pending, State};

/// Room the maps always keep.
const KEEP_ROOM: usize = 64;

pub(super) struct Entry {
    pub pending: Arc<Pending>,
    seq: u64,
    /// A decision is on its way to the server.
    pub sending: bool,
    /// Handed to presenters.
    pub presented: bool,
    /// Resolved elsewhere while our own send was under way: if ours fails,
    /// this is what happened to it.
    pub elsewhere: Option<State>,
    /// The last resync listing that named it ([`Store::mark_listed`]); in
    /// the entry's padding.
    listed: u32,
}

pub(super) struct Store {
    entries: HashMap<String, Entry>,
    /// Arrival order (FIFO across sessions and servers).
    order: BTreeMap<u64, String>,
    next_seq: u64,
    by_call: HashMap<(Arc<str>, String), String>,
    by_session: HashMap<(Arc<str>, String), HashSet<String>>,
    by_server: HashMap<Arc<str>, HashSet<String>>,
    resolved: LruCache<String, ()>,
    /// Resync listings counted, to mark the entries each names (0 is no
    /// listing's: a new entry's).
    listings: u32,
}

impl Store {
    pub fn new(memory: usize) -> Self {
        Store {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_seq: 0,
            by_call: HashMap::new(),
            by_session: HashMap::new(),
            by_server: HashMap::new(),
            resolved: LruCache::sparse(NonZeroUsize::new(memory).expect("non-zero")),
            listings: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    fn room(&self) -> usize {
        self.entries.capacity()
    }

    /// Pending now, or resolved recently.
    pub fn knows(&self, key: &str) -> bool {
        self.entries.contains_key(key) || self.resolved.contains(key)
    }

    /// Remembers a key as resolved without it ever being pending (answered
    /// elsewhere before we saw it, or refused).
    pub fn remember(&mut self, key: String) {
        self.resolved.put(key, ());
    }

    pub fn insert(&mut self, pending: Arc<Pending>) {
        let key = pending.key.clone();
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(call) = &pending.prompt.origin.tool_call {
            self.by_call
                .insert((pending.server.clone(), call.clone()), key.clone());
        }
        self.by_session
            .entry((pending.server.clone(), pending.prompt.session.clone()))
            .or_default()
            .insert(key.clone());
        self.by_server
            .entry(pending.server.clone())
            .or_default()
            .insert(key.clone());
        self.order.insert(seq, key.clone());
        self.entries.insert(
            key,
            Entry {
                pending,
                seq,
                sending: false,
                presented: false,
                elsewhere: None,
                listed: 0,
            },
        );
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.entries.get_mut(key)
    }

    /// Takes a prompt out and remembers it was resolved.
    pub fn remove(&mut self, key: &str) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        let pending = &entry.pending;
        self.order.remove(&entry.seq);
        if let Some(call) = &pending.prompt.origin.tool_call {
            self.by_call.remove(&(pending.server.clone(), call.clone()));
        }
        let session = (pending.server.clone(), pending.prompt.session.clone());
        if let Some(keys) = self.by_session.get_mut(&session) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_session.remove(&session);
            }
        }
        if let Some(keys) = self.by_server.get_mut(&pending.server) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_server.remove(&pending.server);
            }
        }
        self.resolved.put(key.to_owned(), ());
        self.give_back_room();
        Some(entry)
    }

    /// Once a burst is resolved the maps keep the room it needed: given
    /// back when under a quarter is used (each shrink is paid for by the
    /// removals since the last, so removal stays O(1) amortised).
    fn give_back_room(&mut self) {
        let (len, room) = (self.entries.len(), self.entries.capacity());
        if room <= KEEP_ROOM || len * 4 > room {
            return;
        }
        let keep = (len * 2).max(KEEP_ROOM);
        self.entries.shrink_to(keep);
        self.by_call.shrink_to(keep);
        self.by_session.shrink_to(keep);
        self.by_server.shrink_to(keep);
    }

    pub fn by_call(&self, server: &Arc<str>, call: &str) -> Option<&str> {
        self.by_call
            .get(&(server.clone(), call.to_owned()))
            .map(String::as_str)
    }

    pub fn in_session(&self, server: &Arc<str>, session: &str) -> Vec<String> {
        self.by_session
            .get(&(server.clone(), session.to_owned()))
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn on_server(&self, server: &Arc<str>) -> Vec<String> {
        self.by_server
            .get(server)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Starts a resync listing: the mark its prompts get.
    pub fn new_listing(&mut self) -> u32 {
        self.listings = self.listings.wrapping_add(1).max(1);
        self.listings
    }

    /// Marks a pending prompt as named by `listing`; `false` when it is not
    /// pending.
    pub fn mark_listed(&mut self, key: &str, listing: u32) -> bool {
        self.entries
            .get_mut(key)
            .map(|e| e.listed = listing)
            .is_some()
    }

    /// A server's prompts that `listing` did not name and that are not
    /// being answered: what that resync finds gone. Only those keys are
    /// copied.
    pub fn gone(&self, server: &Arc<str>, listing: u32) -> Vec<String> {
        // One pass over the entries where they lie, the mark first: no key
        // of a listed prompt is looked up or even read.
        self.entries
            .iter()
            .filter(|(_, e)| e.listed != listing && !e.sending && e.pending.server == *server)
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// Every entry, oldest first.
    pub fn ordered(&self) -> impl Iterator<Item = &Entry> {
        self.order.values().filter_map(|key| self.entries.get(key))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backends::Source;
    use crate::prompt::{Kind, Origin, Prompt, Question};
    use crate::settings::ServerKind;

    pub(crate) fn pending(
        server: &str,
        id: &str,
        session: &str,
        call: Option<&str>,
    ) -> Arc<Pending> {
        let server: Arc<str> = server.into();
        Arc::new(Pending {
            key: format!("{server}/{id}"),
            server,
            prompt: Prompt {
                id: id.into(),
                session: session.into(),
                directory: None,
                origin: Origin {
                    tool_call: call.map(str::to_owned),
                    agent: None,
                    session_title: None,
                    requester: None,
                },
                kind: Kind::Questions(vec![Question {
                    header: "H".into(),
                    text: "q".into(),
                    options: vec![],
                    multiple: false,
                    custom: true,
                    secret: false,
                    cannot_show: None,
                }]),
            },
            title: "H".into(),
            source: Source {
                kind: ServerKind::OpenCode,
                url: "http://test".into(),
            },
            timeout: None,
            unshowable: None,
        })
    }

    #[test]
    fn order_is_arrival_order_and_survives_removal() {
        let mut store = Store::new(8);
        for id in ["c", "a", "b"] {
            store.insert(pending("s", id, "ses", None));
        }
        store.remove("s/a");
        let keys: Vec<&str> = store.ordered().map(|e| e.pending.key.as_str()).collect();
        assert_eq!(keys, ["s/c", "s/b"]);
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn indexes_follow_inserts_and_removals() {
        let mut store = Store::new(8);
        let s: Arc<str> = "s".into();
        store.insert(pending("s", "1", "ses_a", Some("call_1")));
        store.insert(pending("s", "2", "ses_a", None));
        store.insert(pending("t", "3", "ses_a", Some("call_1")));
        assert_eq!(store.by_call(&s, "call_1"), Some("s/1"));
        let mut session = store.in_session(&s, "ses_a");
        session.sort();
        assert_eq!(session, ["s/1", "s/2"]);
        assert_eq!(store.on_server(&"t".into()), ["t/3"]);
        store.remove("s/1");
        assert_eq!(store.by_call(&s, "call_1"), None);
        assert_eq!(store.in_session(&s, "ses_a"), ["s/2"]);
        store.remove("s/2");
        assert!(store.in_session(&s, "ses_a").is_empty());
        assert!(store.on_server(&s).is_empty());
    }

    #[test]
    fn resolved_keys_are_remembered_within_the_bound() {
        let mut store = Store::new(2);
        store.insert(pending("s", "1", "ses", None));
        store.remove("s/1");
        assert!(store.knows("s/1"));
        store.remember("s/2".into());
        store.remember("s/3".into());
        assert!(!store.knows("s/1"), "the oldest memory goes first");
        assert!(store.knows("s/3"));
    }

    #[test]
    fn room_taken_by_a_burst_is_given_back_once_it_is_resolved() {
        let mut store = Store::new(8);
        for i in 0..10_000 {
            store.insert(pending(
                "s",
                &i.to_string(),
                "ses",
                Some(&format!("call_{i}")),
            ));
        }
        let burst = store.room();
        for i in 0..9_990 {
            store.remove(&format!("s/{i}"));
        }
        assert!(store.room() < burst / 100, "{} of {burst}", store.room());
        // What is left is still found by every index.
        assert_eq!(store.len(), 10);
        assert_eq!(store.by_call(&"s".into(), "call_9995"), Some("s/9995"));
        assert_eq!(store.in_session(&"s".into(), "ses").len(), 10);
        assert_eq!(store.ordered().count(), 10);
    }
}
