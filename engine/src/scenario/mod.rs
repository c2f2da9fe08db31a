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
    /// An answer judged against the task's own data by a domain checker, for
    /// optimisation tasks whose right answers cannot all be listed (any optimal
    /// selection, any feasible outing).
    Domain(Box<DomainCheck>),
}

/// The registry of domain checkers (DESIGN.md §3). Each is a total function of the
/// answer file and the data stored here; nothing is read from the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DomainCheck {
    /// A selection of items under a spending limit (ADs strategy).
    Budget(BudgetCheck),
    /// A one-day outing: morning site, lunch, afternoon site (event planning).
    Outing(OutingCheck),
    /// The string at `pointer` is a `YYYY-MM-DD` date from `first` to `last` inclusive.
    DateIn {
        /// Workspace JSON file.
        path: String,
        /// JSON pointer to the date.
        pointer: String,
        /// First acceptable date.
        first: String,
        /// Last acceptable date.
        last: String,
    },
}

/// A budgeted selection: the JSON at `path` lists item ids at `selection`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetCheck {
    /// Workspace JSON file.
    pub path: String,
    /// JSON pointer to the array of selected ids.
    pub selection: String,
    /// What this checkpoint requires.
    pub aspect: BudgetAspect,
    /// Spending limit, inclusive.
    pub capacity: u64,
    /// The best total value within the limit; validation recomputes it exactly.
    pub best: f64,
    /// The items: `(id, cost, value)`, values with at most two decimals.
    pub items: Vec<(String, u64, f64)>,
}

/// What a [`BudgetCheck`] requires; each aspect includes the ones before it except
/// that `Valid` is the only one that allows overspending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BudgetAspect {
    /// A non-empty list of distinct known ids (case-insensitive).
    Valid,
    /// Valid, and the selection's total cost is within the limit.
    WithinCapacity,
    /// Within the limit, and the number at `pointer` is the selection's total cost
    /// within `relative` of it.
    Cost {
        /// JSON pointer to the reported total cost.
        pointer: String,
        /// Relative tolerance, e.g. 0.01.
        relative: f64,
    },
    /// Within the limit, and the number at `pointer` is the selection's total value
    /// within `relative` of it.
    Value {
        /// JSON pointer to the reported total value.
        pointer: String,
        /// Relative tolerance, e.g. 0.05.
        relative: f64,
    },
    /// Within the limit, and the selection's total value is at least `best - tolerance`
    /// (any optimal selection passes).
    Optimal {
        /// Absolute tolerance on the total value.
        tolerance: f64,
    },
}

/// A one-day outing from a base: depart, travel to a morning site, stay, travel to a
/// restaurant, stay, travel to a different afternoon site, stay, travel back. The
/// answer file holds `plan` (`{"morning", "lunch", "afternoon"}`, names), `metrics`
/// (`{"interest", "cost", "distance", "score"}`), `end_time` (`HH:MM`) and
/// `can_complete_on_time` (boolean), as the aspect needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutingCheck {
    /// Workspace JSON file.
    pub path: String,
    /// What this checkpoint requires.
    pub aspect: OutingAspect,
    /// The outing judged: this one `(morning, lunch, afternoon)` when the task gives
    /// it, else the one the answer names at `/plan`.
    #[serde(default)]
    pub given: Option<(String, String, String)>,
    /// The places, roads and timetable.
    pub map: OutingMap,
}

/// Everything an outing's metrics depend on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutingMap {
    /// Where every outing starts and ends.
    pub base: String,
    /// Sites: `(name, ticket price on the day, interest)`.
    pub sites: Vec<(String, u32, f64)>,
    /// Restaurants: `(name, price per person, interest)`.
    pub restaurants: Vec<(String, u32, f64)>,
    /// Roads: `(one end, other end, km)`; legs follow shortest paths.
    pub roads: Vec<(String, String, f64)>,
    /// Departure, `HH:MM`.
    pub depart: String,
    /// Travel speed; a leg of `km` takes `ceil(km / speed * 60)` minutes.
    pub speed_kmh: u32,
    /// Minutes at the morning site, the restaurant and the afternoon site.
    pub stays: (u32, u32, u32),
}

/// What an [`OutingCheck`] requires. Every aspect needs the judged outing to be
/// feasible (known names, two different sites).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OutingAspect {
    /// `/plan` names a feasible outing, and the given one when there is one.
    Plan,
    /// `/metrics/<metric>` is the outing's value within `tolerance`.
    Metric {
        /// Which metric.
        metric: OutingMetric,
        /// Absolute tolerance.
        tolerance: f64,
    },
    /// `/end_time` is the outing's return time within `minutes`.
    EndTime {
        /// Tolerance in minutes.
        minutes: u32,
    },
    /// `/can_complete_on_time` says whether the outing is back by `limit` (`HH:MM`).
    OnTime {
        /// The latest acceptable return.
        limit: String,
    },
    /// The outing is among the best of all feasible outings for `metric` (ties pass).
    Optimal {
        /// Which metric.
        metric: OutingMetric,
    },
}

/// An outing's metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutingMetric {
    /// Sum of the three places' interest ratings (higher is better).
    Interest,
    /// Two tickets and the meal (lower is better).
    Cost,
    /// Kilometres on the four legs (lower is better).
    Distance,
    /// `0.4 (1 - cost') + 0.4 interest' + 0.2 (1 - distance')`, each primed value
    /// min-max normalised over every feasible outing (0.5 when all are equal);
    /// higher is better.
    Score,
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
