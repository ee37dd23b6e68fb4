//! The terminal itself (Unix): its modes, the keys read on a thread of
//! their own, and the screen `watch` and the line being typed share.
//!
//! The thread waits until input is there, then takes the screen's lock and
//! reads everything available under it: a line is numbered with the prompt
//! on screen when its Enter is read, and a new prompt is written under the
//! same lock after dropping what was typed and not entered (the line, bytes
//! not read yet), so type-ahead never answers it. A paste is one read and
//! one redraw, not one per character.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::{Done, Key, Keys, Line, MAX_LINE};
use crate::terminal::{Console, Entered};

/// Most input taken in one go before the line is drawn again (the lock is
/// let go between): a paste larger than this is drawn a few times.
const MAX_BATCH: usize = 1 << 20;

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
    /// Keys are read and the line drawn here (raw mode); else the terminal
    /// edits and echoes the line itself (canonical mode, stdout elsewhere).
    edit: bool,
    /// Prompts shown so far: the number lines entered now carry.
    prompt: u64,
    keys: Keys,
    /// Canonical mode: the line read so far, until its newline.
    unfinished: Vec<u8>,
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
        // A secret is not drawn: the cursor stays after the prompt.
        let (text, before, shown) = {
            let shown = match self.line.secret {
                true => &[][..],
                false => &self.line.text[..],
            };
            let before: String = shown[..self.line.cursor.min(shown.len())].iter().collect();
            (shown.iter().collect::<String>(), before, shown.len())
        };
        let columns = columns();
        let partial = String::from_utf8_lossy(&self.partial).into_owned();
        self.back_to_start(out);
        let _ = out.write_all(&self.partial);
        let _ = write!(out, "{text}");
        let end = super::rows(partial.chars().chain(text.chars()), columns);
        let mut cursor = end;
        if self.line.cursor < shown {
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

/// Echo on or off where the terminal edits the line itself (canonical
/// mode, stdout elsewhere); the settings before are kept for [`restore`].
fn echo(on: bool) {
    // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
    let mut settings: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd 0 is the terminal (checked before `start`).
    if unsafe { libc::tcgetattr(0, &mut settings) } != 0 {
        return;
    }
    SAVED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(settings);
    match on {
        true => settings.c_lflag |= libc::ECHO,
        false => settings.c_lflag &= !libc::ECHO,
    }
    // SAFETY: fd 0 and a termios derived from its own.
    unsafe { libc::tcsetattr(0, libc::TCSANOW, &settings) };
}

impl Console for Screen {
    fn secret(&mut self, secret: bool) {
        let mut shared = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if shared.line.secret == secret {
            return;
        }
        shared.line.secret = secret;
        if !shared.edit {
            echo(!secret);
        }
    }

    fn show_prompt(&mut self, text: &str) -> u64 {
        let mut shared = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        shared.erase(&mut out);
        // Typed before this prompt was on screen: never its answer.
        shared.line.clear();
        shared.keys = Keys::default();
        shared.unfinished.clear();
        // SAFETY: fd 0 is the terminal (checked before `start`).
        unsafe { libc::tcflush(0, libc::TCIFLUSH) };
        let _ = out.write_all(text.as_bytes());
        shared.wrote(text.as_bytes());
        shared.prompt += 1;
        shared.prompt
    }
}

/// Starts reading the terminal on stdin: the lines entered (for `watch`'s
/// input) and the screen to write on. With `edit`, the terminal is put in
/// raw mode and the line edited here; `None` when it cannot be set (then it
/// is left as it was).
pub(super) fn start(edit: bool) -> Option<(mpsc::Receiver<Entered>, Screen)> {
    if edit {
        if !enter_raw() {
            restore();
            return None;
        }
        give_back_on_every_way_out();
    }
    let screen = Screen(Arc::new(Mutex::new(Shared {
        edit,
        prompt: 0,
        keys: Keys::default(),
        unfinished: Vec::new(),
        line: Line::default(),
        drawn: false,
        cursor_row: 0,
        end_row: 0,
        partial: Vec::new(),
        since_header: Vec::new(),
    })));
    let shared = screen.0.clone();
    let (lines, input) = mpsc::channel(64);
    std::thread::spawn(move || read_input(&shared, &lines));
    Some((input, screen))
}

/// The terminal as it was however the process ends: a panic, SIGTERM,
/// SIGHUP.
fn give_back_on_every_way_out() {
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
}

/// Whether input waits on stdin, within `timeout_ms` (-1: until it does).
fn readable(timeout_ms: libc::c_int) -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd, for fd 0.
        let n = unsafe { libc::poll(&mut fd, 1, timeout_ms) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return n > 0;
    }
}

/// Reads the terminal until its input ends; each line entered goes to
/// `lines`, numbered under the lock (sent once the lock is let go, as
/// `watch` needs it to write).
fn read_input(shared: &Mutex<Shared>, lines: &mpsc::Sender<Entered>) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut entered = Vec::new();
    loop {
        if !readable(-1) {
            break;
        }
        let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
        let ended = take_input(&mut guard, &mut buffer, &mut entered);
        drop(guard);
        for line in entered.drain(..) {
            if lines.blocking_send(line).is_err() {
                return;
            }
        }
        if ended {
            break;
        }
    }
    restore();
}

/// What is there to read now (a new prompt may have dropped it since the
/// wait), applied to the line, which is then drawn once; `true` when the
/// input ended.
fn take_input(shared: &mut Shared, buffer: &mut [u8], entered: &mut Vec<Entered>) -> bool {
    let mut keys = Vec::new();
    let mut taken = 0;
    let mut ended = false;
    while taken < MAX_BATCH && readable(0) {
        // SAFETY: reading into a buffer of this length; not through
        // `std::io::stdin`, whose own buffer would hide bytes from `poll`
        // and from the flush at a new prompt.
        let n = unsafe { libc::read(0, buffer.as_mut_ptr().cast(), buffer.len()) };
        let Ok(n @ 1..) = usize::try_from(n) else {
            ended = true;
            break;
        };
        taken += n;
        if shared.edit {
            shared.keys.feed(&buffer[..n], &mut keys);
            continue;
        }
        for &byte in &buffer[..n] {
            if byte == b'\n' {
                let line = String::from_utf8_lossy(&shared.unfinished).into_owned();
                shared.unfinished.clear();
                let at = Some(shared.prompt);
                entered.push(Entered { line, at });
            } else if shared.unfinished.len() < MAX_LINE * 4 {
                shared.unfinished.push(byte);
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let mut edited = false;
    for key in keys {
        // What was typed is on screen as it is entered.
        if key == Key::Enter && std::mem::take(&mut edited) {
            shared.draw(&mut out);
        }
        match shared.line.key(key) {
            Done::Edited => edited = true,
            Done::Line(line) => {
                shared.after_line(&mut out);
                shared.partial.clear();
                // Ctrl-L shows the lines typed again, never a secret.
                if !shared.line.secret {
                    shared.since_header.extend_from_slice(line.as_bytes());
                }
                shared.since_header.push(b'\n');
                let at = Some(shared.prompt);
                entered.push(Entered { line, at });
            }
            Done::EndOfInput => {
                ended = true;
                break;
            }
            Done::Redraw => {
                let _ = out.write_all(b"\x1b[H\x1b[2J");
                let _ = out.write_all(&shared.since_header);
                // It ends with `partial`: the line is drawn after it.
                shared.drawn = false;
                shared.draw(&mut out);
                edited = false;
            }
            Done::Interrupt => {
                let _ = out.write_all(b"^C\n");
                let _ = out.flush();
                drop(out);
                restore();
                // SAFETY: the default disposition, as `watch` has no handler.
                unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
                signal_foreground(libc::SIGINT);
                die_by(libc::SIGINT);
            }
            Done::Suspend => {
                if std::mem::take(&mut edited) {
                    shared.draw(&mut out);
                }
                shared.after_line(&mut out);
                let _ = out.flush();
                restore();
                signal_foreground(libc::SIGTSTP);
                // Continued (`fg`).
                enter_raw();
                let partial = std::mem::take(&mut shared.partial);
                let _ = out.write_all(&partial);
                shared.partial = partial;
                shared.draw(&mut out);
            }
        }
    }
    if edited {
        shared.draw(&mut out);
    }
    let _ = out.flush();
    ended
}
