//! Zero-config discovery end to end: with no server configured, ask-lsp
//! follows the server registered in OpenCode 2's `service.json` (written here,
//! pointing at the simulated server), says where it found it, and configured
//! servers or `$ASK_LSP_URL` win over it. The real OpenCode started with
//! `--port` is found in tests/real_opencode.rs.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

/// A state directory whose `opencode/service.json` registers `url`, as
/// OpenCode 2's service writes it (packages/client/src/effect/service.ts):
/// this test process stands in for the registered one.
fn registered(url: &str, password: &str) -> tempfile::TempDir {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("service.json"),
        json!({"id": "svc_test", "version": "2.0.0", "url": url,
               "pid": std::process::id(), "password": password})
        .to_string(),
    )
    .unwrap();
    state
}

fn service_file(state: &Path) -> String {
    state
        .join("opencode/service.json")
        .to_string_lossy()
        .into_owned()
}

#[tokio::test]
async fn the_registered_service_is_followed_and_answered_when_nothing_is_configured() {
    let sim = Sim::start(SimOptions {
        password: Some("svc-secret".into()),
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let state = registered(&format!("{}/", sim.url()), "svc-secret");
    let state_dir = state.path().to_str().unwrap();
    let mut client = LspClient::start(&[("XDG_STATE_HOME", state_dir)]).await;
    client.initialize(extension_caps(), json!(null)).await;
    wait_for(|| sim.subscribers() > 0).await;

    let told = client.next_method("window/showMessage").await;
    let file = service_file(state.path());
    assert_eq!(
        told["params"]["message"],
        json!(format!(
            "ask-lsp: no server URL configured; following {} (found running: {file}). Set servers[].url in the ask-lsp configuration to choose the server.",
            sim.url()
        ))
    );
    let status = client.status().await;
    assert_eq!(
        status["servers"],
        json!([{"name": "default", "backend": "opencode", "url": sim.url(), "connected": true,
                "error": null, "defaulted": true, "discovered": file, "generation": "1"}])
    );

    // Followed with the registered password: a question goes both ways.
    let request = sim.ask(None, database());
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], json!(request.id));
    client.answer(&ask, json!([["SQLite"]])).await;
    client.next_method("askQuestions/resolved").await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["SQLite"]]))]
    );
    assert!(
        !client.logs().contains("svc-secret"),
        "the password is never logged"
    );
    assert!(client.logs().contains("found running"), "{}", client.logs());
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn configured_servers_and_the_environment_win_over_discovery() {
    let registered_sim = sim().await;
    let state = registered(&registered_sim.url(), "pw");
    let state_dir = state.path().to_str().unwrap();

    // Configured servers: the registered one is never contacted.
    let configured = sim().await;
    let mut client = LspClient::start(&[("XDG_STATE_HOME", state_dir)]).await;
    client
        .initialize(
            extension_caps(),
            json!({"servers": [{"url": configured.url()}]}),
        )
        .await;
    wait_for(|| configured.subscribers() > 0).await;
    // An update naming no servers keeps the configured ones: nothing is added.
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"surface": "auto"}}}),
        )
        .await;
    let status = client.status().await;
    assert_eq!(status["servers"].as_array().unwrap().len(), 1);
    assert_eq!(status["servers"][0]["url"], json!(configured.url()));
    assert_eq!(status["servers"][0]["discovered"], Value::Null);
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(registered_sim.requests(), Vec::<String>::new());
    assert!(client.shutdown().await.success());

    // `servers: []` follows nothing at all.
    let mut client = LspClient::start(&[("XDG_STATE_HOME", state_dir)]).await;
    client
        .initialize(extension_caps(), json!({"servers": []}))
        .await;
    let status = client.status().await;
    assert_eq!(status["servers"], json!([]));
    assert!(client.shutdown().await.success());

    // $ASK_LSP_URL is configuration too.
    let from_env = sim().await;
    let mut client = LspClient::start(&[
        ("XDG_STATE_HOME", state_dir),
        ("ASK_LSP_URL", &from_env.url()),
    ])
    .await;
    client.initialize(extension_caps(), json!(null)).await;
    wait_for(|| from_env.subscribers() > 0).await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!(from_env.url()));
    assert_eq!(status["servers"][0]["discovered"], Value::Null);
    assert_eq!(registered_sim.requests(), Vec::<String>::new());
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn a_registration_beyond_loopback_is_not_followed() {
    // Nothing listens there; ask-lsp must not even try.
    let state = registered("http://192.0.2.1:4096", "pw");
    let state_dir = state.path().to_str().unwrap();
    let mut client = LspClient::start(&[("XDG_STATE_HOME", state_dir)]).await;
    client.initialize(extension_caps(), json!(null)).await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!("http://127.0.0.1:4096"));
    assert_eq!(status["servers"][0]["discovered"], Value::Null);
    assert!(
        client.logs().contains("beyond loopback; not followed"),
        "{}",
        client.logs()
    );
    assert!(client.shutdown().await.success());
}

#[tokio::test]
async fn watch_without_a_url_follows_the_registered_service() {
    use tokio::io::AsyncWriteExt;
    let sim = sim().await;
    let state = registered(&sim.url(), "pw");
    let request = sim.ask(None, database());
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ask-lsp"))
        .arg("watch")
        .env("XDG_STATE_HOME", state.path())
        .env_remove("ASK_LSP_URL")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"2\n").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("finishes")
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{out}");
    assert!(
        out.contains(&format!(
            "ask-lsp: watching {} (found running: {}) for prompts",
            sim.url(),
            service_file(state.path())
        )),
        "{out}"
    );
    wait_for(|| !sim.received().is_empty()).await;
    assert_eq!(
        sim.received(),
        vec![reply(&request.id, json!([["SQLite"]]))]
    );
}
