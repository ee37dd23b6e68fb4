//! The message catalogue: every sentence ask-lsp writes for a person, by
//! key, in English (the source and the fallback) and Simplified Chinese.
//! The catalogues are `locales/<locale>.toml` (flat `key = "text"` lines,
//! a subset of TOML), embedded in the binary and parsed once; a text names
//! its values as `{name}`. [`tr!`] looks a key up in the locale in force.
//!
//! Not translated: agent text, protocol ids and JSON keys, logs, and text
//! sent to the agent (the model reads it): those never pass through here.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::{Display, Write as _};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// A language ask-lsp speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locale {
    En,
    ZhCn,
}

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::En, Locale::ZhCn];

    /// A locale tag as people and editors write it (`zh_CN.UTF-8`,
    /// `zh-Hans-SG`, `en-US`, `C`): Simplified Chinese tags are
    /// [`Locale::ZhCn`], anything else English (there is no Traditional
    /// catalogue yet).
    pub fn from_tag(tag: &str) -> Locale {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let tag = tag.split(['.', '@']).next().unwrap_or_default();
        match tag {
            "zh" | "zh-cn" | "zh-sg" | "zh-hans" => Locale::ZhCn,
            _ if tag.starts_with("zh-hans-") => Locale::ZhCn,
            _ => Locale::En,
        }
    }

    /// The first tag that says something, in order of precedence (an
    /// explicit setting, the editor's language, the environment); English
    /// when none does. An empty tag (VS Code's `askLsp.locale: ""`) passes
    /// the choice on.
    pub fn choose<'a>(tags: impl IntoIterator<Item = Option<&'a str>>) -> Locale {
        tags.into_iter()
            .flatten()
            .find(|tag| !tag.trim().is_empty())
            .map_or(Locale::En, Locale::from_tag)
    }

    fn file(self) -> &'static str {
        match self {
            Locale::En => include_str!("../../locales/en.toml"),
            Locale::ZhCn => include_str!("../../locales/zh-CN.toml"),
        }
    }
}

// One locale for the whole process rather than a value passed down: a
// process serves one editor (or one terminal), and the words are chosen in
// every face and in errors' texts far from where the locale is known. An
// atomic rather than a `OnceLock` because the LSP face learns it at
// `initialize` and `didChangeConfiguration` may change it.
static CURRENT: AtomicU8 = AtomicU8::new(0);

/// Sets the language every later sentence is written in.
pub fn set_locale(locale: Locale) {
    CURRENT.store(locale as u8, Ordering::Relaxed);
}

thread_local! {
    /// [`in_locale`]'s language, on this thread only.
    static OVERRIDE: Cell<Option<Locale>> = const { Cell::new(None) };
}

/// The language in force.
pub fn locale() -> Locale {
    OVERRIDE
        .get()
        .unwrap_or(match CURRENT.load(Ordering::Relaxed) {
            1 => Locale::ZhCn,
            _ => Locale::En,
        })
}

/// `words()` written in `locale`, whatever is in force: to recognise text
/// ask-lsp sent before the language changed (a button's title).
pub fn in_locale<T>(locale: Locale, words: impl FnOnce() -> T) -> T {
    struct Restore(Option<Locale>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.set(self.0);
        }
    }
    let _restore = Restore(OVERRIDE.replace(Some(locale)));
    words()
}

type Catalogue = HashMap<String, String>;

fn catalogue(locale: Locale) -> &'static Catalogue {
    static CATALOGUES: OnceLock<Vec<Catalogue>> = OnceLock::new();
    let all = CATALOGUES.get_or_init(|| {
        Locale::ALL
            .iter()
            // Embedded and checked by the tests below: not input.
            .map(|l| parse(l.file()).expect("an embedded catalogue parses"))
            .collect()
    });
    &all[locale as usize]
}

/// `key`'s text in the locale in force, with `args` in its `{name}`s.
pub fn lookup(key: &str, args: &[(&str, &dyn Display)]) -> String {
    tr_in(locale(), key, args)
}

/// `key`'s text in `locale` (English where that lacks it; the key itself
/// where English does, which the tests rule out).
pub fn tr_in(locale: Locale, key: &str, args: &[(&str, &dyn Display)]) -> String {
    let text = catalogue(locale)
        .get(key)
        .or_else(|| catalogue(Locale::En).get(key))
        .map_or(key, String::as_str);
    fill(text, args)
}

/// A catalogue sentence: `tr!("key")`, `tr!("key", name = value, …)`.
macro_rules! tr {
    ($key:literal) => {
        $crate::present::i18n::lookup($key, &[])
    };
    ($key:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::present::i18n::lookup(
            $key,
            &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),+],
        )
    };
}
pub(crate) use tr;

/// `text` with each `{name}` replaced by its value; an unknown name stays
/// as written.
fn fill(text: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after
            .find('}')
            .and_then(|close| Some((close, args.iter().find(|(n, _)| *n == &after[..close])?)));
        match value {
            Some((close, (_, value))) => {
                let _ = write!(out, "{value}");
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    debug_assert!(
        placeholders(text).all(|p| args.iter().any(|(n, _)| *n == p)),
        "a placeholder of {text:?} has no value"
    );
    out
}

/// The `{name}`s of a text.
fn placeholders(text: &str) -> impl Iterator<Item = &str> {
    text.split('{').skip(1).filter_map(|part| {
        let name = &part[..part.find('}')?];
        (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then_some(name)
    })
}

/// Reads `key = "text"` lines (`#` comments, blank lines; escapes `\"`,
/// `\\`, `\n`, `\t`, `\uXXXX`).
fn parse(file: &str) -> Result<Catalogue, String> {
    let mut catalogue = Catalogue::new();
    for (number, line) in file.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}", number + 1);
        let (key, value) = line.split_once('=').ok_or_else(|| bad("no `=`"))?;
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            return Err(bad("a key is letters, digits, `_`, `-` and `.`"));
        }
        let value = value
            .trim()
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .ok_or_else(|| bad("the text is one quoted string"))?;
        let text = unescape(value).map_err(|why| bad(&why))?;
        if catalogue.insert(key.to_owned(), text).is_some() {
            return Err(bad(&format!("{key} is there twice")));
        }
    }
    Ok(catalogue)
}

fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Err("an unescaped `\"` inside the text".into()),
            '\\' => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let c = u32::from_str_radix(&hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("bad escape \\u{hex}"))?;
                    out.push(c);
                }
                other => return Err(format!("unknown escape \\{}", other.unwrap_or(' '))),
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

/// For the wording tests: `zh` translates `en` — it differs, holds Chinese
/// characters, leaves no `{name}` unfilled and reads unlike every text
/// already in `seen`.
#[cfg(test)]
pub(crate) fn assert_translated(en: &str, zh: &str, seen: &mut std::collections::BTreeSet<String>) {
    assert_ne!(zh, en, "not translated");
    assert!(
        zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "{en}: {zh}"
    );
    let unfilled = zh.split('{').skip(1).any(|after| {
        after
            .split_once('}')
            .is_some_and(|(name, _)| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
    });
    assert!(!unfilled, "{en}: {zh}");
    assert!(seen.insert(zh.to_owned()), "two texts read the same: {zh}");
}

#[cfg(test)]
#[path = "i18n_tests.rs"]
mod tests;
