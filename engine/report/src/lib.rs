//! `tbsim report`: the paper's tables from run directories.
//!
//! The report reads every `result.json` under the directories it is given (at any
//! depth, so a batch with trials works as well as a single run) and aggregates them
//! per model, the agent name recorded in each result (with the run's tag from its
//! `run.json`, when it has one: `mcp:gpt-5 [prompt-v2]`):
//!
//! * **by model**: checkpoint score, success rate, share of runs solved, average steps
//!   and tool calls;
//! * **by number of tasks** in one working day (a multi-day run counts once per day,
//!   as the paper's Table 3 stratifies), **by difficulty** and **by family** (task-level:
//!   mean task score and share of tasks solved), and **by day** for multi-day runs
//!   (day 1, day 2, ... and the gain over the previous day);
//! * **pass^k** across trials (see [`pass_hat_k`]);
//! * **tool-call errors** by kind, **end reasons**, **tokens and cost**, and the
//!   **model calls**: empty turns, replies cut off at the reply limit, and each
//!   call's wall time, attempts and timeouts (from `model_calls.jsonl`, which
//!   `tbsim run` writes beside the result, outside what replay compares);
//! * **infrastructure failures**, listed apart.
//!
//! ## Definitions
//!
//! * A run's *checkpoint score* is its mean task score and its *success rate* the share
//!   of its tasks fully solved (as in `result.json`); a model's are the means over its
//!   runs, every run weighing the same.
//! * A run is *solved* when its success rate is 1: every checkpoint of every task
//!   passed ([`is_solved`]). This is the per-trial success used by pass^k.
//! * Multi-day tables use only runs of two days or more, so that day 1 and day 2
//!   compare the same runs.
//! * A run that ended by an infrastructure failure (`end_reason` `infra_error`: a
//!   model API that stayed down) says nothing about the agent: it is left out of
//!   every score (the model, strata, day, guidance and pass^k tables), counted in
//!   the *infra failures* column of the model table and listed in its own table.
//!   Its tokens, errors and end reason still count (they were spent). A run that
//!   ended because the model's context window was full (`context_exceeded`) is
//!   the agent's failure and is scored.
//!
//! `result.json` is read leniently: fields the report does not use are ignored and
//! optional ones default, so results from older or newer versions still aggregate.
//! Token counts and cost are read from the optional `model` object `tbsim run`
//! writes (`input_tokens`, `output_tokens`, `cost`, `calls`, `cut_off`), and count
//! as zero when absent (agents that use no model).
//!
//! Output is deterministic: models, strata and kinds are sorted, numbers are formatted
//! with fixed precision, and no paths or times appear in the tables.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod compare;
mod render;
mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use render::{Cell, Table};
pub use tbsim_engine::result::{is_solved, pass_hat_k};

/// Failure to read runs or write a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be read or written.
    #[error("`{path}`: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A `result.json` is not a result.
    #[error("`{path}` is not a tbsim result: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// No `result.json` under the given directories.
    #[error("no result.json under {}; pass run directories written by `tbsim run`", .0.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", "))]
    NoResults(Vec<PathBuf>),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One run as the report reads it from `result.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RunRecord {
    /// Scenario name.
    pub scenario: String,
    /// Agent (model) name.
    pub agent: String,
    /// Master seed.
    #[serde(default)]
    pub seed: u64,
    /// Trial index, for batches with several trials.
    #[serde(default)]
    pub trial: Option<u32>,
    /// Mean task score.
    pub checkpoint_score: f64,
    /// Share of tasks solved.
    pub success_rate: f64,
    /// Agent decisions.
    #[serde(default)]
    pub steps: u64,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: u64,
    /// Tool errors by kind.
    #[serde(default)]
    pub errors: BTreeMap<String, u64>,
    /// Why the run ended (`None` if it never did).
    #[serde(default)]
    pub end_reason: Option<String>,
    /// Per working day.
    #[serde(default)]
    pub days: Vec<DayRecord>,
    /// Score change of each day over the previous one.
    #[serde(default)]
    pub day_gain: Vec<f64>,
    /// Per task.
    #[serde(default)]
    pub tasks: Vec<TaskRecord>,
    /// The agent's model calls, tokens and cost, when a model was used.
    #[serde(default)]
    pub model: Option<ModelRecord>,
    /// Decisions without a tool call.
    #[serde(default)]
    pub empty_turns: u64,
    /// What failed, for a run that ended by an infrastructure failure.
    #[serde(default)]
    pub infra_error: Option<String>,
    /// Per-call wall-clock facts, from `model_calls.jsonl` beside the result.
    #[serde(skip)]
    pub calls: Vec<CallRecord>,
    /// Hint tier given up front with each task (the run's guidance level).
    #[serde(default)]
    pub hints: u8,
    /// Human guidance received over the run (absent: none).
    #[serde(default)]
    pub guidance: Option<GuidanceRecord>,
    /// Scheduling figures: from `result.json`, or computed from the run's
    /// `trajectory.jsonl` and `scenario.ron` when the result predates them.
    #[serde(default)]
    pub schedule: Option<tbsim_engine::schedule::Schedule>,
    /// The run's tag, from the `run.json` beside its result (`--tag`, `tag=`).
    #[serde(default)]
    pub tag: Option<String>,
}

/// A run's model usage as `result.json` holds it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ModelRecord {
    /// Completed calls.
    #[serde(default)]
    pub calls: u64,
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Cost, when the model has prices.
    #[serde(default)]
    pub cost: Option<f64>,
    /// Replies stopped at the reply limit.
    #[serde(default)]
    pub cut_off: u64,
}

/// One model call's wall-clock facts (a line of `model_calls.jsonl`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct CallRecord {
    /// Wall time, backoff included, in ms.
    #[serde(default)]
    pub wall_ms: u64,
    /// Attempts made.
    #[serde(default)]
    pub attempts: u32,
    /// Attempts that timed out.
    #[serde(default)]
    pub timeouts: u32,
    /// Whether the call got an answer.
    #[serde(default)]
    pub ok: bool,
}

impl RunRecord {
    /// Whether the run ended by an infrastructure failure (left out of scores).
    pub fn infra_failed(&self) -> bool {
        self.end_reason.as_deref() == Some("infra_error")
    }

    /// What the report groups the run under: its agent, and its tag when it has
    /// one (`mcp:gpt-5 [prompt-v2]`), so one model's runs under different tags
    /// are told apart.
    pub fn group(&self) -> String {
        match &self.tag {
            Some(t) => format!("{} [{t}]", self.agent),
            None => self.agent.clone(),
        }
    }
}

/// Human guidance a run received (from a console: hint tiers and messages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct GuidanceRecord {
    /// Hint tiers given.
    #[serde(default)]
    pub hints: u32,
    /// Free-text messages.
    #[serde(default)]
    pub messages: u32,
}

/// One task of a run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TaskRecord {
    /// Family (meta-task).
    #[serde(default)]
    pub family: String,
    /// `easy` or `hard`.
    #[serde(default)]
    pub difficulty: String,
    /// Working day, from 1.
    #[serde(default = "one")]
    pub day: u32,
    /// Weighted share of checkpoints passed.
    pub score: f64,
    /// Every checkpoint passed.
    pub success: bool,
    /// Task key.
    #[serde(default)]
    pub key: String,
    /// The gate (`task/<key>#<checkpoint>`) that kept this task from being released.
    #[serde(default)]
    pub gate_failed: Option<String>,
}

fn one() -> u32 {
    1
}

/// One working day of a run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DayRecord {
    /// Day number, from 1.
    pub day: u32,
    /// Tasks of the day.
    #[serde(default)]
    pub tasks: usize,
    /// Mean task score of the day.
    pub checkpoint_score: f64,
    /// Share of the day's tasks solved.
    pub success_rate: f64,
}

/// Every file named `name` under `roots` (a root may also be such a file), sorted and
/// without duplicates. Symbolic links to directories are not followed.
pub fn find_named(roots: &[PathBuf], name: &str) -> Result<Vec<PathBuf>, ReportError> {
    let mut found = Vec::new();
    for root in roots {
        let meta = std::fs::metadata(root).map_err(io_err(root))?;
        if meta.is_file() {
            if root.file_name().is_some_and(|n| n == name) {
                found.push(root.clone());
            }
            continue;
        }
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
                let entry = entry.map_err(io_err(&dir))?;
                let ty = entry.file_type().map_err(io_err(&entry.path()))?;
                if ty.is_dir() {
                    stack.push(entry.path());
                } else if entry.file_name() == name {
                    found.push(entry.path());
                }
            }
        }
    }
    // Paths as given (for messages), sorted; the same file reached through two roots
    // (a run dir and its parent) counts once.
    found.sort();
    let mut seen = BTreeSet::new();
    found.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(found)
}

/// Reads every `result.json` under `roots`.
pub fn load_runs(roots: &[PathBuf]) -> Result<Vec<RunRecord>, ReportError> {
    let files = find_named(roots, "result.json")?;
    if files.is_empty() {
        return Err(ReportError::NoResults(roots.to_vec()));
    }
    files
        .iter()
        .map(|f| {
            let text = tbsim_engine::run_dir::read_result(f).map_err(|e| io_err(f)(e.into_io()))?;
            let mut r: RunRecord =
                serde_json::from_str(&text).map_err(|source| ReportError::Parse {
                    path: f.clone(),
                    source,
                })?;
            if r.schedule.is_none() {
                r.schedule = schedule_beside(f);
            }
            if r.tag.is_none() {
                r.tag = tag_beside(f);
            }
            r.calls = calls_beside(f);
            Ok(r)
        })
        .collect()
}

/// The lines of the `model_calls.jsonl` beside `result` (none when it is missing;
/// a line that does not read is skipped: the file only informs a table).
fn calls_beside(result: &Path) -> Vec<CallRecord> {
    let Some(dir) = result.parent() else {
        return Vec::new();
    };
    let path = dir.join(tbsim_engine::run::CALL_LOG);
    // A regular file of bounded size only: a run directory is untrusted.
    let Ok(meta) = path.symlink_metadata() else {
        return Vec::new();
    };
    if !meta.is_file() || meta.len() > 64 << 20 {
        return Vec::new();
    }
    std::fs::read_to_string(&path)
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<CallRecord>(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The tag in the `run.json` beside `result` (none when it is missing, unreadable
/// or untagged: the tag only labels the run).
fn tag_beside(result: &Path) -> Option<String> {
    let dir = result.parent()?;
    tbsim_engine::run_file::RunFile::read(dir).ok()?.options.tag
}

/// The scheduling figures of the run whose `result.json` is `result`, computed
/// from the trajectory and scenario beside it (`None` if either is missing or the
/// scenario does not load).
fn schedule_beside(result: &Path) -> Option<tbsim_engine::schedule::Schedule> {
    let dir = result.parent()?;
    let text = tbsim_engine::run_dir::read_trajectory(&dir.join("trajectory.jsonl")).ok()?;
    let loaded = tbsim_engine::run_dir::load_scenario(&dir.join("scenario.ron")).ok()?;
    Some(tbsim_engine::schedule::compute(
        &loaded.scenario,
        text.lines(),
    ))
}

/// Per model: how it scheduled (see [`tbsim_engine::schedule`] for the definitions).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScheduleRow {
    /// Agent name.
    pub agent: String,
    /// Runs with scheduling figures.
    pub runs: usize,
    /// Mean over acted-on tasks of release to first action, minutes.
    pub release_to_first_action_min: Option<f64>,
    /// Share of acted-on tasks still worked on after their deadline.
    pub late_share: Option<f64>,
    /// Mean tardiness of those late tasks, minutes.
    pub tardiness_min: Option<f64>,
    /// Mean interrupt response over joined meetings, minutes.
    pub interrupt_response_min: Option<f64>,
    /// Share of the intern's meetings never joined.
    pub missed_meetings_share: Option<f64>,
    /// Priority inversion per run, minutes (`None`: no run has figures).
    pub inversion_min: Option<f64>,
    /// Context switches per run.
    pub context_switches: Option<f64>,
    /// Idle (waiting) time per run, minutes.
    pub idle_min: Option<f64>,
}

/// Per model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    /// Agent name.
    pub agent: String,
    /// Runs.
    pub runs: usize,
    /// Distinct scenarios.
    pub scenarios: usize,
    /// Mean checkpoint score.
    pub checkpoint_score: f64,
    /// Mean success rate.
    pub success_rate: f64,
    /// Share of runs that solved every task.
    pub solved: f64,
    /// Mean agent decisions per run.
    pub avg_steps: f64,
    /// Mean tool calls per run.
    pub avg_tool_calls: f64,
    /// Mean human guidance per run (hint tiers plus messages sent from a console).
    pub avg_guidance: f64,
    /// Runs left out of the scores above: ended by an infrastructure failure.
    pub infra_failures: usize,
}

/// A run left out of the scores: it ended by an infrastructure failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InfraRow {
    /// Agent name.
    pub agent: String,
    /// Scenario name.
    pub scenario: String,
    /// Master seed.
    pub seed: u64,
    /// Trial, for batches with several trials.
    pub trial: Option<u32>,
    /// Decisions made before it failed.
    pub steps: u64,
    /// What failed.
    pub error: String,
}

/// How one model's calls went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// Agent name.
    pub agent: String,
    /// Runs.
    pub runs: usize,
    /// Completed model calls (from the results).
    pub calls: u64,
    /// Decisions without a tool call, total.
    pub empty_turns: u64,
    /// Replies cut off at the reply limit, total.
    pub cut_off: u64,
    /// Calls with wall-clock facts (`model_calls.jsonl`).
    pub timed_calls: usize,
    /// Retried attempts over those calls.
    pub retries: u64,
    /// Attempts that timed out.
    pub timeouts: u64,
    /// Calls that failed for good.
    pub failed: usize,
    /// Mean wall time per call, seconds (`None` without timed calls).
    pub mean_wall_secs: Option<f64>,
    /// Longest call, seconds.
    pub max_wall_secs: Option<f64>,
}

/// Per model and guidance level: the paper's human-guidance study (the same
/// scenarios at hint levels 0-3, score by level), with what humans added live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuidanceRow {
    /// Agent name.
    pub agent: String,
    /// Hint tier given up front with each task.
    pub hints: u8,
    /// Runs.
    pub runs: usize,
    /// Runs that received human guidance.
    pub guided_runs: usize,
    /// Hint tiers given by humans, over the runs.
    pub human_hints: u64,
    /// Messages sent by humans, over the runs.
    pub messages: u64,
    /// Mean checkpoint score.
    pub checkpoint_score: f64,
    /// Mean success rate.
    pub success_rate: f64,
}

/// Per model and stratum (number of tasks, difficulty or family).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumRow {
    /// Agent name.
    pub agent: String,
    /// The stratum's value.
    pub stratum: String,
    /// Runs contributing.
    pub runs: usize,
    /// Tasks contributing.
    pub tasks: usize,
    /// Mean score (over runs for the number of tasks, over tasks otherwise).
    pub checkpoint_score: f64,
    /// Mean success rate (over runs) or share of tasks solved (over tasks).
    pub success_rate: f64,
    /// Mean agent decisions per run (run-level strata only).
    pub avg_steps: Option<f64>,
    /// Mean tool calls per run (run-level strata only).
    pub avg_tool_calls: Option<f64>,
}

/// Per model and working day, over multi-day runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayRow {
    /// Agent name.
    pub agent: String,
    /// Day, from 1.
    pub day: u32,
    /// Runs with this day.
    pub runs: usize,
    /// Tasks of the day over those runs.
    pub tasks: usize,
    /// Mean day checkpoint score.
    pub checkpoint_score: f64,
    /// Mean day success rate.
    pub success_rate: f64,
    /// Mean score change over the previous day (from day 2).
    pub gain: Option<f64>,
}

/// pass^k for one model and `k`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassKRow {
    /// Agent name.
    pub agent: String,
    /// Trials that must all succeed.
    pub k: usize,
    /// Scenarios averaged over.
    pub scenarios: usize,
    /// The estimate.
    pub pass_k: f64,
}

/// Tool-call errors of one kind for one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorRow {
    /// Agent name.
    pub agent: String,
    /// Error kind.
    pub kind: String,
    /// Total over runs.
    pub count: u64,
    /// Mean per run (all the model's runs).
    pub per_run: f64,
}

/// Runs that ended for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndReasonRow {
    /// Agent name.
    pub agent: String,
    /// Why the runs ended (`unfinished` when not recorded).
    pub reason: String,
    /// Runs.
    pub runs: usize,
}

/// Tokens and cost for one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenRow {
    /// Agent name.
    pub agent: String,
    /// Runs.
    pub runs: usize,
    /// Model calls, total.
    pub calls: u64,
    /// Prompt tokens, total.
    pub tokens_in: u64,
    /// Completion tokens, total.
    pub tokens_out: u64,
    /// Cost, total.
    pub cost: f64,
    /// Mean cost per run.
    pub cost_per_run: f64,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Runs read.
    pub runs: usize,
    /// Distinct scenario names.
    pub scenarios: usize,
    /// Per model.
    pub models: Vec<ModelRow>,
    /// By number of tasks in the run.
    pub by_tasks: Vec<StratumRow>,
    /// By task difficulty.
    pub by_difficulty: Vec<StratumRow>,
    /// By task family.
    pub by_family: Vec<StratumRow>,
    /// By working day (multi-day runs).
    pub by_day: Vec<DayRow>,
    /// pass^k for k from 1 to the fewest trials of any of the model's scenarios.
    pub pass_k: Vec<PassKRow>,
    /// Tool-call errors by kind.
    pub errors: Vec<ErrorRow>,
    /// Runs by end reason.
    pub end_reasons: Vec<EndReasonRow>,
    /// Tokens and cost.
    pub tokens: Vec<TokenRow>,
    /// Model calls: empty turns, cut-off replies, wall time, retries, timeouts.
    pub model_calls: Vec<CallRow>,
    /// Runs left out of the scores (infrastructure failures).
    pub infra_failures: Vec<InfraRow>,
    /// Tasks never released because the checkpoint gating them never passed, per run.
    pub gates_failed: Vec<GateRow>,
    /// How each model scheduled.
    pub schedule: Vec<ScheduleRow>,
    /// By guidance level (hint tier) and human guidance.
    pub by_guidance: Vec<GuidanceRow>,
}

/// A task that was never released because its gate failed, in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateRow {
    /// Agent name.
    pub agent: String,
    /// Scenario name.
    pub scenario: String,
    /// Master seed of the run.
    pub seed: u64,
    /// Trial, for batches with several trials.
    pub trial: Option<u32>,
    /// The task kept back.
    pub task: String,
    /// The gate, `task/<key>#<checkpoint>`.
    pub gate: String,
}

fn mean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = xs
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// One working day's worth of a run for "by number of tasks": a one-day run, or
/// one day of a multi-day run (whose decisions are not split by day).
struct Unit {
    tasks: usize,
    score: f64,
    success: f64,
    /// Decisions and tool calls, for one-day runs.
    effort: Option<(u64, u64)>,
}

/// Scheduling figures of one model's runs (those that have them).
fn schedule_row(agent: &str, runs: &[&RunRecord]) -> ScheduleRow {
    let s: Vec<&tbsim_engine::schedule::Schedule> =
        runs.iter().filter_map(|r| r.schedule.as_ref()).collect();
    let tasks: Vec<&tbsim_engine::schedule::TaskSchedule> =
        s.iter().flat_map(|g| &g.tasks).collect();
    let acted: Vec<&&tbsim_engine::schedule::TaskSchedule> = tasks
        .iter()
        .filter(|t| t.tardiness_secs.is_some())
        .collect();
    let late: Vec<f64> = acted
        .iter()
        .filter_map(|t| t.tardiness_secs.filter(|x| *x > 0))
        .map(|x| x as f64 / 60.0)
        .collect();
    let first: Vec<f64> = tasks
        .iter()
        .filter_map(|t| t.release_to_first_action_secs)
        .map(|x| x as f64 / 60.0)
        .collect();
    let meetings: Vec<&tbsim_engine::schedule::MeetingResponse> =
        s.iter().flat_map(|g| &g.meetings).collect();
    let responses: Vec<f64> = meetings
        .iter()
        .filter_map(|m| m.response_secs)
        .map(|x| x as f64 / 60.0)
        .collect();
    let some_mean = |xs: &[f64]| (!xs.is_empty()).then(|| mean(xs.iter().copied()));
    let per_run = |f: fn(&tbsim_engine::schedule::Schedule) -> f64| {
        (!s.is_empty()).then(|| mean(s.iter().map(|g| f(g))))
    };
    ScheduleRow {
        agent: agent.to_owned(),
        runs: s.len(),
        release_to_first_action_min: some_mean(&first),
        late_share: (!acted.is_empty()).then(|| late.len() as f64 / acted.len() as f64),
        tardiness_min: some_mean(&late),
        interrupt_response_min: some_mean(&responses),
        missed_meetings_share: (!meetings.is_empty()).then(|| {
            meetings
                .iter()
                .filter(|m| m.response_secs.is_none())
                .count() as f64
                / meetings.len() as f64
        }),
        inversion_min: per_run(|g| g.inversion_secs as f64 / 60.0),
        context_switches: per_run(|g| g.context_switches as f64),
        idle_min: per_run(|g| g.idle_secs as f64 / 60.0),
    }
}

/// A stratum over working days.
fn unit_stratum(agent: &str, stratum: String, units: &[Unit]) -> StratumRow {
    let efforts: Vec<(u64, u64)> = units.iter().filter_map(|u| u.effort).collect();
    StratumRow {
        agent: agent.to_owned(),
        stratum,
        runs: units.len(),
        tasks: units.iter().map(|u| u.tasks).sum(),
        checkpoint_score: mean(units.iter().map(|u| u.score)),
        success_rate: mean(units.iter().map(|u| u.success)),
        avg_steps: (!efforts.is_empty()).then(|| mean(efforts.iter().map(|e| e.0 as f64))),
        avg_tool_calls: (!efforts.is_empty()).then(|| mean(efforts.iter().map(|e| e.1 as f64))),
    }
}

/// Strata over tasks, keyed by `key(task)`.
fn task_strata(
    agent: &str,
    runs: &[&RunRecord],
    key: impl Fn(&TaskRecord) -> String,
) -> Vec<StratumRow> {
    // stratum -> (runs touching it, tasks)
    let mut groups: BTreeMap<String, (BTreeSet<usize>, Vec<&TaskRecord>)> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        for t in &r.tasks {
            let g = groups.entry(key(t)).or_default();
            g.0.insert(i);
            g.1.push(t);
        }
    }
    groups
        .into_iter()
        .map(|(stratum, (rs, ts))| StratumRow {
            agent: agent.to_owned(),
            stratum,
            runs: rs.len(),
            tasks: ts.len(),
            checkpoint_score: mean(ts.iter().map(|t| t.score)),
            success_rate: mean(ts.iter().map(|t| f64::from(u8::from(t.success)))),
            avg_steps: None,
            avg_tool_calls: None,
        })
        .collect()
}

impl Report {
    /// Aggregates `runs`.
    pub fn new(runs: &[RunRecord]) -> Report {
        // Aggregate in one canonical order, whatever directories the runs were read
        // from (a sharded batch, read from several, reports like the whole one):
        // floating-point sums and listed rows then come out the same.
        let mut ordered: Vec<&RunRecord> = runs.iter().collect();
        ordered.sort_by(|a, b| {
            (&a.agent, &a.tag, &a.scenario, a.seed, a.trial).cmp(&(
                &b.agent,
                &b.tag,
                &b.scenario,
                b.seed,
                b.trial,
            ))
        });
        let mut by_agent: BTreeMap<String, Vec<&RunRecord>> = BTreeMap::new();
        for r in ordered {
            by_agent.entry(r.group()).or_default().push(r);
        }
        let mut rep = Report {
            runs: runs.len(),
            scenarios: runs
                .iter()
                .map(|r| r.scenario.as_str())
                .collect::<BTreeSet<_>>()
                .len(),
            models: Vec::new(),
            by_tasks: Vec::new(),
            by_difficulty: Vec::new(),
            by_family: Vec::new(),
            by_day: Vec::new(),
            pass_k: Vec::new(),
            errors: Vec::new(),
            end_reasons: Vec::new(),
            tokens: Vec::new(),
            model_calls: Vec::new(),
            infra_failures: Vec::new(),
            gates_failed: Vec::new(),
            schedule: Vec::new(),
            by_guidance: Vec::new(),
        };
        for (agent, all) in &by_agent {
            // Every run counts for what it spent; only the others are scored.
            let n = all.len() as f64;
            let scored: Vec<&RunRecord> =
                all.iter().copied().filter(|r| !r.infra_failed()).collect();
            let mine = &scored;
            let mut per_scenario: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
            for r in mine {
                let e = per_scenario.entry(&r.scenario).or_default();
                e.0 += 1;
                e.1 += usize::from(is_solved(r.success_rate));
            }
            rep.models.push(ModelRow {
                agent: (*agent).to_owned(),
                runs: mine.len(),
                scenarios: per_scenario.len(),
                checkpoint_score: mean(mine.iter().map(|r| r.checkpoint_score)),
                success_rate: mean(mine.iter().map(|r| r.success_rate)),
                solved: mean(
                    mine.iter()
                        .map(|r| f64::from(u8::from(is_solved(r.success_rate)))),
                ),
                avg_steps: mean(mine.iter().map(|r| r.steps as f64)),
                avg_tool_calls: mean(mine.iter().map(|r| r.tool_calls as f64)),
                avg_guidance: mean(mine.iter().map(|r| {
                    r.guidance
                        .map_or(0.0, |g| f64::from(g.hints) + f64::from(g.messages))
                })),
                infra_failures: all.len() - mine.len(),
            });
            for r in all.iter().filter(|r| r.infra_failed()) {
                rep.infra_failures.push(InfraRow {
                    agent: (*agent).to_owned(),
                    scenario: r.scenario.clone(),
                    seed: r.seed,
                    trial: r.trial,
                    steps: r.steps,
                    error: r.infra_error.clone().unwrap_or_default(),
                });
            }

            let mut by_level: BTreeMap<u8, Vec<&RunRecord>> = BTreeMap::new();
            for r in mine {
                by_level.entry(r.hints).or_default().push(r);
            }
            rep.by_guidance
                .extend(by_level.into_iter().map(|(hints, runs)| {
                    GuidanceRow {
                        agent: (*agent).to_owned(),
                        hints,
                        runs: runs.len(),
                        guided_runs: runs
                            .iter()
                            .filter(|r| r.guidance.is_some_and(|g| g.hints + g.messages > 0))
                            .count(),
                        human_hints: runs
                            .iter()
                            .filter_map(|r| r.guidance)
                            .map(|g| u64::from(g.hints))
                            .sum(),
                        messages: runs
                            .iter()
                            .filter_map(|r| r.guidance)
                            .map(|g| u64::from(g.messages))
                            .sum(),
                        checkpoint_score: mean(runs.iter().map(|r| r.checkpoint_score)),
                        success_rate: mean(runs.iter().map(|r| r.success_rate)),
                    }
                }));

            // The paper's Table 3 stratifies by the tasks of one working day: a
            // multi-day run counts once per day, by that day's tasks.
            let mut by_count: BTreeMap<usize, Vec<Unit>> = BTreeMap::new();
            for r in mine {
                if r.days.len() >= 2 {
                    for d in &r.days {
                        by_count.entry(d.tasks).or_default().push(Unit {
                            tasks: d.tasks,
                            score: d.checkpoint_score,
                            success: d.success_rate,
                            effort: None,
                        });
                    }
                } else {
                    by_count.entry(r.tasks.len()).or_default().push(Unit {
                        tasks: r.tasks.len(),
                        score: r.checkpoint_score,
                        success: r.success_rate,
                        effort: Some((r.steps, r.tool_calls)),
                    });
                }
            }
            rep.by_tasks.extend(
                by_count
                    .into_iter()
                    .map(|(k, units)| unit_stratum(agent, k.to_string(), &units)),
            );
            rep.by_difficulty.extend(task_strata(agent, mine, |t| {
                if t.difficulty.is_empty() {
                    "unknown".into()
                } else {
                    t.difficulty.clone()
                }
            }));
            rep.by_family
                .extend(task_strata(agent, mine, |t| t.family.clone()));

            let multi: Vec<&RunRecord> =
                mine.iter().copied().filter(|r| r.days.len() >= 2).collect();
            let max_day = multi.iter().map(|r| r.days.len()).max().unwrap_or(0);
            for d in 1..=max_day as u32 {
                let days: Vec<(&RunRecord, &DayRecord)> = multi
                    .iter()
                    .filter_map(|r| r.days.iter().find(|x| x.day == d).map(|x| (*r, x)))
                    .collect();
                let gains: Vec<f64> = days
                    .iter()
                    .filter_map(|(r, _)| (d >= 2).then(|| r.day_gain.get(d as usize - 2)).flatten())
                    .copied()
                    .collect();
                rep.by_day.push(DayRow {
                    agent: (*agent).to_owned(),
                    day: d,
                    runs: days.len(),
                    tasks: days.iter().map(|(_, x)| x.tasks).sum(),
                    checkpoint_score: mean(days.iter().map(|(_, x)| x.checkpoint_score)),
                    success_rate: mean(days.iter().map(|(_, x)| x.success_rate)),
                    gain: (!gains.is_empty()).then(|| mean(gains)),
                });
            }

            let counts: Vec<(usize, usize)> = per_scenario.values().copied().collect();
            let min_trials = counts.iter().map(|c| c.0).min().unwrap_or(0);
            for k in 1..=min_trials {
                if let Some(p) = pass_hat_k(&counts, k) {
                    rep.pass_k.push(PassKRow {
                        agent: (*agent).to_owned(),
                        k,
                        scenarios: counts.len(),
                        pass_k: p,
                    });
                }
            }

            let mut errors: BTreeMap<&str, u64> = BTreeMap::new();
            for r in all {
                for (kind, c) in &r.errors {
                    *errors.entry(kind).or_default() += c;
                }
            }
            rep.errors.extend(
                errors
                    .into_iter()
                    .filter(|(_, c)| *c > 0)
                    .map(|(kind, count)| ErrorRow {
                        agent: (*agent).to_owned(),
                        kind: kind.to_owned(),
                        count,
                        per_run: count as f64 / n,
                    }),
            );

            let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
            for r in all {
                *reasons
                    .entry(r.end_reason.as_deref().unwrap_or("unfinished"))
                    .or_default() += 1;
            }
            rep.end_reasons
                .extend(reasons.into_iter().map(|(reason, runs)| EndReasonRow {
                    agent: (*agent).to_owned(),
                    reason: reason.to_owned(),
                    runs,
                }));

            for r in mine {
                for t in &r.tasks {
                    if let Some(gate) = &t.gate_failed {
                        rep.gates_failed.push(GateRow {
                            agent: (*agent).to_owned(),
                            scenario: r.scenario.clone(),
                            seed: r.seed,
                            trial: r.trial,
                            task: t.key.clone(),
                            gate: gate.clone(),
                        });
                    }
                }
            }

            rep.schedule.push(schedule_row(agent, mine));

            let models: Vec<&ModelRecord> = all.iter().filter_map(|r| r.model.as_ref()).collect();
            // Folded from +0.0: an empty f64 sum is -0.0, which would print as "-0.0000".
            let cost = models.iter().filter_map(|m| m.cost).fold(0.0, |a, b| a + b);
            rep.tokens.push(TokenRow {
                agent: (*agent).to_owned(),
                runs: all.len(),
                calls: models.iter().map(|m| m.calls).sum(),
                tokens_in: models.iter().map(|m| m.input_tokens).sum(),
                tokens_out: models.iter().map(|m| m.output_tokens).sum(),
                cost,
                cost_per_run: cost / n,
            });
            let timed: Vec<&CallRecord> = all.iter().flat_map(|r| &r.calls).collect();
            let walls: Vec<f64> = timed.iter().map(|c| c.wall_ms as f64 / 1000.0).collect();
            rep.model_calls.push(CallRow {
                agent: (*agent).to_owned(),
                runs: all.len(),
                calls: models.iter().map(|m| m.calls).sum(),
                empty_turns: all.iter().map(|r| r.empty_turns).sum(),
                cut_off: models.iter().map(|m| m.cut_off).sum(),
                timed_calls: timed.len(),
                retries: timed
                    .iter()
                    .map(|c| u64::from(c.attempts.saturating_sub(1)))
                    .sum(),
                timeouts: timed.iter().map(|c| u64::from(c.timeouts)).sum(),
                failed: timed.iter().filter(|c| !c.ok).count(),
                mean_wall_secs: (!walls.is_empty()).then(|| mean(walls.iter().copied())),
                max_wall_secs: walls.iter().copied().reduce(f64::max),
            });
        }
        rep
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        render::markdown(self)
    }

    /// The report as pretty JSON.
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("reports serialise");
        s.push('\n');
        s
    }

    /// The tables, each named after its CSV file (without `.csv`).
    pub fn tables(&self) -> Vec<Table> {
        render::tables(self)
    }

    /// Checkpoint score by number of tasks, as an SVG bar chart.
    pub fn svg_by_tasks(&self) -> String {
        let groups: BTreeSet<usize> = self
            .by_tasks
            .iter()
            .filter_map(|r| r.stratum.parse().ok())
            .collect();
        let labels: Vec<String> = groups
            .iter()
            .map(|k| format!("{k} task{}", if *k == 1 { "" } else { "s" }))
            .collect();
        let series = self
            .models
            .iter()
            .map(|m| {
                let vals = groups
                    .iter()
                    .map(|k| {
                        self.by_tasks
                            .iter()
                            .find(|r| r.agent == m.agent && r.stratum == k.to_string())
                            .map(|r| r.checkpoint_score)
                    })
                    .collect();
                (m.agent.clone(), vals)
            })
            .collect::<Vec<_>>();
        svg::grouped_bars("Checkpoint score by number of tasks", &labels, &series)
    }

    /// Checkpoint score by working day (multi-day runs), as an SVG bar chart.
    pub fn svg_by_day(&self) -> String {
        let days: BTreeSet<u32> = self.by_day.iter().map(|r| r.day).collect();
        let labels: Vec<String> = days.iter().map(|d| format!("day {d}")).collect();
        let series = self
            .models
            .iter()
            .filter(|m| self.by_day.iter().any(|r| r.agent == m.agent))
            .map(|m| {
                let vals = days
                    .iter()
                    .map(|d| {
                        self.by_day
                            .iter()
                            .find(|r| r.agent == m.agent && r.day == *d)
                            .map(|r| r.checkpoint_score)
                    })
                    .collect();
                (m.agent.clone(), vals)
            })
            .collect::<Vec<_>>();
        svg::grouped_bars("Checkpoint score by day (multi-day runs)", &labels, &series)
    }

    /// Writes `report.md`, `report.json`, one CSV per table and the two charts
    /// (`score_by_tasks.svg`, `score_by_day.svg`) into `dir`; returns the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut files: Vec<(String, String)> = vec![
            ("report.md".into(), self.markdown()),
            ("report.json".into(), self.json()),
        ];
        files.extend(
            self.tables()
                .into_iter()
                .map(|t| (format!("{}.csv", t.name), t.csv())),
        );
        files.push(("score_by_tasks.svg".into(), self.svg_by_tasks()));
        files.push(("score_by_day.svg".into(), self.svg_by_day()));
        files
            .into_iter()
            .map(|(name, text)| {
                let p = dir.join(name);
                // Never through a link planted where a file goes (a shared run directory).
                tbsim_engine::run_dir::write(&p, text.as_bytes()).map_err(io_err(&p))?;
                Ok(p)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_one_agent_into_groups() {
        let run = |tag: Option<&str>, score: f64| -> RunRecord {
            let mut r: RunRecord = serde_json::from_value(serde_json::json!({
                "scenario": "s", "agent": "mcp:m", "checkpoint_score": score,
                "success_rate": score,
            }))
            .unwrap();
            r.tag = tag.map(str::to_owned);
            r
        };
        let rep = Report::new(&[run(Some("v2"), 1.0), run(None, 0.0), run(Some("v1"), 0.5)]);
        let rows: Vec<(&str, f64)> = rep
            .models
            .iter()
            .map(|m| (m.agent.as_str(), m.checkpoint_score))
            .collect();
        assert_eq!(
            rows,
            [("mcp:m", 0.0), ("mcp:m [v1]", 0.5), ("mcp:m [v2]", 1.0)]
        );
    }

    #[test]
    fn runs_list_the_tasks_their_gates_kept_back() {
        let run: RunRecord = serde_json::from_str(
            r#"{"scenario": "s", "agent": "a", "seed": 7, "checkpoint_score": 0.5,
                "success_rate": 0.5, "tasks": [
                  {"key": "task/a", "score": 1.0, "success": true},
                  {"key": "task/b", "score": 0.0, "success": false,
                   "gate_failed": "task/a#answer"}]}"#,
        )
        .unwrap();
        let rep = Report::new(&[run]);
        assert_eq!(
            rep.gates_failed,
            [GateRow {
                agent: "a".into(),
                scenario: "s".into(),
                seed: 7,
                trial: None,
                task: "task/b".into(),
                gate: "task/a#answer".into(),
            }]
        );
        assert!(
            rep.markdown()
                .contains("| a | s | 7 | – | task/b | task/a#answer |")
        );
    }

    #[test]
    fn runs_are_grouped_by_guidance_level_with_human_guidance_counted() {
        let run = |hints: u8, score: f64, guidance: &str| -> RunRecord {
            serde_json::from_str(&format!(
                r#"{{"scenario": "s", "agent": "a", "seed": 1, "hints": {hints},
                    "checkpoint_score": {score}, "success_rate": 0.0, "tasks": []{guidance}}}"#
            ))
            .unwrap()
        };
        let runs = [
            run(0, 0.2, ""),
            run(0, 0.4, r#", "guidance": {"hints": 2, "messages": 1}"#),
            run(3, 0.9, ""),
        ];
        let rep = Report::new(&runs);
        let levels: Vec<(u8, usize, usize, u64, u64)> = rep
            .by_guidance
            .iter()
            .map(|g| (g.hints, g.runs, g.guided_runs, g.human_hints, g.messages))
            .collect();
        assert_eq!(levels, [(0, 2, 1, 2, 1), (3, 1, 0, 0, 0)]);
        assert!(close(rep.by_guidance[0].checkpoint_score, 0.3));
        assert!(close(rep.models[0].avg_guidance, 1.0));
        let md = rep.markdown();
        assert!(md.contains("## By guidance"), "{md}");
        assert!(
            md.contains("| a | 0 | 2 | 1 | 2 | 1 | 0.300 | 0.000 |"),
            "{md}"
        );
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn pass_hat_k_matches_tau_bench() {
        // One scenario, 4 trials, 2 successes: pass^1 = 2/4, pass^2 = C(2,2)/C(4,2) = 1/6,
        // pass^3 = 0 (fewer successes than k).
        let s = [(4, 2)];
        assert!(close(pass_hat_k(&s, 1).unwrap(), 0.5));
        assert!(close(pass_hat_k(&s, 2).unwrap(), 1.0 / 6.0));
        assert_eq!(pass_hat_k(&s, 3), Some(0.0));
        // Averaged over scenarios: (C(3,2)/C(5,2) + C(5,2)/C(5,2)) / 2 = (3/10 + 1) / 2.
        let s = [(5, 3), (5, 5)];
        assert!(close(pass_hat_k(&s, 2).unwrap(), 0.65));
        // pass^k with k = n is the share of scenarios whose every trial succeeded.
        let s = [(3, 3), (3, 2), (3, 0), (3, 3)];
        assert!(close(pass_hat_k(&s, 3).unwrap(), 0.5));
        // pass^1 is the plain success rate.
        assert!(close(pass_hat_k(&s, 1).unwrap(), 8.0 / 12.0));
    }

    #[test]
    fn pass_hat_k_is_monotone_and_bounded() {
        let s = [(8, 5), (8, 8), (8, 1), (8, 0)];
        let mut prev = 1.0;
        for k in 1..=8 {
            let p = pass_hat_k(&s, k).unwrap();
            assert!((0.0..=prev).contains(&p), "k={k}: {p} > {prev}");
            prev = p;
        }
        assert!(close(prev, 0.25));
    }

    #[test]
    fn pass_hat_k_needs_k_trials_everywhere() {
        assert_eq!(pass_hat_k(&[], 1), None);
        assert_eq!(pass_hat_k(&[(3, 1)], 0), None);
        assert_eq!(pass_hat_k(&[(3, 1), (2, 2)], 3), None);
        assert_eq!(pass_hat_k(&[(3, 1), (2, 2)], 2), Some(0.5));
    }

    #[test]
    fn solved_means_every_task() {
        assert!(is_solved(1.0));
        assert!(!is_solved(0.999_999));
        assert!(!is_solved(0.0));
    }
}
