//! Argument types shared by the subcommands, and the options a run records.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use serde::{Deserialize, Serialize};
use tbsim_core::protocol::FeedbackPolicy;
pub(crate) use tbsim_engine::run_file::{MemoryMode, RunFile, RunOptions};

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub(crate) enum ModeArg {
    Stationary,
    Mutable,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// Scenario files, or bundled scenarios' names (`busy-day`; see `tbsim scenarios`).
    #[arg(required_unless_present = "resume")]
    pub(crate) scenarios: Vec<PathBuf>,
    /// Continue the interrupted run in this directory, or every unfinished run below it
    /// (a batch's output directory): runs that ended are kept, interrupted ones continue,
    /// ones that never started start. Options come from each run's `run.json`, except
    /// what a shared run directory must not choose: the model configuration, prompts and
    /// reply cache come from --api-config, --prompts and --npc-cache (or their defaults),
    /// never from `run.json`. --concurrency, --json and --accept-endpoint may be given too.
    #[arg(long, conflicts_with_all = [
        "scenarios", "out", "agent", "npc", "memory", "history_tokens",
        "token_cost", "token_budget", "time_budget", "seed", "hints", "max_steps", "turn_cost",
        "feedback", "trials", "shard", "tag",
    ])]
    pub(crate) resume: Option<PathBuf>,
    /// The agent; the help lists every built-in agent and adversary from the registries.
    #[arg(long, help = crate::agent_names::agent_help("the `default` alias if configured, else `oracle`"))]
    pub(crate) agent: Option<String>,
    /// Colleagues: `scripted` (rule-following) or `llm:<alias>`.
    #[arg(long, default_value = "scripted")]
    pub(crate) npc: String,
    /// Model configuration (default: $TBSIM_API_CONFIG, else ./api_config.json).
    #[arg(long)]
    pub(crate) api_config: Option<PathBuf>,
    /// Where model-played colleagues' replies are cached.
    #[arg(long, default_value = "runs/.npc-cache")]
    pub(crate) npc_cache: PathBuf,
    /// A directory of prompt templates replacing the built-in ones (`system.md`, `task.md`, ...).
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    /// With --resume: go on even where a model alias of yours points to another
    /// endpoint (`base_url`) than the one the run recorded.
    #[arg(long, requires = "resume")]
    pub(crate) accept_endpoint: bool,
    /// What a model-backed agent carries between days.
    #[arg(long, value_enum, default_value_t = MemoryArg::None)]
    pub(crate) memory: MemoryArg,
    /// Tokens above which the agent's history (with the tool catalogue) is summarised,
    /// estimated as characters / 4 and calibrated against the server's counts; the
    /// model's context window, when known, lowers it (see `context_tokens`).
    #[arg(long, default_value_t = 60_000)]
    pub(crate) history_tokens: usize,
    /// Simulated seconds charged per 1000 output tokens of a model turn (on top of --turn-cost).
    #[arg(long)]
    pub(crate) token_cost: Option<u32>,
    /// End the run once the agent has used this many model tokens (input + output).
    #[arg(long)]
    pub(crate) token_budget: Option<u64>,
    /// End the run once this many simulated minutes have passed since its start.
    #[arg(long)]
    pub(crate) time_budget: Option<u64>,
    /// Master seed (default: each scenario's own).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Output directory (default: `runs/<scenario or batch>-<agent>`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Where each run's end world is put when it ends, for the console (`tbsim
    /// view --cache`), so its first open paints without a replay. Default:
    /// `runs/.console-cache`, when `./runs` is a directory (a run written elsewhere
    /// from a folder without one leaves no cache behind). Never a run directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) view_cache: Option<PathBuf>,
    /// Put no end worlds in the console's cache (a run's first open replays it).
    #[arg(long, conflicts_with = "view_cache")]
    pub(crate) no_view_cache: bool,
    /// Print results as JSON instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// A label recorded in each run's `run.json`; `tbsim report` groups runs by agent
    /// and tag (1-64 characters of A-Z, a-z, 0-9, `-`, `_`, `.`).
    #[arg(long, value_parser = parse_tag)]
    pub(crate) tag: Option<String>,
    /// Hints given with each task (0-3).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub(crate) hints: u8,
    /// Maximum agent decisions per working day (a D-day scenario allows D times as many).
    #[arg(long, default_value_t = 400)]
    pub(crate) max_steps: u64,
    /// Simulated seconds charged per agent decision.
    #[arg(long)]
    pub(crate) turn_cost: Option<u32>,
    /// Mentor feedback delivered each morning on the previous days' finished tasks.
    #[arg(long, value_enum, default_value_t = Feedback::Detailed)]
    pub(crate) feedback: Feedback,
    /// Runs (independent worlds) in flight at once; results do not depend on it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) concurrency: u32,
    /// Independent runs per scenario; trial t uses seed base + t (base: --seed or the
    /// scenario's) and goes to `<out>/<scenario>/trial-<t>/`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) trials: u32,
    /// Run only share K of N of the (scenario x trial) runs (K from 1): N processes
    /// with K = 1..N together run the whole batch, each run in the directory an
    /// unsharded run gives it. Without it, a Kubernetes Indexed Job
    /// (`JOB_COMPLETION_INDEX` with `TBSIM_SHARD_COUNT`) or a Slurm array
    /// (`SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`) picks the share.
    #[arg(long)]
    pub(crate) shard: Option<String>,
    /// Serve the console for this batch while it runs, at ADDR (default
    /// 127.0.0.1:0, a free port; the URL is printed on stderr): watch every run,
    /// pause, step and guide it, fork it.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub(crate) ui: Option<std::net::SocketAddr>,
    /// With --ui: every run starts paused (step or resume it from the console).
    #[arg(long, requires = "ui")]
    pub(crate) ui_paused: bool,
    /// With --ui: keep serving the console after the batch ends, until Ctrl-C.
    #[arg(long, requires = "ui")]
    pub(crate) ui_keep: bool,
    /// With --ui: bearer token the console wants (needed to bind a non-loopback address).
    #[arg(long, requires = "ui")]
    pub(crate) ui_token: Option<String>,
    /// Write each run's trajectory compressed, as `trajectory.jsonl.zst` (zstd frames,
    /// written as the run goes; any zstd decoder reads it). replay, regrade and report
    /// read it as they read the plain file; the console asks for it decompressed;
    /// such a run cannot be resumed.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) compress: bool,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MemoryArg {
    None,
    Notes,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub(crate) enum Feedback {
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

impl From<MemoryArg> for MemoryMode {
    fn from(m: MemoryArg) -> Self {
        match m {
            MemoryArg::None => MemoryMode::None,
            MemoryArg::Notes => MemoryMode::Notes,
        }
    }
}

/// Reads a run directory's `run.json`, saying what can be resumed when it cannot.
pub(crate) fn read_run_file(dir: &Path) -> Result<RunFile> {
    RunFile::read(dir).with_context(|| {
        format!(
            "cannot read the run description in `{}`; only runs written by `tbsim run` can be resumed",
            dir.display()
        )
    })
}

/// The directories at or below `dir` (at any depth, so a batch with trials,
/// `<out>/<scenario>/trial-<t>/`, counts) that hold a file named `file`; an error
/// saying so when there are none.
pub(crate) fn dirs_holding(dir: &Path, file: &str) -> Result<Vec<PathBuf>> {
    use tbsim_engine::run_dir::{TRAJECTORY, TRAJECTORY_ZST};
    // A trajectory may be written compressed (`tbsim run --compress`).
    let names: &[&str] = if file == TRAJECTORY {
        &[TRAJECTORY, TRAJECTORY_ZST]
    } else {
        &[file]
    };
    let mut dirs = std::collections::BTreeSet::new();
    for name in names {
        dirs.extend(
            tbsim_report::find_named(&[dir.to_path_buf()], name)
                .with_context(|| format!("cannot read `{}`", dir.display()))?
                .into_iter()
                .filter_map(|p| p.parent().map(Path::to_path_buf)),
        );
    }
    let dirs: Vec<PathBuf> = dirs.into_iter().collect();
    if dirs.is_empty() {
        bail!(
            "`{}` holds no {file} (nor do its subdirectories); pass a run directory written by `tbsim run`",
            dir.display()
        );
    }
    Ok(dirs)
}

#[derive(clap::Args, Debug)]
pub(crate) struct ServeArgs {
    /// Address to listen on. A non-loopback address needs --token.
    #[arg(long, default_value = "127.0.0.1:8765")]
    pub(crate) bind: std::net::SocketAddr,
    /// A directory of scenario files clients may name, besides the bundled
    /// ones (its names win).
    #[arg(long)]
    pub(crate) scenarios: Option<PathBuf>,
    /// Script family folders to serve while writing them: each variant's instance
    /// (seed 0) is a scenario named `<key>-<variant>`, regenerated whenever the
    /// folder's `family.star` changes, so the next run started shows the edit.
    #[arg(long = "families", value_name = "DIR")]
    pub(crate) families: Vec<PathBuf>,
    /// Where each session writes its run directory (`<out>/<session id>/`).
    #[arg(long, default_value = "runs/serve")]
    pub(crate) out: PathBuf,
    /// Where each session's end world is put when its run ends, and the console reads, for the console (`tbsim
    /// view --cache`), so its first open paints without a replay. Default:
    /// `runs/.console-cache`, when `./runs` is a directory (a run written elsewhere
    /// from a folder without one leaves no cache behind). Never a run directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) view_cache: Option<PathBuf>,
    /// Put no end worlds in the console's cache (a session's first open replays its run).
    #[arg(long, conflicts_with = "view_cache")]
    pub(crate) no_view_cache: bool,
    /// Bearer token every request to the session API and MCP must carry
    /// (`Authorization: Bearer <token>`): the agents' token. Every local user can
    /// read a command line (`/proc/<pid>/cmdline`): prefer --token-file or
    /// $TBSIM_SERVE_TOKEN.
    #[arg(long, conflicts_with = "token_file")]
    pub(crate) token: Option<String>,
    /// Read the agents' token from this file (its first line; at most 4 KiB).
    /// Without --token or --token-file, $TBSIM_SERVE_TOKEN is the token when set.
    #[arg(long, value_name = "PATH")]
    pub(crate) token_file: Option<PathBuf>,
    /// The console's token (operators'; the page logs in at `/login?token=…`). With
    /// --token and without this, the console is off: it can start the oracle, so an
    /// agent holding the agents' token must not reach it. Visible on the command
    /// line, as --token is: prefer --console-token-file or
    /// $TBSIM_SERVE_CONSOLE_TOKEN.
    #[arg(long, conflicts_with = "console_token_file")]
    pub(crate) console_token: Option<String>,
    /// Read the console's token from this file (its first line; at most 4 KiB).
    #[arg(long, value_name = "PATH")]
    pub(crate) console_token_file: Option<PathBuf>,
    /// Stop (closing and writing every open session) when standard input reaches its
    /// end: a program that starts the server with a pipe on its stdin stops it by
    /// closing the pipe, and also by dying in any way (a crash, `kill -9`), so no
    /// server outlives it. The Python package starts its servers so.
    #[arg(long)]
    pub(crate) exit_with_parent: bool,
    /// Threads serving connections (default: one per core). Each session's world
    /// runs on a thread of its own whatever this is; one is enough for a single
    /// local client and saves the hand-offs between threads a step costs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub(crate) workers: Option<u64>,
    /// A directory the server owns and removes, with everything in it, when it
    /// exits (the temporary folder a wrapper made for its runs and log).
    #[arg(long, value_name = "DIR", hide = true)]
    pub(crate) remove_on_exit: Option<PathBuf>,
    /// Most sessions held at once. A session whose run is over gives its slot up
    /// when a new one needs it (its final state stays readable).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_sessions: u64,
    /// Seconds after which an untouched session is closed (its run ends as
    /// abandoned, truncated, and its directory is written).
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) idle_timeout: u64,
    /// Seconds after which a session whose agent has taken no step yet (an MCP
    /// client that initialised and went away) gives its slot to a new one when
    /// --max-sessions is reached.
    #[arg(long, default_value = "60", value_parser = parse_secs, value_name = "SECS")]
    pub(crate) unused_timeout: std::time::Duration,
    /// How long a session that ended and left (deleted, expired, its MCP client
    /// gone) stays readable from memory at `GET /v1/sessions/{id}`, with its final
    /// score and per-task results; later it is read back from its directory under
    /// --out. A number of seconds or with a unit: `90s`, `30m`, `1h`, `0`.
    #[arg(long, default_value = "1h", value_parser = parse_duration, value_name = "DURATION")]
    pub(crate) keep_finished: std::time::Duration,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub(crate) max_body: usize,
    /// Model configuration for console runs handed to `llm:<alias>` (default:
    /// $TBSIM_API_CONFIG, else ./api_config.json).
    #[arg(long)]
    pub(crate) api_config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
}

/// A duration: whole seconds, or a whole number with `s`, `m`, `h` or `d`; at most
/// 30 days.
fn parse_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "`{s}`: give seconds, or a number with s, m, h or d (`30m`)"
            ));
        }
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}`: give seconds, or a number with s, m, h or d (`30m`)"))?;
    let secs = n
        .checked_mul(scale)
        .filter(|v| *v <= 30 * 86_400)
        .ok_or_else(|| format!("`{s}`: at most 30 days"))?;
    Ok(std::time::Duration::from_secs(secs))
}

/// A duration in seconds (fractions allowed), more than 0.
fn parse_secs(s: &str) -> std::result::Result<std::time::Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(v > 0.0 && v <= 86_400.0) {
        return Err(format!("`{s}`: give 0 < seconds <= 86400"));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

/// The connection limits of a server (see docs/security.md).
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct ConnArgs {
    /// A host name requests may name besides localhost, loopback addresses and the
    /// address the client connected to (repeatable): this machine's DNS name, a
    /// reverse proxy's. Any other `Host` is refused (DNS rebinding).
    #[arg(long = "allow-host", value_name = "NAME")]
    pub(crate) allow_host: Vec<String>,
    /// Seconds a request's head may take to arrive (also how long a kept-alive
    /// connection may sit idle).
    #[arg(long, default_value = "10", value_parser = parse_secs, value_name = "SECS")]
    pub(crate) header_timeout: std::time::Duration,
    /// Seconds a request's body may take to arrive.
    #[arg(long, default_value = "60", value_parser = parse_secs, value_name = "SECS")]
    pub(crate) body_timeout: std::time::Duration,
    /// Connections served at once (lowered to fit the open-files limit); more are
    /// answered 503 and closed.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_connections: u64,
    /// Event streams (the console's live views, MCP's) open at once, in all.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_streams: u64,
    /// Event streams open at once from one client address.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_streams_per_client: u64,
}

impl ConnArgs {
    /// The limits, the connection cap fitted under the open-files limit `fds`.
    pub(crate) fn limits(&self, fds: Option<u64>) -> tbsim_serve::conn::Limits {
        let n = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        tbsim_serve::conn::Limits {
            header_timeout: self.header_timeout,
            body_timeout: self.body_timeout,
            max_connections: tbsim_serve::conn::connection_cap(n(self.max_connections), fds),
            max_streams: n(self.max_streams),
            max_streams_per_client: n(self.max_streams_per_client),
        }
    }
}

#[derive(clap::Args, Debug)]
pub(crate) struct ViewArgs {
    /// Run directories (or directories holding runs, searched at any depth).
    #[arg(required = true)]
    pub(crate) run_dirs: Vec<PathBuf>,
    /// Address to listen on (port 0: a free one; the URL is printed). A
    /// non-loopback address needs --token.
    #[arg(long, default_value = "127.0.0.1:8766")]
    pub(crate) bind: std::net::SocketAddr,
    /// Where forks started from the console write their runs (`<out>/<id>/`).
    #[arg(long, default_value = "runs/view-forks")]
    pub(crate) out: PathBuf,
    /// Bearer token every request must carry (the page logs in at `/login?token=…`).
    #[arg(long)]
    pub(crate) token: Option<String>,
    /// Model configuration for forks handed to `llm:<alias>` (default:
    /// $TBSIM_API_CONFIG, else ./api_config.json).
    #[arg(long)]
    pub(crate) api_config: Option<PathBuf>,
    /// Write a static site of the runs into DIR (new or empty) and exit, serving
    /// nothing: open DIR/index.html from disk or put DIR on any static host.
    #[arg(long, value_name = "DIR")]
    pub(crate) export: Option<PathBuf>,
    /// Where the console keeps finished runs' end worlds between starts, so a long
    /// run opened again paints without a replay (checked against one in the
    /// background). The run directories are never written.
    #[arg(long, value_name = "DIR", default_value = "runs/.console-cache")]
    pub(crate) cache: PathBuf,
    /// Keep no end worlds between starts (every run is replayed when opened).
    #[arg(long, conflicts_with = "cache")]
    pub(crate) no_cache: bool,
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct McpArgs {
    /// The scenario file, or a bundled scenario's name (`busy-day`).
    pub(crate) scenario: PathBuf,
    /// Master seed (default: the scenario's own).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// The run directory (default: `runs/<scenario>-mcp-<client>`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// The agent's name, recorded as `mcp:<NAME>` (default: the MCP client's name),
    /// so `tbsim report` tells models apart.
    #[arg(long, value_name = "NAME")]
    pub(crate) agent_name: Option<String>,
    /// A label recorded in the run's `run.json`; `tbsim report` groups runs by agent
    /// and tag (1-64 characters of A-Z, a-z, 0-9, `-`, `_`, `.`).
    #[arg(long, value_parser = parse_tag)]
    pub(crate) tag: Option<String>,
    /// Hints given with each task (0-3).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub(crate) hints: u8,
    /// Mentor feedback delivered each morning on the previous days' finished tasks.
    #[arg(long, value_enum, default_value_t = Feedback::Detailed)]
    pub(crate) feedback: Feedback,
    /// Maximum agent decisions per working day (a D-day scenario allows D times as many).
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_steps: u64,
}

/// `--tag`: checked as every front end checks a run's tag.
fn parse_tag(s: &str) -> Result<String, String> {
    tbsim_engine::run_file::check_tag(s).map_err(|e| e.to_string())?;
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units() {
        let d = |s| parse_duration(s).map(|d| d.as_secs());
        assert_eq!(d("0"), Ok(0));
        assert_eq!(d("90"), Ok(90));
        assert_eq!(d("90s"), Ok(90));
        assert_eq!(d("30m"), Ok(1800));
        assert_eq!(d("1h"), Ok(3600));
        assert_eq!(d("2d"), Ok(172_800));
        for bad in ["", "h", "1x", "-1", "1.5h", "31d", "99999999999999999999d"] {
            assert!(d(bad).is_err(), "{bad}");
        }
    }
}
