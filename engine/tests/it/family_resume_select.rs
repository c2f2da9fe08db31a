//! Resume select over many seeds, and trivially wrong shortlists that must not pass.

use std::collections::BTreeSet;
use std::path::Path;

use tbsim::agent::{Idle, Oracle};
use tbsim::generate::{Family, ScenarioPlan, Suite, TaskPlan, generate_suite, resume_select};
use tbsim::scenario::{Check, LoadedScenario, parse_str, validate};
use tbsim::sim::{Decision, Sim, SimConfig};
use tbsim::tools::{LivePython, ToolCall};
use tbsim::trajectory::Trajectory;

const SEEDS: u64 = 200;

fn suite(seed: u64, params: resume_select::Params) -> Suite {
    Suite {
        name: "resume-select".into(),
        seed,
        scenarios: vec![ScenarioPlan {
            name: format!("rs-{seed}"),
            description: String::new(),
            date: "2025-10-01".into(),
            start: "09:00".into(),
            end: "18:00".into(),
            company_size: 40,
            tasks: vec![TaskPlan {
                id: "rs".into(),
                family: Family::ResumeSelect(params),
                release: Default::default(),
                deadline: None,
                priority: Default::default(),
            }],
            days: Vec::new(),
        }],
    }
}

fn load(text: &str) -> LoadedScenario {
    let path = Path::new("rs.ron");
    let scenario = parse_str(text, path).expect("generated RON parses");
    validate(&scenario, path, None).expect("generated scenarios validate");
    LoadedScenario {
        scenario,
        path: path.into(),
        source: text.into(),
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        assets: Default::default(),
    }
}

fn check_instance(seed: u64, params: &resume_select::Params) -> (String, String) {
    let text = generate_suite(&suite(seed, params.clone())).unwrap()[0]
        .1
        .clone();
    assert_eq!(
        generate_suite(&suite(seed, params.clone())).unwrap()[0].1,
        text,
        "seed {seed} regenerates identically"
    );
    let loaded = load(&text);
    let (o, _) = crate::util::run(&loaded, &mut Oracle::new(&loaded.scenario), None);
    assert_eq!(
        o.checkpoint_score, 1.0,
        "seed {seed}: oracle failed: {:#?}",
        o.tasks
    );
    assert!(o.errors.is_empty(), "seed {seed}: {:?}", o.errors);
    let (i, _) = crate::util::run(&loaded, &mut Idle::default(), None);
    assert_eq!(
        i.checkpoint_score, 0.0,
        "seed {seed}: a checkpoint passed with no action"
    );
    (text, loaded.scenario.tasks[0].variant.clone())
}

#[test]
fn resume_select_over_seeds_and_every_variant() {
    let mut texts = BTreeSet::new();
    let mut variants = BTreeSet::new();
    for seed in 0..SEEDS {
        let (text, variant) = check_instance(seed, &resume_select::Params::default());
        texts.insert(text);
        variants.insert(variant);
    }
    assert_eq!(
        texts.len() as u64,
        SEEDS,
        "every seed gives a different world"
    );
    let all = resume_select::variants();
    assert_eq!(all.len(), 9);
    for (key, params) in all {
        let (_, variant) = check_instance(1000, &params);
        assert_eq!(variant, key);
        variants.insert(variant);
    }
    assert_eq!(variants.len(), 9, "{variants:?}");
}

fn write_and_score(loaded: &LoadedScenario, path: &str, content: &str) -> bool {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    sim.step(&Decision {
        calls: vec![ToolCall {
            id: "1".into(),
            name: "write_file".into(),
            arguments: serde_json::json!({"path": path, "content": content}).to_string(),
        }],
    });
    sim.end(tbsim::world::EndReason::Finished);
    let r = sim.results();
    r.tasks[0]
        .checkpoints
        .iter()
        .find(|c| c.key == "shortlist_correct")
        .unwrap()
        .passed
}

#[test]
fn trivially_wrong_shortlists_fail_and_the_right_one_passes() {
    for seed in 0..24 {
        let text = generate_suite(&suite(seed, Default::default())).unwrap()[0]
            .1
            .clone();
        let loaded = load(&text);
        let task = &loaded.scenario.tasks[0];
        let wrong = resume_select::wrong_answers(task, &loaded.scenario);
        assert_eq!(
            wrong.len(),
            5,
            "empty, none, all, all as lines, copied resume"
        );
        for (path, content) in &wrong {
            assert!(
                !write_and_score(&loaded, path, content),
                "seed {seed}: {content:.60} must not pass"
            );
        }
        let Some(Check::JsonStringSet { path, expected, .. }) = task
            .checkpoints
            .iter()
            .map(|c| &c.check)
            .find(|c| matches!(c, Check::JsonStringSet { .. }))
        else {
            panic!()
        };
        // Case and order do not matter; one name too many or too few does.
        let shouted: Vec<String> = expected.iter().rev().map(|n| n.to_uppercase()).collect();
        assert!(write_and_score(
            &loaded,
            path,
            &serde_json::json!({"candidates": shouted}).to_string()
        ));
        let short = &expected[1..];
        assert!(!write_and_score(
            &loaded,
            path,
            &serde_json::json!({"candidates": short}).to_string()
        ));
    }
}
