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
            patterns: Some(crate::text::cut("git *", 200).into_owned()),
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
    // A command cut to fit the title says what it hid in the same language
    // (it was noted in English below the presentation).
    let long = "x".repeat(130);
    let cut = permission(PermissionTitle::Run(
        crate::text::cut(&long, 120).into_owned(),
    ));
    assert_eq!(
        cut.english_title(),
        format!("Run {}… (+10 more characters)", "x".repeat(120))
    );
    in_locale(Locale::ZhCn, || {
        assert_eq!(
            permission_title(&cut),
            format!("运行 {}…（另有 10 个字符）", "x".repeat(120))
        );
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
        secret: false,
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
    use crate::present::cut::{for_display, note};
    use crate::present::i18n::{Locale, in_locale};
    use crate::prompt::Title;
    let en = |hidden| in_locale(Locale::En, || note(hidden));
    assert_eq!(en(1), "… (+1 more character)");
    assert_eq!(en(1_234), "… (+1,234 more characters)");
    assert_eq!(en(1_234_567), crate::text::english_cut_note(1_234_567));
    let zh = |hidden| in_locale(Locale::ZhCn, || note(hidden));
    assert_eq!(zh(1), "…（另有 1 个字符）");
    assert_eq!(zh(1_234_567), "…（另有 1,234,567 个字符）");
    // `text` cuts and counts (no words, nothing set at start-up); this
    // floor words the note. What logs and `--json` read stays English.
    let long = Title::from("é".repeat(100).as_str());
    let zh_title = in_locale(Locale::ZhCn, || crate::present::who::title(&long));
    assert_eq!(zh_title, "é".repeat(80) + "…（另有 20 个字符）");
    let english = in_locale(Locale::ZhCn, || long.english());
    assert_eq!(english, "é".repeat(80) + "… (+20 more characters)");
    let id = "\u{1b}".to_owned() + &"x".repeat(49);
    in_locale(Locale::ZhCn, || {
        let cut = crate::text::cut_for_display(&id, 40);
        assert_eq!(cut.kept, "␛".to_owned() + &"x".repeat(39));
        assert_eq!(cut.hidden, 10);
        assert_eq!(
            for_display(&id, 40),
            "␛".to_owned() + &"x".repeat(39) + "…（另有 10 个字符）"
        );
        assert_eq!(
            crate::text::for_display(&id, 40),
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
        secret: false,
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

/// A refused permission's stand-in keeps its reject choices, their labels
/// cut to a label's length: the cut's note is in the person's language
/// (#45: it was English, added below the presentation floor).
#[test]
fn a_stand_ins_cut_choice_label_says_what_it_hid_in_the_persons_language() {
    use crate::present::i18n::{Locale, in_locale};
    use crate::prompt::{Kind, Origin, Prompt};
    let reject = PermissionChoice {
        id: "reject".into(),
        label: "拒".repeat(600).into(),
        effect: Effect::RejectOnce,
    };
    let prompt = Prompt {
        id: "per_1".into(),
        session: "ses_1".into(),
        directory: None,
        origin: Origin::default(),
        kind: Kind::Permission(Box::new(Permission {
            action: "bash".into(),
            title: PermissionTitle::Run("ls".into()),
            patterns: Vec::new(),
            command: None,
            diff: None,
            choices: vec![reject],
            raw_command: None,
            raw_patterns: Vec::new(),
        })),
    };
    let stand_in = *prompt.checked().unwrap_err().stand_in.expect("a stand-in");
    let Kind::Permission(permission) = &stand_in.kind else {
        panic!("not a permission")
    };
    let kept = "拒".repeat(500);
    in_locale(Locale::ZhCn, || {
        assert_eq!(
            choice_label(&permission.choices[0]),
            format!("{kept}…（另有 100 个字符）")
        );
    });
    assert_eq!(
        in_locale(Locale::En, || choice_label(&permission.choices[0])),
        format!("{kept}… (+100 more characters)")
    );
}
