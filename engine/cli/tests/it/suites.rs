//! The bundled benchmark suites: committed scenarios match their generators, and
//! every scenario is solvable by the oracle and worth nothing to the idle agent.

use std::path::Path;

use tbsim_engine::agent::{Idle, Oracle};
use tbsim_gen::suite::{Mode, SuiteRequest, family_keys, new_suite};
use tbsim_gen::{generate_suite, load_suite};
use tbsim_scenario::load_file;

use crate::util::{root, run};

fn check_suite(name: &str, days: usize) {
    let suite = load_suite(&root().join(format!("content/suites/{name}.ron"))).unwrap();
    assert_eq!(suite.scenarios.len(), 50);
    let dir = root().join(format!("content/scenarios/{name}"));
    let files = generate_suite(&suite).unwrap();
    let committed = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(
        committed,
        files.len(),
        "every generated scenario of {name} is committed, and nothing else"
    );
    for (file, text) in &files {
        let path = dir.join(file);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == *text,
            "{} drifted from its suite; regenerate with `tbsim gen --suite content/suites/{name}.ron --out content/scenarios/{name}`",
            path.display()
        );
        let loaded = load_file(&path).unwrap();
        assert_eq!(loaded.scenario.clock.days as usize, days);
        assert!(
            (2..=6).contains(
                &suite
                    .scenarios
                    .iter()
                    .find(|s| format!("{}.ron", s.name) == *file)
                    .unwrap()
                    .day_plans()[0]
                    .len()
            )
        );
        gates_leave_time(&loaded.scenario, file);
        let (o, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(
            o.checkpoint_score,
            1.0,
            "{file}: {:#?}",
            o.tasks.iter().filter(|t| !t.success).collect::<Vec<_>>()
        );
        let (i, _) = run(&loaded, &mut Idle::default(), None);
        assert_eq!(i.checkpoint_score, 0.0, "{file}");
    }
}

/// A gate on an answer checkpoint opens only when the gate task closes (its
/// deadline), so the task waiting on it must have time left after that.
fn gates_leave_time(s: &tbsim_scenario::Scenario, file: &str) {
    use tbsim_scenario::{Check, Release};
    fn answer(c: &Check) -> bool {
        match c {
            Check::Consulted(_)
            | Check::Disclosed(_)
            | Check::ToolCalled { .. }
            | Check::Attended(_) => false,
            Check::All(v) => v.iter().any(answer),
            _ => true,
        }
    }
    for t in &s.tasks {
        let Release::AfterCheckpoint { task, checkpoint } = &t.release else {
            continue;
        };
        let gate = s.tasks.iter().find(|g| &g.key == task).unwrap();
        let cp = gate
            .checkpoints
            .iter()
            .find(|c| &c.key == checkpoint)
            .unwrap();
        if answer(&cp.check) {
            // `YYYY-MM-DDTHH:MM` compares as text; 45 minutes is the shortest stage.
            let minutes = |d: &str| -> i64 {
                let day: i64 = d[8..10].parse().unwrap();
                let h: i64 = d[11..13].parse().unwrap();
                let m: i64 = d[14..16].parse().unwrap();
                day * 1440 + h * 60 + m
            };
            assert!(
                minutes(&t.deadline) - minutes(&gate.deadline) >= 45,
                "{file}: {} waits on {}'s answer `{checkpoint}`, judged at {}, but is due at {}",
                t.key,
                gate.key,
                gate.deadline,
                t.deadline
            );
        }
    }
}

#[test]
fn traineebench_plus_is_generated_and_solvable() {
    check_suite("traineebench-plus", 1);
    // All fourteen families, the three without a reference counterpart included.
    let suite = load_suite(&root().join("content/suites/traineebench-plus.ron")).unwrap();
    let used: std::collections::BTreeSet<&str> = suite
        .scenarios
        .iter()
        .flat_map(|s| s.day_plans().into_iter().flatten())
        .map(|t| t.family.key())
        .collect();
    assert_eq!(used.len(), family_keys().len(), "{used:?}");
}

#[test]
fn traineebench_is_generated_and_solvable() {
    check_suite("traineebench", 1);
}

#[test]
fn traineebench_cl_is_generated_and_solvable() {
    check_suite("traineebench-cl", 2);
}

#[test]
fn freshly_drawn_suites_of_every_family_are_solvable() {
    for (mode, seed) in [(Mode::Stationary, 3), (Mode::Mutable, 4)] {
        let req = SuiteRequest {
            name: "fresh".into(),
            scenarios: 8,
            days: 2,
            seed,
            families: family_keys().iter().map(|k| k.to_string()).collect(),
            mode,
            tasks: (2, 6),
            company_size: 40,
        };
        let suite = new_suite(&req).unwrap();
        for (file, text) in generate_suite(&suite).unwrap() {
            let path = Path::new(&file);
            let scenario = tbsim_scenario::parse_str(&text, path).unwrap();
            tbsim_scenario::validate(&scenario, path, None).unwrap();
            let loaded = tbsim_scenario::LoadedScenario {
                scenario,
                path: path.into(),
                blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
                source: text,
                assets: Default::default(),
            };
            let (o, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
            assert_eq!(
                o.checkpoint_score,
                1.0,
                "{mode:?} {file}: {:#?}",
                o.tasks.iter().filter(|t| !t.success).collect::<Vec<_>>()
            );
        }
    }
}
