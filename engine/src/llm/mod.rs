//! Talking to models over OpenAI-compatible chat-completions APIs.
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
//! [`crate::agent::llm::LlmAgent`] puts them together; [`npc::LlmNpc`] plays
//! colleagues with a model, through a content-addressed reply cache.
//!
//! The simulation stays synchronous and deterministic: model calls happen between
//! decisions (the agent) or block inside a tool call (colleagues), and their requests
//! and responses are recorded in the trajectory, so replay needs no network. API keys
//! live only in [`config::ApiKey`], whose `Debug` hides them, and are scrubbed from
//! every recorded error message.

pub mod client;
pub mod colleague;
pub mod config;
pub mod history;
pub mod message;
pub mod prompt;
pub mod reply;

pub use client::{CallOutcome, HttpModel, LlmError, ModelCaller};
pub use config::{ApiConfig, ConfigError, ModelConfig};
