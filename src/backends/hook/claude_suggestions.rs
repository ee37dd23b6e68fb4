//! Claude Code's `permission_suggestions` as one "allow always" choice each,
//! in ask-lsp's words, and the one function that maps the person's choice to
//! what Claude receives (docs/hook.md).
//!
//! A suggestion is a `PermissionUpdate` of Claude Code 2.1.332 (its SDK's
//! `PermissionUpdate`): `addRules` (`rules: [{toolName, ruleContent?}]`,
//! `behavior`), `setMode` (`mode`), `addDirectories` (`directories`), each
//! with a `destination` (`session`, `localSettings`, `projectSettings`,
//! `userSettings`, `cliArg`). Anything else (`replaceRules`, `remove…`, an
//! unknown type, behaviour or destination) is not offered: ask-lsp cannot
//! say what it would do.

use serde_json::{Value, json};

use super::{ALLOW_ONCE, DEFAULT_DENIAL, REJECT, choice};
use crate::prompt::{
    AgentMode, Answer, Asker, Change, ChoiceLabel, Effect, PermissionChoice, Reply, RuleBehavior,
    Scope, Stores, ToolRule,
};

/// The prefix of a suggestion's choice id; the suggestion's index follows.
const ALWAYS: &str = "always-";

/// What a suggestion's choice stores, by choice id: exactly the update
/// that was shown.
pub(super) type Suggested = Vec<(String, Value)>;

/// Claude's choices: allow once, one per suggestion it can word (narrow ones
/// first, broad ones after), reject; and what each suggestion stores.
pub(super) fn choices(suggestions: Option<&Value>) -> (Vec<PermissionChoice>, Suggested) {
    let mut narrow = Vec::new();
    let mut broad = Vec::new();
    let mut stored = Vec::new();
    let all = suggestions.and_then(Value::as_array).into_iter().flatten();
    for (index, update) in all.enumerate().take(crate::prompt::limits::OPTIONS - 2) {
        let Some(stores) = worded(update) else {
            tracing::debug!("hook: a Claude suggestion ask-lsp cannot word is not offered");
            continue;
        };
        if stores.exact.chars().count() > crate::prompt::limits::LABEL_LEN {
            continue;
        }
        let id = format!("{ALWAYS}{index}");
        let into = if stores.broad() {
            &mut broad
        } else {
            &mut narrow
        };
        into.push(choice(
            &id,
            ChoiceLabel::Stores(Box::new(stores)),
            Effect::AllowAlways,
        ));
        stored.push((id, update.clone()));
    }
    let mut choices = vec![choice(ALLOW_ONCE, ChoiceLabel::EFFECT, Effect::AllowOnce)];
    choices.extend(narrow);
    choices.extend(broad);
    choices.push(choice(REJECT, ChoiceLabel::EFFECT, Effect::RejectOnce));
    (choices, stored)
}

/// One suggestion as facts, or `None` when any part of it is unknown.
fn worded(update: &Value) -> Option<Stores> {
    let text = |name: &str| update.get(name).and_then(Value::as_str);
    let scope = match text("destination")? {
        "session" => Scope::Session,
        "localSettings" => Scope::ProjectLocal,
        "projectSettings" => Scope::ProjectShared,
        "userSettings" => Scope::User,
        "cliArg" => Scope::ThisRun,
        _ => return None,
    };
    let change = match text("type")? {
        "addRules" => {
            let behavior = match text("behavior")? {
                "allow" => RuleBehavior::Allow,
                "deny" => RuleBehavior::Deny,
                "ask" => RuleBehavior::Ask,
                _ => return None,
            };
            let rules = update
                .get("rules")?
                .as_array()?
                .iter()
                .map(|rule| {
                    Some(ToolRule {
                        tool: rule.get("toolName")?.as_str()?.to_owned(),
                        content: match rule.get("ruleContent") {
                            None | Some(Value::Null) => None,
                            Some(content) => Some(content.as_str()?.to_owned()),
                        },
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            if rules.is_empty() {
                return None;
            }
            Change::Rules { behavior, rules }
        }
        "setMode" => Change::Mode(match text("mode")? {
            "acceptEdits" => AgentMode::AcceptEdits,
            "bypassPermissions" => AgentMode::BypassPermissions,
            "plan" => AgentMode::Plan,
            "default" => AgentMode::Default,
            other => AgentMode::Other(other.to_owned()),
        }),
        "addDirectories" => {
            let dirs = update
                .get("directories")?
                .as_array()?
                .iter()
                .map(|d| d.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?;
            if dirs.is_empty() {
                return None;
            }
            Change::Directories(dirs)
        }
        _ => return None,
    };
    Some(Stores {
        asker: Asker::ClaudeCode,
        change,
        scope,
        exact: update.to_string(),
    })
}

/// The decision in Claude's terms: `{}` decides nothing (Claude asks in its
/// own dialog). A suggestion's choice stores that one update, as shown.
pub(super) fn decision(reply: &Reply, suggested: &Suggested) -> Value {
    match reply {
        Reply::Answer(Answer::Permission { choice }) => match choice.as_str() {
            ALLOW_ONCE => json!({"behavior": "allow"}),
            REJECT => json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            chosen => match suggested.iter().find(|(id, _)| id == chosen) {
                Some((_, update)) => json!({"behavior": "allow", "updatedPermissions": [update]}),
                None => json!({}),
            },
        },
        Reply::Reject { message } => json!({
            "behavior": "deny",
            "message": message.as_deref().unwrap_or(DEFAULT_DENIAL),
        }),
        Reply::Answer(_) | Reply::Cancel => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Claude Code 2.1.332 suggested for `touch x` (headless), plus the
    /// shapes the issue names.
    fn suggestions() -> Value {
        json!([
            {"type": "addDirectories", "directories": ["/srv/data"], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
             "behavior": "allow", "destination": "localSettings"},
            {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow",
             "destination": "userSettings"},
            {"type": "replaceRules", "rules": [], "behavior": "allow", "destination": "session"},
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "x"}],
             "behavior": "allow", "destination": "somewhere"},
        ])
    }

    fn pick(choice: &str) -> Reply {
        Reply::Answer(Answer::Permission {
            choice: choice.into(),
        })
    }

    #[test]
    fn one_choice_per_suggestion_it_can_word_broad_ones_after_the_narrow() {
        let (choices, stored) = choices(Some(&suggestions()));
        let ids: Vec<&str> = choices.iter().map(|c| c.id.as_str()).collect();
        // Once first; the directory and `npm test` (narrow), then the mode
        // and the whole tool (broad); replaceRules and an unknown
        // destination are not offered.
        assert_eq!(
            ids,
            [
                ALLOW_ONCE, "always-0", "always-2", "always-1", "always-3", REJECT
            ]
        );
        assert_eq!(stored.len(), 4);
        for choice in &choices[1..5] {
            let ChoiceLabel::Stores(stores) = &choice.label else {
                panic!("{choice:?}")
            };
            let (_, update) = stored.iter().find(|(id, _)| *id == choice.id).unwrap();
            assert_eq!(stores.exact, update.to_string(), "shown = stored");
            assert_eq!(
                stores.broad(),
                choice.id == "always-1" || choice.id == "always-3"
            );
        }
        let (none, stored) = super::choices(None);
        assert_eq!(none.len(), 2);
        assert!(stored.is_empty());
    }

    /// The consent table: each decision and what Claude receives.
    #[test]
    fn decisions_map_to_what_claude_receives() {
        let all = suggestions();
        let (_, stored) = choices(Some(&all));
        let message = |m: Option<&str>| Reply::Reject {
            message: m.map(str::to_owned),
        };
        for (reply, expected) in [
            (pick(ALLOW_ONCE), json!({"behavior": "allow"})),
            (
                pick("always-1"),
                json!({"behavior": "allow", "updatedPermissions": [all[1]]}),
            ),
            (
                pick("always-2"),
                json!({"behavior": "allow", "updatedPermissions": [all[2]]}),
            ),
            // Not offered, so never stored.
            (pick("always-4"), json!({})),
            (pick("allow-always"), json!({})),
            (
                pick(REJECT),
                json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            ),
            (
                message(Some("use make")),
                json!({"behavior": "deny", "message": "use make"}),
            ),
            (
                message(None),
                json!({"behavior": "deny", "message": DEFAULT_DENIAL}),
            ),
            (Reply::Cancel, json!({})),
        ] {
            assert_eq!(decision(&reply, &stored), expected, "{reply:?}");
        }
    }
}
