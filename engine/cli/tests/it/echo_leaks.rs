//! Echo leaks (issue 25): content-blind scripts that copy, echo or pick by position
//! and never work out what a task means. Each test plays one such script against
//! many generated instances; each solved a share of them before its fix.

use serde_json::{Value, json};
use tbsim_core::protocol::{Decision, SimConfig, ToolCall, ToolResult};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, generate_scenario, meeting_attend, transaction_review};
use tbsim_scenario::check::{WorldView, evaluate};
use tbsim_scenario::{Check, Content, LoadedScenario, Scenario};

use crate::util::{DATE, generate_one, load_generated, one_task_plan, one_task_suite};

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

/// A world in which the agent wrote one file and did nothing else.
struct OneFile<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

impl WorldView for OneFile<'_> {
    fn file(&self, path: &str) -> Option<&[u8]> {
        (path == self.path).then_some(self.bytes)
    }
    fn disclosed(&self, _: &str) -> bool {
        false
    }
    fn consulted(&self, _: &str) -> bool {
        false
    }
    fn attended_on_time(&self, _: &str) -> bool {
        false
    }
}

/// Whether writing `content` to `path` passes `check`.
fn passes(check: &Check, path: &str, content: &str) -> bool {
    evaluate(
        check,
        &OneFile {
            path,
            bytes: content.as_bytes(),
        },
    )
}

/// The path an answer check reads.
fn path_of(c: &Check) -> Option<&str> {
    match c {
        Check::JsonNumber { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonStringSet { path, .. } => Some(path),
        Check::All(v) => v.iter().find_map(path_of),
        _ => None,
    }
}

/// The numbers of a text in order, as a blind script reads them (`4,000` is one).
fn numbers(text: &str) -> Vec<f64> {
    let cleaned: String = text
        .chars()
        .enumerate()
        .filter(|(i, c)| {
            // Drop thousands separators between digits.
            !(*c == ','
                && text[..*i].ends_with(|d: char| d.is_ascii_digit())
                && text[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        })
        .map(|(_, c)| c)
        .collect();
    cleaned
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|t| t.parse().ok())
        .collect()
}

fn one_task(name: &str, seed: u64, family: Family) -> Scenario {
    generate_scenario(seed, &one_task_plan(name, seed, "t", family, DATE)).unwrap()
}

/// Attack: `copy_from_drive` of a whole folder brought the files `list_folder` hides
/// until a colleague names them (the review manual), so one copy and one workspace
/// listing found the manual without asking Finance. A folder copy now copies what the
/// listing shows; the exact path still copies, as it still reads.
#[test]
fn copying_a_folder_does_not_reveal_what_list_folder_hides() {
    let loaded = load_generated(
        &generate_one(&one_task_suite(
            "copy",
            4,
            "review",
            Family::TransactionReview(transaction_review::Params::default()),
        )),
        "copy.ron",
    );
    let mut s = start(&loaded);
    for folder in ["drive", "drive/finance", "drive/finance/review"] {
        let dest = format!("workspace/copy_{}", folder.replace('/', "_"));
        let r = call(
            &mut s,
            "copy_from_drive",
            json!({"path": folder, "to": dest}),
        );
        assert!(r.ok, "{folder}: {:?}", r.error);
        let copied: Vec<String> = r.result.unwrap()["copied"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert!(
            !copied
                .iter()
                .any(|p| p.ends_with("transaction_review_manual.md")),
            "copying {folder} brought the unlisted manual: {copied:?}"
        );
        let listed = call(&mut s, "list_folder", json!({"path": dest}));
        assert!(
            !listed
                .result
                .map(|v| v.to_string())
                .unwrap_or_default()
                .contains("manual"),
            "{folder}"
        );
    }
    // The drive's other files still copy with the folder.
    let r = call(
        &mut s,
        "copy_from_drive",
        json!({"path": "drive", "to": "workspace/all"}),
    );
    assert!(!r.result.unwrap()["copied"].as_array().unwrap().is_empty());
    // The exact path copies, like read_file reads it.
    let r = call(
        &mut s,
        "copy_from_drive",
        json!({"path": transaction_review::MANUAL, "to": "workspace/manual.md"}),
    );
    assert!(r.ok, "{:?}", r.error);
}

/// Picks a number from a text's numbers by position or size, never by meaning.
type Extractor = fn(&[f64]) -> Option<f64>;

/// Attack: "the cap to record is the only number said in the meeting the objective
/// names; echo it" solved every meeting_attend decision. The notes now state the
/// decision among last month's cap, this month's spend, a proposal and a rejected
/// counter-offer, in a drawn order with the decision never first: the only, first
/// and largest numbers never are the cap, and no position is right more than a
/// quarter of the time.
#[test]
fn echoing_a_number_of_the_meeting_does_not_record_its_cap() {
    let seeds = 200u64;
    let extractors: [(&str, Extractor); 5] = [
        ("only", |n| (n.len() == 1).then(|| n[0])),
        ("first", |n| n.first().copied()),
        ("last", |n| n.last().copied()),
        ("largest", |n| n.iter().copied().reduce(f64::max)),
        ("smallest", |n| n.iter().copied().reduce(f64::min)),
    ];
    let mut hits = [0u64; 5];
    for seed in 0..seeds {
        let s = one_task(
            "cap",
            seed,
            Family::MeetingAttend(meeting_attend::Params::default()),
        );
        let check = &s.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "decision_recorded")
            .unwrap()
            .check;
        let path = path_of(check).unwrap();
        // What join_meeting shows: the meeting's notes.
        let n = numbers(&s.meetings[0].notes);
        for (i, (_, pick)) in extractors.iter().enumerate() {
            if let Some(v) = pick(&n)
                && passes(check, path, &json!({"budget_cap": v}).to_string())
            {
                hits[i] += 1;
            }
        }
    }
    for ((name, _), h) in extractors.iter().zip(hits) {
        let bound = if matches!(*name, "last" | "smallest") {
            seeds / 4
        } else {
            0
        };
        assert!(
            h <= bound,
            "the {name} number of the notes is the cap in {h} of {seeds} instances"
        );
    }
}

/// Attack: "write every request the meeting listed" solved every summary that lists
/// all requests (kinds `write` and `sum`), and any filtered one without a request
/// that breaks the rules. Now one request of every unfiltered summary is withdrawn
/// later in the meeting, and filtered ones always hold a request that breaks a rule.
#[test]
fn writing_every_announced_request_solves_no_summary() {
    for (variant, params) in meeting_attend::variants() {
        if params.kind == Some(meeting_attend::Kind::None) {
            continue;
        }
        for seed in 0..40u64 {
            let s = one_task("summary", seed, Family::MeetingAttend(params.clone()));
            let task = s
                .tasks
                .iter()
                .find(|t| t.key.ends_with("-summary"))
                .unwrap();
            // The requests as announced ("- Name: Q x Item at P each"), totals added.
            let all: Vec<Value> = task
                .objective
                .lines()
                .filter_map(|l| {
                    let (name, rest) = l.strip_prefix("- ")?.split_once(": ")?;
                    let (q, rest) = rest.split_once(" x ")?;
                    let (item, p) = rest.rsplit_once(" at ")?;
                    let (q, p): (u64, u64) =
                        (q.parse().ok()?, p.strip_suffix(" each")?.parse().ok()?);
                    Some(json!({"name": name, "item": item, "quantity": q, "unit_price": p, "total": q * p}))
                })
                .collect();
            assert!(all.len() >= 4, "{variant} seed {seed}: {}", task.objective);
            let total: u64 = all.iter().map(|r| r["total"].as_u64().unwrap()).sum();
            let answer = json!({"requests": all, "statistics": {"total_cost": total}}).to_string();
            let cp = task
                .checkpoints
                .iter()
                .find(|c| c.key == "requests_match")
                .unwrap();
            assert!(
                !passes(&cp.check, path_of(&cp.check).unwrap(), &answer),
                "{variant} seed {seed}: every announced request is the answer"
            );
        }
    }
}

/// Attack (issue 26): `{"abnormal_suppliers": [], "approval_limit": <the manual's
/// largest number>}`, the manual's own JSON example filled blindly. The limit was the
/// manual's largest number in every instance and `[]` right in a third of them; now
/// the manual states a larger sign-off threshold and `[]` is right one time in eight.
#[test]
fn the_manuals_largest_number_and_an_empty_list_solve_no_review() {
    let seeds = 200u64;
    let mut solved = 0;
    let mut largest = 0;
    for seed in 0..seeds {
        let s = one_task(
            "skeleton",
            seed,
            Family::TransactionReview(transaction_review::Params::default()),
        );
        let manual = s
            .files
            .iter()
            .find(|f| f.path == transaction_review::MANUAL)
            .map(|f| match &f.content {
                Content::Text(t) => t.clone(),
                c => panic!("{c:?}"),
            })
            .unwrap();
        let top = numbers(&manual).into_iter().reduce(f64::max).unwrap();
        let cp = s.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "suppliers_correct")
            .unwrap();
        let path = path_of(&cp.check).unwrap();
        let limit_only = |limit: f64| {
            // Right whatever the supplier list: the limit part alone.
            let Check::All(parts) = &cp.check else {
                panic!("{:?}", cp.check)
            };
            parts.iter().any(|p| {
                matches!(p, Check::JsonNumber { .. })
                    && passes(p, path, &json!({"approval_limit": limit}).to_string())
            })
        };
        if limit_only(top) {
            largest += 1;
        }
        let answer = json!({"abnormal_suppliers": [], "approval_limit": top}).to_string();
        if passes(&cp.check, path, &answer) {
            solved += 1;
        }
    }
    assert_eq!(
        largest, 0,
        "the limit is the manual's largest number in {largest} of {seeds}"
    );
    assert_eq!(solved, 0, "the skeleton solved {solved} of {seeds}");
}
