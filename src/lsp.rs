//! The LSP front: `initialize`, configuration, code actions and commands.
//! Presenting questions is the [`presenter`]'s job.

mod presenter;
pub mod proto;

use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use self::presenter::Presenter;
use self::proto::{AnswerArgs, ClientFlags};
use crate::backend::Timing;
use crate::broker::{BrokerError, BrokerHandle, Human, Outcome};
use crate::config::{Config, EnvDefaults};

pub use self::presenter::REJECT_ACTION;

/// Serves LSP on stdin/stdout until the client exits or closes stdin.
pub async fn serve_stdio() {
    let (service, socket) = LspService::new(Front::new);
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}

pub struct Front {
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

    async fn answer(&self, arguments: &[Value]) -> jsonrpc::Result<Option<Value>> {
        let (key, human) = match proto::answer_args(arguments).map_err(invalid_params)? {
            AnswerArgs::All { key, answers } => (key, Human::Answers(answers)),
            AnswerArgs::One { key, index, answer } => (key, Human::One { index, answer }),
        };
        self.decide(key, human).await
    }

    async fn decide(&self, key: String, human: Human) -> jsonrpc::Result<Option<Value>> {
        match self.broker()?.decide(&key, human).await {
            Ok(Outcome::Sent) => Ok(Some(json!({"state": "sent"}))),
            Ok(Outcome::Partial { remaining }) => {
                Ok(Some(json!({"state": "partial", "remaining": remaining})))
            }
            Err(error @ (BrokerError::Backend(_) | BrokerError::Closed)) => Err(jsonrpc::Error {
                code: ErrorCode::InternalError,
                message: error.to_string().into(),
                data: None,
            }),
            Err(error) => Err(invalid_params(error.to_string())),
        }
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
                    commands: proto::COMMANDS.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::NONE,
                )),
                experimental: Some(json!({
                    "askQuestions": {"version": proto::EXTENSION_VERSION}
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
            Timing::from_env(),
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
        let mut actions = Vec::new();
        for listed in self.broker()?.list().await {
            let pending = &listed.pending;
            for index in listed.remaining {
                let question = &pending.request.questions[index];
                let name = if question.header.is_empty() {
                    &question.question
                } else {
                    &question.header
                };
                let action = |title: String, command: &str, arguments: Vec<Value>| {
                    CodeActionOrCommand::CodeAction(CodeAction {
                        title: title.clone(),
                        kind: Some(CodeActionKind::QUICKFIX),
                        command: Some(Command {
                            title,
                            command: command.into(),
                            arguments: Some(arguments),
                        }),
                        ..Default::default()
                    })
                };
                for option in &question.options {
                    actions.push(action(
                        format!("Answer \"{name}\": {}", option.label),
                        proto::CMD_ANSWER,
                        vec![json!(pending.key), json!(index), json!([option.label])],
                    ));
                }
                actions.push(action(
                    format!("Reject \"{name}\""),
                    proto::CMD_REJECT,
                    vec![json!(pending.key)],
                ));
            }
        }
        Ok(Some(actions))
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<Value>> {
        let arguments = params.arguments;
        match params.command.as_str() {
            proto::CMD_LIST => {
                let listed = self.broker()?.list().await;
                let count = listed.len();
                Ok(Some(Value::Array(
                    listed
                        .iter()
                        .map(|l| proto::ask_params(&l.pending, count))
                        .collect(),
                )))
            }
            proto::CMD_ANSWER => self.answer(&arguments).await,
            proto::CMD_REJECT => {
                let key = proto::key_arg(&arguments)
                    .ok_or_else(|| invalid_params("askLsp.reject takes [key]"))?;
                self.decide(key, Human::Reject).await
            }
            proto::CMD_SHOW => {
                if let Some(presenter) = self.presenter.get() {
                    let _ = presenter.send(presenter::Input::Show(proto::key_arg(&arguments)));
                }
                Ok(None)
            }
            proto::CMD_STATUS => Ok(self
                .broker()?
                .status()
                .await
                .map(|status| proto::status_params(&status))),
            other => Err(invalid_params(format!("unknown command {other:?}"))),
        }
    }
}
