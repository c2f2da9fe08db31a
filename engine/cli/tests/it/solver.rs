//! The independent solver against the generators' expected answers, every family:
//! single-task scenarios over seeds of every variant, and every scored checkpoint of
//! every task of the scenario must pass. The solver sees only tool results, so
//! agreement means each instance is solvable from what an agent can observe.
//!
//! Milestones (consulted, disclosed, tool called) are diagnostics that weigh
//! nothing, so only answers and events are required here. A follow-up whose gate
//! opened only at its deadline (or never) leaves no one time to work on it; such
//! tasks are counted apart ("no window"), as the generator's problem.
//!
//! Knobs (environment): `SOLVER_SEEDS` (seeds per variant), `SOLVER_FAMILY` (one
//! family key), `SOLVER_THREADS`, `SOLVER_DEBUG` (print the failing runs' calls).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tbsim_agents::Solver;
use tbsim_engine::agent::{Agent, Idle};
use tbsim_engine::result::RunResult;
use tbsim_gen::{Family, generate_scenario, to_ron};
use tbsim_scenario::{Check, LoadedScenario, Scenario};

use crate::util::{load_generated, one_task_plan, run};

/// Whether a check is a diagnostic milestone (weight 0 in the score).
fn milestone(c: &Check) -> bool {
    match c {
        Check::Consulted(..) | Check::Disclosed { .. } | Check::ToolCalled { .. } => true,
        Check::All(v) => v.iter().all(milestone),
        _ => false,
    }
}

/// Every variant of every Rust family (or of `SOLVER_FAMILY`), as (variant key,
/// family). Script families are solved by their own `solve`, which `tbsim family
/// check` runs on every instance (`family_script.rs`).
fn variants() -> Vec<(String, Family)> {
    let only = std::env::var("SOLVER_FAMILY").ok();
    Family::all_variants()
        .into_iter()
        .filter(|v| !matches!(v.family, Family::Script(..)))
        .filter(|v| only.as_deref().is_none_or(|o| o == v.family.key()))
        .map(|v| (v.key, v.family))
        .collect()
}

/// What happened with one seed.
enum Outcome {
    /// Every scored checkpoint passed; the count of tasks without a window.
    Agreed(u32),
    /// Generation refused the seed (not an instance).
    NoInstance,
    /// Scored checkpoints failed (`task:checkpoint`), and tasks without a window.
    Failed(Vec<String>, u32),
}

/// The scored checkpoints of `r` that failed (`task:checkpoint`), and the count of
/// tasks that had no window to be worked on.
fn judge(loaded: &LoadedScenario, r: &RunResult) -> (Vec<String>, u32) {
    let mut failed = Vec::new();
    let mut blocked = 0;
    for spec in &loaded.scenario.tasks {
        let got = r.tasks.iter().find(|t| t.key == spec.key);
        let window = got.is_some_and(|g| {
            g.released_at
                .as_deref()
                .is_some_and(|at| at.get(..16) < g.deadline.get(..16))
        });
        if !window {
            blocked += 1;
            continue;
        }
        for cp in &spec.checkpoints {
            let passed = got
                .and_then(|g| g.checkpoints.iter().find(|c| c.key == cp.key))
                .is_some_and(|c| c.passed);
            if cp.weight > 0 && !milestone(&cp.check) && !passed {
                failed.push(format!("{}:{}", spec.key, cp.key));
            }
        }
    }
    (failed, blocked)
}

fn solve_with(family: &Family, seed: u64, agent: &mut dyn Agent, debug: bool) -> Outcome {
    let plan = one_task_plan("solver", seed, "t", family.clone(), "2025-10-01");
    let Ok(s): Result<Scenario, _> = generate_scenario(seed, &plan) else {
        return Outcome::NoInstance;
    };
    let loaded = load_generated(&to_ron(&s), "solver.ron");
    let (r, lines) = run(&loaded, agent, Some(seed));
    let (failed, blocked) = judge(&loaded, &r);
    if failed.is_empty() {
        return Outcome::Agreed(blocked);
    }
    if debug {
        let mut out = format!("==== {} seed {seed}\n", family.key());
        for spec in &loaded.scenario.tasks {
            for cp in &spec.checkpoints {
                if !milestone(&cp.check) {
                    let _ = writeln!(out, "expected {}:{}: {:?}", spec.key, cp.key, cp.check);
                }
            }
        }
        for l in &lines {
            out.extend(l.chars().take(1500));
            out.push('\n');
        }
        println!("{out}");
    }
    Outcome::Failed(failed, blocked)
}

/// Per variant.
#[derive(Debug, Default)]
struct Tally {
    agreed: u32,
    runs: u32,
    not_generated: u32,
    /// Tasks released with no time left, or never released.
    no_window: u32,
    /// `seed: task:checkpoint, ...`, every failure.
    failures: Vec<String>,
}

/// Runs `seeds` of every variant on `SOLVER_THREADS` (default 2) threads.
fn sweep(seeds: impl Fn(&str) -> std::ops::Range<u64>) -> BTreeMap<String, Tally> {
    let all = variants();
    let jobs: Vec<(usize, u64)> = all
        .iter()
        .enumerate()
        .flat_map(|(v, (key, _))| seeds(key).map(move |s| (v, s)))
        .collect();
    let threads = std::env::var("SOLVER_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let debug = std::env::var("SOLVER_DEBUG").is_ok();
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(BTreeMap::<String, Tally>::new());
    for (key, _) in &all {
        tally.lock().unwrap().insert(key.clone(), Tally::default());
    }
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&(v, seed)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (key, family) = &all[v];
                    let o = solve_with(family, seed, &mut Solver::new(), debug);
                    let mut t = tally.lock().unwrap();
                    let e = t.get_mut(key).expect("every variant has a tally");
                    match o {
                        Outcome::Agreed(b) => {
                            e.runs += 1;
                            e.agreed += 1;
                            e.no_window += b;
                        }
                        Outcome::NoInstance => e.not_generated += 1,
                        Outcome::Failed(keys, b) => {
                            e.runs += 1;
                            e.no_window += b;
                            e.failures.push(format!("{seed}: {}", keys.join(", ")));
                        }
                    }
                }
            });
        }
    });
    tally.into_inner().unwrap()
}

/// The table of a sweep, per family then variant.
fn table(t: &BTreeMap<String, Tally>) -> String {
    let mut s = String::from(
        "| variant | agreed | runs | not generated | tasks without a window | failures (seed: task:checkpoint) |\n\
         |---|--:|--:|--:|--:|---|\n",
    );
    for (k, v) in t {
        let shown: Vec<&str> = v.failures.iter().take(8).map(String::as_str).collect();
        let more = v.failures.len().saturating_sub(shown.len());
        let _ = writeln!(
            s,
            "| {k} | {} | {} | {} | {} | {}{} |",
            v.agreed,
            v.runs,
            v.not_generated,
            v.no_window,
            shown.join("; "),
            if more > 0 {
                format!("; … {more} more")
            } else {
                String::new()
            }
        );
    }
    s
}

fn assert_all_agree(t: &BTreeMap<String, Tally>) {
    let table = table(t);
    let bad: Vec<&String> = t
        .iter()
        .filter(|(_, v)| !v.failures.is_empty())
        .map(|(k, _)| k)
        .collect();
    assert!(bad.is_empty(), "the solver disagrees on {bad:?}:\n{table}");
    let empty: Vec<&String> = t
        .iter()
        .filter(|(_, v)| v.runs == 0)
        .map(|(k, _)| k)
        .collect();
    assert!(empty.is_empty(), "no instance generated for {empty:?}");
}

/// `SOLVER_SEEDS`: `N` (seeds 0..N) or `A..B` (to look at particular seeds).
fn seeds_from_env() -> Option<std::ops::Range<u64>> {
    let v = std::env::var("SOLVER_SEEDS").ok()?;
    match v.split_once("..") {
        Some((a, b)) => Some(a.parse().ok()?..b.parse().ok()?),
        None => Some(0..v.parse().ok()?),
    }
}

/// The CI sample: every variant of every family, one seed where a family has many
/// variants (attendance, data completion), a few where it has few.
#[test]
fn solver_agrees_on_every_variant() {
    let per_family = |k: &str| -> std::ops::Range<u64> {
        let family = k.split('/').next().unwrap_or("");
        let n = variants()
            .iter()
            .filter(|(v, _)| v.starts_with(&format!("{family}/")))
            .count();
        seeds_from_env().unwrap_or(
            0..match n {
                0..=5 => 3,
                6..=20 => 2,
                _ => 1,
            },
        )
    };
    let t = sweep(per_family);
    assert_eq!(t.len(), variants().len());
    println!("{}", table(&t));
    assert_all_agree(&t);
}

/// The long sweep (200 seeds per variant unless `SOLVER_SEEDS` says otherwise);
/// writes its table to `runs/validity/solver-table.md` under the repository root.
#[test]
#[ignore = "long: run with --release -- --ignored"]
fn solver_agrees_over_200_seeds() {
    let seeds = seeds_from_env().unwrap_or(0..200);
    let n = seeds.end - seeds.start;
    let started = std::time::Instant::now();
    let t = sweep(|_| seeds.clone());
    let mut out = table(&t);
    let _ = writeln!(
        out,
        "\n{n} seeds per variant, {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let dir = crate::util::root().join("runs/validity");
    std::fs::create_dir_all(&dir).unwrap();
    let name = match std::env::var("SOLVER_FAMILY") {
        Ok(f) => format!("solver-table-{f}.md"),
        Err(_) => "solver-table.md".into(),
    };
    std::fs::write(dir.join(name), &out).unwrap();
    println!("{out}");
    assert_all_agree(&t);
}

#[test]
fn the_harness_fails_an_agent_that_does_nothing() {
    // The same judgement on the idle agent: every family's answers must fail.
    let mut families = BTreeMap::new();
    for (key, family) in Family::all_variants()
        .into_iter()
        .map(|v| (v.key, v.family))
    {
        families.entry(family.key()).or_insert((key, family));
    }
    for (key, family) in families.values() {
        let o = solve_with(family, 0, &mut Idle::default(), false);
        assert!(matches!(o, Outcome::Failed(..)), "{key}: idle passed");
    }
}

/// The bundled scenarios (the three TraineeBench suites and the examples): multi-task
/// and multi-day, as published. Writes `runs/validity/solver-suites.md`.
#[test]
#[ignore = "long: run with --release -- --ignored"]
fn solver_agrees_on_the_bundled_suites() {
    let root = crate::util::root().join("content/scenarios");
    let mut files: Vec<std::path::PathBuf> = crate::util::bundled();
    for suite in ["traineebench", "traineebench-cl", "traineebench-plus"] {
        let mut v: Vec<_> = std::fs::read_dir(root.join(suite))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ron"))
            .collect();
        v.sort();
        files.extend(v);
    }
    let mut out = String::from(
        "| scenario | tasks agreed | tasks | without a window | failures |\n|---|--:|--:|--:|---|\n",
    );
    let mut bad = Vec::new();
    for f in &files {
        let loaded = tbsim_scenario::load_file(f).unwrap();
        let (r, _) = run(&loaded, &mut Solver::new(), None);
        let (failed, blocked) = judge(&loaded, &r);
        let tasks = loaded.scenario.tasks.len() as u32;
        let failed_tasks: std::collections::BTreeSet<&str> =
            failed.iter().filter_map(|k| k.split(':').next()).collect();
        let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        let _ = writeln!(
            out,
            "| {name} | {} | {tasks} | {blocked} | {} |",
            tasks - blocked - failed_tasks.len() as u32,
            failed.join(", ")
        );
        if !failed.is_empty() {
            bad.push(name);
        }
    }
    let dir = crate::util::root().join("runs/validity");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("solver-suites.md"), &out).unwrap();
    println!("{out}");
    assert!(bad.is_empty(), "the solver disagrees on {bad:?}:\n{out}");
}
