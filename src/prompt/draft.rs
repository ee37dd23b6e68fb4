//! A prompt answered a piece at a time (one question, one form field, some
//! of a form's values), as plain surfaces and the terminal put it to a
//! person: each piece is checked when it comes, and once every piece is in
//! the draft gives the whole answer, the only thing the broker takes.
//! Answer assembly is the model's logic; the faces keep the drafts, and
//! `present/sentences.rs` words a refused piece.

use super::{
    Answer, FieldProblem, FieldValue, FormValues, Kind, KindName, Prompt, PromptError, Reply,
};
use crate::text::for_display;

/// One piece of an answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// One question's answer: option labels and/or typed text.
    Question { index: usize, answer: Vec<String> },
    /// One form field put to the person; `None` leaves an optional one
    /// empty. The form is whole once every field has been put.
    Field {
        index: usize,
        value: Option<FieldValue>,
    },
    /// Some of a form's values; whole once every required field has one.
    Fields(FormValues),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Progress {
    /// What is still open: question indices, or form field indices.
    Remaining(Vec<usize>),
    /// Every piece is in: the answer as given, checked whole (the broker
    /// checks it again, and maps labels to what the agent sent, once).
    Whole(Answer),
}

/// Why a piece was refused (worded by `present::sentences::draft_error`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DraftError {
    NoSuchQuestion(usize),
    NoSuchField(usize),
    Invalid(PromptError),
}

impl From<PromptError> for DraftError {
    fn from(error: PromptError) -> Self {
        DraftError::Invalid(error)
    }
}

/// The pieces given so far for one prompt.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    /// Per question, the answer as given (checked when given).
    answers: Vec<Option<Vec<String>>>,
    /// A form's values as given (checked when given).
    values: FormValues,
    /// Form fields already put to the person (answered or left empty).
    seen: Vec<bool>,
}

impl Draft {
    /// Adds a piece. A refused piece leaves the draft as it was.
    pub fn add(&mut self, prompt: &Prompt, piece: Piece) -> Result<Progress, DraftError> {
        match (&prompt.kind, piece) {
            (Kind::Questions(questions), Piece::Question { index, answer }) => {
                let question = questions
                    .get(index)
                    .ok_or(DraftError::NoSuchQuestion(index))?;
                question.validate(index, answer.clone())?;
                self.answers.resize(questions.len(), None);
                self.answers[index] = Some(answer);
                let remaining = self.remaining(prompt);
                if !remaining.is_empty() {
                    return Ok(Progress::Remaining(remaining));
                }
                let answers = self.answers.iter().flatten().cloned().collect();
                whole(prompt, Answer::Questions(answers))
            }
            (_, Piece::Question { index, .. }) => Err(DraftError::NoSuchQuestion(index)),
            (Kind::Form(form), Piece::Field { index, value }) => {
                let field = form
                    .fields
                    .get(index)
                    .ok_or(DraftError::NoSuchField(index))?;
                match value {
                    Some(value) => {
                        field.validate(value.clone())?;
                        self.values.insert(field.id.clone(), value);
                    }
                    None if field.required => {
                        return Err(PromptError::BadField {
                            field: field.title.clone(),
                            problem: FieldProblem::Required,
                        }
                        .into());
                    }
                    None => {
                        self.values.remove(&field.id);
                    }
                }
                self.seen.resize(form.fields.len(), false);
                self.seen[index] = true;
                let remaining = self.remaining(prompt);
                if !remaining.is_empty() {
                    return Ok(Progress::Remaining(remaining));
                }
                whole(prompt, Answer::Form(self.values.clone()))
            }
            (_, Piece::Field { index, .. }) => Err(DraftError::NoSuchField(index)),
            (Kind::Form(form), Piece::Fields(values)) => {
                // Every value is checked before any is kept.
                for (id, value) in &values {
                    let Some(field) = form.fields.iter().find(|f| &f.id == id) else {
                        let shown = for_display(id, 80);
                        return Err(PromptError::UnknownField(format!("{shown:?}")).into());
                    };
                    field.validate(value.clone())?;
                }
                self.seen.resize(form.fields.len(), false);
                for (index, field) in form.fields.iter().enumerate() {
                    self.seen[index] |= values.contains_key(&field.id);
                }
                self.values.extend(values);
                let missing: Vec<usize> = form
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.required && !self.values.contains_key(&f.id))
                    .map(|(i, _)| i)
                    .collect();
                if !missing.is_empty() {
                    return Ok(Progress::Remaining(missing));
                }
                whole(prompt, Answer::Form(self.values.clone()))
            }
            (_, Piece::Fields(_)) => Err(PromptError::WrongKind {
                prompt: prompt.kind.kind_name(),
                answer: KindName::Form,
            }
            .into()),
        }
    }

    /// The questions still without an answer, or the form fields not yet
    /// put to the person; none for a permission.
    pub fn remaining(&self, prompt: &Prompt) -> Vec<usize> {
        match &prompt.kind {
            Kind::Questions(questions) => (0..questions.len())
                .filter(|&i| self.answers.get(i).is_none_or(Option::is_none))
                .collect(),
            Kind::Form(form) => (0..form.fields.len())
                .filter(|&i| !self.seen.get(i).copied().unwrap_or(false))
                .collect(),
            Kind::Permission(_) => Vec::new(),
        }
    }
}

/// The whole answer, checked as the broker will check it, so that a
/// refusal comes with the piece that completed it.
fn whole(prompt: &Prompt, answer: Answer) -> Result<Progress, DraftError> {
    prompt.validate(Reply::Answer(answer.clone()))?;
    Ok(Progress::Whole(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{Choice, Field, FieldKind, FieldOption, Form, Origin, Question};

    fn prompt(kind: Kind) -> Prompt {
        Prompt {
            id: "que_1".into(),
            session: "ses_1".into(),
            directory: None,
            origin: Origin::default(),
            kind,
        }
        .into_checked()
        .expect("a valid prompt")
    }

    fn question(labels: &[&str], multiple: bool, custom: bool) -> Question {
        Question {
            header: "H".into(),
            text: "q".into(),
            options: labels
                .iter()
                .map(|l| Choice::new(l.to_string(), String::new()))
                .collect(),
            multiple,
            custom,
            secret: false,
            cannot_show: None,
        }
    }

    fn one(index: usize, answer: &[&str]) -> Piece {
        Piece::Question {
            index,
            answer: answer.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn questions() -> Prompt {
        prompt(Kind::Questions(vec![
            question(&["Red", "Blue"], false, false),
            question(&["S", "M", "L"], true, false),
            question(&[], false, true),
        ]))
    }

    fn form() -> Prompt {
        let field = |id: &str, required: bool, kind: FieldKind| Field {
            id: id.into(),
            title: id.to_uppercase(),
            description: String::new(),
            required,
            kind,
        };
        prompt(Kind::Form(Box::new(Form {
            message: "m".into(),
            fields: vec![
                field(
                    "port",
                    true,
                    FieldKind::Number {
                        integer: true,
                        minimum: Some(1024.0),
                        maximum: None,
                        default: None,
                    },
                ),
                field(
                    "size",
                    false,
                    FieldKind::Choice {
                        options: ["s", "m"]
                            .iter()
                            .map(|v| FieldOption {
                                value: v.to_string(),
                                label: v.to_uppercase(),
                                description: String::new(),
                            })
                            .collect(),
                        default: None,
                    },
                ),
                field("ok", true, FieldKind::Boolean { default: None }),
            ],
            url: None,
            cannot_show: None,
        })))
    }

    /// What the broker sends for an answer given whole.
    fn sent(prompt: &Prompt, answer: Answer) -> Reply {
        prompt.validate(Reply::Answer(answer)).expect("valid")
    }

    #[test]
    fn questions_answered_in_any_order_make_the_whole_answer() {
        let p = questions();
        let mut draft = Draft::default();
        assert_eq!(draft.remaining(&p), [0, 1, 2]);
        assert_eq!(
            draft.add(&p, one(2, &["  typed "])),
            Ok(Progress::Remaining(vec![0, 1]))
        );
        assert_eq!(
            draft.add(&p, one(0, &["Red"])),
            Ok(Progress::Remaining(vec![1]))
        );
        let Ok(Progress::Whole(whole)) = draft.add(&p, one(1, &["S", "L"])) else {
            panic!("not whole")
        };
        let given = Answer::Questions(vec![
            vec!["Red".into()],
            vec!["S".into(), "L".into()],
            vec!["  typed ".into()],
        ]);
        assert_eq!(whole, given);
        // The broker's answer is the one it would have sent for the whole
        // answer given at once.
        assert_eq!(sent(&p, whole), sent(&p, given));
    }

    #[test]
    fn a_repeated_piece_replaces_the_earlier_one() {
        let p = questions();
        let mut draft = Draft::default();
        draft.add(&p, one(0, &["Red"])).unwrap();
        draft.add(&p, one(0, &["Blue"])).unwrap();
        draft.add(&p, one(1, &[])).unwrap();
        assert_eq!(
            draft.add(&p, one(2, &["x"])),
            Ok(Progress::Whole(Answer::Questions(vec![
                vec!["Blue".into()],
                vec![],
                vec!["x".into()]
            ])))
        );
    }

    #[test]
    fn a_bad_piece_is_refused_and_not_kept() {
        let p = questions();
        let mut draft = Draft::default();
        draft.add(&p, one(0, &["Red"])).unwrap();
        assert_eq!(
            draft.add(&p, one(0, &["Green"])),
            Err(DraftError::Invalid(PromptError::NotAnOption {
                index: 0,
                value: "Green".into()
            }))
        );
        assert_eq!(
            draft.add(&p, one(7, &["x"])),
            Err(DraftError::NoSuchQuestion(7))
        );
        assert_eq!(
            draft.add(&p, one(1, &["S", "S"])),
            Err(DraftError::Invalid(PromptError::DuplicateAnswer {
                index: 1
            }))
        );
        // The earlier answer stands; nothing of the refused ones was kept.
        assert_eq!(draft.remaining(&p), [1, 2]);
        draft.add(&p, one(1, &["M"])).unwrap();
        let Ok(Progress::Whole(Answer::Questions(answers))) = draft.add(&p, one(2, &["t"])) else {
            panic!("not whole")
        };
        assert_eq!(answers[0], ["Red"]);
        // A piece of the wrong kind.
        assert_eq!(
            draft.add(
                &p,
                Piece::Field {
                    index: 0,
                    value: None
                }
            ),
            Err(DraftError::NoSuchField(0))
        );
    }

    #[test]
    fn a_neutralised_label_goes_back_as_the_agent_sent_it() {
        let raw = "Red\u{1b}[2J";
        let p = prompt(Kind::Questions(vec![
            question(&[raw], false, false),
            question(&["x"], false, false),
        ]));
        let mut draft = Draft::default();
        draft.add(&p, one(0, &["Red␛[2J"])).unwrap();
        let Ok(Progress::Whole(whole)) = draft.add(&p, one(1, &["x"])) else {
            panic!("not whole")
        };
        assert_eq!(
            sent(&p, whole),
            Reply::Answer(Answer::Questions(vec![vec![raw.into()], vec!["x".into()]]))
        );
    }

    #[test]
    fn form_fields_one_by_one_are_whole_once_each_was_put() {
        let p = form();
        let mut draft = Draft::default();
        let field = |index, value| Piece::Field { index, value };
        assert_eq!(
            draft.add(&p, field(2, Some(FieldValue::Bool(true)))),
            Ok(Progress::Remaining(vec![0, 1]))
        );
        assert_eq!(
            draft.add(&p, field(0, None)),
            Err(DraftError::Invalid(PromptError::BadField {
                field: "PORT".into(),
                problem: FieldProblem::Required
            }))
        );
        assert!(matches!(
            draft.add(&p, field(0, Some(FieldValue::Number(80.0)))),
            Err(DraftError::Invalid(PromptError::BadField { .. }))
        ));
        assert_eq!(draft.remaining(&p), [0, 1]);
        draft
            .add(&p, field(0, Some(FieldValue::Number(8080.0))))
            .unwrap();
        let Ok(Progress::Whole(whole)) = draft.add(&p, field(1, None)) else {
            panic!("not whole")
        };
        let given = Answer::Form(FormValues::from([
            ("port".into(), FieldValue::Number(8080.0)),
            ("ok".into(), FieldValue::Bool(true)),
        ]));
        assert_eq!(whole, given);
        assert_eq!(
            draft.add(&p, field(9, None)),
            Err(DraftError::NoSuchField(9))
        );
    }

    #[test]
    fn form_values_are_whole_once_every_required_field_has_one() {
        let p = form();
        let mut draft = Draft::default();
        let values = |pairs: &[(&str, FieldValue)]| {
            Piece::Fields(
                pairs
                    .iter()
                    .map(|(id, v)| (id.to_string(), v.clone()))
                    .collect(),
            )
        };
        assert_eq!(
            draft.add(&p, values(&[("size", FieldValue::Text("M".into()))])),
            Ok(Progress::Remaining(vec![0, 2]))
        );
        // One bad value refuses them all.
        assert!(
            draft
                .add(
                    &p,
                    values(&[
                        ("port", FieldValue::Number(8080.0)),
                        ("ok", FieldValue::Text("yes".into()))
                    ])
                )
                .is_err()
        );
        assert!(matches!(
            draft.add(&p, values(&[("nope", FieldValue::Bool(true))])),
            Err(DraftError::Invalid(PromptError::UnknownField(_)))
        ));
        assert_eq!(
            draft.add(&p, values(&[("port", FieldValue::Number(8080.0))])),
            Ok(Progress::Remaining(vec![2]))
        );
        let Ok(Progress::Whole(whole)) = draft.add(&p, values(&[("ok", FieldValue::Bool(false))]))
        else {
            panic!("not whole")
        };
        let given = Answer::Form(FormValues::from([
            ("port".into(), FieldValue::Number(8080.0)),
            ("size".into(), FieldValue::Text("M".into())),
            ("ok".into(), FieldValue::Bool(false)),
        ]));
        assert_eq!(whole, given.clone());
        assert_eq!(sent(&p, whole), sent(&p, given));
        // Values for a prompt that is not a form.
        assert_eq!(
            Draft::default().add(&questions(), values(&[])),
            Err(DraftError::Invalid(PromptError::WrongKind {
                prompt: KindName::Questions,
                answer: KindName::Form
            }))
        );
    }
}
