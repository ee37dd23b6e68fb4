//! Cut text ([`crate::text::Cut`]) with its note in the person's language:
//! `text` cuts and counts, and knows no language; what a person reads here
//! says what the cut hid in their words.

use std::borrow::Cow;

use super::i18n::tr;
use crate::text;

/// What a cut of long text hid, in the person's language:
/// `… (+1,234 more characters)`.
pub(crate) fn note(hidden: usize) -> String {
    match hidden {
        1 => tr!("cut.one"),
        n => tr!("cut.more", count = text::thousands(n)),
    }
}

/// [`text::cut_for_display`], noted in the person's language.
pub(crate) fn for_display(input: &str, max_chars: usize) -> Cow<'_, str> {
    text::cut_for_display(input, max_chars).noted(note)
}

/// A cut a prompt keeps ([`text::Cut`]), noted in the person's language.
pub(crate) fn noted(cut: &text::Cut<'_>) -> String {
    cut.clone().noted(note).into_owned()
}
