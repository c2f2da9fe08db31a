//! The `tbsim` command line.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use tbsim::agent::{Agent, AgentError, Idle, Oracle};
use tbsim::batch::{BatchError, BatchSpec, BatchSummary, Job, Progress};
use tbsim::result::{RunResult, render_table};
use tbsim::run::RunLimits;
use tbsim::scenario::{LoadedScenario, load_file};
use tbsim::sim::SimConfig;
use tbsim::world::FeedbackPolicy;

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
        /// A run directory (or a directory holding run directories at any depth).
        run_dir: PathBuf,
    },
    /// Tables and charts from run results: per model, by number of tasks, difficulty,
    /// family and day, pass^k, tool-call errors, tokens and cost.
    Report {
        /// Run directories (searched at any depth for result.json).
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
        /// Where to write report.md, report.json, the CSVs and the SVG charts
        /// (default: `<first run dir>/report`).
        #[arg(long)]
        out: Option<PathBuf>,
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
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Agent: `oracle` or `idle`.
    #[arg(long)]
    agent: Option<String>,
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
    /// Maximum agent decisions per scenario.
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

fn make_agent(name: &str, loaded: &LoadedScenario) -> Result<Box<dyn Agent>> {
    Ok(match name {
        "oracle" => Box::new(Oracle::new(&loaded.scenario)),
        "idle" => Box::new(Idle::default()),
        other => bail!(
            "unknown agent `{other}`; available: {}",
            tbsim::agent::BUILTIN.join(", ")
        ),
    })
}

fn cmd_run(args: RunArgs) -> Result<ExitCode> {
    let agent_name = match &args.agent {
        Some(a) => a.clone(),
        None => {
            eprintln!(
                "note: no --agent given and no model is configured; using the built-in `oracle` agent"
            );
            "oracle".into()
        }
    };
    if !tbsim::agent::BUILTIN.contains(&agent_name.as_str()) {
        bail!(
            "unknown agent `{agent_name}`; available: {}",
            tbsim::agent::BUILTIN.join(", ")
        );
    }
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
    let loaded: Vec<Arc<LoadedScenario>> = loaded.into_iter().map(Arc::new).collect();
    let out = args.out.clone().unwrap_or_else(|| {
        let label = if loaded.len() == 1 {
            loaded[0].scenario.name.clone()
        } else {
            "batch".into()
        };
        PathBuf::from("runs").join(format!("{label}-{agent_name}"))
    });
    let jobs = tbsim::batch::plan(&loaded, args.trials, args.seed, &out)?;
    let spec = BatchSpec {
        concurrency: args.concurrency as usize,
        limits: RunLimits {
            max_steps: args.max_steps,
        },
        config: SimConfig {
            seed: None,
            hints: args.hints,
            turn_cost_secs: args.turn_cost,
            agent: agent_name.clone(),
            feedback: args.feedback.into(),
            shuffle: None,
        },
    };
    let name = agent_name.clone();
    let agents = Arc::new(move |job: &Job| {
        make_agent(&name, &job.scenario).map_err(|e| AgentError(format!("{e:#}")))
    });
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
    let outcomes =
        tbsim::batch::run_jobs_blocking(jobs, &spec, agents, Arc::new(ProgressBar(bar.clone())))?;
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
    Ok(ExitCode::SUCCESS)
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

fn cmd_report(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    let runs = tbsim::report::load_runs(dirs)?;
    let report = tbsim::report::Report::new(&runs);
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

fn run_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    // At any depth, so a batch with trials (`<out>/<scenario>/trial-<t>/`) replays too.
    let dirs: Vec<PathBuf> = tbsim::report::find_named(&[dir.to_path_buf()], "trajectory.jsonl")
        .with_context(|| format!("cannot read `{}`", dir.display()))?
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    if dirs.is_empty() {
        bail!(
            "`{}` holds no trajectory.jsonl (nor do its subdirectories); pass a run directory written by `tbsim run`",
            dir.display()
        );
    }
    Ok(dirs)
}

fn cmd_replay(dir: &Path) -> Result<ExitCode> {
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for d in run_dirs(dir)? {
        let report =
            tbsim::replay::replay(&d).with_context(|| format!("replaying `{}`", d.display()))?;
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
    let cat = tbsim::tools::catalogue();
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&cat)?)?;
    } else {
        for t in &cat {
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
        (Some(p), _) => tbsim::generate::load_suite(p)?,
        (None, Some(p)) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read `{}`", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("`{}` is not JSON", p.display()))?;
            tbsim::generate::evoenv::import(&v, seed)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        (None, None) => bail!("give --suite or --from-evoenv"),
    };
    let written = tbsim::generate::write_suite(&s, out)?;
    let mut stdout = std::io::stdout().lock();
    for p in &written {
        writeln!(stdout, "wrote {}", p.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_metatasks(json: bool) -> Result<ExitCode> {
    let list = tbsim::generate::metatasks()?;
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
    let req = tbsim::generate::suite::SuiteRequest {
        name,
        scenarios,
        days,
        seed,
        families,
        mode: match mode {
            ModeArg::Stationary => tbsim::generate::suite::Mode::Stationary,
            ModeArg::Mutable => tbsim::generate::suite::Mode::Mutable,
        },
        tasks: (min_tasks, max_tasks),
        company_size,
    };
    let suite = tbsim::generate::suite::new_suite(&req).map_err(anyhow::Error::msg)?;
    // Prove the suite generates before writing it.
    tbsim::generate::generate_suite(&suite)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&out, tbsim::generate::suite::suite_to_ron(&suite))
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
        Command::Report { run_dirs, out } => cmd_report(&run_dirs, out),
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
