//! Event planning over many seeds, every level, and trivially wrong answers.

use tbsim::generate::{Family, event_planning, generate_suite};

use crate::family_ads_strategy::{load, suite, sweep, wrong_answers_fail};

fn unset() -> Family {
    Family::EventPlanning(event_planning::Params::default())
}

#[test]
fn event_planning_over_seeds_and_variants() {
    let variants = event_planning::variants()
        .into_iter()
        .map(|(k, p)| (k, Family::EventPlanning(p)))
        .collect();
    let seen = sweep(unset, variants);
    assert_eq!(seen.len(), 12, "200 seeds cover every level: {seen:?}");
}

#[test]
fn event_planning_trivially_wrong_answers_fail() {
    for seed in (0..200).step_by(17) {
        let text = generate_suite(&suite(seed, unset())).unwrap().remove(0).1;
        let loaded = load(&text);
        let info = loaded
            .scenario
            .files
            .iter()
            .find(|f| f.path.ends_with("places_info.txt"))
            .unwrap()
            .path
            .clone();
        wrong_answers_fail(
            &loaded,
            &info,
            event_planning::wrong_answers,
            &["materials_read", "availability_asked"],
            &[],
        );
    }
}
