//! Contract tests: upstream's shapes (tests/fixtures/opencode2/, each
//! fixture's source file and commit in its README) through this backend's
//! parser and mappings, so that a change here that drifts from upstream fails.

use serde_json::json;

use super::form::{FormInfo, Shape, form_answer, question_answer};
use super::wire::{ServerInfo, V2Event, listed, parse_event};
use crate::backends::net::sse::{SseDecoder, SseItem};
use crate::prompt::{
    Effect, FieldKind, FieldValue, FormValues, Kind, PermissionChoice, Prompt, TextFormat,
};

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/opencode2/",
            $name
        ))
    };
}

/// The form a `form.created` fixture carries, mapped and checked.
fn created(text: &str) -> (Prompt, Shape, Option<String>) {
    let V2Event::FormCreated(form, directory) = parse_event(text).expect("parses") else {
        panic!("not form.created");
    };
    let (prompt, shape) = form.into_prompt(directory.clone()).expect("showable");
    (
        prompt.into_checked().expect("within bounds"),
        shape,
        directory,
    )
}

#[test]
fn the_question_tools_form_becomes_questions_answered_under_their_keys() {
    let (prompt, shape, directory) = created(fixture!("question-form.created.json"));
    assert_eq!(directory.as_deref(), Some("/home/dev/shop"));
    assert_eq!(prompt.id, "frm_2086a1f3b001yT2kP9sLqWv3Nb");
    assert_eq!(prompt.session, "ses_2086a0c11ffeQ3xk7Ywd0pLm2R");
    assert_eq!(
        prompt.origin.tool_call.as_deref(),
        Some("toolu_01JYc9v3kq6bE4s2Wm8RtPzN")
    );
    let Kind::Questions(questions) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert_eq!(questions.len(), 2);
    assert_eq!(questions[0].header, "Database");
    assert_eq!(questions[0].text, "Which database should the service use?");
    assert_eq!(questions[0].options[0].label, "Postgres (Recommended)");
    assert_eq!(
        questions[0].options[0].description,
        "Already used by billing"
    );
    assert!(questions[0].custom && !questions[0].multiple);
    assert!(questions[1].multiple);
    let Shape::Questions(keys) = &shape else {
        panic!("{shape:?}");
    };
    assert_eq!(
        question_answer(
            keys,
            &[vec!["SQLite".into()], vec!["Lint".into(), "Unit".into()]]
        ),
        json!({"q0": "SQLite", "q1": ["Lint", "Unit"]})
    );
}

#[test]
fn an_mcp_elicitation_form_keeps_every_field_type_and_bound() {
    let (prompt, shape, _) = created(fixture!("mcp-elicitation-form.created.json"));
    assert_eq!(prompt.session, "global");
    let Kind::Form(form) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert_eq!(
        form.message,
        "github is requesting input\n\nWhich repository should the issue go to?"
    );
    let ids: Vec<&str> = form.fields.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["repo", "email", "priority", "draft", "labels"]);
    assert!(form.fields[0].required);
    assert!(
        matches!(&form.fields[0].kind, FieldKind::Choice { options, .. } if options.len() == 2)
    );
    assert!(matches!(
        form.fields[1].kind,
        FieldKind::Text {
            format: Some(TextFormat::Email),
            ..
        }
    ));
    assert_eq!(
        form.fields[2].kind,
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(5.0),
            default: Some(3.0)
        }
    );
    assert_eq!(
        form.fields[3].kind,
        FieldKind::Boolean {
            default: Some(false)
        }
    );
    assert!(matches!(
        &form.fields[4].kind,
        FieldKind::Multi {
            max_items: Some(2),
            ..
        }
    ));
    let Shape::Fields(keys) = &shape else {
        panic!("{shape:?}");
    };
    let values = FormValues::from([
        ("repo".to_owned(), FieldValue::Choice("infra".into())),
        ("priority".to_owned(), FieldValue::Number(4.0)),
        ("draft".to_owned(), FieldValue::Bool(true)),
        ("labels".to_owned(), FieldValue::Choices(vec!["bug".into()])),
    ]);
    assert_eq!(
        form_answer(keys, &values),
        json!({"repo": "infra", "priority": 4, "draft": true, "labels": ["bug"]})
    );
}

#[test]
fn links_are_shown_by_their_domain_in_both_upstream_shapes() {
    let (prompt, shape, _) = created(fixture!("mcp-url-elicitation.created.json"));
    let Kind::Form(form) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    let link = form.url.as_ref().expect("a link");
    assert_eq!(link.domain, "linear.app");
    assert_eq!(
        form.message,
        "linear is requesting input\n\nSign in to Linear to continue"
    );
    // The newer shape: an external field, acknowledged with `true`.
    assert!(matches!(shape, Shape::Link(Some(ref key)) if key == "elicitation"));

    let (prompt, shape, _) = created(fixture!("url-mode-form.created.json"));
    let Kind::Form(form) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert_eq!(form.url.as_ref().unwrap().domain, "deploy.example.com");
    assert!(matches!(shape, Shape::Link(None)));
}

#[test]
fn a_conditional_field_is_not_required_and_not_sent_while_inactive() {
    let (prompt, shape, _) = created(fixture!("conditional-form.created.json"));
    let Kind::Form(form) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert!(form.fields[0].required);
    assert!(!form.fields[1].required);
    let Shape::Fields(keys) = &shape else {
        panic!("{shape:?}");
    };
    let mut values = FormValues::from([
        ("confirm".to_owned(), FieldValue::Bool(true)),
        ("reason".to_owned(), FieldValue::Text("x".into())),
    ]);
    assert_eq!(form_answer(keys, &values), json!({"confirm": true}));
    values.insert("confirm".to_owned(), FieldValue::Bool(false));
    assert_eq!(
        form_answer(keys, &values),
        json!({"confirm": false, "reason": "x"})
    );
}

#[test]
fn settled_forms_and_v2_permission_events_are_read() {
    let id = "frm_2086a1f3b001yT2kP9sLqWv3Nb";
    assert!(matches!(
        parse_event(fixture!("form.replied.json")).unwrap(),
        V2Event::FormReplied { id: ref got } if got == id
    ));
    assert!(matches!(
        parse_event(fixture!("form.cancelled.json")).unwrap(),
        V2Event::FormCancelled { id: ref got } if got == id
    ));
    assert!(matches!(
        parse_event(fixture!("permission.v2.replied.json")).unwrap(),
        V2Event::PermissionReplied { ref id, rejected: true } if id == "per_2086a8160001Sd5f6GhJ7kLzXc"
    ));
}

#[test]
fn a_v2_permission_names_its_command_patterns_and_choices() {
    let V2Event::PermissionAsked(request, directory) =
        parse_event(fixture!("permission.v2.asked.json")).unwrap()
    else {
        panic!("not permission.v2.asked");
    };
    let prompt = request
        .into_prompt(directory)
        .into_checked()
        .expect("within bounds");
    assert_eq!(prompt.directory.as_deref(), Some("/home/dev/shop"));
    assert_eq!(
        prompt.origin.tool_call.as_deref(),
        Some("toolu_01Pq8Ws3Ed4Rf5Tg6Yh7Uj8I")
    );
    let Kind::Permission(permission) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert_eq!(permission.action, "bash");
    assert_eq!(permission.english_title(), "Run git push origin main");
    assert_eq!(permission.command.as_deref(), Some("git push origin main"));
    assert_eq!(permission.patterns, ["git push origin main"]);
    let labels: Vec<String> = permission
        .choices
        .iter()
        .map(PermissionChoice::english_label)
        .collect();
    let choices: Vec<(&str, &str, Effect)> = permission
        .choices
        .iter()
        .zip(&labels)
        .map(|(c, label)| (c.id.as_str(), label.as_str(), c.effect))
        .collect();
    assert_eq!(
        choices,
        [
            ("once", "Allow once", Effect::AllowOnce),
            ("always", "Allow always (git push *)", Effect::AllowAlways),
            ("reject", "Reject", Effect::RejectOnce),
        ]
    );
}

#[test]
fn a_listing_is_read_item_by_item() {
    let body = fixture!("form-request.list.json");
    let items = listed(body.as_bytes(), usize::MAX)
        .expect("a listing")
        .items;
    assert_eq!(items.len(), 2);
    let first: FormInfo = serde_json::from_str(items[0].get()).expect("a form");
    assert_eq!(first.id, "frm_2086a2b00001Lp8dN3kQ7rWs2E");
    // A field type this parser does not know fails that item alone.
    assert!(serde_json::from_str::<FormInfo>(items[1].get()).is_err());
    // Past the bound, items are counted, not kept.
    let bounded = listed(body.as_bytes(), 1).expect("a listing");
    assert_eq!((bounded.items.len(), bounded.left_out), (1, 1));
}

#[test]
fn only_opencode_2s_server_info_says_opencode_2() {
    let info = ServerInfo::from_answer(
        200,
        "application/json",
        fixture!("api-info.json").as_bytes(),
    )
    .expect("OpenCode 2");
    assert_eq!((info.version.as_str(), info.pid), ("2.0.22", 48213));
    // OpenCode 1.18.33 answers /api/info with its web app's page, 200.
    let page = fixture!("api-info-1.18.33.html").as_bytes();
    assert!(ServerInfo::from_answer(200, "text/html", page).is_none());
    assert!(ServerInfo::from_answer(200, "application/json", page).is_none());
}

/// Recorded from OpenCode 1.18.33's `/api/event`, written by the same
/// handler as 2.x: the envelope, then a comment heartbeat (no event).
#[test]
fn the_event_stream_envelope_and_comment_heartbeat() {
    let mut decoder = SseDecoder::default();
    let mut items = Vec::new();
    decoder.feed_filtered(
        fixture!("event-stream-1.18.33.txt").as_bytes(),
        |_| true,
        &mut items,
    );
    let events: Vec<String> = items
        .into_iter()
        .map(|item| match item {
            SseItem::Event(event) => event.data,
            SseItem::Oversized => panic!("oversized"),
        })
        .collect();
    assert_eq!(events.len(), 1, "the heartbeat is a comment: {events:?}");
    assert!(matches!(parse_event(&events[0]).unwrap(), V2Event::Other));
    assert!(!super::wire::relevant(events[0].as_bytes()));
}

/// OpenCode 2 renamed the permission action `bash` to `shell`: titled alike.
#[test]
fn a_shell_permission_is_titled_as_a_bash_one() {
    let shell = fixture!("permission.v2.asked.json").replace(r#""bash""#, r#""shell""#);
    let V2Event::PermissionAsked(request, directory) = parse_event(&shell).unwrap() else {
        panic!("not permission.v2.asked");
    };
    let prompt = request.into_prompt(directory);
    let Kind::Permission(permission) = &prompt.kind else {
        panic!("{prompt:?}");
    };
    assert_eq!(permission.action, "shell");
    assert_eq!(permission.english_title(), "Run git push origin main");
}
