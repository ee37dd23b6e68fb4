//! Zero-config discovery: with no server configured (no `servers`, no
//! `$ASK_LSP_URL`), the OpenCode servers already running for this workspace.
//!
//! - OpenCode 2's background service registers itself in `service.json` under
//!   the user's state directory (`$XDG_STATE_HOME/opencode/service.json`, else
//!   `~/.local/state/opencode/service.json`): `{url, pid, password?, id?,
//!   version?}`, basic auth as `opencode` (anomalyco/opencode
//!   `packages/client/src/effect/service.ts` at 018554f7). A file whose
//!   process is gone is stale and skipped.
//! - OpenCode 1.x registers nothing: a running `opencode` started with
//!   `--port N` (read from `/proc/*/cmdline`) whose working directory
//!   (`/proc/*/cwd`) contains a workspace root, or lies inside one, is
//!   followed at `http://127.0.0.1:N` for that directory (the instance its
//!   sessions run in). Only the user's own processes are looked at.
//!
//! Only loopback addresses are ever followed this way; a server elsewhere
//! must be configured. See docs/discovery.md.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Secret;

/// A server found running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub url: String,
    /// The 1.x instance to follow (the process's working directory).
    pub directory: Option<String>,
    pub password: Option<Secret>,
    /// Where it was found, for status and logs.
    pub from: String,
}

/// Where the system says things are; tests point these at their own files.
pub(crate) struct Places {
    /// `service.json`, when a state directory is known.
    pub service_file: Option<PathBuf>,
    /// The process table (`/proc`).
    pub processes: PathBuf,
}

impl Places {
    pub fn of_this_system() -> Places {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let state = var("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| Path::new(&home).join(".local/state")));
        Places {
            service_file: state.map(|state| state.join("opencode/service.json")),
            processes: PathBuf::from("/proc"),
        }
    }
}

/// More servers than this for one workspace are not followed.
const MAX_FOUND: usize = 8;
/// A registration file is a few hundred bytes; a bigger one is not read.
const MAX_SERVICE_FILE: u64 = 64 * 1024;

/// The servers running for these workspace roots: the registered OpenCode 2
/// service first, then 1.x processes, closest directory first.
pub(crate) fn discover(places: &Places, roots: &[PathBuf]) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    if let Some(file) = &places.service_file {
        found.extend(service(file, &places.processes));
    }
    for server in processes(&places.processes, roots) {
        if !found.iter().any(|f| f.url == server.url) {
            found.push(server);
        }
    }
    found.truncate(MAX_FOUND);
    found
}

/// The registration file's fields ask-lsp uses.
#[derive(Deserialize)]
struct Registration {
    url: String,
    pid: u32,
    password: Option<String>,
}

fn service(file: &Path, processes: &Path) -> Option<Found> {
    let shown = file.display();
    let size = std::fs::metadata(file).ok()?.len();
    if size > MAX_SERVICE_FILE {
        tracing::warn!("discovery: {shown} is over {MAX_SERVICE_FILE} bytes; not read");
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let registration: Registration = match serde_json::from_str(&text) {
        Ok(registration) => registration,
        Err(e) => {
            tracing::warn!("discovery: {shown} is not a service registration: {e}");
            return None;
        }
    };
    if processes.is_dir() && !processes.join(registration.pid.to_string()).exists() {
        tracing::info!(
            "discovery: {shown} names process {}, which is gone; not followed",
            registration.pid
        );
        return None;
    }
    let url = registration.url.trim_end_matches('/');
    if !is_loopback_url(url) {
        tracing::warn!(
            "discovery: {shown} names a server beyond loopback; not followed (configure servers[].url to use it)"
        );
        return None;
    }
    Some(Found {
        url: url.to_owned(),
        directory: None,
        password: registration.password.map(Secret::new),
        from: shown_safely(&shown.to_string()),
    })
}

/// Where a server was found, as messages, logs and status show it: paths
/// are the system's, and may hold anything.
fn shown_safely(from: &str) -> String {
    crate::text::for_display(from, crate::text::DISPLAY_MESSAGE_CHARS).into_owned()
}

fn is_loopback_url(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let loopback = url.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    loopback && matches!(url.scheme(), "http" | "https") && url.username().is_empty()
}

/// The `opencode` processes serving a port for these roots, closest first.
fn processes(table: &Path, roots: &[PathBuf]) -> Vec<Found> {
    if roots.is_empty() {
        return Vec::new();
    }
    // Only the user's own processes: root could read everyone's.
    let Some(me) = owner(&table.join("self")) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(table) else {
        return Vec::new();
    };
    // (distance, port, …): an exact match, then the nearest enclosing
    // directory, then directories inside the workspace.
    let mut matches: Vec<(usize, u16, u32, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if owner(&entry.path()) != Some(me) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let Some(port) = opencode_port(&cmdline) else {
            continue;
        };
        // Readable only for the user's own processes.
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if let Some(distance) = roots.iter().filter_map(|root| distance(&cwd, root)).min() {
            matches.push((distance, port, pid, cwd));
        }
    }
    matches.sort();
    let mut found: Vec<Found> = Vec::new();
    for (_, port, pid, cwd) in matches {
        let url = format!("http://127.0.0.1:{port}");
        // The npm launcher and the server it starts carry the same arguments.
        if found.iter().any(|f| f.url == url) {
            continue;
        }
        let Some(directory) = cwd.to_str() else {
            continue;
        };
        found.push(Found {
            url,
            directory: Some(directory.to_owned()),
            password: None,
            from: shown_safely(&format!("opencode process {pid} in {directory}")),
        });
    }
    found
}

/// The user owning a file (a process, under `/proc`); none off Unix.
#[cfg(unix)]
fn owner(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn owner(_: &Path) -> Option<u32> {
    None
}

/// How far a server's directory is from a workspace root: 0 for the root
/// itself, 1, 2, … for the directories above it, then those inside it.
/// `None` when neither contains the other.
fn distance(cwd: &Path, root: &Path) -> Option<usize> {
    let depth = |p: &Path| p.components().count();
    if root.starts_with(cwd) {
        Some(depth(root) - depth(cwd))
    } else if cwd.starts_with(root) {
        Some(1024 + depth(cwd) - depth(root))
    } else {
        None
    }
}

/// The port of an `opencode` command line (NUL-separated arguments) that
/// serves one on loopback: `opencode [serve] … --port N` (or `--port=N`),
/// run directly or by `node`/`bun`. Port 0 (any free port) cannot be known.
fn opencode_port(cmdline: &[u8]) -> Option<u16> {
    let args: Vec<&str> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(std::str::from_utf8)
        .collect::<Result<_, _>>()
        .ok()?;
    let name = |arg: &str| {
        Path::new(arg)
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
    };
    let start = match args.first().and_then(|a| name(a)).as_deref() {
        Some("opencode") => 1,
        Some("node" | "bun")
            if args.get(1).and_then(|a| name(a)).as_deref() == Some("opencode") =>
        {
            2
        }
        _ => return None,
    };
    let mut port = None;
    let mut hostname = None;
    let mut rest = args[start..].iter().copied();
    while let Some(arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        let mut value = || inline.or_else(|| rest.next());
        match flag {
            "--port" => port = value().and_then(|v| v.parse::<u16>().ok()),
            "--hostname" => hostname = value(),
            _ => {}
        }
    }
    let on_loopback = match hostname {
        None => true,
        Some(host) => {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
        }
    };
    port.filter(|&p| p != 0 && on_loopback)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            port(&[
                "opencode",
                "serve",
                "--hostname",
                "0.0.0.0",
                "--port",
                "4103"
            ]),
            Some(4103)
        );
        assert_eq!(
            port(&[
                "opencode",
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                "1"
            ]),
            Some(1)
        );
        for args in [
            &["opencode", "serve"][..],
            &["opencode", "--port", "0"],
            &["opencode", "--port", "99999"],
            &["opencode", "--port"],
            &[
                "opencode",
                "serve",
                "--hostname",
                "192.168.1.5",
                "--port",
                "4104",
            ],
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

    #[test]
    fn only_loopback_urls() {
        for url in [
            "http://127.0.0.1:4096",
            "http://localhost:1",
            "http://[::1]:2",
            "http://127.8.0.1:3/",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://10.0.0.2:4096",
            "http://example.com",
            "http://0.0.0.0:4096",
            "ftp://127.0.0.1",
            "http://u@127.0.0.1:1",
            "not a url",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }

    /// A fake process table: `(pid, cmdline, cwd)`.
    #[cfg(unix)]
    fn table(dir: &Path, processes: &[(u32, &[&str], &Path)]) -> PathBuf {
        let table = dir.join("proc");
        for (pid, args, cwd) in processes {
            let entry = table.join(pid.to_string());
            std::fs::create_dir_all(&entry).unwrap();
            std::fs::write(entry.join("cmdline"), cmdline(args)).unwrap();
            std::os::unix::fs::symlink(cwd, entry.join("cwd")).unwrap();
        }
        std::fs::create_dir_all(table.join("self")).unwrap();
        table
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
            &[(20, &["opencode", "--port", "4210"], &hostile)],
        );
        let places = Places {
            service_file: None,
            processes,
        };
        let found = discover(&places, std::slice::from_ref(&hostile));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].from.ends_with("/ws␛]52;c;eA==␇⟨U+202E⟩x"),
            "{}",
            found[0].from
        );
    }

    #[cfg(unix)]
    #[test]
    fn processes_and_the_service_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let inside = root.join("sub");
        let elsewhere = dir.path().join("other");
        let processes = table(
            dir.path(),
            &[
                (10, &["opencode", "--port", "4200"], &inside),
                (11, &["node", "/n/opencode", "--port", "4201"], dir.path()),
                (12, &["opencode", "--port", "4201"], dir.path()),
                (13, &["opencode", "--port", "4202"], &elsewhere),
                (14, &["opencode", "serve"], &root),
                (15, &["opencode", "--port", "4203"], &root),
            ],
        );
        // Another user's process (when the tests may change owners).
        let foreign = std::os::unix::fs::chown(processes.join("15"), Some(65534), None).is_ok();
        let service_file = dir.path().join("service.json");
        let places = Places {
            service_file: Some(service_file.clone()),
            processes,
        };
        let found = discover(&places, std::slice::from_ref(&root));
        let summary: Vec<_> = found
            .iter()
            .map(|f| (f.url.as_str(), f.directory.clone().unwrap()))
            .collect();
        let top = dir.path().to_string_lossy().into_owned();
        let sub = inside.to_string_lossy().into_owned();
        let mut expected = vec![
            ("http://127.0.0.1:4201", top.clone()),
            ("http://127.0.0.1:4200", sub),
        ];
        if !foreign {
            expected.insert(
                0,
                ("http://127.0.0.1:4203", root.to_string_lossy().into_owned()),
            );
        }
        assert_eq!(summary, expected);
        assert!(
            found[0].from.starts_with("opencode process 1"),
            "{}",
            found[0].from
        );
        assert!(discover(&places, &[]).is_empty(), "no roots, no processes");

        // The registered service, while its process lives, comes first.
        let register = |pid: u32, url: &str| {
            std::fs::write(
                &service_file,
                serde_json::json!({"id": "svc", "version": "2.0.0", "url": url, "pid": pid, "password": "pw"}).to_string(),
            )
            .unwrap()
        };
        register(12, "http://127.0.0.1:4300/");
        let found = discover(&places, &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].url, "http://127.0.0.1:4300");
        assert_eq!(found[0].password, Some(Secret::new("pw".into())));
        assert_eq!(found[0].from, service_file.display().to_string());
        register(99, "http://127.0.0.1:4300");
        assert!(
            discover(&places, &[]).is_empty(),
            "stale: process 99 is gone"
        );
        register(12, "http://192.168.1.2:4300");
        assert!(discover(&places, &[]).is_empty(), "beyond loopback");
        std::fs::write(&service_file, "{\"url\": 1}").unwrap();
        assert!(discover(&places, &[]).is_empty(), "not a registration");
        std::fs::write(&service_file, " ".repeat(MAX_SERVICE_FILE as usize + 1)).unwrap();
        assert!(discover(&places, &[]).is_empty(), "too big");
    }
}
