//! `workspace/didChangeConfiguration` updates that do not name servers (Emacs
//! eglot sends `{"settings": {}}` after every connect) keep the configured
//! servers, and a default URL is never followed in their place.

use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

fn shown_messages(client: &LspClient) -> Vec<Value> {
    client
        .seen
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .map(|m| m["params"].clone())
        .collect()
}

#[tokio::test]
async fn updates_without_servers_keep_the_configured_ones() {
    let configured = sim().await;
    // Whatever listens where the default URL points must never be followed.
    let stranger = sim().await;
    let stranger_url = stranger.url();
    let mut client = LspClient::start(&[("ASK_LSP_URL", &stranger_url)]).await;
    client
        .initialize(
            plain_caps(),
            json!({"servers": [{"url": configured.url()}]}),
        )
        .await;
    wait_for(|| configured.subscribers() > 0).await;
    for settings in [
        json!({}),
        json!({"askLsp": {}}),
        json!(null),
        json!({"askLsp": {"servers": null}}),
        // Another server's section only: eglot sends one workspace
        // configuration to every server.
        json!({"pylsp": {"plugins": {}}}),
        json!({"askLsp": {"surface": "messageRequest"}}),
    ] {
        client
            .notify(
                "workspace/didChangeConfiguration",
                json!({ "settings": settings }),
            )
            .await;
        // The status request is handled after the update: the broker has it.
        let status = client.status().await;
        assert_eq!(status["servers"].as_array().unwrap().len(), 1, "{status}");
        assert_eq!(status["servers"][0]["url"], json!(configured.url()));
        assert_eq!(status["servers"][0]["defaulted"], json!(false));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(stranger.subscribers(), 0, "the default URL was followed");
    assert!(configured.subscribers() > 0);
    let request = configured.ask(None, database());
    let shown = client.next_method("window/showMessageRequest").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which database?"),
        "{shown}"
    );
    client
        .respond(&shown["id"], json!({"title": "Postgres"}))
        .await;
    wait_for(|| !configured.received().is_empty()).await;
    assert_eq!(
        configured.received(),
        vec![reply(&request.id, json!([["Postgres"]]))]
    );
    assert_eq!(stranger.subscribers(), 0);
    assert_eq!(shown_messages(&client), Vec::<Value>::new());
}

#[tokio::test]
async fn a_defaulted_url_is_said_once_in_status_log_and_message() {
    let fallback = sim().await;
    let fallback_url = fallback.url();
    let mut client = LspClient::start(&[("ASK_LSP_URL", &fallback_url)]).await;
    client.initialize(plain_caps(), json!(null)).await;
    wait_for(|| fallback.subscribers() > 0).await;
    let told = client.next_method("window/showMessage").await;
    assert_eq!(
        told["params"],
        json!({"type": 3, "message": format!(
            "ask-lsp: no server URL configured; following {fallback_url} (from $ASK_LSP_URL). Set servers[].url in the ask-lsp configuration to choose the server.")})
    );
    client
        .notify("workspace/didChangeConfiguration", json!({"settings": {}}))
        .await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!(fallback_url));
    assert_eq!(status["servers"][0]["defaulted"], json!(true));
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(shown_messages(&client).len(), 1, "said once");
    assert!(
        client.logs().contains("INFO") && client.logs().contains("no server URL configured"),
        "{}",
        client.logs()
    );
    // Configuring a server replaces the default one and clears the flag.
    let configured = sim().await;
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"askLsp": {"servers": [{"url": configured.url()}]}}}),
        )
        .await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!(configured.url()));
    assert_eq!(status["servers"][0]["defaulted"], json!(false));
    wait_for(|| configured.subscribers() > 0 && fallback.subscribers() == 0).await;
}

#[tokio::test]
async fn workspace_settings_are_asked_for_before_any_server_is_followed() {
    let configured = sim().await;
    let stranger = sim().await;
    let stranger_url = stranger.url();
    stranger.ask(None, database());
    let mut client = LspClient::start(&[("ASK_LSP_URL", &stranger_url)]).await;
    let mut caps = plain_caps();
    caps["workspace"] = json!({"configuration": true});
    client.initialize(caps, json!(null)).await;
    let pull = client.next_method("workspace/configuration").await;
    assert_eq!(pull["params"], json!({"items": [{"section": "askLsp"}]}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        stranger.subscribers(),
        0,
        "followed before the settings came"
    );
    client
        .respond(
            &pull["id"],
            json!([{"servers": [{"url": configured.url()}]}]),
        )
        .await;
    wait_for(|| configured.subscribers() > 0).await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!(configured.url()));
    assert_eq!(status["servers"][0]["defaulted"], json!(false));
    client.expect_quiet(Duration::from_millis(300)).await;
    assert_eq!(stranger.subscribers(), 0);
    assert_eq!(shown_messages(&client), Vec::<Value>::new());
}

/// The documented default URL is no news: logged, not shown. A URL from
/// elsewhere is shown, naming the key the person sets: in VS Code that is
/// `askLsp.servers`, a key of its settings.
#[tokio::test]
async fn the_documented_default_is_not_shown_and_vs_code_is_told_its_own_key() {
    let mut client = LspClient::start(&[]).await;
    client.initialize(plain_caps(), json!(null)).await;
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!("http://127.0.0.1:4096"));
    wait_for(|| client.logs().contains("no server URL configured")).await;
    client.drain(Duration::from_millis(300)).await;
    let told: Vec<Value> = shown_messages(&client)
        .into_iter()
        .filter(|m| m["message"].as_str().unwrap().contains("no server URL"))
        .collect();
    assert_eq!(told, Vec::<Value>::new());

    let fallback = sim().await;
    let mut client = LspClient::start(&[("ASK_LSP_URL", &fallback.url())]).await;
    client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": plain_caps(),
                   "clientInfo": {"name": "Visual Studio Code", "version": "1.100.0"}}),
        )
        .await;
    client.notify("initialized", json!({})).await;
    let told = client.next_method("window/showMessage").await;
    assert_eq!(
        told["params"]["message"],
        json!(format!(
            "ask-lsp: no server URL configured; following {} (from $ASK_LSP_URL). Set askLsp.servers in the settings to choose the server.",
            fallback.url()
        ))
    );
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": [{"url": "ftp://nope"}]}}),
        )
        .await;
    let error = client.next_method("window/showMessage").await;
    assert_eq!(
        error["params"]["message"],
        "ask-lsp: invalid ask-lsp configuration: askLsp.servers[0].url \"ftp://nope\": expected an http:// or https:// URL with a host; keeping the previous configuration"
    );
}
