use super::*;

fn keys(bytes: &[u8]) -> Vec<Key> {
    let mut decoded = Vec::new();
    Keys::default().feed(bytes, &mut decoded);
    decoded
}

/// Types `bytes` into a line and returns what each finished line was.
fn typed(line: &mut Line, bytes: &[u8]) -> Vec<Done> {
    keys(bytes)
        .into_iter()
        .map(|key| line.key(key))
        .filter(|done| *done != Done::Edited)
        .collect()
}

#[test]
fn keys_from_text_controls_and_escape_sequences() {
    assert_eq!(
        keys("aé👩\r".as_bytes()),
        [Key::Char('a'), Key::Char('é'), Key::Char('👩'), Key::Enter]
    );
    assert_eq!(
        keys(b"\x1b[D\x1b[C\x1bOH\x1b[F\x1b[1~\x1b[4~\x1b[3~\x1b[A\x1bOB\x7f\x08\x15\x17\x0b\x0c\x03\x04\x1a"),
        [
            Key::Left,
            Key::Right,
            Key::Home,
            Key::End,
            Key::Home,
            Key::End,
            Key::Delete,
            Key::Up,
            Key::Down,
            Key::Backspace,
            Key::Backspace,
            Key::KillToStart,
            Key::KillWord,
            Key::KillToEnd,
            Key::Redraw,
            Key::Interrupt,
            Key::EndOfInput,
            Key::Suspend,
        ]
    );
    // Unknown sequences and a lone Esc insert nothing.
    assert_eq!(
        keys(b"\x1b[200~x\x1b[15;5~"),
        [Key::Ignored, Key::Char('x'), Key::Ignored]
    );
    assert_eq!(keys(b"\x1b"), []);
    assert_eq!(keys(b"\x1bx"), [Key::Ignored, Key::Char('x')]);
    assert_eq!(keys(b"\xff"), [Key::Ignored]);
}

#[test]
fn a_character_or_sequence_split_across_reads_is_whole() {
    let mut decoder = Keys::default();
    let mut decoded = Vec::new();
    let bytes = "é\x1b[D".as_bytes();
    for byte in bytes {
        decoder.feed(std::slice::from_ref(byte), &mut decoded);
    }
    assert_eq!(decoded, [Key::Char('é'), Key::Left]);
}

#[test]
fn editing_keys_change_the_line_where_the_cursor_is() {
    let mut line = Line::default();
    // A typo fixed with backspace; a word inserted after moving left.
    assert_eq!(
        typed(&mut line, b"postgrs\x7f\x7fres\r"),
        [Done::Line("postgres".into())]
    );
    assert_eq!(
        typed(&mut line, b"1 3\x1b[D\x1b[D,\r"),
        [Done::Line("1, 3".into())]
    );
    // Ctrl-U kills what is before the cursor, Ctrl-W a word, Ctrl-K the rest.
    assert_eq!(
        typed(&mut line, b"wrong words\x15right\r"),
        [Done::Line("right".into())]
    );
    assert_eq!(
        typed(&mut line, b"=some typed text  \x17answer\r"),
        [Done::Line("=some typed answer".into())]
    );
    assert_eq!(
        typed(
            &mut line,
            b"keep this\x01\x1b[C\x1b[C\x1b[C\x1b[C\x0b\x1b[F!\r"
        ),
        [Done::Line("keep!".into())]
    );
    // Home, Delete, End.
    assert_eq!(
        typed(&mut line, b"x2\x1b[H\x1b[3~\x1b[4~\r"),
        [Done::Line("2".into())]
    );
    // Control characters are not typed in.
    assert_eq!(typed(&mut line, b"a\x07\x00b\r"), [Done::Line("ab".into())]);
}

#[test]
fn up_and_down_go_through_the_lines_typed_before() {
    let mut line = Line::default();
    typed(&mut line, b"first\rsecond\r\r");
    // Up twice: "first"; down: "second"; down again: the draft.
    assert_eq!(
        typed(&mut line, b"dra\x1b[A\x1b[A\x1b[B\r"),
        [Done::Line("second".into())]
    );
    assert_eq!(
        typed(&mut line, b"draft\x1b[A\x1b[B\r"),
        [Done::Line("draft".into())]
    );
    assert_eq!(
        typed(&mut line, b"\x1b[A\x1b[A\r"),
        [Done::Line("second".into())]
    );
}

#[test]
fn ctrl_d_ends_input_only_on_an_empty_line() {
    let mut line = Line::default();
    assert_eq!(typed(&mut line, b"ab\x01\x04\r"), [Done::Line("b".into())]);
    assert_eq!(typed(&mut line, b"\x04"), [Done::EndOfInput]);
    assert_eq!(
        typed(&mut line, b"\x0c\x03"),
        [Done::Redraw, Done::Interrupt]
    );
}

#[test]
fn a_line_is_bounded() {
    let mut line = Line::default();
    let paste = "x".repeat(MAX_LINE + 100);
    let done = typed(&mut line, format!("{paste}\r").as_bytes());
    assert_eq!(done, [Done::Line("x".repeat(MAX_LINE))]);
}

#[test]
fn a_wrapped_line_counts_rows_in_display_cells() {
    let rows = |text: &str, columns| rows(text.chars(), columns);
    assert_eq!(rows("> abcdefgh", 10), 0);
    assert_eq!(rows("> abcdefghi", 10), 1);
    // Two cells a character: four fill 8 cells after "> ", a fifth wraps.
    assert_eq!(rows("> 中文中文", 10), 0);
    assert_eq!(rows("> 中文中文中", 10), 1);
    // A wide character never splits: at the last cell it starts the next row.
    assert_eq!(rows("> abcdefg中", 10), 1);
    // Joiners and combining marks take no cell.
    assert_eq!(rows("> e\u{301}e\u{301}e\u{301}e\u{301}abcd", 10), 0);
    assert_eq!(rows("> 中文", usize::MAX), 0);
}

#[test]
fn a_secret_line_is_kept_for_no_up_and_down() {
    let mut line = Line::default();
    assert_eq!(typed(&mut line, b"plain\r"), [Done::Line("plain".into())]);
    line.secret = true;
    assert_eq!(
        typed(&mut line, b" hunter2 \r"),
        [Done::Line(" hunter2 ".into())]
    );
    // Up while a secret is typed brings nothing back.
    assert_eq!(typed(&mut line, b"\x1b[A\r"), [Done::Line(String::new())]);
    line.secret = false;
    assert_eq!(typed(&mut line, b"\x1b[A\r"), [Done::Line("plain".into())]);
}
