//! The permission kind: the agent asks to do something (run a command, edit
//! a file) and the person picks one of the choices its server offers.

use super::{PromptError, limits, line, text};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Permission {
    /// The tool or action: `bash`, `edit`, an ACP tool kind.
    pub action: String,
    /// One line saying what is asked, for lists and titles.
    pub title: String,
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
    pub label: String,
    pub effect: Effect,
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
        self.title = line("permission title", &self.title, limits::QUESTION_LEN)?;
        if self.title.is_empty() {
            self.title = format!("Permission: {}", self.action);
        }
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
            choice.label = line("choice label", &choice.label, limits::LABEL_LEN)?;
            if choice.label.is_empty() {
                return Err(PromptError::Empty {
                    field: "choice label",
                });
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

    /// The choice a refusal maps to, where the server offers one.
    pub fn reject_choice(&self) -> Option<&PermissionChoice> {
        self.choices.iter().find(|c| c.effect == Effect::RejectOnce)
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
            title: String::new(),
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
        assert_eq!(checked.title, "Permission: execute");
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
