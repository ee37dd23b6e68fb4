//! A server's failure ([`BackendError`]) worded from the catalogue: in the
//! person's language, and in English as the error's `Display` (what logs and
//! `status --json` keep), so each sentence exists once. The server an error
//! names is worded here too ([`server_label`]: "OpenCode at http://…"). What
//! the server or the operating system said (a message, "connection
//! refused"), URLs, paths, commands and variable names go in as the error
//! holds them.

use std::fmt;
use std::time::Duration;

use super::i18n::{Locale, in_locale, tr};
use super::problem::id_error;
use crate::backends::cause::ChunkFault;
use crate::backends::{
    AuthAdvice, BackendError, BodyKind, Cause, ConnectHint, Expected, RefuseReason, ServerLabel,
    StartHint,
};
use crate::settings::ServerKind;
use crate::text;

/// `error` in the person's language.
pub(crate) fn backend_error(error: &BackendError) -> String {
    match error {
        BackendError::NotFound { server } => {
            tr!("backend.not_found", server = server_label(server))
        }
        BackendError::Unauthorized { server, advice } => tr!(
            "backend.unauthorized",
            server = server_label(server),
            advice = auth_advice(*advice)
        ),
        BackendError::BadRequest { server, message } => {
            tr!(
                "backend.bad_request",
                server = server_label(server),
                message = said(message)
            )
        }
        BackendError::Server {
            server,
            status,
            message,
        } => tr!(
            "backend.server",
            server = server_label(server),
            status = status,
            message = said(message)
        ),
        BackendError::NotJson {
            server,
            status,
            kind,
            expected,
        } => tr!(
            "backend.not_json",
            server = server_label(server),
            status = status,
            kind = body_kind(kind),
            expected = expected_server(*expected)
        ),
        BackendError::Redirect { server, status } => {
            tr!(
                "backend.redirect",
                server = server_label(server),
                status = status
            )
        }
        BackendError::Timeout { server, after } => {
            tr!(
                "backend.timeout",
                server = server_label(server),
                after = duration(*after)
            )
        }
        BackendError::Refused { server, reason } => {
            tr!(
                "backend.refused",
                server = server_label(server),
                reason = refuse_reason(reason)
            )
        }
        BackendError::Connect {
            server,
            cause: why,
            hint,
        } => tr!(
            "backend.connect",
            server = server_label(server),
            cause = cause(why),
            hint = connect_hint(*hint)
        ),
        BackendError::Unanswered { server } => {
            tr!("backend.unanswered", server = server_label(server))
        }
        BackendError::SubscriptionUnanswered { server } => {
            tr!(
                "backend.subscription_unanswered",
                server = server_label(server)
            )
        }
        BackendError::Malformed {
            server,
            cause: why,
            expected,
        } => tr!(
            "backend.malformed",
            server = server_label(server),
            cause = cause(why),
            expected = expected_server(*expected)
        ),
        BackendError::NoEvents {
            server,
            status,
            expected,
        } => tr!(
            "backend.no_events",
            server = server_label(server),
            status = status,
            expected = expected_server(*expected)
        ),
        BackendError::Stream { server, cause: why } => {
            tr!(
                "backend.stream",
                server = server_label(server),
                cause = cause(why)
            )
        }
        BackendError::Stalled { server, after } => {
            tr!(
                "backend.stalled",
                server = server_label(server),
                after = duration(*after)
            )
        }
        BackendError::HookSocket { message } => tr!("backend.hook_socket", message = message),
        BackendError::NoCodexDaemon { home } => tr!("backend.no_codex_daemon", home = home),
        BackendError::CodexSocketRefused { what } => {
            tr!("backend.codex_socket_refused", what = what)
        }
        BackendError::CodexHomeNotDirectory { home } => {
            tr!("backend.codex_home_not_directory", home = home)
        }
        BackendError::Closed => tr!("backend.closed"),
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || backend_error(self)))
    }
}

impl std::error::Error for BackendError {}

/// Why a connection failed or broke off, in the person's language; what
/// the system or a library said, as it said it.
pub(crate) fn cause(cause: &Cause) -> String {
    match cause {
        Cause::TimedOut => tr!("cause.timed_out"),
        Cause::Failed => tr!("cause.failed"),
        Cause::ClosedBeforeResponse => tr!("cause.closed_before_response"),
        Cause::ClosedMidResponse => tr!("cause.closed_mid_response"),
        Cause::DaemonClosed => tr!("cause.daemon_closed"),
        Cause::HeadTooLarge { kib } => tr!("cause.head_too_large", kib = kib),
        Cause::NotHttp { detail } => tr!("cause.not_http", detail = detail),
        Cause::Framing(ChunkFault::ChunkSize) => tr!("cause.chunk_size"),
        Cause::Framing(ChunkFault::ChunkSizeTooLarge) => tr!("cause.chunk_size_too_large"),
        Cause::Framing(ChunkFault::ChunkLineTooLong) => tr!("cause.chunk_line_too_long"),
        Cause::Framing(ChunkFault::ChunkEnd) => tr!("cause.chunk_end"),
        Cause::Framing(ChunkFault::TrailersTooLarge) => tr!("cause.trailers_too_large"),
        Cause::Said(said) => said.clone(),
    }
}

/// In English, for logs.
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || cause(self)))
    }
}

/// What the server said, with the note of what its cut hid in the
/// person's language.
fn said(message: &text::Cut<'static>) -> String {
    message.clone().noted(super::cut::note).into_owned()
}

/// Why an answer was not sent, in the person's language.
fn refuse_reason(reason: &RefuseReason) -> String {
    match reason {
        RefuseReason::AnswerDoesNotFit => tr!("refuse.answer_does_not_fit"),
        RefuseReason::NotAnAnswerToQuestions => tr!("refuse.not_an_answer_to_questions"),
        RefuseReason::NotAnAnswerToForm => tr!("refuse.not_an_answer_to_form"),
        RefuseReason::NotAnAnswerToPermission => tr!("refuse.not_an_answer_to_permission"),
        RefuseReason::NotAChoice => tr!("refuse.not_a_choice"),
        RefuseReason::NoAmendment => tr!("refuse.no_amendment"),
        RefuseReason::NotOneAnswerPerQuestion => tr!("refuse.not_one_answer_per_question"),
        RefuseReason::BadId(error) => id_error(error),
        RefuseReason::FormUnshowable { detail } => {
            tr!("refuse.form_unshowable", detail = detail)
        }
        RefuseReason::SessionUnconfirmed => tr!("refuse.session_unconfirmed"),
        RefuseReason::PermissionUnconfirmed(cause) => tr!(
            "refuse.permission_unconfirmed",
            error = backend_error(cause)
        ),
    }
}

/// The server `label` names, in the person's language: "OpenCode at
/// http://127.0.0.1:4096".
pub(crate) fn server_label(label: &ServerLabel) -> String {
    match label {
        ServerLabel::OpenCode { url } => tr!("server.opencode", url = url),
        ServerLabel::SandboxAgent { url, server_id } => {
            tr!("server.sandbox_agent", url = url, server_id = server_id)
        }
        ServerLabel::CodexDaemon { home } => tr!("server.codex_daemon", home = home),
        ServerLabel::Hook => tr!("server.hook"),
    }
}

impl fmt::Display for ServerLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || server_label(self)))
    }
}

/// What kind of server a configured one is, in the person's language
/// (`status`, `watch`): "OpenCode 2.x", "Codex daemon".
pub(crate) fn server_kind(kind: ServerKind) -> String {
    match kind {
        ServerKind::OpenCode => tr!("server.kind.opencode"),
        ServerKind::OpenCode1 => tr!("server.kind.opencode1"),
        ServerKind::OpenCode2 => tr!("server.kind.opencode2"),
        ServerKind::SandboxAgent => tr!("server.kind.sandbox_agent"),
        ServerKind::Hook => tr!("server.kind.hook"),
        ServerKind::CodexDaemon => tr!("server.kind.codex_daemon"),
    }
}

/// `ask-lsp status`: connected, but no listing came within `after`.
pub(crate) fn no_listing(after: Duration) -> String {
    tr!("backend.no_listing", after = duration(after))
}

/// `ask-lsp status`: nothing came within `after`.
pub(crate) fn no_answer(after: Duration) -> String {
    tr!("backend.no_answer", after = duration(after))
}

/// As `{:?}` writes it ("10s", "1.5s"): the same in every language.
fn duration(after: Duration) -> String {
    format!("{after:?}")
}

fn expected_server(expected: Expected) -> String {
    match expected {
        Expected::OpenCode => tr!("backend.expected.opencode"),
        Expected::OpenCode2 => tr!("backend.expected.opencode2"),
        Expected::SandboxAgent => tr!("backend.expected.sandbox_agent"),
    }
}

fn connect_hint(hint: ConnectHint) -> String {
    match hint {
        ConnectHint::Start(StartHint::OpenCodeServe) => tr!("backend.hint.opencode_serve"),
        ConnectHint::Start(StartHint::SandboxAgentServer) => {
            tr!("backend.hint.sandbox_agent_server")
        }
        ConnectHint::UntrustedCertificate => tr!("backend.hint.untrusted_certificate"),
    }
}

fn auth_advice(advice: AuthAdvice) -> String {
    match advice {
        AuthAdvice::OpenCodePassword => tr!("backend.auth.opencode_password"),
        AuthAdvice::SandboxAgentToken => tr!("backend.auth.sandbox_agent_token"),
    }
}

fn body_kind(kind: &BodyKind) -> String {
    match kind {
        BodyKind::Html => tr!("backend.body.html"),
        BodyKind::Other(content_type) => tr!(
            "backend.body.other",
            content_type = format!("{content_type:?}")
        ),
    }
}

#[cfg(test)]
#[path = "backend_error_tests.rs"]
mod tests;
