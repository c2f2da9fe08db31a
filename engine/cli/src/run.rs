//! `tbsim run`: one agent on scenarios, batches, trials, shards and resuming.

use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use std::sync::{Arc, Mutex};

use tbsim_core::protocol::EndReason;
use tbsim_core::protocol::SimConfig;
use tbsim_core::segment::{Segment, confined_join};
use tbsim_engine::agent::{Agent, AgentError};
use tbsim_engine::batch::{AgentFactory, BatchError, BatchSpec, BatchSummary, Job, Progress};
use tbsim_engine::npc::NpcEngine;
use tbsim_engine::result::{RunResult, render_table};
use tbsim_model::ApiConfig;
use tbsim_model::config::locate;
use tbsim_scenario::{LoadedScenario, load_file};

use crate::agents::Models;
use crate::args::*;

/// The agent when `--agent` is absent: the `default` model alias if one is
/// configured, else the oracle. Says which on stderr.
pub(crate) fn default_agent(api_config: Option<&Path>) -> Result<String> {
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

pub(crate) fn print_results(results: &[RunResult], json: bool, out: &Path) -> Result<()> {
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

pub(crate) fn cmd_resume(dir: &Path, args: &RunArgs) -> Result<ExitCode> {
    // `symlink_metadata`: a FIFO or a link counts as there, and is refused on reading.
    let present = |n: &str| dir.join(n).symlink_metadata().is_ok_and(|m| !m.is_dir());
    if !(present("run.json") && present("trajectory.jsonl")) {
        return resume_batch(dir, args);
    }
    let file = read_run_file(dir)?;
    let trial = file.recorded_trial();
    refuse_session_run(dir, &file.options)?;
    let opts = crate::trust::localise(dir, file.options, &local(args))?;
    let loaded = tbsim_engine::run_dir::load_scenario(&dir.join("scenario.ron"))?;
    // `--seed` cannot be given with `--resume`: the run's own seed is in its header.
    let seed = header_seed(dir).unwrap_or(loaded.scenario.seed);
    let mut models = Models::new(&opts)?;
    let mut agent = models.agent(&opts, &loaded, seed)?;
    let npc = models.npc(&opts, seed)?;
    let r = tbsim_engine::run::resume_dir(dir, agent.as_mut(), &opts.limits(), npc, trial)
        .with_context(|| format!("resuming `{}`", dir.display()))?;
    if let Some(cache) = view_cache(args) {
        crate::console::prime_view(&cache, dir);
    }
    print_results(std::slice::from_ref(&r), args.json, dir)?;
    Ok(exit_code(&[r]))
}

/// Resumes every run at or below `dir` as one batch at `--concurrency`: ended runs
/// report their recorded results, interrupted ones continue from their
/// trajectories, and ones that never started start with the settings their
/// `run.json` recorded. All must come from one `tbsim run` invocation.
pub(crate) fn resume_batch(dir: &Path, args: &RunArgs) -> Result<ExitCode> {
    let dirs = dirs_holding(dir, "run.json")?;
    let mut jobs = Vec::with_capacity(dirs.len());
    let mut opts: Option<RunOptions> = None;
    let mut world: Option<SimConfig> = None;
    for d in dirs {
        let file = read_run_file(&d)?;
        refuse_session_run(&d, &file.options)?;
        let options = crate::trust::localise(&d, file.options.clone(), &local(args))?;
        match &opts {
            None => opts = Some(options),
            Some(o) if *o == options => {}
            Some(_) => bail!(
                "`{}` was run with other options than the runs before it; resume the runs of \
                 each `tbsim run` separately",
                d.display()
            ),
        }
        let loaded = tbsim_engine::run_dir::load_scenario(&d.join("scenario.ron"))
            .with_context(|| format!("cannot resume `{}`", d.display()))?;
        let started = d.join("trajectory.jsonl").symlink_metadata().is_ok();
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
        // A compressed run is not resumable, so a resumed one is written plain.
        compress: false,
    };
    run_batch(jobs, &spec, factory, args, dir)
}

/// The console's view cache finished runs are put in (see
/// [`crate::console::run_view_cache`]).
fn view_cache(args: &RunArgs) -> Option<Arc<tbsim_serve::console::view_cache::ViewCache>> {
    crate::console::run_view_cache(args.view_cache.as_deref(), args.no_view_cache)
}

/// What resuming takes from the command line rather than from `run.json`.
fn local(args: &RunArgs) -> crate::trust::Local<'_> {
    crate::trust::Local {
        api_config: args.api_config.as_deref(),
        npc_cache: &args.npc_cache,
        prompts: args.prompts.as_deref(),
        accept_endpoint: args.accept_endpoint,
    }
}

/// Runs driven by a client (`http:`, `mcp:`, `human:`) cannot go on without it.
fn refuse_session_run(dir: &Path, opts: &RunOptions) -> Result<()> {
    if crate::trust::is_session_agent(&opts.agent) {
        bail!(
            "`{}` is a session run of agent `{}`: it goes on only when its client comes back, \
             which `tbsim run --resume` cannot do. Serve it (`tbsim serve`) and let the client \
             reattach to it, or fork it to a built-in agent (`tbsim fork {} --at-step N --agent oracle`)",
            dir.display(),
            opts.agent,
            dir.display()
        );
    }
    Ok(())
}

/// The seed in a trajectory's header line.
pub(crate) fn header_seed(dir: &Path) -> Option<u64> {
    let text = tbsim_engine::run_dir::read_trajectory(&dir.join("trajectory.jsonl")).ok()?;
    let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    header["seed"].as_u64()
}

/// 3 when a run ended by an infrastructure failure (it can be resumed), else 0.
pub(crate) fn exit_code(results: &[RunResult]) -> ExitCode {
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

pub(crate) fn cmd_run(args: RunArgs) -> Result<ExitCode> {
    if let Some(dir) = &args.resume {
        return cmd_resume(dir, &args);
    }
    let agent_name = match &args.agent {
        Some(a) => a.clone(),
        None => default_agent(args.api_config.as_deref())?,
    };
    let mut opts = RunOptions {
        agent: agent_name.clone(),
        npc: args.npc.clone(),
        api_config: args.api_config.clone(),
        npc_cache: args.npc_cache.clone(),
        prompts: args.prompts.clone(),
        memory: args.memory.into(),
        history_tokens: args.history_tokens,
        max_steps: args.max_steps,
        token_budget: args.token_budget,
        time_budget_minutes: args.time_budget,
        endpoints: Default::default(),
        tag: args.tag.clone(),
    };
    // Recorded so a resume can tell when an alias has since moved to another endpoint.
    opts.endpoints = crate::trust::endpoints(&opts)?;
    let factory = Arc::new(Factory {
        opts: opts.clone(),
        models: Mutex::new(Models::new(&opts)?),
    });
    // Load everything first, so a bad file fails before any run starts.
    let mut loaded = Vec::new();
    let mut bad = 0;
    for arg in &args.scenarios {
        let p = match crate::content::scenario_path(arg) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e:#}");
                bad += 1;
                continue;
            }
        };
        match load_file(&p) {
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
        let agent = agent_name.replace(':', "-");
        confined_join(Path::new("runs"), &Segment::compose(&[&label, &agent]))
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
        compress: args.compress,
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
        file.write(&job.dir)?;
        let p = job.dir.join("scenario.ron");
        std::fs::write(&p, &job.scenario.source)
            .with_context(|| format!("cannot write `{}`", p.display()))?;
    }
    run_batch(jobs, &spec, factory, &args, &out)
}

/// Runs a planned batch with a progress bar, prints the results (and a summary when
/// there are several) and says how the process should exit.
pub(crate) fn run_batch(
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
    // Opened after the run directories are made: the default needs `./runs`.
    let view_cache = view_cache(args);
    let ui = match args.ui {
        Some(bind) => Some(Arc::new(crate::console::BatchUi::start(
            &jobs,
            &spec.config.agent,
            spec.config.hints,
            out,
            crate::console::UiOptions {
                bind,
                paused: args.ui_paused,
                keep: args.ui_keep,
                token: args.ui_token.clone(),
                api_config: args.api_config.clone(),
                tag: args.tag.clone(),
                view_cache: view_cache.clone(),
            },
        )?)),
        None => None,
    };
    let started = std::time::Instant::now();
    // A clone stays here: the model runtime inside must be dropped on this thread,
    // never from within the batch runtime.
    let outcomes = tbsim_engine::batch::run_jobs_blocking(
        jobs,
        spec,
        factory.clone(),
        Arc::new(ProgressBar {
            bar: bar.clone(),
            ui: ui.clone(),
            view_cache,
        }),
    );
    bar.finish_and_clear();
    let outcomes = match outcomes {
        Ok(o) => o,
        Err(e) => {
            if let Some(ui) = &ui {
                ui.finish(false)?;
            }
            return Err(e.into());
        }
    };
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
        // Only when every run was written: a failed one (a full disk) is not.
        if failures.is_empty() {
            writeln!(
                stdout,
                "run written to {} (replay with `tbsim replay {}`; tables with `tbsim report {}`)",
                out.display(),
                out.display(),
                out.display()
            )?;
        }
    }
    drop(stdout);
    if summary.runs > 1 {
        eprintln!(
            "{} runs in {:.2} s of wall time at concurrency {}",
            summary.runs,
            started.elapsed().as_secs_f64(),
            args.concurrency
        );
    }
    if let Some(ui) = &ui {
        ui.finish(true)?;
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
pub(crate) struct Factory {
    pub(crate) opts: RunOptions,
    pub(crate) models: Mutex<Models>,
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

/// The progress bar, fed by the batch runner's world threads; with `--ui`, also
/// hands each job its console control.
pub(crate) struct ProgressBar {
    pub(crate) bar: indicatif::ProgressBar,
    pub(crate) ui: Option<Arc<crate::console::BatchUi>>,
    /// Where each finished run's end world is put for the console.
    pub(crate) view_cache: Option<Arc<tbsim_serve::console::view_cache::ViewCache>>,
}

impl Progress for ProgressBar {
    fn control(&self, job: &Job) -> Option<Arc<tbsim_engine::live::Control>> {
        self.ui.as_ref().and_then(|ui| ui.control(job))
    }

    fn finished(&self, job: &Job, outcome: &Result<RunResult, BatchError>) {
        // On this run's world thread, before the next run starts: a batch of N
        // runs pays N replays, in parallel as the runs were.
        if let (Ok(_), Some(cache)) = (outcome, &self.view_cache) {
            crate::console::prime_view(cache, &job.dir);
        }
        let label = if job.trials > 1 {
            format!("{} trial {}", job.name(), job.trial)
        } else {
            job.name().to_owned()
        };
        match outcome {
            Ok(r) => self
                .bar
                .set_message(format!("{label}: score {:.3}", r.checkpoint_score)),
            Err(e) => self.bar.println(format!("failed: {e}")),
        }
        self.bar.inc(1);
    }
}
