//! The plain text of a prompt, for every face that shows it as text (plain
//! LSP messages, the terminal): a question with its options, a permission
//! with what it allows, a form field's hint, a value as a person reads it, a
//! link with where it leads, a permission choice as a button names it.

use super::i18n::tr;
use super::invalid::prompt_error;
use std::borrow::Cow;

use crate::prompt::{
    ChoiceLabel, Effect, Field, FieldKind, FieldValue, Form, Link, Permission, PermissionChoice,
    PermissionTitle, PromptError, Question, TitleName,
};
use crate::text::{DISPLAY_MESSAGE_CHARS, for_display, one_line};

/// How options are laid out: as buttons beside the text (plain LSP), or
/// numbered for typing (the terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Buttons,
    Numbered,
}

/// Which of `total` (only said when there are several).
fn position(text: &mut String, index: usize, total: usize, layout: Layout) {
    if total > 1 {
        match layout {
            Layout::Buttons => text.push_str(&tr!("text.position", n = index + 1, total = total)),
            Layout::Numbered => text.push_str(&format!("({}/{total}) ", index + 1)),
        }
    }
}

/// An option (or choice) line, with its description.
fn option_line(text: &mut String, n: usize, label: &str, description: &str, layout: Layout) {
    match layout {
        Layout::Buttons => text.push_str(&format!("\n  {label}")),
        Layout::Numbered => text.push_str(&format!("\n  {}. {label}", n + 1)),
    }
    if !description.is_empty() {
        match layout {
            Layout::Buttons => text.push_str(&format!(": {description}")),
            Layout::Numbered => text.push_str(&format!(" — {description}")),
        }
    }
}

/// Question `index` of `total`: its header, text and options.
pub(crate) fn question(
    text: &mut String,
    question: &Question,
    index: usize,
    total: usize,
    layout: Layout,
) {
    position(text, index, total, layout);
    let header = question_header(question);
    if !header.is_empty() {
        text.push_str(&format!("[{header}] "));
    }
    text.push_str(&question_text(question));
    for (n, option) in question.options.iter().enumerate() {
        option_line(text, n, &option.label, &option.description, layout);
    }
}

/// A question's header: the agent's as received, or ask-lsp's on its
/// stand-in for questions it cannot show.
pub(crate) fn question_header(question: &Question) -> Cow<'_, str> {
    match &question.cannot_show {
        None => Cow::Borrowed(&question.header),
        Some(_) => Cow::Owned(tr!("stand_in.header")),
    }
}

/// A question's text: the agent's as received, or why ask-lsp's stand-in
/// stands in and what can still be done.
pub(crate) fn question_text(question: &Question) -> Cow<'_, str> {
    match &question.cannot_show {
        None => Cow::Borrowed(&question.text),
        Some(why) if question.custom => {
            Cow::Owned(tr!("stand_in.question_typed", reason = reason(why)))
        }
        Some(why) => Cow::Owned(tr!("stand_in.question", reason = reason(why))),
    }
}

/// The header, else the text ([`Question::name`] in the person's language).
pub(crate) fn question_name(question: &Question) -> Cow<'_, str> {
    match question.cannot_show {
        None => Cow::Borrowed(question.name()),
        Some(_) => question_header(question),
    }
}

/// A form's message: the agent's as received, or why ask-lsp's stand-in
/// stands in.
pub(crate) fn form_message(form: &Form) -> Cow<'_, str> {
    match &form.cannot_show {
        None => Cow::Borrowed(&form.message),
        Some(why) => Cow::Owned(tr!("stand_in.form", reason = reason(why))),
    }
}

/// A stand-in's title ([`TitleName::CannotShow`]): a question's header, a
/// form's message.
///
/// [`TitleName::CannotShow`]: crate::prompt::TitleName::CannotShow
fn stand_in_title(form: bool, why: &PromptError) -> String {
    match form {
        false => tr!("stand_in.header"),
        true => tr!("stand_in.form", reason = reason(why)),
    }
}

/// Why a prompt cannot be shown, bounded for a sentence.
fn reason(why: &PromptError) -> Cow<'static, str> {
    Cow::Owned(for_display(&prompt_error(why), DISPLAY_MESSAGE_CHARS).into_owned())
}

/// A permission: what it asks, the whole command, every pattern, the diff.
pub(crate) fn permission(text: &mut String, permission: &Permission) {
    text.push_str(&tr!(
        "text.permission",
        action = permission.action,
        title = permission_title(permission)
    ));
    if let Some(command) = &permission.command {
        text.push_str(&format!("\n  $ {command}"));
    }
    for pattern in &permission.patterns {
        text.push_str(&tr!("text.pattern", pattern = pattern));
    }
    if let Some(diff) = &permission.diff {
        text.push_str(&format!("\n{diff}"));
    }
}

/// Form field `index` of `total`'s position, as [`question`] says it.
pub(crate) fn field_position(text: &mut String, index: usize, total: usize, layout: Layout) {
    position(text, index, total, layout);
}

/// A field's options, as [`question`] lists a question's.
pub(crate) fn field_options(text: &mut String, field: &Field, layout: Layout) {
    // Buttons give a choice's options; a multiple choice is typed.
    let options = match (&field.kind, layout) {
        (FieldKind::Choice { options, .. }, _)
        | (FieldKind::Multi { options, .. }, Layout::Numbered) => options.as_slice(),
        _ => &[],
    };
    for (n, option) in options.iter().enumerate() {
        if layout == Layout::Buttons && option.description.is_empty() {
            continue; // the button says it all
        }
        option_line(text, n, &option.label, &option.description, layout);
    }
}

/// A link form as text: ask-lsp's own lines (the host a browser opens, any
/// warning about it, the whole URL) come first, and every line of the
/// agent's message after them is quoted with `│`, so that nothing the agent
/// writes can pass for a `Domain:` line of ask-lsp's.
pub(crate) fn link(message: &str, link: &Link) -> String {
    let mut text = tr!("text.link", domain = link.domain);
    if let Some(warning) = link_warning(link) {
        text.push_str(&format!("\n  ⚠ {warning}"));
    }
    text.push_str(&format!("\n  URL: {}", link.url));
    if !message.is_empty() {
        text.push_str(&tr!("text.agent_message"));
        for line in message.lines() {
            text.push_str("\n  │");
            if !line.is_empty() {
                text.push_str(&format!(" {line}"));
            }
        }
    }
    text
}

/// Why a link's host deserves a second look, in the person's language.
pub(crate) fn link_warning(link: &Link) -> Option<String> {
    let warning = link.warning()?;
    let written = warning
        .written_host
        .map(|written| tr!("link.written_host", written = written, domain = link.domain));
    let internationalised = warning.internationalised.map(|idn| {
        let mixed = idn.mixed_scripts.map_or(String::new(), |(a, b)| {
            tr!("link.mixed_scripts", a = a, b = b)
        });
        tr!(
            "link.internationalised",
            domain = link.domain,
            shown = idn.shown,
            mixed = mixed
        )
    });
    let reasons: Vec<String> = written.into_iter().chain(internationalised).collect();
    Some(tr!(
        "link.check_host",
        reasons = reasons.join(&tr!("link.separator"))
    ))
}

/// What a field takes, in words: its kind and bounds.
pub(crate) fn field_hint(field: &Field) -> String {
    let mut parts: Vec<String> = vec![field_kind(&field.kind)];
    match &field.kind {
        FieldKind::Text {
            format,
            pattern,
            min_length,
            max_length,
            ..
        } => {
            parts.extend(format.map(|f| f.name().to_owned()));
            parts.extend(min_length.map(|n| tr!("hint.min_chars", n = n)));
            parts.extend(max_length.map(|n| tr!("hint.max_chars", n = n)));
            parts.extend(
                pattern
                    .as_ref()
                    .map(|p| tr!("hint.matching", pattern = one_line(p))),
            );
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            parts.extend(minimum.map(|n| tr!("hint.at_least", n = n)));
            parts.extend(maximum.map(|n| tr!("hint.at_most", n = n)));
        }
        FieldKind::Multi {
            min_items,
            max_items,
            ..
        } => {
            parts.extend(min_items.map(|n| tr!("hint.at_least", n = n)));
            parts.extend(max_items.map(|n| tr!("hint.at_most", n = n)));
        }
        FieldKind::Boolean { .. } | FieldKind::Choice { .. } => {}
    }
    if field.required {
        parts.push(tr!("hint.required"));
    }
    parts.join(&tr!("hint.separator"))
}

/// A field's kind in words.
fn field_kind(kind: &FieldKind) -> String {
    match kind {
        FieldKind::Text { .. } => tr!("hint.kind.text"),
        FieldKind::Number { integer: true, .. } => tr!("hint.kind.integer"),
        FieldKind::Number { .. } => tr!("hint.kind.number"),
        FieldKind::Boolean { .. } => tr!("hint.kind.boolean"),
        FieldKind::Choice { .. } => tr!("hint.kind.choice"),
        FieldKind::Multi { .. } => tr!("hint.kind.multi"),
    }
}

/// A value as a person reads it: an option by its label, a yes/no as the
/// layout answers it (a button's word, or the letter typed).
pub(crate) fn value(value: &FieldValue, field: &Field, layout: Layout) -> String {
    let label = |v: &str| field.option(v).map_or(v, |o| o.label.as_str()).to_owned();
    match (value, layout) {
        (FieldValue::Text(t), _) => t.clone(),
        (FieldValue::Number(n), _) => n.to_string(),
        (FieldValue::Bool(true), Layout::Buttons) => tr!("value.yes"),
        (FieldValue::Bool(false), Layout::Buttons) => tr!("value.no"),
        (FieldValue::Bool(true), Layout::Numbered) => "y".into(),
        (FieldValue::Bool(false), Layout::Numbered) => "n".into(),
        (FieldValue::Choice(c), _) => label(c),
        (FieldValue::Choices(cs), _) => cs
            .iter()
            .map(|c| label(c))
            .collect::<Vec<_>>()
            .join(&tr!("hint.separator")),
    }
}

/// A permission choice as a plain button or menu entry names: what it does
/// in ask-lsp's words, then the agent's label where that does not already
/// start with them (an ACP agent may call an `allow_once` option "Reject").
pub(crate) fn choice_title(choice: &PermissionChoice) -> String {
    match &choice.label {
        ChoiceLabel::Agent(label) => {
            let does = effect(choice.effect);
            match label.starts_with(&does) {
                true => label.clone(),
                false => tr!("choice.title", does = does, label = label),
            }
        }
        ChoiceLabel::Effect { .. } | ChoiceLabel::Adds { .. } => choice_label(choice),
    }
}

/// A permission choice's label: the agent's as received, or ask-lsp's in
/// the person's language.
pub(crate) fn choice_label(choice: &PermissionChoice) -> String {
    match &choice.label {
        ChoiceLabel::Agent(label) => label.clone(),
        ChoiceLabel::Effect { patterns: None } => effect(choice.effect),
        ChoiceLabel::Effect {
            patterns: Some(patterns),
        } => tr!(
            "choice.with_patterns",
            does = effect(choice.effect),
            patterns = patterns
        ),
        ChoiceLabel::Adds { rules } => {
            tr!("choice.adds", does = effect(choice.effect), rules = rules)
        }
    }
}

/// A permission's title: the agent's as received, or ask-lsp's in the
/// person's language.
pub(crate) fn permission_title(permission: &Permission) -> String {
    title_words(&permission.action, &permission.title)
}

/// A [`Title`]'s name in the person's language: the agent's as received,
/// ask-lsp's worded.
///
/// [`Title`]: crate::prompt::Title
pub(crate) fn title_name(name: &TitleName) -> String {
    match name {
        TitleName::Agent(name) => name.clone(),
        TitleName::Permission { action, title } => title_words(action, title),
        TitleName::CannotShow { form, why } => stand_in_title(*form, why),
    }
}

/// [`permission_title`] from its parts, as a [`Title`] keeps them.
///
/// [`Title`]: crate::prompt::Title
pub(crate) fn title_words(action: &str, title: &PermissionTitle) -> String {
    match title {
        PermissionTitle::Agent(title) => title.clone(),
        PermissionTitle::Run(command) => tr!("permission.run", command = command),
        PermissionTitle::Edit(path) => tr!("permission.edit", path = path),
        PermissionTitle::Action(subject) => {
            tr!("permission.action", action = action, subject = subject)
        }
        PermissionTitle::Unnamed => tr!("permission.unnamed", action = action),
        PermissionTitle::CannotShow(why) => tr!("permission.cannot_show", reason = reason(why)),
        PermissionTitle::Tool { asker, tool } => {
            tr!("permission.tool", asker = asker, tool = tool)
        }
        PermissionTitle::RunCommand {
            asker,
            reason: Some(reason),
        } => tr!("permission.run_command_for", asker = asker, reason = reason),
        PermissionTitle::RunCommand {
            asker,
            reason: None,
        } => tr!("permission.run_command", asker = asker),
        PermissionTitle::NetworkAccess { asker } => tr!("permission.network", asker = asker),
    }
}

/// What a cut of long text hid, in the person's language (`text` cuts; the
/// wiring hands it these words): `… (+1,234 more characters)`.
pub(crate) fn cut_note(hidden: usize) -> String {
    match hidden {
        1 => tr!("cut.one"),
        n => tr!("cut.more", count = crate::text::thousands(n)),
    }
}

/// What a choice does, in ask-lsp's words.
fn effect(effect: Effect) -> String {
    match effect {
        Effect::AllowOnce => tr!("choice.allow_once"),
        Effect::AllowAlways => tr!("choice.allow_always"),
        Effect::RejectOnce => tr!("choice.reject"),
        Effect::RejectAlways => tr!("choice.reject_always"),
    }
}

/// What was decided when a person allowed the permission titled `title`,
/// in the past tense; `None` for a refusal.
pub(crate) fn allowed(effect: Effect, title: &str) -> Option<String> {
    match effect {
        Effect::AllowOnce => Some(tr!("choice.allowed_once", title = title)),
        Effect::AllowAlways => Some(tr!("choice.allowed_always", title = title)),
        Effect::RejectOnce | Effect::RejectAlways => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::Choice;

    #[test]
    fn a_choice_says_what_it_does_before_the_agents_label() {
        let choice = |label: ChoiceLabel, effect| PermissionChoice {
            id: "c".into(),
            label,
            effect,
        };
        let always = choice(
            ChoiceLabel::Effect {
                patterns: Some("git *".into()),
            },
            Effect::AllowAlways,
        );
        assert_eq!(choice_title(&always), "Allow always (git *)");
        assert_eq!(choice_label(&always), "Allow always (git *)");
        let proceed = choice("Yes, proceed".into(), Effect::AllowOnce);
        assert_eq!(choice_title(&proceed), "Allow once: Yes, proceed");
        assert_eq!(choice_label(&proceed), "Yes, proceed");
        let agents = choice("Allow once".into(), Effect::AllowOnce);
        assert_eq!(choice_title(&agents), "Allow once");
        assert_eq!(choice_label(&agents), "Allow once");
        // An agent's words stay its own in every language.
        use crate::present::i18n::{Locale, in_locale};
        in_locale(Locale::ZhCn, || {
            assert_eq!(choice_label(&agents), "Allow once");
            assert_eq!(choice_label(&always), "始终允许（git *）");
        });
    }

    #[test]
    fn an_agents_title_stays_as_received_and_ask_lsps_is_worded() {
        use crate::present::i18n::{Locale, in_locale};
        let permission = |title: PermissionTitle| Permission {
            action: "bash".into(),
            title,
            patterns: Vec::new(),
            command: None,
            diff: None,
            choices: Vec::new(),
            raw_command: None,
            raw_patterns: Vec::new(),
        };
        let agents = permission("Run `rm -rf build/`".into());
        let ours = permission(PermissionTitle::Run("rm -rf build/".into()));
        let unnamed = permission(PermissionTitle::Unnamed);
        assert_eq!(permission_title(&ours), "Run rm -rf build/");
        assert_eq!(permission_title(&ours), ours.english_title());
        in_locale(Locale::ZhCn, || {
            assert_eq!(permission_title(&agents), "Run `rm -rf build/`");
            assert_eq!(permission_title(&ours), "运行 rm -rf build/");
            assert_eq!(permission_title(&unnamed), "权限：bash");
        });
    }

    #[test]
    fn a_hooks_title_is_worded_around_the_agents_words_and_english_stays_for_logs() {
        use crate::present::i18n::{Locale, in_locale};
        use crate::prompt::Asker;
        let asker = Asker::Codex;
        let titles = [
            (
                PermissionTitle::Tool {
                    asker: Asker::ClaudeCode,
                    tool: "Read".into(),
                },
                "Claude Code asks to use Read",
                "Claude Code 请求使用 Read",
            ),
            (
                PermissionTitle::RunCommand {
                    asker,
                    reason: Some("Clean up".into()),
                },
                "Codex asks to run a command: Clean up",
                "Codex 请求运行命令：Clean up",
            ),
            (
                PermissionTitle::RunCommand {
                    asker,
                    reason: None,
                },
                "Codex asks to run a command",
                "Codex 请求运行命令",
            ),
            (
                PermissionTitle::NetworkAccess { asker },
                "Codex asks for network access",
                "Codex 请求访问网络",
            ),
        ];
        for (title, english, chinese) in titles {
            let named = crate::prompt::Title {
                name: crate::prompt::TitleName::Permission {
                    action: "Bash".into(),
                    title: title.clone(),
                },
                more: 0,
            };
            assert_eq!(
                in_locale(Locale::En, || title_words("Bash", &title)),
                english
            );
            assert_eq!(named.english(), english);
            in_locale(Locale::ZhCn, || {
                assert_eq!(title_words("Bash", &title), chinese);
                assert_eq!(super::super::who::title(&named), chinese);
                // Below the presentation floor, still English.
                assert_eq!(named.english(), english);
            });
        }
    }

    #[test]
    fn a_link_whose_text_hides_its_host_is_warned_about() {
        let warning = |url: &str| {
            link_warning(&Link {
                url: url.into(),
                domain: crate::prompt::domain(url).unwrap(),
            })
        };
        for plain in [
            "https://github.com/login",
            "https://GitHub.com:443/x",
            "http://localhost:8080/x?a=b#c",
            "http://[::1]:8080/",
        ] {
            assert_eq!(warning(plain), None, "{plain}");
        }
        assert_eq!(
            warning("https://evil.example\\@accounts.google.com/").as_deref(),
            Some(
                "Check the host: the link shows \"evil.example\\@accounts.google.com\" where its host goes, but a browser opens evil.example."
            )
        );
        assert_eq!(
            warning("https://github.com@evil.example:8443/x").as_deref(),
            Some(
                "Check the host: the link shows \"github.com@evil.example:8443\" where its host goes, but a browser opens evil.example."
            )
        );
        assert!(
            warning("https://accounts.google\u{ff0e}com/")
                .unwrap()
                .contains("shows \"accounts.google\u{ff0e}com\" where its host goes")
        );
        assert_eq!(
            warning("https://\u{430}ccounts.google.com/").as_deref(),
            Some(
                "Check the host: xn--ccounts-1fg.google.com is an internationalised name, shown by browsers as \"\u{430}ccounts.google.com\", mixing Cyrillic and Latin letters in one name (a look-alike?)."
            )
        );
        let punycode = warning("https://xn--bcher-kva.example/").unwrap();
        assert_eq!(
            punycode,
            "Check the host: xn--bcher-kva.example is an internationalised name, shown by browsers as \"bücher.example\"."
        );
        let zh = crate::present::i18n::in_locale(crate::present::i18n::Locale::ZhCn, || {
            warning("https://\u{430}ccounts.google.com/")
        });
        assert_eq!(
            zh.as_deref(),
            Some(
                "请检查主机：xn--ccounts-1fg.google.com 是国际化域名，浏览器显示为“\u{430}ccounts.google.com”，在同一名称中混用了 Cyrillic 和 Latin 字母（可能是仿冒域名？）。"
            )
        );
    }

    #[test]
    fn one_question_renderer_lays_options_out_for_buttons_or_typing() {
        let question = Question {
            header: "Database".into(),
            text: "Which?".into(),
            options: ["Postgres", "SQLite"]
                .map(|label| Choice {
                    label: label.into(),
                    description: if label == "SQLite" { "Embedded" } else { "" }.into(),
                    value: label.into(),
                })
                .into(),
            multiple: false,
            custom: true,
            cannot_show: None,
        };
        let mut buttons = String::new();
        super::question(&mut buttons, &question, 0, 2, Layout::Buttons);
        assert_eq!(
            buttons,
            "(1 of 2) [Database] Which?\n  Postgres\n  SQLite: Embedded"
        );
        let mut numbered = String::new();
        super::question(&mut numbered, &question, 1, 2, Layout::Numbered);
        assert_eq!(
            numbered,
            "(2/2) [Database] Which?\n  1. Postgres\n  2. SQLite — Embedded"
        );
    }

    #[test]
    fn a_cut_says_what_it_hid_in_the_persons_language() {
        use crate::present::i18n::{Locale, in_locale};
        use crate::prompt::Title;
        let en = |hidden| in_locale(Locale::En, || cut_note(hidden));
        assert_eq!(en(1), "… (+1 more character)");
        assert_eq!(en(1_234), "… (+1,234 more characters)");
        assert_eq!(en(1_234_567), crate::text::english_cut_note(1_234_567));
        let zh = |hidden| in_locale(Locale::ZhCn, || cut_note(hidden));
        assert_eq!(zh(1), "…（另有 1 个字符）");
        assert_eq!(zh(1_234_567), "…（另有 1,234,567 个字符）");
        // Cut below this floor, in these words once the wiring hands them
        // over; what logs and `--json` read stays English.
        crate::text::set_cut_note(cut_note);
        let long = Title::from("é".repeat(100).as_str());
        let zh_title = in_locale(Locale::ZhCn, || crate::present::who::title(&long));
        assert_eq!(zh_title, "é".repeat(80) + "…（另有 20 个字符）");
        let english = in_locale(Locale::ZhCn, || long.english());
        assert_eq!(english, "é".repeat(80) + "… (+20 more characters)");
        let id = "\u{1b}".to_owned() + &"x".repeat(49);
        in_locale(Locale::ZhCn, || {
            let shown = crate::text::for_display(&id, 40);
            assert_eq!(
                shown,
                "␛".to_owned() + &"x".repeat(39) + "…（另有 10 个字符）"
            );
            let for_agent = crate::text::for_display_in_english(&id, 40);
            assert_eq!(
                for_agent,
                "␛".to_owned() + &"x".repeat(39) + "… (+10 more characters)"
            );
        });
    }

    #[test]
    fn a_stand_in_says_why_in_the_persons_language() {
        use crate::present::i18n::{Locale, in_locale};
        use crate::present::who;
        use crate::prompt::{Kind, Link, Origin, Prompt};
        let stand_in = |kind| {
            let prompt = Prompt {
                id: "que_1".into(),
                session: "ses_1".into(),
                directory: None,
                origin: Origin::default(),
                kind,
            };
            let refused = prompt.checked().unwrap_err();
            (refused.error, *refused.stand_in.expect("a stand-in"))
        };
        let huge = Question {
            header: "Huge".into(),
            text: "q".repeat(8_001),
            options: vec![],
            multiple: false,
            custom: true,
            cannot_show: None,
        };
        let (error, typed) = stand_in(Kind::Questions(vec![huge]));
        let Kind::Questions(questions) = &typed.kind else {
            panic!("not questions")
        };
        let mut en = String::new();
        question(&mut en, &questions[0], 0, 1, Layout::Buttons);
        assert_eq!(
            en,
            "[Cannot be shown] This question cannot be shown here (question is 8001 characters long (at most 8000)). Reject it, or type an answer."
        );
        assert_eq!(who::title(&typed.title()), "Cannot be shown");
        in_locale(Locale::ZhCn, || {
            let reason = prompt_error(&error);
            assert!(reason.contains("8001"), "{reason}");
            assert_eq!(question_header(&questions[0]), "无法显示");
            assert_eq!(
                question_text(&questions[0]),
                format!("此问题无法在此显示（{reason}）。请拒绝它，或输入回答。")
            );
            assert_eq!(who::title(&typed.title()), "无法显示");
        });
        assert_eq!(typed.title().english(), "Cannot be shown");

        let form = Form {
            message: "m".into(),
            fields: Vec::new(),
            url: Some(Link {
                url: "javascript:alert(1)".into(),
                domain: String::new(),
            }),
            cannot_show: None,
        };
        let (error, declined) = stand_in(Kind::Form(Box::new(form)));
        let Kind::Form(form) = &declined.kind else {
            panic!("not a form")
        };
        assert_eq!(
            form_message(form),
            "A form that cannot be shown here (the link cannot be shown: only http and https links are shown); it can only be declined"
        );
        in_locale(Locale::ZhCn, || {
            let reason = prompt_error(&error);
            assert_eq!(
                form_message(form),
                format!("无法在此显示的表单（{reason}）；只能拒绝")
            );
        });
    }
}
