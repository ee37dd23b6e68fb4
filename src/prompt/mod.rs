//! ask-lsp's own model of what an agent asks a person: a [`Prompt`] of one
//! [`Kind`] (questions, a permission), answered by an [`Answer`] of the same
//! kind or rejected. No server's JSON lives here: each backend maps its wire
//! shapes to and from this model, and presenters show it.
//!
//! Everything in a prompt comes from an agent, so [`Prompt::into_checked`]
//! neutralises its text and enforces the bounds in [`limits`] before anyone
//! sees it; answers are validated here too, whoever gives them (a person, a
//! policy, a timeout).

pub(crate) mod draft;
mod form;
mod invalid;
mod permission;
mod question;
mod resolution;
mod session_title;
mod stores;
mod title;

#[cfg(test)]
pub(crate) use form::domain;
pub(crate) use form::{
    Field, FieldKind, FieldOption, FieldValue, Form, FormValues, Link, TextFormat,
};
pub(crate) use invalid::{FieldProblem, FieldType, KindName, PromptError, UrlProblem};
pub(crate) use permission::{
    Asker, ChoiceLabel, EditNote, Effect, Permission, PermissionChoice, PermissionTitle,
};
pub(crate) use question::{Choice, Question};
pub(crate) use resolution::{Decider, Reason, State, Why};
pub(crate) use session_title::SessionTitle;
pub(crate) use stores::{AgentMode, Change, RuleBehavior, Scope, Stores, ToolRule};
pub(crate) use title::{Title, TitleName};

use crate::text::{
    Cut, DISPLAY_ID_CHARS, DISPLAY_MESSAGE_CHARS, cut_for_display, for_display, multi_line,
    one_line,
};

/// Bounds on what an agent may ask. A request over them is refused with a
/// clear error instead of being shown half-broken.
pub(crate) mod limits {
    pub const ID_LEN: usize = 256;
    pub const QUESTIONS: usize = 16;
    pub const OPTIONS: usize = 64;
    pub const HEADER_LEN: usize = 200;
    pub const QUESTION_LEN: usize = 8_000;
    pub const LABEL_LEN: usize = 500;
    pub const DESCRIPTION_LEN: usize = 2_000;
    pub const CUSTOM_ANSWER_LEN: usize = 8_000;
    /// A permission's command or diff: long, but shown whole.
    pub const DETAIL_LEN: usize = 200_000;
    pub const PATTERNS: usize = 64;
    pub const REJECT_MESSAGE_LEN: usize = 8_000;
    pub const FIELDS: usize = 64;
    /// A form's choice list: longer than a question's (countries, ~600 time
    /// zones, ~7,900 ISO 639-3 languages); the agent message's value count
    /// bounds it while reading.
    pub const FORM_OPTIONS: usize = 10_000;
    pub const PATTERN_LEN: usize = 1_000;
    pub const URL_LEN: usize = 8_000;
    /// How much of a title editors get.
    pub const TITLE_CHARS: usize = 80;
    /// More pending prompts than this are not taken in (they stay on the server).
    pub const PENDING: usize = 10_000;
}

/// One request from an agent for a person's decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prompt {
    /// The server's id for the request, unique on that server.
    pub id: String,
    pub session: String,
    /// The project directory the agent works in, when the server says.
    pub directory: Option<String>,
    pub origin: Origin,
    pub kind: Kind,
}

/// What in the agent's run the prompt belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The agent's tool call that is waiting (its end withdraws the prompt).
    pub tool_call: Option<String>,
    /// The agent's name (`build`, `plan`, …), when the server says.
    pub agent: Option<String>,
    /// The session's title, when the server says.
    pub session_title: Option<SessionTitle>,
    /// A local process that asked (a hook request), as ask-lsp knows it.
    pub requester: Option<Box<Requester>>,
}

/// What ask-lsp itself knows of the local process that sent a request (the
/// hook socket's peer credentials), not what the request claims.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Requester {
    /// The sender, then its parents, nearest first: pid and executable.
    pub processes: Vec<Process>,
    /// The request's directory is not in this instance's workspace: no
    /// rule of the workspace decides it; the person does.
    pub outside_workspace: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Process {
    pub pid: u32,
    /// Its executable's path as the kernel gives it (`/proc/<pid>/exe`),
    /// neutralised by [`Prompt::into_checked`]; `None` when unreadable.
    pub executable: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// One or more questions, answered together.
    Questions(Vec<Question>),
    /// May the agent do something (run a command, edit a file)?
    Permission(Box<Permission>),
    /// Typed fields answered by value, or a link to open (url mode).
    Form(Box<Form>),
}

/// A decision on a prompt, of the prompt's kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Per question: the chosen labels and/or typed text.
    Questions(Vec<Vec<String>>),
    /// The id of one of the permission's choices.
    Permission { choice: String },
    /// Values by field id (none for a link form: the person consents).
    Form(FormValues),
}

/// What goes back to the agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    Answer(Answer),
    /// A refusal; `message` reaches the agent where its server takes one.
    Reject {
        message: Option<String>,
    },
    /// Nobody chose (a timeout with nothing it may pick): ACP's `cancel`;
    /// servers without that hear a refusal.
    Cancel,
}

/// A prompt [`Prompt::checked`] refused.
#[derive(Debug)]
pub(crate) struct Refused {
    pub error: PromptError,
    /// Listed in its place, so that a person can refuse it (or type answers
    /// where every question takes typed text) instead of the agent waiting
    /// for ever; `None` when not even a refusal could be routed back.
    pub stand_in: Option<Box<Prompt>>,
}

/// What a stand-in keeps of a refused prompt's kind: nothing of its text.
enum Shape {
    Questions {
        count: usize,
        typed: bool,
    },
    Permission {
        action: String,
        rejects: Vec<PermissionChoice>,
    },
    Form,
}

impl Shape {
    fn of(kind: &Kind) -> Shape {
        match kind {
            Kind::Questions(questions) => Shape::Questions {
                count: questions.len(),
                typed: questions.iter().all(|q| q.custom),
            },
            Kind::Permission(permission) => Shape::Permission {
                action: for_display(&permission.action, DISPLAY_ID_CHARS).into_owned(),
                rejects: permission
                    .choices
                    .iter()
                    .filter(|c| matches!(c.effect, Effect::RejectOnce | Effect::RejectAlways))
                    .filter(|c| c.id.len() <= limits::ID_LEN)
                    .take(limits::OPTIONS)
                    .cloned()
                    .collect(),
            },
            Kind::Form(_) => Shape::Form,
        }
    }

    fn stand_in(self, error: &PromptError) -> Kind {
        // A question's or form's stand-in keeps none of the agent's words:
        // the typed reason, for `present` to say in the person's language.
        let why = || Some(Box::new(error.clone()));
        match self {
            // Typed answers only where the agent takes typed text for every
            // question and they fit in one request.
            Shape::Questions { count, typed } => {
                let typed = typed && (1..=limits::QUESTIONS).contains(&count);
                let question = Question {
                    header: String::new(),
                    text: String::new(),
                    options: Vec::new(),
                    multiple: false,
                    custom: typed,
                    secret: false,
                    cannot_show: why(),
                };
                Kind::Questions(vec![question; if typed { count } else { 1 }])
            }
            Shape::Permission { action, rejects } => Kind::Permission(Box::new(Permission {
                action,
                title: PermissionTitle::CannotShow(Box::new(error.clone())),
                patterns: Vec::new(),
                command: None,
                diff: None,
                raw_command: None,
                raw_patterns: Vec::new(),
                choices: rejects
                    .into_iter()
                    .map(|c| PermissionChoice {
                        label: match c.label {
                            ChoiceLabel::Agent(label) => {
                                let cut = cut_for_display(&label.kept, limits::LABEL_LEN);
                                match cut.kept.trim().is_empty() {
                                    true => ChoiceLabel::EFFECT,
                                    false => ChoiceLabel::Agent(Cut {
                                        hidden: cut.hidden + label.hidden,
                                        ..cut.into_owned()
                                    }),
                                }
                            }
                            ours => ours,
                        },
                        ..c
                    })
                    .collect(),
            })),
            Shape::Form => Kind::Form(Box::new(Form {
                message: String::new(),
                fields: Vec::new(),
                url: None,
                cannot_show: why(),
            })),
        }
    }
}

/// A stand-in's title in English, for logs and `--json` (`present` words
/// it for a person): a question's header, a form's message.
fn english_stand_in_title(form: bool, why: &PromptError) -> String {
    match form {
        false => "Cannot be shown".into(),
        true => format!(
            "A form that cannot be shown here ({}); it can only be declined",
            for_display(&why.to_string(), DISPLAY_MESSAGE_CHARS)
        ),
    }
}

impl Kind {
    pub fn kind_name(&self) -> KindName {
        match self {
            Kind::Questions(_) => KindName::Questions,
            Kind::Permission(_) => KindName::Permission,
            Kind::Form(_) => KindName::Form,
        }
    }

    /// What a person calls it, in notifications and `ask-lsp status`.
    pub fn noun(&self) -> &'static str {
        match self {
            Kind::Questions(questions) if questions.len() > 1 => "questions",
            Kind::Questions(_) => "question",
            Kind::Permission(_) => "permission",
            Kind::Form(form) if form.url.is_some() => "link",
            Kind::Form(_) => "form",
        }
    }
}

impl Answer {
    fn kind_name(&self) -> KindName {
        match self {
            Answer::Questions(_) => KindName::Questions,
            Answer::Permission { .. } => KindName::Permission,
            Answer::Form(_) => KindName::Form,
        }
    }
}

impl Prompt {
    /// Neutralises every agent-supplied string and checks the bounds. The
    /// result is what the broker stores, shows and answers against.
    pub fn into_checked(self) -> Result<Prompt, PromptError> {
        self.checked().map_err(|refused| refused.error)
    }

    /// [`Prompt::into_checked`], with a stand-in for a refused prompt.
    pub fn checked(mut self) -> Result<Prompt, Refused> {
        let shape = Shape::of(&self.kind);
        match self.check_in_place() {
            Ok(()) => Ok(self),
            Err(error) => {
                let stand_in = self.stand_in(shape, &error).map(Box::new);
                Err(Refused { error, stand_in })
            }
        }
    }

    fn check_in_place(&mut self) -> Result<(), PromptError> {
        check_len("request id", &self.id, limits::ID_LEN)?;
        check_len("session id", &self.session, limits::ID_LEN)?;
        if self.id.is_empty() {
            return Err(PromptError::Empty {
                field: "request id",
            });
        }
        // Routing values go back to the server byte for byte (a directory
        // named with a tab or a trailing space is another directory): kept
        // raw, neutralised only where shown.
        if let Some(directory) = &self.directory {
            check_len("directory", directory, limits::DESCRIPTION_LEN)?;
        }
        if let Some(call) = &self.origin.tool_call {
            check_len("origin", call, limits::ID_LEN)?;
        }
        if let Some(agent) = &mut self.origin.agent {
            check_len("origin", agent, limits::ID_LEN)?;
            *agent = one_line(agent).into_owned();
        }
        if let Some(requester) = &mut self.origin.requester {
            for process in &mut requester.processes {
                if let Some(path) = &mut process.executable {
                    *path = for_display(path, DISPLAY_MESSAGE_CHARS).into_owned();
                }
            }
        }
        let kind = std::mem::replace(&mut self.kind, Kind::Questions(Vec::new()));
        self.kind = match kind {
            Kind::Questions(questions) => Kind::Questions(question::checked(questions)?),
            Kind::Permission(permission) => Kind::Permission(Box::new(permission.into_checked()?)),
            Kind::Form(form) => Kind::Form(Box::new(form.into_checked()?)),
        };
        Ok(())
    }

    /// The refused prompt reduced to what can be shown safely: its reason,
    /// and only the decisions that need none of its text. `None` when the
    /// ids or directory a reply is routed by are themselves out of bounds.
    fn stand_in(mut self, shape: Shape, error: &PromptError) -> Option<Prompt> {
        let within = |s: &str, max: usize| !s.is_empty() && s.chars().count() <= max;
        if !within(&self.id, limits::ID_LEN)
            || self.session.chars().count() > limits::ID_LEN
            || self
                .directory
                .as_deref()
                .is_some_and(|d| d.chars().count() > limits::DESCRIPTION_LEN)
        {
            return None;
        }
        self.origin.tool_call = self
            .origin
            .tool_call
            .take()
            .filter(|t| within(t, limits::ID_LEN));
        self.origin.agent = self
            .origin
            .agent
            .take()
            .filter(|t| within(t, limits::ID_LEN))
            .map(|t| one_line(&t).into_owned());
        self.kind = shape.stand_in(error);
        Some(self)
    }

    /// A short name for the prompt: the first question's header (else its
    /// text) and how many questions follow, the permission's title, or the
    /// form's message (else its first field).
    pub fn title(&self) -> Title {
        let (name, more) = match &self.kind {
            Kind::Questions(questions)
                if let Some(why) = questions.first().and_then(|q| q.cannot_show.as_ref()) =>
            {
                (
                    TitleName::CannotShow {
                        form: false,
                        why: why.clone(),
                    },
                    questions.len() - 1,
                )
            }
            Kind::Form(form) if let Some(why) = &form.cannot_show => (
                TitleName::CannotShow {
                    form: true,
                    why: why.clone(),
                },
                0,
            ),
            Kind::Questions(questions) => (
                TitleName::Agent(questions.first().map_or("", Question::name).to_owned()),
                questions.len().saturating_sub(1),
            ),
            Kind::Permission(p) => (
                TitleName::Permission {
                    action: p.action.clone(),
                    title: p.title.clone(),
                },
                0,
            ),
            Kind::Form(form) => (TitleName::Agent(form.name().to_owned()), 0),
        };
        Title { name, more }
    }

    /// Whether one of its questions asks for a secret (typed masked).
    pub fn asks_secret(&self) -> bool {
        matches!(&self.kind, Kind::Questions(questions) if questions.iter().any(|q| q.secret))
    }

    /// Checks a decision from a person, a policy or a timeout before it goes
    /// to the agent. Typed text is trimmed of surrounding whitespace.
    pub fn validate(&self, reply: Reply) -> Result<Reply, PromptError> {
        match reply {
            Reply::Reject { message } => {
                let message = message
                    .map(|m| m.trim().to_owned())
                    .filter(|m| !m.is_empty());
                if let Some(message) = &message {
                    check_len("reject message", message, limits::REJECT_MESSAGE_LEN)?;
                }
                Ok(Reply::Reject { message })
            }
            Reply::Cancel => Ok(Reply::Cancel),
            Reply::Answer(answer) => match (&self.kind, answer) {
                (Kind::Questions(questions), Answer::Questions(answers)) => Ok(Reply::Answer(
                    Answer::Questions(question::validate_all(questions, answers)?),
                )),
                (Kind::Permission(permission), Answer::Permission { choice }) => {
                    permission.validate(&choice)?;
                    Ok(Reply::Answer(Answer::Permission { choice }))
                }
                (Kind::Form(form), Answer::Form(values)) => {
                    Ok(Reply::Answer(Answer::Form(form.validate(values)?)))
                }
                (kind, answer) => Err(PromptError::WrongKind {
                    prompt: kind.kind_name(),
                    answer: answer.kind_name(),
                }),
            },
        }
    }
}

pub(crate) fn check_len(field: &'static str, value: &str, max: usize) -> Result<(), PromptError> {
    // Byte length bounds the char count from above: most strings skip the count.
    if value.len() > max {
        let len = value.chars().count();
        if len > max {
            return Err(PromptError::TooLong { field, len, max });
        }
    }
    Ok(())
}

/// One-line agent text with its bound checked.
fn line(field: &'static str, value: &str, max: usize) -> Result<String, PromptError> {
    check_len(field, value, max)?;
    Ok(one_line(value).into_owned())
}

/// Multi-line agent text with its bound checked.
fn text(field: &'static str, value: &str, max: usize) -> Result<String, PromptError> {
    check_len(field, value, max)?;
    Ok(multi_line(value).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn prompt(kind: Kind) -> Prompt {
        Prompt {
            id: "que_1".into(),
            session: "ses_1".into(),
            directory: None,
            origin: Origin::default(),
            kind,
        }
    }

    #[test]
    fn titles_name_the_first_question_or_the_permission() {
        let q = |header: &str, text: &str| Question {
            header: header.into(),
            text: text.into(),
            options: vec![],
            multiple: false,
            custom: true,
            secret: false,
            cannot_show: None,
        };
        assert_eq!(
            prompt(Kind::Questions(vec![q("Color", "Which?")]))
                .title()
                .english(),
            "Color"
        );
        assert_eq!(
            prompt(Kind::Questions(vec![q("", "Which?"), q("B", "b")]))
                .title()
                .english(),
            "Which? (+1 more)"
        );
        // A cut says how much it hid.
        let long = prompt(Kind::Questions(vec![q(&"é".repeat(100), "")]))
            .title()
            .english();
        assert_eq!(long, "é".repeat(80) + "… (+20 more characters)");
    }

    #[test]
    fn a_refused_prompt_stands_in_with_its_reason_unless_its_reply_cannot_be_routed() {
        let huge = |custom: bool| Question {
            header: "\u{1b}]52;c;x\u{7}H".into(),
            text: "q".repeat(limits::QUESTION_LEN + 1),
            options: vec![Choice::new("a".into(), String::new())],
            multiple: false,
            custom,
            secret: false,
            cannot_show: None,
        };
        let refused = prompt(Kind::Questions(vec![huge(true), huge(true)]))
            .checked()
            .unwrap_err();
        let Kind::Questions(questions) = refused.stand_in.expect("a stand-in").kind else {
            panic!("not questions")
        };
        assert_eq!(questions.len(), 2);
        assert!(questions.iter().all(|q| q.custom && q.options.is_empty()));
        // None of the agent's words: the reason, typed, for `present`.
        assert!(
            questions
                .iter()
                .all(|q| q.header.is_empty() && q.text.is_empty())
        );
        assert_eq!(
            questions[0].cannot_show.as_deref(),
            Some(&PromptError::TooLong {
                field: "question",
                len: limits::QUESTION_LEN + 1,
                max: limits::QUESTION_LEN
            })
        );
        // One question without typed answers: a refusal only.
        let refused = prompt(Kind::Questions(vec![huge(true), huge(false)]))
            .checked()
            .unwrap_err();
        assert!(matches!(
            refused.stand_in.unwrap().kind,
            Kind::Questions(q) if q.len() == 1 && !q[0].custom
        ));
        let form = Form {
            message: "m".into(),
            fields: Vec::new(),
            url: Some(Link {
                url: "javascript:alert(1)".into(),
                domain: String::new(),
            }),
            cannot_show: None,
        };
        let refused = prompt(Kind::Form(Box::new(form.clone())))
            .checked()
            .unwrap_err();
        assert!(matches!(
            refused.stand_in.unwrap().kind,
            Kind::Form(f) if f.fields.is_empty() && f.url.is_none()
        ));
        // A directory over its bound would send the refusal elsewhere.
        let mut far = prompt(Kind::Form(Box::new(form)));
        far.directory = Some("d".repeat(limits::DESCRIPTION_LEN + 1));
        assert!(far.checked().unwrap_err().stand_in.is_none());
    }

    #[test]
    fn ids_and_origin_are_bounded_and_neutralised() {
        let mut p = prompt(Kind::Questions(vec![Question {
            header: String::new(),
            text: "q".into(),
            options: vec![],
            multiple: false,
            custom: true,
            secret: false,
            cannot_show: None,
        }]));
        p.origin.agent = Some("bu\u{1b}[2Jild".into());
        assert_eq!(
            p.clone().into_checked().unwrap().origin.agent.as_deref(),
            Some("bu␛[2Jild")
        );
        p.id = "x".repeat(limits::ID_LEN + 1);
        assert_eq!(
            p.into_checked().unwrap_err().to_string(),
            "request id is 257 characters long (at most 256)"
        );
    }

    #[test]
    fn an_answer_of_the_wrong_kind_is_refused() {
        let p = prompt(Kind::Questions(vec![]));
        assert_eq!(
            p.validate(Reply::Answer(Answer::Permission {
                choice: "once".into()
            })),
            Err(PromptError::WrongKind {
                prompt: KindName::Questions,
                answer: KindName::Permission
            })
        );
        assert_eq!(
            p.validate(Reply::Reject {
                message: Some("  ".into())
            }),
            Ok(Reply::Reject { message: None })
        );
    }
}
