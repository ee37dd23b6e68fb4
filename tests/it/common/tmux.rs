//! A tmux server of a test's own, for agents that draw on a terminal.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A tmux server of the test's own (`-L`), killed when dropped.
pub struct Tmux {
    name: String,
    /// How long [`Tmux::wait_for`] waits for a text.
    wait: Duration,
}

impl Tmux {
    /// `command` in a new session at `cwd`; `None` (the test skips) when
    /// tmux cannot start and the run does not require every peer. The
    /// server's name is this process's and a count: every `Tmux` has its
    /// own, however alike the directories of tests running at once.
    pub fn start(command: &str, cwd: &Path, wait: Duration) -> Option<Tmux> {
        Tmux::start_sized(command, cwd, wait, (150, 40))
    }

    /// [`Tmux::start`] in a window `size` (columns, rows) cells large.
    pub fn start_sized(
        command: &str,
        cwd: &Path,
        wait: Duration,
        size: (u16, u16),
    ) -> Option<Tmux> {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let (columns, rows) = (size.0.to_string(), size.1.to_string());
        let tmux = Tmux {
            name: format!(
                "ask-lsp-tmux-{}-{}",
                std::process::id(),
                STARTED.fetch_add(1, Ordering::Relaxed)
            ),
            wait,
        };
        let started = std::process::Command::new("tmux")
            .args([
                "-L",
                &tmux.name,
                "new-session",
                "-d",
                "-x",
                &columns,
                "-y",
                &rows,
                "-c",
            ])
            .arg(cwd)
            .arg(command)
            .status();
        match started {
            Ok(status) if status.success() => Some(tmux),
            _ => {
                assert!(
                    std::env::var_os("ASK_LSP_REQUIRE_E2E").is_none(),
                    "ASK_LSP_REQUIRE_E2E is set but tmux cannot start"
                );
                eprintln!("SKIP: no tmux");
                None
            }
        }
    }

    /// The tmux server's name (`tmux -L <name>`).
    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = std::process::Command::new("tmux")
            .args(["-L", &self.name, "send-keys", "-t", "0"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn screen(&self) -> String {
        let out = std::process::Command::new("tmux")
            .args(["-L", &self.name, "capture-pane", "-p", "-t", "0"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub async fn wait_for(&self, text: &str) {
        let deadline = tokio::time::Instant::now() + self.wait;
        while !self.screen().contains(text) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{text:?} not on screen:\n{}",
                self.screen()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Presses `key` until the dialog showing `dialog` takes it: a key sent
    /// while an agent's dialog is still being set up is dropped (seen with
    /// Claude Code 2.1.332 on a busy machine: the dialog stayed, nothing was
    /// answered). The time of the press that took.
    pub async fn press_until_gone(&self, key: &str, dialog: &str) -> std::time::Instant {
        let deadline = std::time::Instant::now() + self.wait;
        loop {
            let pressed = std::time::Instant::now();
            self.keys(&[key]);
            let settled = pressed + Duration::from_secs(1);
            while std::time::Instant::now() < settled {
                if !self.screen().contains(dialog) {
                    return pressed;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the dialog took no {key}:\n{}",
                self.screen()
            );
        }
    }

    /// Waits until `text` has left the screen.
    pub async fn wait_gone(&self, text: &str) {
        let deadline = tokio::time::Instant::now() + self.wait;
        while self.screen().contains(text) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{text:?} still on screen:\n{}",
                self.screen()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// After the caller's first press of `key`: presses it again every
    /// `every` while `again(screen)`, until `done(screen)`. An agent busy
    /// redrawing may drop a key (seen: Copilot CLI an Enter during its MCP
    /// reload; Codex an Escape as its dialog showed, on a loaded machine).
    pub async fn press_again_until(
        &self,
        key: &str,
        every: Duration,
        again: impl Fn(&str) -> bool,
        done: impl Fn(&str) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + self.wait;
        let mut pressed = tokio::time::Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{key} pressed, never taken:\n{screen}"
            );
            if pressed.elapsed() > every && again(&screen) {
                eprintln!("{key} again: not taken after {every:?}");
                self.keys(&[key]);
                pressed = tokio::time::Instant::now();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Types a line into the agent's input: Enter only once the agent
    /// shows the whole line (pressed before, a busy agent may take it as
    /// part of the typing and leave the line unsent). Typed again while
    /// none of it shows: an agent still ending its last turn drops keys
    /// (seen with Copilot CLI 1.0.102 at load 12). The line must fit on
    /// one row of the window.
    pub async fn type_line(&self, line: &str) {
        let start: String = line.chars().take(12).collect();
        let shown = |screen: &str| screen.matches(start.as_str()).count();
        let deadline = std::time::Instant::now() + self.wait;
        'typing: loop {
            let before = shown(&self.screen());
            self.keys(&["-l", line]);
            let dropped = std::time::Instant::now() + Duration::from_secs(5);
            loop {
                let screen = self.screen();
                if screen.contains(line) {
                    break 'typing;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{line:?} not on screen:\n{screen}"
                );
                if shown(&screen) <= before && std::time::Instant::now() > dropped {
                    continue 'typing;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        self.keys(&["Enter"]);
    }
}

impl Drop for Tmux {
    /// Kills the server and waits (up to 10 s) for the program in its pane
    /// to exit: an agent writes its files as it exits (Claude Code its
    /// `.claude.json`), which would make the test's temporary folder again
    /// after the test removed it.
    fn drop(&mut self) {
        let pane = std::process::Command::new("tmux")
            .args([
                "-L",
                &self.name,
                "display-message",
                "-p",
                "-t",
                "0",
                "#{pane_pid}",
            ])
            .output()
            .ok()
            .and_then(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
            });
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.name, "kill-server"])
            .status();
        let Some(pid) = pane else { return };
        let running = std::path::PathBuf::from(format!("/proc/{pid}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while running.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
