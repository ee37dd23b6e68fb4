//! Terminal mode (`ask-lsp watch`, and the demo): the same broker, presented
//! on a terminal. Numbered options (comma-separated for multi-select), typed
//! text where the question allows it, an empty line to reject.
//!
//! A person's line answers only the prompt that was on screen when it was
//! entered: each prompt shown gets a number ([`Console::show_prompt`]), each
//! line the number of the prompt on screen at Enter ([`Entered`]); a line
//! typed while nothing waited, or for a prompt since replaced, is dropped
//! and said so. A script's lines (piped input) answer prompts in order, as
//! they come.
//!
//! One presenter for every prompt kind's typed input (forms are in
//! terminal/form.rs, what a typed line means in terminal/typed.rs, tests in
//! terminal/tests.rs).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::mpsc;

use self::typed::{Typed, parse_line};

use crate::app;
use crate::broker::{BrokerHandle, Human, Pending, Reason, Update, Updates};
use crate::present::i18n::tr;
use crate::present::prompt_text::{self, Layout};
use crate::present::{backend_error, sentences, who};
use crate::prompt::draft::{Draft, DraftError, Piece, Progress};
use crate::prompt::{Answer, FormValues, Kind, Question};
use crate::settings::policy::Policies;
use crate::settings::{EnvDefaults, UrlSource, servers_from_flags};

mod form;
pub mod line;
mod typed;

/// A line typed for `watch`.
pub struct Entered {
    pub line: String,
    /// The number of the prompt on screen when it was entered (from
    /// [`Console::show_prompt`]; 0 before the first). `None`: a script's
    /// line, which answers the next prompt that needs one.
    pub at: Option<u64>,
}

/// Where `watch` writes.
pub trait Console: Write {
    /// Writes `text`, which puts a new prompt on screen, and returns the
    /// number lines entered from then on carry. What was typed before it
    /// and not entered yet (a line half typed, input not read yet) is
    /// dropped, so it never reaches this prompt.
    fn show_prompt(&mut self, text: &str) -> u64;

    /// Whether the line awaited now is a secret: typed without echo, kept
    /// in no history and nowhere on screen. A script's lines are never
    /// shown anyway.
    fn secret(&mut self, _secret: bool) {}
}

/// A script's output: its lines carry no prompt number.
impl Console for std::io::Stdout {
    fn show_prompt(&mut self, text: &str) -> u64 {
        let _ = self.write_all(text.as_bytes());
        0
    }
}

/// A script's lines (a pipe, a file), read as they come.
pub(crate) fn script_lines(
    input: impl AsyncBufRead + Unpin + Send + 'static,
) -> mpsc::Receiver<Entered> {
    let (lines_tx, lines) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut input = input.lines();
        while let Ok(Some(line)) = input.next_line().await {
            if lines_tx.send(Entered { line, at: None }).await.is_err() {
                return;
            }
        }
    });
    lines
}

/// What to follow and how, for [`watch`].
pub struct WatchOptions {
    /// Servers as (name, URL); a name defaults to `default`, `server2`, ….
    /// None: `$ASK_LSP_URL` (with `environment`) or the default URL.
    pub servers: Vec<(Option<String>, String)>,
    pub directory: Option<String>,
    /// Follow sandbox-agent's ACP server with this id at each URL, instead
    /// of OpenCode.
    pub sandbox_agent: Option<String>,
    /// Codex homes whose daemons are followed besides `$CODEX_HOME`, as
    /// absolute paths (`--codex-home`; the `codexHomes` setting's rules).
    pub codex_homes: Vec<String>,
    /// A `policy` object as in the LSP configuration (docs/policies.md).
    pub policy: Option<serde_json::Value>,
    /// A `notify` object as in the LSP configuration, where `terminal`
    /// writes its sequences to stdout.
    pub notify: Option<serde_json::Value>,
    /// Leave when input ends (watch), or only once nothing awaits input (demo).
    pub exit_on_eof: bool,
    /// Take passwords and the default URL from the environment.
    pub environment: bool,
}

/// Follows the servers and asks on `output`, reading decisions from `input`.
pub async fn watch(
    options: WatchOptions,
    input: mpsc::Receiver<Entered>,
    output: impl Console,
) -> Result<(), String> {
    let env = if options.environment {
        app::env_defaults_here(options.servers.is_empty() && options.sandbox_agent.is_none()).await
    } else {
        EnvDefaults::default()
    };
    // The workspace `ask-lsp hook` matches an agent's directory against.
    let root = match &options.directory {
        Some(directory) => std::path::PathBuf::from(directory),
        None => app::current_dir().unwrap_or_default(),
    };
    let roots = vec![std::fs::canonicalize(&root).unwrap_or(root)];
    let servers = servers_from_flags(
        options.servers,
        options.directory,
        options.sandbox_agent,
        &env,
    )
    .map_err(|e| e.to_string())?;
    let codex_homes =
        crate::settings::codex_homes_from_flags(options.codex_homes).map_err(|e| e.to_string())?;
    let policies = Policies::from_json(options.policy.as_ref()).map_err(|e| e.to_string())?;
    let notify = crate::settings::notify::Settings::from_json(
        options.notify.as_ref(),
        crate::settings::notify::Host::Watch,
    )
    .map_err(|e| e.to_string())?;
    let mut output = output;
    for server in &servers {
        let found = match &server.url_source {
            UrlSource::Discovered(from) => tr!("watch.found_running", from = from),
            _ => String::new(),
        };
        let watching = tr!("watch.watching", url = server.url, found = found);
        let _ = writeln!(output, "ask-lsp: {watching}");
    }
    let started = app::start(servers, roots, &codex_homes, policies, notify);
    Watch::new(started.broker, output, options.exit_on_eof)
        .run(started.updates, input)
        .await;
    Ok(())
}

struct Watch<W: Console> {
    broker: BrokerHandle,
    out: W,
    queue: VecDeque<Arc<Pending>>,
    current: Option<Current>,
    exit_on_eof: bool,
    /// The cursor is after a `> ` prompt: anything else starts a new line.
    at_prompt: bool,
    /// Which generation each server was last found to be, as said.
    generations: HashMap<String, &'static str>,
}

struct Current {
    pending: Arc<Pending>,
    /// Its number on screen: only lines entered at it answer it.
    shown: u64,
    /// The answers typed so far.
    draft: Draft,
    /// The question or form field on screen; past the last once the
    /// answer is whole (or, for a permission, once a choice is made).
    at: usize,
    /// An empty line on several questions asks first.
    confirm_reject: bool,
    /// What the permission answer sent here allows, to say once it is done.
    allowed: Option<String>,
}

impl Current {
    fn questions(&self) -> &[Question] {
        match &self.pending.prompt.kind {
            Kind::Questions(questions) => questions,
            Kind::Permission(_) | Kind::Form(_) => &[],
        }
    }

    /// The line awaited now answers a question asking for a secret.
    fn awaits_secret(&self) -> bool {
        !self.confirm_reject && self.questions().get(self.at).is_some_and(|q| q.secret)
    }

    /// Lines still needed: one per question or field, or one for a
    /// permission.
    fn needs_input(&self) -> bool {
        self.confirm_reject
            || match &self.pending.prompt.kind {
                Kind::Questions(questions) => self.at < questions.len(),
                Kind::Permission(_) => self.at == 0,
                Kind::Form(form) => self.at < form.fields.len().max(1),
            }
    }

    /// Adds a typed piece: the whole answer once every piece is in, else
    /// `None` with the next one on screen.
    fn add(&mut self, piece: Piece) -> Result<Option<Human>, DraftError> {
        match self.draft.add(&self.pending.prompt, piece)? {
            Progress::Whole(answer) => {
                self.at = usize::MAX;
                Ok(Some(Human::Answer(answer)))
            }
            Progress::Remaining(remaining) => {
                self.at = remaining.first().copied().unwrap_or(usize::MAX);
                Ok(None)
            }
        }
    }
}

impl<W: Console> Watch<W> {
    fn new(broker: BrokerHandle, out: W, exit_on_eof: bool) -> Self {
        Watch {
            broker,
            out,
            queue: VecDeque::new(),
            current: None,
            exit_on_eof,
            at_prompt: false,
            generations: HashMap::new(),
        }
    }

    /// Runs until input ends (see [`WatchOptions::exit_on_eof`]) or the
    /// broker stops.
    async fn run(mut self, mut updates: Updates, mut lines: mpsc::Receiver<Entered>) {
        // A script's lines wait here until a prompt needs them.
        let mut typed: VecDeque<String> = VecDeque::new();
        let mut input_open = true;
        loop {
            while self.awaiting_input() {
                let Some(line) = typed.pop_front() else { break };
                self.line(&line).await;
            }
            let stuck = self.awaiting_input() && typed.is_empty();
            if !input_open && typed.is_empty() && (self.exit_on_eof || stuck) {
                // Show what the last answers (a person's or a policy's)
                // led to before leaving: each send ends in an update.
                loop {
                    while let Some(update) = updates.try_recv() {
                        self.update(update);
                    }
                    if self.broker.sending().await == 0 {
                        break;
                    }
                    if let Ok(Some(update)) =
                        tokio::time::timeout(Duration::from_millis(50), updates.recv()).await
                    {
                        self.update(update);
                    }
                }
                while let Some(update) = updates.try_recv() {
                    self.update(update);
                }
                let waiting = self.queue.len() + usize::from(self.current.is_some());
                if waiting > 0 {
                    // The demo's server stops with it: nothing stays pending.
                    let said = match self.exit_on_eof {
                        true => tr!("watch.input_closed_pending", prompts = prompts(waiting)),
                        false => tr!("watch.input_closed", prompts = prompts(waiting)),
                    };
                    self.say(format!("ask-lsp: {said}"));
                }
                return;
            }
            tokio::select! {
                update = updates.recv() => match update {
                    Some(update) => self.update(update),
                    None => return,
                },
                line = lines.recv(), if input_open => match line {
                    Some(Entered { line, at: None }) => typed.push_back(line),
                    Some(Entered { line, at: Some(at) }) => self.entered(&line, at).await,
                    None => input_open = false,
                },
            }
        }
    }

    /// A person's line: it answers the prompt on screen only if that prompt
    /// was there when it was entered and waits for a line.
    async fn entered(&mut self, line: &str, at: u64) {
        if self.awaiting_input() && self.current.as_ref().is_some_and(|c| c.shown == at) {
            return self.line(line).await;
        }
        // Enter left the cursor at the start of a line.
        self.at_prompt = false;
        let dropped = match &self.current {
            Some(current) if current.shown != at => tr!("watch.typed_before_prompt"),
            _ => tr!("watch.typed_while_nothing_waits"),
        };
        self.say(format!("  {dropped}"));
        self.reprompt();
    }

    /// A prompt is on screen and not all of its answers are typed yet (after
    /// that, lines wait until the broker has taken the answers).
    fn awaiting_input(&self) -> bool {
        self.current.as_ref().is_some_and(Current::needs_input)
    }

    fn say(&mut self, text: impl AsRef<str>) {
        if std::mem::take(&mut self.at_prompt) {
            let _ = writeln!(self.out);
        }
        let _ = writeln!(self.out, "{}", text.as_ref());
        let _ = self.out.flush();
    }

    fn update(&mut self, update: Update) {
        match update {
            Update::Added(pending) => {
                self.queue.push_back(pending);
                if self.current.is_some() {
                    let waiting = self.queue.len();
                    self.say(format!(
                        "+ {}",
                        tr!("watch.waiting", prompts = prompts(waiting))
                    ));
                    self.reprompt();
                }
                self.next();
            }
            Update::Resolved(resolution) => {
                let title = who::title(&resolution.title);
                self.queue.retain(|p| p.key != resolution.key);
                let was_current = self.current.take_if(|c| c.pending.key == resolution.key);
                let mark = match resolution.reason {
                    Reason::AnsweredHere | Reason::RejectedHere => "✓",
                    Reason::Policy | Reason::Timeout => "⚙",
                    _ => "↷",
                };
                // A permission allowed here says what was decided.
                let message = match (&was_current, resolution.reason) {
                    (
                        Some(Current {
                            allowed: Some(decided),
                            ..
                        }),
                        Reason::AnsweredHere,
                    ) => decided.clone(),
                    _ => sentences::resolution(&title, resolution.reason, &resolution.why),
                };
                self.say(format!("{mark} {message}"));
                let was_current = was_current.is_some();
                if was_current {
                    self.out.secret(false);
                    self.next();
                } else {
                    self.reprompt();
                }
            }
            Update::Status(status) => {
                for server in &status.servers {
                    let Some(generation) = server.kind.generation() else {
                        continue;
                    };
                    if self.generations.insert(server.name.clone(), generation) != Some(generation)
                    {
                        self.say(tr!(
                            "watch.server_kind",
                            server = server.name,
                            kind = backend_error::server_kind(server.kind),
                            url = server.url
                        ));
                        self.reprompt();
                    }
                }
            }
            Update::Connection { server, error } => {
                match error {
                    // A state (no Codex daemon running), not a fault: the
                    // status says it, as the editors' log does.
                    Some(error) if error.is_normal_state() => return,
                    Some(error) => {
                        let error = backend_error::backend_error(&error);
                        self.say(format!("! {server}: {error}"))
                    }
                    None => self.say(format!("✓ {}", sentences::connected_again(&server))),
                }
                self.reprompt();
            }
            Update::Notice(notice) => {
                self.say(format!("! {}", sentences::notice(&notice)));
                self.reprompt();
            }
        }
    }

    fn next(&mut self) {
        if self.current.is_some() {
            return;
        }
        let Some(pending) = self.queue.pop_front() else {
            return;
        };
        let what = match &pending.prompt.kind {
            Kind::Questions(q) if q.len() == 1 => tr!("watch.header.question"),
            Kind::Questions(q) => tr!("watch.header.questions", count = q.len()),
            Kind::Permission(_) => tr!("watch.header.permission"),
            Kind::Form(form) if form.url.is_some() => tr!("watch.header.link"),
            Kind::Form(_) => tr!("watch.header.form"),
        };
        let from = who::server_and_project(&pending.server, &pending.prompt);
        let session = who::session(
            &pending.prompt.session,
            pending.prompt.origin.session_title.as_ref(),
        );
        let header = tr!("watch.header", what = what, from = from, session = session);
        let mut text = String::new();
        if std::mem::take(&mut self.at_prompt) {
            text.push('\n');
        }
        text.push_str(&format!("\n── {header} ──\n"));
        if !self.queue.is_empty() {
            let waiting = tr!("watch.waiting", prompts = prompts(self.queue.len()));
            text.push_str(&format!("({waiting})\n"));
        }
        let mut current = Current {
            pending,
            shown: 0,
            draft: Draft::default(),
            at: 0,
            confirm_reject: false,
            allowed: None,
        };
        text.push_str(&current_text(&current));
        text.push_str("\n> ");
        // Set before the prompt is up: no key of a secret is ever echoed.
        self.out.secret(current.awaits_secret());
        current.shown = self.out.show_prompt(&text);
        let _ = self.out.flush();
        self.current = Some(current);
        self.at_prompt = true;
    }

    /// After a notice, the prompt line again if input is awaited.
    fn reprompt(&mut self) {
        let secret = self.current.as_ref().is_some_and(Current::awaits_secret);
        self.out.secret(secret);
        if self.awaiting_input() && !self.at_prompt {
            let _ = write!(self.out, "> ");
            let _ = self.out.flush();
            self.at_prompt = true;
        }
    }

    fn prompt(&mut self) {
        let Some(current) = &self.current else { return };
        self.out.secret(current.awaits_secret());
        let text = current_text(current);
        let _ = write!(self.out, "{text}\n> ");
        let _ = self.out.flush();
        self.at_prompt = true;
    }

    async fn line(&mut self, line: &str) {
        self.at_prompt = false;
        let Some(current) = &mut self.current else {
            return;
        };
        let key = current.pending.key.clone();
        let human = if current.confirm_reject {
            current.confirm_reject = false;
            if line.trim().eq_ignore_ascii_case("y") {
                Human::Reject { message: None }
            } else {
                return self.prompt();
            }
        } else {
            match &current.pending.prompt.kind {
                Kind::Questions(questions) => {
                    let index = current.at;
                    match parse_line(&questions[index], line) {
                        Err(error) => {
                            self.say(format!("  {error}"));
                            return self.prompt();
                        }
                        Ok(Typed::Reject) if questions.len() > 1 => {
                            current.confirm_reject = true;
                            return self.prompt();
                        }
                        Ok(Typed::Reject) => Human::Reject { message: None },
                        Ok(Typed::Answer(answer)) => {
                            match current.add(Piece::Question { index, answer }) {
                                Ok(Some(human)) => human,
                                Ok(None) => return self.prompt(),
                                Err(error) => {
                                    self.say(format!("  {}", sentences::draft_error(&error, &key)));
                                    return self.prompt();
                                }
                            }
                        }
                    }
                }
                Kind::Form(f) if f.url.is_some() || f.fields.is_empty() => {
                    current.at = 1;
                    if line.trim().eq_ignore_ascii_case("y") {
                        Human::Answer(Answer::Form(FormValues::new()))
                    } else {
                        Human::Reject { message: None }
                    }
                }
                Kind::Form(f) => {
                    let index = current.at;
                    match form::parse(&f.fields[index], line) {
                        Err(error) => {
                            self.say(format!("  {error}"));
                            return self.prompt();
                        }
                        Ok(form::Line::Reject) => {
                            current.confirm_reject = true;
                            return self.prompt();
                        }
                        Ok(line) => {
                            let value = match line {
                                form::Line::Value(value) => Some(value),
                                _ => None,
                            };
                            match current.add(Piece::Field { index, value }) {
                                Ok(Some(human)) => human,
                                Ok(None) => return self.prompt(),
                                Err(error) => {
                                    self.say(format!("  {}", sentences::draft_error(&error, &key)));
                                    return self.prompt();
                                }
                            }
                        }
                    }
                }
                Kind::Permission(permission) => {
                    let count = permission.choices.len();
                    let line = line.trim();
                    if line.is_empty() {
                        Human::Reject { message: None }
                    } else if let Some(reason) = line.strip_prefix('!') {
                        Human::Reject {
                            message: Some(reason.trim().to_owned()),
                        }
                    } else {
                        match line
                            .parse::<usize>()
                            .ok()
                            .filter(|n| (1..=count).contains(n))
                        {
                            Some(n) => {
                                current.at = 1;
                                current.allowed = prompt_text::allowed(
                                    permission.choices[n - 1].effect,
                                    &who::title(&current.pending.title),
                                );
                                Human::Answer(Answer::Permission {
                                    choice: permission.choices[n - 1].id.clone(),
                                })
                            }
                            None => {
                                self.say(format!("  {}", tr!("watch.pick_range", n = count)));
                                return self.prompt();
                            }
                        }
                    }
                }
            }
        };
        if let Err(error) = self.broker.decide(&key, human).await {
            self.say(format!(
                "! {}",
                tr!("watch.not_sent", error = sentences::broker_error(&error))
            ));
            if let Some(current) = &mut self.current {
                current.draft = Draft::default();
                current.at = 0;
            }
            self.prompt();
        }
    }
}

/// What the prompt line asks now: the question or field on screen, or the
/// confirmation an empty line asks for.
fn current_text(current: &Current) -> String {
    let mut text = String::new();
    if current.confirm_reject {
        text.push_str(&match current.questions().len() {
            0 => tr!("watch.confirm_reject_form"),
            n => tr!("watch.confirm_reject_all", n = n),
        });
    } else {
        match &current.pending.prompt.kind {
            Kind::Questions(questions) => {
                let index = current.at;
                question_text(&mut text, &questions[index], index, questions.len());
            }
            Kind::Permission(permission) => {
                prompt_text::permission(&mut text, permission);
                for (n, choice) in permission.choices.iter().enumerate() {
                    let label = prompt_text::choice_label(choice);
                    text.push_str(&format!("\n  {}. {label}", n + 1));
                }
                text.push_str(&tr!("watch.permission_how"));
            }
            Kind::Form(f) if f.url.is_some() => form::link_text(f, &mut text),
            Kind::Form(f) if f.fields.is_empty() => form::empty_text(f, &mut text),
            Kind::Form(f) => form::field_text(f, current.at, &mut text),
        }
    }
    text
}

fn question_text(text: &mut String, question: &Question, index: usize, total: usize) {
    prompt_text::question(text, question, index, total, Layout::Numbered);
    let how = match (question.multiple, question.custom) {
        (true, true) => tr!("watch.how.numbers_or_typed"),
        (true, false) => tr!("watch.how.numbers"),
        (false, true) if question.options.is_empty() => tr!("watch.how.typed"),
        (false, true) => tr!("watch.how.number_or_typed"),
        (false, false) => tr!("watch.how.number"),
    };
    let reject = match total > 1 {
        true => tr!("watch.how.empty_rejects_all"),
        false => tr!("watch.how.empty_rejects"),
    };
    let literal = match (
        question.secret,
        question.custom && !question.options.is_empty(),
    ) {
        (true, _) => tr!("watch.how.secret"),
        (false, true) => tr!("watch.how.literal"),
        (false, false) => String::new(),
    };
    text.push_str(&tr!(
        "watch.how",
        how = how,
        literal = literal,
        reject = reject
    ));
}

fn prompts(count: usize) -> String {
    match count {
        1 => tr!("watch.one_prompt"),
        n => tr!("watch.prompts", n = n),
    }
}

/// A backend as people call it.
#[cfg(test)]
mod tests;
