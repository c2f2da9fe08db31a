//! The sales family over many seeds and every variant, plus trivially wrong answers.
//! The sweep helpers here are shared with `family_website_monitor`.

use std::collections::BTreeSet;
use std::path::Path;

use tbsim::agent::{Idle, Oracle};
use tbsim::generate::{Family, ScenarioPlan, Suite, TaskPlan, generate_suite, sales};
use tbsim::result::RunResult;
use tbsim::scenario::{Check, LoadedScenario, Scenario, TaskSpec, parse_str, validate};
use tbsim::sim::{Decision, Sim, SimConfig};
use tbsim::tools::{LivePython, ToolCall};
use tbsim::trajectory::Trajectory;

/// Seeds per family with unset parameters.
pub(crate) const SEEDS: u64 = 200;

/// A one-task suite.
pub(crate) fn suite(seed: u64, family: Family) -> Suite {
    Suite {
        name: "fam".into(),
        seed,
        scenarios: vec![ScenarioPlan {
            name: format!("fam-{seed}"),
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
            days: Vec::new(),
        }],
    }
}

/// Parses and validates generated RON, as `tbsim run` would.
pub(crate) fn load(text: &str) -> LoadedScenario {
    let path = Path::new("fam.ron");
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

/// Generates, checks determinism, round-trips and runs the oracle (1.0, no tool
/// errors) and the idle agent (0). Returns the RON text and the loaded scenario.
pub(crate) fn check_one(seed: u64, family: &Family) -> (String, LoadedScenario) {
    let text = generate_suite(&suite(seed, family.clone())).unwrap()[0]
        .1
        .clone();
    assert_eq!(
        generate_suite(&suite(seed, family.clone())).unwrap()[0].1,
        text,
        "seed {seed} regenerates identically"
    );
    let loaded = load(&text);
    assert_eq!(
        tbsim::generate::to_ron(&loaded.scenario),
        text,
        "seed {seed}: RON round trip is exact"
    );
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
        "seed {seed}: a checkpoint passed with no action: {:#?}",
        i.tasks
    );
    (text, loaded)
}

/// Sweeps seeds with unset parameters and every variant once; returns the variant
/// keys the unset seeds reached.
pub(crate) fn sweep(
    unset: impl Fn() -> Family,
    variants: Vec<(String, Family)>,
) -> BTreeSet<String> {
    let mut texts = BTreeSet::new();
    let mut reached = BTreeSet::new();
    for seed in 0..SEEDS {
        let (text, loaded) = check_one(seed, &unset());
        reached.extend(loaded.scenario.tasks.iter().map(|t| t.variant.clone()));
        texts.insert(text);
    }
    assert_eq!(
        texts.len() as u64,
        SEEDS,
        "every seed gives a different world"
    );
    for (i, (key, family)) in variants.into_iter().enumerate() {
        let (_, loaded) = check_one(10_000 + i as u64, &family);
        assert_eq!(loaded.scenario.tasks[0].variant, key, "variant key");
    }
    reached
}

/// Runs one `write_file` of `content` to `path` after the start and returns the results.
pub(crate) fn after_writing(loaded: &LoadedScenario, path: &str, content: &str) -> RunResult {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    let args = serde_json::json!({"path": path, "content": content}).to_string();
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "1".into(),
            name: "write_file".into(),
            arguments: args,
        }],
    });
    assert!(obs.results[0].ok, "{:?}", obs.results[0].error);
    sim.end(tbsim::world::EndReason::Finished);
    sim.results()
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
    sales::variants()
        .into_iter()
        .map(|(k, p)| (k, Family::Sales(p)))
        .collect()
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
        let text = &generate_suite(&suite(seed, family)).unwrap()[0].1;
        let loaded = load(text);
        let csv = loaded
            .scenario
            .files
            .iter()
            .find_map(|f| match &f.content {
                tbsim::scenario::Content::Text(t) if f.path.ends_with(".csv") => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        assert_wrong_answers_fail(&loaded, sales::wrong_answers, &csv);
    }
}

#[test]
fn sales_handbook_is_on_the_drive_and_the_hint_is_live() {
    let text = &generate_suite(&suite(3, Family::Sales(sales::Params::default()))).unwrap()[0].1;
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
