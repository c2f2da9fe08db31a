//! `tbsim fork`: a new run that takes over another run's first decisions.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use tbsim_core::segment::{Segment, confined_sibling};
use tbsim_engine::fork::ForkPoint;
use tbsim_engine::run::RunHooks;
use tbsim_engine::run_file::{RunFile, RunOptions};

use crate::agents::Models;
use crate::run::{exit_code, print_results};

/// What `tbsim fork` is given.
#[derive(clap::Args, Debug)]
pub(crate) struct ForkArgs {
    /// The run directory to fork (finished, or still being written).
    pub(crate) run_dir: PathBuf,
    /// Decisions taken over from it (0: from the start of its world).
    #[arg(long)]
    pub(crate) at_step: u64,
    /// The agent that goes on from there; the help lists every built-in agent and
    /// adversary from the registries.
    #[arg(long, help = crate::agent_names::agent_help("the parent's, when it is one of these"))]
    pub(crate) agent: Option<String>,
    /// Output directory (default: `<run dir>-fork<N>-<agent>` beside the parent).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Model configuration (default: $TBSIM_API_CONFIG, else ./api_config.json; never
    /// the one the parent's run.json names, since a run directory is shared data).
    #[arg(long)]
    pub(crate) api_config: Option<PathBuf>,
    /// Where model-played colleagues' replies are cached.
    #[arg(long, default_value = "runs/.npc-cache")]
    pub(crate) npc_cache: PathBuf,
    /// A directory of prompt templates replacing the built-in ones.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    /// Go on even where a model alias of yours points to another endpoint
    /// (`base_url`) than the one the parent recorded.
    #[arg(long)]
    pub(crate) accept_endpoint: bool,
    /// Maximum agent decisions per working day (default: the parent's, else 400).
    #[arg(long)]
    pub(crate) max_steps: Option<u64>,
    /// Print the result as JSON instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Agents a fork cannot be handed to from the command line: they act only through
/// a front end (`tbsim serve`'s console, the session API, MCP).
fn is_external(agent: &str) -> bool {
    crate::trust::is_session_agent(agent)
}

pub(crate) fn cmd_fork(args: ForkArgs) -> Result<ExitCode> {
    let parent = &args.run_dir;
    let point = ForkPoint::open(parent, args.at_step)
        .with_context(|| format!("forking `{}`", parent.display()))?;
    // The parent's options, when it has them, are the fork's defaults.
    let parent_opts = RunFile::read(parent).ok().map(|f| f.options);
    let parent_agent = point.config().agent;
    let agent = match (&args.agent, &parent_opts) {
        (Some(a), _) => a.clone(),
        (None, Some(o)) if !is_external(&o.agent) => o.agent.clone(),
        (None, _) if !is_external(&parent_agent) => parent_agent.clone(),
        (None, _) => bail!(
            "the parent's agent `{parent_agent}` acts only through a front end; give --agent (oracle, idle, solver, llm:<alias>, adversary:<name>) or fork from the console (`tbsim serve`)"
        ),
    };
    if is_external(&agent) {
        bail!(
            "agent `{agent}` acts only through a front end; fork to it from the console (`tbsim serve`, \"fork here\")"
        );
    }
    let mut recorded = parent_opts.unwrap_or_else(|| RunOptions::with_defaults(agent.clone(), 400));
    recorded.agent = agent.clone();
    // The model configuration, prompts and cache are this user's, never the parent's.
    let local = crate::trust::Local {
        api_config: args.api_config.as_deref(),
        npc_cache: &args.npc_cache,
        prompts: args.prompts.as_deref(),
        accept_endpoint: args.accept_endpoint,
    };
    let mut opts = crate::trust::localise(parent, recorded, &local)?;
    if let Some(m) = args.max_steps {
        opts.max_steps = m;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(parent, args.at_step, &agent));
    // Also a dangling link: creating the trajectory would write through it.
    if out.join("trajectory.jsonl").symlink_metadata().is_ok() {
        bail!(
            "`{}` already holds a run; give another --out",
            out.display()
        );
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating `{}`", out.display()))?;
    let loaded = point.scenario();
    let seed = point.config().seed.unwrap_or(loaded.scenario.seed);
    let mut models = Models::new(&opts)?;
    let mut runner = models.agent(&opts, loaded, seed)?;
    let npc = models.npc(&opts, seed)?;
    let mut sim = point.config();
    sim.agent = runner.name();
    RunFile {
        options: opts.clone(),
        sim: Some(sim),
        trial: 0,
        trials: 1,
    }
    .write(&out)?;
    let limits = opts.limits();
    let r = tbsim_engine::agent::block_on(point.run(
        runner.as_mut(),
        &limits,
        &out,
        npc,
        RunHooks::default(),
    ))
    .with_context(|| format!("running the fork in `{}`", out.display()))?;
    print_results(std::slice::from_ref(&r), args.json, &out)?;
    Ok(exit_code(&[r]))
}

fn default_out(parent: &Path, step: u64, agent: &str) -> PathBuf {
    let name = parent
        .file_name()
        .map_or_else(|| "run".to_owned(), |n| n.to_string_lossy().into_owned());
    // The agent may come from the parent's run.json, which is untrusted data.
    let label = format!("{name}-fork{step}");
    confined_sibling(
        parent,
        &Segment::compose(&[&label, &agent.replace(':', "-")]),
    )
}
