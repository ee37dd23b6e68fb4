//! What an "allow always" choice stores in the agent's own settings (Claude
//! Code's `permission_suggestions`), as facts ask-lsp words, with the exact
//! text the agent will receive shown beside the words.

use super::{PromptError, limits, line};

/// One settings change a choice stores beside allowing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stores {
    /// The agent whose settings change.
    pub asker: super::Asker,
    pub change: Change,
    pub scope: Scope,
    /// The change exactly as the agent receives it (JSON), shown beside the
    /// words; neutralised for display by [`super::Permission::into_checked`].
    pub exact: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Tool rules added with this behaviour.
    Rules {
        behavior: RuleBehavior,
        rules: Vec<ToolRule>,
    },
    /// Directories the agent may use besides its working directory.
    Directories(Vec<String>),
    /// The session's permission mode.
    Mode(AgentMode),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleBehavior {
    Allow,
    Deny,
    Ask,
}

/// A tool rule: the tool, and what of it (`npm test`, `npm run:*`); none:
/// every use of the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolRule {
    pub tool: String,
    pub content: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AgentMode {
    /// Every file edit is accepted without asking.
    AcceptEdits,
    /// Nothing is asked at all.
    BypassPermissions,
    /// Plans only, changes nothing.
    Plan,
    /// Asks as by default.
    Default,
    /// A mode ask-lsp does not know, by the agent's name.
    Other(String),
}

/// Where the change is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// This session only.
    Session,
    /// This project, the person's own settings (not shared).
    ProjectLocal,
    /// This project, its shared settings.
    ProjectShared,
    /// Every project of the person's.
    User,
    /// This run's command line.
    ThisRun,
}

impl Stores {
    /// Every piece of agent text in it bounded and shown one line, as
    /// received otherwise (a rule matches the raw text: the exact JSON is
    /// what the agent gets, this is only what is shown).
    pub(super) fn check(&mut self) -> Result<(), PromptError> {
        let shown = |t: &mut String| -> Result<(), PromptError> {
            *t = line("choice label", t, limits::LABEL_LEN)?;
            Ok(())
        };
        shown(&mut self.exact)?;
        match &mut self.change {
            Change::Rules { rules, .. } => {
                for rule in rules {
                    shown(&mut rule.tool)?;
                    if let Some(content) = &mut rule.content {
                        shown(content)?;
                    }
                }
            }
            Change::Directories(dirs) => dirs.iter_mut().try_for_each(shown)?,
            Change::Mode(AgentMode::Other(mode)) => shown(mode)?,
            Change::Mode(_) => {}
        }
        Ok(())
    }

    /// A change that lets through far more than the request at hand: a mode
    /// change, a tool without a rule content (every use, everywhere), the
    /// root or a top-level directory. Never the first or default choice.
    pub fn broad(&self) -> bool {
        match &self.change {
            Change::Mode(_) => true,
            Change::Rules { behavior, rules } => {
                *behavior == RuleBehavior::Allow
                    && rules.iter().any(|r| {
                        r.content
                            .as_deref()
                            .is_none_or(|c| c.trim().is_empty() || c.trim() == "*")
                    })
            }
            Change::Directories(dirs) => dirs.iter().any(|d| {
                let parts = d.split('/').filter(|p| !p.is_empty() && *p != ".").count();
                parts < 2 || d.contains("..") || d.starts_with('~')
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores(change: Change) -> Stores {
        Stores {
            asker: crate::prompt::Asker::ClaudeCode,
            change,
            scope: Scope::Session,
            exact: String::new(),
        }
    }

    #[test]
    fn modes_whole_tools_and_top_directories_are_broad() {
        let rule = |content: Option<&str>| Change::Rules {
            behavior: RuleBehavior::Allow,
            rules: vec![ToolRule {
                tool: "Bash".into(),
                content: content.map(str::to_owned),
            }],
        };
        let dirs = |d: &str| Change::Directories(vec![d.into()]);
        for (change, broad) in [
            (rule(Some("npm test")), false),
            (rule(None), true),
            (rule(Some("*")), true),
            (Change::Mode(AgentMode::AcceptEdits), true),
            (Change::Mode(AgentMode::BypassPermissions), true),
            (dirs("/srv/data"), false),
            (dirs("/"), true),
            (dirs("/home"), true),
            (dirs("/srv/data/../.."), true),
        ] {
            assert_eq!(stores(change.clone()).broad(), broad, "{change:?}");
        }
    }
}
