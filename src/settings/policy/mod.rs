//! Policies: for questions, forward to the person (optionally with a
//! timeout), reject, accept the first options, or answer by rule; for
//! permissions, rules by tool and pattern that allow, reject or forward.
//! Checked once at load time; the broker asks [`Policies::decide`] for every
//! new prompt.
//!
//! Safety first for permissions: only a rule that names a permission may
//! allow it (no mode, no timeout does), a reject rule wins over every allow
//! rule, and an allow rule must fit the full command and every sub-command
//! the server lists, as the server sent them and free of hidden characters.
//! A timeout never accepts a form, and a fill that chooses nothing cancels.
//!
//! Three decision paths (questions, permissions, forms) share one scope and
//! load-time checking; the permission rules are in `permission.rs`.

use std::collections::HashMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::prompt::{
    Answer, FieldKind, FieldValue, Form, FormValues, Kind, Prompt, Question, Reply,
};
mod paths;
mod permission;

use self::permission::{PermissionRule, RawPermissionRule, compile_permission, permission_rule};

type Answers = Vec<Vec<String>>;

/// The longest `timeoutMs` accepted: a day.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Forward,
    Reject,
    AcceptFirst,
    Auto,
}

#[derive(Debug, Clone)]
struct Rule {
    source: String,
    matcher: Matcher,
    answer: Vec<String>,
}

#[derive(Debug, Clone)]
enum Matcher {
    /// Case-insensitive substring (stored lowercased).
    Substring(String),
    Regex(Regex),
}

impl Matcher {
    fn matches(&self, question: &Question) -> bool {
        self.matches_any(&[&question.header, &question.text])
    }

    fn matches_any(&self, texts: &[&str]) -> bool {
        match self {
            Matcher::Substring(needle) => texts.iter().any(|t| t.to_lowercase().contains(needle)),
            Matcher::Regex(regex) => texts.iter().any(|t| regex.is_match(t)),
        }
    }
}

#[derive(Debug, Clone)]
struct Policy {
    mode: Mode,
    timeout: Option<Duration>,
    rules: Vec<Rule>,
    permissions: Vec<PermissionRule>,
}

/// Every policy in force: a workspace default and overrides by server,
/// agent and session (the most specific wins: session > agent > server).
/// Session ids are unique on one server only, so a session's policy is
/// kept by server, then by session.
#[derive(Debug, Clone)]
pub struct Policies {
    default: Policy,
    servers: HashMap<String, Policy>,
    agents: HashMap<String, Policy>,
    sessions: HashMap<String, HashMap<String, Policy>>,
}

/// Where a prompt comes from; `agent` is set where the server names the
/// agent running the session (OpenCode's session events do).
pub(crate) struct Scope<'a> {
    pub server: &'a str,
    pub session: &'a str,
    pub agent: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Forward {
        timeout: Option<Duration>,
    },
    /// `reason` names the questions and the labels chosen; it is shown and logged.
    Answer {
        answers: Answers,
        reason: String,
    },
    /// A form's values; `reason` names the fields and values chosen.
    Fill {
        values: FormValues,
        reason: String,
    },
    /// A permission allowed once by a rule that names it.
    Allow {
        choice: String,
        reason: String,
    },
    /// `message` reaches the agent (a permission rule's reason).
    Reject {
        reason: String,
        message: Option<String>,
    },
    /// Nobody decided (a timeout on a form it cannot fill).
    Cancel {
        reason: String,
    },
}

impl Decision {
    /// What a decision sends, with its reason; `None` for forwarding.
    pub fn into_reply(self) -> Option<(Reply, String)> {
        match self {
            Decision::Forward { .. } => None,
            Decision::Answer { answers, reason } => {
                Some((Reply::Answer(Answer::Questions(answers)), reason))
            }
            Decision::Allow { choice, reason } => {
                Some((Reply::Answer(Answer::Permission { choice }), reason))
            }
            Decision::Fill { values, reason } => {
                Some((Reply::Answer(Answer::Form(values)), reason))
            }
            Decision::Reject { reason, message } => Some((Reply::Reject { message }, reason)),
            Decision::Cancel { reason } => Some((Reply::Cancel, reason)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct PolicyError {
    pub path: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawPolicy {
    mode: Option<Mode>,
    timeout_ms: Option<u64>,
    rules: Option<Vec<RawRule>>,
    permissions: Option<Vec<RawPermissionRule>>,
    servers: Option<HashMap<String, RawPolicy>>,
    agents: Option<HashMap<String, RawPolicy>>,
    sessions: Option<HashMap<String, RawPolicy>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(rename = "match")]
    pattern: String,
    answers: Vec<String>,
}

fn error(path: impl Into<String>, message: impl Into<String>) -> PolicyError {
    PolicyError {
        path: path.into(),
        message: message.into(),
    }
}

impl Policies {
    /// Reads the `policy` configuration object; absent means forward everything.
    pub fn from_json(value: Option<&Value>) -> Result<Policies, PolicyError> {
        let raw = match value {
            None | Some(Value::Null) => return Ok(Policies::default()),
            Some(value) => {
                RawPolicy::deserialize(value).map_err(|e| error("policy", e.to_string()))?
            }
        };
        let forward = Policy {
            mode: Mode::Forward,
            timeout: None,
            rules: Vec::new(),
            permissions: Vec::new(),
        };
        let default = policy("policy", &raw, &forward)?;
        if raw.sessions.is_some() {
            return Err(error(
                "policy.sessions",
                "session ids are per server: put them under policy.servers.<name>.sessions",
            ));
        }
        // `nested`: the scopes a policy of this kind may hold itself.
        let scoped = |kind: &str, map: Option<HashMap<String, RawPolicy>>, inherited: &Policy| {
            map.unwrap_or_default()
                .into_iter()
                .map(|(name, raw)| {
                    let path = format!("{kind}.{name}");
                    let nested = kind == "policy.servers" && raw.sessions.is_some();
                    if raw.servers.is_some() || raw.agents.is_some() || (raw.sessions.is_some() && !nested) {
                        return Err(error(
                            path,
                            "servers and agents go only at the top level, sessions only in a server",
                        ));
                    }
                    let policy = policy(&path, &raw, inherited)?;
                    Ok((name, (policy, raw.sessions)))
                })
                .collect::<Result<HashMap<_, _>, _>>()
        };
        let mut servers = HashMap::new();
        let mut sessions = HashMap::new();
        for (server, (policy, raw_sessions)) in scoped("policy.servers", raw.servers, &default)? {
            let path = format!("policy.servers.{server}.sessions");
            let by_id = scoped(&path, raw_sessions, &policy)?
                .into_iter()
                .map(|(session, (policy, _))| (session, policy))
                .collect();
            sessions.insert(server.clone(), by_id);
            servers.insert(server, policy);
        }
        let agents = scoped("policy.agents", raw.agents, &default)?
            .into_iter()
            .map(|(name, (policy, _))| (name, policy))
            .collect();
        Ok(Policies {
            servers,
            agents,
            sessions,
            default,
        })
    }
}

impl Default for Policies {
    /// Forward everything, no timeout.
    fn default() -> Policies {
        Policies {
            default: Policy {
                mode: Mode::Forward,
                timeout: None,
                rules: Vec::new(),
                permissions: Vec::new(),
            },
            servers: HashMap::new(),
            agents: HashMap::new(),
            sessions: HashMap::new(),
        }
    }
}

impl Policies {
    fn policy_for(&self, scope: &Scope<'_>) -> &Policy {
        self.sessions
            .get(scope.server)
            .and_then(|sessions| sessions.get(scope.session))
            .or_else(|| scope.agent.and_then(|a| self.agents.get(a)))
            .or_else(|| self.servers.get(scope.server))
            .unwrap_or(&self.default)
    }

    pub fn decide(&self, scope: &Scope<'_>, prompt: &Prompt) -> Decision {
        // A request from a directory this workspace does not hold (a hook
        // that found no instance holding it) is not this workspace's rules'
        // to decide, nor to time out: the person decides.
        if prompt
            .origin
            .requester
            .as_ref()
            .is_some_and(|r| r.outside_workspace)
        {
            return Decision::Forward { timeout: None };
        }
        let policy = self.policy_for(scope);
        let questions = match &prompt.kind {
            Kind::Questions(questions) => questions,
            // A form a hook brought (Claude Code's MCP forms) is filled by
            // the person only: the agent shows its own form when nobody
            // does. A policy may decline it, never fill it.
            Kind::Form(form) if prompt.origin.requester.is_some() => {
                return match policy.decide_form(form) {
                    Decision::Reject { reason, message } => Decision::Reject { reason, message },
                    _ => Decision::Forward {
                        timeout: policy.timeout,
                    },
                };
            }
            Kind::Form(form) => return policy.decide_form(form),
            // Only a person or a rule that names it may allow a permission:
            // modes that pick answers by themselves forward it instead.
            Kind::Permission(permission) => {
                let directory = prompt.directory.as_deref();
                return match permission_rule(&policy.permissions, permission, directory) {
                    Some(Decision::Forward { .. }) => Decision::Forward {
                        timeout: policy.timeout,
                    },
                    Some(decision) => decision,
                    None if policy.mode == Mode::Reject => Decision::Reject {
                        reason: format!("policy reject: a {} permission", permission.action),
                        message: None,
                    },
                    None => Decision::Forward {
                        timeout: policy.timeout,
                    },
                };
            }
        };
        match policy.mode {
            Mode::Forward => Decision::Forward {
                timeout: policy.timeout,
            },
            Mode::Reject => Decision::Reject {
                reason: format!("policy reject: {}", names(questions)),
                message: None,
            },
            Mode::AcceptFirst => choose(questions, "accept-first", |_| None),
            Mode::Auto => choose(questions, "auto", |question| {
                policy
                    .rules
                    .iter()
                    .find(|rule| rule.matcher.matches(question))
                    .map(|rule| (rule.source.clone(), rule.answer.clone()))
            }),
        }
    }

    /// What a forwarded prompt gets when its timeout runs out: accept-first
    /// for questions; a permission is rejected, never allowed; a form is
    /// cancelled, never accepted.
    pub fn timeout_fallback(prompt: &Prompt) -> Decision {
        match &prompt.kind {
            Kind::Questions(questions) => choose(questions, "accept-first", |_| None),
            Kind::Permission(_) => Decision::Reject {
                reason: "a permission is never allowed by a timeout".into(),
                message: None,
            },
            // Nobody chose: a form (a link too) is never accepted by a
            // timeout, whatever defaults the agent put in it.
            Kind::Form(form) => Decision::Cancel {
                reason: format!("nobody answered {:?}", form.name()),
            },
        }
    }
}

fn policy(path: &str, raw: &RawPolicy, inherited: &Policy) -> Result<Policy, PolicyError> {
    let mode = raw.mode.unwrap_or(inherited.mode);
    let timeout = match raw.timeout_ms {
        Some(_) if mode != Mode::Forward => {
            return Err(error(
                format!("{path}.timeoutMs"),
                "applies only to mode \"forward\"",
            ));
        }
        Some(0) => return Err(error(format!("{path}.timeoutMs"), "must be more than 0")),
        Some(ms) if Duration::from_millis(ms) > MAX_TIMEOUT => {
            return Err(error(
                format!("{path}.timeoutMs"),
                "must be at most a day (86400000)",
            ));
        }
        Some(ms) => Some(Duration::from_millis(ms)),
        None if mode == Mode::Forward => inherited.timeout,
        None => None,
    };
    let rules = match &raw.rules {
        Some(_) if mode != Mode::Auto => {
            return Err(error(
                format!("{path}.rules"),
                "applies only to mode \"auto\"",
            ));
        }
        Some(rules) => rules
            .iter()
            .enumerate()
            .map(|(i, rule)| compile(&format!("{path}.rules[{i}]"), rule))
            .collect::<Result<Vec<_>, _>>()?,
        None if mode == Mode::Auto => inherited.rules.clone(),
        None => Vec::new(),
    };
    let permissions = match &raw.permissions {
        Some(rules) => rules
            .iter()
            .enumerate()
            .map(|(i, rule)| compile_permission(&format!("{path}.permissions[{i}]"), rule))
            .collect::<Result<Vec<_>, _>>()?,
        None => inherited.permissions.clone(),
    };
    if mode == Mode::Auto && rules.is_empty() {
        return Err(error(
            format!("{path}.rules"),
            "mode \"auto\" needs at least one rule",
        ));
    }
    Ok(Policy {
        mode,
        timeout,
        rules,
        permissions,
    })
}

fn compile(path: &str, raw: &RawRule) -> Result<Rule, PolicyError> {
    let pattern = raw.pattern.as_str();
    let matcher = match regex_source(pattern) {
        Some((body, case_insensitive)) => {
            let source = if case_insensitive {
                format!("(?i){body}")
            } else {
                body.to_owned()
            };
            let regex = Regex::new(&source).map_err(|e| {
                error(
                    format!("{path}.match"),
                    format!("invalid regex {pattern:?}: {e}"),
                )
            })?;
            Matcher::Regex(regex)
        }
        None if pattern.trim().is_empty() => {
            return Err(error(format!("{path}.match"), "is empty"));
        }
        None => Matcher::Substring(pattern.to_lowercase()),
    };
    if raw.answers.is_empty() {
        return Err(error(format!("{path}.answers"), "needs at least one label"));
    }
    if let Some(i) = raw.answers.iter().position(|a| a.trim().is_empty()) {
        return Err(error(format!("{path}.answers[{i}]"), "is empty"));
    }
    Ok(Rule {
        source: pattern.to_owned(),
        matcher,
        answer: raw.answers.clone(),
    })
}

/// `/body/` or `/body/i` → the body and whether it ignores case.
fn regex_source(pattern: &str) -> Option<(&str, bool)> {
    let rest = pattern.strip_prefix('/')?;
    if let Some(body) = rest.strip_suffix("/i") {
        return Some((body, true));
    }
    rest.strip_suffix('/').map(|body| (body, false))
}

/// Answers every question from `pick` or else its first option; a question
/// with neither (free text only) makes it a rejection.
fn choose(
    questions: &[Question],
    label: &str,
    pick: impl Fn(&Question) -> Option<(String, Vec<String>)>,
) -> Decision {
    let mut answers = Vec::with_capacity(questions.len());
    let mut parts = Vec::with_capacity(questions.len());
    for question in questions {
        let (how, answer) = match pick(question) {
            Some((rule, answer)) => (format!("rule {rule:?}"), answer),
            None => match question.options.first() {
                Some(first) => (label.to_owned(), vec![first.label.clone()]),
                None => {
                    return Decision::Reject {
                        reason: format!(
                            "{label}: {:?} has no options to choose from",
                            question.text
                        ),
                        message: None,
                    };
                }
            },
        };
        parts.push(format!(
            "{how}: {:?} → {:?}",
            question.text,
            answer.join(", ")
        ));
        answers.push(answer);
    }
    Decision::Answer {
        answers,
        reason: parts.join("; "),
    }
}

impl Policy {
    /// Forms as questions: rules match the message or a field's title. A
    /// link is never opened by a policy, and a form a policy cannot fill
    /// completely goes to the person.
    fn decide_form(&self, form: &Form) -> Decision {
        let forward = Decision::Forward {
            timeout: self.timeout,
        };
        match self.mode {
            Mode::Forward => forward,
            Mode::Reject => Decision::Reject {
                reason: format!("policy reject: {:?}", form.name()),
                message: None,
            },
            _ if form.url.is_some() => forward,
            Mode::AcceptFirst => fill(form, "accept-first", |_| None).unwrap_or(forward),
            Mode::Auto => fill(form, "auto", |title| {
                self.rules
                    .iter()
                    .find(|rule| rule.matcher.matches_any(&[title, &form.message]))
                    .map(|rule| (rule.source.clone(), rule.answer.clone()))
            })
            .unwrap_or(forward),
        }
    }
}

/// Fills every required field from `pick` (by its title), else its default,
/// else a choice's first option; `None` when one stays empty or a picked
/// answer does not fit its field. Nothing filled is `cancel`, never an
/// empty accept: nobody chose anything.
fn fill(
    form: &Form,
    label: &str,
    pick: impl Fn(&str) -> Option<(String, Vec<String>)>,
) -> Option<Decision> {
    let mut values = FormValues::new();
    let mut parts = Vec::new();
    for field in &form.fields {
        let (how, value) = match pick(&field.title) {
            Some((rule, answer)) => (format!("rule {rule:?}"), rule_value(&field.kind, answer)?),
            None if !field.required => continue,
            None => match (field.default_value(), &field.kind) {
                (Some(value), _) => (format!("{label} (default)"), value),
                (None, FieldKind::Choice { options, .. }) => (
                    label.to_owned(),
                    FieldValue::Choice(options.first()?.value.clone()),
                ),
                _ => return None,
            },
        };
        let value = field.validate(value).ok()?;
        parts.push(format!("{how}: {:?}", field.title));
        values.insert(field.id.clone(), value);
    }
    if values.is_empty() {
        return Some(Decision::Cancel {
            reason: format!("{label}: nothing to choose in {:?}", form.name()),
        });
    }
    Some(Decision::Fill {
        values,
        reason: parts.join("; "),
    })
}

/// A rule's answer labels as a value of the field's kind.
fn rule_value(kind: &FieldKind, answer: Vec<String>) -> Option<FieldValue> {
    let first = answer.first()?.trim();
    Some(match kind {
        FieldKind::Text { .. } => FieldValue::Text(first.to_owned()),
        FieldKind::Number { .. } => FieldValue::Number(first.parse().ok()?),
        FieldKind::Boolean { .. } => FieldValue::Bool(match first.to_lowercase().as_str() {
            "true" | "yes" => true,
            "false" | "no" => false,
            _ => return None,
        }),
        FieldKind::Choice { .. } => FieldValue::Choice(first.to_owned()),
        FieldKind::Multi { .. } => FieldValue::Choices(answer),
    })
}

fn names(questions: &[Question]) -> String {
    questions
        .iter()
        .map(|q| format!("{:?}", q.text))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
