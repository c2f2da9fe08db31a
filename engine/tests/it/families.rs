//! Every family over many seeds, through the RON round trip the CLI uses.

use std::path::Path;

use tbsim::agent::{Idle, Oracle};
use tbsim::generate::{
    Family, ScenarioPlan, Suite, TaskPlan, generate_suite, kb_fix, meeting_attend,
    transaction_review,
};
use tbsim::scenario::{LoadedScenario, parse_str, validate};

const SEEDS: u64 = 100;

fn plan(seed: u64, family: Family) -> Suite {
    Suite {
        name: "sweep".into(),
        seed,
        scenarios: vec![ScenarioPlan {
            name: format!("sweep-{seed}"),
            description: String::new(),
            date: "2025-10-01".into(),
            start: "09:00".into(),
            end: "18:00".into(),
            company_size: 40,
            tasks: vec![TaskPlan {
                id: "t".into(),
                family,
                release: Default::default(),
                deadline: None,
                priority: Default::default(),
            }],
            days: vec![],
        }],
    }
}

fn load(text: &str) -> LoadedScenario {
    let path = Path::new("sweep.ron");
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

fn sweep(family: impl Fn() -> Family) {
    let mut variants = std::collections::BTreeSet::new();
    let mut texts = std::collections::BTreeSet::new();
    for seed in 0..SEEDS {
        let files = generate_suite(&plan(seed, family())).unwrap();
        let text = &files[0].1;
        assert_eq!(
            &generate_suite(&plan(seed, family())).unwrap()[0].1,
            text,
            "seed {seed} regenerates identically"
        );
        texts.insert(text.clone());
        let loaded = load(text);
        variants.extend(loaded.scenario.tasks.iter().map(|t| t.variant.clone()));
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
    }
    assert_eq!(
        texts.len() as u64,
        SEEDS,
        "every seed gives a different world"
    );
    assert!(
        variants.len() >= 3,
        "seeds cover several variants: {variants:?}"
    );
}

#[test]
fn kb_fix_over_seeds() {
    sweep(|| Family::KbFix(kb_fix::Params::default()));
}

#[test]
fn meeting_attend_over_seeds() {
    sweep(|| Family::MeetingAttend(meeting_attend::Params::default()));
}

#[test]
fn transaction_review_over_seeds() {
    sweep(|| Family::TransactionReview(transaction_review::Params::default()));
}

#[test]
fn trivially_wrong_answers_fail_the_answer_checkpoints() {
    use tbsim::sim::{Decision, Sim, SimConfig};
    use tbsim::tools::{LivePython, ToolCall};
    use tbsim::trajectory::Trajectory;
    let loaded = crate::util::scenario("transactions-two-abnormal");
    let table = loaded
        .scenario
        .files
        .iter()
        .find(|f| f.path.ends_with(".csv"))
        .unwrap();
    let tbsim::scenario::Content::Text(csv) = &table.content else {
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
        let mut sim = Sim::new(
            &loaded,
            SimConfig::default(),
            Trajectory::in_memory(),
            Box::new(LivePython::default()),
        );
        sim.begin();
        let args = serde_json::json!({"path": "workspace/transaction_review_report.json", "content": body}).to_string();
        sim.step(&Decision {
            calls: vec![ToolCall {
                id: "1".into(),
                name: "write_file".into(),
                arguments: args,
            }],
        });
        sim.end(tbsim::world::EndReason::Finished);
        let r = sim.results();
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
    let a = tbsim::generate::generate_scenario(7, &one.scenarios[0]).unwrap();
    let b = tbsim::generate::generate_scenario(7, &two.scenarios[0]).unwrap();
    let ka = a.tasks.iter().find(|t| t.key == "task/kb").unwrap();
    let kb = b.tasks.iter().find(|t| t.key == "task/kb").unwrap();
    assert_eq!(ka, kb);
    assert_eq!(
        a.company.people.iter().map(|p| &p.name).collect::<Vec<_>>(),
        b.company.people.iter().map(|p| &p.name).collect::<Vec<_>>()
    );
}
