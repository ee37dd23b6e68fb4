//! What more than one adapter reads: OpenCode's question shape, which
//! sandbox-agent forwards as it is, and OpenCode's permission reply, which
//! both OpenCode generations take. Below the adapters, so that none of them
//! imports another.

use serde::Deserialize;

use crate::backends::RefuseReason;
use crate::prompt::{Answer, Choice, Effect, Permission, Question, Reply};

/// One question as OpenCode writes it (sandbox-agent forwards this shape too).
#[derive(Deserialize)]
pub(in crate::backends) struct QuestionInfo {
    question: String,
    #[serde(default)]
    header: String,
    #[serde(default)]
    options: Vec<QuestionOption>,
    #[serde(default)]
    multiple: bool,
    /// OpenCode's default is `true`: typed answers unless the agent said no.
    #[serde(default = "default_true")]
    custom: bool,
}

pub(super) fn default_true() -> bool {
    true
}

#[derive(Deserialize)]
struct QuestionOption {
    label: String,
    #[serde(default)]
    description: String,
}

impl QuestionInfo {
    pub(in crate::backends) fn into_question(self) -> Question {
        Question {
            header: self.header,
            text: self.question,
            options: self
                .options
                .into_iter()
                .map(|o| Choice::new(o.label, o.description))
                .collect(),
            multiple: self.multiple,
            custom: self.custom,
            secret: false,
            cannot_show: None,
        }
    }
}

/// OpenCode's permission reply (both generations): `once`, `always` or
/// `reject`, with the person's message where there is one; the flag says
/// whether it allows anything.
pub(in crate::backends) fn permission_reply(
    permission: &Permission,
    reply: &Reply,
) -> Result<(serde_json::Value, bool), RefuseReason> {
    match reply {
        Reply::Answer(Answer::Permission { choice }) => {
            let effect = permission
                .choices
                .iter()
                .find(|c| &c.id == choice)
                .map(|c| c.effect)
                .ok_or(RefuseReason::NotAChoice)?;
            let (reply, allows) = match effect {
                Effect::AllowOnce => ("once", true),
                Effect::AllowAlways => ("always", true),
                Effect::RejectOnce | Effect::RejectAlways => ("reject", false),
            };
            Ok((serde_json::json!({ "reply": reply }), allows))
        }
        Reply::Reject {
            message: Some(message),
        } => Ok((
            serde_json::json!({ "reply": "reject", "message": message }),
            false,
        )),
        Reply::Reject { message: None } | Reply::Cancel => {
            Ok((serde_json::json!({ "reply": "reject" }), false))
        }
        Reply::Answer(_) => Err(RefuseReason::NotAnAnswerToPermission),
    }
}
