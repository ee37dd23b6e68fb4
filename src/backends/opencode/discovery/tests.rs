use super::sockets::hex6;
use super::*;
use std::net::SocketAddr;

fn cmdline(args: &[&str]) -> Vec<u8> {
    args.iter().flat_map(|a| a.bytes().chain([0])).collect()
}

#[test]
fn ports_come_from_opencode_command_lines_only() {
    let port = |args: &[&str]| opencode_port(&cmdline(args));
    assert_eq!(
        port(&["/usr/bin/opencode", "serve", "--port", "4100"]),
        Some(4100)
    );
    assert_eq!(port(&["opencode", "--port=4101"]), Some(4101));
    assert_eq!(
        port(&["node", "/x/node_modules/.bin/opencode", "--port", "4102"]),
        Some(4102)
    );
    // Where it listens is read from its sockets.
    assert_eq!(
        port(&["opencode", "serve", "--hostname", "::1", "--port", "4103"]),
        Some(4103)
    );
    for args in [
        &["opencode", "serve"][..],
        &["opencode", "--port", "0"],
        &["opencode", "--port", "99999"],
        &["opencode", "--port"],
        &["vim", "opencode", "--port", "4105"],
        &["python3", "opencode", "--port", "4106"],
        &["/bin/not-opencode", "--port", "4107"],
        &[],
    ] {
        assert_eq!(port(args), None, "{args:?}");
    }
    assert_eq!(opencode_port(b"opencode\0--port\0\xff\xfe\0"), None);
}

#[test]
fn directories_match_either_way_closest_first() {
    let d = |cwd: &str, root: &str| distance(Path::new(cwd), Path::new(root));
    assert_eq!(d("/home/a/proj", "/home/a/proj"), Some(0));
    assert_eq!(d("/home/a", "/home/a/proj"), Some(1));
    assert_eq!(d("/", "/home/a/proj"), Some(3));
    assert_eq!(d("/home/a/proj/sub", "/home/a/proj"), Some(1025));
    assert_eq!(d("/home/a/project", "/home/a/proj"), None, "component-wise");
    assert_eq!(d("/home/b", "/home/a/proj"), None);
}

/// A fake process table: `(pid, cmdline, cwd, listening on)`, with the
/// sockets in `net/tcp` and `net/tcp6`.
#[cfg(unix)]
fn table(dir: &Path, processes: &[(u32, &[&str], &Path, &[&str])]) -> PathBuf {
    let table = dir.join("proc");
    std::fs::create_dir_all(table.join("net")).unwrap();
    let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    let (mut tcp, mut tcp6) = (header.to_owned(), header.to_owned());
    let mut inode = 9000;
    for (pid, args, cwd, listens) in processes {
        let entry = table.join(pid.to_string());
        std::fs::create_dir_all(entry.join("fd")).unwrap();
        std::fs::write(entry.join("cmdline"), cmdline(args)).unwrap();
        std::os::unix::fs::symlink(cwd, entry.join("cwd")).unwrap();
        std::os::unix::fs::symlink("/dev/null", entry.join("fd/0")).unwrap();
        for (fd, address) in listens.iter().enumerate() {
            inode += 1;
            let address: SocketAddr = address.parse().unwrap();
            let (hex, file) = match address.ip() {
                IpAddr::V4(ip) => (format!("{:08X}", u32::from_ne_bytes(ip.octets())), &mut tcp),
                IpAddr::V6(ip) => (hex6(ip), &mut tcp6),
            };
            file.push_str(&format!(
                "   {fd}: {hex}:{:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 {inode} 1 0000000000000000 100 0 0 10 0\n",
                address.port()
            ));
            std::os::unix::fs::symlink(
                format!("socket:[{inode}]"),
                entry.join(format!("fd/{}", fd + 3)),
            )
            .unwrap();
        }
    }
    std::fs::write(table.join("net/tcp"), tcp).unwrap();
    std::fs::write(table.join("net/tcp6"), tcp6).unwrap();
    std::fs::create_dir_all(table.join("self")).unwrap();
    table
}

#[cfg(unix)]
fn found(places: &Places, roots: &[PathBuf]) -> Vec<Found> {
    candidates(places, roots)
        .into_iter()
        .map(|c| c.found)
        .collect()
}

/// A directory name is the system's and may hold anything: where a
/// server was found is shown neutralised, like all outside text.
#[cfg(unix)]
#[test]
fn where_a_server_was_found_is_shown_harmlessly() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("ws\u{1b}]52;c;eA==\u{7}\u{202e}x");
    std::fs::create_dir_all(&hostile).unwrap();
    let processes = table(
        dir.path(),
        &[(
            20,
            &["opencode", "--port", "4210"],
            &hostile,
            &["127.0.0.1:4210"],
        )],
    );
    let places = Places {
        service_file: None,
        processes,
    };
    let found = found(&places, std::slice::from_ref(&hostile));
    assert_eq!(found.len(), 1);
    assert!(
        found[0].from.ends_with("/ws␛]52;c;eA==␇⟨U+202E⟩x"),
        "{}",
        found[0].from
    );
}

#[cfg(unix)]
#[test]
fn processes_at_the_address_they_listen_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let inside = root.join("sub");
    let elsewhere = dir.path().join("other");
    let processes = table(
        dir.path(),
        &[
            (
                10,
                &["opencode", "--port", "4200"],
                &inside,
                &["0.0.0.0:4200"],
            ),
            // The npm launcher holds no socket; the server it starts does.
            (
                11,
                &["node", "/n/opencode", "--port", "4201"],
                dir.path(),
                &[],
            ),
            (
                12,
                &["opencode", "--port", "4201"],
                dir.path(),
                &["127.0.0.1:4201"],
            ),
            (
                13,
                &["opencode", "--port", "4202"],
                &elsewhere,
                &["127.0.0.1:4202"],
            ),
            (14, &["opencode", "serve"], &root, &["127.0.0.1:4099"]),
            (
                15,
                &["opencode", "--port", "4203"],
                &root,
                &["127.0.0.1:4203"],
            ),
            // On ::1 only: followed there, never at 127.0.0.1, which
            // anyone may bind.
            (
                16,
                &["opencode", "serve", "--hostname", "::1", "--port", "4204"],
                &root,
                &["[::1]:4204"],
            ),
            (
                17,
                &["opencode", "--port", "4205"],
                &root,
                &["[::]:4205", "10.0.0.5:4206"],
            ),
            // Beyond loopback, or not listening on its port at all.
            (
                18,
                &["opencode", "--hostname", "10.0.0.5", "--port", "4206"],
                &root,
                &["10.0.0.5:4206"],
            ),
            (
                19,
                &["opencode", "--port", "4207"],
                &root,
                &["127.0.0.1:4299"],
            ),
        ],
    );
    // Another user's process (when the tests may change owners).
    let foreign = std::os::unix::fs::chown(processes.join("15"), Some(65534), None).is_ok();
    let places = Places {
        service_file: None,
        processes,
    };
    let found = found(&places, std::slice::from_ref(&root));
    let summary: Vec<_> = found
        .iter()
        .map(|f| {
            (
                f.url.as_str(),
                f.directory.clone().unwrap(),
                f.password.clone(),
            )
        })
        .collect();
    let top = dir.path().to_string_lossy().into_owned();
    let sub = inside.to_string_lossy().into_owned();
    let ws = root.to_string_lossy().into_owned();
    let mut expected = vec![
        ("http://[::1]:4204", ws.clone(), None),
        ("http://[::1]:4205", ws.clone(), None),
        ("http://127.0.0.1:4201", top.clone(), None),
        ("http://127.0.0.1:4200", sub, None),
    ];
    if !foreign {
        expected.insert(0, ("http://127.0.0.1:4203", ws, None));
    }
    assert_eq!(summary, expected);
    assert!(
        found[0].from.starts_with("opencode process 1"),
        "{}",
        found[0].from
    );
    assert!(
        candidates(&places, &[]).is_empty(),
        "no roots, no processes"
    );
}

/// A read of `/proc` that never returns (here a FIFO standing in for a
/// process stuck in the kernel) costs at most [`SCAN_TIME`].
#[cfg(unix)]
#[tokio::test]
async fn a_stalled_read_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let processes = table(dir.path(), &[(30, &["opencode"], &root, &[])]);
    let stuck = processes.join("30/cmdline");
    std::fs::remove_file(&stuck).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&stuck).status();
    assert!(made.unwrap().success());
    let places = Places {
        service_file: None,
        processes,
    };
    let started = std::time::Instant::now();
    assert_eq!(discover(places, vec![root]).await, Vec::new());
    let took = started.elapsed();
    assert!(
        took >= SCAN_TIME && took < SCAN_TIME + Duration::from_secs(2),
        "{took:?}"
    );
    // Let the stuck read end, so that the runtime can stop.
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(&stuck)
            .unwrap(),
    );
}

/// The registration file and everything it must be to be followed.
#[cfg(unix)]
#[test]
fn the_service_file_only_when_the_user_alone_wrote_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let processes = table(
        dir.path(),
        &[
            (12, &["opencode2"], dir.path(), &["127.0.0.1:4300"]),
            (13, &["opencode2"], dir.path(), &["[::1]:4301"]),
        ],
    );
    let state = dir.path().join("state/opencode");
    std::fs::create_dir_all(&state).unwrap();
    let file = state.join("service.json");
    let places = Places {
        service_file: Some(file.clone()),
        processes: processes.clone(),
    };
    let write = |text: &str| {
        let _ = std::fs::remove_file(&file);
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    let register = |pid: u32, url: &str| {
        write(&serde_json::json!({"id": "svc", "version": "2.0.0", "url": url, "pid": pid, "password": "pw"}).to_string())
    };
    let followed = || found(&places, &[]);
    assert!(followed().is_empty(), "no file: nothing");

    register(12, "http://127.0.0.1:4300/");
    let found = followed();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].url, "http://127.0.0.1:4300");
    assert_eq!(found[0].password, Some(Secret::new("pw".into())));
    assert_eq!(found[0].from, file.display().to_string());
    // `localhost` is followed at the address the process listens on.
    register(13, "http://localhost:4301");
    assert_eq!(followed()[0].url, "http://[::1]:4301");

    // Each of these is skipped.
    let refused = |why: &str| assert!(followed().is_empty(), "{why}");
    register(13, "http://127.0.0.1:4301");
    refused("process 13 listens on ::1, not 127.0.0.1");
    register(12, "http://127.0.0.1:4399");
    refused("process 12 does not listen there");
    register(1, "http://127.0.0.1:4300");
    refused("process 1 does not listen there");
    register(99, "http://127.0.0.1:4300");
    refused("stale: process 99 is gone");
    register(12, "http://192.168.1.2:4300");
    refused("beyond loopback");
    register(12, "http://:pw@127.0.0.1:4300");
    refused("credentials in the url");
    register(12, "http://opencode@127.0.0.1:4300");
    refused("a user in the url");
    write("{\"url\": 1}");
    refused("not a registration");
    write(&" ".repeat(MAX_SERVICE_FILE as usize + 1));
    refused("too big");

    register(12, "http://127.0.0.1:4300");
    assert_eq!(followed().len(), 1);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o620)).unwrap();
    refused("a file the group can write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o602)).unwrap();
    refused("a file others can write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused("a directory anyone can write");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o1777)).unwrap();
    refused("a directory anyone can write, sticky or not");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    if std::os::unix::fs::chown(&file, Some(65534), None).is_ok() {
        refused("another user's file");
        std::os::unix::fs::chown(&file, Some(owner(&processes.join("self")).unwrap()), None)
            .unwrap();
    }
    assert_eq!(followed().len(), 1);

    // A link, even to a good registration; a FIFO nobody writes; a
    // link to an endless file.
    let elsewhere = dir.path().join("elsewhere.json");
    std::fs::rename(&file, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    refused("a symbolic link");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    refused("a link to /dev/zero");
    std::fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let started = std::time::Instant::now();
    refused("a FIFO");
    assert!(started.elapsed() < Duration::from_secs(1), "not blocked");
}
