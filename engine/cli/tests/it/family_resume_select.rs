//! Resume select over many seeds, and trivially wrong shortlists that must not pass.

use std::collections::BTreeSet;

use tbsim_gen::{Family, Suite, resume_select};
use tbsim_scenario::{Check, LoadedScenario};

use crate::util::{
    SEEDS, assert_distinct_worlds, check_generated, generate_one, load_generated, one_task_suite,
};

fn suite(seed: u64, params: resume_select::Params) -> Suite {
    one_task_suite("rs", seed, "rs", Family::ResumeSelect(params))
}

fn load(text: &str) -> LoadedScenario {
    load_generated(text, "rs.ron")
}

/// Generates, round-trips and runs one instance; returns its text and variant.
fn check_instance(seed: u64, params: &resume_select::Params) -> (String, String) {
    let (text, loaded) = check_generated(&format!("seed {seed}"), "rs.ron", || {
        suite(seed, params.clone())
    });
    (text, loaded.scenario.tasks[0].variant.clone())
}

#[test]
fn resume_select_over_seeds_and_every_variant() {
    let mut variants = BTreeSet::new();
    assert_distinct_worlds("resume_select", SEEDS, |seed| {
        let (text, variant) = check_instance(seed, &resume_select::Params::default());
        variants.insert(variant);
        text
    });
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
    crate::util::write_answer(loaded, path, content).tasks[0]
        .checkpoints
        .iter()
        .find(|c| c.key == "shortlist_correct")
        .unwrap()
        .passed
}

#[test]
fn trivially_wrong_shortlists_fail_and_the_right_one_passes() {
    for seed in 0..24 {
        let text = generate_one(&suite(seed, Default::default()));
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
