//! # tbsim-model — talking to models over OpenAI-compatible chat-completions APIs
//!
//! The only tbsim crate with the HTTP/TLS stack (reqwest, rustls, tokio). It sits on
//! `tbsim-core` and `tbsim-engine` (the `Agent` and `NpcEngine` traits it
//! implements) and nothing above them.
//!
//! ## Model
//!
//! The paper's protocol splits a model-backed agent into three replaceable parts,
//! and so does this module:
//!
//! * **Prompt construction** ([`prompt::PromptBuilder`]): the system prompt, the
//!   opening and new-day messages, the per-round status message, and the prompts of
//!   the summary, reflection and colleague calls. [`prompt::Templates`] fills text
//!   templates (`content/prompts/*.md`, overridable per file with `--prompts <DIR>`).
//! * **History handling** ([`history::HistoryPolicy`]): when the conversation grows
//!   past a token threshold, a span of older messages is replaced by a summary the
//!   model writes ([`history::SummaryPolicy`]).
//! * **Model calling** ([`client::ModelCaller`]): one request in, one response out,
//!   with retries. [`client::HttpModel`] posts to `{base_url}/chat/completions` with
//!   reqwest (rustls) on a tokio runtime, retrying 429, 5xx, timeouts and connection
//!   failures with seeded exponential backoff and honouring `Retry-After`.
//!
//! [`agent::LlmAgent`] puts them together; [`colleague::LlmNpc`] plays
//! colleagues with a model, through a content-addressed reply cache.
//!
//! The simulation stays synchronous and deterministic: model calls happen between
//! decisions (the agent) or block inside a tool call (colleagues), and their requests
//! and responses are recorded in the trajectory, so replay needs no network. API keys
//! live only in [`config::ApiKey`], whose `Debug` hides them, and are scrubbed from
//! every recorded error message.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod client;
pub mod colleague;
pub mod config;
pub mod history;
pub mod message;
pub mod prompt;
pub mod reply;

pub use agent::LlmAgent;
pub use client::{CallOutcome, HttpModel, LlmError, ModelCaller};
pub use config::{ApiConfig, ConfigError, ModelConfig};
