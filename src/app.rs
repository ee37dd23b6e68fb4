//! The one wiring place. It reads the environment once ([`Environment`]),
//! turns settings into the servers to follow (running discovery when nothing
//! is named), builds the real backends, and starts the broker with the
//! notifier beside it. The faces (`lsp`, `terminal`, `status`, `hook`) start
//! through here; nothing else reads the environment or names an adapter.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::backends::opencode::discovery::{self, Places};
use crate::backends::{Backend, BackendEvent, Factory, Timing, generation};
use crate::backends::{Problem, Source, sandbox_agent};
use crate::broker::{BrokerHandle, Updates};
use crate::notify;
use crate::present::backend_error;
use crate::present::i18n::{self, Locale};
use crate::prompt::Prompt;
use crate::settings::notify::Settings as NotifySettings;
use crate::settings::policy::Policies;
use crate::settings::{BackendKind, EnvDefaults, ServerSpec};

/// The command line's words (`src/main.rs`), in the locale in force.
pub use crate::present::cli;

/// Every environment variable ask-lsp reads, read once.
pub(crate) struct Environment {
    /// `$ASK_LSP_URL`, `$OPENCODE_SERVER_USERNAME`, `$OPENCODE_SERVER_PASSWORD`.
    defaults: EnvDefaults,
    /// `$XDG_STATE_HOME`, else `~/.local/state`: where OpenCode 2 registers.
    state_home: Option<PathBuf>,
    /// `$ASK_LSP_STALL_MS`, `$ASK_LSP_REQUEST_TIMEOUT_MS` over the defaults.
    pub timing: Timing,
    /// `$ASK_LSP_ROTATE_MS`: how long the LSP surface shows one prompt of several.
    pub rotate_after: Option<Duration>,
    /// `$ASK_LSP_CANCELLED_GRACE_MS`: how long a cancelled request's answer is awaited.
    pub cancelled_grace: Option<Duration>,
    /// The hook socket is on unless `$ASK_LSP_HOOK=0`.
    #[cfg(unix)]
    hook: bool,
    /// `$XDG_RUNTIME_DIR`: where the hook sockets live.
    #[cfg(unix)]
    runtime_dir: Option<PathBuf>,
    /// `$CODEX_HOME`, else `~/.codex` once Codex was used from it: whose
    /// Codex daemon is followed, unless `$ASK_LSP_CODEX=0` (docs/codex.md).
    #[cfg(unix)]
    codex_home: Option<PathBuf>,
    /// `$ASK_LSP_LOG` is set.
    log: bool,
    /// `$ASK_LSP_HOOK_TIMEOUT_MS`, unparsed (the command line says what is wrong).
    hook_timeout_ms: Option<String>,
    /// `$ASK_LSP_HOOK_ELICITATION_TIMEOUT_MS`, unparsed: Claude Code's MCP
    /// forms in the editor (off unless set).
    hook_elicitation_timeout_ms: Option<String>,
    /// The working directory: the workspace of `watch` and `status`.
    current_dir: Option<PathBuf>,
    /// `$LC_ALL`, else `$LC_MESSAGES`, else `$LANG` (the first set and
    /// not empty): the language when nothing more explicit names one.
    locale: Option<String>,
}

impl Environment {
    fn read() -> Environment {
        let text = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let path = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let ms = |name| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let mut timing = Timing::default();
        if let Some(stall) = ms("ASK_LSP_STALL_MS") {
            timing.stall = stall;
        }
        if let Some(request) = ms("ASK_LSP_REQUEST_TIMEOUT_MS") {
            timing.request = request;
        }
        Environment {
            defaults: EnvDefaults {
                url: text("ASK_LSP_URL"),
                username: text("OPENCODE_SERVER_USERNAME"),
                password: text("OPENCODE_SERVER_PASSWORD"),
                discovered: Vec::new(),
            },
            state_home: path("XDG_STATE_HOME")
                .map(PathBuf::from)
                .or_else(|| path("HOME").map(|home| PathBuf::from(home).join(".local/state"))),
            timing,
            rotate_after: ms("ASK_LSP_ROTATE_MS"),
            cancelled_grace: ms("ASK_LSP_CANCELLED_GRACE_MS"),
            #[cfg(unix)]
            hook: std::env::var("ASK_LSP_HOOK").map_or(true, |v| v != "0"),
            #[cfg(unix)]
            runtime_dir: path("XDG_RUNTIME_DIR").map(PathBuf::from),
            #[cfg(unix)]
            codex_home: match std::env::var("ASK_LSP_CODEX").is_ok_and(|v| v == "0") {
                true => None,
                // `~/.codex` only once Codex has been used from it (a
                // person without Codex hears nothing of it); a home named
                // by `$CODEX_HOME` always, made later or not.
                false => path("CODEX_HOME").map(PathBuf::from).or_else(|| {
                    path("HOME")
                        .map(|home| PathBuf::from(home).join(".codex"))
                        .filter(|home| {
                            ["config.toml", "auth.json", "app-server-control"]
                                .iter()
                                .any(|name| home.join(name).exists())
                        })
                }),
            },
            log: std::env::var_os("ASK_LSP_LOG").is_some(),
            hook_timeout_ms: std::env::var("ASK_LSP_HOOK_TIMEOUT_MS").ok(),
            hook_elicitation_timeout_ms: std::env::var("ASK_LSP_HOOK_ELICITATION_TIMEOUT_MS").ok(),
            current_dir: std::env::current_dir().ok(),
            locale: ["LC_ALL", "LC_MESSAGES", "LANG"].into_iter().find_map(text),
        }
    }

    /// Where OpenCode servers register and the process table is.
    fn places(&self) -> Places {
        Places {
            service_file: self
                .state_home
                .as_ref()
                .map(|state| state.join("opencode/service.json")),
            processes: PathBuf::from("/proc"),
        }
    }
}

/// The environment, read the first time it is asked for.
pub(crate) fn environment() -> &'static Environment {
    static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();
    ENVIRONMENT.get_or_init(Environment::read)
}

/// Chooses the language of every sentence from now on: `explicit` (the
/// `locale` setting, `--locale`), else `editor` (LSP `initialize.locale`),
/// else the environment, else English.
pub fn use_locale(explicit: Option<&str>, editor: Option<&str>) {
    let chosen = Locale::choose([explicit, editor, environment().locale.as_deref()]);
    i18n::set_locale(chosen);
}

/// Whether `$ASK_LSP_LOG` asks for logs (`watch` and `hook` log only then).
pub fn logs_asked() -> bool {
    environment().log
}

/// `$ASK_LSP_HOOK_TIMEOUT_MS`, for `ask-lsp hook` without `--timeout-ms`.
pub fn hook_timeout_ms() -> Option<&'static str> {
    environment().hook_timeout_ms.as_deref()
}

/// `$ASK_LSP_HOOK_ELICITATION_TIMEOUT_MS`, for `ask-lsp hook` without
/// `--elicitation-timeout-ms`.
pub fn hook_elicitation_timeout_ms() -> Option<&'static str> {
    environment().hook_elicitation_timeout_ms.as_deref()
}

/// The working directory, when it can be read.
pub(crate) fn current_dir() -> Option<PathBuf> {
    environment().current_dir.clone()
}

/// The directory the hook sockets live in: `$XDG_RUNTIME_DIR/ask-lsp`, else
/// `/tmp/ask-lsp-<uid>`.
#[cfg(unix)]
pub(crate) fn hook_socket_dir() -> PathBuf {
    match &environment().runtime_dir {
        Some(runtime) => runtime.join("ask-lsp"),
        None => std::env::temp_dir().join(format!("ask-lsp-{}", crate::backends::hook::euid())),
    }
}

/// How long discovery may take at most.
pub(crate) const DISCOVERY_BOUND: Duration = discovery::TIME_BOUND;

/// The environment's defaults, without discovery.
pub(crate) fn env_defaults() -> EnvDefaults {
    environment().defaults.clone()
}

/// The environment's defaults with the OpenCode servers running for `roots`
/// (docs/discovery.md) when `wanted` and `$ASK_LSP_URL` is unset.
pub(crate) async fn env_defaults_discovering(wanted: bool, roots: Vec<PathBuf>) -> EnvDefaults {
    let mut env = env_defaults();
    if wanted && env.url.is_none() {
        env.discovered = discovery::discover(environment().places(), roots).await;
    }
    env
}

/// The environment's defaults with the servers running for the current
/// directory when the command line names no server.
pub(crate) async fn env_defaults_here(nothing_named: bool) -> EnvDefaults {
    let roots = current_dir().into_iter().collect();
    env_defaults_discovering(nothing_named && current_dir().is_some(), roots).await
}

/// `servers` and, on Unix unless `$ASK_LSP_HOOK=0`, the hook socket for
/// this workspace (docs/hook.md); and the daemons of the person's Codex
/// homes: `$CODEX_HOME` (else `~/.codex`) unless `$ASK_LSP_CODEX=0`, then
/// `codex_homes` (the `codexHomes` setting), each once, each its own
/// server: `codex-daemon`, `codex-daemon-2`, … (docs/codex.md). A home
/// not made yet is followed all the same: Codex may make it later.
pub(crate) fn with_hook(
    servers: Vec<ServerSpec>,
    roots: Vec<PathBuf>,
    codex_homes: &[PathBuf],
) -> Vec<ServerSpec> {
    #[cfg(unix)]
    {
        let mut servers = servers;
        let mut homes: Vec<&PathBuf> = Vec::new();
        for home in environment().codex_home.iter().chain(codex_homes) {
            if !homes.contains(&home) {
                homes.push(home);
            }
        }
        for (index, home) in homes.into_iter().enumerate() {
            let name = match index {
                0 => "codex-daemon".to_owned(),
                n => format!("codex-daemon-{}", n + 1),
            };
            servers.push(crate::backends::codex::spec(
                name,
                home.clone(),
                roots.clone(),
            ));
        }
        if environment().hook {
            servers.push(crate::backends::hook::spec(roots));
        }
        servers
    }
    #[cfg(not(unix))]
    {
        let _ = (roots, codex_homes);
        servers
    }
}

/// The real backends, by configured kind.
pub(crate) fn factory() -> Factory {
    let timing = environment().timing;
    Arc::new(move |spec: &ServerSpec| -> Arc<dyn Backend> {
        match &spec.backend {
            BackendKind::OpenCode => Arc::new(generation::OpenCodeAny::new(spec.clone(), timing)),
            BackendKind::SandboxAgent { server_id, token } => Arc::new(
                sandbox_agent::SandboxAgent::new(&spec.url, server_id, token.clone(), timing),
            ),
            #[cfg(unix)]
            BackendKind::Hook { roots } => Arc::new(crate::backends::hook::HookListener::new(
                roots.clone(),
                hook_socket_dir(),
            )),
            #[cfg(not(unix))]
            BackendKind::Hook { .. } => unreachable!("with_hook adds no hook socket off Unix"),
            #[cfg(unix)]
            BackendKind::CodexDaemon { home, roots } => Arc::new(
                crate::backends::codex::CodexDaemon::new(home.clone(), roots.clone()),
            ),
            #[cfg(not(unix))]
            BackendKind::CodexDaemon { .. } => {
                unreachable!("with_hook adds no Codex daemon off Unix")
            }
        }
    })
}

/// A running broker with its notifier.
pub(crate) struct Started {
    pub broker: BrokerHandle,
    pub updates: Updates,
    /// Changes the notifier's settings.
    pub notify: watch::Sender<NotifySettings>,
}

/// Starts following `servers` (and the hook socket for `roots`, and the
/// Codex homes) with the real backends, deciding by `policies`, with the
/// notifier beside it.
pub(crate) fn start(
    servers: Vec<ServerSpec>,
    roots: Vec<PathBuf>,
    codex_homes: &[PathBuf],
    policies: Policies,
    notify: NotifySettings,
) -> Started {
    let (observer, observed) = crate::broker::update_channel();
    let (broker, updates) = BrokerHandle::spawn(
        with_hook(servers, roots, codex_homes),
        policies,
        factory(),
        Some(observer),
    );
    let notify = notify::spawn(observed, notify, broker.clone());
    Started {
        broker,
        updates,
        notify,
    }
}

/// What one server showed when followed once, for `ask-lsp status`.
pub(crate) struct Probed {
    pub connected: bool,
    /// Why it is not connected, with advice: in English (for
    /// `status --json`) and in the person's language.
    pub error: Option<(String, String)>,
    pub pending: Vec<Prompt>,
    /// Listed by the server but left out: their session is not running.
    pub hidden: usize,
    /// What the server sent that cannot be shown.
    pub problems: Vec<Problem>,
    /// What the backend found the server to be.
    pub source: Source,
}

/// `words()` in English and in the language in force.
fn both(words: impl Fn() -> String) -> (String, String) {
    (i18n::in_locale(Locale::En, &words), words())
}

/// Follows `spec` with the real backend, no broker, until its listing of
/// what is pending has come (or the request bound has passed).
pub(crate) async fn probe(spec: &ServerSpec) -> Probed {
    let timing = environment().timing;
    let backend = factory()(spec);
    let (sink, mut events) = crate::backends::sink::channel();
    let following = tokio::spawn(backend.clone().run(sink));
    // Every backend ends its catch-up with a listing (sandbox-agent: what
    // its replayed history leaves open).
    let bound = Instant::now() + timing.request;
    let mut connected = false;
    let mut error = None;
    let mut pending: Vec<Prompt> = Vec::new();
    let mut hidden = 0;
    let mut problems = Vec::new();
    loop {
        let event = match tokio::time::timeout_at(bound, events.recv()).await {
            Ok(Some(queued)) => queued.event,
            Ok(None) => break,
            Err(_) if connected => {
                error = Some(both(|| backend_error::no_listing(timing.request)));
                break;
            }
            Err(_) => {
                error = Some(both(|| backend_error::no_answer(timing.request)));
                break;
            }
        };
        match event {
            BackendEvent::Connected => connected = true,
            BackendEvent::Disconnected { error: why } => {
                connected = false;
                error = Some(both(|| backend_error::backend_error(&why)));
                break;
            }
            BackendEvent::Snapshot(all) => {
                // Listed: the stream is open (`Connected` follows).
                connected = true;
                hidden = all.hidden();
                pending = all.into_prompts();
                break;
            }
            BackendEvent::Asked(prompt) => {
                pending.retain(|p| p.id != prompt.id);
                pending.push(prompt);
            }
            BackendEvent::ResolvedElsewhere { .. }
            | BackendEvent::Withdrawn { .. }
            | BackendEvent::ToolEnded { .. }
            | BackendEvent::SessionEnded { .. } => {
                if let Some(ends) = crate::broker::ends(&event) {
                    pending.retain(|p| !ends.covers(p));
                }
            }
            BackendEvent::Problem(problem) => problems.push(problem),
        }
    }
    following.abort();
    Probed {
        connected,
        error,
        pending,
        hidden,
        problems,
        source: backend.source(),
    }
}

/// What `ask-lsp status --hooks` says: the instances a hook would reach now.
#[cfg(unix)]
pub(crate) use crate::backends::hook::instances::Reach as HookReach;

#[cfg(unix)]
pub(crate) fn hook_reach() -> HookReach {
    crate::backends::hook::instances::reach(hook_socket_dir())
}

/// What `ask-lsp hook` needs to hand a request over: the instances to ask
/// (in the directory this process's environment names) and the checks on
/// the connection.
#[cfg(unix)]
pub(crate) mod hook_client {
    use std::io;
    use std::path::{Path, PathBuf};

    pub(crate) use crate::backends::hook::instances::{is_ask_lsp, named_by_ask_lsp};
    pub(crate) use crate::backends::hook::{CLAUDE_NEWS, MAX_INPUT, Refusal};

    /// Those whose workspace holds `cwd`, then the others.
    pub(crate) fn instances(cwd: Option<&Path>) -> io::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let dir = crate::backends::hook::socket_dir(super::hook_socket_dir(), false)?;
        Ok(crate::backends::hook::instances::instances(&dir, cwd))
    }
}
