//! Shows pending questions in the client, one request at a time, oldest
//! first: as `askQuestions/ask` when the client opted in, else as
//! `window/showMessageRequest`, one question after another.
//!
//! Both surfaces' turn-taking (one request at a time, rotation, pop-up
//! bursts) is in this one task.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tower::Service;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{self, Id, Request};
use tower_lsp_server::ls_types::notification::Cancel;
use tower_lsp_server::ls_types::request::{Request as _, ShowMessageRequest};
use tower_lsp_server::ls_types::{CancelParams, MessageType, NumberOrString};

use super::drafts::{Decision, Drafts};
use super::queue::Queue;
use super::transport::Backlog;
use super::{ext, from_proto, plain, to_proto};
use crate::broker::{BrokerError, BrokerHandle, Human, Pending, Reason, Update, Updates};
use crate::present::{backend_error, sentences, who};
use crate::prompt::Kind;
use crate::prompt::draft::{Piece, Progress};
use crate::settings::Surface;

pub(crate) enum Input {
    /// The client answered (or failed) the request with this id.
    Response {
        id: i64,
        result: Result<Value, jsonrpc::Error>,
    },
    /// The broker finished a decision taken on a shown request.
    Decided {
        key: String,
        result: Result<(), BrokerError>,
    },
    /// `askLsp.show`: present this request (or the oldest) again.
    Show(Option<String>),
    Surface(Surface),
    /// The pop-up window has passed: sum up what was held back.
    FlushPopUps,
    /// The plain prompt shown as request `id` may have waited too long.
    Unanswered {
        id: i64,
    },
}

/// How long a plain `showMessageRequest` may stay unanswered before the next
/// prompt takes its turn (it goes behind the others, still pending). Some
/// clients queue these requests, or let a person leave one open for ever;
/// one must not hide every later prompt.
const ROTATE_AFTER: Duration = Duration::from_secs(120);

/// Pop-ups a client gets at most per [`POP_UP_WINDOW`]; the rest go to its
/// log and are summed up in one pop-up when the window ends, so a burst
/// (hundreds of prompts withdrawn or refused at once) is not hundreds of
/// pop-ups.
const POP_UP_BURST: usize = 3;
const POP_UP_WINDOW: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Default)]
struct PopUps {
    window_start: Option<tokio::time::Instant>,
    shown: usize,
    held_back: usize,
}

struct Shown {
    key: String,
    id: i64,
    /// For `showMessageRequest`: which question is on screen.
    question: usize,
    /// The client has answered; no cancel needed any more.
    answered: bool,
    /// Shown as `askQuestions/ask` (else `showMessageRequest`).
    extension: bool,
}

/// Which prompt kinds besides questions an extension client shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kinds {
    pub permission: bool,
    pub form: bool,
    /// Questions whose answer is a secret, typed masked (`"secret"`).
    pub secret: bool,
}

pub(crate) struct Presenter {
    client: Client,
    /// Each message to the client waits here while the client is behind
    /// (`transport/backlog.rs`); updates meanwhile coalesce in the broker.
    backlog: Arc<Backlog>,
    broker: BrokerHandle,
    drafts: Drafts,
    inputs: mpsc::UnboundedSender<Input>,
    surface: Surface,
    extension: bool,
    kinds: Kinds,
    queue: Queue,
    shown: Option<Shown>,
    rotate_after: Duration,
    /// Several servers: plain prompts say which one asks.
    several_servers: bool,
    pop_ups: PopUps,
}

impl Presenter {
    // Each is one thing the presenter is handed once, by `initialized`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: Client,
        backlog: Arc<Backlog>,
        broker: BrokerHandle,
        drafts: Drafts,
        inputs: mpsc::UnboundedSender<Input>,
        surface: Surface,
        extension: bool,
        kinds: Kinds,
    ) -> Self {
        Presenter {
            client,
            backlog,
            broker,
            drafts,
            inputs,
            surface,
            extension,
            kinds,
            queue: Queue::default(),
            shown: None,
            rotate_after: crate::app::environment()
                .rotate_after
                .unwrap_or(ROTATE_AFTER),
            several_servers: false,
            pop_ups: PopUps::default(),
        }
    }

    pub async fn run(mut self, mut updates: Updates, mut inputs: mpsc::UnboundedReceiver<Input>) {
        loop {
            tokio::select! {
                update = updates.recv() => match update {
                    Some(update) => self.update(update).await,
                    None => return,
                },
                Some(input) = inputs.recv() => self.input(input).await,
            }
        }
    }

    /// The surface in force: `auto` and an `extension` the client did not opt
    /// into both mean `showMessageRequest`.
    fn effective_surface(&self) -> Surface {
        match self.surface {
            Surface::Auto | Surface::Extension if self.extension => Surface::Extension,
            Surface::Auto | Surface::Extension => Surface::MessageRequest,
            other => other,
        }
    }

    async fn update(&mut self, update: Update) {
        match update {
            Update::Added(pending) => {
                self.queue.push(pending);
                self.present_next().await;
            }
            Update::Resolved(resolution) => {
                self.drafts.resolved(&resolution.key);
                self.queue.remove(&resolution.key);
                let title = who::title(&resolution.title);
                if let Some(shown) = self.shown.take_if(|s| s.key == resolution.key)
                    && !shown.answered
                {
                    self.backlog.reserve().await;
                    self.client
                        .send_notification::<Cancel>(CancelParams {
                            id: NumberOrString::Number(shown.id as i32),
                        })
                        .await;
                }
                if self.extension {
                    self.backlog.reserve().await;
                    self.client
                        .send_notification::<ext::Resolved>(to_proto::resolved_params(
                            &resolution,
                            &title,
                        ))
                        .await;
                }
                let said = || sentences::resolution(&title, resolution.reason, &resolution.why);
                if !self.extension && !resolution.reason.here() {
                    self.pop_up(MessageType::INFO, said()).await;
                }
                if matches!(resolution.reason, Reason::Policy | Reason::Timeout) {
                    self.backlog.reserve().await;
                    self.client
                        .log_message(MessageType::INFO, format!("ask-lsp: {}", said()))
                        .await;
                }
                self.present_next().await;
            }
            Update::Status(status) => {
                self.several_servers = status.servers.len() > 1;
                if self.extension {
                    self.backlog.reserve().await;
                    self.client
                        .send_notification::<ext::Status>(to_proto::status_params(&status))
                        .await;
                }
            }
            Update::Connection { server, error } => match error {
                // No Codex daemon running is how things are, not a fault:
                // the status says it, a log line records it.
                Some(error) if error.is_normal_state() => {
                    let error = backend_error::backend_error(&error);
                    self.backlog.reserve().await;
                    self.client
                        .log_message(MessageType::INFO, format!("ask-lsp: {error}"))
                        .await
                }
                Some(error) => {
                    let error = backend_error::backend_error(&error);
                    self.pop_up(MessageType::WARNING, format!("ask-lsp: {error}"))
                        .await
                }
                None => {
                    self.backlog.reserve().await;
                    self.client
                        .log_message(
                            MessageType::INFO,
                            format!("ask-lsp: {}", sentences::connected_again(&server)),
                        )
                        .await
                }
            },
            Update::Notice(notice) => {
                let message = format!("ask-lsp: {}", sentences::notice(&notice));
                self.pop_up(MessageType::ERROR, message).await;
            }
        }
    }

    /// A `window/showMessage`, within the burst allowed per window; past it,
    /// a log line now and one summary when the window ends.
    async fn pop_up(&mut self, level: MessageType, message: String) {
        let now = tokio::time::Instant::now();
        let window_start = *self.pop_ups.window_start.get_or_insert(now);
        if now >= window_start + POP_UP_WINDOW {
            self.pop_ups.window_start = Some(now);
            self.pop_ups.shown = 0;
        }
        if self.pop_ups.shown < POP_UP_BURST {
            self.pop_ups.shown += 1;
            self.backlog.reserve().await;
            self.client.show_message(level, message).await;
            return;
        }
        self.backlog.reserve().await;
        self.client.log_message(level, message).await;
        self.pop_ups.held_back += 1;
        if self.pop_ups.held_back == 1 {
            let inputs = self.inputs.clone();
            let at = self.pop_ups.window_start.unwrap_or(now) + POP_UP_WINDOW;
            tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                let _ = inputs.send(Input::FlushPopUps);
            });
        }
    }

    async fn flush_pop_ups(&mut self) {
        let held_back = std::mem::take(&mut self.pop_ups.held_back);
        if held_back > 0 {
            self.pop_ups.window_start = Some(tokio::time::Instant::now());
            self.pop_ups.shown = 1;
            self.backlog.reserve().await;
            self.client
                .show_message(
                    MessageType::WARNING,
                    format!("ask-lsp: {}", sentences::held_back(held_back)),
                )
                .await;
        }
    }

    async fn input(&mut self, input: Input) {
        match input {
            Input::Response { id, result } => self.response(id, result).await,
            Input::Decided { key, result } => self.decided(key, result).await,
            Input::Show(key) => {
                match key {
                    Some(key) => self.queue.move_front(&key),
                    None => self.queue.undefer_all(),
                }
                self.present_next().await;
            }
            Input::Surface(surface) => {
                self.surface = surface;
                self.present_next().await;
            }
            Input::FlushPopUps => self.flush_pop_ups().await,
            Input::Unanswered { id } => self.unanswered(id).await,
        }
    }

    async fn present_next(&mut self) {
        if self.shown.is_some() {
            return;
        }
        let surface = self.effective_surface();
        if surface == Surface::None {
            return;
        }
        let Some(pending) = self.queue.next().cloned() else {
            return;
        };
        // A kind the client's extension does not show goes as plain prompts.
        let surface = match (&pending.prompt.kind, surface) {
            (Kind::Permission(_), Surface::Extension) if !self.kinds.permission => {
                Surface::MessageRequest
            }
            (Kind::Form(_), Surface::Extension) if !self.kinds.form => Surface::MessageRequest,
            (_, surface) => surface,
        };
        // A secret is never typed where it shows: the prompt stays with the
        // agent's own terminal, and the person is told so once.
        if pending.prompt.asks_secret() && !(surface == Surface::Extension && self.kinds.secret) {
            let message = format!(
                "ask-lsp: {}",
                sentences::secret_elsewhere(&who::title(&pending.title))
            );
            self.pop_up(MessageType::INFO, message).await;
            // Put off, as `askLsp.show` can bring it back; the next is shown.
            return Box::pin(self.defer(pending.key.clone())).await;
        }
        let id = match surface {
            Surface::Extension => {
                self.send_request(
                    <ext::Ask as tower_lsp_server::ls_types::request::Request>::METHOD,
                    to_proto::ask_params(&pending, self.queue.len()),
                )
                .await
            }
            _ => self.send_message_request(&pending, 0).await,
        };
        if surface != Surface::Extension {
            self.rotate_later(id);
        }
        self.shown = Some(Shown {
            key: pending.key.clone(),
            id,
            question: 0,
            answered: false,
            extension: surface == Surface::Extension,
        });
    }

    async fn send_message_request(&self, pending: &Pending, question: usize) -> i64 {
        // A local requester is always said: a process, not a server.
        let server = (self.several_servers || pending.prompt.origin.requester.is_some())
            .then(|| who::server_and_project(&pending.server, &pending.prompt));
        // A session is named where the server titles it (an id alone is noise).
        let session = (pending.prompt.origin.session_title.as_ref())
            .map(|title| who::session(&pending.prompt.session, Some(title)));
        let context = match (server, session) {
            (Some(server), Some(session)) => Some(format!("{server} · {session}")),
            (server, session) => server.or(session),
        };
        self.send_request(
            ShowMessageRequest::METHOD,
            plain::message_request(pending, question, context.as_deref()),
        )
        .await
    }

    /// Sends a request with an id we know, so it can be cancelled later.
    async fn send_request(&self, method: &'static str, params: impl serde::Serialize) -> i64 {
        let params = serde_json::to_value(params).expect("wire types serialize");
        self.backlog.reserve().await;
        let Id::Number(id) = self.client.next_request_id() else {
            unreachable!("tower-lsp-server numbers its requests")
        };
        let request = Request::build(method).id(id).params(params).finish();
        let mut client = self.client.clone();
        let inputs = self.inputs.clone();
        let mut call = Box::pin(async move { client.call(request).await });
        // Polled once here, so the request is queued before anything sent
        // after it: otherwise a `$/cancelRequest` and `resolved` for a prompt
        // withdrawn at once could reach the editor before the prompt itself.
        let first = futures_util::poll!(&mut call);
        tokio::spawn(async move {
            let response = match first {
                Poll::Ready(response) => response,
                Poll::Pending => call.await,
            };
            let result = match response {
                Ok(Some(response)) => response.into_parts().1,
                _ => Err(jsonrpc::Error::internal_error()),
            };
            let _ = inputs.send(Input::Response { id, result });
        });
        id
    }

    fn decide(&self, key: String, human: Human) {
        let broker = self.broker.clone();
        let inputs = self.inputs.clone();
        tokio::spawn(async move {
            let result = broker.decide(&key, human).await;
            let _ = inputs.send(Input::Decided { key, result });
        });
    }

    async fn response(&mut self, id: i64, result: Result<Value, jsonrpc::Error>) {
        let Some(shown) = self.shown.as_mut().filter(|s| s.id == id) else {
            return; // the answer to a request we already cancelled
        };
        shown.answered = true;
        let key = shown.key.clone();
        let question = shown.question;
        let via_extension = shown.extension;
        let value = match result {
            Ok(value) => value,
            Err(error) => {
                tracing::info!(%key, "client answered with an error ({}); deferring", error.message);
                return self.defer(key).await;
            }
        };
        if via_extension {
            let decision = serde_json::from_value::<ext::AskResult>(value)
                .map_err(|e| e.to_string())
                .and_then(from_proto::decision);
            match decision {
                Ok(Some(human)) => self.decide(key, human),
                Ok(None) => self.defer(key).await,
                Err(e) => {
                    self.backlog.reserve().await;
                    self.client
                        .show_message(
                            MessageType::ERROR,
                            format!("ask-lsp: {}", sentences::invalid_answer(&key, &e)),
                        )
                        .await;
                    self.defer(key).await;
                }
            }
            return;
        }
        let pending = self.queue.get(&key).cloned();
        match (value.get("title").and_then(Value::as_str), pending) {
            (Some(title), Some(pending)) => {
                match plain::message_choice(&pending, question, title) {
                    Decision::Whole(human) => self.decide(key, human),
                    Decision::Piece(piece) => self.add_piece(&pending, piece).await,
                }
            }
            _ => self.defer(key).await,
        }
    }

    /// A button of a plain message that answers one question or field:
    /// the next one is shown, or the whole answer sent.
    async fn add_piece(&mut self, pending: &Pending, piece: Piece) {
        let key = pending.key.clone();
        match self.drafts.add(pending, piece) {
            Ok(Progress::Whole(answer)) => self.decide(key, Human::Answer(answer)),
            Ok(Progress::Remaining(remaining)) => {
                let Some(&question) = remaining.first() else {
                    return;
                };
                let id = self.send_message_request(pending, question).await;
                self.rotate_later(id);
                self.shown = Some(Shown {
                    key,
                    id,
                    question,
                    answered: false,
                    extension: false,
                });
            }
            Err(error) => {
                self.not_sent(
                    &key,
                    crate::present::sentences::draft_error(&error, &key),
                    false,
                )
                .await
            }
        }
    }

    async fn decided(&mut self, key: String, result: Result<(), BrokerError>) {
        match result {
            // The broker's `Resolved` update moves on.
            Ok(()) => {}
            // Another decision (a policy timeout) got there first; its
            // `Resolved` update explains what happened.
            Err(BrokerError::Busy(_)) => {}
            Err(error) => {
                let gone = error.prompt_gone();
                self.not_sent(&key, crate::present::sentences::broker_error(&error), gone)
                    .await
            }
        }
    }

    /// A decision on a prompt was refused or could not be sent.
    async fn not_sent(&mut self, key: &str, error: String, gone: bool) {
        self.backlog.reserve().await;
        self.client
            .show_message(MessageType::ERROR, format!("ask-lsp: {error}"))
            .await;
        // Not sent: show it again so the answer is not lost.
        if self.shown.as_ref().is_some_and(|s| s.key == key) && !gone {
            self.shown = None;
            self.present_next().await;
        }
    }

    fn rotate_later(&self, id: i64) {
        let inputs = self.inputs.clone();
        let after = self.rotate_after;
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let _ = inputs.send(Input::Unanswered { id });
        });
    }

    /// A plain prompt left unanswered goes behind the others, if any wait;
    /// else it stays and is looked at again later.
    async fn unanswered(&mut self, id: i64) {
        let Some(shown) = self.shown.as_ref().filter(|s| s.id == id && !s.answered) else {
            return;
        };
        if !self.queue.others_ready(&shown.key) {
            return self.rotate_later(id);
        }
        let key = shown.key.clone();
        self.shown = None;
        self.backlog.reserve().await;
        self.client
            .send_notification::<Cancel>(CancelParams {
                id: NumberOrString::Number(id as i32),
            })
            .await;
        self.queue.move_back(&key);
        self.backlog.reserve().await;
        self.client
            .log_message(
                MessageType::INFO,
                format!(
                    "ask-lsp: {}",
                    sentences::rotated(
                        &crate::present::cut::for_display(&key, crate::text::DISPLAY_ID_CHARS),
                        self.rotate_after,
                        ext::CMD_LIST
                    )
                ),
            )
            .await;
        self.present_next().await;
    }

    async fn defer(&mut self, key: String) {
        self.queue.defer(&key);
        self.shown = None;
        self.present_next().await;
    }
}
