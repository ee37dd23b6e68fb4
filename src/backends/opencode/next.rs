//! OpenCode 1.18.34's second session engine (sessions created with `POST
//! /api/session`), beside the classic one on the same server. Seen on the
//! real 1.18.34 (docs/opencode.md): its prompts arrive on `/event` and
//! `/global/event` as `question.v2.*` / `permission.v2.*` only (the classic
//! engine sends `question.asked` / `permission.asked` only), are not in
//! `GET /question` / `GET /permission`, and are answered on their own
//! routes, each 204, while the classic routes answer 404:
//!
//! - `POST /api/session/{s}/question/{q}/reply` `{"answers": [[…]]}`,
//!   `POST /api/session/{s}/question/{q}/reject`;
//! - `POST /api/session/{s}/permission/{p}/reply` `{"reply", "message"?}`;
//! - listed by `GET /api/question/request` and `GET /api/permission/request`
//!   (`?location[directory]=…`), each `{location, data: [request]}`;
//! - `GET /api/session/{s}/permission/{p}` answers a pending one, 404 once
//!   it is answered or its run interrupted.
//!
//! The routes are taken from the server's OpenAPI description (`GET /doc`),
//! read only once a new-engine event is seen and kept across reconnects: a
//! fresh OpenCode builds that description in its one thread for seconds,
//! serving nothing else, so a server that never uses the new engine is never
//! asked. Until then both listings are tried at connect (a server without
//! them lists nothing). A server that does not publish them gets a clear
//! status, and its new-engine prompts are shown live only.

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::OpenCode;
use super::listing::Skipped;
use super::wire::{PermissionV2Request, QuestionRequest};
use crate::backends::net::openapi::{self, Paths};
use crate::backends::{BackendError, BackendEvent, EventSink, Problem, RefuseReason};
use crate::prompt::{Answer, Kind, Prompt, Reply};
use crate::text;

/// Which engine asked a prompt, and so which routes answer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Engine {
    Classic,
    Next,
    /// A `v2` event on a server whose `/doc` could not be read: the classic
    /// route is tried first, the new engine's where it does not know the id.
    Either,
}

const QUESTION_LISTING: &str = "/api/question/request";
const PERMISSION_LISTING: &str = "/api/permission/request";

const QUESTION_REPLY: &str = "/api/session/{sessionID}/question/{requestID}/reply";
const PERMISSION_REPLY: &str = "/api/session/{sessionID}/permission/{requestID}/reply";

/// The new engine's routes this server publishes in `/doc`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Routes {
    /// The listings.
    pub questions: bool,
    pub permissions: bool,
    /// The reply routes. Without them a `v2` event is the classic engine's
    /// twin (SDK 1.19 describes `question.v2.*` for the classic routes).
    pub question_replies: bool,
    pub permission_replies: bool,
    /// Whether the server answered `/doc` (a description, or none at all).
    pub known: bool,
    /// Whether `/doc` was asked this connection (so a server that cannot
    /// describe itself is asked once per connection, not per event).
    pub asked: bool,
    /// Whether the missing listing was told this connection.
    pub told: bool,
}

impl Routes {
    /// From the routes an OpenAPI description names.
    fn from_paths(paths: &Paths) -> Routes {
        let get = |path: &str| paths.has(path);
        Routes {
            questions: get(QUESTION_LISTING),
            permissions: get(PERMISSION_LISTING),
            question_replies: get(QUESTION_REPLY),
            permission_replies: get(PERMISSION_REPLY),
            known: true,
            asked: true,
            told: false,
        }
    }
}

/// A listing's answer: `{location, data: [request]}`.
#[derive(Deserialize)]
struct Listed<'a> {
    #[serde(borrow)]
    data: Vec<&'a RawValue>,
}

impl OpenCode {
    /// Which engine asked `id` (classic unless seen as the new engine's).
    pub(super) fn engine(&self, id: &str) -> Engine {
        self.engines
            .lock()
            .expect("not poisoned")
            .get(id)
            .copied()
            .unwrap_or(Engine::Classic)
    }

    /// Notes which engine asked `id`. A build that sends a classic event
    /// and its `v2` twin for one request (SDK 1.19) is answered classically.
    pub(super) fn note_engine(&self, id: &str, engine: Engine) {
        let mut engines = self.engines.lock().expect("not poisoned");
        match engine {
            Engine::Classic => {
                engines.put(id.to_owned(), Engine::Classic);
            }
            Engine::Next | Engine::Either => {
                engines.get_or_insert(id.to_owned(), || engine);
            }
        }
    }

    /// A request to the new engine's API, which takes its location in the
    /// session or as `location[…]`, never as `?directory=`.
    fn next_request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self
            .http
            .request(method, format!("{}{}", self.spec.url, path));
        match &self.spec.password {
            Some(password) => builder.basic_auth(&self.spec.username, Some(password.expose())),
            None => builder,
        }
    }

    /// Which engine answers a prompt a `v2` event asked: the new one where
    /// the server publishes its reply route for the prompt's kind.
    pub(super) fn v2_engine(&self, kind: &Kind) -> Engine {
        let routes = self.routes.lock().expect("not poisoned");
        if !routes.known {
            return Engine::Either;
        }
        let published = match kind {
            Kind::Permission(_) => routes.permission_replies,
            _ => routes.question_replies,
        };
        if published {
            Engine::Next
        } else {
            Engine::Classic
        }
    }

    /// A new connection: the routes learned are kept (same server), the
    /// missing listing is told again and an unreadable `/doc` asked again.
    pub(super) fn new_connection(&self) {
        let mut routes = self.routes.lock().expect("not poisoned");
        routes.asked = false;
        routes.told = false;
    }

    /// Reads `GET /doc` for the new engine's routes, at the first
    /// new-engine event: a fresh server takes seconds (over 10 s on a
    /// loaded machine) to make its description and serves nothing else
    /// meanwhile, so a server that never uses the new engine is never asked.
    /// Until it is read, routes are unknown (both listings tried, `v2`
    /// prompts answered classically first). A server without a description
    /// (404, or a web page) has none; one that cannot answer now
    /// (unreachable, slow, 5xx) is asked again at the next connection.
    pub(super) async fn learn_routes(&self) {
        {
            let mut routes = self.routes.lock().expect("not poisoned");
            if routes.known || routes.asked {
                return;
            }
            routes.asked = true;
        }
        let request = self
            .next_request(reqwest::Method::GET, "/doc")
            .timeout(self.timing.request);
        let read = read_doc(request).await;
        let server = &self.spec.name;
        let mut routes = self.routes.lock().expect("not poisoned");
        match read {
            Ok(learned) => {
                tracing::debug!(%server, ?learned, "new-engine routes");
                *routes = Routes {
                    told: routes.told,
                    ..learned
                };
            }
            Err(error) => tracing::debug!(%server, "no OpenAPI description read: {error}"),
        }
    }

    /// A learned route failed: the server may have been restarted as
    /// another version, so its routes are read again at the next
    /// new-engine event (and both listings tried meanwhile).
    fn forget_routes(&self) {
        let mut routes = self.routes.lock().expect("not poisoned");
        routes.known = false;
    }

    /// A new-engine prompt arrived live: if this server publishes no
    /// listing for it, says once per connection that such prompts asked
    /// while ask-lsp is away are not shown.
    pub(super) fn check_listed(&self, kind: &Kind, sink: &EventSink) {
        let mut routes = self.routes.lock().expect("not poisoned");
        let (route, listed) = match kind {
            Kind::Permission(_) => (PERMISSION_LISTING, routes.permissions),
            _ => (QUESTION_LISTING, routes.questions),
        };
        if listed || routes.told || !routes.known {
            return;
        }
        routes.told = true;
        let _ = sink.send(BackendEvent::Problem(Problem::NoNewEngineListing {
            route: route.to_string(),
        }));
    }

    /// The new engine's pending prompts in one directory (or the server's
    /// default), from the listing routes `/doc` offers. A route that fails
    /// is logged and lists nothing: it never fails the connection.
    pub(super) async fn list_next(&self, directory: Option<&str>) -> Vec<Prompt> {
        let routes = *self.routes.lock().expect("not poisoned");
        let directory = directory
            .or(self.spec.directory.as_deref())
            .map(str::to_owned);
        let mut prompts = Vec::new();
        // Without a description both are tried: a server without them
        // answers 404 or its web page, which lists nothing.
        for (route, offered) in [
            (QUESTION_LISTING, routes.questions || !routes.known),
            (PERMISSION_LISTING, routes.permissions || !routes.known),
        ] {
            if !offered {
                continue;
            }
            let mut request = self.next_request(reqwest::Method::GET, route);
            if let Some(dir) = &directory {
                request = request.query(&[("location[directory]", dir)]);
                if let Some(workspace) = self.workspace(dir) {
                    request = request.query(&[("location[workspace]", workspace)]);
                }
            }
            match self.call(request).await {
                Ok(answered) => self.read_listing(route, &answered.body, &directory, &mut prompts),
                Err(error) if routes.known => {
                    tracing::warn!(server = %self.spec.name, "the new engine's {route} listing failed: {}", error.for_log());
                    self.forget_routes();
                }
                Err(error) => {
                    tracing::debug!(server = %self.spec.name, "no new-engine listing at {route}: {}", error.for_log());
                }
            }
        }
        for prompt in &mut prompts {
            self.note_engine(&prompt.id, Engine::Next);
            prompt.origin.agent = self.agent(&prompt.session);
        }
        prompts
    }

    fn read_listing(
        &self,
        route: &str,
        body: &[u8],
        directory: &Option<String>,
        prompts: &mut Vec<Prompt>,
    ) {
        let listed: Listed = match serde_json::from_slice(body) {
            Ok(listed) => listed,
            Err(error) => {
                let error =
                    text::for_display(&error.to_string(), text::DISPLAY_MESSAGE_CHARS).into_owned();
                tracing::warn!(server = %self.spec.name, "the new engine's {route} listing is not {{data: [...]}}: {error}");
                return;
            }
        };
        let mut skipped = Skipped::default();
        for item in listed.data {
            let prompt = if route == QUESTION_LISTING {
                serde_json::from_str::<QuestionRequest>(item.get())
                    .map(|q| q.into_prompt(directory.clone()))
            } else {
                serde_json::from_str::<PermissionV2Request>(item.get())
                    .map(|p| p.into_prompt(directory.clone()))
            };
            match prompt {
                Ok(prompt) => prompts.push(prompt),
                Err(error) => skipped.add(error),
            }
        }
        self.skipped(route, skipped);
    }

    /// Answers a new-engine prompt on its own route. Sent only when the
    /// server says so (2xx); a 404 is "answered elsewhere, or gone".
    pub(super) async fn send_next(
        &self,
        prompt: &Prompt,
        reply: &Reply,
    ) -> Result<(), BackendError> {
        let refused = |reason: RefuseReason| BackendError::Refused {
            server: self.peer.label.clone(),
            reason,
        };
        let id = text::url_segment(&prompt.id).map_err(|e| refused(RefuseReason::BadId(e)))?;
        let session =
            text::url_segment(&prompt.session).map_err(|e| refused(RefuseReason::BadId(e)))?;
        let base = format!("/api/session/{session}");
        let request = match (&prompt.kind, reply) {
            (Kind::Questions(_), Reply::Answer(Answer::Questions(answers))) => self
                .next_request(
                    reqwest::Method::POST,
                    &format!("{base}/question/{id}/reply"),
                )
                .json(&json!({ "answers": answers })),
            (Kind::Questions(_), Reply::Reject { .. } | Reply::Cancel) => self.next_request(
                reqwest::Method::POST,
                &format!("{base}/question/{id}/reject"),
            ),
            (Kind::Permission(permission), reply) => {
                let (body, allows) = crate::backends::shared::permission_reply(permission, reply)
                    .map_err(refused)?;
                if allows {
                    self.check_next_permission_pending(&base, id).await?;
                }
                self.next_request(
                    reqwest::Method::POST,
                    &format!("{base}/permission/{id}/reply"),
                )
                .json(&body)
            }
            _ => return Err(refused(RefuseReason::NotAnAnswerToQuestions)),
        };
        self.call(request).await.map(drop)
    }

    /// Allowing runs the command: only while the server confirms the
    /// request still waits in its session (an interrupted run or a deleted
    /// session answers 404).
    async fn check_next_permission_pending(
        &self,
        base: &str,
        id: &str,
    ) -> Result<(), BackendError> {
        self.call(self.next_request(reqwest::Method::GET, &format!("{base}/permission/{id}")))
            .await
            .map(drop)
            .map_err(|error| match error {
                BackendError::NotFound { .. } => error,
                other => BackendError::Refused {
                    server: self.peer.label.clone(),
                    reason: RefuseReason::PermissionUnconfirmed(Box::new(other)),
                },
            })
    }

    /// Whether the server still waits for a new-engine prompt; `None` when
    /// it cannot say.
    pub(super) async fn still_pending_next(&self, prompt: &Prompt) -> Option<bool> {
        let id = text::url_segment(&prompt.id).ok()?;
        let session = text::url_segment(&prompt.session).ok()?;
        let base = format!("/api/session/{session}");
        match prompt.kind {
            Kind::Permission(_) => {
                let request =
                    self.next_request(reqwest::Method::GET, &format!("{base}/permission/{id}"));
                match self.call(request).await {
                    Ok(_) => Some(true),
                    Err(BackendError::NotFound { .. }) => Some(false),
                    Err(_) => None,
                }
            }
            Kind::Questions(_) => {
                let request = self.next_request(reqwest::Method::GET, &format!("{base}/question"));
                let answered = match self.call(request).await {
                    Ok(answered) => answered,
                    Err(BackendError::NotFound { .. }) => return Some(false),
                    Err(_) => return None,
                };
                #[derive(Deserialize)]
                struct Id<'a> {
                    #[serde(borrow)]
                    id: std::borrow::Cow<'a, str>,
                }
                #[derive(Deserialize)]
                struct Questions<'a> {
                    #[serde(borrow)]
                    data: Vec<Id<'a>>,
                }
                let listed: Questions = serde_json::from_slice(&answered.body).ok()?;
                Some(listed.data.iter().any(|q| q.id == prompt.id))
            }
            Kind::Form(_) => None,
        }
    }
}

/// The routes an OpenAPI description answer names (none without one); an
/// error when there is no answer to go by now.
async fn read_doc(request: reqwest::RequestBuilder) -> Result<Routes, String> {
    Ok(match openapi::read(request).await? {
        Some(paths) => Routes::from_paths(&paths),
        None => Routes {
            known: true,
            ..Routes::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_come_from_the_openapi_paths() {
        let doc = br#"{"openapi":"3.1.0","paths":{"/question":{"get":{}},"/api/question/request":{"get":{}},"/api/session/{sessionID}/question/{requestID}/reply":{"post":{}}}}"#;
        assert_eq!(
            Routes::from_paths(&Paths::parse(doc).unwrap()),
            Routes {
                questions: true,
                permissions: false,
                question_replies: true,
                permission_replies: false,
                known: true,
                asked: true,
                told: false
            }
        );
    }
}
