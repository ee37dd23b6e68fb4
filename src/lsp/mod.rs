//! The LSP front: `initialize`, configuration, code actions and commands.
//! Presenting prompts is the [`presenter`]'s job; every wire shape is in
//! [`ext`] and every conversion in [`to_proto`].

mod ext;
mod presenter;
mod to_proto;

use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use self::presenter::Presenter;
pub(crate) use self::to_proto::field_hint;
use crate::backends::{Timing, factory};
use crate::broker::{BrokerError, BrokerHandle, Human, Outcome};
use crate::config::{Config, EnvDefaults};

/// What the client can do, reduced once at `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ClientFlags {
    /// Opted into `askQuestions` via `capabilities.experimental`.
    ask_extension: bool,
}

impl ClientFlags {
    fn from_capabilities(capabilities: &ClientCapabilities) -> Self {
        let ask_extension = capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get("askQuestions"))
            .is_some_and(|v| v.is_object() || v == &Value::Bool(true));
        ClientFlags { ask_extension }
    }
}

/// Serves LSP on stdin/stdout until the client exits or closes stdin.
pub async fn serve_stdio() {
    let (service, socket) = LspService::new(Front::new);
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}

struct Front {
    client: Client,
    broker: OnceLock<BrokerHandle>,
    presenter: OnceLock<mpsc::UnboundedSender<presenter::Input>>,
    /// Handed from `initialize` to `initialized`, where presenting starts.
    startup: Mutex<Option<Startup>>,
}

struct Startup {
    config: Config,
    flags: ClientFlags,
}

impl Front {
    fn new(client: Client) -> Self {
        Front {
            client,
            broker: OnceLock::new(),
            presenter: OnceLock::new(),
            startup: Mutex::new(None),
        }
    }

    fn broker(&self) -> jsonrpc::Result<&BrokerHandle> {
        self.broker.get().ok_or_else(jsonrpc::Error::internal_error)
    }

    async fn decide(&self, (key, human): (String, Human)) -> jsonrpc::Result<Option<Value>> {
        let result = match self.broker()?.decide(&key, human).await {
            Ok(Outcome::Sent) => ext::AnswerResult::Sent,
            Ok(Outcome::Partial { remaining }) => ext::AnswerResult::Partial { remaining },
            Err(error @ (BrokerError::Backend(_) | BrokerError::Closed)) => {
                return Err(jsonrpc::Error {
                    code: ErrorCode::InternalError,
                    message: error.to_string().into(),
                    data: None,
                });
            }
            Err(error) => return Err(invalid_params(error.to_string())),
        };
        Ok(Some(
            serde_json::to_value(result).expect("wire types serialize"),
        ))
    }
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
        let config = Config::from_json(
            params.initialization_options.as_ref(),
            &EnvDefaults::from_process(),
        )
        .map_err(|e| invalid_params(e.to_string()))?;
        *self.startup.lock().expect("not poisoned") = Some(Startup { config, flags });
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

    async fn initialized(&self, _: InitializedParams) {
        let Some(startup) = self.startup.lock().expect("not poisoned").take() else {
            return;
        };
        // Backends start only now, with presenting, so that no question
        // (and no automatic decision) comes before the client can be told.
        let (broker, updates) = BrokerHandle::spawn(
            startup.config.servers,
            startup.config.policies,
            factory(Timing::from_env()),
        );
        let _ = self.broker.set(broker.clone());
        let (inputs, inputs_rx) = mpsc::unbounded_channel();
        let presenter = Presenter::new(
            self.client.clone(),
            broker.clone(),
            inputs.clone(),
            startup.config.surface,
            startup.flags.ask_extension,
        );
        let _ = self.presenter.set(inputs);
        tokio::spawn(presenter.run(updates, inputs_rx));
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        Ok(())
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if params.settings.is_null() {
            return;
        }
        match Config::from_json(Some(&params.settings), &EnvDefaults::from_process()) {
            Ok(config) => {
                if let Ok(broker) = self.broker() {
                    broker.configure(config.servers, config.policies);
                }
                if let Some(presenter) = self.presenter.get() {
                    let _ = presenter.send(presenter::Input::Surface(config.surface));
                }
            }
            Err(error) => {
                self.client
                    .show_message(
                        MessageType::ERROR,
                        format!("ask-lsp: {error}; keeping the previous configuration"),
                    )
                    .await;
            }
        }
    }

    async fn code_action(
        &self,
        _params: CodeActionParams,
    ) -> jsonrpc::Result<Option<CodeActionResponse>> {
        let listed = self.broker()?.list().await;
        Ok(Some(to_proto::code_actions(&listed)))
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<Value>> {
        let arguments = params.arguments;
        match params.command.as_str() {
            ext::CMD_LIST => {
                let listed = self.broker()?.list().await;
                let count = listed.len();
                let params: Vec<ext::AskParams> = listed
                    .iter()
                    .map(|l| to_proto::ask_params(&l.pending, count))
                    .collect();
                Ok(Some(
                    serde_json::to_value(params).expect("wire types serialize"),
                ))
            }
            ext::CMD_ANSWER => {
                self.decide(to_proto::answer_args(&arguments).map_err(invalid_params)?)
                    .await
            }
            ext::CMD_REJECT => {
                self.decide(to_proto::reject_args(&arguments).map_err(invalid_params)?)
                    .await
            }
            ext::CMD_SHOW => {
                if let Some(presenter) = self.presenter.get() {
                    let _ = presenter.send(presenter::Input::Show(to_proto::key_arg(&arguments)));
                }
                Ok(None)
            }
            ext::CMD_STATUS => Ok(self.broker()?.status().await.map(|status| {
                serde_json::to_value(to_proto::status_params(&status))
                    .expect("wire types serialize")
            })),
            other => Err(invalid_params(format!("unknown command {other:?}"))),
        }
    }
}
