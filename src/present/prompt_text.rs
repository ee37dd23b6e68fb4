//! The plain text of a prompt, for every face that shows it as text (plain
//! LSP messages, the terminal): a question with its options, a permission
//! with what it allows, a form field's hint, a value as a person reads it, a
//! link with where it leads, a permission choice as a button names it.

use super::i18n::tr;
use super::invalid::prompt_error;
use std::borrow::Cow;

use super::cut::{for_display, noted};
use crate::prompt::{
    ChoiceLabel, Effect, Field, FieldKind, FieldValue, Form, Link, Permission, PermissionChoice,
    PermissionTitle, PromptError, Question, TitleName,
};
use crate::text::{DISPLAY_MESSAGE_CHARS, one_line};

/// How options are laid out: as buttons beside the text (plain LSP), or
/// numbered for typing (the terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Buttons,
    Numbered,
}

/// Which of `total` (only said when there are several).
fn position(text: &mut String, index: usize, total: usize, layout: Layout) {
    if total > 1 {
        match layout {
            Layout::Buttons => text.push_str(&tr!("text.position", n = index + 1, total = total)),
            Layout::Numbered => text.push_str(&format!("({}/{total}) ", index + 1)),
        }
    }
}

/// An option (or choice) line, with its description.
fn option_line(text: &mut String, n: usize, label: &str, description: &str, layout: Layout) {
    match layout {
        Layout::Buttons => text.push_str(&format!("\n  {label}")),
        Layout::Numbered => text.push_str(&format!("\n  {}. {label}", n + 1)),
    }
    if !description.is_empty() {
        match layout {
            Layout::Buttons => text.push_str(&format!(": {description}")),
            Layout::Numbered => text.push_str(&format!(" — {description}")),
        }
    }
}

/// Question `index` of `total`: its header, text and options.
pub(crate) fn question(
    text: &mut String,
    question: &Question,
    index: usize,
    total: usize,
    layout: Layout,
) {
    position(text, index, total, layout);
    let header = question_header(question);
    if !header.is_empty() {
        text.push_str(&format!("[{header}] "));
    }
    text.push_str(&question_text(question));
    for (n, option) in question.options.iter().enumerate() {
        option_line(text, n, &option.label, &option.description, layout);
    }
}

/// A question's header: the agent's as received, or ask-lsp's on its
/// stand-in for questions it cannot show.
pub(crate) fn question_header(question: &Question) -> Cow<'_, str> {
    match &question.cannot_show {
        None => Cow::Borrowed(&question.header),
        Some(_) => Cow::Owned(tr!("stand_in.header")),
    }
}

/// A question's text: the agent's as received, or why ask-lsp's stand-in
/// stands in and what can still be done.
pub(crate) fn question_text(question: &Question) -> Cow<'_, str> {
    match &question.cannot_show {
        None => Cow::Borrowed(&question.text),
        Some(why) if question.custom => {
            Cow::Owned(tr!("stand_in.question_typed", reason = reason(why)))
        }
        Some(why) => Cow::Owned(tr!("stand_in.question", reason = reason(why))),
    }
}

/// The header, else the text ([`Question::name`] in the person's language).
pub(crate) fn question_name(question: &Question) -> Cow<'_, str> {
    match question.cannot_show {
        None => Cow::Borrowed(question.name()),
        Some(_) => question_header(question),
    }
}

/// A form's message: the agent's as received, or why ask-lsp's stand-in
/// stands in.
pub(crate) fn form_message(form: &Form) -> Cow<'_, str> {
    match &form.cannot_show {
        None => Cow::Borrowed(&form.message),
        Some(why) => Cow::Owned(tr!("stand_in.form", reason = reason(why))),
    }
}

/// A stand-in's title ([`TitleName::CannotShow`]): a question's header, a
/// form's message.
///
/// [`TitleName::CannotShow`]: crate::prompt::TitleName::CannotShow
fn stand_in_title(form: bool, why: &PromptError) -> String {
    match form {
        false => tr!("stand_in.header"),
        true => tr!("stand_in.form", reason = reason(why)),
    }
}

/// Why a prompt cannot be shown, bounded for a sentence.
fn reason(why: &PromptError) -> Cow<'static, str> {
    Cow::Owned(for_display(&prompt_error(why), DISPLAY_MESSAGE_CHARS).into_owned())
}

/// A permission: what it asks, the whole command, every pattern, the diff.
pub(crate) fn permission(text: &mut String, permission: &Permission) {
    text.push_str(&tr!(
        "text.permission",
        action = permission.action,
        title = permission_title(permission)
    ));
    if let Some(command) = &permission.command {
        text.push_str(&format!("\n  $ {command}"));
    }
    for pattern in &permission.patterns {
        text.push_str(&tr!("text.pattern", pattern = pattern));
    }
    if let Some(diff) = &permission.diff {
        text.push_str(&format!("\n{diff}"));
    }
}

/// Form field `index` of `total`'s position, as [`question`] says it.
pub(crate) fn field_position(text: &mut String, index: usize, total: usize, layout: Layout) {
    position(text, index, total, layout);
}

/// A field's options, as [`question`] lists a question's.
pub(crate) fn field_options(text: &mut String, field: &Field, layout: Layout) {
    // Buttons give a choice's options; a multiple choice is typed.
    let options = match (&field.kind, layout) {
        (FieldKind::Choice { options, .. }, _)
        | (FieldKind::Multi { options, .. }, Layout::Numbered) => options.as_slice(),
        _ => &[],
    };
    for (n, option) in options.iter().enumerate() {
        if layout == Layout::Buttons && option.description.is_empty() {
            continue; // the button says it all
        }
        option_line(text, n, &option.label, &option.description, layout);
    }
}

/// A link form as text: ask-lsp's own lines (the host a browser opens, any
/// warning about it, the whole URL) come first, and every line of the
/// agent's message after them is quoted with `│`, so that nothing the agent
/// writes can pass for a `Domain:` line of ask-lsp's.
pub(crate) fn link(message: &str, link: &Link) -> String {
    let mut text = tr!("text.link", domain = link.domain);
    if let Some(warning) = link_warning(link) {
        text.push_str(&format!("\n  ⚠ {warning}"));
    }
    text.push_str(&format!("\n  URL: {}", link.url));
    if !message.is_empty() {
        text.push_str(&tr!("text.agent_message"));
        for line in message.lines() {
            text.push_str("\n  │");
            if !line.is_empty() {
                text.push_str(&format!(" {line}"));
            }
        }
    }
    text
}

/// Why a link's host deserves a second look, in the person's language.
pub(crate) fn link_warning(link: &Link) -> Option<String> {
    let warning = link.warning()?;
    let written = warning.written_host.map(|written| {
        tr!(
            "link.written_host",
            written = noted(&written),
            domain = link.domain
        )
    });
    let internationalised = warning.internationalised.map(|idn| {
        let mixed = idn.mixed_scripts.map_or(String::new(), |(a, b)| {
            tr!("link.mixed_scripts", a = a, b = b)
        });
        tr!(
            "link.internationalised",
            domain = link.domain,
            shown = noted(&idn.shown),
            mixed = mixed
        )
    });
    let reasons: Vec<String> = written.into_iter().chain(internationalised).collect();
    Some(tr!(
        "link.check_host",
        reasons = reasons.join(&tr!("link.separator"))
    ))
}

/// What a field takes, in words: its kind and bounds.
pub(crate) fn field_hint(field: &Field) -> String {
    let mut parts: Vec<String> = vec![field_kind(&field.kind)];
    match &field.kind {
        FieldKind::Text {
            format,
            pattern,
            min_length,
            max_length,
            ..
        } => {
            parts.extend(format.map(|f| f.name().to_owned()));
            parts.extend(min_length.map(|n| tr!("hint.min_chars", n = n)));
            parts.extend(max_length.map(|n| tr!("hint.max_chars", n = n)));
            parts.extend(
                pattern
                    .as_ref()
                    .map(|p| tr!("hint.matching", pattern = one_line(p))),
            );
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            parts.extend(minimum.map(|n| tr!("hint.at_least", n = n)));
            parts.extend(maximum.map(|n| tr!("hint.at_most", n = n)));
        }
        FieldKind::Multi {
            min_items,
            max_items,
            ..
        } => {
            parts.extend(min_items.map(|n| tr!("hint.at_least", n = n)));
            parts.extend(max_items.map(|n| tr!("hint.at_most", n = n)));
        }
        FieldKind::Boolean { .. } | FieldKind::Choice { .. } => {}
    }
    if field.required {
        parts.push(tr!("hint.required"));
    }
    parts.join(&tr!("hint.separator"))
}

/// A field's kind in words.
fn field_kind(kind: &FieldKind) -> String {
    match kind {
        FieldKind::Text { .. } => tr!("hint.kind.text"),
        FieldKind::Number { integer: true, .. } => tr!("hint.kind.integer"),
        FieldKind::Number { .. } => tr!("hint.kind.number"),
        FieldKind::Boolean { .. } => tr!("hint.kind.boolean"),
        FieldKind::Choice { .. } => tr!("hint.kind.choice"),
        FieldKind::Multi { .. } => tr!("hint.kind.multi"),
    }
}

/// A value as a person reads it: an option by its label, a yes/no as the
/// layout answers it (a button's word, or the letter typed).
pub(crate) fn value(value: &FieldValue, field: &Field, layout: Layout) -> String {
    let label = |v: &str| field.option(v).map_or(v, |o| o.label.as_str()).to_owned();
    match (value, layout) {
        (FieldValue::Text(t), _) => t.clone(),
        (FieldValue::Number(n), _) => n.to_string(),
        (FieldValue::Bool(true), Layout::Buttons) => tr!("value.yes"),
        (FieldValue::Bool(false), Layout::Buttons) => tr!("value.no"),
        (FieldValue::Bool(true), Layout::Numbered) => "y".into(),
        (FieldValue::Bool(false), Layout::Numbered) => "n".into(),
        (FieldValue::Choice(c), _) => label(c),
        (FieldValue::Choices(cs), _) => cs
            .iter()
            .map(|c| label(c))
            .collect::<Vec<_>>()
            .join(&tr!("hint.separator")),
    }
}

/// A permission choice as a plain button or menu entry names: what it does
/// in ask-lsp's words, then the agent's label where that does not already
/// start with them (an ACP agent may call an `allow_once` option "Reject").
pub(crate) fn choice_title(choice: &PermissionChoice) -> String {
    match &choice.label {
        ChoiceLabel::Agent(label) => {
            let does = effect(choice.effect);
            let starts = label.kept.starts_with(&does);
            let label = noted(label);
            match starts {
                true => label,
                false => tr!("choice.title", does = does, label = label),
            }
        }
        ChoiceLabel::Effect { .. }
        | ChoiceLabel::Stores(_)
        | ChoiceLabel::ForSession
        | ChoiceLabel::StartingWith { .. } => choice_label(choice),
    }
}

/// A permission choice's label: the agent's as received, or ask-lsp's in
/// the person's language.
pub(crate) fn choice_label(choice: &PermissionChoice) -> String {
    match &choice.label {
        ChoiceLabel::Agent(label) => noted(label),
        ChoiceLabel::Effect { patterns: None } => effect(choice.effect),
        ChoiceLabel::Effect {
            patterns: Some(patterns),
        } => tr!(
            "choice.with_patterns",
            does = effect(choice.effect),
            patterns = noted(patterns)
        ),
        ChoiceLabel::Stores(stores) => super::stores::stores_label(stores),
        ChoiceLabel::ForSession => tr!("choice.for_session"),
        ChoiceLabel::StartingWith { prefix } => tr!("choice.starting_with", prefix = prefix),
    }
}

/// A permission's title: the agent's as received, or ask-lsp's in the
/// person's language.
pub(crate) fn permission_title(permission: &Permission) -> String {
    title_words(&permission.action, &permission.title)
}

/// A [`Title`]'s name in the person's language: the agent's as received,
/// ask-lsp's worded.
///
/// [`Title`]: crate::prompt::Title
pub(crate) fn title_name(name: &TitleName) -> String {
    match name {
        TitleName::Agent(name) => name.clone(),
        TitleName::Permission { action, title } => title_words(action, title),
        TitleName::CannotShow { form, why } => stand_in_title(*form, why),
    }
}

/// [`permission_title`] from its parts, as a [`Title`] keeps them.
///
/// [`Title`]: crate::prompt::Title
pub(crate) fn title_words(action: &str, title: &PermissionTitle) -> String {
    match title {
        PermissionTitle::Agent(title) => title.clone(),
        PermissionTitle::Run(command) => tr!("permission.run", command = noted(command)),
        PermissionTitle::Edit(path) => tr!("permission.edit", path = noted(path)),
        PermissionTitle::Action(subject) => {
            tr!(
                "permission.action",
                action = action,
                subject = noted(subject)
            )
        }
        PermissionTitle::Unnamed => tr!("permission.unnamed", action = action),
        PermissionTitle::CannotShow(why) => tr!("permission.cannot_show", reason = reason(why)),
        PermissionTitle::Tool { asker, tool } => {
            tr!("permission.tool", asker = asker, tool = tool)
        }
        PermissionTitle::RunCommand {
            asker,
            reason: Some(reason),
        } => tr!("permission.run_command_for", asker = asker, reason = reason),
        PermissionTitle::RunCommand {
            asker,
            reason: None,
        } => tr!("permission.run_command", asker = asker),
        PermissionTitle::NetworkAccess { asker } => tr!("permission.network", asker = asker),
        PermissionTitle::EditFile { asker, path, note } => {
            super::stores::edit_title(*asker, path, *note)
        }
    }
}

/// What a choice does, in ask-lsp's words.
fn effect(effect: Effect) -> String {
    match effect {
        Effect::AllowOnce => tr!("choice.allow_once"),
        Effect::AllowAlways => tr!("choice.allow_always"),
        Effect::RejectOnce => tr!("choice.reject"),
        Effect::RejectAlways => tr!("choice.reject_always"),
    }
}

/// What was decided when a person allowed the permission titled `title`,
/// in the past tense; `None` for a refusal.
pub(crate) fn allowed(effect: Effect, title: &str) -> Option<String> {
    match effect {
        Effect::AllowOnce => Some(tr!("choice.allowed_once", title = title)),
        Effect::AllowAlways => Some(tr!("choice.allowed_always", title = title)),
        Effect::RejectOnce | Effect::RejectAlways => None,
    }
}

#[cfg(test)]
#[path = "prompt_text_tests.rs"]
mod tests;
