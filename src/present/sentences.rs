//! The sentences for what the broker reports: each resolution by its
//! reason and facts ([`Why`]), each [`Notice`], from the catalogue
//! ([`super::i18n`]).

use std::fmt;
use std::time::Duration;

use super::backend_error::backend_error;
use super::i18n::{Locale, in_locale, tr};
use super::invalid::prompt_error;
use crate::broker::{BrokerError, Notice};
use crate::prompt::draft::DraftError;
use crate::prompt::{Decider, Reason, Why};
use crate::settings::ConfigError;
use crate::text;

/// What happened to the prompt titled `title`, in one sentence.
pub(crate) fn resolution(title: &str, reason: Reason, why: &Why) -> String {
    match why {
        Why::Sent {
            by,
            as_cancelled,
            applied_despite_failure,
        } => {
            let mut text = match by {
                Decider::Person if reason == Reason::RejectedHere => {
                    tr!("sentence.rejected", title = title)
                }
                Decider::Person => tr!("sentence.answered", title = title),
                // A policy's explanation is the configuration's own words.
                Decider::Policy { explanation } => explanation.clone(),
                Decider::Timeout { after, explanation } => tr!(
                    "sentence.timeout",
                    seconds = after.as_secs_f64(),
                    explanation = explanation
                ),
            };
            if *as_cancelled {
                text.push_str(&tr!("sentence.sent_as_cancelled"));
            }
            if *applied_despite_failure {
                text.push_str(&tr!("sentence.applied_despite_failure", title = title));
            }
            text
        }
        Why::Elsewhere => match reason {
            Reason::RejectedElsewhere => tr!("sentence.rejected_elsewhere", title = title),
            _ => tr!("sentence.answered_elsewhere", title = title),
        },
        Why::AgentStopped => tr!("sentence.agent_stopped", title = title),
        Why::Overtaken => match reason {
            Reason::AnsweredElsewhere => tr!("sentence.overtaken_answered", title = title),
            Reason::RejectedElsewhere => tr!("sentence.overtaken_rejected", title = title),
            _ => tr!("sentence.overtaken_ended", title = title),
        },
        Why::GoneOnSend => tr!("sentence.gone_on_send", title = title),
        Why::NoLongerListed { server } => {
            tr!("sentence.no_longer_listed", title = title, server = server)
        }
        Why::ServerRemoved { server } => {
            tr!("sentence.server_removed", title = title, server = server)
        }
    }
}

/// A notice in one sentence (without the `ask-lsp: ` a face may put first).
pub(crate) fn notice(notice: &Notice) -> String {
    match notice {
        Notice::IdTooLong { server, max } => {
            tr!("notice.id_too_long", server = server, max = max)
        }
        Notice::Unshowable {
            server,
            key,
            error,
            stand_in,
        } => match (
            stand_in,
            super::cut::for_display(key, text::DISPLAY_ID_CHARS),
        ) {
            (true, key) => tr!(
                "notice.unshowable_listed",
                server = server,
                key = key,
                error = prompt_error(error)
            ),
            (false, key) => tr!(
                "notice.unshowable",
                server = server,
                key = key,
                error = prompt_error(error)
            ),
        },
        Notice::StoreFull { max } => tr!("notice.store_full", max = max),
        Notice::AutomaticInvalid { title, error } => {
            let title = super::who::title(title);
            tr!(
                "notice.automatic_invalid",
                title = title,
                error = prompt_error(error)
            )
        }
        Notice::AutomaticNotSent { title, error } => {
            let title = super::who::title(title);
            tr!(
                "notice.automatic_not_sent",
                title = title,
                error = backend_error(error)
            )
        }
        Notice::Problem { server, problem } => {
            format!("{server}: {}", super::problem::problem(problem))
        }
        Notice::NotificationsFailed { error } => {
            tr!("notice.notifications_failed", error = error)
        }
        Notice::Dropped { dropped } => tr!("notice.dropped", count = dropped),
    }
}

/// The configuration's error in the person's language; its detail names
/// keys as the configuration spells them, so it stays as written.
pub(crate) fn config_error(error: &ConfigError) -> String {
    match error {
        // A flag's error is its own words: the flag as typed, and why.
        ConfigError::Flag(words) => words.clone(),
        _ => invalid_configuration(&error.detail().unwrap_or_default()),
    }
}

pub(crate) fn invalid_configuration(detail: &str) -> String {
    tr!("lsp.invalid_configuration", detail = detail)
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || config_error(self)))
    }
}

impl std::error::Error for ConfigError {}

/// A broker error in the person's language: the broker states the facts,
/// the presentation floor words them (keys come from the client: shown
/// and bounded).
pub(crate) fn broker_error(error: &BrokerError) -> String {
    let shown = |key: &str| super::cut::for_display(key, text::DISPLAY_ID_CHARS).into_owned();
    match error {
        BrokerError::UnknownKey(key) => tr!("error.unknown_key", key = shown(key)),
        BrokerError::Busy(key) => tr!("error.busy", key = shown(key)),
        BrokerError::OnlyRejected(key) => tr!("error.only_rejected", key = shown(key)),
        BrokerError::Closed => shutting_down(),
        BrokerError::Invalid(error) => prompt_error(error),
        BrokerError::Backend(error) => backend_error(error),
    }
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || broker_error(self)))
    }
}

impl std::error::Error for BrokerError {}

/// Why a piece of an answer was refused, naming the prompt where it is
/// about its shape. Keys come from clients: shown and bounded.
pub(crate) fn draft_error(error: &DraftError, key: &str) -> String {
    let key = super::cut::for_display(key, text::DISPLAY_ID_CHARS);
    match error {
        DraftError::Invalid(error) => prompt_error(error),
        DraftError::NoSuchQuestion(index) => {
            tr!("error.no_such_question", key = key, index = index)
        }
        DraftError::NoSuchField(index) => tr!("error.no_such_field", key = key, index = index),
    }
}

pub(crate) fn shutting_down() -> String {
    tr!("error.shutting_down")
}

/// A server reached again after its connection was lost.
pub(crate) fn connected_again(server: &str) -> String {
    tr!("notice.connected_again", server = server)
}

/// Messages past the pop-up burst, summed up.
pub(crate) fn held_back(count: usize) -> String {
    tr!("notice.held_back", count = count)
}

/// A question asking for a secret, on a surface that cannot type it masked.
pub(crate) fn secret_elsewhere(title: &str) -> String {
    tr!("notice.secret_elsewhere", title = title)
}

/// An editor's answer that does not parse.
pub(crate) fn invalid_answer(key: &str, error: &str) -> String {
    tr!("notice.invalid_answer", key = key, error = error)
}

/// A plain prompt left unanswered goes behind the others; `list` is the
/// command that lists it.
pub(crate) fn rotated(key: &str, after: Duration, list: &str) -> String {
    tr!(
        "notice.rotated",
        key = key,
        seconds = after.as_secs_f64(),
        list = list
    )
}

/// A notification's summary for several prompts waiting.
pub(crate) fn prompts_waiting(count: usize) -> String {
    tr!("notify.prompts_waiting", count = count)
}

/// The last line of a notification that names only the first few.
pub(crate) fn and_more(count: usize) -> String {
    tr!("notify.and_more", count = count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_piece_names_its_prompt_shown_and_bounded() {
        assert_eq!(
            draft_error(&DraftError::NoSuchQuestion(7), "d/que_1"),
            "prompt d/que_1 has no question 7"
        );
        assert_eq!(
            draft_error(&DraftError::NoSuchField(2), "d/frm\u{1b}[2J"),
            "prompt d/frm␛[2J has no form field 2"
        );
    }

    #[test]
    fn every_sent_decision_says_who_and_what_else_happened() {
        let sent = |by, as_cancelled, applied_despite_failure| Why::Sent {
            by,
            as_cancelled,
            applied_despite_failure,
        };
        assert_eq!(
            resolution(
                "T",
                Reason::RejectedHere,
                &sent(Decider::Person, true, false)
            ),
            "Rejected \"T\" (sent as \"cancelled\": the agent offers no reject option)"
        );
        assert_eq!(
            resolution(
                "T",
                Reason::AnsweredHere,
                &sent(Decider::Person, false, true)
            ),
            "Answered \"T\" (the connection failed after the server took it: \"T\" is not pending any more)"
        );
        let timeout = Decider::Timeout {
            after: Duration::from_millis(1500),
            explanation: "nobody answered".into(),
        };
        assert_eq!(
            resolution("T", Reason::Timeout, &sent(timeout, false, false)),
            "no answer within 1.5 s: nobody answered"
        );
        assert_eq!(
            resolution("T", Reason::SessionEnded, &Why::Overtaken),
            "\"T\" ended while your decision was being sent; yours was not sent"
        );
    }
}
