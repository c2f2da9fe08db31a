//! The sales family over many seeds and every variant, plus trivially wrong answers.
//! The sweep helpers here are shared with `family_website_monitor`.

use std::collections::BTreeSet;

use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig};
use tbsim_engine::result::RunResult;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, Suite, sales};
use tbsim_scenario::{Check, LoadedScenario, Scenario, TaskSpec};

use crate::util::{
    SEEDS, assert_distinct_worlds, check_generated, family_variants, generate_one, load_generated,
    one_task_suite, write_answer_and,
};

/// A one-task suite.
pub(crate) fn suite(seed: u64, family: Family) -> Suite {
    one_task_suite("fam", seed, "t", family)
}

/// Parses and validates generated RON, as `tbsim run` would.
pub(crate) fn load(text: &str) -> LoadedScenario {
    load_generated(text, "fam.ron")
}

/// Generates, checks determinism, round-trips and runs the oracle (1.0, no tool
/// errors) and the idle agent (0). Returns the RON text and the loaded scenario.
pub(crate) fn check_one(seed: u64, family: &Family) -> (String, LoadedScenario) {
    let (text, loaded) = check_generated(&format!("seed {seed}"), "fam.ron", || {
        suite(seed, family.clone())
    });
    assert_eq!(
        tbsim_gen::to_ron(&loaded.scenario),
        text,
        "seed {seed}: RON round trip is exact"
    );
    (text, loaded)
}

/// Sweeps seeds with unset parameters and every variant once; returns the variant
/// keys the unset seeds reached.
pub(crate) fn sweep(
    unset: impl Fn() -> Family,
    variants: Vec<(String, Family)>,
) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    assert_distinct_worlds("fam", SEEDS, |seed| {
        let (text, loaded) = check_one(seed, &unset());
        reached.extend(loaded.scenario.tasks.iter().map(|t| t.variant.clone()));
        text
    });
    for (i, (key, family)) in variants.into_iter().enumerate() {
        let (_, loaded) = check_one(10_000 + i as u64, &family);
        assert_eq!(loaded.scenario.tasks[0].variant, key, "variant key");
    }
    reached
}

/// Runs one `write_file` of `content` to `path` after the start and returns the results.
pub(crate) fn after_writing(loaded: &LoadedScenario, path: &str, content: &str) -> RunResult {
    write_answer_and(loaded, path, content, |w| assert!(w.ok, "{:?}", w.error))
}

/// Whether a check looks at the answer's content (not just its presence or shape).
fn is_answer(c: &Check) -> bool {
    match c {
        Check::FileText { .. }
        | Check::FileContains { .. }
        | Check::JsonStringSet { .. }
        | Check::JsonRecords { .. }
        | Check::JsonNumber { .. } => true,
        Check::All(v) => v.iter().any(is_answer),
        _ => false,
    }
}

/// The task's answer checkpoints and the workspace paths they read.
pub(crate) fn answer_checkpoints(task: &TaskSpec) -> (Vec<String>, BTreeSet<String>) {
    fn paths(c: &Check, out: &mut BTreeSet<String>) {
        match c {
            Check::FileText { path, .. }
            | Check::FileContains { path, .. }
            | Check::JsonStringSet { path, .. }
            | Check::JsonRecords { path, .. }
            | Check::JsonNumber { path, .. } => {
                out.insert(path.clone());
            }
            Check::All(v) => v.iter().for_each(|c| paths(c, out)),
            _ => {}
        }
    }
    let mut keys = Vec::new();
    let mut out = BTreeSet::new();
    for cp in &task.checkpoints {
        if is_answer(&cp.check) {
            keys.push(cp.key.clone());
            paths(&cp.check, &mut out);
        }
    }
    (keys, out)
}

/// Writes each wrong answer and requires every answer checkpoint to stay unpassed.
pub(crate) fn assert_wrong_answers_fail(
    loaded: &LoadedScenario,
    wrong: impl Fn(&TaskSpec, &Scenario) -> Vec<(String, String)>,
    copied_input: &str,
) {
    let task = &loaded.scenario.tasks[0];
    let (keys, paths) = answer_checkpoints(task);
    assert!(!keys.is_empty(), "{} has answer checkpoints", task.variant);
    let mut cases: Vec<(String, String, String)> = Vec::new();
    for p in &paths {
        cases.push(("empty file".into(), p.clone(), String::new()));
        cases.push(("copied input".into(), p.clone(), copied_input.to_owned()));
    }
    let listed = wrong(task, &loaded.scenario);
    assert!(!listed.is_empty(), "{}: no wrong answers", task.variant);
    for (p, body) in listed {
        cases.push(("every candidate".into(), p, body));
    }
    for (label, path, body) in cases {
        let r = after_writing(loaded, &path, &body);
        for cp in r.tasks[0]
            .checkpoints
            .iter()
            .filter(|c| keys.contains(&c.key))
        {
            assert!(
                !cp.passed,
                "{}: {label} passed `{}`:\n{body}",
                task.variant, cp.key
            );
        }
    }
}

fn sales_variants() -> Vec<(String, Family)> {
    family_variants(sales::variants(), Family::Sales)
}

#[test]
fn sales_over_seeds_and_variants() {
    let reached = sweep(|| Family::Sales(sales::Params::default()), sales_variants());
    assert!(
        reached.len() >= 12,
        "unset seeds reach nearly every variant: {reached:?}"
    );
}

#[test]
fn sales_trivially_wrong_answers_fail() {
    let mut seeds: Vec<(u64, Family)> = sales_variants()
        .into_iter()
        .enumerate()
        .map(|(i, (_, f))| (20_000 + i as u64, f))
        .collect();
    seeds.extend((0..12).map(|s| (s, Family::Sales(sales::Params::default()))));
    for (seed, family) in seeds {
        let text = &generate_one(&suite(seed, family));
        let loaded = load(text);
        let csv = loaded
            .scenario
            .files
            .iter()
            .find_map(|f| match &f.content {
                tbsim_scenario::Content::Text(t) if f.path.ends_with(".csv") => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        assert_wrong_answers_fail(&loaded, sales::wrong_answers, &csv);
    }
}

#[test]
fn sales_handbook_is_on_the_drive_and_the_hint_is_live() {
    let text = &generate_one(&suite(3, Family::Sales(sales::Params::default())));
    let loaded = load(text);
    let s = &loaded.scenario;
    assert!(s.files.iter().any(|f| f.path == sales::HANDBOOK));
    let holders: Vec<&str> = s
        .company
        .people
        .iter()
        .filter(|p| !p.clues.is_empty())
        .map(|p| p.department.as_str())
        .collect();
    assert!(!holders.is_empty() && holders.iter().all(|d| *d == "Sales"));
    // An agent that only asks a Sales colleague learns where the handbook is.
    let person = s
        .company
        .people
        .iter()
        .find(|p| p.department == "Sales")
        .unwrap();
    let mut sim = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    let ask = serde_json::json!({"to": person.key, "text": "Where can I find the handbook for the sales analysis?"});
    let sent = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "1".into(),
            name: "send_message".into(),
            arguments: ask.to_string(),
        }],
    });
    let read = serde_json::json!({"with": person.key});
    let obs = sim.step(&Decision {
        calls: vec![
            ToolCall {
                id: "2".into(),
                name: "wait".into(),
                arguments: r#"{"minutes": 30}"#.into(),
            },
            ToolCall {
                id: "3".into(),
                name: "read_messages".into(),
                arguments: read.to_string(),
            },
        ],
    });
    let heard = serde_json::to_string(&(sent, obs)).unwrap();
    assert!(heard.contains(sales::HANDBOOK), "{heard}");
}
