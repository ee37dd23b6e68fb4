//! The LSP face's answers given a piece at a time (a plain message's
//! button, a code action, `askLsp.answer` with one question or some form
//! values), one [`Draft`] per prompt, shared by the commands and the
//! presenter. Only whole answers go to the broker.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use crate::broker::{Human, Pending};
use crate::prompt::draft::{Draft, DraftError, Piece, Progress};
use crate::prompt::limits;

/// What a person's act on the LSP face decides.
#[derive(Debug)]
pub(crate) enum Decision {
    /// A whole decision, for the broker as it is.
    Whole(Human),
    /// One piece of an answer, for the prompt's draft.
    Piece(Piece),
}

/// Drafts by prompt key. A draft goes when its prompt is resolved (the
/// presenter sees that) or is found no longer pending; never more are kept
/// than prompts may be pending, the least recently used going first.
#[derive(Clone)]
pub(crate) struct Drafts {
    drafts: Arc<Mutex<LruCache<String, Draft>>>,
}

impl Default for Drafts {
    fn default() -> Self {
        let most = NonZeroUsize::new(limits::PENDING).expect("non-zero");
        Drafts {
            drafts: Arc::new(Mutex::new(LruCache::sparse(most))),
        }
    }
}

impl Drafts {
    /// Adds a piece to `pending`'s draft; a refused piece changes nothing.
    /// The draft stays once whole, so that if sending fails the person can
    /// try again without answering everything anew.
    pub fn add(&self, pending: &Pending, piece: Piece) -> Result<Progress, DraftError> {
        let mut drafts = self.drafts.lock().expect("not poisoned");
        if let Some(draft) = drafts.get_mut(&pending.key) {
            // A refused piece leaves the draft as it was (`Draft::add`).
            return draft.add(&pending.prompt, piece);
        }
        let mut draft = Draft::default();
        let progress = draft.add(&pending.prompt, piece)?;
        drafts.put(pending.key.clone(), draft);
        Ok(progress)
    }

    /// What `pending` still needs: every question or field without a draft.
    pub fn remaining(&self, pending: &Pending) -> Vec<usize> {
        let drafts = self.drafts.lock().expect("not poisoned");
        match drafts.peek(&pending.key) {
            Some(draft) => draft.remaining(&pending.prompt),
            None => Draft::default().remaining(&pending.prompt),
        }
    }

    /// The prompt is no longer pending: its draft goes.
    pub fn resolved(&self, key: &str) {
        self.drafts.lock().expect("not poisoned").pop(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{Answer, Choice, Kind, Question};

    #[test]
    fn a_draft_is_kept_until_its_prompt_is_resolved() {
        let pending = crate::broker::test_pending("s", "1", "ses", None);
        let mut pending = Arc::try_unwrap(pending).unwrap();
        let question = Question {
            header: "H".into(),
            text: "q".into(),
            options: vec![Choice::new("a".into(), String::new())],
            multiple: false,
            custom: false,
            secret: false,
            cannot_show: None,
        };
        pending.prompt.kind = Kind::Questions(vec![question.clone(), question]);
        let drafts = Drafts::default();
        let one = |index: usize| Piece::Question {
            index,
            answer: vec!["a".into()],
        };
        assert_eq!(drafts.remaining(&pending), [0, 1]);
        // A refused first piece leaves no draft behind.
        assert!(
            drafts
                .add(&pending, Piece::Fields(Default::default()))
                .is_err()
        );
        assert_eq!(drafts.drafts.lock().unwrap().len(), 0);
        assert_eq!(
            drafts.add(&pending, one(1)),
            Ok(Progress::Remaining(vec![0]))
        );
        assert_eq!(drafts.remaining(&pending), [0]);
        let whole = Progress::Whole(Answer::Questions(vec![vec!["a".into()]; 2]));
        assert_eq!(drafts.add(&pending, one(0)), Ok(whole.clone()));
        // Sending may fail: one more piece gives the whole answer again.
        assert_eq!(drafts.add(&pending, one(0)), Ok(whole));
        drafts.resolved(&pending.key);
        assert_eq!(drafts.drafts.lock().unwrap().len(), 0);
        assert_eq!(drafts.remaining(&pending), [0, 1]);
    }
}
