//! Claude Code's file edits (`Write`, `Edit`, `MultiEdit`) as unified diffs
//! of the current file beside the proposed content, shaped as OpenCode's
//! edit permissions fill `diff` (`Index:`, `---`, `+++`, hunks).
//!
//! Reading the current file is a read on the agent's say-so, so it follows
//! the project's rule: only a regular file inside the request's directory
//! (Claude's `cwd`) or the workspace, resolved through links, opened without
//! following one or blocking, checked regular after opening, read up to
//! [`MAX_CURRENT`]. Anything else is not read: the diff shows the proposed
//! content only, and the title says why.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::prompt::EditNote;

/// The most of a current file read for a diff.
const MAX_CURRENT: u64 = 256 * 1024;

/// Why the current file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotRead {
    Outside,
    NotRegular,
    TooLarge,
    Unreadable,
}

/// The file's current text; `Ok(None)`: it does not exist yet (in a
/// directory inside the project).
pub(super) fn read_in_project(path: &Path, within: &[PathBuf]) -> Result<Option<String>, NotRead> {
    let inside = |resolved: &Path| {
        within
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .any(|root| resolved.starts_with(root))
    };
    if !path.is_absolute() {
        return Err(NotRead::Outside);
    }
    let resolved = match std::fs::canonicalize(path) {
        Ok(resolved) => resolved,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A new file: where it would go must be inside too.
            let parent = path.parent().ok_or(NotRead::Outside)?;
            let parent = std::fs::canonicalize(parent).map_err(|_| NotRead::Outside)?;
            return match inside(&parent) && path.file_name().is_some() {
                true => Ok(None),
                false => Err(NotRead::Outside),
            };
        }
        Err(_) => return Err(NotRead::Unreadable),
    };
    if !inside(&resolved) {
        return Err(NotRead::Outside);
    }
    read_regular(&resolved).map(Some)
}

#[cfg(unix)]
fn read_regular(resolved: &Path) -> Result<String, NotRead> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(resolved)
        .map_err(|_| NotRead::Unreadable)?;
    let meta = file.metadata().map_err(|_| NotRead::Unreadable)?;
    if !meta.is_file() {
        return Err(NotRead::NotRegular);
    }
    if meta.len() > MAX_CURRENT {
        return Err(NotRead::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_CURRENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| NotRead::Unreadable)?;
    if bytes.len() as u64 > MAX_CURRENT {
        return Err(NotRead::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| NotRead::Unreadable)
}

/// Off Unix no file is read.
#[cfg(not(unix))]
fn read_regular(_: &Path) -> Result<String, NotRead> {
    Err(NotRead::Unreadable)
}

/// An edit as shown: the file, its unified diff, and what the person should
/// know about how it was made.
#[derive(Debug, PartialEq)]
pub(super) struct EditShown {
    pub path: String,
    pub diff: String,
    pub note: Option<EditNote>,
}

/// The diff of a `Write`, `Edit` or `MultiEdit` request; `None` for other
/// tools or an input without its fields.
pub(super) fn edit_diff(
    tool: &str,
    input: &Value,
    cwd: Option<&str>,
    roots: &[PathBuf],
) -> Option<EditShown> {
    let path = input.get("file_path")?.as_str()?;
    let edits = match tool {
        "Write" => None,
        "Edit" => Some(vec![one_edit(input)?]),
        "MultiEdit" => Some(
            input
                .get("edits")?
                .as_array()?
                .iter()
                .map(one_edit)
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    };
    let content = match &edits {
        None => Some(input.get("content")?.as_str()?),
        Some(_) => None,
    };
    let within: Vec<PathBuf> = cwd
        .map(PathBuf::from)
        .into_iter()
        .chain(roots.iter().cloned())
        .collect();
    let current = read_in_project(Path::new(path), &within);
    let note = |why: NotRead| match why {
        NotRead::Outside => EditNote::OutsideProject,
        NotRead::NotRegular => EditNote::NotRegular,
        NotRead::TooLarge => EditNote::TooLarge,
        NotRead::Unreadable => EditNote::Unreadable,
    };
    let (old, new, note) = match (content, edits, current) {
        (Some(content), _, Ok(current)) => (current.unwrap_or_default(), content.to_owned(), None),
        (Some(content), _, Err(why)) => (String::new(), content.to_owned(), Some(note(why))),
        (None, Some(edits), Ok(current)) => match applied(current.as_deref(), &edits) {
            Some(new) => (current.unwrap_or_default(), new, None),
            None => fragments(&edits, EditNote::OldTextNotFound),
        },
        (None, Some(edits), Err(why)) => fragments(&edits, note(why)),
        (None, None, _) => return None,
    };
    Some(EditShown {
        path: path.to_owned(),
        diff: unified(path, &old, &new),
        note,
    })
}

/// One `old_string` → `new_string` replacement.
struct Replace<'a> {
    old: &'a str,
    new: &'a str,
    all: bool,
}

fn one_edit(edit: &Value) -> Option<Replace<'_>> {
    Some(Replace {
        old: edit.get("old_string")?.as_str()?,
        new: edit.get("new_string")?.as_str()?,
        all: edit.get("replace_all").and_then(Value::as_bool) == Some(true),
    })
}

/// The edits applied in turn, as Claude applies them; `None` when an old
/// text is not there (an empty one creates a file that does not exist).
fn applied(current: Option<&str>, edits: &[Replace]) -> Option<String> {
    let mut text = current.map(str::to_owned);
    for edit in edits {
        text = Some(match text {
            None if edit.old.is_empty() => edit.new.to_owned(),
            None => return None,
            Some(text) if edit.old.is_empty() || !text.contains(edit.old) => return None,
            Some(text) if edit.all => text.replace(edit.old, edit.new),
            Some(text) => text.replacen(edit.old, edit.new, 1),
        });
    }
    text
}

/// The edits themselves as a diff of their fragments.
fn fragments(edits: &[Replace], note: EditNote) -> (String, String, Option<EditNote>) {
    let old = edits.iter().map(|e| with_newline(e.old)).collect();
    let new = edits.iter().map(|e| with_newline(e.new)).collect();
    (old, new, Some(note))
}

fn with_newline(text: &str) -> String {
    match text.ends_with('\n') || text.is_empty() {
        true => text.to_owned(),
        false => format!("{text}\n"),
    }
}

/// `old` → `new` as a unified diff with OpenCode's header.
fn unified(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let hunks = diff
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(path, path)
        .to_string();
    format!("Index: {path}\n{hunks}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("project")).unwrap();
        (dir, root)
    }

    #[test]
    fn only_a_regular_file_inside_the_project_is_read() {
        let (_dir, root) = project();
        let project = root.join("project");
        let within = [project.clone()];
        std::fs::write(project.join("a.txt"), "one\n").unwrap();
        std::fs::write(root.join("secret"), "s\n").unwrap();
        let read = |p: &Path| read_in_project(p, &within);
        assert_eq!(read(&project.join("a.txt")), Ok(Some("one\n".into())));
        assert_eq!(read(&project.join("new.txt")), Ok(None));
        assert_eq!(read(&root.join("secret")), Err(NotRead::Outside));
        assert_eq!(read(&project.join("../secret")), Err(NotRead::Outside));
        assert_eq!(read(&project.join("../nothing")), Err(NotRead::Outside));
        assert_eq!(read(Path::new("a.txt")), Err(NotRead::Outside));
        std::os::unix::fs::symlink(root.join("secret"), project.join("link")).unwrap();
        assert_eq!(read(&project.join("link")), Err(NotRead::Outside));
        std::os::unix::fs::symlink(project.join("a.txt"), project.join("inner")).unwrap();
        assert_eq!(read(&project.join("inner")), Ok(Some("one\n".into())));
        assert_eq!(read(Path::new("/dev/zero")), Err(NotRead::Outside));
        assert_eq!(
            read_in_project(Path::new("/dev/zero"), &[PathBuf::from("/dev")]),
            Err(NotRead::NotRegular)
        );
        let fifo = project.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read(&fifo), Err(NotRead::NotRegular));
        std::fs::write(project.join("big"), vec![b'x'; MAX_CURRENT as usize + 1]).unwrap();
        assert_eq!(read(&project.join("big")), Err(NotRead::TooLarge));
        assert_eq!(read(&project), Err(NotRead::NotRegular));
    }

    #[test]
    fn writes_and_edits_are_diffs_of_the_current_file() {
        let (_dir, root) = project();
        let project = root.join("project");
        let file = project.join("a.txt");
        std::fs::write(&file, "one\ntwo\nthree\ntwo\n").unwrap();
        let path = file.to_str().unwrap();
        let cwd = Some(project.to_str().unwrap());
        let shown = |tool: &str, input: Value| edit_diff(tool, &input, cwd, &[]).unwrap();

        let write = shown("Write", json!({"file_path": path, "content": "one\nTWO\n"}));
        assert_eq!(write.note, None);
        assert_eq!(
            write.diff,
            format!(
                "Index: {path}\n--- {path}\n+++ {path}\n@@ -1,4 +1,2 @@\n one\n-two\n-three\n-two\n+TWO\n"
            )
        );
        let edit = |all: bool| {
            shown(
                "Edit",
                json!({"file_path": path, "old_string": "two", "new_string": "2", "replace_all": all}),
            )
        };
        assert!(
            edit(false).diff.ends_with(" one\n-two\n+2\n three\n two\n"),
            "{}",
            edit(false).diff
        );
        assert!(
            edit(true)
                .diff
                .ends_with(" one\n-two\n+2\n three\n-two\n+2\n"),
            "{}",
            edit(true).diff
        );
        let multi = shown(
            "MultiEdit",
            json!({"file_path": path, "edits": [{"old_string": "one", "new_string": "1"},
                                                 {"old_string": "three", "new_string": "3"}]}),
        );
        assert!(
            multi.diff.contains("-one\n+1\n two\n-three\n+3\n"),
            "{}",
            multi.diff
        );

        let missing = shown(
            "Edit",
            json!({"file_path": path, "old_string": "four", "new_string": "4"}),
        );
        assert_eq!(missing.note, Some(EditNote::OldTextNotFound));
        assert!(
            missing.diff.ends_with("@@ -1 +1 @@\n-four\n+4\n"),
            "{}",
            missing.diff
        );

        let outside = root.join("elsewhere");
        std::fs::write(&outside, "old secret\n").unwrap();
        let out = shown(
            "Write",
            json!({"file_path": outside.to_str().unwrap(), "content": "new\n"}),
        );
        assert_eq!(out.note, Some(EditNote::OutsideProject));
        assert!(!out.diff.contains("secret"), "{}", out.diff);
        assert!(out.diff.ends_with("@@ -0,0 +1 @@\n+new\n"), "{}", out.diff);

        let new = shown(
            "Write",
            json!({"file_path": project.join("b.txt").to_str().unwrap(), "content": "b"}),
        );
        assert_eq!(new.note, None);
        assert!(
            new.diff.contains("+b\n\\ No newline at end of file"),
            "{}",
            new.diff
        );
        assert_eq!(edit_diff("Bash", &json!({"command": "ls"}), cwd, &[]), None);
    }
}
