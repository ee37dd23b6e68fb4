//! Where the person's Codex daemon listens, and whether it is theirs.
//!
//! Codex's terminal UI (0.169.0, 0.171.0) starts `codex app-server --listen
//! unix:// --managed-daemon`; its control socket is
//! `$CODEX_HOME/app-server-control/app-server-control.sock`, a link to a
//! per-user socket (`/tmp/codex-daemon-<uid>/<hash>`, mode 0600, in a 0700
//! directory); `codex app-server daemon version` prints the same path.
//! The hook socket's rule holds here too: the link and the socket it names
//! are this user's, the socket and its directory closed to everyone else,
//! and the process that takes the connection runs as this user.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use tokio::net::UnixStream;

/// The control socket's place under a Codex home.
pub(super) fn control_socket(home: &Path) -> PathBuf {
    home.join("app-server-control/app-server-control.sock")
}

/// Why no daemon is followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unfollowed {
    /// Nothing there, or nothing takes the connection (a daemon that
    /// stopped leaves its socket behind).
    NoDaemon,
    /// Something there (this path) that is not this person's alone, or
    /// not a socket: never connected to.
    NotTheirs(String),
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `path` (why is in the log).
fn not_theirs(path: &Path, why: &str) -> Unfollowed {
    tracing::warn!("Codex daemon not followed: {} {why}", path.display());
    Unfollowed::NotTheirs(path.display().to_string())
}

/// The socket the control link names, once it and its directory pass the
/// rule.
pub(super) fn socket_of(home: &Path) -> Result<PathBuf, Unfollowed> {
    let link = control_socket(home);
    let meta = match std::fs::symlink_metadata(&link) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unfollowed::NoDaemon),
        Err(e) => return Err(not_theirs(&link, &format!("cannot be read ({e})"))),
    };
    if meta.uid() != euid() {
        return Err(not_theirs(&link, "belongs to another user"));
    }
    let target = match meta.file_type().is_symlink() {
        true => {
            let named = std::fs::read_link(&link).map_err(|_| Unfollowed::NoDaemon)?;
            match named.is_absolute() {
                true => named,
                false => link.parent().unwrap_or(Path::new("/")).join(named),
            }
        }
        false => link,
    };
    let meta = match std::fs::symlink_metadata(&target) {
        Ok(meta) => meta,
        // A link left by a daemon that is gone.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unfollowed::NoDaemon),
        Err(e) => return Err(not_theirs(&target, &format!("cannot be read ({e})"))),
    };
    if !meta.file_type().is_socket() {
        return Err(not_theirs(&target, "is not a socket"));
    }
    if meta.uid() != euid() || meta.mode() & 0o077 != 0 {
        return Err(not_theirs(&target, "is not this user's alone"));
    }
    let dir = target.parent().unwrap_or(Path::new("/"));
    let dir_meta = std::fs::symlink_metadata(dir)
        .map_err(|e| not_theirs(dir, &format!("cannot be read ({e})")))?;
    if !dir_meta.is_dir() || dir_meta.uid() != euid() || dir_meta.mode() & 0o077 != 0 {
        return Err(not_theirs(
            dir,
            "is not a directory of this user's closed to others",
        ));
    }
    Ok(target)
}

/// Connects to the daemon of `home`, checking who answers.
pub(super) async fn connect(home: &Path) -> Result<UnixStream, Unfollowed> {
    let socket = socket_of(home)?;
    let stream = UnixStream::connect(&socket)
        .await
        .map_err(|_| Unfollowed::NoDaemon)?;
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == euid() => Ok(stream),
        _ => Err(not_theirs(&socket, "is served by another user")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[tokio::test]
    async fn only_a_closed_socket_of_this_users_is_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("app-server-control")).unwrap();
        assert_eq!(socket_of(&home), Err(Unfollowed::NoDaemon));

        let sockets = tmp.path().join("codex-daemon");
        std::fs::create_dir(&sockets).unwrap();
        mode(&sockets, 0o700);
        let socket = sockets.join("abc");
        let _listener = tokio::net::UnixListener::bind(&socket).unwrap();
        mode(&socket, 0o600);
        std::os::unix::fs::symlink(&socket, control_socket(&home)).unwrap();
        assert_eq!(socket_of(&home), Ok(socket.clone()));
        assert!(connect(&home).await.is_ok());

        mode(&socket, 0o666);
        assert!(matches!(socket_of(&home), Err(Unfollowed::NotTheirs(_))));
        mode(&socket, 0o600);
        mode(&sockets, 0o755);
        assert!(matches!(socket_of(&home), Err(Unfollowed::NotTheirs(_))));
        mode(&sockets, 0o700);

        // A link to a plain file, and a link to nothing.
        let plain = sockets.join("plain");
        std::fs::write(&plain, "").unwrap();
        mode(&plain, 0o600);
        std::fs::remove_file(control_socket(&home)).unwrap();
        std::os::unix::fs::symlink(&plain, control_socket(&home)).unwrap();
        assert!(matches!(socket_of(&home), Err(Unfollowed::NotTheirs(_))));
        std::fs::remove_file(control_socket(&home)).unwrap();
        std::os::unix::fs::symlink(sockets.join("gone"), control_socket(&home)).unwrap();
        assert_eq!(socket_of(&home), Err(Unfollowed::NoDaemon));

        // A socket nobody listens on any more (the daemon stopped).
        let stale = sockets.join("stale");
        drop(tokio::net::UnixListener::bind(&stale).unwrap());
        mode(&stale, 0o600);
        std::fs::remove_file(control_socket(&home)).unwrap();
        std::os::unix::fs::symlink(&stale, control_socket(&home)).unwrap();
        assert_eq!(connect(&home).await.err(), Some(Unfollowed::NoDaemon));
    }
}
