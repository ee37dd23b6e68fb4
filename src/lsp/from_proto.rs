//! Wire → model: what clients send back (an `askQuestions/ask` result,
//! the arguments of `askLsp.answer`, `askLsp.reject`, `askLsp.show`) as
//! decisions of the model.

use std::collections::BTreeMap;

use serde_json::Value;

use super::drafts::Decision;
use super::ext;
use crate::broker::Human;
use crate::present::i18n::tr;
use crate::prompt::draft::Piece;
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
        ext::AskResult::Answered { .. } => Err(tr!("answer.one_of")),
        ext::AskResult::Rejected { message } => Ok(Some(Human::Reject { message })),
        ext::AskResult::Deferred => Ok(None),
    }
}

/// The argument of `askLsp.answer`: one object ([`ext::AnswerArguments`])
/// whose fields say what it answers; one question or some form values are a
/// piece of an answer, the rest whole decisions. Refusals are for the
/// person (the editor shows them), in their language; serde's detail stays
/// as serde writes it.
pub(crate) fn answer_args(arguments: &[Value]) -> Result<(String, Decision), String> {
    let usage = || tr!("answer.usage");
    let argument = match arguments {
        [argument @ Value::Object(_)] => argument,
        [Value::String(_), ..] => return Err(tr!("answer.positional", usage = usage())),
        _ => return Err(usage()),
    };
    let ext::AnswerArguments {
        key,
        answers,
        question,
        answer,
        choice,
        values,
    } = serde_json::from_value(argument.clone())
        .map_err(|e| tr!("answer.malformed", usage = usage(), error = e))?;
    let decision = match (answers, question, answer, choice, values) {
        (Some(answers), None, None, None, None) => {
            Decision::Whole(Human::Answer(Answer::Questions(answers)))
        }
        (None, Some(index), Some(answer), None, None) => {
            Decision::Piece(Piece::Question { index, answer })
        }
        (None, None, None, Some(choice), None) => {
            Decision::Whole(Human::Answer(Answer::Permission { choice }))
        }
        (None, None, None, None, Some(values)) => {
            Decision::Piece(Piece::Fields(form_values(values)))
        }
        _ => return Err(tr!("answer.several", usage = usage())),
    };
    Ok((key, decision))
}

/// Arguments of `askLsp.reject`: `[key]` or `[key, message]`.
pub(crate) fn reject_args(arguments: &[Value]) -> Result<(String, Human), String> {
    let usage = || tr!("answer.reject_usage");
    let key = key_arg(arguments).ok_or_else(usage)?;
    let message = match arguments {
        [_] => None,
        [_, Value::String(message)] => Some(message.clone()),
        _ => return Err(usage()),
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
    fn answer_arguments_say_what_they_answer() {
        let args = |v: Value| answer_args(&[v]);
        let (key, decision) = args(json!({"key": "d/que_1", "answers": [["Red"], []]})).unwrap();
        assert_eq!(key, "d/que_1");
        assert!(
            matches!(decision, Decision::Whole(Human::Answer(Answer::Questions(a))) if a == vec![vec!["Red".to_string()], vec![]])
        );
        let (_, decision) =
            args(json!({"key": "d/que_1", "question": 1, "answer": ["S", "M"]})).unwrap();
        assert!(
            matches!(decision, Decision::Piece(Piece::Question { index: 1, answer }) if answer == ["S", "M"])
        );
        let (_, decision) = args(json!({"key": "d/per_1", "choice": "allow-once"})).unwrap();
        assert!(
            matches!(decision, Decision::Whole(Human::Answer(Answer::Permission { choice })) if choice == "allow-once")
        );
        let (_, decision) = args(json!({"key": "d/elicit_1",
            "values": {"port": 8080, "tags": ["a"], "ok": true}}))
        .unwrap();
        assert!(
            matches!(decision, Decision::Piece(Piece::Fields(v)) if v.len() == 3
            && v["port"] == FieldValue::Number(8080.0)
            && v["tags"] == FieldValue::Choices(vec!["a".into()]))
        );
        let err = args(json!({"key": "d/elicit_1", "values": {"port": {"x": 1}}})).unwrap_err();
        assert!(err.contains("data did not match"), "{err}");
        let err = args(json!({"key": "d/que_1", "answers": true})).unwrap_err();
        assert!(err.contains("invalid type: boolean"), "{err}");
    }

    #[test]
    fn answer_arguments_with_two_meanings_or_none_are_refused() {
        let args = |v: Value| answer_args(&[v]).unwrap_err();
        let several = "not several";
        let err = args(json!({"key": "k", "answers": [["a"]], "choice": "once"}));
        assert!(err.contains(several), "{err}");
        let err = args(json!({"key": "k", "choice": "once", "values": {}}));
        assert!(err.contains(several), "{err}");
        // A question needs its answer, and an answer its question.
        assert!(args(json!({"key": "k", "question": 0})).contains(several));
        assert!(args(json!({"key": "k", "answer": ["a"]})).contains(several));
        assert!(args(json!({"key": "k"})).contains(several));
        let err = args(json!({"key": "k", "choise": "once"}));
        assert!(err.contains("unknown field `choise`"), "{err}");
        let err = args(json!({"choice": "once"}));
        assert!(err.contains("missing field `key`"), "{err}");
        // The positional shapes of before are refused, saying the new one.
        for old in [
            vec![json!("d/que_1"), json!([["Red"]])],
            vec![json!("d/que_1"), json!(0), json!(["Red"])],
            vec![json!("d/per_1"), json!("allow-once")],
            vec![json!("d/elicit_1"), json!({"port": 8080})],
        ] {
            let err = answer_args(&old).unwrap_err();
            assert!(err.contains("positional arguments"), "{err}");
            assert!(err.contains("[{key, choice: string}]"), "{err}");
        }
        assert!(answer_args(&[json!(3)]).is_err());
        assert!(answer_args(&[]).is_err());
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
