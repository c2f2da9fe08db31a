//! What the console shows of a run, as plain serialisable data: the world after a
//! decision ([`WorldView`], built by [`world_view`] or [`world_at`]), a file's bytes
//! ([`file_bytes`]) and trajectory lines as timeline entries ([`entry`],
//! [`entries_from`]). The shapes are those of `docs/console.md`.
//!
//! ## Nothing hidden
//!
//! The console shows what the agent could see and what it did, plus its score. So
//! everything here is read from what the agent's own tools read, and shown as they
//! show it, never from the scenario's hidden parts:
//!
//! * Tasks: only those released to the agent (as `my_tasks` lists them: a gated task
//!   that closed without ever being released was never the agent's), with the same
//!   title, objective, priority and deadline `my_tasks` and the release notification
//!   give. Checkpoints show their key, weight, whether they are scored and their state
//!   (what the score reveals anyway), never their description, feedback or check.
//! * Files: metadata only (path, size, kind, whether the agent made it); the bytes
//!   come one file at a time from [`file_bytes`], which reads the world's own
//!   `drive/` and `workspace/` (both listable by the agent), never the host.
//! * Chats: the intern's threads and the messages delivered in them, which is what
//!   `read_messages` returns. Replies not yet delivered wait in the event queue,
//!   which is never read here, and nothing says which clue a reply disclosed.
//! * Calendar: the meetings `my_calendar` lists (invited or booked, not cancelled),
//!   never their notes (what is said or announced in them).
//! * Colleagues appear by name only: never a persona, a clue or a default reply.
//! * Timeline entries drop the hidden parts of trajectory lines (see [`entry`]).
//!
//! `answers = true` (a finished recorded run, on request) adds checkpoint
//! descriptions and feedback to the view and keeps trajectory lines whole.
//!
//! Everything is sorted (scenario order, path, key or start time), so the output
//! never depends on the order the world stores entities in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::path::VPath;
use crate::progress::TaskStatus;
use crate::protocol::{EndReason, Priority};
use crate::replay::{Redriven, ReplayError};
use crate::sim::Sim;
use crate::time::{Epoch, SimTime};
use crate::trajectory::Line;
use crate::world::{
    Checkpoint, Clock, File, Index, Intern, Key, Meeting, Room, RunState, Task, TaskState, Thread,
    display_name,
};
use tbsim_scenario::{Content, FileSpec, LoadedScenario};

/// The world after a decision, as the console shows it (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorldView {
    /// Decisions applied to this world.
    pub step: u64,
    /// Decisions recorded in the run (complete ones, for a live run).
    pub steps: u64,
    /// The simulated clock, as shown to agents (`Wed 2025-10-08 10:00`).
    pub time: String,
    /// The current working day, from 1.
    pub day: u32,
    /// Working days in the scenario.
    pub days: u32,
    /// Mean task score over every task of the scenario so far (0..1), as the
    /// progress snapshot computes it.
    pub score: f64,
    /// Why the run ended, once it has.
    pub end_reason: Option<EndReason>,
    /// Released tasks, in scenario order.
    pub tasks: Vec<TaskCard>,
    /// Every file of the drive and the workspace, by path.
    pub files: Vec<FileEntry>,
    /// The intern's chat threads, by key.
    pub chats: Vec<ChatThread>,
    /// The intern's meetings, by start then key.
    pub calendar: Vec<CalendarEntry>,
}

/// A released task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskCard {
    /// Key (`task/...`).
    pub key: String,
    /// Title.
    pub title: String,
    /// The objective, as the agent was given it.
    pub objective: String,
    /// Priority.
    pub priority: Priority,
    /// Deadline, as shown to agents.
    pub deadline: String,
    /// Open, or closed (its deadline passed, or the run ended and judged it).
    pub status: TaskStatus,
    /// Weighted share of its scored checkpoints passed so far (0..1).
    pub score: f64,
    /// Hint tiers given so far and how many the task has.
    pub hint_tiers: (u8, u8),
    /// Human guidance received about the task.
    pub guidance: GuidanceShown,
    /// Its checkpoints, in scenario order.
    pub checkpoints: Vec<CheckpointCard>,
}

/// Human guidance received about a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GuidanceShown {
    /// Hint tiers given by guidance.
    pub hints: u32,
    /// Free-text messages.
    pub messages: u32,
}

/// Where a checkpoint stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointState {
    /// It passed.
    Passed,
    /// Not judged yet (its task is open), or an event that has not happened yet.
    Pending,
    /// Judged and not passed: its task closed.
    Failed,
}

/// A checkpoint of a released task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointCard {
    /// Key within the task.
    pub key: String,
    /// Weight in the task's score.
    pub weight: u32,
    /// Whether it counts in the score (diagnostics do not).
    pub scored: bool,
    /// Passed, pending or failed.
    pub state: CheckpointState,
    /// When it passed (seconds since the scenario epoch, as a line's `t`).
    pub passed_at: Option<SimTime>,
    /// When it passed, as shown to agents.
    pub passed_time: Option<String>,
    /// What it checks (with answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The mentor's feedback when it fails (with answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// Which root a file is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRoot {
    /// The shared drive.
    Drive,
    /// The agent's workspace.
    Workspace,
}

/// How a file can be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// UTF-8 text.
    Text,
    /// A picture (PNG, JPEG, GIF, WebP by their bytes; SVG by name).
    Image,
    /// Anything else.
    Binary,
}

/// A file's metadata (never its content).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    /// Virtual path (`drive/...`, `workspace/...`).
    pub path: String,
    /// Its root.
    pub root: FileRoot,
    /// Size in bytes.
    pub bytes: u64,
    /// How it can be shown.
    pub kind: FileKind,
    /// Written or copied by the agent: a workspace file the scenario did not put
    /// there, or whose bytes differ from every version the scenario put there.
    pub by_agent: bool,
}

/// A chat thread of the intern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatThread {
    /// Key (`thread/dm/...`, `thread/group/...`).
    pub key: String,
    /// Title.
    pub title: String,
    /// Whether it is a group.
    pub group: bool,
    /// Members' names, the intern included.
    pub members: Vec<String>,
    /// Messages delivered so far, in order.
    pub messages: Vec<ChatLine>,
}

/// A delivered chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatLine {
    /// When delivered.
    pub t: SimTime,
    /// When delivered, as shown to agents.
    pub time: String,
    /// Sender key.
    pub from: String,
    /// Sender name.
    pub from_name: String,
    /// Text.
    pub text: String,
}

/// A meeting on the intern's calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CalendarEntry {
    /// Key (`meeting/...`).
    pub key: String,
    /// Title.
    pub title: String,
    /// Room name.
    pub room: String,
    /// Start, as shown to agents.
    pub start: String,
    /// End, as shown to agents.
    pub end: String,
    /// Invitees' names (as `my_calendar` lists them).
    pub attendees: Vec<String>,
    /// Booked by the agent.
    pub booked_by_agent: bool,
    /// The agent joined it.
    pub joined: bool,
}

/// The epoch of a run's scenario (its first day), to format a trajectory line's `t`
/// as agents see times. Callers that only have the run directory load its
/// `scenario.ron` once and keep this.
pub fn epoch_of(loaded: &LoadedScenario) -> Epoch {
    // A loaded scenario has passed validation, which parses `clock.start`.
    Epoch::from_timestamp(&loaded.scenario.clock.start).expect("validated clock.start")
}

/// The world of `sim` (built from `loaded`) as the console shows it; `steps` is the
/// number of decisions the run has recorded. With `answers`, checkpoint
/// descriptions and feedback are added (see the module docs).
pub fn world_view(sim: &Sim, loaded: &LoadedScenario, steps: u64, answers: bool) -> WorldView {
    let world = sim.world();
    let progress = sim.progress();
    let clock = world.resource::<Clock>();
    let epoch = clock.epoch;
    let run = world.resource::<RunState>();

    let mut tasks: Vec<&Task> = match world.try_query::<&Task>() {
        Some(mut q) => q
            .iter(world)
            // As `my_tasks`: a task closed without being released was never the agent's.
            .filter(|t| t.state != TaskState::Pending && t.released_at.is_some())
            .collect(),
        None => Vec::new(),
    };
    tasks.sort_by_key(|t| t.order);
    let mut cps: Vec<&Checkpoint> = match world.try_query::<&Checkpoint>() {
        Some(mut q) => q.iter(world).collect(),
        None => Vec::new(),
    };
    cps.sort_by_key(|c| c.order);
    let tiers = sim.hint_tiers();
    let cards = tasks
        .iter()
        .map(|t| {
            let key = &t.spec.key;
            let mine = || cps.iter().copied().filter(move |c| &c.task == key);
            let guidance = run.guidance.get(key).copied().unwrap_or_default();
            TaskCard {
                key: key.clone(),
                title: t.spec.title.clone(),
                objective: t.spec.objective.clone(),
                priority: t.spec.priority,
                deadline: epoch
                    .parse(&t.spec.deadline)
                    .map(|d| epoch.display(d))
                    .unwrap_or_default(),
                status: if t.state == TaskState::Closed {
                    TaskStatus::Closed
                } else {
                    TaskStatus::Open
                },
                score: crate::collect::weighted_score(mine().filter(|c| c.kind.scored())),
                hint_tiers: tiers.get(key).copied().unwrap_or((0, 0)),
                guidance: GuidanceShown {
                    hints: guidance.hints,
                    messages: guidance.messages,
                },
                checkpoints: mine()
                    .map(|c| CheckpointCard {
                        key: c.key.clone(),
                        weight: c.weight,
                        scored: c.kind.scored(),
                        state: match (c.passed_at, c.frozen) {
                            (Some(_), _) => CheckpointState::Passed,
                            (None, true) => CheckpointState::Failed,
                            (None, false) => CheckpointState::Pending,
                        },
                        passed_at: c.passed_at,
                        passed_time: c.passed_at.map(|p| epoch.display(p)),
                        description: answers.then(|| c.description.clone()),
                        feedback: answers.then(|| c.feedback.clone()),
                    })
                    .collect(),
            }
        })
        .collect();

    WorldView {
        step: sim.steps(),
        steps,
        time: progress.time,
        day: progress.day,
        days: progress.days,
        score: progress.score,
        end_reason: progress.end_reason,
        tasks: cards,
        files: files(world, loaded),
        chats: chats(world, epoch),
        calendar: calendar(world, epoch),
    }
}

/// Every file, by path (the index is a sorted map).
fn files(world: &bevy_ecs::world::World, loaded: &LoadedScenario) -> Vec<FileEntry> {
    // What the scenario puts in the workspace, at the start or by a timed event.
    let mut seeded: BTreeMap<String, Vec<&FileSpec>> = BTreeMap::new();
    for f in loaded.scenario.all_files() {
        if let Ok(p) = VPath::parse(&f.path)
            && p.is_workspace()
        {
            seeded.entry(p.as_str().to_owned()).or_default().push(f);
        }
    }
    let index = world.resource::<Index>();
    index
        .files
        .iter()
        .filter_map(|(path, e)| {
            let f = world.get::<File>(*e)?;
            let workspace = f.path.is_workspace();
            // The drive is read-only to the agent: nothing there is its work.
            let by_agent = workspace
                && !seeded
                    .get(path)
                    .is_some_and(|specs| specs.iter().any(|s| same_bytes(loaded, s, &f.bytes)));
            Some(FileEntry {
                path: path.clone(),
                root: if workspace {
                    FileRoot::Workspace
                } else {
                    FileRoot::Drive
                },
                bytes: f.bytes.len() as u64,
                kind: kind_of(path, &f.bytes),
                by_agent,
            })
        })
        .collect()
}

/// Whether `bytes` are what the scenario's `spec` puts at its path (as the world
/// builder makes them: a missing sidecar is empty, a drawing is rendered).
fn same_bytes(loaded: &LoadedScenario, spec: &FileSpec, bytes: &[u8]) -> bool {
    match &spec.content {
        Content::Text(t) => t.as_bytes() == bytes,
        Content::Sidecar { .. } => {
            loaded.assets.get(&spec.path).map_or(&[][..], Vec::as_slice) == bytes
        }
        Content::Drawing(d) => d.png() == bytes,
    }
}

fn chats(world: &bevy_ecs::world::World, epoch: Epoch) -> Vec<ChatThread> {
    let mut threads: Vec<(&Key, &Thread)> = match world.try_query::<(&Key, &Thread)>() {
        Some(mut q) => q.iter(world).collect(),
        None => Vec::new(),
    };
    threads.sort_by(|a, b| a.0.cmp(b.0));
    threads
        .into_iter()
        .map(|(k, t)| ChatThread {
            key: k.0.clone(),
            title: t.title.clone(),
            group: t.group,
            members: t.members.iter().map(|m| display_name(world, m)).collect(),
            messages: t
                .messages
                .iter()
                .map(|m| ChatLine {
                    t: m.t,
                    time: epoch.display(m.t),
                    from: m.from.clone(),
                    from_name: display_name(world, &m.from),
                    text: m.text.clone(),
                })
                .collect(),
        })
        .collect()
}

fn calendar(world: &bevy_ecs::world::World, epoch: Epoch) -> Vec<CalendarEntry> {
    let me = &world.resource::<Intern>().key;
    let mut meetings: Vec<(&Key, &Meeting)> = match world.try_query::<(&Key, &Meeting)>() {
        Some(mut q) => q
            .iter(world)
            // As `my_calendar`: the intern's own meetings, not cancelled ones.
            .filter(|(_, m)| !m.cancelled && (&m.organizer == me || m.attendees.contains(me)))
            .collect(),
        None => Vec::new(),
    };
    meetings.sort_by(|a, b| (a.1.start, a.0).cmp(&(b.1.start, b.0)));
    let index = world.resource::<Index>();
    meetings
        .into_iter()
        .map(|(k, m)| CalendarEntry {
            key: k.0.clone(),
            title: m.title.clone(),
            room: index
                .keys
                .get(&m.room)
                .and_then(|r| world.get::<Room>(*r))
                .map_or_else(|| m.room.clone(), |r| r.name.clone()),
            start: epoch.display(m.start),
            end: epoch.display(m.end),
            attendees: m.attendees.iter().map(|a| display_name(world, a)).collect(),
            booked_by_agent: &m.organizer == me,
            joined: m.joined_at.is_some(),
        })
        .collect()
}

/// The raster image type `bytes` start with, if any.
fn raster_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The lower-case extension of a path's file name (empty if none).
fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The content type a file is served with. Raster images are recognised by their
/// bytes (a `.png` holding text is not served as a picture); SVG, CSV and JSON by
/// name when they are UTF-8. Other text is plain text: never HTML, so nothing the
/// agent wrote is rendered as a page.
fn content_type(path: &str, bytes: &[u8]) -> &'static str {
    if let Some(t) = raster_type(bytes) {
        return t;
    }
    if std::str::from_utf8(bytes).is_err() {
        return "application/octet-stream";
    }
    match extension(path).as_str() {
        "svg" => "image/svg+xml",
        "csv" => "text/csv; charset=utf-8",
        "json" => "application/json",
        _ => "text/plain; charset=utf-8",
    }
}

fn kind_of(path: &str, bytes: &[u8]) -> FileKind {
    let t = content_type(path, bytes);
    if t.starts_with("image/") {
        FileKind::Image
    } else if t == "application/octet-stream" {
        FileKind::Binary
    } else {
        FileKind::Text
    }
}

/// The bytes of the file at `path` in the world of `sim`, with the content type to
/// serve them with; `None` when there is no such file or the path is not a
/// `drive/...` or `workspace/...` path (absolute paths, `..` and anything else are
/// refused by [`VPath`]). Only the world's files are read, never the host's.
pub fn file_bytes(sim: &Sim, path: &str) -> Option<(Vec<u8>, &'static str)> {
    let p = VPath::parse(path).ok()?;
    let bytes = crate::world::file_bytes(sim.world(), p.as_str())?;
    Some((bytes.to_vec(), content_type(p.as_str(), bytes)))
}

/// Makes a re-driven world whose run ended look as the run ended: when every
/// recorded decision was applied and the trajectory records the end, the guidance
/// sent after the last decision is applied, the run is ended for its recorded reason
/// and open tasks are judged (as `result.json` was made), so the last step's view
/// agrees with the result. Anything else is left as it is.
pub fn settle(r: &mut Redriven) {
    settle_sim(&mut r.sim, &r.recorded, r.steps);
}

/// [`settle`] for a world re-driven from `recorded`, a run of `steps` complete
/// decisions (a [`crate::replay::Replayer`]'s).
pub fn settle_sim(sim: &mut Sim, recorded: &crate::trajectory::Recorded, steps: u64) {
    let Some(reason) = recorded.end else {
        return;
    };
    if sim.steps() < steps {
        return;
    }
    if !sim.is_over() {
        for g in &recorded.trailing_guidance {
            // Refused only if the trajectory was edited; nothing to show then.
            let _ = sim.guide_recorded(g);
        }
    }
    sim.end(reason);
    // Judges open tasks; the result itself is in `result.json` already.
    let _ = sim.results();
}

/// The world of the run in `dir` after decision `step` (default: the latest complete
/// one), as the console shows it: re-driven with [`crate::replay::redrive_dir`]
/// and, at a finished run's last step, [`settle`]d.
pub fn world_at(dir: &Path, step: Option<u64>, answers: bool) -> Result<WorldView, ReplayError> {
    let mut r = crate::replay::redrive_dir(dir, step)?;
    settle(&mut r);
    Ok(world_view(&r.sim, &r.loaded, r.steps, answers))
}

/// The bytes and content type of file `path` in the run in `dir` after decision
/// `step` (see [`file_bytes`]); `Ok(None)` when there is no such file.
pub fn file_at(
    dir: &Path,
    step: Option<u64>,
    path: &str,
) -> Result<Option<(Vec<u8>, &'static str)>, ReplayError> {
    // Refused paths need no replay.
    if VPath::parse(path).is_err() {
        return Ok(None);
    }
    let r = crate::replay::redrive_dir(dir, step)?;
    Ok(file_bytes(&r.sim, path))
}

/// Keys an `npc` line keeps without answers: who was asked, by which call, when,
/// and the reply (the agent receives it). The request (the colleague's persona and
/// knowledge), the raw response and the clues it disclosed are dropped.
const NPC_KEYS: &[&str] = &[
    "type", "step", "call", "npc", "t", "model", "reply", "error",
];

/// Keys a `model` line of the agent keeps without answers: all of them. The request
/// (as sent, or its compact `request_delta`) is what the agent saw: its system
/// prompt, briefing, history summary and tool results, never hidden data (unlike a
/// colleague model's request, which holds clues).
const MODEL_KEYS: &[&str] = &[
    "type",
    "step",
    "t",
    "purpose",
    "model",
    "request",
    "request_delta",
    "response",
    "usage",
    "failures",
    "error",
];

/// Trajectory line number `index` (0 is the header) as a timeline entry: the line as
/// JSON (`type` included) with `i` (the index) and, when it has a `t`, `time` (as
/// shown to agents, in `epoch`, see [`epoch_of`]) added.
///
/// Without `answers`, hidden parts are removed: a delivered message's `clues`; an
/// `npc` line's `request`, `response` and `clues`; a `result` line's `record` (a
/// `run_python` outcome as replay needs it). A `disclosure` line is hidden whole: `None` is returned, and
/// callers skip it (the indices of the other lines stay those of the file). With
/// `answers` the line is kept whole.
pub fn entry(line: &Line, index: usize, epoch: &Epoch, answers: bool) -> Option<Value> {
    if !answers && matches!(line, Line::Disclosure { .. }) {
        return None;
    }
    // A line read from a trajectory always serialises again (it was written so).
    let Ok(Value::Object(mut obj)) = serde_json::to_value(line) else {
        return None;
    };
    if !answers {
        let keep = |obj: &mut serde_json::Map<String, Value>, keys: &[&str]| {
            obj.retain(|k, _| keys.contains(&k.as_str()));
        };
        match line {
            Line::Event { .. } => {
                if let Some(Value::Object(ev)) = obj.get_mut("event") {
                    ev.remove("clues");
                }
            }
            Line::Npc(_) => keep(&mut obj, NPC_KEYS),
            Line::Model(_) => keep(&mut obj, MODEL_KEYS),
            Line::Result { .. } => {
                obj.remove("record");
            }
            _ => {}
        }
    }
    obj.insert("i".to_owned(), Value::from(index));
    if let Some(t) = obj.get("t").and_then(Value::as_u64) {
        obj.insert("time".to_owned(), Value::from(epoch.display(SimTime(t))));
    }
    Some(Value::Object(obj))
}

/// Why a trajectory could not be read for the timeline.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The file is missing or unreadable.
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// A complete line is not a trajectory line (1-based line number).
    #[error("`{0}` line {1}: {2}")]
    Format(PathBuf, usize, String),
}

/// Timeline entries read from a trajectory (the console's timeline route answers
/// with this as it is).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Entries of the lines from the asked index on (hidden ones skipped).
    pub lines: Vec<Value>,
    /// The index to ask from next time: the number of complete lines (or the asked
    /// index, if larger), or the line after the page's last (see [`entries_page`]).
    pub next: usize,
    /// Whether the run's `end` line was written.
    pub finished: bool,
    /// Complete lines in the file (`next` is less while pages remain).
    pub total: usize,
}

/// The entries ([`entry`]) of the trajectory at `traj` from line index `from` on
/// (0 is the header). Only lines ended by a newline count: the last line of a run
/// still being written may be incomplete (torn), so it is left for the next call,
/// which can tail the file by asking from [`Timeline::next`].
pub fn entries_from(
    traj: &Path,
    from: usize,
    epoch: &Epoch,
    answers: bool,
) -> Result<Timeline, InspectError> {
    entries_page(traj, from, None, epoch, answers)
}

/// [`entries_from`], of at most `limit` lines from `from` (hidden ones count): a
/// page of a long run, so the first paint parses and ships only what it draws;
/// [`Timeline::next`] is then where the next page starts.
pub fn entries_page(
    traj: &Path,
    from: usize,
    limit: Option<usize>,
    epoch: &Epoch,
    answers: bool,
) -> Result<Timeline, InspectError> {
    let until = limit.map_or(usize::MAX, |l| from.saturating_add(l));
    let bytes = tbsim_scenario::untrusted::read_capped(
        traj,
        crate::run_dir::MAX_TRAJECTORY_BYTES,
        tbsim_scenario::untrusted::Links::Refuse,
    )
    .map_err(|e| InspectError::Io(traj.to_owned(), e.into_io()))?;
    let complete = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|end| &bytes[..end]);
    let mut lines = Vec::new();
    let mut count = 0;
    let mut finished = false;
    for (i, raw) in complete
        .into_iter()
        .flat_map(|c| c.split(|b| *b == b'\n'))
        .enumerate()
    {
        count = i + 1;
        // Lines are written `type` first (trajectory format 2).
        if raw.starts_with(br#"{"type":"end""#) {
            finished = true;
        }
        if i < from || i >= until {
            continue;
        }
        let fmt = |m: String| InspectError::Format(traj.to_owned(), i + 1, m);
        let text = std::str::from_utf8(raw).map_err(|e| fmt(e.to_string()))?;
        let line = Line::parse(text).map_err(|e| fmt(e.to_string()))?;
        lines.extend(entry(&line, i, epoch, answers));
    }
    Ok(Timeline {
        lines,
        next: count.min(until).max(from),
        finished,
        total: count,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::agent::Oracle;
    use crate::protocol::{SimConfig, ToolResult};
    use crate::result::RunResult;
    use crate::run::{RunLimits, run_to_dir};

    fn scenario(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios")
            .join(rel)
    }

    /// The oracle's run of a bundled scenario, written to a temporary directory.
    fn oracle_run(rel: &str) -> (tempfile::TempDir, LoadedScenario, RunResult) {
        let loaded = tbsim_scenario::load_file(&scenario(rel)).expect("bundled scenario loads");
        let dir = tempfile::tempdir().unwrap();
        let mut oracle = Oracle::new(&loaded.scenario);
        let r = run_to_dir(
            &loaded,
            &mut oracle,
            SimConfig::default(),
            &RunLimits::default(),
            dir.path(),
        )
        .expect("the oracle runs");
        (dir, loaded, r)
    }

    fn trajectory_lines(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("trajectory.jsonl"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// What the oracle wrote with `write_file`, the last content per path.
    fn written(lines: &[String]) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for l in lines {
            if let Ok(Line::Decision { calls, .. }) = serde_json::from_str::<Line>(l) {
                for c in calls.iter().filter(|c| c.name == "write_file") {
                    let args: Value = serde_json::from_str(&c.arguments).unwrap();
                    out.insert(
                        args["path"].as_str().unwrap().to_owned(),
                        args["content"].as_str().unwrap().to_owned(),
                    );
                }
            }
        }
        out
    }

    #[test]
    fn the_view_follows_the_run_from_the_start_to_the_recorded_result() {
        let (dir, loaded, r) = oracle_run("busy-day.ron");
        let dir = dir.path();
        let recorded: RunResult =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(recorded.checkpoint_score, r.checkpoint_score);

        let start = world_at(dir, Some(0), false).unwrap();
        assert_eq!((start.step, start.steps), (0, r.steps));
        assert_eq!(start.end_reason, None);
        assert!(!start.tasks.is_empty(), "tasks released at the start");
        for t in &start.tasks {
            assert_eq!(t.status, TaskStatus::Open);
            assert!(
                t.checkpoints
                    .iter()
                    .all(|c| c.state == CheckpointState::Pending && c.passed_at.is_none()),
                "{}: nothing judged before the first decision",
                t.key
            );
        }
        assert!(start.files.iter().all(|f| !f.by_agent), "{:?}", start.files);
        let seeded = start
            .files
            .iter()
            .find(|f| f.path == "workspace/transactions_review.csv")
            .expect("the scenario puts a file in the workspace");
        assert_eq!(
            (seeded.root, seeded.kind, seeded.by_agent),
            (FileRoot::Workspace, FileKind::Text, false)
        );
        assert!(start.files.windows(2).all(|w| w[0].path < w[1].path));
        assert!(
            start
                .chats
                .iter()
                .all(|c| !c.messages.is_empty() || c.group)
        );

        let mid = world_at(dir, Some(r.steps / 2), false).unwrap();
        assert_eq!(mid.step, r.steps / 2);

        let end = world_at(dir, None, false).unwrap();
        assert_eq!((end.step, end.steps), (r.steps, r.steps));
        assert_eq!(end.end_reason, r.end_reason);
        assert!((end.score - r.checkpoint_score).abs() < 1e-12);
        let released: Vec<&crate::result::TaskResult> = recorded
            .tasks
            .iter()
            .filter(|t| t.released_at.is_some())
            .collect();
        assert_eq!(end.tasks.len(), released.len());
        for (card, t) in end.tasks.iter().zip(released) {
            assert_eq!(card.key, t.key);
            assert_eq!(card.status, TaskStatus::Closed, "judged at the end");
            assert!((card.score - t.score).abs() < 1e-12, "{}", t.key);
            let passed = |c: &CheckpointCard| c.state == CheckpointState::Passed;
            let shown: Vec<&str> = card
                .checkpoints
                .iter()
                .filter(|c| passed(c))
                .map(|c| c.key.as_str())
                .collect();
            let want: Vec<&str> = t
                .checkpoints
                .iter()
                .filter(|c| c.passed)
                .map(|c| c.key.as_str())
                .collect();
            assert_eq!(shown, want, "{}", t.key);
            for c in &card.checkpoints {
                assert_ne!(c.state, CheckpointState::Pending, "{}#{}", t.key, c.key);
                assert_eq!(c.passed_time.is_some(), passed(c));
                assert!(c.description.is_none() && c.feedback.is_none());
            }
        }
        assert!(end.chats.iter().any(|c| !c.messages.is_empty()));
        assert!(
            end.chats
                .iter()
                .flat_map(|c| &c.messages)
                .all(|m| !m.from_name.starts_with("npc/") && !m.time.is_empty())
        );

        // Files: what the oracle wrote, by the agent, served as written.
        let lines = trajectory_lines(dir);
        let wrote = written(&lines);
        assert!(!wrote.is_empty(), "the oracle writes files");
        let world = crate::replay::redrive_dir(dir, None).unwrap();
        for (path, content) in &wrote {
            let f = end.files.iter().find(|f| &f.path == path).expect("listed");
            assert!(f.by_agent, "{path}");
            assert_eq!(f.bytes, content.len() as u64);
            let (bytes, kind) = file_bytes(&world.sim, path).expect("readable");
            assert_eq!(bytes, content.as_bytes(), "{path}");
            assert!(
                kind == "application/json" || kind.starts_with("text/"),
                "{kind}"
            );
        }
        assert!(
            end.files
                .iter()
                .any(|f| f.path == "workspace/transactions_review.csv" && !f.by_agent)
        );
        let (csv, kind) = file_bytes(&world.sim, "workspace/./transactions_review.csv").unwrap();
        assert!(!csv.is_empty());
        assert_eq!(kind, "text/csv; charset=utf-8");
        let (first, _) = wrote.iter().next().unwrap();
        assert_eq!(
            file_at(dir, Some(0), first).unwrap(),
            None,
            "not written yet at step 0"
        );
        assert!(file_at(dir, None, first).unwrap().is_some());
        for bad in [
            "../x",
            "/etc/passwd",
            "scenario.ron",
            "trajectory.jsonl",
            "drive/../../x",
            "workspace/../scenario.ron",
            "drive",
            "workspace",
            "",
            "drive\\..\\x",
        ] {
            assert_eq!(file_bytes(&world.sim, bad), None, "{bad}");
            assert_eq!(file_at(dir, None, bad).unwrap(), None, "{bad}");
        }

        // The view is plain data: the same world always gives the same JSON.
        let again = world_at(dir, None, false).unwrap();
        assert_eq!(
            serde_json::to_string(&end).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
        let v = serde_json::to_value(&end).unwrap();
        assert_eq!(
            v["tasks"][0]["hint_tiers"].as_array().map(Vec::len),
            Some(2)
        );
        assert!(v["tasks"][0]["checkpoints"][0].get("description").is_none());
        assert!(v["tasks"][0]["guidance"]["hints"].is_u64());
        let _ = loaded;
    }

    #[test]
    fn the_timeline_tails_a_file_being_written() {
        let (dir, loaded, _) = oracle_run("meeting-only.ron");
        let epoch = epoch_of(&loaded);
        let traj = dir.path().join("trajectory.jsonl");
        let lines = trajectory_lines(dir.path());
        let hidden = lines
            .iter()
            .filter(|l| l.starts_with(r#"{"type":"disclosure""#))
            .count();

        let all = entries_from(&traj, 0, &epoch, false).unwrap();
        assert!(all.finished);
        assert_eq!(all.next, lines.len());
        assert_eq!(all.lines.len(), lines.len() - hidden);
        for (n, e) in all.lines.iter().enumerate() {
            let i = e["i"].as_u64().unwrap() as usize;
            let line: Line = serde_json::from_str(&lines[i]).unwrap();
            assert_eq!(e, &entry(&line, i, &epoch, false).unwrap(), "{n}");
            if let Some(t) = e.get("t").and_then(Value::as_u64) {
                assert_eq!(e["time"], json!(epoch.display(SimTime(t))));
            } else {
                assert!(e.get("time").is_none());
            }
        }
        assert_eq!(all.lines[0]["type"], "header");
        let whole = entries_from(&traj, 0, &epoch, true).unwrap();
        assert_eq!(whole.lines.len(), lines.len());

        // A live run: some lines written, the next one torn.
        let live = dir.path().join("live.jsonl");
        let k = lines.len() / 2;
        let mut text: String = lines[..k].iter().map(|l| format!("{l}\n")).collect();
        text.push_str(&lines[k][..lines[k].len() / 2]);
        std::fs::write(&live, &text).unwrap();
        let head = entries_from(&live, 0, &epoch, false).unwrap();
        assert_eq!((head.next, head.finished), (k, false));
        assert_eq!(head.lines[..], all.lines[..head.lines.len()]);
        // Complete JSON without its newline is still in flight.
        text.truncate(text.len() - lines[k].len() / 2);
        text.push_str(&lines[k]);
        std::fs::write(&live, &text).unwrap();
        assert_eq!(entries_from(&live, k, &epoch, false).unwrap().next, k);
        text.push('\n');
        for l in &lines[k + 1..] {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&live, &text).unwrap();
        let tail = entries_from(&live, head.next, &epoch, false).unwrap();
        assert!(tail.finished);
        assert_eq!(tail.next, lines.len());
        let joined: Vec<&Value> = head.lines.iter().chain(&tail.lines).collect();
        assert_eq!(joined, all.lines.iter().collect::<Vec<_>>());
        // Asking past the end waits there.
        // Pages: together the whole, each ending where the next starts.
        let mut paged = Vec::new();
        let mut from = 0;
        loop {
            let page = entries_page(&traj, from, Some(7), &epoch, false).unwrap();
            assert_eq!(page.total, all.total);
            assert!(page.next <= from + 7 && page.next >= from);
            paged.extend(page.lines);
            if page.next == page.total {
                break;
            }
            from = page.next;
        }
        assert_eq!(paged, all.lines);
        let past = entries_from(&traj, lines.len() + 3, &epoch, false).unwrap();
        assert!(past.lines.is_empty() && past.finished);
        assert_eq!(past.next, lines.len() + 3);

        assert!(matches!(
            entries_from(&dir.path().join("missing.jsonl"), 0, &epoch, false),
            Err(InspectError::Io(..))
        ));
        std::fs::write(&live, format!("{}\nnot json\n{}\n", lines[0], lines[1])).unwrap();
        assert!(matches!(
            entries_from(&live, 0, &epoch, false),
            Err(InspectError::Format(_, 2, _))
        ));
        std::fs::write(&live, "").unwrap();
        let empty = entries_from(&live, 0, &epoch, false).unwrap();
        assert_eq!(
            (empty.lines.len(), empty.next, empty.finished),
            (0, 0, false)
        );
    }

    #[test]
    fn entries_drop_hidden_parts_unless_answers_are_asked_for() {
        let epoch = Epoch::from_timestamp("2025-10-08T09:00").unwrap();
        let parse = |s: &str| serde_json::from_str::<Line>(s).unwrap();
        let npc = parse(
            r#"{"type":"npc","step":3,"call":"c1","npc":"npc/a","t":32460,"model":"m","request":{"persona":"secret persona"},"response":{"raw":"secret"},"reply":"hello","clues":["the-clue"],"failures":["x"],"error":"e"}"#,
        );
        let e = entry(&npc, 7, &epoch, false).unwrap();
        assert_eq!(
            e,
            json!({"type": "npc", "step": 3, "call": "c1", "npc": "npc/a", "t": 32460, "model": "m",
                   "reply": "hello", "error": "e", "i": 7, "time": "Wed 2025-10-08 09:01"})
        );
        let full = entry(&npc, 7, &epoch, true).unwrap();
        assert_eq!(full["request"]["persona"], "secret persona");
        assert_eq!(full["clues"], json!(["the-clue"]));
        assert_eq!(full["i"], 7);

        let model = parse(
            r#"{"type":"model","step":1,"t":0,"purpose":"turn","model":"m","request":{"messages":["system prompt"]},"failures":["timeout"],"response":{"ok":1},"usage":null}"#,
        );
        let e = entry(&model, 1, &epoch, false).unwrap();
        // The agent's own prompt is shown: it is what the agent saw.
        assert_eq!(e["request"], json!({"messages": ["system prompt"]}));
        assert_eq!(e["response"], json!({"ok": 1}));
        assert_eq!(e["failures"], json!(["timeout"]));
        assert_eq!(e["time"], "Wed 2025-10-08 00:00");
        assert!(entry(&model, 1, &epoch, true).unwrap()["request"].is_object());

        let deliver = Line::Event {
            t: SimTime(600),
            class: crate::queue::EventClass::Delivery,
            seq: 4,
            event: crate::event::SimEvent::Deliver {
                thread: "thread/dm/a".into(),
                from: "npc/a".into(),
                text: "the answer is in the manual".into(),
                clues: vec!["the-clue".into()],
            },
        };
        let e = entry(&deliver, 2, &epoch, false).unwrap();
        assert_eq!(e["event"]["text"], "the answer is in the manual");
        assert!(e["event"].get("clues").is_none());
        assert_eq!(
            entry(&deliver, 2, &epoch, true).unwrap()["event"]["clues"],
            json!(["the-clue"])
        );

        let result = Line::Result {
            step: 2,
            call: "c2".into(),
            t: SimTime(660),
            result: ToolResult {
                call_id: "c2".into(),
                tool: "run_python".into(),
                ok: true,
                time: epoch.display(SimTime(660)),
                t: SimTime(660),
                result: Some(json!({"stdout": "4"})),
                error: None,
                attachments: Vec::new(),
                notifications: Vec::new(),
            },
            record: Some(json!({"files": {"out.csv": "c2VjcmV0"}})),
        };
        let e = entry(&result, 3, &epoch, false).unwrap();
        assert!(e.get("record").is_none());
        assert_eq!(e["result"]["result"]["stdout"], "4");
        assert!(entry(&result, 3, &epoch, true).unwrap()["record"].is_object());

        let disclosure = Line::Disclosure {
            t: SimTime(600),
            npc: "npc/a".into(),
            clue: "the-clue".into(),
            task: None,
            first: true,
        };
        assert_eq!(entry(&disclosure, 5, &epoch, false), None);
        assert_eq!(
            entry(&disclosure, 5, &epoch, true).unwrap()["clue"],
            "the-clue"
        );

        let score = Line::Score {
            task: "task/a".into(),
            score: 1.0,
            success: true,
            passed: vec!["done".into()],
        };
        let e = entry(&score, 9, &epoch, false).unwrap();
        assert_eq!(e["type"], "score");
        assert!(e.get("time").is_none(), "no `t`, no time");
    }

    #[test]
    fn content_types_come_from_bytes_and_names() {
        let png = b"\x89PNG\r\n\x1a\n rest";
        assert_eq!(content_type("drive/a.png", png), "image/png");
        assert_eq!(content_type("drive/a.dat", png), "image/png");
        assert_eq!(
            content_type("drive/a.JPG", &[0xff, 0xd8, 0xff, 0xe0]),
            "image/jpeg"
        );
        assert_eq!(content_type("drive/a.gif", b"GIF89a.."), "image/gif");
        assert_eq!(
            content_type("drive/a.webp", b"RIFF\0\0\0\0WEBPVP8 "),
            "image/webp"
        );
        assert_eq!(content_type("workspace/a.svg", b"<svg/>"), "image/svg+xml");
        assert_eq!(
            content_type("workspace/a.png", b"not a picture"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type("workspace/a.csv", b"a,b\n"),
            "text/csv; charset=utf-8"
        );
        assert_eq!(content_type("workspace/a.json", b"{}"), "application/json");
        assert_eq!(
            content_type("workspace/a.html", b"<script>"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type("workspace/a.csv", &[0xff, 0xfe, 0]),
            "application/octet-stream"
        );
        assert_eq!(kind_of("workspace/a.svg", b"<svg/>"), FileKind::Image);
        assert_eq!(kind_of("workspace/a", b""), FileKind::Text);
        assert_eq!(kind_of("workspace/a.bin", &[0x80]), FileKind::Binary);
    }

    /// Texts of `loaded` the console must never show without answers.
    struct Secrets {
        personas: Vec<String>,
        descriptions: Vec<String>,
        /// What a colleague says -> the keys of the clues that say it (colleagues
        /// may share a text).
        clues: BTreeMap<String, BTreeSet<String>>,
        /// Meeting key -> what is said in it.
        notes: BTreeMap<String, String>,
    }

    fn secrets(loaded: &LoadedScenario) -> Secrets {
        // Short texts could occur by chance in what the agent may see.
        let long = |s: &str| s.trim().len() >= 24;
        let s = &loaded.scenario;
        Secrets {
            personas: s
                .company
                .people
                .iter()
                .map(|p| p.persona.clone())
                .filter(|p| long(p))
                .collect(),
            descriptions: s
                .tasks
                .iter()
                .flat_map(|t| &t.checkpoints)
                .map(|c| c.description.clone())
                .filter(|d| long(d))
                .collect(),
            clues: s
                .company
                .people
                .iter()
                .flat_map(|p| &p.clues)
                .filter(|c| long(&c.response))
                .fold(BTreeMap::new(), |mut m, c| {
                    m.entry(c.response.clone())
                        .or_insert_with(BTreeSet::new)
                        .insert(c.key.clone());
                    m
                }),
            notes: s
                .meetings
                .iter()
                .filter(|m| long(&m.notes))
                .map(|m| (m.key.clone(), m.notes.clone()))
                .collect(),
        }
    }

    /// JSON text as it reaches the page: strings escaped as in the view and entries.
    fn escaped(s: &str) -> String {
        let j = serde_json::to_string(s).unwrap();
        j[1..j.len() - 1].to_owned()
    }

    #[test]
    fn nothing_hidden_leaks_into_views_or_entries() {
        let mut names: Vec<String> = std::fs::read_dir(scenario(""))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".ron"))
            .collect();
        names.sort();
        assert!(names.len() >= 5, "{names:?}");
        names.extend(
            [
                "traineebench/traineebench-001.ron",
                "traineebench-cl/traineebench-cl-001.ron",
            ]
            .map(str::to_owned),
        );
        let mut checked = 0;
        for name in &names {
            let (dir, loaded, r) = oracle_run(name);
            let dir = dir.path();
            let sec = secrets(&loaded);
            let lines = trajectory_lines(dir);
            let mut disclosed = BTreeSet::new();
            for l in &lines {
                if let Ok(Line::Disclosure { clue, .. }) = serde_json::from_str(l) {
                    disclosed.insert(clue);
                }
            }
            let end_world = crate::replay::redrive_dir(dir, None).unwrap();
            let mut joined = BTreeSet::new();
            if let Some(mut q) = end_world.sim.world().try_query::<(&Key, &Meeting)>() {
                for (k, m) in q.iter(end_world.sim.world()) {
                    if m.joined_at.is_some() {
                        joined.insert(k.0.clone());
                    }
                }
            }
            let start = serde_json::to_string(&world_at(dir, Some(0), false).unwrap()).unwrap();
            let end = serde_json::to_string(&world_at(dir, None, false).unwrap()).unwrap();
            let epoch = epoch_of(&loaded);
            let entries: Vec<(String, String)> =
                entries_from(&dir.join("trajectory.jsonl"), 0, &epoch, false)
                    .unwrap()
                    .lines
                    .iter()
                    .map(|e| (e["type"].as_str().unwrap().to_owned(), e.to_string()))
                    .collect();
            let hidden = lines
                .iter()
                .filter(|l| l.starts_with(r#"{"type":"disclosure""#))
                .count();
            assert_eq!(entries.len(), lines.len() - hidden, "{name}");

            // `needle` as it would appear in JSON text.
            let never_json = |what: &str, text: &str, needle: &str| {
                let t = needle;
                assert!(
                    !start.contains(t),
                    "{name}: {what} in the first view: {text}"
                );
                assert!(!end.contains(t), "{name}: {what} in the last view: {text}");
                for (kind, e) in &entries {
                    assert!(!e.contains(t), "{name}: {what} in a `{kind}` entry: {text}");
                }
            };
            let never = |what: &str, text: &str| never_json(what, text, &escaped(text));
            // Tasks still to come are not shown before they are released.
            for t in &loaded.scenario.tasks {
                if !matches!(t.release, tbsim_scenario::Release::Start) {
                    let o = escaped(&t.objective);
                    assert!(!start.contains(&o), "{name}: {} before its release", t.key);
                }
            }
            for p in &sec.personas {
                never("a persona", p);
            }
            for d in &sec.descriptions {
                never("a checkpoint description", d);
            }
            for key in &disclosed {
                // As a whole JSON string: a clue key is a common word.
                let quoted = serde_json::to_string(key).unwrap();
                never_json("a disclosed clue's key", key, &quoted);
            }
            for (response, keys) in &sec.clues {
                let key = keys.iter().next().expect("at least one key");
                if keys.is_disjoint(&disclosed) {
                    never("an undisclosed clue", response);
                    continue;
                }
                // Told to the agent: in its chats and in what its tools returned.
                let t = escaped(response);
                assert!(!start.contains(&t), "{name}: clue {key} before it was told");
                for (kind, e) in &entries {
                    assert!(
                        !e.contains(&t) || kind == "event" || kind == "result",
                        "{name}: clue {key} in a `{kind}` entry"
                    );
                }
            }
            for (key, notes) in &sec.notes {
                let t = escaped(notes);
                assert!(
                    !start.contains(&t) && !end.contains(&t),
                    "{name}: notes of {key}"
                );
                if !joined.contains(key) {
                    never("the notes of a meeting the agent missed", notes);
                }
            }

            // The switch does something: answers show every released task's checkpoints.
            let answers = world_at(dir, None, true).unwrap();
            let shown = serde_json::to_string(&answers).unwrap();
            let released = answers.tasks.iter().flat_map(|t| &t.checkpoints).count();
            assert!(released > 0, "{name}");
            assert!(
                answers
                    .tasks
                    .iter()
                    .flat_map(|t| &t.checkpoints)
                    .all(|c| c.description.is_some() && c.feedback.is_some()),
                "{name}"
            );
            if let Some(d) = sec.descriptions.iter().find(|d| {
                answers
                    .tasks
                    .iter()
                    .flat_map(|t| &t.checkpoints)
                    .any(|c| c.description.as_deref() == Some(d.as_str()))
            }) {
                assert!(shown.contains(&escaped(d)), "{name}");
                checked += 1;
            }
            let whole = entries_from(&dir.join("trajectory.jsonl"), 0, &epoch, true).unwrap();
            assert_eq!(whole.lines.len(), lines.len(), "{name}");
            let _ = r;
        }
        assert!(checked >= names.len() / 2, "descriptions were looked for");
    }
}
