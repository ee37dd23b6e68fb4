//! A prompt's short name, kept as facts rather than words so that it can be
//! said in the person's language even after the prompt is gone (a
//! resolution names the prompt it ended).

use std::borrow::Cow;

use super::limits;
use super::permission::{PermissionTitle, english_title};
use super::{PromptError, english_stand_in_title};
use crate::text::one_line;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Title {
    pub name: TitleName,
    /// The questions after the first.
    pub more: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TitleName {
    /// The agent's words: a question's header (else its text), a form's
    /// message (else its first field).
    Agent(String),
    /// A permission's title, with its action (`bash`, `edit`).
    Permission {
        action: String,
        title: PermissionTitle,
    },
    /// ask-lsp's stand-in for questions (`form: false`) or a form it could
    /// not show, and why.
    CannotShow { form: bool, why: Box<PromptError> },
}

impl Title {
    /// The name worded by `words` (the agent's as it is), on one line and cut at
    /// [`limits::TITLE_CHARS`] with `cut_note` saying how much it hid, then
    /// the other questions counted by `more`.
    pub fn naming(
        &self,
        words: impl FnOnce(&TitleName) -> String,
        more: impl FnOnce(&str, usize) -> String,
        cut_note: impl FnOnce(usize) -> String,
    ) -> String {
        let name = match &self.name {
            TitleName::Agent(name) => Cow::Borrowed(name.as_str()),
            ours => Cow::Owned(words(ours)),
        };
        let name = one_line(&name);
        let name = crate::text::cut(&name, limits::TITLE_CHARS).noted(cut_note);
        match self.more {
            0 => name.into_owned(),
            n => more(&name, n),
        }
    }

    /// The title in English, for what is said below the presentation floor
    /// (logs); `present` words it for a person.
    pub fn english(&self) -> String {
        self.naming(
            |name| match name {
                TitleName::Agent(name) => name.clone(),
                TitleName::Permission { action, title } => english_title(action, title),
                TitleName::CannotShow { form, why } => english_stand_in_title(*form, why),
            },
            |name, n| format!("{name} (+{n} more)"),
            crate::text::english_cut_note,
        )
    }
}

#[cfg(test)]
impl From<&str> for Title {
    fn from(name: &str) -> Title {
        Title {
            name: TitleName::Agent(name.into()),
            more: 0,
        }
    }
}
