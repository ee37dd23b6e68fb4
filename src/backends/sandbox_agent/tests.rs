use super::wire::*;
use super::*;
use crate::prompt::{Answer, Effect, Kind, Origin};

// From captures/sandbox-agent/released-0.4.2/A_acp_sse_raw.txt.
const CAPTURED: &str = r#"{"id":"q-1","jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"options":[["option-a","Option A"],["option-b","Option B"]],"prompt":"Which option?","questionId":"question-1","questions":[{"custom":false,"header":"Pick one","multiple":false,"options":[{"description":"option-a","label":"Option A"},{"description":"option-b","label":"Option B"}],"question":"Which option?"}],"sessionId":"mock-session-1"}}"#;

fn asked(data: &str) -> (Prompt, Route) {
    match parse_message(data, "3").unwrap() {
        AcpEvent::Asked { prompt, route } => (prompt, route),
        other => panic!("{other:?}"),
    }
}

fn answer(labels: &[&str]) -> Reply {
    Reply::Answer(Answer::Questions(vec![
        labels.iter().map(|l| l.to_string()).collect(),
    ]))
}

const REJECT: Reply = Reply::Reject { message: None };

#[test]
fn a_message_over_the_value_bound_is_refused_before_it_is_built() {
    let values = vec![0; MAX_VALUES];
    let elicit = json!({"jsonrpc": "2.0", "id": 7, "method": ELICIT,
        "params": {"sessionId": "s", "mode": "form", "requestedSchema": {"properties": {}},
            "padding": values}})
    .to_string();
    match parse_message(&elicit, "1").unwrap() {
        AcpEvent::Refused {
            response, reason, ..
        } => {
            assert_eq!(
                response,
                json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}})
            );
            assert!(reason.contains("more than 131072 values"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let other =
        json!({"jsonrpc": "2.0", "id": 8, "method": PERMISSION, "params": values}).to_string();
    assert!(parse_message(&other, "1").is_err());
    // Within the bound, read as before.
    let small = json!({"jsonrpc": "2.0", "id": 9, "method": ELICIT,
        "params": {"sessionId": "s", "mode": "form", "requestedSchema": {"properties": {}},
            "padding": vec![0; MAX_VALUES - 100]}})
    .to_string();
    match parse_message(&small, "1").unwrap() {
        AcpEvent::Asked { .. } => {}
        AcpEvent::Refused { reason, .. } => assert!(!reason.contains("values"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(elicitation::count_values("[1, 2", 10).is_err(), "not JSON");
}

#[test]
fn opencode_style_questions_are_used_as_they_are() {
    let (prompt, route) = asked(CAPTURED);
    assert_eq!(prompt.id, "q-1@3");
    assert_eq!(prompt.session, "mock-session-1");
    assert_eq!(prompt.origin, Origin::default());
    let Kind::Questions(questions) = &prompt.kind else {
        panic!()
    };
    assert_eq!(questions[0].header, "Pick one");
    assert_eq!(
        result_for(&route, &prompt, &answer(&["Option B"])),
        Some(
            json!({"outcome": "selected", "status": "answered", "answers": [["Option B"]],
               "_meta": {"sandboxagent.dev": {"answers": [["Option B"]]}}})
        )
    );
    assert_eq!(
        result_for(&route, &prompt, &REJECT),
        Some(json!({"outcome": "rejected", "status": "rejected"}))
    );
}

#[test]
fn prompt_and_option_pairs_are_answered_with_ids() {
    let data = r#"{"id":7,"jsonrpc":"2.0","method":"_sandboxagent/session/request_question","params":{"sessionId":"s","prompt":"Which option?","options":[["option-a","Option A"],["option-b","Option B"]]}}"#;
    let (prompt, route) = asked(data);
    assert_eq!(prompt.id, "7@3");
    assert_eq!(route.rpc_id, json!(7));
    assert_eq!(
        result_for(&route, &prompt, &answer(&["Option A"])).unwrap()["answers"],
        json!([["option-a"]])
    );
}

#[test]
fn permission_requests_become_permissions() {
    let data = r#"{"id":"p-1","jsonrpc":"2.0","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","title":"Run `rm -rf build/`","kind":"execute","rawInput":{"command":["rm","-rf","build/"]}},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#;
    let (prompt, route) = asked(data);
    assert_eq!(prompt.origin.tool_call.as_deref(), Some("t"));
    let Kind::Permission(permission) = &prompt.kind else {
        panic!()
    };
    assert_eq!(permission.english_title(), "Run `rm -rf build/`");
    assert_eq!(permission.action, "execute");
    assert_eq!(permission.command.as_deref(), Some("rm -rf build/"));
    assert_eq!(permission.choices[0].effect, Effect::AllowOnce);
    let allow = Reply::Answer(Answer::Permission {
        choice: "allow-once".into(),
    });
    assert_eq!(
        result_for(&route, &prompt, &allow),
        Some(json!({"outcome": {"outcome": "selected", "optionId": "allow-once"}}))
    );
    assert_eq!(
        result_for(&route, &prompt, &REJECT),
        Some(json!({"outcome": {"outcome": "selected", "optionId": "reject"}}))
    );
    assert_eq!(result_for(&route, &prompt, &answer(&["Allow once"])), None);
}

/// Every option kind an ACP server may send × every decision: what the
/// agent receives. The option of that kind is listed first, alone or
/// before a genuine `reject_once`.
#[test]
fn each_option_kind_and_decision_maps_to_one_outcome() {
    const SELECTED: &str = "selected";
    const CANCELLED: &str = "cancelled";
    const NOT_OFFERED: &str = "not offered";
    // kind, then: the person picks it; a refusal when it is alone; a
    // refusal beside `reject_once`; `cancel`.
    let table: [(Option<&str>, &str, &str, &str); 7] = [
        (Some("allow_once"), SELECTED, CANCELLED, "reject"),
        (Some("allow_always"), SELECTED, CANCELLED, "reject"),
        (Some("reject_once"), SELECTED, "hostile", "hostile"),
        (Some("reject_always"), SELECTED, CANCELLED, "reject"),
        (Some("allow_session"), NOT_OFFERED, CANCELLED, "reject"),
        (Some(""), NOT_OFFERED, CANCELLED, "reject"),
        (None, NOT_OFFERED, CANCELLED, "reject"),
    ];
    let outcome = |options: Value, reply: &Reply| {
        let data = json!({"id": 1, "jsonrpc": "2.0", "method": PERMISSION, "params": {
            "sessionId": "s", "options": options}});
        let (prompt, route) = asked(&data.to_string());
        let Kind::Permission(permission) = &prompt.kind else {
            panic!()
        };
        let offered = permission.choices.iter().any(|c| c.id == "hostile");
        let sent = result_for(&route, &prompt, reply).map(|r| r["outcome"].clone());
        (offered, sent)
    };
    let selected = |id: &str| Some(json!({"outcome": SELECTED, "optionId": id}));
    let cancelled = Some(json!({"outcome": CANCELLED}));
    let pick = Reply::Answer(Answer::Permission {
        choice: "hostile".into(),
    });
    for (kind, picked, alone, beside) in table {
        let mut hostile = json!({"optionId": "hostile", "name": "Reject"});
        if let Some(kind) = kind {
            hostile["kind"] = json!(kind);
        }
        let genuine = json!({"optionId": "reject", "name": "No", "kind": "reject_once"});
        let alone_list = json!([hostile.clone()]);
        let both = json!([hostile, genuine]);
        let (offered, sent) = outcome(alone_list.clone(), &pick);
        match picked {
            SELECTED => assert!(offered && sent == selected("hostile"), "{kind:?}"),
            _ => assert!(!offered && sent.is_none(), "{kind:?}: {sent:?}"),
        }
        let expect = |what: &str| match what {
            CANCELLED => cancelled.clone(),
            id => selected(id),
        };
        assert_eq!(
            outcome(alone_list.clone(), &REJECT).1,
            expect(alone),
            "{kind:?}"
        );
        assert_eq!(outcome(both.clone(), &REJECT).1, expect(beside), "{kind:?}");
        // Nobody chose: never an option, whatever is offered.
        assert_eq!(outcome(alone_list, &Reply::Cancel).1, cancelled, "{kind:?}");
        assert_eq!(outcome(both, &Reply::Cancel).1, cancelled, "{kind:?}");
    }
}

#[test]
fn cancellation_exit_turn_end_and_tool_call_end() {
    let parse = |data: &str| parse_message(data, "9").unwrap();
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"q-1"}}"#),
        AcpEvent::Cancelled {
            rpc_id: json!("q-1")
        }
    );
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","method":"_adapter/agent_exited","params":{}}"#),
        AcpEvent::AgentExited
    );
    assert_eq!(
        parse(r#"{"id":11,"jsonrpc":"2.0","result":{"stopReason":"end_turn"}}"#),
        AcpEvent::TurnEnded
    );
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#),
        AcpEvent::Other
    );
    // From Claude (claude-agent-acp 0.101.0) once AskUserQuestion is answered.
    assert_eq!(
        parse(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed"}}}"#
        ),
        AcpEvent::ToolCallEnded {
            session: "s1".into(),
            tool_call: "toolu_1".into(),
            ok: true
        }
    );
    assert_eq!(
        parse(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"in_progress"}}}"#
        ),
        AcpEvent::Other
    );
    assert!(parse_message("{", "9").is_err());
    assert!(
        parse_message(
            r#"{"id":1,"method":"session/request_permission","params":{}}"#,
            "9"
        )
        .is_err()
    );
}
