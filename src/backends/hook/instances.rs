//! The instances `ask-lsp hook` can hand a request to: the sockets in the
//! per-user directory, live and this user's, and what each instance's
//! description file says of its workspace and the hook requests so far.

use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{alive, euid, socket_pid};

/// An instance's description file is a pid and a few roots.
const MAX_INFO: u64 = 64 * 1024;

/// The running instances' sockets: those whose workspace holds `cwd`, and
/// the others, the most recently started first. Sockets of dead processes
/// are removed; another user's are skipped.
pub(crate) fn instances(dir: &Path, cwd: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let cwd = cwd.map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.to_owned()));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut found: Vec<(bool, SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten().take(1024) {
        let Some(pid) = socket_pid(&entry.file_name()) else {
            continue;
        };
        let socket = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&socket) else {
            continue;
        };
        if !meta.file_type().is_socket() || meta.uid() != euid() {
            continue;
        }
        let info = dir.join(format!("ask-lsp-{pid}.json"));
        if !alive(pid) {
            let _ = std::fs::remove_file(&socket);
            let _ = std::fs::remove_file(&info);
            continue;
        }
        let holds_cwd = cwd.as_deref().is_some_and(|cwd| holds(&roots(&info), cwd));
        found.push((
            holds_cwd,
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            socket,
        ));
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.1));
    let (holding, others): (Vec<_>, Vec<_>) = found.into_iter().partition(|(holds, _, _)| *holds);
    let sockets =
        |found: Vec<(bool, SystemTime, PathBuf)>| found.into_iter().map(|f| f.2).collect();
    (sockets(holding), sockets(others))
}

/// An instance's description file (src/backends/hook/mod.rs writes it).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Info {
    #[serde(default)]
    roots: Vec<PathBuf>,
    #[serde(default)]
    requests: u64,
    #[serde(default)]
    last_request_ms: Option<u64>,
    #[serde(default)]
    last_agent: Option<String>,
}

/// An instance's description: opened without waiting (a FIFO planted in
/// its place would block the open, and a reader, for good) and without
/// following a link, read only when a regular file, and bounded.
fn info(path: &Path) -> Info {
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = Vec::new();
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .and_then(|file| match file.metadata()?.is_file() {
            true => file.take(MAX_INFO).read_to_end(&mut text),
            false => Err(io::ErrorKind::InvalidInput.into()),
        });
    match read {
        Ok(_) => serde_json::from_slice::<Info>(&text).unwrap_or_default(),
        Err(_) => Info::default(),
    }
}

fn roots(path: &Path) -> Vec<PathBuf> {
    info(path).roots
}

/// What `ask-lsp status` says of hooks: where `ask-lsp hook` looks, and
/// each running instance there with when a hook request last reached it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Reach {
    pub directory: Option<String>,
    /// Why hooks can reach no instance here, if so (`--json`: its English).
    #[serde(serialize_with = "english")]
    pub error: Option<Unreached>,
    /// The socket directory, when it is there but refused (another user's,
    /// open to others, not a directory): every prompt then stays in the
    /// agent's terminal until it is fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusable: Option<String>,
    pub listeners: Vec<Listener>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Listener {
    pub socket: String,
    pub pid: i32,
    pub roots: Vec<String>,
    pub requests: u64,
    pub last_request_ms: Option<u64>,
    pub last_agent: Option<String>,
    /// The executable it runs, when it is not this one's: a hook does not
    /// ask it (docs/hook.md, "Trust").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_executable: Option<String>,
}

/// Why `ask-lsp hook` reaches no instance: facts, worded in
/// `present/no_decision.rs` (English for `--json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreached {
    /// The socket directory cannot be used (the OS's words).
    Directory(String),
    /// No instance listens there.
    NoListener,
}

fn english<S: serde::Serializer>(
    error: &Option<Unreached>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match error {
        Some(error) => serializer.collect_str(error),
        None => serializer.serialize_none(),
    }
}

/// The instances `ask-lsp hook` would find now in `dir`, as it finds them
/// (live, this user's sockets), the most recently started first.
pub(crate) fn reach(dir: PathBuf) -> Reach {
    let shown = |path: &Path| {
        crate::text::for_display(&path.to_string_lossy(), crate::text::DISPLAY_MESSAGE_CHARS)
            .into_owned()
    };
    let dir = match super::socket_dir(dir.clone(), false) {
        Ok(dir) => dir,
        Err(e) => {
            return Reach {
                // There but refused: the person can fix it (status says how).
                unusable: (e.kind() != io::ErrorKind::NotFound).then(|| shown(&dir)),
                directory: None,
                error: Some(Unreached::Directory(e.to_string())),
                listeners: Vec::new(),
            };
        }
    };
    let (holding, others) = instances(&dir, None);
    let listeners: Vec<Listener> = holding
        .into_iter()
        .chain(others)
        .filter_map(|socket| {
            let pid = socket_pid(socket.file_name()?)?;
            let found = info(&dir.join(format!("ask-lsp-{pid}.json")));
            Some(Listener {
                socket: shown(&socket),
                pid,
                roots: found.roots.iter().map(|r| shown(r)).collect(),
                requests: found.requests,
                last_request_ms: found.last_request_ms,
                last_agent: found.last_agent.map(|a| {
                    crate::text::for_display(&a, crate::text::DISPLAY_ID_CHARS).into_owned()
                }),
                other_executable: (!runs_this_executable(pid)).then(|| {
                    std::fs::read_link(format!("/proc/{pid}/exe"))
                        .map_or_else(|_| "?".to_owned(), |exe| shown(&exe))
                }),
            })
        })
        .collect();
    Reach {
        unusable: None,
        directory: Some(shown(&dir)),
        error: listeners.is_empty().then_some(Unreached::NoListener),
        listeners,
    }
}

/// Whether one of `roots` holds the request's `directory` (none: not
/// held), both resolved through links.
pub(super) fn holds_directory(roots: &[PathBuf], directory: Option<&str>) -> bool {
    let Some(directory) = directory.map(Path::new).filter(|d| d.is_absolute()) else {
        return false;
    };
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let roots: Vec<PathBuf> = roots.iter().map(|r| real(r)).collect();
    holds(&roots, &real(directory))
}

/// Whether the listener at the other end of `stream`, connected through
/// `socket`, is an ask-lsp of this user's: the process that listens
/// (SO_PEERCRED) is the one the socket is named by, and runs the same
/// executable file as this process. What that buys against another process
/// of the same user is in docs/security.md.
pub(crate) fn is_ask_lsp(stream: &tokio::net::UnixStream, socket: &Path) -> bool {
    let Ok(cred) = stream.peer_cred() else {
        return false;
    };
    cred.uid() == euid()
        && cred.pid().is_some_and(|pid| {
            socket.file_name().and_then(socket_pid) == Some(pid) && runs_this_executable(pid)
        })
}

/// Whether the process `socket` is named by runs this executable: checked
/// before connecting, so a stand-in is not even connected to (the
/// connection's own check, [`is_ask_lsp`], still decides).
pub(crate) fn named_by_ask_lsp(socket: &Path) -> bool {
    socket
        .file_name()
        .and_then(socket_pid)
        .is_some_and(runs_this_executable)
}

/// Whether process `pid` runs the same executable file as this process
/// (this one's read once: the hook checks every instance twice).
fn runs_this_executable(pid: i32) -> bool {
    static OURS: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();
    let identity = |meta: std::fs::Metadata| (meta.dev(), meta.ino());
    let ours = OURS.get_or_init(|| std::fs::metadata("/proc/self/exe").ok().map(identity));
    let theirs = std::fs::metadata(format!("/proc/{pid}/exe"))
        .ok()
        .map(identity);
    ours.is_some() && *ours == theirs
}

/// What the kernel says of the process that sent a request and of its
/// parents (a hook's parent is the agent): pid and executable, nearest
/// first, four at most.
pub(super) fn requester(pid: Option<i32>, outside_workspace: bool) -> crate::prompt::Requester {
    let mut processes = Vec::new();
    let mut next = pid;
    while let Some(pid) = next.filter(|p| *p > 1)
        && processes.len() < 4
    {
        let executable = std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        processes.push(crate::prompt::Process {
            pid: pid as u32,
            executable,
        });
        next = parent(pid);
    }
    crate::prompt::Requester {
        processes,
        outside_workspace,
    }
}

/// The parent of `pid`, from `/proc/<pid>/stat` (after the command name,
/// which may hold anything: the last `)` ends it).
fn parent(pid: i32) -> Option<i32> {
    let mut stat = String::new();
    std::fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .take(4096)
        .read_to_string(&mut stat)
        .ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether one of `roots` holds `cwd`.
fn holds(roots: &[PathBuf], cwd: &Path) -> bool {
    roots
        .iter()
        .any(|root| !root.as_os_str().is_empty() && cwd.starts_with(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_holds_the_directories_under_it() {
        let roots = [PathBuf::from("/w/sub")];
        assert!(holds(&roots, Path::new("/w/sub/x")));
        assert!(holds(&roots, Path::new("/w/sub")));
        assert!(!holds(&roots, Path::new("/w/subx")));
        assert!(!holds(&roots, Path::new("/w")));
        assert!(!holds(&[PathBuf::new()], Path::new("/w")));
    }
}
