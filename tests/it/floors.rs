//! The layout rules of the project guide, checked on the source text:
//!
//! - no import cycle between the folders of `src/` (the top-level modules,
//!   and each adapter or plumbing folder under `backends/`);
//! - every import goes down the declared floors ([`FLOORS`]);
//! - no file in `src/` over [`MAX_LINES`] lines;
//! - only `src/app.rs` reads the environment.
//!
//! The imports are read from the text: every `crate::…`, `super::…` and
//! `self::…` path, and paths starting with a child module's name, outside
//! comments and string literals. `cargo test --test it floors:: -- --nocapture`
//! prints the folder graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The floors from the top; a folder imports only folders on its own floor
/// or below it, and the graph has no cycle. Everything under `src/` must be
/// listed (a new folder gets its place here).
const FLOORS: &[&[&str]] = &[
    // The faces.
    &["lsp", "terminal", "status", "hook"],
    // The one wiring place, the only reader of the environment.
    &["app"],
    &["notify"],
    &["present"],
    &["broker"],
    // OpenCode of either generation, whichever answers.
    &["backends/generation"],
    // The adapters.
    &[
        "backends/opencode",
        "backends/opencode2",
        "backends/sandbox_agent",
        "backends/hook",
        "backends/codex",
    ],
    // What two adapters read.
    &["backends/shared", "backends/elicitation"],
    // Plumbing.
    &["backends/net"],
    // The backend interface: events, errors, timing.
    &["backends"],
    // The bounded queue backends send into; why a connection failed.
    &["backends/sink", "backends/cause"],
    &["settings"],
    // The model, and the sanitiser it uses.
    &["prompt"],
    &["text"],
];

/// Folders whose children are folders of their own in the graph.
const SPLIT: &[&str] = &["backends"];

/// The faces start through `app` and never name a backend.
const FACES: &[&str] = &["lsp", "terminal", "status", "hook"];

/// The longest a file in `src/` may be.
const MAX_LINES: usize = 700;

/// The one file that reads the environment.
const ENVIRONMENT_READER: &str = "app.rs";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `lib.rs` and
/// `main.rs` are the root.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_owned());
    }
    parts
}

/// The text with comments and the contents of string and character
/// literals blanked out (lines kept, so that counts stay right).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            out.push('"');
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && char_literal_len(&chars[i..]).is_some() {
            out.push_str("' '");
            i += char_literal_len(&chars[i..]).expect("checked");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// The length of a character literal at the start (`'x'`, `'\n'`,
/// `'\u{..}'`), or `None` for a lifetime.
fn char_literal_len(chars: &[char]) -> Option<usize> {
    match chars.get(1)? {
        '\\' => {
            let close = chars.iter().skip(2).position(|&c| c == '\'')?;
            (close < 10).then_some(close + 3)
        }
        _ => (chars.get(2) == Some(&'\'')).then_some(3),
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The module paths a file's code names, resolved to absolute paths
/// (`crate::…`, `super::…`, `self::…`, a child module's name), with the
/// inline modules (`mod tests { … }`) it declares taken into account.
fn referenced_paths(
    file_module: &[String],
    code: &str,
    exists: &dyn Fn(&[String]) -> bool,
) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    // Inline modules as (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        if !is_ident(c) || ident_before(&chars, i) || (i > 0 && chars[i - 1] == ':') {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if word == "mod" {
            let mut j = i;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            let name_start = j;
            while chars.get(j).is_some_and(|&c| is_ident(c)) {
                j += 1;
            }
            pending_mod = Some(chars[name_start..j].iter().collect());
            continue;
        }
        let before: String = chars[start.saturating_sub(4)..start].iter().collect();
        if before == "(in " {
            // A visibility, `pub(in crate::a)`, not an import.
            continue;
        }
        let mut here: Vec<String> = file_module.to_vec();
        here.extend(inline.iter().map(|(name, _)| name.clone()));
        for path in paths_from(&word, &chars, i) {
            let resolved = resolve(&here, &path, exists);
            if let Some(resolved) = resolved {
                found.push(resolved);
            }
        }
    }
    found
}

/// The paths starting with `first` at `chars[at..]` (just after `first`):
/// `first::a::b`, or each branch of `first::{a::b, c}`.
fn paths_from(first: &str, chars: &[char], at: usize) -> Vec<Vec<String>> {
    if chars.get(at) != Some(&':') || chars.get(at + 1) != Some(&':') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut prefix = vec![first.to_owned()];
    let mut i = at + 2;
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            // One level of braces is enough for the imports here.
            let mut item = String::new();
            let mut nested = 0;
            i += 1;
            while let Some(&c) = chars.get(i) {
                match c {
                    '{' => nested += 1,
                    '}' if nested == 0 => break,
                    '}' => nested -= 1,
                    ',' if nested == 0 => {
                        out.push(branch(&prefix, &item));
                        item.clear();
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
                i += 1;
            }
            out.push(branch(&prefix, &item));
            return out;
        }
        let start = i;
        while chars.get(i).is_some_and(|&c| is_ident(c)) {
            i += 1;
        }
        if start == i {
            break;
        }
        prefix.push(chars[start..i].iter().collect());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            break;
        }
    }
    out.push(prefix);
    out
}

fn branch(prefix: &[String], item: &str) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.extend(
        item.split("::")
            .map(|part| part.trim().trim_matches(|c: char| !is_ident(c)).to_owned())
            .take_while(|part| !part.is_empty()),
    );
    path
}

/// An absolute module path for `path` named in module `here`, or `None`
/// when it is not one of the crate's (std, a dependency, a local name).
fn resolve(
    here: &[String],
    path: &[String],
    exists: &dyn Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let (mut base, rest): (Vec<String>, &[String]) = match path[0].as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here.to_vec(), &path[1..]),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|p| p == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => {
            // A child module's name, relative to the module it is in.
            let mut child = here.to_vec();
            child.push(path[0].clone());
            if !exists(&child) {
                return None;
            }
            (here.to_vec(), path)
        }
    };
    // Keep the segments that are modules (files or folders).
    for segment in rest {
        let mut next = base.clone();
        next.push(segment.clone());
        if !exists(&next) {
            break;
        }
        base = next;
    }
    Some(base)
}

/// The folder of the graph a module belongs to: its top-level module, or
/// `backends/x` for the folders under [`SPLIT`]. `None` for the root.
fn folder(module: &[String]) -> Option<String> {
    let first = module.first()?;
    match module.get(1) {
        Some(second) if SPLIT.contains(&first.as_str()) => Some(format!("{first}/{second}")),
        _ => Some(first.clone()),
    }
}

type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Folder → folder → the files whose imports make that edge.
fn folder_graph(root: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|file| module_of(file.strip_prefix(root).expect("under src")))
        .collect();
    let exists = |module: &[String]| modules.contains(module);
    let mut graph = Graph::new();
    for file in &files {
        let relative = file.strip_prefix(root).expect("under src");
        let module = module_of(relative);
        let Some(from) = folder(&module) else {
            continue;
        };
        graph.entry(from.clone()).or_default();
        let code = code_only(&fs::read_to_string(file).expect("readable source"));
        for target in referenced_paths(&module, &code, &exists) {
            if let Some(to) = folder(&target)
                && to != from
            {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(relative.display().to_string());
            }
        }
    }
    graph
}

/// One cycle in the graph, as the folders along it (first repeated last).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next.as_str()) {
                Some(Mark::Open) => {
                    let start = stack.iter().position(|n| n == next).expect("on the stack");
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, marks, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node)
            && let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

fn edges(graph: &Graph) -> BTreeMap<String, BTreeSet<String>> {
    graph
        .iter()
        .map(|(from, to)| (from.clone(), to.keys().cloned().collect()))
        .collect()
}

fn show(graph: &Graph) -> String {
    let mut out = String::new();
    for (from, to) in graph {
        let targets: Vec<&str> = to.keys().map(String::as_str).collect();
        out.push_str(&format!("{from} → {}\n", targets.join(", ")));
    }
    out
}

#[test]
fn no_import_cycle_between_folders() {
    let graph = folder_graph(&src());
    println!("{}", show(&graph));
    if let Some(cycle) = find_cycle(&edges(&graph)) {
        let mut why = String::new();
        for pair in cycle.windows(2) {
            let files = &graph[&pair[0]][&pair[1]];
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            why.push_str(&format!(
                "\n  {} → {} ({})",
                pair[0],
                pair[1],
                files.join(", ")
            ));
        }
        panic!("import cycle: {}{why}", cycle.join(" → "));
    }
}

#[test]
fn imports_go_down_the_floors() {
    let floor_of = |folder: &str| FLOORS.iter().position(|floor| floor.contains(&folder));
    let graph = folder_graph(&src());
    let mut wrong = Vec::new();
    for (from, to) in &graph {
        let Some(from_floor) = floor_of(from) else {
            wrong.push(format!("{from} is on no floor (add it to FLOORS)"));
            continue;
        };
        for (target, files) in to {
            match floor_of(target) {
                None => wrong.push(format!("{target} is on no floor (add it to FLOORS)")),
                Some(floor) if floor < from_floor => {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    wrong.push(format!(
                        "{from} imports {target}, a floor above it ({})",
                        files.join(", ")
                    ));
                }
                Some(_) => {}
            }
            if FACES.contains(&from.as_str()) && FACES.contains(&target.as_str()) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                wrong.push(format!(
                    "{from} imports the face {target} ({})",
                    files.join(", ")
                ));
            }
            if FACES.contains(&from.as_str())
                && (target == "backends" || target.starts_with("backends/"))
            {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                wrong.push(format!(
                    "{from} imports {target} instead of starting through app ({})",
                    files.join(", ")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_file_is_over_the_line_limit() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut long = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(&root)
            .expect("under src")
            .display()
            .to_string();
        let lines = fs::read_to_string(&file)
            .expect("readable source")
            .lines()
            .count();
        if lines > MAX_LINES {
            long.push(format!("src/{relative}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn only_app_reads_the_environment() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let reads = [
        "env::var(",
        "env::var_os(",
        "env::vars(",
        "env::vars_os(",
        "env::current_dir(",
        "env::home_dir(",
        "env::temp_dir(",
    ];
    let mut found = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(&root)
            .expect("under src")
            .display()
            .to_string();
        if relative == ENVIRONMENT_READER {
            continue;
        }
        let code = code_only(&fs::read_to_string(&file).expect("readable source"));
        for (number, line) in code.lines().enumerate() {
            let compact: String = line.split_whitespace().collect();
            if reads.iter().any(|read| compact.contains(read)) {
                found.push(format!("src/{relative}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the environment is read in {ENVIRONMENT_READER} only:\n{}",
        found.join("\n")
    );
}

#[cfg(test)]
mod finder {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            graph.entry((*to).to_owned()).or_default();
        }
        graph
    }

    #[test]
    fn a_planted_cycle_is_found_and_a_layered_graph_passes() {
        let layered = graph(&[
            ("lsp", "app"),
            ("app", "broker"),
            ("broker", "settings"),
            ("lsp", "settings"),
        ]);
        assert_eq!(find_cycle(&layered), None);
        let planted = graph(&[
            ("lsp", "app"),
            ("app", "broker"),
            ("broker", "settings"),
            ("settings", "app"),
        ]);
        assert_eq!(
            find_cycle(&planted),
            Some(vec![
                "app".into(),
                "broker".into(),
                "settings".into(),
                "app".into()
            ])
        );
        assert_eq!(
            find_cycle(&graph(&[("a", "a")])),
            Some(vec!["a".into(), "a".into()])
        );
    }

    #[test]
    fn imports_are_read_from_code_not_comments_or_strings() {
        let modules: BTreeSet<Vec<String>> = [
            vec!["backends"],
            vec!["backends", "net"],
            vec!["backends", "net", "http"],
            vec!["backends", "opencode"],
            vec!["broker"],
            vec!["settings"],
            vec!["prompt"],
        ]
        .into_iter()
        .map(|m| m.into_iter().map(String::from).collect())
        .collect();
        let exists = |module: &[String]| modules.contains(module);
        let code = code_only(
            "//! See [`crate::broker`].\n\
             use super::net::http::{self, Peer};\n\
             use crate::{prompt::Prompt, settings::Secret};\n\
             const URL: &str = \"crate::broker::x\";\n\
             fn f() { let c = '\"'; crate::backends::BackendError::NotFound; }\n\
             mod tests { use super::*; use crate::broker::Fake; }\n",
        );
        let module: Vec<String> = vec!["backends".into(), "opencode".into()];
        let found: BTreeSet<Vec<String>> = referenced_paths(&module, &code, &exists)
            .into_iter()
            .collect();
        let want: BTreeSet<Vec<String>> = [
            vec!["backends", "net", "http"],
            vec!["prompt"],
            vec!["settings"],
            vec!["backends"],
            vec!["backends", "opencode"],
            vec!["broker"],
        ]
        .into_iter()
        .map(|m| m.into_iter().map(String::from).collect())
        .collect();
        assert_eq!(found, want);
    }
}
