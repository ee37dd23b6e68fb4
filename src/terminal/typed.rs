//! What a line typed at a question means: numbers pick options, other text
//! is a typed answer where allowed, an empty line rejects.

use crate::present::i18n::tr;
use crate::prompt::Question;

/// What a typed line means.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Typed {
    Reject,
    Answer(Vec<String>),
}

/// Reads one line for a question: numbers pick options, other text is a
/// typed answer where allowed (`=` before text that would read as numbers),
/// an empty line rejects.
pub(super) fn parse_line(question: &Question, line: &str) -> Result<Typed, String> {
    if question.secret {
        return Ok(secret_line(question, line));
    }
    let line = line.trim();
    if line.is_empty() {
        return Ok(Typed::Reject);
    }
    if let Some(text) = line.strip_prefix('=') {
        return match text.trim() {
            _ if !question.custom => Err(typed_not_allowed(question)),
            "" => Err(tr!("watch.type_after_equals")),
            text => Ok(Typed::Answer(vec![text.to_owned()])),
        };
    }
    let count = question.options.len();
    let looks_numeric = line
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
    if !looks_numeric {
        // An option's label typed out is that option.
        if let Some(option) = question
            .options
            .iter()
            .find(|o| o.label.to_lowercase() == line.to_lowercase())
        {
            return Ok(Typed::Answer(vec![option.label.clone()]));
        }
        if let Some(n) = close_option(question, line) {
            let label = &question.options[n - 1].label;
            return Err(match question.custom {
                true => tr!(
                    "watch.did_you_mean_typed",
                    n = n,
                    label = label,
                    line = line
                ),
                false => tr!("watch.did_you_mean", n = n, label = label),
            });
        }
        return if question.custom {
            Ok(Typed::Answer(vec![line.to_owned()]))
        } else {
            Err(typed_not_allowed(question))
        };
    }
    let range = match count {
        0 => return Err(tr!("watch.no_options")),
        1 => "1".to_owned(),
        n => tr!("watch.range", n = n),
    };
    // `1,3`, `1, 3` and `1 3` alike.
    let numbers: Option<Vec<usize>> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse::<usize>().ok().filter(|n| (1..=count).contains(n)))
        .collect();
    let numbers = numbers.filter(|n| !n.is_empty());
    let hint = match question.custom {
        true => tr!("watch.equals_hint"),
        false => String::new(),
    };
    match numbers {
        Some(numbers) if question.multiple || numbers.len() == 1 => Ok(Typed::Answer(
            numbers
                .into_iter()
                .map(|n| question.options[n - 1].label.clone())
                .collect(),
        )),
        Some(_) => Err(tr!("watch.pick_one", range = range, hint = hint)),
        None if question.multiple => Err(tr!("watch.pick_numbers", range = range, hint = hint)),
        None => Err(tr!("watch.pick_a_number", range = range, hint = hint)),
    }
}

/// A secret's line: exactly as typed (a space may be part of it), or an
/// option's number, `=` before a secret that reads as one; never quoted in
/// an error, nor guessed to be a misspelt option.
fn secret_line(question: &Question, line: &str) -> Typed {
    if line.trim().is_empty() {
        return Typed::Reject;
    }
    if let Some(text) = line.strip_prefix('=') {
        return Typed::Answer(vec![text.to_owned()]);
    }
    match line.trim().parse::<usize>() {
        Ok(n) if (1..=question.options.len()).contains(&n) => {
            Typed::Answer(vec![question.options[n - 1].label.clone()])
        }
        _ => Typed::Answer(vec![line.to_owned()]),
    }
}

/// The option a typed line was most likely meant to name (a typo, a word
/// cut short), by number; `None` when none is close.
fn close_option(question: &Question, line: &str) -> Option<usize> {
    const LONGEST: usize = 64;
    let typed: Vec<char> = line.to_lowercase().chars().collect();
    if typed.len() < 3 || typed.len() > LONGEST {
        return None;
    }
    question
        .options
        .iter()
        .enumerate()
        .filter_map(|(index, option)| {
            let label: Vec<char> = option.label.to_lowercase().chars().collect();
            if label.len() > LONGEST {
                return None;
            }
            let distance = if label.starts_with(&typed) {
                0
            } else {
                edit_distance(&typed, &label)
            };
            (distance <= (label.len() / 4).max(1)).then_some((distance, index + 1))
        })
        .min()
        .map(|(_, n)| n)
}

/// Levenshtein distance: insertions, deletions and substitutions.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

fn typed_not_allowed(question: &Question) -> String {
    match question.options.len() {
        1 => tr!("watch.no_typed_answer_one"),
        n => tr!("watch.no_typed_answer", n = n),
    }
}
