//! The one conversion module between ask-lsp's types and the wire: the
//! extension's shapes ([`super::ext`]), plain `showMessageRequest` prompts,
//! code actions, and reading what clients send back.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, MessageActionItem, MessageType,
    ShowMessageRequestParams,
};

use super::ext;
use crate::broker::{
    Counters, Human, Listed, Pending, Reason, Resolution, ServerStatus, State, Status,
};
use crate::prompt::{Answer, Effect, Kind};

/// The title of the reject action in `showMessageRequest`.
pub(crate) const REJECT_ACTION: &str = "✗ Reject";

pub(crate) fn ask_params(pending: &Pending, queued: usize) -> ext::AskParams {
    let prompt = &pending.prompt;
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
    };
    ext::AskParams {
        key: pending.key.clone(),
        server: pending.server.to_string(),
        request_id: prompt.id.clone(),
        session_id: prompt.session.clone(),
        kind,
        title: pending.title.clone(),
        source: ext::Source {
            backend: pending.source.backend.to_owned(),
            url: pending.source.url.clone(),
            directory: prompt.directory.clone(),
        },
        origin: ext::Origin {
            tool_call_id: prompt.origin.tool_call.clone(),
            agent: prompt.origin.agent.clone(),
        },
        questions,
        permission,
        timeout_ms: pending.timeout.map(|t| t.as_millis() as u64),
        pending: queued,
    }
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
        } => Ok(Some(Human::Answer(Answer::Questions(answers)))),
        ext::AskResult::Answered {
            answers: None,
            choice: Some(choice),
        } => Ok(Some(Human::Answer(Answer::Permission { choice }))),
        ext::AskResult::Answered { .. } => {
            Err("an answer has either `answers` (questions) or `choice` (a permission)".into())
        }
        ext::AskResult::Rejected { message } => Ok(Some(Human::Reject { message })),
        ext::AskResult::Deferred => Ok(None),
    }
}

/// Arguments of `askLsp.answer`: `[key, answers: string[][]]`,
/// `[key, questionIndex, answer: string[]]`, or `[key, choiceId]` for a
/// permission.
pub(crate) fn answer_args(arguments: &[Value]) -> Result<(String, Human), String> {
    const USAGE: &str = "askLsp.answer takes [key, answers: string[][]], [key, questionIndex, answer: string[]] or [key, choiceId: string]";
    let key = key_arg(arguments).ok_or(USAGE)?;
    match arguments {
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
    let mut titles: Vec<String> = Vec::new();
    let mut reject = true;
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
            titles.extend(question.options.iter().map(|o| o.label.clone()));
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
                message.push_str(&format!("\n  {pattern}"));
            }
            if let Some(diff) = &permission.diff {
                message.push_str(&format!("\n{diff}"));
            }
            titles.extend(permission.choices.iter().map(|c| c.label.clone()));
            reject = permission.reject_choice().is_none();
        }
    }
    if let Some(context) = context {
        message.push_str(&format!("\n— {context}"));
    }
    if reject {
        titles.push(REJECT_ACTION.into());
    }
    ShowMessageRequestParams {
        typ: MessageType::INFO,
        message,
        actions: Some(
            titles
                .into_iter()
                .map(|title| MessageActionItem {
                    title,
                    properties: Default::default(),
                })
                .collect(),
        ),
    }
}

/// What the action a person clicked in [`message_request`] decides.
pub(crate) fn message_choice(pending: &Pending, index: usize, title: &str) -> Human {
    match &pending.prompt.kind {
        _ if title == REJECT_ACTION => Human::Reject { message: None },
        Kind::Questions(_) => Human::One {
            index,
            answer: vec![title.to_owned()],
        },
        Kind::Permission(permission) => {
            match permission.choices.iter().find(|c| c.label == title) {
                Some(choice) => Human::Answer(Answer::Permission {
                    choice: choice.id.clone(),
                }),
                // Not one of ours: validation refuses it with a clear error.
                None => Human::Answer(Answer::Permission {
                    choice: title.to_owned(),
                }),
            }
        }
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
                    for option in &question.options {
                        actions.push(action(
                            format!("Answer \"{name}\": {}", option.label),
                            ext::CMD_ANSWER,
                            vec![key.clone(), json!(index), json!([option.label])],
                        ));
                    }
                    actions.push(action(
                        format!("Reject \"{name}\""),
                        ext::CMD_REJECT,
                        vec![key.clone()],
                    ));
                }
            }
            Kind::Permission(permission) => {
                for choice in &permission.choices {
                    actions.push(action(
                        format!("\"{}\": {}", pending.title, choice.label),
                        ext::CMD_ANSWER,
                        vec![key.clone(), json!(choice.id)],
                    ));
                }
            }
        }
    }
    actions
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
        let err = answer_args(&[json!("d/que_1"), json!({"Red": 1})]).unwrap_err();
        assert!(err.contains("answers: invalid type: map"), "{err}");
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
