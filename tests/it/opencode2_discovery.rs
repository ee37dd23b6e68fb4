//! A shared OpenCode 2 service found through `service.json` (one service
//! for all the user's projects) is followed scoped to the workspace's
//! project: what waits there at start-up is shown, other projects' prompts
//! are not, listed or live. (That `/api/info`'s pid must be the registered
//! one is `tests/it/discovery.rs::a_server_whose_api_info_names_another_pid_is_not_followed`.)

use std::path::Path;

use crate::common::*;
use ask_sim::opencode2::{Options, Received, Sim2};
use serde_json::{Value, json};

/// A state directory whose `opencode/service.json` registers `url` for this
/// process, which serves the simulated server (so `/api/info`'s pid is it).
fn registered(url: &str) -> tempfile::TempDir {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("service.json"),
        json!({"id": "svc_test", "version": "2.0.0", "url": url, "pid": std::process::id()})
            .to_string(),
    )
    .unwrap();
    state
}

async fn started(state: &Path, root: &Path) -> LspClient {
    let mut client = LspClient::start(&[("XDG_STATE_HOME", state.to_str().unwrap())]).await;
    let root = format!("file://{}", root.display());
    let params = json!({"processId": null, "rootUri": root, "capabilities": extension_caps()});
    client.request("initialize", params).await;
    client.notify("initialized", json!({})).await;
    client
}

fn form(title: &str) -> Value {
    json!({"title": title, "fields": [{"key": "ok", "type": "boolean"}]})
}

#[tokio::test]
async fn a_shared_service_is_scoped_to_the_workspaces_project() {
    let sim = Sim2::start(Options::default()).await.unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let project = workspace.path().to_str().unwrap().to_owned();
    let waiting = sim.create_form(form("Here, waiting"), Some(&project), false);
    sim.create_form(form("Elsewhere, waiting"), Some("/other/project"), false);
    let state = registered(&sim.url());
    let mut client = started(state.path(), workspace.path()).await;

    // Waiting in the workspace's project at start-up: shown.
    let ask = client.next_method("askQuestions/ask").await;
    assert_eq!(ask["params"]["requestID"], waiting["id"], "{ask}");
    assert_eq!(ask["params"]["source"]["directory"], json!(project));
    let yes = json!({"outcome": "answered", "values": {"ok": true}});
    client.respond(&ask["id"], yes.clone()).await;
    client.next_method("askQuestions/resolved").await;

    // Live: another project's form is not shown, this project's is.
    sim.create_form(form("Elsewhere, live"), Some("/other/project"), true);
    let live = sim.create_form(form("Here, live"), Some(&format!("{project}/sub")), true);
    let next = client.next_method("askQuestions/ask").await;
    assert_eq!(next["params"]["requestID"], live["id"], "{next}");
    client.respond(&next["id"], yes).await;
    client.next_method("askQuestions/resolved").await;
    let answered: Vec<String> = sim
        .received()
        .into_iter()
        .map(|r| match r {
            Received::FormReply { id, .. } => id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        answered,
        [
            waiting["id"].as_str().unwrap(),
            live["id"].as_str().unwrap()
        ]
    );
    let shown = client
        .seen
        .iter()
        .filter(|m| m["method"] == "askQuestions/ask")
        .count();
    assert_eq!(shown, 2, "{:#?}", client.seen);
}
