//! Event planning over many seeds, every level, and trivially wrong answers.

use tbsim_gen::{Family, event_planning, generate_suite};

use crate::family_ads_strategy::{load, suite, sweep, wrong_answers_fail};
use crate::util::{assert_solvable, family_variants, generate_one};

fn unset() -> Family {
    Family::EventPlanning(event_planning::Params::default())
}

#[test]
fn event_planning_over_seeds_and_variants() {
    let variants = family_variants(event_planning::variants(), Family::EventPlanning);
    let seen = sweep(unset, variants);
    assert_eq!(seen.len(), 12, "200 seeds cover every level: {seen:?}");
}

#[test]
fn event_planning_trivially_wrong_answers_fail() {
    for seed in (0..200).step_by(17) {
        let text = generate_one(&suite(seed, unset()));
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
    use tbsim_gen::{TaskPlan, ads_strategy};
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
        let text = generate_one(&s);
        let loaded = load(&text);
        assert_solvable(&loaded, &format!("seed {seed}"));
    }
}

#[test]
fn event_planning_explicit_parameters_are_honoured_and_checked() {
    use event_planning::{Level, Mode, Params, PlanPick};
    use tbsim_scenario::OutingMetric;
    let small = Params {
        level: Some(Level::A4),
        department: Some("human resources".into()),
        n_loc: Some(3),
        n_res: Some(1),
        plan: Some(PlanPick {
            morning: 3,
            lunch: 1,
            afternoon: 1,
        }),
        end_time: Some("16:45".into()),
        ..Default::default()
    };
    let text = crate::family_ads_strategy::check_one(2, || Family::EventPlanning(small.clone()));
    let s = load(&text).scenario;
    let t = &s.tasks[0];
    assert_eq!(t.variant, "event_planning/a4");
    assert!(t.objective.contains("Human Resources") && t.objective.contains("by 16:45"));
    // Giveaways are gone: the brief's own itinerary is not scored, and the on-time
    // flag is judged only together with the return time it follows from.
    let keys: Vec<&str> = t.checkpoints.iter().map(|c| c.key.as_str()).collect();
    assert!(keys.contains(&"end_time"), "{keys:?}");
    assert!(
        !keys.contains(&"on_time") && !keys.contains(&"plan"),
        "{keys:?}"
    );
    let chosen = Params {
        level: Some(Level::B1),
        metrics: Some(vec![OutingMetric::Distance]),
        ..Default::default()
    };
    let text = crate::family_ads_strategy::check_one(2, || Family::EventPlanning(chosen.clone()));
    let keys: Vec<String> = load(&text).scenario.tasks[0]
        .checkpoints
        .iter()
        .map(|c| c.key.clone())
        .collect();
    assert_eq!(
        keys,
        [
            "materials_read",
            "availability_asked",
            "event_date",
            "plan",
            "metric_distance"
        ]
    );
    // Unset level: drawn among the levels the other parameters allow.
    let text = generate_suite(&suite(
        9,
        Family::EventPlanning(Params {
            mode: Some(Mode::LowestCost),
            ..Default::default()
        }),
    ))
    .unwrap()
    .remove(0)
    .1;
    assert_eq!(load(&text).scenario.tasks[0].variant, "event_planning/c2");
    for (bad, want) in [
        (
            Params {
                level: Some(Level::B2),
                plan: Some(PlanPick {
                    morning: 1,
                    lunch: 1,
                    afternoon: 2,
                }),
                ..Default::default()
            },
            "`plan` is only for A levels",
        ),
        (
            Params {
                level: Some(Level::A1),
                metrics: Some(vec![OutingMetric::Score]),
                ..Default::default()
            },
            "A1 takes 1-2 distinct metrics",
        ),
        (
            Params {
                level: Some(Level::A2),
                plan: Some(PlanPick {
                    morning: 2,
                    lunch: 1,
                    afternoon: 2,
                }),
                ..Default::default()
            },
            "is not an itinerary",
        ),
        (
            Params {
                department: Some("Legal".into()),
                ..Default::default()
            },
            "unknown department `Legal`",
        ),
        (
            Params {
                n_loc: Some(2),
                ..Default::default()
            },
            "n_loc 2 (3-12)",
        ),
        (
            Params {
                level: Some(Level::A4),
                end_time: Some("late".into()),
                ..Default::default()
            },
            "end_time `late` is not HH:MM",
        ),
    ] {
        let err = generate_suite(&suite(1, Family::EventPlanning(bad)))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
}
