//! The `> ` line of `watch` in a terminal: basic editing (backspace,
//! left/right, Home/End, Ctrl-U/K/W, Ctrl-L to redraw, up/down through the
//! lines typed before), so that a typo is fixed in place rather than sent.
//!
//! Only when stdin and stdout are both a terminal (Unix): the terminal is put
//! in non-canonical mode without echo and given back on every way out (the
//! input's end, Ctrl-C, SIGTERM/SIGHUP, a panic, `watch` returning). What
//! `watch` writes goes through [`unix::Screen`], which takes the half-typed
//! line off the screen before and puts it back after, so a notice never
//! splits it.
//!
//! A terminal on stdin is a person: a line answers only the prompt on screen
//! when it was entered (see `Console`); with stdout elsewhere the terminal
//! keeps its own line editing, and the lines are numbered the same way.
//! Anything else on stdin (a pipe, a file) is a script, read line by line:
//! its lines answer the prompts in order, as they come.

use super::{WatchOptions, script_lines, watch};

/// Runs [`watch`] on this process's stdin and stdout, editing the line
/// where they are a terminal.
pub async fn watch_here(options: WatchOptions) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal()
            && let Some((input, screen)) = unix::start(std::io::stdout().is_terminal())
        {
            let watched = watch(options, input, screen).await;
            unix::restore();
            return watched;
        }
    }
    let input = script_lines(tokio::io::BufReader::new(tokio::io::stdin()));
    watch(options, input, std::io::stdout()).await
}

/// At most this many characters in the line (a paste beyond is dropped):
/// more than any typed answer takes.
const MAX_LINE: usize = 16_384;
/// Lines kept for up/down.
const HISTORY: usize = 100;

/// A key, decoded from what the terminal sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Char(char),
    Enter,
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    Up,
    Down,
    KillToStart,
    KillToEnd,
    KillWord,
    Redraw,
    /// Ctrl-D: the end of input on an empty line, else Delete.
    EndOfInput,
    Interrupt,
    Suspend,
    /// A key or sequence with no meaning here.
    Ignored,
}

/// Turns the terminal's bytes into keys: UTF-8 text, control keys, and the
/// escape sequences of the arrow, Home, End and Delete keys (CSI and SS3).
#[derive(Default)]
struct Keys {
    pending: Vec<u8>,
}

impl Keys {
    fn feed(&mut self, bytes: &[u8], keys: &mut Vec<Key>) {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while at < self.pending.len() {
            match decode(&self.pending[at..]) {
                Some((key, used)) => {
                    keys.push(key);
                    at += used;
                }
                None => break,
            }
        }
        self.pending.drain(..at);
        // A sequence or character never completed: dropped.
        if self.pending.len() > 32 {
            self.pending.clear();
        }
    }
}

/// The first key in `bytes` and how many bytes it took; `None` when it is
/// not complete yet.
fn decode(bytes: &[u8]) -> Option<(Key, usize)> {
    let key = match bytes[0] {
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x01 => Key::Home,
        0x02 => Key::Left,
        0x03 => Key::Interrupt,
        0x04 => Key::EndOfInput,
        0x05 => Key::End,
        0x06 => Key::Right,
        0x0b => Key::KillToEnd,
        0x0c => Key::Redraw,
        0x0e => Key::Down,
        0x10 => Key::Up,
        0x15 => Key::KillToStart,
        0x17 => Key::KillWord,
        0x1a => Key::Suspend,
        0x1b => return escape(bytes),
        byte if byte < 0x20 => Key::Ignored,
        byte if byte < 0x80 => Key::Char(byte as char),
        byte => {
            let len = match byte {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return Some((Key::Ignored, 1)),
            };
            let encoded = bytes.get(..len)?;
            return Some(match std::str::from_utf8(encoded) {
                Ok(text) => (text.chars().next().map_or(Key::Ignored, Key::Char), len),
                Err(_) => (Key::Ignored, 1),
            });
        }
    };
    Some((key, 1))
}

/// `ESC [ params final` or `ESC O final`; an ESC followed by anything else
/// (the Esc key) is dropped alone.
fn escape(bytes: &[u8]) -> Option<(Key, usize)> {
    match bytes.get(1)? {
        b'[' => {
            let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))? + 2;
            let params = &bytes[2..end];
            let key = match (params, bytes[end]) {
                (_, b'A') => Key::Up,
                (_, b'B') => Key::Down,
                (_, b'C') => Key::Right,
                (_, b'D') => Key::Left,
                (_, b'H') | (b"1" | b"7", b'~') => Key::Home,
                (_, b'F') | (b"4" | b"8", b'~') => Key::End,
                (b"3", b'~') => Key::Delete,
                _ => Key::Ignored,
            };
            Some((key, end + 1))
        }
        b'O' => {
            let key = match bytes.get(2)? {
                b'A' => Key::Up,
                b'B' => Key::Down,
                b'C' => Key::Right,
                b'D' => Key::Left,
                b'H' => Key::Home,
                b'F' => Key::End,
                _ => Key::Ignored,
            };
            Some((key, 3))
        }
        _ => Some((Key::Ignored, 1)),
    }
}

/// What a key asks of the terminal around the line.
#[derive(Debug, PartialEq, Eq)]
enum Done {
    /// The line changed (or not): draw it again.
    Edited,
    Line(String),
    EndOfInput,
    Redraw,
    Interrupt,
    Suspend,
}

/// The line being typed and the lines typed before.
#[derive(Default)]
struct Line {
    text: Vec<char>,
    cursor: usize,
    history: std::collections::VecDeque<String>,
    /// Where up/down is in the history (`history.len()`: the new line).
    browsing: usize,
    /// The new line, kept while browsing the history.
    draft: Vec<char>,
    /// A secret is being typed: never drawn, never kept for up/down.
    secret: bool,
}

impl Line {
    /// Drops the line being typed (the lines typed before stay for up/down).
    fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.draft.clear();
        self.browsing = self.history.len();
    }

    fn key(&mut self, key: Key) -> Done {
        match key {
            Key::Char(c) if !c.is_control() && self.text.len() < MAX_LINE => {
                self.text.insert(self.cursor, c);
                self.cursor += 1;
            }
            Key::Char(_) | Key::Ignored => {}
            Key::Enter => {
                let line: String = std::mem::take(&mut self.text).into_iter().collect();
                self.cursor = 0;
                self.draft.clear();
                if !self.secret && !line.trim().is_empty() && self.history.back() != Some(&line) {
                    if self.history.len() == HISTORY {
                        self.history.pop_front();
                    }
                    self.history.push_back(line.clone());
                }
                self.browsing = self.history.len();
                return Done::Line(line);
            }
            Key::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.text.remove(self.cursor);
            }
            Key::Delete if self.cursor < self.text.len() => {
                self.text.remove(self.cursor);
            }
            Key::Backspace | Key::Delete => {}
            Key::EndOfInput if self.text.is_empty() => return Done::EndOfInput,
            Key::EndOfInput => return self.key(Key::Delete),
            Key::Left => self.cursor = self.cursor.saturating_sub(1),
            Key::Right => self.cursor = (self.cursor + 1).min(self.text.len()),
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = self.text.len(),
            Key::KillToStart => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            Key::KillToEnd => self.text.truncate(self.cursor),
            Key::KillWord => {
                let mut start = self.cursor;
                while start > 0 && self.text[start - 1].is_whitespace() {
                    start -= 1;
                }
                while start > 0 && !self.text[start - 1].is_whitespace() {
                    start -= 1;
                }
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
            Key::Up | Key::Down if self.secret => {}
            Key::Up if self.browsing > 0 => {
                if self.browsing == self.history.len() {
                    self.draft = self.text.clone();
                }
                self.browsing -= 1;
                self.text = self.history[self.browsing].chars().collect();
                self.cursor = self.text.len();
            }
            Key::Down if self.browsing < self.history.len() => {
                self.browsing += 1;
                self.text = match self.history.get(self.browsing) {
                    Some(line) => line.chars().collect(),
                    None => std::mem::take(&mut self.draft),
                };
                self.cursor = self.text.len();
            }
            Key::Up | Key::Down => {}
            Key::Redraw => return Done::Redraw,
            Key::Interrupt => return Done::Interrupt,
            Key::Suspend => return Done::Suspend,
        }
        Done::Edited
    }
}

/// The row (from 0) a terminal `columns` cells wide leaves the cursor on
/// after writing `text` from the start of a row: a character that does not
/// fit in what is left of a row starts the next one (a CJK character, two
/// cells, at the last cell leaves it blank); one that fills a row exactly
/// leaves the cursor on it until the next character.
fn rows(text: impl Iterator<Item = char>, columns: usize) -> usize {
    let (mut row, mut column) = (0, 0);
    for c in text {
        let cells = crate::text::char_cells(c);
        if cells == 0 {
            continue;
        }
        if column + cells > columns {
            row += 1;
            column = 0;
        }
        column += cells;
    }
    row
}

#[cfg(unix)]
#[path = "line_unix.rs"]
mod unix;

#[cfg(test)]
#[path = "line_tests.rs"]
mod tests;
