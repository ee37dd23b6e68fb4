//! Permission rules: by tool (`bash`, `edit`, …) and/or by pattern, each
//! allowing, rejecting or forwarding; checked at load time.

use regex::Regex;
use serde::Deserialize;

use super::paths::stays_inside;
use super::{Decision, PolicyError, error, regex_source};
use crate::prompt::{Effect, Permission};
use crate::text;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum PermissionDecision {
    Allow,
    Reject,
    Forward,
}

/// A rule for permissions: by tool (`bash`, `edit`, …) and/or by pattern.
#[derive(Debug, Clone)]
pub(super) struct PermissionRule {
    /// Where it stands in the configuration, for logs and reasons.
    path: String,
    action: Option<String>,
    matcher: Option<PermissionMatcher>,
    decision: PermissionDecision,
    /// What the agent is told when this rule rejects.
    message: Option<String>,
}

#[derive(Debug, Clone)]
struct PermissionMatcher {
    source: String,
    regex: Regex,
    /// Written with `*`: its text before the first one names a directory.
    wildcard: bool,
}

/// Text that chains, substitutes or redirects commands: an allow rule never
/// fits a sub-command containing it, so `git status*` cannot allow
/// `git status $(rm -rf ~)` or `git status > ~/.bashrc` however the server
/// splits the command; such commands go to the person.
const SHELL_CHAINING: [&str; 8] = ["$(", "<(", "`", ";", "&", "|", ">", "\n"];

impl PermissionRule {
    /// Agents spell their tools differently (`bash` for OpenCode, `Bash`
    /// for Claude Code and Codex): ASCII case is ignored, nothing else (a
    /// look-alike letter names no tool). OpenCode 2 renamed the action
    /// `bash` to `shell`: a rule naming either names both.
    fn names_action(&self, permission: &Permission) -> bool {
        let shell = |action: &str| {
            action.eq_ignore_ascii_case("bash") || action.eq_ignore_ascii_case("shell")
        };
        self.action.as_ref().is_none_or(|a| {
            a.eq_ignore_ascii_case(&permission.action) || shell(a) && shell(&permission.action)
        })
    }

    fn fits(&self, subject: &str) -> bool {
        self.matcher
            .as_ref()
            .is_none_or(|m| m.regex.is_match(subject))
    }

    fn describe(&self) -> String {
        let what = match (&self.action, &self.matcher) {
            (Some(action), Some(m)) => format!("{action} {:?}", m.source),
            (Some(action), None) => action.clone(),
            (None, Some(m)) => format!("{:?}", m.source),
            (None, None) => "any".into(),
        };
        format!("{} ({what})", self.path)
    }
}

/// What a permission rule is matched against: each pattern the server
/// lists (OpenCode: one per sub-command, or the file) and the full command,
/// as the server sent them: a rule judges what runs, not what is shown.
fn subjects(permission: &Permission) -> Vec<&str> {
    permission
        .raw_patterns
        .iter()
        .map(String::as_str)
        .chain(permission.raw_command.as_deref())
        .collect()
}

/// The permission decision of `rules`, if one applies: any reject rule that
/// fits any subject wins; else the first allow rule that fits every subject
/// or forward rule that fits any. `directory` is the prompt's: where a
/// relative path lands.
pub(super) fn permission_rule(
    rules: &[PermissionRule],
    permission: &Permission,
    directory: Option<&str>,
) -> Option<Decision> {
    let all = subjects(permission);
    let rules = rules.iter().filter(|r| r.names_action(permission));
    let fits_any = |rule: &PermissionRule| all.is_empty() || all.iter().any(|s| rule.fits(s));
    if let Some(rule) = rules
        .clone()
        .find(|r| r.decision == PermissionDecision::Reject && fits_any(r))
    {
        return Some(Decision::Reject {
            reason: format!(
                "{} rejected a {} permission",
                rule.describe(),
                permission.action
            ),
            message: Some(rule.message.clone().unwrap_or_else(|| {
                format!(
                    "Rejected by the person's ask-lsp policy ({}).",
                    rule.describe()
                )
            })),
        });
    }
    // Allowing needs every subject: the server's split alone would let
    // `git status` stand for `git status; rm -rf ~`. A control, escape, bidi
    // or invisible character anywhere sends it to the person, who is shown it.
    let plain = all.iter().all(|s| text::is_plain(s));
    // A path with `..`, or through a link out of the rule's directory, is
    // the person's to allow (paths.rs).
    let stays = |rule: &PermissionRule| {
        let wildcard = rule.matcher.as_ref().filter(|m| m.wildcard);
        all.iter().all(|s| {
            stays_inside(
                &permission.action,
                s,
                wildcard.map(|m| m.source.as_str()),
                directory,
                |resolved| rule.fits(resolved),
            )
        })
    };
    let fits_every = |rule: &PermissionRule| {
        plain
            && (rule.matcher.is_none()
                || (!all.is_empty()
                    && all
                        .iter()
                        .all(|s| !SHELL_CHAINING.iter().any(|c| s.contains(c)) && rule.fits(s))))
            && stays(rule)
    };
    let rule = rules.clone().find(|r| match r.decision {
        PermissionDecision::Allow => fits_every(r),
        PermissionDecision::Forward => fits_any(r),
        PermissionDecision::Reject => false,
    })?;
    match rule.decision {
        PermissionDecision::Allow => {
            let choice = permission
                .choices
                .iter()
                .find(|c| c.effect == Effect::AllowOnce)?;
            Some(Decision::Allow {
                choice: choice.id.clone(),
                reason: format!(
                    "{} allowed a {} permission once",
                    rule.describe(),
                    permission.action
                ),
            })
        }
        _ => Some(Decision::Forward { timeout: None }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPermissionRule {
    action: Option<String>,
    #[serde(rename = "match")]
    pattern: Option<String>,
    decision: PermissionDecision,
    message: Option<String>,
}

pub(super) fn compile_permission(
    path: &str,
    raw: &RawPermissionRule,
) -> Result<PermissionRule, PolicyError> {
    if raw.action.is_none() && raw.pattern.is_none() {
        return Err(error(path, "needs an action, a match, or both"));
    }
    if raw.action.as_deref().is_some_and(|a| a.trim().is_empty()) {
        return Err(error(format!("{path}.action"), "is empty"));
    }
    if raw.message.is_some() && raw.decision != PermissionDecision::Reject {
        return Err(error(
            format!("{path}.message"),
            "applies only to decision \"reject\"",
        ));
    }
    if raw.message.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(error(format!("{path}.message"), "is empty"));
    }
    let matcher = match raw.pattern.as_deref() {
        None => None,
        Some(pattern) if pattern.trim().is_empty() => {
            return Err(error(format!("{path}.match"), "is empty"));
        }
        Some(pattern) => {
            // `/…/`: a regex; with `*`: a wildcard over the whole text, as in
            // OpenCode's own rules; else a substring. Case-sensitive, as
            // commands and paths are.
            let source = match regex_source(pattern) {
                Some((body, true)) => format!("(?i){body}"),
                Some((body, false)) => body.to_owned(),
                None if pattern.contains('*') => format!(
                    "^{}$",
                    pattern
                        .split('*')
                        .map(regex::escape)
                        .collect::<Vec<_>>()
                        .join("(?s:.*)")
                ),
                None => regex::escape(pattern),
            };
            let regex = Regex::new(&source).map_err(|e| {
                error(
                    format!("{path}.match"),
                    format!("invalid regex {pattern:?}: {e}"),
                )
            })?;
            Some(PermissionMatcher {
                source: pattern.to_owned(),
                regex,
                wildcard: regex_source(pattern).is_none() && pattern.contains('*'),
            })
        }
    };
    Ok(PermissionRule {
        path: path.to_owned(),
        action: raw.action.clone(),
        matcher,
        decision: raw.decision,
        message: raw.message.clone(),
    })
}
