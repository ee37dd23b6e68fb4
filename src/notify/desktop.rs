//! Desktop notifications on each platform: `notify-send` (freedesktop),
//! `osascript` (macOS Notification Center), a toast through PowerShell
//! (Windows). The text never becomes code: AppleScript reads it from its
//! `argv`, PowerShell from environment variables, so quotes or `$(…)` in a
//! prompt's title stay text.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::Message;
use crate::present::i18n::tr;

/// How long the command may take before it is left alone.
const COMMAND_BOUND: Duration = Duration::from_secs(10);

/// AppleScript that shows its two arguments (title, then body).
const APPLESCRIPT: [&str; 3] = [
    "on run argv",
    "display notification (item 2 of argv) with title (item 1 of argv)",
    "end run",
];

/// A toast from the environment's ASK_LSP_NOTIFY_TITLE and ASK_LSP_NOTIFY_BODY
/// (CreateTextNode escapes them for the toast's XML). PowerShell's own
/// AppUserModelID: a toast needs a registered one, and ask-lsp installs none.
const POWERSHELL_TOAST: &str = "$ErrorActionPreference = 'Stop'; \
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null; \
$xml = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02); \
$text = $xml.GetElementsByTagName('text'); \
$text.Item(0).AppendChild($xml.CreateTextNode($env:ASK_LSP_NOTIFY_TITLE)) | Out-Null; \
$text.Item(1).AppendChild($xml.CreateTextNode($env:ASK_LSP_NOTIFY_BODY)) | Out-Null; \
$toast = [Windows.UI.Notifications.ToastNotification]::new($xml); \
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe').Show($toast)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Desktop {
    Freedesktop,
    MacOs,
    Windows,
}

impl Desktop {
    /// The notification system of the platform ask-lsp was built for.
    pub(super) const fn current() -> Desktop {
        if cfg!(target_os = "macos") {
            Desktop::MacOs
        } else if cfg!(windows) {
            Desktop::Windows
        } else {
            Desktop::Freedesktop
        }
    }

    fn program(self) -> &'static str {
        match self {
            Desktop::Freedesktop => "notify-send",
            Desktop::MacOs => "osascript",
            Desktop::Windows => "powershell.exe",
        }
    }

    /// What to say when the program cannot be found.
    fn missing(self) -> String {
        match self {
            Desktop::Freedesktop => tr!("notify.missing_notify_send"),
            Desktop::MacOs => tr!("notify.missing_osascript"),
            Desktop::Windows => tr!("notify.missing_powershell"),
        }
    }

    /// The command that shows `message`.
    fn command(self, message: &Message) -> Command {
        let mut command = Command::new(self.program());
        match self {
            Desktop::Freedesktop => {
                command
                    .arg("--app-name=ask-lsp")
                    .arg("--")
                    .arg(&message.summary)
                    .arg(markup_escaped(&message.body));
            }
            Desktop::MacOs => {
                for line in APPLESCRIPT {
                    command.arg("-e").arg(line);
                }
                command.arg("--").arg(&message.summary).arg(&message.body);
            }
            Desktop::Windows => {
                command
                    .args(["-NoProfile", "-NonInteractive", "-WindowStyle", "Hidden"])
                    .args(["-Command", POWERSHELL_TOAST])
                    .env("ASK_LSP_NOTIFY_TITLE", &message.summary)
                    .env("ASK_LSP_NOTIFY_BODY", &message.body);
            }
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        command
    }
}

/// Shows `message` on this desktop, without waiting for the command longer
/// than it takes to start.
pub(super) fn show(desktop: Desktop, message: &Message) -> std::io::Result<()> {
    run(desktop, desktop.command(message))
}

fn run(desktop: Desktop, mut command: Command) -> std::io::Result<()> {
    let program = desktop.program();
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => std::io::Error::new(e.kind(), desktop.missing()),
        _ => e,
    })?;
    tokio::spawn(async move {
        match tokio::time::timeout(COMMAND_BOUND, child.wait()).await {
            Ok(Ok(status)) if status.success() => {}
            Ok(Ok(status)) if desktop == Desktop::Freedesktop => {
                tracing::warn!("{program} failed ({status}): is a notification daemon running?")
            }
            Ok(Ok(status)) => tracing::warn!("{program} failed ({status})"),
            Ok(Err(error)) => tracing::warn!("{program}: {error}"),
            Err(_) => tracing::warn!("{program} did not finish within {COMMAND_BOUND:?}"),
        }
    });
    Ok(())
}

/// Notification servers may read the body as markup (`body-markup`).
fn markup_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Runs `desktop`'s command for `message` with a fake program on PATH
    /// that records its arguments and the two environment variables; returns
    /// them (arguments, then title and body from the environment).
    async fn recorded(desktop: Desktop, message: &Message) -> Vec<String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("calls");
        let fake = dir.path().join(desktop.program());
        std::fs::write(
            &fake,
            format!(
                // printf only: PATH holds nothing but the fake.
                "#!/bin/sh\nprintf '%s\\037' \"$@\" \"env:$ASK_LSP_NOTIFY_TITLE\" \"env:$ASK_LSP_NOTIFY_BODY\" > '{log}'\nprintf '\\036' >> '{log}'\n",
                log = log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut command = desktop.command(message);
        command.env("PATH", dir.path());
        run(desktop, command).unwrap();
        for _ in 0..500 {
            if let Ok(text) = std::fs::read_to_string(&log)
                && let Some(call) = text.strip_suffix('\u{1e}')
            {
                return call.split_terminator('\u{1f}').map(str::to_owned).collect();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{} was not run", desktop.program());
    }

    fn hostile() -> Message {
        Message {
            summary: "ask-lsp: question from \"build\" in shop (default)".into(),
            body: "Pick <one> & 'go' $(touch /tmp/pwned)\" end tell".into(),
        }
    }

    #[tokio::test]
    async fn macos_passes_the_text_as_applescript_arguments() {
        let message = hostile();
        assert_eq!(
            recorded(Desktop::MacOs, &message).await,
            [
                "-e",
                "on run argv",
                "-e",
                "display notification (item 2 of argv) with title (item 1 of argv)",
                "-e",
                "end run",
                "--",
                &message.summary,
                &message.body,
                "env:",
                "env:",
            ]
        );
    }

    #[tokio::test]
    async fn windows_passes_the_text_in_the_environment_of_a_fixed_script() {
        let message = hostile();
        let summary = format!("env:{}", message.summary);
        let body = format!("env:{}", message.body);
        assert_eq!(
            recorded(Desktop::Windows, &message).await,
            [
                "-NoProfile",
                "-NonInteractive",
                "-WindowStyle",
                "Hidden",
                "-Command",
                POWERSHELL_TOAST,
                &summary,
                &body,
            ]
        );
    }

    #[tokio::test]
    async fn freedesktop_escapes_the_body_for_markup() {
        let message = hostile();
        assert_eq!(
            recorded(Desktop::Freedesktop, &message).await,
            [
                "--app-name=ask-lsp",
                "--",
                &message.summary,
                "Pick &lt;one&gt; &amp; 'go' $(touch /tmp/pwned)\" end tell",
                "env:",
                "env:",
            ]
        );
    }

    #[tokio::test]
    async fn a_missing_program_says_what_to_install() {
        let mut command = Desktop::MacOs.command(&hostile());
        command.env("PATH", "/nonexistent");
        let error = run(Desktop::MacOs, command).unwrap_err();
        assert_eq!(
            error.to_string(),
            "osascript is not on PATH (it comes with macOS, in /usr/bin)"
        );
    }
}
