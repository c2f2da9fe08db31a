//! Changed requirement over many seeds.

use tbsim_gen::{Family, changed_requirement, generate_suite};
use tbsim_scenario::{Gate, PlanStep};

use crate::family_urgent_interrupt::{
    assert_sample_wrong_fail, load, oracle, suite, sweep, with_plan,
};
use crate::util::{family_variants, generate_one};

fn variants() -> Vec<(String, Family)> {
    family_variants(changed_requirement::variants(), Family::ChangedRequirement)
}

#[test]
fn changed_requirement_over_seeds() {
    let sample = sweep(
        "changed_requirement",
        Family::ChangedRequirement(Default::default()),
        variants(),
    );
    assert_sample_wrong_fail(
        &sample,
        changed_requirement::wrong_answers,
        changed_requirement::wrong_messages,
    );
}

/// Work done to the original specification (the oracle's first file, and the total
/// of that selection sent to the colleague before the change) fails whatever the
/// change touched, while the untouched part passes.
#[test]
fn work_done_to_the_original_spec_fails_what_the_change_touched() {
    for (i, (key, family)) in variants().into_iter().enumerate() {
        for seed in 0..6 {
            let text = generate_one(&suite(100 * i as u64 + seed, family.clone()));
            let loaded = load(&text);
            let task = &loaded.scenario.tasks[0];
            // The original selection is what the plan writes first; its total comes
            // from the table.
            let first: serde_json::Value = serde_json::from_str(&task.plan[1].args).unwrap();
            let ids: serde_json::Value =
                serde_json::from_str(first["content"].as_str().unwrap()).unwrap();
            let ids: Vec<&str> = ids["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            let table = loaded
                .scenario
                .files
                .iter()
                .find(|f| task.objective.contains(&f.path))
                .unwrap();
            let tbsim_scenario::Content::Text(csv) = &table.content else {
                panic!()
            };
            let old_total: u64 = csv
                .lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    ids.contains(&f[0]).then(|| f[3].parse::<u64>().unwrap())
                })
                .sum();
            let stale = with_plan(&loaded, &task.key, |plan| {
                let cut = plan
                    .iter()
                    .position(|s| matches!(s.gate, Gate::NotBefore(_)))
                    .unwrap();
                plan.truncate(cut);
                plan.insert(
                    1,
                    PlanStep {
                        gate: Gate::Ready,
                        tool: "send_message".into(),
                        args: serde_json::json!({"to": task.assigned_by, "text": format!("The total is {old_total} EUR.")})
                            .to_string(),
                    },
                );
            });
            let r = oracle(&stale);
            let cps = &r.tasks[0].checkpoints;
            let passed = |k: &str| cps.iter().find(|c| c.key == k).unwrap().passed;
            let change = key.split('/').nth(1).unwrap();
            assert_eq!(
                passed("list_correct"),
                change == "recipient",
                "{key} seed {seed}"
            );
            assert_eq!(
                passed("total_sent"),
                change == "format",
                "{key} seed {seed}"
            );
        }
    }
}

#[test]
fn the_change_arrives_before_or_after_the_midpoint() {
    let epoch = |s: &tbsim_scenario::Scenario| {
        tbsim_core::time::Epoch::from_timestamp(&s.clock.start).unwrap()
    };
    for (key, family) in variants() {
        for seed in 0..10 {
            let s = tbsim_gen::generate_scenario(seed, &suite(seed, family.clone()).scenarios[0])
                .unwrap();
            let e = epoch(&s);
            let (rel, dl) = (
                e.parse(&s.clock.start).unwrap().0,
                e.parse(&s.tasks[0].deadline).unwrap().0,
            );
            let at = e.parse(&s.events[0].at).unwrap().0;
            let mid = (rel + dl) / 2;
            assert!(rel < at && at + 45 * 60 <= dl, "{key}");
            assert_eq!(at < mid, key.ends_with("/early"), "{key} seed {seed}");
            // The change is only in the message.
            let tbsim_scenario::WorldChange::Message { text, .. } = &s.events[0].change else {
                panic!()
            };
            assert!(!s.tasks[0].objective.contains(text.as_str()));
        }
    }
}

#[test]
fn releases_without_a_known_time_are_refused() {
    let mut plan = suite(3, Family::ChangedRequirement(Default::default()));
    plan.scenarios[0].tasks[0].release = tbsim_gen::ReleasePlan::AfterCheckpoint {
        task: "t".into(),
        checkpoint: "x".into(),
    };
    let err = generate_suite(&plan).unwrap_err().to_string();
    assert!(err.contains("Start or At"), "{err}");
}

#[test]
fn out_of_range_parameters_are_clear_errors() {
    for (p, needle) in [
        (
            changed_requirement::Params {
                rows: Some(5),
                ..Default::default()
            },
            "rows",
        ),
        (
            changed_requirement::Params {
                at: Some("17:30".into()),
                ..Default::default()
            },
            "`at`",
        ),
    ] {
        let err = generate_suite(&suite(1, Family::ChangedRequirement(p)))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}
