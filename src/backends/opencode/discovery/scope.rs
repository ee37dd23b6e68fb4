//! A shared service (`service.json`: one OpenCode 2 service for all the
//! user's projects) is followed once per workspace root, each scoped to that
//! project: its listings ask for that location, so prompts already waiting
//! there at start-up are shown, and live events of other projects are not.

use std::path::PathBuf;

use super::Candidate;

/// The service, once per root it can be scoped to (a root that is not
/// UTF-8 cannot be named to the server and is skipped with a log line);
/// unscoped when there is no root to scope it to.
pub(super) fn per_root(service: Candidate, roots: &[PathBuf], room: usize) -> Vec<Candidate> {
    let directories: Vec<String> = roots
        .iter()
        .filter_map(|root| match root.to_str() {
            Some(directory) => Some(directory.to_owned()),
            None => {
                tracing::warn!(
                    "discovery: a workspace root is not UTF-8; the shared service is not scoped to it"
                );
                None
            }
        })
        .take(room.max(1))
        .collect();
    if directories.is_empty() {
        return vec![service];
    }
    directories
        .into_iter()
        .map(|directory| {
            let mut scoped = service.clone();
            scoped.found.directory = Some(directory);
            scoped
        })
        .collect()
}
