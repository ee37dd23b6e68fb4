//! Why a prompt or an answer is refused, as facts: each reason typed with
//! its numbers and values, so that the presentation floor can word it for a
//! person in their language. The English `Display` is what logs and the
//! agent read (text sent back to the agent stays English).

use super::{TextFormat, limits};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PromptError {
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
    #[error("{field} has {count} entries (at most {max})")]
    TooMany {
        field: &'static str,
        count: usize,
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
    #[error("{0:?} is not one of this permission's choices")]
    NotAChoice(String),
    /// `field` is the field's title (neutralised when the form was checked).
    #[error("{field} {problem}")]
    BadField {
        field: String,
        problem: FieldProblem,
    },
    #[error("form has two fields with the same id")]
    DuplicateFieldIds,
    /// The id as given, shown quoted and bounded.
    #[error("the form has no field {0}")]
    UnknownField(String),
    #[error("the link cannot be shown: {0}")]
    BadUrl(UrlProblem),
    #[error("this is a {prompt} prompt; the answer is for a {answer} prompt")]
    WrongKind { prompt: KindName, answer: KindName },
}

/// What is wrong with a form field or the value given for it. Values a
/// person or agent gave are kept shown quoted and bounded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum FieldProblem {
    #[error("needs at least {0} characters")]
    TooShort(u32),
    #[error("takes at most {0} characters")]
    TooLong(u32),
    #[error("is not a valid {}", .0.name())]
    NotFormat(TextFormat),
    /// The pattern on one line.
    #[error("does not match the pattern {0}")]
    NoMatch(String),
    #[error("is not a number")]
    NotANumber,
    #[error("takes a whole number")]
    NotWhole,
    #[error("takes at least {0}")]
    BelowMinimum(f64),
    #[error("takes at most {0}")]
    AboveMaximum(f64),
    #[error("{0} is not one of its options")]
    NotAnOption(String),
    #[error("{0} is chosen twice")]
    ChosenTwice(String),
    #[error("needs at least {0} choices")]
    TooFewChoices(u32),
    #[error("takes at most {0} choices")]
    TooManyChoices(u32),
    #[error("takes {} value", .0.with_article())]
    WrongType(FieldType),
    #[error("is required")]
    Required,
    #[error("has a pattern ask-lsp cannot use")]
    UnusablePattern,
    #[error("cannot be answered (its length bounds)")]
    LengthBounds,
    #[error("cannot be answered (minimum above maximum)")]
    MinimumAboveMaximum,
    #[error("has no options")]
    NoOptions,
    #[error("cannot be answered (its item bounds)")]
    ItemBounds,
}

// A form's bounds come from JSON, which has no NaN: equality is reflexive.
impl Eq for FieldProblem {}

/// Why a link form's url is not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UrlProblem {
    #[error("it contains spaces or control characters")]
    Unsafe,
    #[error("only http and https links are shown")]
    NotHttp,
    #[error("a link form has no fields")]
    HasFields,
}

/// The type of value a form field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldType {
    Text,
    Integer,
    Number,
    Boolean,
    Choice,
    MultiChoice,
}

impl FieldType {
    fn name(self) -> &'static str {
        match self {
            FieldType::Text => "text",
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Choice => "choice",
            FieldType::MultiChoice => "multi choice",
        }
    }

    fn with_article(self) -> String {
        let name = self.name();
        let article = match name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            true => "an",
            false => "a",
        };
        format!("{article} {name}")
    }
}

/// A prompt's kind by name, as a wrong-kind answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindName {
    Questions,
    Permission,
    Form,
}

impl KindName {
    pub fn as_str(self) -> &'static str {
        match self {
            KindName::Questions => "questions",
            KindName::Permission => "permission",
            KindName::Form => "form",
        }
    }
}

impl std::fmt::Display for KindName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
