//! Running an agent on a scenario and writing the run directory.
//!
//! A run directory holds `scenario.ron` (the exact scenario bytes, plus any sidecar
//! assets), `trajectory.jsonl` (written and flushed line by line) and `result.json`.
//! Everything `tbsim replay` needs is in it.
//!
//! A run ends when the agent finishes, the day ends, or a limit is reached: the step
//! limit, the token budget (checked before each decision, so the decision that
//! crosses it is still applied), or the simulated-time budget (likewise: time is
//! checked between decisions, never by cutting a tool call short). A model API that
//! gives up ends the run as an infrastructure failure.
//!
//! Model lines are written while the agent decides, each as soon as its call
//! completes (see [`crate::agent`]), before the decision they lead to: a run killed
//! in the middle of a decision keeps the calls that decision already made.
//!
//! [`resume_dir`] continues an interrupted run: it replays the recorded decisions
//! into a fresh world (recorded model lines, `run_python` outcomes and colleagues'
//! replies are reused, nothing is asked again), copies the model lines recorded
//! after the last decision, checks that the regenerated lines equal the recorded
//! ones, restores the agent (handing it those later lines, so the interrupted
//! decision's completed calls are not made again), and goes on live.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::agent::{Agent, AgentError, PastStep, block_on};
use crate::live::{Control, Gate, LiveState};
use crate::npc::{NpcEngine, RecordedNpc, Scripted};
use crate::protocol::EndReason;
use crate::protocol::ModelUsage;
use crate::protocol::{Decision, Observation, SimConfig};
use crate::replay::ReplayError;
use crate::result::RunResult;
use crate::sim::Sim;
use crate::time::SimDuration;
use crate::tools::{LivePython, PythonBackend, RecordedPython};
use crate::trajectory::Trajectory;
use crate::trajectory::read_recorded;
use crate::world::Prototype;
use tbsim_scenario::{Content, LoadedScenario};

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
    /// The run to resume cannot be read.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The recorded decisions no longer lead to the recorded lines.
    #[error(
        "cannot resume `{0}`: replaying its decisions does not reproduce its trajectory (the scenario, the engine or its options changed)"
    )]
    Diverged(PathBuf),
    /// The agent cannot be brought back to its recorded state.
    #[error("cannot resume `{0}`: {1}")]
    Agent(PathBuf, AgentError),
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
    /// Maximum agent decisions per working day of the scenario.
    pub max_steps: u64,
    /// Maximum model tokens (input plus output) the agent may spend.
    pub token_budget: Option<u64>,
    /// Maximum simulated time from the start of the run.
    pub time_budget: Option<SimDuration>,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_steps: 400,
            token_budget: None,
            time_budget: None,
        }
    }
}

impl RunLimits {
    fn reached(&self, sim: &Sim, usage: &ModelUsage) -> Option<EndReason> {
        // The step limit is per working day, so long multi-day runs are not cut short.
        if sim.steps() >= self.max_steps.saturating_mul(sim.days()) {
            return Some(EndReason::MaxSteps);
        }
        if self.token_budget.is_some_and(|b| usage.tokens() >= b) {
            return Some(EndReason::TokenBudget);
        }
        if self
            .time_budget
            .is_some_and(|b| sim.now().since(sim.started_at()) >= b)
        {
            return Some(EndReason::TimeBudget);
        }
        None
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
/// (the `batch` module) polls it on a blocking thread inside a tokio runtime, so an agent
/// whose decision awaits network I/O finds a reactor, and a slow simulation step (a
/// sandboxed Python call, a model-played colleague) never stalls other worlds' I/O.
pub async fn drive_async(sim: &mut Sim, agent: &mut dyn Agent, limits: &RunLimits) -> RunResult {
    drive_hooked(sim, agent, limits, &RunHooks::default()).await
}

/// [`drive_async`] with a console attached (see [`RunHooks`]).
pub async fn drive_hooked(
    sim: &mut Sim,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    hooks: &RunHooks,
) -> RunResult {
    let obs = sim.begin();
    drive_from(sim, agent, limits, obs, ModelUsage::default(), hooks).await
}

/// What watches a run while it goes (nothing by default).
#[derive(Debug, Clone, Default)]
pub struct RunHooks {
    /// A console's remote control: the runner publishes the run's state to it after
    /// every decision, holds the agent while it is paused, and applies the guidance
    /// queued on it before each decision (see [`crate::live`]).
    pub control: Option<Arc<Control>>,
    /// Where each model call's wall time, attempts and timeouts go (a run
    /// directory's `model_calls.jsonl`; see [`CallLog`]).
    pub calls: Option<Arc<CallLog>>,
    /// Write the run directory's trajectory compressed, as `trajectory.jsonl.zst`
    /// (see [`crate::zst`]): the same lines and digest, which replay,
    /// regrading and the result read alike. A compressed run cannot be resumed.
    pub compress: bool,
}

/// The name of the run directory's file of per-call wall-clock facts.
pub const CALL_LOG: &str = "model_calls.jsonl";

/// The run directory's `model_calls.jsonl`: one line per model call of the agent,
/// `{"step", "purpose", "wall_ms", "attempts", "timeouts", "ok"}`, appended as
/// each call completes. Wall-clock facts differ between two runs that the
/// trajectory says are the same, so they are kept out of it (replay compares the
/// trajectory byte for byte, and the digest is over it). A resumed run appends
/// to the file; `tbsim report` reads it for its model-call table.
#[derive(Debug)]
pub struct CallLog {
    file: std::sync::Mutex<std::fs::File>,
}

impl CallLog {
    /// Opens (creating, appending) `dir/model_calls.jsonl`; never through a link.
    pub fn open(dir: &Path) -> std::io::Result<CallLog> {
        let path = dir.join(CALL_LOG);
        if path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
            std::fs::remove_file(&path)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        Ok(CallLog {
            file: std::sync::Mutex::new(file),
        })
    }

    /// Appends the facts of one call that leads to decision `step`. Best effort: a
    /// failed write loses timing, never the run.
    pub fn write(&self, step: u64, record: &crate::protocol::ModelRecord) {
        use std::io::Write as _;
        let Some(t) = record.timing else {
            return;
        };
        let line = serde_json::json!({
            "step": step,
            "purpose": record.purpose,
            "wall_ms": t.wall_ms,
            "attempts": t.attempts,
            "timeouts": t.timeouts,
            "ok": record.error.is_none(),
        });
        let mut f = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(f, "{line}");
    }
}

/// Writes an agent's model record to the trajectory, and its timing to the call log.
fn record_call(sim: &mut Sim, hooks: &RunHooks, r: &crate::protocol::ModelRecord) {
    sim.record_agent(r);
    if let Some(log) = &hooks.calls {
        log.write(sim.steps() + 1, r);
    }
}

impl RunHooks {
    /// Hooks with a control.
    pub fn with_control(control: Arc<Control>) -> RunHooks {
        RunHooks {
            control: Some(control),
            ..RunHooks::default()
        }
    }
}

/// At a decision boundary: publishes the run's state, holds while paused, and
/// applies queued guidance (adding what the agent is told to `obs`).
async fn console_turn(sim: &mut Sim, control: &Control, obs: &mut Observation) {
    control.publish(
        LiveState::Running,
        Some(sim.progress()),
        Some(sim.hint_tiers()),
    );
    loop {
        let queued = match control.gate().await {
            Gate::Go => break,
            Gate::Stop => {
                sim.end(EndReason::Abandoned);
                break;
            }
            Gate::Guidance(g) => g,
        };
        for g in queued {
            match sim.guide(&g) {
                Ok(n) => obs.notifications.push(n),
                Err(_) => control.dropped(),
            }
        }
        control.publish(LiveState::Running, None, Some(sim.hint_tiers()));
    }
    // Guidance queued between the gate and here waits for the next boundary.
}

/// Drives from an observation, with `usage` already spent.
pub(crate) async fn drive_from(
    sim: &mut Sim,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    mut obs: Observation,
    mut usage: ModelUsage,
    hooks: &RunHooks,
) -> RunResult {
    let mut warnings: Vec<String> = Vec::new();
    while !sim.is_over() {
        // A trajectory that cannot be written (a full disk) ends the run at once:
        // going on would take decisions that are never recorded.
        if let Some(e) = sim.trajectory().io_error() {
            let m = e.to_owned();
            sim.end_infra(&m);
            break;
        }
        if let Some(reason) = limits.reached(sim, &usage) {
            sim.end(reason);
            break;
        }
        if let Some(c) = &hooks.control {
            console_turn(sim, c, &mut obs).await;
            if sim.is_over() {
                break;
            }
            let deciding = if agent.uses_model() {
                LiveState::WaitingForModel
            } else if agent.external() {
                LiveState::WaitingForAgent
            } else {
                LiveState::Running
            };
            c.publish(deciding, None, None);
        }
        if agent.wants_progress() {
            agent.observe(&obs, &sim.progress());
        }
        let decided = decide_recording(sim, agent, &obs, hooks).await;
        let log = agent.take_log();
        for r in &log.records {
            record_call(sim, hooks, r);
        }
        usage.add(&log.usage);
        for w in log.warnings {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        match decided {
            Ok(decision) => obs = sim.step_with(&decision, log.usage.output_tokens),
            Err(AgentError::Infra(m)) => {
                sim.end_infra(&m);
                break;
            }
            Err(AgentError::Agent(m)) => {
                sim.end_agent(EndReason::AgentError, &m);
                break;
            }
            Err(AgentError::ContextFull(m)) => {
                sim.end_agent(EndReason::ContextExceeded, &m);
                break;
            }
            Err(AgentError::Abandoned(_)) => {
                sim.end(EndReason::Abandoned);
                break;
            }
        }
    }
    let mut r = sim.results();
    if let Some(c) = &hooks.control {
        c.publish(
            LiveState::Finished,
            Some(sim.progress()),
            Some(sim.hint_tiers()),
        );
    }
    if agent.wants_progress() {
        agent.observe(&obs, &sim.progress());
    }
    if agent.uses_model() {
        r.model = Some(usage);
    }
    r.warnings = warnings;
    r.npc_model = sim.npc_usage();
    r
}

/// Awaits the agent's decision, writing the model records it completes as they
/// arrive: the sink is drained after every poll, so a completed call is on disk
/// before the decision's next await (a kill then does not lose it).
async fn decide_recording(
    sim: &mut Sim,
    agent: &mut dyn Agent,
    obs: &Observation,
    hooks: &RunHooks,
) -> Result<Decision, AgentError> {
    let sink = agent.record_sink();
    let mut decision = agent.decide(obs);
    std::future::poll_fn(|cx| {
        let polled = decision.as_mut().poll(cx);
        if let Some(sink) = &sink {
            for r in sink.drain() {
                record_call(sim, hooks, &r);
            }
        }
        polled
    })
    .await
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

/// Runs for the result alone: no trajectory is written or kept (its lines are
/// only counted) and so no schedule is computed. For callers that run many
/// worlds to score them (the validity gate, the scan, suite proofs), where
/// serialising and re-reading every line was a seventh of the work.
pub fn run_unrecorded(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
) -> RunResult {
    run_with(
        loaded,
        agent,
        config,
        limits,
        Trajectory::discarding(),
        Box::new(LivePython::default()),
    )
    .0
}

/// Many runs of one scenario that only need their scores: the validity gate's
/// oracle, idle, solver and adversaries, the scan, suite proofs, RL rollouts that
/// keep no record.
///
/// The world is built once ([`Prototype`]) and copied for each run; no trajectory
/// is written, kept or serialised (its lines are only counted), no file is touched
/// and no schedule is computed. A run's [`RunResult`] is that of
/// [`run_unrecorded`] with the same agent and configuration, field for field.
///
/// ```no_run
/// # let loaded = tbsim_scenario::load_file(std::path::Path::new("busy-day.ron")).unwrap();
/// use tbsim_engine::run::{RunLimits, Scorer};
/// let scorer = Scorer::new(&loaded);
/// for seed in 0..20 {
///     let mut agent = tbsim_engine::agent::Oracle::new(&loaded.scenario);
///     let config = tbsim_engine::protocol::SimConfig { seed: Some(seed), ..Default::default() };
///     let r = scorer.score(&mut agent, config, &RunLimits::default());
///     assert!(r.checkpoint_score <= 1.0);
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Scorer {
    proto: Arc<Prototype>,
}

impl Scorer {
    /// Builds the scenario's world once (the scenario must have passed validation).
    pub fn new(loaded: &LoadedScenario) -> Scorer {
        Scorer {
            proto: Arc::new(Prototype::new(loaded)),
        }
    }

    /// Runs `agent` to the end on a copy of the world and returns the result.
    pub fn score(&self, agent: &mut dyn Agent, config: SimConfig, limits: &RunLimits) -> RunResult {
        let mut sim = Sim::from_prototype(
            &self.proto,
            config,
            Trajectory::discarding(),
            Box::new(LivePython::default()),
        );
        drive(&mut sim, agent, limits)
    }

    /// A simulation on a copy of the world, writing `trace` (for callers that step
    /// it themselves).
    pub fn sim(&self, config: SimConfig, trace: Trajectory) -> Sim {
        Sim::from_prototype(&self.proto, config, trace, Box::new(LivePython::default()))
    }
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
    let mut r = drive(&mut sim, agent, limits);
    let lines = sim.trajectory().lines().to_vec();
    // Only a trajectory kept in memory can be read back here.
    if !lines.is_empty() {
        r.schedule = Some(crate::schedule::compute(
            &loaded.scenario,
            lines.iter().map(String::as_str),
        ));
    }
    (r, lines)
}

/// Runs and writes the run directory `out`.
pub fn run_to_dir(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    out: &Path,
) -> Result<RunResult, RunError> {
    run_to_dir_with(loaded, agent, config, limits, out, Box::new(Scripted))
}

/// Runs with a given colleagues' engine and writes the run directory `out`.
pub fn run_to_dir_with(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    out: &Path,
    npc: Box<dyn NpcEngine>,
) -> Result<RunResult, RunError> {
    block_on(run_to_dir_async(
        loaded, agent, config, limits, out, None, npc,
    ))
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
    npc: Box<dyn NpcEngine>,
) -> Result<RunResult, RunError> {
    run_to_dir_hooked(
        loaded,
        agent,
        config,
        limits,
        out,
        trial,
        npc,
        RunHooks::default(),
    )
    .await
}

/// [`run_to_dir_async`] with a console attached (see [`RunHooks`]).
#[allow(clippy::too_many_arguments)]
pub async fn run_to_dir_hooked(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    config: SimConfig,
    limits: &RunLimits,
    out: &Path,
    trial: Option<u32>,
    npc: Box<dyn NpcEngine>,
    mut hooks: RunHooks,
) -> Result<RunResult, RunError> {
    write_scenario_copy(loaded, out)?;
    if agent.uses_model() && hooks.calls.is_none() {
        hooks.calls = Some(Arc::new(CallLog::open(out).map_err(io(out))?));
    }
    let (traj_path, trace) = if hooks.compress {
        let p = out.join(crate::run_dir::TRAJECTORY_ZST);
        let t = Trajectory::to_zstd_file(&p).map_err(io(&p))?;
        (p, t)
    } else {
        let p = out.join(crate::run_dir::TRAJECTORY);
        let t = Trajectory::to_file(&p).map_err(io(&p))?;
        (p, t)
    };
    let mut sim = Sim::new(loaded, config, trace, Box::new(LivePython::default()));
    sim.set_npc_engine(npc);
    let mut result = drive_hooked(&mut sim, agent, limits, &hooks).await;
    result.trial = trial;
    finish_dir(&sim, &mut result, &loaded.scenario, out, traj_path)?;
    Ok(result)
}

/// Writes `scenario.ron` (the exact bytes) and the sidecar assets of the starting
/// files and of timed events into `out`, so the run directory replays on its own;
/// never outside `out` (see `sidecar::write_into`).
pub(crate) fn write_scenario_copy(loaded: &LoadedScenario, out: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    let scen = out.join("scenario.ron");
    crate::run_dir::write(&scen, loaded.source.as_bytes()).map_err(io(&scen))?;
    // Sidecars of the starting files and of timed events, so the run directory
    // replays on its own; never written outside `out` (see `sidecar::write_into`).
    for f in loaded.scenario.all_files() {
        if let Content::Sidecar { path, .. } = &f.content
            && let Some(bytes) = loaded.assets.get(&f.path)
        {
            tbsim_scenario::sidecar::write_into(out, path, bytes).map_err(io(&out.join(path)))?;
        }
    }
    Ok(())
}

pub(crate) fn finish_dir(
    sim: &Sim,
    result: &mut RunResult,
    scenario: &tbsim_scenario::Scenario,
    out: &Path,
    traj: PathBuf,
) -> Result<(), RunError> {
    if let Some(e) = sim.trajectory().io_error() {
        return Err(RunError::Trajectory(traj, e.to_owned()));
    }
    // Scheduling figures come from the trajectory as written.
    let text = if traj.extension().is_some_and(|e| e == "zst") {
        crate::run_dir::read_trajectory(&traj).map_err(|e| io(&traj)(e.into_io()))?
    } else {
        std::fs::read_to_string(&traj).map_err(io(&traj))?
    };
    result.schedule = Some(crate::schedule::compute(scenario, text.lines()));
    let res_path = out.join("result.json");
    let mut text = serde_json::to_string_pretty(result).expect("results serialise");
    text.push('\n');
    crate::run_dir::write(&res_path, text.as_bytes()).map_err(io(&res_path))?;
    Ok(())
}

/// `run_python` outcomes from the interrupted run first, then the live sandbox.
#[derive(Debug, Default)]
pub(crate) struct ResumePython {
    pub(crate) recorded: RecordedPython,
    pub(crate) live: LivePython,
}

impl PythonBackend for ResumePython {
    fn run(
        &mut self,
        step: u64,
        call_id: &str,
        code: &str,
        files: &BTreeMap<String, Vec<u8>>,
    ) -> Value {
        if self
            .recorded
            .outcomes
            .contains_key(&(step, call_id.to_owned()))
        {
            self.recorded.run(step, call_id, code, files)
        } else {
            self.live.run(step, call_id, code, files)
        }
    }
}

/// Continues the interrupted run in `dir` with `agent`, asking `npc` (wrapped so
/// recorded replies are reused) for colleagues' new replies; `trial` is recorded in
/// `result.json` as a fresh run of that trial would record it. A run that already
/// ended (other than by an infrastructure failure) is returned as recorded.
///
/// Model lines after the last decision (calls of the decision that was cut short,
/// or that failed for good) are kept verbatim and handed to the agent with
/// [`Agent::resume`]. Their usage is not counted here: the agent reports it with the
/// decision they belong to (as an uninterrupted run would, so the token budget is
/// checked at the same points and the decision's thinking time is the same).
pub fn resume_dir(
    dir: &Path,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    npc: Box<dyn NpcEngine>,
    trial: Option<u32>,
) -> Result<RunResult, RunError> {
    block_on(resume_hooked(
        dir,
        agent,
        limits,
        npc,
        trial,
        RunHooks::default(),
        false,
    ))
}

/// [`resume_dir`] for a client reattaching to a served session's run: awaits the
/// agent's decisions with a console attached, and also continues a run that ended
/// as abandoned (its client went away, or its session expired), dropping that end
/// and the result it wrote.
pub async fn reattach_dir(
    dir: &Path,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    npc: Box<dyn NpcEngine>,
    trial: Option<u32>,
    hooks: RunHooks,
) -> Result<RunResult, RunError> {
    resume_hooked(dir, agent, limits, npc, trial, hooks, true).await
}

async fn resume_hooked(
    dir: &Path,
    agent: &mut dyn Agent,
    limits: &RunLimits,
    npc: Box<dyn NpcEngine>,
    trial: Option<u32>,
    mut hooks: RunHooks,
    reopen_abandoned: bool,
) -> Result<RunResult, RunError> {
    let traj_path = dir.join("trajectory.jsonl");
    let rec = read_recorded(&traj_path).map_err(ReplayError::from)?;
    let res_path = dir.join("result.json");
    let reopen = |r: EndReason| {
        r == EndReason::InfraError || (reopen_abandoned && r == EndReason::Abandoned)
    };
    if rec.end.is_some_and(|r| !reopen(r))
        && let Ok(text) = crate::run_dir::read_result(&res_path)
        && let Ok(r) = serde_json::from_str::<RunResult>(&text)
    {
        return Ok(r);
    }
    let scen_path = dir.join("scenario.ron");
    let loaded = crate::run_dir::load_scenario(&scen_path)
        .map_err(|e| RunError::Replay(ReplayError::Scenario(e)))?;
    let want = &rec.header.scenario_blake3;
    if loaded.blake3 != *want {
        return Err(ReplayError::ScenarioChanged(scen_path, loaded.blake3, want.clone()).into());
    }
    let config = rec.header.config();
    // Regenerate into a side file and swap it in only once the recorded part is
    // reproduced, so a crash while resuming loses nothing.
    let tmp = dir.join("trajectory.resume.jsonl");
    // A shared run directory may hold a link by this name: remove it (not its
    // target) so the new file is created here, never written through the link.
    if tmp.symlink_metadata().is_ok() {
        std::fs::remove_file(&tmp).map_err(io(&tmp))?;
    }
    let trace = Trajectory::to_file(&tmp).map_err(io(&tmp))?;
    let python = ResumePython {
        recorded: RecordedPython {
            outcomes: rec.python.clone(),
        },
        live: LivePython::default(),
    };
    let mut sim = Sim::new(&loaded, config, trace, Box::new(python));
    let mut recorded_npc = RecordedNpc::new(Some(npc));
    for l in &rec.npc_lines {
        recorded_npc.insert(l);
    }
    sim.set_npc_engine(Box::new(recorded_npc));
    let mut obs = sim.begin();
    let mut past = Vec::with_capacity(rec.steps.len());
    let mut usage = ModelUsage::default();
    for s in &rec.steps {
        if sim.is_over() {
            break;
        }
        for g in &s.guidance {
            if let Ok(n) = sim.guide_recorded(g) {
                obs.notifications.push(n);
            }
        }
        for r in &s.records {
            sim.record_raw(&r.text);
            if let Some(u) = &r.line.usage {
                usage.add(u);
            }
        }
        let next = sim.step_with(&s.decision, s.tokens_out);
        past.push(PastStep {
            observation: std::mem::replace(&mut obs, next),
            records: s.records.iter().map(|r| r.value.clone()).collect(),
            decision: s.decision.clone(),
        });
    }
    // Lines after the last decision follow a complete step, so they go right after
    // it; a world the recorded decisions already ended continues nothing.
    let pending: Vec<Value> = if sim.is_over() {
        Vec::new()
    } else {
        for g in &rec.trailing_guidance {
            if let Ok(n) = sim.guide_recorded(g) {
                obs.notifications.push(n);
            }
        }
        for r in &rec.trailing {
            sim.record_raw(&r.text);
        }
        rec.trailing.iter().map(|r| r.value.clone()).collect()
    };
    // Every line written so far is flushed: compare it with the recorded one. A step
    // cut short by the interruption may now have more lines than were recorded.
    let again = std::fs::read_to_string(&tmp).map_err(io(&tmp))?;
    let same = again.lines().zip(&rec.lines).all(|(a, b)| a == b);
    if !same || sim.trajectory().io_error().is_some() {
        let _ = std::fs::remove_file(&tmp);
        return Err(RunError::Diverged(dir.to_owned()));
    }
    std::fs::rename(&tmp, &traj_path).map_err(io(&traj_path))?;
    // The run goes on: a result written when it ended (abandoned) is no longer its.
    if rec.end.is_some() {
        match std::fs::remove_file(&res_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io(&res_path)(e));
            }
            _ => {}
        }
    }
    agent
        .resume(&past, &pending)
        .map_err(|e| RunError::Agent(dir.to_owned(), e))?;
    if agent.uses_model() && hooks.calls.is_none() {
        hooks.calls = Some(Arc::new(CallLog::open(dir).map_err(io(dir))?));
    }
    let mut result = drive_from(&mut sim, agent, limits, obs, usage, &hooks).await;
    result.trial = trial;
    finish_dir(&sim, &mut result, &loaded.scenario, dir, traj_path)?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::Poll;

    use serde_json::json;

    use super::*;
    use crate::agent::{AgentFuture, RecordSink};
    use crate::protocol::ModelRecord;
    use crate::protocol::RequestBody;
    use crate::protocol::ToolCall;
    use crate::trajectory::Line;
    use tbsim_scenario::load_file;

    fn example(name: &str) -> LoadedScenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios")
            .join(name);
        load_file(&path).unwrap()
    }

    /// A compressed run directory holds `trajectory.jsonl.zst` alone, whose text is
    /// the plain run's byte for byte; replay and regrading read it and reproduce the
    /// run.
    #[test]
    fn a_compressed_trajectory_holds_the_same_lines_and_replays() {
        let loaded = example("busy-day.ron");
        let config = || SimConfig {
            agent: "oracle".into(),
            ..Default::default()
        };
        let run = |dir: &Path, compress: bool| {
            let mut agent = crate::agent::Oracle::new(&loaded.scenario);
            let hooks = RunHooks {
                compress,
                ..RunHooks::default()
            };
            block_on(run_to_dir_hooked(
                &loaded,
                &mut agent,
                config(),
                &RunLimits::default(),
                dir,
                None,
                Box::new(Scripted),
                hooks,
            ))
            .unwrap()
        };
        let plain = tempfile::tempdir().unwrap();
        let packed = tempfile::tempdir().unwrap();
        let a = run(plain.path(), false);
        let b = run(packed.path(), true);
        assert_eq!(a.checkpoint_score, 1.0);
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.schedule, b.schedule, "read back for the schedule");
        assert!(!packed.path().join("trajectory.jsonl").exists());
        let zst = packed.path().join("trajectory.jsonl.zst");
        let bytes = std::fs::read(&zst).unwrap();
        let text = std::fs::read_to_string(plain.path().join("trajectory.jsonl")).unwrap();
        assert!(crate::zst::is_zstd(&bytes));
        assert!(
            bytes.len() * 3 < text.len(),
            "{} of {}",
            bytes.len(),
            text.len()
        );
        assert_eq!(crate::run_dir::read_trajectory(&zst).unwrap(), text);
        assert_eq!(crate::run_dir::trajectory_path(packed.path()), zst);
        for dir in [plain.path(), packed.path()] {
            let report = crate::replay::replay(dir).unwrap();
            assert!(report.identical(), "{report:?}");
            assert_eq!(report.digest, a.digest);
            let regraded = crate::replay::regrade(dir, None).unwrap();
            assert!(regraded.changed.is_empty(), "{regraded:?}");
        }
    }

    /// A score-only run from the prototype scores as the unrecorded run does; one
    /// scorer serves every thread of a parallel gate.
    #[test]
    fn the_scorer_scores_as_an_unrecorded_run() {
        fn shared<T: Send + Sync>() {}
        shared::<Scorer>();
        for name in ["busy-day.ron", "two-days.ron"] {
            let loaded = example(name);
            let scorer = Scorer::new(&loaded);
            for seed in [None, Some(3)] {
                let config = SimConfig {
                    seed,
                    agent: "oracle".into(),
                    ..Default::default()
                };
                let mut agent = crate::agent::Oracle::new(&loaded.scenario);
                let want =
                    run_unrecorded(&loaded, &mut agent, config.clone(), &RunLimits::default());
                let mut agent = crate::agent::Oracle::new(&loaded.scenario);
                let got = scorer.score(&mut agent, config, &RunLimits::default());
                assert!(want.steps > 5, "{name}: a real run");
                assert_eq!(
                    serde_json::to_value(&got).unwrap(),
                    serde_json::to_value(&want).unwrap(),
                    "{name}"
                );
            }
        }
    }

    /// Makes one model call, then waits once before finishing; at that wait, looks
    /// for the call's line in the trajectory file.
    struct Slow {
        sink: RecordSink,
        trajectory: PathBuf,
        seen_while_deciding: Arc<AtomicBool>,
    }

    impl Agent for Slow {
        fn name(&self) -> String {
            "slow".into()
        }

        fn decide<'a>(&'a mut self, _obs: &'a Observation) -> AgentFuture<'a> {
            let mut polls = 0;
            Box::pin(std::future::poll_fn(move |cx| {
                polls += 1;
                if polls == 1 {
                    self.sink.push(ModelRecord {
                        purpose: "summary",
                        model: "m".into(),
                        request: RequestBody::new(&json!({"messages": []})),
                        request_delta: None,
                        failures: Vec::new(),
                        response: json!({"choices": []}),
                        usage: None,
                        error: None,
                        timing: None,
                    });
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let text = std::fs::read_to_string(&self.trajectory).unwrap_or_default();
                let last = text.lines().last().unwrap_or_default();
                self.seen_while_deciding
                    .store(last.contains(r#""purpose":"summary""#), Ordering::SeqCst);
                Poll::Ready(Ok(Decision {
                    calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "finish".into(),
                        arguments: "{}".into(),
                    }],
                }))
            }))
        }

        fn record_sink(&self) -> Option<RecordSink> {
            Some(self.sink.clone())
        }
    }

    /// Accepts `room` bytes, then fails as a full disk does.
    struct Full {
        room: usize,
    }

    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Reads the messages, forever; counts its decisions.
    struct Reader {
        decisions: u64,
    }

    impl Agent for Reader {
        fn name(&self) -> String {
            "reader".into()
        }

        fn decide<'a>(&'a mut self, _obs: &'a Observation) -> AgentFuture<'a> {
            self.decisions += 1;
            Box::pin(std::future::ready(Ok(Decision {
                calls: vec![ToolCall {
                    id: format!("c{}", self.decisions),
                    name: "read_messages".into(),
                    arguments: "{}".into(),
                }],
            })))
        }
    }

    #[test]
    fn a_trajectory_write_failure_ends_the_run_at_once() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/scenarios/meeting-only.ron");
        let loaded = load_file(&path).expect("bundled scenario loads");
        // Room for the header and a little more: the disk fills during the run.
        let trace = Trajectory::to_writer(Box::new(Full { room: 6000 }));
        let mut agent = Reader { decisions: 0 };
        let (r, _) = run_with(
            &loaded,
            &mut agent,
            SimConfig::default(),
            &RunLimits::default(),
            trace,
            Box::new(LivePython::default()),
        );
        assert_eq!(r.end_reason, Some(EndReason::InfraError));
        let why = r.infra_error.as_deref().unwrap_or_default();
        assert!(why.contains("cannot write the trajectory"), "{why}");
        // Stopped at the step whose lines did not fit, not at the step limit (400).
        assert!(
            (1..20).contains(&agent.decisions),
            "{} decisions after the disk filled",
            agent.decisions
        );
    }

    #[test]
    fn a_completed_model_call_is_written_while_its_decision_is_in_flight() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/scenarios/meeting-only.ron");
        let loaded = tbsim_scenario::load_file(&path).expect("bundled scenario loads");
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(AtomicBool::new(false));
        let mut agent = Slow {
            sink: RecordSink::default(),
            trajectory: dir.path().join("trajectory.jsonl"),
            seen_while_deciding: seen.clone(),
        };
        let r = run_to_dir(
            &loaded,
            &mut agent,
            SimConfig::default(),
            &RunLimits::default(),
            dir.path(),
        )
        .unwrap();
        assert_eq!(r.end_reason, Some(EndReason::Finished));
        assert!(
            seen.load(Ordering::SeqCst),
            "the line is on disk before the decision completes"
        );
        let text = std::fs::read_to_string(dir.path().join("trajectory.jsonl")).unwrap();
        let lines: Vec<Line> = text
            .lines()
            .map(|l| serde_json::from_str::<Line>(l).unwrap())
            .collect();
        let model = lines
            .iter()
            .position(|l| matches!(l, Line::Model(_)))
            .unwrap();
        assert!(
            matches!(lines[model + 1], Line::Decision { .. }),
            "then its decision"
        );
        assert_eq!(
            lines.iter().filter(|l| matches!(l, Line::Model(_))).count(),
            1,
            "once"
        );
    }
}
