//! `ask-lsp status` as a person (or a script) runs it: the real binary
//! against the simulated server, a refused port and a password-protected one.

use crate::common::*;
use ask_sim::PermissionAsk;
use serde_json::{Value, json};
use tokio::process::Command;

async fn status(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
    command
        .arg("status")
        .args(args)
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("ASK_LSP_URL")
        .kill_on_drop(true);
    command.envs(env.iter().copied());
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .expect("status finishes")
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[tokio::test]
async fn lists_what_is_pending_answers_nothing_and_fails_for_an_unreachable_server() {
    let sim = sim().await;
    let question = sim.ask(None, database());
    let permission = sim
        .ask_permission(PermissionAsk::bash("rm -rf build"))
        .unwrap();
    let refused = format!("http://127.0.0.1:{}", free_port());

    let (code, out, _) = status(&["--url", &sim.url()], &[]).await;
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        format!(
            "default {url} (OpenCode 1.x): connected\n  \
             2 prompts pending:\n  \
             - question \"Database\" (session {qs}, /sim/project)\n  \
             - permission \"Run rm -rf build\" (session {ps}, /sim/project)\n",
            url = sim.url(),
            qs = question.session_id,
            ps = permission.session_id,
        )
    );

    let (code, out, _) = status(&["--url", &sim.url(), "--url", &refused], &[]).await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.ends_with(&format!(
            "server2 {refused} (OpenCode): NOT CONNECTED\n  \
             cannot reach OpenCode at {refused}: connection refused — is `opencode serve` running there?\n"
        )),
        "{out}"
    );

    let (code, out, _) = status(&[], &[("ASK_LSP_URL", &sim.url())]).await;
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with(&format!(
            "default {} [from $ASK_LSP_URL] (OpenCode 1.x): connected\n",
            sim.url()
        )),
        "{out}"
    );

    assert_eq!(sim.received(), vec![]);
    assert_eq!(sim.pending().len(), 1);
    assert_eq!(sim.pending_permissions().len(), 1);
}

#[tokio::test]
async fn a_password_protected_server_says_which_password_and_json_is_for_scripts() {
    let sim = ask_sim::Sim::start(SimOptions {
        password: Some("s3cret".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let question = sim.ask(None, checks());

    let (code, out, _) = status(&["--url", &sim.url(), "--json"], &[]).await;
    assert_eq!(code, Some(1), "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report,
        json!({"servers": [{
            "name": "default", "url": sim.url(), "defaulted": false, "generation": "opencode",
            "connected": false,
            "error": "OpenCode at ".to_owned() + &sim.url() + ": 401 Unauthorized: check OPENCODE_SERVER_PASSWORD / OPENCODE_SERVER_USERNAME (or password in the configuration)",
            "pending": [], "hidden": 0, "problems": []}]})
    );

    let (code, out, _) = status(
        &["--json", "--url", &sim.url()],
        &[("OPENCODE_SERVER_PASSWORD", "s3cret")],
    )
    .await;
    assert_eq!(code, Some(0), "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["servers"][0]["pending"],
        json!([{"kind": "question", "id": question.id, "title": "Checks",
                "session": question.session_id, "directory": "/sim/project", "agent": null}])
    );
    assert!(!out.contains("s3cret"));
}

#[tokio::test]
async fn usage_and_bad_flags() {
    let (code, out, _) = status(&["--help"], &[]).await;
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("Usage: ask-lsp status [--url URL]..."),
        "{out}"
    );
    let (code, _, err) = status(&["--policy", "reject"], &[]).await;
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("ask-lsp: unknown option \"--policy\"\n\nUsage: ask-lsp status"),
        "{err}"
    );
}

/// The generation is what the server says at connect: an OpenCode 2 (the
/// simulation) is named so, and its pending forms are listed.
#[tokio::test]
async fn an_opencode_2_server_is_named_and_its_forms_listed() {
    let sim = ask_sim::opencode2::Sim2::start(Default::default())
        .await
        .unwrap();
    sim.create_form(
        json!({"title": "Name?", "mode": "form", "fields": [{"key": "name", "type": "string"}]}),
        None,
        true,
    );
    let (code, out, _) = status(&["--url", &sim.url()], &[]).await;
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with(&format!(
            "default {} (OpenCode 2.x): connected\n",
            sim.url()
        )),
        "{out}"
    );
    assert!(out.contains("Name?"), "{out}");
}

/// Flags as a command-line user types them: a URL as `opencode serve`
/// prints it, a relative directory (the server would resolve it against its
/// own), errors that name the flag, and prompts a filter leaves out counted.
#[tokio::test]
async fn flags_as_typed_and_what_the_listing_hides() {
    let sim = sim().await;
    let question = sim.ask(None, database());
    let bare = sim.url().trim_start_matches("http://").to_owned();
    let (code, out, _) = status(&["--url", &bare], &[]).await;
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with(&format!(
            "default http://{bare} (OpenCode 1.x): connected\n  1 prompt pending:\n"
        )),
        "{out}"
    );

    let (code, _, err) = status(&["--url", "ftp://example.com"], &[]).await;
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "ask-lsp: --url \"ftp://example.com\": expected an http:// or https:// URL with a host\n"
    );

    let project = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
    command
        .args(["status", "--url", &sim.url(), "--directory", "."])
        .current_dir(project.path())
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .kill_on_drop(true);
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success());
    let absolute = project.path().to_str().unwrap().replace('/', "%2F");
    let listed = sim
        .requests()
        .into_iter()
        .rfind(|r| r.starts_with("GET /question?"));
    assert_eq!(
        listed,
        Some(format!("GET /question?directory={absolute}")),
        "--directory . is sent as the absolute path"
    );

    // An aborted session's question stays listed by OpenCode; it is not
    // shown, and not silently either.
    sim.abort(&question.session_id);
    let (code, out, _) = status(&["--url", &sim.url()], &[]).await;
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        format!(
            "default {} (OpenCode 1.x): connected\n  nothing pending (1 more listed by the server, not shown: its session is not running)\n",
            sim.url()
        )
    );
}

/// A reader that left before the help was written: no panic, exit 0.
#[test]
fn help_into_a_closed_pipe() {
    for args in [&["--help"][..], &["status", "--help"], &["--version"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
