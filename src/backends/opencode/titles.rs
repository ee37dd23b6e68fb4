//! The titles of sessions whose prompts were pending before ask-lsp
//! connected: no `session.updated` of theirs was seen, so each is asked for
//! once (`GET /session/{id}`), a few per connect.

use std::borrow::Cow;

use serde::Deserialize;

use super::OpenCode;
use super::listing::Listing;
use crate::prompt::SessionTitle;
use crate::text;

/// Sessions asked about per connect; the others show their ids until an
/// event of theirs names them.
const LOOKUPS_PER_CONNECT: usize = 8;

#[derive(Deserialize)]
struct SessionInfo<'a> {
    #[serde(borrow)]
    title: Option<Cow<'a, str>>,
}

impl OpenCode {
    /// Titles the listed prompts, asking the server about sessions never
    /// asked about before (an answer without a title is remembered too).
    pub(super) async fn look_up_titles(&self, listing: &mut Listing) {
        let mut unknown: Vec<(String, Option<String>)> = Vec::new();
        {
            let titles = self.titles.lock().expect("not poisoned");
            for listed in listing.iter() {
                if unknown.len() == LOOKUPS_PER_CONNECT {
                    break;
                }
                if titles.peek(listed.session).is_none()
                    && !unknown.iter().any(|(s, _)| s == listed.session)
                {
                    let directory = listed.directory.map(str::to_owned);
                    unknown.push((listed.session.to_owned(), directory));
                }
            }
        }
        if unknown.is_empty() {
            return;
        }
        for (session, directory) in unknown {
            let title = self.fetch_title(&session, directory.as_deref()).await;
            self.titles
                .lock()
                .expect("not poisoned")
                .put(session, title);
        }
        listing.look_up_agents(|session| (self.agent(session), self.title(session)));
    }

    async fn fetch_title(&self, session: &str, directory: Option<&str>) -> Option<SessionTitle> {
        let id = text::url_segment(session).ok()?;
        let path = format!("/session/{id}");
        let answered = self
            .call(self.request(reqwest::Method::GET, &path, directory))
            .await
            .ok()?;
        let info: SessionInfo = serde_json::from_slice(&answered.body).ok()?;
        info.title.as_deref().and_then(SessionTitle::new)
    }
}
