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

#[test]
fn both_image_families_share_a_day_with_the_others() {
    use tbsim::agent::{Idle, Oracle};
    use tbsim::generate::{TaskPlan, ads_strategy};
    let task = |id: &str, family: Family| TaskPlan {
        id: id.into(),
        family,
        release: Default::default(),
        deadline: None,
        priority: Default::default(),
    };
    for seed in 0..8 {
        let mut s = suite(seed, unset());
        let sc = &mut s.scenarios[0];
        sc.tasks = vec![
            task("event", unset()),
            task(
                "ads",
                Family::AdsStrategy(ads_strategy::Params {
                    target_group: Some(ads_strategy::Group::Seniors),
                    ..Default::default()
                }),
            ),
            task("kb", Family::KbFix(Default::default())),
            task("tr", Family::TransactionReview(Default::default())),
            task("meet", Family::MeetingAttend(Default::default())),
        ];
        let text = generate_suite(&s).unwrap().remove(0).1;
        let loaded = load(&text);
        let (o, _) = crate::util::run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(o.checkpoint_score, 1.0, "seed {seed}: {:#?}", o.tasks);
        assert!(o.errors.is_empty(), "seed {seed}: {:?}", o.errors);
        let (i, _) = crate::util::run(&loaded, &mut Idle::default(), None);
        assert_eq!(i.checkpoint_score, 0.0, "seed {seed}");
    }
}
