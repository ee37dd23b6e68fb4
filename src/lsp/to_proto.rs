//! The one conversion module between ask-lsp's types and the wire: the
//! extension's shapes ([`super::ext`]), plain `showMessageRequest` prompts,
//! code actions, and reading what clients send back.
//!
//! Over 500 lines: the one conversion module, for three prompt kinds on two
//! surfaces (extension and plain LSP); splitting it would split that rule.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, MessageActionItem, MessageType,
    ShowMessageRequestParams,
};

use super::ext;
use crate::broker::{
    Counters, Human, Listed, Pending, Reason, Resolution, ServerStatus, State, Status,
};
use std::collections::BTreeMap;

use crate::prompt::{
    Answer, Effect, Field, FieldKind, FieldOption, FieldValue, Form, FormValues, Kind, Link,
    Permission, PermissionChoice, TextFormat,
};
use crate::text::{self, is_plain, one_line};

/// The title of the reject action in `showMessageRequest`.
pub(crate) const REJECT_ACTION: &str = "✗ Reject";
const ACCEPT_LINK_ACTION: &str = "I will open it";
const YES_ACTION: &str = "Yes";
const NO_ACTION: &str = "No";
const SKIP_ACTION: &str = "↷ Skip";
const DEFAULT_PREFIX: &str = "↩ Default: ";

pub(crate) fn ask_params(pending: &Pending, queued: usize) -> ext::AskParams {
    let prompt = &pending.prompt;
    let mut form = None;
    let (kind, questions, permission) = match &prompt.kind {
        Kind::Questions(questions) => (
            ext::PromptKind::Questions,
            Some(
                questions
                    .iter()
                    .map(|q| ext::Question {
                        question: q.text.clone(),
                        header: q.header.clone(),
                        options: q
                            .options
                            .iter()
                            .map(|o| ext::QuestionOption {
                                label: o.label.clone(),
                                description: o.description.clone(),
                            })
                            .collect(),
                        multiple: q.multiple,
                        custom: q.custom,
                    })
                    .collect(),
            ),
            None,
        ),
        Kind::Permission(p) => (
            ext::PromptKind::Permission,
            None,
            Some(ext::Permission {
                action: p.action.clone(),
                title: p.title.clone(),
                patterns: p.patterns.clone(),
                command: p.command.clone(),
                diff: p.diff.clone(),
                choices: p
                    .choices
                    .iter()
                    .map(|c| ext::PermissionChoice {
                        id: c.id.clone(),
                        label: c.label.clone(),
                        effect: effect(c.effect),
                    })
                    .collect(),
            }),
        ),
        Kind::Form(f) => {
            form = Some(form_params(f));
            (ext::PromptKind::Form, None, None)
        }
    };
    ext::AskParams {
        key: pending.key.clone(),
        server: pending.server.to_string(),
        request_id: prompt.id.clone(),
        session_id: text::for_display(&prompt.session, text::DISPLAY_ID_CHARS).into_owned(),
        kind,
        title: pending.title.clone(),
        source: ext::Source {
            backend: pending.source.backend.to_owned(),
            url: pending.source.url.clone(),
            directory: prompt
                .directory
                .as_deref()
                .map(|d| text::one_line(d).into_owned()),
        },
        origin: ext::Origin {
            tool_call_id: prompt.origin.tool_call.clone(),
            agent: prompt.origin.agent.clone(),
            session_title: prompt
                .origin
                .session_title
                .as_ref()
                .map(|title| title.as_str().to_owned()),
        },
        questions,
        permission,
        form,
        timeout_ms: pending.timeout.map(|t| t.as_millis() as u64),
        pending: queued,
    }
}

fn form_params(form: &Form) -> ext::Form {
    ext::Form {
        message: form.message.clone(),
        url: form.url.as_ref().map(|link| ext::FormLink {
            url: link.url.clone(),
            domain: link.domain.clone(),
            warning: link.warning(),
        }),
        fields: form
            .fields
            .iter()
            .map(|field| ext::FormField {
                id: field.id.clone(),
                title: field.title.clone(),
                description: field.description.clone(),
                required: field.required,
                kind: field_kind(&field.kind),
            })
            .collect(),
    }
}

fn field_kind(kind: &FieldKind) -> ext::FieldKind {
    let options = |options: &[FieldOption]| {
        options
            .iter()
            .map(|o| ext::FieldOption {
                value: o.value.clone(),
                label: o.label.clone(),
                description: o.description.clone(),
            })
            .collect()
    };
    match kind.clone() {
        FieldKind::Text {
            format,
            pattern,
            min_length,
            max_length,
            default,
        } => ext::FieldKind::Text {
            format: format.map(|f| match f {
                TextFormat::Email => ext::TextFormat::Email,
                TextFormat::Uri => ext::TextFormat::Uri,
                TextFormat::Date => ext::TextFormat::Date,
                TextFormat::DateTime => ext::TextFormat::DateTime,
            }),
            pattern,
            min_length,
            max_length,
            default,
        },
        FieldKind::Number {
            integer: false,
            minimum,
            maximum,
            default,
        } => ext::FieldKind::Number {
            minimum,
            maximum,
            default,
        },
        FieldKind::Number {
            integer: true,
            minimum,
            maximum,
            default,
        } => ext::FieldKind::Integer {
            minimum,
            maximum,
            default,
        },
        FieldKind::Boolean { default } => ext::FieldKind::Boolean { default },
        FieldKind::Choice {
            options: o,
            default,
        } => ext::FieldKind::Choice {
            options: options(&o),
            default,
        },
        FieldKind::Multi {
            options: o,
            min_items,
            max_items,
            default,
        } => ext::FieldKind::Multi {
            options: options(&o),
            min_items,
            max_items,
            default,
        },
    }
}

/// A form answer from the wire; the field's kind settles what a string
/// means (text or a choice) when it is validated.
fn form_values(values: BTreeMap<String, ext::FieldValue>) -> FormValues {
    values
        .into_iter()
        .map(|(id, value)| {
            let value = match value {
                ext::FieldValue::Bool(b) => FieldValue::Bool(b),
                ext::FieldValue::Number(n) => FieldValue::Number(n),
                ext::FieldValue::Text(t) => FieldValue::Text(t),
                ext::FieldValue::List(l) => FieldValue::Choices(l),
            };
            (id, value)
        })
        .collect()
}

/// A value as a person reads it.
fn shown(value: &FieldValue, field: &Field) -> String {
    let label = |v: &str| field.option(v).map_or(v, |o| o.label.as_str()).to_owned();
    match value {
        FieldValue::Text(t) => t.clone(),
        FieldValue::Number(n) => n.to_string(),
        FieldValue::Bool(true) => "yes".into(),
        FieldValue::Bool(false) => "no".into(),
        FieldValue::Choice(c) => label(c),
        FieldValue::Choices(cs) => cs.iter().map(|c| label(c)).collect::<Vec<_>>().join(", "),
    }
}

/// A link form as text: ask-lsp's own lines (the host a browser opens, any
/// warning about it, the whole URL) come first, and every line of the
/// agent's message after them is quoted with `│`, so that nothing the agent
/// writes can pass for a `Domain:` line of ask-lsp's.
pub(crate) fn link_text(message: &str, link: &Link) -> String {
    let mut text = format!(
        "[Link] ask-lsp does not open links: open it yourself only if you trust {}.\n  Domain: {}",
        link.domain, link.domain
    );
    if let Some(warning) = link.warning() {
        text.push_str(&format!("\n  ⚠ {warning}"));
    }
    text.push_str(&format!("\n  URL: {}", link.url));
    if !message.is_empty() {
        text.push_str("\n  The agent's message:");
        for line in message.lines() {
            text.push_str("\n  │");
            if !line.is_empty() {
                text.push_str(&format!(" {line}"));
            }
        }
    }
    text
}

/// What a field takes, in words: its kind and bounds.
pub(crate) fn field_hint(field: &Field) -> String {
    let mut parts: Vec<String> = vec![field.kind.name().into()];
    match &field.kind {
        FieldKind::Text {
            format,
            pattern,
            min_length,
            max_length,
            ..
        } => {
            parts.extend(format.map(|f| f.name().to_owned()));
            parts.extend(min_length.map(|n| format!("at least {n} characters")));
            parts.extend(max_length.map(|n| format!("at most {n} characters")));
            parts.extend(
                pattern
                    .as_ref()
                    .map(|p| format!("matching {}", one_line(p))),
            );
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            parts.extend(minimum.map(|n| format!("at least {n}")));
            parts.extend(maximum.map(|n| format!("at most {n}")));
        }
        FieldKind::Multi {
            min_items,
            max_items,
            ..
        } => {
            parts.extend(min_items.map(|n| format!("at least {n}")));
            parts.extend(max_items.map(|n| format!("at most {n}")));
        }
        FieldKind::Boolean { .. } | FieldKind::Choice { .. } => {}
    }
    if field.required {
        parts.push("required".into());
    }
    parts.join(", ")
}

fn effect(effect: Effect) -> ext::Effect {
    match effect {
        Effect::AllowOnce => ext::Effect::AllowOnce,
        Effect::AllowAlways => ext::Effect::AllowAlways,
        Effect::RejectOnce => ext::Effect::RejectOnce,
        Effect::RejectAlways => ext::Effect::RejectAlways,
    }
}

pub(crate) fn resolved_params(resolution: &Resolution) -> ext::ResolvedParams {
    ext::ResolvedParams {
        key: resolution.key.clone(),
        state: match resolution.state {
            State::Replied => ext::ResolvedState::Replied,
            State::Rejected => ext::ResolvedState::Rejected,
            State::Dismissed => ext::ResolvedState::Dismissed,
        },
        reason: match resolution.reason {
            Reason::AnsweredHere => ext::ResolvedReason::AnsweredHere,
            Reason::AnsweredElsewhere => ext::ResolvedReason::AnsweredElsewhere,
            Reason::Policy => ext::ResolvedReason::Policy,
            Reason::Timeout => ext::ResolvedReason::Timeout,
            Reason::RejectedHere => ext::ResolvedReason::RejectedHere,
            Reason::RejectedElsewhere => ext::ResolvedReason::RejectedElsewhere,
            Reason::SessionEnded => ext::ResolvedReason::SessionEnded,
            Reason::Gone => ext::ResolvedReason::Gone,
        },
        here: resolution.reason.here(),
        message: resolution.message.clone(),
        pending: resolution.pending,
    }
}

pub(crate) fn status_params(status: &Status) -> ext::StatusParams {
    let Counters {
        answered_here,
        rejected_here,
        resolved_elsewhere,
        policy_answered,
        policy_rejected,
        timeouts,
    } = status.counters;
    ext::StatusParams {
        pending: status.pending,
        servers: status
            .servers
            .iter()
            .map(|s: &ServerStatus| ext::ServerStatus {
                name: s.name.clone(),
                backend: s.backend.to_owned(),
                url: s.url.clone(),
                connected: s.connected,
                error: s.error.clone(),
                defaulted: s.defaulted,
                discovered: s.discovered.clone(),
                generation: s.generation.map(str::to_owned),
            })
            .collect(),
        counters: ext::Counters {
            answered_here,
            rejected_here,
            resolved_elsewhere,
            policy_answered,
            policy_rejected,
            timeouts,
        },
    }
}

/// A client's decision on `askQuestions/ask`; `None` for deferred.
pub(crate) fn decision(result: ext::AskResult) -> Result<Option<Human>, String> {
    match result {
        ext::AskResult::Answered {
            answers: Some(answers),
            choice: None,
            values: None,
        } => Ok(Some(Human::Answer(Answer::Questions(answers)))),
        ext::AskResult::Answered {
            answers: None,
            choice: Some(choice),
            values: None,
        } => Ok(Some(Human::Answer(Answer::Permission { choice }))),
        ext::AskResult::Answered {
            answers: None,
            choice: None,
            values: Some(values),
        } => Ok(Some(Human::Answer(Answer::Form(form_values(values))))),
        ext::AskResult::Answered { .. } => Err(
            "an answer has one of `answers` (questions), `choice` (a permission) or `values` (a form)"
                .into(),
        ),
        ext::AskResult::Rejected { message } => Ok(Some(Human::Reject { message })),
        ext::AskResult::Deferred => Ok(None),
    }
}

/// Arguments of `askLsp.answer`: `[key, answers: string[][]]`,
/// `[key, questionIndex, answer: string[]]`, `[key, choiceId]` for a
/// permission, or `[key, {fieldId: value}]` for a form (some or all fields).
pub(crate) fn answer_args(arguments: &[Value]) -> Result<(String, Human), String> {
    const USAGE: &str = "askLsp.answer takes [key, answers: string[][]], [key, questionIndex, answer: string[]], [key, choiceId: string] or [key, {fieldId: value}]";
    let key = key_arg(arguments).ok_or(USAGE)?;
    match arguments {
        [_, values @ Value::Object(_)] => serde_json::from_value(values.clone())
            .map(|values| (key, Human::Fields(form_values(values))))
            .map_err(|e| format!("{USAGE}: values: {e}")),
        [_, Value::String(choice)] => Ok((
            key,
            Human::Answer(Answer::Permission {
                choice: choice.clone(),
            }),
        )),
        [_, answers] => serde_json::from_value(answers.clone())
            .map(|answers| (key, Human::Answer(Answer::Questions(answers))))
            .map_err(|e| format!("{USAGE}: answers: {e}")),
        [_, index, answer] => {
            let index = index.as_u64().ok_or(USAGE)? as usize;
            serde_json::from_value(answer.clone())
                .map(|answer| (key, Human::One { index, answer }))
                .map_err(|e| format!("{USAGE}: answer: {e}"))
        }
        _ => Err(USAGE.into()),
    }
}

/// Arguments of `askLsp.reject`: `[key]` or `[key, message]`.
pub(crate) fn reject_args(arguments: &[Value]) -> Result<(String, Human), String> {
    const USAGE: &str = "askLsp.reject takes [key] or [key, message: string]";
    let key = key_arg(arguments).ok_or(USAGE)?;
    let message = match arguments {
        [_] => None,
        [_, Value::String(message)] => Some(message.clone()),
        _ => return Err(USAGE.into()),
    };
    Ok((key, Human::Reject { message }))
}

pub(crate) fn key_arg(arguments: &[Value]) -> Option<String> {
    arguments.first()?.as_str().map(str::to_owned)
}

/// A plain `showMessageRequest` for one question of a prompt (or the
/// permission). `context` names the server and project when there are
/// several to tell apart.
pub(crate) fn message_request(
    pending: &Pending,
    index: usize,
    context: Option<&str>,
) -> ShowMessageRequestParams {
    let mut message = String::new();
    match &pending.prompt.kind {
        Kind::Questions(questions) => {
            let question = &questions[index];
            if questions.len() > 1 {
                message.push_str(&format!("({} of {}) ", index + 1, questions.len()));
            }
            if !question.header.is_empty() {
                message.push_str(&format!("[{}] ", question.header));
            }
            message.push_str(&question.text);
            for option in &question.options {
                message.push_str(&format!("\n  {}", option.label));
                if !option.description.is_empty() {
                    message.push_str(&format!(": {}", option.description));
                }
            }
            // Said only where the buttons cannot give the answer.
            if question.multiple || question.options.is_empty() {
                message.push_str(&format!(
                    "\n(For several options or a typed answer, use a code action or the {} command.)",
                    ext::CMD_ANSWER
                ));
            }
        }
        Kind::Permission(permission) => {
            message.push_str(&format!(
                "[Permission: {}] {}",
                permission.action, permission.title
            ));
            if let Some(command) = &permission.command {
                message.push_str(&format!("\n  $ {command}"));
            }
            for pattern in &permission.patterns {
                message.push_str(&format!("\n  Pattern: {pattern}"));
            }
            if let Some(diff) = &permission.diff {
                message.push_str(&format!("\n{diff}"));
            }
        }
        Kind::Form(form) => form_message(form, &pending.key, index, &mut message),
    }
    if let Some(context) = context {
        message.push_str(&format!("\n— {context}"));
    }
    ShowMessageRequestParams {
        typ: MessageType::INFO,
        message,
        actions: Some(
            plain_actions(pending, index)
                .into_iter()
                .map(|(title, _)| MessageActionItem {
                    title,
                    properties: Default::default(),
                })
                .collect(),
        ),
    }
}

/// What one button of [`message_request`] does.
#[derive(Debug, Clone, PartialEq)]
enum PlainAction {
    Reject,
    /// A question's option, by label.
    Option(String),
    /// A permission's choice, by id.
    Choice(String),
    /// A form field's option, by value.
    Value(String),
    Yes,
    No,
    Default,
    Skip,
    AcceptLink,
}

/// The buttons of one plain message, in order, each with a title unique in
/// the message: a client sends back only the title, so it names one action
/// by identity. A refusal comes first, so a client that pre-fills or
/// defaults to the first button (eglot) never allows or accepts on one
/// Enter. Agent text that reads like one of ask-lsp's own titles, or like an
/// earlier one, is numbered (`↷ Skip (2)`) instead of capturing it.
fn plain_actions(pending: &Pending, index: usize) -> Vec<(String, PlainAction)> {
    // (title, action, written by ask-lsp)
    let mut actions: Vec<(String, PlainAction, bool)> = Vec::new();
    match &pending.prompt.kind {
        Kind::Questions(questions) => {
            actions.push((REJECT_ACTION.into(), PlainAction::Reject, true));
            actions.extend(
                questions[index]
                    .options
                    .iter()
                    .map(|o| (o.label.clone(), PlainAction::Option(o.label.clone()), false)),
            );
        }
        Kind::Permission(permission) => {
            if permission.reject_choice().is_none() {
                actions.push((REJECT_ACTION.into(), PlainAction::Reject, true));
            }
            // Refusals first, then allowing: the reject choice leads.
            let mut choices: Vec<_> = permission.choices.iter().collect();
            choices.sort_by_key(|c| match c.effect {
                Effect::RejectOnce => 0,
                Effect::RejectAlways => 1,
                Effect::AllowOnce => 2,
                Effect::AllowAlways => 3,
            });
            actions.extend(
                choices
                    .into_iter()
                    .map(|c| (choice_title(c), PlainAction::Choice(c.id.clone()), false)),
            );
        }
        Kind::Form(form) => {
            actions.push((REJECT_ACTION.into(), PlainAction::Reject, true));
            if form.url.is_some() {
                actions.push((ACCEPT_LINK_ACTION.into(), PlainAction::AcceptLink, true));
            } else if let Some(field) = form.fields.get(index) {
                match &field.kind {
                    FieldKind::Choice { options, .. } => actions.extend(
                        options
                            .iter()
                            .map(|o| (o.label.clone(), PlainAction::Value(o.value.clone()), false)),
                    ),
                    FieldKind::Boolean { .. } => actions.extend([
                        (YES_ACTION.into(), PlainAction::Yes, true),
                        (NO_ACTION.into(), PlainAction::No, true),
                    ]),
                    _ => {}
                }
                if let Some(default) = field.default_value() {
                    let title = format!("{DEFAULT_PREFIX}{}", shown(&default, field));
                    actions.push((title, PlainAction::Default, true));
                }
                if !field.required {
                    actions.push((SKIP_ACTION.into(), PlainAction::Skip, true));
                }
            }
        }
    }
    let ours: Vec<String> = actions
        .iter()
        .filter(|(_, _, ours)| *ours)
        .map(|(title, _, _)| title.clone())
        .collect();
    let mut unique: Vec<(String, PlainAction)> = Vec::with_capacity(actions.len());
    for (title, action, is_ours) in actions {
        let taken = |t: &str| {
            (!is_ours && ours.iter().any(|o| o == t)) || unique.iter().any(|(u, _)| u == t)
        };
        let mut numbered = title.clone();
        let mut n = 1;
        while taken(&numbered) {
            n += 1;
            numbered = format!("{title} ({n})");
        }
        unique.push((numbered, action));
    }
    unique
}

/// A permission choice as a plain button or menu entry names: what it does
/// in ask-lsp's words, then the agent's label where that does not already
/// start with them (an ACP agent may call an `allow_once` option "Reject").
fn choice_title(choice: &PermissionChoice) -> String {
    let does = match choice.effect {
        Effect::AllowOnce => "Allow once",
        Effect::AllowAlways => "Allow always",
        Effect::RejectOnce => "Reject",
        Effect::RejectAlways => "Reject always",
    };
    if choice.label.starts_with(does) {
        choice.label.clone()
    } else {
        format!("{does}: {}", choice.label)
    }
}

/// One field of a form (or its link) as a message; its buttons (a choice's
/// options, yes/no, the default, skip) are [`plain_actions`]; anything typed
/// goes through `askLsp.answer` or a code action.
fn form_message(form: &Form, key: &str, index: usize, message: &mut String) {
    if let Some(link) = &form.url {
        message.push_str(&link_text(&form.message, link));
        return;
    }
    let Some(field) = form.fields.get(index) else {
        message.push_str(&form.message);
        return;
    };
    if form.fields.len() > 1 {
        message.push_str(&format!("({} of {}) ", index + 1, form.fields.len()));
    }
    message.push_str(&format!("[{}] {}", form.name(), field.title));
    if !field.description.is_empty() {
        message.push_str(&format!(": {}", field.description));
    }
    message.push_str(&format!(" ({})", field_hint(field)));
    match &field.kind {
        FieldKind::Choice { options, .. } => {
            for option in options.iter().filter(|o| !o.description.is_empty()) {
                message.push_str(&format!("\n  {}: {}", option.label, option.description));
            }
        }
        FieldKind::Boolean { .. } => {}
        _ => message.push_str(&format!(
            "\n(Type it with the {} command: [\"{key}\", {{\"{}\": …}}], or use a code action.)",
            ext::CMD_ANSWER,
            field.id.escape_default()
        )),
    }
}

/// What the action a person clicked in [`message_request`] decides, found
/// by its title among the buttons that message had.
pub(crate) fn message_choice(pending: &Pending, index: usize, title: &str) -> Human {
    let action = plain_actions(pending, index)
        .into_iter()
        .find(|(t, _)| t == title)
        .map(|(_, action)| action);
    let field = || match &pending.prompt.kind {
        Kind::Form(form) => form.fields.get(index),
        _ => None,
    };
    match (action, &pending.prompt.kind) {
        (Some(PlainAction::Reject), _) => Human::Reject { message: None },
        (Some(PlainAction::AcceptLink), _) => Human::Answer(Answer::Form(FormValues::new())),
        (Some(PlainAction::Option(label)), _) => Human::One {
            index,
            answer: vec![label],
        },
        (Some(PlainAction::Choice(choice)), _) => Human::Answer(Answer::Permission { choice }),
        (Some(PlainAction::Value(value)), _) => Human::Field {
            index,
            value: Some(FieldValue::Choice(value)),
        },
        (Some(PlainAction::Yes), _) => Human::Field {
            index,
            value: Some(FieldValue::Bool(true)),
        },
        (Some(PlainAction::No), _) => Human::Field {
            index,
            value: Some(FieldValue::Bool(false)),
        },
        (Some(PlainAction::Default), _) => Human::Field {
            index,
            value: field().and_then(Field::default_value),
        },
        (Some(PlainAction::Skip), _) => Human::Field { index, value: None },
        // Not one of ours: validation refuses it with a clear error (or
        // takes it as typed text where the question allows that).
        (None, Kind::Questions(_)) => Human::One {
            index,
            answer: vec![title.to_owned()],
        },
        (None, Kind::Permission(_)) => Human::Answer(Answer::Permission {
            choice: title.to_owned(),
        }),
        (None, Kind::Form(_)) => Human::Field {
            index,
            value: Some(FieldValue::Text(title.to_owned())),
        },
    }
}

/// One code action per option of every question still unanswered (or per
/// choice of a permission), and one to reject each prompt.
pub(crate) fn code_actions(listed: &[Listed]) -> Vec<CodeActionOrCommand> {
    let action = |title: String, command: &str, arguments: Vec<Value>| {
        CodeActionOrCommand::CodeAction(CodeAction {
            title: title.clone(),
            kind: Some(CodeActionKind::QUICKFIX),
            command: Some(Command {
                title,
                command: command.into(),
                arguments: Some(arguments),
            }),
            ..Default::default()
        })
    };
    let mut actions = Vec::new();
    for listed in listed {
        let pending = &listed.pending;
        let key = json!(pending.key);
        match &pending.prompt.kind {
            Kind::Questions(questions) => {
                for &index in &listed.remaining {
                    let question = &questions[index];
                    let name = question.name();
                    actions.push(action(
                        format!("Reject \"{name}\""),
                        ext::CMD_REJECT,
                        vec![key.clone()],
                    ));
                    for option in &question.options {
                        actions.push(action(
                            format!("Answer \"{name}\": {}", option.label),
                            ext::CMD_ANSWER,
                            vec![key.clone(), json!(index), json!([option.label])],
                        ));
                    }
                }
            }
            Kind::Permission(permission) => {
                // The refusal first (a menu's default), as the reject
                // choice or `cancelled` where there is none.
                actions.push(action(
                    format!("Reject \"{}\"", pending.title),
                    ext::CMD_REJECT,
                    vec![key.clone()],
                ));
                let subject = allow_subject(permission);
                for choice in &permission.choices {
                    let title = match (choice.effect, &subject) {
                        (Effect::RejectOnce, _) => continue,
                        (Effect::RejectAlways, _) => {
                            format!("\"{}\": {}", pending.title, choice_title(choice))
                        }
                        (Effect::AllowOnce | Effect::AllowAlways, Some(subject)) => {
                            format!("{}: {subject}", choice_title(choice))
                        }
                        // What it would allow cannot be shown in a menu
                        // line: the person opens the prompt instead.
                        (Effect::AllowOnce | Effect::AllowAlways, None) => continue,
                    };
                    if title.chars().count() > CODE_ACTION_CHARS {
                        continue;
                    }
                    actions.push(action(
                        title,
                        ext::CMD_ANSWER,
                        vec![key.clone(), json!(choice.id)],
                    ));
                }
            }
            Kind::Form(form) => {
                actions.push(action(
                    format!("Reject \"{}\"", pending.title),
                    ext::CMD_REJECT,
                    vec![key.clone()],
                ));
                if let Some(link) = &form.url {
                    actions.push(action(
                        format!("\"{}\": I will open {} myself", pending.title, link.domain),
                        ext::CMD_ANSWER,
                        vec![key.clone(), json!({})],
                    ));
                }
                for &index in &listed.remaining {
                    let Some(field) = form.fields.get(index) else {
                        continue;
                    };
                    let mut set = |value: FieldValue, note: &str| {
                        actions.push(action(
                            format!(
                                "\"{}\": {} = {}{note}",
                                pending.title,
                                field.title,
                                shown(&value, field)
                            ),
                            ext::CMD_ANSWER,
                            vec![key.clone(), json!({ field.id.clone(): wire_value(&value) })],
                        ))
                    };
                    match &field.kind {
                        FieldKind::Choice { options, .. } => {
                            for option in options {
                                set(FieldValue::Choice(option.value.clone()), "");
                            }
                        }
                        FieldKind::Boolean { .. } => {
                            set(FieldValue::Bool(true), "");
                            set(FieldValue::Bool(false), "");
                        }
                        _ => {
                            if let Some(default) = field.default_value() {
                                set(default, " (default)");
                            }
                        }
                    }
                }
            }
        }
    }
    actions
}

/// The longest code action title that allows: one menu line, read whole.
const CODE_ACTION_CHARS: usize = 160;

/// What an allowing code action names, whole: the command (`$ …`), else
/// the files or patterns, else the title. `None` where that cannot be one
/// plain menu line: a diff, a newline, a hidden character in the raw text.
fn allow_subject(permission: &Permission) -> Option<String> {
    if permission.diff.is_some() {
        return None;
    }
    let raw = permission
        .raw_patterns
        .iter()
        .chain(&permission.raw_command);
    if raw.clone().any(|r| r.contains('\n') || !is_plain(r)) {
        return None;
    }
    let subject = match &permission.command {
        Some(command) => format!("$ {command}"),
        None if !permission.patterns.is_empty() => {
            format!("{} {}", permission.action, permission.patterns.join(", "))
        }
        None => permission.title.clone(),
    };
    (subject.chars().count() <= CODE_ACTION_CHARS).then_some(subject)
}

/// A form value as the extension and `askLsp.answer` carry it.
pub(crate) fn wire_value(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(s) | FieldValue::Choice(s) => json!(s),
        FieldValue::Number(n) => json!(n),
        FieldValue::Bool(b) => json!(b),
        FieldValue::Choices(values) => json!(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_arguments_in_every_shape() {
        let (key, human) = answer_args(&[json!("d/que_1"), json!([["Red"], []])]).unwrap();
        assert_eq!(key, "d/que_1");
        assert!(
            matches!(human, Human::Answer(Answer::Questions(a)) if a == vec![vec!["Red".to_string()], vec![]])
        );
        let (_, human) = answer_args(&[json!("d/que_1"), json!(1), json!(["S", "M"])]).unwrap();
        assert!(matches!(human, Human::One { index: 1, answer } if answer == ["S", "M"]));
        let (_, human) = answer_args(&[json!("d/per_1"), json!("allow-once")]).unwrap();
        assert!(
            matches!(human, Human::Answer(Answer::Permission { choice }) if choice == "allow-once")
        );
        let err = answer_args(&[json!("d/que_1"), json!(true)]).unwrap_err();
        assert!(err.contains("answers: invalid type: boolean"), "{err}");
        let (_, human) = answer_args(&[
            json!("d/elicit_1"),
            json!({"port": 8080, "tags": ["a"], "ok": true}),
        ])
        .unwrap();
        assert!(matches!(human, Human::Fields(v) if v.len() == 3
            && v["port"] == FieldValue::Number(8080.0)
            && v["tags"] == FieldValue::Choices(vec!["a".into()])));
        let err = answer_args(&[json!("d/elicit_1"), json!({"port": {"x": 1}})]).unwrap_err();
        assert!(err.contains("values: data did not match"), "{err}");
        assert!(answer_args(&[json!(3)]).is_err());
    }

    #[test]
    fn ask_results() {
        let parse = |v: Value| serde_json::from_value::<ext::AskResult>(v);
        assert!(matches!(
            decision(parse(json!({"outcome": "answered", "answers": [["a"]]})).unwrap()),
            Ok(Some(Human::Answer(Answer::Questions(_))))
        ));
        assert!(matches!(
            decision(parse(json!({"outcome": "rejected", "message": "no"})).unwrap()),
            Ok(Some(Human::Reject { message: Some(m) })) if m == "no"
        ));
        assert!(matches!(
            decision(parse(json!({"outcome": "deferred"})).unwrap()),
            Ok(None)
        ));
        assert!(decision(parse(json!({"outcome": "answered"})).unwrap()).is_err());
        assert!(parse(json!({"outcome": "maybe"})).is_err());
        assert!(parse(json!(null)).is_err());
    }
}
