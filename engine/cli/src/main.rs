//! The `tbsim` command line.

mod agent_names;
mod agents;
mod args;
mod console;
mod content;
mod family;
mod family_draft;
mod family_serve;
mod fork;
mod generate;
mod mcp;
mod regrade;
mod replay;
mod report;
mod run;
mod serve;
mod tools;
mod trust;
mod validate;
mod validity;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::*;

// The engine allocates many small strings and sets per simulated step: mimalloc
// measured 0.72x the CPU of the system allocator on the validity gate
// (runs/bench/2026-11-27/gate-speed-s15.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Run(Box<RunArgs>),
    /// Serve the HTTP session API and the console (`/`): external agents drive
    /// worlds over JSON; people watch, guide, play and fork runs (see README).
    Serve(ServeArgs),
    /// Serve recorded runs in the console, read-only (scrub, fork; answers of
    /// finished runs on request).
    View(ViewArgs),
    /// Serve one world to an MCP client over stdio (see README, "MCP").
    Mcp(McpArgs),
    /// Start a new run from step N of another (recorded or live): its first N
    /// decisions are replayed, then another agent goes on.
    Fork(fork::ForkArgs),
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
    /// List the scenarios that can be given by name (bundled, and those of
    /// --scenarios DIR): name, suite, days, tasks, families.
    Scenarios {
        /// Print JSON (`{"scenarios": [...], "invalid": [...]}`).
        #[arg(long)]
        json: bool,
        /// Only the scenarios of this bundled suite (e.g. `traineebench-cl`).
        #[arg(long)]
        suite: Option<String>,
        /// A directory of scenario files listed before the bundled ones (its names
        /// win, as in `tbsim serve --scenarios`).
        #[arg(long)]
        scenarios: Option<PathBuf>,
    },
    /// Parse and check scenario files.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
    /// Validity checks: `validity scan` looks for answers a script can copy out of
    /// what an agent observes.
    Validity {
        #[command(subcommand)]
        command: validity::ValidityCommand,
    },
    /// Script families: `family check DIR...` (the validity gate) and
    /// `family new DIR` (a scaffold that passes it).
    Family {
        #[command(subcommand)]
        command: family::FamilyCommand,
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
pub(crate) enum SuiteCommand {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Run(args) => run::cmd_run(*args),
        Command::Serve(args) => serve::cmd_serve(args),
        Command::Mcp(args) => mcp::cmd_mcp(args),
        Command::View(args) => console::cmd_view(args),
        Command::Fork(args) => fork::cmd_fork(args),
        Command::Replay { run_dir } => replay::cmd_replay(&run_dir),
        Command::Regrade { run_dir, scenario } => {
            regrade::cmd_regrade(&run_dir, scenario.as_deref())
        }
        Command::Report {
            run_dirs,
            out,
            compare: true,
        } => report::cmd_compare(&run_dirs, out),
        Command::Report {
            run_dirs,
            out,
            compare: false,
        } => report::cmd_report(&run_dirs, out),
        Command::Validate { scenarios } => validate::cmd_validate(&scenarios),
        Command::Tools { json } => tools::cmd_tools(json),
        Command::Validity { command } => validity::cmd_validity(command),
        Command::Family { command } => family::cmd_family(command),
        Command::Scenarios {
            json,
            suite,
            scenarios,
        } => content::cmd_scenarios(json, suite.as_deref(), scenarios.as_deref()),
        Command::Gen {
            suite,
            from_evoenv,
            seed,
            out,
        } => generate::cmd_gen(suite.as_deref(), from_evoenv.as_deref(), seed, &out),
        Command::Metatasks { json } => generate::cmd_metatasks(json),
        Command::Suite { command } => generate::cmd_suite(command),
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
            // Errors quote scripts, models and scenarios: escaped for the terminal.
            eprintln!("error: {}", tbsim_core::term::escape(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}
