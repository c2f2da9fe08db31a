//! What happens at a time: the payload of the event queue, recorded in `event`
//! trajectory lines (so the world and the trajectory both name it).

use serde::{Deserialize, Serialize};

/// Something that happens at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SimEvent {
    /// A task becomes known.
    Release {
        /// Task key.
        task: String,
    },
    /// A meeting starts (interrupt).
    MeetingStart {
        /// Meeting key.
        meeting: String,
    },
    /// Announcements are made in a meeting.
    MeetingAnnounce {
        /// Meeting key.
        meeting: String,
    },
    /// A meeting ends.
    MeetingEnd {
        /// Meeting key.
        meeting: String,
    },
    /// A message reaches the intern.
    Deliver {
        /// Thread key.
        thread: String,
        /// Sender key.
        from: String,
        /// Text.
        text: String,
        /// Clues disclosed by it.
        clues: Vec<String>,
    },
    /// A scheduled file change.
    FileChange {
        /// Path.
        path: String,
        /// Index into the scenario's events.
        event: usize,
    },
    /// A task's deadline.
    Deadline {
        /// Task key.
        task: String,
    },
    /// A working day starts (from the second day on).
    DayStart {
        /// Day number, from 1.
        day: u32,
    },
    /// A working day ends.
    DayEnd {
        /// Day number, from 1.
        day: u32,
    },
}
