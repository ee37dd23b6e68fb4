//! The sandbox-agent backend: ACP over HTTP.
//!
//! `GET /v1/acp/{serverId}` is an SSE stream (`event: message`, numbered ids,
//! replay with `Last-Event-ID`) of everything the agent process sends. The
//! agent's requests that need a person become prompts:
//! `session/request_permission` (a permission over its options) and
//! `_sandboxagent/session/request_question` (questions, in either param
//! shape) and `elicitation/create` (a form, or a link; see [`elicitation`]).
//! The answer is a JSON-RPC response POSTed to `/v1/acp/{serverId}`.
//!
//! A request stops being pending when the agent cancels it
//! (`$/cancel_request`), exits (`_adapter/agent_exited`: JSON-RPC ids start
//! again with the next process), or its tool call ends (a `tool_call_update`
//! that is `completed` or `failed`, per session). A turn's end does not: its
//! result names no session, and another session's request may still be open.
//! A link's `elicitation/complete` finishes the flow: ask-lsp accepts the
//! request, as the agent expects after the flow. An elicitation ask-lsp
//! cannot show is declined at once, and the person is told why.
//!
//! The stream starts with the server's history, without its clients'
//! responses: what was asked is held until that burst is over (quiet for
//! [`SETTLE`]), then only what the history leaves open is shown, and nothing
//! is sent for it unless someone decides now (see docs/protocol.md).
//!
//! The ACP messages and replies are read and written in [`wire`].

mod elicitation;
#[cfg(test)]
mod tests;
mod wire;

use wire::{AcpEvent, id_text, parse_message, result_for};

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::net::http::{self, Peer};
use super::net::stream::{Flow, Follow, follow};
use super::{
    Backend, BackendError, BackendEvent, Declined, EventSink, Expected, Problem, RefuseReason,
    ServerLabel, Source, Timing, id_within,
};
use crate::backends::net::sse::SseEvent;
use crate::prompt::{Prompt, Reply, SessionTitle};
use crate::settings::{Secret, ServerKind};

/// Open requests kept at most (each is a blocked agent turn; more is abuse).
const MAX_OPEN: usize = 1024;
/// Quiet that ends the replayed history at the start of the stream.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);
/// Quiet after connecting that means there is no history (sandbox-agent
/// itself always has some: the `initialize` result).
const NO_HISTORY: std::time::Duration = std::time::Duration::from_millis(1000);

pub(crate) struct SandboxAgent {
    endpoint: String,
    token: Option<Secret>,
    http: reqwest::Client,
    timing: Timing,
    peer: Peer,
    state: Mutex<State>,
    /// Signalled by each event while the history is replayed.
    activity: tokio::sync::Notify,
}

struct State {
    last_event_id: Option<String>,
    /// How to answer each open request, by prompt id, in arrival order.
    open: Vec<(String, Route)>,
    /// The stream is still replaying the server's history.
    replaying: bool,
    /// What the history asked, not yet shown, by prompt id.
    held: Vec<(String, Held)>,
    /// Each session's title, from `session_info_update` (shown and cut as
    /// read); the session's next prompts carry it.
    titles: lru::LruCache<String, SessionTitle>,
}

enum Held {
    Asked(Prompt),
    /// Unshowable: declined once the history is over, unless a later event
    /// of it closed it (an agent must never wait for a form nobody sees).
    Refused {
        response: Value,
        reason: String,
    },
}

/// What a reply to one agent request needs.
#[derive(Debug, Clone, PartialEq)]
struct Route {
    rpc_id: Value,
    session: String,
    /// The tool call it belongs to, whose end resolves it.
    tool_call: Option<String>,
    /// For the `prompt` + `options: [[id, label]]` question shape, whose
    /// answers are ids.
    answer_ids: Option<Vec<(String, String)>>,
    /// A link's `elicitationId`, which `elicitation/complete` names.
    elicitation_id: Option<String>,
}

impl SandboxAgent {
    pub fn new(url: &str, server_id: &str, token: Option<Secret>, timing: Timing) -> Self {
        SandboxAgent {
            endpoint: format!("{url}/v1/acp/{server_id}"),
            token,
            http: http::client(&timing),
            timing,
            peer: Peer {
                label: ServerLabel::SandboxAgent {
                    url: url.to_owned(),
                    server_id: server_id.to_owned(),
                },
                expected: Expected::SandboxAgent,
            },
            state: Mutex::new(State {
                last_event_id: None,
                open: Vec::new(),
                replaying: true,
                held: Vec::new(),
                titles: lru::LruCache::new(std::num::NonZeroUsize::new(256).expect("non-zero")),
            }),
            activity: tokio::sync::Notify::new(),
        }
    }

    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => builder.bearer_auth(token.expose()),
            None => builder,
        }
    }

    async fn respond(&self, prompt: &Prompt, reply: &Reply) -> Result<(), BackendError> {
        let label = self.peer.label.clone();
        let route = {
            let state = self.state.lock().expect("not poisoned");
            state
                .open
                .iter()
                .find(|(id, _)| *id == prompt.id)
                .map(|(_, route)| route.clone())
        };
        let route = route.ok_or_else(|| BackendError::NotFound {
            server: label.clone(),
        })?;
        let result = result_for(&route, prompt, reply).ok_or_else(|| BackendError::Refused {
            server: label.clone(),
            reason: RefuseReason::AnswerDoesNotFit,
        })?;
        // Taken out while it is sent: an `elicitation/complete` or a tool
        // call's end meanwhile cannot answer or resolve it a second time.
        let Some((_, route)) = self.take(&prompt.id) else {
            return Err(BackendError::NotFound { server: label });
        };
        let body = json!({"jsonrpc": "2.0", "id": route.rpc_id, "result": result});
        let failed = match self.post(&body).await {
            Ok(answered) => match answered.status {
                200..=299 => return Ok(()),
                404 => BackendError::NotFound { server: label },
                status => self.peer.server_error(status, String::new()),
            },
            Err(e) => e,
        };
        self.state
            .lock()
            .expect("not poisoned")
            .open
            .push((prompt.id.clone(), route));
        Err(failed)
    }

    fn take(&self, prompt_id: &str) -> Option<(String, Route)> {
        let mut state = self.state.lock().expect("not poisoned");
        let at = state.open.iter().position(|(id, _)| id == prompt_id)?;
        Some(state.open.remove(at))
    }

    /// Forgets the open requests `which` picks; returns the prompt ids of
    /// those already shown (held ones are dropped unseen).
    fn close_where(&self, which: impl Fn(&String, &Route) -> bool) -> Vec<String> {
        let mut state = self.state.lock().expect("not poisoned");
        let mut closed = Vec::new();
        state.open.retain(|(id, route)| {
            let close = which(id, route);
            if close {
                closed.push(id.clone());
            }
            !close
        });
        let was_held = |id: &String| state.held.iter().any(|(held, _)| held == id);
        let (unseen, shown): (Vec<String>, Vec<String>) = closed.into_iter().partition(was_held);
        state.held.retain(|(id, _)| !unseen.contains(id));
        shown
    }

    /// Posts one JSON-RPC message (a response to an agent request) to the
    /// server's ACP endpoint.
    async fn post(&self, message: &Value) -> Result<http::Answered, BackendError> {
        let request = self
            .authorized(self.http.post(&self.endpoint))
            .json(message);
        self.peer.exchange(&self.timing, request).await
    }

    /// Declines a request ask-lsp cannot show and tells the person why.
    /// `early`: asked before ask-lsp was following (replayed history).
    async fn refuse(&self, response: Value, reason: String, early: bool, sink: &EventSink) -> bool {
        let declined = match self.post(&response).await {
            Ok(answered) if (200..300).contains(&answered.status) => Declined::Yes,
            Ok(answered) => Declined::Refused(answered.status),
            Err(e) => Declined::Failed(e),
        };
        sink.send(BackendEvent::Problem(Problem::AgentFormRefused {
            detail: reason,
            declined,
            early,
        }))
        .is_ok()
    }

    /// Accepts a link whose flow the agent says is over (the spec's
    /// sequence: consent, then the flow, then `elicitation/complete`); the
    /// editor's prompt is withdrawn: nobody needs to act on it any more.
    async fn complete(&self, prompt_id: String, rpc_id: Value, sink: &EventSink) -> bool {
        let body = json!({"jsonrpc": "2.0", "id": rpc_id, "result": {"action": "accept"}});
        match self.post(&body).await {
            Ok(answered) if (200..300).contains(&answered.status) => {}
            Ok(answered) => tracing::warn!(
                "could not accept a completed link ({}); the agent may still wait",
                answered.status
            ),
            Err(e) => tracing::warn!(
                "could not accept a completed link ({}); the agent may still wait",
                e.for_log()
            ),
        }
        sink.send(BackendEvent::Withdrawn { id: prompt_id }).is_ok()
    }

    fn handle(&self, event: SseEvent, sink: &EventSink) -> Result<bool, Post> {
        let event_id = event.id.clone().unwrap_or_default();
        let replaying = {
            let mut state = self.state.lock().expect("not poisoned");
            if event.id.is_some() {
                state.last_event_id = event.id;
            }
            state.replaying
        };
        if replaying {
            self.activity.notify_one();
        }
        let parsed = match parse_message(&event.data, &event_id) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("skipped an undecodable ACP message: {e}");
                return Ok(true);
            }
        };
        let ended: Vec<BackendEvent> = match parsed {
            AcpEvent::Asked { mut prompt, route } => {
                // Not ours to keep (the broker refuses such ids): up to
                // 1024 open routes of 4 MiB ids each would be kept otherwise.
                if !id_within(&prompt.id) || !route.elicitation_id.as_deref().is_none_or(id_within)
                {
                    tracing::warn!(
                        "skipped an agent request whose id is over {} bytes",
                        crate::prompt::limits::ID_LEN
                    );
                    return Ok(true);
                }
                let mut state = self.state.lock().expect("not poisoned");
                if state.open.len() >= MAX_OPEN {
                    let (dropped, _) = state.open.remove(0);
                    state.held.retain(|(id, _)| *id != dropped);
                }
                state.open.push((prompt.id.clone(), route));
                prompt.origin.session_title = state.titles.get(&prompt.session).cloned();
                if state.replaying {
                    state.held.push((prompt.id.clone(), Held::Asked(prompt)));
                    return Ok(true);
                }
                drop(state);
                return Ok(sink.send(BackendEvent::Asked(prompt)).is_ok());
            }
            AcpEvent::Refused {
                response,
                reason,
                route,
            } => {
                let mut state = self.state.lock().expect("not poisoned");
                if !state.replaying {
                    return Err(Post::Decline { response, reason });
                }
                if state.open.len() < MAX_OPEN {
                    let id = format!("{}@{event_id}", id_text(&route.rpc_id));
                    state.open.push((id.clone(), route));
                    state.held.push((id, Held::Refused { response, reason }));
                }
                return Ok(true);
            }
            AcpEvent::Completed { elicitation_id } => {
                let mut state = self.state.lock().expect("not poisoned");
                let Some(at) = state.open.iter().position(|(_, route)| {
                    route.elicitation_id.as_deref() == Some(elicitation_id.as_str())
                }) else {
                    // Answered here already.
                    return Ok(true);
                };
                let (id, route) = state.open.remove(at);
                let unseen = state.held.iter().any(|(held, _)| *held == id);
                state.held.retain(|(held, _)| *held != id);
                // From the history: it may have been answered then.
                if replaying || unseen {
                    return Ok(true);
                }
                return Err(Post::Complete {
                    id,
                    rpc_id: route.rpc_id,
                });
            }
            AcpEvent::Cancelled { rpc_id } => {
                let prefix = format!("{}@", id_text(&rpc_id));
                withdrawn(self.close_where(|id, _| id.starts_with(&prefix)))
            }
            AcpEvent::SessionTitled { session, title } => {
                if id_within(&session) {
                    let mut state = self.state.lock().expect("not poisoned");
                    match title {
                        Some(title) => state.titles.put(session, title),
                        None => state.titles.pop(&session),
                    };
                }
                return Ok(true);
            }
            AcpEvent::ToolCallEnded {
                session,
                tool_call,
                ok,
            } => self
                .close_where(|_, route| {
                    route.session == session && route.tool_call.as_deref() == Some(&tool_call)
                })
                .into_iter()
                .map(|id| match ok {
                    true => BackendEvent::ResolvedElsewhere {
                        id,
                        rejected: false,
                    },
                    false => BackendEvent::Withdrawn { id },
                })
                .collect(),
            // Names no session; in the history it may end the turn of a
            // request without a tool call, answered then: not shown.
            AcpEvent::TurnEnded if replaying => {
                self.close_where(|_, route| route.tool_call.is_none());
                Vec::new()
            }
            AcpEvent::TurnEnded | AcpEvent::Other => return Ok(true),
            AcpEvent::AgentExited => withdrawn(self.close_where(|_, _| true)),
        };
        Ok(ended.into_iter().all(|event| sink.send(event).is_ok()))
    }

    /// Waits for the replayed history to be over, then lists what it left open.
    async fn settle(&self, sink: &EventSink) {
        // Connected (or the first event).
        self.activity.notified().await;
        let mut quiet = NO_HISTORY;
        while tokio::time::timeout(quiet, self.activity.notified())
            .await
            .is_ok()
        {
            quiet = SETTLE;
        }
        let mut refused = Vec::new();
        {
            let mut state = self.state.lock().expect("not poisoned");
            state.replaying = false;
            let mut pending = Vec::new();
            for (id, held) in std::mem::take(&mut state.held) {
                match held {
                    Held::Asked(prompt) => pending.push(prompt),
                    // Still open: asked before ask-lsp started, or live in
                    // its first second (not yet told from history). Declined
                    // as a live one is: if it was answered already, the
                    // server refuses the second answer.
                    Held::Refused { response, reason } => {
                        state.open.retain(|(open, _)| *open != id);
                        refused.push((response, reason));
                    }
                }
            }
            // Under the lock: before any later event about them.
            let _ = sink.send(BackendEvent::Snapshot(pending.into()));
        }
        for (response, reason) in refused {
            self.refuse(response, reason, true, sink).await;
        }
    }
}

/// What must be POSTed before the stream goes on.
enum Post {
    /// Refuse a request ask-lsp cannot show.
    Decline { response: Value, reason: String },
    /// Accept the link behind this prompt: its flow is over.
    Complete { id: String, rpc_id: Value },
}

fn withdrawn(ids: Vec<String>) -> Vec<BackendEvent> {
    ids.into_iter()
        .map(|id| BackendEvent::Withdrawn { id })
        .collect()
}

impl Follow for SandboxAgent {
    fn peer(&self) -> &Peer {
        &self.peer
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn subscribe(&self) -> reqwest::RequestBuilder {
        let mut request = self
            .authorized(self.http.get(&self.endpoint))
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(id) = &self.state.lock().expect("not poisoned").last_event_id {
            request = request.header("Last-Event-ID", id.as_str());
        }
        request
    }

    fn resync<'a>(&'a self, _sink: &'a EventSink) -> BoxFuture<'a, Result<(), BackendError>> {
        // The stream replays from Last-Event-ID: nothing to list; the first
        // connection starts the wait for the end of the history.
        if self.state.lock().expect("not poisoned").replaying {
            self.activity.notify_one();
        }
        Box::pin(async { Ok(()) })
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow> {
        Box::pin(async move {
            Flow::while_open(match self.handle(event, sink) {
                Ok(go_on) => go_on,
                Err(Post::Decline { response, reason }) => {
                    self.refuse(response, reason, false, sink).await
                }
                Err(Post::Complete { id, rpc_id }) => self.complete(id, rpc_id, sink).await,
            })
        })
    }
}

impl Backend for SandboxAgent {
    fn source(&self) -> Source {
        Source {
            kind: ServerKind::SandboxAgent,
            url: self.endpoint.clone(),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.respond(prompt, reply))
    }

    fn still_pending<'a>(&'a self, _prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        // ACP cannot be asked what the agent received.
        Box::pin(async { None })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let settling = self.clone();
            let settle_sink = sink.clone();
            futures_util::future::join(
                async move { settling.settle(&settle_sink).await },
                follow(self, sink),
            )
            .await;
        })
    }
}
