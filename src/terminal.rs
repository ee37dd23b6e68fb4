//! Terminal mode: the same broker, presented on a terminal. Numbered options
//! (comma-separated for multi-select), free text when the question allows a
//! typed answer, an empty line to reject.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::mpsc;

use crate::broker::{BrokerHandle, Human, Pending, Reason, Update};
use crate::model::QuestionInfo;

pub struct Watch<W: Write> {
    broker: BrokerHandle,
    out: W,
    queue: VecDeque<Arc<Pending>>,
    current: Option<Current>,
    /// Leave when input ends (watch) or keep showing events (demo).
    exit_on_eof: bool,
}

struct Current {
    pending: Arc<Pending>,
    answers: Vec<Vec<String>>,
}

/// What a typed line means for one question.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    Reject,
    Answer(Vec<String>),
}

/// Reads one line of input for a question: numbers pick options, other text
/// is a typed answer where allowed, an empty line rejects.
pub fn parse_line(question: &QuestionInfo, line: &str) -> Result<Typed, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Typed::Reject);
    }
    let count = question.options.len();
    let numbers: Option<Vec<usize>> = line
        .split(',')
        .map(|n| {
            n.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=count).contains(n))
        })
        .collect();
    match numbers {
        Some(numbers) if question.multiple || numbers.len() == 1 => Ok(Typed::Answer(
            numbers
                .into_iter()
                .map(|n| question.options[n - 1].label.clone())
                .collect(),
        )),
        Some(_) => Err(format!("pick one number from 1 to {count}")),
        None if question.custom => Ok(Typed::Answer(vec![line.to_owned()])),
        None if question.multiple => Err(format!(
            "pick numbers from 1 to {count}, separated by commas"
        )),
        None => Err(format!("pick a number from 1 to {count}")),
    }
}

impl<W: Write> Watch<W> {
    pub fn new(broker: BrokerHandle, out: W, exit_on_eof: bool) -> Self {
        Watch {
            broker,
            out,
            queue: VecDeque::new(),
            current: None,
            exit_on_eof,
        }
    }

    /// Runs until input ends (when `exit_on_eof`) or the broker stops.
    pub async fn run(
        mut self,
        mut updates: mpsc::UnboundedReceiver<Update>,
        input: impl AsyncBufRead + Unpin + Send + 'static,
    ) {
        let (lines_tx, mut lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut input = input.lines();
            while let Ok(Some(line)) = input.next_line().await {
                if lines_tx.send(line).is_err() {
                    return;
                }
            }
        });
        // Lines typed ahead wait here until a question needs them.
        let mut typed: VecDeque<String> = VecDeque::new();
        let mut input_open = true;
        loop {
            while self.awaiting_input() {
                let Some(line) = typed.pop_front() else { break };
                self.line(&line).await;
            }
            if !input_open && typed.is_empty() && self.exit_on_eof {
                // Show what the last answers led to before leaving.
                while let Ok(update) = updates.try_recv() {
                    self.update(update);
                }
                return;
            }
            tokio::select! {
                update = updates.recv() => match update {
                    Some(update) => self.update(update),
                    None => return,
                },
                line = lines.recv(), if input_open => match line {
                    Some(line) => typed.push_back(line),
                    None => input_open = false,
                },
            }
        }
    }

    /// A question is on screen and not all of its answers are typed yet (after
    /// that, lines wait until the broker has taken the answers).
    fn awaiting_input(&self) -> bool {
        self.current
            .as_ref()
            .is_some_and(|c| c.answers.len() < c.pending.request.questions.len())
    }

    fn say(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.out, "{}", text.as_ref());
        let _ = self.out.flush();
    }

    fn update(&mut self, update: Update) {
        match update {
            Update::Added(pending) => {
                self.queue.push_back(pending);
                self.next();
            }
            Update::Resolved(resolution) => {
                self.queue.retain(|p| p.key != resolution.key);
                let was_current = self
                    .current
                    .take_if(|c| c.pending.key == resolution.key)
                    .is_some();
                let mark = match resolution.reason {
                    Reason::AnsweredHere | Reason::RejectedHere => "✓",
                    Reason::Policy | Reason::Timeout => "⚙",
                    _ => "↷",
                };
                self.say(format!("{mark} {}", resolution.message));
                if was_current {
                    self.next();
                }
            }
            Update::Status(status) => {
                for server in status.servers {
                    if let Some(error) = server.error {
                        self.say(format!("! {}: {error}", server.name));
                    }
                }
            }
            Update::Notice { message, .. } => self.say(format!("! {message}")),
        }
    }

    fn next(&mut self) {
        if self.current.is_some() {
            return;
        }
        let Some(pending) = self.queue.pop_front() else {
            return;
        };
        let total = pending.request.questions.len();
        self.say(format!(
            "\n── {} from {} (session {}) ──",
            if total == 1 {
                "Question".to_owned()
            } else {
                format!("{total} questions")
            },
            pending.server,
            pending.request.session_id
        ));
        self.current = Some(Current {
            pending,
            answers: Vec::with_capacity(total),
        });
        self.prompt();
    }

    fn prompt(&mut self) {
        let Some(current) = &self.current else { return };
        let index = current.answers.len();
        let total = current.pending.request.questions.len();
        let question = current.pending.request.questions[index].clone();
        let mut text = String::new();
        if total > 1 {
            text.push_str(&format!("({}/{total}) ", index + 1));
        }
        if !question.header.is_empty() {
            text.push_str(&format!("[{}] ", question.header));
        }
        text.push_str(&question.question);
        for (n, option) in question.options.iter().enumerate() {
            text.push_str(&format!("\n  {}. {}", n + 1, option.label));
            if !option.description.is_empty() {
                text.push_str(&format!(" — {}", option.description));
            }
        }
        let how = match (question.multiple, question.custom) {
            (true, true) => "Numbers separated by commas, or type your own answer",
            (true, false) => "Numbers separated by commas",
            (false, true) if question.options.is_empty() => "Type your answer",
            (false, true) => "A number, or type your own answer",
            (false, false) => "A number",
        };
        text.push_str(&format!("\n{how}; an empty line rejects.\n> "));
        let _ = write!(self.out, "{text}");
        let _ = self.out.flush();
    }

    async fn line(&mut self, line: &str) {
        let Some(current) = &mut self.current else {
            return;
        };
        let index = current.answers.len();
        let question = &current.pending.request.questions[index];
        let key = current.pending.key.clone();
        let human = match parse_line(question, line) {
            Err(error) => {
                self.say(format!("  {error}"));
                return self.prompt();
            }
            Ok(Typed::Reject) => Human::Reject,
            Ok(Typed::Answer(answer)) => {
                current.answers.push(answer);
                if current.answers.len() < current.pending.request.questions.len() {
                    return self.prompt();
                }
                Human::Answers(current.answers.clone())
            }
        };
        match self.broker.decide(&key, human).await {
            // The broker's `Resolved` update says so and moves on.
            Ok(_) => {}
            Err(error) => {
                self.say(format!("! not sent: {error}"));
                if let Some(current) = &mut self.current {
                    current.answers.clear();
                }
                self.prompt();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::QuestionOption;

    fn question(multiple: bool, custom: bool) -> QuestionInfo {
        QuestionInfo {
            question: "Which?".into(),
            header: "H".into(),
            options: ["Red", "Blue", "Green"]
                .iter()
                .map(|l| QuestionOption {
                    label: l.to_string(),
                    description: String::new(),
                })
                .collect(),
            multiple,
            custom,
        }
    }

    #[test]
    fn numbers_text_and_empty_lines() {
        let single = question(false, true);
        assert_eq!(
            parse_line(&single, " 2 "),
            Ok(Typed::Answer(vec!["Blue".into()]))
        );
        assert_eq!(parse_line(&single, ""), Ok(Typed::Reject));
        assert_eq!(
            parse_line(&single, "Purple please"),
            Ok(Typed::Answer(vec!["Purple please".into()]))
        );
        assert_eq!(
            parse_line(&single, "1,2"),
            Err("pick one number from 1 to 3".into())
        );
        let multi = question(true, false);
        assert_eq!(
            parse_line(&multi, "1, 3"),
            Ok(Typed::Answer(vec!["Red".into(), "Green".into()]))
        );
        assert_eq!(
            parse_line(&multi, "4"),
            Err("pick numbers from 1 to 3, separated by commas".into())
        );
        assert_eq!(
            parse_line(&question(false, false), "x"),
            Err("pick a number from 1 to 3".into())
        );
    }
}
