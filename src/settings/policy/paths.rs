//! Where a file permission's path lands, for allow rules: a rule written
//! for `<project>/*` must not allow `<project>/../../etc/cron.d/job`, nor a
//! link inside the project that points out of it. Such a path goes to the
//! person (docs/policies.md).

use std::path::{Component, Path, PathBuf};

/// Actions whose subjects are commands, not paths.
fn runs_commands(action: &str) -> bool {
    action.eq_ignore_ascii_case("bash") || action.eq_ignore_ascii_case("shell")
}

/// Whether `subject` may be allowed by a rule whose wildcard pattern is
/// `pattern` (`None`: a regex or substring rule, or no match at all), for a
/// prompt of `action` from `directory`. `fits` says whether the rule fits a
/// text. Commands and URLs are not paths: always true for them.
pub(super) fn stays_inside(
    action: &str,
    subject: &str,
    pattern: Option<&str>,
    directory: Option<&str>,
    fits: impl Fn(&str) -> bool,
) -> bool {
    if runs_commands(action) || subject.contains("://") {
        return true;
    }
    if subject.split(['/', '\\']).any(|part| part == "..") {
        return false;
    }
    let Some(lexical) = absolute(Path::new(subject), directory) else {
        return true; // relative, from nowhere known: the lexical check is all
    };
    // Through a link that leads nowhere (or loops): where it would land
    // is unknown, so the person decides.
    let Some(resolved) = resolve(&lexical) else {
        return false;
    };
    match pattern.and_then(rule_directory) {
        // A wildcard rule's own directory, itself resolved through links.
        Some(dir) => match absolute(Path::new(dir), directory) {
            Some(dir) => resolved.starts_with(resolve(&dir).unwrap_or(dir)),
            None => true,
        },
        // Otherwise a path through a link must fit the rule where it lands.
        None => resolved == lexical || fits(&resolved.to_string_lossy()),
    }
}

/// `path` made absolute against `directory`, or `None` when relative and
/// no directory is known.
fn absolute(path: &Path, directory: Option<&str>) -> Option<PathBuf> {
    if path.is_absolute() {
        return Some(path.to_owned());
    }
    let directory = Path::new(directory?);
    directory.is_absolute().then(|| directory.join(path))
}

/// The directory a wildcard pattern names before its first `*`:
/// `/home/me/app/*` → `/home/me/app/`; none when that part has no `/`.
fn rule_directory(pattern: &str) -> Option<&str> {
    let literal = &pattern[..pattern.find('*')?];
    let end = literal.rfind('/')?;
    Some(&literal[..=end])
}

/// `path` through every link on it: the deepest ancestor that exists,
/// canonical, with the rest appended (`path` holds no `..`). `None` when
/// that ancestor is there but cannot be resolved: a dangling link (writing
/// through it would create its target) or a loop.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut base = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            return Some(rest.iter().rev().fold(real, |p, part| p.join(part)));
        }
        if std::fs::symlink_metadata(base).is_ok() {
            return None;
        }
        match (base.parent(), base.components().next_back()) {
            (Some(parent), Some(Component::Normal(part))) => {
                rest.push(part);
                base = parent;
            }
            _ => return Some(path.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(subject: &str, pattern: &str, directory: Option<&str>) -> bool {
        stays_inside("edit", subject, Some(pattern), directory, |_| true)
    }

    #[test]
    fn a_dot_dot_component_never_stays_inside() {
        assert!(!inside("/p/../../etc/cron.d/job", "/p/*", None));
        assert!(!inside("../.bashrc", "*", Some("/p")));
        assert!(!inside("/p/a/..", "/p/*", None));
        assert!(inside("/p/a..b/c", "/p/*", None));
        // Commands and URLs are not paths.
        assert!(stays_inside(
            "bash",
            "cat ../x",
            Some("cat *"),
            None,
            |_| true
        ));
        assert!(stays_inside(
            "Bash",
            "cat ../x",
            Some("cat *"),
            None,
            |_| true
        ));
        assert!(stays_inside(
            "webfetch",
            "https://a/../b",
            None,
            None,
            |_| true
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_rules_directory_does_not_stay_inside() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("p");
        let outside = root.path().join("secret");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("key"), project.join("key")).unwrap();
        let p = project.to_str().unwrap();
        let rule = format!("{p}/*");
        assert!(inside(&format!("{p}/src/new.rs"), &rule, None));
        assert!(inside(&format!("{p}/src/deep/new.rs"), &rule, None));
        assert!(!inside(&format!("{p}/out/job"), &rule, None));
        assert!(!inside(&format!("{p}/key"), &rule, None));
        // Relative subjects and rules resolve against the prompt's directory.
        assert!(inside("src/a.rs", "src/*", Some(p)));
        assert!(!inside("out/job", "./*", Some(p)));
        // A regex or substring rule must fit where a link lands.
        let fits_project = |s: &str| s.starts_with(p);
        assert!(!stays_inside(
            "edit",
            &format!("{p}/out/job"),
            None,
            None,
            fits_project
        ));
        assert!(stays_inside(
            "edit",
            &format!("{p}/src/a"),
            None,
            None,
            fits_project
        ));
    }

    #[test]
    fn a_rules_directory_is_what_comes_before_its_first_wildcard() {
        assert_eq!(rule_directory("/home/me/app/*"), Some("/home/me/app/"));
        assert_eq!(
            rule_directory("/home/me/app/src*.rs"),
            Some("/home/me/app/")
        );
        assert_eq!(rule_directory("*.rs"), None);
        assert_eq!(rule_directory("/p/x"), None);
    }
}
