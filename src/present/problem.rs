//! What an adapter could not do with what its server sent ([`Problem`]),
//! and why an id may not go into a URL ([`IdError`]), worded from the
//! catalogue: in the person's language, and in English as `IdError`'s
//! `Display` (what logs keep). A detail the adapter quotes from the
//! server's data goes in as it is.

use std::fmt;

use super::backend_error::backend_error;
use super::i18n::{Locale, in_locale, tr};
use super::invalid::kind;
use crate::backends::{AnswerIn, Declined, Problem};
use crate::text::{IdError, URL_SEGMENT_MAX};

/// `problem` in the person's language.
pub(crate) fn problem(problem: &Problem) -> String {
    match problem {
        Problem::CannotAnswer {
            kind: name,
            refused,
            answer_in,
        } => {
            let (kind, refused) = (kind(*name), id_error(refused));
            match answer_in {
                AnswerIn::OpenCode => {
                    tr!(
                        "problem.cannot_answer.opencode",
                        kind = kind,
                        refused = refused
                    )
                }
                AnswerIn::AgentsOwnInterface => {
                    tr!(
                        "problem.cannot_answer.agent",
                        kind = kind,
                        refused = refused
                    )
                }
            }
        }
        Problem::FormUnshowable { detail } => tr!("problem.form_unshowable", detail = detail),
        Problem::NoFormListing => tr!("problem.no_form_listing"),
        Problem::NoNewEngineListing { route } => {
            tr!("problem.no_new_engine_listing", route = route)
        }
        Problem::ToolLookup(error) => tr!("problem.tool_lookup", error = backend_error(error)),
        Problem::AgentFormRefused {
            detail,
            declined,
            early,
        } => {
            let detail = match early {
                true => format!("{detail}; {}", tr!("problem.agent_form.before_start")),
                false => detail.clone(),
            };
            agent_form_refused(&detail, declined)
        }
    }
}

fn agent_form_refused(detail: &str, declined: &Declined) -> String {
    match declined {
        Declined::Yes => tr!("problem.agent_form.declined", detail = detail),
        Declined::Refused(status) => tr!(
            "problem.agent_form.decline_refused",
            detail = detail,
            status = status
        ),
        Declined::Failed(error) => tr!(
            "problem.agent_form.decline_failed",
            detail = detail,
            error = backend_error(error)
        ),
    }
}

/// `error` in the person's language.
pub(crate) fn id_error(error: &IdError) -> String {
    match error {
        IdError::Empty => tr!("id.empty"),
        IdError::TooLong { shown, len } => {
            tr!(
                "id.too_long",
                shown = shown,
                len = len,
                max = URL_SEGMENT_MAX
            )
        }
        IdError::BadChar { shown, found, at } => {
            let found = match found.is_ascii_graphic() {
                true => format!("'{found}'"),
                false => format!("U+{:04X}", *found as u32),
            };
            tr!("id.bad_char", shown = shown, found = found, at = at)
        }
    }
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || id_error(self)))
    }
}

impl std::error::Error for IdError {}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::backends::BackendError;
    use crate::present::i18n::assert_translated;
    use crate::prompt::KindName;

    fn problems() -> Vec<Problem> {
        let refused = IdError::BadChar {
            shown: "que/1".into(),
            found: '/',
            at: 3,
        };
        let detail = || "form mode without requestedSchema".to_owned();
        vec![
            Problem::CannotAnswer {
                kind: KindName::Form,
                refused: refused.clone(),
                answer_in: AnswerIn::OpenCode,
            },
            Problem::CannotAnswer {
                kind: KindName::Questions,
                refused,
                answer_in: AnswerIn::AgentsOwnInterface,
            },
            Problem::FormUnshowable { detail: detail() },
            Problem::NoFormListing,
            Problem::NoNewEngineListing {
                route: "/question".into(),
            },
            Problem::ToolLookup(BackendError::Timeout {
                server: crate::backends::ServerLabel::OpenCode {
                    url: "http://127.0.0.1:4096".into(),
                },
                after: std::time::Duration::from_secs(10),
            }),
            Problem::AgentFormRefused {
                detail: detail(),
                declined: Declined::Yes,
                early: false,
            },
            Problem::AgentFormRefused {
                detail: detail(),
                declined: Declined::Refused(500),
                early: false,
            },
            Problem::AgentFormRefused {
                detail: detail(),
                declined: Declined::Failed(BackendError::Closed),
                early: false,
            },
            Problem::AgentFormRefused {
                detail: detail(),
                declined: Declined::Yes,
                early: true,
            },
        ]
    }

    /// Every problem an adapter can raise, walked in Chinese: no English
    /// sentence of ask-lsp's own, the server's detail kept as it is.
    #[test]
    fn every_problem_an_adapter_raises_is_worded_in_chinese() {
        let mut seen = BTreeSet::new();
        for problem in problems() {
            let english = in_locale(Locale::En, || super::problem(&problem));
            let chinese = in_locale(Locale::ZhCn, || super::problem(&problem));
            assert_translated(&english, &chinese, &mut seen);
            // Nor the server's label in English (#45): "OpenCode at …".
            assert!(!chinese.contains(" at "), "{chinese}");
            if let Problem::FormUnshowable { detail } | Problem::AgentFormRefused { detail, .. } =
                &problem
            {
                assert!(chinese.contains(detail.as_str()), "{chinese}");
            }
        }
        assert_eq!(
            in_locale(Locale::ZhCn, || super::problem(&problems()[0])),
            "无法在此回答表单提示（拒绝了 id“que/1”：第 3 字节处为 '/'（id 只能由 ASCII 字母、数字、“_”和“-”组成））；请在 OpenCode 中回答"
        );
    }

    #[test]
    fn an_id_error_displays_in_english_whatever_the_persons_language() {
        let error = IdError::BadChar {
            shown: "a\\u{1b}".into(),
            found: '\u{1b}',
            at: 1,
        };
        assert_eq!(
            in_locale(Locale::ZhCn, || error.to_string()),
            "refused id \"a\\u{1b}\": U+001B at byte 1 (ids are ASCII letters, digits, '_' and '-')"
        );
        let mut seen = BTreeSet::new();
        for error in [
            IdError::Empty,
            IdError::TooLong {
                shown: "x…".into(),
                len: 300,
            },
            error,
        ] {
            let english = error.to_string();
            let chinese = in_locale(Locale::ZhCn, || id_error(&error));
            assert_translated(&english, &chinese, &mut seen);
        }
    }
}
