//! Attacks on generated content (issue 8, findings 5-7): answers a prior can guess,
//! drive listings that skip the colleague who holds a manual, days that contradict
//! each other, and task lists that show tasks never released.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig, ToolResult};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::suite::{family_by_key, family_keys};
use tbsim_gen::{
    DayPlan, Family, ReleasePlan, ScenarioPlan, Suite, TaskPlan, generate_scenario, generate_suite,
    transaction_review,
};
use tbsim_scenario::{Check, LoadedScenario, Scenario};

use crate::util::{DATE, load_generated, one_task_plan};

fn start(loaded: &LoadedScenario) -> Sim {
    let mut s = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    s.begin();
    s
}

fn call(sim: &mut Sim, name: &str, args: Value) -> ToolResult {
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
    obs.results.into_iter().next().expect("one result per call")
}

fn plan_of(name: &str, days: Vec<Vec<TaskPlan>>) -> ScenarioPlan {
    ScenarioPlan {
        name: name.into(),
        description: String::new(),
        date: DATE.into(),
        start: "09:00".into(),
        end: "18:00".into(),
        company_size: 40,
        tasks: Vec::new(),
        days: days.into_iter().map(|tasks| DayPlan { tasks }).collect(),
    }
}

fn task(id: &str, family: Family, release: ReleasePlan, deadline: &str) -> TaskPlan {
    TaskPlan {
        id: id.into(),
        family,
        release,
        deadline: Some(deadline.into()),
        priority: Default::default(),
    }
}

fn load_plan(seed: u64, plan: ScenarioPlan) -> LoadedScenario {
    let suite = Suite {
        name: "attack".into(),
        seed,
        scenarios: vec![plan],
    };
    let text = generate_suite(&suite).unwrap().remove(0).1;
    load_generated(&text, "attack.ron")
}

/// Every drive file `list_folder` shows, walking down from `drive`.
fn listed_drive(sim: &mut Sim) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec!["drive".to_owned()];
    while let Some(dir) = todo.pop() {
        let r = call(sim, "list_folder", json!({"path": dir}));
        assert!(r.ok, "{dir}: {:?}", r.error);
        let v = r.result.expect("listing");
        for e in v["entries"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap().trim_end_matches('/');
            let path = format!("{dir}/{name}");
            if e["kind"] == "folder" {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Finding 7: a gated task whose gate never opens is closed at its deadline; it was
/// never the agent's, so `my_tasks` must not show its objective then.
#[test]
fn my_tasks_never_shows_a_task_that_was_never_released() {
    let tr = Family::TransactionReview(transaction_review::Params::default());
    let loaded = load_plan(
        3,
        plan_of(
            "gated",
            vec![vec![
                task("review", tr, ReleasePlan::Start, "10:00"),
                task(
                    "later",
                    family_by_key("kb_fix").unwrap(),
                    ReleasePlan::AfterCheckpoint {
                        task: "review".into(),
                        checkpoint: "suppliers_correct".into(),
                    },
                    "12:00",
                ),
            ]],
        ),
    );
    let later = loaded
        .scenario
        .tasks
        .iter()
        .find(|t| t.key == "task/later")
        .unwrap()
        .objective
        .clone();
    let mut s = start(&loaded);
    // The idle intern lets the gated task's deadline pass without its gate opening.
    let r = call(&mut s, "wait", json!({"until": "12:30"}));
    assert!(r.ok, "{:?}", r.error);
    let r = call(&mut s, "my_tasks", json!({}));
    let text = r.result.unwrap().to_string();
    assert!(text.contains("task/review"), "the released task is listed");
    assert!(
        !text.contains("task/later") && !text.contains(&later[..40.min(later.len())]),
        "a never-released task leaked through my_tasks: {text}"
    );
}

/// Finding 5: listing the drive must not replace asking Finance where the review
/// manual is; the exact path still reads, and once a colleague has named it, it lists.
#[test]
fn list_folder_does_not_shortcut_asking_for_the_manual() {
    let loaded = load_plan(
        11,
        one_task_plan(
            "manual",
            11,
            "review",
            Family::TransactionReview(transaction_review::Params::default()),
            DATE,
        ),
    );
    let mut s = start(&loaded);
    let before = listed_drive(&mut s);
    assert!(
        !before.iter().any(|p| p == transaction_review::MANUAL),
        "the manual is listed before anyone named it: {before:?}"
    );
    assert!(
        !before.iter().any(|p| p.starts_with("drive/finance/review")),
        "its folder gives it away: {before:?}"
    );
    // The other drive content stays visible (the handbook, the table's folder).
    assert!(!before.is_empty());

    // Ask Finance as the task says; after the reply the manual lists.
    let ask = &loaded.scenario.tasks[0].plan[0];
    assert_eq!(ask.tool, "send_message");
    let args: Value = serde_json::from_str(&ask.args).unwrap();
    let r = call(&mut s, "send_message", args);
    assert!(r.ok, "{:?}", r.error);
    let r = call(&mut s, "wait", json!({"minutes": 30}));
    assert!(r.ok, "{:?}", r.error);
    let after = listed_drive(&mut s);
    assert!(
        after.iter().any(|p| p == transaction_review::MANUAL),
        "named by Finance, the manual lists: {after:?}"
    );

    // Reading the exact path never depended on the listing.
    let mut s = start(&loaded);
    let r = call(
        &mut s,
        "read_file",
        json!({"path": transaction_review::MANUAL}),
    );
    assert!(r.ok, "{:?}", r.error);
}

/// Finding 6: two days of one scenario never write two versions of one drive path,
/// for any family, and a day-2 transaction review is judged against the only manual
/// the agent can read.
#[test]
fn multi_day_scenarios_agree_on_every_shared_file() {
    for key in family_keys() {
        for seed in 0..6u64 {
            let fam = family_by_key(key).unwrap();
            let plan = plan_of(
                &format!("twice-{seed}"),
                vec![
                    vec![task("a", fam.clone(), ReleasePlan::Start, "17:00")],
                    vec![task("b", fam, ReleasePlan::Start, "17:00")],
                ],
            );
            generate_scenario(seed, &plan)
                .unwrap_or_else(|e| panic!("{key} seed {seed}: two days conflict: {e}"));
        }
    }
    for seed in 0..40u64 {
        let fam = || Family::TransactionReview(transaction_review::Params::default());
        let plan = plan_of(
            &format!("limits-{seed}"),
            vec![
                vec![task("a", fam(), ReleasePlan::Start, "17:00")],
                vec![task("b", fam(), ReleasePlan::Start, "17:00")],
            ],
        );
        let s = generate_scenario(seed, &plan).unwrap();
        let manual = s
            .files
            .iter()
            .find(|f| f.path == transaction_review::MANUAL)
            .map(|f| format!("{:?}", f.content))
            .unwrap();
        for t in &s.tasks {
            let limit = json_numbers(&t.checkpoints[1].check, "/approval_limit");
            assert_eq!(limit.len(), 1, "{}", t.key);
            let shown = format!("limit of {}", limit[0] as u64);
            assert!(
                manual.contains(&shown),
                "seed {seed} {}: expects {shown}, which the manual does not state",
                t.key
            );
        }
    }
}

fn json_numbers(c: &Check, pointer: &str) -> Vec<f64> {
    match c {
        Check::JsonNumber {
            pointer: p,
            expected,
            ..
        } if p == pointer => vec![*expected],
        Check::All(v) => v.iter().flat_map(|c| json_numbers(c, pointer)).collect(),
        _ => Vec::new(),
    }
}

/// Whether a check is judged on what the agent delivered (a milestone is not).
fn is_answer(c: &Check) -> bool {
    match c {
        Check::Consulted(_)
        | Check::Disclosed(_)
        | Check::ToolCalled { .. }
        | Check::Attended(_) => false,
        Check::All(v) => v.iter().any(is_answer),
        _ => true,
    }
}

/// The answer a check wants, without the paths it reads (the same for every seed).
fn signature(c: &Check) -> String {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("path");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(c).unwrap();
    strip(&mut v);
    v.to_string()
}

/// A check any content-blind agent can satisfy with an empty list.
fn only_empty_list(c: &Check) -> bool {
    match c {
        Check::JsonStringSet { expected, .. } => expected.is_empty(),
        Check::JsonRecords { expected, .. } => expected.is_empty(),
        Check::All(v) => v.iter().filter(|c| is_answer(c)).all(only_empty_list),
        _ => false,
    }
}

/// Finding 5: over many seeds, no scored answer takes one value so often that a
/// constant guess pays: the most common expected answer of every checkpoint stays at
/// or below 60% of instances, an answer an empty list satisfies at or below 25%, and
/// every message answer names the competing candidates it must not contain.
fn priors_do_not_pay(key: &str, seeds: u64) {
    let mut by_cp: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut empty: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for seed in 0..seeds {
        let plan = one_task_plan(key, seed, "t", family_by_key(key).unwrap(), DATE);
        let s: Scenario =
            generate_scenario(seed, &plan).unwrap_or_else(|e| panic!("{key} seed {seed}: {e}"));
        for t in &s.tasks {
            let stage = t.key.trim_start_matches("task/t");
            for cp in t.checkpoints.iter().filter(|c| is_answer(&c.check)) {
                let k = format!("{stage}:{}", cp.key);
                *seen.entry(k.clone()).or_default() += 1;
                *by_cp
                    .entry(k.clone())
                    .or_default()
                    .entry(signature(&cp.check))
                    .or_default() += 1;
                if only_empty_list(&cp.check) {
                    *empty.entry(k).or_default() += 1;
                }
                if let Check::MessageSent { absent, .. } = &cp.check {
                    assert!(
                        !absent.is_empty(),
                        "{key} seed {seed} {}: a message answer without competing candidates",
                        cp.key
                    );
                }
            }
        }
    }
    for (k, values) in &by_cp {
        let n = seen[k];
        // Checkpoints that occur in a handful of instances say nothing about priors.
        if n < seeds / 10 {
            continue;
        }
        let (top, count) = values.iter().max_by_key(|(_, c)| **c).unwrap();
        assert!(
            *count as f64 <= 0.6 * n as f64,
            "{key} {k}: {count} of {n} instances expect the same answer, so a constant pays: {top}"
        );
        let e = empty.get(k).copied().unwrap_or(0);
        assert!(
            e as f64 <= 0.25 * n as f64,
            "{key} {k}: an empty list is right in {e} of {n} instances"
        );
    }
}

macro_rules! prior_tests {
    ($($name:ident => $key:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            priors_do_not_pay($key, 200);
        }
    )*};
}

prior_tests! {
    priors_kb_fix => "kb_fix",
    priors_meeting_attend => "meeting_attend",
    priors_transaction_review => "transaction_review",
    priors_meeting_book => "meeting_book",
    priors_resume_select => "resume_select",
    priors_sales => "sales",
    priors_website_monitor => "website_monitor",
    priors_attendance => "attendance",
    priors_data_completion => "data_completion",
    priors_urgent_interrupt => "urgent_interrupt",
    priors_changed_requirement => "changed_requirement",
    priors_handoff_chain => "handoff_chain",
    priors_ads_strategy => "ads_strategy",
    priors_event_planning => "event_planning",
}

/// Finding 5: the zero-abnormal transaction review (a third of instances) no longer
/// pays a content-blind `[]`: the report must carry the manual's approval limit.
#[test]
fn an_empty_supplier_list_without_the_manual_earns_nothing() {
    for seed in 0..30u64 {
        let loaded = load_plan(
            seed,
            one_task_plan(
                "none",
                seed,
                "review",
                Family::TransactionReview(transaction_review::Params {
                    normal: Some(3),
                    abnormal: Some(0),
                }),
                DATE,
            ),
        );
        let task = &loaded.scenario.tasks[0];
        let report = match &task.checkpoints[1].check {
            Check::All(v) => match &v[0] {
                Check::JsonStringSet { path, .. } => path.clone(),
                c => panic!("{c:?}"),
            },
            c => panic!("{c:?}"),
        };
        let r = crate::util::write_answer(&loaded, &report, r#"{"abnormal_suppliers": []}"#);
        assert!(
            r.tasks[0]
                .checkpoints
                .iter()
                .all(|c| !c.passed || c.key == "manual_consulted"),
            "seed {seed}: {:?}",
            r.tasks[0].checkpoints
        );
    }
}
