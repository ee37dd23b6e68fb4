//! The plain surface, for clients without the extension: one
//! `window/showMessageRequest` per question (or permission, or form field)
//! with buttons, and code actions that answer or reject.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, MessageActionItem, MessageType,
    ShowMessageRequestParams,
};

use std::sync::Arc;

use super::drafts::{Decision, Drafts};
use super::ext;
use super::to_proto::wire_value;
use crate::broker::{Human, Pending};
use crate::present::i18n::{Locale, in_locale, tr};
use crate::present::prompt_text::{self, Layout, choice_title, field_hint};
use crate::present::who;
use crate::prompt::draft::Piece;
use crate::prompt::{
    Answer, Effect, Field, FieldKind, FieldValue, Form, FormValues, Kind, Permission,
};
use crate::text::{cells, is_plain};

/// The title of the reject action in `showMessageRequest`.
pub(crate) fn reject_action() -> String {
    tr!("plain.reject")
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
            prompt_text::question(
                &mut message,
                question,
                index,
                questions.len(),
                Layout::Buttons,
            );
            // Said only where the buttons cannot give the answer.
            if question.multiple || question.options.is_empty() {
                message.push_str(&tr!("plain.use_code_action", command = ext::CMD_ANSWER));
            }
        }
        Kind::Permission(permission) => prompt_text::permission(&mut message, permission),
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
            actions.push((reject_action(), PlainAction::Reject, true));
            actions.extend(
                questions[index]
                    .options
                    .iter()
                    .map(|o| (o.label.clone(), PlainAction::Option(o.label.clone()), false)),
            );
        }
        Kind::Permission(permission) => {
            if permission.reject_choice().is_none() {
                actions.push((reject_action(), PlainAction::Reject, true));
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
            actions.push((reject_action(), PlainAction::Reject, true));
            if form.url.is_some() {
                actions.push((tr!("plain.accept_link"), PlainAction::AcceptLink, true));
            } else if let Some(field) = form.fields.get(index) {
                match &field.kind {
                    FieldKind::Choice { options, .. } => actions.extend(
                        options
                            .iter()
                            .map(|o| (o.label.clone(), PlainAction::Value(o.value.clone()), false)),
                    ),
                    FieldKind::Boolean { .. } => actions.extend([
                        (tr!("plain.yes"), PlainAction::Yes, true),
                        (tr!("plain.no"), PlainAction::No, true),
                    ]),
                    _ => {}
                }
                if let Some(default) = field.default_value() {
                    let title = tr!(
                        "plain.default",
                        value = prompt_text::value(&default, field, Layout::Buttons)
                    );
                    actions.push((title, PlainAction::Default, true));
                }
                if !field.required {
                    actions.push((tr!("plain.skip"), PlainAction::Skip, true));
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

/// One field of a form (or its link) as a message; its buttons (a choice's
/// options, yes/no, the default, skip) are [`plain_actions`]; anything typed
/// goes through `askLsp.answer` or a code action.
fn form_message(form: &Form, key: &str, index: usize, message: &mut String) {
    if let Some(link) = &form.url {
        message.push_str(&prompt_text::link(&form.message, link));
        return;
    }
    let Some(field) = form.fields.get(index) else {
        message.push_str(&prompt_text::form_message(form));
        return;
    };
    prompt_text::field_position(message, index, form.fields.len(), Layout::Buttons);
    message.push_str(&format!("[{}] {}", form.name(), field.title));
    if !field.description.is_empty() {
        message.push_str(&format!(": {}", field.description));
    }
    message.push_str(&format!(" ({})", field_hint(field)));
    prompt_text::field_options(message, field, Layout::Buttons);
    if !matches!(
        field.kind,
        FieldKind::Choice { .. } | FieldKind::Boolean { .. }
    ) {
        message.push_str(&tr!(
            "plain.type_it",
            command = ext::CMD_ANSWER,
            key = key,
            field = field.id.escape_default()
        ));
    }
}

/// What the action a person clicked in [`message_request`] decides, found
/// by its title among the buttons that message had: in the language in
/// force, else in another (the language changed while it was open), so a
/// click on "✗ 拒绝" never passes for a typed answer.
pub(crate) fn message_choice(pending: &Pending, index: usize, title: &str) -> Decision {
    let find = |actions: Vec<(String, PlainAction)>| {
        actions
            .into_iter()
            .find(|(t, _)| t == title)
            .map(|(_, action)| action)
    };
    let action = find(plain_actions(pending, index)).or_else(|| {
        Locale::ALL
            .into_iter()
            .find_map(|locale| find(in_locale(locale, || plain_actions(pending, index))))
    });
    let field = || match &pending.prompt.kind {
        Kind::Form(form) => form.fields.get(index),
        _ => None,
    };
    let whole = |human| Decision::Whole(human);
    let set = |value| Decision::Piece(Piece::Field { index, value });
    match (action, &pending.prompt.kind) {
        (Some(PlainAction::Reject), _) => whole(Human::Reject { message: None }),
        (Some(PlainAction::AcceptLink), _) => whole(Human::Answer(Answer::Form(FormValues::new()))),
        (Some(PlainAction::Option(label)), _) => Decision::Piece(Piece::Question {
            index,
            answer: vec![label],
        }),
        (Some(PlainAction::Choice(choice)), _) => {
            whole(Human::Answer(Answer::Permission { choice }))
        }
        (Some(PlainAction::Value(value)), _) => set(Some(FieldValue::Choice(value))),
        (Some(PlainAction::Yes), _) => set(Some(FieldValue::Bool(true))),
        (Some(PlainAction::No), _) => set(Some(FieldValue::Bool(false))),
        (Some(PlainAction::Default), _) => set(field().and_then(Field::default_value)),
        (Some(PlainAction::Skip), _) => set(None),
        // Not one of ours: validation refuses it with a clear error (or
        // takes it as typed text where the question allows that).
        (None, Kind::Questions(_)) => Decision::Piece(Piece::Question {
            index,
            answer: vec![title.to_owned()],
        }),
        (None, Kind::Permission(_)) => whole(Human::Answer(Answer::Permission {
            choice: title.to_owned(),
        })),
        (None, Kind::Form(_)) => set(Some(FieldValue::Text(title.to_owned()))),
    }
}

/// One code action per option of every question still unanswered (or per
/// choice of a permission), and one to reject each prompt.
pub(crate) fn code_actions(listed: &[Arc<Pending>], drafts: &Drafts) -> Vec<CodeActionOrCommand> {
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
    for pending in listed {
        let key = json!(pending.key);
        match &pending.prompt.kind {
            Kind::Questions(questions) => {
                for index in drafts.remaining(pending) {
                    let question = &questions[index];
                    let name = prompt_text::question_name(question);
                    actions.push(action(
                        tr!("action.reject", title = name),
                        ext::CMD_REJECT,
                        vec![key.clone()],
                    ));
                    for option in &question.options {
                        actions.push(action(
                            tr!("action.answer", title = name, label = option.label),
                            ext::CMD_ANSWER,
                            vec![json!({"key": key, "question": index, "answer": [option.label]})],
                        ));
                    }
                }
            }
            Kind::Permission(permission) => {
                // The refusal first (a menu's default), as the reject
                // choice or `cancelled` where there is none.
                let named = who::title(&pending.title);
                actions.push(action(
                    tr!("action.reject", title = named),
                    ext::CMD_REJECT,
                    vec![key.clone()],
                ));
                let subject = allow_subject(permission);
                for choice in &permission.choices {
                    let title = match (choice.effect, &subject) {
                        (Effect::RejectOnce, _) => continue,
                        (Effect::RejectAlways, _) => {
                            tr!("action.titled", title = named, what = choice_title(choice))
                        }
                        (Effect::AllowOnce | Effect::AllowAlways, Some(subject)) => {
                            format!("{}: {subject}", choice_title(choice))
                        }
                        // What it would allow cannot be shown in a menu
                        // line: the person opens the prompt instead.
                        (Effect::AllowOnce | Effect::AllowAlways, None) => continue,
                    };
                    if cells(&title) > CODE_ACTION_CELLS {
                        continue;
                    }
                    actions.push(action(
                        title,
                        ext::CMD_ANSWER,
                        vec![json!({"key": key, "choice": choice.id})],
                    ));
                }
            }
            Kind::Form(form) => {
                let named = who::title(&pending.title);
                actions.push(action(
                    tr!("action.reject", title = named),
                    ext::CMD_REJECT,
                    vec![key.clone()],
                ));
                if let Some(link) = &form.url {
                    actions.push(action(
                        tr!("action.open_link", title = named, domain = link.domain),
                        ext::CMD_ANSWER,
                        vec![json!({"key": key, "values": {}})],
                    ));
                }
                for index in drafts.remaining(pending) {
                    let Some(field) = form.fields.get(index) else {
                        continue;
                    };
                    let mut set = |value: FieldValue, note: String| {
                        actions.push(action(
                            tr!(
                                "action.set_field",
                                title = named,
                                field = field.title,
                                value = prompt_text::value(&value, field, Layout::Buttons),
                                note = note
                            ),
                            ext::CMD_ANSWER,
                            vec![json!({"key": key, "values": { field.id.clone(): wire_value(&value) }})],
                        ))
                    };
                    match &field.kind {
                        FieldKind::Choice { options, .. } => {
                            for option in options {
                                set(FieldValue::Choice(option.value.clone()), String::new());
                            }
                        }
                        FieldKind::Boolean { .. } => {
                            set(FieldValue::Bool(true), String::new());
                            set(FieldValue::Bool(false), String::new());
                        }
                        _ => {
                            if let Some(default) = field.default_value() {
                                set(default, tr!("action.default_note"));
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
/// In display cells, so that a line of CJK text (two cells a character)
/// fits the same menu as 160 Latin characters.
const CODE_ACTION_CELLS: usize = 160;

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
        None => prompt_text::permission_title(permission),
    };
    (cells(&subject) <= CODE_ACTION_CELLS).then_some(subject)
}
