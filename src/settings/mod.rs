//! Configuration from `initializationOptions`, `didChangeConfiguration` or
//! command-line flags, checked once into typed values.

pub(crate) mod notify;
pub(crate) mod policy;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::notify::NotifyError;
use self::policy::{Policies, PolicyError};

pub const DEFAULT_URL: &str = "http://127.0.0.1:4096";

/// A password that never shows up in `Debug` output or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Self {
        Secret(value)
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A server found running (by the OpenCode backend's discovery).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub url: String,
    /// The 1.x instance to follow (the process's working directory).
    pub directory: Option<String>,
    /// What the registration carries; never the person's own password.
    pub password: Option<Secret>,
    /// Where it was found, for status and logs.
    pub from: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: Arc<str>,
    /// Base URL without a trailing slash.
    pub url: String,
    pub directory: Option<String>,
    pub username: String,
    pub password: Option<Secret>,
    pub backend: BackendKind,
    pub url_source: UrlSource,
}

/// Which kind of agent server one is: the configured backend and, for
/// OpenCode, the generation found running there once known. Status and
/// editors name it by these strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum ServerKind {
    /// OpenCode, not reached yet: which generation is not known.
    #[serde(rename = "opencode")]
    OpenCode,
    #[serde(rename = "opencode-1")]
    OpenCode1,
    #[serde(rename = "opencode-2")]
    OpenCode2,
    #[serde(rename = "sandbox-agent")]
    SandboxAgent,
    /// `ask-lsp hook`'s socket (never configured).
    #[serde(rename = "hook")]
    Hook,
    /// Codex's app-server daemon (src/backends/codex/).
    #[serde(rename = "codex-daemon")]
    CodexDaemon,
}

impl ServerKind {
    /// The configured backend: "opencode", "sandbox-agent" or "hook".
    pub fn backend(self) -> &'static str {
        match self {
            ServerKind::OpenCode | ServerKind::OpenCode1 | ServerKind::OpenCode2 => "opencode",
            ServerKind::SandboxAgent => "sandbox-agent",
            ServerKind::Hook => "hook",
            ServerKind::CodexDaemon => "codex-daemon",
        }
    }

    /// Which generation of OpenCode was found: "1" or "2".
    pub fn generation(self) -> Option<&'static str> {
        match self {
            ServerKind::OpenCode1 => Some("1"),
            ServerKind::OpenCode2 => Some("2"),
            ServerKind::OpenCode
            | ServerKind::SandboxAgent
            | ServerKind::Hook
            | ServerKind::CodexDaemon => None,
        }
    }
}

/// Where a server's URL came from: a URL the configuration did not give is a
/// guess that ask-lsp must own up to (status, log, message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlSource {
    Configuration,
    /// `$ASK_LSP_URL`.
    Environment,
    /// Found running ([`crate::backends::opencode::discovery`]); says where.
    Discovered(Arc<str>),
    /// [`DEFAULT_URL`].
    BuiltIn,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendKind {
    OpenCode,
    /// ACP over HTTP: `serverId` names the agent server, `token` is sent as
    /// a bearer token.
    SandboxAgent {
        server_id: String,
        token: Option<Secret>,
    },
    /// The socket `ask-lsp hook` reaches this instance on; `roots` say which
    /// workspace it serves (src/backends/hook.rs).
    Hook {
        roots: Vec<std::path::PathBuf>,
    },
    /// The daemon of the Codex whose home is `home`, for the threads of
    /// `roots` (src/backends/codex/).
    CodexDaemon {
        home: std::path::PathBuf,
        roots: Vec<std::path::PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Surface {
    /// The extension when the client opted in, else `showMessageRequest`.
    #[default]
    Auto,
    Extension,
    MessageRequest,
    /// Only code actions and commands.
    None,
}

#[derive(Debug)]
pub struct Config {
    pub servers: Vec<ServerSpec>,
    pub surface: Surface,
    pub policies: Policies,
    pub notify: notify::Settings,
    /// Codex homes whose daemons are followed besides `$CODEX_HOME`
    /// (docs/codex.md): absolute paths, each once.
    pub codex_homes: Vec<std::path::PathBuf>,
}

/// What is wrong with the configuration; worded (and its English
/// `Display`) in `present/sentences.rs` around [`ConfigError::detail`].
#[derive(Debug)]
pub enum ConfigError {
    Shape(String),
    Url {
        index: usize,
        url: String,
        reason: String,
    },
    Backend {
        index: usize,
        reason: String,
    },
    /// A command-line flag (or its environment default), named as typed.
    Flag(String),
    DuplicateName(String),
    Policy(PolicyError),
    Notify(NotifyError),
    /// `codexHomes[index]` cannot name a Codex home.
    CodexHome {
        index: usize,
        path: String,
        reason: &'static str,
    },
}

impl ConfigError {
    /// What is wrong with a setting, naming its key as the configuration
    /// spells it (`servers[0].url …`); `None` for a command-line flag,
    /// whose own words are the whole error.
    pub fn detail(&self) -> Option<String> {
        Some(match self {
            ConfigError::Flag(_) => return None,
            ConfigError::Shape(detail) => detail.clone(),
            ConfigError::Url { index, url, reason } => {
                format!("servers[{index}].url {url:?}: {reason}")
            }
            ConfigError::Backend { index, reason } => format!("servers[{index}]: {reason}"),
            ConfigError::DuplicateName(name) => format!("two servers are named {name:?}"),
            ConfigError::Policy(error) => error.to_string(),
            ConfigError::Notify(error) => error.to_string(),
            ConfigError::CodexHome {
                index,
                path,
                reason,
            } => format!("codexHomes[{index}] {path:?}: {reason}"),
        })
    }
}

impl From<PolicyError> for ConfigError {
    fn from(error: PolicyError) -> Self {
        ConfigError::Policy(error)
    }
}

impl From<NotifyError> for ConfigError {
    fn from(error: NotifyError) -> Self {
        ConfigError::Notify(error)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawConfig {
    servers: Option<Vec<RawServer>>,
    surface: Option<Surface>,
    policy: Option<Value>,
    notify: Option<Value>,
    codex_homes: Option<Vec<String>>,
    /// Read by [`locale_setting`]; here so that its type is checked.
    #[serde(rename = "locale")]
    _locale: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawServer {
    pub name: Option<String>,
    pub url: Option<String>,
    pub directory: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    /// `opencode` (default) or `sandbox-agent`.
    pub backend: Option<String>,
    pub server_id: Option<String>,
    pub token: Option<String>,
}

/// Values the environment supplies where the configuration is silent.
#[derive(Debug, Clone, Default)]
pub struct EnvDefaults {
    pub url: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Servers found running, followed when the configuration names none
    /// and `$ASK_LSP_URL` is unset.
    pub(crate) discovered: Vec<Found>,
}

impl EnvDefaults {
    /// Whether discovery can matter for this configuration object: it names
    /// no servers and `$ASK_LSP_URL` is unset.
    pub fn wants_discovery(&self, value: &Value) -> bool {
        self.url.is_none() && !names_servers(value)
    }
}

impl Config {
    /// Reads the configuration object; `{"askLsp": {...}}` (the shape of
    /// `didChangeConfiguration` settings) is unwrapped. `null` or absent means
    /// the servers found running (see [`crate::backends::opencode::discovery`]), else one server
    /// at `$ASK_LSP_URL` or the default URL.
    pub fn from_json(value: Option<&Value>, env: &EnvDefaults) -> Result<Config, ConfigError> {
        let raw: RawConfig = match value.map(section) {
            None | Some(Value::Null) => RawConfig::default(),
            Some(v) => RawConfig::deserialize(v).map_err(|e| ConfigError::Shape(e.to_string()))?,
        };
        let servers = match raw.servers {
            Some(servers) => servers_from_raw(servers, env)?,
            None if env.url.is_none() && !env.discovered.is_empty() => discovered_servers(env)?,
            None => servers_from_raw(vec![RawServer::default()], env)?,
        };
        Ok(Config {
            servers,
            surface: raw.surface.unwrap_or_default(),
            policies: Policies::from_json(raw.policy.as_ref())?,
            notify: notify::Settings::from_json(raw.notify.as_ref(), notify::Host::Lsp)?,
            codex_homes: codex_homes(raw.codex_homes.unwrap_or_default())?,
        })
    }
}

/// The keys of the configuration object.
const KEYS: [&str; 6] = [
    "servers",
    "surface",
    "policy",
    "notify",
    "locale",
    "codexHomes",
];

/// Codex homes at most: each is one connection and one status line.
const MAX_CODEX_HOMES: usize = 16;

/// The `codexHomes` setting: absolute paths, each once (a home that does
/// not exist yet is fine: it is followed once Codex makes it).
fn codex_homes(homes: Vec<String>) -> Result<Vec<std::path::PathBuf>, ConfigError> {
    let mut checked: Vec<std::path::PathBuf> = Vec::with_capacity(homes.len());
    for (index, home) in homes.into_iter().enumerate() {
        let error = |reason| ConfigError::CodexHome {
            index,
            path: home.clone(),
            reason,
        };
        if index >= MAX_CODEX_HOMES {
            return Err(error("more than 16 Codex homes"));
        }
        let path = std::path::PathBuf::from(&home);
        if !path.is_absolute() {
            return Err(error(
                "not an absolute path (a Codex home is named from the root: /home/me/.codex)",
            ));
        }
        // `a/./b` and `a/b/` name the same home.
        let path: std::path::PathBuf = path.components().collect();
        if !checked.contains(&path) {
            checked.push(path);
        }
    }
    Ok(checked)
}

/// The `locale` setting (`"zh-CN"`; empty or absent: follow the editor),
/// as written: the presentation floor reads the tag.
pub fn locale_setting(value: &Value) -> Option<&str> {
    section(value).get("locale").and_then(Value::as_str)
}

/// The configuration object inside `value`: `{"askLsp": {...}}` is unwrapped.
/// The ask-lsp part of a configuration object. An empty array is nothing:
/// Lua clients (Neovim) encode an empty table as `[]`.
fn section(value: &Value) -> &Value {
    static NOTHING: Value = Value::Null;
    let section = match value {
        Value::Object(map) => map.get("askLsp").unwrap_or(value),
        other => other,
    };
    match section {
        Value::Array(items) if items.is_empty() => &NOTHING,
        other => other,
    }
}

/// Whether the configuration object names servers (else ask-lsp would
/// follow a default URL).
pub fn names_servers(value: &Value) -> bool {
    section(value).get("servers").is_some_and(|s| !s.is_null())
}

/// Applies `didChangeConfiguration` settings to the configuration object in
/// force and returns the new one (for [`Config::from_json`]). An update
/// replaces only the keys it names with a non-null value: Emacs eglot sends
/// `{"settings": {}}` after every connect, which must not drop the servers
/// given in `initializationOptions`. Settings holding only other servers'
/// sections (eglot sends its whole workspace configuration to every server)
/// name nothing for ask-lsp.
pub fn merge_settings(current: &Value, settings: &Value) -> Result<Value, ConfigError> {
    let update = match settings {
        Value::Object(map)
            if !map.contains_key("askLsp") && !map.keys().any(|k| KEYS.contains(&k.as_str())) =>
        {
            &Value::Null
        }
        other => section(other),
    };
    let update = match update {
        Value::Null => return Ok(current.clone()),
        Value::Object(update) => update,
        _ => {
            return Err(ConfigError::Shape(
                "settings must be an object (optionally inside \"askLsp\")".into(),
            ));
        }
    };
    let mut merged = match section(current) {
        Value::Object(map) => map.clone(),
        _ => Default::default(),
    };
    for (key, value) in update {
        if !value.is_null() {
            merged.insert(key.clone(), value.clone());
        }
    }
    Ok(Value::Object(merged))
}

/// The servers the command line names (`watch`, `status`): `urls` as (name,
/// URL), else one server at `$ASK_LSP_URL` or the default URL, each following
/// `directory`, and sandbox-agent's ACP server `sandbox_agent` instead of
/// OpenCode when given.
pub fn servers_from_flags(
    urls: Vec<(Option<String>, String)>,
    directory: Option<String>,
    sandbox_agent: Option<String>,
    env: &EnvDefaults,
) -> Result<Vec<ServerSpec>, ConfigError> {
    let directory = directory.filter(|d| !d.is_empty());
    if urls.is_empty() && sandbox_agent.is_none() && !env.discovered.is_empty() {
        let mut servers = discovered_servers(env)?;
        for server in &mut servers {
            server.directory = directory.clone().or(server.directory.take());
        }
        return Ok(servers);
    }
    let named = urls.len();
    let mut raw: Vec<RawServer> = urls
        .into_iter()
        .map(|(name, url)| RawServer {
            name,
            url: Some(url),
            ..Default::default()
        })
        .collect();
    if raw.is_empty() {
        raw.push(RawServer::default());
    }
    for server in &mut raw {
        server.directory = directory.clone();
        if sandbox_agent.is_some() {
            server.backend = Some("sandbox-agent".into());
            server.server_id = sandbox_agent.clone();
        }
    }
    // A command-line user never wrote `servers[0]`: name what they wrote.
    servers_from_raw(raw, env).map_err(|e| match e {
        ConfigError::Url {
            index, url, reason, ..
        } if index < named => ConfigError::Flag(format!("--url {url:?}: {reason}")),
        ConfigError::Url { url, reason, .. } => {
            ConfigError::Flag(format!("$ASK_LSP_URL {url:?}: {reason}"))
        }
        ConfigError::Backend { reason, .. } => {
            ConfigError::Flag(format!("--sandbox-agent: {reason}"))
        }
        other => other,
    })
}

/// `watch --codex-home` (each already absolute), under the `codexHomes`
/// setting's rules; an error names the flag.
pub fn codex_homes_from_flags(homes: Vec<String>) -> Result<Vec<std::path::PathBuf>, ConfigError> {
    codex_homes(homes).map_err(|e| match e {
        ConfigError::CodexHome { path, reason, .. } => {
            ConfigError::Flag(format!("--codex-home {path:?}: {reason}"))
        }
        other => other,
    })
}

pub fn servers_from_raw(
    servers: Vec<RawServer>,
    env: &EnvDefaults,
) -> Result<Vec<ServerSpec>, ConfigError> {
    let mut specs: Vec<ServerSpec> = Vec::with_capacity(servers.len());
    for (index, raw) in servers.into_iter().enumerate() {
        let name = raw.name.unwrap_or_else(|| match index {
            0 => "default".to_owned(),
            n => format!("server{}", n + 1),
        });
        if specs.iter().any(|s| *s.name == *name) {
            return Err(ConfigError::DuplicateName(name));
        }
        let (url, url_source) = match (raw.url, &env.url) {
            (Some(url), _) => (url, UrlSource::Configuration),
            (None, Some(url)) => (url.clone(), UrlSource::Environment),
            (None, None) => (DEFAULT_URL.to_owned(), UrlSource::BuiltIn),
        };
        let parsed = reqwest::Url::parse(&url).map_err(|e| ConfigError::Url {
            index,
            url: url.clone(),
            reason: e.to_string(),
        })?;
        if !parsed.username().is_empty() || parsed.password().is_some() {
            // It would end up in messages and logs; credentials have their own keys.
            return Err(ConfigError::Url {
                index,
                url: redact_userinfo(&parsed),
                reason: "credentials in the URL are not accepted: use username and password (or OPENCODE_SERVER_PASSWORD)".into(),
            });
        }
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(ConfigError::Url {
                index,
                url,
                reason: "expected an http:// or https:// URL with a host".into(),
            });
        }
        let backend = match raw.backend.as_deref() {
            None | Some("opencode") => BackendKind::OpenCode,
            Some("sandbox-agent") => match raw.server_id.filter(|id| valid_server_id(id)) {
                Some(server_id) => BackendKind::SandboxAgent {
                    server_id,
                    token: raw.token.map(Secret::new),
                },
                None => {
                    return Err(ConfigError::Backend {
                        index,
                        reason: "sandbox-agent needs serverId (letters, digits, '-', '_', '.')"
                            .into(),
                    });
                }
            },
            Some(other) => {
                return Err(ConfigError::Backend {
                    index,
                    reason: format!("unknown backend {other:?} (opencode or sandbox-agent)"),
                });
            }
        };
        let password = raw
            .password
            .or_else(|| env.password.clone())
            .map(Secret::new);
        specs.push(ServerSpec {
            name: name.into(),
            url: url.trim_end_matches('/').to_owned(),
            directory: raw.directory.filter(|d| !d.is_empty()),
            username: raw
                .username
                .or_else(|| env.username.clone())
                .unwrap_or_else(|| "opencode".to_owned()),
            password,
            backend,
            url_source,
        });
    }
    Ok(specs)
}

/// The servers discovery found, checked like configured ones. Each gets
/// the password its registration carries, or none: the person's own
/// (`$OPENCODE_SERVER_PASSWORD`, `OPENCODE_SERVER_USERNAME`) goes only to
/// URLs they configured. One that does not pass is skipped with a log line.
pub(crate) fn discovered_servers(env: &EnvDefaults) -> Result<Vec<ServerSpec>, ConfigError> {
    let nothing_personal = EnvDefaults::default();
    let raw = |found: &Found| RawServer {
        url: Some(found.url.clone()),
        directory: found.directory.clone(),
        password: found.password.as_ref().map(|p| p.expose().to_owned()),
        ..RawServer::default()
    };
    let usable: Vec<&Found> = env
        .discovered
        .iter()
        .filter(
            |found| match servers_from_raw(vec![raw(found)], &nothing_personal) {
                Ok(_) => true,
                Err(error) => {
                    tracing::warn!("discovery: {} not followed: {error}", found.from);
                    false
                }
            },
        )
        .collect();
    let mut specs = servers_from_raw(
        usable.iter().map(|found| raw(found)).collect(),
        &nothing_personal,
    )?;
    for (spec, found) in specs.iter_mut().zip(&usable) {
        spec.url_source = UrlSource::Discovered(found.from.as_str().into());
    }
    Ok(specs)
}

fn valid_server_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn redact_userinfo(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

#[cfg(test)]
mod tests;
