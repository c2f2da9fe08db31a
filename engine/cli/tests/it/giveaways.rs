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

/// The answers inside a check, `All` flattened.
fn components(c: &Check) -> Vec<&Check> {
    match c {
        Check::All(v) => v.iter().flat_map(components).collect(),
        c if is_answer(c) => vec![c],
        _ => Vec::new(),
    }
}

/// A list answer an empty list satisfies, with the pointer it sits at. Counted per
/// part of a checkpoint: a report whose list is `[]` gives that list away even when
/// another part of the checkpoint (a number from a manual) still has to be found.
fn empty_lists(c: &Check) -> Vec<String> {
    components(c)
        .into_iter()
        .filter_map(|c| match c {
            Check::JsonStringSet {
                pointer, expected, ..
            } if expected.is_empty() => Some(pointer.clone()),
            Check::JsonRecords {
                pointer, expected, ..
            } if expected.is_empty() => Some(pointer.clone()),
            _ => None,
        })
        .collect()
}

/// The list parts of a check (where an empty list could be right).
fn list_parts(c: &Check) -> Vec<String> {
    components(c)
        .into_iter()
        .filter_map(|c| match c {
            Check::JsonStringSet { pointer, .. } | Check::JsonRecords { pointer, .. } => {
                Some(pointer.clone())
            }
            _ => None,
        })
        .collect()
}

/// The numbers a text states, in order (`4,000` and `12.5` read as one number each;
/// the digits of a date or an ID are numbers too, as a blind script would read them).
fn numbers_in(text: &str) -> Vec<f64> {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !digit(i) {
            i += 1;
            continue;
        }
        let mut s = String::new();
        let mut j = i;
        loop {
            if digit(j) {
                s.push(b[j] as char);
                j += 1;
            } else if b.get(j) == Some(&b',') && (1..=3).all(|d| digit(j + d)) && !digit(j + 4) {
                j += 1;
            } else if b.get(j) == Some(&b'.') && digit(j + 1) && !s.contains('.') {
                s.push('.');
                j += 1;
            } else {
                break;
            }
        }
        if let Ok(v) = s.parse() {
            out.push(v);
        }
        i = j;
    }
    out
}

/// Where a blind script finds a needed number by position: for each text that states
/// `value`, whether it is that text's only, largest or first number.
fn positional(value: f64, texts: &[&str]) -> bool {
    let same = |v: f64| (v - value).abs() <= 0.5;
    texts.iter().any(|t| {
        let nums = numbers_in(t);
        if !nums.iter().any(|v| same(*v)) {
            return false;
        }
        let largest = nums.iter().copied().fold(f64::MIN, f64::max);
        nums.len() == 1 || same(largest) || same(nums[0])
    })
}

/// What a scenario lets anyone read without reasoning: its drive and workspace texts
/// and what its meetings say.
fn readable_texts(s: &Scenario) -> Vec<&str> {
    let mut out: Vec<&str> = s
        .files
        .iter()
        .filter_map(|f| match &f.content {
            tbsim_scenario::Content::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    out.extend(s.meetings.iter().map(|m| m.notes.as_str()));
    out
}

/// The giveaway figures of one population of instances (a family over many seeds, or
/// every task of a suite), keyed `family stage:checkpoint[#pointer]`.
#[derive(Default)]
struct Tally {
    seen: BTreeMap<String, u64>,
    by_cp: BTreeMap<String, BTreeMap<String, u64>>,
    lists: BTreeMap<String, u64>,
    empty: BTreeMap<String, u64>,
    numbers: BTreeMap<String, u64>,
    by_position: BTreeMap<String, u64>,
}

impl Tally {
    /// Adds the answer checkpoints of the tasks of `s` whose key starts with
    /// `task/<id>` (`stage` is the rest of the key: `-summary`, `-s2`, ...).
    fn add(&mut self, family: &str, id: &str, s: &Scenario, label: &str) {
        let texts = readable_texts(s);
        let prefix = format!("task/{id}");
        for t in s.tasks.iter().filter(|t| {
            t.key
                .strip_prefix(&prefix)
                .is_some_and(|r| r.is_empty() || r.starts_with('-'))
                && t.family == family
        }) {
            let stage = &t.key[prefix.len()..];
            for cp in t.checkpoints.iter().filter(|c| is_answer(&c.check)) {
                let k = format!("{family} {stage}:{}", cp.key);
                *self.seen.entry(k.clone()).or_default() += 1;
                *self
                    .by_cp
                    .entry(k.clone())
                    .or_default()
                    .entry(signature(&cp.check))
                    .or_default() += 1;
                for p in list_parts(&cp.check) {
                    *self.lists.entry(format!("{k}#{p}")).or_default() += 1;
                }
                for p in empty_lists(&cp.check) {
                    *self.empty.entry(format!("{k}#{p}")).or_default() += 1;
                }
                for c in components(&cp.check) {
                    if let Check::JsonNumber {
                        pointer, expected, ..
                    } = c
                    {
                        let nk = format!("{k}#{pointer}");
                        // Only figures some text states: the others are computed,
                        // and small counts and averages match list markers and
                        // dates by chance.
                        if expected.abs() >= 100.0
                            && texts
                                .iter()
                                .any(|t| numbers_in(t).iter().any(|v| (v - expected).abs() <= 0.5))
                        {
                            *self.numbers.entry(nk.clone()).or_default() += 1;
                            if positional(*expected, &texts) {
                                *self.by_position.entry(nk).or_default() += 1;
                            }
                        }
                    }
                }
                if let Check::MessageSent { absent, .. } = &cp.check {
                    assert!(
                        !absent.is_empty(),
                        "{label} {}: a message answer without competing candidates",
                        cp.key
                    );
                }
            }
        }
    }

    /// The bounds: the most common expected answer of a checkpoint in at most 60% of
    /// its instances, an empty list right in at most 25%, and a needed number the
    /// only, largest or first number of a text that states it in at most 25% (of the
    /// instances where a text states it). Populations under `min` instances are too
    /// small to judge. Returns one line per checkpoint, and the breaches.
    fn judge(&self, min: u64) -> (Vec<String>, Vec<String>) {
        let mut lines = Vec::new();
        let mut bad = Vec::new();
        for (k, values) in &self.by_cp {
            let n = self.seen[k];
            let (top, count) = values.iter().max_by_key(|(_, c)| **c).unwrap();
            lines.push(format!("{k}: most common answer {count} of {n}"));
            if n >= min && *count as f64 > 0.6 * n as f64 {
                bad.push(format!(
                    "{k}: {count} of {n} instances expect the same answer, so a constant pays: {top}"
                ));
            }
        }
        for (k, n) in &self.lists {
            let e = self.empty.get(k).copied().unwrap_or(0);
            lines.push(format!("{k}: empty list right in {e} of {n}"));
            if *n >= min && e as f64 > 0.25 * *n as f64 {
                bad.push(format!(
                    "{k}: an empty list is right in {e} of {n} instances"
                ));
            }
        }
        for (k, n) in &self.numbers {
            let e = self.by_position.get(k).copied().unwrap_or(0);
            lines.push(format!(
                "{k}: only, largest or first number of its text in {e} of {n}"
            ));
            if *n >= min && e as f64 > 0.25 * *n as f64 {
                bad.push(format!(
                    "{k}: the number to report is the only, largest or first number of a text that states it in {e} of {n} instances"
                ));
            }
        }
        (lines, bad)
    }
}

/// Finding 5: over many seeds, no scored answer takes one value so often that a
/// constant guess pays, nor sits where a blind script would pick it (see
/// [`Tally::judge`]), and every message answer names the competing candidates it
/// must not contain.
fn priors_do_not_pay(key: &str, seeds: u64) {
    let mut tally = Tally::default();
    for seed in 0..seeds {
        let plan = one_task_plan(key, seed, "t", family_by_key(key).unwrap(), DATE);
        let s: Scenario =
            generate_scenario(seed, &plan).unwrap_or_else(|e| panic!("{key} seed {seed}: {e}"));
        tally.add(key, "t", &s, &format!("{key} seed {seed}"));
    }
    // Checkpoints that occur in a handful of instances say nothing about priors.
    let (_, bad) = tally.judge(seeds / 10);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Issue 26: the same bounds over every task of a suite as it is drawn (families
/// mixed, one or two days per scenario), per family, stage and checkpoint.
fn suite_tally(suite: &Suite) -> Tally {
    let mut tally = Tally::default();
    for plan in &suite.scenarios {
        let s =
            generate_scenario(suite.seed, plan).unwrap_or_else(|e| panic!("{}: {e}", plan.name));
        for t in plan.day_plans().into_iter().flatten() {
            tally.add(t.family.key(), &t.id, &s, &plan.name);
        }
    }
    tally
}

/// A suite's population is smaller than 200 seeds: a checkpoint seen fewer than 8
/// times in it is left to the per-family draws.
const SUITE_MIN: u64 = 8;

/// The breaches of the bounds in `suite`, its figures printed (`--nocapture`).
fn suite_breaches(suite: &Suite) -> Vec<String> {
    let (lines, bad) = suite_tally(suite).judge(SUITE_MIN);
    println!("{}:\n  {}", suite.name, lines.join("\n  "));
    bad.into_iter()
        .map(|b| format!("{}: {b}", suite.name))
        .collect()
}

#[test]
fn bundled_suites_respect_the_giveaway_bounds() {
    let mut bad = Vec::new();
    for name in [
        "traineebench",
        "traineebench-cl",
        "traineebench-plus",
        "traineebench-script",
        "examples",
    ] {
        let suite =
            tbsim_gen::load_suite(&crate::util::root().join(format!("content/suites/{name}.ron")))
                .unwrap();
        bad.extend(suite_breaches(&suite));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Suites `tbsim suite new` draws hold to the bounds whatever their composition.
#[test]
fn freshly_drawn_suites_respect_the_giveaway_bounds() {
    use tbsim_gen::suite::{Mode, SuiteRequest, new_suite};
    let mut bad = Vec::new();
    for (mode, days, seed) in [(Mode::Stationary, 1, 5), (Mode::Mutable, 2, 6)] {
        let req = SuiteRequest {
            name: format!("fresh-{seed}"),
            scenarios: 40,
            days,
            seed,
            families: family_keys().iter().map(|k| k.to_string()).collect(),
            mode,
            tasks: (2, 6),
            company_size: 40,
        };
        bad.extend(suite_breaches(&new_suite(&req).unwrap()));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
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
