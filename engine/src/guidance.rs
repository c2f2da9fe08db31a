//! Human guidance as data: what a watcher asks for, why it is refused, and what a
//! run received. A leaf module: the simulation applies requests
//! (`Sim::guide`), a console queues them (the `live` module), results
//! count them.

use serde::{Deserialize, Serialize};

/// Longest free-text guidance message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// Longest name of whoever guides, in characters.
pub const MAX_BY_CHARS: usize = 64;

/// What a watcher asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuidanceKind {
    /// The task's next hint tier.
    NextHint,
    /// A free-text message.
    Message(String),
}

/// Guidance from a watcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuidanceRequest {
    /// Who sends it (recorded).
    pub by: String,
    /// The task it is about (needed for a hint).
    pub task: Option<String>,
    /// What it is.
    pub kind: GuidanceKind,
}

/// Why guidance is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuideError {
    /// No task has that key, or it has not been released yet (the two are not
    /// told apart: that would tell a watcher which tasks are still to come).
    #[error("no released task `{0}`")]
    UnknownTask(String),
    /// Every hint tier of the task was given already.
    #[error("task `{0}` has no more hint tiers")]
    NoMoreTiers(String),
    /// A hint needs a task.
    #[error("a hint needs a task")]
    NeedsTask,
    /// The message is empty.
    #[error("the message is empty")]
    Empty,
    /// The message or the sender's name is too long.
    #[error("too long: {0}")]
    TooLong(String),
    /// The run is over.
    #[error("the run is over")]
    Over,
}

impl GuidanceRequest {
    /// Checks what does not depend on the world: sender and message.
    pub fn check_shape(&self) -> Result<(), GuideError> {
        if self.by.trim().is_empty() {
            return Err(GuideError::Empty);
        }
        if self.by.chars().count() > MAX_BY_CHARS {
            return Err(GuideError::TooLong(format!(
                "the sender's name has more than {MAX_BY_CHARS} characters"
            )));
        }
        match &self.kind {
            GuidanceKind::NextHint if self.task.is_none() => Err(GuideError::NeedsTask),
            GuidanceKind::Message(m) if m.trim().is_empty() => Err(GuideError::Empty),
            GuidanceKind::Message(m) if m.chars().count() > MAX_MESSAGE_CHARS => {
                Err(GuideError::TooLong(format!(
                    "the message has more than {MAX_MESSAGE_CHARS} characters"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Human guidance received about one task (or about none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuidanceCount {
    /// Hint tiers given by guidance.
    pub hints: u32,
    /// Free-text messages.
    pub messages: u32,
    /// The highest hint tier the task has been given, up front or by guidance (0:
    /// none).
    pub top_tier: u8,
}

impl GuidanceCount {
    /// Whether nothing was received.
    pub fn is_empty(&self) -> bool {
        self.hints == 0 && self.messages == 0
    }
}
