//! The `notify` settings: when and where a prompt nobody answered is
//! announced (the notifier is `crate::notify`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

const DEFAULT_AFTER: Duration = Duration::from_secs(10);
const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// Where the notifications may go: a language server's stdout is the LSP
/// channel, so only `watch` may write terminal sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    Lsp,
    Watch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Osc {
    /// `ESC ] 9 ; text BEL`: iTerm2, WezTerm, Windows Terminal, ghostty, kitty.
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL`: urxvt, foot, WezTerm, ghostty.
    Osc777,
    /// BEL alone: tmux and screen flag the window, terminals ring or flash.
    Bell,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    pub desktop: bool,
    pub terminal: Option<Osc>,
    pub after: Duration,
    pub interval: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            desktop: false,
            terminal: None,
            after: DEFAULT_AFTER,
            interval: DEFAULT_INTERVAL,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Raw {
    desktop: Option<bool>,
    terminal: Option<Osc>,
    after_ms: Option<u64>,
    interval_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotifyError {
    #[error("notify: {0}")]
    Shape(String),
    #[error(
        "notify.terminal works only in `ask-lsp watch` (a language server's stdout is the LSP channel); use notify.desktop"
    )]
    TerminalInLsp,
}

impl Settings {
    /// Reads the `notify` object; absent or `null` notifies nobody.
    pub fn from_json(value: Option<&Value>, host: Host) -> Result<Settings, NotifyError> {
        let raw = match value {
            None | Some(Value::Null) => Raw::default(),
            Some(value) => {
                Raw::deserialize(value).map_err(|e| NotifyError::Shape(e.to_string()))?
            }
        };
        if raw.terminal.is_some() && host == Host::Lsp {
            return Err(NotifyError::TerminalInLsp);
        }
        let defaults = Settings::default();
        Ok(Settings {
            desktop: raw.desktop.unwrap_or(defaults.desktop),
            terminal: raw.terminal,
            after: raw.after_ms.map_or(defaults.after, Duration::from_millis),
            interval: raw
                .interval_ms
                .map_or(defaults.interval, Duration::from_millis),
        })
    }

    pub fn enabled(&self) -> bool {
        self.desktop || self.terminal.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_are_checked_and_terminal_sequences_stay_out_of_the_lsp() {
        assert!(!Settings::from_json(None, Host::Lsp).unwrap().enabled());
        assert_eq!(
            Settings::from_json(Some(&json!({"terminal": "osc9"})), Host::Lsp).unwrap_err(),
            NotifyError::TerminalInLsp
        );
        let watch = Settings::from_json(Some(&json!({"terminal": "osc777"})), Host::Watch).unwrap();
        assert_eq!(watch.terminal, Some(Osc::Osc777));
        assert_eq!(
            (watch.after, watch.interval),
            (DEFAULT_AFTER, DEFAULT_INTERVAL)
        );
        let err = Settings::from_json(Some(&json!({"afterMS": 1})), Host::Lsp).unwrap_err();
        assert!(err.to_string().contains("unknown field `afterMS`"), "{err}");
        let bell = Settings::from_json(Some(&json!({"terminal": "bell"})), Host::Watch).unwrap();
        assert_eq!(bell.terminal, Some(Osc::Bell));
        assert_eq!(
            Settings::from_json(Some(&json!({"terminal": "bell"})), Host::Lsp).unwrap_err(),
            NotifyError::TerminalInLsp
        );
        let err = Settings::from_json(Some(&json!({"terminal": "beep"})), Host::Watch).unwrap_err();
        assert!(err.to_string().contains("unknown variant `beep`"), "{err}");
    }
}
