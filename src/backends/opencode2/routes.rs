//! Which form routes an OpenCode 2 server offers. Upstream moved them three
//! times while ask-lsp followed (anomalyco/opencode; docs/opencode2.md):
//!
//! | generation | listing | state | cancel |
//! | --- | --- | --- | --- |
//! | current (`groups/session.ts` @ 01fd0c85) | `GET /api/form` | `GET …/form/{id}` (`Form.Detail`) | `DELETE …/form/{id}?message=` |
//! | `groups/form.ts` @ 8c6ff624 | `GET /api/form/request` | `GET …/form/{id}/state` | `POST …/form/{id}/cancel` |
//! | `groups/form.ts` @ 23699db9 | none | `GET …/form/{id}/state` | `POST …/form/{id}/cancel` |
//!
//! They are read from the server's OpenAPI description (`GET /doc`) where it
//! publishes one, else found by trying the listings newest first.

use crate::backends::BackendError;
use crate::backends::net::openapi::Paths;

/// The location's pending forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listing {
    Forms,
    Requests,
    /// No listing route: forms are shown live only.
    None,
}

impl Listing {
    pub(super) fn path(self) -> Option<&'static str> {
        match self {
            Listing::Forms => Some(FORMS),
            Listing::Requests => Some(REQUESTS),
            Listing::None => None,
        }
    }
}

/// How a form is cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cancel {
    /// `DELETE /api/session/{s}/form/{id}?message=…`.
    Delete,
    /// `POST /api/session/{s}/form/{id}/cancel` (`{message}`, which the
    /// route at 8c6ff624 does not declare and an older server ignores).
    Post,
}

/// Where a form's state is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StateCheck {
    /// `GET /api/session/{s}/form/{id}`: the form with its `state`.
    Detail,
    /// `GET /api/session/{s}/form/{id}/state`.
    Route,
    /// The description names neither: a form's state cannot be read.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FormRoutes {
    pub listing: Listing,
    pub cancel: Cancel,
    pub state: StateCheck,
}

pub(super) const FORMS: &str = "/api/form";
pub(super) const REQUESTS: &str = "/api/form/request";
const FORM: &str = "/api/session/{sessionID}/form/{formID}";
const STATE: &str = "/api/session/{sessionID}/form/{formID}/state";

impl FormRoutes {
    pub(super) const CURRENT: FormRoutes = FormRoutes {
        listing: Listing::Forms,
        cancel: Cancel::Delete,
        state: StateCheck::Detail,
    };
    /// @8c6ff624: listed per location at `/api/form/request`.
    pub(super) const REQUESTS: FormRoutes = FormRoutes {
        listing: Listing::Requests,
        cancel: Cancel::Post,
        state: StateCheck::Route,
    };
    /// @23699db9: no location listing.
    pub(super) const UNLISTED: FormRoutes = FormRoutes {
        listing: Listing::None,
        cancel: Cancel::Post,
        state: StateCheck::Route,
    };

    /// The routes a description names, each chosen alone: a server between
    /// two generations gets what it offers.
    pub(super) fn from_paths(paths: &Paths) -> FormRoutes {
        FormRoutes {
            listing: if paths.has(FORMS) {
                Listing::Forms
            } else if paths.has(REQUESTS) {
                Listing::Requests
            } else {
                Listing::None
            },
            cancel: if paths.has_method(FORM, "delete") {
                Cancel::Delete
            } else {
                Cancel::Post
            },
            state: if paths.has(STATE) {
                StateCheck::Route
            } else if paths.has_method(FORM, "get") {
                StateCheck::Detail
            } else {
                StateCheck::None
            },
        }
    }

    /// The generation whose listing answered (found by trying them in order).
    pub(super) fn listed_at(listing: Listing) -> FormRoutes {
        match listing {
            Listing::Forms => FormRoutes::CURRENT,
            Listing::Requests => FormRoutes::REQUESTS,
            Listing::None => FormRoutes::UNLISTED,
        }
    }
}

/// The server's `/doc`, as far as it has been read.
#[derive(Clone, Copy)]
pub(super) enum Description {
    /// Not read yet, or it gave no answer to go by (asked again at the
    /// next resync).
    Unread,
    /// Read: the routes it names, `None` when the server publishes none.
    Read(Option<FormRoutes>),
}

/// Whether an error says the route is not there (as opposed to failing):
/// a 404 or 405, or a web page where JSON was expected.
pub(super) fn missing(error: &BackendError) -> bool {
    matches!(
        error,
        BackendError::NotFound { .. }
            | BackendError::NotJson { .. }
            | BackendError::Server {
                status: 404 | 405,
                ..
            }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_generations_description_gives_its_routes() {
        let doc = |paths: &str| Paths::parse(format!(r#"{{"paths":{{{paths}}}}}"#).as_bytes());
        let current = doc(
            r#""/api/form":{"get":{}},"/api/session/{sessionID}/form/{formID}":{"get":{},"delete":{}}"#,
        );
        assert_eq!(
            FormRoutes::from_paths(&current.unwrap()),
            FormRoutes::CURRENT
        );
        let requests = doc(
            r#""/api/form/request":{"get":{}},"/api/session/{sessionID}/form/{formID}":{"get":{}},"/api/session/{sessionID}/form/{formID}/state":{"get":{}},"/api/session/{sessionID}/form/{formID}/cancel":{"post":{}}"#,
        );
        assert_eq!(
            FormRoutes::from_paths(&requests.unwrap()),
            FormRoutes::REQUESTS
        );
        let unlisted = doc(
            r#""/api/session/{sessionID}/form/{formID}/state":{"get":{}},"/api/session/{sessionID}/form/{formID}/cancel":{"post":{}}"#,
        );
        assert_eq!(
            FormRoutes::from_paths(&unlisted.unwrap()),
            FormRoutes::UNLISTED
        );
    }
}
