//! The adversary library against every bundled suite: no content-blind agent may
//! score above the ceiling or solve a task (issue 8).
//!
//! Suites are discovered (every folder of scenarios under `content/scenarios/`), so
//! a new suite is covered without touching this file. The table printed (run with
//! `--nocapture`) gives each adversary's mean checkpoint score and tasks solved per
//! suite, and for each adversary over the ceiling, which scored checkpoints it passed
//! and how often: what the fixes still have to close.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::json;
use tbsim_engine::result::RunResult;
use tbsim_gen::{
    Family, ads_strategy, attendance, data_completion, kb_fix, meeting_attend, meeting_book,
};
use tbsim_scenario::{Check, DomainCheck, LoadedScenario, load_file};
use tbsim_validity::adversary::{ADVERSARIES, by_name};

use crate::util::{
    assert_solvable, generate_one, load_generated, one_task_suite, root, run, write_answer,
};

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

/// Every how many scenarios of a suite are run besides those `sample` adds to cover
/// every family: `TBSIM_ADVERSARY_STRIDE`, default 50 (the first scenario of a
/// 50-scenario suite, then the family cover, four to six scenarios a suite), so the
/// test stays as short as a debug build allows; set it to 1 for the full measurement
/// (`runs/validity/adversary.md`).
fn stride() -> usize {
    std::env::var("TBSIM_ADVERSARY_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(50)
}

/// The families of a scenario's tasks.
fn families(path: &Path) -> BTreeSet<String> {
    let loaded = load_file(path).unwrap();
    loaded
        .scenario
        .tasks
        .iter()
        .map(|t| t.family.clone())
        .collect()
}

/// Every `stride`-th of `files` (sorted), then, in file order, each further file that
/// holds a family the sample lacks: deterministic, and no family of the suite is left
/// out however large the stride.
fn sample(files: &[PathBuf], stride: usize) -> Vec<PathBuf> {
    let fams: Vec<BTreeSet<String>> = files.iter().map(|f| families(f)).collect();
    let mut take: Vec<bool> = (0..files.len()).map(|i| i % stride == 0).collect();
    let mut covered: BTreeSet<&String> = fams
        .iter()
        .zip(&take)
        .filter(|(_, t)| **t)
        .flat_map(|(f, _)| f)
        .collect();
    for (i, f) in fams.iter().enumerate() {
        if !take[i] && f.iter().any(|x| !covered.contains(x)) {
            take[i] = true;
            covered.extend(f);
        }
    }
    files
        .iter()
        .zip(take)
        .filter(|(_, t)| *t)
        .map(|(f, _)| f.clone())
        .collect()
}

/// The `.ron` files directly in `dir`, sorted.
fn ron_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}

/// The bundled suites, each with its sample: the examples (the files directly in
/// `content/scenarios/`), then every folder of scenarios under it, sorted.
fn suites() -> Vec<(String, Vec<PathBuf>)> {
    let base = root().join("content/scenarios");
    let mut out = vec![("examples".to_owned(), ron_files(&base))];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, ron_files(&d)));
    }
    out.retain(|(_, f)| !f.is_empty());
    for (_, files) in &mut out {
        *files = sample(files, stride());
    }
    out
}

#[test]
fn the_sample_covers_every_family_of_every_suite() {
    let base = root().join("content/scenarios");
    for (name, sampled) in suites() {
        let dir = if name == "examples" {
            base.clone()
        } else {
            base.join(&name)
        };
        let all: BTreeSet<String> = ron_files(&dir).iter().flat_map(|f| families(f)).collect();
        let got: BTreeSet<String> = sampled.iter().flat_map(|f| families(f)).collect();
        assert_eq!(got, all, "{name}: the sample misses a family");
    }
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
                    .entry(format!(
                        "{}/{} ({:?}, w{})",
                        t.family, c.key, c.kind, c.weight
                    ))
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
    assert!(
        failures.is_empty(),
        "over the ceiling:\n{}",
        failures.join("\n")
    );
}

// The attacks behind the breaches the full measurement found, one by one, each on
// freshly generated instances so that they hold for the generator and not just for
// the bundled draw.

/// `(loaded scenario, its first task)` for one task of `family` at `seed`.
fn one(name: &str, seed: u64, family: Family) -> LoadedScenario {
    let suite = one_task_suite(name, seed, "t", family);
    load_generated(&generate_one(&suite), &format!("{name}-{seed}.ron"))
}

/// Breach: joining every meeting solved meeting_attend, whose only scored checkpoint
/// was attendance. The meeting now sets a figure the intern must record (weight 5 of
/// the task's 6); the adversary attends on time, hears the figure in the join
/// result, cannot use it, and earns the attendance sixth alone.
#[test]
fn joining_every_meeting_does_not_solve_meeting_attend() {
    for seed in 0..6 {
        let loaded = one(
            "attend",
            seed,
            Family::MeetingAttend(meeting_attend::Params::default()),
        );
        for name in ["join-all-meetings", "book-by-conflicts"] {
            let mut agent = by_name(name).unwrap();
            let r = run(&loaded, &mut agent, None).0;
            let attend = r.tasks.iter().find(|t| t.key == "task/t").unwrap();
            let passed = |k: &str| {
                attend
                    .checkpoints
                    .iter()
                    .find(|c| c.key == k)
                    .unwrap_or_else(|| panic!("seed {seed}: no checkpoint {k}"))
                    .passed
            };
            assert!(passed("attended_on_time"), "seed {seed}: {name} attends");
            assert!(
                !passed("decision_recorded"),
                "seed {seed}: {name} has the cap"
            );
            assert!(
                r.tasks.iter().all(|t| !t.success),
                "seed {seed}: {name}: {r:?}"
            );
            assert!(
                // attended (weight 1) of attended + decision (weight 50)
                (attend.score - 1.0 / 51.0).abs() < 1e-9,
                "seed {seed}: {name} scored {} on attending",
                attend.score
            );
        }
        assert_solvable(&loaded, &format!("meeting_attend seed {seed}"));
    }
}

/// Breach: book-by-conflicts booked the brief's slot and title with everyone and
/// joined it, passing `booked` and `attended_on_time` (2 of 4) without asking
/// anyone. Both now need the right guest list.
#[test]
fn booking_the_brief_with_everyone_earns_nothing_in_meeting_book() {
    for seed in 0..6 {
        let loaded = one(
            "book",
            seed,
            Family::MeetingBook(meeting_book::Params::default()),
        );
        let mut agent = by_name("book-by-conflicts").unwrap();
        let (r, lines) = run(&loaded, &mut agent, None);
        assert!(
            lines.iter().any(|l| l.contains("\"book_meeting\"")),
            "seed {seed}: the adversary books"
        );
        assert_eq!(r.checkpoint_score, 0.0, "seed {seed}: {r:?}");
        assert_solvable(&loaded, &format!("meeting_book seed {seed}"));
    }
}

/// Breach: enumerate-candidates messaged every chart owner the articles name with
/// all the old IDs, then swapped each old ID for the other ID on its reply line,
/// solving kb_fix. Owners now give a withdrawn and a current rebuild on lines of
/// their own, so the swap links nothing or a withdrawn chart.
#[test]
fn swapping_ids_from_replies_does_not_fix_kb_links() {
    for seed in 0..6 {
        // Even seeds: one article with one link, the instance a lucky guess
        // would find easiest; odd seeds: drawn.
        let params = if seed % 2 == 0 {
            kb_fix::Params {
                articles: Some(1),
                links: Some((1, 1)),
                owners_per_article: Some(1),
                ..Default::default()
            }
        } else {
            kb_fix::Params::default()
        };
        let loaded = one("kb", seed, Family::KbFix(params));
        let mut agent = by_name("enumerate-candidates").unwrap();
        let (r, lines) = run(&loaded, &mut agent, None);
        assert!(
            lines.iter().any(|l| l.contains("\"disclosure\"")),
            "seed {seed}: an owner answered, so the swap was tried"
        );
        assert_eq!(r.checkpoint_score, 0.0, "seed {seed}: {r:?}");
        assert_solvable(&loaded, &format!("kb_fix seed {seed}"));
    }
}

/// Breach: filling every CSV blank with its neighbours' mean solved daily
/// interpolation whenever every gap was a single day. Every instance now has a gap
/// of two days at least.
#[test]
fn neighbour_means_do_not_solve_daily_interpolation() {
    for seed in 0..6 {
        let level = if seed % 2 == 0 {
            data_completion::Level::VeryEasy
        } else {
            data_completion::Level::Easy
        };
        let loaded = one(
            "interp",
            seed,
            Family::DataCompletion(data_completion::Params {
                domain: Some(data_completion::DataDomain::Inventory),
                task_type: Some(data_completion::TaskType::DailyInterpolation),
                difficulty: Some(level),
                ..Default::default()
            }),
        );
        let mut agent = by_name("enumerate-candidates").unwrap();
        let r = run(&loaded, &mut agent, None).0;
        let t = &r.tasks[0];
        assert!(!t.success, "seed {seed}: {t:?}");
        assert!(
            t.checkpoints
                .iter()
                .all(|c| !c.passed || !c.kind.scored() || c.key != "values_correct"),
            "seed {seed}: the blind fill is right: {t:?}"
        );
        assert_solvable(&loaded, &format!("daily interpolation seed {seed}"));
    }
}

/// Breach: in a clean month "has_late_or_early: false, employees: []" was the whole
/// answer, so the blind prior passed about one instance in five. Every instance now
/// also asks for the days present in scope, which only the punches give.
#[test]
fn a_blind_clean_answer_fails_every_has_late_or_early_instance() {
    let mut clean = 0;
    for seed in 0..40 {
        let loaded = one(
            "flag",
            seed,
            Family::Attendance(attendance::Params {
                task_type: Some(attendance::StatType::HasLateOrEarly),
                ..Default::default()
            }),
        );
        let t = &loaded.scenario.tasks[0];
        let (path, is_clean) = t
            .checkpoints
            .iter()
            .find_map(|c| match &c.check {
                Check::All(v) => v.iter().find_map(|x| match x {
                    Check::JsonStringSet { path, expected, .. } => {
                        Some((path.clone(), expected.is_empty()))
                    }
                    _ => None,
                }),
                _ => None,
            })
            .expect("the flag checkpoint judges the employee list");
        clean += usize::from(is_clean);
        for blind in [
            r#"{"has_late_or_early": false, "employees": []}"#,
            r#"{"has_late_or_early": false, "employees": [], "present_days": 0}"#,
            r#"{"has_late_or_early": true, "employees": [], "present_days": 0}"#,
        ] {
            let r = write_answer(&loaded, &path, blind);
            assert_eq!(r.tasks[0].score, 0.0, "seed {seed}: {blind} scored");
        }
        assert_solvable(&loaded, &format!("attendance seed {seed}"));
    }
    assert!(
        clean >= 3,
        "only {clean} clean months in 40: the attack was not tried"
    );
}

/// Breach: ads `within_budget` passed for any one cheap channel. A plan that is not
/// worked out (the cheapest channel, or the cheapest few that fit, with or without
/// made-up totals) now earns nothing.
#[test]
fn a_cheap_blind_plan_earns_nothing_in_ads_strategy() {
    for seed in 0..10 {
        let loaded = one(
            "ads",
            seed,
            Family::AdsStrategy(ads_strategy::Params::default()),
        );
        let t = &loaded.scenario.tasks[0];
        let b = t
            .checkpoints
            .iter()
            .find_map(|c| match &c.check {
                Check::Domain(d) => match d.as_ref() {
                    DomainCheck::Budget(b) => Some(b.clone()),
                    _ => None,
                },
                _ => None,
            })
            .expect("ads strategy judges a budget");
        let mut by_cost = b.items.clone();
        by_cost.sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)));
        // The cheapest channels that fit, taken in order of cost.
        let mut fit = Vec::new();
        let mut spent = 0;
        for (id, cost, _) in &by_cost {
            if spent + cost <= b.capacity {
                spent += cost;
                fit.push(id.clone());
            }
        }
        for plan in [
            json!({"selected": [by_cost[0].0], "total_cost": 0, "total_exposure": 0}),
            json!({"selected": [by_cost[0].0]}),
            json!({"selected": fit, "total_cost": 1, "total_exposure": 1}),
        ] {
            let r = write_answer(&loaded, &b.path, &plan.to_string());
            assert_eq!(r.tasks[0].score, 0.0, "seed {seed}: {plan} scored");
        }
        assert_solvable(&loaded, &format!("ads seed {seed}"));
    }
}
