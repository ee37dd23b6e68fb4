//! What a resync lists, as read from `GET /question` and `GET /permission`.
//! A listed question is checked where it lies in the response, its id,
//! session and call read in place, and stays text until the broker takes
//! it: most of a long listing is questions the broker already has, which
//! it recognises by their ids alone. Permissions (few, each checked
//! against its session) are built at once.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::{Deserializer as _, SeqAccess, Visitor};

use super::wire::{QuestionHead, QuestionRequest, array_items};
use crate::backends::Listing as SnapshotListing;
use crate::prompt::{Kind, KindName, Prompt, SessionTitle};

#[derive(Default)]
pub(super) struct Listing {
    /// The responses the questions lie in.
    bodies: Vec<Body>,
    /// Ids, sessions and calls that were escaped in the text, unescaped.
    unescaped: String,
    items: Vec<Item>,
    /// Listed prompts left out because their session is not running, by
    /// id: a directory's listing may repeat the default instance's.
    pub stale: std::collections::HashSet<String>,
}

struct Body {
    text: String,
    /// The directory its prompts belong to.
    directory: Option<String>,
    /// Where each item of the array lies, found when first needed.
    items: Option<Vec<Range<u32>>>,
}

enum Item {
    Question {
        body: u32,
        /// Its place in the body's array.
        index: u32,
        id: Span,
        session: Span,
        call: Option<Span>,
        agent: Option<String>,
        title: Option<SessionTitle>,
    },
    /// Built already; `None` once taken.
    Built(Option<Box<Prompt>>),
}

/// Where a string lies: in a body's text, or in `unescaped`.
#[derive(Clone, Copy)]
struct Span {
    from: u32,
    to: u32,
    unescaped: bool,
}

/// One listed prompt, as the resync looks at it before the broker does.
pub(super) struct Listed<'a> {
    pub id: &'a str,
    pub session: &'a str,
    pub call: Option<&'a str>,
    pub directory: Option<&'a str>,
    pub kind: ListedKind,
}

/// What a listed prompt is, told without building it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListedKind {
    Questions,
    Permission,
    Form,
    /// Taken out of the listing already.
    Taken,
}

impl ListedKind {
    fn of(kind: &Kind) -> Self {
        match kind {
            Kind::Questions(_) => ListedKind::Questions,
            Kind::Permission(_) => ListedKind::Permission,
            Kind::Form(_) => ListedKind::Form,
        }
    }

    /// The prompt's kind; `None` once taken.
    pub fn kind_name(self) -> Option<KindName> {
        match self {
            ListedKind::Questions => Some(KindName::Questions),
            ListedKind::Permission => Some(KindName::Permission),
            ListedKind::Form => Some(KindName::Form),
            ListedKind::Taken => None,
        }
    }
}

/// A listing's items that could not be read.
#[derive(Default)]
pub(super) struct Skipped {
    pub count: usize,
    pub first: Option<serde_json::Error>,
}

impl Skipped {
    pub fn add(&mut self, error: serde_json::Error) {
        self.count += 1;
        self.first.get_or_insert(error);
    }
}

/// Offset of `part` in `whole`, which holds it.
fn offset(whole: &str, part: &str) -> u32 {
    (part.as_ptr() as usize - whole.as_ptr() as usize) as u32
}

/// Where `value`, read from `text`, lies: in `text` unless it was escaped
/// there (then copied, unescaped, to `unescaped`).
fn span(text: &str, unescaped: &mut String, value: Cow<str>) -> Span {
    match value {
        Cow::Borrowed(value) => {
            let from = offset(text, value);
            Span {
                from,
                to: from + value.len() as u32,
                unescaped: false,
            }
        }
        Cow::Owned(value) => {
            let from = unescaped.len() as u32;
            unescaped.push_str(&value);
            Span {
                from,
                to: unescaped.len() as u32,
                unescaped: true,
            }
        }
    }
}

/// Where each item of a JSON array lies in it.
fn extents(text: &str) -> Vec<Range<u32>> {
    ranges(text, &array_items(text).unwrap_or_default())
}

/// Where each of `items`, read from `text`, lies in it.
fn ranges(text: &str, items: &[&str]) -> Vec<Range<u32>> {
    items
        .iter()
        .map(|item| {
            let from = offset(text, item);
            from..from + item.len() as u32
        })
        .collect()
}

/// A listed question, its id, session and call found where they lie.
fn question(text: &str, unescaped: &mut String, body: u32, index: u32, head: QuestionHead) -> Item {
    Item::Question {
        body,
        index,
        id: span(text, unescaped, head.id),
        session: span(text, unescaped, head.session_id),
        call: head.tool.map(|tool| span(text, unescaped, tool.call_id)),
        agent: None,
        title: None,
    }
}

/// The items of a question listing, in one pass over the whole text.
struct Heads<'l> {
    text: &'l str,
    body: u32,
    unescaped: &'l mut String,
    items: &'l mut Vec<Item>,
}

impl<'de> Visitor<'de> for Heads<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of question requests")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(head) = seq.next_element::<QuestionHead>()? {
            let item = question(self.text, self.unescaped, self.body, index, head);
            self.items.push(item);
            index += 1;
        }
        Ok(())
    }
}

impl Listing {
    /// Reads a `GET /question` answer that is a JSON array of question
    /// requests, the usual answer, in one pass over it: read through, it
    /// is JSON. Anything else comes back, untouched, to be read item by
    /// item ([`Listing::add_questions`]).
    pub fn read_questions(
        &mut self,
        text: String,
        directory: Option<String>,
    ) -> Result<(), String> {
        let body = u32::try_from(self.bodies.len()).expect("few bodies");
        let (items, unescaped) = (self.items.len(), self.unescaped.len());
        let mut reader = serde_json::Deserializer::from_str(&text);
        let read = reader
            .deserialize_seq(Heads {
                text: &text,
                body,
                unescaped: &mut self.unescaped,
                items: &mut self.items,
            })
            .and_then(|()| reader.end());
        if read.is_err() {
            self.items.truncate(items);
            self.unescaped.truncate(unescaped);
            return Err(text);
        }
        self.bodies.push(Body {
            text,
            directory,
            items: None,
        });
        Ok(())
    }

    /// Adds the questions of a `GET /question` answer item by item: `None`
    /// when it is not a list. An item that cannot be read as a question
    /// request is skipped, alone.
    pub fn add_questions(
        &mut self,
        text: String,
        directory: Option<String>,
        skipped: &mut Skipped,
    ) -> Option<()> {
        let body = u32::try_from(self.bodies.len()).expect("few bodies");
        let items = array_items(&text)?;
        self.items.reserve(items.len());
        for (index, item) in items.iter().enumerate() {
            match serde_json::from_str::<QuestionHead>(item) {
                Ok(head) => {
                    let item = question(&text, &mut self.unescaped, body, index as u32, head);
                    self.items.push(item);
                }
                // Read in full for its error (or, should the two ever
                // disagree, for the prompt).
                Err(_) => match serde_json::from_str::<QuestionRequest>(item) {
                    Ok(request) => {
                        let prompt = request.into_prompt(directory.clone());
                        self.items.push(Item::Built(Some(Box::new(prompt))));
                    }
                    Err(error) => skipped.add(error),
                },
            }
        }
        let items = ranges(&text, &items);
        self.bodies.push(Body {
            text,
            directory,
            items: Some(items),
        });
        Some(())
    }

    /// Looks up who runs each listed prompt's session, and its title, in order.
    pub fn look_up_agents(
        &mut self,
        mut agent: impl FnMut(&str) -> (Option<String>, Option<SessionTitle>),
    ) {
        let Listing {
            bodies,
            unescaped,
            items,
            ..
        } = self;
        for item in items.iter_mut() {
            match item {
                Item::Question {
                    body,
                    session,
                    agent: found,
                    title,
                    ..
                } => (*found, *title) = agent(text(bodies, unescaped, *body, *session)),
                Item::Built(Some(prompt)) => {
                    (prompt.origin.agent, prompt.origin.session_title) = agent(&prompt.session)
                }
                Item::Built(None) => {}
            }
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Adds prompts built already.
    pub fn add_built(&mut self, prompts: Vec<Prompt>) {
        self.items.extend(
            prompts
                .into_iter()
                .map(|prompt| Item::Built(Some(Box::new(prompt)))),
        );
    }

    /// Appends another listing's prompts.
    pub fn append(&mut self, mut other: Listing) {
        let bodies = self.bodies.len() as u32;
        let unescaped = self.unescaped.len() as u32;
        let moved = |span: &mut Span| {
            if span.unescaped {
                span.from += unescaped;
                span.to += unescaped;
            }
        };
        for item in &mut other.items {
            if let Item::Question {
                body,
                id,
                session,
                call,
                ..
            } = item
            {
                *body += bodies;
                moved(id);
                moved(session);
                if let Some(call) = call {
                    moved(call);
                }
            }
        }
        self.bodies.append(&mut other.bodies);
        self.unescaped.push_str(&other.unescaped);
        self.items.append(&mut other.items);
        self.stale.extend(other.stale.drain());
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every listed prompt's directory becomes `directory`.
    pub fn set_directory(&mut self, directory: &str) {
        for body in &mut self.bodies {
            body.directory = Some(directory.to_owned());
        }
        for item in &mut self.items {
            if let Item::Built(Some(prompt)) = item {
                prompt.directory = Some(directory.to_owned());
            }
        }
    }

    /// Keeps the prompts `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(Listed<'_>) -> bool) {
        let Listing {
            bodies,
            unescaped,
            items,
            ..
        } = self;
        items.retain(|item| keep(view(bodies, unescaped, item)));
    }

    /// Each listed prompt, as the resync looks at it.
    pub fn iter(&self) -> impl Iterator<Item = Listed<'_>> {
        self.items
            .iter()
            .map(|item| view(&self.bodies, &self.unescaped, item))
    }

    /// Takes out the first prompt whose tool call is `call`.
    pub fn take_by_call(mut self, call: &str) -> Option<Prompt> {
        let index = self.iter().position(|p| p.call == Some(call))?;
        SnapshotListing::take(&mut self, index)
    }
}

fn text<'a>(bodies: &'a [Body], unescaped: &'a str, body: u32, span: Span) -> &'a str {
    let range = span.from as usize..span.to as usize;
    if span.unescaped {
        &unescaped[range]
    } else {
        &bodies[body as usize].text[range]
    }
}

fn view<'a>(bodies: &'a [Body], unescaped: &'a str, item: &'a Item) -> Listed<'a> {
    match item {
        Item::Question {
            body,
            id,
            session,
            call,
            ..
        } => Listed {
            id: text(bodies, unescaped, *body, *id),
            session: text(bodies, unescaped, *body, *session),
            call: call.map(|call| text(bodies, unescaped, *body, call)),
            directory: bodies[*body as usize].directory.as_deref(),
            kind: ListedKind::Questions,
        },
        Item::Built(Some(prompt)) => Listed {
            id: &prompt.id,
            session: &prompt.session,
            call: prompt.origin.tool_call.as_deref(),
            directory: prompt.directory.as_deref(),
            kind: ListedKind::of(&prompt.kind),
        },
        Item::Built(None) => Listed {
            id: "",
            session: "",
            call: None,
            directory: None,
            kind: ListedKind::Taken,
        },
    }
}

impl SnapshotListing for Listing {
    fn len(&self) -> usize {
        Listing::len(self)
    }

    fn hidden(&self) -> usize {
        self.stale.len()
    }

    fn id(&self, index: usize) -> &str {
        view(&self.bodies, &self.unescaped, &self.items[index]).id
    }

    fn take(&mut self, index: usize) -> Option<Prompt> {
        match std::mem::replace(&mut self.items[index], Item::Built(None)) {
            Item::Built(prompt) => prompt.map(|prompt| *prompt),
            Item::Question {
                body,
                index,
                agent,
                title,
                ..
            } => {
                let Body {
                    text,
                    directory,
                    items,
                } = &mut self.bodies[body as usize];
                let extent = items
                    .get_or_insert_with(|| extents(text))
                    .get(index as usize)?;
                let item = &text[extent.start as usize..extent.end as usize];
                // Checked as the same shape when listed: this reads it.
                let request = serde_json::from_str::<QuestionRequest>(item).ok()?;
                let mut prompt = request.into_prompt(directory.clone());
                prompt.origin.agent = agent;
                prompt.origin.session_title = title;
                Some(prompt)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(id: &str, session: &str, call: &str) -> String {
        format!(
            r#"{{"id":"{id}","sessionID":"{session}","questions":[{{"question":"Q {id}?","options":[{{"label":"A"}}]}}],"tool":{{"messageID":"m","callID":"{call}"}}}}"#
        )
    }

    fn ids(listing: &Listing) -> Vec<String> {
        listing.iter().map(|p| p.id.to_owned()).collect()
    }

    #[test]
    fn questions_are_read_in_place_and_built_when_taken() {
        let text = format!(
            "[{}, {{\"id\":2}}, {}]",
            question("que_a", "ses_1", "call_a"),
            question(r"que_\u0062", r"ses_\u0032", r"call_\u0062")
        );
        let mut listing = Listing::default();
        let mut skipped = Skipped::default();
        listing
            .add_questions(text, Some("/p".into()), &mut skipped)
            .unwrap();
        listing.look_up_agents(|session| match session {
            "ses_2" => (Some("plan".to_owned()), SessionTitle::new("Plan the move")),
            _ => (None, None),
        });
        assert_eq!(skipped.count, 1, "the broken item alone");
        let listed: Vec<_> = listing
            .iter()
            .map(|p| (p.id, p.session, p.call, p.directory, p.kind))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "que_a",
                    "ses_1",
                    Some("call_a"),
                    Some("/p"),
                    ListedKind::Questions
                ),
                (
                    "que_b",
                    "ses_2",
                    Some("call_b"),
                    Some("/p"),
                    ListedKind::Questions
                ),
            ]
        );
        assert_eq!(SnapshotListing::id(&listing, 1), "que_b");
        let prompt = SnapshotListing::take(&mut listing, 1).unwrap();
        assert_eq!(prompt.id, "que_b");
        assert_eq!(prompt.session, "ses_2");
        assert_eq!(prompt.directory.as_deref(), Some("/p"));
        assert_eq!(prompt.origin.tool_call.as_deref(), Some("call_b"));
        assert_eq!(prompt.origin.agent.as_deref(), Some("plan"));
        assert_eq!(
            prompt.origin.session_title,
            SessionTitle::new("Plan the move")
        );
        let Kind::Questions(questions) = &prompt.kind else {
            panic!()
        };
        assert_eq!(questions[0].text, "Q que_b?");
        assert_eq!(SnapshotListing::take(&mut listing, 1), None, "taken once");
        assert!(
            listing
                .add_questions("{}".into(), None, &mut skipped)
                .is_none()
        );
    }

    #[test]
    fn a_list_of_questions_is_read_in_one_pass_and_anything_else_comes_back() {
        let text = format!(
            " [ {} ,\n{} ] ",
            question("que_a", "ses_1", "call_a"),
            question(r"que_\u0062", "ses_2", "call_b")
        );
        let mut listing = Listing::default();
        listing
            .read_questions(text, Some("/p".into()))
            .ok()
            .unwrap();
        assert_eq!(ids(&listing), ["que_a", "que_b"]);
        // The item's text is found when it is first taken.
        let prompt = SnapshotListing::take(&mut listing, 1).unwrap();
        assert_eq!(
            (prompt.id.as_str(), prompt.origin.tool_call.as_deref()),
            ("que_b", Some("call_b"))
        );
        assert_eq!(SnapshotListing::take(&mut listing, 0).unwrap().id, "que_a");
        let good = question("que_c", "ses_1", "call_c");
        for text in [
            format!("[{good}, {{\"id\":2}}]"),
            format!("[{good}] x"),
            format!("[{good},]"),
            format!("{{\"a\":{good}}}"),
            String::new(),
        ] {
            assert_eq!(listing.read_questions(text.clone(), None), Err(text));
        }
        assert_eq!(listing.len(), 2, "nothing left of what was not read");
        assert_eq!(listing.unescaped, "que_b");
        listing.read_questions("[]".into(), None).unwrap();
        assert_eq!(listing.len(), 2);
        // Read through exactly when the whole is JSON, however deep what
        // is not read (serde_json bounds only the nesting it builds).
        for depth in [1, 127, 128, 129, 1000] {
            let deep = format!(
                r#"[{{"id":"que_d","sessionID":"s","questions":[],"x":{}{}}}]"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let json = serde_json::from_str::<serde::de::IgnoredAny>(&deep).is_ok();
            let read = Listing::default().read_questions(deep, None).is_ok();
            assert!(read && json, "nested {depth} deep");
        }
    }

    #[test]
    fn listings_append_filter_and_move_directory() {
        let mut skipped = Skipped::default();
        let mut first = Listing::default();
        let text = format!("[{}]", question(r"que_\u0061", "ses_1", "call_a"));
        first.add_questions(text, None, &mut skipped).unwrap();
        // Built at once, as permissions are.
        let built = serde_json::from_str::<QuestionRequest>(&question("per_1", "ses_1", "call_p"))
            .unwrap()
            .into_prompt(None);
        first.add_built(vec![built]);
        first.set_directory("/default");
        let mut second = Listing::default();
        let text = format!(
            "[{},{}]",
            question(r"que_\u0062", "ses_2", "call_b"),
            question("que_c", "ses_3", "call_c")
        );
        second
            .add_questions(text, Some("/other".into()), &mut skipped)
            .unwrap();
        first.append(second);
        assert_eq!(ids(&first), ["que_a", "per_1", "que_b", "que_c"]);
        let directories: Vec<_> = first.iter().map(|p| p.directory).collect();
        assert_eq!(
            directories,
            [
                Some("/default"),
                Some("/default"),
                Some("/other"),
                Some("/other")
            ]
        );
        first.retain(|p| p.session != "ses_3");
        assert_eq!(ids(&first), ["que_a", "per_1", "que_b"]);
        let prompt = first.take_by_call("call_b").unwrap();
        assert_eq!(
            (prompt.id.as_str(), prompt.directory.as_deref()),
            ("que_b", Some("/other"))
        );
        assert_eq!(skipped.count, 0);
    }
}
