//! Replaying a run directory: re-driving a fresh world with the recorded decisions.
//!
//! Replay needs no agent and no network. `run_python` outcomes, colleagues' replies
//! (`npc` lines) and the agent's model requests and responses (`model` lines) come
//! from the trajectory. Every regenerated line must equal the recorded one; the first
//! line that differs is reported with its step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::npc::RecordedNpc;
use crate::result::RunResult;
use crate::sim::Sim;
use crate::trajectory::{Line, ModelLine, NpcLine, Trajectory, digest_lines};
use tbsim_scenario::{LoadedScenario, ScenarioErrors};

/// Why a replay could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A run file is missing or unreadable.
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// The run's scenario copy is invalid.
    #[error("{0}")]
    Scenario(ScenarioErrors),
    /// A file is malformed (1-based line number).
    #[error("`{0}` line {1}: {2}")]
    Format(PathBuf, usize, String),
    /// The trajectory cannot be read back.
    #[error(transparent)]
    Trajectory(#[from] crate::trajectory::TrajectoryError),
    /// The scenario copy is not the one the run used.
    #[error("`{0}` has BLAKE3 {1} but the trajectory was recorded with {2}")]
    ScenarioChanged(PathBuf, String, String),
    /// A re-driven world was asked to go back (see [`Replayer::advance`]).
    #[error(transparent)]
    Behind(#[from] CursorBehind),
}

/// The first line where replay and record differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// 1-based line number in `trajectory.jsonl`.
    pub line: usize,
    /// The decision step the line belongs to (0 before the first decision).
    pub step: u64,
    /// The recorded line (or `<end of file>`).
    pub expected: String,
    /// The replayed line (or `<end of replay>`).
    pub got: String,
}

/// Outcome of a replay.
#[derive(Debug, Clone)]
pub struct ReplayReport {
    /// Lines compared.
    pub lines: usize,
    /// Digest of the replayed trajectory.
    pub digest: String,
    /// Digest recorded in `result.json`, if present.
    pub recorded_digest: Option<String>,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
    /// When the trajectory has no end line (the run was interrupted: a crash, a
    /// kill, a full disk), the last decision step it records; only the recorded
    /// lines are then compared.
    pub interrupted_at: Option<u64>,
}

impl ReplayReport {
    /// Whether the replay reproduced the run exactly.
    pub fn identical(&self) -> bool {
        self.divergence.is_none()
            && self.interrupted_at.is_none()
            && self
                .recorded_digest
                .as_deref()
                .is_none_or(|d| d == self.digest)
    }
}

/// Replays the run in `dir`.
pub fn replay(dir: &Path) -> Result<ReplayReport, ReplayError> {
    let traj = crate::run_dir::trajectory_path(dir);
    let rec = crate::trajectory::read_recorded(&traj)?;
    let scen_path = dir.join("scenario.ron");
    let loaded = crate::run_dir::load_scenario(&scen_path).map_err(ReplayError::Scenario)?;
    let want = &rec.header.scenario_blake3;
    if loaded.blake3 != *want {
        return Err(ReplayError::ScenarioChanged(
            scen_path,
            loaded.blake3,
            want.clone(),
        ));
    }
    let mut sim = redrive(&rec, &loaded);
    let result = sim.results();
    let got = sim.trajectory().lines();
    let recorded: Vec<&str> = rec.lines.iter().map(String::as_str).collect();
    // An interrupted run has no end: what it recorded must reproduce, and the
    // replay going on past it is not a difference.
    let interrupted_at = rec.end.is_none().then(|| last_step(&recorded));
    let compared = if interrupted_at.is_some() {
        &got[..got.len().min(recorded.len())]
    } else {
        got
    };
    let divergence = first_divergence(&recorded, compared);
    let recorded_digest = crate::run_dir::read_result(&dir.join("result.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<BTreeMap<String, Value>>(&t).ok())
        .and_then(|m| m.get("digest").and_then(Value::as_str).map(str::to_owned));
    Ok(ReplayReport {
        lines: compared.len(),
        digest: result.digest,
        recorded_digest,
        divergence,
        interrupted_at,
    })
}

/// The decision step of the last line that names one (0 when none does).
fn last_step(lines: &[&str]) -> u64 {
    lines
        .iter()
        .rev()
        .find_map(|l| match Line::parse(l).ok()? {
            Line::Decision { step, .. }
            | Line::Model(ModelLine { step, .. })
            | Line::Npc(NpcLine { step, .. })
            | Line::Result { step, .. } => Some(step),
            _ => None,
        })
        .unwrap_or(0)
}

/// A fresh world for `loaded`, begun, before the first decision, answering tool
/// calls and colleagues from what `rec` recorded, writing its lines to `trace`.
fn begun(rec: &crate::trajectory::Recorded, loaded: &LoadedScenario, trace: Trajectory) -> Sim {
    let config = rec.header.config();
    let mut sim = Sim::new_with(
        loaded,
        config,
        trace,
        Box::new(crate::tools::RecordedPython {
            outcomes: rec.python.clone(),
        }),
        rec.header.fork.clone(),
    );
    let mut npc = RecordedNpc::new(None);
    for l in &rec.npc_lines {
        npc.insert(l);
    }
    sim.set_npc_engine(Box::new(npc));
    sim.begin();
    sim
}

/// A fresh world for `loaded`, driven by the recorded decisions (with recorded
/// `run_python` outcomes and model-played colleagues' replies) to where the run ended.
fn redrive(rec: &crate::trajectory::Recorded, loaded: &LoadedScenario) -> Sim {
    let mut sim = begun(rec, loaded, Trajectory::in_memory());
    redrive_steps(&mut sim, rec, rec.steps.len());
    if !sim.is_over() {
        for g in &rec.trailing_guidance {
            // Refused only if the trajectory was edited; the comparison then says where.
            let _ = sim.guide_recorded(g);
        }
    }
    for r in &rec.trailing {
        sim.record_raw(&r.text);
    }
    if let Some(r) = rec.end {
        sim.end(r);
    }
    sim
}

/// Drives `sim` (begun) through the first `n` recorded steps: each step's guidance,
/// its model lines, then its decision. Returns each step's observation, in order.
pub(crate) fn redrive_steps(
    sim: &mut Sim,
    rec: &crate::trajectory::Recorded,
    n: usize,
) -> Vec<crate::protocol::Observation> {
    redrive_range(sim, rec, 0, n)
}

/// Drives `sim`, which has taken the first `from` recorded steps, through steps
/// `from..to` (as [`redrive_steps`]). Returns each step's observation, in order.
fn redrive_range(
    sim: &mut Sim,
    rec: &crate::trajectory::Recorded,
    from: usize,
    to: usize,
) -> Vec<crate::protocol::Observation> {
    let mut seen = Vec::with_capacity(to.saturating_sub(from));
    for s in rec.steps.iter().take(to).skip(from) {
        if sim.is_over() {
            break;
        }
        for g in &s.guidance {
            let _ = sim.guide_recorded(g);
        }
        for r in &s.records {
            sim.record_raw(&r.text);
        }
        seen.push(sim.step_with(&s.decision, s.tokens_out));
    }
    seen
}

/// A world replayed from a run directory to some step (see [`redrive_dir`]).
#[derive(Debug)]
pub struct Redriven {
    /// The world after the step (its trajectory only counts lines: see
    /// [`Replayer::cursor`]).
    pub sim: Sim,
    /// The run's scenario copy.
    pub loaded: LoadedScenario,
    /// The trajectory as read (a live run's torn last line dropped).
    pub recorded: crate::trajectory::Recorded,
    /// Decisions recorded in the run (complete ones, for a live run).
    pub steps: u64,
}

/// Replays the run in `dir` (finished or still being written) into a fresh world,
/// up to and including decision `upto` (all recorded decisions when `None`; a
/// larger number is clamped). Nothing is compared and no end is recorded: this is
/// for looking at the world as it was at a step (the console), not for checking.
///
/// A live run's last decision may still be in flight (its result lines not all
/// written): it is left out, so what is shown was recorded in full.
pub fn redrive_dir(dir: &Path, upto: Option<u64>) -> Result<Redriven, ReplayError> {
    let r = Replayer::open(dir)?;
    let mut cursor = r.cursor();
    r.advance(&mut cursor, upto.unwrap_or(r.steps))?;
    Ok(Redriven {
        sim: cursor.sim,
        loaded: r.loaded,
        recorded: r.recorded,
        steps: r.steps,
    })
}

/// A run directory read once, to re-drive worlds from to any step, each world
/// advanced from where it stands (the console keeps a few per run, so a later
/// step costs only the decisions in between). A world advanced step by step is
/// the world [`redrive_dir`] replays to the same step: both apply the same
/// decisions in the same order, with the same recorded outcomes.
#[derive(Debug)]
pub struct Replayer {
    /// The run's scenario copy.
    pub loaded: LoadedScenario,
    /// The trajectory as read (a live run's torn last line dropped).
    pub recorded: crate::trajectory::Recorded,
    /// Decisions recorded in full (complete ones, for a live run).
    pub steps: u64,
}

/// A world re-driven by a [`Replayer`], after its first [`ReplayCursor::at`]
/// recorded decisions.
#[derive(Debug)]
pub struct ReplayCursor {
    sim: Sim,
    at: u64,
}

impl ReplayCursor {
    /// Recorded decisions applied so far.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// The world.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// The world, to end or judge (it is then no longer a recorded step's world:
    /// callers drop the cursor after).
    pub fn into_sim(self) -> Sim {
        self.sim
    }
}

/// A cursor asked to go back: a world cannot be un-driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the world is after decision {at}; it cannot go back to {to}")]
pub struct CursorBehind {
    /// Where the cursor stands.
    pub at: u64,
    /// Where it was asked to go.
    pub to: u64,
}

impl Replayer {
    /// Reads the run in `dir` (its trajectory and scenario copy, which must be the
    /// one the run used).
    pub fn open(dir: &Path) -> Result<Replayer, ReplayError> {
        let traj = crate::run_dir::trajectory_path(dir);
        let rec = crate::trajectory::read_recorded(&traj)?;
        let scen_path = dir.join("scenario.ron");
        let loaded = crate::run_dir::load_scenario(&scen_path).map_err(ReplayError::Scenario)?;
        if loaded.blake3 != rec.header.scenario_blake3 {
            return Err(ReplayError::ScenarioChanged(
                scen_path,
                loaded.blake3,
                rec.header.scenario_blake3.clone(),
            ));
        }
        let steps = complete_steps(&rec) as u64;
        Ok(Replayer {
            loaded,
            recorded: rec,
            steps,
        })
    }

    /// A fresh world, begun, before the first decision. It is for looking at, so
    /// its trajectory keeps no lines ([`Trajectory::discarding`]): checking them is
    /// [`replay`]'s job, which records them.
    pub fn cursor(&self) -> ReplayCursor {
        ReplayCursor {
            sim: begun(&self.recorded, &self.loaded, Trajectory::discarding()),
            at: 0,
        }
    }

    /// Drives `cursor` on to decision `to` (clamped to [`Replayer::steps`]), or
    /// says it is past it already.
    pub fn advance(&self, cursor: &mut ReplayCursor, to: u64) -> Result<(), CursorBehind> {
        let to = to.min(self.steps);
        if to < cursor.at {
            return Err(CursorBehind { at: cursor.at, to });
        }
        redrive_range(
            &mut cursor.sim,
            &self.recorded,
            cursor.at as usize,
            to as usize,
        );
        cursor.at = to;
        Ok(())
    }
}

/// Decisions whose every call has its result line (all of them in a finished run).
pub(crate) fn complete_steps(rec: &crate::trajectory::Recorded) -> usize {
    let n = rec.steps.len();
    if rec.end.is_some() || n == 0 {
        return n;
    }
    let last = &rec.steps[n - 1];
    let marker = format!("\"step\":{n},");
    let results = rec
        .lines
        .iter()
        .rev()
        .take_while(|l| !l.starts_with("{\"type\":\"decision\""))
        .filter(|l| l.starts_with("{\"type\":\"result\"") && l.contains(&marker))
        .count();
    if results >= last.decision.calls.len() {
        n
    } else {
        n - 1
    }
}

/// A checkpoint whose verdict a regrade changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangedCheckpoint {
    /// Task key.
    pub task: String,
    /// Checkpoint key.
    pub checkpoint: String,
    /// Passed in the recorded result (`None`: the checkpoint did not exist).
    pub before: Option<bool>,
    /// Passed now (`None`: the fixed scenario no longer has it).
    pub after: Option<bool>,
}

/// The outcome of regrading a recorded run.
#[derive(Debug, Clone)]
pub struct Regrade {
    /// The recorded result.
    pub before: RunResult,
    /// The result of the recorded decisions in the (fixed) scenario.
    pub after: RunResult,
    /// Checkpoints whose verdict changed, in task then checkpoint order.
    pub changed: Vec<ChangedCheckpoint>,
    /// The first tool result the agent would have seen differently (its recorded
    /// line), or `None` if everything the agent saw is unchanged, so its decisions
    /// stand as made. After that point the recorded decisions answer a world that
    /// no longer exists, and the new scores deserve less trust.
    pub agent_saw_differently: Option<Divergence>,
}

/// Re-drives the run in `dir` against `fixed` (default: the run's own scenario
/// copy, to regrade under the current checker) and compares the verdicts. The
/// agent's decisions are replayed as recorded; scripted colleagues answer from the
/// fixed scenario, recorded `run_python` outcomes and model colleagues' replies are
/// reused.
pub fn regrade(dir: &Path, fixed: Option<&Path>) -> Result<Regrade, ReplayError> {
    let rec = crate::trajectory::read_recorded(&crate::run_dir::trajectory_path(dir))?;
    let res_path = dir.join("result.json");
    let before: RunResult = crate::run_dir::read_result(&res_path)
        .map_err(|e| ReplayError::Io(res_path.clone(), e.into_io()))
        .and_then(|t| {
            serde_json::from_str(&t)
                .map_err(|e| ReplayError::Format(res_path.clone(), 1, e.to_string()))
        })?;
    let scen_path = fixed.map_or_else(|| dir.join("scenario.ron"), Path::to_path_buf);
    let loaded = crate::run_dir::load_scenario(&scen_path).map_err(ReplayError::Scenario)?;
    let mut sim = redrive(&rec, &loaded);
    let mut after = sim.results();
    after.trial = before.trial;
    // What the agent saw: the tool results (notifications included).
    let seen = |lines: Vec<&str>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|l| Line::parse(l).is_ok_and(|l| matches!(l, Line::Result { .. })))
            .map(str::to_owned)
            .collect()
    };
    let recorded = seen(rec.lines.iter().map(String::as_str).collect());
    let now = seen(
        sim.trajectory()
            .lines()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    let agent_saw_differently = first_divergence(
        &recorded.iter().map(String::as_str).collect::<Vec<_>>(),
        &now,
    )
    .map(|mut d| {
        // Report the line's number in the recorded trajectory.
        if let Some(pos) = rec.lines.iter().position(|l| *l == d.expected) {
            d.line = pos + 1;
        }
        d
    });
    let verdicts = |r: &RunResult| -> BTreeMap<(String, String), bool> {
        r.tasks
            .iter()
            .flat_map(|t| {
                t.checkpoints
                    .iter()
                    .map(|c| ((t.key.clone(), c.key.clone()), c.passed))
            })
            .collect()
    };
    let (b, a) = (verdicts(&before), verdicts(&after));
    let keys: std::collections::BTreeSet<&(String, String)> = b.keys().chain(a.keys()).collect();
    let changed = keys
        .into_iter()
        .filter(|k| b.get(*k) != a.get(*k))
        .map(|k| ChangedCheckpoint {
            task: k.0.clone(),
            checkpoint: k.1.clone(),
            before: b.get(k).copied(),
            after: a.get(k).copied(),
        })
        .collect();
    Ok(Regrade {
        before,
        after,
        changed,
        agent_saw_differently,
    })
}

fn first_divergence(recorded: &[&str], got: &[String]) -> Option<Divergence> {
    let n = recorded.len().max(got.len());
    let mut step = 0;
    for i in 0..n {
        let (e, g) = (recorded.get(i).copied(), got.get(i).map(String::as_str));
        if let Some(line) = g.or(e)
            && let Ok(
                Line::Decision { step: s, .. }
                | Line::Model(ModelLine { step: s, .. })
                | Line::Npc(NpcLine { step: s, .. })
                | Line::Result { step: s, .. },
            ) = Line::parse(line)
        {
            step = s;
        }
        if e != g {
            return Some(Divergence {
                line: i + 1,
                step,
                expected: e.unwrap_or("<end of file>").to_owned(),
                got: g.unwrap_or("<end of replay>").to_owned(),
            });
        }
    }
    debug_assert_eq!(
        digest_lines(recorded.iter().copied()),
        digest_lines(got.iter().map(String::as_str))
    );
    None
}
