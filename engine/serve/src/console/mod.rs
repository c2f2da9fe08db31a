//! The console: a web page served by tbsim to watch, guide, play and fork runs.
//!
//! A [`Console`] knows three kinds of run, all reached by an id:
//!
//! * **sessions** of its [`Registry`]: started by the session API, MCP, or the
//!   console itself (a built-in agent to watch, a person playing as `human:<name>`,
//!   a fork). Live: pause, resume, step and guidance act on them through their
//!   [`Control`].
//! * **batch jobs** of `tbsim run --ui`: known from the plan, live (with a control)
//!   from the moment the job starts.
//! * **recorded runs** of `tbsim view`: directories on disk, read-only.
//!
//! Everything the page shows is read from a run's directory (its trajectory, read
//! while it is written; its world, replayed to the asked step with
//! [`tbsim_engine::replay::Replayer`], the worlds kept between requests by
//! [`worlds`]) or from its control's published status, and
//! passes through [`tbsim_engine::inspect`], which keeps hidden data out (answers,
//! clues, colleagues' knowledge, the oracle's plan). Only a read-only console
//! ([`Mode::View`]) may show a *finished* run's answers, on explicit request.
//!
//! The routes are in [`routes`]; the page's files are embedded from `assets/`.

pub(crate) mod access;
pub mod compare;
pub mod export;
pub mod messages;
mod pages;
pub mod routes;
pub mod view_cache;
pub mod world_delta;
pub mod worlds;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use tbsim_core::segment::{Segment, confined_join};
use tbsim_engine::agent::Agent;
use tbsim_engine::live::{Control, LiveState, LiveStatus};
use tbsim_engine::trajectory::Line;
use tbsim_scenario::LoadedScenario;

use crate::registry::Registry;

/// Which command serves the console; it decides what the page may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `tbsim serve`: sessions; runs may be started from the page.
    Serve,
    /// `tbsim run --ui`: one batch's jobs (and forks of them).
    Batch,
    /// `tbsim view`: recorded runs, read-only (and forks of them).
    View,
}

/// Builds the built-in agents the console may start or fork to (the CLI knows how:
/// the oracle, the solver, adversaries, configured models).
pub trait AgentMaker: Send + Sync {
    /// The names offered on the page (`oracle`, `idle`, `solver`, `llm:<alias>`, ...).
    fn names(&self) -> Vec<String>;
    /// A fresh agent called `name` for a run of `scenario` with master seed `seed`.
    fn make(
        &self,
        name: &str,
        scenario: &LoadedScenario,
        seed: u64,
    ) -> Result<Box<dyn Agent>, String>;
}

/// What kind of run an id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A session of the registry.
    Session,
    /// A job of the batch being run.
    Batch,
    /// A run directory on disk.
    Recorded,
}

/// A batch job or a recorded run: fixed when the console starts.
#[derive(Debug)]
pub struct FixedRun {
    /// Its id on the page (`job-<n>`, `run-<n>`).
    pub id: String,
    /// Batch or recorded.
    pub kind: RunKind,
    /// Its directory.
    pub dir: PathBuf,
    /// The scenario's name.
    pub scenario: String,
    /// The agent's name.
    pub agent: String,
    /// The run's tag (`run.json`), if any.
    pub tag: Option<String>,
    /// Master seed.
    pub seed: u64,
    /// Hint level.
    pub hints: u8,
    /// Working days of its scenario (shown for a job not started yet).
    pub days: u32,
    /// A batch job's control, set when the job starts.
    pub control: Mutex<Option<Arc<Control>>>,
}

impl FixedRun {
    /// A recorded run from its directory (its trajectory's header names it).
    pub fn recorded(id: String, dir: PathBuf) -> Result<FixedRun, ConsoleError> {
        let header = read_header(&dir)?;
        // Only a label: a run without a readable `run.json` has none.
        let tag = tbsim_engine::run_file::RunFile::read(&dir)
            .ok()
            .and_then(|f| f.options.tag);
        Ok(FixedRun {
            id,
            kind: RunKind::Recorded,
            dir,
            scenario: header.scenario,
            agent: header.agent,
            tag,
            seed: header.seed,
            hints: header.hints,
            days: 1,
            control: Mutex::new(None),
        })
    }

    fn control(&self) -> Option<Arc<Control>> {
        self.control
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Why the console refuses.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No run has that id.
    #[error("no run `{0}`")]
    UnknownRun(String),
    /// A recorded run's directory could not be read.
    #[error("cannot read the run in `{0}`: {1}")]
    Unreadable(String, String),
}

/// A run in the list (see docs/console.md, `RunSummary`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Id.
    pub id: String,
    /// Session, batch job or recorded.
    pub kind: RunKind,
    /// The scenario's name.
    pub scenario: String,
    /// The agent's name.
    pub agent: String,
    /// The run's tag (`--tag`, `tag=`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Master seed.
    pub seed: u64,
    /// Hint level.
    pub hints: u8,
    /// `queued`, `running`, `paused`, `waiting_for_model`, `waiting_for_agent`,
    /// `finished`, `interrupted`: a session's run the server no longer holds and
    /// that was never finished (its server stopped or died mid-run), or `failed`: a
    /// live session whose run directory could not be written (see `failure`).
    pub state: &'static str,
    /// The simulated clock as shown to agents.
    pub time: String,
    /// The working day, from 1.
    pub day: u32,
    /// Working days.
    pub days: u32,
    /// Decisions made.
    pub step: u64,
    /// Mean checkpoint score so far (the final score once finished).
    pub score: f64,
    /// Tasks released.
    pub tasks: usize,
    /// Why it ended.
    pub end_reason: Option<tbsim_core::protocol::EndReason>,
    /// A person may act for it from the page (a `human:` session still going).
    pub playable: bool,
    /// Guidance applies (a live run).
    pub controllable: bool,
    /// Pause, resume and step apply (a live run a built-in agent drives).
    pub pausable: bool,
    /// The run it was forked from (its directory's name) and the step.
    pub fork: Option<ForkSummary>,
    /// Why a `failed` run failed (its trajectory could not be written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The batch it belongs to: the folders above its scenario's (`tbsim view`).
    pub batch: Option<String>,
    /// Its trial within the batch (from `result.json`).
    pub trial: Option<u32>,
    /// The bundled suite whose plan names its scenario.
    pub suite: Option<String>,
    /// Its tasks' meta-task families, sorted, each once (known once finished).
    pub families: Vec<String>,
    /// Share of tasks done (known once finished).
    pub success_rate: Option<f64>,
    /// The agent's model calls, tokens and cost (a model-backed run, once finished).
    pub model: Option<tbsim_core::protocol::ModelUsage>,
    /// Only what is cheap is known yet (id, scenario, agent, seed, hints, tag and
    /// whether it finished): its score, clock, steps and labels are being read in
    /// the background, and a later list (the stream sends it) has them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub indexing: bool,
    /// A person is playing this run's scenario in another run: this one shows
    /// nothing but its summary until the play ends (see `access.rs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

/// How much of a recorded run's summary is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// What is known without reading the run (a list answering at once).
    Quick,
    /// Its `result.json` (a replay only for a run without one).
    Listed,
    /// Its steps and hint tiers too (a replay, shared with the world route).
    Full,
}

/// How long a runs list may spend reading summaries not read yet; the rest are
/// answered [`Depth::Quick`] and read in the background ([`Console::index`]).
pub const LIST_BUDGET: std::time::Duration = std::time::Duration::from_millis(100);

/// Where a fork comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkSummary {
    /// The parent's directory name.
    pub parent: String,
    /// Decisions taken over.
    pub step: u64,
}

/// One run in detail (see docs/console.md, `RunDetail`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDetail {
    /// The summary.
    #[serde(flatten)]
    pub summary: RunSummary,
    /// Complete decisions recorded.
    pub steps: u64,
    /// Per released task: hint tiers given and available.
    pub hint_tiers: BTreeMap<String, (u8, u8)>,
    /// Guidance queued, not yet applied.
    pub queued: usize,
    /// Guidance refused when applied.
    pub dropped: u64,
    /// The run directory's name (never a host path).
    pub dir_name: String,
}

/// What a recorded run's summary was computed from, so it is computed once.
#[derive(Debug, Clone)]
struct Cached {
    /// The trajectory's length and whether `result.json` was there: a change of
    /// either means the run moved on.
    key: (u64, bool),
    /// Replayed (steps and hint tiers known), or read from `result.json` alone for
    /// the list (see [`Console::runs`]).
    full: bool,
    summary: RunSummary,
    steps: u64,
    hint_tiers: BTreeMap<String, (u8, u8)>,
    /// [`worlds::Worlds::corrections`] when it was made: a cached end world found
    /// wrong since means it is made again.
    corrections: u64,
}

/// The console's state (see the module docs).
pub struct Console {
    mode: Mode,
    registry: Arc<Registry>,
    fixed: Vec<Arc<FixedRun>>,
    agents: Arc<dyn AgentMaker>,
    cache: Mutex<BTreeMap<PathBuf, Cached>>,
    /// Worlds of the runs looked at last, kept to answer later steps fast.
    worlds: worlds::Worlds,
    epochs: Mutex<BTreeMap<PathBuf, tbsim_core::time::Epoch>>,
    /// Where the lines of the trajectories looked at last start: timeline pages
    /// read only their own bytes.
    pages: pages::Pages,
    /// Sessions' runs the registry has forgotten, read back from its directory.
    past: Mutex<BTreeMap<String, Arc<FixedRun>>>,
    /// Whether batch jobs not started yet start held (`tbsim run --ui-paused`);
    /// "pause all" and "resume all" set it.
    hold_new: Arc<std::sync::atomic::AtomicBool>,
    /// Scenario name to the bundled suite that names it (labels the list).
    suites: BTreeMap<String, String>,
    /// Whether a background reading of the summaries a list left out is under way.
    indexing: std::sync::atomic::AtomicBool,
    /// Play sessions' turns so far, by session id: the player's page shows them all
    /// (the agent keeps its whole conversation; a person should see as much).
    play: Mutex<BTreeMap<String, Vec<serde_json::Value>>>,
}

/// Whether `id` has the form of a session id (32 lowercase hex digits): only such
/// names under the registry's directory are read back as past sessions.
fn is_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("mode", &self.mode)
            .field("fixed", &self.fixed.len())
            .finish_non_exhaustive()
    }
}

/// A run an id resolves to.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    Session(String, Arc<crate::registry::Entry>),
    Fixed(Arc<FixedRun>),
}

impl Found {
    pub(crate) fn dir(&self) -> &Path {
        match self {
            Found::Session(_, e) => &e.info.dir,
            Found::Fixed(f) => &f.dir,
        }
    }

    pub(crate) fn control(&self) -> Option<Arc<Control>> {
        match self {
            Found::Session(_, e) => Some(Arc::clone(&e.info.control)),
            Found::Fixed(f) => f.control(),
        }
    }
}

impl Console {
    /// A console over `registry`'s sessions and the `fixed` runs.
    pub fn new(
        mode: Mode,
        registry: Arc<Registry>,
        fixed: Vec<Arc<FixedRun>>,
        agents: Arc<dyn AgentMaker>,
    ) -> Console {
        Console {
            mode,
            registry,
            fixed,
            agents,
            cache: Mutex::new(BTreeMap::new()),
            worlds: worlds::Worlds::new(),
            epochs: Mutex::new(BTreeMap::new()),
            pages: pages::Pages::default(),
            past: Mutex::new(BTreeMap::new()),
            hold_new: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            suites: BTreeMap::new(),
            indexing: std::sync::atomic::AtomicBool::new(false),
            play: Mutex::new(BTreeMap::new()),
        }
    }

    /// Keeps finished runs' end worlds in `cache` between consoles, so a run
    /// opened again paints without a replay (see [`view_cache`]).
    #[must_use]
    pub fn with_view_cache(mut self, cache: Arc<view_cache::ViewCache>) -> Console {
        self.worlds = worlds::Worlds::with_cache(cache);
        self
    }

    /// Labels runs with the suites that name their scenarios (scenario name to
    /// suite name, as [`crate::scenarios::suite_names`] reads them).
    #[must_use]
    pub fn with_suites(mut self, suites: BTreeMap<String, String>) -> Console {
        self.suites = suites;
        self
    }

    /// The flag saying whether batch jobs not started yet start held (shared with
    /// whoever makes their controls).
    pub fn hold_new(&self) -> Arc<std::sync::atomic::AtomicBool> {
        Arc::clone(&self.hold_new)
    }

    /// Holds (or lets go) every live run a built-in agent drives, and the batch
    /// jobs still to start; returns the ids of the runs it changed.
    pub fn hold_all(&self, hold: bool) -> Vec<String> {
        use std::sync::atomic::Ordering;
        self.hold_new.store(hold, Ordering::SeqCst);
        let mut changed = Vec::new();
        let mut act = |id: &str, c: &Control| {
            let state = c.status().state;
            if state == LiveState::Finished || c.is_paused() == hold {
                return;
            }
            if hold {
                c.pause();
            } else {
                c.resume();
            }
            changed.push(id.to_owned());
        };
        for f in &self.fixed {
            if let Some(c) = f.control() {
                act(&f.id, &c);
            }
        }
        for (id, e) in self.registry.list() {
            // A run an external agent drives is never held (see the routes).
            if e.info.builtin {
                act(&id, &e.info.control);
            }
        }
        changed.sort();
        changed
    }

    /// A session's run the registry has forgotten (closed and expired, or from an
    /// earlier server on the same directory): recorded, read-only.
    fn past(&self, id: &str) -> Option<Arc<FixedRun>> {
        if !is_session_id(id) {
            return None;
        }
        if let Some(f) = self
            .past
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
        {
            return Some(Arc::clone(f));
        }
        let dir = confined_join(&self.registry.config().out, &Segment::sanitize(id));
        let run = Arc::new(FixedRun::recorded(id.to_owned(), dir).ok()?);
        self.past
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), Arc::clone(&run));
        Some(run)
    }

    /// The ids of past sessions' runs in the registry's directory.
    fn past_ids(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.registry.config().out) else {
            return Vec::new();
        };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| is_session_id(n))
            .collect();
        ids.sort();
        ids
    }

    /// The worlds kept between requests (the world, file and detail routes read
    /// runs through them).
    pub fn worlds(&self) -> &worlds::Worlds {
        &self.worlds
    }

    /// Which command serves it.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The sessions.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The agents offered.
    pub fn agents(&self) -> &Arc<dyn AgentMaker> {
        &self.agents
    }

    /// Whether answers may be shown (a read-only console, finished runs only).
    pub fn answers_allowed(&self) -> bool {
        self.mode == Mode::View
    }

    pub(crate) fn find(&self, id: &str) -> Result<Found, ConsoleError> {
        if let Some(f) = self.fixed.iter().find(|f| f.id == id) {
            return Ok(Found::Fixed(Arc::clone(f)));
        }
        if let Ok(e) = self.registry.peek(id) {
            return Ok(Found::Session(id.to_owned(), e));
        }
        self.past(id)
            .map(Found::Fixed)
            .ok_or_else(|| ConsoleError::UnknownRun(id.to_owned()))
    }

    /// Adds `turn` to the play history of session `id`, unless it is the latest
    /// there already (a turn is noted when shown and when acted on).
    pub(crate) fn note_play_turn(&self, id: &str, turn: serde_json::Value) {
        let mut h = self.play.lock().unwrap_or_else(PoisonError::into_inner);
        let list = h.entry(id.to_owned()).or_default();
        let step = |t: &serde_json::Value| t["observation"]["step"].as_u64();
        if list.last().is_none_or(|l| step(l) != step(&turn)) {
            list.push(turn);
        }
    }

    /// The turns session `id` handed out, oldest first (see [`Console::note_play_turn`]).
    pub(crate) fn play_history(&self, id: &str) -> Vec<serde_json::Value> {
        self.play
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .unwrap_or_default()
    }

    /// A page of the timeline of trajectory `traj` (see `pages.rs`).
    pub(crate) fn page(
        &self,
        traj: &Path,
        from: usize,
        limit: Option<usize>,
        epoch: &tbsim_core::time::Epoch,
        answers: bool,
    ) -> Result<tbsim_engine::inspect::Timeline, tbsim_engine::inspect::InspectError> {
        self.pages.page(traj, from, limit, epoch, answers)
    }

    /// The calendar of the run in `dir` (from its scenario copy; read once).
    pub fn epoch(&self, dir: &Path) -> Result<tbsim_core::time::Epoch, ConsoleError> {
        if let Some(e) = self
            .epochs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(dir)
        {
            return Ok(*e);
        }
        let loaded = tbsim_engine::run_dir::load_scenario(&dir.join("scenario.ron"))
            .map_err(|e| ConsoleError::Unreadable(dir.display().to_string(), e.to_string()))?;
        let epoch = tbsim_engine::inspect::epoch_of(&loaded);
        self.epochs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.to_path_buf(), epoch);
        Ok(epoch)
    }

    /// Every run, sorted by id in natural order (`trial-2` before `trial-10`).
    ///
    /// A finished recorded run is summarised from its `result.json` alone: no
    /// replay. Summaries not read yet are read for [`LIST_BUDGET`] at most; the
    /// rest answer with what is cheap (`indexing` set), so a thousand runs list at
    /// once, and [`Console::index`] (started by [`Console::index_in_background`])
    /// reads them for later lists. A run's detail replays it (once).
    pub fn runs(&self) -> Vec<RunSummary> {
        self.runs_within(LIST_BUDGET)
    }

    /// [`Console::runs`], reading summaries for `budget` at most.
    pub(crate) fn runs_within(&self, budget: std::time::Duration) -> Vec<RunSummary> {
        // While the background index reads, a list reads nothing itself (it would
        // read the same files again, on the same cores).
        let budget = if self.indexing.load(std::sync::atomic::Ordering::SeqCst) {
            std::time::Duration::ZERO
        } else {
            budget
        };
        let deadline = std::time::Instant::now() + budget;
        let depth = || {
            if std::time::Instant::now() < deadline {
                Depth::Listed
            } else {
                Depth::Quick
            }
        };
        let mut all: Vec<RunSummary> = self
            .fixed
            .iter()
            .map(|f| {
                self.detail_with(&Found::Fixed(Arc::clone(f)), depth())
                    .summary
            })
            .collect();
        let live = self.registry.list();
        for id in self.past_ids() {
            if live.iter().any(|(l, _)| *l == id) {
                continue;
            }
            // A directory just created by a session opening has no trajectory yet.
            if let Some(run) = self.past(&id) {
                all.push(self.detail_with(&Found::Fixed(run), depth()).summary);
            }
        }
        for (id, e) in live {
            all.push(self.detail_of(&Found::Session(id, e)).summary);
        }
        all.sort_by(|a, b| natural_cmp(&a.id, &b.id));
        let played = access::played_scenarios(self);
        for r in &mut all {
            r.locked = access::locked_by_play(&played, &r.id, &r.scenario);
        }
        all
    }

    /// Reads the summaries of recorded runs a list answered without
    /// (`indexing`), in the list's order, so later lists have them whole.
    pub fn index(&self) {
        let mut runs: Vec<Arc<FixedRun>> = self.fixed.clone();
        runs.extend(self.past_ids().iter().filter_map(|id| self.past(id)));
        runs.sort_by(|a, b| natural_cmp(&a.id, &b.id));
        for f in runs {
            if f.kind == RunKind::Recorded {
                self.detail_with(&Found::Fixed(f), Depth::Listed);
            }
        }
    }

    /// Starts [`Console::index`] on a thread of its own unless one is under way
    /// (a list with `indexing` rows calls it; the next list is whole).
    pub fn index_in_background(self: &Arc<Self>) {
        use std::sync::atomic::Ordering;
        if self.indexing.swap(true, Ordering::SeqCst) {
            return;
        }
        let c = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("tbsim-console-index".into())
            .spawn(move || {
                c.index();
                c.indexing.store(false, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // No thread to spare: the next list tries again.
            self.indexing.store(false, Ordering::SeqCst);
        }
    }

    /// `tbsim view` at start: reads the runs' summaries in the background (so the
    /// first list answers at once), and, when it shows no more runs than
    /// [`worlds::RUNS_KEPT`] (someone opening a run or two), replays each to its
    /// end and renders that world, so opening one paints without a replay. A
    /// request for a run being warmed waits for that work and reuses it (see
    /// [`worlds::Worlds`]); nothing warmed is ever different from a fresh replay.
    pub fn warm_in_background(self: &Arc<Self>) {
        self.index_in_background();
        let runs: Vec<Arc<FixedRun>> = self
            .fixed
            .iter()
            .filter(|f| f.kind == RunKind::Recorded)
            .cloned()
            .collect();
        if runs.is_empty() || runs.len() > worlds::RUNS_KEPT {
            return;
        }
        let c = Arc::clone(self);
        // No thread to spare only means the first look replays.
        let _ = std::thread::Builder::new()
            .name("tbsim-console-warm".into())
            .spawn(move || {
                for f in runs {
                    let found = Found::Fixed(Arc::clone(&f));
                    c.detail_with(&found, Depth::Full);
                    let _ = c.worlds.view(&f.dir, None, false);
                }
            });
    }

    /// One run in detail.
    pub fn detail(&self, id: &str) -> Result<RunDetail, ConsoleError> {
        let mut d = self.detail_of(&self.find(id)?);
        let played = access::played_scenarios(self);
        d.summary.locked = access::locked_by_play(&played, &d.summary.id, &d.summary.scenario);
        Ok(d)
    }

    pub(crate) fn detail_of(&self, found: &Found) -> RunDetail {
        self.detail_with(found, Depth::Full)
    }

    /// `depth`: how much of a recorded run is read (see [`Depth`]).
    fn detail_with(&self, found: &Found, depth: Depth) -> RunDetail {
        let dir = found.dir().to_path_buf();
        let dir_name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let planned_days = match found {
            Found::Fixed(f) => f.days.max(1),
            Found::Session(..) => 1,
        };
        let tag = match found {
            Found::Session(_, e) => e.info.tag.clone(),
            Found::Fixed(f) => f.tag.clone(),
        };
        let (id, kind, scenario, agent, seed, hints, fork, builtin) = match found {
            Found::Session(id, e) => (
                id.clone(),
                RunKind::Session,
                e.info.scenario.clone(),
                e.info.agent.clone(),
                e.info.seed,
                e.info.hints,
                e.info.fork.as_ref().map(|(p, s)| ForkSummary {
                    parent: self
                        .fixed
                        .iter()
                        .find(|f| f.dir == *p)
                        .map(|f| f.id.clone())
                        .unwrap_or_else(|| {
                            p.file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        }),
                    step: *s,
                }),
                e.info.builtin,
            ),
            Found::Fixed(f) => (
                f.id.clone(),
                f.kind,
                f.scenario.clone(),
                f.agent.clone(),
                f.seed,
                f.hints,
                None,
                true,
            ),
        };
        let written = dir.join("result.json").is_file();
        let scenario_name = scenario.clone();
        let batch = match found {
            Found::Fixed(f) if self.mode == Mode::View && f.kind == RunKind::Recorded => {
                batch_of(&f.id, &f.scenario)
            }
            _ => None,
        };
        let base = RunSummary {
            id,
            kind,
            scenario,
            agent: agent.clone(),
            tag,
            seed,
            hints,
            state: "queued",
            time: String::new(),
            day: 1,
            days: planned_days,
            step: 0,
            score: 0.0,
            tasks: 0,
            end_reason: None,
            playable: false,
            controllable: false,
            pausable: false,
            fork,
            failure: None,
            batch: None,
            trial: None,
            suite: self.suites.get(&scenario_name).cloned(),
            families: Vec::new(),
            success_rate: None,
            model: None,
            indexing: false,
            locked: false,
        };
        let mut detail = match found.control() {
            Some(c) => live_detail(base, &c.status(), written, !builtin, &dir),
            None if kind == RunKind::Batch => RunDetail {
                summary: base,
                steps: 0,
                hint_tiers: BTreeMap::new(),
                queued: 0,
                dropped: 0,
                dir_name: String::new(),
            },
            None => self.recorded_detail(base, &dir, depth),
        };
        detail.dir_name = dir_name;
        if detail.summary.batch.is_none() {
            detail.summary.batch = batch;
        }
        if let Found::Session(_, e) = found
            && let Some(why) = e.info.failure()
        {
            detail.summary.state = "failed";
            detail.summary.controllable = false;
            detail.summary.pausable = false;
            detail.summary.playable = false;
            detail.summary.failure = Some(why);
        }
        // A past session's run without its result: no server drives it any more (the
        // one that did stopped or died), so it is not running.
        if let Found::Fixed(f) = found
            && f.kind == RunKind::Recorded
            && is_session_id(&f.id)
            && detail.summary.state == "running"
        {
            detail.summary.state = "interrupted";
        }
        detail
    }

    /// The id of a fork's parent, given as its directory's name: the run of that
    /// directory when the console shows it under another id (`tbsim view`), so the
    /// page's link to the parent works; the name itself otherwise.
    fn parent_id(&self, parent: &str) -> String {
        self.fixed
            .iter()
            .find(|f| f.dir.file_name().is_some_and(|n| n == parent))
            .map_or_else(|| parent.to_owned(), |f| f.id.clone())
    }

    fn recorded_detail(&self, base: RunSummary, dir: &Path, depth: Depth) -> RunDetail {
        let traj = dir.join("trajectory.jsonl");
        let len = std::fs::metadata(&traj).map_or(0, |m| m.len());
        let key = (len, dir.join("result.json").is_file());
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(dir)
            .filter(|c| c.key == key && (c.full || depth != Depth::Full))
            .filter(|c| !c.full || c.corrections == self.worlds.corrections())
            .cloned();
        let c = match cached {
            Some(c) => c,
            None if depth == Depth::Quick => {
                // Nothing read: what the list knows of it already, and whether it
                // finished (its result written).
                let mut summary = base;
                summary.state = if key.1 { "finished" } else { "running" };
                summary.indexing = true;
                return RunDetail {
                    summary,
                    steps: 0,
                    hint_tiers: BTreeMap::new(),
                    queued: 0,
                    dropped: 0,
                    dir_name: String::new(),
                };
            }
            None => {
                let c = if depth == Depth::Full {
                    None
                } else {
                    summarise_finished(base.clone(), dir, key)
                };
                let c = c.unwrap_or_else(|| compute_recorded(base.clone(), dir, key, &self.worlds));
                self.cache
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(dir.to_path_buf(), c.clone());
                c
            }
        };
        let fork = c.summary.fork.clone().map(|f| ForkSummary {
            parent: self.parent_id(&f.parent),
            step: f.step,
        });
        RunDetail {
            summary: RunSummary {
                id: base.id,
                fork,
                ..c.summary
            },
            steps: c.steps,
            hint_tiers: c.hint_tiers,
            queued: 0,
            dropped: 0,
            dir_name: String::new(),
        }
    }
}

/// A live run's detail from its control's status.
fn live_detail(
    mut base: RunSummary,
    status: &LiveStatus,
    written: bool,
    remote: bool,
    dir: &Path,
) -> RunDetail {
    // The runner says finished just before it writes the directory: the page says
    // so only once `result.json` is there to read.
    base.state = match status.state {
        LiveState::Finished if written => "finished",
        LiveState::Finished => "running",
        LiveState::Running => "running",
        LiveState::Paused => "paused",
        LiveState::WaitingForModel => "waiting_for_model",
        LiveState::WaitingForAgent => "waiting_for_agent",
    };
    if let Some(p) = &status.progress {
        base.time = p.time.clone();
        base.day = p.day;
        base.days = p.days;
        base.step = p.step;
        base.score = p.score;
        base.tasks = p.tasks.len();
        base.end_reason = p.end_reason;
    }
    let finished = base.state == "finished";
    if finished && let Some(r) = read_head(dir) {
        base.score = r.checkpoint_score;
        base.end_reason = r.end_reason;
        r.label(&mut base);
    }
    base.controllable = !finished;
    base.pausable = !finished && !remote;
    base.playable = remote && !finished && base.agent.starts_with("human:");
    RunDetail {
        steps: base.step,
        summary: base,
        hint_tiers: status.hint_tiers.clone(),
        queued: status.queued,
        dropped: status.dropped,
        dir_name: String::new(),
    }
}

/// The part of `result.json` the list shows (the rest is skipped unparsed).
#[derive(Debug, Deserialize)]
struct ResultHead {
    checkpoint_score: f64,
    success_rate: f64,
    steps: u64,
    #[serde(default)]
    trial: Option<u32>,
    end_reason: Option<tbsim_core::protocol::EndReason>,
    sim_start: String,
    sim_end: String,
    #[serde(default)]
    days: Vec<DayHead>,
    #[serde(default)]
    tasks: Vec<TaskHead>,
    #[serde(default)]
    model: Option<tbsim_core::protocol::ModelUsage>,
}

#[derive(Debug, Deserialize)]
struct DayHead {
    date: String,
}

#[derive(Debug, Deserialize)]
struct TaskHead {
    family: String,
    #[serde(default)]
    released_at: Option<String>,
}

impl ResultHead {
    /// The labels only a result gives: trial, families, success rate, model use.
    fn label(&self, s: &mut RunSummary) {
        s.trial = self.trial;
        let families: std::collections::BTreeSet<&str> =
            self.tasks.iter().map(|t| t.family.as_str()).collect();
        s.families = families.into_iter().map(str::to_owned).collect();
        s.success_rate = Some(self.success_rate);
        s.model = self.model.clone();
    }
}

fn read_head(dir: &Path) -> Option<ResultHead> {
    let text = tbsim_engine::run_dir::read_result(&dir.join("result.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The `tag` a run's `run.json` gives it, if any.
fn read_tag(dir: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Tagged {
        #[serde(default)]
        tag: Option<String>,
    }
    let text = tbsim_engine::run_dir::read_result(&dir.join("run.json")).ok()?;
    serde_json::from_str::<Tagged>(&text).ok()?.tag
}

/// The batch of a run shown by `tbsim view` under `id` (its folders joined by
/// `:`): the folders above the one named after its scenario (a batch writes
/// `<out>/<scenario>/trial-<t>`), else above the run's own; none for a run named
/// alone.
fn batch_of(id: &str, scenario: &str) -> Option<String> {
    let parts: Vec<&str> = id.split(':').collect();
    if parts.len() < 2 {
        return None;
    }
    let cut = parts
        .iter()
        .rposition(|p| *p == scenario)
        .unwrap_or(parts.len() - 1);
    (cut > 0).then(|| parts[..cut].join("/"))
}

/// A finished recorded run's summary from its `result.json` alone (no replay), or
/// `None` when it has none that reads.
fn summarise_finished(mut base: RunSummary, dir: &Path, key: (u64, bool)) -> Option<Cached> {
    let r = read_head(dir)?;
    base.fork = read_fork(dir);
    base.state = "finished";
    base.score = r.checkpoint_score;
    base.end_reason = r.end_reason;
    base.step = r.steps;
    base.tasks = r.tasks.iter().filter(|t| t.released_at.is_some()).count();
    base.days = (r.days.len() as u32).max(1);
    let end_date = r.sim_end.get(..10).unwrap_or_default();
    base.day = (r
        .days
        .iter()
        .filter(|d| d.date.as_str() <= end_date)
        .count() as u32)
        .clamp(1, base.days);
    base.time = tbsim_core::time::Epoch::from_timestamp(&r.sim_start)
        .ok()
        .and_then(|e| Some(e.display(e.parse(&r.sim_end).ok()?)))
        .unwrap_or_else(|| r.sim_end.replace('T', " "));
    if base.tag.is_none() {
        base.tag = read_tag(dir);
    }
    r.label(&mut base);
    Some(Cached {
        key,
        full: false,
        steps: r.steps,
        summary: base,
        hint_tiers: BTreeMap::new(),
        corrections: 0,
    })
}

fn read_fork(dir: &Path) -> Option<ForkSummary> {
    read_header(dir).ok()?.fork.map(|f| ForkSummary {
        parent: f.parent,
        step: f.step,
    })
}

/// A recorded run's detail: its world replayed to the last complete decision (kept
/// in `worlds`, where the world route finds it), its result when written.
fn compute_recorded(
    mut base: RunSummary,
    dir: &Path,
    key: (u64, bool),
    worlds: &worlds::Worlds,
) -> Cached {
    // Read first: a correction made while this is made means it is made again.
    let corrections = worlds.corrections();
    let mut steps = 0;
    let mut hint_tiers = BTreeMap::new();
    base.fork = read_fork(dir);
    if base.tag.is_none() {
        base.tag = read_tag(dir);
    }
    if let Ok(r) = worlds.end_facts(dir) {
        let p = r.progress;
        base.time = p.time;
        base.day = p.day;
        base.days = p.days;
        base.step = p.step;
        base.score = p.score;
        base.tasks = p.tasks.len();
        steps = r.steps;
        hint_tiers = r.hint_tiers;
    }
    match read_head(dir) {
        Some(r) => {
            base.state = "finished";
            base.score = r.checkpoint_score;
            base.end_reason = r.end_reason;
            base.step = r.steps;
            r.label(&mut base);
        }
        // A directory without its result: cut off, or still being written by a
        // process the console does not control.
        None => base.state = "running",
    }
    Cached {
        key,
        full: true,
        summary: base,
        steps,
        hint_tiers,
        corrections,
    }
}

/// Natural order: runs of digits compare as numbers, the rest as text.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let n = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let m = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (dx, dy) = (&x[..n], &y[..m]);
                // Leading zeros aside, a longer run of digits is a larger number.
                let tx = &dx[dx.iter().take_while(|c| **c == b'0').count()..];
                let ty = &dy[dy.iter().take_while(|c| **c == b'0').count()..];
                let o = tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty));
                if o != Ordering::Equal {
                    return o;
                }
                x = &x[n..];
                y = &y[m..];
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

/// The trajectory header of the run in `dir`.
pub fn read_header(dir: &Path) -> Result<tbsim_engine::trajectory::Header, ConsoleError> {
    let path = dir.join("trajectory.jsonl");
    let unreadable = |m: String| ConsoleError::Unreadable(dir.display().to_string(), m);
    if tbsim_engine::run_dir::is_compressed(dir) {
        // Pages are read by byte offset from the plain file.
        return Err(unreadable(format!(
            "its trajectory is compressed (`{}`, `tbsim run --compress`): replay, regrade \
             and report read it; for the console, decompress it first \
             (`zstd -d trajectory.jsonl.zst`)",
            tbsim_engine::run_dir::TRAJECTORY_ZST
        )));
    }
    // A run directory is untrusted: no FIFO, device or link, and a bounded line.
    let file =
        tbsim_scenario::untrusted::open_regular(&path, tbsim_scenario::untrusted::Links::Refuse)
            .map_err(|e| unreadable(e.into_io().to_string()))?;
    let mut first = String::new();
    let capped = std::io::Read::take(file, tbsim_engine::run_dir::MAX_LINE_BYTES as u64);
    std::io::BufRead::read_line(&mut std::io::BufReader::new(capped), &mut first)
        .map_err(|e| unreadable(e.to_string()))?;
    match serde_json::from_str::<Line>(&first) {
        Ok(Line::Header(h)) => Ok(h),
        Ok(_) => Err(unreadable("its first line is not a header".into())),
        Err(e) => Err(unreadable(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    struct NoAgents;

    impl AgentMaker for NoAgents {
        fn names(&self) -> Vec<String> {
            Vec::new()
        }
        fn make(&self, name: &str, _: &LoadedScenario, _: u64) -> Result<Box<dyn Agent>, String> {
            Err(format!("no agent `{name}`"))
        }
    }

    /// `n` finished oracle runs of busy-day as a batch's trials, and a console
    /// of `tbsim view` over them.
    fn view_of(n: usize) -> (tempfile::TempDir, Arc<Console>) {
        let tmp = tempfile::tempdir().unwrap();
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../content/scenarios/busy-day.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let first = tmp.path().join("b/busy-day/trial-0");
        let mut oracle = tbsim_engine::agent::Oracle::new(&loaded.scenario);
        tbsim_engine::run::run_to_dir(
            &loaded,
            &mut oracle,
            tbsim_engine::protocol::SimConfig::default(),
            &tbsim_engine::run::RunLimits::default(),
            &first,
        )
        .unwrap();
        let mut fixed = Vec::new();
        for t in 0..n {
            let d = tmp.path().join(format!("b/busy-day/trial-{t}"));
            if t > 0 {
                std::fs::create_dir_all(&d).unwrap();
                for f in std::fs::read_dir(&first).unwrap() {
                    let f = f.unwrap().path();
                    std::fs::copy(&f, d.join(f.file_name().unwrap())).unwrap();
                }
            }
            let id = format!("b:busy-day:trial-{t}");
            fixed.push(Arc::new(FixedRun::recorded(id, d).unwrap()));
        }
        let registry = Arc::new(Registry::new(crate::registry::RegistryConfig {
            roots: crate::scenarios::ScenarioRoots::default(),
            out: tmp.path().join("forks"),
            max_sessions: 1,
            idle_timeout: Duration::from_secs(60),
            unused_timeout: Duration::from_secs(60),
            keep_finished: crate::registry::DEFAULT_KEEP_FINISHED,
            view_cache: None,
        }));
        let c = Console::new(Mode::View, registry, fixed, Arc::new(NoAgents));
        (tmp, Arc::new(c))
    }

    #[test]
    fn a_list_out_of_time_answers_with_what_is_cheap_and_the_index_fills_it_in() {
        let (_tmp, c) = view_of(3);
        // No time at all: every run from what `tbsim view` read when it started.
        let quick = c.runs_within(Duration::ZERO);
        assert_eq!(quick.len(), 3);
        for r in &quick {
            assert!(r.indexing, "{r:?}");
            assert_eq!((r.state, r.batch.as_deref()), ("finished", Some("b")));
            assert_eq!((r.scenario.as_str(), r.success_rate), ("busy-day", None));
        }
        let shown = serde_json::to_value(&quick[0]).unwrap();
        assert_eq!(shown["indexing"], true);
        c.index();
        let whole = c.runs_within(Duration::ZERO);
        assert!(whole.iter().all(|r| !r.indexing), "{whole:?}");
        assert!(
            whole
                .iter()
                .all(|r| r.score > 0.0 && r.success_rate.is_some())
        );
        // What a list with all the time it needs gives, and says nothing of indexing.
        let (_tmp2, fresh) = view_of(3);
        let read = fresh.runs_within(Duration::from_secs(600));
        let strip = |v: Vec<RunSummary>| -> Vec<(String, f64, u64, String, Option<f64>)> {
            v.into_iter()
                .map(|r| (r.id, r.score, r.step, r.time, r.success_rate))
                .collect()
        };
        assert_eq!(strip(whole), strip(read.clone()));
        assert!(
            serde_json::to_value(&read[0])
                .unwrap()
                .get("indexing")
                .is_none()
        );
    }

    #[test]
    fn the_background_index_finishes_and_can_start_again() {
        let (_tmp, c) = view_of(2);
        assert!(c.runs_within(Duration::ZERO).iter().all(|r| r.indexing));
        c.index_in_background();
        let t0 = std::time::Instant::now();
        while c.runs_within(Duration::ZERO).iter().any(|r| r.indexing) {
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "the index never finished"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        while c.indexing.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Done: a later call starts another (which finds nothing to read).
        c.index_in_background();
    }

    #[test]
    fn a_batch_is_the_folders_above_the_scenario() {
        let b = |id, sc| batch_of(id, sc);
        assert_eq!(
            b("nightly:meeting-only:trial-3", "meeting-only").as_deref(),
            Some("nightly")
        );
        assert_eq!(
            b("out:nightly:busy-day", "busy-day").as_deref(),
            Some("out/nightly")
        );
        // A folder not named after the scenario: the run's own folder is left out.
        assert_eq!(
            b("runs:meeting-only-oracle", "meeting-only").as_deref(),
            Some("runs")
        );
        assert_eq!(b("one", "meeting-only"), None);
        assert_eq!(b("meeting-only:trial-0", "meeting-only"), None);
    }

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut v = vec![
            "run-10", "run-2", "run-1", "b:t-0", "run-010", "a:t-11", "a:t-9",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "a:t-9", "a:t-11", "b:t-0", "run-1", "run-2", "run-010", "run-10"
            ]
        );
    }
}
