//! Forms in the terminal: one line per field, checked as it is typed, or a
//! link to accept or decline (never opened by ask-lsp).

use crate::present::i18n::tr;
use crate::present::invalid;
use crate::present::prompt_text::{self, Layout, field_hint};
use crate::prompt::{Field, FieldKind, FieldValue, Form};

/// What a typed line means for one field.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    Value(FieldValue),
    /// Leave an optional field empty.
    Skip,
    /// Nothing typed and nothing to fall back on.
    Reject,
}

/// The text shown for a link form.
pub(super) fn link_text(form: &Form, text: &mut String) {
    if let Some(link) = &form.url {
        text.push_str(&prompt_text::link(&form.message, link));
        text.push_str(&tr!("form.link_how"));
    }
}

/// A form with nothing to fill in: sent as it is, or declined.
pub(super) fn empty_text(form: &Form, text: &mut String) {
    text.push_str(&tr!(
        "form.empty",
        message = prompt_text::form_message(form)
    ));
}

/// The text shown for one field.
pub(super) fn field_text(form: &Form, index: usize, text: &mut String) {
    let field = &form.fields[index];
    let message = prompt_text::form_message(form);
    if index == 0 && !message.is_empty() {
        text.push_str(&format!("{message}\n"));
    }
    prompt_text::field_position(text, index, form.fields.len(), Layout::Numbered);
    text.push_str(&field.title);
    if !field.description.is_empty() {
        text.push_str(&format!(" — {}", field.description));
    }
    text.push_str(&format!(" [{}]", field_hint(field)));
    prompt_text::field_options(text, field, Layout::Numbered);
    let how = match &field.kind {
        FieldKind::Text { .. } => tr!("form.how.text"),
        FieldKind::Number { .. } => tr!("form.how.number"),
        FieldKind::Boolean { .. } => tr!("form.how.boolean"),
        FieldKind::Choice { .. } => tr!("watch.how.number"),
        FieldKind::Multi { .. } => tr!("watch.how.numbers"),
    };
    let empty = match field.default_value() {
        Some(_) => tr!("form.empty.keeps_default"),
        None if !field.required => tr!("form.empty.leaves_empty"),
        None => tr!("form.empty.rejects"),
    };
    text.push_str(&tr!("form.how", how = how, empty = empty));
    if let Some(default) = field.default_value() {
        let value = prompt_text::value(&default, field, Layout::Numbered);
        text.push_str(&tr!("form.default", value = value));
    }
}

/// Reads one line for a field and checks it; the error says what to fix.
pub(super) fn parse(field: &Field, line: &str) -> Result<Line, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(match field.default_value() {
            Some(default) => Line::Value(default),
            None if !field.required => Line::Skip,
            None => Line::Reject,
        });
    }
    let options = match &field.kind {
        FieldKind::Choice { options, .. } | FieldKind::Multi { options, .. } => options.as_slice(),
        _ => &[],
    };
    let pick = |part: &str| -> Result<String, String> {
        let part = part.trim();
        match part.parse::<usize>() {
            Ok(n) if (1..=options.len()).contains(&n) => Ok(options[n - 1].value.clone()),
            _ => field
                .option(part)
                .map(|o| o.value.clone())
                .ok_or_else(|| tr!("watch.pick_range", n = options.len())),
        }
    };
    let value = match &field.kind {
        FieldKind::Text { .. } => FieldValue::Text(line.to_owned()),
        FieldKind::Number { .. } => {
            FieldValue::Number(line.parse::<f64>().map_err(|_| tr!("form.type_a_number"))?)
        }
        FieldKind::Boolean { .. } => match line.to_lowercase().as_str() {
            "y" | "yes" | "true" => FieldValue::Bool(true),
            "n" | "no" | "false" => FieldValue::Bool(false),
            _ => return Err(tr!("form.type_y_or_n")),
        },
        FieldKind::Choice { .. } => FieldValue::Choice(pick(line)?),
        FieldKind::Multi { .. } => {
            // Numbers as `1,3` or `1 3`; labels (which may hold spaces) by commas.
            let numbers = line
                .chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
            let parts: Vec<&str> = match numbers {
                true => line
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|part| !part.is_empty())
                    .collect(),
                false => line.split(',').collect(),
            };
            FieldValue::Choices(parts.into_iter().map(pick).collect::<Result<_, _>>()?)
        }
    };
    field
        .validate(value)
        .map(Line::Value)
        .map_err(|e| invalid::prompt_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::FieldOption;

    fn field(kind: FieldKind, required: bool) -> Field {
        Field {
            id: "f".into(),
            title: "Port".into(),
            description: String::new(),
            required,
            kind,
        }
    }

    #[test]
    fn lines_become_checked_values() {
        let port = field(
            FieldKind::Number {
                integer: true,
                minimum: Some(1024.0),
                maximum: None,
                default: Some(3000.0),
            },
            true,
        );
        assert_eq!(
            parse(&port, ""),
            Ok(Line::Value(FieldValue::Number(3000.0)))
        );
        assert_eq!(
            parse(&port, "8080"),
            Ok(Line::Value(FieldValue::Number(8080.0)))
        );
        assert_eq!(parse(&port, "80"), Err("Port takes at least 1024".into()));
        let in_chinese =
            crate::present::i18n::in_locale(crate::present::i18n::Locale::ZhCn, || {
                parse(&port, "80")
            });
        assert_eq!(in_chinese, Err("“Port”不能小于 1024".into()));
        assert_eq!(parse(&port, "eighty"), Err("type a number".into()));
        let sizes = field(
            FieldKind::Multi {
                options: ["s", "m"]
                    .iter()
                    .map(|v| FieldOption {
                        value: v.to_string(),
                        label: v.to_uppercase(),
                        description: String::new(),
                    })
                    .collect(),
                min_items: None,
                max_items: None,
                default: None,
            },
            false,
        );
        assert_eq!(
            parse(&sizes, "2, S"),
            Ok(Line::Value(FieldValue::Choices(vec![
                "m".into(),
                "s".into()
            ])))
        );
        assert_eq!(parse(&sizes, "3"), Err("pick a number from 1 to 2".into()));
        assert_eq!(
            parse(&sizes, "2 1"),
            Ok(Line::Value(FieldValue::Choices(vec![
                "m".into(),
                "s".into()
            ])))
        );
        assert_eq!(parse(&sizes, ""), Ok(Line::Skip));
        let flag = field(FieldKind::Boolean { default: None }, true);
        assert_eq!(parse(&flag, "Yes"), Ok(Line::Value(FieldValue::Bool(true))));
        assert_eq!(parse(&flag, "maybe"), Err("type y or n".into()));
        assert_eq!(parse(&flag, ""), Ok(Line::Reject));
    }
}
