//! A tool call, its structured error and its attachments.

use serde::{Deserialize, Serialize};

/// A tool call as an agent makes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id (echoed in the result).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// Kinds of tool failure, counted per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No such tool.
    UnknownTool,
    /// Arguments are not JSON.
    MalformedJson,
    /// Arguments do not fit the schema.
    Schema,
    /// An attempt to act as someone else.
    Impersonation,
    /// A path outside the roots.
    Path,
    /// A write to the read-only drive, or an action on someone else's booking.
    Permission,
    /// The thing named does not exist.
    NotFound,
    /// The request is well-formed but not possible now.
    Invalid,
    /// A facility is unavailable on this machine (e.g. no Python sandbox).
    Unavailable,
    /// The run is over.
    RunOver,
}

impl ErrorKind {
    /// snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::MalformedJson => "malformed_json",
            ErrorKind::Schema => "schema",
            ErrorKind::Impersonation => "impersonation",
            ErrorKind::Path => "path",
            ErrorKind::Permission => "permission",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::RunOver => "run_over",
        }
    }
}

/// A structured tool error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    /// Kind.
    pub kind: ErrorKind,
    /// What went wrong and what to do instead.
    pub message: String,
}

impl ToolError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }
}

/// An image or other binary returned with a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// MIME type.
    pub mime: String,
    /// Base64 bytes.
    pub data: String,
}
