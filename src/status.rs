//! `ask-lsp status`: connects once to each server the command line names,
//! says what it is and whether it answers, and lists what is pending there.
//! Nothing is answered: no broker, no policy, only the backends' own event
//! loop, stopped as soon as the picture is known.

use std::io::Write;

use serde::Serialize;

use crate::app::{self, HookReach, Probed};
use crate::present::i18n::tr;
#[cfg(unix)]
use crate::present::no_decision::unreached;
use crate::present::who;
use crate::present::{backend_error, cut, invalid, problem};
use crate::prompt::Prompt;
use crate::settings::{ServerKind, ServerSpec, UrlSource, servers_from_flags};
use crate::text;

/// What to look at, for [`status`]: the same servers `watch` would follow.
pub struct StatusOptions {
    /// Servers as (name, URL); none: the OpenCode servers running for the
    /// current directory, else `$ASK_LSP_URL` or the default URL.
    pub servers: Vec<(Option<String>, String)>,
    pub directory: Option<String>,
    /// sandbox-agent's ACP server id, instead of OpenCode.
    pub sandbox_agent: Option<String>,
    /// One JSON object instead of text for a person.
    pub json: bool,
    /// Also whether `ask-lsp hook` reaches the running instances.
    pub hooks: bool,
}

/// Writes every server's state to `out`; true when all of them answered.
pub async fn status(options: StatusOptions, mut out: impl Write) -> Result<bool, String> {
    let nothing_named = options.servers.is_empty() && options.sandbox_agent.is_none();
    // `--hooks` alone speaks of hooks only: no default server is probed.
    let servers = match options.hooks && nothing_named {
        true => Vec::new(),
        false => servers_from_flags(
            options.servers,
            options.directory,
            options.sandbox_agent,
            &app::env_defaults_here(nothing_named).await,
        )
        .map_err(|e| e.to_string())?,
    };
    let reports = futures_util::future::join_all(servers.iter().map(probe)).await;
    let all_reachable = reports.iter().all(|r| r.error.is_none());
    #[cfg(unix)]
    let hooks = options.hooks.then(app::hook_reach);
    let written = if options.json {
        let all = Reports {
            servers: &reports,
            #[cfg(unix)]
            hooks: hooks.as_ref(),
        };
        serde_json::to_writer_pretty(&mut out, &all)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        reports
            .iter()
            .try_for_each(|report| report.write(&mut out))
            .and_then(|()| {
                #[cfg(unix)]
                if let Some(hooks) = &hooks {
                    write_hooks(hooks, &mut out)?;
                }
                Ok(())
            })
    };
    written.map_err(|e| tr!("status.cannot_write", error = e))?;
    Ok(all_reachable)
}

#[derive(Serialize)]
struct Reports<'a> {
    servers: &'a [Report],
    /// Where `ask-lsp hook` looks, and whether hooks reach each instance.
    #[cfg(unix)]
    #[serde(skip_serializing_if = "Option::is_none")]
    hooks: Option<&'a HookReach>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    name: String,
    url: String,
    /// No `--url` named it: `$ASK_LSP_URL` or the built-in default.
    defaulted: bool,
    #[serde(skip)]
    url_source: UrlSource,
    generation: ServerKind,
    connected: bool,
    /// Why it is not connected, with advice (401: which password); in
    /// English: `--json` is read by programs.
    error: Option<String>,
    /// The same in the person's language.
    #[serde(skip)]
    shown_error: Option<String>,
    pending: Vec<Listed>,
    /// Listed by the server but left out: their session is not running.
    hidden: usize,
    /// What the server sent that cannot be shown.
    problems: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    kind: &'static str,
    /// The kind as a person calls it, in the person's language.
    #[serde(skip)]
    noun: String,
    id: String,
    /// In English: `--json` is read by programs.
    title: String,
    /// The title as a person reads it, in the person's language.
    #[serde(skip)]
    shown_title: String,
    session: String,
    directory: Option<String>,
    agent: Option<String>,
}

impl Listed {
    fn new(prompt: &Prompt) -> Listed {
        let shown = |s: &str| text::for_display(s, text::DISPLAY_ID_CHARS).into_owned();
        Listed {
            kind: prompt.kind.noun(),
            noun: who::noun(&prompt.kind),
            id: shown(&prompt.id),
            // Already one line and cut with a note of what it hid.
            title: prompt.title().english(),
            shown_title: who::title(&prompt.title()),
            session: shown(&prompt.session),
            directory: prompt.directory.as_deref().map(shown),
            agent: prompt.origin.agent.as_deref().map(shown),
        }
    }
}

impl Report {
    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let state = match &self.shown_error {
            None => tr!("status.connected"),
            Some(error) => tr!("status.not_connected", error = error),
        };
        let url_from = match &self.url_source {
            UrlSource::Configuration => String::new(),
            UrlSource::Environment => tr!("status.from_env_url"),
            UrlSource::BuiltIn => tr!("status.default_url"),
            UrlSource::Discovered(from) => tr!("status.found_running", from = from),
        };
        writeln!(
            out,
            "{}",
            tr!(
                "status.server",
                name = self.name,
                url = self.url,
                from = url_from,
                kind = backend_error::server_kind(self.generation),
                state = state
            )
        )?;
        if self.error.is_none() {
            let hidden = match self.hidden {
                0 => String::new(),
                1 => tr!("status.hidden_one"),
                n => tr!("status.hidden", n = n),
            };
            let line = match self.pending.len() {
                0 => tr!("status.nothing_pending", hidden = hidden),
                1 => tr!("status.one_pending", hidden = hidden),
                n => tr!("status.pending", n = n, hidden = hidden),
            };
            writeln!(out, "  {line}")?;
        }
        for listed in &self.pending {
            let mut about = vec![tr!("status.session", session = listed.session)];
            if let Some(agent) = &listed.agent {
                about.push(tr!("status.agent", agent = agent));
            }
            about.extend(listed.directory.clone());
            writeln!(
                out,
                "  - {}",
                tr!(
                    "status.listed",
                    kind = listed.noun,
                    title = listed.shown_title,
                    about = about.join(&tr!("hint.separator"))
                )
            )?;
        }
        for problem in &self.problems {
            writeln!(out, "  ! {problem}")?;
        }
        Ok(())
    }
}

/// Follows one server just long enough to know its state and what is
/// pending; each step is bounded by the backend's own timeouts.
async fn probe(spec: &ServerSpec) -> Report {
    let Probed {
        connected,
        error,
        pending,
        hidden,
        problems,
        source,
    } = app::probe(spec).await;
    let mut problems: Vec<String> = problems.iter().map(problem::problem).collect();
    let mut listed = Vec::with_capacity(pending.len());
    for prompt in pending {
        let id = cut::for_display(&prompt.id, text::DISPLAY_ID_CHARS).into_owned();
        match prompt.into_checked() {
            Ok(prompt) => listed.push(Listed::new(&prompt)),
            Err(e) => problems.push(tr!(
                "status.unshowable",
                id = id,
                error = invalid::prompt_error(&e)
            )),
        }
    }
    Report {
        name: text::for_display(&spec.name, text::DISPLAY_ID_CHARS).into_owned(),
        url: spec.url.clone(),
        defaulted: spec.url_source != UrlSource::Configuration,
        url_source: spec.url_source.clone(),
        generation: source.kind,
        connected: connected && error.is_none(),
        error: error.as_ref().map(|(english, _)| {
            text::for_display(english, text::DISPLAY_MESSAGE_CHARS).into_owned()
        }),
        shown_error: error
            .as_ref()
            .map(|(_, shown)| cut::for_display(shown, text::DISPLAY_MESSAGE_CHARS).into_owned()),
        pending: listed,
        hidden,
        problems: problems
            .iter()
            .map(|p| cut::for_display(p, text::DISPLAY_MESSAGE_CHARS).into_owned())
            .collect(),
    }
}

/// For a person: one line for where hooks look, one per instance.
#[cfg(unix)]
fn write_hooks(reach: &HookReach, out: &mut impl std::io::Write) -> std::io::Result<()> {
    match (&reach.directory, &reach.error) {
        (Some(dir), Some(error)) => writeln!(
            out,
            "{}",
            tr!("status.hooks_error", dir = dir, error = unreached(error))
        )?,
        (Some(dir), None) => writeln!(out, "{}", tr!("status.hooks", dir = dir))?,
        (None, error) => writeln!(
            out,
            "{}",
            tr!(
                "status.hooks_nowhere",
                error = error.as_ref().map(unreached).unwrap_or_default()
            )
        )?,
    }
    if let Some(dir) = &reach.unusable {
        writeln!(out, "  {}", tr!("hook.socket_dir_fix", dir = dir))?;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    for listener in &reach.listeners {
        let workspace = match listener.roots.as_slice() {
            [] => tr!("status.no_workspace"),
            roots => tr!("status.workspace", roots = roots.join(", ")),
        };
        let reached = match (listener.last_request_ms, &listener.last_agent) {
            (None, _) => tr!("status.no_hook_request"),
            (Some(at), agent) => tr!(
                "status.last_hook_request",
                ago = ago(now.saturating_sub(at)),
                agent = agent
                    .as_deref()
                    .map(|a| format!(" ({a})"))
                    .unwrap_or_default(),
                count = listener.requests
            ),
        };
        let line = tr!(
            "status.listener",
            socket = listener.socket,
            pid = listener.pid,
            workspace = workspace,
            reached = reached
        );
        match &listener.other_executable {
            Some(executable) => writeln!(
                out,
                "  {}",
                tr!(
                    "status.other_executable",
                    line = line,
                    executable = executable
                )
            )?,
            None => writeln!(out, "  {line}")?,
        }
    }
    Ok(())
}

#[cfg(unix)]
/// `ms` as a person reads an age: "12 s", "3 min", "2 h".
fn ago(ms: u64) -> String {
    match ms / 1000 {
        s if s < 120 => tr!("status.ago_s", n = s),
        s if s < 7200 => tr!("status.ago_min", n = s / 60),
        s => tr!("status.ago_h", n = s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_a_person_reads_them() {
        assert_eq!(ago(0), "0 s");
        assert_eq!(ago(12_400), "12 s");
        assert_eq!(ago(180_000), "3 min");
        assert_eq!(ago(3 * 3_600_000), "3 h");
    }
}
