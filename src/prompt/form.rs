//! The form kind: typed fields answered by value (ACP/MCP elicitation's
//! restricted JSON Schema, OpenCode 2's question forms), or, in url mode, a
//! link the person may open themselves: ask-lsp never opens or fetches it.
//!
//! Every field type's checks and bounds are here (tests in `form/tests.rs`).

use std::collections::BTreeMap;

use super::{FieldProblem, FieldType, PromptError, UrlProblem, check_len, limits, line, text};
use crate::text::{cut_for_display, for_display, one_line};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Form {
    /// What is asked and why.
    pub message: String,
    pub fields: Vec<Field>,
    /// Url mode: consent to open this link; `fields` is then empty.
    pub url: Option<Link>,
    /// `Some(why)` on ask-lsp's stand-in for a form it could not show:
    /// `message` is then empty and `present` says why.
    pub cannot_show: Option<Box<PromptError>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// The full URL as the agent sent it (shown whole, never opened by ask-lsp).
    pub url: String,
    /// The host a browser opens, for the person to check before opening
    /// it: see [`domain`].
    pub domain: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The agent's property name, kept exactly: answers are keyed by it.
    pub id: String,
    /// Display name (the id when the agent gave no title).
    pub title: String,
    pub description: String,
    pub required: bool,
    pub kind: FieldKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldKind {
    Text {
        format: Option<TextFormat>,
        /// An ECMA-style regular expression, unanchored as in JSON Schema.
        pattern: Option<String>,
        min_length: Option<u32>,
        max_length: Option<u32>,
        default: Option<String>,
    },
    /// `integer` takes whole numbers only.
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
    Boolean {
        default: Option<bool>,
    },
    Choice {
        options: Vec<FieldOption>,
        default: Option<String>,
    },
    Multi {
        options: Vec<FieldOption>,
        min_items: Option<u32>,
        max_items: Option<u32>,
        default: Option<Vec<String>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldOption {
    /// What the agent gets back, exactly as it sent it.
    pub value: String,
    /// What a person sees (neutralised once checked).
    pub label: String,
    /// What the agent says about it, often its trade-off; may be empty.
    pub description: String,
}

/// One field's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldValue {
    Text(String),
    Number(f64),
    Bool(bool),
    /// A single choice's value.
    Choice(String),
    /// A multi choice's values.
    Choices(Vec<String>),
}

pub(crate) type FormValues = BTreeMap<String, FieldValue>;

impl TextFormat {
    const ALL: [TextFormat; 4] = [
        TextFormat::Email,
        TextFormat::Uri,
        TextFormat::Date,
        TextFormat::DateTime,
    ];

    /// Its JSON Schema `format` name, which every agent's forms use.
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }

    /// The format a JSON Schema `format` names, if forms support it.
    pub fn from_name(name: &str) -> Option<TextFormat> {
        TextFormat::ALL
            .into_iter()
            .find(|format| format.name() == name)
    }
}

impl FieldKind {
    pub fn field_type(&self) -> FieldType {
        match self {
            FieldKind::Text { .. } => FieldType::Text,
            FieldKind::Number { integer: true, .. } => FieldType::Integer,
            FieldKind::Number { .. } => FieldType::Number,
            FieldKind::Boolean { .. } => FieldType::Boolean,
            FieldKind::Choice { .. } => FieldType::Choice,
            FieldKind::Multi { .. } => FieldType::MultiChoice,
        }
    }
}

impl Field {
    /// The field's default, where it has one.
    pub fn default_value(&self) -> Option<FieldValue> {
        match &self.kind {
            FieldKind::Text { default, .. } => default.clone().map(FieldValue::Text),
            FieldKind::Number { default, .. } => default.map(FieldValue::Number),
            FieldKind::Boolean { default } => default.map(FieldValue::Bool),
            FieldKind::Choice { default, .. } => default.clone().map(FieldValue::Choice),
            FieldKind::Multi { default, .. } => default.clone().map(FieldValue::Choices),
        }
    }

    /// The option with this label or value (labels are what plain surfaces
    /// show; values what the extension sends).
    pub fn option(&self, label_or_value: &str) -> Option<&FieldOption> {
        let options = match &self.kind {
            FieldKind::Choice { options, .. } | FieldKind::Multi { options, .. } => options,
            _ => return None,
        };
        options
            .iter()
            .find(|o| o.value == label_or_value)
            .or_else(|| options.iter().find(|o| o.label == label_or_value))
    }

    /// Checks one value against the field; text is trimmed.
    pub fn validate(&self, value: FieldValue) -> Result<FieldValue, PromptError> {
        let err = |problem| PromptError::BadField {
            field: self.title.clone(),
            problem,
        };
        match (&self.kind, value) {
            (
                FieldKind::Text {
                    format,
                    pattern,
                    min_length,
                    max_length,
                    ..
                },
                FieldValue::Text(text),
            ) => {
                let text = text.trim().to_owned();
                check_len("a form answer", &text, limits::CUSTOM_ANSWER_LEN)?;
                let len = text.chars().count();
                if let Some(min) = min_length
                    && len < *min as usize
                {
                    return Err(err(FieldProblem::TooShort(*min)));
                }
                if let Some(max) = max_length
                    && len > *max as usize
                {
                    return Err(err(FieldProblem::TooLong(*max)));
                }
                if let Some(format) = format
                    && !format_ok(*format, &text)
                {
                    return Err(err(FieldProblem::NotFormat(*format)));
                }
                if let Some(pattern) = pattern
                    && !compile(pattern).is_ok_and(|re| re.is_match(&text))
                {
                    return Err(err(FieldProblem::NoMatch(one_line(pattern).into_owned())));
                }
                Ok(FieldValue::Text(text))
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                    ..
                },
                FieldValue::Number(n),
            ) => {
                if !n.is_finite() {
                    return Err(err(FieldProblem::NotANumber));
                }
                if *integer && (n.fract() != 0.0 || n.abs() > 9.007e15) {
                    return Err(err(FieldProblem::NotWhole));
                }
                if let Some(min) = minimum
                    && n < *min
                {
                    return Err(err(FieldProblem::BelowMinimum(*min)));
                }
                if let Some(max) = maximum
                    && n > *max
                {
                    return Err(err(FieldProblem::AboveMaximum(*max)));
                }
                Ok(FieldValue::Number(n))
            }
            (FieldKind::Boolean { .. }, FieldValue::Bool(b)) => Ok(FieldValue::Bool(b)),
            (FieldKind::Choice { .. }, FieldValue::Choice(choice) | FieldValue::Text(choice)) => {
                match self.option(&choice) {
                    Some(option) => Ok(FieldValue::Choice(option.value.clone())),
                    None => Err(err(FieldProblem::NotAnOption(short(&choice)))),
                }
            }
            (
                FieldKind::Multi {
                    min_items,
                    max_items,
                    ..
                },
                FieldValue::Choices(choices),
            ) => {
                let mut values: Vec<String> = Vec::with_capacity(choices.len());
                for choice in choices {
                    let Some(option) = self.option(&choice) else {
                        return Err(err(FieldProblem::NotAnOption(short(&choice))));
                    };
                    if values.contains(&option.value) {
                        return Err(err(FieldProblem::ChosenTwice(short(&choice))));
                    }
                    values.push(option.value.clone());
                }
                if let Some(min) = min_items
                    && values.len() < *min as usize
                {
                    return Err(err(FieldProblem::TooFewChoices(*min)));
                }
                if let Some(max) = max_items
                    && values.len() > *max as usize
                {
                    return Err(err(FieldProblem::TooManyChoices(*max)));
                }
                Ok(FieldValue::Choices(values))
            }
            (kind, _) => Err(err(FieldProblem::WrongType(kind.field_type()))),
        }
    }
}

fn short(value: &str) -> String {
    format!("{:?}", for_display(value, 80))
}

/// Bounded so that an agent's pattern cannot take ask-lsp's memory.
fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
}

/// JSON Schema formats, checked the way a person's typo would be caught:
/// the shape, not deliverability.
fn format_ok(format: TextFormat, text: &str) -> bool {
    match format {
        TextFormat::Email => match text.rsplit_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !text.chars().any(char::is_whitespace)
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !domain.contains('@')
            }
            None => false,
        },
        TextFormat::Uri => {
            let Some((scheme, rest)) = text.split_once(':') else {
                return false;
            };
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        TextFormat::Date => date_ok(text),
        TextFormat::DateTime => {
            let Some((date, time)) = text.split_once(['T', 't']) else {
                return false;
            };
            date_ok(date) && time_ok(time)
        }
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// `YYYY-MM-DD` naming a real day.
fn date_ok(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// RFC 3339 `HH:MM:SS[.frac](Z|±HH:MM)`.
fn time_ok(s: &str) -> bool {
    let (clock, zone) = match s.find(['Z', 'z', '+', '-']) {
        Some(at) => s.split_at(at),
        None => return false,
    };
    let (clock, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let hms: Vec<&str> = clock.split(':').collect();
    let [h, m, sec] = hms[..] else { return false };
    let ok_clock = matches!(
        (digits(h, 2), digits(m, 2), digits(sec, 2)),
        (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60
    ) && !frac.is_empty()
        && frac.bytes().all(|b| b.is_ascii_digit());
    let ok_zone = match zone {
        "Z" | "z" => true,
        _ => {
            let offset = &zone[1..];
            matches!(offset.split_once(':'), Some((h, m))
                if digits(h, 2).is_some_and(|h| h < 24) && digits(m, 2).is_some_and(|m| m < 60))
        }
    };
    ok_clock && ok_zone
}

/// The host a browser opens for an `http(s)` URL, read as browsers read it
/// (WHATWG URL parsing: `\\` ends the host like `/`, userinfo before `@` is
/// not the host, `0x7f.1` is 127.0.0.1), in its ASCII form: an
/// internationalised name is shown as `xn--…`, so a look-alike letter cannot
/// pass for the one it imitates. Port and IPv6 brackets are left out.
pub(crate) fn domain(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    Some(match parsed.host()? {
        url::Host::Domain(name) => name.to_owned(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => ip.to_string(),
    })
}

impl Link {
    /// Why the host deserves a second look, if it does: the link's text
    /// shows something else where the host goes (`a.example@b.example`,
    /// `a.example\\@b.example`, a fullwidth dot, `0x7f.1`), or the host is an
    /// internationalised name (punycode), said louder when one label mixes
    /// scripts (a Cyrillic `а` among Latin letters).
    pub fn warning(&self) -> Option<LinkWarning> {
        let parsed = url::Url::parse(&self.url).ok()?;
        let host = parsed.host_str()?.to_owned();
        let unicode = url::quirks::domain_to_unicode(&host);
        let mut warning = LinkWarning::default();
        // What stands where the host goes, as a person reads the text.
        let written = self
            .url
            .split_once(':')
            .map_or("", |(_, rest)| rest)
            .trim_start_matches(['/', '\\'])
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("")
            .to_lowercase();
        let written_host = match parsed.port() {
            Some(port) => written
                .strip_suffix(&format!(":{port}"))
                .unwrap_or(&written),
            None => written
                .strip_suffix(&format!(":{}", parsed.port_or_known_default().unwrap_or(0)))
                .unwrap_or(&written),
        };
        if written_host != host && written_host != unicode {
            warning.written_host =
                Some(cut_for_display(&written, DISPLAY_WRITTEN_CHARS).into_owned());
        }
        if host.split('.').any(|label| label.starts_with("xn--")) {
            warning.internationalised = Some(Internationalised {
                shown: cut_for_display(&unicode, DISPLAY_WRITTEN_CHARS).into_owned(),
                mixed_scripts: unicode.split('.').find_map(mixed_scripts),
            });
        }
        (warning != LinkWarning::default()).then_some(warning)
    }
}

/// Why a link's host deserves a second look ([`Link::warning`]), worded by
/// `present`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkWarning {
    /// What the link's text shows where its host goes, when a browser opens
    /// another host.
    pub written_host: Option<crate::text::Cut<'static>>,
    pub internationalised: Option<Internationalised>,
}

/// An internationalised host: as browsers show it, and two scripts one of
/// its labels mixes (a look-alike?).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Internationalised {
    pub shown: crate::text::Cut<'static>,
    pub mixed_scripts: Option<(&'static str, &'static str)>,
}

/// How much of a link's host text a warning quotes.
const DISPLAY_WRITTEN_CHARS: usize = 200;

/// Two scripts that one label of a host mixes, if it does. Digits, `-` and
/// letters of other scripts are left out; Han, kana and Hangul count as one
/// (Japanese names mix them).
fn mixed_scripts(label: &str) -> Option<(&'static str, &'static str)> {
    let mut first = None;
    for script in label.chars().filter_map(script) {
        match first {
            None => first = Some(script),
            Some(seen) if seen != script => return Some((seen, script)),
            Some(_) => {}
        }
    }
    None
}

fn script(c: char) -> Option<&'static str> {
    Some(match c {
        'a'..='z' | 'A'..='Z' | '\u{c0}'..='\u{24f}' | '\u{1e00}'..='\u{1eff}' => "Latin",
        '\u{370}'..='\u{3ff}' | '\u{1f00}'..='\u{1fff}' => "Greek",
        '\u{400}'..='\u{52f}' | '\u{1c80}'..='\u{1c8f}' | '\u{a640}'..='\u{a69f}' => "Cyrillic",
        '\u{530}'..='\u{58f}' => "Armenian",
        '\u{590}'..='\u{5ff}' => "Hebrew",
        '\u{600}'..='\u{6ff}' | '\u{750}'..='\u{77f}' => "Arabic",
        '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}' => "CJK",
        _ => return None,
    })
}

impl Form {
    /// The message's first line, else a link's domain or the first field's
    /// title.
    pub fn name(&self) -> &str {
        match (
            self.message.lines().find(|l| !l.trim().is_empty()),
            &self.url,
        ) {
            (Some(line), _) => line.trim(),
            (None, Some(link)) => link.domain.as_str(),
            (None, None) => self.fields.first().map_or("", |f| f.title.as_str()),
        }
    }

    pub(super) fn into_checked(mut self) -> Result<Form, PromptError> {
        self.message = text("form message", &self.message, limits::QUESTION_LEN)?;
        if let Some(link) = &mut self.url {
            check_len("url", &link.url, limits::URL_LEN)?;
            // Shown whole and exactly: anything neutralising would change
            // (controls, bidi overrides) or a space is refused.
            if link.url.contains(char::is_whitespace) || one_line(&link.url) != link.url {
                return Err(PromptError::BadUrl(UrlProblem::Unsafe));
            }
            link.domain = domain(&link.url).ok_or(PromptError::BadUrl(UrlProblem::NotHttp))?;
            if !self.fields.is_empty() {
                return Err(PromptError::BadUrl(UrlProblem::HasFields));
            }
            return Ok(self);
        }
        if self.fields.len() > limits::FIELDS {
            return Err(PromptError::TooMany {
                field: "form fields",
                count: self.fields.len(),
                max: limits::FIELDS,
            });
        }
        if self.fields.is_empty() && self.message.trim().is_empty() {
            return Err(PromptError::Empty { field: "form" });
        }
        for field in &mut self.fields {
            check_len("field id", &field.id, limits::ID_LEN)?;
            if field.id.is_empty() {
                return Err(PromptError::Empty { field: "field id" });
            }
            if field.title.trim().is_empty() {
                field.title = field.id.clone();
            }
            field.title = line("field title", &field.title, limits::HEADER_LEN)?;
            field.description = text(
                "field description",
                &field.description,
                limits::DESCRIPTION_LEN,
            )?;
            check_field(field)?;
        }
        let mut ids: Vec<&str> = self.fields.iter().map(|f| f.id.as_str()).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            return Err(PromptError::DuplicateFieldIds);
        }
        Ok(self)
    }

    /// Checks a form's answer: every value for a known field and valid, every
    /// required field present. Empty optional text counts as not given. A
    /// link form's answer (consent) has no values.
    pub(super) fn validate(&self, values: FormValues) -> Result<FormValues, PromptError> {
        let mut checked = FormValues::new();
        for (id, value) in values {
            let Some(field) = self.fields.iter().find(|f| f.id == id) else {
                return Err(PromptError::UnknownField(short(&id)));
            };
            if matches!(&value, FieldValue::Text(t) if t.trim().is_empty()) && !field.required {
                continue;
            }
            checked.insert(id, field.validate(value)?);
        }
        if let Some(missing) = self
            .fields
            .iter()
            .find(|f| f.required && !checked.contains_key(&f.id))
        {
            return Err(PromptError::BadField {
                field: missing.title.clone(),
                problem: FieldProblem::Required,
            });
        }
        Ok(checked)
    }
}

fn check_field(field: &mut Field) -> Result<(), PromptError> {
    let bad = |problem| PromptError::BadField {
        field: field.title.clone(),
        problem,
    };
    match &mut field.kind {
        FieldKind::Text {
            pattern,
            min_length,
            max_length,
            default,
            ..
        } => {
            if let Some(p) = pattern {
                check_len("field pattern", p, limits::PATTERN_LEN)?;
                compile(p).map_err(|_| bad(FieldProblem::UnusablePattern))?;
            }
            if min_length.unwrap_or(0) as usize > limits::CUSTOM_ANSWER_LEN
                || min_length.unwrap_or(0) > max_length.unwrap_or(u32::MAX)
            {
                return Err(bad(FieldProblem::LengthBounds));
            }
            if let Some(d) = default {
                check_len("field default", d, limits::CUSTOM_ANSWER_LEN)?;
            }
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            if let (Some(min), Some(max)) = (minimum, maximum)
                && min > max
            {
                return Err(bad(FieldProblem::MinimumAboveMaximum));
            }
        }
        FieldKind::Boolean { .. } => {}
        FieldKind::Choice { options, .. } | FieldKind::Multi { options, .. } => {
            if options.is_empty() {
                return Err(bad(FieldProblem::NoOptions));
            }
            if options.len() > limits::FORM_OPTIONS {
                return Err(PromptError::TooMany {
                    field: "field options",
                    count: options.len(),
                    max: limits::FORM_OPTIONS,
                });
            }
            for option in options.iter_mut() {
                check_len("option value", &option.value, limits::LABEL_LEN)?;
                if option.label.is_empty() {
                    option.label = option.value.clone();
                }
                option.label = line("option label", &option.label, limits::LABEL_LEN)?;
                if option.label.is_empty() {
                    return Err(PromptError::Empty {
                        field: "option label",
                    });
                }
                option.description = text(
                    "option description",
                    &option.description,
                    limits::DESCRIPTION_LEN,
                )?;
            }
        }
    }
    if let FieldKind::Multi {
        options,
        min_items,
        max_items,
        ..
    } = &field.kind
        && (min_items.unwrap_or(0) as usize > options.len()
            || min_items.unwrap_or(0) > max_items.unwrap_or(u32::MAX))
    {
        return Err(bad(FieldProblem::ItemBounds));
    }
    // An invalid default is dropped, not shown: the field still works.
    if let Some(default) = field.default_value()
        && field.validate(default).is_err()
    {
        match &mut field.kind {
            FieldKind::Text { default, .. } => *default = None,
            FieldKind::Number { default, .. } => *default = None,
            FieldKind::Boolean { default } => *default = None,
            FieldKind::Choice { default, .. } => *default = None,
            FieldKind::Multi { default, .. } => *default = None,
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
