//! Run results: per-task and per-checkpoint scores, and their rendering.
//!
//! Scores follow the paper: a task's score is the weighted share of its scored
//! checkpoints that passed; a scenario's checkpoint score is the mean task score; a
//! task succeeds when every scored checkpoint passed; the success rate is the share of
//! tasks that did. Diagnostic checkpoints (files consulted, clues disclosed, tools
//! called; see [`tbsim_scenario::check::CheckKind`]) are reported with the time they first held
//! but weigh nothing. A task never released scores 0; when a gate kept it back, the
//! result says which.
//!
//! Plain data: nothing here reads the world; `collect` reads a result out of it when
//! the run ends.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub use crate::guidance::GuidanceCount;

use crate::protocol::EndReason;
use crate::protocol::ModelUsage;
use tbsim_scenario::{Difficulty, Priority};

/// One checkpoint's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointResult {
    /// Key.
    pub key: String,
    /// What it checks.
    pub description: String,
    /// Weight (counted only when `kind` is scored).
    pub weight: u32,
    /// When it is judged and whether it is scored.
    pub kind: tbsim_scenario::check::CheckKind,
    /// Whether it passed: an answer when its task closed, an event or diagnostic
    /// while the task was open.
    pub passed: bool,
    /// When it passed (`YYYY-MM-DDTHH:MM:SS`).
    pub at: Option<String>,
    /// Mentor feedback, when it failed.
    pub feedback: Option<String>,
}

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// Key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Family.
    pub family: String,
    /// Variant.
    pub variant: String,
    /// Difficulty.
    pub difficulty: Difficulty,
    /// Priority.
    pub priority: Priority,
    /// The working day it belongs to (its release day, or its deadline's day if it was
    /// never released), from 1.
    pub day: u32,
    /// When released, if it was.
    pub released_at: Option<String>,
    /// For a task never released whose release waited on another task's checkpoint:
    /// that gate (`task/<key>#<checkpoint>`), which never passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_failed: Option<String>,
    /// Deadline.
    pub deadline: String,
    /// Weighted share of scored checkpoints passed (0..1).
    pub score: f64,
    /// All scored checkpoints passed.
    pub success: bool,
    /// When the last scored checkpoint passed, if all did.
    pub completed_at: Option<String>,
    /// Scored checkpoints passed.
    pub passed: usize,
    /// Scored checkpoints in total.
    pub total: usize,
    /// Per checkpoint.
    pub checkpoints: Vec<CheckpointResult>,
    /// Human guidance received about the task (written only when there was some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<GuidanceCount>,
}

/// One run's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Scenario name.
    pub scenario: String,
    /// Agent name.
    pub agent: String,
    /// Master seed used.
    pub seed: u64,
    /// Trial index, for batch runs with several trials per scenario (trial `t` runs
    /// with seed `base + t`); absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// Hint tier.
    pub hints: u8,
    /// Mean task score (0..1).
    pub checkpoint_score: f64,
    /// Share of tasks fully solved (0..1).
    pub success_rate: f64,
    /// Agent decisions.
    pub steps: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Decisions that made no tool call (a model that only talked; it is nudged).
    /// Each counts as a step and costs only the turn's thinking time
    /// (`--turn-cost`, `--token-cost`; none by default, as in the original).
    #[serde(default)]
    pub empty_turns: u64,
    /// Tool errors by kind.
    pub errors: BTreeMap<String, u64>,
    /// Why the run ended.
    pub end_reason: Option<EndReason>,
    /// Simulated start.
    pub sim_start: String,
    /// Simulated end.
    pub sim_end: String,
    /// Trajectory digest (hex BLAKE3).
    pub digest: String,
    /// Feedback policy between days.
    pub feedback: crate::protocol::FeedbackPolicy,
    /// Per working day.
    pub days: Vec<DayResult>,
    /// Checkpoint score of each day minus the previous day's (empty for one day).
    pub day_gain: Vec<f64>,
    /// Per task.
    pub tasks: Vec<TaskResult>,
    /// The agent's model calls, tokens and cost (model-backed agents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelUsage>,
    /// Model calls made for colleagues (model-played colleagues only; cache hits are free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npc_model: Option<ModelUsage>,
    /// What failed when the run ended as an infrastructure failure (`end_reason` is
    /// `infra_error`): the scores then say nothing about the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infra_error: Option<String>,
    /// What failed when the run ended as the agent's failure (`end_reason`
    /// `agent_error` or `context_exceeded`): scored, unlike an infrastructure failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_error: Option<String>,
    /// What the person running the model should know about it (e.g. its server's
    /// chat template dropped the tool catalogue).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What made this result: the scenario's hash and generator, the engine and the
    /// checker version (absent in results written before it existed).
    #[serde(default)]
    pub provenance: Provenance,
    /// Human guidance received over the run, all tasks and none (written only when
    /// there was some; per task in `tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<GuidanceCount>,
    /// How the agent scheduled its day ([`crate::schedule`]); filled in when the
    /// trajectory can be read back (run directories and in-memory runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::schedule::Schedule>,
}

/// What a result was made from, so a fixed scenario or checker can be told apart
/// and old runs regraded (`tbsim regrade`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// BLAKE3 of the scenario file's bytes.
    pub scenario_blake3: String,
    /// The scenario's `generated_by` (absent for hand-written scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by: Option<String>,
    /// `tbsim <version>`.
    pub engine: String,
    /// [`tbsim_scenario::check::CHECKER_VERSION`].
    pub checker: u32,
}

/// One working day's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayResult {
    /// Day number, from 1.
    pub day: u32,
    /// Its date, `YYYY-MM-DD`.
    pub date: String,
    /// Tasks of the day.
    pub tasks: usize,
    /// Mean task score of the day (0..1).
    pub checkpoint_score: f64,
    /// Share of the day's tasks fully solved (0..1).
    pub success_rate: f64,
}

fn hm(iso: &str) -> &str {
    iso.get(11..16).unwrap_or(iso)
}

/// The score table printed by `tbsim run`.
pub fn render_table(results: &[RunResult]) -> String {
    let mut out = String::new();
    for r in results {
        let _ = writeln!(
            out,
            "scenario {}  (agent {}, seed {})",
            r.scenario, r.agent, r.seed
        );
        let _ = writeln!(
            out,
            "  {:<28} {:<18} {:>11} {:>6}  status",
            "task", "family", "checkpoints", "score"
        );
        for t in &r.tasks {
            let status = match (&t.completed_at, &t.released_at) {
                (Some(done), _) => format!("on time (done {} , due {})", hm(done), hm(&t.deadline))
                    .replace(" ,", ","),
                (None, None) => match &t.gate_failed {
                    Some(gate) => format!("never released (gate {gate} failed)"),
                    None => "never released".to_owned(),
                },
                (None, Some(_)) => format!("not done (due {})", hm(&t.deadline)),
            };
            let key = t.key.trim_start_matches("task/");
            let _ = writeln!(
                out,
                "  {:<28} {:<18} {:>11} {:>6.3}  {}",
                key,
                t.family,
                format!("{}/{}", t.passed, t.total),
                t.score,
                status
            );
        }
        let errors: u64 = r.errors.values().sum();
        let _ = writeln!(
            out,
            "  checkpoint score {:.3} | success rate {:.3} | steps {} | tool calls {} ({} errors) | {} -> {}",
            r.checkpoint_score,
            r.success_rate,
            r.steps,
            r.tool_calls,
            errors,
            r.sim_start.replace('T', " "),
            if r.sim_end[..10] == r.sim_start[..10] {
                hm(&r.sim_end).to_owned()
            } else {
                r.sim_end.replace('T', " ")
            }
        );
        if let Some(m) = &r.model {
            let cost = m
                .cost
                .map(|c| format!(" | cost {c:.4}"))
                .unwrap_or_default();
            let cut = if m.cut_off > 0 {
                format!(" | {} replies cut off at the reply limit", m.cut_off)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  model: {} calls | {} input + {} output tokens{cost}{cut}",
                m.calls, m.input_tokens, m.output_tokens
            );
        }
        if r.empty_turns > 0 {
            let _ = writeln!(
                out,
                "  empty turns: {} (the model replied without calling a tool and was nudged)",
                r.empty_turns
            );
        }
        if let Some(e) = &r.infra_error {
            let _ = writeln!(
                out,
                "  INFRASTRUCTURE FAILURE (not scored as an agent failure): {e}"
            );
        }
        if let (Some(reason), Some(e)) = (r.end_reason, &r.agent_error) {
            let _ = writeln!(
                out,
                "  ended by the agent's failure ({reason}, scored): {e}"
            );
        }
        for w in &r.warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
        if r.days.len() > 1 {
            for (i, d) in r.days.iter().enumerate() {
                let gain = if i == 0 {
                    String::new()
                } else {
                    format!(" | gain {:+.3}", r.day_gain[i - 1])
                };
                let _ = writeln!(
                    out,
                    "  day {} ({}): {} tasks | checkpoint score {:.3} | success rate {:.3}{gain}",
                    d.day, d.date, d.tasks, d.checkpoint_score, d.success_rate
                );
            }
        }
        let _ = writeln!(out);
    }
    if results.len() > 1 {
        let n = results.len() as f64;
        let _ = writeln!(
            out,
            "overall: {} scenarios | mean checkpoint score {:.3} | mean success rate {:.3}",
            results.len(),
            results.iter().map(|r| r.checkpoint_score).sum::<f64>() / n,
            results.iter().map(|r| r.success_rate).sum::<f64>() / n
        );
    }
    out
}

/// Whether a run with this success rate solved every task (the per-trial success of
/// pass^k). Written as `>=` so a rate of exactly 1.0 read back from JSON counts.
pub fn is_solved(success_rate: f64) -> bool {
    success_rate >= 1.0
}

/// τ-bench's unbiased estimate of pass^k: the probability that `k` trials drawn
/// without replacement from a scenario's trials all succeed, averaged over scenarios.
///
/// `scenarios` holds `(n, c)` per scenario: trials run and trials that succeeded. Each
/// scenario contributes `C(c, k) / C(n, k)`. Returns `None` when there is no scenario,
/// `k` is 0, or some scenario has fewer than `k` trials (the estimate needs `k` of
/// them).
pub fn pass_hat_k(scenarios: &[(usize, usize)], k: usize) -> Option<f64> {
    if scenarios.is_empty() || k == 0 || scenarios.iter().any(|&(n, _)| n < k) {
        return None;
    }
    let sum: f64 = scenarios
        .iter()
        .map(|&(n, c)| {
            // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i): no large binomials, and 0 once c < k.
            (0..k)
                .map(|i| c.saturating_sub(i) as f64 / (n - i) as f64)
                .product::<f64>()
        })
        .sum();
    Some(sum / scenarios.len() as f64)
}
