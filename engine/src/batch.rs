//! Batch runs: many scenarios, several trials each, a bounded number at a time.
//!
//! A batch is a list of [`Job`]s, one per (scenario, trial), planned up front by
//! [`plan`] so that every job's seed and run directory are known before anything runs.
//! Each job is an independent world: its own [`Sim`](crate::sim::Sim), agent,
//! trajectory file and `result.json`. Nothing is shared between worlds, so a job's
//! output is a pure function of (scenario, seed, agent decisions) and the bytes
//! written do not depend on `concurrency` or on which job finishes first; outcomes are
//! returned in plan order.
//!
//! ## Seeds and directories
//!
//! Trial `t` (from 0) of a scenario runs with seed `base + t` (wrapping), where `base`
//! is the seed given for the batch or else the scenario's own. With one trial the
//! layout is the one `tbsim run` always had: `<out>` for a single scenario, else
//! `<out>/<scenario>/`. With `k > 1` trials each run goes to
//! `<out>/<scenario>/trial-<t>/` and `result.json` records `trial`.
//!
//! ## Threads and tokio
//!
//! The simulation is synchronous and single-threaded per world; only an agent's
//! decision may await (a model behind HTTP). The runner therefore uses a multi-thread
//! tokio runtime for I/O and timers, and runs each world on a *blocking* thread
//! (`spawn_blocking`), polling the run future there with `Handle::block_on`:
//!
//! * a simulation step may block for seconds (a sandboxed `run_python` call waits on a
//!   subprocess); on a blocking thread that never delays another world's HTTP
//!   responses or fires its request timeouts late, as it would on a runtime worker;
//! * while a world awaits its model, its thread parks and the runtime's workers (a
//!   few, since they only move bytes) drive the sockets of every world;
//! * `concurrency` is exactly the number of world threads: `N` workers each take the
//!   next unstarted job in plan order. Parked threads are cheap, so hundreds of
//!   worlds waiting on slow models fit in one process.
//!
//! The blocking pool is sized above `concurrency` because HTTP clients also use it
//! (reqwest resolves host names on it); were every blocking thread a world waiting
//! on a name lookup, the batch would deadlock. The runner never reads the wall clock.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tbsim_core::segment::{Segment, confined_join};

use crate::agent::{Agent, AgentError};
use crate::protocol::SimConfig;
use crate::result::RunResult;
use crate::run::{RunError, RunLimits, resume_dir};
use tbsim_scenario::LoadedScenario;

/// Extra blocking threads beyond the world threads, for HTTP clients' own blocking
/// work (name resolution).
const SPARE_BLOCKING_THREADS: usize = 32;

/// Runtime workers: they only drive sockets and timers, so a few are plenty.
const MAX_IO_WORKERS: usize = 4;

/// A failed batch or batch job.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Two scenarios share a name, so their run directories would collide.
    #[error("two scenarios are named `{0}`; run directories would collide")]
    DuplicateScenario(String),
    /// A scenario's name cannot be a directory name (only reachable for scenarios
    /// that skipped validation, which refuses such names as TB0025).
    #[error("scenario name {name:?} cannot name a run directory: {source}")]
    BadName {
        /// The name.
        name: String,
        /// Why.
        source: tbsim_core::segment::SegmentError,
    },
    /// `trials` or `concurrency` was zero.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// A shard given on the command line or by a job engine is not usable.
    #[error("{0}")]
    Shard(String),
    /// The agent could not be created for a job.
    #[error("cannot create the agent for `{scenario}` trial {trial}: {source}")]
    Agent {
        /// Scenario name.
        scenario: String,
        /// Trial index.
        trial: u32,
        /// The cause.
        source: AgentError,
    },
    /// The run directory could not be written.
    #[error("run `{scenario}` trial {trial}: {source}")]
    Run {
        /// Scenario name.
        scenario: String,
        /// Trial index.
        trial: u32,
        /// The cause.
        source: RunError,
    },
    /// The run panicked (a bug); the other jobs go on.
    #[error("run `{scenario}` trial {trial} panicked: {message}")]
    Panicked {
        /// Scenario name.
        scenario: String,
        /// Trial index.
        trial: u32,
        /// The panic payload, if it was text.
        message: String,
    },
    /// The tokio runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// One (scenario, trial) to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Position in the plan; outcomes come back in this order.
    pub index: usize,
    /// The scenario.
    pub scenario: Arc<LoadedScenario>,
    /// Trial index, from 0.
    pub trial: u32,
    /// Number of trials of this scenario in the batch.
    pub trials: u32,
    /// Master seed: the base seed plus `trial`.
    pub seed: u64,
    /// Run directory.
    pub dir: PathBuf,
    /// Continue the run already in `dir` if it has a trajectory ([`resume_dir`]),
    /// instead of starting afresh (`tbsim run --resume` over a batch).
    pub resume: bool,
}

impl Job {
    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.scenario.scenario.name
    }

    /// The trial recorded in `result.json`: only when there are several.
    pub fn recorded_trial(&self) -> Option<u32> {
        recorded_trial(self.trial, self.trials)
    }
}

/// The trial `result.json` records for trial `trial` of `trials`: only when there
/// are several, so a one-trial run's result reads as it always did.
pub fn recorded_trial(trial: u32, trials: u32) -> Option<u32> {
    (trials > 1).then_some(trial)
}

/// Plans one job per (scenario, trial), in scenario order then trial order.
///
/// `seed` overrides every scenario's own base seed. Fails before anything runs if two
/// scenarios share a name or `trials` is zero.
pub fn plan(
    scenarios: &[Arc<LoadedScenario>],
    trials: u32,
    seed: Option<u64>,
    out: &Path,
) -> Result<Vec<Job>, BatchError> {
    if trials == 0 {
        return Err(BatchError::Zero("the number of trials"));
    }
    let mut names = std::collections::BTreeSet::new();
    for s in scenarios {
        if !names.insert(s.scenario.name.as_str()) {
            return Err(BatchError::DuplicateScenario(s.scenario.name.clone()));
        }
    }
    let mut jobs = Vec::with_capacity(scenarios.len() * trials as usize);
    for s in scenarios {
        let base = seed.unwrap_or(s.scenario.seed);
        // Names are checked again here, not only at validation, so that no scenario
        // however it was made can put a run outside `out`.
        let name = Segment::parse(&s.scenario.name).map_err(|source| BatchError::BadName {
            name: s.scenario.name.clone(),
            source,
        })?;
        for t in 0..trials {
            let dir = match (scenarios.len(), trials) {
                (1, 1) => out.to_path_buf(),
                (_, 1) => confined_join(out, &name),
                _ => confined_join(out, &name).join(format!("trial-{t}")),
            };
            jobs.push(Job {
                index: jobs.len(),
                scenario: Arc::clone(s),
                trial: t,
                trials,
                seed: base.wrapping_add(u64::from(t)),
                dir,
                resume: false,
            });
        }
    }
    Ok(jobs)
}

/// One of `count` deterministic shares of a batch, so that `count` independent
/// processes (a Kubernetes Indexed Job, a Slurm array) together run exactly the
/// whole batch: job `i` of the plan (scenario order, then trial order) belongs to
/// shard `i mod count`. Round-robin, so every shard gets a similar mix of
/// scenarios. Run directories are named from the whole plan, so the shards' runs
/// land where an unsharded run would put them (a shared `--out` ends up as one
/// batch; separate ones report together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Zero-based index, below `count`.
    pub index: u32,
    /// Number of shards, at least 1.
    pub count: u32,
}

impl Shard {
    /// A shard from a zero-based index and a count.
    pub fn new(index: u32, count: u32) -> Result<Shard, BatchError> {
        if count == 0 || index >= count {
            return Err(BatchError::Shard(format!(
                "shard index {index} is not below the shard count {count}"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Parses `K/N` with `K` counted from 1 (`1/4` ... `4/4`), as `--shard` takes it.
    pub fn parse(text: &str) -> Result<Shard, BatchError> {
        let bad = || {
            BatchError::Shard(format!(
                "`{text}` is not a shard: expected K/N with 1 <= K <= N, e.g. `2/8`"
            ))
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || k > n {
            return Err(bad());
        }
        Shard::new(k - 1, n)
    }

    /// The shard a job engine assigns through the environment, and the variable it
    /// came from: Kubernetes Indexed Jobs set `JOB_COMPLETION_INDEX` (zero-based;
    /// the count is not in the environment, so the manifest sets
    /// `TBSIM_SHARD_COUNT` to the job's `completions`); Slurm arrays set
    /// `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT`
    /// (the index is the task id minus the minimum, so `--array=1-8` and `0-7` both
    /// work; arrays with a step or gaps are refused). `None` when neither is set.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<(Shard, &'static str)>, BatchError> {
        let num = |name: &str| -> Result<Option<u32>, BatchError> {
            match var(name) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    BatchError::Shard(format!("{name}=`{v}` is not a non-negative integer"))
                }),
            }
        };
        if let Some(index) = num("JOB_COMPLETION_INDEX")? {
            let count = num("TBSIM_SHARD_COUNT")?.ok_or_else(|| {
                BatchError::Shard(
                    "JOB_COMPLETION_INDEX is set but TBSIM_SHARD_COUNT is not: set it to the Indexed Job's `completions` (see tools/k8s/)".into(),
                )
            })?;
            return Ok(Some((Shard::new(index, count)?, "JOB_COMPLETION_INDEX")));
        }
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let count = num("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
                BatchError::Shard(
                    "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not".into(),
                )
            })?;
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            if let Some(max) = num("SLURM_ARRAY_TASK_MAX")?
                && max.checked_sub(min).map(|span| span + 1) != Some(count)
            {
                return Err(BatchError::Shard(format!(
                    "the Slurm array {min}-{max} has {count} tasks: use a contiguous array without a step (e.g. --array=0-{})",
                    count.saturating_sub(1)
                )));
            }
            let index = id.checked_sub(min).ok_or_else(|| {
                BatchError::Shard(format!(
                    "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                ))
            })?;
            return Ok(Some((Shard::new(index, count)?, "SLURM_ARRAY_TASK_ID")));
        }
        Ok(None)
    }

    /// The jobs of the plan that belong to this shard, in plan order.
    pub fn select(self, jobs: Vec<Job>) -> Vec<Job> {
        jobs.into_iter()
            .filter(|j| j.index as u64 % u64::from(self.count) == u64::from(self.index))
            .collect()
    }
}

impl std::fmt::Display for Shard {
    /// `K/N`, `K` from 1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// Settings shared by every job of a batch.
#[derive(Debug, Clone)]
pub struct BatchSpec {
    /// Worlds running at once (at least 1).
    pub concurrency: usize,
    /// Limits on each run.
    pub limits: RunLimits,
    /// Simulation settings; each job's seed replaces `seed`.
    pub config: SimConfig,
    /// Write each run's trajectory as zstd frames (`trajectory.jsonl.zst`; see
    /// [`crate::run::RunHooks::compress`]). Such a run cannot be resumed.
    pub compress: bool,
}

/// Makes a fresh agent for each job (agents keep per-run state).
pub trait AgentFactory: Send + Sync {
    /// The agent for `job`.
    fn make(&self, job: &Job) -> Result<Box<dyn Agent>, AgentError>;
    /// The colleagues' engine for `job` (rule-following by default).
    fn npc(&self, job: &Job) -> Result<Box<dyn crate::npc::NpcEngine>, AgentError> {
        let _ = job;
        Ok(Box::new(crate::npc::Scripted))
    }
}

impl<F> AgentFactory for F
where
    F: Fn(&Job) -> Result<Box<dyn Agent>, AgentError> + Send + Sync,
{
    fn make(&self, job: &Job) -> Result<Box<dyn Agent>, AgentError> {
        self(job)
    }
}

/// Hears about jobs as they start and finish (a progress bar). Called from the world
/// threads, in no particular order across jobs.
pub trait Progress: Send + Sync {
    /// `job` is about to run.
    fn started(&self, job: &Job) {
        let _ = job;
    }
    /// `job` is done.
    fn finished(&self, job: &Job, outcome: &Result<RunResult, BatchError>) {
        let _ = (job, outcome);
    }
    /// A console's remote control for `job`, asked for right before it starts
    /// (`tbsim run --ui` watches every job; none by default). A resumed job is
    /// not watched.
    fn control(&self, job: &Job) -> Option<Arc<crate::live::Control>> {
        let _ = job;
        None
    }
}

/// Progress that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A job's result, or why there is none.
pub type JobResult = Result<RunResult, BatchError>;

/// A job and how it went.
#[derive(Debug)]
pub struct JobOutcome {
    /// The job.
    pub job: Job,
    /// Its result, or why there is none.
    pub result: Result<RunResult, BatchError>,
}

/// Runs `jobs` on the current tokio runtime, `spec.concurrency` worlds at a time, and
/// returns their outcomes in plan order. A failed job does not stop the others.
///
/// Must be called from within a tokio runtime: worlds run on its blocking pool and
/// await their agents through its handle (see the module docs). Either flavour works;
/// on a current-thread runtime, all agents' I/O is driven by the thread awaiting this
/// future, which is why [`run_jobs_blocking`] builds a multi-thread one.
pub async fn run_jobs(
    jobs: Vec<Job>,
    spec: &BatchSpec,
    agents: Arc<dyn AgentFactory>,
    progress: Arc<dyn Progress>,
) -> Result<Vec<JobOutcome>, BatchError> {
    if spec.concurrency == 0 {
        return Err(BatchError::Zero("concurrency"));
    }
    let handle = tokio::runtime::Handle::current();
    let n = jobs.len();
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let slots: Arc<Mutex<Vec<Option<JobResult>>>> =
        Arc::new(Mutex::new((0..n).map(|_| None).collect()));
    let spec = Arc::new(spec.clone());
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..spec.concurrency.min(n) {
        let (handle, jobs, next, slots, spec, agents, progress) = (
            handle.clone(),
            Arc::clone(&jobs),
            Arc::clone(&next),
            Arc::clone(&slots),
            Arc::clone(&spec),
            Arc::clone(&agents),
            Arc::clone(&progress),
        );
        workers.spawn_blocking(move || {
            // Jobs start in plan order; the counter is the only coordination.
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                progress.started(job);
                let result = run_one(&handle, job, &spec, agents.as_ref(), progress.as_ref());
                progress.finished(job, &result);
                lock(&slots)[i] = Some(result);
            }
        });
    }
    while let Some(joined) = workers.join_next().await {
        if let Err(e) = joined
            && e.is_panic()
        {
            // Runs are caught in `run_one`; a panic here came from a progress
            // callback, which is the caller's bug: pass it on.
            std::panic::resume_unwind(e.into_panic());
        }
    }
    let mut slots = std::mem::take(&mut *lock(&slots));
    let jobs = Arc::try_unwrap(jobs).unwrap_or_else(|a| (*a).clone());
    Ok(jobs
        .into_iter()
        .zip(slots.iter_mut())
        .map(|(job, slot)| {
            let result = slot.take().unwrap_or_else(|| {
                Err(BatchError::Panicked {
                    scenario: job.name().to_owned(),
                    trial: job.trial,
                    message: "the job never ran".into(),
                })
            });
            JobOutcome { job, result }
        })
        .collect())
}

/// Starts a runtime sized for `spec` and runs `jobs` on it (see [`run_jobs`]).
pub fn run_jobs_blocking(
    jobs: Vec<Job>,
    spec: &BatchSpec,
    agents: Arc<dyn AgentFactory>,
    progress: Arc<dyn Progress>,
) -> Result<Vec<JobOutcome>, BatchError> {
    let io_workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_IO_WORKERS);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(io_workers)
        .max_blocking_threads(spec.concurrency.max(1) + SPARE_BLOCKING_THREADS)
        .thread_name("tbsim-batch")
        .enable_all()
        .build()
        .map_err(BatchError::Runtime)?;
    runtime.block_on(run_jobs(jobs, spec, agents, progress))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned slot table only means another worker panicked between two plain
    // stores; the data is still consistent.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run_one(
    handle: &tokio::runtime::Handle,
    job: &Job,
    spec: &BatchSpec,
    agents: &dyn AgentFactory,
    progress: &dyn Progress,
) -> Result<RunResult, BatchError> {
    let scenario = || job.name().to_owned();
    let attempt = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut agent = agents.make(job).map_err(|source| BatchError::Agent {
            scenario: scenario(),
            trial: job.trial,
            source,
        })?;
        let npc = agents.npc(job).map_err(|source| BatchError::Agent {
            scenario: scenario(),
            trial: job.trial,
            source,
        })?;
        // Present in any form (a FIFO, a link): resuming then reads it and says what
        // is wrong, rather than starting afresh and writing into it.
        if job.resume && job.dir.join("trajectory.jsonl").symlink_metadata().is_ok() {
            return resume_dir(
                &job.dir,
                agent.as_mut(),
                &spec.limits,
                npc,
                job.recorded_trial(),
            )
            .map_err(|source| BatchError::Run {
                scenario: scenario(),
                trial: job.trial,
                source,
            });
        }
        let config = SimConfig {
            seed: Some(job.seed),
            ..spec.config.clone()
        };
        let hooks = crate::run::RunHooks {
            control: progress.control(job),
            compress: spec.compress,
            ..Default::default()
        };
        handle
            .block_on(crate::run::run_to_dir_hooked(
                &job.scenario,
                agent.as_mut(),
                config,
                &spec.limits,
                &job.dir,
                job.recorded_trial(),
                npc,
                hooks,
            ))
            .map_err(|source| BatchError::Run {
                scenario: scenario(),
                trial: job.trial,
                source,
            })
    }));
    attempt.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-text panic payload".into());
        Err(BatchError::Panicked {
            scenario: scenario(),
            trial: job.trial,
            message,
        })
    })
}

/// Totals over a finished batch, for the summary printed at the end.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BatchSummary {
    /// Jobs planned.
    pub runs: usize,
    /// Jobs that produced a result.
    pub completed: usize,
    /// Jobs that failed (no result).
    pub failed: usize,
    /// Distinct scenarios.
    pub scenarios: usize,
    /// Trials per scenario.
    pub trials: u32,
    /// Mean checkpoint score over completed runs.
    pub checkpoint_score: f64,
    /// Mean success rate over completed runs.
    pub success_rate: f64,
    /// Share of completed runs that solved every task.
    pub solved: f64,
    /// pass^k with `k` = trials, when there are several trials (see
    /// [`crate::result::pass_hat_k`]).
    pub pass_k: Option<f64>,
}

impl BatchSummary {
    /// Sums up `outcomes`.
    pub fn new(outcomes: &[JobOutcome]) -> Self {
        let done: Vec<&RunResult> = outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok())
            .collect();
        let mean = |f: &dyn Fn(&RunResult) -> f64| {
            if done.is_empty() {
                0.0
            } else {
                done.iter().map(|r| f(r)).sum::<f64>() / done.len() as f64
            }
        };
        let trials = outcomes.iter().map(|o| o.job.trials).max().unwrap_or(1);
        let mut per_scenario: std::collections::BTreeMap<&str, (usize, usize)> =
            std::collections::BTreeMap::new();
        for o in outcomes {
            let e = per_scenario.entry(o.job.name()).or_default();
            e.0 += 1;
            if o.result
                .as_ref()
                .is_ok_and(|r| crate::result::is_solved(r.success_rate))
            {
                e.1 += 1;
            }
        }
        let counts: Vec<(usize, usize)> = per_scenario.values().copied().collect();
        BatchSummary {
            runs: outcomes.len(),
            completed: done.len(),
            failed: outcomes.len() - done.len(),
            scenarios: per_scenario.len(),
            trials,
            checkpoint_score: mean(&|r| r.checkpoint_score),
            success_rate: mean(&|r| r.success_rate),
            solved: mean(&|r| f64::from(u8::from(crate::result::is_solved(r.success_rate)))),
            pass_k: (trials > 1)
                .then(|| crate::result::pass_hat_k(&counts, trials as usize))
                .flatten(),
        }
    }

    /// One or two lines of text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "batch: {} runs ({} scenario{} x {} trial{}), {} completed, {} failed | mean checkpoint score {:.3} | mean success rate {:.3} | solved {:.3}",
            self.runs,
            self.scenarios,
            if self.scenarios == 1 { "" } else { "s" },
            self.trials,
            if self.trials == 1 { "" } else { "s" },
            self.completed,
            self.failed,
            self.checkpoint_score,
            self.success_rate,
            self.solved
        );
        if let Some(p) = self.pass_k {
            s.push_str(&format!(" | pass^{} {p:.3}", self.trials));
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str) -> Arc<LoadedScenario> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios")
            .join(format!("{name}.ron"));
        Arc::new(tbsim_scenario::load_file(&path).expect("bundled scenario loads"))
    }

    #[test]
    fn shards_partition_the_plan_exactly() {
        let (a, b, c) = (
            scenario("meeting-only"),
            scenario("busy-day"),
            scenario("kb-fix-medium"),
        );
        let whole = plan(&[a, b, c], 3, None, Path::new("o")).unwrap();
        for n in 1..=11 {
            let mut seen: Vec<PathBuf> = (0..n)
                .flat_map(|k| Shard::new(k, n).unwrap().select(whole.clone()))
                .map(|j| j.dir)
                .collect();
            seen.sort();
            let mut all: Vec<PathBuf> = whole.iter().map(|j| j.dir.clone()).collect();
            all.sort();
            assert_eq!(seen, all, "{n} shards cover every job exactly once");
        }
        // Round-robin: shard 1/4 of 9 jobs takes plan positions 0, 4 and 8.
        let first: Vec<usize> = Shard::parse("1/4")
            .unwrap()
            .select(whole)
            .iter()
            .map(|j| j.index)
            .collect();
        assert_eq!(first, vec![0, 4, 8]);
    }

    #[test]
    fn shards_parse_and_come_from_job_engines() {
        assert_eq!(Shard::parse("2/8").unwrap(), Shard { index: 1, count: 8 });
        assert_eq!(Shard::parse(" 8 / 8 ").unwrap().to_string(), "8/8");
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "-1/2", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_owned())
        };
        assert_eq!(Shard::from_env(env(&[])).unwrap(), None);
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2"), ("TBSIM_SHARD_COUNT", "5")]);
        assert_eq!(
            Shard::from_env(k8s).unwrap(),
            Some((Shard { index: 2, count: 5 }, "JOB_COMPLETION_INDEX"))
        );
        let err = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "2")])).unwrap_err();
        assert!(err.to_string().contains("TBSIM_SHARD_COUNT"), "{err}");
        // `--array=1-4`: task 3 is the third shard.
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::from_env(slurm).unwrap(),
            Some((Shard { index: 2, count: 4 }, "SLURM_ARRAY_TASK_ID"))
        );
        // `--array=0-6:2` has 4 tasks over a span of 7: refused, it would leave gaps.
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert!(Shard::from_env(stepped).is_err());
        let past = env(&[("JOB_COMPLETION_INDEX", "5"), ("TBSIM_SHARD_COUNT", "5")]);
        assert!(Shard::from_env(past).is_err());
    }

    #[test]
    fn layout_keeps_single_runs_where_they_were() {
        let (a, b) = (scenario("meeting-only"), scenario("busy-day"));
        let out = Path::new("o");
        let one = plan(std::slice::from_ref(&a), 1, None, out).unwrap();
        assert_eq!(one[0].dir, out);
        assert_eq!(one[0].recorded_trial(), None);
        let two = plan(&[a.clone(), b.clone()], 1, None, out).unwrap();
        assert_eq!(two[1].dir, out.join("busy-day"));
        let trials = plan(&[a.clone(), b], 3, Some(u64::MAX - 1), out).unwrap();
        let got: Vec<(usize, &str, u32, u64, PathBuf)> = trials
            .iter()
            .map(|j| (j.index, j.name(), j.trial, j.seed, j.dir.clone()))
            .collect();
        assert_eq!(got.len(), 6);
        assert_eq!(
            got[..3],
            [
                (
                    0,
                    "meeting-only",
                    0,
                    u64::MAX - 1,
                    out.join("meeting-only/trial-0")
                ),
                (
                    1,
                    "meeting-only",
                    1,
                    u64::MAX,
                    out.join("meeting-only/trial-1")
                ),
                // Seeds wrap rather than overflow.
                (2, "meeting-only", 2, 0, out.join("meeting-only/trial-2")),
            ]
        );
        assert_eq!(got[3].4, out.join("busy-day/trial-0"));
        assert_eq!(trials[4].recorded_trial(), Some(1));
        // Without a seed, each scenario's own is the base.
        let own = plan(std::slice::from_ref(&a), 2, None, out).unwrap();
        assert_eq!(own[1].seed, a.scenario.seed + 1);
    }

    #[test]
    fn plans_refuse_collisions_and_zero() {
        let a = scenario("meeting-only");
        assert!(matches!(
            plan(&[a.clone(), a.clone()], 1, None, Path::new("o")),
            Err(BatchError::DuplicateScenario(n)) if n == "meeting-only"
        ));
        assert!(matches!(
            plan(&[a], 0, None, Path::new("o")),
            Err(BatchError::Zero(_))
        ));
    }
}
