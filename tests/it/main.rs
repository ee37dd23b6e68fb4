//! Every integration test, in one binary (as rust-analyzer keeps its
//! slow tests): one module per area, so a change links the crate once,
//! not once per file. `tests/README.md` maps behaviours to modules;
//! `cargo test --test it MODULE::` runs one area.

mod bad_input;
mod bounds;
mod claude_hook;
mod codex_acp;
mod codex_daemon;
mod codex_hook;
mod common;
mod config_updates;
mod consent;
mod copilot_hook;
mod directories;
mod discovery;
mod editors_mason;
mod faults;
mod floors;
mod gemini_acp;
mod hook;
mod hook_socket;
mod i18n;
mod lsp_extension;
mod lsp_plain;
mod lsp_transport;
mod notify;
mod opencode2;
mod opencode2_discovery;
mod opencode2_forms;
mod opencode_drift;
#[path = "../opencode/harness.rs"]
mod opencode_harness;
mod opencode_next_routes;
mod permissions;
mod policies;
mod qwen_hook;
mod real_opencode;
mod real_opencode_next;
mod sandbox_agent;
mod stalled_client;
mod status;
mod terminal;
mod terminal_line;
mod tls;
