//! The OpenCode 2 backend (`@opencode/cli`, the main branch upstream): forms
//! instead of question requests, `permission.v2.*`, one event stream.
//!
//! It follows `GET /api/event` (`{id, type, data, location}` envelopes,
//! `: heartbeat` comments every 15 s, no replay). `form.created` becomes a
//! prompt: a question form (the question tool's) a questions prompt, any
//! other form (MCP elicitation included) a form prompt; `form.replied` and
//! `form.cancelled` take it back. After every (re)connect it lists what is
//! pending, on the form routes learnt once per server ([`routes`]): the
//! location's forms and permissions, then every session it has seen, one by
//! one, since a session may live in another location. Replies go to `POST
//! /api/session/{sessionID}/form/{formID}/reply` by value; a refusal cancels
//! the form with the person's message. docs/opencode2.md cites the upstream
//! files this is built from.

#[cfg(test)]
mod contract;
mod form;
mod routes;
mod wire;

use std::num::NonZeroUsize;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use lru::LruCache;
use serde_json::{Value, json};

use self::form::{FormInfo, Shape};
use self::routes::{Cancel, Description, FormRoutes, Listing, StateCheck, missing};
use self::wire::{PermissionRequest, ServerInfo, V2Event, parse_event};
use super::net::http::{self, Answered, Peer};
use super::net::openapi;
use super::net::stream::{Flow, Follow};
use super::shared::permission_reply;
use super::{
    AnswerIn, BackendError, BackendEvent, EventSink, Expected, Problem, RefuseReason, ServerLabel,
    Timing, id_within,
};
use crate::backends::net::sse::{MAX_EVENT_BYTES, SseEvent};
use crate::prompt::{Answer, Kind, Prompt, Reply};
use crate::settings::ServerSpec;
use crate::text;

/// How many sessions are remembered for the resync, and how many forms'
/// shapes (field keys): far more than a person has open.
const REMEMBERED: usize = 1024;

pub(crate) struct OpenCode2 {
    spec: ServerSpec,
    http: reqwest::Client,
    timing: Timing,
    peer: Peer,
    /// Per form shown: its field keys, for the reply.
    shapes: Mutex<LruCache<String, Shape>>,
    /// Sessions that asked something, with the directory their prompts
    /// were shown in: listed one by one at each resync.
    sessions: Mutex<LruCache<String, Option<String>>>,
    /// Ids already reported as unusable, so a resync does not repeat it.
    reported: Mutex<LruCache<String, ()>>,
    /// The form routes learned at the last resync (the current
    /// generation's until then), and whether a missing listing was said.
    routes: Mutex<(FormRoutes, bool)>,
    /// What the server's `/doc` said, kept across reconnects: a fresh
    /// server spends seconds building it and serves nothing meanwhile.
    description: Mutex<Description>,
}

/// How much listed text one resync builds prompts from, at most: ten
/// thousand prompts of a few KiB each fit.
const SNAPSHOT_BYTES: usize = 32 << 20;

/// What a resync may still take in, counted down while listings are read.
struct Budget {
    prompts: usize,
    bytes: usize,
    /// Items not taken in for the bounds.
    left_out: usize,
}

/// Allocated as it fills, not up front: most servers never need the room.
fn lru<V>() -> Mutex<LruCache<String, V>> {
    Mutex::new(LruCache::sparse(
        NonZeroUsize::new(REMEMBERED).expect("non-zero"),
    ))
}

/// A pending prompt and, for a form, its shape.
type Listed = (Prompt, Option<Shape>);

impl OpenCode2 {
    pub fn new(spec: ServerSpec, timing: Timing) -> Self {
        OpenCode2 {
            peer: Peer {
                label: ServerLabel::OpenCode {
                    url: spec.url.clone(),
                },
                expected: Expected::OpenCode2,
            },
            http: http::client(&timing),
            // Upstream's comment heartbeat comes every 15 s (the 1.x
            // default bound is three 10-s heartbeats): three of these.
            timing: Timing {
                stall: timing.stall * 3 / 2,
                ..timing
            },
            spec,
            shapes: lru(),
            sessions: lru(),
            reported: lru(),
            routes: Mutex::new((FormRoutes::CURRENT, false)),
            description: Mutex::new(Description::Unread),
        }
    }

    fn form_routes(&self) -> FormRoutes {
        self.routes.lock().expect("not poisoned").0
    }

    /// Keeps the routes learned; a server with no listing route is said
    /// once (again only after one that had a listing).
    fn learned(&self, routes: FormRoutes, sink: &EventSink) {
        let mut known = self.routes.lock().expect("not poisoned");
        let tell = routes.listing == Listing::None && !known.1;
        *known = (routes, routes.listing == Listing::None);
        drop(known);
        if tell {
            let _ = sink.send(BackendEvent::Problem(Problem::NoFormListing));
        }
    }

    /// The form routes the server's `/doc` names, if it publishes one: read
    /// once per server, and whether this call read it.
    async fn described_routes(&self) -> (Option<FormRoutes>, bool) {
        if let Description::Read(routes) = *self.description.lock().expect("not poisoned") {
            return (routes, false);
        }
        let request = self
            .request(reqwest::Method::GET, "/doc")
            .timeout(self.timing.request);
        match openapi::read(request).await {
            Ok(paths) => {
                let routes = paths.map(|paths| FormRoutes::from_paths(&paths));
                *self.description.lock().expect("not poisoned") = Description::Read(routes);
                (routes, true)
            }
            Err(error) => {
                tracing::debug!(server = %self.spec.name, "no OpenAPI description read: {error}");
                (None, true)
            }
        }
    }

    /// The location's pending forms, from the listing `/doc` names, else
    /// from the first of the known generations' listings that answers. A
    /// described listing that is missing (a server upgraded in place) has
    /// `/doc` read again, once. A missing route lists nothing and is said
    /// once; it never fails the connection.
    async fn location_forms(
        &self,
        sink: &EventSink,
        budget: &mut Budget,
    ) -> Result<Vec<Listed>, BackendError> {
        let (mut described, mut fresh) = self.described_routes().await;
        loop {
            let tried = match described {
                Some(routes) => vec![routes.listing],
                None => vec![Listing::Forms, Listing::Requests],
            };
            for &listing in &tried {
                let Some(path) = listing.path() else {
                    break;
                };
                let request = self.location_request(path);
                match self
                    .list(request, path, self.forms(sink, None), budget)
                    .await
                {
                    Ok(found) => {
                        self.learned(described.unwrap_or(FormRoutes::listed_at(listing)), sink);
                        return Ok(found);
                    }
                    Err(error) if missing(&error) => {
                        tracing::debug!(server = %self.spec.name, "no form listing at {path}: {}", error.for_log());
                    }
                    Err(error) => return Err(error),
                }
            }
            let stale = described.is_some_and(|routes| routes.listing != Listing::None);
            if !stale || fresh {
                break;
            }
            *self.description.lock().expect("not poisoned") = Description::Unread;
            (described, fresh) = self.described_routes().await;
        }
        let routes = described.unwrap_or(FormRoutes::UNLISTED);
        self.learned(
            FormRoutes {
                listing: Listing::None,
                ..routes
            },
            sink,
        );
        Ok(Vec::new())
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(method, format!("{}{}", self.spec.url, path));
        if let Some(password) = &self.spec.password {
            builder = builder.basic_auth(&self.spec.username, Some(password.expose()));
        }
        builder
    }

    /// A location-scoped listing: the configured directory, else the
    /// server's default location (`LocationQuery`, deepObject style).
    fn location_request(&self, path: &str) -> reqwest::RequestBuilder {
        let builder = self.request(reqwest::Method::GET, path);
        match &self.spec.directory {
            Some(directory) => builder.query(&[("location[directory]", directory)]),
            None => builder,
        }
    }

    /// `GET /api/info`: the server's identity, or `None` when this is not an
    /// OpenCode 2 server (1.x answers its web app's HTML there).
    pub(super) async fn server_info(&self) -> Result<Option<ServerInfo>, BackendError> {
        let answered = self
            .peer
            .exchange(
                &self.timing,
                self.request(reqwest::Method::GET, "/api/info"),
            )
            .await?;
        Ok(ServerInfo::from_answer(
            answered.status,
            &answered.content_type,
            &answered.body,
        ))
    }

    /// Sends a request whose answer must be JSON (or empty: 204).
    async fn call(&self, builder: reqwest::RequestBuilder) -> Result<Answered, BackendError> {
        let answered = self.peer.exchange(&self.timing, builder).await?;
        http::json_answer(&self.peer, answered)
    }

    /// A prompt whose ids cannot go into a URL can be neither answered nor
    /// rejected: said once, not shown.
    fn usable(&self, prompt: &Prompt, sink: &EventSink) -> bool {
        let refused = text::url_segment(&prompt.id)
            .and_then(|_| text::url_segment(&prompt.session))
            .err();
        let Some(refused) = refused else {
            return true;
        };
        self.report(
            &prompt.id,
            Problem::CannotAnswer {
                kind: prompt.kind.kind_name(),
                refused,
                answer_in: AnswerIn::OpenCode,
            },
            sink,
        );
        false
    }

    fn report(&self, id: &str, problem: Problem, sink: &EventSink) {
        let first = self
            .reported
            .lock()
            .expect("not poisoned")
            .put(id.chars().take(256).collect(), ())
            .is_none();
        if first {
            let _ = sink.send(BackendEvent::Problem(problem));
        }
    }

    /// Remembers what a prompt's reply needs, and its session for resyncs
    /// (over-long ids are not ours to keep: the broker refuses them).
    fn remember(&self, prompt: &Prompt, shape: Option<Shape>) {
        if !id_within(&prompt.id) || !id_within(&prompt.session) {
            return;
        }
        self.sessions
            .lock()
            .expect("not poisoned")
            .put(prompt.session.clone(), prompt.directory.clone());
        if let Some(shape) = shape {
            self.shapes
                .lock()
                .expect("not poisoned")
                .put(prompt.id.clone(), shape);
        }
    }

    fn form(&self, form: FormInfo, directory: Option<String>, sink: &EventSink) -> Option<Listed> {
        let id = form.id.clone();
        let directory = directory.or_else(|| self.spec.directory.clone());
        match form.into_prompt(directory) {
            Ok((prompt, shape)) => Some((prompt, Some(shape))),
            Err(form::Unshowable(reason)) => {
                self.report(&id, Problem::FormUnshowable { detail: reason }, sink);
                None
            }
        }
    }

    /// One listing route's items (forms or permissions), read within what
    /// the resync may still take in; unreadable items are skipped, each
    /// alone, with one log line.
    async fn list(
        &self,
        builder: reqwest::RequestBuilder,
        path: &str,
        parse: impl Fn(&str, Option<String>) -> Result<Option<Listed>, serde_json::Error>,
        budget: &mut Budget,
    ) -> Result<Vec<Listed>, BackendError> {
        let answered = self.call(builder).await?;
        let listing = wire::listed(&answered.body, budget.prompts).ok_or_else(|| {
            self.peer
                .server_error(answered.status, format!("{path} did not answer a list"))
        })?;
        budget.left_out += listing.left_out;
        let mut listed = Vec::with_capacity(listing.items.len());
        let (mut skipped, mut first_error) = (0usize, None);
        for item in listing.items {
            let item = item.get();
            // Nothing larger can arrive as an event: not taken from a listing either.
            if item.len() > MAX_EVENT_BYTES || item.len() > budget.bytes {
                budget.left_out += 1;
                continue;
            }
            match parse(item, listing.directory.clone()) {
                Ok(Some(found)) => {
                    budget.prompts -= 1;
                    budget.bytes -= item.len();
                    listed.push(found);
                }
                Ok(None) => {}
                Err(e) => {
                    skipped += 1;
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(error) = first_error {
            tracing::warn!(server = %self.spec.name, "skipped {skipped} item(s) of {path} that could not be read; the first: {error}");
        }
        Ok(listed)
    }

    /// Forms of a listing, in the listing's location, else in `fallback`'s.
    fn forms<'a>(
        &'a self,
        sink: &'a EventSink,
        fallback: Option<String>,
    ) -> impl Fn(&str, Option<String>) -> Result<Option<Listed>, serde_json::Error> + 'a {
        move |item, directory| {
            let directory = directory.or_else(|| fallback.clone());
            serde_json::from_str::<FormInfo>(item).map(|f| self.form(f, directory, sink))
        }
    }

    /// Permissions of a listing, in the listing's location, else in
    /// `fallback`'s, else the configured one.
    fn permissions(
        &self,
        fallback: Option<String>,
    ) -> impl Fn(&str, Option<String>) -> Result<Option<Listed>, serde_json::Error> + '_ {
        move |item, directory| {
            let directory = directory
                .or_else(|| fallback.clone())
                .or_else(|| self.spec.directory.clone());
            serde_json::from_str::<PermissionRequest>(item)
                .map(|p| Some((p.into_prompt(directory), None)))
        }
    }

    /// Everything pending: the location's forms and permissions, then each
    /// remembered session's (a session of another location is listed only
    /// there). A session the server no longer knows is forgotten.
    async fn snapshot(&self, sink: &EventSink) -> Result<Vec<Listed>, BackendError> {
        let mut budget = Budget {
            prompts: crate::prompt::limits::PENDING,
            bytes: SNAPSHOT_BYTES,
            left_out: 0,
        };
        let mut all = self.location_forms(sink, &mut budget).await?;
        all.extend(
            self.list(
                self.location_request("/api/permission/request"),
                "/api/permission/request",
                self.permissions(None),
                &mut budget,
            )
            .await?,
        );
        let sessions: Vec<(String, Option<String>)> = {
            let sessions = self.sessions.lock().expect("not poisoned");
            sessions
                .iter()
                .map(|(s, d)| (s.clone(), d.clone()))
                .collect()
        };
        let location_lists_forms = self.form_routes().listing != Listing::None;
        let mut ids: std::collections::HashSet<String> =
            all.iter().map(|(p, _)| p.id.clone()).collect();
        for (session, directory) in sessions {
            let Ok(segment) = text::url_segment(&session) else {
                continue;
            };
            let Some(kinds) = self.session_listings(directory.as_deref(), location_lists_forms)
            else {
                continue;
            };
            let mut found = Vec::new();
            for &kind in kinds {
                let path = format!("/api/session/{segment}/{kind}");
                let request = self.request(reqwest::Method::GET, &path);
                let fallback = directory.clone();
                let listed = if kind == "form" {
                    self.list(request, &path, self.forms(sink, fallback), &mut budget)
                        .await
                } else {
                    self.list(request, &path, self.permissions(fallback), &mut budget)
                        .await
                };
                match listed {
                    Ok(listed) => found.extend(listed),
                    Err(BackendError::NotFound { .. }) => {
                        self.sessions.lock().expect("not poisoned").pop(&session);
                        break;
                    }
                    Err(e @ BackendError::Unauthorized { .. }) => return Err(e),
                    Err(e) => {
                        tracing::warn!(server = %self.spec.name, "could not list a session's {kind}s: {}", e.for_log());
                    }
                }
            }
            all.extend(found.into_iter().filter(|(p, _)| ids.insert(p.id.clone())));
        }
        if budget.left_out > 0 {
            tracing::warn!(server = %self.spec.name, "the listings held more than one resync takes in ({} prompts, {} MiB, {} MiB each): {} item(s) left out", crate::prompt::limits::PENDING, SNAPSHOT_BYTES >> 20, MAX_EVENT_BYTES >> 20, budget.left_out);
        }
        Ok(all)
    }

    /// Which of a remembered session's listings a resync reads. They name
    /// no location, so with a directory configured their items are taken
    /// as the session's own directory's, and what the configured directory's
    /// listings already cover is not read there again: a session's listing
    /// may hold another location's prompts, which must not be shown.
    fn session_listings(
        &self,
        directory: Option<&str>,
        location_lists_forms: bool,
    ) -> Option<&'static [&'static str]> {
        let Some(configured) = &self.spec.directory else {
            return Some(&["form", "permission"]);
        };
        let directory = directory.filter(|d| self.in_scope(Some(d)))?;
        if directory.trim_end_matches('/') != configured.trim_end_matches('/') {
            Some(&["form", "permission"])
        } else if location_lists_forms {
            None
        } else {
            Some(&["form"])
        }
    }

    async fn handle(&self, event: SseEvent, sink: &EventSink) -> bool {
        let parsed = match parse_event(&event.data) {
            Ok(parsed) => parsed,
            Err(e) => {
                // serde quotes the value it refused: the server's text.
                let e = text::for_display(&e.to_string(), text::DISPLAY_MESSAGE_CHARS).into_owned();
                tracing::warn!("skipped an undecodable event: {e}");
                return true;
            }
        };
        let out = match parsed {
            V2Event::FormCreated(_, directory) | V2Event::PermissionAsked(_, directory)
                if !self.in_scope(directory.as_deref()) =>
            {
                return true;
            }
            V2Event::FormCreated(form, directory) => {
                let Some((prompt, shape)) = self.form(*form, directory, sink) else {
                    return !sink.is_closed();
                };
                if !self.usable(&prompt, sink) {
                    return !sink.is_closed();
                }
                self.remember(&prompt, shape);
                BackendEvent::Asked(prompt)
            }
            V2Event::PermissionAsked(request, directory) => {
                let directory = directory.or_else(|| self.spec.directory.clone());
                let prompt = request.into_prompt(directory);
                if !self.usable(&prompt, sink) {
                    return !sink.is_closed();
                }
                self.remember(&prompt, None);
                BackendEvent::Asked(prompt)
            }
            V2Event::FormReplied { id } => BackendEvent::ResolvedElsewhere {
                id,
                rejected: false,
            },
            // The same event for a refusal elsewhere and for a tool call
            // that ended (the form is cancelled when the agent stops waiting).
            V2Event::FormCancelled { id } => BackendEvent::Withdrawn { id },
            V2Event::PermissionReplied { id, rejected } => {
                BackendEvent::ResolvedElsewhere { id, rejected }
            }
            V2Event::Other => return true,
        };
        sink.send(out).is_ok()
    }

    /// Whether a live event's location is the configured project's (or
    /// inside it): `/api/event` carries every location's, and with a
    /// `directory` configured only that project's prompts are shown. An
    /// event naming no location is kept.
    fn in_scope(&self, directory: Option<&str>) -> bool {
        let (Some(configured), Some(directory)) = (&self.spec.directory, directory) else {
            return true;
        };
        let configured = configured.trim_end_matches('/');
        directory
            .strip_prefix(configured)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// What a form's reply needs: remembered when it was shown, else read
    /// back from the server (`GET /api/session/{s}/form/{id}`).
    async fn shape(&self, prompt: &Prompt, id: &str, session: &str) -> Result<Shape, BackendError> {
        if let Some(shape) = self.shapes.lock().expect("not poisoned").get(&prompt.id) {
            return Ok(shape.clone());
        }
        let answered = self
            .call(self.request(
                reqwest::Method::GET,
                &format!("/api/session/{session}/form/{id}"),
            ))
            .await?;
        #[derive(serde::Deserialize)]
        struct One {
            data: FormInfo,
        }
        let form = serde_json::from_slice::<One>(&answered.body)
            .map_err(|e| {
                self.peer
                    .server_error(answered.status, format!("the form could not be read: {e}"))
            })?
            .data;
        form.into_prompt(None)
            .map(|(_, shape)| shape)
            .map_err(|form::Unshowable(detail)| BackendError::Refused {
                server: self.peer.label.clone(),
                reason: RefuseReason::FormUnshowable { detail },
            })
    }
}

impl Follow for OpenCode2 {
    fn peer(&self) -> &Peer {
        &self.peer
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn relevant(&self) -> fn(&[u8]) -> bool {
        wire::relevant
    }

    fn subscribe(&self) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::GET, "/api/event")
            .header(reqwest::header::ACCEPT, "text/event-stream")
    }

    fn resync<'a>(&'a self, sink: &'a EventSink) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let all = self.snapshot(sink).await?;
            let mut usable = Vec::with_capacity(all.len());
            for (prompt, shape) in all {
                if self.usable(&prompt, sink) {
                    self.remember(&prompt, shape);
                    usable.push(prompt);
                }
            }
            sink.send(BackendEvent::Snapshot(usable.into()))
                .map_err(|_| BackendError::Closed)
        })
    }

    fn event<'a>(&'a self, event: SseEvent, sink: &'a EventSink) -> BoxFuture<'a, Flow> {
        Box::pin(async move { Flow::while_open(self.handle(event, sink).await) })
    }
}

impl OpenCode2 {
    pub(super) async fn send(&self, prompt: &Prompt, reply: &Reply) -> Result<(), BackendError> {
        let refused = |reason: RefuseReason| BackendError::Refused {
            server: self.peer.label.clone(),
            reason,
        };
        let id = text::url_segment(&prompt.id).map_err(|e| refused(RefuseReason::BadId(e)))?;
        let session =
            text::url_segment(&prompt.session).map_err(|e| refused(RefuseReason::BadId(e)))?;
        let post = |path: String| self.request(reqwest::Method::POST, &path);
        let form = |action: &str| post(format!("/api/session/{session}/form/{id}/{action}"));
        // The model reads the message as the tool's result.
        let cancel = |message: Option<&String>| match self.form_routes().cancel {
            Cancel::Delete => {
                let path = format!("/api/session/{session}/form/{id}");
                let request = self.request(reqwest::Method::DELETE, &path);
                match message {
                    Some(message) => request.query(&[("message", message)]),
                    None => request,
                }
            }
            Cancel::Post => match message {
                Some(message) => form("cancel").json(&json!({ "message": message })),
                None => form("cancel"),
            },
        };
        let request = match (&prompt.kind, reply) {
            (Kind::Questions(_) | Kind::Form(_), Reply::Answer(answer)) => {
                let shape = self.shape(prompt, id, session).await?;
                let answer = match (&shape, answer) {
                    (Shape::Questions(keys), Answer::Questions(answers)) => {
                        form::question_answer(keys, answers)
                    }
                    (Shape::Fields(keys), Answer::Form(values)) => form::form_answer(keys, values),
                    (Shape::Link(None), Answer::Form(_)) => json!({}),
                    // Upstream: an external field is acknowledged with `true`.
                    (Shape::Link(Some(key)), Answer::Form(_)) => json!({ key: true }),
                    _ => return Err(refused(RefuseReason::NotAnAnswerToForm)),
                };
                form("reply").json(&json!({ "answer": answer }))
            }
            (Kind::Questions(_) | Kind::Form(_), Reply::Reject { message }) => {
                cancel(message.as_ref())
            }
            (Kind::Questions(_) | Kind::Form(_), Reply::Cancel) => cancel(None),
            (Kind::Permission(permission), reply) => {
                let (body, _) = permission_reply(permission, reply).map_err(refused)?;
                post(format!("/api/session/{session}/permission/{id}/reply")).json(&body)
            }
        };
        self.call(request).await.map(drop)
    }

    pub(super) async fn still_pending(&self, prompt: &Prompt) -> Option<bool> {
        let id = text::url_segment(&prompt.id).ok()?;
        let session = text::url_segment(&prompt.session).ok()?;
        let state = self.form_routes().state;
        // Only a route `/doc` names says by its 404 that the form is gone;
        // a guessed one may be missing (docs/opencode2.md).
        let guessed = !matches!(
            *self.description.lock().expect("not poisoned"),
            Description::Read(Some(_))
        );
        let (path, status) = match (&prompt.kind, state) {
            (Kind::Permission(_), _) => (format!("/api/session/{session}/permission/{id}"), ""),
            (_, StateCheck::None) => return None,
            (_, StateCheck::Detail) => (
                format!("/api/session/{session}/form/{id}"),
                "/data/state/status",
            ),
            (_, StateCheck::Route) => (
                format!("/api/session/{session}/form/{id}/state"),
                "/data/status",
            ),
        };
        // Only the server's word counts: a JSON "not found", or a state.
        match self.call(self.request(reqwest::Method::GET, &path)).await {
            Err(BackendError::NotFound { .. }) if guessed && !status.is_empty() => None,
            Err(BackendError::NotFound { .. }) => Some(false),
            Err(_) => None,
            Ok(_) if matches!(prompt.kind, Kind::Permission(_)) => Some(true),
            Ok(answered) => {
                let state: Value = serde_json::from_slice(&answered.body).ok()?;
                Some(state.pointer(status)?.as_str()? == "pending")
            }
        }
    }
}
