//! The adversary library against every bundled suite: no content-blind agent may
//! score above the ceiling or solve a task (issue 8).
//!
//! Suites are discovered (every folder of scenarios under `content/scenarios/`), so
//! a new suite is covered without touching this file. The table printed (run with
//! `--nocapture`) gives each adversary's mean checkpoint score and tasks solved per
//! suite, and for each adversary over the ceiling, which scored checkpoints it passed
//! and how often: what the fixes still have to close.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tbsim::agent::adversary::{ADVERSARIES, by_name};
use tbsim::result::RunResult;
use tbsim::scenario::load_file;

use crate::util::{root, run};

/// Highest mean checkpoint score a content-blind agent may reach on a suite.
const CEILING: f64 = 0.05;

/// Adversaries to run: `TBSIM_ADVERSARIES` (comma-separated names), else all.
fn chosen() -> Vec<&'static str> {
    let all = ADVERSARIES.iter().map(|(n, _)| *n);
    match std::env::var("TBSIM_ADVERSARIES") {
        Ok(v) if !v.trim().is_empty() => {
            let want: Vec<&str> = v.split(',').map(str::trim).collect();
            all.filter(|n| want.contains(n)).collect()
        }
        _ => all.collect(),
    }
}

/// Every how many scenarios of a suite are run: `TBSIM_ADVERSARY_STRIDE`, default 5
/// (ten scenarios of a 50-scenario suite, every family of it in practice), so the
/// test stays quick in debug builds; set it to 1 for the full measurement.
fn stride() -> usize {
    std::env::var("TBSIM_ADVERSARY_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(5)
}

/// The bundled suites: folders of `.ron` scenarios, sorted, each with its files
/// (every `stride()`-th).
fn suites() -> Vec<(String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("content/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ron"))
            .collect();
        files.sort();
        let files: Vec<PathBuf> = files.into_iter().step_by(stride()).collect();
        if !files.is_empty() {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, files));
        }
    }
    out
}

/// Runs adversary `name` on every file, spread over the machine's threads; results in
/// file order.
fn run_all(name: &str, files: &[PathBuf]) -> Vec<RunResult> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<RunResult>>> = Mutex::new(vec![None; files.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(path) = files.get(i) else { break };
                    let r = run_one(name, path);
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

fn run_one(name: &str, path: &Path) -> RunResult {
    let loaded = load_file(path).unwrap();
    let mut agent = by_name(name).unwrap();
    run(&loaded, &mut agent, None).0
}

/// One adversary's figures on one suite.
struct Row {
    mean: f64,
    solved: usize,
    tasks: usize,
    /// Scored checkpoints as `family/checkpoint (kind, weight)` -> (runs where it
    /// passed, runs where it exists). Diagnostics are left out: they earn nothing.
    passed: BTreeMap<String, (usize, usize)>,
    /// Solved tasks as `scenario/task`.
    solved_tasks: Vec<String>,
}

fn row(results: &[RunResult]) -> Row {
    let mut passed: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut solved_tasks = Vec::new();
    let mut tasks = 0;
    for r in results {
        for t in &r.tasks {
            tasks += 1;
            if t.success {
                solved_tasks.push(format!("{}/{}", r.scenario, t.key));
            }
            for c in t.checkpoints.iter().filter(|c| c.kind.scored()) {
                let e = passed
                    .entry(format!("{}/{} ({:?}, w{})", t.family, c.key, c.kind, c.weight))
                    .or_default();
                e.1 += 1;
                if c.passed {
                    e.0 += 1;
                }
            }
        }
    }
    Row {
        mean: results.iter().map(|r| r.checkpoint_score).sum::<f64>() / results.len() as f64,
        solved: solved_tasks.len(),
        tasks,
        passed,
        solved_tasks,
    }
}

#[test]
fn content_blind_adversaries_stay_under_the_ceiling_on_every_suite() {
    let suites = suites();
    assert!(
        suites.iter().any(|(n, _)| n == "traineebench"),
        "the bundled suites are found"
    );
    let mut table = String::from("| adversary |");
    for (s, files) in &suites {
        write!(table, " {s} ({}) |", files.len()).unwrap();
    }
    table.push_str("\n|---|");
    table.push_str(&"---|".repeat(suites.len()));
    table.push('\n');
    let mut details = String::new();
    let mut failures = Vec::new();
    for name in chosen() {
        write!(table, "| {name} |").unwrap();
        for (suite, files) in &suites {
            let r = row(&run_all(name, files));
            // Progress on stderr: the whole table only prints at the end.
            eprintln!("{name} on {suite}: {:.3}, {} solved", r.mean, r.solved);
            write!(table, " {:.3} / {} solved |", r.mean, r.solved).unwrap();
            if r.mean > CEILING || r.solved > 0 {
                failures.push(format!(
                    "{name} on {suite}: mean {:.3}, {} of {} tasks solved",
                    r.mean, r.solved, r.tasks
                ));
                writeln!(details, "\n### {name} on {suite}: mean {:.3}", r.mean).unwrap();
                for (cp, (p, n)) in r.passed.iter().filter(|(_, (p, _))| *p > 0) {
                    writeln!(details, "- {cp}: {p}/{n}").unwrap();
                }
                if !r.solved_tasks.is_empty() {
                    writeln!(details, "- solved: {}", r.solved_tasks.join(", ")).unwrap();
                }
            }
        }
        table.push('\n');
    }
    println!("mean checkpoint score / tasks solved, ceiling {CEILING}\n\n{table}{details}");
    assert!(failures.is_empty(), "over the ceiling:\n{}", failures.join("\n"));
}
