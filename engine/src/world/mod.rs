//! The simulated workplace as a bevy_ecs world.
//!
//! People, files, folders, rooms, meetings, tasks, deadlines, checkpoints and chat
//! threads are entities, each carrying a [`Key`] with its stable content key. The
//! clock, the event queue, RNG streams, the trajectory and the agent's inbox are
//! resources. `Entity` ids never leave the process: everything observable is keyed.

mod build;
mod prototype;
mod service;
pub(crate) mod systems;

use std::collections::{BTreeMap, BTreeSet};

use bevy_ecs::prelude::*;
use serde::Serialize;

use crate::npc::Trigger;
use crate::path::VPath;
use crate::protocol::{EndReason, FeedbackPolicy, Notification};
use crate::queue::EventQueue;
use crate::rng::RngStreams;
use crate::time::{Epoch, SimDuration, SimTime};
use crate::trajectory::Trajectory;
use tbsim_scenario::{Check, Condition, TaskSpec};

pub use build::build_world;
pub(crate) use prototype::ScenarioMeta;
pub use prototype::{Prototype, RunParams};
pub use service::{Health, Log, Metric, Page, Series, Service, series_at};
pub use systems::tick_schedule;

/// The stable content key of an entity (`npc/dana-li`, `task/kb-fix-1`, ...).
#[derive(Component, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(pub String);

/// A colleague.
#[derive(Component, Debug, Clone)]
pub struct Npc {
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
    /// Job title.
    pub position: String,
    /// Persona text.
    pub persona: String,
    /// Reply to questions the person cannot answer.
    pub default_reply: String,
    /// Reply delay range (minutes, inclusive).
    pub reply_minutes: (u32, u32),
    /// What the person knows: compiled once per scenario and shared (read only)
    /// by every world of it, so building or copying a world neither recompiles nor
    /// copies the triggers.
    pub clues: std::sync::Arc<[ClueRule]>,
    /// Earliest time the person's next reply may be delivered (replies keep order).
    pub busy_until: SimTime,
}

/// A compiled clue rule.
#[derive(Debug, Clone)]
pub struct ClueRule {
    /// Clue key.
    pub key: String,
    /// Task served.
    pub task: Option<String>,
    /// Compiled trigger.
    pub trigger: Trigger,
    /// Preconditions.
    pub after: Vec<Condition>,
    /// What is said.
    pub response: String,
    /// The trigger as written in the scenario (groups of alternatives), for prompts.
    pub topics: Vec<Vec<String>>,
}

/// A file.
#[derive(Component, Debug, Clone)]
pub struct File {
    /// Where.
    pub path: VPath,
    /// Content.
    pub bytes: Vec<u8>,
}

/// A folder (implied by the files below it).
#[derive(Component, Debug, Clone)]
pub struct Folder {
    /// Where.
    pub path: VPath,
}

/// A meeting room.
#[derive(Component, Debug, Clone)]
pub struct Room {
    /// Display name.
    pub name: String,
    /// Seats.
    pub capacity: u32,
}

/// A meeting on the calendar.
#[derive(Component, Debug, Clone)]
pub struct Meeting {
    /// Title.
    pub title: String,
    /// Room key.
    pub room: String,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Organiser key (a person or the intern).
    pub organizer: String,
    /// Invitee keys.
    pub attendees: Vec<String>,
    /// Agenda.
    pub agenda: String,
    /// Said in the meeting.
    pub notes: String,
    /// When announcements are made.
    pub announce_at: SimTime,
    /// Earliest on-time join.
    pub open_at: SimTime,
    /// Latest on-time join.
    pub on_time_until: SimTime,
    /// When the intern joined.
    pub joined_at: Option<SimTime>,
    /// Cancelled by its organiser.
    pub cancelled: bool,
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Not yet known to the agent.
    Pending,
    /// Known, checkpoints live.
    Released,
    /// Deadline passed, checkpoints frozen.
    Closed,
}

/// A task.
#[derive(Component, Debug, Clone)]
pub struct Task {
    /// Position in the scenario (reports keep this order).
    pub order: usize,
    /// The definition.
    pub spec: TaskSpec,
    /// State.
    pub state: TaskState,
    /// When released.
    pub released_at: Option<SimTime>,
}

/// A task's deadline.
#[derive(Component, Debug, Clone)]
pub struct Deadline {
    /// The task's key.
    pub task: String,
    /// When.
    pub at: SimTime,
    /// Whether it has passed.
    pub reached: bool,
}

/// A checkpoint.
#[derive(Component, Debug, Clone)]
pub struct Checkpoint {
    /// Task key.
    pub task: String,
    /// (task order, checkpoint order), for stable reporting.
    pub order: (usize, usize),
    /// Key within the task.
    pub key: String,
    /// Description.
    pub description: String,
    /// Weight.
    pub weight: u32,
    /// Predicate.
    pub check: Check,
    /// When it is judged and whether it is scored (from `check`).
    pub kind: tbsim_scenario::check::CheckKind,
    /// Feedback when failed.
    pub feedback: String,
    /// When it passed: for an answer, the close of its task (if it held then); for
    /// an event or diagnostic, the instant it first held.
    pub passed_at: Option<SimTime>,
    /// Frozen when its task closed: judged, nothing changes it any more.
    pub frozen: bool,
    /// What its predicate read when it was last evaluated and did not hold (`None`:
    /// never evaluated); while none of it changes, neither can the verdict (see
    /// [`Changes`]).
    pub reads: Option<Vec<Input>>,
}

/// One chat message.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChatMessage {
    /// When delivered.
    pub t: SimTime,
    /// Sender key.
    pub from: String,
    /// Text.
    pub text: String,
}

/// A direct or group conversation the intern is part of.
#[derive(Component, Debug, Clone)]
pub struct Thread {
    /// Display title.
    pub title: String,
    /// Member keys (including the intern).
    pub members: Vec<String>,
    /// Whether it is a group.
    pub group: bool,
    /// Messages in order.
    pub messages: Vec<ChatMessage>,
    /// How many the intern has read.
    pub read: usize,
}

/// The simulation clock and time rules.
#[derive(Resource, Debug, Clone)]
pub struct Clock {
    /// Calendar anchor.
    pub epoch: Epoch,
    /// Now.
    pub now: SimTime,
    /// When the run starts.
    pub start: SimTime,
    /// When the last day (and the run) ends.
    pub end: SimTime,
    /// Each working day's (start, end).
    pub days: Vec<(SimTime, SimTime)>,
    /// Office hours as seconds of the day.
    pub office: (u64, u64),
    /// Per-tool cost.
    pub costs: BTreeMap<String, SimDuration>,
    /// Thinking time per agent decision.
    pub turn_cost: SimDuration,
}

/// The company's display name.
#[derive(Resource, Debug, Clone)]
pub struct Company(pub String);

/// Everything the company knows (every clue, task objective and colleague name),
/// for judging whether a message is one specific question. Built once with the
/// world: clues, tasks and people are all spawned there and never change. Shared:
/// consecutive worlds of one scenario on a thread use one (see `build::scope_of`).
#[derive(Resource, Debug, Default)]
pub struct Specificity(pub std::sync::Arc<crate::npc::Scope>);

/// Keyed lookups.
#[derive(Resource, Debug, Default, Clone)]
pub struct Index {
    /// Content key -> entity.
    pub keys: BTreeMap<String, Entity>,
    /// File path -> entity.
    pub files: BTreeMap<String, Entity>,
    /// Folder path -> entity.
    pub folders: BTreeMap<String, Entity>,
    /// Lower-case full name -> person key.
    pub names: BTreeMap<String, String>,
    /// Task key -> checkpoint entities.
    pub checkpoints: BTreeMap<String, Vec<Entity>>,
    /// Tasks waiting for a checkpoint: (task, checkpoint) -> dependent task keys.
    pub waiting: BTreeMap<(String, String), Vec<String>>,
    /// Meeting key -> tasks announced in it.
    pub announced_in: BTreeMap<String, Vec<String>>,
    /// Group threads created by the intern, in creation order.
    pub groups: Vec<String>,
}

/// The agent's identity.
#[derive(Resource, Debug, Clone)]
pub struct Intern {
    /// Key.
    pub key: String,
    /// Name.
    pub name: String,
    /// Department.
    pub department: String,
    /// Manager's key.
    pub manager: String,
}

/// What has happened, for conditions and checkpoints.
#[derive(Resource, Debug, Default)]
pub struct History {
    /// Clue key -> when disclosed.
    pub disclosed: BTreeMap<String, SimTime>,
    /// Drive files read or copied.
    pub consulted: BTreeSet<String>,
    /// Released task keys.
    pub released: BTreeSet<String>,
    /// Passed (task, checkpoint).
    pub passed: BTreeSet<(String, String)>,
    /// Tool name -> when the agent first called it with well-formed arguments
    /// (refused calls included), for `Check::ToolCalled`.
    pub tools_called: BTreeMap<String, SimTime>,
}

impl History {
    /// Whether a condition holds.
    pub fn holds(&self, c: &Condition) -> bool {
        match c {
            Condition::Disclosed(k) => self.disclosed.contains_key(k),
            Condition::Released(t) => self.released.contains(t),
            Condition::Passed { task, checkpoint } => {
                self.passed.contains(&(task.clone(), checkpoint.clone()))
            }
        }
    }
}

/// Bumped on every change a checkpoint could observe; lets the checkpoint system
/// skip ticks where nothing changed.
#[derive(Resource, Debug, Default)]
pub struct Revision(pub u64);

/// One thing a checkpoint predicate can read through the world view: what a change
/// touches, and what an evaluation read (see [`Changes`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    /// A file's bytes (or its absence), by normalised path.
    File(String),
    /// Whether a clue was disclosed.
    Clue(String),
    /// Whether a drive file was consulted, by normalised path.
    Consulted(String),
    /// Whether a tool was called.
    Tool(String),
    /// Any meeting (booked, cancelled, joined).
    Meetings,
    /// A conversation's messages, by thread key.
    Thread(String),
}

/// What changed since the checkpoints were last evaluated.
///
/// Checkpoints are evaluated on every tick in which something they could see
/// changed. An event or diagnostic checkpoint that did not hold remembers what its
/// predicate read ([`Checkpoint::reads`]): a predicate is a pure function of what
/// it reads, so while none of that changed its verdict cannot, and evaluating it
/// again is skipped. Every change a checkpoint could observe bumps the
/// [`Revision`] and is listed here ([`touch`]); the checkpoint system drains the
/// list. The verdicts, and when each checkpoint first held, are those of a full
/// evaluation on every tick (tested against one).
#[derive(Resource, Debug, Default)]
pub struct Changes {
    /// Touched since the last evaluation (unsorted, may repeat).
    pub touched: Vec<Input>,
    /// Evaluate every live checkpoint whenever anything changed, ignoring what each
    /// read (the reference behaviour, for tests).
    pub full: bool,
}

/// Records a change a checkpoint could observe: bumps the revision and lists it.
pub fn touch(world: &mut World, input: Input) {
    world.resource_mut::<Revision>().0 += 1;
    if let Some(mut c) = world.get_resource_mut::<Changes>() {
        c.touched.push(input);
    }
}

/// Notifications waiting for the agent's next tool result.
#[derive(Resource, Debug, Default)]
pub struct Inbox(pub Vec<Notification>);

/// The events due at the current instant, being processed by this tick.
#[derive(Resource, Debug, Default)]
pub struct DueEvents(pub Vec<crate::queue::Due<SimEvent>>);

/// The pending events.
#[derive(Resource, Debug, Default)]
pub struct Queue(pub EventQueue<SimEvent>);

/// Runtime random streams.
#[derive(Resource, Debug)]
pub struct Rngs(pub RngStreams);

/// The trajectory being written.
#[derive(Resource, Debug)]
pub struct Trace(pub Trajectory);

/// Whether the run has ended, and why.
#[derive(Resource, Debug, Default)]
pub struct RunState {
    /// The end reason, once over.
    pub over: Option<EndReason>,
    /// After a day ends (not the last), the next morning's start: nothing acts until then.
    pub asleep_until: Option<SimTime>,
    /// Count of tool errors by kind.
    pub errors: BTreeMap<String, u64>,
    /// What failed, when the run ended on an infrastructure failure.
    pub infra_error: Option<String>,
    /// What failed, when the run ended as the agent's failure.
    pub agent_error: Option<String>,
    /// Decisions with no tool call (a model that only talked).
    pub empty_turns: u64,
    /// Human guidance received, by task key (`""`: messages about no task).
    pub guidance: BTreeMap<String, crate::guidance::GuidanceCount>,
}

pub use crate::event::SimEvent;

/// The run's mentor-feedback policy, as a world resource.
#[derive(Resource, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Feedback(pub FeedbackPolicy);

/// Mentor state: tasks already reviewed, feedback waiting for the next morning.
#[derive(Resource, Debug, Default)]
pub struct Mentor {
    /// Task keys already reviewed.
    pub reviewed: BTreeSet<String>,
    /// Feedback to deliver at the next day start.
    pub pending: Vec<String>,
}

/// Creates or replaces a file, creating its folders; bumps the revision.
pub fn put_file(world: &mut World, path: &VPath, bytes: Vec<u8>) {
    let existing = world.resource::<Index>().files.get(path.as_str()).copied();
    match existing {
        Some(e) => {
            if let Some(mut f) = world.get_mut::<File>(e) {
                f.bytes = bytes;
            }
        }
        None => {
            // Folders first, from the root down, so listings see them.
            let mut prefix = String::new();
            let parts: Vec<&str> = path.as_str().split('/').collect();
            for part in &parts[..parts.len() - 1] {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                if !world.resource::<Index>().folders.contains_key(&prefix) {
                    let fp = VPath::parse(&prefix).expect("prefix of a valid path is valid");
                    let e = world
                        .spawn((Key(format!("folder/{prefix}")), Folder { path: fp }))
                        .id();
                    world
                        .resource_mut::<Index>()
                        .folders
                        .insert(prefix.clone(), e);
                }
            }
            let e = world
                .spawn((
                    Key(format!("file/{}", path.as_str())),
                    File {
                        path: path.clone(),
                        bytes,
                    },
                ))
                .id();
            world
                .resource_mut::<Index>()
                .files
                .insert(path.as_str().to_owned(), e);
        }
    }
    touch(world, Input::File(path.as_str().to_owned()));
}

/// Removes a file; bumps the revision. Empty folders stay, as on a real drive.
pub fn remove_file(world: &mut World, path: &str) -> bool {
    let Some(e) = world.resource_mut::<Index>().files.remove(path) else {
        return false;
    };
    world.despawn(e);
    touch(world, Input::File(path.to_owned()));
    true
}

/// A file's bytes.
pub fn file_bytes<'w>(world: &'w World, path: &str) -> Option<&'w [u8]> {
    let e = *world.resource::<Index>().files.get(path)?;
    world.get::<File>(e).map(|f| f.bytes.as_slice())
}

/// A person's display name by key (the intern included).
pub fn display_name(world: &World, key: &str) -> String {
    let me = world.resource::<Intern>();
    if key == me.key {
        return me.name.clone();
    }
    world
        .resource::<Index>()
        .keys
        .get(key)
        .and_then(|e| world.get::<Npc>(*e))
        .map_or_else(|| key.to_owned(), |n| n.name.clone())
}
