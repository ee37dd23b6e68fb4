//! The `> ` line of `watch` in a terminal: basic editing (backspace,
//! left/right, Home/End, Ctrl-U/K/W, Ctrl-L to redraw, up/down through the
//! lines typed before), so that a typo is fixed in place rather than sent.
//!
//! Only when stdin and stdout are both a terminal (Unix): the terminal is put
//! in non-canonical mode without echo and given back on every way out (the
//! input's end, Ctrl-C, SIGTERM/SIGHUP, a panic, `watch` returning). Piped
//! input is read line by line as before. What `watch` writes goes through
//! [`Screen`], which takes the half-typed line off the screen before and puts
//! it back after, so a notice never splits it.

use super::{WatchOptions, watch};

/// Runs [`watch`] on this process's stdin and stdout, editing the line
/// where they are a terminal.
pub async fn watch_here(options: WatchOptions) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal()
            && std::io::stdout().is_terminal()
            && let Some((input, screen)) = unix::start()
        {
            let watched = watch(options, input, screen).await;
            unix::restore();
            return watched;
        }
    }
    let input = tokio::io::BufReader::new(tokio::io::stdin());
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
}

impl Line {
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
                if !line.trim().is_empty() && self.history.back() != Some(&line) {
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
mod unix {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::{Arc, Mutex};

    use super::{Done, Keys, Line};

    /// How much of what `watch` wrote since the current prompt's header
    /// Ctrl-L shows again (a diff may be longer: its end is kept).
    const MAX_SHOWN_AGAIN: usize = 64 * 1024;

    /// The terminal's settings before ours, to give back.
    static SAVED: Mutex<Option<libc::termios>> = Mutex::new(None);

    /// The terminal as it was. Safe to call from anywhere, any number of
    /// times (a panic, a signal's task, the end of `watch`).
    pub(super) fn restore() {
        let saved = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(saved) = saved {
            // SAFETY: fd 0 and a termios read from it by tcgetattr.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &saved) };
        }
    }

    /// Keys one by one, no echo; Ctrl-C and Ctrl-Z come as bytes (handled
    /// here, so the terminal is given back before the process stops).
    /// Output processing stays on: `\n` still starts a line.
    fn enter_raw() -> bool {
        // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
        let mut settings: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 is open (a terminal, checked by the caller).
        if unsafe { libc::tcgetattr(0, &mut settings) } != 0 {
            return false;
        }
        let mut raw = settings;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
        raw.c_iflag &= !(libc::IXON | libc::ICRNL | libc::INLCR);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(settings);
        // SAFETY: fd 0 and a termios derived from its own.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &raw) == 0 }
    }

    /// Gives the terminal back, then ends the process by `signal` as it
    /// would have ended without us.
    fn die_by(signal: libc::c_int) -> ! {
        restore();
        let _ = std::io::stdout().flush();
        // SAFETY: resetting a disposition and raising a signal.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        std::process::exit(128 + signal);
    }

    /// What the terminal itself does for Ctrl-C and Ctrl-Z outside raw
    /// mode: `signal` to its foreground process group (a script that runs
    /// `watch` without job control stops with it, as before).
    fn signal_foreground(signal: libc::c_int) {
        // SAFETY: reading fd 0's foreground group; signalling it, or us.
        unsafe {
            let group = libc::tcgetpgrp(0);
            if group > 0 {
                libc::kill(-group, signal);
            } else {
                libc::raise(signal);
            }
        }
    }

    /// The screen `watch` writes to, shared with the line being typed.
    #[derive(Clone)]
    pub(super) struct Screen(Arc<Mutex<Shared>>);

    struct Shared {
        line: Line,
        /// The line is drawn after `partial`.
        drawn: bool,
        /// Rows below the one `partial` starts on, where the drawn line
        /// left the cursor and where it ends (a line longer than the
        /// terminal is wide wraps).
        cursor_row: usize,
        end_row: usize,
        /// What `watch` wrote after its last newline (the `> ` prompt).
        partial: Vec<u8>,
        /// What `watch` wrote from the current prompt's header on, and the
        /// lines typed at it, for Ctrl-L.
        since_header: Vec<u8>,
    }

    impl Shared {
        /// Back to the start of the row `partial` starts on, clearing from
        /// there to the end of the screen (the rows a wrapped line took).
        fn back_to_start(&mut self, out: &mut impl Write) {
            if std::mem::take(&mut self.drawn) && self.cursor_row > 0 {
                let _ = write!(out, "\x1b[{}A", self.cursor_row);
            }
            let _ = out.write_all(b"\r\x1b[J");
            self.cursor_row = 0;
            self.end_row = 0;
        }

        fn draw(&mut self, out: &mut impl Write) {
            // Written twice up to the cursor, so the terminal itself places
            // the cursor whatever the characters' widths; only how many
            // rows a wrapped line takes is counted, in display cells.
            let text: String = self.line.text.iter().collect();
            let before: String = self.line.text[..self.line.cursor].iter().collect();
            let columns = columns();
            let partial = String::from_utf8_lossy(&self.partial).into_owned();
            self.back_to_start(out);
            let _ = out.write_all(&self.partial);
            let _ = write!(out, "{text}");
            let end = super::rows(partial.chars().chain(text.chars()), columns);
            let mut cursor = end;
            if self.line.cursor < self.line.text.len() {
                if end > 0 {
                    let _ = write!(out, "\x1b[{end}A");
                }
                let _ = out.write_all(b"\r");
                let _ = out.write_all(&self.partial);
                let _ = write!(out, "{before}");
                cursor = super::rows(partial.chars().chain(before.chars()), columns);
            }
            self.drawn = true;
            self.cursor_row = cursor;
            self.end_row = end;
        }

        /// Takes the typed text off the screen, leaving `partial`.
        fn erase(&mut self, out: &mut impl Write) {
            if self.drawn && !self.line.text.is_empty() {
                self.back_to_start(out);
                let _ = out.write_all(&self.partial);
            }
            self.drawn = false;
        }

        /// Below the whole typed line, as Enter leaves it.
        fn after_line(&mut self, out: &mut impl Write) {
            if self.drawn && self.end_row > self.cursor_row {
                let _ = write!(out, "\x1b[{}B", self.end_row - self.cursor_row);
            }
            let _ = out.write_all(b"\n");
            self.drawn = false;
            self.cursor_row = 0;
            self.end_row = 0;
        }
    }

    /// The terminal's width in cells; unbounded (no wrapping counted) when
    /// it does not say.
    fn columns() -> usize {
        // SAFETY: a zeroed winsize is a valid out-parameter for TIOCGWINSZ.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: fd 1 and a winsize to fill.
        match unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } {
            0 if size.ws_col > 0 => usize::from(size.ws_col),
            _ => usize::MAX,
        }
    }

    impl Shared {
        fn wrote(&mut self, bytes: &[u8]) {
            match bytes.iter().rposition(|&b| b == b'\n') {
                Some(at) => {
                    self.partial.clear();
                    self.partial.extend_from_slice(&bytes[at + 1..]);
                }
                None => self.partial.extend_from_slice(bytes),
            }
            // `watch` starts each prompt with "\n── ".
            match memchr::memmem::rfind(bytes, "\n── ".as_bytes()) {
                Some(at) => {
                    self.since_header.clear();
                    self.since_header.extend_from_slice(&bytes[at + 1..]);
                }
                None => self.since_header.extend_from_slice(bytes),
            }
            if self.since_header.len() > MAX_SHOWN_AGAIN {
                let cut = self.since_header.len() - MAX_SHOWN_AGAIN;
                let cut = self.since_header[cut..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(cut, |at| cut + at + 1);
                self.since_header.drain(..cut);
            }
        }
    }

    impl Write for Screen {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut shared = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let mut out = std::io::stdout().lock();
            shared.erase(&mut out);
            out.write_all(bytes)?;
            shared.wrote(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            let mut shared = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let mut out = std::io::stdout().lock();
            // An empty line is where `watch` left the cursor already.
            if !shared.drawn && !shared.line.text.is_empty() {
                shared.draw(&mut out);
            }
            out.flush()
        }
    }

    /// Puts the terminal in raw mode and starts reading keys: the lines
    /// typed (for `watch`'s input) and the screen to write on. `None` when
    /// the terminal cannot be set (then it is left as it was).
    pub(super) fn start() -> Option<(tokio::io::BufReader<tokio::net::UnixStream>, Screen)> {
        let (lines, input) = UnixStream::pair().ok()?;
        input.set_nonblocking(true).ok()?;
        let input = tokio::net::UnixStream::from_std(input).ok()?;
        if !enter_raw() {
            restore();
            return None;
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        for kind in [
            tokio::signal::unix::SignalKind::terminate(),
            tokio::signal::unix::SignalKind::hangup(),
        ] {
            if let Ok(mut signal) = tokio::signal::unix::signal(kind) {
                tokio::spawn(async move {
                    if signal.recv().await.is_some() {
                        die_by(kind.as_raw_value());
                    }
                });
            }
        }
        let screen = Screen(Arc::new(Mutex::new(Shared {
            line: Line::default(),
            drawn: false,
            cursor_row: 0,
            end_row: 0,
            partial: Vec::new(),
            since_header: Vec::new(),
        })));
        let shared = screen.0.clone();
        std::thread::spawn(move || read_keys(&shared, lines));
        Some((tokio::io::BufReader::new(input), screen))
    }

    /// Reads keys until the input ends; each finished line goes to `lines`.
    fn read_keys(shared: &Mutex<Shared>, mut lines: UnixStream) {
        let mut stdin = std::io::stdin().lock();
        let mut keys = Keys::default();
        let mut buffer = [0u8; 1024];
        let mut decoded = Vec::new();
        loop {
            let n = match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            decoded.clear();
            keys.feed(&buffer[..n], &mut decoded);
            for &key in &decoded {
                let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
                let mut out = std::io::stdout().lock();
                match guard.line.key(key) {
                    Done::Edited => guard.draw(&mut out),
                    Done::Line(line) => {
                        guard.after_line(&mut out);
                        guard.partial.clear();
                        guard.since_header.extend_from_slice(line.as_bytes());
                        guard.since_header.push(b'\n');
                        drop(out);
                        drop(guard);
                        if lines.write_all(format!("{line}\n").as_bytes()).is_err() {
                            return;
                        }
                        continue;
                    }
                    Done::EndOfInput => {
                        drop(out);
                        drop(guard);
                        restore();
                        return;
                    }
                    Done::Redraw => {
                        let _ = out.write_all(b"\x1b[H\x1b[2J");
                        let _ = out.write_all(&guard.since_header);
                        // It ends with `partial`: the line is drawn after it.
                        guard.drawn = false;
                        guard.draw(&mut out);
                    }
                    Done::Interrupt => {
                        let _ = out.write_all(b"^C\n");
                        drop(out);
                        restore();
                        // SAFETY: the default disposition, as `watch` has no handler.
                        unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
                        signal_foreground(libc::SIGINT);
                        die_by(libc::SIGINT);
                    }
                    Done::Suspend => {
                        guard.after_line(&mut out);
                        let _ = out.flush();
                        drop(out);
                        restore();
                        signal_foreground(libc::SIGTSTP);
                        // Continued (`fg`).
                        enter_raw();
                        let mut out = std::io::stdout().lock();
                        let partial = std::mem::take(&mut guard.partial);
                        let _ = out.write_all(&partial);
                        guard.partial = partial;
                        guard.draw(&mut out);
                        let _ = out.flush();
                        continue;
                    }
                }
                let _ = out.flush();
            }
        }
        restore();
    }
}

#[cfg(test)]
#[path = "line_tests.rs"]
mod tests;
