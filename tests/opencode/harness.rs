//! The real OpenCode, offline: its own home and config in a temporary
//! directory, the mock LLM (`mock_llm.py`) as its only provider, the plugin
//! package from `install.sh` so nothing is installed at start. Shared by
//! `tests/it/real_opencode.rs` (1.18.33) and `tests/it/real_opencode_next.rs`
//! (1.18.34's new engine), which each add their own way of asking.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio::process::{Child, Command};

use crate::common::WAIT;

pub const STARTUP: Duration = Duration::from_secs(60);

/// One real OpenCode at a time: several at once on a small machine make a
/// first turn take longer than the harness waits for a message.
static ONE_AT_A_TIME: std::sync::LazyLock<std::sync::Arc<tokio::sync::Mutex<()>>> =
    std::sync::LazyLock::new(Default::default);

/// The binary named by `bin_var` and the plugin directory, or `None` (the
/// test says SKIP) when not installed; CI sets `ASK_LSP_REQUIRE_E2E` so that
/// a missing install fails instead.
pub fn installed(bin_var: &str) -> Option<(PathBuf, PathBuf)> {
    let found = std::env::var_os(bin_var).zip(std::env::var_os("ASK_LSP_OPENCODE_PLUGIN_DIR"));
    if found.is_none() {
        if std::env::var_os("ASK_LSP_REQUIRE_E2E").is_some() {
            panic!(
                "ASK_LSP_REQUIRE_E2E is set but {bin_var} / ASK_LSP_OPENCODE_PLUGIN_DIR are not (tests/opencode/install.sh)"
            );
        }
        eprintln!(
            "SKIP: {bin_var} / ASK_LSP_OPENCODE_PLUGIN_DIR not set (run tests/opencode/install.sh)"
        );
    }
    found.map(|(bin, plugin)| (bin.into(), plugin.into()))
}

/// What a server runs in: its directories, the running mock LLM, and the
/// turn it holds (one real OpenCode at a time).
pub struct Offline {
    pub root: tempfile::TempDir,
    pub llm: Child,
    pub llm_url: String,
    pub turn: tokio::sync::OwnedMutexGuard<()>,
}

impl Offline {
    pub async fn prepare(plugin: &Path) -> Offline {
        let turn = ONE_AT_A_TIME.clone().lock_owned().await;
        let root = tempfile::tempdir().unwrap();
        for dir in [
            "home",
            "config/opencode",
            "data",
            "cache",
            "state",
            "project",
            "tmp",
        ] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let port_file = root.path().join("llm.port");
        let llm = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opencode/mock_llm.py"))
            .arg(&port_file)
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the mock LLM");
        let deadline = tokio::time::Instant::now() + WAIT;
        let llm_port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file)
                && !port.is_empty()
            {
                break port;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "mock LLM did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let llm_url = format!("http://127.0.0.1:{llm_port}");
        let config = root.path().join("config/opencode");
        std::fs::write(
            config.join("opencode.json"),
            json!({
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                    "options": {"baseURL": format!("{llm_url}/v1"), "apiKey": "mock"},
                    "models": {"mock-model": {"name": "Mock"}}}},
                "model": "mock/mock-model", "small_model": "mock/mock-model",
                "autoupdate": false, "share": "disabled",
                "permission": {"bash": "ask", "edit": "ask"}
            })
            .to_string(),
        )
        .unwrap();
        // The plugin package, so OpenCode does not npm-install it at start.
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(plugin.join(file), config.join(file)).unwrap();
        }
        std::os::unix::fs::symlink(plugin.join("node_modules"), config.join("node_modules"))
            .unwrap();
        Offline {
            root,
            llm,
            llm_url,
            turn,
        }
    }
}

/// How `opencode serve` is started: where, on which address, with which
/// password.
pub struct Serve<'a> {
    pub bin: &'a Path,
    pub root: &'a Path,
    pub hostname: &'a str,
    pub password: Option<&'a str>,
}

/// What OpenCode 1.18.33 and 1.18.34 print before exiting 1 when their port
/// is taken.
const PORT_TAKEN: &str = "ServeError";

/// How often a start is tried again because the port was taken.
const PORT_TRIES: usize = 5;

impl Serve<'_> {
    /// A healthy server on a free port, and that port. Between `free_port`
    /// and OpenCode's bind another test's connection can take the port
    /// (OpenCode then exits with `ServeError`): then again on another.
    /// `probe` builds the health check (`GET /global/health`) for a port.
    pub async fn on_a_free_port(
        &self,
        probe: impl Fn(u16) -> reqwest::RequestBuilder,
    ) -> (Child, u16) {
        for _ in 0..PORT_TRIES {
            let port = crate::common::free_port();
            if let Some(server) = self.healthy(port, probe(port)).await {
                return (server, port);
            }
        }
        panic!("opencode found its port taken {PORT_TRIES} times in a row");
    }

    /// A healthy server on `port` (a restart keeps its address), started
    /// again while the port is taken.
    pub async fn on(&self, port: u16, probe: reqwest::RequestBuilder) -> Child {
        for _ in 0..PORT_TRIES {
            if let Some(server) = self
                .healthy(port, probe.try_clone().expect("a GET clones"))
                .await
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("opencode found port {port} taken {PORT_TRIES} times in a row");
    }

    /// The server once `probe` answers 2xx; `None` when it exited because
    /// its port was taken. Any other exit fails the test with what OpenCode
    /// printed. Early requests can hang while the server starts: short
    /// timeouts.
    async fn healthy(&self, port: u16, probe: reqwest::RequestBuilder) -> Option<Child> {
        let log = self.root.join(format!("opencode-{port}.log"));
        let mut server = self.spawn(port, &log);
        let deadline = tokio::time::Instant::now() + STARTUP;
        loop {
            let answered = (probe.try_clone().expect("a GET clones"))
                .timeout(Duration::from_secs(1))
                .send()
                .await;
            if answered.is_ok_and(|r| r.status().is_success()) {
                return Some(server);
            }
            if let Ok(Some(status)) = server.try_wait() {
                let printed = std::fs::read_to_string(&log).unwrap_or_default();
                if printed.contains(PORT_TAKEN) {
                    return None;
                }
                panic!("opencode exited during start-up: {status}; it printed:\n{printed}");
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "opencode not healthy within {STARTUP:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `opencode serve` in `root`'s directories and nothing of this
    /// machine's, what it prints in `log`.
    fn spawn(&self, port: u16, log: &Path) -> Child {
        let root = self.root;
        let printed = std::fs::File::create(log).expect("a log in the test's folder");
        let mut command = Command::new(self.bin);
        command
            .args([
                "serve",
                "--hostname",
                self.hostname,
                "--port",
                &port.to_string(),
            ])
            .current_dir(root.join("project"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("XDG_DATA_HOME", root.join("data"))
            .env("XDG_CACHE_HOME", root.join("cache"))
            .env("XDG_STATE_HOME", root.join("state"))
            // The environment is cleared: without its own temp folder
            // OpenCode (a Bun executable) leaves a 5.5 MB copy of a native
            // library in /tmp on every start.
            .env("TMPDIR", root.join("tmp"))
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_CLIENT", "cli")
            .stdout(printed.try_clone().expect("the log opens twice"))
            .stderr(printed)
            .kill_on_drop(true);
        if let Some(password) = self.password {
            command.env("OPENCODE_SERVER_PASSWORD", password);
        }
        command.spawn().expect("opencode starts")
    }
}
