use super::*;
use crate::backends::RefuseReason;
use crate::backends::shared::permission_reply;
use crate::prompt::{Answer, Reply};

// Lines as the real 1.18.33 server sent them (docs/opencode.md).
const ASKED: &str = r#"{"id":"evt_20377fa670029JW7vvWBU0fEBc","type":"question.asked","properties":{"id":"que_20377fa670012yFjmtDQ35vRZs","sessionID":"ses_dfc8806f9ffegvgSo6J0BvqL16","questions":[{"question":"Which color should the button be?","header":"Button color","options":[{"label":"Red","description":"Warm and loud"},{"label":"Blue","description":"Calm and default"}]}],"tool":{"messageID":"msg_20377f962001VbBJYD07q1vo5X","callID":"call_mock_5"}}}"#;

#[test]
fn question_asked_becomes_a_questions_prompt() {
    let parsed = parse_event(ASKED, false).unwrap();
    let OcEvent::Asked(prompt) = parsed.event else {
        panic!("{parsed:?}")
    };
    assert_eq!(prompt.id, "que_20377fa670012yFjmtDQ35vRZs");
    assert_eq!(prompt.session, "ses_dfc8806f9ffegvgSo6J0BvqL16");
    assert_eq!(prompt.origin.tool_call.as_deref(), Some("call_mock_5"));
    let Kind::Questions(questions) = prompt.kind else {
        panic!()
    };
    assert_eq!(questions[0].options[1].label, "Blue");
    assert!(questions[0].custom && !questions[0].multiple);
}

#[test]
fn global_wrapper_gives_the_directory() {
    let global = format!(r#"{{"directory":"/tmp/p","project":"global","payload":{ASKED}}}"#);
    let parsed = parse_event(&global, true).unwrap();
    assert_eq!(parsed.directory.as_deref(), Some("/tmp/p"));
    let OcEvent::Asked(prompt) = parsed.event else {
        panic!()
    };
    assert_eq!(prompt.directory.as_deref(), Some("/tmp/p"));
    let heartbeat = r#"{"payload":{"id":"evt_1","type":"server.heartbeat","properties":{}}}"#;
    assert_eq!(
        parse_event(heartbeat, true).unwrap(),
        Parsed {
            directory: None,
            workspace: None,
            event: OcEvent::Heartbeat
        }
    );
}

#[test]
fn tool_parts_session_ends_and_agents() {
    let part = |status: &str| {
        format!(
            r#"{{"id":"e","type":"message.part.updated","properties":{{"sessionID":"ses_1","part":{{"type":"tool","tool":"question","callID":"call_mock_19","state":{{"status":"{status}","input":{{}}}},"id":"prt_1"}},"time":1}}}}"#
        )
    };
    assert_eq!(
        parse_event(&part("running"), false).unwrap().event,
        OcEvent::ToolRunning {
            call_id: "call_mock_19".into()
        }
    );
    assert_eq!(
        parse_event(&part("error"), false).unwrap().event,
        OcEvent::ToolEnded {
            call_id: "call_mock_19".into(),
            ok: false
        }
    );
    assert_eq!(
        parse_event(&part("pending"), false).unwrap().event,
        OcEvent::Other
    );
    let aborted = r#"{"id":"e","type":"session.error","properties":{"sessionID":"ses_x","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}"#;
    assert_eq!(
        parse_event(aborted, false).unwrap().event,
        OcEvent::SessionEnded {
            session: "ses_x".into()
        }
    );
    // As 1.18.33 sends an abort, shortened.
    let updated = r#"{"id":"e","type":"session.updated","properties":{"sessionID":"ses_d","info":{"id":"ses_d","slug":"nimble-forest","projectID":"global","agent":"build","version":"1.18.33"}}}"#;
    assert_eq!(
        parse_event(updated, false).unwrap().event,
        OcEvent::Session {
            session: "ses_d".into(),
            agent: Some("build".into()),
            title: None,
        }
    );
    // A title alone is read too, shown and cut as it is read.
    let titled = format!(
        r#"{{"id":"e","type":"session.updated","properties":{{"sessionID":"ses_d","info":{{"id":"ses_d","title":"\u001b[2JMock title{}"}}}}}}"#,
        "x".repeat(1 << 20)
    );
    let OcEvent::Session { agent, title, .. } = parse_event(&titled, false).unwrap().event else {
        panic!()
    };
    let title = title.expect("a title");
    assert_eq!(agent, None);
    let shown = title.shown(crate::text::english_cut_note);
    assert!(shown.starts_with("␛[2JMock title"), "{title:?}");
    assert!(shown.len() < 400, "{}", shown.len());
    let text = r#"{"id":"e","type":"message.part.delta","properties":{"sessionID":"s","delta":"question"}}"#;
    assert_eq!(parse_event(text, false).unwrap().event, OcEvent::Other);
}

#[test]
fn broken_input_is_an_error_not_a_panic() {
    assert!(parse_event("not json about a question", false).is_err());
    assert_eq!(
        parse_event("not json", false).unwrap().event,
        OcEvent::Other
    );
    assert!(parse_event(r#"{"type":"question.asked","properties":{"id":1}}"#, false).is_err());
    assert!(parse_event(r#"{"type":"question.replied"}"#, false).is_err());
    assert_eq!(
        parse_event(r#"{"type":"brand.new","properties":[1,2]}"#, false)
            .unwrap()
            .event,
        OcEvent::Other
    );
}

#[test]
fn a_question_head_accepts_what_a_question_request_reads() {
    let base = r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"}],"multiple":true,"custom":false}],"tool":{"messageID":"m","callID":"call_1"}}"#;
    let cases = [
        base.to_owned(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q"}],"tool":null}"#.into(),
        r#"{"id":"q\u0031","sessionID":"s\"1","questions":[{"question":"\ud83d\ude00","options":[{"label":"\n"}]}],"tool":{"callID":"c\\1"}}"#.into(),
        r#"["que_1","ses_1",[{"question":"Q"}],null]"#.into(),
        r#"["que_1","ses_1",[["Q","H",[["A"]],true,false]]]"#.into(),
        r#"["que_1","ses_1"]"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[],"extra":{"deep":[1,{"x":null}]}}"#.into(),
        // Each broken in one way.
        r#"{"id":1,"sessionID":"ses_1","questions":[]}"#.into(),
        r#"{"id":"que_1","questions":[]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1"}"#.into(),
        r#"{"id":"que_1","id":"que_2","sessionID":"ses_1","questions":[]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":{}}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"header":"H"}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","question":"R"}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":5}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","header":null}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":null}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":[{"description":"d"}]}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","options":[{"label":true}]}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","multiple":"yes"}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q","custom":0}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":{}}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":{"callID":7}}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[],"tool":"call_1"}"#.into(),
        r#"{"id":"\ud800","sessionID":"ses_1","questions":[]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[{"question":"\ud800"}]}"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[]} x"#.into(),
        r#"{"id":"que_1","sessionID":"ses_1","questions":[1e999]}"#.into(),
        r#"["que_1","ses_1",[],null,5]"#.into(),
        r#"["que_1"]"#.into(),
        "null".into(),
        "".into(),
    ];
    for case in &cases {
        let full = serde_json::from_str::<QuestionRequest>(case).map(|r| r.into_prompt(None));
        let head = serde_json::from_str::<QuestionHead>(case);
        assert_eq!(full.is_ok(), head.is_ok(), "{case}");
        if let (Ok(full), Ok(head)) = (full, head) {
            assert_eq!(full.id, head.id, "{case}");
            assert_eq!(full.session, head.session_id, "{case}");
            assert_eq!(
                full.origin.tool_call.as_deref(),
                head.tool.as_ref().map(|t| &*t.call_id),
                "{case}"
            );
        }
    }
    // Ids are borrowed from the text unless escaped.
    let head = serde_json::from_str::<QuestionHead>(base).unwrap();
    assert!(matches!(head.id, Cow::Borrowed(_)));
}

#[test]
fn array_items_fail_alone() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let listing = format!(r#"[{{"a":"x,]\"y"}}, 1e999 ,{deep}, {{"b":[1,2]}}]"#);
    let items = array_items(&listing).unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0], r#"{"a":"x,]\"y"}"#);
    assert_eq!(items[1], "1e999");
    assert_eq!(items[3], r#"{"b":[1,2]}"#);
    assert_eq!(array_items("[]").unwrap(), Vec::<&str>::new());
    assert_eq!(array_items("{}"), None);
    assert_eq!(array_items("[1]]"), None);
}

#[test]
fn array_items_skip_strings_with_escapes_and_brackets() {
    let listing = r#"["a\\", "b\\\\\"],{", {"c":"}\\\\"}, "\"", "é,[ü"]"#;
    assert_eq!(
        array_items(listing).unwrap(),
        [
            r#""a\\""#,
            r#""b\\\\\"],{""#,
            r#"{"c":"}\\\\"}"#,
            r#""\"""#,
            r#""é,[ü""#
        ]
    );
    // A string left open (never valid JSON): not a list, not a panic.
    assert_eq!(array_items(r#"["abc\]"#), None);
    assert_eq!(array_items(r#"["abc"#), None);
}

/// OpenCode (1.x and 2 reply alike): each decision × the choices ask-lsp
/// builds for its permissions, and what the server receives.
#[test]
fn each_permission_decision_maps_to_one_reply() {
    let OcEvent::Asked(prompt) = parse_event(EDIT_ASKED, false).unwrap().event else {
        panic!()
    };
    let Kind::Permission(permission) = prompt.kind else {
        panic!()
    };
    let pick = |choice: &str| {
        Reply::Answer(Answer::Permission {
            choice: choice.into(),
        })
    };
    let reply = |reply: &str| Ok((serde_json::json!({ "reply": reply }), reply != "reject"));
    let table = [
        (pick("once"), reply("once")),
        (pick("always"), reply("always")),
        (pick("reject"), reply("reject")),
        (pick("allow-session"), Err(RefuseReason::NotAChoice)),
        (Reply::Reject { message: None }, reply("reject")),
        (
            Reply::Reject {
                message: Some("not now".into()),
            },
            Ok((
                serde_json::json!({"reply": "reject", "message": "not now"}),
                false,
            )),
        ),
        // Nobody chose: OpenCode has no cancel for a permission.
        (Reply::Cancel, reply("reject")),
        (
            Reply::Answer(Answer::Questions(vec![])),
            Err(RefuseReason::NotAnAnswerToPermission),
        ),
    ];
    for (decision, expected) in table {
        assert_eq!(
            permission_reply(&permission, &decision),
            expected,
            "{decision:?}"
        );
    }
}

// As 1.18.33 sends permissions (an edit; `tests/it/permissions.rs` runs them).
const EDIT_ASKED: &str = r#"{"id":"evt_2076e86460028ueZP44fATlqmp","type":"permission.asked","properties":{"id":"per_2076e86460018eQ1mTI45Jy4yp","sessionID":"ses_df8917f7fffeZdovkR57PVB9iw","permission":"edit","patterns":["home/user/projects/edit/hello.txt"],"metadata":{"filepath":"/home/user/projects/edit/hello.txt","diff":"Index: /home/user/projects/edit/hello.txt\n--- /home/user/projects/edit/hello.txt\n+++ /home/user/projects/edit/hello.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"},"always":["*"],"tool":{"messageID":"msg_2076e82bb001TtTzYXR","callID":"call_mock_1795421013_21"}}}"#;

#[test]
fn permission_events_become_permission_prompts() {
    let bash = r#"{"directory":"/home/user/projects/compound","project":"global","payload":{"id":"evt_2076e99ba002w1DvXOUJ6j4qoq","type":"permission.asked","properties":{"id":"per_2076e99ba001ue3BObJ3cqn6J4","sessionID":"ses_df8916a2dffeaVlm241jMWiql3","permission":"bash","patterns":["echo A_c13","touch b_c13","git status","head -1"],"metadata":{"command":"echo A_c13 && touch b_c13; git status | head -1"},"always":["echo *","touch *","git status *","head *"],"tool":{"messageID":"msg_2076e97a2001r9AjD51Pbtd4cZ","callID":"call_mock_1795421018_24"}}}}"#;
    let parsed = parse_event(bash, true).unwrap();
    let OcEvent::Asked(prompt) = parsed.event else {
        panic!("{parsed:?}")
    };
    assert_eq!(
        prompt.directory.as_deref(),
        Some("/home/user/projects/compound")
    );
    assert_eq!(
        prompt.origin.tool_call.as_deref(),
        Some("call_mock_1795421018_24")
    );
    let Kind::Permission(permission) = prompt.kind else {
        panic!()
    };
    assert_eq!(permission.action, "bash");
    assert_eq!(
        permission.english_title(),
        "Run echo A_c13 && touch b_c13; git status | head -1"
    );
    assert_eq!(
        permission.command.as_deref(),
        Some("echo A_c13 && touch b_c13; git status | head -1")
    );
    assert_eq!(permission.patterns.len(), 4);
    let labels: Vec<String> = permission
        .choices
        .iter()
        .map(PermissionChoice::english_label)
        .collect();
    let choices: Vec<_> = permission
        .choices
        .iter()
        .zip(&labels)
        .map(|(c, label)| (c.id.as_str(), label.as_str(), c.effect))
        .collect();
    assert_eq!(
        choices,
        [
            ("once", "Allow once", Effect::AllowOnce),
            (
                "always",
                "Allow always (echo *, touch *, git status *, head *)",
                Effect::AllowAlways
            ),
            ("reject", "Reject", Effect::RejectOnce)
        ]
    );

    let OcEvent::Asked(edit) = parse_event(EDIT_ASKED, false).unwrap().event else {
        panic!()
    };
    let Kind::Permission(permission) = edit.kind else {
        panic!()
    };
    assert_eq!(
        permission.english_title(),
        "Edit /home/user/projects/edit/hello.txt"
    );
    assert!(
        permission
            .diff
            .as_deref()
            .unwrap()
            .ends_with("+hello\n+world\n")
    );
    assert_eq!(
        permission.patterns,
        [
            "home/user/projects/edit/hello.txt",
            "/home/user/projects/edit/hello.txt"
        ]
    );
}

#[test]
fn permission_replies_and_deleted_sessions() {
    let replied = |reply: &str| {
        format!(
            r#"{{"id":"evt_2076e4bf0002Odv00uHGmK8ETD","type":"permission.replied","properties":{{"sessionID":"ses_df891b844ffe4Nj5DzNyRaHcTW","requestID":"per_2076e4bb7001d0O3CttKUDBT2P","reply":"{reply}"}}}}"#
        )
    };
    assert_eq!(
        parse_event(&replied("reject"), false).unwrap().event,
        OcEvent::PermissionReplied {
            id: "per_2076e4bb7001d0O3CttKUDBT2P".into(),
            rejected: true
        }
    );
    assert_eq!(
        parse_event(&replied("always"), false).unwrap().event,
        OcEvent::PermissionReplied {
            id: "per_2076e4bb7001d0O3CttKUDBT2P".into(),
            rejected: false
        }
    );
    let deleted = r#"{"id":"evt_2076e31c4001A4KhTWQoQjCf8E","type":"session.deleted","properties":{"sessionID":"ses_df891d21bffeCRg6wpToeC2X9A","info":{"id":"ses_df891d21bffeCRg6wpToeC2X9A","slug":"kind-lagoon","projectID":"global","directory":"/home/user/projects/delete","title":"Mock title","agent":"build","version":"1.18.33"}}}"#;
    assert_eq!(
        parse_event(deleted, false).unwrap().event,
        OcEvent::SessionEnded {
            session: "ses_df891d21bffeCRg6wpToeC2X9A".into()
        }
    );
    assert!(
        parse_event(
            r#"{"type":"permission.asked","properties":{"id":"per_1"}}"#,
            false
        )
        .is_err()
    );
}
/// SDK 1.19.3 shapes (tests/fixtures/opencode-1.19/README.md).
const STREAM_119: &str =
    include_str!("../../../../tests/fixtures/opencode-1.19/global-stream.jsonl");
const DISPOSED_119: &str = include_str!("../../../../tests/fixtures/opencode-1.19/disposed.jsonl");

#[test]
fn sdk_119_names_envelopes_and_workspaces_are_read() {
    let parsed: Vec<Parsed> = STREAM_119
        .lines()
        .map(|line| parse_event(line, true).unwrap())
        .collect();
    // The wrapper is read for every event acted on (filtered ones are not parsed).
    assert!(
        parsed
            .iter()
            .filter(|p| p.event != OcEvent::Other)
            .all(|p| p.workspace.as_deref() == Some("wrk_fixture")
                && p.directory.as_deref() == Some("/sim/project"))
    );
    let events: Vec<&OcEvent> = parsed.iter().map(|p| &p.event).collect();
    assert_eq!(
        events[0],
        &OcEvent::Session {
            session: "ses_fx1".into(),
            agent: Some("plan".into()),
            title: SessionTitle::new("Fixture"),
        }
    );
    assert_eq!(events[1], &OcEvent::Other, "a token delta");
    assert_eq!(events[2], &OcEvent::Other, "the tool part, pending");
    let (OcEvent::Asked(v1), OcEvent::AskedNext(v2)) = (events[3], events[4]) else {
        panic!("{events:?}")
    };
    assert_eq!(v1, v2, "question.asked and question.v2.asked read alike");
    assert_eq!(v1.id, "que_fx1");
    assert_eq!(v1.directory.as_deref(), Some("/sim/project"));
    assert_eq!(
        events[5],
        &OcEvent::ToolRunning {
            call_id: "call_fx1".into()
        }
    );
    let OcEvent::AskedNext(only_v2) = events[6] else {
        panic!("{events:?}")
    };
    assert_eq!(only_v2.id, "que_fx2");
    let Kind::Questions(questions) = &only_v2.kind else {
        panic!()
    };
    assert!(!questions[0].custom);
    assert_eq!(
        events[7],
        &OcEvent::SessionEnded {
            session: "ses_fx2".into()
        }
    );
    for line in DISPOSED_119.lines() {
        assert_eq!(
            parse_event(line, true).unwrap().event,
            OcEvent::Disposed,
            "{line}"
        );
    }
    // `/event` carries the same events unwrapped.
    let plain = r#"{"id":"e","type":"question.v2.replied","properties":{"sessionID":"s","requestID":"que_1","answers":[["A"]]}}"#;
    assert_eq!(
        parse_event(plain, false).unwrap().event,
        OcEvent::Replied { id: "que_1".into() }
    );
    let rejected = r#"{"id":"e","type":"question.v2.rejected","properties":{"sessionID":"s","requestID":"que_1"}}"#;
    assert_eq!(
        parse_event(rejected, false).unwrap().event,
        OcEvent::Rejected { id: "que_1".into() }
    );
}

/// Lines from the real 1.18.34's `/event` (a new-engine session).
#[test]
fn new_engine_events_of_1_18_34() {
    let asked = r#"{"id":"evt_2183df781002tKqpiVIpLkEAuB","type":"permission.v2.asked","properties":{"id":"per_2183df781001iTmQ2wpjz2OcKi","sessionID":"ses_de7c20db0ffemT7DhgfZhSTdW3","action":"bash","resources":["echo A1 && touch b1; git status | head -1"],"save":["echo A1 && touch b1; git status | head -1"],"source":{"type":"tool","messageID":"msg_2183df761001tHXu30r6DBJnan","callID":"call_mock_3"}}}"#;
    let OcEvent::AskedNext(prompt) = parse_event(asked, false).unwrap().event else {
        panic!()
    };
    assert_eq!(prompt.origin.tool_call.as_deref(), Some("call_mock_3"));
    let Kind::Permission(permission) = prompt.kind else {
        panic!()
    };
    assert_eq!(permission.action, "bash");
    assert_eq!(
        permission.command.as_deref(),
        Some("echo A1 && touch b1; git status | head -1"),
        "the one resource is the whole command"
    );
    assert_eq!(
        permission.english_title(),
        "Run echo A1 && touch b1; git status | head -1"
    );
    assert!(
        permission.choices[1]
            .english_label()
            .starts_with("Allow always (echo A1")
    );
    // Several resources name no single command.
    let edit = r#"{"id":"e","type":"permission.v2.asked","properties":{"id":"per_1","sessionID":"ses_1","action":"bash","resources":["a","b"]}}"#;
    let OcEvent::AskedNext(prompt) = parse_event(edit, false).unwrap().event else {
        panic!()
    };
    let Kind::Permission(permission) = prompt.kind else {
        panic!()
    };
    assert_eq!(permission.command, None);
    assert_eq!(permission.patterns, ["a", "b"]);
    let replied = r#"{"id":"evt_2183dea030011v5I2cDMCYrD1s","type":"permission.v2.replied","properties":{"sessionID":"ses_de7c23944ffe1npmqFpzQQM6pV","requestID":"per_2183dcd2f0010MxTZMl2zoayxq","reply":"reject"}}"#;
    assert_eq!(
        parse_event(replied, false).unwrap().event,
        OcEvent::PermissionReplied {
            id: "per_2183dcd2f0010MxTZMl2zoayxq".into(),
            rejected: true
        }
    );
    let failed = r#"{"id":"evt_2183ef4f5001Tc7JXrf63esluj","type":"session.next.tool.failed","properties":{"sessionID":"ses_de7c11919ffeliK817rcVX9ax9","timestamp":"2026-11-26T14:25:08.853Z","assistantMessageID":"msg_2183eebcb001Qv6cKb0H1mhbrR","callID":"call_mock_5","error":{"type":"unknown","message":"Tool execution interrupted"},"provider":{"executed":false}}}"#;
    assert_eq!(
        parse_event(failed, false).unwrap().event,
        OcEvent::ToolEnded {
            call_id: "call_mock_5".into(),
            ok: false
        }
    );
    let question = r#"{"id":"evt_2183d8f85002X6H54ABpOgK14e","type":"question.v2.asked","properties":{"id":"que_2183d8f85001lztwin8oybKBss","sessionID":"ses_de7c277f4ffe4wKj2SJpLryQDM","questions":[{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}],"tool":{"messageID":"msg_2183d8f380010bQBAlyccpVXs5","callID":"call_mock_1"}}}"#;
    assert!(matches!(
        parse_event(question, false).unwrap().event,
        OcEvent::AskedNext(_)
    ));
}

#[test]
fn sync_envelopes_are_read_by_their_unversioned_type() {
    assert_eq!(unversioned("session.created.1"), "session.created");
    assert_eq!(unversioned("session.created.12"), "session.created");
    assert_eq!(unversioned("session.created"), "session.created");
    assert_eq!(unversioned("session.v2"), "session.v2");
    assert_eq!(unversioned("x."), "x.");
    let sync = |kind: &str, data: &str| {
        format!(
            r#"{{"type":"sync","id":"evt_1","syncEvent":{{"type":"{kind}","id":"evt_2","seq":1,"aggregateID":"ses_1","data":{data}}}}}"#
        )
    };
    assert_eq!(
        parse_event(
            &sync("session.deleted.1", r#"{"sessionID":"ses_1","info":{}}"#),
            false
        )
        .unwrap()
        .event,
        OcEvent::SessionEnded {
            session: "ses_1".into()
        }
    );
    assert_eq!(
        parse_event(&sync("session.next.step.ended.1", "{}"), false)
            .unwrap()
            .event,
        OcEvent::Other
    );
    // A broken envelope is an error, not a panic.
    assert!(
        parse_event(
            r#"{"type":"sync","id":"evt_1","syncEvent":{"type":"session.deleted.1"}}"#,
            false
        )
        .is_err()
    );
    assert!(
        parse_event(
            r#"{"type":"sync","id":"evt_1","syncEvent":"session.deleted"}"#,
            false
        )
        .is_err()
    );
}
