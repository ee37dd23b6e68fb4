//! Which pending prompts a backend event ends: the one rule, applied by the
//! broker through its indexes and by `ask-lsp status` to a listing.

use crate::backends::BackendEvent;
use crate::prompt::{Prompt, State};

/// The prompts an event ends, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ends<'a> {
    pub which: Which<'a>,
    /// Resolved elsewhere with this state; `None`: the agent stopped
    /// waiting (the prompt is dismissed).
    pub elsewhere: Option<State>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which<'a> {
    /// The prompt with this id.
    Id(&'a str),
    /// The prompt of this tool call.
    Call(&'a str),
    /// Every prompt of this session.
    Session(&'a str),
}

/// What `event` ends, if it ends prompts at all.
pub(crate) fn ends(event: &BackendEvent) -> Option<Ends<'_>> {
    let (which, elsewhere) = match event {
        BackendEvent::ResolvedElsewhere { id, rejected } => (
            Which::Id(id),
            Some(if *rejected {
                State::Rejected
            } else {
                State::Replied
            }),
        ),
        BackendEvent::Withdrawn { id } => (Which::Id(id), None),
        // A tool call that went on answered its prompt; one that failed
        // leaves it moot.
        BackendEvent::ToolEnded { call_id, ok } => {
            (Which::Call(call_id), ok.then_some(State::Replied))
        }
        BackendEvent::SessionEnded { session } => (Which::Session(session), None),
        _ => return None,
    };
    Some(Ends { which, elsewhere })
}

impl Ends<'_> {
    /// Whether `prompt` is one of those it ends.
    pub fn covers(&self, prompt: &Prompt) -> bool {
        match self.which {
            Which::Id(id) => prompt.id == id,
            Which::Call(call) => prompt.origin.tool_call.as_deref() == Some(call),
            Which::Session(session) => prompt.session == session,
        }
    }
}
