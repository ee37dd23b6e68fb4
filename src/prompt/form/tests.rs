use super::super::tests::prompt;
use super::super::{Answer, Kind, Reply};
use super::*;

pub(crate) fn field(id: &str, required: bool, kind: FieldKind) -> Field {
    Field {
        id: id.into(),
        title: String::new(),
        description: String::new(),
        required,
        kind,
    }
}

pub(crate) fn text_field(id: &str, required: bool) -> Field {
    field(
        id,
        required,
        FieldKind::Text {
            format: None,
            pattern: None,
            min_length: None,
            max_length: None,
            default: None,
        },
    )
}

pub(crate) fn options(values: &[&str]) -> Vec<FieldOption> {
    values
        .iter()
        .map(|v| FieldOption {
            value: v.to_string(),
            label: String::new(),
            description: String::new(),
        })
        .collect()
}

fn form(fields: Vec<Field>) -> Form {
    Form {
        message: "Configure".into(),
        fields,
        url: None,
        cannot_show: None,
    }
    .into_checked()
    .unwrap()
}

fn values(pairs: &[(&str, FieldValue)]) -> FormValues {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn text(s: &str) -> FieldValue {
    FieldValue::Text(s.into())
}

#[test]
fn text_fields_check_length_pattern_and_format() {
    let f = form(vec![
        field(
            "name",
            true,
            FieldKind::Text {
                format: None,
                pattern: Some("^[a-z_][a-z0-9_]*$".into()),
                min_length: Some(2),
                max_length: Some(8),
                default: Some("Not Valid".into()),
            },
        ),
        field(
            "email",
            false,
            FieldKind::Text {
                format: Some(TextFormat::Email),
                pattern: None,
                min_length: None,
                max_length: None,
                default: None,
            },
        ),
    ]);
    // The invalid default was dropped.
    assert_eq!(f.fields[0].default_value(), None);
    assert_eq!(f.fields[1].title, "email");
    let check = |pairs: &[(&str, FieldValue)]| f.validate(values(pairs)).map_err(|e| e.to_string());
    assert_eq!(
        check(&[("name", text(" ab_1 "))]),
        Ok(values(&[("name", text("ab_1"))]))
    );
    assert_eq!(
        check(&[("name", text("a"))]),
        Err("name needs at least 2 characters".into())
    );
    assert_eq!(
        check(&[("name", text("abcdefghi"))]),
        Err("name takes at most 8 characters".into())
    );
    assert_eq!(
        check(&[("name", text("9ab"))]),
        Err("name does not match the pattern ^[a-z_][a-z0-9_]*$".into())
    );
    assert_eq!(check(&[]), Err("name is required".into()));
    assert_eq!(
        check(&[("name", text("ab")), ("email", text("a@b"))]),
        Err("email is not a valid email".into())
    );
    assert!(check(&[("name", text("ab")), ("email", text("a@b.example"))]).is_ok());
    // Empty optional text is "not given".
    assert_eq!(
        check(&[("name", text("ab")), ("email", text(" "))]),
        Ok(values(&[("name", text("ab"))]))
    );
    assert_eq!(
        check(&[("name", text("ab")), ("nope", text("x"))]),
        Err("the form has no field \"nope\"".into())
    );
    assert_eq!(
        check(&[("name", FieldValue::Number(1.0))]),
        Err("name takes a text value".into())
    );
}

#[test]
fn formats() {
    use TextFormat::*;
    for (format, good, bad) in [
        (Email, "a.b@c.example", "a b@c.example"),
        (Uri, "https://x.example/a?b", "not a uri"),
        (Uri, "urn:isbn:0451450523", "://x"),
        (Date, "2024-02-29", "2023-02-29"),
        (Date, "2026-11-23", "2026-13-01"),
        (DateTime, "2026-11-23T09:10:30Z", "2026-11-23 09:10:30"),
        (
            DateTime,
            "2026-11-23T09:10:30.5+01:00",
            "2026-11-23T25:00:00Z",
        ),
    ] {
        assert!(format_ok(format, good), "{good}");
        assert!(!format_ok(format, bad), "{bad}");
    }
}

#[test]
fn numbers_booleans_and_choices() {
    let f = form(vec![
        field(
            "port",
            true,
            FieldKind::Number {
                integer: true,
                minimum: Some(1024.0),
                maximum: Some(65535.0),
                default: Some(3000.0),
            },
        ),
        field(
            "ratio",
            false,
            FieldKind::Number {
                integer: false,
                minimum: Some(0.0),
                maximum: Some(1.0),
                default: None,
            },
        ),
        field(
            "log",
            false,
            FieldKind::Boolean {
                default: Some(true),
            },
        ),
        field(
            "color",
            true,
            FieldKind::Choice {
                options: vec![FieldOption {
                    value: "#f00".into(),
                    label: "Red\u{1b}[2J".into(),
                    description: "Warm\u{1b}[2J".into(),
                }],
                default: None,
            },
        ),
        field(
            "sizes",
            false,
            FieldKind::Multi {
                options: options(&["S", "M", "L"]),
                min_items: Some(1),
                max_items: Some(2),
                default: Some(vec!["S".into()]),
            },
        ),
    ]);
    assert_eq!(f.fields[3].kind, {
        FieldKind::Choice {
            options: vec![FieldOption {
                value: "#f00".into(),
                label: "Red␛[2J".into(),
                description: "Warm␛[2J".into(),
            }],
            default: None,
        }
    });
    let base = [
        ("port", FieldValue::Number(8080.0)),
        ("color", FieldValue::Choice("Red␛[2J".into())),
    ];
    // A label is answered with the agent's value.
    assert_eq!(
        f.validate(values(&base)).unwrap()["color"],
        FieldValue::Choice("#f00".into())
    );
    let with = |extra: (&str, FieldValue)| {
        let mut v = values(&base);
        v.insert(extra.0.into(), extra.1);
        f.validate(v).map_err(|e| e.to_string())
    };
    assert_eq!(
        with(("port", FieldValue::Number(80.5))),
        Err("port takes a whole number".into())
    );
    assert_eq!(
        with(("port", FieldValue::Number(80.0))),
        Err("port takes at least 1024".into())
    );
    assert_eq!(
        with(("port", FieldValue::Text("80".into()))),
        Err("port takes an integer value".into())
    );
    assert_eq!(
        with(("ratio", FieldValue::Number(1.5))),
        Err("ratio takes at most 1".into())
    );
    assert!(with(("ratio", FieldValue::Number(0.25))).is_ok());
    assert!(with(("log", FieldValue::Bool(false))).is_ok());
    assert_eq!(
        with(("color", FieldValue::Choice("Blue".into()))),
        Err("color \"Blue\" is not one of its options".into())
    );
    assert_eq!(
        with(("sizes", FieldValue::Choices(vec![]))),
        Err("sizes needs at least 1 choices".into())
    );
    assert_eq!(
        with((
            "sizes",
            FieldValue::Choices(vec!["S".into(), "M".into(), "L".into()])
        )),
        Err("sizes takes at most 2 choices".into())
    );
    assert_eq!(
        with(("sizes", FieldValue::Choices(vec!["S".into(), "S".into()]))),
        Err("sizes \"S\" is chosen twice".into())
    );
}

#[test]
fn bounds_and_unanswerable_fields_are_refused() {
    let many: Vec<String> = (0..10_001).map(|i| format!("o{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let err = Form {
        message: "m".into(),
        fields: vec![field(
            "big",
            true,
            FieldKind::Choice {
                options: options(&many),
                default: None,
            },
        )],
        url: None,
        cannot_show: None,
    }
    .into_checked()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "field options has 10001 entries (at most 10000)"
    );
    let fields = (0..100)
        .map(|i| text_field(&format!("f{i}"), false))
        .collect();
    let err = Form {
        message: "m".into(),
        fields,
        url: None,
        cannot_show: None,
    }
    .into_checked()
    .unwrap_err();
    assert_eq!(err.to_string(), "form fields has 100 entries (at most 64)");
    let bad_pattern = field(
        "p",
        true,
        FieldKind::Text {
            format: None,
            pattern: Some("(".into()),
            min_length: None,
            max_length: None,
            default: None,
        },
    );
    let err = Form {
        message: "m".into(),
        fields: vec![bad_pattern, text_field("p", false)],
        url: None,
        cannot_show: None,
    }
    .into_checked()
    .unwrap_err();
    assert_eq!(err.to_string(), "p has a pattern ask-lsp cannot use");
    let err = Form {
        message: "m".into(),
        fields: vec![text_field("p", false), text_field("p", true)],
        url: None,
        cannot_show: None,
    }
    .into_checked()
    .unwrap_err();
    assert_eq!(err.to_string(), "form has two fields with the same id");
}

#[test]
fn links_show_their_real_domain_and_only_http() {
    let link = |url: &str| {
        Form {
            message: "Sign in".into(),
            fields: vec![],
            url: Some(Link {
                url: url.into(),
                domain: String::new(),
            }),
            cannot_show: None,
        }
        .into_checked()
        .map(|f| f.url.unwrap().domain)
        .map_err(|e| e.to_string())
    };
    assert_eq!(
        link("https://GitHub.com/login/oauth?x=1"),
        Ok("github.com".into())
    );
    assert_eq!(
        link("https://github.com@evil.example:8443/x"),
        Ok("evil.example".into())
    );
    assert_eq!(link("http://[::1]:8080/"), Ok("::1".into()));
    // What a browser opens: WHATWG reads `\\` as the end of the host.
    assert_eq!(
        link("https://evil.example\\@accounts.google.com/"),
        Ok("evil.example".into())
    );
    assert_eq!(link("http://0x7f.1/"), Ok("127.0.0.1".into()));
    // Look-alikes in their ASCII form; a fullwidth dot is a dot.
    assert_eq!(
        link("https://\u{430}ccounts.google.com/"),
        Ok("xn--ccounts-1fg.google.com".into())
    );
    assert_eq!(
        link("https://accounts.google\u{ff0e}com/"),
        Ok("accounts.google.com".into())
    );
    assert_eq!(
        link("javascript:alert(1)"),
        Err("the link cannot be shown: only http and https links are shown".into())
    );
    assert_eq!(
        link("https://a.example/\u{202e}x"),
        Err("the link cannot be shown: it contains spaces or control characters".into())
    );
    let p = prompt(Kind::Form(Box::new(Form {
        message: "Sign in".into(),
        fields: vec![],
        url: Some(Link {
            url: "https://a.example/".into(),
            domain: String::new(),
        }),
        cannot_show: None,
    })))
    .into_checked()
    .unwrap();
    assert!(
        p.validate(Reply::Answer(Answer::Form(FormValues::new())))
            .is_ok()
    );
    // A link without a message is named by its domain, never "".
    let Kind::Form(mut form) = p.kind.clone() else {
        unreachable!()
    };
    form.message.clear();
    assert_eq!(form.name(), "a.example");
    assert!(
        p.validate(Reply::Answer(Answer::Form(values(&[("x", text("y"))]))))
            .is_err()
    );
}
