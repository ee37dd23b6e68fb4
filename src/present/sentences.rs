//! The sentences for what the broker reports: each resolution by its
//! reason and facts ([`Why`]), each [`Notice`]. Worded here only, so a
//! catalogue can replace them.

use std::time::Duration;

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
                    format!("Rejected \"{title}\"")
                }
                Decider::Person => format!("Answered \"{title}\""),
                Decider::Policy { explanation } => explanation.clone(),
                Decider::Timeout { after, explanation } => {
                    format!("no answer within {} s: {explanation}", after.as_secs_f64())
                }
            };
            if *as_cancelled {
                text.push_str(" (sent as \"cancelled\": the agent offers no reject option)");
            }
            if *applied_despite_failure {
                text.push_str(&format!(
                    " (the connection failed after the server took it: \"{title}\" is not pending any more)"
                ));
            }
            text
        }
        Why::Elsewhere => match reason {
            Reason::RejectedElsewhere => format!("\"{title}\" was rejected elsewhere"),
            _ => format!("\"{title}\" was answered elsewhere"),
        },
        Why::AgentStopped => format!("\"{title}\": the agent no longer waits for an answer"),
        Why::Overtaken => {
            let what = match reason {
                Reason::AnsweredElsewhere => "was answered elsewhere",
                Reason::RejectedElsewhere => "was rejected elsewhere",
                _ => "ended",
            };
            format!("\"{title}\" {what} while your decision was being sent; yours was not sent")
        }
        Why::GoneOnSend => {
            format!("\"{title}\" was already answered elsewhere or its session ended")
        }
        Why::NoLongerListed { server } => format!("\"{title}\" is no longer pending on {server}"),
        Why::ServerRemoved { server } => {
            format!("\"{title}\": its server {server} was removed from the configuration")
        }
    }
}

/// A notice in one sentence (without the `ask-lsp: ` a face may put first).
pub(crate) fn notice(notice: &Notice) -> String {
    match notice {
        Notice::IdTooLong { server, max } => format!(
            "A prompt from {server} has an id over {max} bytes and was not taken in. Answer it in the agent's own interface."
        ),
        Notice::Unshowable {
            server,
            key,
            error,
            stand_in,
        } => {
            let then = match stand_in {
                true => "It is listed so that you can reject it.",
                false => "Answer it in the agent's own interface.",
            };
            format!("A prompt from {server} cannot be shown ({key}): {error}. {then}")
        }
        Notice::StoreFull { max } => format!(
            "{max} prompts are already pending; more are not taken in until some are answered."
        ),
        Notice::AutomaticInvalid { title, error } => {
            format!("\"{title}\": the automatic answer is not valid ({error}); asking you instead")
        }
        Notice::AutomaticNotSent { title, error } => format!(
            "\"{title}\": the automatic decision could not be sent ({error}); asking you instead"
        ),
        Notice::Invalid { server, error } => format!("{server}: {error}"),
        Notice::NotificationsFailed { error } => {
            format!("desktop notifications (notify.desktop) do not work: {error}")
        }
        Notice::Dropped { dropped } => format!(
            "{dropped} more messages came while the editor was busy; they are in ask-lsp's log"
        ),
    }
}

/// A server reached again after its connection was lost.
pub(crate) fn connected_again(server: &str) -> String {
    format!("{server}: connected again")
}

/// Messages past the pop-up burst, summed up.
pub(crate) fn held_back(count: usize) -> String {
    format!("{count} more messages in the last seconds are in the log (Output / :LspLog)")
}

/// An editor's answer that does not parse.
pub(crate) fn invalid_answer(key: &str, error: &str) -> String {
    format!("the editor's answer to {key} is not valid: {error}")
}

/// A plain prompt left unanswered goes behind the others; `list` is the
/// command that lists it.
pub(crate) fn rotated(key: &str, after: Duration, list: &str) -> String {
    format!(
        "{key} had no answer for {} s; showing the next prompt (it is still pending: code actions and {list} list it)",
        after.as_secs_f64()
    )
}

/// A notification's summary for several prompts waiting.
pub(crate) fn prompts_waiting(count: usize) -> String {
    format!("{count} prompts waiting")
}

/// The last line of a notification that names only the first few.
pub(crate) fn and_more(count: usize) -> String {
    format!("and {count} more")
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
