//! The answer-in-observation scan (issue 25): it must find a planted echo leak,
//! pass a scenario without one, and hold every family to the share in CI.
//!
//! The planted scenarios are bundled scenarios edited here, with the leak written
//! from the checkpoint's own expected answer, so they keep testing the scan after
//! the generators stop leaking.

use std::collections::BTreeSet;

use tbsim_gen::{Family, generate_scenario, to_ron};
use tbsim_scenario::{Check, Content, LoadedScenario};
use tbsim_validity::scan::{CheckpointScan, Tally, scan};

use crate::util::{load_generated, one_task_plan, root, scenario, tbsim, text};

fn rules_for(scans: &[CheckpointScan], checkpoint: &str) -> BTreeSet<String> {
    scans
        .iter()
        .find(|s| s.checkpoint == checkpoint)
        .unwrap_or_else(|| panic!("no checkpoint {checkpoint}"))
        .solved_by
        .clone()
}

fn json_number(c: &Check) -> f64 {
    match c {
        Check::JsonNumber { expected, .. } => *expected,
        Check::All(v) => v
            .iter()
            .map(json_number)
            .find(|x| !x.is_nan())
            .unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// meeting_attend's leak: the cap to record is the only number announced in the
/// meeting. Planted: the notes state the expected cap and no other figure.
#[test]
fn the_scan_finds_a_cap_that_is_the_only_number_of_its_meeting() {
    let mut s = scenario("meeting-check-sum");
    let cap = json_number(
        &s.scenario.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "decision_recorded")
            .unwrap()
            .check,
    );
    assert!(cap.is_finite());
    s.scenario.meetings[0].notes = format!(
        "The chair opens the meeting: next month's purchasing budget is capped at {cap} EUR. Then they go round the table for purchase requests."
    );
    let got = rules_for(&scan(&s, None), "decision_recorded");
    assert!(got.contains("only number of meeting"), "{got:?}");

    // The same meeting stating the cap in words leaves nothing to copy.
    s.scenario.meetings[0].notes = "The chair opens the meeting: next month's purchasing budget is capped at five thousand euros. Then they go round the table for purchase requests.".into();
    let cap_words = s.scenario.tasks[0]
        .checkpoints
        .iter_mut()
        .find(|c| c.key == "decision_recorded")
        .unwrap();
    if let Check::JsonNumber { expected, .. } = &mut cap_words.check {
        *expected = 5000.0;
    }
    let got = rules_for(&scan(&s, None), "decision_recorded");
    assert!(got.is_empty(), "{got:?}");
}

fn set_file(s: &mut LoadedScenario, path: &str, text: &str) {
    let f = s
        .scenario
        .files
        .iter_mut()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no file {path}"));
    f.content = Content::Text(text.into());
}

/// transaction_review's leak: with no abnormal supplier, `[]` plus the largest
/// number of the manual is the whole answer. Planted: a page anyone can list (the
/// real manual is listed only once its owner names it, and relaying the objective
/// names nothing) whose largest figure is the expected approval limit.
#[test]
fn the_scan_finds_an_empty_list_and_the_manuals_largest_number() {
    const MANUAL: &str = "drive/finance/review/transaction_review_manual.md";
    const PAGE: &str = "drive/finance/review_summary.md";
    let mut s = scenario("transactions-none-abnormal");
    let limit = json_number(&s.scenario.tasks[0].checkpoints[1].check);
    assert!(limit.is_finite() && limit > 100.0);
    let mut page = s
        .scenario
        .files
        .iter()
        .find(|f| f.path == MANUAL)
        .expect("the manual")
        .clone();
    page.path = PAGE.into();
    s.scenario.files.push(page);
    set_file(
        &mut s,
        PAGE,
        &format!(
            "# Transaction review\n\nA supplier is abnormal when it has no rating, fewer than 3 months of history, 4 or more payments a month and amounts just under the single-approval limit of {limit}."
        ),
    );
    let got = rules_for(&scan(&s, None), "suppliers_correct");
    let want = format!("empty list + largest number of file {PAGE}");
    assert!(got.contains(&want), "{got:?}");

    // Spelled out in words, the limit is no longer there to copy.
    set_file(
        &mut s,
        PAGE,
        "# Transaction review\n\nA supplier is abnormal when it has no rating, a short history, several payments a month and amounts just under the single-approval limit (ask Finance for its value).",
    );
    let got = rules_for(&scan(&s, None), "suppliers_correct");
    assert!(got.is_empty(), "{got:?}");
}

/// The meeting the cap is announced in, planted with the cap as its only number
/// (or, with `words`, with no number at all).
fn plant_cap(s: &mut LoadedScenario, words: bool) {
    let cap = json_number(
        &s.scenario.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "decision_recorded")
            .unwrap()
            .check,
    );
    s.scenario.meetings[0].notes = if words {
        "The chair opens the meeting: next month's purchasing budget is capped as agreed last week. Then they go round the table for purchase requests.".into()
    } else {
        format!(
            "The chair opens the meeting: next month's purchasing budget is capped at {cap} EUR. Then they go round the table for purchase requests."
        )
    };
}

/// A follow-up released only when the cap is recorded right: the scan must play the
/// rule that records it, reach the follow-up and scan it. Planted: the follow-up's
/// own objective states its answer as its only number. Without unlocking, the
/// follow-up is never released to the scan and nothing is found; it is released by
/// the oracle's answer to the task it waits on.
#[test]
fn the_scan_unlocks_follow_ups_gated_on_a_right_answer() {
    let mut s = scenario("meeting-check-sum");
    plant_cap(&mut s, false);
    let first = s.scenario.tasks[0].clone();
    let mut follow = first.clone();
    follow.key = "task/follow".into();
    follow.title = "Log the order number".into();
    follow.objective = "Thanks for the cap. Now record purchase order 48213 in `workspace/po.json` as {\"po\": <number>}.".into();
    follow.release = tbsim_scenario::Release::AfterCheckpoint {
        task: first.key.clone(),
        checkpoint: "decision_recorded".into(),
    };
    follow.deadline = "2025-10-02T17:00".into();
    let mut cp = first
        .checkpoints
        .iter()
        .find(|c| c.key == "decision_recorded")
        .unwrap()
        .clone();
    cp.key = "po_recorded".into();
    cp.check = Check::JsonNumber {
        path: "workspace/po.json".into(),
        pointer: "/po".into(),
        expected: 48213.0,
        tolerance: 0.5,
    };
    follow.checkpoints = vec![cp];
    follow.plan = Vec::new();
    s.scenario.tasks.push(follow);
    let scans = scan(&s, None);
    let po = scans
        .iter()
        .find(|c| c.checkpoint == "po_recorded")
        .unwrap();
    assert!(po.reached, "the follow-up was not unlocked");
    assert!(
        po.solved_by.contains("only number of objective"),
        "{:?}",
        po.solved_by
    );
    // The oracle's answer file is not a source: the cap is found in the meeting.
    let cap = rules_for(&scans, "decision_recorded");
    assert!(!cap.is_empty());
    assert!(cap.iter().all(|l| !l.contains("workspace/")), "{cap:?}");

    // With no cap to copy, the rules solve nothing of the first task, and the
    // follow-up is reached all the same: the oracle's answer closes what it waits
    // on, so a leak in a follow-up is seen whether or not its gate is guessable.
    plant_cap(&mut s, true);
    let scans = scan(&s, None);
    assert!(rules_for(&scans, "decision_recorded").is_empty());
    let po = scans
        .iter()
        .find(|c| c.checkpoint == "po_recorded")
        .unwrap();
    assert!(po.reached, "{po:?}");
    assert!(po.solved_by.contains("only number of objective"), "{po:?}");
}

/// meeting_book, planted: nobody in the department has a clash, so the right guest
/// list is the department the objective names, which a rule over the directory
/// books without reading a reply. Before bookings were scanned, no booking
/// checkpoint was ever solved.
#[test]
fn the_scan_books_a_guest_list_chosen_by_a_generic_rule() {
    use tbsim_gen::meeting_book::{Kind, Params};
    let family = Family::MeetingBook(Params {
        kind: Some(Kind::Department),
        start: None,
        duration_min: None,
        conflicts: Some(1),
    });
    let plan = one_task_plan("scan", 3, "t", family, "2025-10-01");
    let generated = generate_scenario(3, &plan).unwrap();
    let mut s = load_generated(&to_ron(&generated), "scan.ron");
    for cp in &mut s.scenario.tasks[0].checkpoints {
        if let Check::Booked {
            must_invite,
            must_not_invite,
            ..
        } = &mut cp.check
        {
            must_invite.append(must_not_invite);
            must_invite.sort();
        }
    }
    let scans = scan(&s, Some(3));
    let got = rules_for(&scans, "attendees_right");
    assert!(
        got.iter().any(
            |l| l.starts_with("booking at the objective's first two times")
                && l.contains("with the departments the objective names")
        ),
        "{got:?}"
    );
    let booked = rules_for(&scans, "booked");
    assert!(
        booked
            .iter()
            .any(|l| l.contains("under the objective's quoted title")),
        "{booked:?}"
    );
}

/// A scenario without a leak passes: two abnormal suppliers among several, which
/// no rule lists.
#[test]
fn the_scan_passes_a_scenario_without_a_leak() {
    let s = scenario("transactions-two-abnormal");
    let scans = scan(&s, None);
    let scored: Vec<&CheckpointScan> = scans.iter().filter(|c| c.reached).collect();
    assert!(!scored.is_empty());
    for c in scored {
        assert!(
            c.solved_by.is_empty(),
            "{}: {:?}",
            c.checkpoint,
            c.solved_by
        );
    }
}

/// Same input, same bytes out; a leak exits 1 and --allow lets it through.
#[test]
fn the_scan_command_is_deterministic_and_gates_on_the_share() {
    let leak = root().join("content/scenarios/meeting-check-sum.ron");
    let none = root().join("content/scenarios/transactions-two-abnormal.ron");
    let args = |p: &std::path::Path| {
        vec![
            "validity".to_owned(),
            "scan".into(),
            "--json".into(),
            "--threads".into(),
            "2".into(),
            p.to_str().unwrap().into(),
        ]
    };
    let run = |a: &[String]| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        tbsim(&a, &root())
    };
    let a = run(&args(&none));
    assert!(a.status.success(), "{}", text(&a).1);
    let b = run(&args(&none));
    assert_eq!(a.stdout, b.stdout, "same input, same bytes");
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["failing"], serde_json::json!([]));

    // Today's bundled meeting announces its cap as its only number; whether or
    // not it still does, the exit code must agree with the report.
    let l = run(&args(&leak));
    let v: serde_json::Value = serde_json::from_slice(&l.stdout).unwrap();
    let failing = v["failing"].as_array().unwrap().clone();
    assert_eq!(l.status.success(), failing.is_empty(), "{v}");
    if !failing.is_empty() {
        let mut a = args(&leak);
        for f in &failing {
            a.push("--allow".into());
            a.push(f.as_str().unwrap().into());
        }
        assert!(run(&a).status.success());
    }
}

/// Rows over the share that are known and allowed while an open issue closes them:
/// reported, not failed. Empty: a row may only be added with the issue that will
/// close it.
///
/// Issue 37: found when the scan began to ask clue holders as an agent asks (before,
/// every reply it saw was a refusal); the generators' fix is item 3 of that issue.
/// `family check` still fails these families (their release records are under
/// `runs/validity/`).
const KNOWN_LEAKS: &[&str] = &[
    "event_planning/event_date",
    "meeting_book/attended_on_time",
    "meeting_book/attendees_right",
    "meeting_book/booked",
    "website_monitor/owner_named",
];

/// Seeds per family in CI: spread over its variants (seed `i` takes variant
/// `i % variants`). The full measurement, 200 seeds of every variant in release,
/// is `tbsim validity scan content/suites/traineebench-plus.ron`
/// (`runs/validity/scan.md`); a debug build scans about two instances a second
/// on the shared CI machine, so CI takes a sample.
const CI_SEEDS_PER_FAMILY: u64 = 16;

/// Rows scanned in fewer instances than this are reported but not gated: at 5%,
/// one chance hit in a handful of instances says nothing.
const MIN_SUPPORT: u64 = 10;

/// Fewest instances the best rule must solve for a row to fail in CI: in a
/// 10-20 instance sample one coincidence (a handbook figure equal to an answer)
/// is already over 5%, two are not a coincidence. The full sweep has no such floor.
const MIN_HITS: u64 = 2;

/// Scans `jobs` on every core (up to eight) and tallies them in input order.
fn scan_jobs(jobs: &[LoadedScenario]) -> Tally {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![Vec::new(); jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = scan(job, Some(job.scenario.seed));
                    results.lock().unwrap()[i] = r;
                }
            });
        }
    });
    let mut tally = Tally::default();
    for r in results.into_inner().unwrap() {
        tally.add(&r, "task/t");
    }
    tally
}

/// Seeds `0..seeds` of every variant whose key starts with `prefix`, as one-task
/// instances, scanned.
fn scan_variants(prefix: &str, seeds: u64) -> Tally {
    let mut jobs = Vec::new();
    for v in Family::all_variants()
        .into_iter()
        .filter(|v| v.key.starts_with(prefix))
    {
        for seed in 0..seeds {
            let plan = one_task_plan("scan", seed, "t", v.family.clone(), "2025-10-01");
            let s = generate_scenario(seed, &plan)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", v.key));
            jobs.push(load_generated(&to_ron(&s), "scan.ron"));
        }
    }
    assert!(!jobs.is_empty(), "no variant starts with {prefix}");
    scan_jobs(&jobs)
}

/// No rule solves the row in any instance. Stricter than the 5% gate, so that a
/// sample small enough for a debug build still tells the leak from its fix (the old
/// generators fail it on these seeds; see each test).
fn assert_no_rule_solves(t: &Tally, row: &str) {
    println!("{}", t.markdown(0.05));
    let r = t
        .rows
        .get(row)
        .unwrap_or_else(|| panic!("no row {row}:\n{}", t.markdown(0.05)));
    assert!(r.scanned() >= 30, "{row}: only {} scanned", r.scanned());
    assert_eq!(
        r.any,
        0,
        "{row}: solved by {:?} of {} scanned",
        r.by_rule,
        r.scanned()
    );
}

/// The release sweep found attendance averages equal to the intern handbook's first
/// number (1) in 10% of instances: an average of exactly one day per person (and the
/// median of its list numbers, 2.5, as average late days). Averages are now never
/// within their tolerance of a whole or half number. Before: 2 and 4 of these 40.
#[test]
fn attendance_averages_are_never_a_figure_a_document_states() {
    let t = scan_variants("attendance/attendance_statistics/", 8);
    for row in [
        "attendance/avg_absence_days_correct",
        "attendance/avg_late_days_correct",
        "attendance/avg_early_days_correct",
    ] {
        assert_no_rule_solves(&t, row);
    }
}

/// Absence totals equalled the handbook's largest number (4) in 8% of instances: a
/// department's month is a handful of days. Totals are now at least ten and never a
/// number the rules manual or the handbook states. Before: 7 of these 100.
#[test]
fn attendance_absence_totals_are_never_a_stated_figure() {
    let t = scan_variants("attendance/total_absence_days/", 20);
    assert_no_rule_solves(&t, "attendance/total_absence_days_correct");
}

/// A team's active headcount (four to seven) equalled the handbook's largest number
/// in 20% of instances. The count is now judged with the IDs it counts. Before: 13 of
/// these 40.
#[test]
fn sales_headcount_is_judged_with_the_ids_it_counts() {
    let t = scan_variants("sales/sales_statistics", 40);
    assert_no_rule_solves(&t, "sales/headcount");
}

/// The team count's JSON example named a real team (`["North"]`), which with a
/// handbook `1` was the right answer whenever North alone moved (15%). The example
/// now names no team. Before: 7 of these 40.
#[test]
fn sales_team_count_example_names_no_team() {
    let t = scan_variants("sales/all_depts_qoq_count/", 20);
    assert_no_rule_solves(&t, "sales/teams");
}

/// urgent_interrupt's forward request: the 200-seed release scan found "send the
/// first row of the contract register" right in 33 of 400 instances (8%): the
/// register had 8-10 rows and the answer's row was placed uniformly. It now has
/// 22-28 rows and the answer is never the first. Before: 2 of these 60.
#[test]
fn the_contract_to_forward_is_never_the_registers_first_row() {
    let t = scan_variants("urgent_interrupt/forward/", 30);
    assert_no_rule_solves(&t, "urgent_interrupt/reference_forwarded");
}

#[test]
fn no_extractor_solves_more_than_five_percent_of_any_family() {
    // Rust families; script families are scanned by their gate (`tbsim family
    // check`, at 200 seeds in release and in CI by `family_script.rs`).
    let variants: Vec<tbsim_gen::Variant> = Family::all_variants()
        .into_iter()
        .filter(|v| !matches!(v.family, Family::Script(..)))
        .collect();
    let mut keys: Vec<&str> = variants.iter().map(|v| v.family.key()).collect();
    keys.dedup();
    let mut jobs: Vec<LoadedScenario> = Vec::new();
    for key in &keys {
        let of: Vec<&tbsim_gen::Variant> =
            variants.iter().filter(|v| v.family.key() == *key).collect();
        for seed in 0..CI_SEEDS_PER_FAMILY {
            let v = of[seed as usize % of.len()];
            let plan = one_task_plan("scan", seed, "t", v.family.clone(), "2025-10-01");
            if let Ok(s) = generate_scenario(seed, &plan) {
                jobs.push(load_generated(&to_ron(&s), "scan.ron"));
            }
        }
    }
    let tally = scan_jobs(&jobs);
    println!("{}", tally.markdown(0.05));
    let mut failing = Vec::new();
    for (k, r) in tally.over(0.05) {
        if r.scanned() < MIN_SUPPORT || r.best().is_none_or(|b| b.1 < MIN_HITS) {
            continue;
        }
        if KNOWN_LEAKS.contains(&k) {
            eprintln!("known leak (allow-listed): {k}: {:?}", r.best());
        } else {
            failing.push(format!("{k}: {:?} of {}", r.best(), r.scanned()));
        }
    }
    assert!(
        failing.is_empty(),
        "extractors above 5%:\n{}",
        failing.join("\n")
    );
}
