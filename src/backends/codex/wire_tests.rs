use super::*;

/// What the real Codex 0.169.0 daemon sent for `touch /p/a1` (an escalated
/// `exec_command`), captured over its control socket.
fn real_command() -> Value {
    json!({"kind": "command", "threadId": "01a22482-e001-7c82-8284-80e26c93b688",
           "turnId": "01a22483-1859-7233-b37b-fcddc393523a", "itemId": "call_1",
           "startedAtMs": 1795908901429u64, "environmentId": "local",
           "reason": "Run the requested command",
           "command": "/bin/bash -lc 'touch /p/a1'", "cwd": "/p",
           "commandActions": [{"type": "unknown", "command": "touch /p/a1"}],
           "proposedExecpolicyAmendment": ["touch", "/p/a1"],
           "availableDecisions": ["accept",
               {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "/p/a1"]}},
               "cancel"]})
}

fn command_prompt(params: Value) -> Asked {
    asked(COMMAND_APPROVAL, params, |_, _| None)
        .unwrap()
        .unwrap()
}

fn permission(prompt: &Prompt) -> &Permission {
    match &prompt.kind {
        Kind::Permission(permission) => permission,
        other => panic!("{other:?}"),
    }
}

fn pick(choice: &str) -> Reply {
    Reply::Answer(Answer::Permission {
        choice: choice.into(),
    })
}

#[test]
fn a_command_shows_whole_with_the_decisions_codex_lists() {
    let asked = command_prompt(real_command());
    let shown = permission(&asked.prompt);
    assert_eq!(
        shown.command.as_deref(),
        Some("/bin/bash -lc 'touch /p/a1'")
    );
    assert_eq!(shown.patterns, ["touch /p/a1"]);
    assert_eq!(
        shown.english_title(),
        "Codex asks to run a command: Run the requested command"
    );
    let labels: Vec<(String, String)> = shown
        .choices
        .iter()
        .map(|c| (c.id.clone(), c.english_label()))
        .collect();
    assert_eq!(
        labels,
        [
            ("accept".into(), "Allow once".into()),
            (
                "acceptWithExecpolicyAmendment".into(),
                "Allow, and from now on commands that start with `touch /p/a1`".into()
            ),
            ("decline".into(), "Reject".into()),
        ]
    );
    assert_eq!(
        asked.prompt.id,
        "codex-exec:01a22482-e001-7c82-8284-80e26c93b688:call_1"
    );
    assert_eq!(asked.prompt.directory.as_deref(), Some("/p"));
    assert_eq!(asked.prompt.origin.tool_call.as_deref(), Some("call_1"));

    // Without a list (an older server): the schema's three.
    let mut older = real_command();
    older.as_object_mut().unwrap().remove("availableDecisions");
    let ids: Vec<String> = permission(&command_prompt(older).prompt)
        .choices
        .iter()
        .map(|c| c.id.clone())
        .collect();
    assert_eq!(ids, ["accept", "acceptForSession", "decline"]);

    // Input to a running terminal stays in Codex.
    let mut stdin = real_command();
    stdin["kind"] = json!("writeStdin");
    assert!(asked_none(COMMAND_APPROVAL, stdin));
}

/// The consent table: what each decision sends Codex.
#[test]
fn each_decision_sends_codex_exactly_this() {
    let asked = command_prompt(real_command());
    let amendment =
        json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "/p/a1"]}});
    let table: Vec<(Reply, Result<Value, RefuseReason>)> = vec![
        (pick("accept"), Ok(json!({"decision": "accept"}))),
        (
            pick("acceptWithExecpolicyAmendment"),
            Ok(json!({"decision": amendment})),
        ),
        (pick("decline"), Ok(json!({"decision": "decline"}))),
        // Not offered here (Codex did not list it): never sent.
        (pick("acceptForSession"), Err(RefuseReason::NotAChoice)),
        (pick("cancel"), Err(RefuseReason::NotAChoice)),
        (pick("allow-once"), Err(RefuseReason::NotAChoice)),
        (pick(""), Err(RefuseReason::NotAChoice)),
        (
            Reply::Reject {
                message: Some("use make".into()),
            },
            Ok(json!({"decision": "decline"})),
        ),
        (
            Reply::Reject { message: None },
            Ok(json!({"decision": "decline"})),
        ),
        // A timeout that picks nothing never allows.
        (Reply::Cancel, Ok(json!({"decision": "decline"}))),
        (
            Reply::Answer(Answer::Questions(vec![])),
            Err(RefuseReason::NotAnAnswerToPermission),
        ),
    ];
    for (reply, expected) in table {
        assert_eq!(
            response(&asked.expect, &asked.prompt, &reply),
            expected,
            "{reply:?}"
        );
    }

    // An MCP server's form: only the person's values accept.
    let form = super::asked(ELICITATION, form_params(), |_, _| None)
        .unwrap()
        .unwrap();
    let values: crate::prompt::FormValues = [(
        "db".to_owned(),
        crate::prompt::FieldValue::Choice("sqlite".into()),
    )]
    .into_iter()
    .collect();
    let table: Vec<(Reply, Result<Value, RefuseReason>)> = vec![
        (
            Reply::Answer(Answer::Form(values)),
            Ok(json!({"action": "accept", "content": {"db": "sqlite"}})),
        ),
        (
            Reply::Reject { message: None },
            Ok(json!({"action": "decline", "content": null})),
        ),
        // A timeout never accepts.
        (
            Reply::Cancel,
            Ok(json!({"action": "cancel", "content": null})),
        ),
        (pick("accept"), Err(RefuseReason::NotAnAnswerToForm)),
        (
            Reply::Answer(Answer::Questions(vec![])),
            Err(RefuseReason::NotAnAnswerToForm),
        ),
    ];
    for (reply, expected) in table {
        assert_eq!(
            response(&form.expect, &form.prompt, &reply),
            expected,
            "{reply:?}"
        );
    }

    let mut older = real_command();
    older.as_object_mut().unwrap().remove("availableDecisions");
    let asked = command_prompt(older);
    assert_eq!(
        response(&asked.expect, &asked.prompt, &pick("acceptForSession")),
        Ok(json!({"decision": "acceptForSession"}))
    );
}

#[test]
fn questions_take_their_answers_by_id_and_secrets_exactly_as_typed() {
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "call_6", "isBlocking": true,
                        "questions": [{"id": "db", "header": "Database", "question": "Which database?",
                                       "isOther": true, "isSecret": false,
                                       "options": [{"label": "Postgres", "description": "Relational"},
                                                   {"label": "SQLite", "description": "Embedded"}]},
                                      {"id": "name", "header": "Name", "question": "Its name?",
                                       "options": null}]});
    let asked = asked(USER_INPUT, params.clone(), |_, _| None)
        .unwrap()
        .unwrap();
    let Kind::Questions(questions) = &asked.prompt.kind else {
        panic!("{:?}", asked.prompt.kind)
    };
    assert_eq!(questions[0].options.len(), 2);
    assert!(questions[0].custom, "isOther allows a typed answer");
    assert!(questions[1].custom, "no options: typed");
    let answers = Reply::Answer(Answer::Questions(vec![
        vec!["SQLite".into()],
        vec!["shop".into()],
    ]));
    assert_eq!(
        response(&asked.expect, &asked.prompt, &answers),
        Ok(json!({"answers": {"db": {"answers": ["SQLite"]}, "name": {"answers": ["shop"]}}}))
    );
    assert_eq!(
        response(&asked.expect, &asked.prompt, &Reply::Cancel),
        Ok(json!({"answers": {}}))
    );
    assert!(
        response(
            &asked.expect,
            &asked.prompt,
            &Reply::Answer(Answer::Questions(vec![vec!["SQLite".into()]]))
        )
        .is_err()
    );

    // A secret is a typed question marked so, answered exactly as typed.
    let mut secret = params;
    secret["questions"][1]["isSecret"] = json!(true);
    let asked = super::asked(USER_INPUT, secret, |_, _| None)
        .unwrap()
        .unwrap();
    let Kind::Questions(questions) = &asked.prompt.kind else {
        panic!("{:?}", asked.prompt.kind)
    };
    assert!(questions[1].secret && questions[1].custom && !questions[0].secret);
    let answers = Reply::Answer(Answer::Questions(vec![
        vec!["SQLite".into()],
        vec![" hunter2 ".into()],
    ]));
    assert_eq!(
        response(&asked.expect, &asked.prompt, &answers),
        Ok(json!({"answers": {"db": {"answers": ["SQLite"]}, "name": {"answers": [" hunter2 "]}}}))
    );
}

/// An MCP server's form as Codex 0.171.0's schema prints it
/// (`McpServerElicitationRequestParams`, mode `form`).
fn form_params() -> Value {
    json!({"threadId": "t", "turnId": "u", "serverName": "asker", "mode": "form",
           "message": "Which database should I use?",
           "requestedSchema": {"type": "object", "required": ["db"],
               "properties": {"db": {"type": "string", "title": "Database",
                   "oneOf": [{"const": "pg", "title": "Postgres"},
                             {"const": "sqlite", "title": "SQLite"}]}}}})
}

#[test]
fn an_mcp_form_is_a_form_and_codexs_own_approvals_stay_in_codex() {
    let asked = asked(ELICITATION, form_params(), |_, _| None)
        .unwrap()
        .unwrap();
    let Kind::Form(form) = &asked.prompt.kind else {
        panic!("{:?}", asked.prompt.kind)
    };
    assert_eq!(form.message, "Which database should I use?");
    assert_eq!(form.fields[0].id, "db");
    assert!(form.fields[0].required);
    assert_eq!(asked.prompt.session, "t");
    // Codex's approval of an MCP tool call, a url and an `openai/form`: Codex's.
    let mut approval = form_params();
    approval["_meta"] = json!({"codex_approval_kind": "mcp_tool_call"});
    assert!(asked_none(ELICITATION, approval));
    let mut url = form_params();
    url["mode"] = json!("url");
    url["url"] = json!("https://example.com");
    url["elicitationId"] = json!("e1");
    assert!(asked_none(ELICITATION, url));
    let mut openai = form_params();
    openai["mode"] = json!("openai/form");
    assert!(asked_none(ELICITATION, openai));
}

fn asked_none(method: &str, params: Value) -> bool {
    asked(method, params, |_, _| None).unwrap().is_none()
}

#[test]
fn a_file_change_shows_the_diff_codex_announced() {
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "call_9", "startedAtMs": 1});
    let diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n";
    let asked = asked(FILE_APPROVAL, params, |thread, item| {
        assert_eq!((thread, item), ("t", "call_9"));
        Some((vec!["/p/notes.txt".into()], diff.into()))
    })
    .unwrap()
    .unwrap();
    let shown = permission(&asked.prompt);
    assert_eq!(shown.diff.as_deref(), Some(diff));
    assert_eq!(shown.patterns, ["/p/notes.txt"]);
    let ids: Vec<&str> = shown.choices.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["accept", "acceptForSession", "decline"]);
    assert_eq!(
        response(&asked.expect, &asked.prompt, &pick("accept")),
        Ok(json!({"decision": "accept"}))
    );
    assert_eq!(
        response(
            &asked.expect,
            &asked.prompt,
            &Reply::Reject { message: None }
        ),
        Ok(json!({"decision": "decline"}))
    );
}

#[test]
fn other_requests_stay_with_codexs_own_clients() {
    for method in [
        "item/permissions/requestApproval",
        "mcpServer/elicitation/request",
        "item/tool/call",
        "account/chatgptAuthTokens/refresh",
    ] {
        assert!(asked_none(method, json!({"threadId": "t"})), "{method}");
    }
    assert!(asked(COMMAND_APPROVAL, json!({"threadId": 1}), |_, _| None).is_err());
}
