//! What the agent is told between tool results, and task priorities.

use serde::{Deserialize, Serialize};

/// Task priority, shown to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Can wait.
    Low,
    /// The default.
    #[default]
    Normal,
    /// Do before normal work.
    High,
    /// Drop everything.
    Urgent,
}

/// What the agent is told between tool results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Notification {
    /// A new message.
    Message {
        /// When.
        at: String,
        /// Thread key.
        thread: String,
        /// Sender key.
        from: String,
        /// Sender name.
        from_name: String,
        /// Text.
        text: String,
    },
    /// A task was released.
    TaskReleased {
        /// When.
        at: String,
        /// Task key.
        task: String,
        /// Title.
        title: String,
        /// Objective.
        objective: String,
        /// Who assigned it.
        assigned_by: String,
        /// Deadline.
        deadline: String,
        /// Priority.
        priority: Priority,
        /// Hints given up front (by the hint policy).
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        hints: Vec<String>,
    },
    /// A meeting the intern is invited to starts now.
    MeetingStarting {
        /// When.
        at: String,
        /// Meeting key.
        meeting: String,
        /// Title.
        title: String,
        /// Room name.
        room: String,
        /// End time.
        ends: String,
    },
    /// Something was said in a meeting the intern attends.
    Announcement {
        /// When.
        at: String,
        /// Meeting key.
        meeting: String,
        /// Text.
        text: String,
    },
    /// A meeting the intern attended ended.
    MeetingEnded {
        /// When.
        at: String,
        /// Meeting key.
        meeting: String,
    },
    /// A file appeared.
    FileAdded {
        /// When.
        at: String,
        /// Path.
        path: String,
    },
    /// A released task's deadline passed.
    DeadlinePassed {
        /// When.
        at: String,
        /// Task key.
        task: String,
        /// Title.
        title: String,
    },
    /// A working day is over.
    DayEnded {
        /// When.
        at: String,
        /// Day number, from 1.
        day: u32,
        /// Whether another day follows.
        more_days: bool,
    },
    /// Guidance from a human mentor watching the run (a task's next hint tier or a
    /// free-text message), sent from the console.
    Guidance {
        /// When.
        at: String,
        /// Who sent it (the mentor's display name).
        from: String,
        /// The task it is about, if any.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        task: Option<String>,
        /// The hint tier (1 is the first), for a hint.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        tier: Option<u8>,
        /// The hint or the message.
        text: String,
    },
    /// A new working day starts, with the mentor's feedback on finished work.
    DayStarted {
        /// When.
        at: String,
        /// Day number, from 1.
        day: u32,
        /// Mentor feedback (empty under the `none` policy).
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        feedback: Vec<String>,
    },
}
