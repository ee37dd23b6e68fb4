//! What the daemon sends, one message at a time: its requests for a
//! person (kept, shown, or held until their thread's `cwd` is known), the
//! notifications that end or describe them, and the answers to ask-lsp's
//! own requests (`thread/loaded/list`, `thread/resume`).

use serde_json::{Value, json};

use super::wire::{self, Asked};
use super::{CodexDaemon, MAX_OPEN, MAX_THREADS, Route, State, note_followed};
use crate::backends::{BackendEvent, EventSink, Snapshot, id_within};
use crate::prompt::{Prompt, SessionTitle};

impl CodexDaemon {
    /// Handles one message; false once nobody listens for events.
    pub(super) fn handle(
        &self,
        mut message: Value,
        send: &impl Fn(Value),
        sink: &EventSink,
    ) -> bool {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let params = message
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let events = match (method.as_deref(), message.get("id").cloned()) {
            (Some(method), Some(rpc_id)) => self.request(method, rpc_id, params, send),
            (Some(method), None) => self.notification(method, &params, send),
            (None, Some(id)) => self.answered(&id, &message, send),
            (None, None) => Vec::new(),
        };
        events.into_iter().all(|event| sink.send(event).is_ok())
    }

    /// Resumes `thread` (subscribes to its requests) unless done already.
    fn resume(&self, state: &mut State, thread: &str, send: &impl Fn(Value)) {
        if !id_within(thread) {
            return;
        }
        if state.threads.len() >= MAX_THREADS && !state.threads.contains_key(thread) {
            return;
        }
        let known = state.threads.entry(thread.to_owned()).or_default();
        if known.resumed || known.ours == Some(false) {
            return;
        }
        known.resumed = true;
        send(
            json!({"jsonrpc": "2.0", "id": format!("resume:{thread}"), "method": "thread/resume",
                    "params": {"threadId": thread, "excludeTurns": true}}),
        );
    }

    fn request(
        &self,
        method: &str,
        rpc_id: Value,
        params: Value,
        send: &impl Fn(Value),
    ) -> Vec<BackendEvent> {
        let Some(thread) = wire::thread_of(&params).map(str::to_owned) else {
            return Vec::new();
        };
        let mut state = self.state.lock().expect("not poisoned");
        let changes = &mut state.changes;
        let asked = wire::asked(method, params, |_, item| changes.get(item).cloned());
        let mut asked = match asked {
            Ok(Some(asked)) => asked,
            // Not one ask-lsp shows: Codex's own clients answer it.
            Ok(None) => return Vec::new(),
            Err(e) => {
                tracing::warn!("{}: skipped a malformed {method}: {e}", self.label());
                return Vec::new();
            }
        };
        if !id_within(&asked.prompt.id) || state.open.len() + state.held.len() >= MAX_OPEN {
            return Vec::new();
        }
        match state.threads.get(&thread).and_then(|t| t.ours) {
            Some(false) => Vec::new(),
            Some(true) => {
                if let Some(known) = state.threads.get(&thread) {
                    asked.prompt.origin.session_title = known.title.clone();
                    if asked.prompt.directory.is_none() {
                        asked.prompt.directory = known.cwd.clone();
                    }
                }
                self.open(&mut state, asked, rpc_id)
            }
            None => {
                // Its thread's `cwd` comes with the resume's answer.
                self.resume(&mut state, &thread, send);
                state.held.push((thread, asked, rpc_id));
                Vec::new()
            }
        }
    }

    /// Keeps a request's route; announces it unless the first listing is
    /// still being made. A request heard twice (live, then replayed by a
    /// resume) is one prompt.
    fn open(&self, state: &mut State, asked: Asked, rpc_id: Value) -> Vec<BackendEvent> {
        let route = Route {
            rpc_id,
            thread: asked.thread,
            expect: asked.expect,
        };
        let known = state.open.insert(asked.prompt.id.clone(), route).is_some();
        match (known, state.listing) {
            (true, _) => Vec::new(),
            (false, true) => {
                state.listed.push(asked.prompt);
                Vec::new()
            }
            (false, false) => vec![BackendEvent::Asked(asked.prompt)],
        }
    }

    fn notification(
        &self,
        method: &str,
        params: &Value,
        send: &impl Fn(Value),
    ) -> Vec<BackendEvent> {
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        let mut state = self.state.lock().expect("not poisoned");
        match method {
            "thread/status/changed" => {
                let active =
                    params.pointer("/status/type").and_then(Value::as_str) == Some("active");
                if let Some(thread) = text("threadId")
                    && active
                {
                    self.resume(&mut state, thread, send);
                }
                Vec::new()
            }
            "thread/started" => {
                // A new thread of the workspace: the hook leaves its
                // requests to this follower from now on (its first turn's
                // status change resumes it; the resume replays what it asks).
                let Some(thread) = params.get("thread") else {
                    return Vec::new();
                };
                let id = thread.get("id").and_then(Value::as_str).unwrap_or_default();
                let cwd = thread
                    .get("cwd")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let ephemeral = thread.get("ephemeral").and_then(Value::as_bool) == Some(true);
                tracing::debug!(thread = id, cwd, ephemeral, "a Codex thread started");
                if ephemeral
                    || !id_within(id)
                    || !self.in_workspace(cwd)
                    || (state.threads.len() >= MAX_THREADS && !state.threads.contains_key(id))
                {
                    return Vec::new();
                }
                let known = state.threads.entry(id.to_owned()).or_default();
                known.ours = Some(true);
                known.cwd = Some(cwd.to_owned());
                known.title = thread
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(SessionTitle::new);
                if !known.noted {
                    known.noted = true;
                    note_followed(id, true);
                }
                Vec::new()
            }
            "thread/name/updated" => {
                if let Some(thread) = text("threadId")
                    && let Some(known) = state.threads.get_mut(thread)
                {
                    known.title = text("threadName").and_then(SessionTitle::new);
                }
                Vec::new()
            }
            "item/started" => {
                let item = params.get("item");
                if item.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("fileChange")
                    && let Some(item) = item
                    && let Some(id) = item.get("id").and_then(Value::as_str)
                    && id_within(id)
                {
                    state.changes.put(id.to_owned(), file_changes(item));
                }
                Vec::new()
            }
            "serverRequest/resolved" => {
                let Some(request) = params.get("requestId") else {
                    return Vec::new();
                };
                let thread = text("threadId").unwrap_or_default();
                let resolved: Vec<String> = state
                    .open
                    .iter()
                    .filter(|(_, route)| &route.rpc_id == request && route.thread == thread)
                    .map(|(id, _)| id.clone())
                    .collect();
                state
                    .held
                    .retain(|(_, asked, _)| !resolved.contains(&asked.prompt.id));
                for id in &resolved {
                    state.open.remove(id);
                }
                if state.listing {
                    return Vec::new();
                }
                resolved
                    .into_iter()
                    .map(|id| BackendEvent::ResolvedElsewhere {
                        id,
                        rejected: false,
                    })
                    .collect()
            }
            "turn/completed" | "thread/closed" | "thread/archived" => {
                // Nothing of the thread waits any more.
                let Some(thread) = text("threadId") else {
                    return Vec::new();
                };
                let ended: Vec<String> = state
                    .open
                    .iter()
                    .filter(|(_, route)| route.thread == thread)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in &ended {
                    state.open.remove(id);
                }
                if method != "turn/completed"
                    && let Some(known) = state.threads.remove(thread)
                    && known.noted
                {
                    note_followed(thread, false);
                }
                ended
                    .into_iter()
                    .map(|id| BackendEvent::Withdrawn { id })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// A response to one of ask-lsp's own requests.
    fn answered(&self, id: &Value, message: &Value, send: &impl Fn(Value)) -> Vec<BackendEvent> {
        let mut state = self.state.lock().expect("not poisoned");
        match id.as_str() {
            Some("loaded") => {
                let threads: Vec<String> = message
                    .pointer("/result/data")
                    .and_then(Value::as_array)
                    .map(|ids| {
                        ids.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                for thread in &threads {
                    let before = state.threads.get(thread).is_some_and(|t| t.resumed);
                    self.resume(&mut state, thread, send);
                    if !before && state.threads.get(thread).is_some_and(|t| t.resumed) {
                        state.resumes_pending += 1;
                    }
                }
                self.list_if_done(&mut state)
            }
            Some(resume) if resume.starts_with("resume:") => {
                let thread = &resume["resume:".len()..];
                let found = message.pointer("/result/thread");
                tracing::debug!(thread, resumed = found.is_some(), "a Codex thread resumed");
                let mut events = Vec::new();
                match found {
                    Some(found) => {
                        let cwd = found.get("cwd").and_then(Value::as_str).unwrap_or_default();
                        let ours = self.in_workspace(cwd);
                        let title = found
                            .get("name")
                            .and_then(Value::as_str)
                            .and_then(SessionTitle::new);
                        if let Some(known) = state.threads.get_mut(thread) {
                            known.ours = Some(ours);
                            known.title = title.clone();
                            known.cwd = Some(cwd.to_owned());
                            if ours && !known.noted {
                                known.noted = true;
                                note_followed(thread, true);
                            }
                        }
                        if !ours {
                            // Its traffic is not ours to read.
                            send(json!({"jsonrpc": "2.0", "id": "unsubscribe",
                                        "method": "thread/unsubscribe",
                                        "params": {"threadId": thread}}));
                        }
                        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut state.held)
                            .into_iter()
                            .partition(|(held_thread, _, _)| held_thread == thread);
                        state.held = rest;
                        for (_, mut asked, rpc_id) in mine {
                            if ours {
                                asked.prompt.directory =
                                    asked.prompt.directory.or_else(|| Some(cwd.to_owned()));
                                asked.prompt.origin.session_title = title.clone();
                                events.extend(self.open(&mut state, asked, rpc_id));
                            }
                        }
                    }
                    None => {
                        // "no rollout found" before the thread's first turn:
                        // tried again when its status changes.
                        if let Some(known) = state.threads.get_mut(thread) {
                            known.resumed = false;
                        }
                        state
                            .held
                            .retain(|(held_thread, _, _)| held_thread != thread);
                    }
                }
                if state.listing && state.resumes_pending > 0 {
                    state.resumes_pending -= 1;
                }
                events.extend(self.list_if_done(&mut state));
                events
            }
            _ => Vec::new(),
        }
    }

    /// The first listing, once every resume it waited for is answered: what
    /// is pending now, replacing what an earlier connection showed.
    fn list_if_done(&self, state: &mut State) -> Vec<BackendEvent> {
        if !state.listing || state.resumes_pending > 0 {
            return Vec::new();
        }
        state.listing = false;
        state.was_listed = true;
        state.stale.clear();
        let listed: Vec<Prompt> = std::mem::take(&mut state.listed)
            .into_iter()
            .filter(|prompt| state.open.contains_key(&prompt.id))
            .collect();
        vec![
            BackendEvent::Connected,
            BackendEvent::Snapshot(Snapshot::from(listed)),
        ]
    }
}

/// A file change item's paths and its changes as one unified diff
/// (`FileUpdateChange`: `path`, `kind` `add` | `delete` | `update`, `diff`:
/// an added or deleted file's whole text, an update's hunks).
fn file_changes(item: &Value) -> (Vec<String>, String) {
    let mut paths = Vec::new();
    let mut diff = String::new();
    let changes = item.get("changes").and_then(Value::as_array);
    for change in changes
        .into_iter()
        .flatten()
        .take(crate::prompt::limits::PATTERNS)
    {
        let path = change
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = change
            .pointer("/kind/type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = change
            .get("diff")
            .and_then(Value::as_str)
            .unwrap_or_default();
        paths.push(path.to_owned());
        let lines = || text.lines().count();
        let whole = |sign: char| {
            text.lines()
                .map(|l| format!("{sign}{l}\n"))
                .collect::<String>()
        };
        match kind {
            "add" => {
                diff.push_str(&format!(
                    "--- /dev/null\n+++ {path}\n@@ -0,0 +1,{} @@\n",
                    lines()
                ));
                diff.push_str(&whole('+'));
            }
            "delete" => {
                diff.push_str(&format!(
                    "--- {path}\n+++ /dev/null\n@@ -1,{} +0,0 @@\n",
                    lines()
                ));
                diff.push_str(&whole('-'));
            }
            _ => {
                let to = change
                    .pointer("/kind/move_path")
                    .and_then(Value::as_str)
                    .unwrap_or(path);
                if !text.starts_with("---") {
                    diff.push_str(&format!("--- {path}\n+++ {to}\n"));
                }
                diff.push_str(text);
                if !diff.ends_with('\n') {
                    diff.push('\n');
                }
            }
        }
    }
    (paths, diff)
}
