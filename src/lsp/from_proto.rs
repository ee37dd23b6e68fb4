//! Wire → model: what clients send back (an `askQuestions/ask` result,
//! the arguments of `askLsp.answer`, `askLsp.reject`, `askLsp.show`) as
//! decisions of the model.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ext;
use crate::broker::Human;
use crate::prompt::{Answer, FieldValue, FormValues};

/// A form answer from the wire; the field's kind settles what a string
/// means (text or a choice) when it is validated.
pub(crate) fn form_values(values: BTreeMap<String, ext::FieldValue>) -> FormValues {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
