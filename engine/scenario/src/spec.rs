//! The scenario types: everything a scenario file holds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use tbsim_core::protocol::Priority;

/// A whole scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used for run directories.
    pub name: String,
    /// What the scenario exercises (for humans).
    #[serde(default)]
    pub description: String,
    /// What generated it (`tbsim-gen/<generator version>`), for regrading: a run's
    /// result names the scenario's hash and this, so stale content is recognisable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by: Option<String>,
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
    /// Monitored production services, reached through the monitoring tools. Omitted
    /// from files that have none, so scenarios without services keep their bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceSpec>,
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
    /// Working days: day `k` runs from `start` to `end` shifted by `k - 1` days. The
    /// company, its files and chat history persist; each day brings its own tasks.
    #[serde(default = "one")]
    pub days: u32,
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
    /// is built ([`Drawing::png`]); the same recipe always gives the same bytes.
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
    /// A CSV file has the `expected` table's header and number of rows, and in each
    /// listed column every cell matches the expected cell by position: where both
    /// cells parse as finite numbers, within `tolerance`; otherwise as trimmed text
    /// (so a blank expected cell must stay blank). Fields may be quoted (RFC 4180).
    CsvTable {
        /// Workspace path.
        path: String,
        /// The expected table as CSV text, header first.
        expected: String,
        /// Columns compared cell by cell (names from the expected header).
        columns: Vec<String>,
        /// Absolute tolerance for numeric cells.
        tolerance: f64,
    },
    /// Every listed clue has been disclosed to the agent.
    Disclosed(Vec<String>),
    /// The agent joined the meeting within its tolerance window.
    Attended(String),
    /// The agent read or copied this drive file.
    Consulted(String),
    /// Some meeting the intern booked (organised, not cancelled) meets every
    /// condition: it lies within the window and lasts at least `min_minutes`, and the
    /// optional title, invitation and attendance conditions hold. Invitees are
    /// compared by person key, so however the agent named them, only who was
    /// invited counts.
    Booked {
        /// Text the title must contain (case-insensitive), if any.
        #[serde(default)]
        title_contains: Option<String>,
        /// The meeting starts no earlier than this.
        window_start: String,
        /// The meeting ends no later than this.
        window_end: String,
        /// The meeting lasts at least this long.
        min_minutes: u32,
        /// People (keys) who must all be invited.
        #[serde(default)]
        must_invite: Vec<String>,
        /// People (keys) none of whom may be invited.
        #[serde(default)]
        must_not_invite: Vec<String>,
        /// When true, nobody outside `must_invite` may be invited.
        #[serde(default)]
        only_listed: bool,
        /// When set, the intern joined the meeting no later than this many minutes
        /// after its start.
        #[serde(default)]
        joined_within_min: Option<u32>,
    },
    /// The agent's own messages in its direct conversation with `to`, sent at or
    /// after `after`, together mention every `contains` string, and none of them
    /// mentions an `absent` string (so listing every candidate fails). Matching
    /// ignores case, runs of whitespace and thousands separators (`4,210` matches
    /// `4210`) and respects word boundaries (`421` does not match inside `4210`).
    /// Only the agent's messages count, never the colleague's.
    MessageSent {
        /// Person key.
        to: String,
        /// Strings that must be mentioned (at least one).
        contains: Vec<String>,
        /// Strings no counted message may mention.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        absent: Vec<String>,
        /// Only messages sent at or after this time count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<String>,
    },
    /// Every sub-check passes (and there is at least one).
    All(Vec<Check>),
    /// Whether the agent has called a tool (with well-formed arguments; refused calls
    /// count): with `called: true` it passes once it has, with `called: false` while it
    /// never has. A `called: false` check passes for an idle agent, so pair it with a
    /// positive check in an `All`.
    ToolCalled {
        /// Tool name.
        tool: String,
        /// Whether the call is required (`true`) or forbidden (`false`).
        called: bool,
    },
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
    /// Within the limit, maximal (no unselected item of positive value still fits),
    /// and the number at `pointer` is the selection's total cost within `relative` of it.
    Cost {
        /// JSON pointer to the reported total cost.
        pointer: String,
        /// Relative tolerance, e.g. 0.01.
        relative: f64,
    },
    /// Within the limit, maximal (as for `Cost`), and the number at `pointer` is the
    /// selection's total value within `relative` of it.
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

impl Scenario {
    /// Every file the scenario puts in the world: the starting ones, then those its
    /// timed events bring, in scenario order.
    pub fn all_files(&self) -> impl Iterator<Item = &FileSpec> {
        let timed = self.events.iter().filter_map(|e| match &e.change {
            WorldChange::File(f) => Some(f),
            WorldChange::Message { .. } => None,
        });
        self.files.iter().chain(timed)
    }
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

/// Names of the windows `page_load_times` reports, shortest first.
pub const PAGE_WINDOWS: [&str; 3] = ["last_hour", "last_24_hours", "last_7_days"];

/// A monitored production service, as the monitoring tools report it.
///
/// Everything here is a function of simulated time: a metric's value follows its
/// points, a page's load time per window follows its points, and a log line becomes
/// visible at its time. Nothing reads the wall clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Stable key, `service/<name>`.
    pub key: String,
    /// The name the tools use (e.g. `content-db-02`), unique in the scenario.
    pub name: String,
    /// What the service does, in words.
    pub role: String,
    /// Health metrics.
    #[serde(default)]
    pub metrics: Vec<MetricSpec>,
    /// Pages this service serves (front ends), with their load times.
    #[serde(default)]
    pub pages: Vec<PageSpec>,
    /// Log lines; each becomes visible at its time.
    #[serde(default)]
    pub logs: Vec<LogLine>,
}

/// A health metric of a service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Name (e.g. `disk_used_pct`), unique within the service.
    pub name: String,
    /// Unit shown with the value (e.g. `%`, `ms`).
    #[serde(default)]
    pub unit: String,
    /// The value over time: linear between points (in time order), flat before the
    /// first and after the last.
    pub points: Vec<Point>,
    /// `(warning, critical)` thresholds. With warning < critical, higher is worse
    /// (a value at or above a threshold reaches that status); with warning >
    /// critical, lower is worse (at or below). No thresholds: always `ok`.
    #[serde(default)]
    pub thresholds: Option<(f64, f64)>,
}

/// A value at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// When.
    pub at: String,
    /// The value.
    pub value: f64,
}

/// A page and its mean load times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageSpec {
    /// URL path, starting with `/`.
    pub path: String,
    /// Mean load time in milliseconds over each window ending now; every window of
    /// [`PAGE_WINDOWS`] appears exactly once.
    pub load_ms: Vec<WindowSeries>,
}

/// How a page's mean load time over one window moves with time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowSeries {
    /// One of [`PAGE_WINDOWS`].
    pub window: String,
    /// The mean over the window ending at each time (interpolated like a metric).
    pub points: Vec<Point>,
}

/// One log line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogLine {
    /// When it was written (visible from then on).
    pub at: String,
    /// Severity.
    pub level: LogLevel,
    /// The message.
    pub text: String,
}

/// Log severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LogLevel {
    /// Routine.
    Info,
    /// Worth a look.
    Warn,
    /// Something failed.
    Error,
}

impl LogLevel {
    /// Upper-case label used in log output.
    pub fn label(self) -> &'static str {
        match self {
            LogLevel::Info => "INFO",
            LogLevel::Warn => "WARN",
            LogLevel::Error => "ERROR",
        }
    }
}
