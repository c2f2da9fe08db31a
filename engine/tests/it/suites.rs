//! The bundled benchmark suites: committed scenarios match their generators, and
//! every scenario is solvable by the oracle and worth nothing to the idle agent.

use std::path::Path;

use tbsim::agent::{Idle, Oracle};
use tbsim::generate::suite::{Mode, SuiteRequest, family_keys, new_suite};
use tbsim::generate::{generate_suite, load_suite};
use tbsim::scenario::load_file;

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
            let scenario = tbsim::scenario::parse_str(&text, path).unwrap();
            tbsim::scenario::validate(&scenario, path, None).unwrap();
            let loaded = tbsim::scenario::LoadedScenario {
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
