//! `backend: "opencode"` follows either generation of OpenCode: which one
//! runs at the URL is found before every (re)connect, since a server can be
//! upgraded between two.
//!
//! The signal is the one the official OpenCode 2 client uses to recognise
//! its server: `GET /api/info` answers JSON `{version, pid, …}`
//! (`packages/client/src/effect/service.ts`, `packages/protocol/src/groups/
//! server.ts`). OpenCode 1.18.33 has no such route and answers its web
//! app's HTML page with 200 there, as for every unknown route; its
//! `/api/event` exists too but never carries questions, so neither an error
//! page nor the event route can tell the two apart.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::net::http::Peer;
use super::net::stream::{Flow, Follow, follow};
use super::opencode::OpenCode;
use super::opencode2::OpenCode2;
use super::{Backend, BackendError, EventSink, Source, Timing};
use crate::backends::net::sse::SseEvent;
use crate::prompt::{Prompt, Reply};
use crate::settings::{ServerKind, ServerSpec};
use crate::text;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Generation {
    One,
    Two,
}

impl Generation {
    fn kind(self) -> ServerKind {
        match self {
            Generation::One => ServerKind::OpenCode1,
            Generation::Two => ServerKind::OpenCode2,
        }
    }
}

pub(crate) struct OpenCodeAny {
    one: OpenCode,
    two: OpenCode2,
    url: String,
    /// What the last probe found; `None` before the first.
    found: Mutex<Option<Generation>>,
}

impl OpenCodeAny {
    pub fn new(spec: ServerSpec, timing: Timing) -> Self {
        OpenCodeAny {
            url: spec.url.clone(),
            one: OpenCode::new(spec.clone(), timing),
            two: OpenCode2::new(spec, timing),
            found: Mutex::new(None),
        }
    }

    fn found(&self) -> Option<Generation> {
        *self.found.lock().expect("not poisoned")
    }

    /// The generation to talk to: 1.x until found otherwise.
    fn current(&self) -> &dyn Follow {
        match self.found() {
            Some(Generation::Two) => &self.two,
            _ => &self.one,
        }
    }

    async fn detect(&self) -> Result<(), BackendError> {
        let info = self.two.server_info().await?;
        let generation = match &info {
            Some(_) => Generation::Two,
            None => Generation::One,
        };
        let before = self.found.lock().expect("not poisoned").replace(generation);
        if before != Some(generation) {
            tracing::info!(
                url = %self.url,
                generation = generation.kind().generation(),
                version = info
                    .as_ref()
                    .map(|i| text::for_display(&i.version, text::DISPLAY_ID_CHARS).into_owned()),
                pid = info.as_ref().map(|i| i.pid),
                "OpenCode generation found"
            );
        }
        Ok(())
    }
}

impl Follow for OpenCodeAny {
    fn peer(&self) -> &Peer {
        self.current().peer()
    }

    fn timing(&self) -> &Timing {
        self.current().timing()
    }

    fn relevant(&self) -> fn(&[u8]) -> bool {
        self.current().relevant()
    }

    fn prepare(&self) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(self.detect())
    }

    fn subscribe(&self) -> reqwest::RequestBuilder {
        self.current().subscribe()
    }

    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), BackendError>> {
        self.current().resync(sink)
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow> {
        self.current().event(event, sink)
    }
}

impl Backend for OpenCodeAny {
    fn source(&self) -> Source {
        Source {
            kind: self.found().map_or(ServerKind::OpenCode, Generation::kind),
            url: self.url.clone(),
        }
    }

    fn send<'a>(
        &'a self,
        prompt: &'a Prompt,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        match self.found() {
            Some(Generation::Two) => Box::pin(self.two.send(prompt, reply)),
            _ => Box::pin(self.one.send(prompt, reply)),
        }
    }

    fn still_pending<'a>(&'a self, prompt: &'a Prompt) -> BoxFuture<'a, Option<bool>> {
        match self.found() {
            Some(Generation::Two) => Box::pin(self.two.still_pending(prompt)),
            _ => Box::pin(self.one.still_pending(prompt)),
        }
    }

    fn run(self: Arc<Self>, sink: EventSink) -> BoxFuture<'static, ()> {
        Box::pin(follow(self, sink))
    }
}
