//! The broker against a fake backend: what it sends, and when.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::sync::Semaphore;

use super::*;
use crate::backends::{Backend, BackendEvent, EventSink};
use crate::prompt::{Choice, Kind, Origin, Question, Reply, Why};

use super::Notice;
use crate::settings::{Config, ServerKind};

/// A backend whose events the test emits and whose sends it scripts.
#[derive(Default)]
struct Fake {
    sink: Mutex<Option<EventSink>>,
    sent: Mutex<Vec<(String, Reply)>>,
    /// Results for the next sends; `Ok` when empty.
    results: Mutex<VecDeque<Result<(), BackendError>>>,
    /// When set, a send waits for a permit (a send "in flight").
    gate: Mutex<Option<Arc<Semaphore>>>,
    still_pending: Mutex<Option<bool>>,
}

impl Backend for Fake {
    fn source(&self) -> Source {
        Source {
            kind: ServerKind::OpenCode,
            url: "http://fake".into(),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let gate = self.gate.lock().unwrap().clone();
            if let Some(gate) = gate {
                gate.acquire().await.unwrap().forget();
            }
            self.sent
                .lock()
                .unwrap()
                .push((prompt.id.clone(), reply.clone()));
            self.results.lock().unwrap().pop_front().unwrap_or(Ok(()))
        })
    }

    fn still_pending<'a>(&'a self, _prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        Box::pin(async move { *self.still_pending.lock().unwrap() })
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        *self.sink.lock().unwrap() = Some(sink);
        Box::pin(std::future::pending())
    }
}

struct Harness {
    fake: Arc<Fake>,
    broker: BrokerHandle,
    updates: Updates,
}

impl Harness {
    async fn start(policy: serde_json::Value) -> Harness {
        let fake = Arc::new(Fake::default());
        let config = Config::from_json(
            Some(&json!({"servers": [{"name": "s", "url": "http://fake"}], "policy": policy})),
            &Default::default(),
        )
        .unwrap();
        let backend = fake.clone();
        let (broker, updates) = BrokerHandle::spawn(
            config.servers,
            config.policies,
            Arc::new(move |_: &ServerSpec| -> Arc<dyn Backend> { backend.clone() }),
            None,
        );
        let harness = Harness {
            fake,
            broker,
            updates,
        };
        for _ in 0..100 {
            if harness.fake.sink.lock().unwrap().is_some() {
                return harness;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the backend was never started");
    }

    fn emit(&self, event: BackendEvent) {
        let sink = self.fake.sink.lock().unwrap().clone().unwrap();
        sink.send(event).unwrap();
    }

    /// The next update that is not a status.
    async fn next(&mut self) -> Update {
        loop {
            let update = tokio::time::timeout(Duration::from_secs(5), self.updates.recv())
                .await
                .expect("an update")
                .expect("broker running");
            if !matches!(update, Update::Status(_)) {
                return update;
            }
        }
    }

    async fn added(&mut self) -> Arc<Pending> {
        match self.next().await {
            Update::Added(pending) => pending,
            other => panic!("expected Added, got {other:?}"),
        }
    }

    async fn resolved(&mut self) -> Resolution {
        match self.next().await {
            Update::Resolved(resolution) => resolution,
            other => panic!("expected Resolved, got {other:?}"),
        }
    }

    fn sent(&self) -> Vec<(String, Reply)> {
        self.fake.sent.lock().unwrap().clone()
    }
}

fn prompt(id: &str) -> Prompt {
    Prompt {
        id: id.into(),
        session: "ses_1".into(),
        directory: None,
        origin: Origin {
            tool_call: Some(format!("call_{id}")),
            agent: None,
            session_title: None,
            requester: None,
        },
        kind: Kind::Questions(vec![Question {
            header: "Database".into(),
            text: "Which database?".into(),
            options: ["Postgres", "SQLite"]
                .map(|label| Choice::new(label.into(), String::new()))
                .to_vec(),
            multiple: false,
            custom: false,
            secret: false,
            cannot_show: None,
        }]),
    }
}

fn answer(label: &str) -> Human {
    Human::Answer(Answer::Questions(vec![vec![label.into()]]))
}

fn sent_answer(id: &str, label: &str) -> (String, Reply) {
    (
        id.into(),
        Reply::Answer(Answer::Questions(vec![vec![label.into()]])),
    )
}

fn server_error() -> BackendError {
    BackendError::Server {
        server: crate::backends::ServerLabel::Hook,
        status: 500,
        message: String::new().into(),
    }
}

#[tokio::test]
async fn an_answer_is_sent_once_and_a_second_decision_is_refused() {
    let mut h = Harness::start(json!(null)).await;
    h.emit(BackendEvent::Asked(prompt("q1")));
    let pending = h.added().await;
    assert_eq!(pending.key, "s/q1");
    assert_eq!(pending.title, "Database".into());
    assert!(Arc::ptr_eq(&h.broker.open("s/q1").await.unwrap(), &pending));
    let gate = Arc::new(Semaphore::new(0));
    *h.fake.gate.lock().unwrap() = Some(gate.clone());
    let first = tokio::spawn({
        let broker = h.broker.clone();
        async move { broker.decide("s/q1", answer("SQLite")).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        h.broker.decide("s/q1", answer("Postgres")).await,
        Err(BrokerError::Busy("s/q1".into()))
    );
    // A face adding a piece of an answer is told the same.
    assert_eq!(
        h.broker.open("s/q1").await.map(|p| p.key.clone()),
        Err(BrokerError::Busy("s/q1".into()))
    );
    gate.add_permits(1);
    assert_eq!(first.await.unwrap(), Ok(()));
    assert_eq!(h.resolved().await.reason, Reason::AnsweredHere);
    assert_eq!(
        h.broker.open("s/q1").await.map(|p| p.key.clone()),
        Err(BrokerError::UnknownKey("s/q1".into()))
    );
    assert_eq!(h.sent(), vec![sent_answer("q1", "SQLite")]);
    // Late events and listings do not bring it back.
    h.emit(BackendEvent::Asked(prompt("q1")));
    h.emit(BackendEvent::Snapshot(vec![prompt("q1")].into()));
    assert!(h.broker.list().await.is_empty());
}

#[tokio::test]
async fn a_failed_send_returns_the_prompt_and_a_retry_sends_once() {
    let mut h = Harness::start(json!(null)).await;
    h.emit(BackendEvent::Asked(prompt("q1")));
    h.added().await;
    h.fake
        .results
        .lock()
        .unwrap()
        .push_back(Err(server_error()));
    *h.fake.still_pending.lock().unwrap() = Some(true);
    assert!(matches!(
        h.broker.decide("s/q1", answer("SQLite")).await,
        Err(BrokerError::Backend(BackendError::Server { .. }))
    ));
    assert_eq!(h.broker.list().await.len(), 1, "still pending");
    assert_eq!(h.broker.decide("s/q1", answer("Postgres")).await, Ok(()));
    assert_eq!(
        h.sent(),
        vec![sent_answer("q1", "SQLite"), sent_answer("q1", "Postgres")]
    );
    assert_eq!(h.resolved().await.reason, Reason::AnsweredHere);
}

#[tokio::test]
async fn an_ambiguous_failure_the_server_applied_is_not_asked_again() {
    let mut h = Harness::start(json!(null)).await;
    h.emit(BackendEvent::Asked(prompt("q1")));
    h.added().await;
    h.fake
        .results
        .lock()
        .unwrap()
        .push_back(Err(server_error()));
    *h.fake.still_pending.lock().unwrap() = Some(false);
    assert_eq!(h.broker.decide("s/q1", answer("SQLite")).await, Ok(()));
    let resolution = h.resolved().await;
    assert_eq!(resolution.state, State::Replied);
    assert!(
        matches!(
            resolution.why,
            Why::Sent {
                applied_despite_failure: true,
                ..
            }
        ),
        "{:?}",
        resolution.why
    );
    assert_eq!(h.sent().len(), 1);
}

#[tokio::test]
async fn answered_elsewhere_during_a_failed_send_is_what_happened() {
    let mut h = Harness::start(json!(null)).await;
    h.emit(BackendEvent::Asked(prompt("q1")));
    h.added().await;
    let gate = Arc::new(Semaphore::new(0));
    *h.fake.gate.lock().unwrap() = Some(gate.clone());
    h.fake
        .results
        .lock()
        .unwrap()
        .push_back(Err(server_error()));
    let decision = tokio::spawn({
        let broker = h.broker.clone();
        async move { broker.decide("s/q1", answer("SQLite")).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.emit(BackendEvent::ResolvedElsewhere {
        id: "q1".into(),
        rejected: false,
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.add_permits(1);
    assert!(decision.await.unwrap().is_err());
    let resolution = h.resolved().await;
    assert_eq!(resolution.reason, Reason::AnsweredElsewhere);
    assert_eq!(resolution.why, Why::Overtaken);
    assert!(h.broker.list().await.is_empty(), "not shown again");
}

#[tokio::test]
async fn session_end_tool_end_and_resync_dismiss() {
    let mut h = Harness::start(json!(null)).await;
    for id in ["q1", "q2", "q3"] {
        h.emit(BackendEvent::Asked(prompt(id)));
        h.added().await;
    }
    h.emit(BackendEvent::ToolEnded {
        call_id: "call_q1".into(),
        ok: false,
    });
    let resolution = h.resolved().await;
    assert_eq!(
        (resolution.key.as_str(), resolution.reason),
        ("s/q1", Reason::SessionEnded)
    );
    h.emit(BackendEvent::Snapshot(vec![prompt("q3")].into()));
    let resolution = h.resolved().await;
    assert_eq!(
        (resolution.key.as_str(), resolution.reason),
        ("s/q2", Reason::Gone)
    );
    h.emit(BackendEvent::SessionEnded {
        session: "ses_1".into(),
    });
    assert_eq!(h.resolved().await.key, "s/q3");
    assert!(h.sent().is_empty());
}

/// Every update until a status says `pending`: keys added, keys resolved
/// (with why) and how many statuses came.
async fn until_pending(
    h: &mut Harness,
    pending: usize,
) -> (HashSet<String>, HashMap<String, Reason>, usize) {
    let (mut added, mut resolved, mut statuses) = (HashSet::new(), HashMap::new(), 0);
    loop {
        let update = tokio::time::timeout(Duration::from_secs(10), h.updates.recv())
            .await
            .expect("an update")
            .expect("broker running");
        match update {
            Update::Added(p) => assert!(added.insert(p.key.clone()), "{} twice", p.key),
            Update::Resolved(r) => assert!(resolved.insert(r.key, r.reason).is_none()),
            Update::Status(status) => {
                statuses += 1;
                if status.pending == pending {
                    return (added, resolved, statuses);
                }
            }
            Update::Notice(notice) => panic!("unexpected notice: {notice:?}"),
            Update::Connection { .. } => {}
        }
    }
}

#[tokio::test]
async fn a_resync_takes_in_the_new_keeps_the_listed_and_dismisses_the_rest() {
    let mut h = Harness::start(json!(null)).await;
    let listing = |ids: std::ops::Range<usize>| {
        ids.map(|i| prompt(&format!("q{i}")))
            .collect::<Vec<_>>()
            .into()
    };
    let keys = |ids: std::ops::Range<usize>| -> HashSet<String> {
        ids.map(|i| format!("s/q{i}")).collect()
    };
    until_pending(&mut h, 0).await; // the status at start
    h.emit(BackendEvent::Snapshot(listing(0..3000)));
    let (added, resolved, statuses) = until_pending(&mut h, 3000).await;
    assert_eq!(added, keys(0..3000));
    assert!(resolved.is_empty());
    assert_eq!(statuses, 1, "one status for the whole listing");
    // One of those is being answered: a listing without it must not
    // dismiss it while the answer is on its way.
    let gate = Arc::new(Semaphore::new(0));
    *h.fake.gate.lock().unwrap() = Some(gate.clone());
    let broker = h.broker.clone();
    let answering = tokio::spawn(async move { broker.decide("s/q0", answer("Postgres")).await });
    while h.broker.list().await.len() == 3000 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    h.emit(BackendEvent::Snapshot(listing(1000..4000)));
    let (added, resolved, _) = until_pending(&mut h, 3001).await;
    assert_eq!(added, keys(3000..4000), "only the new ones are added");
    assert_eq!(
        resolved.keys().cloned().collect::<HashSet<_>>(),
        keys(1..1000)
    );
    assert!(resolved.values().all(|r| *r == Reason::Gone));
    gate.add_permits(1);
    answering.await.unwrap().unwrap();
    assert_eq!(h.sent(), [sent_answer("q0", "Postgres")]);
}

#[tokio::test]
async fn a_policy_timeout_racing_a_person_sends_once() {
    for delay in [0, 1, 2] {
        let mut h = Harness::start(json!({"mode": "forward", "timeoutMs": 20})).await;
        h.emit(BackendEvent::Asked(prompt("q1")));
        h.added().await;
        tokio::time::sleep(Duration::from_millis(18 + delay)).await;
        let person = h.broker.decide("s/q1", answer("SQLite")).await;
        let resolution = h.resolved().await;
        assert_eq!(h.sent().len(), 1, "exactly one reply ({delay} ms)");
        match resolution.reason {
            Reason::AnsweredHere => assert_eq!(person, Ok(())),
            Reason::Timeout => {
                assert_eq!(h.sent(), vec![sent_answer("q1", "Postgres")]);
                assert!(person.is_err());
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn over_long_ids_are_never_kept() {
    let mut h = Harness::start(json!(null)).await;
    h.emit(BackendEvent::Asked(prompt(&"x".repeat(1 << 20))));
    match h.next().await {
        Update::Notice(notice @ Notice::IdTooLong { .. }) => {
            let len = format!("{notice:?}").len();
            assert!(len < 300, "bounded: {len}")
        }
        other => panic!("{other:?}"),
    }
    h.emit(BackendEvent::ResolvedElsewhere {
        id: "y".repeat(1 << 20),
        rejected: false,
    });
    h.emit(BackendEvent::Asked(prompt("q1")));
    assert_eq!(h.added().await.key, "s/q1");
}
