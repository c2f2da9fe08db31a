//! The agent ⇄ engine protocol: everything an agent, a model, a front end (the CLI,
//! an MCP server, an HTTP session) and a trajectory reader exchange with the engine,
//! as plain data.
//!
//! * An agent receives an [`Observation`] (the first one carries a [`Briefing`]) and
//!   returns a [`Decision`]: [`ToolCall`]s to make now, in order. Each call comes back
//!   as a [`ToolResult`] in the next observation, with a [`ToolError`] of a counted
//!   [`ErrorKind`] when it is refused, and the [`Notification`]s since the previous
//!   result.
//! * The [`catalogue`] lists the tools (names, descriptions, JSON schemas, costs) as
//!   data; every front end shows the same catalogue and the engine enforces it. The
//!   schemas are derived from one typed argument struct per tool ([`args`]), which
//!   the engine also parses each call into.
//! * A run is set up by a [`SimConfig`] and ends for an [`EndReason`].
//! * A model-backed agent's calls are [`ModelRecord`]s over [`RequestBody`]s, with
//!   [`ModelUsage`]; [`arguments`] holds the size limit on call arguments and
//!   [`secrets`] the keys redacted from everything written.
//!
//! Nothing here knows about the world: this module imports only [`crate::time`].

pub mod args;
pub mod arguments;
mod call;
pub mod catalogue;
mod config;
mod model;
mod notification;
mod observation;
pub mod secrets;
pub mod sorted_json;

pub use args::ToolArgs;
pub use call::{Attachment, ErrorKind, ToolCall, ToolError};
pub use catalogue::{TOOL_NAMES, ToolSpec, catalogue};
pub use config::{EndReason, FeedbackPolicy, SimConfig};
pub use model::{CallTiming, ModelRecord, ModelUsage, RequestBody, TurnParts};
pub use notification::{Notification, Priority};
pub use observation::{Briefing, Decision, Observation, ToolResult};
