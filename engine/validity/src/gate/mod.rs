//! The validity gate (`tbsim family check`): the checks a family must pass before
//! it ships, over every variant and many seeds of it.
//!
//! For every instance: generation is byte-stable, the scenario round-trips and
//! validates, the oracle scores 1 and the idle agent 0, the solvers score 1, every
//! adversary stays at or under the ceiling and solves nothing, every listed wrong
//! answer fails, answers vary over seeds, empty answers pass little, the
//! answer-in-observation scan finds no rule solving more than its share, and (for
//! script families) colleagues answer the README's natural questions and refuse
//! keyword soups. Instances run across threads; the output is the same whatever
//! their number.

mod answers;
mod instance;

pub use answers::{InitialFiles, answer_checks, check_path, check_paths, passes_alone};
pub use instance::plan;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use tbsim_gen::registry::FamilyEntry;
use tbsim_gen::script::ScriptEntry;

use crate::jobs::run_jobs;
use crate::scan::Tally;
use instance::one_instance;

/// Why the gate could not run at all (a family that fails is a report, not an error).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A bad option.
    #[error("{0}")]
    Options(String),
    /// Writing the report failed.
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
}

/// What to check and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Family folders (each holding `family.star`), or keys of registered families.
    pub dirs: Vec<PathBuf>,
    /// Seeds per variant.
    pub seeds: u64,
    /// Also require the independent Rust solver to score 1 on script families.
    pub rust_solver: bool,
    /// Adversaries to run (empty: every one of the library).
    pub adversaries: Vec<String>,
    /// Instances checked at once (none: the machine's parallelism).
    pub threads: Option<usize>,
    /// Which confidence bound the share limits are judged by.
    pub bound: Bound,
    /// Run the learned shortcut probe.
    pub probe: bool,
    /// A folder to write each family's probe record to (`<family>.probe.json`).
    pub probe_out: Option<PathBuf>,
    /// Only the variants whose key starts with one of these (empty: every variant),
    /// to gate again what a change touched without waiting for the whole family.
    pub variants: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            dirs: Vec::new(),
            seeds: 200,
            rust_solver: false,
            adversaries: Vec::new(),
            threads: None,
            bound: Bound::Upper,
            probe: true,
            probe_out: None,
            variants: Vec::new(),
        }
    }
}

/// How a share measured on some seeds is held to its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bound {
    /// The standard: the upper one-sided 95% Wilson bound must be within the limit
    /// (a pass says the true share is under it at 95% confidence; below about 52
    /// instances not even zero hits can show that for a 5% limit).
    #[default]
    Upper,
    /// A screen for few seeds: fails only when the lower one-sided 95% bound is
    /// over the limit (the share is shown to exceed it).
    Lower,
}

impl Bound {
    /// Whether `hits` of `n` is over `limit` as this bound judges it.
    pub fn over(self, hits: f64, n: f64, limit: f64) -> bool {
        if n <= 0.0 {
            return false;
        }
        let (lo, hi) = crate::probe::learn::wilson(hits, n, crate::probe::learn::Z95);
        match self {
            Bound::Upper => hi > limit,
            Bound::Lower => lo > limit,
        }
    }

    /// The bound's value for `hits` of `n`.
    pub fn value(self, hits: f64, n: f64) -> f64 {
        let (lo, hi) = crate::probe::learn::wilson(hits, n, crate::probe::learn::Z95);
        match self {
            Bound::Upper => hi,
            Bound::Lower => lo,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Bound::Upper => "upper",
            Bound::Lower => "lower",
        }
    }
}

/// The gate's verdict: every failure, located.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Every failure, each already located (`file:line: variant ...`).
    pub failures: Vec<String>,
}

impl Report {
    /// Whether every family passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Highest mean checkpoint score an adversary may reach.
const ADVERSARY_CEILING: f64 = 0.05;
/// Highest share of instances that may share one expected answer.
const TOP_ANSWER_SHARE: f64 = 0.60;
/// Highest share of instances an empty answer may satisfy.
const EMPTY_SHARE: f64 = 0.25;
/// Fewest seeds per variant at which the answer-spread shares are judged: below it
/// a share is mostly chance (two seeds of a variant whose usual answer is "none
/// abnormal" share it half the time). They are still printed.
const MIN_SPREAD_SEEDS: u64 = 20;
/// Highest share of instances one extraction rule of the scan may solve.
const SCAN_SHARE: f64 = 0.05;

/// What one instance showed.
#[derive(Debug, Default)]
pub(crate) struct InstanceOutcome {
    /// Failures, each already located.
    failures: Vec<String>,
    oracle: f64,
    idle: f64,
    /// The script's own solver (`solve(tools, task)`), for script families.
    solver: Option<f64>,
    /// The independent Rust solver, when asked for (always for a Rust family).
    rust_solver: Option<f64>,
    /// Adversary name -> (score, solved a task).
    adversaries: Vec<(String, f64, bool)>,
    wrong_answers: usize,
    /// Per task of the instance (a chain's follow-ups too), by key: the expected
    /// answer as the task's answer checks (for the spread), and whether an empty
    /// file at every answer path passes one of its checkpoints.
    answers: Vec<TaskAnswer>,
    scan: Vec<crate::scan::CheckpointScan>,
    /// The probe's labelled candidates.
    probe: crate::probe::InstanceRows,
    /// The colleague check (script families, the first seeds only).
    asked: Option<crate::questions::Asked>,
}

#[derive(Debug)]
pub(crate) struct TaskAnswer {
    key: String,
    answer: String,
    empty_passes: bool,
}

/// Seeds per variant on which colleagues are asked the README's questions (each
/// question is a fresh run per clue; more seeds add little).
const QUESTION_SEEDS: u64 = 8;
/// The share of natural questions colleagues must answer (as the NPC corpus test).
const QUESTION_GOAL: f64 = 0.95;

/// Runs the gate over `a.dirs`, writing the report to `out` as it goes.
pub fn check(a: &Options, out: &mut impl Write) -> Result<Report, GateError> {
    if a.seeds == 0 {
        return Err(GateError::Options("--seeds must be at least 1".into()));
    }
    let adversaries: Vec<String> = if a.adversaries.is_empty() {
        crate::adversary::ADVERSARIES
            .iter()
            .map(|(n, _)| (*n).to_owned())
            .collect()
    } else {
        for n in &a.adversaries {
            if crate::adversary::by_name(n).is_none() {
                return Err(GateError::Options(format!("unknown adversary `{n}`")));
            }
        }
        a.adversaries.clone()
    };
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 64);
    let mut all_failures = Vec::new();
    for dir in &a.dirs {
        let subject = match subject(dir) {
            Ok(s) => s,
            Err(e) => {
                writeln!(out, "{e}")?;
                all_failures.push(e.to_string());
                continue;
            }
        };
        let mut questions: Vec<String> = Vec::new();
        let (entry, at, rust_solver): (&dyn FamilyEntry, String, bool) = match subject {
            Subject::Script(entry) => {
                let script = entry.script();
                questions = crate::questions::example_questions(entry.readme().unwrap_or_default());
                // Failures after generation are the generator's: located at `generate`.
                let gen_line = script
                    .source()
                    .lines()
                    .position(|l| l.starts_with("def generate("))
                    .map_or(1, |i| i + 1);
                if !script.defines("solve") {
                    all_failures.push(format!(
                        "{}: error[TB0026]: the script defines no `def solve(tools, task)`: its instances are not shown solvable from observations",
                        script.file()
                    ));
                }
                (
                    entry as &dyn FamilyEntry,
                    format!("{}:{gen_line}", script.file()),
                    a.rust_solver,
                )
            }
            Subject::Rust(entry) => (entry, format!("engine/gen/src/{}.rs", entry.key()), true),
        };
        let all_variants = entry.variants();
        let every = all_variants.len();
        let variants: Vec<_> = all_variants
            .into_iter()
            .filter(|v| {
                a.variants.is_empty() || a.variants.iter().any(|p| v.key.starts_with(p.as_str()))
            })
            .collect();
        if variants.is_empty() {
            let e = format!(
                "{at}: no variant of `{}` starts with {}",
                entry.key(),
                a.variants
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
            writeln!(out, "{e}")?;
            all_failures.push(e);
            continue;
        }
        let of = if variants.len() < every {
            format!(" (of {every}, chosen by --variants)")
        } else {
            String::new()
        };
        writeln!(
            out,
            "family `{}` ({}): {} variants{of} x {} seeds\n",
            entry.key(),
            at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f),
            variants.len(),
            a.seeds
        )?;
        writeln!(
            out,
            "| variant | instances | oracle | idle | solver | rust solver | worst adversary | wrong answers | top answer | empty answer | scan best | questions answered | soups refused | failures |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        )?;
        // Every (variant, seed) in one pool, so no thread waits for a variant's last
        // instance; rows are written in variant order as each variant completes.
        let jobs: Vec<(usize, u64)> = (0..variants.len())
            .flat_map(|v| (0..a.seeds).map(move |seed| (v, seed)))
            .collect();
        let mut done: Vec<InstanceOutcome> = Vec::new();
        let mut written: std::io::Result<()> = Ok(());
        let mut probes: Vec<crate::probe::InstanceRows> = Vec::new();
        run_jobs(
            &jobs,
            threads,
            |&(v, seed)| {
                one_instance(
                    &variants[v].key,
                    seed,
                    &variants[v].family,
                    subject,
                    rust_solver,
                    &adversaries,
                    &questions,
                    &at,
                    a.probe,
                )
            },
            |&(v, _), r| {
                done.push(r);
                if done.len() as u64 == a.seeds && written.is_ok() {
                    let mut results = std::mem::take(&mut done);
                    probes.extend(results.iter_mut().map(|r| std::mem::take(&mut r.probe)));
                    match variant_row(out, &variants[v].key, &results, a.seeds, &at, a.bound) {
                        Ok(f) => all_failures.extend(f),
                        Err(e) => written = Err(e),
                    }
                }
            },
        );
        written?;
        writeln!(out)?;
        if a.probe {
            let report = crate::probe::ProbeReport::build(&probes);
            writeln!(
                out,
                "shortcut probe (`{}`): top-1 accuracy on held-out seeds against chance; fails when the lower 95% bound exceeds chance by more than {:.2}\n",
                entry.key(),
                crate::probe::MARGIN
            )?;
            write!(out, "{}", report.markdown())?;
            writeln!(out)?;
            for (k, r) in report.failing() {
                let (best, score) = r.best();
                all_failures.push(format!(
                    "{at}: {}: the shortcut probe ({best}) picks `{}` {} right in {:.1}% of held-out instances (lower 95% bound {:.1}%) against chance {:.1}% (at most {:.0} points over), leaning on: {}",
                    k.variant,
                    k.checkpoint,
                    k.slot,
                    score.accuracy() * 100.0,
                    score.lower() * 100.0,
                    score.chance() * 100.0,
                    crate::probe::MARGIN * 100.0,
                    if best == "prior" {
                        "one constant answer".to_owned()
                    } else {
                        score.leans_on.iter().take(3).map(|x| x.0.clone()).collect::<Vec<_>>().join("; ")
                    }
                ));
            }
            if let Some(dir) = &a.probe_out {
                std::fs::create_dir_all(dir)?;
                let mut v = report.json();
                v["family"] = entry.key().into();
                v["seeds"] = a.seeds.into();
                std::fs::write(
                    dir.join(format!("{}.probe.json", entry.key())),
                    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n",
                )?;
            }
        }
    }
    if a.seeds < MIN_SPREAD_SEEDS {
        writeln!(
            out,
            "(answer spread not judged below {MIN_SPREAD_SEEDS} seeds per variant)"
        )?;
    }
    if all_failures.is_empty() {
        writeln!(out, "gate passed")?;
    } else {
        writeln!(out, "{} failures:", all_failures.len())?;
        for f in &all_failures {
            writeln!(out, "{f}")?;
        }
    }
    Ok(Report {
        failures: all_failures,
    })
}

/// Judges one variant's instances: writes its table row and returns its failures.
fn variant_row(
    out: &mut impl Write,
    variant: &str,
    results: &[InstanceOutcome],
    seeds: u64,
    at: &str,
    bound: Bound,
) -> std::io::Result<Vec<String>> {
    let mut failures: Vec<String> = Vec::new();
    let mut tally = Tally::default();
    // Task key -> (expected answer -> instances, instances, empty passes).
    let mut spread: BTreeMap<&str, (BTreeMap<&str, usize>, usize, usize)> = BTreeMap::new();
    let mut adv: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let (mut oracle, mut idle, mut wrong) = (0.0, 0.0, 0);
    let (mut solver, mut rsolver) = (None::<f64>, None::<f64>);
    let mut asked: Option<crate::questions::Asked> = None;
    let n = results.len() as f64;
    for r in results {
        failures.extend(r.failures.iter().cloned());
        oracle += r.oracle / n;
        idle += r.idle / n;
        if let Some(x) = r.solver {
            *solver.get_or_insert(0.0) += x / n;
        }
        if let Some(x) = r.rust_solver {
            *rsolver.get_or_insert(0.0) += x / n;
        }
        wrong += r.wrong_answers;
        for t in &r.answers {
            let e = spread.entry(t.key.as_str()).or_default();
            *e.0.entry(t.answer.as_str()).or_default() += 1;
            e.1 += 1;
            e.2 += usize::from(t.empty_passes);
        }
        for (name, score, solved) in &r.adversaries {
            let e = adv.entry(name.as_str()).or_default();
            e.0 += score / n;
            e.1 += usize::from(*solved);
        }
        tally.add(&r.scan, "task/t");
        if let Some(x) = &r.asked {
            let t = asked.get_or_insert_with(Default::default);
            t.questions += x.questions;
            t.answered += x.answered;
            t.soups += x.soups;
            t.leaked += x.leaked;
            t.misses.extend(x.misses.iter().cloned());
        }
    }
    // Judged per task: a chain's follow-ups may not repeat themselves either.
    let (mut top, mut empty_share) = (0.0_f64, 0.0_f64);
    let one_task = spread.len() == 1;
    for (key, (answers, seen, empty)) in &spread {
        let seen = *seen as f64;
        let task_top = answers.values().copied().max().unwrap_or(0) as f64 / seen;
        let task_empty = *empty as f64 / seen;
        top = top.max(task_top);
        empty_share = empty_share.max(task_empty);
        let which = if one_task {
            String::new()
        } else {
            format!(" task `{key}`:")
        };
        if task_top > TOP_ANSWER_SHARE && seeds >= MIN_SPREAD_SEEDS {
            failures.push(format!(
                "{at}: {}:{which} one expected answer is shared by {:.0}% of instances (at most {:.0}%)",
                variant,
                task_top * 100.0,
                TOP_ANSWER_SHARE * 100.0
            ));
        }
        if task_empty > EMPTY_SHARE && seeds >= MIN_SPREAD_SEEDS {
            failures.push(format!(
                "{at}: {}:{which} an empty answer passes a checkpoint in {:.0}% of instances (at most {:.0}%)",
                variant,
                task_empty * 100.0,
                EMPTY_SHARE * 100.0
            ));
        }
    }
    let worst = adv
        .iter()
        .max_by(|x, y| x.1.0.total_cmp(&y.1.0).then(y.0.cmp(x.0)))
        .map(|(k, s)| (k.to_string(), s.0, s.1));
    for (name, (mean, solved)) in &adv {
        // A mean of scores in [0, 1] bounded as a proportion: no wider than the
        // Bernoulli case of the same mean, so the bound is conservative.
        if bound.over(mean * n, n, ADVERSARY_CEILING) || *solved > 0 {
            failures.push(format!(
                "{at}: {}: adversary:{name} scores {mean:.3} ({} 95% bound {:.3}; at most {ADVERSARY_CEILING}) and solves {solved} instances (none allowed)",
                variant,
                bound.name(),
                bound.value(mean * n, n)
            ));
        }
    }
    for (key, row) in &tally.rows {
        let Some((rule, hits)) = row.best() else {
            continue;
        };
        let scanned = row.scanned() as f64;
        if bound.over(hits as f64, scanned, SCAN_SHARE) {
            failures.push(format!(
                "{at}: {}: the validity scan solves `{key}` in {:.1}% of instances ({} 95% bound {:.1}%) by `{rule}` (at most {:.0}%)",
                variant,
                row.best_share() * 100.0,
                bound.name(),
                bound.value(hits as f64, scanned) * 100.0,
                SCAN_SHARE * 100.0
            ));
        }
    }
    if let Some(x) = &asked {
        let readme = at
            .rsplit_once(':')
            .map_or(at, |(f, _)| f)
            .replace("family.star", "README.md");
        if x.questions == 0 && x.soups > 0 {
            failures.push(format!(
                "{readme}: {}: colleagues hold clues but the README lists no \"## Example questions\" to ask them",
                variant
            ));
        } else if (x.answered as f64) < QUESTION_GOAL * x.questions as f64 {
            failures.push(format!(
                "{readme}: {}: colleagues answer {} of {} natural questions (at least {:.0}%); first misses: {}",
                variant,
                x.answered,
                x.questions,
                QUESTION_GOAL * 100.0,
                x.misses.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
            ));
        }
        if x.leaked > 0 {
            failures.push(format!(
                "{at}: {}: {} keyword soups or forwarded tasks got a clue: {}",
                variant,
                x.leaked,
                x.misses
                    .iter()
                    .filter(|m| m.starts_with("the soup"))
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    let scan_best = tally
        .over(0.0)
        .into_iter()
        .map(|(_, r)| r.best_share())
        .fold(0.0, f64::max);
    writeln!(
        out,
        "| {} | {} | {oracle:.3} | {idle:.3} | {} | {} | {} | {wrong} | {:.0}% | {:.0}% | {:.1}% | {} | {} | {} |",
        variant,
        results.len(),
        solver.map_or("-".into(), |x| format!("{x:.3}")),
        rsolver.map_or("-".into(), |x| format!("{x:.3}")),
        worst.map_or("-".into(), |(k, s, solved)| format!(
            "{k} {s:.3} ({solved} solved)"
        )),
        top * 100.0,
        empty_share * 100.0,
        scan_best * 100.0,
        asked
            .as_ref()
            .map_or("-".into(), |x| format!("{}/{}", x.answered, x.questions)),
        asked.as_ref().map_or("-".into(), |x| format!(
            "{}/{}",
            x.soups - x.leaked,
            x.soups
        )),
        failures.len()
    )?;
    Ok(failures)
}

/// What `family check` checks: a script family (loaded from its folder) or a
/// registered Rust family (by key).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject {
    Script(&'static ScriptEntry),
    Rust(&'static dyn FamilyEntry),
}

fn subject(dir: &Path) -> Result<Subject, String> {
    if !dir.exists()
        && let Some(key) = dir.to_str()
        && let Some(e) = tbsim_gen::registry::by_key(key)
    {
        if let Some(s) = tbsim_gen::script::entry(key) {
            return Ok(Subject::Script(s));
        }
        return Ok(Subject::Rust(e));
    }
    tbsim_gen::registry::register_script_dir(dir)
        .map(Subject::Script)
        .map_err(|e| e.to_string())
}
