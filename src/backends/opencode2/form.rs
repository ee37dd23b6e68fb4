//! OpenCode 2's forms (`Form.Info`) and their mapping to ask-lsp's prompt
//! model: field types, conditions, and the answers built back from a reply.
//!
//! Mirrored from anomalyco/opencode (docs/opencode2.md lists the files and
//! commits): `packages/schema/src/form.ts` (typed fields keyed by `key`;
//! answers are values by key) and `packages/core/src/tool/plugin/question.ts`
//! (the question tool asks through a form with `metadata.kind: "question"`,
//! one field per question keyed `q0`, `q1`, …, option values equal to their
//! labels).

use serde::Deserialize;
use serde_json::Value;

use crate::prompt::{
    Choice, Field, FieldKind, FieldOption, FieldValue, Form, FormValues, Kind, Link, Origin,
    Prompt, Question, TextFormat,
};

/// `Form.Info` (and `Form.Detail`, which adds its `state`). Two shapes of
/// it: with `mode` (`"form"` with fields, or `"url"` with a `url`; @23699db
/// and @3ece701d), and without `mode` (the current one), fields only, a link
/// being an `external` field answered `true` once opened.
#[derive(Debug, Deserialize)]
pub(super) struct FormInfo {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    title: Option<String>,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    mode: FormMode,
    #[serde(default)]
    fields: Vec<FormField>,
    url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FormMode {
    #[default]
    Form,
    Url,
}

/// The parts of `Form.Metadata` ask-lsp reads: who asks, and for MCP
/// elicitation the server's own message.
#[derive(Debug, Default, Deserialize)]
struct Metadata {
    kind: Option<String>,
    message: Option<String>,
    tool: Option<ToolRef>,
}

#[derive(Debug, Deserialize)]
struct ToolRef {
    id: Option<String>,
}

/// `Form.Field`: the common part and the type's own.
#[derive(Debug, Deserialize)]
struct FormField {
    key: String,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    /// "Skip the interactive prompt and use the default unless an answer
    /// is supplied" (upstream): not shown, never sent.
    #[serde(default)]
    hidden: bool,
    /// A list of conditions; the oldest generation (@23699db) gives one
    /// object.
    #[serde(default, deserialize_with = "one_or_many")]
    when: Vec<When>,
    #[serde(flatten)]
    spec: FieldSpec,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum FieldSpec {
    String {
        format: Option<String>,
        #[serde(rename = "minLength")]
        min_length: Option<u32>,
        #[serde(rename = "maxLength")]
        max_length: Option<u32>,
        pattern: Option<String>,
        default: Option<String>,
        options: Option<Vec<FormOption>>,
        #[serde(default)]
        custom: bool,
    },
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
    Integer {
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
    Boolean {
        default: Option<bool>,
    },
    Multiselect {
        options: Vec<FormOption>,
        #[serde(rename = "minItems")]
        min_items: Option<u32>,
        #[serde(rename = "maxItems")]
        max_items: Option<u32>,
        default: Option<Vec<String>>,
        /// Typed values allowed besides the options.
        #[serde(default)]
        custom: bool,
    },
    /// A link to open; acknowledged with `true`.
    External {
        url: String,
    },
}

#[derive(Debug, Deserialize)]
struct FormOption {
    value: String,
    label: String,
    description: Option<String>,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<When>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(When),
        Many(Vec<When>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(when)) => vec![when],
        Some(OneOrMany::Many(whens)) => whens,
    })
}

/// `Form.When`: a field is active only while all its conditions hold.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct When {
    key: String,
    op: WhenOp,
    value: Value,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum WhenOp {
    Eq,
    Neq,
}

/// What a form's reply needs beyond the prompt: the field keys in order
/// and their visibility conditions.
#[derive(Debug, Clone)]
pub(super) enum Shape {
    /// A question form shown as questions: per question its key, and
    /// whether it takes several values.
    Questions(Vec<(String, bool)>),
    /// Fields by key, each with its conditions, in the form's order.
    Fields(Vec<(String, Vec<When>)>),
    /// A link: consent is an empty answer (url mode), or `true` under
    /// the external field's key.
    Link(Option<String>),
}

/// Why a form cannot be shown here.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Unshowable(pub String);

impl FormInfo {
    /// The prompt, and what answering it needs. A question form whose fields
    /// all read as questions becomes a questions prompt (the person sees it
    /// as they saw questions on OpenCode 1.x); anything else is a form.
    pub(super) fn into_prompt(
        self,
        directory: Option<String>,
    ) -> Result<(Prompt, Shape), Unshowable> {
        let origin = Origin {
            tool_call: self.metadata.tool.as_ref().and_then(|t| t.id.clone()),
            agent: None,
            session_title: None,
            requester: None,
        };
        let message = [self.title.as_deref(), self.metadata.message.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        let fields: Vec<FormField> = self.fields.into_iter().filter(|f| !f.hidden).collect();
        let link = |url: String, key: Option<String>| {
            let form = Form {
                message: message.clone(),
                fields: vec![],
                url: Some(Link {
                    url,
                    domain: String::new(),
                }),
                cannot_show: None,
            };
            (Kind::Form(Box::new(form)), Shape::Link(key))
        };
        let externals = fields
            .iter()
            .filter(|f| matches!(f.spec, FieldSpec::External { .. }))
            .count();
        let (kind, shape) = match self.mode {
            FormMode::Url => link(
                self.url
                    .ok_or_else(|| Unshowable("a url form without a url".into()))?,
                None,
            ),
            FormMode::Form if externals > 0 => match <[FormField; 1]>::try_from(fields) {
                Ok(
                    [
                        FormField {
                            key,
                            spec: FieldSpec::External { url },
                            ..
                        },
                    ],
                ) => link(url, Some(key)),
                _ => {
                    return Err(Unshowable(
                        "it mixes a link to open with other fields".into(),
                    ));
                }
            },
            FormMode::Form if self.metadata.kind.as_deref() == Some("question") => {
                match as_questions(&fields) {
                    Some(keys) => (
                        Kind::Questions(fields.into_iter().map(FormField::into_question).collect()),
                        Shape::Questions(keys),
                    ),
                    None => fields_form(message, fields)?,
                }
            }
            FormMode::Form => fields_form(message, fields)?,
        };
        Ok((
            Prompt {
                id: self.id,
                session: self.session_id,
                directory,
                origin,
                kind,
            },
            shape,
        ))
    }
}

/// The keys of a form whose every field reads as a question (choices with
/// or without a typed answer, no conditions, no text constraints).
fn as_questions(fields: &[FormField]) -> Option<Vec<(String, bool)>> {
    fields
        .iter()
        .map(|field| {
            let multiple = match &field.spec {
                _ if !field.when.is_empty() => return None,
                FieldSpec::String {
                    format: None,
                    min_length: None,
                    max_length: None,
                    pattern: None,
                    options,
                    custom,
                    ..
                } if *custom || options.as_ref().is_some_and(|o| !o.is_empty()) => false,
                FieldSpec::Multiselect { .. } => true,
                _ => return None,
            };
            Some((field.key.clone(), multiple))
        })
        .collect()
}

fn fields_form(message: String, fields: Vec<FormField>) -> Result<(Kind, Shape), Unshowable> {
    let keys = fields
        .iter()
        .map(|f| (f.key.clone(), f.when.clone()))
        .collect();
    let fields = fields
        .into_iter()
        .map(FormField::into_field)
        .collect::<Result<_, _>>()?;
    let form = Form {
        message,
        fields,
        url: None,
        cannot_show: None,
    };
    Ok((Kind::Form(Box::new(form)), Shape::Fields(keys)))
}

impl FormField {
    fn into_question(self) -> Question {
        let (options, multiple, custom) = match self.spec {
            FieldSpec::String {
                options, custom, ..
            } => (options.unwrap_or_default(), false, custom),
            FieldSpec::Multiselect {
                options, custom, ..
            } => (options, true, custom),
            _ => (vec![], false, true),
        };
        Question {
            header: self.title.unwrap_or_default(),
            text: self.description.unwrap_or_default(),
            options: options
                .into_iter()
                .map(|o| Choice {
                    label: o.label,
                    description: o.description.unwrap_or_default(),
                    value: o.value,
                })
                .collect(),
            multiple,
            custom,
            secret: false,
            cannot_show: None,
        }
    }

    fn into_field(self) -> Result<Field, Unshowable> {
        let options = |options: Vec<FormOption>| {
            options
                .into_iter()
                .map(|o| FieldOption {
                    value: o.value,
                    label: o.label,
                    description: o.description.unwrap_or_default(),
                })
                .collect::<Vec<_>>()
        };
        let kind = match self.spec {
            FieldSpec::String {
                options: Some(choices),
                custom: false,
                default,
                ..
            } if !choices.is_empty() => FieldKind::Choice {
                options: options(choices),
                default,
            },
            // Suggestions with a typed answer allowed: a text field (the
            // form model has no open choice).
            FieldSpec::String {
                format,
                min_length,
                max_length,
                pattern,
                default,
                ..
            } => FieldKind::Text {
                format: match format.as_deref() {
                    None => None,
                    Some(name) if let Some(format) = TextFormat::from_name(name) => Some(format),
                    Some(other) => {
                        return Err(Unshowable(format!(
                            "field {:?} has an unknown text format {other:?}",
                            self.key
                        )));
                    }
                },
                pattern,
                min_length,
                max_length,
                default,
            },
            FieldSpec::Number {
                minimum,
                maximum,
                default,
            } => FieldKind::Number {
                integer: false,
                minimum,
                maximum,
                default,
            },
            FieldSpec::Integer {
                minimum,
                maximum,
                default,
            } => FieldKind::Number {
                integer: true,
                minimum,
                maximum,
                default,
            },
            FieldSpec::Boolean { default } => FieldKind::Boolean { default },
            FieldSpec::External { .. } => {
                return Err(Unshowable("a link among fields".into()));
            }
            FieldSpec::Multiselect {
                options: choices,
                min_items,
                max_items,
                default,
                // The form model has no open multi-choice: the options only.
                custom: _,
            } => FieldKind::Multi {
                options: options(choices),
                min_items,
                max_items,
                default,
            },
        };
        Ok(Field {
            title: self.title.unwrap_or_else(|| self.key.clone()),
            description: self.description.unwrap_or_default(),
            // A conditional field may be inactive, and then it is not required.
            required: self.required && self.when.is_empty(),
            id: self.key,
            kind,
        })
    }
}

/// `Form.Answer` for questions: a single choice is a string, several an
/// array; an unanswered question is left out (the question tool reads it as
/// no answer).
pub(super) fn question_answer(keys: &[(String, bool)], answers: &[Vec<String>]) -> Value {
    let mut answer = serde_json::Map::new();
    for ((key, multiple), values) in keys.iter().zip(answers) {
        let value = match (multiple, values.as_slice()) {
            (false, []) => continue,
            (false, [one, ..]) => Value::from(one.as_str()),
            (true, values) => Value::from(values.to_vec()),
        };
        answer.insert(key.clone(), value);
    }
    Value::Object(answer)
}

/// `Form.Answer` for a form: values by key, without the fields that are
/// inactive under the answer itself (upstream refuses an answer to an
/// inactive field). Fields are taken in order: a condition names an earlier
/// field, so dropping one falsifies the conditions on it, as upstream reads them.
pub(super) fn form_answer(keys: &[(String, Vec<When>)], values: &FormValues) -> Value {
    let mut answer = serde_json::Map::new();
    for (key, when) in keys {
        let Some(value) = values.get(key) else {
            continue;
        };
        if when.iter().all(|w| w.holds(answer.get(&w.key))) {
            answer.insert(key.clone(), json_value(value));
        }
    }
    Value::Object(answer)
}

impl When {
    /// Upstream's `matches`: an unanswered field makes either op false.
    fn holds(&self, answer: Option<&Value>) -> bool {
        let Some(answer) = answer else {
            return false;
        };
        let hit = match answer {
            Value::Array(items) => items.contains(&self.value),
            // JSON numbers compare by value (3 and 3.0 alike).
            Value::Number(n) => self.value.as_f64().is_some_and(|v| n.as_f64() == Some(v)),
            other => *other == self.value,
        };
        match self.op {
            WhenOp::Eq => hit,
            WhenOp::Neq => !hit,
        }
    }
}

fn json_value(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(text) | FieldValue::Choice(text) => Value::from(text.as_str()),
        // Whole numbers as integers: an `integer` field is checked with
        // `Number.isInteger`, and `3` reads better than `3.0` in any log.
        FieldValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Value::from(*n as i64),
        FieldValue::Number(n) => Value::from(*n),
        FieldValue::Bool(b) => Value::from(*b),
        FieldValue::Choices(values) => Value::from(values.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn when(key: &str, op: WhenOp, value: Value) -> When {
        When {
            key: key.into(),
            op,
            value,
        }
    }

    /// The oldest generation (@23699db9) gives `when` as one object, the
    /// later ones a list: both read, and both leave an inactive field out.
    #[test]
    fn both_shapes_of_when_are_read() {
        for when in [
            serde_json::json!({"key": "kind", "op": "eq", "value": "other"}),
            serde_json::json!([{"key": "kind", "op": "eq", "value": "other"}]),
        ] {
            let form: FormInfo = serde_json::from_value(serde_json::json!({
                "id": "frm_1", "sessionID": "ses_1", "title": "Why?",
                "fields": [
                    {"key": "kind", "type": "string", "options": [
                        {"value": "bug", "label": "Bug"}, {"value": "other", "label": "Other"}]},
                    {"key": "detail", "type": "string", "required": true, "when": when}
                ]
            }))
            .expect("a form");
            let (prompt, shape) = form.into_prompt(None).expect("showable");
            let Kind::Form(shown) = prompt.kind else {
                panic!("{prompt:?}");
            };
            assert!(!shown.fields[1].required);
            let Shape::Fields(keys) = shape else {
                panic!("{shape:?}");
            };
            let values = FormValues::from([
                ("kind".to_owned(), FieldValue::Choice("bug".into())),
                ("detail".to_owned(), FieldValue::Text("x".into())),
            ]);
            assert_eq!(
                form_answer(&keys, &values),
                serde_json::json!({"kind": "bug"})
            );
        }
    }

    /// A multi-select question with `custom: true` takes a typed answer too.
    #[test]
    fn a_multi_select_question_keeps_custom() {
        let form: FormInfo = serde_json::from_value(serde_json::json!({
            "id": "frm_1", "sessionID": "ses_1", "title": "Questions",
            "metadata": {"kind": "question"},
            "fields": [{"key": "q0", "type": "multiselect", "custom": true,
                        "options": [{"value": "Lint", "label": "Lint"}]}]
        }))
        .expect("a form");
        let (prompt, _) = form.into_prompt(None).expect("showable");
        let Kind::Questions(questions) = prompt.kind else {
            panic!("{prompt:?}");
        };
        assert!(questions[0].multiple && questions[0].custom);
    }

    /// A hidden field is left to the server's default: not shown, never sent.
    #[test]
    fn a_hidden_field_is_neither_shown_nor_sent() {
        let form: FormInfo = serde_json::from_value(serde_json::json!({
            "id": "frm_1", "sessionID": "ses_1", "title": "Sign in",
            "fields": [{"key": "user", "type": "string"},
                       {"key": "token", "type": "string", "hidden": true, "default": "t"}]
        }))
        .expect("a form");
        let (prompt, shape) = form.into_prompt(None).expect("showable");
        let Kind::Form(shown) = prompt.kind else {
            panic!("{prompt:?}");
        };
        assert_eq!(shown.fields.len(), 1);
        let Shape::Fields(keys) = shape else {
            panic!("{shape:?}");
        };
        let values = FormValues::from([
            ("user".to_owned(), FieldValue::Text("me".into())),
            ("token".to_owned(), FieldValue::Text("forged".into())),
        ]);
        assert_eq!(
            form_answer(&keys, &values),
            serde_json::json!({"user": "me"})
        );
    }

    #[test]
    fn inactive_fields_are_left_out_of_the_answer_in_cascade() {
        let keys = vec![
            ("kind".to_owned(), vec![]),
            (
                "detail".to_owned(),
                vec![when("kind", WhenOp::Eq, Value::from("other"))],
            ),
            (
                "more".to_owned(),
                vec![when("detail", WhenOp::Neq, Value::from("x"))],
            ),
        ];
        let values = FormValues::from([
            ("kind".to_owned(), FieldValue::Choice("a".into())),
            ("detail".to_owned(), FieldValue::Text("d".into())),
            ("more".to_owned(), FieldValue::Text("m".into())),
        ]);
        // `detail` is inactive (kind is not "other"), so `more`'s condition
        // on it is false too.
        assert_eq!(
            form_answer(&keys, &values),
            serde_json::json!({"kind": "a"})
        );
        let values = FormValues::from([
            ("kind".to_owned(), FieldValue::Choice("other".into())),
            ("detail".to_owned(), FieldValue::Text("d".into())),
            ("more".to_owned(), FieldValue::Number(3.0)),
        ]);
        assert_eq!(
            form_answer(&keys, &values),
            serde_json::json!({"kind": "other", "detail": "d", "more": 3})
        );
    }

    #[test]
    fn a_multiselect_condition_means_the_selection_includes_the_value() {
        let w = when("k", WhenOp::Eq, Value::from("mac"));
        assert!(w.holds(Some(&serde_json::json!(["linux", "mac"]))));
        assert!(!w.holds(Some(&serde_json::json!(["linux"]))));
        assert!(!when("k", WhenOp::Neq, Value::from("mac")).holds(None));
        assert!(when("n", WhenOp::Eq, Value::from(3)).holds(Some(&serde_json::json!(3.0))));
    }

    #[test]
    fn question_answers_are_strings_or_arrays_and_unanswered_is_omitted() {
        let keys = vec![
            ("q0".to_owned(), false),
            ("q1".to_owned(), true),
            ("q2".to_owned(), false),
        ];
        let answers = vec![vec!["Go".to_owned()], vec![], vec![]];
        assert_eq!(
            question_answer(&keys, &answers),
            serde_json::json!({"q0": "Go", "q1": []})
        );
    }
}
