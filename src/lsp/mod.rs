//! The LSP front: `initialize`, configuration, code actions and commands.
//! Presenting prompts is the [`presenter`]'s job; every wire shape is in
//! [`ext`], converted to it in [`to_proto`] and from it in [`from_proto`];
//! the plain surface (message requests, code actions) is [`plain`];
//! answers given a piece at a time wait in [`drafts`].
//!
//! The `initialize`/configuration handshake and every command are here, each
//! short.

mod drafts;
mod ext;
mod from_proto;
mod plain;
mod presenter;
mod queue;
mod to_proto;
mod transport;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService};

use self::drafts::{Decision, Drafts};
use self::presenter::Presenter;
use crate::app;
use crate::broker::{BrokerError, BrokerHandle, Human};
use crate::present::i18n::tr;
use crate::present::sentences;
use crate::prompt::draft::{Piece, Progress};
use crate::settings::{
    Config, ConfigError, EnvDefaults, ServerSpec, UrlSource, locale_setting, merge_settings,
    names_servers,
};

/// What the client can do, reduced once at `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ClientFlags {
    /// Opted into `askQuestions` via `capabilities.experimental`.
    ask_extension: bool,
    /// Prompt kinds besides questions the client's extension shows
    /// (`askQuestions.kinds`); the others go through `showMessageRequest`.
    ask_kinds: presenter::Kinds,
}

impl ClientFlags {
    fn from_capabilities(capabilities: &ClientCapabilities) -> Self {
        let ask_extension = capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get("askQuestions"))
            .is_some_and(|v| v.is_object() || v == &Value::Bool(true));
        let declared = |kind: &str| {
            capabilities
                .experimental
                .as_ref()
                .and_then(|e| e.pointer("/askQuestions/kinds"))
                .and_then(Value::as_array)
                .is_some_and(|kinds| kinds.iter().any(|k| k == kind))
        };
        ClientFlags {
            ask_extension,
            ask_kinds: presenter::Kinds {
                permission: declared("permission"),
                form: declared("form"),
                secret: declared("secret"),
            },
        }
    }
}

pub use self::ext::EXTENSION_VERSION;
pub use self::transport::Stopped;

/// Serves LSP on stdin/stdout until the client exits or closes stdin.
pub async fn serve_stdio() -> Stopped {
    let backlog = Arc::new(transport::Backlog::default());
    let (service, socket) = LspService::new(|client| Front::new(client, backlog.clone()));
    transport::serve(
        tokio::io::stdin(),
        transport::Stdout,
        service,
        socket,
        backlog,
    )
    .await
}

struct Front {
    client: Client,
    /// What waits for the client, which the presenter waits on.
    backlog: Arc<transport::Backlog>,
    broker: OnceLock<BrokerHandle>,
    /// Set with the broker: requests that come while `initialized` still
    /// reads settings and discovers wait for it.
    started: tokio::sync::watch::Sender<bool>,
    presenter: OnceLock<mpsc::UnboundedSender<presenter::Input>>,
    /// Answers given a piece at a time, shared with the presenter.
    drafts: Drafts,
    notify: OnceLock<tokio::sync::watch::Sender<crate::settings::notify::Settings>>,
    /// Handed from `initialize` to `initialized`, where presenting starts.
    startup: Mutex<Option<Startup>>,
    /// The configuration object in force, which updates are merged into.
    settings: Mutex<Value>,
    /// Whether the person was told that ask-lsp follows a URL nobody configured.
    told_default: AtomicBool,
    /// The client is VS Code (or a build of it), whose users set
    /// `askLsp.servers`, not the configuration object's `servers`.
    vscode: AtomicBool,
    /// The workspace roots from `initialize`, where discovery looks for
    /// servers running.
    roots: Mutex<Vec<PathBuf>>,
    /// Held through a configuration update, discovery included, so that
    /// updates apply in order.
    updating: tokio::sync::Mutex<()>,
    /// `initialize.locale`: the editor's language, which a `locale`
    /// setting overrides.
    editor_locale: Mutex<Option<String>>,
}

struct Startup {
    config: Config,
    flags: ClientFlags,
    /// The client answers `workspace/configuration`.
    pull_settings: bool,
}

/// How long `initialized` waits for the client's workspace settings.
const PULL_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a request waits for `initialized` to start the broker.
const START_TIMEOUT: Duration = PULL_TIMEOUT.saturating_add(app::DISCOVERY_BOUND);

impl Front {
    fn new(client: Client, backlog: Arc<transport::Backlog>) -> Self {
        Front {
            client,
            backlog,
            broker: OnceLock::new(),
            started: tokio::sync::watch::Sender::new(false),
            presenter: OnceLock::new(),
            drafts: Drafts::default(),
            notify: OnceLock::new(),
            startup: Mutex::new(None),
            settings: Mutex::new(Value::Null),
            told_default: AtomicBool::new(false),
            vscode: AtomicBool::new(false),
            roots: Mutex::new(Vec::new()),
            updating: tokio::sync::Mutex::new(()),
            editor_locale: Mutex::new(None),
        }
    }

    /// The language of what ask-lsp says from now on: the `locale` setting
    /// in `settings`, else the editor's, else the environment's.
    fn use_locale(&self, settings: &Value) {
        let editor = self.editor_locale.lock().expect("not poisoned").clone();
        app::use_locale(locale_setting(settings), editor.as_deref());
    }

    /// The environment's defaults for a configuration object, with the
    /// servers found running for the workspace when it names none.
    async fn env_for(&self, settings: &Value) -> EnvDefaults {
        let roots = self.roots.lock().expect("not poisoned").clone();
        app::env_defaults_discovering(!names_servers(settings), roots).await
    }

    /// Merges a configuration update into the settings in force (keys it does
    /// not name stay, see `merge_settings`). Before `initialized` the new
    /// configuration replaces the startup one; after, it is returned for the
    /// running broker and presenter.
    async fn update_settings(&self, update: &Value) -> Result<Option<Config>, ConfigError> {
        let _in_order = self.updating.lock().await;
        let current = self.settings.lock().expect("not poisoned").clone();
        let merged = merge_settings(&current, update)?;
        let config = Config::from_json(Some(&merged), &self.env_for(&merged).await)?;
        // Only a configuration taken in changes the language.
        self.use_locale(&merged);
        *self.settings.lock().expect("not poisoned") = merged;
        match self.startup.lock().expect("not poisoned").as_mut() {
            Some(startup) => {
                startup.config = config;
                Ok(None)
            }
            None => Ok(Some(config)),
        }
    }

    /// Clients configured through workspace settings (Emacs eglot's
    /// `eglot-workspace-configuration`, Neovim's `settings`) send them only
    /// after `initialized`, if at all: ask for them before starting, so that
    /// no default server is followed in the meantime. True when settings
    /// came and were applied.
    async fn pull_settings(&self) -> bool {
        let wanted = self
            .startup
            .lock()
            .expect("not poisoned")
            .as_ref()
            .is_some_and(|s| s.pull_settings)
            && !names_servers(&self.settings.lock().expect("not poisoned"));
        if !wanted {
            return false;
        }
        let item = ConfigurationItem {
            scope_uri: None,
            section: Some("askLsp".into()),
        };
        let section =
            match tokio::time::timeout(PULL_TIMEOUT, self.client.configuration(vec![item])).await {
                Ok(Ok(mut values)) if !values.is_empty() => values.swap_remove(0),
                Ok(Ok(_)) => return false,
                Ok(Err(error)) => {
                    tracing::info!("workspace/configuration failed: {error}");
                    return false;
                }
                Err(_) => {
                    tracing::info!("no answer to workspace/configuration within {PULL_TIMEOUT:?}");
                    return false;
                }
            };
        match self.update_settings(&json!({ "askLsp": section })).await {
            Ok(_) => true,
            Err(error) => {
                let error = self.config_error(&error);
                self.client
                    .show_message(MessageType::ERROR, format!("ask-lsp: {error}"))
                    .await;
                false
            }
        }
    }

    /// The servers found running, when the configuration names none: looked
    /// for here, after `initialize` has answered, bounded in time.
    async fn discover_for_startup(&self) {
        let settings = self.settings.lock().expect("not poisoned").clone();
        if !app::env_defaults().wants_discovery(&settings) {
            return;
        }
        if let Err(error) = self.update_settings(&Value::Null).await {
            tracing::warn!("discovery: {error}");
        }
    }

    /// Owns up to the URLs nobody configured, once per process: whoever
    /// listens there is whose questions the person would answer. The
    /// documented default URL alone is no news: logged, not shown.
    async fn tell_defaults(&self, servers: &[ServerSpec]) {
        let guessed: Vec<String> = servers
            .iter()
            .filter_map(|spec| {
                let from = match &spec.url_source {
                    UrlSource::Configuration => return None,
                    UrlSource::Environment => tr!("lsp.from_env_url"),
                    UrlSource::Discovered(from) => tr!("lsp.found_running", from = from),
                    UrlSource::BuiltIn => tr!("lsp.built_in_default"),
                };
                Some(format!("{} ({from})", spec.url))
            })
            .collect();
        if guessed.is_empty() || self.told_default.swap(true, Ordering::Relaxed) {
            return;
        }
        let message = match self.vscode.load(Ordering::Relaxed) {
            true => tr!("lsp.no_url_vscode", urls = guessed.join(", ")),
            false => tr!("lsp.no_url", urls = guessed.join(", ")),
        };
        let message = format!("ask-lsp: {message}");
        tracing::info!("{message}");
        let documented = servers
            .iter()
            .all(|s| matches!(s.url_source, UrlSource::Configuration | UrlSource::BuiltIn));
        if !documented {
            self.client.show_message(MessageType::INFO, message).await;
        }
    }

    /// A configuration error naming the key the person set: in VS Code a
    /// setting of its own (`askLsp.servers[0].url`, not `servers[0].url`).
    fn config_error(&self, error: &ConfigError) -> String {
        let keyed = |rest: &str| {
            ["servers", "policy", "notify", "surface"]
                .iter()
                .any(|key| rest.starts_with(key))
        };
        // The detail (serde's, the settings') names keys: it stays as written.
        match error.detail() {
            Some(rest) if self.vscode.load(Ordering::Relaxed) && keyed(&rest) => {
                sentences::invalid_configuration(&format!("askLsp.{rest}"))
            }
            _ => sentences::config_error(error),
        }
    }

    async fn broker(&self) -> jsonrpc::Result<&BrokerHandle> {
        if self.broker.get().is_none() {
            let mut started = self.started.subscribe();
            let _ = tokio::time::timeout(START_TIMEOUT, started.wait_for(|s| *s)).await;
        }
        self.broker.get().ok_or_else(jsonrpc::Error::internal_error)
    }

    async fn decide(&self, (key, decision): (String, Decision)) -> jsonrpc::Result<Option<Value>> {
        let result = match decision {
            Decision::Whole(human) => self.send(&key, human).await?,
            Decision::Piece(piece) => self.add_piece(key, piece).await?,
        };
        Ok(Some(
            serde_json::to_value(result).expect("wire types serialize"),
        ))
    }

    /// A piece of an answer, into the prompt's draft; the whole answer
    /// goes once every piece is in.
    async fn add_piece(&self, key: String, piece: Piece) -> jsonrpc::Result<ext::AnswerResult> {
        let broker = self.broker().await?;
        let pending = broker.open(&key).await.map_err(broker_error)?;
        let progress = self
            .drafts
            .add(&pending, piece)
            .map_err(|e| invalid_params(sentences::draft_error(&e, &key)))?;
        let result = match progress {
            Progress::Whole(answer) => self.send(&key, Human::Answer(answer)).await,
            Progress::Remaining(remaining) => Ok(ext::AnswerResult::Partial { remaining }),
        };
        // Resolved meanwhile (sent, or elsewhere while the piece was added,
        // its `Resolved` update maybe already past the presenter): the
        // draft goes here, and a piece kept for nothing is refused.
        match (result, broker.open(&key).await) {
            (Ok(ext::AnswerResult::Partial { .. }), Err(gone @ BrokerError::UnknownKey(_))) => {
                self.drafts.resolved(&key);
                Err(broker_error(gone))
            }
            (result, Err(BrokerError::UnknownKey(_))) => {
                self.drafts.resolved(&key);
                result
            }
            (result, _) => result,
        }
    }

    async fn send(&self, key: &str, human: Human) -> jsonrpc::Result<ext::AnswerResult> {
        self.broker()
            .await?
            .decide(key, human)
            .await
            .map_err(broker_error)?;
        Ok(ext::AnswerResult::Sent)
    }
}

fn broker_error(error: BrokerError) -> jsonrpc::Error {
    match error {
        BrokerError::Backend(_) | BrokerError::Closed => jsonrpc::Error {
            code: ErrorCode::InternalError,
            message: sentences::broker_error(&error).into(),
            data: None,
        },
        error => invalid_params(sentences::broker_error(&error)),
    }
}

/// The workspace folders' local paths (else the root's), as the file
/// system names them.
fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    #[allow(deprecated)] // `rootUri`: what clients without folders send
    let uris: Vec<&Uri> = match (&params.workspace_folders, &params.root_uri) {
        (Some(folders), _) if !folders.is_empty() => folders.iter().map(|f| &f.uri).collect(),
        (_, Some(root)) => vec![root],
        _ => Vec::new(),
    };
    uris.into_iter()
        .filter_map(|uri| reqwest::Url::parse(uri.as_str()).ok()?.to_file_path().ok())
        .map(|path| std::fs::canonicalize(&path).unwrap_or(path))
        .collect()
}

fn invalid_params(message: impl Into<String>) -> jsonrpc::Error {
    jsonrpc::Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

impl LanguageServer for Front {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let flags = ClientFlags::from_capabilities(&params.capabilities);
        let pull_settings = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        *self.roots.lock().expect("not poisoned") = workspace_roots(&params);
        let client = params.client_info.as_ref().map(|c| c.name.as_str());
        // "Visual Studio Code", "code-server", "VSCodium", "Code - OSS".
        let vscode = client.is_some_and(|name| name.contains("Code") || name.starts_with("code"));
        self.vscode.store(vscode, Ordering::Relaxed);
        let options = params.initialization_options.unwrap_or_default();
        *self.editor_locale.lock().expect("not poisoned") = params.locale.clone();
        self.use_locale(&options);
        // Discovery waits for `initialized`: nothing it meets may hold up
        // the answer.
        let config = Config::from_json(Some(&options), &app::env_defaults())
            .map_err(|e| invalid_params(self.config_error(&e)))?;
        *self.settings.lock().expect("not poisoned") = options;
        *self.startup.lock().expect("not poisoned") = Some(Startup {
            config,
            flags,
            pull_settings,
        });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: ext::COMMANDS.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::NONE,
                )),
                experimental: Some(json!({
                    "askQuestions": {"version": ext::EXTENSION_VERSION}
                })),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "ask-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    // The transport holds `initialized` until the `initialize` response is
    // out, so this runs after `initialize` however the client orders them.
    async fn initialized(&self, _: InitializedParams) {
        if !self.pull_settings().await {
            self.discover_for_startup().await;
        }
        // Held until the broker is set, so that a configuration update sees
        // either the startup configuration or the running broker.
        let servers = {
            let mut startup = self.startup.lock().expect("not poisoned");
            let Some(startup) = startup.take() else {
                tracing::warn!("`initialized` again or without a successful `initialize`; ignored");
                return;
            };
            tracing::info!("client initialized; connecting to the configured servers");
            let servers = startup.config.servers.clone();
            // Backends start only now, with presenting, so that no prompt
            // (and no automatic decision) comes before the client can be told.
            let app::Started {
                broker,
                updates,
                notify,
            } = app::start(
                startup.config.servers,
                self.roots.lock().expect("not poisoned").clone(),
                &startup.config.codex_homes,
                startup.config.policies,
                startup.config.notify,
            );
            let _ = self.broker.set(broker.clone());
            self.started.send_replace(true);
            let _ = self.notify.set(notify);
            let (inputs, inputs_rx) = mpsc::unbounded_channel();
            let presenter = Presenter::new(
                self.client.clone(),
                self.backlog.clone(),
                broker.clone(),
                self.drafts.clone(),
                inputs.clone(),
                startup.config.surface,
                startup.flags.ask_extension,
                startup.flags.ask_kinds,
            );
            let _ = self.presenter.set(inputs);
            tokio::spawn(presenter.run(updates, inputs_rx));
            servers
        };
        self.tell_defaults(&servers).await;
    }

    // After this, the transport keeps new requests from reaching the client
    // (tower-lsp-server's `Client` would still send them).
    async fn shutdown(&self) -> jsonrpc::Result<()> {
        Ok(())
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        match self.update_settings(&params.settings).await {
            Ok(None) => {}
            Ok(Some(config)) => {
                let servers = config.servers.clone();
                if let Some(broker) = self.broker.get() {
                    let roots = self.roots.lock().expect("not poisoned").clone();
                    broker.configure(
                        app::with_hook(config.servers, roots, &config.codex_homes),
                        config.policies,
                    );
                }
                if let Some(presenter) = self.presenter.get() {
                    let _ = presenter.send(presenter::Input::Surface(config.surface));
                }
                if let Some(notify) = self.notify.get() {
                    notify.send_replace(config.notify);
                }
                self.tell_defaults(&servers).await;
            }
            Err(error) => {
                let error = self.config_error(&error);
                self.client
                    .show_message(
                        MessageType::ERROR,
                        format!(
                            "ask-lsp: {}",
                            tr!("lsp.keeping_configuration", error = error)
                        ),
                    )
                    .await;
            }
        }
    }

    async fn code_action(
        &self,
        _params: CodeActionParams,
    ) -> jsonrpc::Result<Option<CodeActionResponse>> {
        let listed = self.broker().await?.list().await;
        Ok(Some(plain::code_actions(&listed, &self.drafts)))
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<Value>> {
        let arguments = params.arguments;
        match params.command.as_str() {
            ext::CMD_LIST => {
                let listed = self.broker().await?.list().await;
                let count = listed.len();
                let params: Vec<ext::AskParams> = listed
                    .iter()
                    .map(|pending| to_proto::ask_params(pending, count))
                    .collect();
                Ok(Some(
                    serde_json::to_value(params).expect("wire types serialize"),
                ))
            }
            ext::CMD_ANSWER => {
                self.decide(from_proto::answer_args(&arguments).map_err(invalid_params)?)
                    .await
            }
            ext::CMD_REJECT => {
                let (key, human) = from_proto::reject_args(&arguments).map_err(invalid_params)?;
                self.decide((key, Decision::Whole(human))).await
            }
            ext::CMD_SHOW => {
                if let Some(presenter) = self.presenter.get() {
                    let _ = presenter.send(presenter::Input::Show(from_proto::key_arg(&arguments)));
                }
                Ok(None)
            }
            ext::CMD_STATUS => Ok(self.broker().await?.status().await.map(|status| {
                serde_json::to_value(to_proto::status_params(&status))
                    .expect("wire types serialize")
            })),
            other => Err(invalid_params(tr!(
                "lsp.unknown_command",
                command = format!("{other:?}")
            ))),
        }
    }
}
