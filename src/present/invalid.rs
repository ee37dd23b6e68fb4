//! Why a prompt or an answer was refused ([`PromptError`]), worded from the
//! catalogue: in the person's language, and in English as the error's
//! `Display` (what logs and the agent read), so each sentence exists once.
//! Agent text (field titles, options, values) goes in as the error holds
//! it: shown, never translated.

use std::fmt;

use super::i18n::{Locale, in_locale, tr};
use crate::prompt::{FieldProblem, FieldType, KindName, PromptError, TextFormat, UrlProblem};

/// `error` in the person's language.
pub(crate) fn prompt_error(error: &PromptError) -> String {
    match error {
        PromptError::NoQuestions => tr!("invalid.no_questions"),
        PromptError::TooManyQuestions(count) => tr!(
            "invalid.too_many_questions",
            count = count,
            max = crate::prompt::limits::QUESTIONS
        ),
        PromptError::TooManyOptions { index, count } => tr!(
            "invalid.too_many_options",
            index = index,
            count = count,
            max = crate::prompt::limits::OPTIONS
        ),
        PromptError::Unanswerable { index } => tr!("invalid.unanswerable", index = index),
        PromptError::TooLong { field, len, max } => {
            tr!("invalid.too_long", part = part(field), len = len, max = max)
        }
        PromptError::TooMany { field, count, max } => tr!(
            "invalid.too_many",
            part = part(field),
            count = count,
            max = max
        ),
        PromptError::Empty { field } => tr!("invalid.empty", part = part(field)),
        PromptError::AnswerCount { expected, got } => {
            tr!("invalid.answer_count", expected = expected, got = got)
        }
        PromptError::SingleSelect { index, got } => {
            tr!("invalid.single_select", index = index, got = got)
        }
        PromptError::NotAnOption { index, value } => tr!(
            "invalid.not_an_option",
            index = index,
            value = format!("{value:?}")
        ),
        PromptError::EmptyAnswer { index } => tr!("invalid.empty_answer", index = index),
        PromptError::DuplicateAnswer { index } => tr!("invalid.duplicate_answer", index = index),
        PromptError::NotAChoice(choice) => {
            tr!("invalid.not_a_choice", choice = format!("{choice:?}"))
        }
        PromptError::BadField { field, problem } => field_problem(field, problem),
        PromptError::DuplicateFieldIds => tr!("invalid.duplicate_field_ids"),
        PromptError::UnknownField(id) => tr!("invalid.unknown_field", id = id),
        PromptError::BadUrl(problem) => tr!("invalid.bad_url", problem = url_problem(*problem)),
        PromptError::WrongKind { prompt, answer } => tr!(
            "invalid.wrong_kind",
            prompt = kind(*prompt),
            answer = kind(*answer)
        ),
    }
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&in_locale(Locale::En, || prompt_error(self)))
    }
}

impl std::error::Error for PromptError {}

/// What is wrong with the field titled `field`.
fn field_problem(field: &str, problem: &FieldProblem) -> String {
    match problem {
        FieldProblem::TooShort(min) => tr!("invalid.field.too_short", field = field, min = min),
        FieldProblem::TooLong(max) => tr!("invalid.field.too_long", field = field, max = max),
        FieldProblem::NotFormat(format) => tr!(
            "invalid.field.not_format",
            field = field,
            format = text_format(*format)
        ),
        FieldProblem::NoMatch(pattern) => {
            tr!("invalid.field.no_match", field = field, pattern = pattern)
        }
        FieldProblem::NotANumber => tr!("invalid.field.not_a_number", field = field),
        FieldProblem::NotWhole => tr!("invalid.field.not_whole", field = field),
        FieldProblem::BelowMinimum(min) => {
            tr!("invalid.field.below_minimum", field = field, min = min)
        }
        FieldProblem::AboveMaximum(max) => {
            tr!("invalid.field.above_maximum", field = field, max = max)
        }
        FieldProblem::NotAnOption(value) => {
            tr!("invalid.field.not_an_option", field = field, value = value)
        }
        FieldProblem::ChosenTwice(value) => {
            tr!("invalid.field.chosen_twice", field = field, value = value)
        }
        FieldProblem::TooFewChoices(min) => {
            tr!("invalid.field.too_few_choices", field = field, min = min)
        }
        FieldProblem::TooManyChoices(max) => {
            tr!("invalid.field.too_many_choices", field = field, max = max)
        }
        FieldProblem::WrongType(expected) => tr!(
            "invalid.field.wrong_type",
            field = field,
            value = field_type(*expected)
        ),
        FieldProblem::Required => tr!("invalid.field.required", field = field),
        FieldProblem::UnusablePattern => tr!("invalid.field.unusable_pattern", field = field),
        FieldProblem::LengthBounds => tr!("invalid.field.length_bounds", field = field),
        FieldProblem::MinimumAboveMaximum => {
            tr!("invalid.field.minimum_above_maximum", field = field)
        }
        FieldProblem::NoOptions => tr!("invalid.field.no_options", field = field),
        FieldProblem::ItemBounds => tr!("invalid.field.item_bounds", field = field),
    }
}

fn url_problem(problem: UrlProblem) -> String {
    match problem {
        UrlProblem::Unsafe => tr!("invalid.url.unsafe"),
        UrlProblem::NotHttp => tr!("invalid.url.not_http"),
        UrlProblem::HasFields => tr!("invalid.url.has_fields"),
    }
}

pub(super) fn kind(name: KindName) -> String {
    match name {
        KindName::Questions => tr!("invalid.kind.questions"),
        KindName::Permission => tr!("invalid.kind.permission"),
        KindName::Form => tr!("invalid.kind.form"),
    }
}

/// The value a field takes, with its article in English.
fn field_type(expected: FieldType) -> String {
    match expected {
        FieldType::Text => tr!("invalid.type.text"),
        FieldType::Integer => tr!("invalid.type.integer"),
        FieldType::Number => tr!("invalid.type.number"),
        FieldType::Boolean => tr!("invalid.type.boolean"),
        FieldType::Choice => tr!("invalid.type.choice"),
        FieldType::MultiChoice => tr!("invalid.type.multi_choice"),
    }
}

fn text_format(format: TextFormat) -> String {
    match format {
        TextFormat::Email => tr!("invalid.format.email"),
        TextFormat::Uri => tr!("invalid.format.uri"),
        TextFormat::Date => tr!("invalid.format.date"),
        TextFormat::DateTime => tr!("invalid.format.date_time"),
    }
}

/// The part of a prompt or answer a bound is about, by the name the
/// prompt model's checks give it; a name not listed stays as given.
fn part(name: &str) -> String {
    match name {
        "request id" => tr!("invalid.part.request_id"),
        "session id" => tr!("invalid.part.session_id"),
        "directory" => tr!("invalid.part.directory"),
        "origin" => tr!("invalid.part.origin"),
        "header" => tr!("invalid.part.header"),
        "question" => tr!("invalid.part.question"),
        "choice label" => tr!("invalid.part.choice_label"),
        "typed answer" => tr!("invalid.part.typed_answer"),
        "reject message" => tr!("invalid.part.reject_message"),
        "permission action" => tr!("invalid.part.permission_action"),
        "permission title" => tr!("invalid.part.permission_title"),
        "permission pattern" => tr!("invalid.part.permission_pattern"),
        "permission patterns" => tr!("invalid.part.permission_patterns"),
        "permission detail" => tr!("invalid.part.permission_detail"),
        "permission choices" => tr!("invalid.part.permission_choices"),
        "form" => tr!("invalid.part.form"),
        "form message" => tr!("invalid.part.form_message"),
        "form fields" => tr!("invalid.part.form_fields"),
        "a form answer" => tr!("invalid.part.form_answer"),
        "url" => tr!("invalid.part.url"),
        "field id" => tr!("invalid.part.field_id"),
        "field title" => tr!("invalid.part.field_title"),
        "field description" => tr!("invalid.part.field_description"),
        "field pattern" => tr!("invalid.part.field_pattern"),
        "field default" => tr!("invalid.part.field_default"),
        "field options" => tr!("invalid.part.field_options"),
        "option value" => tr!("invalid.part.option_value"),
        "option label" => tr!("invalid.part.option_label"),
        "option description" => tr!("invalid.part.option_description"),
        other => other.to_owned(),
    }
}

#[cfg(test)]
#[path = "invalid_tests.rs"]
mod tests;
