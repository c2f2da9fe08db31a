//! Paired comparison of runs: `tbsim report --compare <A> <B> [<C> ...]`.
//!
//! Each argument is a *group* of runs (a batch directory, read like `tbsim report`
//! reads it). Every later group is compared with the first, the baseline.
//!
//! ## Definitions
//!
//! * **Pairing.** Runs pair by `(scenario, seed, trial)`: the same scenario drawn with
//!   the same seed, in the same trial slot. Runs without a partner are counted and
//!   left out; a key seen twice in one group keeps its first run (in path order).
//! * **Difference.** For each pair, `d = B − A` of the run's checkpoint score (mean
//!   task score) and of its success rate (share of tasks solved). The reported
//!   difference is the mean of `d` over pairs.
//! * **95 % interval.** Percentile bootstrap over pairs: 10,000 resamples of the `n`
//!   pair differences with replacement, drawn from a fixed seeded stream, so the same
//!   runs always give the same interval.
//! * **p-value.** Paired sign-flip permutation test of "no difference", two-sided:
//!   the share of sign assignments to the `d`s whose mean is at least as far from 0 as
//!   the observed one. Exact (all `2^n`) for `n ≤ 16`; otherwise 10,000 seeded random
//!   assignments, with `p = (1 + hits) / (1 + 10,000)`.
//! * **Minimum detectable difference** (MDD) for `n` pairs: `(z₀.₉₇₅ + z₀.₈) · s / √n`
//!   with `s` the standard deviation of `d`: the smallest true difference a two-sided
//!   test at 5 % would find with 80 % power, were the spread of `d` what it was here.
//! * **Per family.** Tasks of paired runs pair by task key; the family's difference
//!   is the mean of `B − A` task scores over its paired tasks (tasks within one run
//!   are not independent, so no interval is given).
//! * **Noise floor** (per group holding two or more trials): for each trial, the mean
//!   checkpoint score over the group's scenarios; the floor is the standard deviation
//!   of those trial means, with their range, and the pooled within-scenario standard
//!   deviation of single runs (`√` of the mean per-scenario variance across trials).
//!   A difference between agents smaller than the floor is within what re-running
//!   the same agent gives.
//!
//! Everything is deterministic: groups in argument order, families sorted, numbers at
//! fixed precision in Markdown and CSV.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::RngExt as _;
use serde::Serialize;

use super::{Cell, ReportError, RunRecord, Table, io_err};

/// Resamples for the bootstrap and the random permutation test.
pub const RESAMPLES: usize = 10_000;
/// Up to this many pairs the permutation test enumerates every sign assignment.
pub const EXACT_MAX: usize = 16;
/// `z₀.₉₇₅ + z₀.₈`: a two-sided 5 % test with 80 % power.
const Z_SUM: f64 = 1.959_963_985 + 0.841_621_234;

/// One group of runs to compare.
#[derive(Debug, Clone)]
pub struct Group {
    /// How the group is named in the tables (its directory as given).
    pub label: String,
    /// Its runs.
    pub runs: Vec<RunRecord>,
}

/// The difference of one measure between two groups over paired runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Mean of the baseline's runs (paired ones).
    pub mean_a: f64,
    /// Mean of the other group's runs (paired ones).
    pub mean_b: f64,
    /// Mean of `B − A` over pairs.
    pub diff: f64,
    /// Bootstrap 95 % interval of the mean difference.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Two-sided paired permutation p-value (`None` with no pairs).
    pub p_value: Option<f64>,
    /// Whether the p-value is exact (all sign assignments).
    pub exact: bool,
    /// Standard deviation of the pair differences (`None` under two pairs).
    pub sd: Option<f64>,
    /// Minimum detectable difference at 5 % and 80 % power (`None` under two pairs).
    pub mdd: Option<f64>,
}

/// Per-family task score difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyDiff {
    /// Family key.
    pub family: String,
    /// Paired tasks.
    pub tasks: usize,
    /// Mean baseline task score.
    pub mean_a: f64,
    /// Mean task score of the other group.
    pub mean_b: f64,
    /// Mean of `B − A`.
    pub diff: f64,
}

/// One group against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contrast {
    /// Baseline label.
    pub a: String,
    /// Other group's label.
    pub b: String,
    /// Agents recorded in the baseline's runs.
    pub agents_a: Vec<String>,
    /// Agents recorded in the other group's runs.
    pub agents_b: Vec<String>,
    /// Paired runs.
    pub pairs: usize,
    /// Baseline runs without a partner.
    pub unpaired_a: usize,
    /// Other runs without a partner.
    pub unpaired_b: usize,
    /// Checkpoint score.
    pub score: Diff,
    /// Success rate.
    pub success: Diff,
    /// Per family.
    pub families: Vec<FamilyDiff>,
}

/// The noise floor of one group run with several trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Noise {
    /// Group label.
    pub group: String,
    /// Trials found.
    pub trials: usize,
    /// Scenarios run in every trial.
    pub scenarios: usize,
    /// Mean checkpoint score of each trial, in trial order.
    pub trial_means: Vec<f64>,
    /// Standard deviation of the trial means.
    pub sd_of_means: f64,
    /// Largest minus smallest trial mean.
    pub range: f64,
    /// Pooled within-scenario standard deviation of one run's score.
    pub run_sd: f64,
}

/// A comparison of groups of runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Every group against the first.
    pub contrasts: Vec<Contrast>,
    /// Noise floors of the groups with several trials.
    pub noise: Vec<Noise>,
}

type Key = (String, u64, u32);

fn key(r: &RunRecord) -> Key {
    (r.scenario.clone(), r.seed, r.trial.unwrap_or(0))
}

fn by_key(runs: &[RunRecord]) -> BTreeMap<Key, &RunRecord> {
    let mut m = BTreeMap::new();
    for r in runs {
        m.entry(key(r)).or_insert(r);
    }
    m
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Sample standard deviation (`None` under two values).
fn sd(xs: &[f64]) -> Option<f64> {
    (xs.len() >= 2).then(|| {
        let m = mean(xs);
        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
    })
}

/// Percentile bootstrap 95 % interval of the mean of `d`.
pub fn bootstrap_ci(d: &[f64], stream_key: &str) -> (f64, f64) {
    if d.is_empty() {
        return (0.0, 0.0);
    }
    let mut rng = tbsim_core::rng::stream(0, stream_key);
    let n = d.len();
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| d[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let lo = means[(0.025 * RESAMPLES as f64).floor() as usize];
    let hi = means[((0.975 * RESAMPLES as f64).ceil() as usize - 1).min(RESAMPLES - 1)];
    (lo, hi)
}

/// Two-sided paired sign-flip permutation p-value of `d`, and whether it is exact.
pub fn permutation_p(d: &[f64], stream_key: &str) -> (f64, bool) {
    let n = d.len();
    let observed = d.iter().sum::<f64>().abs();
    // A tolerance, so sums equal in exact arithmetic count as "as extreme".
    let tol = 1e-9 * (1.0 + observed);
    if n <= EXACT_MAX {
        let total = 1u64 << n;
        let hits = (0..total)
            .filter(|mask| {
                let s: f64 = d
                    .iter()
                    .enumerate()
                    .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                    .sum();
                s.abs() >= observed - tol
            })
            .count();
        (hits as f64 / total as f64, true)
    } else {
        let mut rng = tbsim_core::rng::stream(0, stream_key);
        let hits = (0..RESAMPLES)
            .filter(|_| {
                let s: f64 = d
                    .iter()
                    .map(|x| if rng.random_bool(0.5) { -x } else { *x })
                    .sum();
                s.abs() >= observed - tol
            })
            .count();
        ((1 + hits) as f64 / (1 + RESAMPLES) as f64, false)
    }
}

fn diff(a: &[f64], b: &[f64], stream_key: &str) -> Diff {
    let d: Vec<f64> = b.iter().zip(a).map(|(b, a)| b - a).collect();
    let (ci_low, ci_high) = bootstrap_ci(&d, &format!("{stream_key}/bootstrap"));
    let (p, exact) = permutation_p(&d, &format!("{stream_key}/permutation"));
    let s = sd(&d);
    Diff {
        mean_a: mean(a),
        mean_b: mean(b),
        diff: mean(&d),
        ci_low,
        ci_high,
        p_value: (!d.is_empty()).then_some(p),
        exact,
        sd: s,
        mdd: s.map(|s| Z_SUM * s / (d.len() as f64).sqrt()),
    }
}

fn agents(runs: &[RunRecord]) -> Vec<String> {
    let set: BTreeSet<&str> = runs.iter().map(|r| r.agent.as_str()).collect();
    set.into_iter().map(str::to_owned).collect()
}

fn contrast(a: &Group, b: &Group) -> Contrast {
    let (ma, mb) = (by_key(&a.runs), by_key(&b.runs));
    let pairs: Vec<(&RunRecord, &RunRecord)> = ma
        .iter()
        .filter_map(|(k, ra)| mb.get(k).map(|rb| (*ra, *rb)))
        .collect();
    let stream = format!("report/compare/{}/{}", a.label, b.label);
    let col = |f: fn(&RunRecord) -> f64| -> (Vec<f64>, Vec<f64>) {
        pairs.iter().map(|(x, y)| (f(x), f(y))).unzip()
    };
    let (sa, sb) = col(|r| r.checkpoint_score);
    let (ua, ub) = col(|r| r.success_rate);
    let mut fam: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (x, y) in &pairs {
        let ty: BTreeMap<&str, &super::TaskRecord> =
            y.tasks.iter().map(|t| (t.key.as_str(), t)).collect();
        for tx in &x.tasks {
            if let Some(t) = ty.get(tx.key.as_str()) {
                let e = fam.entry(tx.family.as_str()).or_default();
                e.0.push(tx.score);
                e.1.push(t.score);
            }
        }
    }
    Contrast {
        a: a.label.clone(),
        b: b.label.clone(),
        agents_a: agents(&a.runs),
        agents_b: agents(&b.runs),
        pairs: pairs.len(),
        unpaired_a: ma.len() - pairs.len(),
        unpaired_b: mb.len() - pairs.len(),
        score: diff(&sa, &sb, &format!("{stream}/score")),
        success: diff(&ua, &ub, &format!("{stream}/success")),
        families: fam
            .into_iter()
            .map(|(family, (x, y))| FamilyDiff {
                family: family.to_owned(),
                tasks: x.len(),
                mean_a: mean(&x),
                mean_b: mean(&y),
                diff: mean(&y) - mean(&x),
            })
            .collect(),
    }
}

/// The noise floor of a group with runs of two or more trials of the same scenarios
/// (only scenario/seed combinations present in every trial count).
pub fn noise(g: &Group) -> Option<Noise> {
    let mut by_trial: BTreeMap<u32, BTreeMap<(String, u64), f64>> = BTreeMap::new();
    for r in &g.runs {
        by_trial
            .entry(r.trial.unwrap_or(0))
            .or_default()
            .entry((r.scenario.clone(), r.seed))
            .or_insert(r.checkpoint_score);
    }
    if by_trial.len() < 2 {
        return None;
    }
    // Seeds may differ between trials; a scenario is common when every trial ran it.
    let mut per_scenario: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for runs in by_trial.values() {
        let mut seen = BTreeSet::new();
        for ((s, _), score) in runs {
            if seen.insert(s.as_str()) {
                per_scenario.entry(s.as_str()).or_default().push(*score);
            }
        }
    }
    let trials = by_trial.len();
    per_scenario.retain(|_, v| v.len() == trials);
    if per_scenario.is_empty() {
        return None;
    }
    let trial_means: Vec<f64> = (0..trials)
        .map(|k| mean(&per_scenario.values().map(|v| v[k]).collect::<Vec<_>>()))
        .collect();
    let vars: Vec<f64> = per_scenario
        .values()
        .map(|v| sd(v).unwrap_or(0.0).powi(2))
        .collect();
    let lo = trial_means.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = trial_means
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    Some(Noise {
        group: g.label.clone(),
        trials,
        scenarios: per_scenario.len(),
        sd_of_means: sd(&trial_means).unwrap_or(0.0),
        range: hi - lo,
        run_sd: mean(&vars).sqrt(),
        trial_means,
    })
}

impl Comparison {
    /// Compares every group after the first with the first.
    pub fn new(groups: &[Group]) -> Comparison {
        let contrasts = match groups.split_first() {
            Some((a, rest)) => rest.iter().map(|b| contrast(a, b)).collect(),
            None => Vec::new(),
        };
        Comparison {
            contrasts,
            noise: groups.iter().filter_map(noise).collect(),
        }
    }

    /// Reads each directory as one group. Runs that ended by an infrastructure
    /// failure are left out (they say nothing about the agent), so their pairs are
    /// unmatched, as the main report leaves them out of its scores.
    pub fn load(dirs: &[PathBuf]) -> Result<Comparison, ReportError> {
        let groups = dirs
            .iter()
            .map(|d| {
                let mut runs = super::load_runs(std::slice::from_ref(d))?;
                runs.retain(|r| !r.infra_failed());
                Ok(Group {
                    label: d.display().to_string(),
                    runs,
                })
            })
            .collect::<Result<Vec<_>, ReportError>>()?;
        Ok(Comparison::new(&groups))
    }

    /// The tables: runs, families, noise.
    pub fn tables(&self) -> Vec<Table> {
        let p = |d: &Diff| d.p_value.map_or(Cell::Empty, |p| Cell::Num(p, 4));
        let opt = |x: Option<f64>| x.map_or(Cell::Empty, |x| Cell::Num(x, 3));
        let mut runs = Table {
            name: "compare_runs",
            title: "Paired difference (B − A) over runs",
            note: "Runs paired by scenario, seed and trial. Interval: percentile bootstrap (10,000 seeded resamples); p: paired sign-flip permutation test, two-sided (exact up to 16 pairs); MDD: minimum detectable difference at 5 % and 80 % power.",
            columns: vec![
                ("A", "a"),
                ("B", "b"),
                ("measure", "measure"),
                ("pairs", "pairs"),
                ("unpaired A/B", "unpaired"),
                ("mean A", "mean_a"),
                ("mean B", "mean_b"),
                ("B − A", "diff"),
                ("95% low", "ci_low"),
                ("95% high", "ci_high"),
                ("p", "p_value"),
                ("MDD", "mdd"),
            ],
            rows: Vec::new(),
        };
        let mut fams = Table {
            name: "compare_families",
            title: "Per family (task score, B − A)",
            note: "Tasks of paired runs paired by key; means over paired tasks.",
            columns: vec![
                ("A", "a"),
                ("B", "b"),
                ("family", "family"),
                ("tasks", "tasks"),
                ("mean A", "mean_a"),
                ("mean B", "mean_b"),
                ("B − A", "diff"),
            ],
            rows: Vec::new(),
        };
        for c in &self.contrasts {
            for (name, d) in [("checkpoint score", &c.score), ("success rate", &c.success)] {
                runs.rows.push(vec![
                    Cell::Text(c.a.clone()),
                    Cell::Text(c.b.clone()),
                    Cell::Text(name.into()),
                    Cell::Int(c.pairs as u64),
                    Cell::Text(format!("{}/{}", c.unpaired_a, c.unpaired_b)),
                    Cell::Num(d.mean_a, 3),
                    Cell::Num(d.mean_b, 3),
                    Cell::Num(d.diff, 3),
                    Cell::Num(d.ci_low, 3),
                    Cell::Num(d.ci_high, 3),
                    p(d),
                    opt(d.mdd),
                ]);
            }
            for f in &c.families {
                fams.rows.push(vec![
                    Cell::Text(c.a.clone()),
                    Cell::Text(c.b.clone()),
                    Cell::Text(f.family.clone()),
                    Cell::Int(f.tasks as u64),
                    Cell::Num(f.mean_a, 3),
                    Cell::Num(f.mean_b, 3),
                    Cell::Num(f.diff, 3),
                ]);
            }
        }
        let noise = Table {
            name: "compare_noise",
            title: "Noise floor (same agent, same scenarios, several trials)",
            note: "SD of the trial means over the scenarios every trial ran, their range, and the pooled within-scenario SD of one run's checkpoint score.",
            columns: vec![
                ("group", "group"),
                ("trials", "trials"),
                ("scenarios", "scenarios"),
                ("SD of trial means", "sd_of_means"),
                ("range", "range"),
                ("run SD", "run_sd"),
            ],
            rows: self
                .noise
                .iter()
                .map(|n| {
                    vec![
                        Cell::Text(n.group.clone()),
                        Cell::Int(n.trials as u64),
                        Cell::Int(n.scenarios as u64),
                        Cell::Num(n.sd_of_means, 3),
                        Cell::Num(n.range, 3),
                        Cell::Num(n.run_sd, 3),
                    ]
                })
                .collect(),
        };
        vec![runs, fams, noise]
    }

    /// Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# Comparison\n\n");
        for t in self.tables() {
            t.markdown(&mut out);
        }
        out
    }

    /// JSON, full precision.
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// One chart: each contrast's checkpoint-score difference with its interval,
    /// on a fixed −1..1 axis with the zero line.
    pub fn svg(&self) -> String {
        const W: f64 = 640.0;
        const LEFT: f64 = 220.0;
        const PLOT: f64 = 380.0;
        const ROW: f64 = 36.0;
        const TOP: f64 = 56.0;
        let x = |v: f64| LEFT + (v.clamp(-1.0, 1.0) + 1.0) / 2.0 * PLOT;
        let h = TOP + ROW * self.contrasts.len().max(1) as f64 + 40.0;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {W:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"12\">\n"
        );
        let _ = writeln!(
            s,
            "<text x=\"12\" y=\"24\" font-size=\"15\">Checkpoint score, B − A, with 95% bootstrap interval</text>"
        );
        let bottom = h - 40.0;
        for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] {
            let tx = x(tick);
            let stroke = if tick == 0.0 { "#000" } else { "#ccc" };
            let _ = writeln!(
                s,
                "<line x1=\"{tx:.1}\" y1=\"{TOP:.1}\" x2=\"{tx:.1}\" y2=\"{bottom:.1}\" stroke=\"{stroke}\"/>\n<text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{tick:+.1}</text>",
                bottom + 16.0
            );
        }
        for (i, c) in self.contrasts.iter().enumerate() {
            let y = TOP + ROW * i as f64 + ROW / 2.0;
            let label = esc(&short(&c.b, 32));
            let d = &c.score;
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#0072B2\" stroke-width=\"2\"/>\n<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#0072B2\"/>",
                LEFT - 8.0,
                y + 4.0,
                x(d.ci_low),
                x(d.ci_high),
                x(d.diff)
            );
        }
        s.push_str("</svg>\n");
        s
    }

    /// Writes compare.md, compare.json, the CSVs and compare.svg into `dir`.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut files = vec![
            (dir.join("compare.md"), self.markdown()),
            (dir.join("compare.json"), self.json()),
            (dir.join("compare.svg"), self.svg()),
        ];
        for t in self.tables() {
            files.push((dir.join(format!("{}.csv", t.name)), t.csv()));
        }
        for (path, text) in &files {
            // Never through a link planted where a file goes (a shared run directory).
            tbsim_engine::run_dir::write(path, text.as_bytes()).map_err(io_err(path))?;
        }
        Ok(files.into_iter().map(|(p, _)| p).collect())
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `s` cut to `n` characters, with an ellipsis at the front (paths end in the
/// distinguishing part).
fn short(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= n {
        s.to_owned()
    } else {
        let tail: String = chars[chars.len() - (n - 1)..].iter().collect();
        format!("…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(scenario: &str, seed: u64, trial: Option<u32>, score: f64) -> RunRecord {
        let text = serde_json::json!({
            "scenario": scenario, "agent": "x", "seed": seed, "trial": trial,
            "checkpoint_score": score, "success_rate": if score == 1.0 { 1.0 } else { 0.0 },
            "tasks": [{"key": "task/t", "family": "sales", "score": score, "success": score == 1.0}],
        });
        serde_json::from_value(text).unwrap()
    }

    fn group(label: &str, runs: Vec<RunRecord>) -> Group {
        Group {
            label: label.into(),
            runs,
        }
    }

    #[test]
    fn the_exact_permutation_test_matches_a_hand_count() {
        // d = [1, 2, 3]: sums of the 8 sign flips are ±6, ±4, ±2, ±0 -> |s| >= 6 twice.
        let (p, exact) = permutation_p(&[1.0, 2.0, 3.0], "t");
        assert!(exact);
        assert!((p - 2.0 / 8.0).abs() < 1e-12, "{p}");
        // No difference at all is as extreme as anything: p = 1.
        assert_eq!(permutation_p(&[0.0, 0.0], "t").0, 1.0);
    }

    #[test]
    fn the_random_permutation_test_is_seeded_and_sensible() {
        let d: Vec<f64> = (0..40).map(|i| 0.1 + 0.01 * f64::from(i % 3)).collect();
        let (p1, exact) = permutation_p(&d, "k");
        assert!(!exact);
        assert_eq!(p1, permutation_p(&d, "k").0, "same stream, same p");
        // Forty positive differences: only the all-positive flips are as extreme.
        assert!(p1 < 0.001, "{p1}");
        let noise: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 0.1 } else { -0.1 })
            .collect();
        assert!(permutation_p(&noise, "k").0 > 0.9);
    }

    #[test]
    fn the_bootstrap_interval_brackets_the_mean_and_is_reproducible() {
        let d = [0.1, 0.2, -0.05, 0.3, 0.15, 0.0, 0.25, 0.1];
        let (lo, hi) = bootstrap_ci(&d, "b");
        let m = mean(&d);
        assert!(lo < m && m < hi, "{lo} {m} {hi}");
        assert!(lo >= -0.05 && hi <= 0.3);
        assert_eq!((lo, hi), bootstrap_ci(&d, "b"));
        // A constant difference has a zero-width interval.
        assert_eq!(bootstrap_ci(&[0.2; 5], "b"), (0.2, 0.2));
    }

    #[test]
    fn runs_pair_by_scenario_seed_and_trial() {
        let a = group(
            "A",
            vec![
                run("s1", 1, None, 0.5),
                run("s2", 2, None, 0.0),
                run("s3", 3, None, 1.0),
            ],
        );
        // s2 under another seed does not pair; s4 has no partner.
        let b = group(
            "B",
            vec![
                run("s1", 1, None, 1.0),
                run("s2", 9, None, 1.0),
                run("s3", 3, None, 1.0),
                run("s4", 4, None, 1.0),
            ],
        );
        let c = Comparison::new(&[a, b]);
        let k = &c.contrasts[0];
        assert_eq!((k.pairs, k.unpaired_a, k.unpaired_b), (2, 1, 2));
        assert!((k.score.diff - 0.25).abs() < 1e-12);
        assert_eq!((k.score.mean_a, k.score.mean_b), (0.75, 1.0));
        assert_eq!(k.families[0].tasks, 2);
        assert!(k.score.sd.is_some() && k.score.mdd.is_some());
        // MDD = 2.8016 * sd / sqrt(2), sd of [0.5, 0] = 0.35355.
        let mdd = k.score.mdd.unwrap();
        assert!(
            (mdd - Z_SUM * (0.125f64).sqrt() / 2f64.sqrt()).abs() < 1e-9,
            "{mdd}"
        );
    }

    #[test]
    fn the_noise_floor_uses_scenarios_every_trial_ran() {
        let g = group(
            "A",
            vec![
                run("s1", 1, Some(0), 0.4),
                run("s1", 1, Some(1), 0.6),
                run("s2", 2, Some(0), 1.0),
                run("s2", 2, Some(1), 1.0),
                run("s3", 3, Some(0), 0.0),
            ],
        );
        let n = noise(&g).unwrap();
        assert_eq!((n.trials, n.scenarios), (2, 2));
        assert_eq!(n.trial_means, vec![0.7, 0.8]);
        assert!((n.range - 0.1).abs() < 1e-12);
        // Variances: s1 0.02, s2 0 -> pooled sqrt(0.01) = 0.1.
        assert!((n.run_sd - 0.1).abs() < 1e-12, "{}", n.run_sd);
        assert!(noise(&group("B", vec![run("s1", 1, None, 0.5)])).is_none());
    }

    #[test]
    fn output_is_deterministic_and_names_every_section() {
        let a = group(
            "A",
            (0..20)
                .map(|i| run(&format!("s{i}"), i, None, 0.5))
                .collect(),
        );
        let b = group(
            "B",
            (0..20)
                .map(|i| run(&format!("s{i}"), i, None, 0.6))
                .collect(),
        );
        let c1 = Comparison::new(&[a.clone(), b.clone()]);
        let c2 = Comparison::new(&[a, b]);
        assert_eq!(c1.markdown(), c2.markdown());
        assert_eq!(c1.svg(), c2.svg());
        let md = c1.markdown();
        for title in ["Paired difference", "Per family", "Noise floor"] {
            assert!(md.contains(title), "{md}");
        }
        // Twenty identical +0.1 differences: significant under the random test.
        let d = &c1.contrasts[0].score;
        assert!(!d.exact && d.p_value.unwrap() < 0.001);
        assert!((d.ci_low - 0.1).abs() < 1e-9 && (d.ci_high - 0.1).abs() < 1e-9);
    }
}
