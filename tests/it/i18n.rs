//! Simplified Chinese end to end (#35): a plain LSP client and the
//! extension in zh-CN against the simulated server, which locale wins, and
//! `ask-lsp status` under `LANG=zh_CN.UTF-8`, an adapter's notice in
//! `watch` and `status`. ask-lsp's words are
//! translated; the agent's arrive as sent; the answer reaches the server
//! once. `watch` in a terminal: tests/it/terminal_line.rs.

use crate::common;
use std::time::Duration;

use crate::common::*;
use ask_sim::PermissionAsk;
use serde_json::{Value, json};

const DIR: &str = "/sim/project";

/// `initialize` with the editor's language and `initializationOptions`,
/// then `initialized`, and waits until the server is followed.
async fn client_in(
    sim: &Sim,
    env: &[(&str, &str)],
    caps: Value,
    editor_locale: Option<&str>,
    options: Value,
) -> LspClient {
    let mut client = LspClient::start(env).await;
    let mut options = options;
    options["servers"] = json!([{"url": sim.url()}]);
    let mut params = json!({"processId": null, "rootUri": null, "capabilities": caps,
                            "initializationOptions": options});
    if let Some(locale) = editor_locale {
        params["locale"] = json!(locale);
    }
    let response = client.request("initialize", params).await;
    assert!(response.get("error").is_none(), "{response:#}");
    client.notify("initialized", json!({})).await;
    wait_for(|| sim.subscribers() > 0).await;
    client
}

fn titles(message: &Value) -> Vec<String> {
    message["params"]["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|a| a["title"].as_str().expect("a title").to_owned())
        .collect()
}

#[tokio::test]
async fn a_plain_client_in_zh_cn_reads_chinese_around_the_agents_words_and_answers_once() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], plain_caps(), Some("zh-CN"), json!({})).await;
    let mut two = database();
    two.extend(questions(json!([{
        "question": "要运行哪些检查？", "header": "检查", "multiple": true,
        "options": [{"label": "单元测试", "description": ""}, {"label": "Lint", "description": ""}]}])));
    let request = sim.ask(None, two);
    let first = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        first["params"]["message"],
        "（第 1 个，共 2 个）[Database] Which database?\n  Postgres: Relational\n  SQLite: Embedded"
    );
    assert_eq!(titles(&first), ["✗ 拒绝", "Postgres", "SQLite"]);
    client
        .respond(&first["id"], json!({"title": "SQLite"}))
        .await;
    let second = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        second["params"]["message"],
        "（第 2 个，共 2 个）[检查] 要运行哪些检查？\n  单元测试\n  Lint\n（要选择多个选项或输入回答，请使用代码操作或 askLsp.answer 命令。）"
    );
    assert_eq!(titles(&second), ["✗ 拒绝", "单元测试", "Lint"]);
    client
        .respond(&second["id"], json!({"title": "单元测试"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;

    // A permission: ask-lsp's words (the kind, "Pattern", what each button
    // does) in Chinese, the command as the agent sent it.
    let permission = sim
        .ask_permission(PermissionAsk {
            session_id: None,
            permission: "bash".into(),
            patterns: vec!["git status".into()],
            metadata: json!({"command": "git status"}),
            always: vec!["git status *".into()],
        })
        .unwrap();
    let message = client.next_method("window/showMessageRequest").await;
    assert_eq!(
        message["params"]["message"],
        "[权限：bash] 运行 git status\n  $ git status\n  模式：git status"
    );
    assert_eq!(
        titles(&message),
        ["拒绝", "仅此一次允许", "始终允许（git status *）"]
    );
    client
        .respond(&message["id"], json!({"title": "仅此一次允许"}))
        .await;
    wait_for(|| sim.received().len() == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        vec![
            reply(&request.id, json!([["SQLite"], ["单元测试"]])),
            Received::Permission {
                id: permission.id.clone(),
                reply: "once".into(),
                message: None,
            }
        ],
        "each answer once, the agent's labels as sent"
    );
    assert!(sim.pending_permissions().is_empty());
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn the_extension_gets_a_chinese_title_and_code_actions_from_the_environment() {
    let sim = sim().await;
    // No locale from the editor or the settings: `$LANG` decides.
    let mut client = client_in(
        &sim,
        &[("LANG", "zh_CN.UTF-8")],
        extension_caps(),
        None,
        json!({}),
    )
    .await;
    let mut two = database();
    two.extend(checks());
    let request = sim.ask(None, two);
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["title"], "Database（另有 1 个）");
    assert_eq!(ask["params"]["questions"][0]["header"], "Database");
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": "file:///x"},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": []}}),
        )
        .await;
    let action_titles: Vec<&str> = actions["result"]
        .as_array()
        .expect("code actions")
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        action_titles.contains(&"拒绝“Database”")
            && action_titles.contains(&"回答“Database”：SQLite"),
        "{action_titles:?}"
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "answers": [["Postgres"], ["Unit", "E2E"]]}),
        )
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied");
    assert_eq!(
        resolved["params"]["message"],
        "已回答“Database（另有 1 个）”"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["Postgres"], ["Unit", "E2E"]]))]
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn the_extension_gets_an_opencode_permission_worded_in_chinese_and_the_reply_once() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], extension_caps(), Some("zh-CN"), json!({})).await;
    let command = "rm -rf build/ && echo 完成";
    let permission = sim
        .ask_permission(PermissionAsk {
            session_id: None,
            permission: "bash".into(),
            patterns: vec!["rm -rf build/".into()],
            metadata: json!({"command": command}),
            always: vec!["rm *".into()],
        })
        .unwrap();
    let ask = client.next_method("askQuestions/ask").await;
    let params = &ask["params"];
    assert_eq!(params["title"], format!("运行 {command}"));
    assert_eq!(params["permission"]["title"], format!("运行 {command}"));
    assert_eq!(
        params["permission"]["command"], command,
        "the command as sent"
    );
    let choices: Vec<(&str, &str, &str)> = params["permission"]["choices"]
        .as_array()
        .expect("choices")
        .iter()
        .map(|c| {
            let field = |name: &str| c[name].as_str().expect("a string");
            (field("id"), field("label"), field("effect"))
        })
        .collect();
    assert_eq!(
        choices,
        [
            ("once", "仅此一次允许", "allowOnce"),
            ("always", "始终允许（rm *）", "allowAlways"),
            ("reject", "拒绝", "rejectOnce"),
        ]
    );
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "choice": "always"}),
        )
        .await;
    let resolved = client.next_method("askQuestions/resolved").await;
    assert_eq!(resolved["params"]["state"], "replied");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        [Received::Permission {
            id: permission.id,
            reply: "always".into(),
            message: None,
        }],
        "the choice clicked, once"
    );
    assert!(client.shutdown().await.success());
}

/// A permission whose policy decision could not be sent is named in the
/// person's language around the agent's command (the broker keeps its title
/// as facts, not English words), then asked of the person.
#[tokio::test]
async fn a_permission_the_policy_could_not_decide_is_named_in_chinese() {
    let sim = sim().await;
    let policy = json!({"policy": {"mode": "reject"}});
    let mut client = client_in(&sim, &[], plain_caps(), Some("zh-CN"), policy).await;
    sim.push_fault(ask_sim::Fault::Status500);
    sim.ask_permission(PermissionAsk {
        session_id: None,
        permission: "bash".into(),
        patterns: vec!["rm -rf build/".into()],
        metadata: json!({"command": "rm -rf build/"}),
        always: vec![],
    })
    .unwrap();
    let shown = client.next_method("window/showMessage").await;
    let message = shown["params"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("ask-lsp: “运行 rm -rf build/”：自动决定无法发送"),
        "{message}"
    );
    let asked = client.next_method("window/showMessageRequest").await;
    let asked = asked["params"]["message"].as_str().expect("a message");
    assert!(asked.contains("运行 rm -rf build/"), "{asked}");
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn the_locale_setting_beats_the_editors_language_and_can_change() {
    let sim = sim().await;
    let mut client = client_in(
        &sim,
        &[("LANG", "zh_CN.UTF-8")],
        plain_caps(),
        Some("zh-CN"),
        json!({"locale": "en"}),
    )
    .await;
    let request = sim.ask(None, database());
    let message = client.next_method("window/showMessageRequest").await;
    assert_eq!(titles(&message), ["✗ Reject", "Postgres", "SQLite"]);
    // The setting changed to "": the editor's language again.
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"locale": ""}}}),
        )
        .await;
    client
        .respond(&message["id"], json!(null)) // closed: deferred
        .await;
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.show"}),
        )
        .await;
    let message = client.next_method("window/showMessageRequest").await;
    assert_eq!(titles(&message), ["✗ 拒绝", "Postgres", "SQLite"]);
    // The language changes while the message is open: its button still
    // means what it said, a reject, never a typed answer "✗ 拒绝".
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"locale": "en"}}}),
        )
        .await;
    // Nothing says when the change is in force; it takes milliseconds.
    tokio::time::sleep(Duration::from_millis(300)).await;
    client
        .respond(&message["id"], json!({"title": "✗ 拒绝"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(sim.received(), vec![Received::Reject { id: request.id }]);
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn a_locale_that_is_not_a_string_is_a_clear_configuration_error() {
    let mut client = LspClient::start(&[]).await;
    let response = client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {},
                   "initializationOptions": {"locale": 7}}),
        )
        .await;
    let message = response["error"]["message"].as_str().expect("an error");
    assert!(
        message.starts_with("invalid ask-lsp configuration: ") && message.contains("string"),
        "{message}"
    );
}

/// A person's form value below the field's minimum is refused in Chinese,
/// whether answered in the extension's form or through `askLsp.answer`;
/// nothing reaches the server until a valid answer, which goes once.
#[tokio::test]
async fn a_bad_form_value_is_refused_in_chinese_and_nothing_is_sent() {
    use ask_sim::opencode2::{Options, Received as Received2, Sim2};
    let sim = Sim2::start(Options::default()).await.expect("sim listens");
    let mut client = LspClient::start(&[]).await;
    client
        .initialize(
            extension_caps(),
            json!({"locale": "zh-CN", "servers": [{"url": sim.url()}]}),
        )
        .await;
    wait_for(|| sim.subscribers() > 0).await;
    let form = sim.create_form(
        json!({"title": "部署", "mode": "form", "fields": [
            {"key": "port", "type": "integer", "title": "Port", "minimum": 1024, "required": true}]}),
        None,
        true,
    );
    let ask = client.next_method("askQuestions/ask").await;
    client
        .respond(
            &ask["id"],
            json!({"outcome": "answered", "values": {"port": 80}}),
        )
        .await;
    let said = client.next_method("window/showMessage").await;
    assert_eq!(said["params"]["message"], "ask-lsp: “Port”不能小于 1024");
    let again = client.next_method("askQuestions/ask").await;
    let key = again["params"]["key"].clone();
    let refused = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": key, "values": {"port": 80}}]}),
        )
        .await;
    assert_eq!(
        refused["error"]["message"], "“Port”不能小于 1024",
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), vec![], "a refused value is not sent");
    let sent = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer", "arguments": [{"key": key, "values": {"port": 8080}}]}),
        )
        .await;
    assert!(sent.get("error").is_none(), "{sent}");
    wait_for(|| !sim.received().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        vec![Received2::FormReply {
            id: form["id"].as_str().unwrap().to_owned(),
            session: form["sessionID"].as_str().unwrap().to_owned(),
            answer: json!({"port": 8080}),
        }]
    );
    assert!(client.shutdown().await.success());
}

/// A plain client's typed answer that is not one of the options, where the
/// question takes none typed: refused in Chinese, the agent's words quoted
/// as given, nothing sent.
#[tokio::test]
async fn a_plain_clients_answer_that_is_not_an_option_is_refused_in_chinese() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], plain_caps(), Some("zh-CN"), json!({})).await;
    let mut strict = database();
    strict[0].custom = false;
    let request = sim.ask(None, strict);
    client.next_method("window/showMessageRequest").await;
    let refused = client
        .request(
            "workspace/executeCommand",
            json!({"command": "askLsp.answer",
                   "arguments": [{"key": format!("default/{}", request.id), "answers": [["火星"]]}]}),
        )
        .await;
    assert_eq!(
        refused["error"]["message"], "问题 0：\"火星\" 不是可选项之一，且此问题不允许输入回答",
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), vec![], "a refused answer is not sent");
    assert!(client.shutdown().await.success());
}

/// `askLsp.answer` / `askLsp.reject` arguments of the wrong shape are
/// refused in Chinese (serde's detail as serde writes it); nothing reaches
/// the server.
#[tokio::test]
async fn a_malformed_answer_command_is_refused_in_chinese_and_nothing_is_sent() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], plain_caps(), Some("zh-CN"), json!({})).await;
    let request = sim.ask(None, database());
    client.next_method("window/showMessageRequest").await;
    let key = format!("default/{}", request.id);
    let usage = "askLsp.answer 接受一个对象：[{key, answers: string[][]}]、[{key, question: number, answer: string[]}]、[{key, choice: string}] 或 [{key, values: {fieldId: value}}]";
    for (command, arguments, expected) in [
        (
            "askLsp.answer",
            json!([key, [["Postgres"]]]),
            format!("{usage}；不再接受按位置传递的参数（[key, …]）"),
        ),
        ("askLsp.answer", json!([3]), usage.to_owned()),
        (
            "askLsp.answer",
            json!([{"key": key, "answers": true}]),
            format!("{usage}：invalid type: boolean `true`, expected a sequence"),
        ),
        (
            "askLsp.answer",
            json!([{"key": key, "answers": [["Postgres"]], "choice": "allow-once"}]),
            format!(
                "{usage}：只能是 `answers`、`question` 加 `answer`、`choice` 或 `values` 之一，不能同时给出多个"
            ),
        ),
        (
            "askLsp.reject",
            json!([]),
            "askLsp.reject 接受 [key] 或 [key, message: string]".to_owned(),
        ),
    ] {
        let refused = client
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .await;
        assert_eq!(refused["error"]["message"], expected, "{refused}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), vec![], "a refused command sends nothing");
    assert!(client.shutdown().await.success());
}

/// A permission over the bounds: the notice and the stand-in's title say
/// why in Chinese; only the refusal goes, once.
#[tokio::test]
async fn an_oversized_permission_stands_in_with_its_reason_in_chinese() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], extension_caps(), Some("zh-CN"), json!({})).await;
    let patterns: Vec<String> = (0..65).map(|n| format!("rm -rf /{n}")).collect();
    let request = sim
        .ask_permission(PermissionAsk {
            patterns: patterns.clone(),
            metadata: json!({"command": patterns.join("; ")}),
            ..PermissionAsk::bash("rm -rf /")
        })
        .unwrap();
    let notice = client.next_method("window/showMessage").await;
    assert_eq!(
        notice["params"]["message"],
        format!(
            "ask-lsp: 无法显示来自 default 的一个提示（default/{}）：权限模式列表有 65 项（最多 64 项）。已列出，以便你拒绝它。",
            request.id
        )
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["permission"]["title"],
        "无法在此显示的权限请求（权限模式列表有 65 项（最多 64 项））；只能拒绝"
    );
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sim.received(),
        [Received::Permission {
            id: request.id,
            reply: "reject".into(),
            message: None,
        }]
    );
    assert!(client.shutdown().await.success());
}

/// Questions over the bounds: the stand-in the extension receives says why
/// in Chinese (none of the agent's words), and the typed answer reaches the
/// server once.
#[tokio::test]
async fn an_oversized_question_stands_in_with_its_reason_in_chinese() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], extension_caps(), Some("zh-CN"), json!({})).await;
    let options: Vec<_> = (0..65)
        .map(|n| json!({"label": format!("选项 {n}"), "description": ""}))
        .collect();
    let many = sim.ask(
        None,
        questions(json!([{"question": "选哪个？", "header": "很多", "options": options}])),
    );
    let notice = client.next_method("window/showMessage").await;
    assert!(
        notice["params"]["message"]
            .as_str()
            .unwrap()
            .contains("问题 0 有 65 个选项（最多 64 个）。已列出"),
        "{notice}"
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["questions"],
        json!([{"header": "无法显示",
                "question": "此问题无法在此显示（问题 0 有 65 个选项（最多 64 个））。请拒绝它，或输入回答。",
                "options": [], "multiple": false, "custom": true}])
    );
    assert_eq!(ask["params"]["title"], "无法显示");
    client.answer(&ask, json!([["选项 7"]])).await;
    wait_for(|| !sim.received().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), [reply(&many.id, json!([["选项 7"]]))]);
    assert!(client.shutdown().await.success());
}

/// A long header arrives whole, and cut in the title ask-lsp computes for
/// the editor: the note of what the cut hid is in Chinese.
#[tokio::test]
async fn a_long_agent_title_arrives_cut_with_its_note_in_chinese() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], extension_caps(), Some("zh-CN"), json!({})).await;
    let header = "长".repeat(150);
    let request = sim.ask(
        None,
        questions(json!([{"question": "继续吗？", "header": header,
                          "options": [{"label": "是", "description": ""}]}])),
    );
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(
        ask["params"]["title"],
        "长".repeat(80) + "…（另有 70 个字符）"
    );
    assert_eq!(ask["params"]["questions"][0]["header"], header);
    client.answer(&ask, json!([["是"]])).await;
    wait_for(|| !sim.received().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sim.received(), [reply(&request.id, json!([["是"]]))]);
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn status_speaks_the_environments_language() {
    let sim = sim().await;
    sim.ask(Some(DIR), database());
    let url = sim.url();
    let run = async |env: &[(&str, &str)], extra: &[&str]| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
        command
            .args(["status", "--url", &url, "--directory", DIR])
            .args(extra)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
            .envs(env.iter().copied())
            .kill_on_drop(true);
        let output = command.output().await.expect("ask-lsp status runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let zh = run(&[("LANG", "zh_CN.UTF-8")], &[]).await;
    assert!(zh.contains("）：已连接\n"), "{zh}");
    assert!(zh.contains("  1 个提示等待回答："), "{zh}");
    assert!(zh.contains("  - 问题“Database”（会话 "), "{zh}");
    // LC_ALL outranks LANG; --locale outranks both.
    let en = run(&[("LANG", "zh_CN.UTF-8"), ("LC_ALL", "en_US.UTF-8")], &[]).await;
    assert!(en.contains("): connected\n  1 prompt pending:"), "{en}");
    let en = run(&[("LC_ALL", "zh_CN.UTF-8")], &["--locale", "en"]).await;
    assert!(en.contains("  - question \"Database\" (session "), "{en}");
}

/// A permission's title ask-lsp composes is worded for a person in
/// `status`'s lines, and stays English in `--json`.
#[tokio::test]
async fn status_names_a_permission_in_the_persons_language() {
    let sim = sim().await;
    sim.ask_permission(PermissionAsk {
        session_id: None,
        permission: "bash".into(),
        patterns: vec!["rm -rf build/".into()],
        metadata: json!({"command": "rm -rf build/"}),
        always: vec![],
    })
    .unwrap();
    let url = sim.url();
    let status = async |extra: &[&str]| {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(["status", "--url", &url, "--locale", "zh-CN"])
            .args(extra)
            .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
            .kill_on_drop(true)
            .output()
            .await
            .expect("ask-lsp status runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let zh = status(&[]).await;
    assert!(zh.contains("“运行 rm -rf build/”"), "{zh}");
    let json = status(&["--json"]).await;
    assert!(json.contains("\"title\": \"Run rm -rf build/\""), "{json}");
}

/// A server nobody listens on, in zh-CN: the editor's pop-up and the
/// extension's server state say "cannot reach" in Chinese, with the
/// operating system's words and the command to run as they are.
#[tokio::test]
async fn an_unreachable_server_is_named_in_chinese_to_the_editor() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let mut client = LspClient::start(&[]).await;
    let response = client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": extension_caps(),
                   "locale": "zh-CN",
                   "initializationOptions": {"servers": [{"url": url}]}}),
        )
        .await;
    assert!(response.get("error").is_none(), "{response:#}");
    client.notify("initialized", json!({})).await;
    let expected = format!(
        "无法连接 {url} 上的 OpenCode：connection refused — `opencode serve` 是否在那里运行？"
    );
    let shown = client.next_method("window/showMessage").await;
    assert_eq!(
        shown["params"]["message"],
        json!(format!("ask-lsp: {expected}"))
    );
    // The server state the extension shows (`askQuestions/status` has the
    // same servers).
    let status = client.status().await;
    assert_eq!(status["servers"][0]["error"], json!(expected), "{status:#}");
    assert!(client.shutdown().await.success());
}

/// `ask-lsp status` under `LANG=zh_CN.UTF-8` against a server nobody
/// listens on: the line in Chinese, exit code 1; `--json` stays English.
#[tokio::test]
async fn status_names_an_unreachable_server_in_chinese() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let status = async |extra: &[&str]| {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(["status", "--url", &url])
            .args(extra)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env("LANG", "zh_CN.UTF-8")
            .env_remove("ASK_LSP_URL")
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
            .kill_on_drop(true)
            .output()
            .await
            .expect("ask-lsp status runs");
        let out = String::from_utf8(output.stdout).expect("UTF-8");
        (output.status.code(), out)
    };
    let (code, out) = status(&[]).await;
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        out,
        format!(
            "default {url}（OpenCode）：未连接\n  \
             无法连接 {url} 上的 OpenCode：connection refused — `opencode serve` 是否在那里运行？\n"
        )
    );
    let (code, json) = status(&["--json"]).await;
    assert_eq!(code, Some(1), "{json}");
    assert!(
        json.contains(&format!(
            "\"error\": \"cannot reach OpenCode at {url}: connection refused — is `opencode serve` running there?\""
        )),
        "{json}"
    );
}

/// `watch` in a terminal 40 cells wide under `LANG=zh_CN.UTF-8`: the
/// instructions in Chinese, a typed Chinese answer wider than the terminal
/// wrapped by display cells (two a character) and edited in the middle, and
/// that answer on the server once.
#[tokio::test]
async fn watch_in_tmux_speaks_chinese_and_lays_out_cjk_by_cells() {
    let sim = sim().await;
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().join("watch");
    std::fs::create_dir(&cwd).unwrap();
    let command = format!(
        "env -u LC_ALL -u LC_MESSAGES LANG=zh_CN.UTF-8 ASK_LSP_HOOK=0 {} watch --url {}",
        env!("CARGO_BIN_EXE_ask-lsp"),
        sim.url()
    );
    let Some(tmux) = common::tmux::Tmux::start_sized(&command, &cwd, WAIT, (40, 20)) else {
        return;
    };
    tmux.wait_for("（按 Ctrl-D 退出）").await;
    let request = sim.ask(None, database());
    tmux.wait_for("一个数字，或输入你自己的回答").await;
    let screen = tmux.screen();
    assert!(screen.contains("── 问题，来自 default"), "{screen}");
    assert!(screen.contains("空行表示拒绝。"), "{screen}");
    // 25 characters, 50 cells after "> ": the first row holds "> " and 19
    // of them (40 cells), the second the other 6.
    let answer = "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑寅卯辰";
    tmux.keys(&["-l", answer]);
    tmux.wait_for("子丑寅卯辰").await;
    // Left 3 times and a character typed there: the line is drawn again.
    tmux.keys(&["Left", "Left", "Left"]);
    tmux.keys(&["-l", "龙"]);
    let edited = "一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑龙寅卯辰";
    tmux.wait_for("丑龙寅").await;
    let screen = tmux.screen();
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = rows
        .iter()
        .position(|row| row.starts_with("> 一"))
        .unwrap_or_else(|| panic!("the typed line:\n{screen}"));
    assert_eq!(
        rows[at], "> 一二三四五六七八九十甲乙丙丁戊己庚辛壬",
        "{screen}"
    );
    assert_eq!(rows[at + 1], "癸子丑龙寅卯辰", "{screen}");
    assert_eq!(
        screen.matches("一二三").count(),
        1,
        "no stale copy of the first row:\n{screen}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("✓ 已回答“Database”").await;
    assert_eq!(sim.received(), vec![reply(&request.id, json!([[edited]]))]);
    let screen = tmux.screen();
    let done = screen.lines().position(|l| l.contains("✓ 已回答")).unwrap();
    assert!(
        done > at + 1,
        "the notice comes below the whole line:\n{screen}"
    );

    // A permission: what each number does in Chinese, the command as sent.
    let permission = sim
        .ask_permission(PermissionAsk {
            session_id: None,
            permission: "bash".into(),
            patterns: vec!["make".into()],
            metadata: json!({"command": "make"}),
            always: vec!["make *".into()],
        })
        .unwrap();
    tmux.wait_for("  3. 拒绝").await;
    let screen = tmux.screen();
    assert!(
        screen.contains("[权限：bash] 运行 make\n  $ make\n  模式：make\n  1. 仅此一次允许\n  2. 始终允许（make *）\n"),
        "{screen}"
    );
    tmux.keys(&["-l", "1"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("✓ 已允许（仅此一次）“运行 make”").await;
    assert_eq!(
        sim.received()[1..],
        [Received::Permission {
            id: permission.id,
            reply: "once".into(),
            message: None,
        }]
    );
}

/// `ask-lsp ARGS` with only `env` for a language: its exit code, stdout
/// and stderr.
fn cli(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(args)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ask-lsp runs");
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8");
    (
        output.status.code(),
        text(output.stdout),
        text(output.stderr),
    )
}

#[test]
fn the_command_line_speaks_the_environments_language_or_the_locale_flags() {
    for (env, flag) in [
        (&[("LANG", "zh_CN.UTF-8")][..], &[][..]),
        (&[("LANG", "C")][..], &["--locale", "zh-CN"][..]),
    ] {
        let run = |args: &[&str]| cli(env, &[flag, args].concat());
        let (code, help, _) = run(&["--help"]);
        assert_eq!(code, Some(0));
        assert!(
            help.starts_with("ask-lsp：把 AI 编码代理的提问和权限请求"),
            "{help}"
        );
        // Commands and flags stay as typed.
        assert!(help.contains("  ask-lsp watch [--url URL]..."), "{help}");
        let (code, help, _) = run(&["watch", "--help"]);
        assert_eq!(code, Some(0));
        assert!(
            help.starts_with("用法：ask-lsp watch [--url URL]..."),
            "{help}"
        );
        assert!(help.contains("（按 Ctrl-D 退出）"), "{help}");
        let (code, out, err) = run(&["frob"]);
        assert_eq!((code, out.as_str()), (Some(2), ""));
        assert!(
            err.starts_with("ask-lsp: 未知命令 \"frob\"\n\nask-lsp：把"),
            "{err}"
        );
        let (code, out, err) = run(&["watch", "--frob", "1"]);
        assert_eq!((code, out.as_str()), (Some(2), ""));
        assert!(
            err.starts_with("ask-lsp: 未知选项 \"--frob\"\n\n用法：ask-lsp watch"),
            "{err}"
        );
    }
    let (code, out, err) = cli(&[("LANG", "zh_CN.UTF-8")], &["--locale"]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(err, "ask-lsp: --locale 需要一个值（例如 zh-CN）\n");
    // `--locale` wins over the environment.
    let (_, help, _) = cli(&[("LANG", "zh_CN.UTF-8")], &["--help", "--locale", "en"]);
    assert!(
        help.starts_with("ask-lsp: brings an AI coding agent's"),
        "{help}"
    );
}

#[test]
fn the_command_line_in_english_says_what_it_always_said() {
    let english = [("LANG", "C")];
    let (code, help, _) = cli(&english, &["--help"]);
    assert_eq!(code, Some(0));
    assert!(help.starts_with(
        "ask-lsp: brings an AI coding agent's questions and permission requests into your editor\n\nUsage:\n  ask-lsp [lsp]       LSP server on stdio (what editors start)\n"
    ), "{help}");
    assert!(
        help.ends_with("ASK_LSP_LOG (log filter, e.g. debug; logs go to stderr).\n"),
        "{help}"
    );
    let (code, watch, _) = cli(&english, &["watch", "--help"]);
    assert_eq!(code, Some(0));
    assert!(
        watch.starts_with("Usage: ask-lsp watch [--url URL]..."),
        "{watch}"
    );
    let (code, _, err) = cli(&english, &["frob"]);
    assert_eq!(code, Some(2));
    assert_eq!(err, format!("ask-lsp: unknown command \"frob\"\n\n{help}"));
    let (code, _, err) = cli(&english, &["watch", "--frob", "1"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("ask-lsp: unknown option \"--frob\"\n\n{watch}")
    );
    let (code, _, err) = cli(&english, &["watch", "--locale"]);
    assert_eq!(code, Some(2));
    assert_eq!(err, "ask-lsp: --locale needs a value (e.g. zh-CN)\n");
}

/// A notice an adapter raises (#45), in zh-CN: a question whose id cannot
/// go into a URL (`/` at byte 3) makes the OpenCode adapter raise
/// `Problem::CannotAnswer`, once listed at start-up and once live. `watch`
/// under `LANG=zh_CN.UTF-8` prints each `!` line in Chinese, and `status
/// --locale zh-CN` lists the listed one in Chinese; no English sentence of
/// ask-lsp's own appears.
#[tokio::test]
async fn a_prompt_that_cannot_be_answered_here_is_named_in_chinese_in_watch_and_status() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let sim = sim().await;
    sim.add_pending(ask_sim::QuestionRequest {
        id: "que/1".into(),
        session_id: "ses_1".into(),
        questions: database(),
        tool: None,
    });
    let cannot = |id: &str| {
        format!(
            "无法在此回答问题提示（拒绝了 id“{id}”：第 3 字节处为 '/'（id 只能由 ASCII 字母、数字、“_”和“-”组成））；请在智能体自己的界面中回答"
        )
    };
    // The server's label too (#45): "OpenCode at http://…" is worded.
    let english = [
        "cannot be answered from here",
        "answer it in",
        "OpenCode at",
    ];

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["watch", "--url", &sim.url()])
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "zh_CN.UTF-8")
        .env("ASK_LSP_HOOK", "0")
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut out = String::new();
    // Reads `watch`'s stdout until a `!` line arrives; returns it.
    let mut next_notice = async |out: &mut String| loop {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no `!` line within {WAIT:?}:\n{out}"))
            .unwrap()
            .unwrap_or_else(|| panic!("watch ended:\n{out}"));
        out.push_str(&line);
        out.push('\n');
        if line.starts_with("! ") {
            return line;
        }
    };
    let listed = next_notice(&mut out).await;
    assert_eq!(listed, format!("! default: {}", cannot("que/1")), "{out}");
    // The same, live.
    wait_for(|| sim.subscribers() > 0).await;
    let event = json!({"directory": DIR, "payload": {"type": "question.asked", "properties": {
        "id": "que/2", "sessionID": "ses_2",
        "questions": [{"question": "Which database?", "header": "Database", "options": []}]}}});
    sim.emit_raw(&format!("data: {event}\n\n"));
    let live = next_notice(&mut out).await;
    assert_eq!(live, format!("! default: {}", cannot("que/2")), "{out}");
    drop(child.stdin.take()); // Ctrl-D
    while let Ok(Some(line)) = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("watch ends at end of input")
    {
        out.push_str(&line);
        out.push('\n');
    }
    assert!(out.contains("（按 Ctrl-D 退出）"), "{out}");
    for english in english {
        assert!(!out.contains(english), "{out}");
    }
    assert_eq!(sim.received(), vec![], "nothing is answered");

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .args(["status", "--url", &sim.url(), "--locale", "zh-CN"])
        .env("XDG_STATE_HOME", "/nonexistent/ask-lsp-tests")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .kill_on_drop(true)
        .output()
        .await
        .expect("ask-lsp status runs");
    let status = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        status.contains(&format!("\n  ! {}\n", cannot("que/1"))),
        "{status}"
    );
    for english in english {
        assert!(!status.contains(english), "{status}");
    }
}

/// OpenCode's "allow always" patterns beyond the label's 200 characters:
/// the choice's label says what the cut hid in Chinese, not in English
/// (#45: the cut was noted in English below the presentation floor).
#[tokio::test]
async fn a_long_allow_always_pattern_is_cut_with_its_note_in_chinese() {
    let sim = sim().await;
    let mut client = client_in(&sim, &[], extension_caps(), Some("zh-CN"), json!({})).await;
    let pattern = "长".repeat(250);
    let permission = sim
        .ask_permission(PermissionAsk {
            session_id: None,
            permission: "bash".into(),
            patterns: vec!["ls".into()],
            metadata: json!({"command": "ls"}),
            always: vec![pattern],
        })
        .unwrap();
    let ask = client.next_method("askQuestions/ask").await;
    let always = ask["params"]["permission"]["choices"]
        .as_array()
        .expect("choices")
        .iter()
        .find(|c| c["id"] == "always")
        .expect("an always choice")["label"]
        .as_str()
        .expect("a label")
        .to_owned();
    assert_eq!(
        always,
        format!("始终允许（{}…（另有 50 个字符））", "长".repeat(200))
    );
    client
        .respond(&ask["id"], json!({"outcome": "rejected"}))
        .await;
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received(),
        [Received::Permission {
            id: permission.id,
            reply: "reject".into(),
            message: None,
        }]
    );
    assert!(client.shutdown().await.success());
}
