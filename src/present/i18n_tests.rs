use std::collections::BTreeSet;
use std::path::Path;

use super::*;

#[test]
fn tags_normalise_as_every_surface_agrees() {
    let table = [
        ("zh_CN.UTF-8@x", Locale::ZhCn),
        ("zh_CN.UTF-8", Locale::ZhCn),
        ("zh", Locale::ZhCn),
        ("ZH-cn", Locale::ZhCn),
        ("zh-SG", Locale::ZhCn),
        ("zh-Hans", Locale::ZhCn),
        ("zh-Hans-CN", Locale::ZhCn),
        ("zh_Hans_SG", Locale::ZhCn),
        ("zh-TW", Locale::En),
        ("zh-HK", Locale::En),
        ("zh-Hant", Locale::En),
        ("zh-Hant-TW", Locale::En),
        ("zhx", Locale::En),
        ("en", Locale::En),
        ("en_US.UTF-8", Locale::En),
        ("C", Locale::En),
        ("C.UTF-8", Locale::En),
        ("POSIX", Locale::En),
        ("", Locale::En),
        ("fr", Locale::En),
        ("@@..__", Locale::En),
    ];
    for (tag, expected) in table {
        assert_eq!(Locale::from_tag(tag), expected, "{tag:?}");
    }
}

#[test]
fn the_first_tag_that_says_something_wins() {
    assert_eq!(
        Locale::choose([Some("en"), Some("zh-CN"), Some("zh_CN.UTF-8")]),
        Locale::En
    );
    assert_eq!(
        Locale::choose([Some(""), None, Some(" "), Some("zh_CN.UTF-8")]),
        Locale::ZhCn
    );
    // An explicit unknown language is English, not the next candidate.
    assert_eq!(Locale::choose([Some("fr"), Some("zh-CN")]), Locale::En);
    assert_eq!(Locale::choose([None, None]), Locale::En);
}

#[test]
fn placeholders_are_filled_by_name() {
    assert_eq!(
        fill("{a} and {b} {", &[("a", &1), ("b", &"x")]),
        "1 and x {"
    );
    assert_eq!(fill("{title}", &[("title", &"{title}")]), "{title}");
}

#[test]
fn catalogue_files_are_read_strictly() {
    assert!(parse("a = \"x\\n\\\"y\\u00e9\"").is_ok_and(|c| c["a"] == "x\n\"yé"));
    assert!(parse("a = x").is_err());
    assert!(parse("a = \"x\"\na = \"y\"").is_err());
    assert!(parse("a b = \"x\"").is_err());
    assert!(parse("a = \"x\\q\"").is_err());
}

/// Every key one catalogue has, the other has too, with the same
/// placeholders.
#[test]
fn every_catalogue_has_every_key_with_the_same_placeholders() {
    let en = parse(Locale::En.file()).expect("en parses");
    for locale in Locale::ALL {
        let other = parse(locale.file()).unwrap_or_else(|e| panic!("{locale:?}: {e}"));
        let missing: Vec<_> = en.keys().filter(|k| !other.contains_key(*k)).collect();
        let extra: Vec<_> = other.keys().filter(|k| !en.contains_key(*k)).collect();
        assert!(missing.is_empty(), "{locale:?} lacks {missing:?}");
        assert!(
            extra.is_empty(),
            "{locale:?} has keys English lacks: {extra:?}"
        );
        for (key, text) in &en {
            let ours: BTreeSet<_> = placeholders(text).collect();
            let theirs: BTreeSet<_> = placeholders(&other[key]).collect();
            assert_eq!(ours, theirs, "{locale:?} {key}: placeholders differ");
        }
    }
}

/// The keys the code looks up (`tr!("…"` and `tr_in(…, "…"`), read from
/// the source text.
fn keys_in_source() -> BTreeSet<String> {
    fn walk(dir: &Path, keys: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("src is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, keys);
            } else if path.extension().is_some_and(|e| e == "rs")
                // The macro's own definition and examples.
                && !path.ends_with("present/i18n.rs")
                && !path.ends_with("present/i18n_tests.rs")
            {
                let text = std::fs::read_to_string(&path).expect("readable");
                let mut calls = text.split("tr!(");
                let mut before = calls.next().unwrap_or_default();
                for call in calls {
                    // `tr!(`, not `include_str!(`.
                    let own = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
                    before = call;
                    if let Some(rest) = call.trim_start().strip_prefix('"')
                        && own
                    {
                        let key = &rest[..rest.find('"').expect("a closed key")];
                        keys.insert(key.to_owned());
                    }
                }
            }
        }
    }
    let mut keys = BTreeSet::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut keys,
    );
    keys
}

#[test]
fn every_key_the_code_uses_exists_and_every_key_is_used() {
    let en = parse(Locale::En.file()).expect("en parses");
    let used = keys_in_source();
    assert!(used.len() > 50, "the scan finds the lookups: {used:?}");
    let unknown: Vec<_> = used.iter().filter(|k| !en.contains_key(*k)).collect();
    assert!(
        unknown.is_empty(),
        "looked up but not in en.toml: {unknown:?}"
    );
    let unused: Vec<_> = en.keys().filter(|k| !used.contains(*k)).collect();
    assert!(
        unused.is_empty(),
        "in en.toml but never looked up: {unused:?}"
    );
}

#[test]
fn a_key_falls_back_to_english_and_fills_in_chinese() {
    assert_eq!(tr_in(Locale::En, "plain.reject", &[]), "✗ Reject");
    assert_eq!(tr_in(Locale::ZhCn, "plain.reject", &[]), "✗ 拒绝");
    assert_eq!(
        tr_in(Locale::ZhCn, "sentence.answered", &[("title", &"T")]),
        "已回答“T”"
    );
}

#[test]
fn words_can_be_written_in_another_language_on_this_thread() {
    let before = locale();
    let zh = in_locale(Locale::ZhCn, || lookup("plain.reject", &[]));
    assert_eq!(zh, "✗ 拒绝");
    assert_eq!(locale(), before);
    assert_eq!(
        in_locale(Locale::ZhCn, || in_locale(Locale::En, locale)),
        Locale::En
    );
    assert_eq!(locale(), before);
}
