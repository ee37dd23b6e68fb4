//! The permission kind: the agent asks to do something (run a command, edit
//! a file) and the person picks one of the choices its server offers.

use super::{PromptError, limits, line, text};
use crate::text::Cut;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Permission {
    /// The tool or action: `bash`, `edit`, an ACP tool kind.
    pub action: String,
    /// One line saying what is asked, for lists and titles.
    pub title: PermissionTitle,
    /// The patterns or resources it names (commands, paths).
    pub patterns: Vec<String>,
    /// The full command line, shown whole: its dangerous part may be at the end.
    pub command: Option<String>,
    /// A unified diff for edits.
    pub diff: Option<String>,
    pub choices: Vec<PermissionChoice>,
    /// `command` and `patterns` as the server sent them, for policies only:
    /// a rule must judge what runs, not what is shown. Set by
    /// [`Permission::into_checked`].
    pub raw_command: Option<String>,
    pub raw_patterns: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PermissionChoice {
    /// The backend's id for the choice (ACP's optionId, OpenCode's reply).
    pub id: String,
    pub label: ChoiceLabel,
    pub effect: Effect,
}

/// What a permission asks, in one line: the agent's own words, or words
/// ask-lsp composes (worded in the person's language by `present`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PermissionTitle {
    /// What the agent or its server sent, shown as received.
    Agent(String),
    /// Run this command line (cut to fit a title).
    Run(Cut<'static>),
    /// Edit this file (cut to fit a title).
    Edit(Cut<'static>),
    /// The action on this subject (`webfetch: https://…`), cut to fit.
    Action(Cut<'static>),
    /// Nothing says what: the action alone.
    Unnamed,
    /// A request ask-lsp cannot show, and why; it can only be rejected.
    CannotShow(Box<PromptError>),
    /// An agent's hook asks to use this tool.
    Tool { asker: Asker, tool: String },
    /// An agent's hook asks to run a command, for the reason it gives.
    RunCommand {
        asker: Asker,
        reason: Option<String>,
    },
    /// An agent's hook asks for network access.
    NetworkAccess { asker: Asker },
    /// An agent's hook asks to write or edit this file; its diff is shown,
    /// and the note says what to know about it.
    EditFile {
        asker: Asker,
        path: String,
        note: Option<EditNote>,
    },
}

/// What to know about an edit's diff ([`PermissionTitle::EditFile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditNote {
    /// The file is outside the project: it was not read, the diff shows the
    /// proposed content only.
    OutsideProject,
    /// Not a regular file (a device, a FIFO, a directory): not read.
    NotRegular,
    /// Too large to read for a diff.
    TooLarge,
    /// Could not be read (permissions, not UTF-8).
    Unreadable,
    /// The text the edit replaces is not in the file: the edit is shown as
    /// it was asked.
    OldTextNotFound,
}

/// The agent whose hook asks ([`PermissionTitle`]); a product name, the
/// same in every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asker {
    ClaudeCode,
    Codex,
    QwenCode,
    Copilot,
}

impl std::fmt::Display for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Asker::ClaudeCode => "Claude Code",
            Asker::Codex => "Codex",
            Asker::QwenCode => "Qwen Code",
            Asker::Copilot => "GitHub Copilot CLI",
        })
    }
}

impl From<String> for PermissionTitle {
    fn from(title: String) -> Self {
        PermissionTitle::Agent(title)
    }
}

impl From<&str> for PermissionTitle {
    fn from(title: &str) -> Self {
        PermissionTitle::Agent(title.into())
    }
}

/// A choice's name: the agent's own (an ACP option's), or ask-lsp's: what
/// the choice does ([`Effect`]) with the patterns "always" would approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChoiceLabel {
    /// The agent's label, whole unless a stand-in cut it (`present/` words
    /// the cut's note in the person's language).
    Agent(Cut<'static>),
    /// The patterns as cut to a label's length; `present/` words the cut's
    /// note in the person's language.
    Effect { patterns: Option<Cut<'static>> },
    /// Allows, and stores this in the agent's own settings: said in
    /// ask-lsp's words, the exact JSON beside them.
    Stores(Box<super::Stores>),
    /// Allowed now and for the rest of the agent's session (Codex's
    /// `acceptForSession`).
    ForSession,
    /// Allowed now, and from now on every command that starts with
    /// `prefix` (Codex's proposed exec-policy amendment).
    StartingWith { prefix: String },
}

impl From<String> for ChoiceLabel {
    fn from(label: String) -> Self {
        ChoiceLabel::Agent(Cut {
            kept: label.into(),
            hidden: 0,
        })
    }
}

impl From<&str> for ChoiceLabel {
    fn from(label: &str) -> Self {
        ChoiceLabel::from(label.to_owned())
    }
}

impl ChoiceLabel {
    /// ask-lsp's name for a choice: what it does, nothing more.
    pub const EFFECT: ChoiceLabel = ChoiceLabel::Effect { patterns: None };
}

/// What a choice does. Policies and timeouts look at this: only a person or a
/// rule that names the permission may allow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

impl Permission {
    pub(super) fn into_checked(mut self) -> Result<Permission, PromptError> {
        self.action = line("permission action", &self.action, limits::HEADER_LEN)?;
        let title = |t: &str| line("permission title", t, limits::QUESTION_LEN);
        let cut_title = |t: Cut<'static>| -> Result<Cut<'static>, PromptError> {
            Ok(Cut {
                kept: title(&t.kept)?.into(),
                hidden: t.hidden,
            })
        };
        self.title = match self.title {
            PermissionTitle::Agent(t) => match title(&t)? {
                t if t.is_empty() => PermissionTitle::Unnamed,
                t => PermissionTitle::Agent(t),
            },
            PermissionTitle::Run(t) => PermissionTitle::Run(cut_title(t)?),
            PermissionTitle::Edit(t) => PermissionTitle::Edit(cut_title(t)?),
            PermissionTitle::Action(t) => PermissionTitle::Action(cut_title(t)?),
            PermissionTitle::CannotShow(why) => PermissionTitle::CannotShow(why),
            PermissionTitle::Unnamed => PermissionTitle::Unnamed,
            PermissionTitle::Tool { asker, tool } => PermissionTitle::Tool {
                asker,
                tool: title(&tool)?,
            },
            PermissionTitle::RunCommand { asker, reason } => PermissionTitle::RunCommand {
                asker,
                reason: reason.as_deref().map(title).transpose()?,
            },
            PermissionTitle::NetworkAccess { asker } => PermissionTitle::NetworkAccess { asker },
            PermissionTitle::EditFile { asker, path, note } => PermissionTitle::EditFile {
                asker,
                path: title(&path)?,
                note,
            },
        };
        if self.patterns.len() > limits::PATTERNS {
            return Err(PromptError::TooMany {
                field: "permission patterns",
                count: self.patterns.len(),
                max: limits::PATTERNS,
            });
        }
        self.raw_patterns = self.patterns.clone();
        self.raw_command = self.command.clone();
        for pattern in &mut self.patterns {
            *pattern = line("permission pattern", pattern, limits::DETAIL_LEN)?;
        }
        for detail in [&mut self.command, &mut self.diff].into_iter().flatten() {
            *detail = text("permission detail", detail, limits::DETAIL_LEN)?;
        }
        if self.choices.is_empty() {
            return Err(PromptError::Empty {
                field: "permission choices",
            });
        }
        if self.choices.len() > limits::OPTIONS {
            return Err(PromptError::TooMany {
                field: "permission choices",
                count: self.choices.len(),
                max: limits::OPTIONS,
            });
        }
        for choice in &mut self.choices {
            match &mut choice.label {
                ChoiceLabel::Agent(label) => {
                    label.kept = line("choice label", &label.kept, limits::LABEL_LEN)?.into();
                    if label.kept.is_empty() {
                        return Err(PromptError::Empty {
                            field: "choice label",
                        });
                    }
                }
                ChoiceLabel::Effect {
                    patterns: Some(patterns),
                } => {
                    patterns.kept = line("choice label", &patterns.kept, limits::LABEL_LEN)?.into()
                }
                ChoiceLabel::Effect { patterns: None } => {}
                ChoiceLabel::Stores(stores) => stores.check()?,
                ChoiceLabel::ForSession => {}
                ChoiceLabel::StartingWith { prefix } => {
                    *prefix = line("choice label", prefix, limits::LABEL_LEN)?
                }
            }
        }
        Ok(self)
    }

    pub(super) fn validate(&self, choice: &str) -> Result<(), PromptError> {
        if self.choices.iter().any(|c| c.id == choice) {
            Ok(())
        } else {
            Err(PromptError::NotAChoice(
                crate::text::for_display(choice, 80).into_owned(),
            ))
        }
    }

    /// The title in English, as an English-speaking person reads it; what
    /// is said below the presentation floor uses [`super::Title::english`].
    #[cfg(test)]
    pub fn english_title(&self) -> String {
        english_title(&self.action, &self.title)
    }

    /// The choice a refusal maps to, where the server offers one.
    pub fn reject_choice(&self) -> Option<&PermissionChoice> {
        self.choices.iter().find(|c| c.effect == Effect::RejectOnce)
    }
}

/// A permission's title in English, its action at hand
/// ([`Permission::english_title`]).
pub(super) fn english_title(action: &str, title: &PermissionTitle) -> String {
    match title {
        PermissionTitle::Agent(title) => title.clone(),
        PermissionTitle::Run(command) => format!("Run {}", command.clone().english()),
        PermissionTitle::Edit(path) => format!("Edit {}", path.clone().english()),
        PermissionTitle::Action(subject) => format!("{action}: {}", subject.clone().english()),
        PermissionTitle::Unnamed => format!("Permission: {action}"),
        PermissionTitle::CannotShow(why) => format!(
            "A permission request that cannot be shown here ({}); it can only be rejected",
            crate::text::for_display(&why.to_string(), crate::text::DISPLAY_MESSAGE_CHARS)
        ),
        PermissionTitle::Tool { asker, tool } => format!("{asker} asks to use {tool}"),
        PermissionTitle::RunCommand {
            asker,
            reason: Some(reason),
        } => format!("{asker} asks to run a command: {reason}"),
        PermissionTitle::RunCommand {
            asker,
            reason: None,
        } => format!("{asker} asks to run a command"),
        PermissionTitle::NetworkAccess { asker } => format!("{asker} asks for network access"),
        PermissionTitle::EditFile { asker, path, note } => {
            let note = match note {
                None => return format!("{asker} asks to edit {path}"),
                Some(EditNote::OutsideProject) => {
                    "outside the project: only the new content is shown"
                }
                Some(EditNote::NotRegular) => "not a regular file: only the new content is shown",
                Some(EditNote::TooLarge) => "too large to compare: only the new content is shown",
                Some(EditNote::Unreadable) => "cannot be read: only the new content is shown",
                Some(EditNote::OldTextNotFound) => {
                    "the text to replace is not in the file: the edit is shown as asked"
                }
            };
            format!("{asker} asks to edit {path} ({note})")
        }
    }
}

#[cfg(test)]
impl PermissionChoice {
    /// The label as an English-speaking person reads it.
    pub fn english_label(&self) -> String {
        let does = match self.effect {
            Effect::AllowOnce => "Allow once",
            Effect::AllowAlways => "Allow always",
            Effect::RejectOnce => "Reject",
            Effect::RejectAlways => "Reject always",
        };
        match &self.label {
            ChoiceLabel::Agent(label) => label.clone().english().into_owned(),
            ChoiceLabel::Effect { patterns: None } => does.into(),
            ChoiceLabel::Effect {
                patterns: Some(patterns),
            } => format!("{does} ({})", patterns.clone().english()),
            ChoiceLabel::Stores(stores) => format!("{does} (stores {})", stores.exact),
            ChoiceLabel::ForSession => "Allow for this session".into(),
            ChoiceLabel::StartingWith { prefix } => {
                format!("Allow, and from now on commands that start with `{prefix}`")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::prompt;
    use super::super::{Answer, Kind, Reply};
    use super::*;

    pub(crate) fn run_rm() -> Permission {
        let choice = |id: &str, label: &str, effect| PermissionChoice {
            id: id.into(),
            label: label.into(),
            effect,
        };
        Permission {
            action: "execute".into(),
            title: "".into(),
            patterns: vec!["rm -rf build/".into()],
            command: Some("rm -rf build/ \u{1b}]52;c;aGk=\u{7}&& echo ok".into()),
            diff: None,
            raw_command: None,
            raw_patterns: Vec::new(),
            choices: vec![
                choice("allow-once", "Allow once", Effect::AllowOnce),
                choice("reject", "Reject", Effect::RejectOnce),
            ],
        }
    }

    #[test]
    fn details_are_neutralised_but_kept_whole() {
        let checked = run_rm().into_checked().unwrap();
        assert_eq!(checked.title, PermissionTitle::Unnamed);
        assert_eq!(checked.english_title(), "Permission: execute");
        assert_eq!(
            checked.command.as_deref(),
            Some("rm -rf build/ ␛]52;c;aGk=␇&& echo ok")
        );
        let mut long = run_rm();
        long.command = Some("x".repeat(100_000));
        assert_eq!(long.into_checked().unwrap().command.unwrap().len(), 100_000);
    }

    #[test]
    fn only_offered_choices_are_answers() {
        let p = prompt(Kind::Permission(Box::new(run_rm().into_checked().unwrap())));
        let answer = |choice: &str| {
            p.validate(Reply::Answer(Answer::Permission {
                choice: choice.into(),
            }))
        };
        assert!(answer("allow-once").is_ok());
        assert_eq!(
            answer("allow-always"),
            Err(PromptError::NotAChoice("allow-always".into()))
        );
        let mut none = run_rm();
        none.choices.clear();
        assert_eq!(
            none.into_checked().unwrap_err().to_string(),
            "permission choices is empty"
        );
    }
}
