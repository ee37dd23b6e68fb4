//! Model → wire: ask-lsp's prompts, resolutions and status as the
//! extension's shapes ([`super::ext`]).

use serde_json::{Value, json};

use super::ext;
use crate::broker::{Counters, Pending, Reason, Resolution, ServerStatus, State, Status};
use crate::present::{self, backend_error, prompt_text, sentences, who};
use crate::prompt::{Effect, FieldKind, FieldOption, FieldValue, Form, Kind, TextFormat};
use crate::text;

pub(crate) fn ask_params(pending: &Pending, queued: usize) -> ext::AskParams {
    let prompt = &pending.prompt;
    let mut form = None;
    let (kind, questions, permission) = match &prompt.kind {
        Kind::Questions(questions) => (
            ext::PromptKind::Questions,
            Some(
                questions
                    .iter()
                    .map(|q| ext::Question {
                        question: prompt_text::question_text(q).into_owned(),
                        header: prompt_text::question_header(q).into_owned(),
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
                        secret: q.secret,
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
                title: prompt_text::permission_title(p),
                patterns: p.patterns.clone(),
                command: p.command.clone(),
                diff: p.diff.clone(),
                choices: p
                    .choices
                    .iter()
                    .map(|c| ext::PermissionChoice {
                        id: c.id.clone(),
                        label: prompt_text::choice_label(c),
                        effect: effect(c.effect),
                    })
                    .collect(),
            }),
        ),
        Kind::Form(f) => {
            form = Some(form_params(f));
            (ext::PromptKind::Form, None, None)
        }
    };
    ext::AskParams {
        key: pending.key.clone(),
        server: pending.server.to_string(),
        request_id: present::cut::for_display(&prompt.id, text::DISPLAY_ID_CHARS).into_owned(),
        session_id: present::cut::for_display(&prompt.session, text::DISPLAY_ID_CHARS).into_owned(),
        kind,
        title: who::title(&pending.title),
        source: ext::Source {
            backend: pending.source.kind.backend().to_owned(),
            url: pending.source.url.clone(),
            directory: prompt
                .directory
                .as_deref()
                .map(|d| text::one_line(d).into_owned()),
        },
        origin: ext::Origin {
            // Kept raw for matching the tool call's end; shown neutralised.
            tool_call_id: (prompt.origin.tool_call.as_deref())
                .map(|call| present::cut::for_display(call, text::DISPLAY_ID_CHARS).into_owned()),
            agent: prompt.origin.agent.clone(),
            session_title: prompt
                .origin
                .session_title
                .as_ref()
                .map(|title| title.shown(crate::present::cut::note)),
            requester: who::requester(prompt),
        },
        questions,
        permission,
        form,
        timeout_ms: pending.timeout.map(|t| t.as_millis() as u64),
        pending: queued,
    }
}

fn form_params(form: &Form) -> ext::Form {
    ext::Form {
        message: prompt_text::form_message(form).into_owned(),
        url: form.url.as_ref().map(|link| ext::FormLink {
            url: link.url.clone(),
            domain: link.domain.clone(),
            warning: prompt_text::link_warning(link),
        }),
        fields: form
            .fields
            .iter()
            .map(|field| ext::FormField {
                id: field.id.clone(),
                title: field.title.clone(),
                description: field.description.clone(),
                required: field.required,
                kind: field_kind(&field.kind),
            })
            .collect(),
    }
}

fn field_kind(kind: &FieldKind) -> ext::FieldKind {
    let options = |options: &[FieldOption]| {
        options
            .iter()
            .map(|o| ext::FieldOption {
                value: o.value.clone(),
                label: o.label.clone(),
                description: o.description.clone(),
            })
            .collect()
    };
    match kind.clone() {
        FieldKind::Text {
            format,
            pattern,
            min_length,
            max_length,
            default,
        } => ext::FieldKind::Text {
            format: format.map(|f| match f {
                TextFormat::Email => ext::TextFormat::Email,
                TextFormat::Uri => ext::TextFormat::Uri,
                TextFormat::Date => ext::TextFormat::Date,
                TextFormat::DateTime => ext::TextFormat::DateTime,
            }),
            pattern,
            min_length,
            max_length,
            default,
        },
        FieldKind::Number {
            integer: false,
            minimum,
            maximum,
            default,
        } => ext::FieldKind::Number {
            minimum,
            maximum,
            default,
        },
        FieldKind::Number {
            integer: true,
            minimum,
            maximum,
            default,
        } => ext::FieldKind::Integer {
            minimum,
            maximum,
            default,
        },
        FieldKind::Boolean { default } => ext::FieldKind::Boolean { default },
        FieldKind::Choice {
            options: o,
            default,
        } => ext::FieldKind::Choice {
            options: options(&o),
            default,
        },
        FieldKind::Multi {
            options: o,
            min_items,
            max_items,
            default,
        } => ext::FieldKind::Multi {
            options: options(&o),
            min_items,
            max_items,
            default,
        },
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

/// `title`: the prompt's as the person reads it ([`who::title`]).
pub(crate) fn resolved_params(resolution: &Resolution, title: &str) -> ext::ResolvedParams {
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
        message: sentences::resolution(title, resolution.reason, &resolution.why),
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
                backend: s.kind.backend().to_owned(),
                url: s.url.clone(),
                connected: s.connected,
                error: s.error.as_ref().map(backend_error::backend_error),
                idle: s.error.as_ref().is_some_and(|e| e.is_normal_state()),
                defaulted: s.defaulted,
                discovered: s.discovered.clone(),
                generation: s.kind.generation().map(str::to_owned),
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

/// A form value as the extension and `askLsp.answer` carry it.
pub(crate) fn wire_value(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(s) | FieldValue::Choice(s) => json!(s),
        FieldValue::Number(n) => json!(n),
        FieldValue::Bool(b) => json!(b),
        FieldValue::Choices(values) => json!(values),
    }
}
