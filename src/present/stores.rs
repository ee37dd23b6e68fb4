//! What an "allow always" choice stores in the agent's settings, in the
//! person's language ([`crate::prompt::Stores`]), and an edit's title with
//! what to know about its diff.

use super::i18n::tr;
use crate::prompt::{AgentMode, Asker, Change, EditNote, RuleBehavior, Scope, Stores, ToolRule};

/// "Allow, and always allow `npm test` in this project — stores {…}";
/// a broad change says so.
pub(crate) fn stores_label(stores: &Stores) -> String {
    let args = (change(stores.asker, &stores.change), scope(stores.scope));
    match stores.broad() {
        false => tr!(
            "stores.label",
            change = args.0,
            scope = args.1,
            exact = stores.exact
        ),
        true => tr!(
            "stores.label_broad",
            change = args.0,
            scope = args.1,
            exact = stores.exact
        ),
    }
}

fn change(asker: Asker, change: &Change) -> String {
    match change {
        Change::Rules { behavior, rules } => {
            let rules = rules
                .iter()
                .map(rule)
                .collect::<Vec<_>>()
                .join(&tr!("hint.separator"));
            match behavior {
                RuleBehavior::Allow => tr!("stores.allow", rules = rules),
                RuleBehavior::Deny => tr!("stores.deny", rules = rules),
                RuleBehavior::Ask => tr!("stores.ask", rules = rules),
            }
        }
        Change::Directories(dirs) => tr!(
            "stores.directories",
            asker = asker,
            directories = dirs.join(&tr!("hint.separator"))
        ),
        Change::Mode(AgentMode::AcceptEdits) => tr!("stores.mode_accept_edits"),
        Change::Mode(AgentMode::BypassPermissions) => tr!("stores.mode_bypass"),
        Change::Mode(AgentMode::Plan) => tr!("stores.mode_plan"),
        Change::Mode(AgentMode::Default) => tr!("stores.mode_default"),
        Change::Mode(AgentMode::Other(mode)) => tr!("stores.mode_other", mode = mode),
    }
}

/// A rule as Claude Code writes it: a Bash command (`prefix:*`: every
/// command starting so), another tool's `Tool(content)`, or every use.
fn rule(rule: &ToolRule) -> String {
    match (rule.tool.as_str(), rule.content.as_deref()) {
        (_, None) => tr!("stores.every_use", tool = rule.tool),
        ("Bash", Some(content)) => match content.strip_suffix(":*") {
            Some(prefix) => tr!("stores.command_prefix", prefix = prefix),
            None => tr!("stores.command", command = content),
        },
        (tool, Some(content)) => tr!("stores.tool_rule", tool = tool, content = content),
    }
}

fn scope(scope: Scope) -> String {
    match scope {
        Scope::Session => tr!("stores.scope_session"),
        Scope::ProjectLocal => tr!("stores.scope_project_local"),
        Scope::ProjectShared => tr!("stores.scope_project_shared"),
        Scope::User => tr!("stores.scope_user"),
        Scope::ThisRun => tr!("stores.scope_this_run"),
    }
}

/// "Claude Code asks to edit /p/a.txt", with what to know about the diff.
pub(crate) fn edit_title(asker: Asker, path: &str, note: Option<EditNote>) -> String {
    let note = match note {
        None => return tr!("permission.edit_file", asker = asker, path = path),
        Some(EditNote::OutsideProject) => tr!("edit_note.outside"),
        Some(EditNote::NotRegular) => tr!("edit_note.not_regular"),
        Some(EditNote::TooLarge) => tr!("edit_note.too_large"),
        Some(EditNote::Unreadable) => tr!("edit_note.unreadable"),
        Some(EditNote::OldTextNotFound) => tr!("edit_note.not_found"),
    };
    tr!(
        "permission.edit_file_note",
        asker = asker,
        path = path,
        note = note
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{ChoiceLabel, Effect, PermissionChoice};

    fn label(change: Change, scope: Scope) -> String {
        let choice = PermissionChoice {
            id: "always-0".into(),
            label: ChoiceLabel::Stores(Box::new(Stores {
                asker: Asker::ClaudeCode,
                change,
                scope,
                exact: "{…}".into(),
            })),
            effect: Effect::AllowAlways,
        };
        super::super::prompt_text::choice_label(&choice)
    }

    #[test]
    fn each_change_is_said_in_words_beside_its_json() {
        let rules = |tool: &str, content: Option<&str>| Change::Rules {
            behavior: RuleBehavior::Allow,
            rules: vec![ToolRule {
                tool: tool.into(),
                content: content.map(str::to_owned),
            }],
        };
        for (change, scope, words) in [
            (
                rules("Bash", Some("npm test")),
                Scope::ProjectLocal,
                "Allow, and always allow `npm test` in this project (your local settings) — stores {…}",
            ),
            (
                rules("Bash", Some("npm run:*")),
                Scope::Session,
                "Allow, and always allow commands starting with `npm run` in this session — stores {…}",
            ),
            (
                Change::Directories(vec!["/srv/data".into()]),
                Scope::Session,
                "Allow, and let Claude Code use /srv/data in this session — stores {…}",
            ),
            (
                Change::Mode(AgentMode::AcceptEdits),
                Scope::Session,
                "Broad: allow, and accept every file edit in this session — stores {…}",
            ),
            (
                rules("Bash", None),
                Scope::User,
                "Broad: allow, and always allow every use of Bash in every project (your user settings) — stores {…}",
            ),
            (
                Change::Mode(AgentMode::BypassPermissions),
                Scope::Session,
                "Broad: allow, and never ask for any permission in this session — stores {…}",
            ),
        ] {
            assert_eq!(label(change, scope), words);
        }
    }
}
