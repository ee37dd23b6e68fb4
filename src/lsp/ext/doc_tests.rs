use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::*;

const DOC: &str = include_str!("../../../docs/protocol.md");

#[derive(Debug, Default)]
struct Documented {
    /// Interface → field → (optional, nullable).
    interfaces: BTreeMap<String, BTreeMap<String, (bool, bool)>>,
    /// String unions → their members.
    unions: BTreeMap<String, BTreeSet<String>>,
    /// Unions of interfaces.
    aliases: BTreeMap<String, Vec<String>>,
}

/// Reads the `ts` blocks: `interface X { a?: T | null; }` and
/// `type Y = "a" | "b";` (comments after `//` ignored).
fn documented() -> Documented {
    let mut doc = Documented::default();
    let mut code = String::new();
    let mut inside = false;
    for line in DOC.lines() {
        match (inside, line.trim()) {
            (false, "```ts") => inside = true,
            (true, "```") => inside = false,
            (true, text) => {
                code.push_str(text.split("//").next().unwrap_or(""));
                code.push('\n');
            }
            _ => {}
        }
    }
    let mut rest = code.as_str();
    while let Some(at) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[at..];
        if let Some(body) = rest.strip_prefix("interface ") {
            let open = body.find('{').expect("interface body");
            let close = body.find('}').expect("interface end");
            let name = body[..open].trim().to_owned();
            let fields = body[open + 1..close]
                .split(';')
                .filter(|f| !f.trim().is_empty())
                .map(|field| {
                    let (name, ty) = field.split_once(':').expect("name: type");
                    let name = name.trim();
                    let optional = name.ends_with('?');
                    let nullable = ty.split('|').any(|t| t.trim() == "null");
                    (name.trim_end_matches('?').to_owned(), (optional, nullable))
                })
                .collect();
            assert!(doc.interfaces.insert(name, fields).is_none());
            rest = &body[close + 1..];
        } else if let Some(body) = rest.strip_prefix("type ") {
            let end = body.find(';').expect("type ends with ;");
            let (name, members) = body[..end].split_once('=').expect("type X = …");
            let members: Vec<&str> = members.split('|').map(str::trim).collect();
            if members.iter().all(|m| m.starts_with('"')) {
                doc.unions.insert(
                    name.trim().to_owned(),
                    members
                        .iter()
                        .map(|m| m.trim_matches('"').to_owned())
                        .collect(),
                );
            } else {
                doc.aliases.insert(
                    name.trim().to_owned(),
                    members.iter().map(|m| m.to_string()).collect(),
                );
            }
            rest = &body[end + 1..];
        } else {
            panic!("unexpected TypeScript in docs/protocol.md: {rest:.60}");
        }
    }
    doc
}

fn json(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

/// One field of every type, every bound set: all the keys a field sends.
fn field_kinds() -> Vec<FieldKind> {
    let option = FieldOption {
        value: "v".into(),
        label: "l".into(),
        description: String::new(),
    };
    vec![
        FieldKind::Text {
            format: Some(TextFormat::Email),
            pattern: Some("x".into()),
            min_length: Some(1),
            max_length: Some(2),
            default: Some("d".into()),
        },
        FieldKind::Number {
            minimum: Some(0.0),
            maximum: Some(1.0),
            default: Some(0.5),
        },
        FieldKind::Integer {
            minimum: None,
            maximum: None,
            default: None,
        },
        FieldKind::Boolean { default: None },
        FieldKind::Choice {
            options: vec![option.clone()],
            default: None,
        },
        FieldKind::Multi {
            options: vec![option.clone()],
            min_items: Some(0),
            max_items: Some(1),
            default: None,
        },
    ]
}

/// Each wire shape with every field set, and with every optional field
/// left out: their keys are the interface's fields and its required ones.
fn exemplars() -> BTreeMap<&'static str, (Value, Value)> {
    let source = Source {
        backend: "opencode".into(),
        url: "http://x".into(),
        directory: None,
    };
    let origin = Origin {
        tool_call_id: None,
        agent: None,
        session_title: None,
        requester: None,
    };
    let question = Question {
        question: "q".into(),
        header: "h".into(),
        options: vec![],
        multiple: false,
        custom: true,
        secret: true,
    };
    let permission = Permission {
        action: "bash".into(),
        title: "t".into(),
        patterns: vec![],
        command: None,
        diff: None,
        choices: vec![],
    };
    let ask = AskParams {
        key: "s/1".into(),
        server: "s".into(),
        request_id: "1".into(),
        session_id: "ses".into(),
        kind: PromptKind::Questions,
        title: "t".into(),
        source: source.clone(),
        origin: origin.clone(),
        questions: None,
        permission: None,
        form: None,
        timeout_ms: None,
        pending: 1,
    };
    let option = FieldOption {
        value: "v".into(),
        label: "l".into(),
        description: String::new(),
    };
    let field = |kind: FieldKind| FormField {
        id: "f".into(),
        title: "F".into(),
        description: String::new(),
        required: false,
        kind,
    };
    let field_kinds = field_kinds();
    // Every key any field type sends, and what a bare boolean sends.
    let mut all_field_keys = serde_json::Map::new();
    for kind in &field_kinds {
        all_field_keys.extend(json(field(kind.clone())).as_object().unwrap().clone());
    }
    let form = Form {
        message: "m".into(),
        url: None,
        fields: vec![],
    };
    let full_ask = AskParams {
        questions: Some(vec![question.clone()]),
        permission: Some(permission.clone()),
        form: Some(form.clone()),
        timeout_ms: Some(1),
        ..ask.clone()
    };
    let server = ServerStatus {
        name: "s".into(),
        backend: "opencode".into(),
        url: "http://x".into(),
        connected: true,
        error: None,
        idle: false,
        defaulted: false,
        discovered: None,
        generation: None,
    };
    let counters = Counters {
        answered_here: 0,
        rejected_here: 0,
        resolved_elsewhere: 0,
        policy_answered: 0,
        policy_rejected: 0,
        timeouts: 0,
    };
    let status = StatusParams {
        pending: 0,
        servers: vec![],
        counters: counters.clone(),
    };
    let resolved = ResolvedParams {
        key: "s/1".into(),
        state: ResolvedState::Replied,
        reason: ResolvedReason::AnsweredHere,
        here: true,
        message: "m".into(),
        pending: 0,
    };
    let same = |value: Value| (value.clone(), value);
    BTreeMap::from([
        ("AskParams", (json(&full_ask), json(&ask))),
        ("Source", same(json(&source))),
        (
            "Origin",
            (
                json(Origin {
                    session_title: Some("t".into()),
                    requester: Some("r".into()),
                    ..origin.clone()
                }),
                json(&origin),
            ),
        ),
        (
            "Question",
            (
                json(&question),
                json(Question {
                    secret: false,
                    ..question.clone()
                }),
            ),
        ),
        (
            "QuestionOption",
            same(json(QuestionOption {
                label: "l".into(),
                description: "d".into(),
            })),
        ),
        ("Permission", same(json(&permission))),
        (
            "PermissionChoice",
            same(json(PermissionChoice {
                id: "once".into(),
                label: "Allow once".into(),
                effect: Effect::AllowOnce,
            })),
        ),
        (
            "AskAnswered",
            (
                json(AskResult::Answered {
                    answers: Some(vec![]),
                    choice: Some("c".into()),
                    values: Some(Default::default()),
                }),
                json(AskResult::Answered {
                    answers: None,
                    choice: None,
                    values: None,
                }),
            ),
        ),
        (
            "AskRejected",
            (
                json(AskResult::Rejected {
                    message: Some("m".into()),
                }),
                json(AskResult::Rejected { message: None }),
            ),
        ),
        ("AskDeferred", same(json(AskResult::Deferred))),
        ("ResolvedParams", same(json(&resolved))),
        ("StatusParams", same(json(&status))),
        (
            "ServerStatus",
            (
                json(ServerStatus {
                    generation: Some("2".into()),
                    idle: true,
                    ..server.clone()
                }),
                json(&server),
            ),
        ),
        ("Counters", same(json(&counters))),
        ("AnswerSent", same(json(AnswerResult::Sent))),
        ("Form", same(json(&form))),
        (
            "FormLink",
            (
                json(FormLink {
                    url: "https://x".into(),
                    domain: "x".into(),
                    warning: Some("w".into()),
                }),
                json(FormLink {
                    url: "https://x".into(),
                    domain: "x".into(),
                    warning: None,
                }),
            ),
        ),
        (
            "FormField",
            (
                Value::Object(all_field_keys),
                json(field(FieldKind::Boolean { default: None })),
            ),
        ),
        (
            "FieldOption",
            (
                json(FieldOption {
                    description: "d".into(),
                    ..option.clone()
                }),
                json(&option),
            ),
        ),
        (
            "AnswerArguments",
            (
                json(AnswerArguments {
                    key: "s/1".into(),
                    answers: Some(vec![]),
                    question: Some(0),
                    answer: Some(vec![]),
                    choice: Some("c".into()),
                    values: Some(Default::default()),
                }),
                json(AnswerArguments {
                    key: "s/1".into(),
                    answers: None,
                    question: None,
                    answer: None,
                    choice: None,
                    values: None,
                }),
            ),
        ),
        (
            "AnswerPartial",
            same(json(AnswerResult::Partial { remaining: vec![] })),
        ),
    ])
}

/// Every variant of each string union, as serialized. The matches have
/// no wildcard, so a new variant does not compile until it is listed.
fn unions() -> BTreeMap<&'static str, BTreeSet<String>> {
    fn names<T: Serialize>(all: &[T]) -> BTreeSet<String> {
        all.iter()
            .map(|v| json(v).as_str().unwrap().to_owned())
            .collect()
    }
    let kinds = [
        PromptKind::Questions,
        PromptKind::Permission,
        PromptKind::Form,
    ];
    for kind in kinds {
        match kind {
            PromptKind::Questions | PromptKind::Permission | PromptKind::Form => {}
        }
    }
    let formats = [
        TextFormat::Email,
        TextFormat::Uri,
        TextFormat::Date,
        TextFormat::DateTime,
    ];
    for format in formats {
        match format {
            TextFormat::Email | TextFormat::Uri | TextFormat::Date | TextFormat::DateTime => {}
        }
    }
    // Each field type, by the tag it is sent with.
    let field_types: BTreeSet<String> = field_kinds()
        .iter()
        .map(|kind| {
            match kind {
                FieldKind::Text { .. }
                | FieldKind::Number { .. }
                | FieldKind::Integer { .. }
                | FieldKind::Boolean { .. }
                | FieldKind::Choice { .. }
                | FieldKind::Multi { .. } => {}
            }
            json(kind)["type"].as_str().unwrap().to_owned()
        })
        .collect();
    let effects = [
        Effect::AllowOnce,
        Effect::AllowAlways,
        Effect::RejectOnce,
        Effect::RejectAlways,
    ];
    for effect in effects {
        match effect {
            Effect::AllowOnce | Effect::AllowAlways | Effect::RejectOnce | Effect::RejectAlways => {
            }
        }
    }
    let states = [
        ResolvedState::Replied,
        ResolvedState::Rejected,
        ResolvedState::Dismissed,
    ];
    for state in states {
        match state {
            ResolvedState::Replied | ResolvedState::Rejected | ResolvedState::Dismissed => {}
        }
    }
    use ResolvedReason::*;
    let reasons = [
        AnsweredHere,
        AnsweredElsewhere,
        Policy,
        Timeout,
        RejectedHere,
        RejectedElsewhere,
        SessionEnded,
        Gone,
    ];
    for reason in reasons {
        match reason {
            AnsweredHere | AnsweredElsewhere | Policy | Timeout | RejectedHere
            | RejectedElsewhere | SessionEnded | Gone => {}
        }
    }
    BTreeMap::from([
        ("PromptKind", names(&kinds)),
        ("Effect", names(&effects)),
        ("ResolvedState", names(&states)),
        ("ResolvedReason", names(&reasons)),
        ("TextFormat", names(&formats)),
        ("FieldType", field_types),
    ])
}

#[test]
fn every_documented_interface_matches_the_code() {
    let doc = documented();
    let exemplars = exemplars();
    let documented: BTreeSet<&str> = doc.interfaces.keys().map(String::as_str).collect();
    let coded: BTreeSet<&str> = exemplars.keys().copied().collect();
    assert_eq!(
        documented, coded,
        "interfaces in docs/protocol.md vs ext.rs"
    );
    for (name, (full, minimal)) in &exemplars {
        let fields = &doc.interfaces[*name];
        let all: BTreeSet<&str> = full
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let documented: BTreeSet<&str> = fields.keys().map(String::as_str).collect();
        assert_eq!(documented, all, "fields of {name}");
        let minimal = minimal.as_object().unwrap();
        for (field, (optional, nullable)) in fields {
            assert_eq!(
                !optional,
                minimal.contains_key(field),
                "{name}.{field}: documented {} but the code {} it",
                if *optional { "optional" } else { "required" },
                if minimal.contains_key(field) {
                    "always sends"
                } else {
                    "may leave out"
                },
            );
            if let Some(value) = minimal.get(field) {
                assert_eq!(*nullable, value.is_null(), "{name}.{field}: null or not");
            }
        }
    }
}

#[test]
fn every_documented_union_matches_the_code() {
    let doc = documented();
    let unions = unions();
    let coded: BTreeMap<String, BTreeSet<String>> = unions
        .into_iter()
        .map(|(name, members)| (name.to_owned(), members))
        .collect();
    assert_eq!(doc.unions, coded);
    for (alias, members) in &doc.aliases {
        // Named members (not `string`, `number[]`, …) must be documented.
        for member in members.iter().filter(|m| m.starts_with(char::is_uppercase)) {
            assert!(
                doc.interfaces.contains_key(member),
                "{alias}: {member} is not a documented interface"
            );
        }
    }
}

#[test]
fn every_method_and_command_is_documented() {
    for method in [Ask::METHOD, Resolved::METHOD, Status::METHOD] {
        assert!(DOC.contains(&format!("### `{method}`")), "{method}");
    }
    for command in COMMANDS {
        assert!(DOC.contains(&format!("| `{command}` |")), "{command}");
    }
    assert!(DOC.contains(&format!(
        "\"askQuestions\": {{ \"version\": {EXTENSION_VERSION} }}"
    )));
}

const PROTOCOL_TS: &str = include_str!("../../../editors/vscode/src/protocol.ts");

/// protocol.ts's interfaces: field → (optional, nullable), comments left out.
fn typescript_interfaces() -> BTreeMap<String, BTreeMap<String, (bool, bool)>> {
    let mut code = String::new();
    let mut rest = PROTOCOL_TS;
    while let Some(at) = rest.find("/*") {
        code.push_str(&rest[..at]);
        rest = rest[at..].split_once("*/").expect("comment ends").1;
    }
    code.push_str(rest);
    let code: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or("").to_owned() + "\n")
        .collect();
    let mut interfaces = BTreeMap::new();
    for body in code.split("export interface ").skip(1) {
        let open = body.find('{').expect("interface body");
        let close = body.find('}').expect("interface end");
        let fields = body[open + 1..close]
            .split(';')
            .filter(|f| !f.trim().is_empty())
            .map(|field| {
                let (name, ty) = field.split_once(':').expect("name: type");
                let name = name.trim();
                let nullable = ty.split('|').any(|t| t.trim() == "null");
                (
                    name.trim_end_matches('?').to_owned(),
                    (name.ends_with('?'), nullable),
                )
            })
            .collect();
        interfaces.insert(body[..open].trim().to_owned(), fields);
    }
    interfaces
}

/// The VS Code extension's types against docs/protocol.md: every interface
/// it declares is one the doc has, with only fields the server sends; where
/// the server may leave a field out or send `null`, the client must say so
/// too. A client may be more lenient than that: take a field the server
/// always sends as optional (servers of protocol version 1 leave those out).
#[test]
fn vscode_protocol_ts_agrees_with_the_doc() {
    let doc = documented();
    // protocol.ts's own name for a doc interface.
    let doc_name = |name: &str| match name {
        "QuestionInfo" => "Question".to_owned(),
        other => other.to_owned(),
    };
    let mut problems = Vec::new();
    for (name, fields) in typescript_interfaces() {
        let Some(documented) = doc.interfaces.get(&doc_name(&name)) else {
            problems.push(format!("{name}: not in docs/protocol.md"));
            continue;
        };
        for (field, &(optional, nullable)) in &fields {
            match documented.get(field) {
                None => problems.push(format!("{name}.{field}: the server never sends it")),
                Some(&(doc_optional, doc_nullable)) => {
                    if doc_optional && !optional {
                        problems.push(format!("{name}.{field}: the server may leave it out"));
                    }
                    if doc_nullable && !nullable {
                        problems.push(format!("{name}.{field}: the server may send null"));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "protocol.ts: {problems:#?}");
}
