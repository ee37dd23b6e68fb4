//! Who asks: the server (and project) a prompt comes from, said the same
//! way by every face.

use crate::prompt::Prompt;
use crate::text::{self, DISPLAY_ID_CHARS, for_display};

/// "server · /the/project" (the server alone when it does not say).
pub(crate) fn server_and_project(server: &str, prompt: &Prompt) -> String {
    match &prompt.directory {
        Some(directory) => format!("{server} · {}", text::one_line(directory)),
        None => server.to_owned(),
    }
}

/// "question from build in myproject (default)": the kind, the agent, the
/// project directory's last component and the server's name, for a
/// notification that has no room for more.
pub(crate) fn kind_agent_project(server: &str, prompt: &Prompt) -> String {
    let shown = |s: &str| for_display(s, DISPLAY_ID_CHARS).into_owned();
    let agent = match &prompt.origin.agent {
        Some(agent) => shown(agent),
        None => "the agent".to_owned(),
    };
    let mut text = format!("{} from {agent}", prompt.kind.noun());
    let project = prompt
        .directory
        .as_deref()
        .map(|d| d.trim_end_matches(['/', '\\']))
        .and_then(|d| d.rsplit(['/', '\\']).next())
        .filter(|name| !name.is_empty());
    if let Some(project) = project {
        text.push_str(" in ");
        text.push_str(&shown(project));
    }
    text.push_str(&format!(" ({})", shown(server)));
    text
}
