//! Side-by-side comparison of runs (the console's `#/compare/...` view).
//!
//! Two kinds:
//!
//! * **Runs** ([`compare_runs`]): two or more runs, normally of one scenario. Per
//!   task, each run's score and status; per checkpoint, each run's state, and
//!   whether they differ; each run's decisions aligned by step; and the first step
//!   where the agents' decisions diverge.
//! * **Batches** ([`compare_batches`]): groups of recorded runs, compared with the
//!   paired comparison of `tbsim report --compare` ([`tbsim_report::compare`]),
//!   intervals included, computed here and not in the page.
//!
//! ## Divergence
//!
//! A decision is the list of tool calls an agent made at one step. Two decisions
//! are **the same** when they have the same number of calls and, call by call in
//! order, the same tool name and the same arguments *after normalising*: the
//! arguments text is parsed as JSON and written back canonically (object keys
//! sorted, no whitespace), so key order and spacing do not count; arguments that
//! are not JSON are compared as their text with surrounding whitespace trimmed.
//! Call ids never count (they are the agent's labels, not its choice).
//!
//! The **divergence step** of a run against the first run (the baseline) is the
//! smallest step `n` (from 1) at which the two runs' decisions are not the same,
//! or at which one run has a decision `n` and the other does not (it ended
//! earlier). Runs whose every decision is the same, with as many decisions, do not
//! diverge (`None`). The divergence of the whole comparison is the smallest
//! divergence step over the runs after the first.
//!
//! Everything shown goes through [`tbsim_engine::inspect`] without answers, so a
//! comparison holds nothing a run's own view would not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use tbsim_core::protocol::ToolCall;
use tbsim_engine::inspect::{CheckpointState, WorldView};

/// The most runs one comparison takes (each is replayed).
pub const MAX_RUNS: usize = 8;

/// Why a comparison cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// Too few or too many runs or batches.
    #[error("{0}")]
    Arity(String),
    /// A run's directory could not be read (named by its id, never its path).
    #[error("cannot read run `{0}`: {1}")]
    Unreadable(String, String),
    /// A batch holds no finished run.
    #[error("batch `{0}` has no finished run to compare")]
    EmptyBatch(String),
}

/// One tool call as compared: its name and normalised arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NormCall {
    /// Tool name.
    pub name: String,
    /// Arguments, canonical JSON (or trimmed text when not JSON).
    pub args: String,
}

/// Normalises one call's arguments (see the module docs).
pub fn normalise_args(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        // serde_json's map is ordered by key (no `preserve_order`), so writing a
        // parsed value back sorts keys at every depth.
        Ok(v) => v.to_string(),
        Err(_) => arguments.trim().to_owned(),
    }
}

/// A decision's calls, normalised.
pub fn normalise(calls: &[ToolCall]) -> Vec<NormCall> {
    calls
        .iter()
        .map(|c| NormCall {
            name: c.name.clone(),
            args: normalise_args(&c.arguments),
        })
        .collect()
}

/// The first step (from 1) where `b`'s decisions differ from `a`'s, or one has a
/// decision the other lacks; `None` when they are the same throughout.
pub fn divergence(a: &[Vec<NormCall>], b: &[Vec<NormCall>]) -> Option<u64> {
    let common = a.len().min(b.len());
    if let Some(i) = (0..common).find(|&i| a[i] != b[i]) {
        return Some(i as u64 + 1);
    }
    (a.len() != b.len()).then_some(common as u64 + 1)
}

/// A run as the comparison needs it.
#[derive(Debug, Clone)]
pub struct RunInput {
    /// Its id on the page.
    pub id: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// One run in a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRun {
    /// Id.
    pub id: String,
    /// Scenario name.
    pub scenario: String,
    /// Agent name.
    pub agent: String,
    /// Master seed.
    pub seed: u64,
    /// Hint level.
    pub hints: u8,
    /// Decisions recorded.
    pub steps: u64,
    /// Mean checkpoint score (as the world shows it at its last step).
    pub score: f64,
    /// Whether the trajectory records the run's end.
    pub finished: bool,
    /// Why it ended.
    pub end_reason: Option<tbsim_core::protocol::EndReason>,
    /// First step whose decision differs from the first run's (`None` for the
    /// first run and for runs that never differ).
    pub diverges_at: Option<u64>,
}

/// One checkpoint across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedCheckpoint {
    /// Checkpoint key.
    pub key: String,
    /// Its state in each run, in run order (`None`: the run never released the task).
    pub states: Vec<Option<CheckpointState>>,
    /// Whether the runs disagree.
    pub differs: bool,
}

/// One task across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedTask {
    /// Task key.
    pub key: String,
    /// Title (from the first run that released it).
    pub title: String,
    /// Score in each run (`None`: not released in that run).
    pub scores: Vec<Option<f64>>,
    /// Checkpoints, in the order of the first run that released the task.
    pub checkpoints: Vec<ComparedCheckpoint>,
    /// Whether any score or checkpoint differs.
    pub differs: bool,
}

/// One step across runs: each run's decision (`None`: it made no such decision).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedStep {
    /// Step, from 1.
    pub step: u64,
    /// The decision of each run, in run order.
    pub calls: Vec<Option<Vec<NormCall>>>,
    /// Whether some run's decision differs from the first run's.
    pub differs: bool,
}

/// Runs side by side (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunComparison {
    /// The runs, the first being the baseline.
    pub runs: Vec<ComparedRun>,
    /// Whether every run is of the same scenario (else tasks and steps compare
    /// different worlds, and the page says so).
    pub same_scenario: bool,
    /// Tasks, in order of first release across runs (by first run, then later runs).
    pub tasks: Vec<ComparedTask>,
    /// Decisions aligned by step.
    pub steps: Vec<ComparedStep>,
    /// The first divergence step over the runs after the first.
    pub divergence: Option<u64>,
    /// How divergence is defined (shown on the page).
    pub definition: &'static str,
}

/// The definition shown with a comparison.
pub const DEFINITION: &str = "The first step at which some run's decision differs from the first run's: a different number of tool calls, or, call by call in order, a different tool or different arguments after normalising (JSON parsed and rewritten with sorted keys; call ids ignored); or a step one run reached and the other did not.";

struct Loaded {
    world: WorldView,
    header: tbsim_engine::trajectory::Header,
    decisions: Vec<Vec<NormCall>>,
    finished: bool,
}

fn load(run: &RunInput) -> Result<Loaded, CompareError> {
    let unreadable = |m: String| CompareError::Unreadable(run.id.clone(), m);
    let dir_text = run.dir.display().to_string();
    // Messages name the run by id, never by its host path.
    let hide = |m: String| m.replace(&dir_text, &run.id);
    let rec = tbsim_engine::trajectory::read_recorded(&run.dir.join("trajectory.jsonl"))
        .map_err(|e| unreadable(hide(e.to_string())))?;
    let world = tbsim_engine::inspect::world_at(&run.dir, None, false)
        .map_err(|e| unreadable(hide(e.to_string())))?;
    // Only complete decisions (a live run's last may be in flight): as many as the
    // world was re-driven with.
    let decisions = rec
        .steps
        .iter()
        .take(world.steps as usize)
        .map(|s| normalise(&s.decision.calls))
        .collect();
    Ok(Loaded {
        world,
        header: rec.header,
        decisions,
        finished: rec.end.is_some(),
    })
}

/// Compares `runs` (2 to [`MAX_RUNS`]); the first is the baseline.
pub fn compare_runs(runs: &[RunInput]) -> Result<RunComparison, CompareError> {
    if runs.len() < 2 || runs.len() > MAX_RUNS {
        return Err(CompareError::Arity(format!(
            "compare 2 to {MAX_RUNS} runs, not {}",
            runs.len()
        )));
    }
    let loaded = runs.iter().map(load).collect::<Result<Vec<_>, _>>()?;
    let base = &loaded[0];
    let compared: Vec<ComparedRun> = runs
        .iter()
        .zip(&loaded)
        .enumerate()
        .map(|(i, (r, l))| ComparedRun {
            id: r.id.clone(),
            scenario: l.header.scenario.clone(),
            agent: l.header.agent.clone(),
            seed: l.header.seed,
            hints: l.header.hints,
            steps: l.decisions.len() as u64,
            score: l.world.score,
            finished: l.finished,
            end_reason: l.world.end_reason,
            diverges_at: if i == 0 {
                None
            } else {
                divergence(&base.decisions, &l.decisions)
            },
        })
        .collect();
    let same_scenario = loaded
        .iter()
        .all(|l| l.header.scenario == base.header.scenario);
    let divergence = compared.iter().filter_map(|r| r.diverges_at).min();
    Ok(RunComparison {
        tasks: tasks(&loaded),
        steps: steps(&loaded),
        runs: compared,
        same_scenario,
        divergence,
        definition: DEFINITION,
    })
}

fn tasks(loaded: &[Loaded]) -> Vec<ComparedTask> {
    let mut order: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for l in loaded {
        for t in &l.world.tasks {
            if seen.insert(t.key.clone()) {
                order.push(t.key.clone());
            }
        }
    }
    order
        .into_iter()
        .map(|key| {
            let cards: Vec<_> = loaded
                .iter()
                .map(|l| l.world.tasks.iter().find(|t| t.key == key))
                .collect();
            let first = cards.iter().flatten().next().copied();
            let title = first.map(|t| t.title.clone()).unwrap_or_default();
            let mut cp_order: Vec<String> = Vec::new();
            for c in cards.iter().flatten() {
                for cp in &c.checkpoints {
                    if !cp_order.contains(&cp.key) {
                        cp_order.push(cp.key.clone());
                    }
                }
            }
            let checkpoints: Vec<ComparedCheckpoint> = cp_order
                .into_iter()
                .map(|ck| {
                    let states: Vec<Option<CheckpointState>> = cards
                        .iter()
                        .map(|c| {
                            c.and_then(|c| c.checkpoints.iter().find(|x| x.key == ck))
                                .map(|x| x.state)
                        })
                        .collect();
                    let differs = states.windows(2).any(|w| w[0] != w[1]);
                    ComparedCheckpoint {
                        key: ck,
                        states,
                        differs,
                    }
                })
                .collect();
            let scores: Vec<Option<f64>> = cards.iter().map(|c| c.map(|c| c.score)).collect();
            let differs =
                scores.windows(2).any(|w| w[0] != w[1]) || checkpoints.iter().any(|c| c.differs);
            ComparedTask {
                key,
                title,
                scores,
                checkpoints,
                differs,
            }
        })
        .collect()
}

fn steps(loaded: &[Loaded]) -> Vec<ComparedStep> {
    let n = loaded.iter().map(|l| l.decisions.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let calls: Vec<Option<Vec<NormCall>>> =
                loaded.iter().map(|l| l.decisions.get(i).cloned()).collect();
            let differs = calls.iter().skip(1).any(|c| *c != calls[0]);
            ComparedStep {
                step: i as u64 + 1,
                calls,
                differs,
            }
        })
        .collect()
}

/// A batch: a label and its runs' directories.
#[derive(Debug, Clone)]
pub struct BatchInput {
    /// Its name on the page (an id prefix; never a host path).
    pub label: String,
    /// Its runs' directories.
    pub dirs: Vec<PathBuf>,
    /// Its runs' ids, in the order of `dirs` (the page links to them).
    pub ids: Vec<String>,
}

/// One run of a pair in a batch comparison's per-scenario rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedRun {
    /// The run's id (a link on the page).
    pub id: String,
    /// Its checkpoint score.
    pub score: f64,
}

/// A pair: the same scenario, seed and trial in the baseline and in another batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The seed.
    pub seed: u64,
    /// The trial (0 for a run without one).
    pub trial: u32,
    /// The baseline's run.
    pub a: PairedRun,
    /// The other batch's run.
    pub b: PairedRun,
}

/// A scenario's pairs between the baseline and one other batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioRow {
    /// The other batch.
    pub batch: String,
    /// The scenario.
    pub scenario: String,
    /// Its pairs, by seed and trial.
    pub pairs: Vec<Pair>,
    /// Mean score of the baseline's paired runs.
    pub mean_a: f64,
    /// Mean score of the other batch's paired runs.
    pub mean_b: f64,
    /// `mean_b - mean_a`.
    pub diff: f64,
}

/// Batches compared (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchComparison {
    /// The batches' labels, the first being the baseline.
    pub batches: Vec<String>,
    /// Finished runs read in each batch.
    pub runs: Vec<usize>,
    /// `tbsim report --compare`'s result over them.
    pub comparison: tbsim_report::compare::Comparison,
    /// The report's definitions, as `tbsim report --compare` prints them.
    pub note: &'static str,
    /// Per scenario, each other batch against the baseline, with the paired runs.
    pub scenarios: Vec<ScenarioRow>,
}

/// How the paired comparison is computed (from `tbsim_report::compare`'s docs).
pub const BATCH_NOTE: &str = "Runs pair by scenario, seed and trial; B − A is the mean of the pair differences. 95% interval: percentile bootstrap over pairs (10,000 seeded resamples). p: paired sign-flip permutation test, two-sided (exact up to 16 pairs). MDD: minimum detectable difference at 5% and 80% power. Computed by tbsim report --compare.";

/// Compares `batches` (2 to [`MAX_RUNS`]) with `tbsim report --compare`'s paired
/// comparison; the first is the baseline. Runs without `result.json` are left out.
pub fn compare_batches(batches: &[BatchInput]) -> Result<BatchComparison, CompareError> {
    if batches.len() < 2 || batches.len() > MAX_RUNS {
        return Err(CompareError::Arity(format!(
            "compare 2 to {MAX_RUNS} batches, not {}",
            batches.len()
        )));
    }
    let mut groups = Vec::new();
    let mut runs = Vec::new();
    // Each run's record with its id, by (scenario, seed, trial), per batch.
    let mut keyed: Vec<BTreeMap<(String, u64, u32), PairedRun>> = Vec::new();
    for b in batches {
        let mut by_key = BTreeMap::new();
        for (dir, id) in b.dirs.iter().zip(&b.ids) {
            if !dir.join("result.json").is_file() {
                continue;
            }
            if let Ok(rs) = tbsim_report::load_runs(std::slice::from_ref(dir))
                && let Some(r) = rs.first()
            {
                by_key
                    .entry((r.scenario.clone(), r.seed, r.trial.unwrap_or(0)))
                    .or_insert(PairedRun {
                        id: id.clone(),
                        score: r.checkpoint_score,
                    });
            }
        }
        keyed.push(by_key);
        let finished: Vec<PathBuf> = b
            .dirs
            .iter()
            .filter(|d| d.join("result.json").is_file())
            .cloned()
            .collect();
        if finished.is_empty() {
            return Err(CompareError::EmptyBatch(b.label.clone()));
        }
        let records = tbsim_report::load_runs(&finished).map_err(|e| {
            CompareError::Unreadable(b.label.clone(), scrub_paths(&e.to_string(), &finished))
        })?;
        runs.push(records.len());
        groups.push(tbsim_report::compare::Group {
            label: b.label.clone(),
            runs: records,
        });
    }
    let mut scenarios = Vec::new();
    for (b, other) in batches.iter().zip(&keyed).skip(1) {
        let mut rows: BTreeMap<&str, Vec<Pair>> = BTreeMap::new();
        for (k, a) in &keyed[0] {
            if let Some(bb) = other.get(k) {
                rows.entry(k.0.as_str()).or_default().push(Pair {
                    seed: k.1,
                    trial: k.2,
                    a: a.clone(),
                    b: bb.clone(),
                });
            }
        }
        for (scenario, pairs) in rows {
            let n = pairs.len() as f64;
            let mean_a = pairs.iter().map(|p| p.a.score).sum::<f64>() / n;
            let mean_b = pairs.iter().map(|p| p.b.score).sum::<f64>() / n;
            scenarios.push(ScenarioRow {
                batch: b.label.clone(),
                scenario: scenario.to_owned(),
                pairs,
                mean_a,
                mean_b,
                diff: mean_b - mean_a,
            });
        }
    }
    Ok(BatchComparison {
        batches: batches.iter().map(|b| b.label.clone()).collect(),
        runs,
        comparison: tbsim_report::compare::Comparison::new(&groups),
        note: BATCH_NOTE,
        scenarios,
    })
}

/// `text` with every one of `dirs` replaced by its last component.
fn scrub_paths(text: &str, dirs: &[PathBuf]) -> String {
    let mut out = text.to_owned();
    for d in dirs {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out = out.replace(&d.display().to_string(), &name);
    }
    out
}

/// The batch of a run id: the id up to its last `:` (its parent folder as `tbsim
/// view` names it), `None` for an id without one.
pub fn batch_of(id: &str) -> Option<&str> {
    id.rsplit_once(':').map(|(b, _)| b)
}

/// Every batch among `ids` (id prefixes, see [`batch_of`]) with its members.
pub fn batches_of<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for id in ids {
        if let Some(b) = batch_of(id) {
            out.entry(b.to_owned()).or_default().push(id.to_owned());
        }
    }
    out
}

/// Whether `id` belongs to batch `label` (the label itself, or under it).
pub fn in_batch(id: &str, label: &str) -> bool {
    id.strip_prefix(label)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

impl From<CompareError> for crate::http::ApiError {
    fn from(e: CompareError) -> Self {
        let message = e.to_string();
        let code = match e {
            CompareError::Arity(_) => "invalid_query",
            CompareError::Unreadable(..) => "unreadable_run",
            CompareError::EmptyBatch(_) => "no_results",
        };
        super::access::err(axum::http::StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
}

impl super::Console {
    /// The runs `ids` compared (see [`compare_runs`]). A run a person is playing, or
    /// a batch job not started, is refused: it has nothing it may show.
    pub fn compare(&self, ids: &[String]) -> Result<RunComparison, crate::http::ApiError> {
        let mut inputs = Vec::new();
        for id in ids {
            let found = self.find(id)?;
            super::access::viewable(self, &found)?;
            inputs.push(RunInput {
                id: id.clone(),
                dir: found.dir().to_path_buf(),
            });
        }
        Ok(compare_runs(&inputs)?)
    }

    /// The batches `labels` (id prefixes of the console's fixed runs) compared with
    /// `tbsim report --compare`'s paired comparison.
    pub fn compare_batches(
        &self,
        labels: &[String],
    ) -> Result<BatchComparison, crate::http::ApiError> {
        let mut inputs = Vec::new();
        for label in labels {
            let members: Vec<&std::sync::Arc<super::FixedRun>> = self
                .fixed
                .iter()
                .filter(|f| f.kind == super::RunKind::Recorded && in_batch(&f.id, label))
                .collect();
            if members.is_empty() {
                return Err(super::ConsoleError::UnknownRun(label.clone()).into());
            }
            inputs.push(BatchInput {
                label: label.clone(),
                dirs: members.iter().map(|f| f.dir.clone()).collect(),
                ids: members.iter().map(|f| f.id.clone()).collect(),
            });
        }
        Ok(compare_batches(&inputs)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: format!("id-{name}"),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn normalising_ignores_key_order_spacing_and_ids() {
        let a = normalise(&[call(
            "read_file",
            r#"{"path": "drive/a.md", "n": {"y":1,"x":2}}"#,
        )]);
        let mut c = call("read_file", r#"{"n":{"x":2,"y":1},"path":"drive/a.md"}"#);
        c.id = "other".into();
        assert_eq!(a, normalise(&[c]));
        assert_ne!(
            a,
            normalise(&[call("read_file", r#"{"path":"drive/b.md"}"#)])
        );
        assert_eq!(normalise_args("  not json "), "not json");
    }

    #[test]
    fn divergence_is_the_first_differing_or_missing_step() {
        let w = normalise(&[call("wait", "{}")]);
        let r = normalise(&[call("read_file", r#"{"path":"drive/a"}"#)]);
        assert_eq!(
            divergence(&[w.clone(), w.clone()], &[w.clone(), w.clone()]),
            None
        );
        assert_eq!(
            divergence(&[w.clone(), w.clone()], &[w.clone(), r.clone()]),
            Some(2)
        );
        assert_eq!(
            divergence(std::slice::from_ref(&r), std::slice::from_ref(&w)),
            Some(1)
        );
        // One ended earlier: the step the other reached alone.
        assert_eq!(
            divergence(std::slice::from_ref(&w), &[w.clone(), r.clone()]),
            Some(2)
        );
        // Two calls against one call is a different decision.
        let two = normalise(&[call("wait", "{}"), call("wait", "{}")]);
        assert_eq!(divergence(&[w], &[two]), Some(1));
    }

    #[test]
    fn batches_are_id_prefixes() {
        assert_eq!(batch_of("nightly:busy:trial-0"), Some("nightly:busy"));
        assert_eq!(batch_of("one"), None);
        assert!(in_batch("nightly:busy:trial-0", "nightly"));
        assert!(!in_batch("nightly2:busy", "nightly"));
        let b = batches_of(["a:x", "a:y", "b:x", "c"]);
        assert_eq!(b.len(), 2);
        assert_eq!(b["a"], ["a:x", "a:y"]);
    }
}
