//! TEMPORARY placeholder until the policy engine lands (same interface).
use crate::model::{Answers, QuestionRequest};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Policies;
#[derive(Debug, thiserror::Error)]
#[error("policy error")]
pub struct PolicyError;
pub struct Scope<'a> {
    pub server: &'a str,
    pub session_id: &'a str,
    pub agent: Option<&'a str>,
}
pub enum Decision {
    Forward { timeout: Option<Duration> },
    Answer { answers: Answers, reason: String },
    Reject { reason: String },
}
impl Policies {
    pub fn from_json(_value: Option<&serde_json::Value>) -> Result<Policies, PolicyError> {
        Ok(Policies)
    }
    pub fn decide(&self, _scope: &Scope<'_>, _request: &QuestionRequest) -> Decision {
        Decision::Forward { timeout: None }
    }
    pub fn timeout_fallback(_request: &QuestionRequest) -> Decision {
        Decision::Reject {
            reason: String::new(),
        }
    }
}
