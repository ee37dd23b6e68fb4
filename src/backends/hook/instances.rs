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

fn info(path: &Path) -> Info {
    let mut text = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_INFO).read_to_end(&mut text));
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
    /// Why hooks can reach no instance here, if so.
    pub error: Option<String>,
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
}

/// The instances `ask-lsp hook` would find now, as it finds them (live,
/// this user's sockets), the most recently started first.
pub(crate) fn reach(dir: io::Result<PathBuf>) -> Reach {
    let shown = |path: &Path| {
        crate::text::for_display(&path.to_string_lossy(), crate::text::DISPLAY_MESSAGE_CHARS)
            .into_owned()
    };
    let dir = match dir {
        Ok(dir) => dir,
        Err(e) => {
            return Reach {
                directory: None,
                error: Some(format!("no ask-lsp listens for hooks ({e})")),
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
            })
        })
        .collect();
    Reach {
        directory: Some(shown(&dir)),
        error: listeners
            .is_empty()
            .then(|| "no ask-lsp listens for hooks".to_owned()),
        listeners,
    }
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
