//! Zero-config discovery: with no server configured (no `servers`, no
//! `$ASK_LSP_URL`), the OpenCode servers already running for this workspace.
//!
//! Only what can be attributed to the person's own process is followed
//! (docs/discovery.md says what is trusted and why):
//!
//! - OpenCode 2's background service registers itself in `service.json` under
//!   the user's state directory (`$XDG_STATE_HOME/opencode/service.json`, else
//!   `~/.local/state/opencode/service.json`): `{url, pid, password?, id?,
//!   version?}`, basic auth as `opencode` (anomalyco/opencode
//!   `packages/client/src/effect/service.ts` at 018554f7). The file is read
//!   only when it and its directory are the user's and nobody else can write
//!   them, it is a regular file (opened without following a link and without
//!   blocking), and small; its `pid` must be the user's process listening on
//!   the `url`'s address, and the server's `GET /api/info`, where it answers
//!   one, must name that pid.
//! - OpenCode 1.x registers nothing: a running `opencode` started with
//!   `--port N` (read from `/proc/*/cmdline`) whose working directory
//!   (`/proc/*/cwd`) contains a workspace root, or lies inside one, is
//!   followed at the loopback address it listens on (its sockets in
//!   `/proc/*/fd` matched to `/proc/net/tcp` and `tcp6`) for that directory
//!   (the instance its sessions run in). Only the user's own processes are
//!   looked at.
//!
//! Only loopback addresses are ever followed this way; a server elsewhere
//! must be configured.

mod scope;
mod sockets;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use self::sockets::{Table, listening, loopback_of, owner, reaches};
use crate::config::Secret;

/// A server found running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub url: String,
    /// The 1.x instance to follow (the process's working directory).
    pub directory: Option<String>,
    /// What the registration carries; never the person's own password.
    pub password: Option<Secret>,
    /// Where it was found, for status and logs.
    pub from: String,
}

/// Where the system says things are; tests point these at their own files.
pub(crate) struct Places {
    /// `service.json`, when a state directory is known.
    pub service_file: Option<PathBuf>,
    /// The process table (`/proc`), with `net/tcp` and `net/tcp6`.
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
/// Reading `/proc` can stall (a process in uninterruptible sleep); what is
/// not read by then is not followed.
const SCAN_TIME: Duration = Duration::from_secs(2);
/// How long a registered server has to answer `GET /api/info`.
const INFO_TIME: Duration = Duration::from_secs(1);
/// The longest discovery takes.
pub(crate) const TIME_BOUND: Duration = SCAN_TIME.saturating_add(INFO_TIME);
/// An `/api/info` answer is a few hundred bytes.
const MAX_INFO_BODY: usize = 64 * 1024;

/// A server attributed to one of the user's processes, with the pid its
/// registration names (checked against the server's own word).
#[derive(Clone)]
struct Candidate {
    found: Found,
    registered_pid: Option<u32>,
}

/// The servers running for these workspace roots: the registered OpenCode 2
/// service first, then 1.x processes, closest directory first. Bounded in
/// time; a bad entry is skipped with one log line.
pub(crate) async fn discover(places: Places, roots: Vec<PathBuf>) -> Vec<Found> {
    let scan = tokio::task::spawn_blocking(move || candidates(&places, &roots));
    let candidates = match tokio::time::timeout(SCAN_TIME, scan).await {
        Ok(Ok(candidates)) => candidates,
        Ok(Err(error)) => {
            tracing::warn!("discovery failed: {error}");
            return Vec::new();
        }
        Err(_) => {
            tracing::warn!("discovery: /proc was not read within {SCAN_TIME:?}; nothing followed");
            return Vec::new();
        }
    };
    futures_util::future::join_all(candidates.into_iter().map(confirmed))
        .await
        .into_iter()
        .flatten()
        .collect()
}

fn candidates(places: &Places, roots: &[PathBuf]) -> Vec<Candidate> {
    // Only the user's own processes and files: root could read everyone's.
    let Some(me) = owner(&places.processes.join("self")) else {
        return Vec::new();
    };
    let table = Table {
        path: &places.processes,
        me,
        listening: listening(&places.processes),
    };
    let mut found: Vec<Candidate> = Vec::new();
    if let Some(file) = &places.service_file {
        let service = service(file, &table);
        found.extend(service.map_or_else(Vec::new, |s| scope::per_root(s, roots, MAX_FOUND)));
    }
    for server in processes(&table, roots) {
        if !found.iter().any(|f| f.found.url == server.found.url) {
            found.push(server);
        }
    }
    found.truncate(MAX_FOUND);
    found
}

fn url_at(scheme: &str, ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(ip) => format!("{scheme}://{ip}:{port}"),
        IpAddr::V6(ip) => format!("{scheme}://[{ip}]:{port}"),
    }
}

/// The registration file's fields ask-lsp uses.
#[derive(Deserialize)]
struct Registration {
    url: String,
    pid: u32,
    password: Option<String>,
}

fn service(file: &Path, table: &Table) -> Option<Candidate> {
    let shown = shown_safely(&file.display().to_string());
    let bytes = match read_private(file, table.me) {
        Ok(bytes) => bytes,
        Err(Unread::Absent) => return None,
        Err(Unread::Refused(reason)) => {
            tracing::warn!("discovery: {shown} {reason}; not followed");
            return None;
        }
    };
    let registration: Registration = match serde_json::from_slice(&bytes) {
        Ok(registration) => registration,
        Err(e) => {
            // serde quotes the file's values, which anyone may have written.
            let e = shown_safely(&e.to_string());
            tracing::warn!("discovery: {shown} is not a service registration: {e}");
            return None;
        }
    };
    let refused = |reason: String| {
        tracing::warn!("discovery: {shown} {reason}; not followed");
        None
    };
    let Ok(url) = reqwest::Url::parse(&registration.url) else {
        return refused("names no URL".into());
    };
    if !url.username().is_empty() || url.password().is_some() {
        return refused("carries credentials in its url".into());
    }
    let host = url.host_str().unwrap_or_default();
    let wanted: Vec<IpAddr> = if host.eq_ignore_ascii_case("localhost") {
        vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()]
    } else {
        let ip = host.trim_start_matches('[').trim_end_matches(']').parse();
        ip.ok().filter(IpAddr::is_loopback).into_iter().collect()
    };
    let port = url.port_or_known_default();
    let (false, Some(port), "http" | "https") = (wanted.is_empty(), port, url.scheme()) else {
        tracing::warn!(
            "discovery: {shown} names a server beyond loopback; not followed (configure servers[].url to use it)"
        );
        return None;
    };
    let pid = registration.pid;
    if !table.is_mine(pid) {
        return refused(format!(
            "names process {pid}, which is not yours or is gone"
        ));
    }
    let sockets = table.listens(pid, port);
    let Some(ip) = wanted
        .into_iter()
        .find(|&ip| sockets.iter().any(|&socket| reaches(socket, ip)))
    else {
        return refused(format!(
            "names port {port}, where process {pid} does not listen"
        ));
    };
    Some(Candidate {
        found: Found {
            url: url_at(url.scheme(), ip, port),
            directory: None,
            password: registration.password.map(Secret::new),
            from: shown,
        },
        registered_pid: Some(pid),
    })
}

/// Why a registration file was not read.
enum Unread {
    /// There is none: nothing to say.
    Absent,
    /// Said in the log.
    Refused(String),
}

/// A file only the user can have written (as ssh's StrictModes checks
/// `authorized_keys`): the user's and not writable by group or others, in a
/// directory that is the same. Opened without following a link (another
/// user's file, `/dev/zero`) and without blocking (a FIFO nobody writes),
/// read up to [`MAX_SERVICE_FILE`].
#[cfg(unix)]
fn read_private(file: &Path, me: u32) -> Result<Vec<u8>, Unread> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let private = |meta: &std::fs::Metadata| meta.uid() == me && meta.mode() & 0o022 == 0;
    let absent_or = |e: &std::io::Error, refused: String| match e.kind() {
        std::io::ErrorKind::NotFound => Unread::Absent,
        _ => Unread::Refused(refused),
    };
    let directory = file.parent().unwrap_or(Path::new("/"));
    let meta = std::fs::metadata(directory)
        .map_err(|e| absent_or(&e, format!("is in a directory that cannot be read: {e}")))?;
    if !private(&meta) {
        return Err(Unread::Refused(
            "is in a directory that is not yours or that others can write to".into(),
        ));
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Unread::Refused("is a symbolic link".into()),
            _ => absent_or(&e, "cannot be opened".into()),
        })?;
    let meta = opened
        .metadata()
        .map_err(|e| Unread::Refused(format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(Unread::Refused("is not a regular file".into()));
    }
    if !private(&meta) {
        return Err(Unread::Refused(
            "is not yours or others can write to it".into(),
        ));
    }
    let mut bytes = Vec::new();
    opened
        .take(MAX_SERVICE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Unread::Refused(format!("cannot be read: {e}")))?;
    if bytes.len() as u64 > MAX_SERVICE_FILE {
        return Err(Unread::Refused(format!("is over {MAX_SERVICE_FILE} bytes")));
    }
    Ok(bytes)
}

/// Off Unix, who may write a file is not checked: it is not read.
#[cfg(not(unix))]
fn read_private(_: &Path, _: u32) -> Result<Vec<u8>, Unread> {
    Err(Unread::Absent)
}

/// A registered server whose `GET /api/info` names another pid than its
/// registration is not the registered one. A server without that route (it
/// answers no JSON) or not answering is followed on the strength of its
/// socket, and the backend reports what it finds.
async fn confirmed(candidate: Candidate) -> Option<Found> {
    let Some(pid) = candidate.registered_pid else {
        return Some(candidate.found);
    };
    match reported_pid(&candidate.found).await {
        Some(reported) if reported != u64::from(pid) => {
            tracing::warn!(
                "discovery: {} names process {pid}, but the server at its url says it is process {reported}; not followed",
                candidate.found.from
            );
            None
        }
        _ => Some(candidate.found),
    }
}

/// The `pid` of the server's `GET /api/info` answer, if it gives one.
async fn reported_pid(found: &Found) -> Option<u64> {
    #[derive(Deserialize)]
    struct Info {
        pid: u64,
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(INFO_TIME)
        .build()
        .ok()?;
    let mut request = client.get(format!("{}/api/info", found.url));
    if let Some(password) = &found.password {
        request = request.basic_auth("opencode", Some(password.expose()));
    }
    let mut response = request.send().await.ok()?;
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status() != reqwest::StatusCode::OK || !is_json {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if body.len() + chunk.len() > MAX_INFO_BODY {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice::<Info>(&body)
        .ok()
        .map(|info| info.pid)
}

/// Where a server was found, as messages, logs and status show it: paths
/// are the system's, and may hold anything.
fn shown_safely(from: &str) -> String {
    crate::text::for_display(from, crate::text::DISPLAY_MESSAGE_CHARS).into_owned()
}

/// The `opencode` processes serving a port for these roots, closest first,
/// each at the loopback address it listens on.
fn processes(table: &Table, roots: &[PathBuf]) -> Vec<Candidate> {
    if roots.is_empty() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(table.path) else {
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
        if !table.is_mine(pid) {
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
    let mut found: Vec<Candidate> = Vec::new();
    for (_, port, pid, cwd) in matches {
        let Some(directory) = cwd.to_str() else {
            continue;
        };
        // The npm launcher carries the server's arguments but holds no
        // socket; a server bound beyond loopback is not followed.
        let Some(ip) = table.listens(pid, port).into_iter().find_map(loopback_of) else {
            tracing::debug!(
                "discovery: opencode process {pid} does not listen on loopback port {port}"
            );
            continue;
        };
        let url = url_at("http", ip, port);
        if found.iter().any(|f| f.found.url == url) {
            continue;
        }
        found.push(Candidate {
            found: Found {
                url,
                directory: Some(directory.to_owned()),
                password: None,
                from: shown_safely(&format!("opencode process {pid} in {directory}")),
            },
            registered_pid: None,
        });
    }
    found
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
/// serves one: `opencode [serve] … --port N` (or `--port=N`), run directly
/// or by `node`/`bun`. Port 0 (any free port) cannot be known. Where it
/// listens is read from its sockets, not from `--hostname`.
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
    let mut rest = args[start..].iter().copied();
    while let Some(arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        if flag == "--port" {
            port = inline
                .or_else(|| rest.next())
                .and_then(|v| v.parse::<u16>().ok());
        }
    }
    port.filter(|&p| p != 0)
}

#[cfg(test)]
mod tests {
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
                    IpAddr::V4(ip) => {
                        (format!("{:08X}", u32::from_ne_bytes(ip.octets())), &mut tcp)
                    }
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
}
