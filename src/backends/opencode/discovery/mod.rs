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
use crate::settings::{Found, Secret};

/// Where the system says things are; tests point these at their own files.
pub(crate) struct Places {
    /// `service.json`, when a state directory is known.
    pub service_file: Option<PathBuf>,
    /// The process table (`/proc`), with `net/tcp` and `net/tcp6`.
    pub processes: PathBuf,
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
    let client = crate::backends::net::http::builder()
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
mod tests;
