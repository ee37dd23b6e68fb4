use std::collections::BTreeSet;

use super::*;
use crate::present::i18n::{Locale, assert_translated, in_locale};

fn field_problems() -> Vec<FieldProblem> {
    vec![
        FieldProblem::TooShort(3),
        FieldProblem::TooLong(8),
        FieldProblem::NotFormat(TextFormat::Email),
        FieldProblem::NotFormat(TextFormat::Uri),
        FieldProblem::NotFormat(TextFormat::Date),
        FieldProblem::NotFormat(TextFormat::DateTime),
        FieldProblem::NoMatch("^[a-z]+$".into()),
        FieldProblem::NotANumber,
        FieldProblem::NotWhole,
        FieldProblem::BelowMinimum(1024.0),
        FieldProblem::AboveMaximum(65535.5),
        FieldProblem::NotAnOption("\"Mars\"".into()),
        FieldProblem::ChosenTwice("\"Red\"".into()),
        FieldProblem::TooFewChoices(2),
        FieldProblem::TooManyChoices(4),
        FieldProblem::WrongType(FieldType::Text),
        FieldProblem::WrongType(FieldType::Integer),
        FieldProblem::WrongType(FieldType::Number),
        FieldProblem::WrongType(FieldType::Boolean),
        FieldProblem::WrongType(FieldType::Choice),
        FieldProblem::WrongType(FieldType::MultiChoice),
        FieldProblem::Required,
        FieldProblem::UnusablePattern,
        FieldProblem::LengthBounds,
        FieldProblem::MinimumAboveMaximum,
        FieldProblem::NoOptions,
        FieldProblem::ItemBounds,
    ]
}

/// The names the prompt model's checks give the parts they bound.
const PARTS: [&str; 29] = [
    "request id",
    "session id",
    "directory",
    "origin",
    "header",
    "question",
    "choice label",
    "typed answer",
    "reject message",
    "permission action",
    "permission title",
    "permission pattern",
    "permission patterns",
    "permission detail",
    "permission choices",
    "form",
    "form message",
    "form fields",
    "a form answer",
    "url",
    "field id",
    "field title",
    "field description",
    "field pattern",
    "field default",
    "field options",
    "option value",
    "option label",
    "option description",
];

fn errors() -> Vec<PromptError> {
    let mut errors = vec![
        PromptError::NoQuestions,
        PromptError::TooManyQuestions(17),
        PromptError::TooManyOptions {
            index: 1,
            count: 65,
        },
        PromptError::Unanswerable { index: 0 },
        PromptError::AnswerCount {
            expected: 2,
            got: 1,
        },
        PromptError::SingleSelect { index: 0, got: 2 },
        PromptError::NotAnOption {
            index: 0,
            value: "Mars\u{1b}".into(),
        },
        PromptError::EmptyAnswer { index: 1 },
        PromptError::DuplicateAnswer { index: 1 },
        PromptError::NotAChoice("allow-always".into()),
        PromptError::DuplicateFieldIds,
        PromptError::UnknownField("\"port\"".into()),
        PromptError::BadUrl(UrlProblem::Unsafe),
        PromptError::BadUrl(UrlProblem::NotHttp),
        PromptError::BadUrl(UrlProblem::HasFields),
        PromptError::WrongKind {
            prompt: KindName::Questions,
            answer: KindName::Permission,
        },
        PromptError::WrongKind {
            prompt: KindName::Form,
            answer: KindName::Questions,
        },
    ];
    for field in PARTS {
        errors.push(PromptError::TooLong {
            field,
            len: 9,
            max: 8,
        });
        errors.push(PromptError::TooMany {
            field,
            count: 9,
            max: 8,
        });
        errors.push(PromptError::Empty { field });
    }
    errors.extend(
        field_problems()
            .into_iter()
            .map(|problem| PromptError::BadField {
                field: "Port".into(),
                problem,
            }),
    );
    errors
}

/// Each variant by number: a new one fails to compile here until the
/// samples above have it.
fn variant(error: &PromptError) -> usize {
    match error {
        PromptError::NoQuestions => 0,
        PromptError::TooManyQuestions(_) => 1,
        PromptError::TooManyOptions { .. } => 2,
        PromptError::Unanswerable { .. } => 3,
        PromptError::TooLong { .. } => 4,
        PromptError::TooMany { .. } => 5,
        PromptError::Empty { .. } => 6,
        PromptError::AnswerCount { .. } => 7,
        PromptError::SingleSelect { .. } => 8,
        PromptError::NotAnOption { .. } => 9,
        PromptError::EmptyAnswer { .. } => 10,
        PromptError::DuplicateAnswer { .. } => 11,
        PromptError::NotAChoice(_) => 12,
        PromptError::BadField { problem, .. } => 100 + problem_variant(problem),
        PromptError::DuplicateFieldIds => 13,
        PromptError::UnknownField(_) => 14,
        PromptError::BadUrl(_) => 15,
        PromptError::WrongKind { .. } => 16,
    }
}

fn problem_variant(problem: &FieldProblem) -> usize {
    match problem {
        FieldProblem::TooShort(_) => 0,
        FieldProblem::TooLong(_) => 1,
        FieldProblem::NotFormat(_) => 2,
        FieldProblem::NoMatch(_) => 3,
        FieldProblem::NotANumber => 4,
        FieldProblem::NotWhole => 5,
        FieldProblem::BelowMinimum(_) => 6,
        FieldProblem::AboveMaximum(_) => 7,
        FieldProblem::NotAnOption(_) => 8,
        FieldProblem::ChosenTwice(_) => 9,
        FieldProblem::TooFewChoices(_) => 10,
        FieldProblem::TooManyChoices(_) => 11,
        FieldProblem::WrongType(_) => 12,
        FieldProblem::Required => 13,
        FieldProblem::UnusablePattern => 14,
        FieldProblem::LengthBounds => 15,
        FieldProblem::MinimumAboveMaximum => 16,
        FieldProblem::NoOptions => 17,
        FieldProblem::ItemBounds => 18,
    }
}

#[test]
fn the_samples_cover_every_variant() {
    let covered: BTreeSet<usize> = errors().iter().map(variant).collect();
    let expected: BTreeSet<usize> = (0..17).chain(100..119).collect();
    assert_eq!(covered, expected);
}

/// `Display` is what logs and the agent read: English from the catalogue,
/// whatever language the person reads.
#[test]
fn display_is_english_whatever_the_persons_language() {
    for error in errors() {
        let english = in_locale(Locale::En, || prompt_error(&error));
        assert_eq!(in_locale(Locale::ZhCn, || error.to_string()), english);
    }
    assert_eq!(
        in_locale(Locale::ZhCn, || PromptError::NotAnOption {
            index: 0,
            value: "Mars".into(),
        }
        .to_string()),
        "question 0: \"Mars\" is not one of the options and this question does not allow a typed answer"
    );
    assert_eq!(
        PromptError::BadField {
            field: "Count".into(),
            problem: FieldProblem::WrongType(FieldType::Integer),
        }
        .to_string(),
        "Count takes an integer value"
    );
}

#[test]
fn every_error_is_worded_in_chinese_with_every_value_filled_in() {
    let mut seen = BTreeSet::new();
    for error in errors() {
        let zh = in_locale(Locale::ZhCn, || prompt_error(&error));
        assert_translated(&error.to_string(), &zh, &mut seen);
    }
}

#[test]
fn chinese_words_keep_the_agents_text_as_given() {
    let zh = |error: PromptError| in_locale(Locale::ZhCn, || prompt_error(&error));
    assert_eq!(
        zh(PromptError::BadField {
            field: "Port".into(),
            problem: FieldProblem::BelowMinimum(1024.0),
        }),
        "“Port”不能小于 1024"
    );
    assert_eq!(
        zh(PromptError::NotAnOption {
            index: 0,
            value: "火星\u{1b}".into(),
        }),
        "问题 0：\"火星\\u{1b}\" 不是可选项之一，且此问题不允许输入回答"
    );
    assert_eq!(
        zh(PromptError::BadField {
            field: "Count".into(),
            problem: FieldProblem::WrongType(FieldType::Integer),
        }),
        "“Count”需要整数值"
    );
    assert_eq!(
        zh(PromptError::TooLong {
            field: "reject message",
            len: 8001,
            max: 8000,
        }),
        "拒绝理由长度为 8001 个字符（最多 8000 个）"
    );
}
