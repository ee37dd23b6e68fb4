//! `ask-lsp hook claude` / `ask-lsp hook codex`: Claude Code's or Codex's
//! `PermissionRequest` hook. Hands the hook input to a running ask-lsp
//! (src/backends/hook/) and prints its decision in the agent's hook format
//! (docs/hook.md).
//!
//! Never worse than no hook: whatever goes wrong (no ask-lsp, no answer in
//! time, bad input), it prints nothing and exits 0, and the agent asks in
//! its own dialog. It never allows by itself and never writes to the
//! terminal the agent draws on (stderr gets at most one line).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::app::hook_client::{
    CLAUDE_NEWS, MAX_INPUT, Refusal, instances, is_ask_lsp, named_by_ask_lsp,
};
use crate::present::no_decision::NoDecision;

/// Below the agents' hook timeout as docs/hook.md configures it (60 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(50);
/// How long Claude waits for news to reach the instances: its hook waits.
const TELL_WITHIN: Duration = Duration::from_secs(2);
/// Claude Code's hook event for an MCP server's form.
const ELICITATION: &str = "Elicitation";
/// How long the first instance asked has to decide before the others are
/// asked too.
const STAGGER: Duration = Duration::from_millis(40);
/// An answer line is a decision: small.
const MAX_ANSWER: u64 = 64 * 1024;

/// How long the hook waits for a decision.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    /// `--timeout-ms` (None: the default, 50 s).
    pub timeout: Option<Duration>,
    /// `--elicitation-timeout-ms`: Claude Code's `Elicitation` hook (an MCP
    /// server's form) is handed over only when this is set (and not 0), and
    /// waits at most this long. Claude shows its own form only once the
    /// hook has ended, so it is an opt-in with its own, short bound.
    pub elicitation: Option<Duration>,
}

/// Runs the hook for `agent` within `bounds`, reading the input from
/// `input` and writing a decision to `output`. Every failure is a one-line
/// reason for stderr, in the person's language, and nothing on `output`.
pub async fn run(
    agent: &str,
    bounds: Bounds,
    input: impl Read,
    output: &mut impl std::io::Write,
) -> Result<(), String> {
    decide(agent, bounds, input, output)
        .await
        .map_err(|why| why.to_string())
}

async fn decide(
    agent: &str,
    bounds: Bounds,
    input: impl Read,
    output: &mut impl std::io::Write,
) -> Result<(), NoDecision> {
    if !["claude", "codex", "qwen", "copilot"].contains(&agent) {
        return Err(NoDecision::UnsupportedAgent {
            agent: agent.to_owned(),
        });
    }
    let mut raw = Vec::new();
    input
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(NoDecision::ReadingInput)?;
    if raw.len() > MAX_INPUT {
        return Err(NoDecision::InputTooLarge { max: MAX_INPUT });
    }
    let parsed: Value = serde_json::from_slice(&raw).map_err(NoDecision::InputNotJson)?;
    let cwd = parsed.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let event = parsed.get("hook_event_name").and_then(Value::as_str);
    // Claude's other events say what it no longer waits for (docs/hook.md,
    // "Withdrawal"): told to every instance, nothing decided or printed.
    let news = agent == "claude" && event.is_some_and(|e| CLAUDE_NEWS.contains(&e));
    let request = request_line(agent, &raw);
    if news {
        let _ = tokio::time::timeout(TELL_WITHIN, tell(cwd.as_deref(), &request)).await;
        return Ok(());
    }
    let form = agent == "claude" && event == Some(ELICITATION);
    let timeout = match (form, bounds.elicitation) {
        (false, _) => bounds.timeout.unwrap_or(DEFAULT_TIMEOUT),
        (true, Some(bound)) if !bound.is_zero() => bound,
        // Off: Claude shows its own form at once.
        (true, _) => return Err(NoDecision::ElicitationOff),
    };
    let answer = tokio::time::timeout(timeout, ask(cwd.as_deref(), &request))
        .await
        .map_err(|_| NoDecision::Timeout(timeout))??;
    let decision = match form {
        true => elicitation_output(&answer)?,
        false => hook_output(agent, &answer)?,
    };
    writeln!(output, "{decision}").map_err(NoDecision::WritingDecision)?;
    Ok(())
}

/// The one request line: the agent and its input as received, so that the
/// order of its keys stays (an MCP form's fields are shown in the order its
/// server wrote them; `serde_json::Value` would sort them). A line break in
/// valid JSON is whitespace (inside a string it is escaped): dropped.
fn request_line(agent: &str, input: &[u8]) -> Vec<u8> {
    let mut request = format!("{{\"agent\":{},\"input\":", json!(agent)).into_bytes();
    request.extend(input.iter().filter(|b| !matches!(b, b'\n' | b'\r')));
    request.extend(b"}\n");
    request
}

/// Asks the instances whose workspace holds `cwd`, else the most recent
/// that takes the connection; the first decision wins. Returning drops the
/// other connections, which withdraws the prompt there.
///
/// The most recent holding instance is asked first, the others once it has
/// not decided within [`STAGGER`] (or at once when it cannot): a rule
/// decides there without waking them all, and on busy cores each woken
/// instance delayed the answer (docs/hook.md). A prompt for a person shows
/// in the other editors that much later; which answers count is unchanged.
async fn ask(cwd: Option<&Path>, request: &[u8]) -> Result<Value, NoDecision> {
    let (holding, others) =
        instances(cwd).map_err(|e| NoDecision::NoInstance { error: Some(e) })?;
    if holding.is_empty() && others.is_empty() {
        return Err(NoDecision::NoInstance { error: None });
    }
    let mut asked = FuturesUnordered::new();
    let mut rest = holding.iter();
    for socket in rest.by_ref() {
        if let Some(stream) = connect(socket).await {
            asked.push(exchange(stream, request));
            break;
        }
    }
    if asked.is_empty() {
        for socket in &others {
            if let Some(stream) = connect(socket).await {
                asked.push(exchange(stream, request));
                break;
            }
        }
    }
    let mut rest = Some(rest);
    let stagger = tokio::time::sleep(STAGGER);
    tokio::pin!(stagger);
    let mut outcome = Err(NoDecision::NoInstanceAnswers);
    loop {
        let answer = tokio::select! {
            answer = asked.next() => answer,
            () = &mut stagger, if rest.is_some() => None,
        };
        let in_time = match answer {
            // A permission's decision, or a form's.
            Some(Ok(answer))
                if answer.get("behavior").is_some() || answer.get("action").is_some() =>
            {
                return Ok(answer);
            }
            Some(other) => {
                outcome = other;
                true
            }
            None if rest.is_none() => return outcome,
            None => false,
        };
        // Undecided there, or not within the stagger: every other one now.
        if asked.is_empty() || !in_time {
            for socket in rest.take().into_iter().flatten() {
                if let Some(stream) = connect(socket).await {
                    asked.push(exchange(stream, request));
                }
            }
        }
    }
}

/// Tells every instance (any of them may show the prompt), each answering
/// once it has acted on it.
async fn tell(cwd: Option<&Path>, request: &[u8]) {
    let Ok((holding, others)) = instances(cwd) else {
        return;
    };
    let mut told = FuturesUnordered::new();
    for socket in holding.iter().chain(&others) {
        if let Some(stream) = connect(socket).await {
            told.push(exchange(stream, request));
        }
    }
    while told.next().await.is_some() {}
}

/// A connection to an ask-lsp of this user's, or `None`: a socket another
/// process listens on (a stand-in claiming a workspace) gets no request.
async fn connect(socket: &Path) -> Option<UnixStream> {
    if !named_by_ask_lsp(socket) {
        tracing::warn!(
            "{} is not named by this ask-lsp executable; skipped",
            socket.display()
        );
        return None;
    }
    let stream = UnixStream::connect(socket).await.ok()?;
    // One SO_PEERCRED: this user's, the pid the socket is named by, this
    // executable.
    if !is_ask_lsp(&stream, socket) {
        tracing::warn!(
            "{} is not served by this user's ask-lsp executable; skipped",
            socket.display()
        );
        return None;
    }
    Some(stream)
}

/// Sends the request; the answer line. The connection stays open until
/// then: closing it withdraws the prompt.
async fn exchange(stream: UnixStream, request: &[u8]) -> Result<Value, NoDecision> {
    let (read, mut write) = stream.into_split();
    write
        .write_all(request)
        .await
        .map_err(NoDecision::Sending)?;
    let mut line = Vec::new();
    BufReader::new(read)
        .take(MAX_ANSWER)
        .read_until(b'\n', &mut line)
        .await
        .map_err(NoDecision::ReadingAnswer)?;
    drop(write);
    if !line.ends_with(b"\n") {
        return Err(NoDecision::ClosedWithoutDecision);
    }
    serde_json::from_slice(&line).map_err(NoDecision::MalformedAnswer)
}

/// ask-lsp's answer as the agent's hook output (Claude's, Codex's and
/// Qwen Code's have one shape, GitHub Copilot CLI's is the bare decision;
/// only Claude takes `updatedPermissions`). Only an explicit allow or deny
/// decides; anything else is an error (no decision).
fn hook_output(agent: &str, answer: &Value) -> Result<Value, NoDecision> {
    let mut decision = serde_json::Map::new();
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            decision.insert("behavior".into(), json!("allow"));
            if let Some(rules) = answer.get("updatedPermissions")
                && agent == "claude"
            {
                decision.insert("updatedPermissions".into(), rules.clone());
            }
            // AskUserQuestion's answers, in the tool's own input.
            if let Some(input) = answer.get("updatedInput").filter(|i| i.is_object())
                && agent == "claude"
            {
                decision.insert("updatedInput".into(), input.clone());
            }
        }
        Some("deny") => {
            decision.insert("behavior".into(), json!("deny"));
            if let Some(message) = answer.get("message").and_then(Value::as_str) {
                decision.insert("message".into(), json!(message));
            }
        }
        _ => return Err(undecided(answer)),
    }
    if agent == "copilot" {
        return Ok(Value::Object(decision));
    }
    Ok(json!({
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    }))
}

/// Why an answer that is no decision decided nothing.
fn undecided(answer: &Value) -> NoDecision {
    let refusal = answer
        .get("refusal")
        .and_then(|why| Refusal::deserialize(why).ok());
    match (refusal, answer.get("error").and_then(Value::as_str)) {
        (Some(why), _) => NoDecision::Refused(why),
        (None, Some(error)) => NoDecision::RefusedSaying {
            error: error.to_owned(),
        },
        (None, None) => NoDecision::Undecided,
    }
}

/// ask-lsp's answer to an `Elicitation` as Claude Code's hook output
/// (2.1.332, docs/hook.md): the person's submit is `accept` with its
/// content, a reject `decline`. Anything else (a permission's answer, a
/// `cancel`, an accept without content) decides nothing: Claude shows its
/// own form.
fn elicitation_output(answer: &Value) -> Result<Value, NoDecision> {
    let output = |action: &str| json!({"hookSpecificOutput": {"hookEventName": ELICITATION, "action": action}});
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let content = answer.get("content").filter(|c| c.is_object());
            let mut accept = output("accept");
            accept["hookSpecificOutput"]["content"] = content.ok_or(NoDecision::Undecided)?.clone();
            Ok(accept)
        }
        Some("decline") => Ok(output("decline")),
        _ => Err(undecided(answer)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allow_and_deny_decide() {
        let claude_output = |answer: &Value| hook_output("claude", answer);
        assert_eq!(
            claude_output(&json!({"behavior": "allow"})).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            claude_output(&json!({"behavior": "deny", "message": "no"})).unwrap()["hookSpecificOutput"]
                ["decision"],
            json!({"behavior": "deny", "message": "no"})
        );
        assert!(claude_output(&json!({})).is_err());
        assert!(claude_output(&json!({"behavior": "ask"})).is_err());
        assert!(claude_output(&json!({"error": "malformed"})).is_err());
        for agent in ["claude", "codex", "qwen", "copilot"] {
            assert!(hook_output(agent, &json!({})).is_err());
            assert!(hook_output(agent, &json!({"behavior": "ask"})).is_err());
        }
    }

    /// What `ask-lsp hook codex` makes of each answer line an instance
    /// could send (a real one sends only whole allow or deny lines): only a
    /// whole, explicit allow or deny decides. (A stand-in listener cannot
    /// be an instance any more: the hook asks only this ask-lsp executable.)
    #[tokio::test]
    async fn only_a_whole_explicit_answer_line_decides_for_codex() {
        let request = b"{\"agent\":\"codex\",\"input\":{}}\n";
        let decided = |answer: &'static [u8]| async move {
            let (ours, theirs) = UnixStream::pair().unwrap();
            let served = tokio::spawn(async move {
                let (read, mut write) = theirs.into_split();
                let mut line = Vec::new();
                BufReader::new(read)
                    .read_until(b'\n', &mut line)
                    .await
                    .unwrap();
                write.write_all(answer).await.unwrap();
                line
            });
            let decision = exchange(ours, request)
                .await
                .and_then(|answer| hook_output("codex", &answer));
            assert_eq!(served.await.unwrap(), request, "the request, whole");
            decision
                .ok()
                .map(|d| d["hookSpecificOutput"]["decision"].clone())
        };
        assert_eq!(
            decided(b"{\"behavior\":\"allow\"}\n").await,
            Some(json!({"behavior": "allow"}))
        );
        assert_eq!(
            decided(b"{\"behavior\":\"deny\",\"message\":\"use make\"}\n").await,
            Some(json!({"behavior": "deny", "message": "use make"}))
        );
        for bad in [
            b"{\"behavior\":\"allow\"}".as_slice(),
            b"{\"behavior\":\"all",
            b"{\"behavior\":\"Allow\"}\n",
            b"{\"behavior\":\"allow-once\"}\n",
            b"{\"error\":\"malformed request\"}\n",
            b"{}\n",
            b"allow\n",
            b"",
        ] {
            assert_eq!(
                decided(bad).await,
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn claudes_answers_go_back_in_updated_input_never_to_codex() {
        let input = json!({"questions": [], "answers": {"Which?": "SQLite"}});
        let answer = json!({"behavior": "allow", "updatedInput": input});
        assert_eq!(
            hook_output("claude", &answer).unwrap()["hookSpecificOutput"]["decision"],
            answer
        );
        assert_eq!(
            hook_output("codex", &answer).unwrap()["hookSpecificOutput"]["decision"],
            json!({"behavior": "allow"})
        );
    }

    #[test]
    fn codex_gets_the_same_shape_without_stored_rules() {
        let rules = json!([{"type": "addRules"}]);
        assert_eq!(
            hook_output(
                "codex",
                &json!({"behavior": "allow", "updatedPermissions": rules})
            )
            .unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            hook_output("codex", &json!({"behavior": "deny", "message": "use make"})).unwrap()["hookSpecificOutput"]
                ["decision"],
            json!({"behavior": "deny", "message": "use make"})
        );
    }

    #[test]
    fn qwen_gets_claudes_shape_and_copilot_the_bare_decision_neither_stored_rules() {
        let rules = json!([{"type": "addRules"}]);
        let allow = json!({"behavior": "allow", "updatedPermissions": rules});
        let deny = json!({"behavior": "deny", "message": "use make"});
        assert_eq!(
            hook_output("qwen", &allow).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow"}}})
        );
        assert_eq!(
            hook_output("qwen", &deny).unwrap()["hookSpecificOutput"]["decision"],
            deny
        );
        assert_eq!(
            hook_output("copilot", &allow).unwrap(),
            json!({"behavior": "allow"})
        );
        assert_eq!(hook_output("copilot", &deny).unwrap(), deny);
    }
}

#[cfg(test)]
mod elicitation_tests {
    use super::*;

    /// The input goes over as received, on one line: a form's fields keep
    /// the server's order.
    #[test]
    fn the_request_keeps_the_inputs_key_order_on_one_line() {
        let input = b"{\"requested_schema\": {\"properties\": {\"zeta\": {},\r\n \"alpha\": {\"title\": \"a\\nb\"}}}}\n";
        let line = request_line("claude", input);
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert!(line.ends_with(b"\n"));
        let text = String::from_utf8(line).unwrap();
        assert!(
            text.find("zeta").unwrap() < text.find("alpha").unwrap(),
            "{text}"
        );
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["agent"], "claude");
        assert_eq!(
            parsed["input"]["requested_schema"]["properties"]["alpha"]["title"],
            "a\nb"
        );
    }

    /// What Claude Code gets for each answer an instance could send to an
    /// `Elicitation`: only an explicit accept with content or a decline
    /// decides; a permission's answer, `cancel`, a refusal or `{}` print
    /// nothing (Claude's own form).
    #[test]
    fn only_the_persons_accept_or_decline_answers_a_form() {
        let output = |answer: Value| elicitation_output(&answer).ok();
        assert_eq!(
            output(json!({"action": "accept", "content": {"name": "Ada", "age": 36}})),
            Some(
                json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                        "content": {"name": "Ada", "age": 36}}})
            )
        );
        assert_eq!(
            output(json!({"action": "decline"})),
            Some(
                json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}})
            )
        );
        for nothing in [
            json!({}),
            json!({"action": "cancel"}),
            json!({"action": "accept"}),
            json!({"action": "accept", "content": "Ada"}),
            json!({"action": "Accept", "content": {}}),
            json!({"behavior": "allow"}),
            json!({"behavior": "deny", "message": "no"}),
            json!({"error": "refused", "refusal": {"why": "elicitationUrl"}}),
        ] {
            assert_eq!(output(nothing.clone()), None, "{nothing}");
        }
        // And a form's answer never becomes a permission's decision.
        assert!(hook_output("claude", &json!({"action": "accept", "content": {}})).is_err());
    }

    /// With `--elicitation-timeout-ms` unset (or 0) the hook hands nothing
    /// over and prints nothing: Claude shows its own form at once.
    #[tokio::test]
    async fn an_elicitation_without_the_opt_in_prints_nothing() {
        let input =
            br#"{"hook_event_name": "Elicitation", "session_id": "s", "cwd": "/nonexistent",
            "mcp_server_name": "m", "message": "Who?", "mode": "form",
            "requested_schema": {"type": "object", "properties": {}}}"#;
        for elicitation in [None, Some(Duration::ZERO)] {
            let mut out = Vec::new();
            let bounds = Bounds {
                timeout: Some(Duration::from_secs(5)),
                elicitation,
            };
            let why = decide("claude", bounds, &input[..], &mut out).await;
            assert!(matches!(why, Err(NoDecision::ElicitationOff)), "{why:?}");
            assert!(out.is_empty());
        }
    }
}
