//! A session's title ("Fix the login bug"), as the server names the session
//! an agent asks from: what a person recognises, where the id is noise.

use crate::text;

/// How many characters of a session's title are shown (OpenCode's own
/// titles are under 50); a longer one is cut with its cut marked.
pub(crate) const SESSION_TITLE_CHARS: usize = 80;

/// A title ready to show: one line, neutralised and cut, with how much the
/// cut hid (worded where it is shown, in the person's language). It can
/// only be made by [`SessionTitle::new`], so a prompt never carries a raw
/// one; a backend makes it as it reads the title, before keeping it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionTitle(text::Cut<'static>);

impl SessionTitle {
    /// `None` for a title with nothing to show (empty or blank).
    pub fn new(raw: &str) -> Option<SessionTitle> {
        let cut = text::cut_for_display(raw, SESSION_TITLE_CHARS);
        (!cut.kept.trim().is_empty()).then(|| {
            SessionTitle(text::Cut {
                kept: cut.kept.into_owned().into(),
                hidden: cut.hidden,
            })
        })
    }

    /// The title, then `note` saying what the cut hid, if anything.
    pub fn shown(&self, note: impl FnOnce(usize) -> String) -> String {
        self.0.clone().noted(note).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_title_is_shown_neutralised_and_bounded() {
        let huge = format!("\u{1b}]0;pwned\u{7}Fix \u{202e}gol{}", "x".repeat(1 << 20));
        let title = SessionTitle::new(&huge).expect("a title");
        let shown = title.shown(text::english_cut_note);
        let shown = shown.as_str();
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{202e}'));
        assert!(shown.contains('␛') && shown.contains("⟨U+202E⟩"), "{shown}");
        assert!(
            shown.chars().count() < 200,
            "{} chars",
            shown.chars().count()
        );
        assert!(
            shown.contains("more characters"),
            "the cut is marked: {shown}"
        );
        assert!(SessionTitle::new(" \n ").is_none());
        // Legitimate scripts stay as written.
        let rtl = SessionTitle::new("תיקון באג 👩‍💻").unwrap();
        assert_eq!(rtl.shown(text::english_cut_note), "תיקון באג 👩‍💻");
    }
}
