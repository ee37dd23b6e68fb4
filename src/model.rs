//! The question model: OpenCode's `QuestionRequest` shape, answer validation,
//! and sanitizing of agent-supplied text before anyone sees it.

use serde::{Deserialize, Serialize};

/// Bounds on what an agent may ask. A request over them is refused with a
/// clear error instead of being shown half-broken.
pub mod limits {
    pub const ID_LEN: usize = 256;
    pub const QUESTIONS: usize = 16;
    pub const OPTIONS: usize = 64;
    pub const HEADER_LEN: usize = 200;
    pub const QUESTION_LEN: usize = 8_000;
    pub const LABEL_LEN: usize = 500;
    pub const DESCRIPTION_LEN: usize = 2_000;
    pub const CUSTOM_ANSWER_LEN: usize = 8_000;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionInfo {
    pub question: String,
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    #[serde(default)]
    pub multiple: bool,
    /// OpenCode's default is `true`: typed answers are allowed unless the
    /// agent turned them off.
    #[serde(default = "default_true")]
    pub custom: bool,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRef {
    #[serde(rename = "messageID")]
    pub message_id: String,
    #[serde(rename = "callID")]
    pub call_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub questions: Vec<QuestionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
}

/// One `Vec<String>` per question: the chosen labels and/or typed text.
pub type Answers = Vec<Vec<String>>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("request has no questions")]
    NoQuestions,
    #[error("request has {0} questions (at most {max})", max = limits::QUESTIONS)]
    TooManyQuestions(usize),
    #[error("question {index} has {count} options (at most {max})", max = limits::OPTIONS)]
    TooManyOptions { index: usize, count: usize },
    #[error("question {index} has no options and does not allow a typed answer")]
    Unanswerable { index: usize },
    #[error("{field} is {len} characters long (at most {max})")]
    TooLong {
        field: &'static str,
        len: usize,
        max: usize,
    },
    #[error("{field} is empty")]
    Empty { field: &'static str },
    #[error("expected {expected} answers (one per question), got {got}")]
    AnswerCount { expected: usize, got: usize },
    #[error("question {index} takes exactly one answer, got {got}")]
    SingleSelect { index: usize, got: usize },
    #[error(
        "question {index}: {value:?} is not one of the options and this question does not allow a typed answer"
    )]
    NotAnOption { index: usize, value: String },
    #[error("question {index}: an answer is empty")]
    EmptyAnswer { index: usize },
    #[error("question {index}: an answer is given twice")]
    DuplicateAnswer { index: usize },
}

impl QuestionRequest {
    /// Sanitizes every agent-supplied string and checks the bounds. The
    /// result is what the broker stores, shows and answers against.
    pub fn into_checked(mut self) -> Result<Self, ModelError> {
        check_len("request id", &self.id, limits::ID_LEN)?;
        check_len("session id", &self.session_id, limits::ID_LEN)?;
        if self.id.is_empty() {
            return Err(ModelError::Empty {
                field: "request id",
            });
        }
        if self.questions.is_empty() {
            return Err(ModelError::NoQuestions);
        }
        if self.questions.len() > limits::QUESTIONS {
            return Err(ModelError::TooManyQuestions(self.questions.len()));
        }
        for (index, q) in self.questions.iter_mut().enumerate() {
            if q.options.len() > limits::OPTIONS {
                return Err(ModelError::TooManyOptions {
                    index,
                    count: q.options.len(),
                });
            }
            if q.options.is_empty() && !q.custom {
                return Err(ModelError::Unanswerable { index });
            }
            check_len("header", &q.header, limits::HEADER_LEN)?;
            check_len("question", &q.question, limits::QUESTION_LEN)?;
            q.header = sanitize_line(&q.header);
            q.question = sanitize_text(&q.question);
            for option in &mut q.options {
                check_len("option label", &option.label, limits::LABEL_LEN)?;
                check_len(
                    "option description",
                    &option.description,
                    limits::DESCRIPTION_LEN,
                )?;
                option.label = sanitize_line(&option.label);
                option.description = sanitize_text(&option.description);
                if option.label.is_empty() {
                    return Err(ModelError::Empty {
                        field: "option label",
                    });
                }
            }
        }
        Ok(self)
    }

    /// Checks answers from a person or a policy before they go to the agent.
    /// Typed text is trimmed of surrounding whitespace.
    pub fn validate_answers(&self, answers: Answers) -> Result<Answers, ModelError> {
        if answers.len() != self.questions.len() {
            return Err(ModelError::AnswerCount {
                expected: self.questions.len(),
                got: answers.len(),
            });
        }
        answers
            .into_iter()
            .zip(&self.questions)
            .enumerate()
            .map(|(index, (answer, question))| question.validate_answer(index, answer))
            .collect()
    }
}

impl QuestionInfo {
    pub fn validate_answer(
        &self,
        index: usize,
        answer: Vec<String>,
    ) -> Result<Vec<String>, ModelError> {
        if !self.multiple && answer.len() != 1 {
            return Err(ModelError::SingleSelect {
                index,
                got: answer.len(),
            });
        }
        let mut checked: Vec<String> = Vec::with_capacity(answer.len());
        for value in answer {
            let value = if self.options.iter().any(|o| o.label == value) {
                value
            } else if self.custom {
                let typed = value.trim();
                if typed.is_empty() {
                    return Err(ModelError::EmptyAnswer { index });
                }
                check_len("typed answer", typed, limits::CUSTOM_ANSWER_LEN)?;
                typed.to_owned()
            } else {
                return Err(ModelError::NotAnOption { index, value });
            };
            if checked.contains(&value) {
                return Err(ModelError::DuplicateAnswer { index });
            }
            checked.push(value);
        }
        Ok(checked)
    }
}

fn check_len(field: &'static str, value: &str, max: usize) -> Result<(), ModelError> {
    let len = value.chars().count();
    if len > max {
        return Err(ModelError::TooLong { field, len, max });
    }
    Ok(())
}

/// Text that may span lines (question bodies, descriptions): keeps `\n` and
/// turns tabs into spaces; everything else goes through [`sanitize_line`]'s rules.
pub fn sanitize_text(input: &str) -> String {
    sanitize(input, true)
}

/// One-line text (headers, labels): newlines become spaces.
pub fn sanitize_line(input: &str) -> String {
    sanitize(input, false)
}

/// Drops terminal escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`
/// and two-byte `ESC x`), other C0/C1 controls, DEL, and the Unicode bidi and
/// invisible formatting characters that can make text display differently
/// from what it says.
fn sanitize(input: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // CSI: parameters and intermediates, then one final byte in @..~
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') | Some('P') | Some('_') | Some('^') => {
                    // OSC/DCS/APC/PM: run to BEL or ST (ESC \)
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' if keep_newlines => out.push('\n'),
            '\n' | '\t' => out.push(' '),
            '\r' => {}
            c if c.is_control() => {}
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}' => {}
            c => out.push(c),
        }
    }
    if keep_newlines {
        out.trim_end().to_owned()
    } else {
        out.trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(questions: serde_json::Value) -> QuestionRequest {
        serde_json::from_value(json!({
            "id": "que_1", "sessionID": "ses_1", "questions": questions
        }))
        .unwrap()
    }

    fn color() -> QuestionRequest {
        request(json!([{
            "question": "Which color?", "header": "Color",
            "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "calm"}]
        }]))
        .into_checked()
        .unwrap()
    }

    #[test]
    fn parses_the_captured_shape_with_opencode_defaults() {
        let r = color();
        assert!(r.questions[0].custom);
        assert!(!r.questions[0].multiple);
        assert_eq!(r.tool, None);
    }

    #[test]
    fn single_select_takes_exactly_one_answer() {
        let r = color();
        assert_eq!(
            r.validate_answers(vec![vec!["Red".into()]]).unwrap(),
            vec![vec!["Red".to_string()]]
        );
        assert_eq!(
            r.validate_answers(vec![vec!["Red".into(), "Blue".into()]]),
            Err(ModelError::SingleSelect { index: 0, got: 2 })
        );
        assert_eq!(
            r.validate_answers(vec![]),
            Err(ModelError::AnswerCount {
                expected: 1,
                got: 0
            })
        );
    }

    #[test]
    fn typed_text_needs_custom() {
        let r = color();
        assert_eq!(
            r.validate_answers(vec![vec!["  Green ".into()]]).unwrap(),
            vec![vec!["Green".to_string()]]
        );
        let mut strict = r.clone();
        strict.questions[0].custom = false;
        assert!(matches!(
            strict.validate_answers(vec![vec!["Green".into()]]),
            Err(ModelError::NotAnOption { index: 0, .. })
        ));
        assert_eq!(
            r.validate_answers(vec![vec!["   ".into()]]),
            Err(ModelError::EmptyAnswer { index: 0 })
        );
    }

    #[test]
    fn multi_select_allows_several_but_no_duplicates() {
        let r = request(
            json!([{ "question": "Sizes?", "header": "Sizes", "multiple": true,
            "options": [{"label": "S", "description": ""}, {"label": "M", "description": ""}]}]),
        )
        .into_checked()
        .unwrap();
        assert!(
            r.validate_answers(vec![vec!["S".into(), "M".into()]])
                .is_ok()
        );
        assert!(r.validate_answers(vec![vec![]]).is_ok());
        assert_eq!(
            r.validate_answers(vec![vec!["S".into(), "S".into()]]),
            Err(ModelError::DuplicateAnswer { index: 0 })
        );
    }

    #[test]
    fn bounds_are_enforced_with_clear_errors() {
        let options: Vec<_> = (0..10_000)
            .map(|i| json!({"label": format!("o{i}"), "description": ""}))
            .collect();
        let err = request(json!([{ "question": "q", "header": "h", "options": options }]))
            .into_checked()
            .unwrap_err();
        assert_eq!(err.to_string(), "question 0 has 10000 options (at most 64)");
        let err = request(json!([{ "question": "x".repeat(9000), "header": "h", "options": [] }]))
            .into_checked()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "question is 9000 characters long (at most 8000)"
        );
        assert_eq!(
            request(json!([])).into_checked().unwrap_err(),
            ModelError::NoQuestions
        );
        assert_eq!(
            request(json!([{ "question": "q", "header": "h", "options": [], "custom": false }]))
                .into_checked()
                .unwrap_err(),
            ModelError::Unanswerable { index: 0 }
        );
    }

    #[test]
    fn escapes_controls_and_bidi_are_stripped() {
        assert_eq!(
            sanitize_text("\u{1b}[31mred\u{1b}[0m\u{1b}]0;title\u{7} ok\u{7}\u{0}"),
            "red ok"
        );
        assert_eq!(sanitize_line("a\u{202e}b\u{2066}c\nd\te"), "abc d e");
        assert_eq!(sanitize_text("line1\r\nline2\u{9b}"), "line1\nline2");
        assert_eq!(sanitize_line("\u{1b}]8;;http://x\u{1b}\\link"), "link");
    }
}
