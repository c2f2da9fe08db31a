//! The `tbsim` command line.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tbsim_agents::Solver;
use tbsim_core::protocol::SimConfig;
use tbsim_core::protocol::{EndReason, FeedbackPolicy};
use tbsim_core::time::SimDuration;
use tbsim_engine::agent::{Agent, AgentError, Idle, Oracle};
use tbsim_engine::batch::{AgentFactory, BatchError, BatchSpec, BatchSummary, Job, Progress};
use tbsim_engine::npc::{NpcEngine, Scripted};
use tbsim_engine::result::{RunResult, render_table};
use tbsim_engine::run::RunLimits;
use tbsim_model::agent::{LlmAgent, Memory};
use tbsim_model::colleague::{LlmNpc, ReplyCache};
use tbsim_model::config::locate;
use tbsim_model::history::SummaryPolicy;
use tbsim_model::prompt::Templates;
use tbsim_model::{ApiConfig, HttpModel};
use tbsim_scenario::{LoadedScenario, load_file};

#[derive(Parser, Debug)]
#[command(
    name = "tbsim",
    version,
    about = "Deterministic workplace simulator for evaluating LLM agents (TraineeBench)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run an agent on scenarios and print a score table.
    Run(RunArgs),
    /// Re-drive a recorded run and check it reproduces exactly.
    Replay {
        /// A run directory (or a directory of run directories).
        run_dir: PathBuf,
    },
    /// Re-drive recorded runs against a fixed scenario (or the current checker) and
    /// say which checkpoints changed; writes `result.regraded.json` beside each
    /// `result.json`.
    Regrade {
        /// A run directory (or a directory of run directories).
        run_dir: PathBuf,
        /// The fixed scenario (default: each run's own `scenario.ron`, to regrade
        /// under the current checker).
        #[arg(long)]
        scenario: Option<PathBuf>,
    },
    /// Tables and charts from finished runs (Markdown, JSON, CSV, SVG).
    Report {
        /// Run directories (searched at any depth for result.json).
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
        /// Where to write report.md, report.json, the CSVs and the SVG charts
        /// (default: `<first run dir>/report`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compare groups instead: each directory is one group (one agent's batch),
        /// every later one is paired with the first by scenario, seed and trial
        /// (bootstrap intervals, permutation p-values, per-family differences, the
        /// minimum detectable difference, and the noise floor of groups with
        /// several trials). Writes compare.md, compare.json, CSVs and compare.svg.
        #[arg(long)]
        compare: bool,
    },
    /// Parse and check scenario files.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
    /// Show the agent's tool catalogue.
    Tools {
        /// Print JSON (name, description, JSON schema, cost).
        #[arg(long)]
        json: bool,
    },
    /// List every meta-task variant (family, variant, parameters, difficulty, domain).
    Metatasks {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write suites.
    Suite {
        #[command(subcommand)]
        command: SuiteCommand,
    },
    /// Generate scenario files from a suite (or from the reference's benchmark config).
    Gen {
        /// The suite file (RON).
        #[arg(
            long,
            required_unless_present = "from_evoenv",
            conflicts_with = "from_evoenv"
        )]
        suite: Option<PathBuf>,
        /// A reference (EvoEnv) benchmark config JSON to import instead of a suite.
        #[arg(long)]
        from_evoenv: Option<PathBuf>,
        /// Generation seed for an imported config.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
enum SuiteCommand {
    /// Draw a new suite of composite scenarios and write it as RON.
    New {
        /// Number of scenarios.
        #[arg(long)]
        scenarios: usize,
        /// Working days per scenario.
        #[arg(long, default_value_t = 1)]
        days: usize,
        /// Seed (also the suite's generation seed).
        #[arg(long)]
        seed: u64,
        /// Families to draw from (default: all), comma-separated keys.
        #[arg(long, value_delimiter = ',')]
        families: Vec<String>,
        /// Stationary: every day repeats the first day's families; mutable: each day draws anew.
        #[arg(long, value_enum, default_value_t = ModeArg::Stationary)]
        mode: ModeArg,
        /// Fewest tasks per day.
        #[arg(long, default_value_t = 2)]
        min_tasks: usize,
        /// Most tasks per day.
        #[arg(long, default_value_t = 6)]
        max_tasks: usize,
        /// Colleagues per scenario.
        #[arg(long, default_value_t = 40)]
        company_size: usize,
        /// Suite name (default: the output file's stem).
        #[arg(long)]
        name: Option<String>,
        /// Output suite file.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum ModeArg {
    Stationary,
    Mutable,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Scenario files.
    #[arg(required_unless_present = "resume")]
    scenarios: Vec<PathBuf>,
    /// Continue the interrupted run in this directory, or every unfinished run below it
    /// (a batch's output directory): runs that ended are kept, interrupted ones continue,
    /// ones that never started start. Options come from each run's `run.json`; only
    /// --api-config, --concurrency and --json may be given anew.
    #[arg(long, conflicts_with_all = [
        "scenarios", "out", "agent", "npc", "prompts", "memory", "npc_cache", "history_tokens",
        "token_cost", "token_budget", "time_budget", "seed", "hints", "max_steps", "turn_cost",
        "feedback", "trials", "shard",
    ])]
    resume: Option<PathBuf>,
    /// Agent: `oracle`, `idle`, `solver`, `llm:<alias>` or `adversary:<name>` (a content-blind attacker:
    /// read-everything, list-everything, message-everyone, keyword-broadcast, majority-answers,
    /// enumerate-candidates, book-by-conflicts, join-all-meetings, copy-drive, echo-objective,
    /// impersonate, parrot, ask-for-answer, combined). Default: the `default` alias if
    /// configured, else `oracle`.
    #[arg(long)]
    agent: Option<String>,
    /// Colleagues: `scripted` (rule-following) or `llm:<alias>`.
    #[arg(long, default_value = "scripted")]
    npc: String,
    /// Model configuration (default: $TBSIM_API_CONFIG, else ./api_config.json).
    #[arg(long)]
    api_config: Option<PathBuf>,
    /// Where model-played colleagues' replies are cached.
    #[arg(long, default_value = "runs/.npc-cache")]
    npc_cache: PathBuf,
    /// A directory of prompt templates replacing the built-in ones (`system.md`, `task.md`, ...).
    #[arg(long)]
    prompts: Option<PathBuf>,
    /// What a model-backed agent carries between days.
    #[arg(long, value_enum, default_value_t = MemoryArg::None)]
    memory: MemoryArg,
    /// Estimated tokens (characters / 4) above which the agent's history is summarised.
    #[arg(long, default_value_t = 60_000)]
    history_tokens: usize,
    /// Simulated seconds charged per 1000 output tokens of a model turn (on top of --turn-cost).
    #[arg(long)]
    token_cost: Option<u32>,
    /// End the run once the agent has used this many model tokens (input + output).
    #[arg(long)]
    token_budget: Option<u64>,
    /// End the run once this many simulated minutes have passed since its start.
    #[arg(long)]
    time_budget: Option<u64>,
    /// Master seed (default: each scenario's own).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (default: `runs/<scenario or batch>-<agent>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print results as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Hints given with each task (0-3).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    hints: u8,
    /// Maximum agent decisions per working day (a D-day scenario allows D times as many).
    #[arg(long, default_value_t = 400)]
    max_steps: u64,
    /// Simulated seconds charged per agent decision.
    #[arg(long)]
    turn_cost: Option<u32>,
    /// Mentor feedback delivered each morning on the previous days' finished tasks.
    #[arg(long, value_enum, default_value_t = Feedback::Detailed)]
    feedback: Feedback,
    /// Runs (independent worlds) in flight at once; results do not depend on it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// Independent runs per scenario; trial t uses seed base + t (base: --seed or the
    /// scenario's) and goes to `<out>/<scenario>/trial-<t>/`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    trials: u32,
    /// Run only share K of N of the (scenario x trial) runs (K from 1): N processes
    /// with K = 1..N together run the whole batch, each run in the directory an
    /// unsharded run gives it. Without it, a Kubernetes Indexed Job
    /// (`JOB_COMPLETION_INDEX` with `TBSIM_SHARD_COUNT`) or a Slurm array
    /// (`SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`) picks the share.
    #[arg(long)]
    shard: Option<String>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum MemoryArg {
    None,
    Notes,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum Feedback {
    None,
    Summary,
    Detailed,
}

impl From<Feedback> for FeedbackPolicy {
    fn from(f: Feedback) -> Self {
        match f {
            Feedback::None => FeedbackPolicy::None,
            Feedback::Summary => FeedbackPolicy::Summary,
            Feedback::Detailed => FeedbackPolicy::Detailed,
        }
    }
}

/// The options of a run, kept in its directory as `run.json` so `--resume` can
/// rebuild the same agent. Never holds a key: only the config file's path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RunOptions {
    agent: String,
    npc: String,
    api_config: Option<PathBuf>,
    npc_cache: PathBuf,
    prompts: Option<PathBuf>,
    memory: MemoryArg,
    history_tokens: usize,
    max_steps: u64,
    token_budget: Option<u64>,
    time_budget_minutes: Option<u64>,
}

/// `run.json`: the run's options, and what `--resume` needs to start it if it never
/// started (its world settings and trial). Files written before the world settings
/// were kept still read: the extra fields are then absent.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunFile {
    #[serde(flatten)]
    options: RunOptions,
    /// The world's settings, with this run's seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sim: Option<SimConfig>,
    /// Trial index (from 0) and the number of trials of the scenario in its batch.
    #[serde(default)]
    trial: u32,
    #[serde(default = "one")]
    trials: u32,
}

fn one() -> u32 {
    1
}

impl RunFile {
    fn read(dir: &Path) -> Result<RunFile> {
        let path = dir.join("run.json");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "cannot read `{}`; only runs written by `tbsim run` can be resumed",
                path.display()
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("`{}` is not a run description", path.display()))
    }

    /// The trial `result.json` records (as for a batch job).
    fn recorded_trial(&self) -> Option<u32> {
        tbsim_engine::batch::recorded_trial(self.trial, self.trials)
    }
}

/// The directories at or below `dir` (at any depth, so a batch with trials,
/// `<out>/<scenario>/trial-<t>/`, counts) that hold a file named `file`; an error
/// saying so when there are none.
fn dirs_holding(dir: &Path, file: &str) -> Result<Vec<PathBuf>> {
    let dirs: Vec<PathBuf> = tbsim_report::find_named(&[dir.to_path_buf()], file)
        .with_context(|| format!("cannot read `{}`", dir.display()))?
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    if dirs.is_empty() {
        bail!(
            "`{}` holds no {file} (nor do its subdirectories); pass a run directory written by `tbsim run`",
            dir.display()
        );
    }
    Ok(dirs)
}

impl RunOptions {
    fn limits(&self) -> RunLimits {
        RunLimits {
            max_steps: self.max_steps,
            token_budget: self.token_budget,
            time_budget: self.time_budget_minutes.map(SimDuration::minutes),
        }
    }
}

/// What model-backed parts of a run share: the runtime their requests run on,
/// the config, one HTTP client per model alias, and the templates.
struct Models {
    runtime: Option<tokio::runtime::Runtime>,
    config: Option<ApiConfig>,
    /// Built once per alias (milliseconds each); every run gets a reseeded copy.
    clients: std::collections::BTreeMap<String, HttpModel>,
    prompts: Arc<Templates>,
}

impl Models {
    fn new(opts: &RunOptions) -> Result<Models> {
        let prompts = Arc::new(Templates::load(opts.prompts.as_deref())?);
        Ok(Models {
            runtime: None,
            config: None,
            clients: std::collections::BTreeMap::new(),
            prompts,
        })
    }

    fn caller(&mut self, opts: &RunOptions, alias: &str, seed: u64) -> Result<Arc<HttpModel>> {
        if let Some(base) = self.clients.get(alias) {
            return Ok(Arc::new(base.reseeded(seed)));
        }
        if self.config.is_none() {
            let (path, _) = locate(opts.api_config.as_deref());
            self.config = Some(ApiConfig::load(&path)?);
        }
        let cfg = self.config.as_ref().expect("loaded").model(alias)?;
        if self.runtime.is_none() {
            self.runtime =
                Some(tbsim_model::client::runtime().context("cannot start the async runtime")?);
        }
        let handle = self.runtime.as_ref().expect("built").handle().clone();
        let base = HttpModel::new(cfg, handle, seed)?;
        self.clients.insert(alias.to_owned(), base.clone());
        Ok(Arc::new(base))
    }

    fn agent(
        &mut self,
        opts: &RunOptions,
        loaded: &LoadedScenario,
        seed: u64,
    ) -> Result<Box<dyn Agent>> {
        Ok(match opts.agent.as_str() {
            "oracle" => Box::new(Oracle::new(&loaded.scenario)),
            "idle" => Box::new(Idle::default()),
            "solver" => Box::new(Solver::new()),
            spec if spec.starts_with("adversary:") => {
                let name = &spec["adversary:".len()..];
                Box::new(tbsim_agents::adversary::by_name(name).with_context(|| {
                    let names: Vec<&str> = tbsim_agents::adversary::ADVERSARIES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect();
                    format!(
                        "unknown adversary `{name}`; available: {}",
                        names.join(", ")
                    )
                })?)
            }
            spec => match spec.strip_prefix("llm:") {
                Some(alias) if !alias.is_empty() => {
                    let caller = self.caller(opts, alias, seed)?;
                    let history = SummaryPolicy {
                        threshold: opts.history_tokens,
                        ..SummaryPolicy::default()
                    };
                    let memory = match opts.memory {
                        MemoryArg::None => Memory::None,
                        MemoryArg::Notes => Memory::Notes,
                    };
                    Box::new(LlmAgent::new(
                        spec,
                        caller,
                        self.prompts.clone(),
                        Box::new(history),
                        memory,
                    ))
                }
                _ => bail!(
                    "unknown agent `{spec}`; available: {}, llm:<alias>, adversary:<name>",
                    BUILTIN_AGENTS.join(", ")
                ),
            },
        })
    }

    fn npc(&mut self, opts: &RunOptions, seed: u64) -> Result<Box<dyn NpcEngine>> {
        Ok(match opts.npc.as_str() {
            "scripted" => Box::new(Scripted),
            spec => match spec.strip_prefix("llm:") {
                Some(alias) if !alias.is_empty() => {
                    let caller = self.caller(opts, alias, seed)?;
                    Box::new(LlmNpc::new(
                        caller,
                        self.prompts.clone(),
                        ReplyCache::new(&opts.npc_cache),
                    ))
                }
                _ => bail!("unknown colleagues engine `{spec}`; available: scripted, llm:<alias>"),
            },
        })
    }
}

/// The agent when `--agent` is absent: the `default` model alias if one is
/// configured, else the oracle. Says which on stderr.
fn default_agent(api_config: Option<&Path>) -> Result<String> {
    let (path, explicit) = locate(api_config);
    if explicit || path.is_file() {
        let cfg = ApiConfig::load(&path)?;
        if cfg.has("default") {
            eprintln!(
                "note: no --agent given; using the model alias `default` from {}",
                path.display()
            );
            return Ok("llm:default".into());
        }
    }
    eprintln!(
        "note: no --agent given and no model is configured; using the built-in `oracle` agent"
    );
    Ok("oracle".into())
}

fn print_results(results: &[RunResult], json: bool, out: &Path) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if json {
        let text = if results.len() == 1 {
            serde_json::to_string_pretty(&results[0])?
        } else {
            serde_json::to_string_pretty(&results)?
        };
        writeln!(stdout, "{text}")?;
    } else {
        write!(stdout, "{}", render_table(results))?;
        writeln!(
            stdout,
            "run written to {} (replay with `tbsim replay {}`)",
            out.display(),
            out.display()
        )?;
    }
    Ok(())
}

fn cmd_resume(dir: &Path, args: &RunArgs) -> Result<ExitCode> {
    if !(dir.join("run.json").is_file() && dir.join("trajectory.jsonl").is_file()) {
        return resume_batch(dir, args);
    }
    let file = RunFile::read(dir)?;
    let trial = file.recorded_trial();
    let mut opts = file.options;
    // Keys may live elsewhere now; everything else stays as the run began.
    if args.api_config.is_some() {
        opts.api_config = args.api_config.clone();
    }
    let loaded = load_file(&dir.join("scenario.ron"))?;
    // `--seed` cannot be given with `--resume`: the run's own seed is in its header.
    let seed = header_seed(dir).unwrap_or(loaded.scenario.seed);
    let mut models = Models::new(&opts)?;
    let mut agent = models.agent(&opts, &loaded, seed)?;
    let npc = models.npc(&opts, seed)?;
    let r = tbsim_engine::run::resume_dir(dir, agent.as_mut(), &opts.limits(), npc, trial)
        .with_context(|| format!("resuming `{}`", dir.display()))?;
    print_results(std::slice::from_ref(&r), args.json, dir)?;
    Ok(exit_code(&[r]))
}

/// Resumes every run at or below `dir` as one batch at `--concurrency`: ended runs
/// report their recorded results, interrupted ones continue from their
/// trajectories, and ones that never started start with the settings their
/// `run.json` recorded. All must come from one `tbsim run` invocation.
fn resume_batch(dir: &Path, args: &RunArgs) -> Result<ExitCode> {
    let dirs = dirs_holding(dir, "run.json")?;
    let mut jobs = Vec::with_capacity(dirs.len());
    let mut opts: Option<RunOptions> = None;
    let mut world: Option<SimConfig> = None;
    for d in dirs {
        let file = RunFile::read(&d)?;
        let mut options = file.options.clone();
        if args.api_config.is_some() {
            options.api_config = args.api_config.clone();
        }
        match &opts {
            None => opts = Some(options),
            Some(o) if *o == options => {}
            Some(_) => bail!(
                "`{}` was run with other options than the runs before it; resume the runs of \
                 each `tbsim run` separately",
                d.display()
            ),
        }
        let loaded = load_file(&d.join("scenario.ron"))
            .with_context(|| format!("cannot resume `{}`", d.display()))?;
        let started = d.join("trajectory.jsonl").is_file();
        let seed = match (&file.sim, started) {
            (Some(sim), _) => sim.seed,
            // Older run files: a started run's seed is in its trajectory header.
            (None, true) => header_seed(&d),
            (None, false) => bail!(
                "`{}` never started, and its run.json (from an older tbsim) does not record how \
                 to start it; start it again with `tbsim run`",
                d.display()
            ),
        }
        .unwrap_or(loaded.scenario.seed);
        if let Some(sim) = &file.sim {
            let settings = SimConfig {
                seed: None,
                ..sim.clone()
            };
            match &world {
                None => world = Some(settings),
                Some(w) if *w == settings => {}
                Some(_) => bail!(
                    "`{}` was run with other world settings than the runs before it; resume \
                     the runs of each `tbsim run` separately",
                    d.display()
                ),
            }
        }
        jobs.push(Job {
            index: jobs.len(),
            scenario: Arc::new(loaded),
            trial: file.trial,
            trials: file.trials,
            seed,
            dir: d,
            resume: true,
        });
    }
    let opts = opts.expect("dirs_holding returns at least one");
    let factory = Arc::new(Factory {
        opts: opts.clone(),
        models: Mutex::new(Models::new(&opts)?),
    });
    let spec = BatchSpec {
        concurrency: args.concurrency as usize,
        limits: opts.limits(),
        config: world.unwrap_or_default(),
    };
    run_batch(jobs, &spec, factory, args, dir)
}

/// The seed in a trajectory's header line.
fn header_seed(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("trajectory.jsonl")).ok()?;
    let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    header["seed"].as_u64()
}

/// 3 when a run ended by an infrastructure failure (it can be resumed), else 0.
fn exit_code(results: &[RunResult]) -> ExitCode {
    let infra: Vec<&RunResult> = results
        .iter()
        .filter(|r| r.end_reason == Some(EndReason::InfraError))
        .collect();
    if infra.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "error: {} run(s) ended by an infrastructure failure, not by the agent; continue with `tbsim run --resume <RUN_DIR>`",
        infra.len()
    );
    ExitCode::from(3)
}

fn cmd_run(args: RunArgs) -> Result<ExitCode> {
    if let Some(dir) = &args.resume {
        return cmd_resume(dir, &args);
    }
    let agent_name = match &args.agent {
        Some(a) => a.clone(),
        None => default_agent(args.api_config.as_deref())?,
    };
    let opts = RunOptions {
        agent: agent_name.clone(),
        npc: args.npc.clone(),
        api_config: args.api_config.clone(),
        npc_cache: args.npc_cache.clone(),
        prompts: args.prompts.clone(),
        memory: args.memory,
        history_tokens: args.history_tokens,
        max_steps: args.max_steps,
        token_budget: args.token_budget,
        time_budget_minutes: args.time_budget,
    };
    let factory = Arc::new(Factory {
        opts: opts.clone(),
        models: Mutex::new(Models::new(&opts)?),
    });
    // Load everything first, so a bad file fails before any run starts.
    let mut loaded = Vec::new();
    let mut bad = 0;
    for p in &args.scenarios {
        match load_file(p) {
            Ok(l) => loaded.push(l),
            Err(e) => {
                eprintln!("{e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        bail!("{bad} scenario file(s) are invalid; nothing was run");
    }
    // Bad agent or colleague settings fail here, before any world starts.
    if let Some(first) = loaded.first() {
        let mut models = factory.models.lock().expect("not poisoned");
        models.agent(&opts, first, first.scenario.seed)?;
        models.npc(&opts, first.scenario.seed)?;
    }
    let loaded: Vec<Arc<LoadedScenario>> = loaded.into_iter().map(Arc::new).collect();
    let out = args.out.clone().unwrap_or_else(|| {
        let label = if loaded.len() == 1 {
            loaded[0].scenario.name.clone()
        } else {
            "batch".into()
        };
        PathBuf::from("runs").join(format!("{label}-{}", agent_name.replace(':', "-")))
    });
    let jobs = tbsim_engine::batch::plan(&loaded, args.trials, args.seed, &out)?;
    let shard = match &args.shard {
        Some(s) => Some((tbsim_engine::batch::Shard::parse(s)?, "--shard")),
        None => tbsim_engine::batch::Shard::from_env(|k| std::env::var(k).ok())?,
    };
    let jobs = match shard {
        Some((shard, from)) => {
            let total = jobs.len();
            let mine = shard.select(jobs);
            eprintln!(
                "shard {shard} (from {from}): {} of the batch's {total} runs",
                mine.len()
            );
            mine
        }
        None => jobs,
    };
    let spec = BatchSpec {
        concurrency: args.concurrency as usize,
        limits: opts.limits(),
        config: SimConfig {
            seed: None,
            hints: args.hints,
            turn_cost_secs: args.turn_cost,
            token_cost_secs: args.token_cost,
            agent: agent_name.clone(),
            feedback: args.feedback.into(),
        },
    };
    // Each run directory records its options, world settings and scenario before
    // anything runs, so `--resume` can rebuild the agent, and start any run the
    // interruption kept from starting.
    for job in &jobs {
        std::fs::create_dir_all(&job.dir)
            .with_context(|| format!("cannot create `{}`", job.dir.display()))?;
        let file = RunFile {
            options: opts.clone(),
            sim: Some(SimConfig {
                seed: Some(job.seed),
                ..spec.config.clone()
            }),
            trial: job.trial,
            trials: job.trials,
        };
        let p = job.dir.join("run.json");
        std::fs::write(&p, serde_json::to_string_pretty(&file)? + "\n")
            .with_context(|| format!("cannot write `{}`", p.display()))?;
        let p = job.dir.join("scenario.ron");
        std::fs::write(&p, &job.scenario.source)
            .with_context(|| format!("cannot write `{}`", p.display()))?;
    }
    run_batch(jobs, &spec, factory, &args, &out)
}

/// Runs a planned batch with a progress bar, prints the results (and a summary when
/// there are several) and says how the process should exit.
fn run_batch(
    jobs: Vec<Job>,
    spec: &BatchSpec,
    factory: Arc<Factory>,
    args: &RunArgs,
    out: &Path,
) -> Result<ExitCode> {
    // The bar draws on stderr only for a person watching: never into a pipe or a log,
    // and not alongside machine-readable output.
    let bar = if args.json || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(jobs.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, eta {eta} {wide_msg}",
            )
            .expect("the progress template is valid"),
        );
        bar
    };
    let started = std::time::Instant::now();
    // A clone stays here: the model runtime inside must be dropped on this thread,
    // never from within the batch runtime.
    let outcomes = tbsim_engine::batch::run_jobs_blocking(
        jobs,
        spec,
        factory.clone(),
        Arc::new(ProgressBar(bar.clone())),
    )?;
    bar.finish_and_clear();
    let summary = BatchSummary::new(&outcomes);
    let mut results: Vec<RunResult> = Vec::new();
    let mut failures = Vec::new();
    for o in outcomes {
        match o.result {
            Ok(r) => results.push(r),
            Err(e) => failures.push(e),
        }
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let text = if results.len() == 1 && failures.is_empty() {
            serde_json::to_string_pretty(&results[0])?
        } else {
            serde_json::to_string_pretty(&results)?
        };
        writeln!(stdout, "{text}")?;
    } else {
        write!(stdout, "{}", render_table(&results))?;
        if summary.runs > 1 {
            write!(stdout, "{}", summary.render())?;
        }
        writeln!(
            stdout,
            "run written to {} (replay with `tbsim replay {}`; tables with `tbsim report {}`)",
            out.display(),
            out.display(),
            out.display()
        )?;
    }
    drop(stdout);
    if summary.runs > 1 {
        eprintln!(
            "{} runs in {:.1} s of wall time at concurrency {}",
            summary.runs,
            started.elapsed().as_secs_f64(),
            args.concurrency
        );
    }
    if !failures.is_empty() {
        for e in &failures {
            eprintln!("error: {e}");
        }
        bail!("{} of {} runs failed", failures.len(), summary.runs);
    }
    Ok(exit_code(&results))
}

/// Makes each job's agent and colleagues' engine from the run options; model
/// configuration and the request runtime are built once and shared.
struct Factory {
    opts: RunOptions,
    models: Mutex<Models>,
}

impl AgentFactory for Factory {
    fn make(&self, job: &Job) -> Result<Box<dyn Agent>, AgentError> {
        let mut models = self
            .models
            .lock()
            .map_err(|_| AgentError::Agent("model setup panicked".into()))?;
        models
            .agent(&self.opts, &job.scenario, job.seed)
            .map_err(|e| AgentError::Agent(format!("{e:#}")))
    }

    fn npc(&self, job: &Job) -> Result<Box<dyn NpcEngine>, AgentError> {
        let mut models = self
            .models
            .lock()
            .map_err(|_| AgentError::Agent("model setup panicked".into()))?;
        models
            .npc(&self.opts, job.seed)
            .map_err(|e| AgentError::Agent(format!("{e:#}")))
    }
}

/// The progress bar, fed by the batch runner's world threads.
struct ProgressBar(indicatif::ProgressBar);

impl Progress for ProgressBar {
    fn finished(&self, job: &Job, outcome: &Result<RunResult, BatchError>) {
        let label = if job.trials > 1 {
            format!("{} trial {}", job.name(), job.trial)
        } else {
            job.name().to_owned()
        };
        match outcome {
            Ok(r) => self
                .0
                .set_message(format!("{label}: score {:.3}", r.checkpoint_score)),
            Err(e) => self.0.println(format!("failed: {e}")),
        }
        self.0.inc(1);
    }
}

fn cmd_compare(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    if dirs.len() < 2 {
        bail!("--compare needs at least two run directories (the first is the baseline)");
    }
    let cmp = tbsim_report::compare::Comparison::load(dirs)?;
    let out = out.unwrap_or_else(|| dirs[0].join("report"));
    let written = cmp.write(&out)?;
    write!(std::io::stdout().lock(), "{}", cmp.markdown())?;
    eprintln!(
        "comparison of {} groups written to {} ({} files)",
        dirs.len(),
        out.display(),
        written.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_report(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    let runs = tbsim_report::load_runs(dirs)?;
    let report = tbsim_report::Report::new(&runs);
    let out = out.unwrap_or_else(|| {
        // A result.json given directly puts the report beside it.
        let first = &dirs[0];
        let base = if first.is_file() {
            first.parent().unwrap_or(Path::new("."))
        } else {
            first.as_path()
        };
        base.join("report")
    });
    let written = report.write(&out)?;
    write!(std::io::stdout().lock(), "{}", report.markdown())?;
    eprintln!(
        "report of {} run{} written to {} ({} files)",
        report.runs,
        if report.runs == 1 { "" } else { "s" },
        out.display(),
        written.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_regrade(dir: &Path, fixed: Option<&Path>) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let verdict = |v: Option<bool>| match v {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "absent",
    };
    for d in dirs_holding(dir, "trajectory.jsonl")? {
        let g = tbsim_engine::replay::regrade(&d, fixed)
            .with_context(|| format!("regrading `{}`", d.display()))?;
        let out = d.join("result.regraded.json");
        std::fs::write(&out, serde_json::to_string_pretty(&g.after)? + "\n")
            .with_context(|| format!("cannot write `{}`", out.display()))?;
        writeln!(
            stdout,
            "{}: checkpoint score {:.3} -> {:.3}, success rate {:.3} -> {:.3}, {} checkpoint{} changed",
            d.display(),
            g.before.checkpoint_score,
            g.after.checkpoint_score,
            g.before.success_rate,
            g.after.success_rate,
            g.changed.len(),
            if g.changed.len() == 1 { "" } else { "s" }
        )?;
        for c in &g.changed {
            writeln!(
                stdout,
                "  {}#{}: {} -> {}",
                c.task,
                c.checkpoint,
                verdict(c.before),
                verdict(c.after)
            )?;
        }
        match &g.agent_saw_differently {
            None => writeln!(
                stdout,
                "  the agent saw the same tool results: its decisions stand as made"
            )?,
            Some(div) => writeln!(
                stdout,
                "  the agent would have seen a different result from step {} on (trajectory line {}); later decisions answer the old world",
                div.step, div.line
            )?,
        }
        writeln!(stdout, "  written to {}", out.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_replay(dir: &Path) -> Result<ExitCode> {
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for d in dirs_holding(dir, "trajectory.jsonl")? {
        let report = tbsim_engine::replay::replay(&d)
            .with_context(|| format!("replaying `{}`", d.display()))?;
        match (&report.divergence, &report.recorded_digest) {
            (Some(div), _) => {
                failed = true;
                writeln!(
                    stdout,
                    "{}: DIVERGED at line {} (step {})",
                    d.display(),
                    div.line,
                    div.step
                )?;
                writeln!(stdout, "  expected: {}", div.expected)?;
                writeln!(stdout, "  got:      {}", div.got)?;
            }
            (None, Some(rec)) if rec != &report.digest => {
                failed = true;
                writeln!(
                    stdout,
                    "{}: trajectory reproduced, but result.json records digest {rec}, not {}",
                    d.display(),
                    report.digest
                )?;
            }
            _ => writeln!(
                stdout,
                "{}: identical ({} lines, digest {})",
                d.display(),
                report.lines,
                report.digest
            )?,
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_validate(files: &[PathBuf]) -> Result<ExitCode> {
    let mut bad = 0;
    let mut stdout = std::io::stdout().lock();
    for f in files {
        match load_file(f) {
            Ok(l) => writeln!(
                stdout,
                "ok: {} ({} tasks, {} people)",
                f.display(),
                l.scenario.tasks.len(),
                l.scenario.company.people.len()
            )?,
            Err(e) => {
                bad += 1;
                eprintln!("{e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} file(s) invalid", files.len());
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_tools(json: bool) -> Result<ExitCode> {
    let cat = tbsim_core::protocol::catalogue();
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&cat)?)?;
    } else {
        for t in cat {
            let params: Vec<String> = t.parameters["properties"]
                .as_object()
                .map(|m| {
                    let req: Vec<&str> = t.parameters["required"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str())
                        .collect();
                    m.keys()
                        .map(|k| {
                            if req.contains(&k.as_str()) {
                                k.clone()
                            } else {
                                format!("{k}?")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            writeln!(
                stdout,
                "{:<20} {:<9} {:>3} min  ({})  {}",
                t.name,
                t.family,
                t.cost_minutes,
                params.join(", "),
                t.description
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_gen(
    suite: Option<&Path>,
    from_evoenv: Option<&Path>,
    seed: u64,
    out: &Path,
) -> Result<ExitCode> {
    let s = match (suite, from_evoenv) {
        (Some(p), _) => tbsim_gen::load_suite(p)?,
        (None, Some(p)) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read `{}`", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("`{}` is not JSON", p.display()))?;
            tbsim_gen::evoenv::import(&v, seed)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        (None, None) => bail!("give --suite or --from-evoenv"),
    };
    let written = tbsim_gen::write_suite(&s, out)?;
    let mut stdout = std::io::stdout().lock();
    for p in &written {
        writeln!(stdout, "wrote {}", p.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_metatasks(json: bool) -> Result<ExitCode> {
    let list = tbsim_gen::metatasks()?;
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        stdout,
        "{:<22} {:<44} {:<22} {:<5}  params",
        "family", "variant", "domain", "diff"
    )?;
    for m in &list {
        let domain = serde_json::to_value(m.domain)?;
        let diff = serde_json::to_value(m.difficulty)?;
        writeln!(
            stdout,
            "{:<22} {:<44} {:<22} {:<5}  {}",
            m.family,
            m.variant,
            domain.as_str().unwrap_or(""),
            diff.as_str().unwrap_or(""),
            m.params
        )?;
    }
    let families: std::collections::BTreeSet<&str> = list.iter().map(|m| m.family).collect();
    writeln!(
        stdout,
        "{} variants in {} families",
        list.len(),
        families.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_suite(cmd: SuiteCommand) -> Result<ExitCode> {
    let SuiteCommand::New {
        scenarios,
        days,
        seed,
        families,
        mode,
        min_tasks,
        max_tasks,
        company_size,
        name,
        out,
    } = cmd;
    let name = name.unwrap_or_else(|| {
        out.file_stem()
            .map_or("suite".into(), |s| s.to_string_lossy().into_owned())
    });
    let req = tbsim_gen::suite::SuiteRequest {
        name,
        scenarios,
        days,
        seed,
        families,
        mode: match mode {
            ModeArg::Stationary => tbsim_gen::suite::Mode::Stationary,
            ModeArg::Mutable => tbsim_gen::suite::Mode::Mutable,
        },
        tasks: (min_tasks, max_tasks),
        company_size,
    };
    let suite = tbsim_gen::suite::new_suite(&req).map_err(anyhow::Error::msg)?;
    // Prove the suite generates before writing it.
    tbsim_gen::generate_suite(&suite)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&out, tbsim_gen::suite::suite_to_ron(&suite))
        .with_context(|| format!("cannot write `{}`", out.display()))?;
    writeln!(
        std::io::stdout().lock(),
        "wrote {} ({} scenarios x {} days); generate with `tbsim gen --suite {} --out <DIR>`",
        out.display(),
        scenarios,
        days,
        out.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Replay { run_dir } => cmd_replay(&run_dir),
        Command::Regrade { run_dir, scenario } => cmd_regrade(&run_dir, scenario.as_deref()),
        Command::Report {
            run_dirs,
            out,
            compare: true,
        } => cmd_compare(&run_dirs, out),
        Command::Report {
            run_dirs,
            out,
            compare: false,
        } => cmd_report(&run_dirs, out),
        Command::Validate { scenarios } => cmd_validate(&scenarios),
        Command::Tools { json } => cmd_tools(json),
        Command::Gen {
            suite,
            from_evoenv,
            seed,
            out,
        } => cmd_gen(suite.as_deref(), from_evoenv.as_deref(), seed, &out),
        Command::Metatasks { json } => cmd_metatasks(json),
        Command::Suite { command } => cmd_suite(command),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The built-in agents by name (besides `llm:<alias>` and `adversary:<name>`, see
/// [`tbsim_agents::adversary::ADVERSARIES`]).
const BUILTIN_AGENTS: &[&str] = &["oracle", "idle", "solver"];
