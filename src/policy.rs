//! Question policies: forward to the person (optionally with a timeout),
//! reject, accept the first options, or answer by rule. Checked once at load
//! time; the broker asks [`Policies::decide`] for every new question.

use std::collections::HashMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::model::{Answers, QuestionInfo, QuestionRequest};

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
    fn matches(&self, question: &QuestionInfo) -> bool {
        let texts = [&question.header, &question.question];
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
}

/// Every policy in force: a workspace default and overrides by server,
/// agent and session (the most specific wins: session > agent > server).
#[derive(Debug, Clone)]
pub struct Policies {
    default: Policy,
    servers: HashMap<String, Policy>,
    agents: HashMap<String, Policy>,
    sessions: HashMap<String, Policy>,
}

/// Where a question comes from. OpenCode's requests do not name their
/// agent, so `agent` policies apply to backends that do.
pub struct Scope<'a> {
    pub server: &'a str,
    pub session_id: &'a str,
    pub agent: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Forward {
        timeout: Option<Duration>,
    },
    /// `reason` names the questions and the labels chosen; it is shown and logged.
    Answer {
        answers: Answers,
        reason: String,
    },
    Reject {
        reason: String,
    },
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
            None | Some(Value::Null) => return Ok(Policies::forward_all()),
            Some(value) => {
                RawPolicy::deserialize(value).map_err(|e| error("policy", e.to_string()))?
            }
        };
        let forward = Policy {
            mode: Mode::Forward,
            timeout: None,
            rules: Vec::new(),
        };
        let default = policy("policy", &raw, &forward)?;
        let scoped = |kind: &str, map: Option<HashMap<String, RawPolicy>>| {
            map.unwrap_or_default()
                .into_iter()
                .map(|(name, raw)| {
                    let path = format!("policy.{kind}.{name}");
                    if raw.servers.is_some() || raw.agents.is_some() || raw.sessions.is_some() {
                        return Err(error(
                            path,
                            "servers, agents and sessions go only at the top level",
                        ));
                    }
                    Ok((name, policy(&path, &raw, &default)?))
                })
                .collect::<Result<HashMap<_, _>, _>>()
        };
        Ok(Policies {
            servers: scoped("servers", raw.servers)?,
            agents: scoped("agents", raw.agents)?,
            sessions: scoped("sessions", raw.sessions)?,
            default,
        })
    }

    fn forward_all() -> Policies {
        Policies {
            default: Policy {
                mode: Mode::Forward,
                timeout: None,
                rules: Vec::new(),
            },
            servers: HashMap::new(),
            agents: HashMap::new(),
            sessions: HashMap::new(),
        }
    }

    fn policy_for(&self, scope: &Scope<'_>) -> &Policy {
        self.sessions
            .get(scope.session_id)
            .or_else(|| scope.agent.and_then(|a| self.agents.get(a)))
            .or_else(|| self.servers.get(scope.server))
            .unwrap_or(&self.default)
    }

    pub fn decide(&self, scope: &Scope<'_>, request: &QuestionRequest) -> Decision {
        let policy = self.policy_for(scope);
        match policy.mode {
            Mode::Forward => Decision::Forward {
                timeout: policy.timeout,
            },
            Mode::Reject => Decision::Reject {
                reason: format!("policy reject: {}", names(request)),
            },
            Mode::AcceptFirst => choose(request, "accept-first", |_| None),
            Mode::Auto => choose(request, "auto", |question| {
                policy
                    .rules
                    .iter()
                    .find(|rule| rule.matcher.matches(question))
                    .map(|rule| (rule.source.clone(), rule.answer.clone()))
            }),
        }
    }

    /// What a forwarded question gets when its timeout runs out: accept-first.
    pub fn timeout_fallback(request: &QuestionRequest) -> Decision {
        choose(request, "accept-first", |_| None)
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
    request: &QuestionRequest,
    label: &str,
    pick: impl Fn(&QuestionInfo) -> Option<(String, Vec<String>)>,
) -> Decision {
    let mut answers = Vec::with_capacity(request.questions.len());
    let mut parts = Vec::with_capacity(request.questions.len());
    for question in &request.questions {
        let (how, answer) = match pick(question) {
            Some((rule, answer)) => (format!("rule {rule:?}"), answer),
            None => match question.options.first() {
                Some(first) => (label.to_owned(), vec![first.label.clone()]),
                None => {
                    return Decision::Reject {
                        reason: format!(
                            "{label}: {:?} has no options to choose from",
                            question.question
                        ),
                    };
                }
            },
        };
        parts.push(format!(
            "{how}: {:?} → {:?}",
            question.question,
            answer.join(", ")
        ));
        answers.push(answer);
    }
    Decision::Answer {
        answers,
        reason: parts.join("; "),
    }
}

fn names(request: &QuestionRequest) -> String {
    request
        .questions
        .iter()
        .map(|q| format!("{:?}", q.question))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(questions: Value) -> QuestionRequest {
        serde_json::from_value(json!({"id": "que_1", "sessionID": "ses_1", "questions": questions}))
            .unwrap()
    }

    fn database() -> QuestionRequest {
        request(json!([
            {"question": "Which database?", "header": "Database",
             "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
            {"question": "Deploy to production?", "header": "Deploy",
             "options": [{"label": "No"}, {"label": "Yes"}], "multiple": true}
        ]))
    }

    fn scope<'a>(session_id: &'a str) -> Scope<'a> {
        Scope {
            server: "default",
            session_id,
            agent: None,
        }
    }

    fn decide(policy: Value, request: &QuestionRequest) -> Decision {
        Policies::from_json(Some(&policy))
            .unwrap()
            .decide(&scope("ses_1"), request)
    }

    fn load_error(policy: Value) -> String {
        Policies::from_json(Some(&policy)).unwrap_err().to_string()
    }

    #[test]
    fn absent_policy_forwards_without_timeout() {
        let policies = Policies::from_json(None).unwrap();
        assert_eq!(
            policies.decide(&scope("s"), &database()),
            Decision::Forward { timeout: None }
        );
    }

    #[test]
    fn forward_with_timeout() {
        assert_eq!(
            decide(json!({"mode": "forward", "timeoutMs": 1500}), &database()),
            Decision::Forward {
                timeout: Some(Duration::from_millis(1500))
            }
        );
    }

    #[test]
    fn reject_names_the_questions() {
        assert_eq!(
            decide(json!({"mode": "reject"}), &database()),
            Decision::Reject {
                reason: "policy reject: \"Which database?\", \"Deploy to production?\"".into()
            }
        );
    }

    #[test]
    fn accept_first_picks_each_first_option() {
        assert_eq!(
            decide(json!({"mode": "accept-first"}), &database()),
            Decision::Answer {
                answers: vec![vec!["Postgres".into()], vec!["No".into()]],
                reason: "accept-first: \"Which database?\" → \"Postgres\"; accept-first: \"Deploy to production?\" → \"No\"".into()
            }
        );
        assert_eq!(
            Policies::timeout_fallback(&database()),
            decide(json!({"mode": "accept-first"}), &database())
        );
    }

    #[test]
    fn accept_first_rejects_free_text_questions() {
        let free = request(json!([{"question": "Name?", "header": "Name", "options": []}]));
        assert_eq!(
            decide(json!({"mode": "accept-first"}), &free),
            Decision::Reject {
                reason: "accept-first: \"Name?\" has no options to choose from".into()
            }
        );
    }

    #[test]
    fn auto_rules_by_substring_and_regex_then_first_option() {
        let policy = json!({"mode": "auto", "rules": [
            {"match": "DATABASE", "answers": ["SQLite"]},
            {"match": "/^Deploy to (prod|staging)/", "answers": ["No", "Yes"]}
        ]});
        assert_eq!(
            decide(policy, &database()),
            Decision::Answer {
                answers: vec![vec!["SQLite".into()], vec!["No".into(), "Yes".into()]],
                reason: "rule \"DATABASE\": \"Which database?\" → \"SQLite\"; rule \"/^Deploy to (prod|staging)/\": \"Deploy to production?\" → \"No, Yes\"".into()
            }
        );
        let case_sensitive =
            json!({"mode": "auto", "rules": [{"match": "/^deploy/", "answers": ["Yes"]}]});
        let Decision::Answer { answers, .. } = decide(case_sensitive, &database()) else {
            panic!()
        };
        assert_eq!(
            answers,
            vec![vec!["Postgres".to_string()], vec!["No".to_string()]]
        );
        let ignoring_case =
            json!({"mode": "auto", "rules": [{"match": "/^deploy/i", "answers": ["Yes"]}]});
        let Decision::Answer { answers, .. } = decide(ignoring_case, &database()) else {
            panic!()
        };
        assert_eq!(answers[1], vec!["Yes".to_string()]);
    }

    #[test]
    fn the_most_specific_scope_wins() {
        let policies = Policies::from_json(Some(&json!({
            "mode": "reject",
            "servers": {"default": {"mode": "accept-first"}},
            "agents": {"plan": {"mode": "forward", "timeoutMs": 10}},
            "sessions": {"ses_vip": {"mode": "forward"}}
        })))
        .unwrap();
        let request = database();
        let with = |server, session_id, agent| {
            policies.decide(
                &Scope {
                    server,
                    session_id,
                    agent,
                },
                &request,
            )
        };
        assert!(matches!(with("other", "s", None), Decision::Reject { .. }));
        assert!(matches!(
            with("default", "s", None),
            Decision::Answer { .. }
        ));
        assert_eq!(
            with("default", "s", Some("plan")),
            Decision::Forward {
                timeout: Some(Duration::from_millis(10))
            }
        );
        assert_eq!(
            with("default", "ses_vip", Some("plan")),
            Decision::Forward { timeout: None }
        );
    }

    #[test]
    fn scoped_policies_inherit_what_they_do_not_say() {
        let policies = Policies::from_json(Some(&json!({
            "mode": "forward", "timeoutMs": 5000,
            "servers": {"a": {}}
        })))
        .unwrap();
        assert_eq!(
            policies.decide(
                &Scope {
                    server: "a",
                    session_id: "s",
                    agent: None
                },
                &database()
            ),
            Decision::Forward {
                timeout: Some(Duration::from_secs(5))
            }
        );
    }

    #[test]
    fn load_errors_name_the_place() {
        assert_eq!(
            load_error(
                json!({"mode": "auto", "rules": [{"match": "x", "answers": ["a"]}, {"match": "/(/", "answers": ["a"]}]})
            ),
            "policy.rules[1].match: invalid regex \"/(/\": regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        assert_eq!(
            load_error(json!({"mode": "sometimes"})),
            "policy: unknown variant `sometimes`, expected one of `forward`, `reject`, `accept-first`, `auto`"
        );
        assert_eq!(
            load_error(json!({"mode": "auto"})),
            "policy.rules: mode \"auto\" needs at least one rule"
        );
        assert_eq!(
            load_error(json!({"mode": "reject", "timeoutMs": 5})),
            "policy.timeoutMs: applies only to mode \"forward\""
        );
        assert_eq!(
            load_error(json!({"timeoutMs": 0})),
            "policy.timeoutMs: must be more than 0"
        );
        assert_eq!(
            load_error(json!({"mode": "auto", "rules": [{"match": "x", "answers": []}]})),
            "policy.rules[0].answers: needs at least one label"
        );
        assert_eq!(
            load_error(json!({"mode": "auto", "rules": [{"match": " ", "answers": ["a"]}]})),
            "policy.rules[0].match: is empty"
        );
        assert_eq!(
            load_error(json!({"rules": [{"match": "x", "answers": ["a"]}]})),
            "policy.rules: applies only to mode \"auto\""
        );
        assert_eq!(
            load_error(json!({"sessions": {"s": {"servers": {}}}})),
            "policy.sessions.s: servers, agents and sessions go only at the top level"
        );
        assert!(
            load_error(json!({"mode": "reject", "extra": 1})).contains("unknown field `extra`")
        );
    }
}
