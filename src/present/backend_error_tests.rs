use std::collections::BTreeSet;
use std::time::Duration;

use super::*;
use crate::present::i18n::{Locale, assert_translated, in_locale};

fn server() -> ServerLabel {
    ServerLabel::OpenCode {
        url: "http://127.0.0.1:4096".into(),
    }
}

/// Every kind of server an error can name.
fn labels() -> Vec<ServerLabel> {
    vec![
        server(),
        ServerLabel::SandboxAgent {
            url: "http://127.0.0.1:2468".into(),
            server_id: "claude".into(),
        },
        ServerLabel::CodexDaemon {
            home: "/home/me/.codex".into(),
        },
        ServerLabel::Hook,
    ]
}

fn errors() -> Vec<BackendError> {
    let mut errors = vec![
        BackendError::NotFound { server: server() },
        BackendError::BadRequest {
            server: server(),
            message: "bad id".into(),
        },
        BackendError::Server {
            server: server(),
            status: 502,
            message: "upstream".into(),
        },
        BackendError::Redirect {
            server: server(),
            status: 302,
        },
        BackendError::Timeout {
            server: server(),
            after: Duration::from_millis(1500),
        },
        BackendError::Unanswered { server: server() },
        BackendError::SubscriptionUnanswered { server: server() },
        BackendError::Stream {
            server: server(),
            cause: Cause::ClosedMidResponse,
        },
        BackendError::Stalled {
            server: server(),
            after: Duration::from_secs(30),
        },
        BackendError::HookSocket {
            message: "permission denied".into(),
        },
        BackendError::NoCodexDaemon {
            home: "/home/me/.codex".into(),
        },
        BackendError::CodexSocketRefused {
            what: "/tmp/codex-daemon-1000/abc".into(),
        },
        BackendError::CodexHomeNotDirectory {
            home: "/home/me/codex-file".into(),
        },
        BackendError::Closed,
    ];
    for advice in [AuthAdvice::OpenCodePassword, AuthAdvice::SandboxAgentToken] {
        errors.push(BackendError::Unauthorized {
            server: server(),
            advice,
        });
    }
    for expected in [
        Expected::OpenCode,
        Expected::OpenCode2,
        Expected::SandboxAgent,
    ] {
        for kind in [BodyKind::Html, BodyKind::Other("text/plain".into())] {
            errors.push(BackendError::NotJson {
                server: server(),
                status: 200,
                kind,
                expected,
            });
        }
        errors.push(BackendError::Malformed {
            server: server(),
            cause: Cause::Said("relative URL without a base".into()),
            expected,
        });
        errors.push(BackendError::NoEvents {
            server: server(),
            status: 404,
            expected,
        });
    }
    for hint in [
        ConnectHint::Start(StartHint::OpenCodeServe),
        ConnectHint::Start(StartHint::SandboxAgentServer),
        ConnectHint::UntrustedCertificate,
    ] {
        errors.push(BackendError::Connect {
            server: server(),
            cause: Cause::Said("connection refused".into()),
            hint,
        });
    }
    errors.extend(reasons().into_iter().map(|reason| BackendError::Refused {
        server: server(),
        reason,
    }));
    errors
}

/// Every reason an answer is not sent, one sample each.
fn reasons() -> Vec<RefuseReason> {
    vec![
        RefuseReason::AnswerDoesNotFit,
        RefuseReason::NotAnAnswerToQuestions,
        RefuseReason::NotAnAnswerToForm,
        RefuseReason::NotAnAnswerToPermission,
        RefuseReason::NotAChoice,
        RefuseReason::NoAmendment,
        RefuseReason::NotOneAnswerPerQuestion,
        RefuseReason::BadId(crate::text::IdError::Empty),
        RefuseReason::FormUnshowable {
            detail: "⟨…⟩".into(),
        },
        RefuseReason::SessionUnconfirmed,
        RefuseReason::PermissionUnconfirmed(Box::new(BackendError::Closed)),
    ]
}

/// Each reason by number: a new one fails to compile here until
/// [`reasons`] has it.
fn reason_variant(reason: &RefuseReason) -> usize {
    match reason {
        RefuseReason::AnswerDoesNotFit => 0,
        RefuseReason::NotAnAnswerToQuestions => 1,
        RefuseReason::NotAnAnswerToForm => 2,
        RefuseReason::NotAnAnswerToPermission => 3,
        RefuseReason::NotAChoice => 4,
        RefuseReason::NoAmendment => 5,
        RefuseReason::NotOneAnswerPerQuestion => 6,
        RefuseReason::BadId(_) => 7,
        RefuseReason::FormUnshowable { .. } => 8,
        RefuseReason::SessionUnconfirmed => 9,
        RefuseReason::PermissionUnconfirmed(_) => 10,
    }
}

/// Why an answer was not sent, in Chinese with none of the English
/// sentence's words (#45: the reason was an English string), and in
/// English for logs.
#[test]
fn every_refusal_reason_is_worded_in_chinese_without_english() {
    let covered: BTreeSet<usize> = reasons().iter().map(reason_variant).collect();
    assert_eq!(covered, (0..11).collect());
    for reason in reasons() {
        let error = BackendError::Refused {
            server: server(),
            reason,
        };
        let en = error.to_string();
        let (_, english) = en.split_once(": not sent: ").expect(&en);
        let zh = in_locale(Locale::ZhCn, || backend_error(&error));
        for word in english
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|word| word.len() > 3)
        {
            assert!(!zh.contains(word), "{word:?} in {zh}");
        }
    }
    assert_eq!(
        BackendError::Refused {
            server: server(),
            reason: RefuseReason::AnswerDoesNotFit,
        }
        .to_string(),
        "OpenCode at http://127.0.0.1:4096: not sent: the answer does not fit the request"
    );
}

fn causes() -> Vec<Cause> {
    vec![
        Cause::TimedOut,
        Cause::Failed,
        Cause::ClosedBeforeResponse,
        Cause::ClosedMidResponse,
        Cause::DaemonClosed,
        Cause::HeadTooLarge { kib: 64 },
        Cause::NotHttp {
            detail: "invalid HTTP version".into(),
        },
        Cause::Framing(ChunkFault::ChunkSize),
        Cause::Framing(ChunkFault::ChunkSizeTooLarge),
        Cause::Framing(ChunkFault::ChunkLineTooLong),
        Cause::Framing(ChunkFault::ChunkEnd),
        Cause::Framing(ChunkFault::TrailersTooLarge),
        Cause::Said("connection reset by peer".into()),
    ]
}

/// Each cause by number: a new one fails to compile here until the samples
/// above have it.
fn cause_variant(cause: &Cause) -> usize {
    match cause {
        Cause::TimedOut => 0,
        Cause::Failed => 1,
        Cause::ClosedBeforeResponse => 2,
        Cause::ClosedMidResponse => 3,
        Cause::DaemonClosed => 4,
        Cause::HeadTooLarge { .. } => 5,
        Cause::NotHttp { .. } => 6,
        Cause::Framing(ChunkFault::ChunkSize) => 7,
        Cause::Framing(ChunkFault::ChunkSizeTooLarge) => 8,
        Cause::Framing(ChunkFault::ChunkLineTooLong) => 9,
        Cause::Framing(ChunkFault::ChunkEnd) => 10,
        Cause::Framing(ChunkFault::TrailersTooLarge) => 11,
        Cause::Said(_) => 12,
    }
}

/// Why a stream broke off, in Chinese with none of ask-lsp's English words
/// (#45: the reader's own findings were English strings); what the system
/// said stays as it said it; English for logs.
#[test]
fn every_cause_is_worded_in_chinese_without_english() {
    let covered: BTreeSet<usize> = causes().iter().map(cause_variant).collect();
    assert_eq!(covered, (0..13).collect());
    for why in causes() {
        let error = BackendError::Stream {
            server: server(),
            cause: why.clone(),
        };
        let en = error.to_string();
        let zh = in_locale(Locale::ZhCn, || backend_error(&error));
        assert!(en.ends_with(&why.to_string()), "{en}");
        match &why {
            Cause::Said(said) => assert!(zh.ends_with(said.as_str()), "{zh}"),
            _ => {
                let kept = match &why {
                    Cause::NotHttp { detail } => detail.as_str(),
                    _ => "",
                };
                for word in why
                    .to_string()
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .filter(|word| word.len() > 3 && !kept.contains(word))
                {
                    assert!(!zh.contains(word), "{word:?} in {zh}");
                }
            }
        }
    }
    assert_eq!(
        BackendError::Stream {
            server: server(),
            cause: Cause::DaemonClosed,
        }
        .to_string(),
        "OpenCode at http://127.0.0.1:4096: the daemon closed the connection"
    );
}

/// Each variant by number: a new one fails to compile here until the
/// samples above have it.
fn variant(error: &BackendError) -> usize {
    match error {
        BackendError::NotFound { .. } => 0,
        BackendError::Unauthorized { .. } => 1,
        BackendError::BadRequest { .. } => 2,
        BackendError::Server { .. } => 3,
        BackendError::NotJson { .. } => 4,
        BackendError::Redirect { .. } => 5,
        BackendError::Timeout { .. } => 6,
        BackendError::Refused { .. } => 7,
        BackendError::Connect { .. } => 8,
        BackendError::Unanswered { .. } => 9,
        BackendError::SubscriptionUnanswered { .. } => 10,
        BackendError::Malformed { .. } => 11,
        BackendError::NoEvents { .. } => 12,
        BackendError::Stream { .. } => 13,
        BackendError::HookSocket { .. } => 14,
        BackendError::Closed => 15,
        BackendError::Stalled { .. } => 16,
        BackendError::NoCodexDaemon { .. } => 17,
        BackendError::CodexSocketRefused { .. } => 18,
        BackendError::CodexHomeNotDirectory { .. } => 19,
    }
}

#[test]
fn the_samples_cover_every_variant() {
    let covered: BTreeSet<usize> = errors().iter().map(variant).collect();
    assert_eq!(covered, (0..20).collect());
}

/// `Display` is what logs and `status --json` keep: English from the
/// catalogue, whatever language the person reads.
#[test]
fn display_is_english_whatever_the_persons_language() {
    for error in errors() {
        let english = in_locale(Locale::En, || backend_error(&error));
        assert_eq!(in_locale(Locale::ZhCn, || error.to_string()), english);
    }
    assert_eq!(
        in_locale(Locale::ZhCn, || BackendError::Connect {
            server: server(),
            cause: Cause::Said("connection refused".into()),
            hint: ConnectHint::Start(StartHint::OpenCodeServe),
        }
        .to_string()),
        "cannot reach OpenCode at http://127.0.0.1:4096: connection refused — is `opencode serve` running there?"
    );
    let after = Duration::from_secs(10);
    assert_eq!(
        in_locale(Locale::En, || no_listing(after)),
        "connected, but the list of pending prompts did not come within 10s"
    );
    assert_eq!(
        in_locale(Locale::En, || no_answer(after)),
        "no answer within 10s"
    );
}

#[test]
fn every_error_is_worded_in_chinese_with_every_value_filled_in() {
    let after = Duration::from_secs(10);
    let mut seen = BTreeSet::new();
    let samples = errors();
    let english = samples.iter().map(ToString::to_string).chain([
        in_locale(Locale::En, || no_listing(after)),
        in_locale(Locale::En, || no_answer(after)),
    ]);
    let chinese = in_locale(Locale::ZhCn, || {
        let mut all: Vec<String> = samples.iter().map(backend_error).collect();
        all.extend([no_listing(after), no_answer(after)]);
        all
    });
    for (en, zh) in english.zip(chinese) {
        assert_translated(&en, &zh, &mut seen);
        // The server's label is worded too (#45): not "OpenCode at …".
        assert!(!zh.contains(" at "), "{zh}");
    }
}

/// Each server an error names, in the person's language and in English
/// (`Display`, for logs): the URL, id or path kept as it is, none of the
/// English words around it in Chinese.
#[test]
fn every_server_label_is_worded_in_the_persons_language() {
    let english: Vec<String> = labels().iter().map(ToString::to_string).collect();
    assert_eq!(
        english,
        [
            "OpenCode at http://127.0.0.1:4096",
            "sandbox-agent at http://127.0.0.1:2468 (claude)",
            "Codex daemon (/home/me/.codex)",
            "hook",
        ]
    );
    let chinese: Vec<String> =
        in_locale(Locale::ZhCn, || labels().iter().map(server_label).collect());
    assert_eq!(
        chinese,
        [
            "http://127.0.0.1:4096 上的 OpenCode",
            "http://127.0.0.1:2468 上的 sandbox-agent（claude）",
            "Codex 守护进程（/home/me/.codex）",
            "钩子",
        ]
    );
    // In a sentence, and `Display` stays English whatever the language.
    for label in labels() {
        let error = BackendError::NotFound {
            server: label.clone(),
        };
        let zh = in_locale(Locale::ZhCn, || backend_error(&error));
        assert!(
            zh.contains(&in_locale(Locale::ZhCn, || server_label(&label))),
            "{zh}"
        );
        for word in [" at ", "daemon", "hook"] {
            assert!(!zh.contains(word), "{zh}");
        }
        assert_eq!(
            in_locale(Locale::ZhCn, || label.to_string()),
            label.to_string()
        );
    }
}

/// What kind a configured server is (`status`, `watch`), in Chinese where
/// it is more than a product's name.
#[test]
fn every_server_kind_is_worded_in_the_persons_language() {
    use crate::settings::ServerKind;
    let kinds = [
        ServerKind::OpenCode,
        ServerKind::OpenCode1,
        ServerKind::OpenCode2,
        ServerKind::SandboxAgent,
        ServerKind::Hook,
        ServerKind::CodexDaemon,
    ];
    let zh: Vec<String> = in_locale(Locale::ZhCn, || kinds.map(server_kind).to_vec());
    assert_eq!(
        zh,
        [
            "OpenCode",
            "OpenCode 1.x",
            "OpenCode 2.x",
            "sandbox-agent（ACP）",
            "ask-lsp 钩子套接字",
            "Codex 守护进程",
        ]
    );
}

#[test]
fn chinese_words_keep_what_the_server_and_the_system_said() {
    let zh = |error: BackendError| in_locale(Locale::ZhCn, || backend_error(&error));
    assert_eq!(
        zh(BackendError::Connect {
            server: server(),
            cause: Cause::Said("connection refused".into()),
            hint: ConnectHint::Start(StartHint::OpenCodeServe),
        }),
        "无法连接 http://127.0.0.1:4096 上的 OpenCode：connection refused — `opencode serve` 是否在那里运行？"
    );
    assert_eq!(
        zh(BackendError::NotJson {
            server: server(),
            status: 200,
            kind: BodyKind::Html,
            expected: Expected::OpenCode,
        }),
        "http://127.0.0.1:4096 上的 OpenCode：返回了 200 和 HTML 页面，而不是 JSON：这是 OpenCode 服务器吗？路由是否正确？"
    );
}

/// What the server said, cut for showing: the note of what the cut hid in
/// the person's language (#45), in English for logs.
#[test]
fn a_cut_server_message_says_what_it_hid_in_the_persons_language() {
    let error = BackendError::Server {
        server: server(),
        status: 500,
        message: crate::text::cut("错误信息", 2).into_owned(),
    };
    let zh = in_locale(Locale::ZhCn, || backend_error(&error));
    assert!(zh.ends_with("错误…（另有 2 个字符）"), "{zh}");
    assert!(error.to_string().ends_with("错误… (+2 more characters)"));
}
