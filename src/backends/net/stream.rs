//! The one loop that follows a server's event stream: subscribe, resync,
//! read events with a stall watchdog, reconnect with backoff. Backends plug
//! in through [`Follow`].

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;

use super::h1::{self, OpenError};
use super::http::Peer;
use crate::backends::cause::Cause;
use crate::backends::net::sse::{SseDecoder, SseEvent, SseItem};
use crate::backends::{BackendError, BackendEvent, EventSink, Timing};

/// A server whose event stream [`follow`] reads.
pub(in crate::backends) trait Follow: Send + Sync + 'static {
    fn peer(&self) -> &Peer;
    fn timing(&self) -> &Timing;
    /// Which events (by their raw `data`) can matter; the rest are dropped
    /// by the decoder before anything is copied.
    fn relevant(&self) -> fn(&[u8]) -> bool {
        |_| true
    }
    /// Runs before each subscription (finding which server answers there).
    fn prepare(&self) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async { Ok(()) })
    }
    /// The request that opens the event stream.
    fn subscribe(&self) -> reqwest::RequestBuilder;
    /// Runs right after subscribing, before any event is read: lists what is
    /// pending, since the streams have no replay.
    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), BackendError>>;
    /// Handles one event.
    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow>;
}

/// What follows an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::backends) enum Flow {
    Continue,
    /// The server dropped what it had pending (OpenCode's dispose events):
    /// reconnect (after the shortest backoff), which resyncs.
    Reconnect,
    /// Nobody listens any more.
    Stop,
}

impl Flow {
    /// `Continue` while the sink is open.
    pub fn while_open(open: bool) -> Flow {
        if open { Flow::Continue } else { Flow::Stop }
    }
}

enum End {
    /// The server closed the stream: reconnect after the shortest backoff
    /// (a server that closes every stream at once is not hammered).
    Closed,
    Failed(BackendError),
    /// The server accepted the connection and did not answer the subscription.
    Unanswered(BackendError),
    /// Nobody listens any more.
    SinkClosed,
}

/// Why an event stream broke off.
#[derive(Debug, PartialEq, Eq)]
enum Broke {
    /// Reading failed.
    Read(Cause),
    /// Nothing came for this long, not even a heartbeat.
    Stalled(Duration),
}

/// Follows the server until the sink closes.
pub(in crate::backends) async fn follow<F: Follow>(server: Arc<F>, sink: EventSink) {
    let timing = *server.timing();
    let mut backoff = timing.backoff_min;
    // A starting server can accept connections and not answer for a while;
    // a short bound on subscribing finds it as soon as it does, growing
    // while it keeps not answering so a slow remote server still gets in.
    let mut subscribe_bound = timing.request.min(Duration::from_secs(1));
    let mut unanswered = 0;
    loop {
        let outcome = connect_once(&*server, &sink, subscribe_bound).await;
        if !matches!(outcome.0, End::Unanswered(_)) {
            unanswered = 0;
        }
        match outcome {
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
                // The bound was waited out already: try again at once. It
                // grows only for a server that keeps not answering, so one
                // in its start-up window is found as soon as it answers.
                backoff = timing.backoff_min;
                unanswered += 1;
                if unanswered >= 3 {
                    subscribe_bound = (subscribe_bound * 2).min(timing.request);
                }
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
    // Bounded like the subscription: a server in its start-up window accepts
    // connections and answers none for a while.
    match tokio::time::timeout(subscribe_bound, server.prepare()).await {
        Err(_) => {
            return (
                End::Unanswered(BackendError::Unanswered {
                    server: server.peer().label.clone(),
                }),
                false,
            );
        }
        Ok(Err(error)) => return (End::Failed(error), false),
        Ok(Ok(())) => {}
    }
    let peer = server.peer();
    let opened = tokio::time::timeout(
        subscribe_bound,
        subscribe(server.subscribe(), server.timing().request),
    );
    let (status, content_type, source) = match opened.await {
        Err(_) => {
            return (
                // Without the bound, which grows: the same reason, not said again.
                End::Unanswered(BackendError::SubscriptionUnanswered {
                    server: peer.label.clone(),
                }),
                false,
            );
        }
        Ok(Err(OpenError::Connect(cause))) => {
            return (End::Failed(peer.not_connected(cause, false)), false);
        }
        Ok(Err(OpenError::Unreachable(error))) => {
            return (End::Failed(peer.unreachable(&error)), false);
        }
        Ok(Err(OpenError::Malformed(cause))) => {
            return (
                End::Failed(BackendError::Malformed {
                    server: peer.label.clone(),
                    cause,
                    expected: peer.expected,
                }),
                false,
            );
        }
        Ok(Ok(opened)) => opened,
    };
    let is_sse = content_type.starts_with("text/event-stream");
    if status == 401 || status == 403 {
        let error = BackendError::Unauthorized {
            server: peer.label.clone(),
            advice: peer.expected.auth_advice(),
        };
        return (End::Failed(error), false);
    }
    if status != 200 || !is_sse {
        return (
            End::Failed(BackendError::NoEvents {
                server: peer.label.clone(),
                status,
                expected: peer.expected,
            }),
            false,
        );
    }
    // Subscribed first, then listed: nothing falls in between. Connected
    // only once listed: a listing that keeps failing is a connection that
    // keeps failing, backed off as such.
    if let Err(error) = server.resync(sink).await {
        return (End::Failed(error), false);
    }
    if sink.send(BackendEvent::Connected).is_err() {
        return (End::SinkClosed, false);
    }
    let mut events = EventStream::new(source, server.timing().stall, server.relevant());
    loop {
        let batch = match events.next().await {
            Ok(Some(batch)) => batch,
            Ok(None) => return (End::Closed, true),
            Err(broke) => {
                let server = peer.label.clone();
                let error = match broke {
                    Broke::Read(cause) => BackendError::Stream { server, cause },
                    Broke::Stalled(after) => BackendError::Stalled { server, after },
                };
                return (End::Failed(error), true);
            }
        };
        for event in batch {
            events.room(sink).await;
            match server.event(event, sink).await {
                Flow::Continue => {}
                Flow::Reconnect => return (End::Closed, true),
                Flow::Stop => return (End::SinkClosed, true),
            }
        }
    }
}

/// Sends the subscription: status, content type and the body to read. A
/// plain `http://` stream is read off its own socket (src/backends/net/h1.rs);
/// over `https://` reqwest does the TLS.
async fn subscribe(
    request: reqwest::RequestBuilder,
    connect_bound: Duration,
) -> Result<(u16, String, Source), OpenError> {
    let (client, request) = request.build_split();
    let request = request.map_err(|error| OpenError::Malformed(super::http::cause(&error)))?;
    if request.url().scheme() == "http" {
        let (head, body) = h1::open(&request, connect_bound).await?;
        return Ok((head.status, head.content_type, Source::Socket(body)));
    }
    let response = client
        .execute(request)
        .await
        .map_err(OpenError::Unreachable)?;
    Ok((
        response.status().as_u16(),
        super::http::content_type(&response),
        Source::Reqwest(Box::pin(response.bytes_stream())),
    ))
}

/// Where an event stream's bytes come from.
enum Source {
    Socket(h1::Body),
    Reqwest(futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>),
}

impl Source {
    /// Reads what arrives next into `decoder`: `Ok(false)` once the body ended.
    async fn read(
        &mut self,
        decoder: &mut SseDecoder,
        relevant: fn(&[u8]) -> bool,
        items: &mut Vec<SseItem>,
    ) -> Result<bool, Cause> {
        match self {
            Source::Socket(body) => {
                body.read(|data| decoder.feed_filtered(data, relevant, items))
                    .await
            }
            Source::Reqwest(body) => match body.next().await {
                None => Ok(false),
                Some(Err(error)) => Err(super::http::cause(&error)),
                Some(Ok(chunk)) => {
                    decoder.feed_filtered(&chunk, relevant, items);
                    Ok(true)
                }
            },
        }
    }
}

/// An SSE response read in batches of whole events, with a stall watchdog:
/// no bytes (not even a heartbeat) for `stall` ends it.
struct EventStream {
    source: Source,
    decoder: SseDecoder,
    /// Events it rejects (on their raw bytes) are dropped undecoded.
    relevant: fn(&[u8]) -> bool,
    stall: Duration,
    /// This stream's place in the shared watchdog: the common path (bytes
    /// arrive) only sets a flag, with no timer work and no clock read.
    watch: Arc<watchdog::Watch>,
    /// The body ended with the last batch.
    ended: bool,
}

impl EventStream {
    fn new(source: Source, stall: Duration, relevant: fn(&[u8]) -> bool) -> Self {
        EventStream {
            source,
            decoder: SseDecoder::default(),
            relevant,
            stall,
            watch: watchdog::watch(stall),
            ended: false,
        }
    }

    /// Waits until the broker has room for another event from this server
    /// (`backends/sink.rs`). Nothing is read meanwhile, so the server is
    /// held up at its socket; the stall watchdog is told this silence is
    /// ours, not the server's.
    async fn room(&mut self, sink: &EventSink) {
        let room = sink.room();
        tokio::pin!(room);
        loop {
            tokio::select! {
                biased;
                () = &mut room => return,
                () = tokio::time::sleep(self.stall / 8) => self.watch.got_bytes(),
            }
        }
    }

    /// The relevant events in what is received next, at least one:
    /// `Ok(None)` when the server closed the stream, `Err` when it failed or
    /// went silent too long.
    async fn next(&mut self) -> Result<Option<Vec<SseEvent>>, Broke> {
        let mut items = Vec::new();
        while !self.ended {
            let more = tokio::select! {
                biased;
                more = self.source.read(&mut self.decoder, self.relevant, &mut items) => {
                    more.map_err(Broke::Read)?
                }
                () = self.watch.stalled() => return Err(Broke::Stalled(self.stall)),
            };
            self.ended = !more;
            self.watch.got_bytes();
            let events: Vec<SseEvent> = items
                .drain(..)
                .filter_map(|item| match item {
                    SseItem::Event(event) => Some(event),
                    SseItem::Oversized => {
                        tracing::warn!(
                            "skipped an event over the {} MiB bound",
                            crate::backends::net::sse::MAX_EVENT_BYTES >> 20
                        );
                        None
                    }
                })
                .collect();
            if !events.is_empty() {
                return Ok(Some(events));
            }
        }
        Ok(None)
    }
}

/// One stall watchdog for every stream of the process: a thread that looks
/// at each stream once a tick and sleeps in between, so idle streams cost
/// one wake-up per tick together (a timer per stream woke the process for
/// each of them; docs/performance.md). A tick is a quarter of the shortest
/// stall bound (7.5 s by default): silence is noticed within one bound and
/// one tick (1 to 1.25 bounds). The thread runs while streams are watched.
mod watchdog {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
    use std::task::Poll;
    use std::time::{Duration, Instant};

    use futures_util::task::AtomicWaker;

    const QUARTERS: u32 = 4;

    /// A stream's side of the watchdog.
    pub(super) struct Watch {
        stall: Duration,
        /// Set on every read with bytes, taken by the watchdog each tick.
        got_bytes: AtomicBool,
        stalled: AtomicBool,
        waker: AtomicWaker,
    }

    impl Watch {
        pub(super) fn got_bytes(&self) {
            self.got_bytes.store(true, Ordering::Relaxed);
        }

        /// Ready once the stream has been silent for its bound.
        pub(super) async fn stalled(&self) {
            std::future::poll_fn(|cx| {
                if !self.stalled.load(Ordering::Acquire) {
                    self.waker.register(cx.waker());
                    if !self.stalled.load(Ordering::Acquire) {
                        return Poll::Pending;
                    }
                }
                Poll::Ready(())
            })
            .await;
        }
    }

    struct Watched {
        /// Dropped with its stream, which then leaves at the next tick.
        watch: Weak<Watch>,
        /// Silence seen so far, counted in ticks from the first one that
        /// found no bytes.
        quiet: Duration,
    }

    struct Registry {
        watched: Vec<Watched>,
        /// The current tick, while the thread runs.
        tick: Option<Duration>,
    }

    static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
        watched: Vec::new(),
        tick: None,
    });
    /// Wakes the thread early when a stream with a shorter bound arrives.
    static SHORTER: Condvar = Condvar::new();

    fn registry() -> MutexGuard<'static, Registry> {
        REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tick_for(stall: Duration) -> Duration {
        (stall / QUARTERS).max(Duration::from_millis(1))
    }

    /// Watches a new stream: silent for `stall` from now on, it is stalled.
    pub(super) fn watch(stall: Duration) -> Arc<Watch> {
        let watch = Arc::new(Watch {
            stall,
            // Counted from now, as if bytes had just arrived.
            got_bytes: AtomicBool::new(true),
            stalled: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        let mut registry = registry();
        registry.watched.push(Watched {
            watch: Arc::downgrade(&watch),
            quiet: Duration::ZERO,
        });
        let tick = tick_for(stall);
        match registry.tick {
            Some(current) if current <= tick => {}
            Some(_) => {
                registry.tick = Some(tick);
                SHORTER.notify_one();
            }
            None => match std::thread::Builder::new()
                .name("ask-lsp-watchdog".to_owned())
                .spawn(run)
            {
                Ok(_) => registry.tick = Some(tick),
                // Without the thread nothing is declared stalled; the next
                // stream tries again.
                Err(error) => tracing::error!("no stall watchdog: {error}"),
            },
        }
        watch
    }

    fn run() {
        let mut registry = registry();
        let mut last = Instant::now();
        while let Some(tick) = registry.tick {
            registry = SHORTER
                .wait_timeout(registry, tick)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            let now = Instant::now();
            let elapsed = now - last;
            last = now;
            let mut shortest = None::<Duration>;
            registry.watched.retain_mut(|watched| {
                let Some(watch) = watched.watch.upgrade() else {
                    return false;
                };
                if watch.got_bytes.swap(false, Ordering::Relaxed) {
                    watched.quiet = Duration::ZERO;
                } else {
                    watched.quiet += elapsed;
                    if watched.quiet >= watch.stall {
                        watch.stalled.store(true, Ordering::Release);
                        watch.waker.wake();
                        return false;
                    }
                }
                let tick = tick_for(watch.stall);
                shortest = Some(shortest.map_or(tick, |s| s.min(tick)));
                true
            });
            registry.tick = shortest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body that yields `chunks`, each after its delay.
    fn source(chunks: Vec<(u64, &'static str)>) -> Source {
        let body = futures_util::stream::iter(chunks).then(|(ms, text)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, std::io::Error>(bytes::Bytes::from_static(text.as_bytes()))
        });
        let response: reqwest::Response =
            http::Response::new(reqwest::Body::wrap_stream(body)).into();
        Source::Reqwest(Box::pin(response.bytes_stream()))
    }

    async fn data(events: &mut EventStream) -> Result<Option<Vec<String>>, Broke> {
        let batch = events.next().await?;
        Ok(batch.map(|b| b.into_iter().map(|e| e.data).collect()))
    }

    #[tokio::test]
    async fn a_stream_never_silent_for_the_bound_is_not_a_stall_however_long_it_runs() {
        // Longer in total than the stall bound, never silent for that long:
        // the one deadline must be moved on, not fire at its first time.
        let chunks = (0..6).map(|_| (120, "data: x\n\n")).collect();
        let mut events = EventStream::new(source(chunks), Duration::from_millis(250), |_| true);
        for _ in 0..6 {
            assert_eq!(data(&mut events).await, Ok(Some(vec!["x".to_owned()])));
        }
        assert_eq!(data(&mut events).await, Ok(None));
    }

    #[tokio::test]
    async fn silence_longer_than_the_bound_is_a_stall() {
        let chunks = vec![
            (0, "data: a\n\n"),
            (200, ": ping\n\n"),
            (5_000, "data: late\n\n"),
        ];
        let mut events = EventStream::new(source(chunks), Duration::from_millis(300), |_| true);
        assert_eq!(data(&mut events).await, Ok(Some(vec!["a".to_owned()])));
        let started = std::time::Instant::now();
        assert_eq!(
            data(&mut events).await,
            Err(Broke::Stalled(Duration::from_millis(300)))
        );
        // Counted from the comment's bytes (at ~200 ms), not from the call:
        // noticed 1 to 1.25 bounds after them.
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(450), "{waited:?}");
        assert!(waited < Duration::from_millis(2_000), "{waited:?}");
    }

    #[tokio::test]
    async fn the_shared_watchdog_tells_each_stream_by_its_own_silence() {
        // Many streams on the one watchdog at once: each silent one is
        // noticed after its own bound, one that keeps talking never.
        let bound = Duration::from_millis(300);
        let started = std::time::Instant::now();
        let silent = (0..20).map(|_| {
            let chunks = vec![(0, "data: a\n\n"), (60_000, "data: late\n\n")];
            let mut events = EventStream::new(source(chunks), bound, |_| true);
            tokio::spawn(async move {
                assert_eq!(data(&mut events).await, Ok(Some(vec!["a".to_owned()])));
                (data(&mut events).await, started.elapsed())
            })
        });
        let silent: Vec<_> = silent.collect();
        let talking = (0..10)
            .map(|_| (100, ": ping\n\n"))
            .chain([(0, "data: b\n\n")]);
        let mut talking = EventStream::new(source(talking.collect()), bound, |_| true);
        assert_eq!(data(&mut talking).await, Ok(Some(vec!["b".to_owned()])));
        for stream in silent {
            let (result, waited) = stream.await.unwrap();
            assert_eq!(result, Err(Broke::Stalled(bound)));
            assert!(waited >= bound, "{waited:?}");
            assert!(waited < Duration::from_millis(3_000), "{waited:?}");
        }
    }

    #[tokio::test]
    async fn the_filter_drops_events_before_they_are_batched() {
        let chunks = vec![(0, "data: skip\n\n"), (0, "data: keep\n\ndata: skip\n\n")];
        let mut events = EventStream::new(source(chunks), Duration::from_secs(5), |data| {
            data == b"keep"
        });
        assert_eq!(data(&mut events).await, Ok(Some(vec!["keep".to_owned()])));
        assert_eq!(data(&mut events).await, Ok(None));
    }

    /// The event stream's `https://` subscription keeps reqwest's error,
    /// so an untrusted certificate gets the CA hint there too.
    #[tokio::test]
    async fn an_untrusted_certificate_on_the_stream_names_the_ca() {
        use super::super::http::tests::{peer, untrusted_tls_server};
        let request = super::super::http::client(&crate::backends::Timing::default())
            .get(untrusted_tls_server().await);
        let Err(OpenError::Unreachable(error)) = subscribe(request, Duration::from_secs(10)).await
        else {
            panic!("the handshake was not refused");
        };
        let BackendError::Connect { hint, .. } = peer().unreachable(&error) else {
            panic!("not a connect error");
        };
        assert_eq!(hint, crate::backends::ConnectHint::UntrustedCertificate);
    }
}
