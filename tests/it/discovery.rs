//! Zero-config discovery end to end: with no server configured, ask-lsp
//! follows the server registered in OpenCode 2's `service.json` (written here,
//! pointing at the simulated server), says where it found it, and configured
//! servers or `$ASK_LSP_URL` win over it. The real OpenCode started with
//! `--port` is found in tests/it/real_opencode.rs.

use std::path::Path;
use std::time::Duration;

use crate::common::*;
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
    // Connected once the first listing is in, which may follow the message.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut status = client.status().await;
    while status["servers"][0]["connected"] != true && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = client.status().await;
    }
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

/// A listener that records each request head it receives and answers 404,
/// or with `info` on `GET /api/info`: a stranger's port, or a server that
/// is not the one registered.
struct Listener {
    port: u16,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Listener {
    async fn start(address: &str, info: Option<Value>) -> Listener {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind(address).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = heads.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buffer[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let answer = match &info {
                    Some(info) if head.starts_with("GET /api/info ") => {
                        let body = info.to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    _ => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned(),
                };
                seen.lock().unwrap().push(head);
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        Listener { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// ask-lsp with nothing configured, the person's password in its
/// environment and `state` as its state directory; `initialize` must answer
/// at once, whatever discovery meets.
async fn started_with_state(state: &Path, root: Option<&Path>) -> Result<LspClient, String> {
    let mut client = LspClient::start(&[
        ("XDG_STATE_HOME", state.to_str().unwrap()),
        ("OPENCODE_SERVER_PASSWORD", "person-secret"),
    ])
    .await;
    let root = root.map(|root| format!("file://{}", root.display()));
    let params = json!({"processId": null, "rootUri": root, "capabilities": extension_caps()});
    let promptly = Duration::from_secs(2);
    match tokio::time::timeout(promptly, client.request("initialize", params)).await {
        Ok(answer) if answer["result"]["capabilities"].is_object() => {}
        Ok(answer) => return Err(format!("initialize failed: {answer}")),
        Err(_) => return Err(format!("no answer to initialize within {promptly:?}")),
    }
    client.notify("initialized", json!({})).await;
    Ok(client)
}

/// Planted registrations (issue 28): each is skipped with one log line,
/// `initialize` answers, and the stranger whose port each one names hears
/// nothing: neither the person's password nor anything else.
#[cfg(unix)]
#[tokio::test]
async fn planted_registrations_are_skipped_and_their_port_hears_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let stranger = Listener::start("127.0.0.1:0", None).await;
    let url = format!("http://127.0.0.1:{}", stranger.port);
    let registration = |pid: u32, url: &str| {
        json!({"id": "svc", "version": "2.0.0", "url": url, "pid": pid}).to_string()
    };
    let mine = std::process::id();
    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    }
    type Plant = Box<dyn Fn(&Path, &Path)>;
    let cases: Vec<(&str, Plant)> = vec![
        ("in a directory anyone can write", {
            let text = registration(mine, &url);
            Box::new(move |dir, file| {
                std::fs::write(file, &text).unwrap();
                mode(file, 0o600);
                mode(dir, 0o777);
            })
        }),
        ("a file the group can write", {
            let text = registration(mine, &url);
            Box::new(move |_, file| {
                std::fs::write(file, &text).unwrap();
                mode(file, 0o660);
            })
        }),
        ("a symbolic link", {
            let text = registration(mine, &url);
            Box::new(move |dir, file| {
                let target = dir.join("elsewhere.json");
                std::fs::write(&target, &text).unwrap();
                mode(&target, 0o600);
                std::os::unix::fs::symlink(&target, file).unwrap();
            })
        }),
        (
            "a FIFO nobody writes",
            Box::new(|_, file| {
                let made = std::process::Command::new("mkfifo").arg(file).status();
                assert!(made.unwrap().success());
                mode(file, 0o600);
            }),
        ),
        (
            "a link to /dev/zero",
            Box::new(|_, file| std::os::unix::fs::symlink("/dev/zero", file).unwrap()),
        ),
        ("naming process 1", {
            let text = registration(1, &url);
            Box::new(move |_, file| {
                std::fs::write(file, &text).unwrap();
                mode(file, 0o600);
            })
        }),
        ("a password in its url", {
            let text = registration(mine, &format!("http://:pw@127.0.0.1:{}", stranger.port));
            Box::new(move |_, file| {
                std::fs::write(file, &text).unwrap();
                mode(file, 0o600);
            })
        }),
    ];
    let mut wrong = Vec::new();
    for (case, plant) in cases {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("opencode");
        std::fs::create_dir_all(&dir).unwrap();
        mode(&dir, 0o700);
        plant(&dir, &dir.join("service.json"));
        if let Err(error) = planted_is_skipped(state.path(), &stranger).await {
            wrong.push(format!("{case}: {error}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

async fn planted_is_skipped(state: &Path, stranger: &Listener) -> Result<(), String> {
    let mut client = started_with_state(state, None).await?;
    let status = client.status().await;
    let server = &status["servers"][0];
    if server["url"] != "http://127.0.0.1:4096" || !server["discovered"].is_null() {
        return Err(format!("followed: {server}"));
    }
    let logs = client.logs();
    let skipped = logs
        .lines()
        .filter(|line| line.contains("service.json") && line.contains("not followed"))
        .count();
    if skipped != 1 || logs.contains("person-secret") {
        return Err(format!("not one log line saying so:\n{logs}"));
    }
    assert!(client.shutdown().await.success());
    match stranger.heads() {
        heads if heads.is_empty() => Ok(()),
        heads => Err(format!("the stranger heard {heads:?}")),
    }
}

/// A registered url where another server than the registered process
/// answers `/api/info`: only that question is asked of it, with the
/// registration's password, never the person's.
#[tokio::test]
async fn a_server_whose_api_info_names_another_pid_is_not_followed() {
    let other = Listener::start("127.0.0.1:0", Some(json!({"version": "2.0.0", "pid": 1}))).await;
    let state = registered(&format!("http://127.0.0.1:{}", other.port), "registered-pw");
    let mut client = started_with_state(state.path(), None).await.unwrap();
    let status = client.status().await;
    assert_eq!(status["servers"][0]["url"], json!("http://127.0.0.1:4096"));
    assert!(
        client.logs().contains("says it is process 1; not followed"),
        "{}",
        client.logs()
    );
    assert!(client.shutdown().await.success());
    let heads = other.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(heads[0].starts_with("GET /api/info "), "{heads:?}");
    // Basic auth as `opencode` with the registered password.
    assert!(
        heads[0].contains("authorization: Basic b3BlbmNvZGU6cmVnaXN0ZXJlZC1wdw=="),
        "{heads:?}"
    );
}

/// The person's `opencode serve --hostname ::1 --port P` (here a small Perl
/// server under that command line) while a stranger listens on
/// 127.0.0.1:P: ask-lsp follows `http://[::1]:P`, without the person's
/// password, and the stranger hears nothing.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_server_on_ipv6_loopback_is_followed_there_never_at_127_0_0_1() {
    use tokio::io::AsyncBufReadExt;
    let stranger = Listener::start("127.0.0.1:0", None).await;
    let port = stranger.port.to_string();
    if std::net::TcpListener::bind(("::1", 0)).is_err() {
        eprintln!("no IPv6 loopback here; skipped");
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let project_dir = std::fs::canonicalize(project.path()).unwrap();
    // Prints each request's first line and whether it carried credentials.
    let server = r#"
        use IO::Socket::IP;
        my $listener = IO::Socket::IP->new(LocalHost => '::1', LocalPort => $ARGV[-1],
            Listen => 5, ReuseAddr => 1) or die "cannot listen: $@";
        $| = 1;
        print "listening\n";
        while (my $c = $listener->accept) {
            my ($first, $auth) = (undef, 0);
            while (my $line = <$c>) {
                $first //= $line;
                $auth = 1 if $line =~ /^authorization:/i;
                last if $line =~ /^\r?\n$/;
            }
            $first =~ s/\r?\n$//;
            print "$first auth=$auth\n";
            print $c "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            close $c;
        }
    "#;
    let mut opencode = tokio::process::Command::new("bash")
        .args([
            "-c",
            r#"exec -a opencode perl -e "$0" serve --hostname ::1 --port "$1""#,
            server,
            &port,
        ])
        .current_dir(&project_dir)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = opencode.id().unwrap();
    let mut lines = tokio::io::BufReader::new(opencode.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(WAIT, lines.next_line()).await;
    assert_eq!(first.unwrap().unwrap().as_deref(), Some("listening"));

    let state = tempfile::tempdir().unwrap();
    let mut client = started_with_state(state.path(), Some(&project_dir))
        .await
        .unwrap();
    let status = client.status().await;
    let followed = format!("http://[::1]:{port}");
    assert_eq!(status["servers"][0]["url"], json!(followed), "{status}");
    assert_eq!(
        status["servers"][0]["discovered"],
        json!(format!(
            "opencode process {pid} in {}",
            project_dir.display()
        ))
    );
    let request = tokio::time::timeout(WAIT, lines.next_line()).await;
    let request = request.unwrap().unwrap().unwrap();
    assert!(request.ends_with(" auth=0"), "no password: {request}");
    assert!(client.shutdown().await.success());
    assert_eq!(stranger.heads(), Vec::<String>::new());
}
