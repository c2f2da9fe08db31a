//! ADs strategy over many seeds, every variant, and trivially wrong answers.

use std::collections::BTreeSet;
use std::path::Path;

use tbsim_gen::{Family, Suite, ads_strategy, generate_suite};
use tbsim_scenario::{Check, Content, LoadedScenario, Scenario, TaskSpec, parse_str};

use crate::util::{
    SEEDS, assert_distinct_worlds, check_generated, family_variants, first_task_checkpoints,
    generate_one, load_generated, one_task_suite, write_answer,
};

/// A one-task suite for `family` at `seed`.
pub(crate) fn suite(seed: u64, family: Family) -> Suite {
    one_task_suite("sweep", seed, "t", family)
}

/// Parses and validates generated RON as the CLI would.
pub(crate) fn load(text: &str) -> LoadedScenario {
    load_generated(text, "sweep.ron")
}

/// Generates, round-trips and runs one scenario: the oracle scores 1 with no tool
/// errors, the idle agent 0, and regeneration gives the same bytes. Returns the text.
pub(crate) fn check_one(seed: u64, family: impl Fn() -> Family) -> String {
    check_generated(&format!("seed {seed}"), "sweep.ron", || {
        suite(seed, family())
    })
    .0
}

/// 200 seeds with unset parameters, then every variant once.
pub(crate) fn sweep(
    unset: impl Fn() -> Family,
    variants: Vec<(String, Family)>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    assert_distinct_worlds("sweep", SEEDS, |seed| {
        let text = check_one(seed, &unset);
        let s = parse_str(&text, Path::new("x.ron")).unwrap();
        seen.extend(s.tasks.iter().map(|t| t.variant.clone()));
        text
    });
    for (i, (key, family)) in variants.iter().enumerate() {
        let text = check_one(10_000 + i as u64, || family.clone());
        let s = parse_str(&text, Path::new("x.ron")).unwrap();
        assert_eq!(&s.tasks[0].variant, key);
    }
    seen
}

/// Writes `body` to `path` and ends the day; returns (checkpoint key, passed).
pub(crate) fn score_answer(loaded: &LoadedScenario, path: &str, body: &str) -> Vec<(String, bool)> {
    first_task_checkpoints(&write_answer(loaded, path, body))
}

/// The answer file of a task: the path of its first domain check.
pub(crate) fn answer_path(task: &TaskSpec) -> String {
    task.checkpoints
        .iter()
        .find_map(|c| match &c.check {
            Check::Domain(d) => Some(match d.as_ref() {
                tbsim_scenario::DomainCheck::Budget(b) => b.path.clone(),
                tbsim_scenario::DomainCheck::Outing(o) => o.path.clone(),
                tbsim_scenario::DomainCheck::DateIn { path, .. } => path.clone(),
            }),
            _ => None,
        })
        .expect("an answer check")
}

/// A family's `wrong_answers` function.
pub(crate) type WrongAnswers = fn(&TaskSpec, &Scenario) -> Vec<(String, String)>;

/// Empty file, copied input and the family's "every candidate" answers leave every
/// answer checkpoint (all but `process`) unpassed; `format` checkpoints may pass only
/// for the "every candidate" answers.
pub(crate) fn wrong_answers_fail(
    loaded: &LoadedScenario,
    input: &str,
    wrong: WrongAnswers,
    process: &[&str],
    format: &[&str],
) {
    let task = &loaded.scenario.tasks[0];
    let path = answer_path(task);
    let input = loaded
        .scenario
        .files
        .iter()
        .find(|f| f.path == input)
        .map(|f| match &f.content {
            Content::Text(t) => t.clone(),
            _ => panic!("text input"),
        })
        .expect("input file");
    let mut answers = vec![
        ("empty file".to_owned(), path.clone(), String::new(), false),
        ("copied input".to_owned(), path.clone(), input, false),
    ];
    let candidates = wrong(task, &loaded.scenario);
    assert!(!candidates.is_empty());
    for (p, body) in candidates {
        answers.push(("every candidate".to_owned(), p, body, true));
    }
    for (label, p, body, lenient) in answers {
        for (key, passed) in score_answer(loaded, &p, &body) {
            if process.contains(&key.as_str()) || (lenient && format.contains(&key.as_str())) {
                continue;
            }
            assert!(!passed, "{label}: checkpoint `{key}` must not pass");
        }
    }
}

fn unset() -> Family {
    Family::AdsStrategy(ads_strategy::Params::default())
}

#[test]
fn ads_strategy_over_seeds_and_variants() {
    let variants = family_variants(ads_strategy::variants(), Family::AdsStrategy);
    let seen = sweep(unset, variants);
    assert_eq!(seen.len(), 5, "200 seeds cover every preset: {seen:?}");
}

#[test]
fn ads_strategy_trivially_wrong_answers_fail() {
    for seed in (0..200).step_by(20) {
        let text = generate_one(&suite(seed, unset()));
        let loaded = load(&text);
        let csv = loaded
            .scenario
            .files
            .iter()
            .find(|f| f.path.ends_with(".csv"))
            .unwrap()
            .path
            .clone();
        wrong_answers_fail(
            &loaded,
            &csv,
            ads_strategy::wrong_answers,
            &["handbook_read", "heatmap_viewed"],
            &[],
        );
    }
}

#[test]
fn ads_strategy_heatmaps_are_images_and_the_city_matters() {
    let with = |city: &str| {
        Family::AdsStrategy(ads_strategy::Params {
            city: Some(city.into()),
            difficulty: Some(ads_strategy::Level::VeryHard),
            ..Default::default()
        })
    };
    let a = generate_one(&suite(5, with("Shanghai")));
    let b = generate_one(&suite(5, with("XiAn")));
    let (sa, sb) = (load(&a).scenario, load(&b).scenario);
    let images = |s: &Scenario| -> Vec<(String, tbsim_scenario::Drawing)> {
        s.files
            .iter()
            .filter_map(|f| match &f.content {
                Content::Drawing(d) => Some((f.path.clone(), d.clone())),
                _ => None,
            })
            .collect()
    };
    let (ia, ib) = (images(&sa), images(&sb));
    assert_eq!(ia.len(), 3, "one heatmap per audience group");
    assert!(ia.iter().all(|(p, _)| p.ends_with("_shanghai.png")));
    assert!(ib.iter().all(|(p, _)| p.ends_with("_xi_an.png")));
    assert_ne!(ia[0].1, ib[0].1, "another city draws other maps");
    // Rendered PNGs are deterministic and compact.
    for (_, d) in &ia {
        let png = d.png();
        assert!(png.starts_with(b"\x89PNG"));
        assert!(png.len() < 100_000, "{} bytes", png.len());
        assert_eq!(png, d.png());
    }
    // The densities are nowhere in the text files the agent can read.
    let csv = sa.files.iter().find(|f| f.path.ends_with(".csv")).unwrap();
    let Content::Text(csv) = &csv.content else {
        panic!()
    };
    assert!(!csv.to_lowercase().contains("density"));
    assert!(sa.tasks[0].objective.contains("Shanghai"));
    assert!(sb.tasks[0].objective.contains("Xi'an"));
    // The budget scales with the city's price level.
    assert_ne!(
        sa.tasks[0]
            .objective
            .split("budget is ")
            .nth(1)
            .map(|s| &s[..6]),
        sb.tasks[0]
            .objective
            .split("budget is ")
            .nth(1)
            .map(|s| &s[..6])
    );
}

#[test]
fn ads_strategy_explicit_parameters_are_honoured_and_checked() {
    let p = ads_strategy::Params {
        difficulty: Some(ads_strategy::Level::Hard),
        city: Some("nanjing".into()),
        budget: Some(9_000),
        num_channels: Some(12),
        channel_mix: Some(ads_strategy::ChannelMix::CampusHeavy),
        heatmap_size: Some(20),
        heatmap_centers: Some(3),
        heatmap_min_center_distance: Some(3.0),
        heatmap_sigma: Some((2.0, 3.0)),
        cost_range: Some((1_000, 2_000)),
        effect_range: Some((500, 900)),
        budget_tolerance: Some(0.1),
        target_group: Some(ads_strategy::Group::YoungProfessionals),
    };
    let text = check_one(3, || Family::AdsStrategy(p.clone()));
    let s = load(&text).scenario;
    let t = &s.tasks[0];
    assert_eq!(t.variant, "ads_strategy/hard");
    assert!(t.objective.contains("Nanjing") && t.objective.contains("young professionals"));
    assert!(t.objective.contains("9000 CNY") && t.objective.contains("9900 CNY in all"));
    let csv = s
        .files
        .iter()
        .find(|f| f.path.ends_with("channels_nanjing.csv"))
        .unwrap();
    let Content::Text(csv) = &csv.content else {
        panic!()
    };
    assert_eq!(csv.lines().count(), 13);
    assert!(csv.lines().skip(1).all(|l| {
        let cost: u64 = l.split(',').nth(5).unwrap().parse().unwrap();
        (940..=1_900).contains(&cost)
    }));
    for (bad, want) in [
        (
            ads_strategy::Params {
                city: Some("Atlantis".into()),
                ..Default::default()
            },
            "unknown city `Atlantis`",
        ),
        (
            ads_strategy::Params {
                num_channels: Some(2),
                ..Default::default()
            },
            "num_channels 2 (4-60)",
        ),
        (
            ads_strategy::Params {
                heatmap_sigma: Some((5.0, 1.0)),
                ..Default::default()
            },
            "heatmap_sigma",
        ),
        (
            ads_strategy::Params {
                budget_tolerance: Some(0.5),
                ..Default::default()
            },
            "budget_tolerance 0.5",
        ),
        (
            ads_strategy::Params {
                budget: Some(100_000),
                num_channels: Some(4),
                ..Default::default()
            },
            "covers all 4 channels",
        ),
    ] {
        let err = generate_suite(&suite(1, Family::AdsStrategy(bad)))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
}
