//! Forking a run: a new run whose first decisions are another run's, replayed.
//!
//! [`fork_to_dir_async`] replays a parent run directory (finished or still being
//! written) up to decision `N` into a fresh world, checks that the replay writes the
//! parent's lines, then hands the world to another agent (a person, the oracle, a
//! model) and goes on live, writing an ordinary run directory. Its trajectory holds
//! the parent's first `N` decisions (with the guidance, model lines, `run_python`
//! outcomes and colleagues' replies recorded with them) and its header names the
//! parent and the fork point ([`ForkOf`]), so `tbsim replay` reproduces a fork like
//! any run.
//!
//! The new agent starts fresh: it is not handed the parent agent's memory. Its
//! first observation carries the briefing and every notification the parent was
//! given up to the fork point, followed by the results of decision `N`, so it knows
//! what the parent knew from the world (tasks released, messages, meetings).

use std::path::{Path, PathBuf};

use crate::agent::Agent;
use crate::npc::{NpcEngine, RecordedNpc};
use crate::protocol::{ModelUsage, Notification, Observation};
use crate::replay::{ReplayError, redrive_steps};
use crate::result::RunResult;
use crate::run::{ResumePython, RunError, RunHooks, RunLimits, finish_dir, write_scenario_copy};
use crate::sim::Sim;
use crate::tools::{LivePython, RecordedPython};
use crate::trajectory::{ForkOf, Recorded, Trajectory, digest_lines, read_recorded};
use tbsim_scenario::LoadedScenario;

/// Why a fork could not start.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The parent cannot be read or replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The fork point is past the parent's recorded decisions.
    #[error("`{dir}` has {recorded} complete decisions; cannot fork at step {step}")]
    PastEnd {
        /// The parent run directory.
        dir: PathBuf,
        /// Decisions it holds.
        recorded: u64,
        /// The fork point asked for.
        step: u64,
    },
    /// Replaying the parent does not write its lines.
    #[error(
        "cannot fork `{0}`: replaying its decisions does not reproduce its trajectory (the scenario, the engine or its options changed)"
    )]
    Diverged(PathBuf),
    /// The parent's world ended before the fork point.
    #[error("cannot fork `{0}` at step {1}: the run was already over there")]
    Over(PathBuf, u64),
    /// The fork's run directory could not be written.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A parent run read and checked up to a fork point (see [`ForkPoint::open`]).
#[derive(Debug)]
pub struct ForkPoint {
    dir: PathBuf,
    rec: Recorded,
    loaded: LoadedScenario,
    step: u64,
    fork: ForkOf,
}

impl ForkPoint {
    /// Reads the parent run in `dir` and replays it to decision `step`, checking
    /// that the replay writes the parent's lines.
    pub fn open(dir: &Path, step: u64) -> Result<ForkPoint, ForkError> {
        let rec = read_recorded(&dir.join("trajectory.jsonl")).map_err(ReplayError::from)?;
        let scen_path = dir.join("scenario.ron");
        let loaded = crate::run_dir::load_scenario(&scen_path).map_err(ReplayError::Scenario)?;
        if loaded.blake3 != rec.header.scenario_blake3 {
            return Err(ReplayError::ScenarioChanged(
                scen_path,
                loaded.blake3,
                rec.header.scenario_blake3.clone(),
            )
            .into());
        }
        let complete = crate::replay::complete_steps(&rec) as u64;
        if step > complete {
            return Err(ForkError::PastEnd {
                dir: dir.to_owned(),
                recorded: complete,
                step,
            });
        }
        // The parent's own replay to the fork point: its lines must be the parent's
        // first lines, and their digest names the shared prefix.
        let mut check = Sim::new_with(
            &loaded,
            rec.header.config(),
            Trajectory::in_memory(),
            Box::new(recorded_python(&rec, step)),
            rec.header.fork.clone(),
        );
        check.set_npc_engine(Box::new(recorded_npc(&rec, step, None)));
        check.begin();
        redrive_steps(&mut check, &rec, step as usize);
        if check.is_over() && check.steps() < step {
            return Err(ForkError::Over(dir.to_owned(), step));
        }
        let lines = check.trajectory().lines();
        let same =
            lines.len() <= rec.lines.len() && lines.iter().zip(&rec.lines).all(|(a, b)| a == b);
        if !same {
            return Err(ForkError::Diverged(dir.to_owned()));
        }
        let parent = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let fork = ForkOf {
            parent,
            parent_digest: digest_lines(lines.iter().map(String::as_str)),
            step,
        };
        Ok(ForkPoint {
            dir: dir.to_owned(),
            rec,
            loaded,
            step,
            fork,
        })
    }

    /// What the fork's header records.
    pub fn fork_of(&self) -> &ForkOf {
        &self.fork
    }

    /// The parent's scenario.
    pub fn scenario(&self) -> &LoadedScenario {
        &self.loaded
    }

    /// The parent's simulation settings (the fork keeps them; only the agent changes).
    pub fn config(&self) -> crate::protocol::SimConfig {
        self.rec.header.config()
    }

    /// The parent run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the fork into `out` with `agent` from the fork point on (colleagues'
    /// new replies from `npc`), while `hooks` watch it.
    pub async fn run(
        &self,
        agent: &mut dyn Agent,
        limits: &RunLimits,
        out: &Path,
        npc: Box<dyn NpcEngine>,
        hooks: RunHooks,
    ) -> Result<RunResult, ForkError> {
        write_scenario_copy(&self.loaded, out)?;
        let traj_path = out.join("trajectory.jsonl");
        let trace = Trajectory::to_file(&traj_path).map_err(|source| RunError::Io {
            path: traj_path.clone(),
            source,
        })?;
        let mut config = self.rec.header.config();
        config.agent = agent.name();
        let python = ResumePython {
            recorded: recorded_python(&self.rec, self.step),
            live: LivePython::default(),
        };
        let mut sim = Sim::new_with(
            &self.loaded,
            config,
            trace,
            Box::new(python),
            Some(self.fork.clone()),
        );
        sim.set_npc_engine(Box::new(recorded_npc(&self.rec, self.step, Some(npc))));
        let first = sim.begin();
        let seen = redrive_steps(&mut sim, &self.rec, self.step as usize);
        let obs = catch_up(first, seen);
        let mut result =
            crate::run::drive_from(&mut sim, agent, limits, obs, ModelUsage::default(), &hooks)
                .await;
        finish_dir(&sim, &mut result, &self.loaded.scenario, out, traj_path)?;
        Ok(result)
    }
}

/// Forks the run in `parent` at decision `step` into `out`, driven by `agent` from
/// there (see the module docs).
pub async fn fork_to_dir_async(
    parent: &Path,
    step: u64,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    out: &Path,
    npc: Box<dyn NpcEngine>,
    hooks: RunHooks,
) -> Result<RunResult, ForkError> {
    ForkPoint::open(parent, step)?
        .run(agent, limits, out, npc, hooks)
        .await
}

/// The new agent's first observation: the briefing, every notification before the
/// fork point, then the fork point's own observation.
fn catch_up(first: Observation, seen: Vec<Observation>) -> Observation {
    let Some(last) = seen.last().cloned() else {
        return first;
    };
    let mut told: Vec<Notification> = first.notifications;
    for o in &seen[..seen.len() - 1] {
        for r in &o.results {
            told.extend(r.notifications.iter().cloned());
        }
        told.extend(o.notifications.iter().cloned());
    }
    told.extend(last.notifications);
    Observation {
        briefing: first.briefing,
        notifications: told,
        ..last
    }
}

/// The parent's `run_python` outcomes of the shared decisions only: after the fork
/// point the same step and call id may mean another script.
fn recorded_python(rec: &Recorded, step: u64) -> RecordedPython {
    RecordedPython {
        outcomes: rec
            .python
            .iter()
            .filter(|((s, _), _)| *s <= step)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// The parent's colleague replies of the shared decisions, then `live`.
fn recorded_npc(rec: &Recorded, step: u64, live: Option<Box<dyn NpcEngine>>) -> RecordedNpc {
    let mut npc = RecordedNpc::new(live);
    for l in rec.npc_lines.iter().filter(|l| l.step <= step) {
        npc.insert(l);
    }
    npc
}
