//! Data completion over many seeds and every variant, through the RON round trip.

use std::collections::BTreeSet;

use tbsim_gen::{Family, ScenarioPlan, data_completion, generate_scenario, to_ron};
use tbsim_scenario::{Check, Content, LoadedScenario, Scenario};

use crate::util::{
    DATE, SEEDS, assert_distinct_worlds, check_round_trip, first_task_checkpoints, load_generated,
    one_task_plan, write_answer,
};

fn plan(seed: u64, p: data_completion::Params) -> ScenarioPlan {
    one_task_plan("dc", seed, "dc", Family::DataCompletion(p), DATE)
}

fn load(text: &str) -> LoadedScenario {
    load_generated(text, "dc.ron")
}

fn check_one(seed: u64, p: data_completion::Params) -> (String, Scenario) {
    check_round_trip(&format!("seed {seed}"), "dc.ron", || {
        generate_scenario(seed, &plan(seed, p.clone())).unwrap()
    })
}

fn dataset(s: &Scenario) -> &str {
    let f = s
        .files
        .iter()
        .find(|f| f.path.starts_with("drive/data_completion/") && f.path.ends_with(".csv"))
        .unwrap();
    match &f.content {
        Content::Text(t) => t,
        Content::Sidecar { .. } | Content::Drawing(_) => panic!("text expected"),
    }
}

#[test]
fn data_completion_over_seeds() {
    let mut variants = BTreeSet::new();
    assert_distinct_worlds("data_completion", SEEDS, |seed| {
        let (text, s) = check_one(seed, data_completion::Params::default());
        variants.insert(s.tasks[0].variant.clone());
        text
    });
    assert!(
        variants.len() >= 45,
        "seeds cover most variants: {variants:?}"
    );
}

#[test]
fn data_completion_every_variant_with_varying_data() {
    for (i, (key, p)) in data_completion::variants().into_iter().enumerate() {
        let (_, a) = check_one(2000 + i as u64, p.clone());
        assert_eq!(a.tasks[0].variant, key);
        // Unlike the reference's 60 fixed datasets, the data follows the seed.
        let b = generate_scenario(3000 + i as u64, &plan(3000 + i as u64, p)).unwrap();
        assert_ne!(dataset(&a), dataset(&b), "{key}: data varies by seed");
    }
}

#[test]
fn data_completion_resources_stay_behind_their_owners() {
    for seed in 0..60 {
        let s = generate_scenario(seed, &plan(seed, data_completion::Params::default())).unwrap();
        let task = &s.tasks[0];
        let holders: BTreeSet<&str> = s
            .company
            .people
            .iter()
            .filter(|p| !p.clues.is_empty())
            .map(|p| p.department.as_str())
            .collect();
        let needs = if task.variant.contains("/tax_fee/") {
            Some(("Finance", "fee_rates.csv"))
        } else if task.variant.contains("/eta_distance_sla/") {
            Some(("Sales", "carrier_sla.csv"))
        } else {
            None
        };
        match needs {
            Some((dept, file)) => {
                assert_eq!(holders, BTreeSet::from([dept]));
                let path = s.files.iter().find(|f| f.path.ends_with(file)).unwrap();
                assert!(!path.path.starts_with("drive/data_completion/"));
                assert!(
                    !task.objective.contains(file) && !task.hints.iter().any(|h| h.contains(file))
                );
                assert!(
                    task.checkpoints
                        .iter()
                        .any(|c| c.key == "resource_consulted")
                );
            }
            None => {
                assert!(holders.is_empty());
                assert!(
                    !task
                        .checkpoints
                        .iter()
                        .any(|c| c.key == "resource_consulted")
                );
            }
        }
    }
}

fn write_and_score(loaded: &LoadedScenario, path: &str, body: &str) -> Vec<(String, bool)> {
    first_task_checkpoints(&write_answer(loaded, path, body))
}

#[test]
fn data_completion_trivially_wrong_answers_fail() {
    for (i, (_, p)) in data_completion::variants().into_iter().enumerate() {
        let seed = 4000 + i as u64;
        let s = generate_scenario(seed, &plan(seed, p)).unwrap();
        let loaded = load(&to_ron(&s));
        let task = &loaded.scenario.tasks[0];
        let answer = task
            .checkpoints
            .iter()
            .find_map(|c| match &c.check {
                Check::CsvTable { path, .. } => Some(path.clone()),
                _ => None,
            })
            .unwrap();
        let mut bodies = vec![
            ("empty file".to_string(), String::new()),
            ("copied input".into(), dataset(&loaded.scenario).to_owned()),
        ];
        let wrong = data_completion::wrong_answers(task, &loaded.scenario);
        assert_eq!(wrong.len(), 2);
        for (path, body) in wrong {
            assert_eq!(path, answer);
            bodies.push(("constant fill".into(), body));
        }
        for (label, body) in bodies {
            for (key, passed) in write_and_score(&loaded, &answer, &body) {
                assert!(
                    key.ends_with("_consulted") || !passed,
                    "{}: {label} passed `{key}`",
                    task.variant
                );
            }
        }
    }
}

#[test]
fn data_completion_parameters_are_checked() {
    use data_completion::{DataDomain, TaskType};
    let err =
        |p: data_completion::Params| generate_scenario(1, &plan(1, p)).unwrap_err().to_string();
    let e = err(data_completion::Params {
        domain: Some(DataDomain::Web),
        task_type: Some(TaskType::TaxFee),
        ..Default::default()
    });
    assert!(
        e.contains("`tax_fee` belongs to domain `transactions`, not `web`"),
        "{e}"
    );
    let e = err(data_completion::Params {
        rows: Some(5),
        ..Default::default()
    });
    assert!(
        e.contains("`rows` must be between 12 and 400, found 5"),
        "{e}"
    );
    // A type alone implies its domain; a row count overrides the preset.
    let s = generate_scenario(
        1,
        &plan(
            1,
            data_completion::Params {
                task_type: Some(TaskType::Funnel),
                rows: Some(40),
                ..Default::default()
            },
        ),
    )
    .unwrap();
    assert!(
        s.tasks[0]
            .variant
            .starts_with("data_completion/web/funnel/")
    );
    assert_eq!(dataset(&s).lines().count(), 41);
    assert!(ron::from_str::<data_completion::Params>("Params(domian: Some(Web))").is_err());
}
