//! Every family over many seeds, through the RON round trip the CLI uses.

use tbsim_engine::agent::{Idle, Oracle};
use tbsim_gen::{
    Family, Suite, TaskPlan, generate_suite, kb_fix, meeting_attend, registry, transaction_review,
};
use tbsim_scenario::LoadedScenario;

use crate::util::{SEEDS, assert_distinct_worlds, check_generated, load_generated, one_task_suite};

fn plan(seed: u64, family: Family) -> Suite {
    one_task_suite("sweep", seed, "t", family)
}

fn load(text: &str) -> LoadedScenario {
    load_generated(text, "sweep.ron")
}

type Wrong = fn(&tbsim_scenario::TaskSpec, &tbsim_scenario::Scenario) -> Vec<(String, String)>;

/// What [`assert_trivially_wrong_fails`] tried: all wrong answers, and those of
/// them from the family's own "every candidate" generator.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tried {
    pub answers: usize,
    pub candidates: usize,
}

/// Writes trivially wrong answers (an empty file, a copied input, every candidate)
/// into each answer path and requires that no checkpoint passes. Returns what it
/// tried, so a caller can require that something was.
pub fn assert_trivially_wrong_fails(loaded: &LoadedScenario, wrong: Wrong) -> Tried {
    use tbsim_core::protocol::ToolCall;
    use tbsim_core::protocol::{Decision, SimConfig};
    use tbsim_engine::sim::Sim;
    use tbsim_engine::tools::LivePython;
    use tbsim_scenario::Content;
    let s = &loaded.scenario;
    let biggest_input = s
        .files
        .iter()
        .filter_map(|f| match &f.content {
            Content::Text(t) => Some(t.clone()),
            _ => None,
        })
        .max_by_key(String::len)
        .unwrap_or_default();
    let mut tried = Tried::default();
    for task in &s.tasks {
        // Gated tasks need other work first; their families are swept ungated.
        if matches!(
            task.release,
            tbsim_scenario::Release::AfterCheckpoint { .. }
        ) {
            continue;
        }
        let mut targets: Vec<String> = Vec::new();
        for c in &task.checkpoints {
            for p in tbsim_validity::gate::check_paths(&c.check) {
                if !targets.contains(&p) {
                    targets.push(p);
                }
            }
        }
        let mut attempts: Vec<(String, String, &str)> = Vec::new();
        for p in &targets {
            attempts.push((p.clone(), String::new(), "an empty file"));
            attempts.push((p.clone(), biggest_input.clone(), "a copied input"));
        }
        // Inputs the task names are the likeliest copies (e.g. an article copied unchanged).
        for f in &s.files {
            if let Content::Text(t) = &f.content
                && task.objective.contains(&f.path)
            {
                for p in &targets {
                    attempts.push((p.clone(), t.clone(), "a copied input"));
                }
            }
        }
        attempts.extend(
            wrong(task, s)
                .into_iter()
                .map(|(p, c)| (p, c, "every candidate")),
        );
        tried.answers += attempts.len();
        tried.candidates += attempts.iter().filter(|a| a.2 == "every candidate").count();
        for (path, content, label) in attempts {
            let mut sim = Sim::new(
                loaded,
                SimConfig::default(),
                tbsim_engine::trajectory::Trajectory::digest_only(),
                Box::new(LivePython::default()),
            );
            let mut obs = sim.begin();
            // Wait for the task's release (joining meetings, where tasks are announced),
            // then write the wrong answer.
            for _ in 0..50 {
                if sim
                    .world()
                    .resource::<tbsim_engine::world::History>()
                    .released
                    .contains(&task.key)
                    || sim.is_over()
                {
                    break;
                }
                for n in obs
                    .notifications
                    .iter()
                    .chain(obs.results.iter().flat_map(|r| &r.notifications))
                {
                    if let tbsim_core::protocol::Notification::MeetingStarting { meeting, .. } = n {
                        let args = serde_json::json!({"meeting": meeting}).to_string();
                        sim.step(&Decision {
                            calls: vec![ToolCall {
                                id: "j".into(),
                                name: "join_meeting".into(),
                                arguments: args,
                            }],
                        });
                    }
                }
                obs = sim.step(&Decision {
                    calls: vec![ToolCall {
                        id: "w".into(),
                        name: "wait".into(),
                        arguments: "{}".into(),
                    }],
                });
            }
            assert!(
                sim.world()
                    .resource::<tbsim_engine::world::History>()
                    .released
                    .contains(&task.key),
                "{} was never released",
                task.key
            );
            let args = serde_json::json!({"path": path, "content": content}).to_string();
            sim.step(&Decision {
                calls: vec![ToolCall {
                    id: "x".into(),
                    name: "write_file".into(),
                    arguments: args,
                }],
            });
            sim.end(tbsim_core::protocol::EndReason::Finished);
            let r = sim.results();
            let t = r.tasks.iter().find(|t| t.key == task.key).unwrap();
            let passed: Vec<&str> = t
                .checkpoints
                .iter()
                .filter(|c| c.passed)
                .map(|c| c.key.as_str())
                .collect();
            assert!(
                passed.is_empty(),
                "{}: {label} at {path} passed {passed:?}",
                task.key
            );
        }
    }
    tried
}

fn sweep(family: impl Fn() -> Family, wrong: Wrong) {
    let mut variants = std::collections::BTreeSet::new();
    assert_distinct_worlds("sweep", SEEDS, |seed| {
        let (text, loaded) = check_generated(&format!("seed {seed}"), "sweep.ron", || {
            plan(seed, family())
        });
        variants.extend(loaded.scenario.tasks.iter().map(|t| t.variant.clone()));
        if seed % 20 == 0 {
            let tried = assert_trivially_wrong_fails(&loaded, wrong);
            assert!(tried.candidates > 0, "seed {seed}: no wrong answer tried");
        }
        text
    });
    assert!(
        variants.len() >= 3,
        "seeds cover several variants: {variants:?}"
    );
}

#[test]
fn kb_fix_over_seeds() {
    sweep(
        || Family::KbFix(kb_fix::Params::default()),
        kb_fix::wrong_answers,
    );
}

#[test]
fn meeting_attend_over_seeds() {
    sweep(
        || Family::MeetingAttend(meeting_attend::Params::default()),
        meeting_attend::wrong_answers,
    );
}

#[test]
fn transaction_review_over_seeds() {
    sweep(
        || Family::TransactionReview(transaction_review::Params::default()),
        transaction_review::wrong_answers,
    );
}

#[test]
fn trivially_wrong_answers_fail_the_answer_checkpoints() {
    let loaded = crate::util::scenario("transactions-two-abnormal");
    let table = loaded
        .scenario
        .files
        .iter()
        .find(|f| f.path.ends_with(".csv"))
        .unwrap();
    let tbsim_scenario::Content::Text(csv) = &table.content else {
        panic!()
    };
    let all: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(2))
        .collect();
    for (label, body) in [
        ("empty file", String::new()),
        (
            "every supplier",
            serde_json::json!({"abnormal_suppliers": all}).to_string(),
        ),
        ("no supplier", r#"{"abnormal_suppliers": []}"#.to_owned()),
        ("copied input", csv.clone()),
    ] {
        let r =
            crate::util::write_answer(&loaded, "workspace/transaction_review_report.json", &body);
        let correct = r.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "suppliers_correct")
            .unwrap();
        assert!(!correct.passed, "{label} must not pass");
    }
}

#[test]
fn adding_a_task_does_not_change_another_tasks_draws() {
    let kb = || TaskPlan {
        id: "kb".into(),
        family: Family::KbFix(kb_fix::Params::default()),
        release: Default::default(),
        deadline: None,
        priority: Default::default(),
    };
    let mut one = plan(7, Family::KbFix(kb_fix::Params::default()));
    one.scenarios[0].tasks = vec![kb()];
    let mut two = one.clone();
    two.scenarios[0].tasks.insert(
        0,
        TaskPlan {
            id: "tr".into(),
            family: Family::TransactionReview(Default::default()),
            release: Default::default(),
            deadline: None,
            priority: Default::default(),
        },
    );
    let a = tbsim_gen::generate_scenario(7, &one.scenarios[0]).unwrap();
    let b = tbsim_gen::generate_scenario(7, &two.scenarios[0]).unwrap();
    let ka = a.tasks.iter().find(|t| t.key == "task/kb").unwrap();
    let kb = b.tasks.iter().find(|t| t.key == "task/kb").unwrap();
    assert_eq!(ka, kb);
    assert_eq!(
        a.company.people.iter().map(|p| &p.name).collect::<Vec<_>>(),
        b.company.people.iter().map(|p| &p.name).collect::<Vec<_>>()
    );
}

#[test]
fn every_listed_variant_is_solvable_and_idle_scores_zero() {
    for (i, v) in Family::all_variants().into_iter().enumerate() {
        let mut suite = plan(1000 + i as u64, v.family.clone());
        suite.scenarios[0].name = format!("variant-{i}");
        let text = &generate_suite(&suite).unwrap()[0].1;
        let loaded = load(text);
        assert!(
            loaded.scenario.tasks.iter().all(|t| t.variant == v.key),
            "{}",
            v.key
        );
        let (o, _) = crate::util::run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(o.checkpoint_score, 1.0, "{}: {:#?}", v.key, o.tasks);
        let (idle, _) = crate::util::run(&loaded, &mut Idle::default(), None);
        assert_eq!(idle.checkpoint_score, 0.0, "{}", v.key);
    }
}

/// The family's own "every candidate" answers, from the task's registered family.
fn any_wrong(
    task: &tbsim_scenario::TaskSpec,
    s: &tbsim_scenario::Scenario,
) -> Vec<(String, String)> {
    registry::of_task(task)
        .unwrap_or_else(|| panic!("{}: unregistered family `{}`", task.key, task.family))
        .wrong_answers(task, s)
}

#[test]
fn bundled_scenarios_reject_trivially_wrong_answers() {
    for path in crate::util::bundled() {
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        assert_trivially_wrong_fails(&loaded, any_wrong);
    }
}

/// Every family's wrong-answer generator yields answers, and the harness writes
/// them: a family whose generator returned nothing, or whose answer paths the
/// harness missed, would pass `assert_trivially_wrong_fails` without a test.
#[test]
fn trivially_wrong_answers_are_tried_for_every_family() {
    let mut none = Vec::new();
    for entry in registry::FAMILIES {
        let key = entry.key();
        let suite = plan(0, entry.unset());
        let loaded = load(&tbsim_gen::generate_suite(&suite).unwrap()[0].1);
        if key == <registry::MeetingBook as registry::MetaTask>::KEY {
            // No answer file: its wrong answers are guest lists, booked and
            // refused in `family_meeting_book`.
            let task = &loaded.scenario.tasks[0];
            let lists = tbsim_gen::meeting_book::wrong_bookings(task, &loaded.scenario);
            assert!(lists.len() >= 3, "meeting_book: {lists:?}");
            continue;
        }
        let tried = assert_trivially_wrong_fails(&loaded, any_wrong);
        if tried.candidates == 0 || tried.answers == 0 {
            none.push(format!("{key}: {tried:?}"));
        }
    }
    assert!(none.is_empty(), "no wrong answers tried for {none:?}");
}
