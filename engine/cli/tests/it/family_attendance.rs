//! Attendance statistics over many seeds and every variant, through the RON round trip.

use std::collections::BTreeSet;

use tbsim_gen::{Family, ScenarioPlan, attendance, generate_scenario, to_ron};
use tbsim_scenario::{Check, Content, LoadedScenario, Scenario};

use crate::util::{
    SEEDS, assert_distinct_worlds, check_round_trip, first_task_checkpoints, load_generated,
    one_task_plan, write_answer,
};

fn plan(seed: u64, p: attendance::Params, date: &str) -> ScenarioPlan {
    one_task_plan("att", seed, "att", Family::Attendance(p), date)
}

fn load(text: &str) -> LoadedScenario {
    load_generated(text, "att.ron")
}

/// Generates, round-trips and runs one scenario; returns its RON text.
fn check_one(seed: u64, p: attendance::Params, date: &str) -> (String, Scenario) {
    check_round_trip(&format!("seed {seed}"), "att.ron", || {
        generate_scenario(seed, &plan(seed, p.clone(), date)).unwrap()
    })
}

#[test]
fn attendance_over_seeds() {
    let mut variants = BTreeSet::new();
    assert_distinct_worlds("attendance", SEEDS, |seed| {
        let (text, s) = check_one(seed, attendance::Params::default(), "2025-10-01");
        variants.insert(s.tasks[0].variant.clone());
        text
    });
    assert!(
        variants.len() >= 30,
        "seeds cover most variants: {variants:?}"
    );
}

#[test]
fn attendance_every_variant() {
    for (i, (key, p)) in attendance::variants().into_iter().enumerate() {
        let (_, s) = check_one(1000 + i as u64, p, "2026-01-12");
        assert_eq!(s.tasks[0].variant, key);
    }
}

#[test]
fn attendance_month_follows_the_scenario_clock() {
    for (date, month) in [
        ("2025-10-01", "2025-09"),
        ("2026-01-12", "2025-12"),
        ("2024-03-04", "2024-02"),
    ] {
        let s = generate_scenario(3, &plan(3, attendance::Params::default(), date)).unwrap();
        let csv: Vec<&str> = s
            .files
            .iter()
            .filter(|f| f.path.ends_with(".csv"))
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            csv,
            vec![format!("drive/hr/attendance/attendance_{month}.csv")]
        );
        let Content::Text(body) = &s
            .files
            .iter()
            .find(|f| f.path.ends_with(".csv"))
            .unwrap()
            .content
        else {
            panic!()
        };
        assert!(
            body.lines()
                .skip(1)
                .all(|l| l.split(',').nth(1).unwrap().starts_with(month))
        );
    }
}

#[test]
fn attendance_rules_come_from_the_departments_managers() {
    for seed in 0..40 {
        let s = generate_scenario(
            seed,
            &plan(seed, attendance::Params::default(), "2025-10-01"),
        )
        .unwrap();
        let task = &s.tasks[0];
        let holders: Vec<&tbsim_scenario::Person> = s
            .company
            .people
            .iter()
            .filter(|p| !p.clues.is_empty())
            .collect();
        assert!(!holders.is_empty());
        let dept = holders[0].department.clone();
        assert!(
            holders
                .iter()
                .all(|p| p.department == dept && p.position.ends_with("Manager"))
        );
        let all = task
            .plan
            .last()
            .unwrap()
            .args
            .contains("workspace/dept_all_");
        if all {
            assert_eq!(dept, "Human Resources");
            assert!(task.objective.contains("People Operations"));
        } else {
            assert!(
                task.objective.contains(&format!("the {dept} department")),
                "{}",
                task.objective
            );
        }
    }
}

fn write_and_score(loaded: &LoadedScenario, path: &str, body: &str) -> Vec<(String, bool)> {
    first_task_checkpoints(&write_answer(loaded, path, body))
}

#[test]
fn attendance_trivially_wrong_answers_fail() {
    for (i, (_, p)) in attendance::variants().into_iter().enumerate() {
        let seed = 500 + i as u64;
        let s = generate_scenario(seed, &plan(seed, p, "2025-10-01")).unwrap();
        let loaded = load(&to_ron(&s));
        let task = &loaded.scenario.tasks[0];
        let answer = task
            .checkpoints
            .iter()
            .find_map(|c| match &c.check {
                Check::Consulted(_) => None,
                Check::JsonNumber { path, .. }
                | Check::JsonRecords { path, .. }
                | Check::JsonStringSet { path, .. }
                | Check::FileContains { path, .. } => Some(path.clone()),
                // The yes/no question: flag and list judged together.
                Check::All(v) => match &v[0] {
                    Check::FileContains { path, .. } => Some(path.clone()),
                    other => panic!("unexpected check {other:?}"),
                },
                other => panic!("unexpected check {other:?}"),
            })
            .unwrap();
        let copied = loaded
            .scenario
            .files
            .iter()
            .filter(|f| f.path.starts_with("drive/hr/"))
            .map(|f| match &f.content {
                Content::Text(t) => t.clone(),
                Content::Sidecar { .. } | Content::Drawing(_) => String::new(),
            });
        let mut bodies: Vec<(String, String)> = vec![("empty file".into(), String::new())];
        bodies.extend(copied.map(|c| ("copied input".to_string(), c)));
        let wrong = attendance::wrong_answers(task, &loaded.scenario);
        assert!(!wrong.is_empty());
        for (path, body) in wrong {
            assert_eq!(path, answer);
            bodies.push(("every candidate".into(), body));
        }
        for (label, body) in bodies {
            for (key, passed) in write_and_score(&loaded, &answer, &body) {
                assert!(
                    key == "rules_consulted" || !passed,
                    "{}: {label} passed `{key}`",
                    task.variant
                );
            }
        }
    }
}

#[test]
fn attendance_parameters_are_checked() {
    let err = |p: attendance::Params| {
        generate_scenario(1, &plan(1, p, "2025-10-01"))
            .unwrap_err()
            .to_string()
    };
    let e = err(attendance::Params {
        department: Some("Legal".into()),
        ..Default::default()
    });
    assert!(e.contains("`Legal` is not one of: all, Engineering"), "{e}");
    let e = err(attendance::Params {
        task_type: Some(attendance::StatType::TotalAbsenceDays),
        mode: Some(attendance::Mode::MostLate),
        ..Default::default()
    });
    assert!(
        e.contains("`mode` applies only to LateEarlyEmployee"),
        "{e}"
    );
    let e = err(attendance::Params {
        task_type: Some(attendance::StatType::TopPercentEmployees),
        percent: Some(30),
        ..Default::default()
    });
    assert!(
        e.contains("`percent` must be 5, 10, 15 or 20, found 30"),
        "{e}"
    );
    let e = err(attendance::Params {
        task_type: Some(attendance::StatType::HasLateOrEarly),
        metric: Some(attendance::Metric::Late),
        ..Default::default()
    });
    assert!(e.contains("apply only to TopPercentEmployees"), "{e}");
    let typo = "Params(task_typ: Some(HasLateOrEarly))";
    assert!(ron::from_str::<attendance::Params>(typo).is_err());
}
