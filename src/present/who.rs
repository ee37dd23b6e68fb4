//! Who asks: the server (and project) a prompt comes from, said the same
//! way by every face.

use super::cut::for_display;
use super::i18n::tr;
use crate::prompt::{Kind, Prompt, SessionTitle, Title};
use crate::text::{self, DISPLAY_ID_CHARS};

/// "server · /the/project" (the server alone when it does not say), then
/// what ask-lsp knows of a local requester ([`requester`]).
pub(crate) fn server_and_project(server: &str, prompt: &Prompt) -> String {
    let from = match &prompt.directory {
        Some(directory) => format!("{server} · {}", text::one_line(directory)),
        None => server.to_owned(),
    };
    match requester(prompt) {
        Some(requester) => format!("{from} · {requester}"),
        None => from,
    }
}

/// "sent by pid 4242 (/usr/bin/ask-lsp) ← pid 4200 (/usr/bin/node)", and
/// where the agent runs when that is outside this workspace: what the
/// hook socket's peer credentials say, not what the request claims.
pub(crate) fn requester(prompt: &Prompt) -> Option<String> {
    let requester = prompt.origin.requester.as_ref()?;
    let chain = requester
        .processes
        .iter()
        .map(|p| match &p.executable {
            Some(executable) => tr!("who.process", pid = p.pid, executable = executable),
            None => tr!("who.process_unknown", pid = p.pid),
        })
        .collect::<Vec<_>>()
        .join(" ← ");
    let mut said = Vec::new();
    if requester.outside_workspace {
        said.push(match &prompt.directory {
            Some(directory) => tr!(
                "who.outside_workspace",
                directory = text::one_line(directory)
            ),
            None => tr!("who.outside_nowhere"),
        });
    }
    if !chain.is_empty() {
        said.push(tr!("who.sent_by", chain = chain));
    }
    (!said.is_empty()).then(|| said.join(" · "))
}

/// "session “Fix the login bug” (ses_dfc881d0bffe…)", or "session ses_…"
/// without a title: the title is what a person knows the session by; the
/// start of the id tells apart two of the same title (OpenCode's ids start
/// with their creation time).
pub(crate) fn session(session: &str, title: Option<&SessionTitle>) -> String {
    const ID_SHOWN: usize = 16;
    match title {
        Some(title) => {
            let id = for_display(session, DISPLAY_ID_CHARS);
            let id: String = match id.chars().count() > ID_SHOWN + 1 {
                true => id.chars().take(ID_SHOWN).chain(['…']).collect(),
                false => id.into_owned(),
            };
            match id.is_empty() {
                true => tr!("who.session_titled", title = title.shown(super::cut::note)),
                false => tr!(
                    "who.session_titled_id",
                    title = title.shown(super::cut::note),
                    id = id
                ),
            }
        }
        None => tr!("who.session", id = for_display(session, DISPLAY_ID_CHARS)),
    }
}

/// "question from build in myproject (default)": the kind, the agent, the
/// project directory's last component and the server's name, for a
/// notification that has no room for more.
pub(crate) fn kind_agent_project(server: &str, prompt: &Prompt) -> String {
    let shown = |s: &str| for_display(s, DISPLAY_ID_CHARS).into_owned();
    let agent = match &prompt.origin.agent {
        Some(agent) => shown(agent),
        None => tr!("who.the_agent"),
    };
    let project = prompt
        .directory
        .as_deref()
        .map(|d| d.trim_end_matches(['/', '\\']))
        .and_then(|d| d.rsplit(['/', '\\']).next())
        .filter(|name| !name.is_empty());
    let (kind, server) = (noun(&prompt.kind), shown(server));
    match project {
        Some(project) => tr!(
            "who.kind_agent_project",
            kind = kind,
            agent = agent,
            project = shown(project),
            server = server
        ),
        None => tr!(
            "who.kind_agent",
            kind = kind,
            agent = agent,
            server = server
        ),
    }
}

/// A prompt's title ([`Prompt::title`]) in the person's language: a
/// permission's title worded by ask-lsp, with its note of the other
/// questions; the agent's words stay as they are.
pub(crate) fn title(title: &Title) -> String {
    title.naming(
        super::prompt_text::title_name,
        |name, n| tr!("who.title_more", title = name, n = n),
        super::cut::note,
    )
}

/// What a person calls a prompt of this kind ("question", "permission").
pub(crate) fn noun(kind: &Kind) -> String {
    match kind {
        Kind::Questions(questions) if questions.len() > 1 => tr!("who.noun.questions"),
        Kind::Questions(_) => tr!("who.noun.question"),
        Kind::Permission(_) => tr!("who.noun.permission"),
        Kind::Form(form) if form.url.is_some() => tr!("who.noun.link"),
        Kind::Form(_) => tr!("who.noun.form"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long session title is cut below this floor (a backend keeps it);
    /// what the cut hid is said here, in the person's language.
    #[test]
    fn a_cut_session_title_says_what_it_hid_in_the_persons_language() {
        use crate::present::i18n::{Locale, in_locale};
        let title = SessionTitle::new(&"修".repeat(100));
        let zh = in_locale(Locale::ZhCn, || session("ses_1", title.as_ref()));
        assert!(
            zh.contains(&("修".repeat(80) + "…（另有 20 个字符）")),
            "{zh}"
        );
        let en = in_locale(Locale::En, || session("ses_1", title.as_ref()));
        assert!(
            en.contains(&("修".repeat(80) + "… (+20 more characters)")),
            "{en}"
        );
    }

    #[test]
    fn session_names_the_title_and_the_start_of_the_id() {
        let title = SessionTitle::new("Fix the login bug");
        assert_eq!(
            session("ses_dfc881d0bffezSP70hMi551Xe5", title.as_ref()),
            "session “Fix the login bug” (ses_dfc881d0bffe…)"
        );
        assert_eq!(
            session("ses_1", title.as_ref()),
            "session “Fix the login bug” (ses_1)"
        );
        assert_eq!(session("ses_1", None), "session ses_1");
        assert_eq!(session("", title.as_ref()), "session “Fix the login bug”");
    }
}
