//! ask-lsp: brings an AI coding agent's questions into the editor over LSP.
//!
//! Data flows one way: a backend turns the agent server's events into
//! [`backend::BackendEvent`]s, the [`broker`] owns the pending questions and
//! applies [`policy`], a presenter ([`lsp`] or [`terminal`]) shows them, and
//! answers go back through the broker to the backend exactly once.

pub mod backend;
pub mod broker;
pub mod config;
pub mod demo;
pub mod lsp;
pub mod model;
pub mod opencode;
pub mod policy;
pub mod sandbox_agent;
pub mod sim;
pub mod sse;
pub mod terminal;
