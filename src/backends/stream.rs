//! The one loop that follows a server's event stream: subscribe, resync,
//! read events with a stall watchdog, reconnect with backoff. Backends plug
//! in through [`Follow`].

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::http::Peer;
use super::{BackendError, BackendEvent, EventSink, Timing};
use crate::sse::{SseDecoder, SseEvent, SseItem};

/// A server whose event stream [`follow`] reads.
pub(super) trait Follow: Send + Sync + 'static {
    fn peer(&self) -> &Peer;
    fn timing(&self) -> &Timing;
    /// The request that opens the event stream.
    fn subscribe(&self) -> reqwest::RequestBuilder;
    /// Runs right after subscribing, before any event is read: lists what is
    /// pending, since the streams have no replay.
    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), String>>;
    /// Handles one event; false when the sink is closed.
    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, bool>;
}

enum End {
    /// The server closed the stream: reconnect at once.
    Closed,
    Failed(String),
    /// The server accepted the connection and did not answer the subscription.
    Unanswered(String),
    /// Nobody listens any more.
    SinkClosed,
}

/// Follows the server until the sink closes.
pub(super) async fn follow<F: Follow>(server: Arc<F>, sink: EventSink) {
    let timing = *server.timing();
    let mut backoff = timing.backoff_min;
    // A starting server can accept connections and not answer for a while;
    // a short bound on subscribing finds it as soon as it does, growing
    // while it keeps not answering so a slow remote server still gets in.
    let mut subscribe_bound = timing.request.min(Duration::from_secs(1));
    loop {
        match connect_once(&*server, &sink, subscribe_bound).await {
            (End::SinkClosed, _) => return,
            (End::Closed, _) => {
                tracing::info!(server = %server.peer().label, "event stream closed; reconnecting");
                backoff = timing.backoff_min;
            }
            (End::Failed(error), connected) => {
                if connected {
                    backoff = timing.backoff_min;
                }
                if sink.send(BackendEvent::Disconnected { error }).is_err() {
                    return;
                }
            }
            (End::Unanswered(error), _) => {
                subscribe_bound = (subscribe_bound * 2).min(timing.request);
                if sink.send(BackendEvent::Disconnected { error }).is_err() {
                    return;
                }
            }
        }
        if sink.is_closed() {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(timing.backoff_max);
    }
}

/// One connection; the flag says whether it got as far as the events.
async fn connect_once<F: Follow>(
    server: &F,
    sink: &EventSink,
    subscribe_bound: Duration,
) -> (End, bool) {
    let peer = server.peer();
    let response = match tokio::time::timeout(subscribe_bound, server.subscribe().send()).await {
        Err(_) => {
            return (
                End::Unanswered(format!(
                    "{}: no answer to the subscription within {subscribe_bound:?}",
                    peer.label
                )),
                false,
            );
        }
        Ok(Err(error)) => return (End::Failed(peer.unreachable(&error).to_string()), false),
        Ok(Ok(response)) => response,
    };
    let status = response.status().as_u16();
    let is_sse = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if status == 401 || status == 403 {
        let error = BackendError::Unauthorized {
            server: peer.label.clone(),
            advice: peer.auth_hint,
        };
        return (End::Failed(error.to_string()), false);
    }
    if status != 200 || !is_sse {
        return (
            End::Failed(format!(
                "{}: the event stream answered {status} without events: is this {}?",
                peer.label, peer.expected
            )),
            false,
        );
    }
    if sink.send(BackendEvent::Connected).is_err() {
        return (End::SinkClosed, false);
    }
    // Subscribed first, then listed: nothing falls in between.
    if let Err(error) = server.resync(sink).await {
        return (End::Failed(error), true);
    }
    let mut events = EventStream::new(response, server.timing().stall);
    loop {
        let batch = match events.next().await {
            Ok(Some(batch)) => batch,
            Ok(None) => return (End::Closed, true),
            Err(error) => return (End::Failed(format!("{}: {error}", peer.label)), true),
        };
        for event in batch {
            if !server.event(event, sink).await {
                return (End::SinkClosed, true);
            }
        }
    }
}

/// An SSE response read in batches of whole events, with a stall watchdog:
/// no bytes (not even a heartbeat) for `stall` ends it.
struct EventStream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: SseDecoder,
    stall: Duration,
    /// One deadline for the whole stream, re-armed only when it fires: the
    /// common path (a chunk arrives) does no timer work.
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    last_bytes: Instant,
}

impl EventStream {
    fn new(response: reqwest::Response, stall: Duration) -> Self {
        EventStream {
            body: Box::pin(response.bytes_stream()),
            decoder: SseDecoder::default(),
            stall,
            deadline: Box::pin(tokio::time::sleep(stall)),
            last_bytes: Instant::now(),
        }
    }

    /// The events in the next chunk received: `Ok(None)` when the server
    /// closed the stream, `Err` when it failed or went silent too long.
    async fn next(&mut self) -> Result<Option<Vec<SseEvent>>, String> {
        let chunk = loop {
            tokio::select! {
                biased;
                chunk = self.body.next() => break chunk,
                () = &mut self.deadline => {
                    let silent_until = self.last_bytes + self.stall;
                    if Instant::now() >= silent_until {
                        return Err(format!("no event or heartbeat for {:?}", self.stall));
                    }
                    self.deadline.as_mut().reset(silent_until);
                }
            }
        };
        let chunk = match chunk {
            None => return Ok(None),
            Some(Err(error)) => return Err(super::http::cause(&error)),
            Some(Ok(chunk)) => chunk,
        };
        self.last_bytes = Instant::now();
        let mut items = Vec::new();
        self.decoder.feed(&chunk, &mut items);
        Ok(Some(
            items
                .into_iter()
                .filter_map(|item| match item {
                    SseItem::Event(event) => Some(event),
                    SseItem::Oversized => {
                        tracing::warn!(
                            "skipped an event over the {} MiB bound",
                            crate::sse::MAX_EVENT_BYTES >> 20
                        );
                        None
                    }
                })
                .collect(),
        ))
    }
}
