//! Directories round-trip byte-exact: a prompt from a directory whose name
//! holds a tab, a trailing space or an invisible character is answered in
//! that directory (the simulated server checks `?directory=` exactly, as
//! OpenCode does), while what the editor shows is neutralised.

use crate::common::*;
use ask_sim::PermissionAsk;
use serde_json::json;

#[tokio::test]
async fn prompts_from_oddly_named_directories_are_answered_there() {
    for directory in ["/tmp/with\ttab", "/tmp/trailing ", "/tmp/zero\u{200b}width"] {
        let sim = Sim::start(SimOptions {
            directory: directory.into(),
            ..SimOptions::default()
        })
        .await
        .unwrap();
        let mut client = LspClient::with_extension(&sim).await;
        let request = sim.ask_permission(PermissionAsk::bash("ls")).unwrap();
        let ask = client.next_method("askQuestions/ask").await;
        // Shown on one line; sent back as the server named it.
        let shown = ask["params"]["source"]["directory"].as_str().unwrap();
        assert!(!shown.contains('\t') && !shown.ends_with(' '), "{shown:?}");
        client
            .respond(&ask["id"], json!({"outcome": "answered", "choice": "once"}))
            .await;
        let resolved = client.next_method("askQuestions/resolved").await;
        assert_eq!(
            resolved["params"]["state"], "replied",
            "{directory:?}: {resolved:#}"
        );
        assert_eq!(
            sim.received(),
            vec![Received::Permission {
                id: request.id.clone(),
                reply: "once".into(),
                message: None,
            }],
            "{directory:?}"
        );
        let reply = sim
            .requests()
            .into_iter()
            .find(|r| r.contains("/reply"))
            .expect("a reply");
        let query = reply.split_once('?').expect("a query").1;
        let sent: Vec<String> = query
            .split('&')
            .filter_map(|pair| pair.strip_prefix("directory="))
            .map(decoded)
            .collect();
        assert_eq!(sent, [directory], "{reply}");
        assert!(client.shutdown().await.success());
    }
}

/// A query value as form-urlencoded (`+` a space, `%XX` a byte).
fn decoded(value: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = value.bytes();
    while let Some(byte) = rest.next() {
        bytes.push(match byte {
            b'+' => b' ',
            b'%' => {
                let hex = [rest.next().unwrap(), rest.next().unwrap()];
                u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap()
            }
            other => other,
        });
    }
    String::from_utf8(bytes).unwrap()
}
