//! The questions kind: one or more questions, each with options (single or
//! multiple choice) and, where the agent allows it, a typed answer.

use super::{PromptError, check_len, limits, line, text};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Question {
    /// A short label (may be empty).
    pub header: String,
    pub text: String,
    pub options: Vec<Choice>,
    pub multiple: bool,
    /// Whether a typed answer is allowed.
    pub custom: bool,
    /// The typed answer is a secret (a password, a token): typed masked
    /// on every surface that can mask, taken exactly as typed, and never
    /// shown, logged or quoted in an error; a surface that cannot mask
    /// leaves the question to the agent's own terminal.
    pub secret: bool,
    /// `Some(why)` on ask-lsp's stand-in for questions it could not show:
    /// `header` and `text` are then empty (none of the agent's words are
    /// kept) and `present` says why, in the person's language.
    pub cannot_show: Option<Box<PromptError>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// What a person sees (neutralised once checked).
    pub label: String,
    pub description: String,
    /// The label exactly as the agent sent it: what the agent gets back.
    pub value: String,
}

impl Choice {
    pub fn new(label: String, description: String) -> Self {
        Choice {
            value: label.clone(),
            label,
            description,
        }
    }
}

impl Question {
    /// The header, else the question text.
    pub fn name(&self) -> &str {
        if self.header.is_empty() {
            &self.text
        } else {
            &self.header
        }
    }

    /// Checks one question's answer; typed text is trimmed.
    pub fn validate(&self, index: usize, answer: Vec<String>) -> Result<Vec<String>, PromptError> {
        if !self.multiple && answer.len() != 1 {
            return Err(PromptError::SingleSelect {
                index,
                got: answer.len(),
            });
        }
        let mut checked: Vec<String> = Vec::with_capacity(answer.len());
        for value in answer {
            // An option goes back exactly as the agent sent it.
            let value = if let Some(option) = self.options.iter().find(|o| o.label == value) {
                option.value.clone()
            } else if self.custom {
                // A secret is taken exactly as typed: a space may be part of it.
                let typed = match self.secret {
                    true => value.as_str(),
                    false => value.trim(),
                };
                if typed.is_empty() {
                    return Err(PromptError::EmptyAnswer { index });
                }
                check_len("typed answer", typed, limits::CUSTOM_ANSWER_LEN)?;
                typed.to_owned()
            } else {
                return Err(PromptError::NotAnOption { index, value });
            };
            if checked.contains(&value) {
                return Err(PromptError::DuplicateAnswer { index });
            }
            checked.push(value);
        }
        Ok(checked)
    }
}

/// Neutralises and bounds a request's questions.
pub(super) fn checked(mut questions: Vec<Question>) -> Result<Vec<Question>, PromptError> {
    if questions.is_empty() {
        return Err(PromptError::NoQuestions);
    }
    if questions.len() > limits::QUESTIONS {
        return Err(PromptError::TooManyQuestions(questions.len()));
    }
    for (index, q) in questions.iter_mut().enumerate() {
        if q.options.len() > limits::OPTIONS {
            return Err(PromptError::TooManyOptions {
                index,
                count: q.options.len(),
            });
        }
        // A secret is typed: text refused as no option would be quoted in
        // the error.
        q.custom |= q.secret;
        if q.options.is_empty() && !q.custom {
            return Err(PromptError::Unanswerable { index });
        }
        q.header = line("header", &q.header, limits::HEADER_LEN)?;
        q.text = text("question", &q.text, limits::QUESTION_LEN)?;
        for option in &mut q.options {
            option.label = line("option label", &option.label, limits::LABEL_LEN)?;
            option.description = text(
                "option description",
                &option.description,
                limits::DESCRIPTION_LEN,
            )?;
            if option.label.is_empty() {
                return Err(PromptError::Empty {
                    field: "option label",
                });
            }
        }
    }
    Ok(questions)
}

/// Checks one answer per question.
pub(super) fn validate_all(
    questions: &[Question],
    answers: Vec<Vec<String>>,
) -> Result<Vec<Vec<String>>, PromptError> {
    if answers.len() != questions.len() {
        return Err(PromptError::AnswerCount {
            expected: questions.len(),
            got: answers.len(),
        });
    }
    answers
        .into_iter()
        .zip(questions)
        .enumerate()
        .map(|(index, (answer, question))| question.validate(index, answer))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(labels: &[&str], multiple: bool, custom: bool) -> Question {
        Question {
            header: "Color".into(),
            text: "Which color?".into(),
            options: labels
                .iter()
                .map(|l| Choice::new(l.to_string(), String::new()))
                .collect(),
            multiple,
            custom,
            secret: false,
            cannot_show: None,
        }
    }

    fn answers(values: &[&[&str]]) -> Vec<Vec<String>> {
        values
            .iter()
            .map(|a| a.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn single_select_takes_exactly_one_answer() {
        let qs = vec![question(&["Red", "Blue"], false, true)];
        assert_eq!(
            validate_all(&qs, answers(&[&["Red"]])),
            Ok(answers(&[&["Red"]]))
        );
        assert_eq!(
            validate_all(&qs, answers(&[&["Red", "Blue"]])),
            Err(PromptError::SingleSelect { index: 0, got: 2 })
        );
        assert_eq!(
            validate_all(&qs, vec![]),
            Err(PromptError::AnswerCount {
                expected: 1,
                got: 0
            })
        );
    }

    #[test]
    fn typed_text_needs_custom() {
        let qs = vec![question(&["Red"], false, true)];
        assert_eq!(
            validate_all(&qs, answers(&[&["  Green "]])),
            Ok(answers(&[&["Green"]]))
        );
        assert_eq!(
            validate_all(&qs, answers(&[&["   "]])),
            Err(PromptError::EmptyAnswer { index: 0 })
        );
        let strict = vec![question(&["Red"], false, false)];
        assert!(matches!(
            validate_all(&strict, answers(&[&["Green"]])),
            Err(PromptError::NotAnOption { index: 0, .. })
        ));
    }

    #[test]
    fn multi_select_allows_several_but_no_duplicates() {
        let qs = vec![question(&["S", "M"], true, false)];
        assert!(validate_all(&qs, answers(&[&["S", "M"]])).is_ok());
        assert!(validate_all(&qs, answers(&[&[]])).is_ok());
        assert_eq!(
            validate_all(&qs, answers(&[&["S", "S"]])),
            Err(PromptError::DuplicateAnswer { index: 0 })
        );
    }

    #[test]
    fn bounds_are_enforced_with_clear_errors() {
        let many: Vec<String> = (0..10_000).map(|i| format!("o{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = checked(vec![question(&many, false, true)]).unwrap_err();
        assert_eq!(err.to_string(), "question 0 has 10000 options (at most 64)");
        let mut long = question(&[], false, true);
        long.text = "x".repeat(9000);
        assert_eq!(
            checked(vec![long]).unwrap_err().to_string(),
            "question is 9000 characters long (at most 8000)"
        );
        assert_eq!(checked(vec![]).unwrap_err(), PromptError::NoQuestions);
        assert_eq!(
            checked(vec![question(&[], false, false)]).unwrap_err(),
            PromptError::Unanswerable { index: 0 }
        );
    }

    #[test]
    fn a_neutralised_label_is_answered_with_what_the_agent_sent() {
        let raw = "Red\u{1b}[2J\u{202e}";
        let qs = checked(vec![question(&[raw], false, false)]).unwrap();
        assert_eq!(qs[0].options[0].label, "Red␛[2J⟨U+202E⟩");
        assert_eq!(
            validate_all(&qs, answers(&[&["Red␛[2J⟨U+202E⟩"]])),
            Ok(answers(&[&[raw]]))
        );
    }

    #[test]
    fn a_picked_option_goes_back_exactly_as_sent() {
        // Joiners are part of the label: the agent must get its own option back.
        let qs = checked(vec![question(
            &["👩\u{200d}💻 Dev", "می\u{200c}خواهم"],
            false,
            false,
        )])
        .unwrap();
        for label in ["👩\u{200d}💻 Dev", "می\u{200c}خواهم"] {
            assert_eq!(
                validate_all(&qs, answers(&[&[label]])),
                Ok(answers(&[&[label]]))
            );
        }
    }
}
