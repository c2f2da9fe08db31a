//! What the agent observes and what it decides.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Attachment, Notification, ToolCall, ToolError};
use crate::time::SimTime;

/// What the agent is told at the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Briefing {
    /// The agent's name.
    pub you: String,
    /// The agent's key.
    pub key: String,
    /// Department.
    pub department: String,
    /// Manager's name.
    pub manager: String,
    /// Company name.
    pub company: String,
    /// Start of the working day (`YYYY-MM-DDTHH:MM:SS`, accepted by the tools).
    pub day_starts: String,
    /// End of the working day (`YYYY-MM-DDTHH:MM:SS`).
    pub day_ends: String,
}

/// One tool result as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Simulated time after the call, as shown to agents.
    pub time: String,
    /// Seconds since the epoch after the call.
    pub t: SimTime,
    /// The value (on success), written with its keys sorted.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        serialize_with = "super::sorted_json::option"
    )]
    pub result: Option<Value>,
    /// The error (on failure).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<ToolError>,
    /// Images and other binaries.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub attachments: Vec<Attachment>,
    /// Notifications since the previous result.
    pub notifications: Vec<Notification>,
}

/// What the agent observes before each decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Decisions made so far.
    pub step: u64,
    /// Current time, shown to agents.
    pub time: String,
    /// Seconds since the epoch.
    pub t: SimTime,
    /// On the first observation only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub briefing: Option<Briefing>,
    /// Results of the previous decision's calls.
    pub results: Vec<ToolResult>,
    /// Notifications not attached to a result (start of day; a decision with no calls).
    pub notifications: Vec<Notification>,
    /// Whether the run is over.
    pub over: bool,
}

/// An agent's decision: tool calls to make now, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Calls.
    pub calls: Vec<ToolCall>,
}
