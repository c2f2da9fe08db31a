//! One world driven by an external agent.
//!
//! A [`Session`] runs `tbsim_engine::run::run_to_dir_hooked` — the function
//! `tbsim run` uses — with a [`RemoteAgent`] as the agent. The agent hands each
//! observation (and the run's [`Progress`]) out through a channel and awaits the next
//! [`Decision`] from another, so the run directory (`scenario.ron`,
//! `trajectory.jsonl`, `result.json`), the scores and `tbsim replay` are those of a
//! `tbsim run` making the same decisions. `run.json` is written in the CLI's shape
//! before the run starts.
//!
//! ## Where the world runs
//!
//! An external agent's run is a future the session polls itself, on the thread of
//! the request that waits for the next turn: a step sends its decision, polls the
//! run until it hands the next observation out, and answers, with no thread woken or
//! parked on the way (the hand-offs to a world thread and back were most of a
//! step's server time). Work that can take long — the first turn (building the
//! world, a script family's host, a fork's or reattach's re-driven decisions) and
//! closing — is polled under `block_in_place` on a multi-threaded runtime, so the
//! runtime's other tasks move to another thread meanwhile. A watcher's pause holds
//! the run in a future (`Control::gate`), never a blocked thread. A built-in agent
//! decides without being asked: its run has a blocking thread of its own.
//!
//! Dropping the decision channel (closing the session, or dropping it) makes the
//! agent give up: the run ends as [`EndReason::Abandoned`] and its directory is
//! written.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use tbsim_core::protocol::{Decision, EndReason, FeedbackPolicy, Observation, SimConfig};
use tbsim_engine::agent::{Agent, AgentError, AgentFuture};
use tbsim_engine::fork::{ForkError, ForkPoint};
use tbsim_engine::live::Control;
use tbsim_engine::npc::Scripted;
use tbsim_engine::progress::Progress;
use tbsim_engine::result::RunResult;
use tbsim_engine::run::{RunError, RunHooks, reattach_dir, run_to_dir_hooked};
use tbsim_engine::run_file::{RunFile, RunFileError, RunOptions};
use tbsim_engine::trajectory::read_recorded;
use tbsim_scenario::LoadedScenario;

/// What starts a session.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The scenario.
    pub scenario: Arc<LoadedScenario>,
    /// Master seed (default: the scenario's).
    pub seed: Option<u64>,
    /// Hint tier (0-3).
    pub hints: u8,
    /// Mentor feedback between days.
    pub feedback: FeedbackPolicy,
    /// Maximum decisions per working day.
    pub max_steps: u64,
    /// The agent's name as recorded (`http:<client>`, `mcp:<client>`).
    pub agent: String,
    /// The caller's label for the run, recorded in `run.json` (checked by the
    /// front end with [`tbsim_engine::run_file::check_tag`]).
    pub tag: Option<String>,
    /// Write the trajectory compressed, as `trajectory.jsonl.zst` (for long RL
    /// jobs; the console asks for such a run decompressed, and it cannot be resumed).
    pub compress: bool,
    /// The run directory to write.
    pub dir: PathBuf,
    /// A console's remote control (one is made when none is given: every session
    /// can be watched).
    pub control: Option<Arc<Control>>,
    /// Start from another run: its directory and the decisions taken over from it
    /// (see [`tbsim_engine::fork`]).
    pub fork: Option<(PathBuf, u64)>,
    /// Called with the run's directory when the run has ended (the console's view
    /// cache: `crate::console::worlds::prime_hook`).
    pub view_cache: Option<RunEnded>,
}

/// What to do with a run's directory once it has ended, beside the session (the
/// step that ended it answers first). A hook rather than the console's cache itself,
/// so sessions depend on nothing of the console (which serves them).
#[derive(Clone)]
pub struct RunEnded(pub Arc<dyn Fn(&Path) + Send + Sync>);

impl std::fmt::Debug for RunEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunEnded")
    }
}

/// What a console can read of a session without waiting for a step in flight.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The scenario's name.
    pub scenario: String,
    /// The agent's name as recorded.
    pub agent: String,
    /// The run's tag, if any.
    pub tag: Option<String>,
    /// The master seed.
    pub seed: u64,
    /// Hint tier.
    pub hints: u8,
    /// The run directory.
    pub dir: PathBuf,
    /// The remote control.
    pub control: Arc<Control>,
    /// The latest turn handed to an external agent (none for a built-in agent).
    pub last_turn: Arc<std::sync::Mutex<Option<Turn>>>,
    /// The run this one was forked from (its directory, the step).
    pub fork: Option<(PathBuf, u64)>,
    /// A built-in agent decides (steps are refused).
    pub builtin: bool,
    /// Why the run failed, when its directory could not be written (a full disk).
    pub failure: Arc<std::sync::Mutex<Option<String>>>,
}

impl SessionInfo {
    /// Why the run failed, if it did (see [`SessionError::WriteFailed`]).
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// A session could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Sessions run on a tokio runtime; there is none.
    #[error("sessions need a tokio runtime")]
    NoRuntime,
    /// `run.json` could not be written.
    #[error(transparent)]
    RunFile(#[from] RunFileError),
    /// The run directory could not be created.
    #[error("cannot create `{path}`: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The run failed (its directory could not be written).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The run's thread panicked.
    #[error("the run failed: {0}")]
    Panicked(String),
    /// The run to fork from cannot be forked there.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// A built-in agent decides in this session.
    #[error("a built-in agent decides in this session; it takes no steps")]
    NotRemote,
    /// The run is over: no more decisions are taken.
    #[error("the run is over{}; no more steps are possible", over_reason(*.0))]
    Over(Option<EndReason>),
    /// The run to reattach to ended on its own: there is nothing to go on with.
    #[error("the run finished ({0:?}); a finished run cannot be reattached to")]
    Finished(EndReason),
    /// The run to reattach to is not a session's, or cannot be read.
    #[error("cannot reattach to this run: {0}")]
    NotResumable(String),
    /// The run's trajectory (or result) could not be written (a full disk): the
    /// run ended at the step that hit it, since decisions that are not recorded
    /// cannot be replayed or scored.
    #[error("trajectory write failed: {0}")]
    WriteFailed(String),
    /// The run ended earlier because its directory could not be written.
    #[error("run ended: trajectory write failed: {0}")]
    Failed(String),
}

/// ` (finished)` for a known end reason, nothing otherwise (user-facing text).
fn over_reason(r: Option<EndReason>) -> String {
    r.map(|r| format!(" ({r})")).unwrap_or_default()
}

/// Whether a run ended inside the simulation (`terminated`: the agent finished or
/// the last day ended) or was cut off outside it (`truncated`: a limit, the agent
/// went away or failed, the infrastructure failed). Gymnasium's two flags.
pub fn end_flags(reason: Option<EndReason>) -> (bool, bool) {
    match reason {
        None => (false, false),
        Some(EndReason::Finished | EndReason::DayEnd) => (true, false),
        Some(
            EndReason::MaxSteps
            | EndReason::TokenBudget
            | EndReason::TimeBudget
            | EndReason::Abandoned
            | EndReason::AgentError
            | EndReason::ContextExceeded
            | EndReason::InfraError,
        ) => (false, true),
    }
}

/// What the agent side gets after starting or stepping.
#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    /// What the agent observes.
    pub observation: Observation,
    /// The run's progress (scores so far, released tasks, errors).
    pub progress: Progress,
    /// Change in the total checkpoint score since the previous turn (0 on the first).
    pub reward: f64,
    /// The run ended inside the simulation.
    pub terminated: bool,
    /// The run was cut off outside the simulation.
    pub truncated: bool,
}

/// A session's state, for a state endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct SessionState {
    /// The scenario's name.
    pub scenario: String,
    /// The agent's name as recorded.
    pub agent: String,
    /// The run's tag, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The master seed.
    pub seed: u64,
    /// The run's progress after the latest turn.
    pub progress: Progress,
    /// Decisions taken so far.
    pub steps: u64,
    /// Whether the run has ended.
    pub finished: bool,
    /// The run ended inside the simulation.
    pub terminated: bool,
    /// The run was cut off outside it.
    pub truncated: bool,
    /// The final result, once the run has ended and its directory is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultSummary>,
    /// Why the run failed, when its directory could not be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The headline of a finished run's `result.json`.
#[derive(Debug, Clone, Serialize)]
pub struct ResultSummary {
    /// Mean task score (0..1).
    pub checkpoint_score: f64,
    /// Share of tasks fully solved (0..1).
    pub success_rate: f64,
    /// Why the run ended.
    pub end_reason: Option<EndReason>,
    /// The trajectory digest (hex BLAKE3), as `tbsim replay` checks it.
    pub digest: String,
    /// Agent decisions.
    pub steps: u64,
    /// Per task, as in `result.json`.
    pub tasks: Vec<TaskSummary>,
}

/// One task of a finished run.
#[derive(Debug, Clone, Serialize)]
pub struct TaskSummary {
    /// Task key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Weighted share of its checkpoints passed (0..1).
    pub score: f64,
    /// Every checkpoint passed.
    pub success: bool,
    /// Checkpoints passed.
    pub passed: usize,
    /// Checkpoints.
    pub total: usize,
}

impl From<&RunResult> for ResultSummary {
    fn from(r: &RunResult) -> Self {
        ResultSummary {
            checkpoint_score: r.checkpoint_score,
            success_rate: r.success_rate,
            end_reason: r.end_reason,
            digest: r.digest.clone(),
            steps: r.steps,
            tasks: r
                .tasks
                .iter()
                .map(|t| TaskSummary {
                    key: t.key.clone(),
                    title: t.title.clone(),
                    score: t.score,
                    success: t.success,
                    passed: t.passed,
                    total: t.total,
                })
                .collect(),
        }
    }
}

/// The state of the finished session run in `dir`, read back from its directory
/// (`result.json`, `run.json`, and the world replayed for its last progress), or
/// `None` when the run has no result (it never ended, or is not a run).
pub fn read_back(dir: &Path) -> Option<SessionState> {
    let text = tbsim_engine::run_dir::read_result(&dir.join("result.json")).ok()?;
    let r: RunResult = serde_json::from_str(&text).ok()?;
    let tag = RunFile::read(dir).ok().and_then(|f| f.options.tag);
    let mut progress = match tbsim_engine::replay::redrive_dir(dir, None) {
        Ok(re) => re.sim.progress(),
        Err(_) => placeholder_progress(),
    };
    // The replay records no end; the result has it, and the final numbers.
    progress.end_reason = r.end_reason;
    progress.step = r.steps;
    progress.score = r.checkpoint_score;
    let (terminated, truncated) = end_flags(r.end_reason);
    Some(SessionState {
        scenario: r.scenario.clone(),
        agent: r.agent.clone(),
        tag,
        seed: r.seed,
        progress,
        steps: r.steps,
        finished: true,
        terminated,
        truncated,
        result: Some(ResultSummary::from(&r)),
        failure: None,
    })
}

/// One observation handed out by the agent.
#[derive(Debug)]
struct Handout {
    observation: Observation,
    progress: Progress,
}

/// The agent of a session: hands observations out, awaits decisions.
#[derive(Debug)]
pub struct RemoteAgent {
    name: String,
    handouts: mpsc::UnboundedSender<Handout>,
    decisions: mpsc::UnboundedReceiver<Decision>,
}

impl Agent for RemoteAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide<'a>(&'a mut self, _obs: &'a Observation) -> AgentFuture<'a> {
        // The observation went out with `observe`, just before this call.
        Box::pin(async move {
            self.decisions
                .recv()
                .await
                .ok_or_else(|| AgentError::Abandoned("the session was closed".into()))
        })
    }

    fn wants_progress(&self) -> bool {
        true
    }

    fn external(&self) -> bool {
        true
    }

    fn resume(
        &mut self,
        _past: &[tbsim_engine::agent::PastStep],
        _pending: &[serde_json::Value],
    ) -> Result<(), AgentError> {
        // The engine re-drives the recorded decisions; the client keeps its own state.
        Ok(())
    }

    fn observe(&mut self, obs: &Observation, progress: &Progress) {
        // Nobody listening means the session is gone; its next decision says so.
        let _ = self.handouts.send(Handout {
            observation: obs.clone(),
            progress: progress.clone(),
        });
    }
}

/// A run in progress, as a future.
type RunFuture = Pin<Box<dyn Future<Output = Result<RunResult, RunError>> + Send>>;

/// Where a session's run goes on (see the module docs).
enum Run {
    /// Polled by the session itself, on the thread of the request waiting for it.
    Inline(RunFuture),
    /// On a blocking thread of its own (a built-in agent).
    Thread(JoinHandle<Result<RunResult, RunError>>),
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Run::Inline(_) => "Run::Inline",
            Run::Thread(_) => "Run::Thread",
        })
    }
}

/// How a run ended: its result, or the panic that stopped it.
type Ended = Result<Result<RunResult, RunError>, String>;

/// A panic's message.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// One world driven by an external agent (see the module docs).
#[derive(Debug)]
pub struct Session {
    info: SessionInfo,
    scenario: String,
    agent: String,
    seed: u64,
    dir: PathBuf,
    decisions: Option<mpsc::UnboundedSender<Decision>>,
    handouts: mpsc::UnboundedReceiver<Handout>,
    run: Option<Run>,
    /// An inline run that has ended, until [`Session::finish`] takes it.
    ended: Option<Ended>,
    /// The runtime the session lives on.
    handle: tokio::runtime::Handle,
    latest: Progress,
    result: Option<RunResult>,
}

impl Session {
    /// Writes `run.json`, starts the run and returns the session with the first turn.
    pub async fn start(spec: SessionSpec) -> Result<(Session, Turn), SessionError> {
        let (handout_tx, handouts) = mpsc::unbounded_channel();
        let (decisions, decision_rx) = mpsc::unbounded_channel();
        let agent = RemoteAgent {
            name: spec.agent.clone(),
            handouts: handout_tx,
            decisions: decision_rx,
        };
        let mut session = Session::launch(spec, Box::new(agent), handouts, true).await?;
        session.decisions = Some(decisions);
        let turn = session.next_turn(true).await?;
        Ok((session, turn))
    }

    /// Reattaches a client to the session run in `dir` that was interrupted (its
    /// server stopped or died) or abandoned (its session was closed or expired
    /// before it ended): the recorded decisions are re-driven into a fresh world
    /// (see [`reattach_dir`]) and the first turn is the latest observation; its
    /// `progress.step` is the number of decisions restored. Runs that ended on
    /// their own are refused, as are runs no session API or MCP client drove.
    pub async fn resume(
        dir: PathBuf,
        control: Option<Arc<Control>>,
    ) -> Result<(Session, Turn), SessionError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| SessionError::NoRuntime)?;
        let d = dir.clone();
        let (file, header) = tokio::task::spawn_blocking(move || {
            let file = RunFile::read(&d)?;
            let rec = read_recorded(&d.join("trajectory.jsonl"))
                .map_err(|e| SessionError::NotResumable(e.to_string()))?;
            match rec.end {
                Some(EndReason::Abandoned | EndReason::InfraError) | None => {}
                Some(r) => return Err(SessionError::Finished(r)),
            }
            Ok::<_, SessionError>((file, rec.header))
        })
        .await
        .map_err(|e| SessionError::Panicked(e.to_string()))??;
        let agent = file.options.agent.clone();
        // Built-in agents resume with `tbsim run --resume`, under their own options.
        if !(agent.starts_with("http:") || agent.starts_with("mcp:")) || header.agent != agent {
            return Err(SessionError::NotResumable(format!(
                "its agent `{}` is not a session client's (`http:…`, `mcp:…`); resume it with `tbsim run --resume`",
                header.agent
            )));
        }
        let (handout_tx, handouts) = mpsc::unbounded_channel();
        let (decisions, decision_rx) = mpsc::unbounded_channel();
        let mut remote = RemoteAgent {
            name: agent.clone(),
            handouts: handout_tx,
            decisions: decision_rx,
        };
        let limits = file.options.limits();
        let trial = file.recorded_trial();
        let control = control.unwrap_or_else(|| Control::new(false));
        let hooks = RunHooks::with_control(Arc::clone(&control));
        let run_dir = dir.clone();
        let run: RunFuture = Box::pin(async move {
            reattach_dir(
                &run_dir,
                &mut remote,
                &limits,
                Box::new(Scripted),
                trial,
                hooks,
            )
            .await
        });
        let info = SessionInfo {
            scenario: header.scenario.clone(),
            agent: agent.clone(),
            tag: file.options.tag.clone(),
            seed: header.seed,
            hints: header.hints,
            dir: dir.clone(),
            control,
            last_turn: Arc::new(std::sync::Mutex::new(None)),
            fork: None,
            builtin: false,
            failure: Arc::new(std::sync::Mutex::new(None)),
        };
        let mut session = Session {
            info,
            scenario: header.scenario,
            agent,
            seed: header.seed,
            dir,
            decisions: Some(decisions),
            handouts,
            run: Some(Run::Inline(run)),
            ended: None,
            handle,
            latest: placeholder_progress(),
            result: None,
        };
        let turn = session.next_turn(true).await?;
        Ok((session, turn))
    }

    /// Writes `run.json` and starts the run with a built-in `agent` (the oracle, a
    /// model) that decides on its own; a console watches and guides it through the
    /// session's control. Steps are refused.
    pub async fn start_builtin(
        spec: SessionSpec,
        agent: Box<dyn Agent>,
    ) -> Result<Session, SessionError> {
        let (_, handouts) = mpsc::unbounded_channel();
        let mut session = Session::launch(spec, agent, handouts, false).await?;
        session.info.builtin = true;
        Ok(session)
    }

    /// What a console reads of the session (cheap; needs no lock on the session).
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    async fn launch(
        spec: SessionSpec,
        mut agent: Box<dyn Agent>,
        handouts: mpsc::UnboundedReceiver<Handout>,
        inline: bool,
    ) -> Result<Session, SessionError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| SessionError::NoRuntime)?;
        let fork = match &spec.fork {
            Some((dir, step)) => {
                let (dir, step) = (dir.clone(), *step);
                let point = tokio::task::spawn_blocking(move || ForkPoint::open(&dir, step))
                    .await
                    .map_err(|e| SessionError::Panicked(e.to_string()))??;
                Some(point)
            }
            None => None,
        };
        let seed = match &fork {
            Some(f) => f.config().seed.unwrap_or(spec.scenario.scenario.seed),
            None => spec.seed.unwrap_or(spec.scenario.scenario.seed),
        };
        let hints = fork.as_ref().map_or(spec.hints, |f| f.config().hints);
        let config = match &fork {
            Some(f) => SimConfig {
                agent: spec.agent.clone(),
                ..f.config()
            },
            None => SimConfig {
                seed: Some(seed),
                hints,
                turn_cost_secs: None,
                token_cost_secs: None,
                agent: spec.agent.clone(),
                feedback: spec.feedback,
            },
        };
        let options = RunOptions {
            tag: spec.tag.clone(),
            ..RunOptions::with_defaults(spec.agent.clone(), spec.max_steps)
        };
        std::fs::create_dir_all(&spec.dir).map_err(|source| SessionError::Dir {
            path: spec.dir.clone(),
            source,
        })?;
        RunFile {
            options: options.clone(),
            sim: Some(config.clone()),
            trial: 0,
            trials: 1,
        }
        .write(&spec.dir)?;
        let limits = options.limits();
        let scenario = spec.scenario.clone();
        let dir = spec.dir.clone();
        let control = spec.control.clone().unwrap_or_else(|| Control::new(false));
        let mut hooks = RunHooks::with_control(Arc::clone(&control));
        hooks.compress = spec.compress;
        let view_cache = spec.view_cache.clone();
        let hook_handle = handle.clone();
        let run: RunFuture = Box::pin(async move {
            let ended = async {
                match fork {
                    Some(point) => point
                        .run(agent.as_mut(), &limits, &dir, Box::new(Scripted), hooks)
                        .await
                        .map_err(|e| match e {
                            ForkError::Run(r) => r,
                            other => RunError::Trajectory(dir.clone(), other.to_string()),
                        }),
                    None => {
                        run_to_dir_hooked(
                            &scenario,
                            agent.as_mut(),
                            config,
                            &limits,
                            &dir,
                            None,
                            Box::new(Scripted),
                            hooks,
                        )
                        .await
                    }
                }
            }
            .await;
            if let (Ok(_), Some(hook)) = (&ended, view_cache) {
                // Beside the run, not in its way: the step that ended it answers now.
                let dir = dir.clone();
                hook_handle.spawn_blocking(move || (hook.0)(&dir));
            }
            ended
        });
        let run = if inline {
            Run::Inline(run)
        } else {
            let h = handle.clone();
            Run::Thread(tokio::task::spawn_blocking(move || h.block_on(run)))
        };
        let info = SessionInfo {
            scenario: spec.scenario.scenario.name.clone(),
            agent: spec.agent.clone(),
            tag: spec.tag.clone(),
            seed,
            hints,
            dir: spec.dir.clone(),
            control,
            last_turn: Arc::new(std::sync::Mutex::new(None)),
            fork: spec.fork.clone(),
            builtin: false,
            failure: Arc::new(std::sync::Mutex::new(None)),
        };
        Ok(Session {
            info,
            scenario: spec.scenario.scenario.name.clone(),
            agent: spec.agent,
            seed,
            dir: spec.dir,
            decisions: None,
            handouts,
            run: Some(run),
            ended: None,
            handle,
            latest: placeholder_progress(),
            result: None,
        })
    }

    /// Sends a decision and returns what follows. When the run ends with it, the run
    /// directory is written before this returns.
    pub async fn step(&mut self, decision: Decision) -> Result<Turn, SessionError> {
        if self.info.builtin {
            return Err(SessionError::NotRemote);
        }
        if let Some(why) = self.info.failure() {
            return Err(SessionError::Failed(why));
        }
        if self.is_over() {
            return Err(SessionError::Over(self.latest.end_reason));
        }
        let sent = self
            .decisions
            .as_ref()
            .is_some_and(|d| d.send(decision).is_ok());
        if !sent {
            // The run is gone (it failed); say why.
            self.finish().await?;
            return Err(SessionError::Over(self.latest.end_reason));
        }
        self.next_turn(false).await
    }

    /// Ends the run if it is still going (as abandoned), waits until its directory is
    /// written and returns its result. Idempotent.
    pub async fn close(&mut self) -> Result<&RunResult, SessionError> {
        self.decisions = None;
        // A built-in agent is stopped at its next decision boundary.
        self.info.control.cancel();
        // Drain what the run hands out while it ends (its last observation).
        while let Some(h) = self.turn(true).await {
            self.latest = h.progress;
        }
        self.finish().await?;
        if let Some(why) = self.info.failure() {
            return Err(SessionError::Failed(why));
        }
        self.result
            .as_ref()
            .ok_or(SessionError::Over(self.latest.end_reason))
    }

    /// Whether the run has ended.
    pub fn is_over(&self) -> bool {
        self.latest.end_reason.is_some() || self.run.is_none()
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The final result, once the run has ended.
    pub fn result(&self) -> Option<&RunResult> {
        self.result.as_ref()
    }

    /// The session's state after the latest turn.
    pub fn state(&self) -> SessionState {
        let (terminated, truncated) = end_flags(self.latest.end_reason);
        SessionState {
            scenario: self.scenario.clone(),
            agent: self.agent.clone(),
            tag: self.info.tag.clone(),
            seed: self.seed,
            progress: self.latest.clone(),
            steps: self.latest.step,
            finished: self.is_over(),
            terminated,
            truncated,
            result: self.result.as_ref().map(ResultSummary::from),
            failure: self.info.failure(),
        }
    }

    async fn next_turn(&mut self, first: bool) -> Result<Turn, SessionError> {
        // The first turn builds the world (or re-drives a fork's decisions): long.
        let Some(h) = self.turn(first).await else {
            // The run ended without a last observation: it failed.
            self.finish().await?;
            return Err(SessionError::Over(self.latest.end_reason));
        };
        let reward = if first {
            0.0
        } else {
            h.progress.score - self.latest.score
        };
        self.latest = h.progress.clone();
        if h.progress.end_reason.is_some() {
            self.decisions = None;
            self.finish().await?;
        }
        let (terminated, truncated) = end_flags(h.progress.end_reason);
        let turn = Turn {
            observation: h.observation,
            progress: h.progress,
            reward,
            terminated,
            truncated,
        };
        *self
            .info
            .last_turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(turn.clone());
        Ok(turn)
    }

    /// The run's next handout, or `None` once the run has ended and all it handed
    /// out was taken. An inline run is polled here, on the caller's thread; `long`
    /// (work that may take a while) polls it under `block_in_place` where the
    /// runtime allows it.
    async fn turn(&mut self, long: bool) -> Option<Handout> {
        let inline = matches!(self.run, Some(Run::Inline(_)));
        if inline
            && long
            && self.handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        {
            let handle = self.handle.clone();
            return tokio::task::block_in_place(|| {
                handle.block_on(std::future::poll_fn(|cx| self.poll_turn(cx)))
            });
        }
        std::future::poll_fn(|cx| self.poll_turn(cx)).await
    }

    fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<Option<Handout>> {
        if let Poll::Ready(h) = self.handouts.poll_recv(cx) {
            return Poll::Ready(h);
        }
        let Some(Run::Inline(run)) = &mut self.run else {
            return Poll::Pending;
        };
        // A panic in the world is the session's error, as a panicked thread's was.
        match std::panic::catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
            Ok(Poll::Pending) => {}
            Ok(Poll::Ready(r)) => {
                self.run = None;
                self.ended = Some(Ok(r));
            }
            Err(p) => {
                self.run = None;
                self.ended = Some(Err(panic_message(p.as_ref())));
            }
        }
        // What the run handed out while polled (after it ended: what is left, then
        // `None`, its agent and sender gone with it).
        match self.handouts.poll_recv(cx) {
            Poll::Pending if self.run.is_none() => Poll::Ready(None),
            p => p,
        }
    }

    /// Waits for the run to end (an inline one is driven to its end here) and keeps
    /// its result.
    async fn finish(&mut self) -> Result<(), SessionError> {
        if matches!(self.run, Some(Run::Inline(_))) {
            while let Some(h) = self.turn(true).await {
                self.latest = h.progress;
            }
        }
        let ended = match self.run.take() {
            Some(Run::Thread(run)) => run.await.map_err(|e| e.to_string()),
            // An inline run has ended once the loop above is done.
            other => {
                self.run = other;
                match self.ended.take() {
                    Some(ended) => ended,
                    None => return Ok(()),
                }
            }
        };
        let r = match ended {
            Ok(Ok(r)) => r,
            Ok(Err(e @ (RunError::Trajectory(..) | RunError::Io { .. }))) => {
                // Said once, to the step that hit it; later ones get `Failed`.
                let why = e.to_string();
                *self
                    .info
                    .failure
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why.clone());
                return Err(SessionError::WriteFailed(why));
            }
            Ok(Err(e)) => return Err(e.into()),
            Err(e) => return Err(SessionError::Panicked(e)),
        };
        self.latest.end_reason = r.end_reason;
        self.result = Some(r);
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Dropping the decision channel ends a live run as abandoned; its thread
        // writes the run directory on its own (an inline run is given one).
        self.decisions = None;
        self.info.control.cancel();
        if let Some(Run::Inline(run)) = self.run.take() {
            let handle = self.handle.clone();
            drop(self.handle.spawn_blocking(move || handle.block_on(run)));
        }
    }
}

fn placeholder_progress() -> Progress {
    Progress {
        step: 0,
        time: String::new(),
        t: tbsim_core::time::SimTime(0),
        day: 1,
        days: 1,
        tasks: Vec::new(),
        score: 0.0,
        errors: Default::default(),
        end_reason: None,
    }
}
