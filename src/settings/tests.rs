use super::*;
use serde_json::json;

#[test]
fn defaults_come_from_the_environment() {
    let env = EnvDefaults {
        url: Some("http://127.0.0.1:5000/".into()),
        username: None,
        password: Some("s3cret".into()),
        ..EnvDefaults::default()
    };
    let config = Config::from_json(None, &env).unwrap();
    assert_eq!(
        config.servers,
        vec![ServerSpec {
            name: "default".into(),
            url: "http://127.0.0.1:5000".into(),
            directory: None,
            username: "opencode".into(),
            password: Some(Secret::new("s3cret".into())),
            backend: BackendKind::OpenCode,
            url_source: UrlSource::Environment,
        }]
    );
    assert_eq!(config.surface, Surface::Auto);
    assert!(!format!("{config:?}").contains("s3cret"));
}

/// Neovim sends an empty Lua table as `[]`.
#[test]
fn an_empty_array_is_no_settings() {
    let env = EnvDefaults::default();
    for empty in [json!([]), json!({"askLsp": []})] {
        let config = Config::from_json(Some(&empty), &env).unwrap();
        assert_eq!(config.servers.len(), 1);
        let current = json!({"servers": [{"url": "http://127.0.0.1:1"}]});
        assert_eq!(merge_settings(&current, &empty).unwrap(), current);
    }
}

#[test]
fn settings_wrapper_and_several_servers() {
    let value = json!({"askLsp": {"surface": "messageRequest", "servers": [
        {"url": "http://a:1", "directory": "/p"}, {"name": "b", "url": "https://b"}]}});
    let config = Config::from_json(Some(&value), &EnvDefaults::default()).unwrap();
    assert_eq!(config.surface, Surface::MessageRequest);
    let names: Vec<_> = config
        .servers
        .iter()
        .map(|s| (&*s.name, s.url.as_str()))
        .collect();
    assert_eq!(names, vec![("default", "http://a:1"), ("b", "https://b")]);
    assert_eq!(config.servers[0].directory.as_deref(), Some("/p"));
}

#[test]
fn updates_replace_only_the_keys_they_name() {
    let current = json!({"servers": [{"url": "http://a:1"}], "surface": "none"});
    for settings in [
        json!(null),
        json!({}),
        json!({"askLsp": {}}),
        json!({"askLsp": null}),
        json!({"askLsp": {"servers": null}}),
        json!({"pylsp": {"plugins": {}}}),
    ] {
        assert_eq!(
            merge_settings(&current, &settings).unwrap(),
            current,
            "{settings}"
        );
    }
    assert_eq!(
        merge_settings(&current, &json!({"askLsp": {"surface": "auto"}})).unwrap(),
        json!({"servers": [{"url": "http://a:1"}], "surface": "auto"})
    );
    assert_eq!(
        merge_settings(&current, &json!({"servers": []})).unwrap(),
        json!({"servers": [], "surface": "none"})
    );
    let wrapped = json!({"askLsp": {"servers": [{"url": "http://a:1"}]}});
    assert_eq!(
        merge_settings(&wrapped, &json!({"policy": {"mode": "forward"}})).unwrap(),
        json!({"servers": [{"url": "http://a:1"}], "policy": {"mode": "forward"}})
    );
    let err = merge_settings(&current, &json!({"askLsp": [1]})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid ask-lsp configuration: settings must be an object (optionally inside \"askLsp\")"
    );
    let config = Config::from_json(
        Some(&json!({"servers": [{"url": "http://a:1"}, {"name": "b"}]})),
        &EnvDefaults::default(),
    )
    .unwrap();
    let sources: Vec<_> = config
        .servers
        .iter()
        .map(|s| s.url_source.clone())
        .collect();
    assert_eq!(sources, vec![UrlSource::Configuration, UrlSource::BuiltIn]);
}

#[test]
fn bad_values_are_clear_errors() {
    let env = EnvDefaults::default();
    let err = Config::from_json(Some(&json!({"servers": [{"url": "ftp://x"}]})), &env).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid ask-lsp configuration: servers[0].url \"ftp://x\": expected an http:// or https:// URL with a host"
    );
    let err = Config::from_json(
        Some(&json!({"servers": [{"url": "http://opencode:s3cret@host:4096"}]})),
        &env,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid ask-lsp configuration: servers[0].url \"http://host:4096/\": credentials in the URL are not accepted: use username and password (or OPENCODE_SERVER_PASSWORD)"
    );
    let err = Config::from_json(
        Some(&json!({"servers": [{"backend": "sandbox-agent"}]})),
        &env,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid ask-lsp configuration: servers[0]: sandbox-agent needs serverId (letters, digits, '-', '_', '.')"
    );
    let config = Config::from_json(
        Some(&json!({"servers": [{"backend": "sandbox-agent", "url": "http://127.0.0.1:2468", "serverId": "s1", "token": "t"}]})),
        &env,
    )
    .unwrap();
    assert_eq!(
        config.servers[0].backend,
        BackendKind::SandboxAgent {
            server_id: "s1".into(),
            token: Some(Secret::new("t".into()))
        }
    );
    let empty = Config::from_json(Some(&json!([])), &env).unwrap();
    assert_eq!(empty.servers[0].url_source, UrlSource::BuiltIn);
    let err = Config::from_json(Some(&json!({"servrs": []})), &env).unwrap_err();
    assert!(err.to_string().contains("unknown field `servrs`"), "{err}");
    let err = Config::from_json(
        Some(&json!({"servers": [{"name": "a"}, {"name": "a"}]})),
        &env,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid ask-lsp configuration: two servers are named \"a\""
    );
}

#[test]
fn discovered_servers_only_where_nothing_is_configured() {
    let found = |url: &str, directory: Option<&str>, from: &str| Found {
        url: url.into(),
        directory: directory.map(str::to_owned),
        password: None,
        from: from.into(),
    };
    let mut env = EnvDefaults {
        discovered: vec![
            found(
                "http://127.0.0.1:4100",
                None,
                "/state/opencode/service.json",
            ),
            found(
                "http://127.0.0.1:4101",
                Some("/p"),
                "opencode process 7 in /p",
            ),
        ],
        password: Some("env".into()),
        ..EnvDefaults::default()
    };
    let config = Config::from_json(None, &env).unwrap();
    let servers: Vec<_> = config
        .servers
        .iter()
        .map(|s| {
            (
                &*s.name,
                s.url.as_str(),
                s.directory.as_deref(),
                s.url_source.clone(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            (
                "default",
                "http://127.0.0.1:4100",
                None,
                UrlSource::Discovered("/state/opencode/service.json".into())
            ),
            (
                "server2",
                "http://127.0.0.1:4101",
                Some("/p"),
                UrlSource::Discovered("opencode process 7 in /p".into())
            ),
        ]
    );
    // A discovered server gets the password its registration carries,
    // or none: the person's own goes only to configured URLs.
    assert_eq!(config.servers[0].password, None);
    env.discovered[0].password = Some(Secret::new("registered".into()));
    env.username = Some("me".into());
    let config = Config::from_json(None, &env).unwrap();
    assert_eq!(
        config.servers[0].password,
        Some(Secret::new("registered".into()))
    );
    assert_eq!(config.servers[0].username, "opencode");
    assert_eq!(config.servers[1].password, None);
    // An entry that does not pass is skipped, never an error.
    let mut bad = env.clone();
    bad.discovered
        .insert(0, found("http://:pw@127.0.0.1:4102", None, "planted"));
    let config = Config::from_json(None, &bad).unwrap();
    assert_eq!(config.servers.len(), 2);
    assert_eq!(config.servers[0].url, "http://127.0.0.1:4100");
    assert_eq!(&*config.servers[0].name, "default");
    // Configured servers (even none) and $ASK_LSP_URL win.
    let configured = json!({"servers": [{"url": "http://a:1"}]});
    assert!(!env.wants_discovery(&configured));
    let config = Config::from_json(Some(&configured), &env).unwrap();
    assert_eq!(config.servers.len(), 1);
    assert_eq!(config.servers[0].url_source, UrlSource::Configuration);
    let none = Config::from_json(Some(&json!({"servers": []})), &env).unwrap();
    assert!(none.servers.is_empty());
    assert!(env.wants_discovery(&json!({"surface": "none"})));
    env.url = Some("http://127.0.0.1:5000".into());
    assert!(!env.wants_discovery(&json!(null)));
    let config = Config::from_json(None, &env).unwrap();
    assert_eq!(config.servers.len(), 1);
    assert_eq!(config.servers[0].url_source, UrlSource::Environment);
}

/// `codexHomes`: absolute paths, each once; a relative one is refused
/// naming the setting, and so is a seventeenth.
#[test]
fn codex_homes_are_absolute_and_each_once() {
    let env = EnvDefaults::default();
    let config = Config::from_json(
        Some(&json!({"codexHomes": ["/h/a", "/h/./a/", "/h/b"]})),
        &env,
    )
    .unwrap();
    assert_eq!(
        config.codex_homes,
        [std::path::PathBuf::from("/h/a"), "/h/b".into()]
    );
    assert!(
        Config::from_json(None, &env)
            .unwrap()
            .codex_homes
            .is_empty()
    );
    let error =
        Config::from_json(Some(&json!({"codexHomes": ["/h/a", "~/.codex"]})), &env).unwrap_err();
    assert!(
        error
            .detail()
            .unwrap()
            .starts_with("codexHomes[1] \"~/.codex\": not an absolute path"),
        "{error}"
    );
    let many: Vec<String> = (0..17).map(|n| format!("/h/{n}")).collect();
    let error = Config::from_json(Some(&json!({"codexHomes": many})), &env).unwrap_err();
    assert!(
        error.detail().unwrap().starts_with("codexHomes[16]"),
        "{error}"
    );
    assert!(Config::from_json(Some(&json!({"codexHomes": "/h/a"})), &env).is_err());
    // An update naming only `codexHomes` keeps the servers.
    let current = json!({"servers": [{"url": "http://127.0.0.1:1"}]});
    let merged = merge_settings(&current, &json!({"codexHomes": ["/h/a"]})).unwrap();
    assert_eq!(merged["servers"], current["servers"]);
}

/// `watch --codex-home`: the setting's rules, an error naming the flag.
#[test]
fn codex_homes_from_flags_name_the_flag() {
    let homes = codex_homes_from_flags(vec!["/h/a".into(), "/h/a/".into()]).unwrap();
    assert_eq!(homes, [std::path::PathBuf::from("/h/a")]);
    let many: Vec<String> = (0..17).map(|n| format!("/h/{n}")).collect();
    let error = codex_homes_from_flags(many).unwrap_err().to_string();
    assert_eq!(error, "--codex-home \"/h/16\": more than 16 Codex homes");
}
