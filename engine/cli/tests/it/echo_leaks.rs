//! Echo leaks (issue 25): content-blind scripts that copy, echo or pick by position
//! and never work out what a task means. Each test plays one such script against
//! many generated instances; each solved a share of them before its fix.

use serde_json::{Value, json};
use tbsim_core::protocol::{Decision, SimConfig, ToolCall, ToolResult};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{
    Family, ads_strategy, generate_scenario, kb_fix, meeting_attend, meeting_book,
    transaction_review,
};
use tbsim_scenario::{Check, Content, DomainCheck, LoadedScenario, Scenario};
use tbsim_validity::gate::{check_path, passes_alone};

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

/// The generic extractors `tbsim validity scan` plays on a text's numbers.
const EXTRACTORS: [(&str, Extractor); 6] = [
    ("only", |n| (n.len() == 1).then(|| n[0])),
    ("first", |n| n.first().copied()),
    ("last", |n| n.last().copied()),
    ("largest", |n| n.iter().copied().reduce(f64::max)),
    ("smallest", |n| n.iter().copied().reduce(f64::min)),
    ("median", |n| {
        let mut v = n.to_vec();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => None,
            l if l % 2 == 1 => Some(v[l / 2]),
            l => Some((v[l / 2 - 1] + v[l / 2]) / 2.0),
        }
    }),
];

/// Asserts no extractor finds the needed figure in more than 5% of `seeds`.
fn assert_within_scan_gate(what: &str, hits: [u64; 6], seeds: u64) {
    for ((name, _), h) in EXTRACTORS.iter().zip(hits) {
        assert!(
            h * 20 <= seeds,
            "the {name} number of {what} is the figure in {h} of {seeds} instances"
        );
    }
}

/// Attack: "the cap to record is the only number said in the meeting the objective
/// names; echo it" solved every meeting_attend decision. The notes now state the
/// decision among last month's cap, this month's spend, a proposal and a rejected
/// counter-offer, in a drawn order with the decision never first or last, above
/// the counter-offer and below the proposal, and the other two figures on one side
/// of it: no position or size (only, first, last, largest, smallest, median) picks
/// it in more than 5% of instances (the scan's CI gate). Issue 37 drew the figures
/// from the cap's own range, so a rule now hits by chance, never by design (a rule
/// that never hits would be a cue of its own).
#[test]
fn echoing_a_number_of_the_meeting_does_not_record_its_cap() {
    let seeds = 200u64;
    let mut hits = [0u64; 6];
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
        let path = check_path(check).unwrap();
        // What join_meeting shows: the meeting's notes.
        let n = numbers(&s.meetings[0].notes);
        for (i, (_, pick)) in EXTRACTORS.iter().enumerate() {
            if let Some(v) = pick(&n)
                && passes_alone(check, path, &json!({"budget_cap": v}).to_string())
            {
                hits[i] += 1;
            }
        }
    }
    assert_within_scan_gate("the meeting's notes", hits, seeds);
}

/// The review manual's approval limit by position or size, as the scan's extractors
/// would pick it: never the manual's only, first, last, largest, smallest or median
/// number (a petty-cash threshold comes first, a director's sign-off threshold is
/// larger, the section's small numbers come last and set the median).
#[test]
fn no_position_of_the_manuals_numbers_is_its_approval_limit() {
    let seeds = 200u64;
    let mut hits = [0u64; 6];
    for seed in 0..seeds {
        let s = one_task(
            "limit",
            seed,
            Family::TransactionReview(transaction_review::Params::default()),
        );
        let manual = s
            .files
            .iter()
            .find(|f| f.path == transaction_review::MANUAL)
            .and_then(|f| match &f.content {
                Content::Text(t) => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        let cp = s.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "suppliers_correct")
            .unwrap();
        let Check::All(parts) = &cp.check else {
            panic!("{:?}", cp.check)
        };
        let limit = parts
            .iter()
            .find(|p| matches!(p, Check::JsonNumber { .. }))
            .unwrap();
        let path = check_path(limit).unwrap();
        let n = numbers(&manual);
        for (i, (_, pick)) in EXTRACTORS.iter().enumerate() {
            if let Some(v) = pick(&n)
                && passes_alone(limit, path, &json!({"approval_limit": v}).to_string())
            {
                hits[i] += 1;
            }
        }
    }
    assert_eq!(hits, [0; 6], "{:?}", EXTRACTORS.map(|e| e.0));
    assert_within_scan_gate("the review manual", hits, seeds);
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
                !passes_alone(&cp.check, check_path(&cp.check).unwrap(), &answer),
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
        let path = check_path(&cp.check).unwrap();
        let limit_only = |limit: f64| {
            // Right whatever the supplier list: the limit part alone.
            let Check::All(parts) = &cp.check else {
                panic!("{:?}", cp.check)
            };
            parts.iter().any(|p| {
                matches!(p, Check::JsonNumber { .. })
                    && passes_alone(p, path, &json!({"approval_limit": limit}).to_string())
            })
        };
        if limit_only(top) {
            largest += 1;
        }
        let answer = json!({"abnormal_suppliers": [], "approval_limit": top}).to_string();
        if passes_alone(&cp.check, path, &answer) {
            solved += 1;
        }
    }
    assert_eq!(
        largest, 0,
        "the limit is the manual's largest number in {largest} of {seeds}"
    );
    assert_eq!(solved, 0, "the skeleton solved {solved} of {seeds}");
}

/// The `HH:MM` times and the colleagues' names (first or full, as `list_colleagues`
/// shows them) a text mentions.
fn names_and_times(s: &Scenario, text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .split(|c: char| !(c.is_ascii_digit() || c == ':'))
        .map(|t| t.trim_matches(':'))
        .filter(|t| {
            t.split_once(':').is_some_and(|(h, m)| {
                (1..=2).contains(&h.len())
                    && m.len() == 2
                    && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit())
            })
        })
        .map(str::to_owned)
        .collect();
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
    for p in &s.company.people {
        let first = p.name.split(' ').next().unwrap_or(&p.name);
        if text.contains(&p.name) || words.contains(&first) {
            out.push(first.to_owned());
        }
    }
    out
}

/// Attack: "invite the colleagues whose replies add no new name or time, book the
/// brief's slot, join". Free colleagues' replies only repeated the brief, a busy
/// manager's named the other meeting's hours and an unsure member's named their
/// manager, so the rule booked exactly the right guests in every manager instance
/// and every department instance whose three unsure members all clash. Now a free
/// colleague in every instance mentions someone and a time beyond the slot, and
/// busy managers often decline without a reason.
#[test]
fn inviting_whoever_adds_no_new_name_or_time_books_the_wrong_guests() {
    let seeds = 200u64;
    for (variant, params) in meeting_book::variants() {
        let mut solved = 0;
        for seed in 0..seeds {
            let s = one_task("novelty", seed, Family::MeetingBook(params.clone()));
            let task = &s.tasks[0];
            let Check::Booked {
                must_invite,
                must_not_invite,
                ..
            } = &task
                .checkpoints
                .iter()
                .find(|c| c.key == "attendees_right")
                .unwrap()
                .check
            else {
                panic!("{variant}: attendees_right is a booking check")
            };
            let brief = names_and_times(&s, &task.objective);
            let mut chosen: Vec<&String> = must_invite
                .iter()
                .chain(must_not_invite)
                .filter(|key| {
                    let person = s.company.people.iter().find(|p| &&p.key == key).unwrap();
                    // The reply to "are you available for <title> at <slot>?".
                    let reply = person
                        .clues
                        .iter()
                        .find(|c| c.key.ends_with("-availability"))
                        .map(|c| c.response.as_str())
                        .unwrap();
                    names_and_times(&s, reply).iter().all(|x| brief.contains(x))
                })
                .collect();
            chosen.sort();
            let mut right: Vec<&String> = must_invite.iter().collect();
            right.sort();
            if chosen == right {
                solved += 1;
            }
        }
        // A free invitee always adds a name and a time: never the right list.
        assert_eq!(
            solved, 0,
            "{variant}: the novelty rule books exactly the right guests in {solved} of {seeds}"
        );
    }
}

/// Attack: "select the first CSV row and echo its cost cell as the total". Any
/// selection within budget earned `cost_reported` (and, with its exposure, the
/// exposure checkpoint) however little of the budget it used. Totals now count only
/// for a plan with no room left for another channel, which every optimum is.
#[test]
fn the_first_rows_cost_earns_no_answer_checkpoint() {
    let seeds = 200u64;
    let variants = ads_strategy::variants();
    let mut passed = 0u64;
    let mut runs = 0u64;
    for (i, (variant, params)) in variants.iter().enumerate() {
        for seed in (0..seeds).filter(|s| *s as usize % variants.len() == i) {
            let s = one_task("first-row", seed, Family::AdsStrategy(params.clone()));
            let csv = s
                .files
                .iter()
                .find(|f| f.path.ends_with(".csv"))
                .and_then(|f| match &f.content {
                    Content::Text(t) => Some(t.clone()),
                    _ => None,
                })
                .unwrap();
            let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
            let answer = json!({
                "selected_channels": [row[0]],
                "total_cost": row[5].parse::<f64>().unwrap(),
            })
            .to_string();
            runs += 1;
            for cp in &s.tasks[0].checkpoints {
                if let Check::Domain(d) = &cp.check
                    && let DomainCheck::Budget(b) = d.as_ref()
                    && passes_alone(&cp.check, &b.path, &answer)
                {
                    passed += 1;
                    eprintln!("{variant} seed {seed}: {}", cp.key);
                }
            }
        }
    }
    assert!(runs >= seeds - variants.len() as u64);
    assert_eq!(
        passed, 0,
        "the first row passed {passed} checkpoints in {runs} instances"
    );
}

/// Attack: "ask the colleague each line names about that line, swap in the first new
/// ID of the reply". The owner named the current rebuild and a withdrawn one in
/// either order, so the first ID was right for half the links. Now each chart has
/// four versions in shuffled order (a fixed place would be a cue of its own), so the
/// first ID is right at chance (one in four), and every task has at least three
/// links, so guessing fixes a whole task about once in 64 at most.
#[test]
fn the_first_new_id_of_an_owners_reply_fixes_no_article() {
    let seeds = 200u64;
    let variants = kb_fix::variants();
    let (mut solved, mut links, mut right) = (0u64, 0u64, 0u64);
    // What guessing one of four versions per link solves, summed over instances.
    let mut guessed = 0.0f64;
    for seed in 0..seeds {
        let (_, params) = &variants[seed as usize % variants.len()];
        let s = one_task("first-id", seed, Family::KbFix(params.clone()));
        // Old ID -> the first ID that follows it in its owner's reply.
        let mut first = std::collections::BTreeMap::new();
        for clue in s.company.people.iter().flat_map(|p| &p.clues) {
            let mut old: Option<String> = None;
            for line in clue.response.lines() {
                let token = line.split(|c: char| !c.is_ascii_alphanumeric()).find(|w| {
                    w.len() > 3
                        && w.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                        && w.chars().any(|c| c.is_ascii_digit())
                });
                match (line.strip_prefix("- "), token, &old) {
                    (Some(_), Some(t), _) => old = Some(t.to_owned()),
                    (None, Some(t), Some(o)) => {
                        first.entry(o.clone()).or_insert_with(|| t.to_owned());
                    }
                    _ => {}
                }
            }
        }
        let cp = s.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "links_fixed")
            .unwrap();
        let Check::All(files) = &cp.check else {
            panic!("{:?}", cp.check)
        };
        let mut all_right = true;
        let mut task_links = 0i32;
        for f in files {
            let Check::FileContains {
                present, absent, ..
            } = f
            else {
                panic!("{f:?}")
            };
            for (new, old) in present.iter().zip(absent) {
                let id = old.trim_start_matches("charts?id=").trim_end();
                links += 1;
                task_links += 1;
                let swapped = first.get(id).map(|t| format!("charts?id={t}"));
                if swapped.is_some_and(|w| new.trim_end() == w) {
                    right += 1;
                } else {
                    all_right = false;
                }
            }
        }
        assert!(task_links >= 3, "seed {seed}: {task_links} links");
        guessed += 0.25f64.powi(task_links);
        if all_right {
            solved += 1;
        }
    }
    assert!(links >= 3 * seeds, "{links} links");
    // At chance: the lower 95% bound of its share of right links is within five
    // points of one in four (the scan's gate).
    let p = right as f64 / links as f64;
    let lower = p - 1.645 * (p * (1.0 - p) / links as f64).sqrt();
    assert!(
        lower <= 0.25 + 0.05,
        "the first new ID was right for {right} of {links} links"
    );
    // And no more whole tasks than guessing solves (three standard deviations).
    assert!(
        (solved as f64) <= guessed + 3.0 * guessed.sqrt(),
        "it fixed every link in {solved} of {seeds} instances (guessing: {guessed:.2})"
    );
    assert!(guessed < seeds as f64 / 64.0, "{guessed}");
}

/// Every JSON value written out in a text (a document's example, a brief's shape),
/// found by parsing from each `{` or `[`.
fn json_examples(text: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (i, c) in text.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next()
            && (v.is_object() || v.as_array().is_some_and(|a| !a.is_empty()))
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out
}

/// The example with every list emptied and every number set to `n`.
fn skeleton(v: &Value, n: f64) -> Value {
    match v {
        Value::Array(_) => json!([]),
        Value::Number(_) => json!(n),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), skeleton(x, n))).collect())
        }
        other => other.clone(),
    }
}

/// Every `path` an answer check reads (any check kind).
fn paths(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("path", Value::String(p)) if !out.contains(p) => out.push(p.clone()),
                    _ => paths(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| paths(x, out)),
        _ => {}
    }
}

/// Attack: "report skeleton from a document's JSON example, `[]` and the document's
/// largest number" (and its variant, the example as written). For every variant of
/// every family, every JSON example in any file or brief of the instance, filled as
/// written and as a skeleton (lists emptied, numbers set to its text's largest
/// number), passes no checkpoint that an empty file fails.
#[test]
fn no_json_example_of_a_document_or_brief_passes_a_checkpoint() {
    let (mut tried, mut passed) = (0u64, Vec::new());
    for v in Family::all_variants() {
        for seed in 0..3u64 {
            let Ok(s) = generate_scenario(
                seed,
                &one_task_plan("example", seed, "t", v.family.clone(), DATE),
            ) else {
                continue;
            };
            let mut texts: Vec<String> = s
                .files
                .iter()
                .filter_map(|f| match &f.content {
                    Content::Text(t) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            texts.extend(s.tasks.iter().map(|t| t.objective.clone()));
            texts.extend(s.meetings.iter().map(|m| m.notes.clone()));
            let mut candidates: Vec<Value> = Vec::new();
            for t in &texts {
                let top = numbers(t).into_iter().reduce(f64::max).unwrap_or(0.0);
                for e in json_examples(t) {
                    candidates.push(skeleton(&e, top));
                    candidates.push(e);
                }
            }
            for task in &s.tasks {
                for cp in &task.checkpoints {
                    let mut ps = Vec::new();
                    paths(&serde_json::to_value(&cp.check).unwrap(), &mut ps);
                    for p in ps {
                        if passes_alone(&cp.check, &p, "") {
                            continue;
                        }
                        for c in &candidates {
                            tried += 1;
                            if passes_alone(&cp.check, &p, &c.to_string()) {
                                passed.push(format!("{} seed {seed} {}: {c}", v.key, cp.key));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(tried > 1000, "only {tried} example fillings tried");
    assert!(
        passed.is_empty(),
        "{} of {tried}:\n{}",
        passed.len(),
        passed.join("\n")
    );
}
