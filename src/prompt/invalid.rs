//! Why a prompt or an answer is refused, as facts: each reason typed with
//! its numbers and values. Their words, in the person's language and in
//! English (`Display`: what logs and the agent read), come from one
//! catalogue on the presentation floor (`present/invalid.rs`).

use super::TextFormat;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PromptError {
    NoQuestions,
    TooManyQuestions(usize),
    TooManyOptions {
        index: usize,
        count: usize,
    },
    Unanswerable {
        index: usize,
    },
    TooLong {
        field: &'static str,
        len: usize,
        max: usize,
    },
    TooMany {
        field: &'static str,
        count: usize,
        max: usize,
    },
    Empty {
        field: &'static str,
    },
    AnswerCount {
        expected: usize,
        got: usize,
    },
    SingleSelect {
        index: usize,
        got: usize,
    },
    NotAnOption {
        index: usize,
        value: String,
    },
    EmptyAnswer {
        index: usize,
    },
    DuplicateAnswer {
        index: usize,
    },
    NotAChoice(String),
    /// `field` is the field's title (neutralised when the form was checked).
    BadField {
        field: String,
        problem: FieldProblem,
    },
    DuplicateFieldIds,
    /// The id as given, shown quoted and bounded.
    UnknownField(String),
    BadUrl(UrlProblem),
    WrongKind {
        prompt: KindName,
        answer: KindName,
    },
}

/// What is wrong with a form field or the value given for it. Values a
/// person or agent gave are kept shown quoted and bounded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldProblem {
    TooShort(u32),
    TooLong(u32),
    NotFormat(TextFormat),
    /// The pattern on one line.
    NoMatch(String),
    NotANumber,
    NotWhole,
    BelowMinimum(f64),
    AboveMaximum(f64),
    NotAnOption(String),
    ChosenTwice(String),
    TooFewChoices(u32),
    TooManyChoices(u32),
    WrongType(FieldType),
    Required,
    UnusablePattern,
    LengthBounds,
    MinimumAboveMaximum,
    NoOptions,
    ItemBounds,
}

// A form's bounds come from JSON, which has no NaN: equality is reflexive.
impl Eq for FieldProblem {}

/// Why a link form's url is not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlProblem {
    Unsafe,
    NotHttp,
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

/// A prompt's kind by name, as a wrong-kind answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindName {
    Questions,
    Permission,
    Form,
}
