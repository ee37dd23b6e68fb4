//! The sentences for what the broker reports: each resolution by its
//! reason and facts ([`Why`]), each [`Notice`], from the catalogue
//! ([`super::i18n`]).

use std::time::Duration;

use super::i18n::tr;
use super::invalid::prompt_error;
use crate::prompt::{Decider, Notice, Reason, Why};

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
        } => match stand_in {
            true => tr!(
                "notice.unshowable_listed",
                server = server,
                key = key,
                error = prompt_error(error)
            ),
            false => tr!(
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
            tr!("notice.automatic_not_sent", title = title, error = error)
        }
        Notice::Invalid { server, error } => format!("{server}: {error}"),
        Notice::NotificationsFailed { error } => {
            tr!("notice.notifications_failed", error = error)
        }
        Notice::Dropped { dropped } => tr!("notice.dropped", count = dropped),
    }
}

/// Why a decision was refused (the broker's errors, by key).
pub(crate) fn unknown_key(key: &str) -> String {
    tr!("error.unknown_key", key = key)
}

pub(crate) fn busy(key: &str) -> String {
    tr!("error.busy", key = key)
}

pub(crate) fn only_rejected(key: &str) -> String {
    tr!("error.only_rejected", key = key)
}

pub(crate) fn no_such_question(key: &str, index: usize) -> String {
    tr!("error.no_such_question", key = key, index = index)
}

pub(crate) fn no_such_field(key: &str, index: usize) -> String {
    tr!("error.no_such_field", key = key, index = index)
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
