//! The scenario file format.
//!
//! A scenario is one self-contained RON document: the company and its people, the
//! shared drive and workspace files, rooms, meetings, tasks (with their checkpoints,
//! clues, hints, feedback and oracle plan) and timed world events. `tbsim run` needs
//! nothing else. Every type denies unknown fields, so a typo is an error with a
//! position rather than a silently ignored field.
//!
//! Times are written as `YYYY-MM-DDTHH:MM` (or `HH:MM`, meaning the first day) and are
//! converted to integer [`SimTime`](crate::time::SimTime) at load time.

mod load;
mod validate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) use load::syntax_error;
pub use load::{
    ErrorCode, LoadedScenario, Location, ScenarioError, ScenarioErrors, load_file, parse_str,
};
pub use validate::validate;

/// A whole scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used for run directories.
    pub name: String,
    /// What the scenario exercises (for humans).
    #[serde(default)]
    pub description: String,
    /// Default master seed for runtime randomness (NPC reply delays).
    pub seed: u64,
    /// Working hours, tool costs.
    pub clock: ClockSpec,
    /// The company and its people.
    pub company: Company,
    /// The agent's own identity.
    pub intern: Intern,
    /// Meeting rooms.
    #[serde(default)]
    pub rooms: Vec<Room>,
    /// Files on the shared drive (`drive/...`) and in the workspace (`workspace/...`).
    #[serde(default)]
    pub files: Vec<FileSpec>,
    /// Meetings on the calendar at the start.
    #[serde(default)]
    pub meetings: Vec<MeetingSpec>,
    /// The work.
    pub tasks: Vec<TaskSpec>,
    /// Scheduled world changes.
    #[serde(default)]
    pub events: Vec<TimedEvent>,
}

/// Clock settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    /// When the agent starts working (`YYYY-MM-DDTHH:MM`); its date is the epoch.
    pub start: String,
    /// When the working day ends and the run stops.
    pub end: String,
    /// Earliest meeting start on any day (`HH:MM`).
    #[serde(default = "default_open")]
    pub office_open: String,
    /// Latest meeting end on any day (`HH:MM`).
    #[serde(default = "default_close")]
    pub office_close: String,
    /// Per-tool costs in minutes, overriding the defaults.
    #[serde(default)]
    pub costs: BTreeMap<String, u32>,
    /// Simulated seconds charged for each agent decision ("thinking time").
    #[serde(default)]
    pub turn_cost_secs: u32,
}

fn default_open() -> String {
    "09:00".into()
}
fn default_close() -> String {
    "18:00".into()
}

/// The company.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Company {
    /// Display name.
    pub name: String,
    /// Every colleague the agent can talk to.
    pub people: Vec<Person>,
}

/// A colleague (an NPC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    /// Stable key, `npc/<slug>`.
    pub key: String,
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
    /// Job title.
    pub position: String,
    /// Flavour text for model-played NPCs.
    #[serde(default)]
    pub persona: String,
    /// Reply when asked about something the person does not know.
    #[serde(default)]
    pub default_reply: Option<String>,
    /// Reply delay range in minutes, inclusive (default 2..=8).
    #[serde(default)]
    pub reply_minutes: Option<(u32, u32)>,
    /// What the person knows, and when they say it.
    #[serde(default)]
    pub clues: Vec<Clue>,
}

/// A fact an NPC discloses when asked about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clue {
    /// Stable key, `clue/<slug>`.
    pub key: String,
    /// The task this clue serves, if any.
    #[serde(default)]
    pub task: Option<String>,
    /// Groups of alternatives: the message must mention one alternative of every
    /// group. Matching is on word stems and built-in synonyms, not exact sentences.
    pub trigger: Vec<Vec<String>>,
    /// Conditions that must all hold before the clue can be disclosed.
    #[serde(default)]
    pub after: Vec<Condition>,
    /// What the NPC says.
    pub response: String,
}

/// A condition on the world's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Condition {
    /// Another clue has been disclosed to the agent.
    Disclosed(String),
    /// A task has been released.
    Released(String),
    /// A checkpoint has passed.
    Passed {
        /// Task key.
        task: String,
        /// Checkpoint key within the task.
        checkpoint: String,
    },
}

/// The agent's identity in the company.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intern {
    /// Stable key, `agent/<slug>`.
    pub key: String,
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
    /// The agent's manager (a person key).
    pub manager: String,
}

/// A meeting room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Room {
    /// Stable key, `room/<slug>`.
    pub key: String,
    /// Display name.
    pub name: String,
    /// Seats.
    pub capacity: u32,
}

/// A file placed in the world at the start (or by a timed event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// `drive/...` (read-only shared drive) or `workspace/...` (the agent's own).
    pub path: String,
    /// The bytes.
    pub content: Content,
}

/// File content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Content {
    /// UTF-8 text, inline.
    Text(String),
    /// Bytes in a sidecar file next to the scenario, checked by BLAKE3 hash.
    Sidecar {
        /// Path relative to the scenario file's directory.
        path: String,
        /// Lowercase hex BLAKE3 of the bytes.
        blake3: String,
    },
    /// A raster image drawn from a recipe and rendered to PNG bytes when the world
    /// is built ([`crate::render`]); the same recipe always gives the same bytes.
    Drawing(Drawing),
}

/// A raster image as a readable recipe: a canvas, a background colour and shapes
/// painted in order (later shapes cover earlier ones). Coordinates are pixels from
/// the top-left corner; colours are `#rrggbb`. Shapes are tuples so that a picture
/// of hundreds of cells stays one line per shape in RON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drawing {
    /// Width in pixels (1-2048).
    pub width: u32,
    /// Height in pixels (1-2048).
    pub height: u32,
    /// Background colour, `#rrggbb`.
    pub background: String,
    /// Shapes, painted in order.
    #[serde(default)]
    pub shapes: Vec<Shape>,
}

/// One painted shape. Parts outside the canvas are clipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// A filled rectangle: `Rect(left, top, width, height, fill)`.
    Rect(i32, i32, u32, u32, String),
    /// A straight line with square ends: `Line(x1, y1, x2, y2, thickness, colour)`.
    Line(i32, i32, i32, i32, u32, String),
    /// A filled disc: `Disc(centre x, centre y, radius, fill)`.
    Disc(i32, i32, u32, String),
    /// Text in the built-in 5x7 font (letters are drawn upper-case), each font pixel
    /// `scale` pixels wide: `Text(left, top, scale, colour, text)`.
    Text(i32, i32, u32, String, String),
}

/// A meeting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeetingSpec {
    /// Stable key, `meeting/<slug>`.
    pub key: String,
    /// Title shown on calendars.
    pub title: String,
    /// Room key.
    pub room: String,
    /// Start time.
    pub start: String,
    /// End time.
    pub end: String,
    /// Organiser (person key).
    pub organizer: String,
    /// Invitees (person keys, or the intern's key).
    pub attendees: Vec<String>,
    /// Agenda shown on the calendar.
    #[serde(default)]
    pub agenda: String,
    /// Minutes after the start at which announcements are made to those present.
    #[serde(default = "default_announce")]
    pub announce_after_min: u32,
    /// How many minutes before the start one may join.
    #[serde(default = "default_tolerance")]
    pub early_tolerance_min: u32,
    /// How many minutes after the start joining still counts as on time.
    #[serde(default = "default_tolerance")]
    pub late_tolerance_min: u32,
    /// What is said in the meeting, besides task announcements.
    #[serde(default)]
    pub notes: String,
}

fn default_announce() -> u32 {
    5
}
fn default_tolerance() -> u32 {
    5
}

/// How difficult a task is (see `content/README.md` for the rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    /// Short plan, shallow clues.
    Easy,
    /// Long plan or clues behind other clues.
    Hard,
}

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

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Stable key, `task/<slug>`.
    pub key: String,
    /// Meta-task family (e.g. `kb_fix`).
    pub family: String,
    /// Variant key within the family (e.g. `kb_fix/hard`).
    pub variant: String,
    /// Difficulty label.
    pub difficulty: Difficulty,
    /// Short title.
    pub title: String,
    /// What the agent is told.
    pub objective: String,
    /// Who assigned it (person key).
    pub assigned_by: String,
    /// When the agent learns of it.
    pub release: Release,
    /// When its checkpoints freeze.
    pub deadline: String,
    /// Priority.
    #[serde(default)]
    pub priority: Priority,
    /// How it is scored.
    pub checkpoints: Vec<CheckpointSpec>,
    /// Tiered hints, vaguest first.
    #[serde(default)]
    pub hints: Vec<String>,
    /// How the oracle solves it (hidden from the agent).
    #[serde(default)]
    pub plan: Vec<PlanStep>,
}

/// When a task becomes known to the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Release {
    /// At the start of the run.
    Start,
    /// At a time.
    At(String),
    /// As soon as another task's checkpoint passes.
    AfterCheckpoint {
        /// Task key.
        task: String,
        /// Checkpoint key.
        checkpoint: String,
    },
    /// Announced in a meeting, to those present at the announcement.
    InMeeting(String),
}

/// One scored checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSpec {
    /// Key, unique within the task.
    pub key: String,
    /// What it checks, in words.
    pub description: String,
    /// Weight in the task score.
    #[serde(default = "one")]
    pub weight: u32,
    /// The predicate.
    pub check: Check,
    /// Mentor feedback when it fails: what was missed and how to find it.
    pub feedback: String,
}

fn one() -> u32 {
    1
}

/// A typed predicate over world state and history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Check {
    /// A workspace file exists.
    FileExists {
        /// Workspace path.
        path: String,
    },
    /// A workspace file's text equals `expected`, ignoring line endings and
    /// trailing whitespace on lines and at the end.
    FileText {
        /// Workspace path.
        path: String,
        /// Expected text.
        expected: String,
    },
    /// A workspace file contains every `present` string and no `absent` string.
    FileContains {
        /// Workspace path.
        path: String,
        /// Substrings that must appear.
        present: Vec<String>,
        /// Substrings that must not appear.
        absent: Vec<String>,
    },
    /// A JSON file's array at `pointer` holds exactly the `expected` strings
    /// (as a set, trimmed, case-insensitive).
    JsonStringSet {
        /// Workspace path.
        path: String,
        /// JSON pointer (RFC 6901), e.g. `/abnormal_suppliers`.
        pointer: String,
        /// Expected members.
        expected: Vec<String>,
    },
    /// A JSON file's array at `pointer` holds records matching `expected` as a
    /// multiset: text fields case-insensitively, numbers within `tolerance`.
    JsonRecords {
        /// Workspace path.
        path: String,
        /// JSON pointer to the array.
        pointer: String,
        /// Expected records.
        expected: Vec<Record>,
        /// Absolute tolerance for numbers.
        tolerance: f64,
    },
    /// A JSON file's number at `pointer` is within `tolerance` of `expected`.
    JsonNumber {
        /// Workspace path.
        path: String,
        /// JSON pointer.
        pointer: String,
        /// Expected value.
        expected: f64,
        /// Absolute tolerance.
        tolerance: f64,
    },
    /// A JSON file has an array of strings or objects at `pointer` (the answer is
    /// well-formed, whatever its content).
    JsonArray {
        /// Workspace path.
        path: String,
        /// JSON pointer.
        pointer: String,
    },
    /// Every listed clue has been disclosed to the agent.
    Disclosed(Vec<String>),
    /// The agent joined the meeting within its tolerance window.
    Attended(String),
    /// The agent read or copied this drive file.
    Consulted(String),
    /// Every sub-check passes (and there is at least one).
    All(Vec<Check>),
}

/// An expected JSON record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Text fields.
    #[serde(default)]
    pub text: BTreeMap<String, String>,
    /// Numeric fields.
    #[serde(default)]
    pub numbers: BTreeMap<String, f64>,
}

/// One oracle step: a tool call, possibly waiting for a condition first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// What must hold before the call.
    #[serde(default)]
    pub gate: Gate,
    /// Tool name.
    pub tool: String,
    /// Arguments as a JSON object in text.
    pub args: String,
}

/// When a plan step may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Gate {
    /// As soon as the previous step is done.
    #[default]
    Ready,
    /// Not before this time.
    NotBefore(String),
    /// After a message from this person arrived (following the last message sent to them).
    ReplyFrom(String),
}

/// A scheduled world change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimedEvent {
    /// When it happens.
    pub at: String,
    /// What happens.
    pub change: WorldChange,
}

/// A change to the world at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WorldChange {
    /// A colleague messages the agent.
    Message {
        /// Person key.
        from: String,
        /// Text.
        text: String,
    },
    /// A file appears (or is replaced).
    File(FileSpec),
}
