//! Running an agent on a scenario and writing the run directory.
//!
//! A run directory holds `scenario.ron` (the exact scenario bytes, plus any sidecar
//! assets), `trajectory.jsonl` (written and flushed line by line) and `result.json`.
//! Everything `tbsim replay` needs is in it.

use std::path::{Path, PathBuf};

use crate::agent::{Agent, block_on};
use crate::result::RunResult;
use crate::scenario::{Content, LoadedScenario};
use crate::sim::{Sim, SimConfig};
use crate::tools::{LivePython, PythonBackend};
use crate::trajectory::Trajectory;
use crate::world::EndReason;

/// Failure to write a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file could not be written.
    #[error("cannot write `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The trajectory could not be written completely.
    #[error("the trajectory in `{0}` is incomplete: {1}")]
    Trajectory(PathBuf, String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Limits on one run.
#[derive(Debug, Clone)]
pub struct RunLimits {
    /// Maximum agent decisions.
    pub max_steps: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits { max_steps: 400 }
    }
}

/// Drives `agent` on `sim` until the run ends, blocking the current thread while the
/// agent decides (see [`drive_async`]).
pub fn drive(sim: &mut Sim, agent: &mut dyn Agent, limits: &RunLimits) -> RunResult {
    block_on(drive_async(sim, agent, limits))
}

/// Drives `agent` on `sim` until the run ends.
///
/// The only await point is the agent's decision: the simulation itself is stepped
/// synchronously in between, so the future is runtime-agnostic. The batch runner
/// (`crate::batch`) polls it on a blocking thread inside a tokio runtime, so an agent
/// whose decision awaits network I/O finds a reactor, and a slow simulation step (a
/// sandboxed Python call) never stalls other worlds' I/O.
pub async fn drive_async(sim: &mut Sim, agent: &mut dyn Agent, limits: &RunLimits) -> RunResult {
    let mut obs = sim.begin();
    while !sim.is_over() {
        if sim.steps() >= limits.max_steps {
            sim.end(EndReason::MaxSteps);
            break;
        }
        match agent.decide(&obs).await {
            Ok(decision) => obs = sim.step(&decision),
            Err(_) => {
                sim.end(EndReason::AgentError);
                break;
            }
        }
    }
    sim.results()
}

/// Runs in memory: the result and the trajectory lines.
pub fn run_in_memory(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
) -> (RunResult, Vec<String>) {
    run_with(
        loaded,
        agent,
        config,
        limits,
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    )
}

/// Runs with a given trajectory sink and Python backend.
pub fn run_with(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    trace: Trajectory,
    python: Box<dyn PythonBackend>,
) -> (RunResult, Vec<String>) {
    let mut sim = Sim::new(loaded, config, trace, python);
    let r = drive(&mut sim, agent, limits);
    (r, sim.trajectory().lines().to_vec())
}

/// Runs and writes the run directory `out`.
pub fn run_to_dir(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    out: &Path,
) -> Result<RunResult, RunError> {
    block_on(run_to_dir_async(loaded, agent, config, limits, out, None))
}

/// Runs and writes the run directory `out`, awaiting the agent's decisions (see
/// [`drive_async`]). `trial` is recorded in `result.json` when given (batch runs with
/// several trials per scenario).
pub async fn run_to_dir_async(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    out: &Path,
    trial: Option<u32>,
) -> Result<RunResult, RunError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    let scen = out.join("scenario.ron");
    std::fs::write(&scen, &loaded.source).map_err(io(&scen))?;
    for f in &loaded.scenario.files {
        if let Content::Sidecar { path, .. } = &f.content
            && let Some(bytes) = loaded.assets.get(&f.path)
        {
            let dest = out.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::write(&dest, bytes).map_err(io(&dest))?;
        }
    }
    let traj_path = out.join("trajectory.jsonl");
    let trace = Trajectory::to_file(&traj_path).map_err(io(&traj_path))?;
    let mut sim = Sim::new(loaded, config, trace, Box::new(LivePython::default()));
    let mut result = drive_async(&mut sim, agent, limits).await;
    if let Some(e) = sim.trajectory().io_error() {
        return Err(RunError::Trajectory(traj_path, e.to_owned()));
    }
    result.trial = trial;
    let res_path = out.join("result.json");
    let mut text = serde_json::to_string_pretty(&result).expect("results serialise");
    text.push('\n');
    std::fs::write(&res_path, text).map_err(io(&res_path))?;
    Ok(result)
}
