//! What the command line (`src/main.rs`) says to a person: the help texts
//! and the usage errors, in the locale in force. Flags, commands and option
//! names stay as typed in every language.

use super::i18n::tr;

/// A help text: the program's or one command's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Main,
    Lsp,
    Watch,
    Status,
    Hook,
}

pub fn usage(usage: Usage) -> String {
    match usage {
        Usage::Main => tr!("cli.usage"),
        Usage::Lsp => tr!("cli.usage.lsp"),
        Usage::Watch => tr!("cli.usage.watch"),
        Usage::Status => tr!("cli.usage.status"),
        Usage::Hook => tr!("cli.usage.hook"),
    }
}

/// Said on stderr when the LSP server is started from a terminal.
pub fn try_it() -> String {
    tr!("cli.try_it")
}

pub fn unknown_command(command: &str) -> String {
    tr!(
        "cli.unknown_command",
        command = format!("{command:?}"),
        usage = usage(Usage::Main)
    )
}

pub fn unexpected_argument(argument: &str, of: Usage) -> String {
    tr!(
        "cli.unexpected_argument",
        argument = format!("{argument:?}"),
        usage = usage(of)
    )
}

pub fn unknown_option(option: &str, of: Usage) -> String {
    tr!(
        "cli.unknown_option",
        option = format!("{option:?}"),
        usage = usage(of)
    )
}

pub fn locale_needs_value() -> String {
    tr!("cli.locale_needs_value")
}

pub fn needs_value(flag: &str) -> String {
    tr!("cli.needs_value", flag = flag)
}

pub fn not_a_number(flag: &str, value: &str) -> String {
    tr!(
        "cli.not_a_number",
        flag = flag,
        value = format!("{value:?}")
    )
}

/// `--directory` or `--codex-home`: a path that cannot be made absolute.
pub fn bad_path(flag: &str, value: &str, error: &std::io::Error) -> String {
    tr!(
        "cli.bad_path",
        flag = flag,
        value = format!("{value:?}"),
        error = error
    )
}

pub fn bad_notify(value: &str) -> String {
    tr!("cli.bad_notify", value = format!("{value:?}"))
}

pub fn bad_policy_json(error: &serde_json::Error) -> String {
    tr!("cli.bad_policy_json", error = error)
}

pub fn policy_json_not_object() -> String {
    tr!("cli.policy_json_not_object")
}

pub fn which_agent() -> String {
    tr!("cli.which_agent", usage = usage(Usage::Hook))
}
