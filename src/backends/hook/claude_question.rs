//! Claude Code's `AskUserQuestion` through its `PermissionRequest` hook:
//! the tool's questions as ask-lsp questions, and the person's answers as
//! the `allow` whose `updatedInput` carries them (docs/hook.md).
//!
//! What Claude Code 2.1.332 takes back: the tool's own input with
//! `answers`, a map from each question's text (as sent) to the chosen
//! label, the labels of a multi-select joined with `", "`, or the typed
//! text. An `allow` without `updatedInput` leaves its dialog open, so
//! anything short of answers decides nothing.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Agent, DEFAULT_DENIAL, Refusal, next_id};
use crate::prompt::{Answer, Choice, Kind, Origin, Prompt, Question, Reply};

/// One question of `AskUserQuestion`'s input (the fields shown).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeQuestion {
    question: String,
    #[serde(default)]
    header: String,
    #[serde(default)]
    options: Vec<ClaudeOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Deserialize)]
struct ClaudeOption {
    label: String,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
struct QuestionsInput {
    questions: Vec<ClaudeQuestion>,
}

/// The questions prompt of an `AskUserQuestion` request. The broker
/// neutralises and bounds its text; the answers go back under the
/// questions' texts as sent, kept here.
pub(super) fn prompt(
    session: String,
    cwd: Option<String>,
    tool_input: Value,
) -> Result<(Prompt, Agent), Refusal> {
    let parsed: QuestionsInput =
        serde_json::from_value(tool_input.clone()).map_err(|_| Refusal::AskUserQuestion)?;
    let texts: Vec<String> = parsed
        .questions
        .iter()
        .map(|q| q.question.clone())
        .collect();
    // Claude keys the answers by question text: two alike cannot both go back.
    if texts.is_empty() || (1..texts.len()).any(|i| texts[..i].contains(&texts[i])) {
        return Err(Refusal::AskUserQuestion);
    }
    let questions = parsed
        .questions
        .into_iter()
        .map(|q| Question {
            header: q.header,
            text: q.question,
            options: q
                .options
                .into_iter()
                .map(|o| Choice::new(o.label, o.description))
                .collect(),
            multiple: q.multi_select,
            // Claude's "Other": typed text is always an answer.
            custom: true,
            secret: false,
            cannot_show: None,
        })
        .collect();
    let prompt = Prompt {
        id: next_id(),
        session,
        directory: cwd,
        origin: Origin {
            tool_call: None,
            agent: Some("claude".into()),
            session_title: None,
            requester: None,
        },
        kind: Kind::Questions(questions),
    };
    Ok((prompt, Agent::ClaudeQuestion { tool_input, texts }))
}

/// The decision in Claude's terms: answers as `updatedInput`, a refusal
/// as `deny` with the person's message; `{}` decides nothing.
pub(super) fn decision(reply: &Reply, tool_input: Value, texts: &[String]) -> Value {
    match reply {
        Reply::Answer(Answer::Questions(answers)) if answers.len() == texts.len() => {
            let answered: Map<String, Value> = texts
                .iter()
                .zip(answers)
                .map(|(text, chosen)| (text.clone(), json!(chosen.join(", "))))
                .collect();
            let mut updated = match tool_input {
                Value::Object(map) => map,
                _ => return json!({}),
            };
            updated.insert("answers".into(), Value::Object(answered));
            json!({"behavior": "allow", "updatedInput": updated})
        }
        Reply::Reject { message } => json!({
            "behavior": "deny",
            "message": message.as_deref().unwrap_or(DEFAULT_DENIAL),
        }),
        Reply::Answer(_) | Reply::Cancel => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> Value {
        json!({"questions": [
            {"question": "Which database should I use?", "header": "Database", "multiSelect": false,
             "options": [{"label": "SQLite", "description": "One file"},
                         {"label": "Postgres", "description": "A server"}]},
            {"question": "Which checks?", "header": "Checks", "multiSelect": true,
             "options": [{"label": "Lint", "description": ""}, {"label": "Tests", "description": ""}]}
        ], "metadata": {"source": "x"}})
    }

    fn asked(input: Value) -> (Prompt, Value, Vec<String>) {
        match prompt("s1".into(), Some("/p".into()), input).unwrap() {
            (prompt, Agent::ClaudeQuestion { tool_input, texts }) => (prompt, tool_input, texts),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn claudes_questions_become_questions_with_a_typed_answer_always_possible() {
        let (prompt, _, texts) = asked(input());
        let Kind::Questions(questions) = &prompt.kind else {
            panic!("{prompt:?}")
        };
        assert_eq!(texts, ["Which database should I use?", "Which checks?"]);
        assert_eq!(questions[0].header, "Database");
        assert_eq!(questions[0].options[0].description, "One file");
        assert!(!questions[0].multiple && questions[1].multiple);
        assert!(questions.iter().all(|q| q.custom));
        assert_eq!(prompt.origin.agent.as_deref(), Some("claude"));
    }

    #[test]
    fn answers_go_back_in_the_tools_own_input_keyed_by_question_text() {
        let (_, tool_input, texts) = asked(input());
        let answers = Reply::Answer(Answer::Questions(vec![
            vec!["SQLite".into()],
            vec!["Lint".into(), "Tests".into()],
        ]));
        let mut expected = input();
        expected["answers"] =
            json!({"Which database should I use?": "SQLite", "Which checks?": "Lint, Tests"});
        assert_eq!(
            decision(&answers, tool_input.clone(), &texts),
            json!({"behavior": "allow", "updatedInput": expected})
        );
        assert_eq!(
            decision(
                &Reply::Reject {
                    message: Some("ask me later".into())
                },
                tool_input.clone(),
                &texts
            ),
            json!({"behavior": "deny", "message": "ask me later"})
        );
        assert_eq!(
            decision(&Reply::Cancel, tool_input.clone(), &texts),
            json!({})
        );
        // A wrong count is no decision, never answers put under the wrong question.
        let short = Reply::Answer(Answer::Questions(vec![vec!["SQLite".into()]]));
        assert_eq!(decision(&short, tool_input, &texts), json!({}));
    }

    #[test]
    fn questions_that_cannot_go_back_are_left_to_claude() {
        let refused = |input: Value| prompt("s".into(), None, input).is_err();
        assert!(refused(json!({})));
        assert!(refused(json!({"questions": []})));
        assert!(refused(json!({"questions": [{"header": "x"}]})));
        let same = json!({"question": "Why?", "options": [{"label": "a"}]});
        assert!(refused(json!({"questions": [same.clone(), same]})));
    }
}
