//! The app-server's requests as prompts, and the person's decision as the
//! response Codex receives. Shapes from the schema Codex prints
//! (`codex app-server generate-json-schema`, 0.169.0 and 0.171.0:
//! `CommandExecutionRequestApprovalParams`/`Response`,
//! `FileChangeRequestApprovalParams`/`Response`,
//! `ToolRequestUserInputParams`/`Response`,
//! `McpServerElicitationRequestParams`/`Response`) and what the real daemon
//! sent.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::backends::RefuseReason;
use crate::prompt::{
    Answer, Asker, Choice, ChoiceLabel, Effect, Kind, Origin, Permission, PermissionChoice,
    PermissionTitle, Prompt, Question, Reply,
};

pub(super) const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
pub(super) const FILE_APPROVAL: &str = "item/fileChange/requestApproval";
pub(super) const USER_INPUT: &str = "item/tool/requestUserInput";
pub(super) const ELICITATION: &str = "mcpServer/elicitation/request";

/// The choices' ids: Codex's own decision names.
const ACCEPT: &str = "accept";
const ACCEPT_FOR_SESSION: &str = "acceptForSession";
const ACCEPT_AMENDMENT: &str = "acceptWithExecpolicyAmendment";
const DECLINE: &str = "decline";

/// What the response to one request needs beside the reply.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expect {
    /// A command or file change approval; the exec-policy amendment Codex
    /// proposed, given back as proposed when the person picks it.
    Approval { amendment: Option<Vec<String>> },
    /// `request_user_input`: the questions' ids, in order.
    Answers { ids: Vec<String> },
    /// An MCP server's form (`mcpServer/elicitation/request`).
    Form,
}

/// One request as a prompt, with what its response needs; `None` when it is
/// not one ask-lsp shows (left to Codex's own clients).
pub(super) struct Asked {
    pub prompt: Prompt,
    pub expect: Expect,
    pub thread: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommandParams {
    thread_id: String,
    item_id: String,
    #[serde(default)]
    approval_id: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    command_actions: Vec<CommandAction>,
    #[serde(default)]
    proposed_execpolicy_amendment: Option<Vec<String>>,
    #[serde(default)]
    available_decisions: Option<Vec<Value>>,
    #[serde(default)]
    network_approval_context: Option<Value>,
}

#[derive(Deserialize)]
struct CommandAction {
    #[serde(default)]
    command: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileParams {
    thread_id: String,
    item_id: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    grant_root: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputParams {
    thread_id: String,
    item_id: String,
    questions: Vec<InputQuestion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputQuestion {
    id: String,
    #[serde(default)]
    header: String,
    question: String,
    #[serde(default)]
    is_other: bool,
    #[serde(default)]
    is_secret: bool,
    #[serde(default)]
    options: Option<Vec<InputOption>>,
}

#[derive(Deserialize)]
struct InputOption {
    label: String,
    #[serde(default)]
    description: String,
}

/// The thread a request belongs to, read before anything else.
pub(super) fn thread_of(params: &Value) -> Option<&str> {
    params.get("threadId").and_then(Value::as_str)
}

fn choice(id: &str, label: ChoiceLabel, effect: Effect) -> PermissionChoice {
    PermissionChoice {
        id: id.into(),
        label,
        effect,
    }
}

fn origin(item: &str) -> Origin {
    Origin {
        tool_call: Some(item.to_owned()),
        agent: Some("codex".into()),
        session_title: None,
        requester: None,
    }
}

/// The decision names Codex lists (`availableDecisions`): a string, or an
/// object whose one key names it. Without a list (older servers), the
/// schema's own: accept, for the session, decline.
fn listed(available: &Option<Vec<Value>>) -> Vec<String> {
    match available {
        None => vec![ACCEPT.into(), ACCEPT_FOR_SESSION.into(), DECLINE.into()],
        Some(list) => list
            .iter()
            .filter_map(|d| match d {
                Value::String(name) => Some(name.clone()),
                Value::Object(map) if map.len() == 1 => map.keys().next().cloned(),
                _ => None,
            })
            .collect(),
    }
}

/// The choices offered for what Codex lists: only the decisions whose effect
/// ask-lsp can say; "decline" always (Codex takes it, and the model is told
/// it was rejected), never "cancel" or a network rule.
fn approval_choices(listed: &[String], amendment: Option<&[String]>) -> Vec<PermissionChoice> {
    let mut choices = Vec::new();
    if listed.iter().any(|d| d == ACCEPT) {
        choices.push(choice(ACCEPT, ChoiceLabel::EFFECT, Effect::AllowOnce));
    }
    if listed.iter().any(|d| d == ACCEPT_FOR_SESSION) {
        choices.push(choice(
            ACCEPT_FOR_SESSION,
            ChoiceLabel::ForSession,
            Effect::AllowAlways,
        ));
    }
    if let Some(prefix) = amendment.filter(|a| !a.is_empty())
        && listed.iter().any(|d| d == ACCEPT_AMENDMENT)
    {
        choices.push(choice(
            ACCEPT_AMENDMENT,
            ChoiceLabel::StartingWith {
                prefix: prefix.join(" "),
            },
            Effect::AllowAlways,
        ));
    }
    choices.push(choice(DECLINE, ChoiceLabel::EFFECT, Effect::RejectOnce));
    choices
}

/// A prompt id stable across reconnects (the JSON-RPC id is not: each
/// connection numbers its requests from 0).
fn prompt_id(kind: &str, thread: &str, item: &str, approval: Option<&str>) -> String {
    match approval {
        Some(approval) => format!("codex-{kind}:{thread}:{item}:{approval}"),
        None => format!("codex-{kind}:{thread}:{item}"),
    }
}

/// The request `method` with `params` as a prompt; `diff` is the file
/// change's diff when the item announced it. `Err` for malformed params.
pub(super) fn asked(
    method: &str,
    params: Value,
    diff: impl FnOnce(&str, &str) -> Option<(Vec<String>, String)>,
) -> Result<Option<Asked>, serde_json::Error> {
    Ok(Some(match method {
        COMMAND_APPROVAL => {
            let p: CommandParams = serde_json::from_value(params)?;
            // `writeStdin` (input to a running terminal) and `humanCommand`
            // (a managed checkpoint) stay in Codex.
            if p.kind.as_deref().is_some_and(|k| k != "command") {
                return Ok(None);
            }
            let Some(command) = p.command else {
                return Ok(None);
            };
            let patterns: Vec<String> = p
                .command_actions
                .into_iter()
                .filter_map(|a| a.command)
                .collect();
            let title = match p.network_approval_context {
                Some(Value::Object(_)) => PermissionTitle::NetworkAccess {
                    asker: Asker::Codex,
                },
                _ => PermissionTitle::RunCommand {
                    asker: Asker::Codex,
                    reason: p.reason,
                },
            };
            let amendment = p.proposed_execpolicy_amendment;
            let choices = approval_choices(&listed(&p.available_decisions), amendment.as_deref());
            Asked {
                prompt: Prompt {
                    id: prompt_id("exec", &p.thread_id, &p.item_id, p.approval_id.as_deref()),
                    session: p.thread_id.clone(),
                    directory: p.cwd,
                    origin: origin(&p.item_id),
                    kind: Kind::Permission(Box::new(Permission {
                        action: "exec".into(),
                        title,
                        patterns: match patterns.is_empty() {
                            true => vec![command.clone()],
                            false => patterns,
                        },
                        command: Some(command),
                        diff: None,
                        choices,
                        raw_command: None,
                        raw_patterns: Vec::new(),
                    })),
                },
                expect: Expect::Approval { amendment },
                thread: p.thread_id,
            }
        }
        FILE_APPROVAL => {
            let p: FileParams = serde_json::from_value(params)?;
            let (paths, diff) = diff(&p.thread_id, &p.item_id).unwrap_or_default();
            let mut details = diff;
            if let Some(root) = &p.grant_root {
                // Asked to write under a root for the rest of the session.
                details = format!("grantRoot: {root}\n{details}");
            }
            let title = match (&p.reason, paths.first()) {
                (Some(reason), _) => PermissionTitle::Agent(reason.clone()),
                (None, Some(path)) => PermissionTitle::Edit(path.clone().into()),
                (None, None) => PermissionTitle::Unnamed,
            };
            Asked {
                prompt: Prompt {
                    id: prompt_id("patch", &p.thread_id, &p.item_id, None),
                    session: p.thread_id.clone(),
                    directory: None,
                    origin: origin(&p.item_id),
                    kind: Kind::Permission(Box::new(Permission {
                        action: "edit".into(),
                        title,
                        patterns: paths,
                        command: None,
                        diff: (!details.is_empty()).then_some(details),
                        choices: approval_choices(
                            &[ACCEPT.into(), ACCEPT_FOR_SESSION.into()],
                            None,
                        ),
                        raw_command: None,
                        raw_patterns: Vec::new(),
                    })),
                },
                expect: Expect::Approval { amendment: None },
                thread: p.thread_id,
            }
        }
        USER_INPUT => {
            let p: InputParams = serde_json::from_value(params)?;
            if p.questions.is_empty() {
                return Ok(None);
            }
            let ids = p.questions.iter().map(|q| q.id.clone()).collect();
            let questions = p
                .questions
                .into_iter()
                .map(|q| {
                    let options: Vec<Choice> = q
                        .options
                        .unwrap_or_default()
                        .into_iter()
                        .map(|o| Choice::new(o.label, o.description))
                        .collect();
                    Question {
                        header: q.header,
                        text: q.question,
                        // Without options the answer can only be typed; a
                        // secret is typed masked (a surface that cannot mask
                        // leaves it to Codex's terminal).
                        custom: q.is_other || q.is_secret || options.is_empty(),
                        options,
                        multiple: false,
                        secret: q.is_secret,
                        cannot_show: None,
                    }
                })
                .collect();
            Asked {
                prompt: Prompt {
                    id: prompt_id("input", &p.thread_id, &p.item_id, None),
                    session: p.thread_id.clone(),
                    directory: None,
                    origin: origin(&p.item_id),
                    kind: Kind::Questions(questions),
                },
                expect: Expect::Answers { ids },
                thread: p.thread_id,
            }
        }
        ELICITATION => match elicitation(&params) {
            Some(asked) => asked,
            None => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

/// An MCP server's form mode elicitation, mapped as ACP's forms are
/// (`backends::elicitation`: the same restricted schema, MCP
/// 2025-11-25); `None` for what stays in Codex: url and `openai/form`
/// modes, a schema ask-lsp cannot show whole, and Codex's own approval of
/// an MCP tool call (`_meta.codex_approval_kind`), a permission that only
/// Codex words.
fn elicitation(params: &Value) -> Option<Asked> {
    let thread = thread_of(params)?.to_owned();
    let server = params.get("serverName").and_then(Value::as_str)?;
    if params.get("mode").and_then(Value::as_str) != Some("form")
        || params.pointer("/_meta/codex_approval_kind").is_some()
    {
        return None;
    }
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    let schema = params.get("requestedSchema")?;
    // Codex's schema is serde's too: its keys arrive sorted.
    let form = crate::backends::elicitation::form(message.to_owned(), schema, &[]).ok()?;
    // It names no item: the server, the turn it came in and what it asks
    // (FNV-1a of the request) tell a replay from another request.
    let turn = params.get("turnId").and_then(Value::as_str).unwrap_or("");
    let asked = params
        .to_string()
        .bytes()
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
    Some(Asked {
        prompt: Prompt {
            id: prompt_id(
                "form",
                &thread,
                server,
                Some(&format!("{turn}:{asked:016x}")),
            ),
            session: thread.clone(),
            directory: None,
            origin: Origin {
                tool_call: None,
                agent: Some(format!("codex · {server}")),
                session_title: None,
                requester: None,
            },
            kind: Kind::Form(Box::new(form)),
        },
        expect: Expect::Form,
        thread,
    })
}

/// The one place a decision becomes what Codex receives. A permission's
/// choice is sent only if it is one the prompt offered; a refusal, a
/// timeout's cancel and anything unknown decline (never allow); a rejected
/// question gets no answers.
pub(super) fn response(
    expect: &Expect,
    prompt: &Prompt,
    reply: &Reply,
) -> Result<Value, RefuseReason> {
    match (expect, &prompt.kind, reply) {
        (Expect::Approval { amendment }, Kind::Permission(permission), reply) => {
            let decision = match reply {
                Reply::Answer(Answer::Permission { choice }) => {
                    if !permission.choices.iter().any(|c| &c.id == choice) {
                        return Err(RefuseReason::NotAChoice);
                    }
                    match choice.as_str() {
                        ACCEPT => json!(ACCEPT),
                        ACCEPT_FOR_SESSION => json!(ACCEPT_FOR_SESSION),
                        ACCEPT_AMENDMENT => match amendment {
                            Some(amendment) => {
                                json!({ACCEPT_AMENDMENT: {"execpolicy_amendment": amendment}})
                            }
                            None => return Err(RefuseReason::NoAmendment),
                        },
                        _ => json!(DECLINE),
                    }
                }
                Reply::Reject { .. } | Reply::Cancel => json!(DECLINE),
                Reply::Answer(_) => return Err(RefuseReason::NotAnAnswerToPermission),
            };
            Ok(json!({ "decision": decision }))
        }
        (Expect::Answers { ids }, Kind::Questions(_), reply) => Ok(match reply {
            Reply::Answer(Answer::Questions(answers)) => {
                if answers.len() != ids.len() {
                    return Err(RefuseReason::NotOneAnswerPerQuestion);
                }
                let answers: serde_json::Map<String, Value> = ids
                    .iter()
                    .zip(answers)
                    .map(|(id, answer)| (id.clone(), json!({ "answers": answer })))
                    .collect();
                json!({ "answers": answers })
            }
            Reply::Reject { .. } | Reply::Cancel => json!({ "answers": {} }),
            Reply::Answer(_) => return Err(RefuseReason::NotAnAnswerToQuestions),
        }),
        // A form: only the person's answer accepts; a refusal declines, a
        // timeout cancels (Codex's `McpServerElicitationAction`).
        (Expect::Form, Kind::Form(form), reply) => Ok(match reply {
            Reply::Answer(Answer::Form(values)) if form.url.is_none() => {
                crate::backends::elicitation::accept(form, values)
            }
            Reply::Reject { .. } => json!({"action": "decline", "content": null}),
            Reply::Cancel => json!({"action": "cancel", "content": null}),
            Reply::Answer(_) => return Err(RefuseReason::NotAnAnswerToForm),
        }),
        _ => Err(RefuseReason::AnswerDoesNotFit),
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
