//! Notifications out of the editor (opt-in, the `notify` settings): a prompt
//! the person has not answered within `afterMs` is announced on the desktop
//! (`notify-send`, freedesktop notifications; `osascript` on macOS; a toast
//! through PowerShell on Windows) or, in `ask-lsp watch`, in the terminal
//! (OSC 9, OSC 777, or a plain BEL that tmux and screen flag).
//!
//! "Not looking" means exactly that: still pending `afterMs` after it was
//! asked. ask-lsp cannot see whether an editor window has focus, and a prompt
//! answered in time needs no reminder. Each prompt is announced at most once,
//! and at most one notification goes out per `intervalMs`: prompts that come
//! due in between are announced together ("3 prompts waiting"). A
//! notification names the kind, the agent, the project and the prompt's
//! title, never options or answers.
//!
//! The notifier follows the broker's updates beside the presenter
//! ([`spawn`]) and keeps only its own timers.

mod desktop;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::broker::Notice;
use crate::broker::{BrokerHandle, Pending, Update, Updates};
use crate::present::{sentences, who};
use crate::prompt::Kind;
use crate::settings::notify::{Osc, Settings};

/// Prompts named in a summary; the rest are counted.
const LISTED: usize = 3;

/// Follows the broker's updates (as its observer) and notifies as the
/// settings say; a problem delivering goes to the person through `broker`.
/// Returns the handle that changes the settings.
pub(crate) fn spawn(
    mut updates: Updates,
    settings: Settings,
    broker: BrokerHandle,
) -> watch::Sender<Settings> {
    let (control, mut settings_rx) = watch::channel(settings);
    tokio::spawn(async move {
        let mut notifier = Notifier::new(settings_rx.borrow_and_update().clone());
        let mut control_open = true;
        loop {
            let deadline = notifier.next_deadline();
            tokio::select! {
                update = updates.recv() => match update {
                    Some(update) => notifier.observe(&update, Instant::now()),
                    None => return,
                },
                changed = settings_rx.changed(), if control_open => match changed {
                    Ok(()) => notifier.settings = settings_rx.borrow_and_update().clone(),
                    Err(_) => control_open = false,
                },
                () = sleep_until(deadline), if deadline.is_some() => {
                    if let Some(message) = notifier.fire(Instant::now())
                        && let Some(error) = notifier.deliver(&message)
                    {
                        broker.notice(Notice::NotificationsFailed { error });
                    }
                }
            }
        }
    });
    control
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

/// What one notification says: already neutralised, plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Message {
    summary: String,
    body: String,
}

struct Notifier {
    settings: Settings,
    /// Prompts not announced yet, in the order they came (so by due time),
    /// and where each key is: a resolution finds its prompt in `O(log n)`,
    /// not by a scan of every prompt waiting.
    waiting: BTreeMap<u64, (Instant, Arc<Pending>)>,
    waiting_at: HashMap<String, u64>,
    arrivals: u64,
    last_sent: Option<Instant>,
    /// The person was told that desktop notifications fail: once is enough.
    told_failure: bool,
}

impl Notifier {
    fn new(settings: Settings) -> Self {
        Notifier {
            settings,
            waiting: BTreeMap::new(),
            waiting_at: HashMap::new(),
            arrivals: 0,
            last_sent: None,
            told_failure: false,
        }
    }

    fn observe(&mut self, update: &Update, now: Instant) {
        match update {
            Update::Added(pending) => {
                self.arrivals += 1;
                if let Some(old) = self.waiting_at.insert(pending.key.clone(), self.arrivals) {
                    self.waiting.remove(&old);
                }
                self.waiting.insert(self.arrivals, (now, pending.clone()));
            }
            Update::Resolved(resolution) => {
                if let Some(at) = self.waiting_at.remove(&resolution.key) {
                    self.waiting.remove(&at);
                }
            }
            Update::Status(_) | Update::Notice { .. } | Update::Connection { .. } => {}
        }
    }

    /// When the next notification may go out, if one is owed.
    fn next_deadline(&self) -> Option<Instant> {
        if !self.settings.enabled() {
            return None;
        }
        let (_, (since, _)) = self.waiting.first_key_value()?;
        let due = *since + self.settings.after;
        Some(match self.last_sent {
            Some(sent) => due.max(sent + self.settings.interval),
            None => due,
        })
    }

    /// The notification owed at `now`, if any: every prompt due by then, once.
    fn fire(&mut self, now: Instant) -> Option<Message> {
        if self.next_deadline().is_none_or(|deadline| deadline > now) {
            return None;
        }
        let after = self.settings.after;
        let mut due: Vec<Arc<Pending>> = Vec::new();
        while let Some(entry) = self.waiting.first_entry()
            && entry.get().0 + after <= now
        {
            let (_, pending) = entry.remove();
            self.waiting_at.remove(&pending.key);
            due.push(pending);
        }
        self.last_sent = Some(now);
        Some(message(&due))
    }

    /// Sends `message` where the settings say; a problem the person should
    /// hear about (once) comes back.
    fn deliver(&mut self, message: &Message) -> Option<String> {
        if let Some(osc) = self.settings.terminal {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(osc_sequence(osc, message).as_bytes());
            let _ = stdout.flush();
        }
        if !self.settings.desktop {
            return None;
        }
        match desktop::show(desktop::Desktop::current(), message) {
            Ok(()) => None,
            Err(error) if !std::mem::replace(&mut self.told_failure, true) => {
                Some(error.to_string())
            }
            Err(error) => {
                tracing::debug!("desktop notification: {error}");
                None
            }
        }
    }
}

/// One prompt by name; several counted, the first few named.
fn message(due: &[Arc<Pending>]) -> Message {
    match due {
        [one] => Message {
            summary: format!("ask-lsp: {}", origin(one)),
            body: title(one),
        },
        many => {
            let mut lines: Vec<String> = many
                .iter()
                .take(LISTED)
                .map(|p| format!("{}: {}", origin(p), title(p)))
                .collect();
            if many.len() > LISTED {
                lines.push(sentences::and_more(many.len() - LISTED));
            }
            Message {
                summary: format!("ask-lsp: {}", sentences::prompts_waiting(many.len())),
                body: lines.join("\n"),
            }
        }
    }
}

/// Who asks, as a notification names it.
fn origin(pending: &Pending) -> String {
    who::kind_agent_project(&pending.server, &pending.prompt)
}

/// What is asked, by name (the title is already one line and cut). A
/// permission's title quotes its command (a token in it would reach a lock
/// screen): its action (`bash`, `edit`) names it.
fn title(pending: &Pending) -> String {
    match &pending.prompt.kind {
        Kind::Permission(permission) => permission.action.clone(),
        _ => who::title(&pending.title),
    }
}

/// The terminal sequence; BEL ends it (what urxvt's notify needs).
fn osc_sequence(osc: Osc, message: &Message) -> String {
    // Neutralised text has no ESC or BEL; newlines and OSC 777's field
    // separator are kept out too.
    let flat = |s: &str| s.replace(';', ",").replace('\n', ", ");
    match osc {
        Osc::Osc9 => format!(
            "\x1b]9;{}: {}\x07",
            flat(&message.summary),
            flat(&message.body)
        ),
        Osc::Osc777 => format!(
            "\x1b]777;notify;{};{}\x07",
            flat(&message.summary),
            flat(&message.body)
        ),
        Osc::Bell => "\x07".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::broker::{Reason, Resolution, State, test_pending};
    use crate::prompt::{Choice, Kind, Origin, Prompt, Question};
    use crate::settings::notify::Host;
    use serde_json::json;

    fn pending(id: &str, header: &str, agent: Option<&str>) -> Arc<Pending> {
        let prompt = Prompt {
            id: id.into(),
            session: "ses_1".into(),
            directory: Some("/home/me/shop/".into()),
            origin: Origin {
                tool_call: None,
                agent: agent.map(Into::into),
                session_title: None,
                requester: None,
            },
            kind: Kind::Questions(vec![Question {
                header: header.into(),
                text: "Which one?".into(),
                options: vec![Choice {
                    label: "Secret option".into(),
                    description: String::new(),
                    value: "Secret option".into(),
                }],
                multiple: false,
                custom: true,
                secret: false,
                cannot_show: None,
            }]),
        };
        Arc::new(Pending {
            title: prompt.title(),
            prompt,
            ..Arc::into_inner(test_pending("default", id, "ses_1", None)).expect("one owner")
        })
    }

    fn on(after_ms: u64, interval_ms: u64) -> Settings {
        Settings::from_json(
            Some(&json!({"desktop": true, "afterMs": after_ms, "intervalMs": interval_ms})),
            Host::Lsp,
        )
        .unwrap()
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_prompt_is_announced_once_after_the_delay_and_not_if_answered_before() {
        let start = Instant::now();
        let mut notifier = Notifier::new(on(100, 1000));
        notifier.observe(
            &Update::Added(pending("q1", "Database", Some("build"))),
            start,
        );
        notifier.observe(
            &Update::Added(pending("q2", "Color", None)),
            start + 50 * MS,
        );
        assert_eq!(notifier.next_deadline(), Some(start + 100 * MS));
        assert_eq!(notifier.fire(start + 99 * MS), None);
        let resolved = Resolution {
            key: "default/q2".into(),
            state: State::Replied,
            reason: Reason::AnsweredHere,
            why: crate::prompt::Why::Elsewhere,
            title: "".into(),
            pending: 1,
        };
        notifier.observe(&Update::Resolved(resolved), start + 60 * MS);
        assert_eq!(
            notifier.fire(start + 100 * MS),
            Some(Message {
                summary: "ask-lsp: question from build in shop (default)".into(),
                body: "Database".into(),
            })
        );
        // Once only: nothing is owed any more.
        assert_eq!(notifier.next_deadline(), None);
        assert_eq!(notifier.fire(start + 5000 * MS), None);
    }

    #[test]
    fn a_burst_is_one_notification_and_the_next_waits_for_the_interval() {
        let start = Instant::now();
        let mut notifier = Notifier::new(on(100, 1000));
        for n in 0..5 {
            let id = format!("q{n}");
            notifier.observe(&Update::Added(pending(&id, &format!("Q{n}"), None)), start);
        }
        let burst = notifier.fire(start + 100 * MS).unwrap();
        assert_eq!(burst.summary, "ask-lsp: 5 prompts waiting");
        assert_eq!(
            burst.body,
            "question from the agent in shop (default): Q0\n\
             question from the agent in shop (default): Q1\n\
             question from the agent in shop (default): Q2\n\
             and 2 more"
        );
        assert!(!format!("{burst:?}").contains("Secret option"));
        notifier.observe(
            &Update::Added(pending("late", "Late", None)),
            start + 200 * MS,
        );
        // Due at 300 ms, held until the interval since the burst is over.
        assert_eq!(notifier.next_deadline(), Some(start + 1100 * MS));
        assert_eq!(notifier.fire(start + 300 * MS), None);
        assert_eq!(notifier.fire(start + 1100 * MS).unwrap().body, "Late");
    }

    #[test]
    fn off_owes_nothing_and_sequences_cannot_be_broken_out_of() {
        let mut notifier = Notifier::new(Settings::default());
        notifier.observe(&Update::Added(pending("q1", "x", None)), Instant::now());
        assert_eq!(notifier.next_deadline(), None);
        let message = Message {
            summary: "ask-lsp: a; b".into(),
            body: "one\ntwo".into(),
        };
        assert_eq!(
            osc_sequence(Osc::Osc777, &message),
            "\x1b]777;notify;ask-lsp: a, b;one, two\x07"
        );
        assert_eq!(
            osc_sequence(Osc::Osc9, &message),
            "\x1b]9;ask-lsp: a, b: one, two\x07"
        );
        // The bell carries no text at all.
        assert_eq!(osc_sequence(Osc::Bell, &message), "\x07");
        // Agent text reaches a notification neutralised.
        let hostile = pending(
            "q9",
            "Hi\u{1b}]9;pwned\u{7}\u{202e}there",
            Some("a\u{1b}[31mb"),
        );
        let shown = super::message(&[hostile]);
        assert!(!shown.summary.contains('\u{1b}'), "{shown:?}");
        assert!(
            !shown.body.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{shown:?}"
        );
    }
}
