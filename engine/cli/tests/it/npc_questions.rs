//! Colleagues' disclosure rules through the real chat tools: natural, specific
//! questions get the clue (in other words than its trigger); keyword soups,
//! broadcasts and forwarded task texts get nothing; nobody volunteers a task's
//! clue before the task exists.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::json;
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig};
use tbsim_engine::npc::{ASK_WHAT, BE_SPECIFIC, plan_message_disclosing};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_engine::world::History;
use tbsim_gen::{Family, Suite, TaskPlan, registry};
use tbsim_scenario::{Clue, Condition, LoadedScenario, Scenario};

use crate::util::{DATE, generate_one, load_generated, one_task_plan, one_task_suite};

/// Scenarios per family (each a different seed, cycling through the variants).
const SEEDS_PER_FAMILY: u64 = 3;
/// The hit rate natural questions must reach, overall and per family.
const GOAL: f64 = 0.95;

#[derive(Debug, Deserialize)]
struct Corpus {
    families: Vec<FamilyQuestions>,
    soups: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct FamilyQuestions {
    family: String,
    kinds: Vec<Kind>,
}

#[derive(Debug, Deserialize)]
struct Kind {
    kind: String,
    key: String,
    #[serde(default)]
    only_if: Option<String>,
    questions: Vec<String>,
}

fn corpus() -> Corpus {
    let path = crate::util::root().join("engine/cli/tests/it/data/natural_questions.ron");
    ron::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Whether a clue key fits a pattern where `*` stands for characters other than `/`.
fn glob(pattern: &str, key: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == key,
        Some((pre, post)) => {
            key.len() >= pre.len() + post.len()
                && key.starts_with(pre)
                && key.ends_with(post)
                && !key[pre.len()..key.len() - post.len()].contains('/')
                && key.len() > pre.len() + post.len()
        }
    }
}

/// Every clue of a scenario with its holder's key and name.
pub(crate) fn clues(s: &Scenario) -> Vec<(&str, &str, &Clue)> {
    s.company
        .people
        .iter()
        .flat_map(|p| {
            p.clues
                .iter()
                .map(move |c| (p.key.as_str(), p.name.as_str(), c))
        })
        .collect()
}

pub(crate) fn first(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

pub(crate) fn after<'a>(s: &'a str, start: &str) -> Option<&'a str> {
    s.find(start).map(|i| &s[i + start.len()..])
}

pub(crate) fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = after(s, start)?;
    rest.find(end).map(|i| &rest[..i])
}

pub(crate) fn slug(name: &str) -> String {
    name.to_lowercase().replace(' ', "-")
}

/// What the agent can see, as placeholder values for a question to `clue`'s holder.
pub(crate) fn vars(s: &Scenario, holder: &str, clue: &Clue) -> BTreeMap<&'static str, String> {
    let mut v = BTreeMap::new();
    v.insert("first", first(holder).to_owned());
    let obj: String = s
        .tasks
        .iter()
        .filter(|t| Some(&t.key) == clue.task.as_ref())
        .map(|t| t.objective.clone())
        .collect();
    let all = clues(s);
    let by_suffix = |suffix: &str| {
        all.iter()
            .find(|(_, _, c)| c.key.ends_with(suffix))
            .copied()
    };
    // kb_fix: the old IDs and the article, as the broken article shows them.
    let olds: Vec<&str> = clue
        .response
        .lines()
        .filter_map(|l| l.strip_prefix("- ")?.split_whitespace().next())
        .filter(|id| id.starts_with("OLD"))
        .collect();
    if !olds.is_empty() {
        v.insert("ids", olds.join(" and "));
        v.insert("id1", olds[0].to_owned());
        let titles: BTreeSet<&str> = clue
            .response
            .lines()
            .filter_map(|l| between(l, "(in \"", "\")"))
            .collect();
        v.insert(
            "article",
            titles.into_iter().collect::<Vec<_>>().join("\" and \""),
        );
    }
    // meeting_book: the meeting as the task names it.
    if let Some(m) = between(&obj, "titled \"", "\"") {
        v.insert("meeting", m.to_owned());
        let times: Vec<&str> = obj
            .split(|c: char| !(c.is_ascii_digit() || c == ':'))
            .filter(|w| w.len() == 5 && w.as_bytes()[2] == b':')
            .collect();
        v.insert("start", times[0].to_owned());
        v.insert("end", times[1].to_owned());
    }
    for suffix in ["-confirmed", "-ask-them"] {
        if let Some(who) = clue.key.strip_suffix(suffix) {
            let who = who.rsplit('/').next().unwrap();
            let p = s
                .company
                .people
                .iter()
                .find(|p| slug(&p.name) == who)
                .unwrap();
            v.insert("member", p.name.clone());
            v.insert("member_first", first(&p.name).to_owned());
        }
    }
    // website_monitor: the failing service (as the monitoring tools show it), its
    // owner and the code (as their replies gave them).
    if let Some((_, owner, c)) = by_suffix("/owner") {
        let svc = between(&c.response, "flagging ", ",").unwrap();
        v.insert("service", svc.to_owned());
        v.insert("owner_first", first(owner).to_owned());
    }
    if let Some((_, approver, _)) = by_suffix("/approval") {
        v.insert("approver_first", first(approver).to_owned());
    }
    if let Some((_, _, c)) = by_suffix("/code") {
        v.insert("code", c.trigger[0][0].clone());
    }
    // urgent_interrupt: the project named in the request, the workshop on the schedule.
    if clue.key.ends_with("/approved-budget") {
        v.insert("project", clue.trigger[0][0].clone());
    }
    // The workshop is read off the schedule (the row whose host holds the clue):
    // hosts word their replies in several ways (issue 37).
    if clue.key.contains("/signups-")
        && let Some(w) = s
            .files
            .iter()
            .filter(|f| f.path.ends_with("workshops_next_week.md"))
            .find_map(|f| match &f.content {
                tbsim_scenario::Content::Text(t) => t.lines().find_map(|l| {
                    let cells: Vec<&str> = l
                        .trim()
                        .trim_matches('|')
                        .split('|')
                        .map(str::trim)
                        .collect();
                    (cells.len() == 4 && cells[3] == holder).then(|| cells[0].to_owned())
                }),
                _ => None,
            })
    {
        v.insert("workshop", w);
    }
    // event_planning: the month; ads_strategy: the city.
    for m in [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ] {
        if let Some(rest) = after(&obj, &format!("{m} "))
            && rest.len() >= 4
            && rest[..4].bytes().all(|b| b.is_ascii_digit())
        {
            v.insert("month", format!("{m} {}", &rest[..4]));
            break;
        }
    }
    if let Some(c) = between(&obj, "campaign in ", " ") {
        v.insert("city", c.to_owned());
    }
    v
}

pub(crate) fn fill(q: &str, v: &BTreeMap<&'static str, String>) -> String {
    let mut out = q.to_owned();
    for (k, val) in v {
        out = out.replace(&format!("{{{k}}}"), val);
    }
    assert!(
        !out.contains('{'),
        "unfilled placeholder in {out:?} (have {v:?})"
    );
    out
}

pub(crate) fn call(sim: &mut Sim, name: &str, args: serde_json::Value) -> serde_json::Value {
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
    let r = obs.results.first().unwrap_or_else(|| {
        panic!(
            "{name} {args}: no result (over: {:?}, at {})",
            sim.end_reason(),
            obs.time
        )
    });
    serde_json::to_value(r).unwrap()
}

pub(crate) fn history(sim: &Sim) -> &History {
    sim.world().resource::<History>()
}

/// A fresh run of `loaded` waiting until `task` is released.
fn sim_at_release(loaded: &LoadedScenario, task: Option<&str>) -> Sim {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::digest_only(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    for _ in 0..40 {
        if task.is_none_or(|t| history(&sim).released.contains(t)) {
            break;
        }
        call(&mut sim, "wait", json!({"minutes": 20}));
    }
    assert!(task.is_none_or(|t| history(&sim).released.contains(t)));
    sim
}

/// Discloses what `clue` waits for, the way the oracle's plan asks for it.
pub(crate) fn prerequisites(sim: &mut Sim, s: &Scenario, clue: &Clue) {
    for cond in &clue.after {
        let Condition::Disclosed(k) = cond else {
            continue;
        };
        if history(sim).disclosed.contains_key(k) {
            continue;
        }
        let (pre, holder, text) = plan_message_disclosing(s, k)
            .unwrap_or_else(|| panic!("no plan message discloses {k}"));
        prerequisites(sim, s, pre);
        call(sim, "send_message", json!({"to": holder, "text": text}));
        call(sim, "wait", json!({"minutes": 30}));
        assert!(history(sim).disclosed.contains_key(k), "{k} via {text:?}");
    }
}

/// Sends `text` to `to` and returns the reply, once it has arrived.
pub(crate) fn ask(sim: &mut Sim, to: &str, text: &str) -> String {
    call(sim, "send_message", json!({"to": to, "text": text}));
    call(sim, "wait", json!({"minutes": 30}));
    let r = call(sim, "read_messages", json!({"with": to}));
    let msgs = r["result"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    msgs.last()
        .and_then(|m| m["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Generated scenarios of a family: every clue kind at least once, then more
/// variants up to `SEEDS_PER_FAMILY` scenarios, each at its own seed.
fn scenarios(fam: &FamilyQuestions) -> Vec<LoadedScenario> {
    let family = fam.family.as_str();
    let variants = registry::by_key(family)
        .unwrap_or_else(|| panic!("the corpus lists `{family}`, which is not a registered family"))
        .variants();
    assert!(!variants.is_empty(), "no variants of {family}");
    let candidates: Vec<(LoadedScenario, BTreeSet<String>)> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let seed = i as u64 + 1;
            let text = generate_one(&one_task_suite("npcq", seed, "t", v.family.clone()));
            let l = load_generated(&text, &format!("npcq-{family}-{seed}.ron"));
            let kinds = clues(&l.scenario)
                .iter()
                .map(|(_, _, c)| kind_of(fam, c).kind.clone())
                .collect();
            (l, kinds)
        })
        .collect();
    let mut chosen: Vec<usize> = Vec::new();
    let mut covered: BTreeSet<String> = BTreeSet::new();
    for (i, (_, kinds)) in candidates.iter().enumerate() {
        if !kinds.is_subset(&covered) {
            covered.extend(kinds.iter().cloned());
            chosen.push(i);
        }
    }
    // Then spread over the rest (variants are listed by their categories).
    let n = candidates.len();
    let mut k = 0;
    while chosen.len() < (SEEDS_PER_FAMILY as usize).min(n) {
        let i = (k * 7 + 3) % n;
        k += 1;
        if !chosen.contains(&i) && (fam.kinds.is_empty() || !candidates[i].1.is_empty()) {
            chosen.push(i);
        }
        if k > 10 * n {
            break;
        }
    }
    chosen.sort();
    candidates
        .into_iter()
        .enumerate()
        .filter(|(i, _)| chosen.contains(i))
        .map(|(_, (l, _))| l)
        .collect()
}

/// The kind of each clue; every clue must have one with at least 10 questions.
fn kind_of<'a>(fam: &'a FamilyQuestions, clue: &Clue) -> &'a Kind {
    let k = fam
        .kinds
        .iter()
        .find(|k| {
            glob(&k.key, &clue.key)
                && k.only_if
                    .as_ref()
                    .is_none_or(|w| clue.response.to_lowercase().contains(w.as_str()))
        })
        .unwrap_or_else(|| {
            panic!(
                "{}: clue {} has no kind in natural_questions.ron",
                fam.family, clue.key
            )
        });
    assert!(
        k.questions.len() >= 10,
        "{}/{}: at least 10 questions",
        fam.family,
        k.kind
    );
    k
}

#[derive(Default)]
struct Tally {
    asked: usize,
    hits: usize,
    misses: Vec<String>,
}

#[test]
fn natural_questions_get_the_clue_in_every_family() {
    let corpus = corpus();
    let families: BTreeSet<&str> = registry::FAMILIES.iter().map(|e| e.key()).collect();
    let listed: BTreeSet<&str> = corpus.families.iter().map(|f| f.family.as_str()).collect();
    assert_eq!(families, listed, "the corpus covers every family");
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut covered = BTreeSet::new();
    for fam in &corpus.families {
        let tally = tallies.entry(fam.family.clone()).or_default();
        for loaded in scenarios(fam) {
            let s = &loaded.scenario;
            let mut done: BTreeSet<&str> = BTreeSet::new();
            for (holder, name, clue) in clues(s) {
                let kind = kind_of(fam, clue);
                covered.insert((fam.family.as_str(), kind.kind.as_str()));
                // One holder per kind and scenario.
                if !done.insert(kind.kind.as_str()) {
                    continue;
                }
                let v = vars(s, name, clue);
                for q in &kind.questions {
                    let q = fill(q, &v);
                    let mut sim = sim_at_release(&loaded, clue.task.as_deref());
                    prerequisites(&mut sim, s, clue);
                    let reply = ask(&mut sim, holder, &q);
                    tally.asked += 1;
                    if history(&sim).disclosed.contains_key(&clue.key) {
                        tally.hits += 1;
                    } else {
                        tally
                            .misses
                            .push(format!("{} [{}] {q:?} -> {reply:?}", s.name, kind.kind));
                    }
                }
            }
        }
    }
    let (asked, hits) = tallies
        .values()
        .fold((0, 0), |(a, h), t| (a + t.asked, h + t.hits));
    println!("| family | questions asked | disclosed | hit rate |");
    println!("|---|---:|---:|---:|");
    for (f, t) in &tallies {
        if t.asked == 0 {
            println!("| {f} | 0 | 0 | (no clues) |");
        } else {
            println!(
                "| {f} | {} | {} | {:.1}% |",
                t.asked,
                t.hits,
                100.0 * t.hits as f64 / t.asked as f64
            );
        }
    }
    println!(
        "| **overall** | {asked} | {hits} | {:.1}% |",
        100.0 * hits as f64 / asked as f64
    );
    for t in tallies.values() {
        for m in &t.misses {
            println!("MISS {m}");
        }
    }
    for fam in &corpus.families {
        for k in &fam.kinds {
            assert!(
                covered.contains(&(fam.family.as_str(), k.kind.as_str())),
                "{}/{}: no generated scenario has this kind; add seeds",
                fam.family,
                k.kind
            );
        }
    }
    for (f, t) in &tallies {
        assert!(
            t.asked == 0 || t.hits as f64 >= GOAL * t.asked as f64,
            "{f}: {} of {} natural questions disclosed",
            t.hits,
            t.asked
        );
    }
    assert!(hits as f64 >= GOAL * asked as f64);
}

/// Keyword soups, forwarded task texts and broadcasts, to everyone at once and to
/// each clue holder directly (with everything the clue waits for already
/// disclosed): none discloses anything.
#[test]
fn keyword_soups_and_broadcasts_disclose_nothing() {
    let corpus = corpus();
    let (mut sent, mut leaked) = (0usize, Vec::new());
    for fam in &corpus.families {
        for loaded in scenarios(fam) {
            let s = &loaded.scenario;
            let task = s
                .tasks
                .iter()
                .map(|t| t.objective.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let everyone: Vec<&str> = s.company.people.iter().map(|p| p.key.as_str()).collect();
            // The latest release among the tasks colleagues hold clues for.
            let released = s
                .tasks
                .iter()
                .filter(|t| {
                    clues(s)
                        .iter()
                        .any(|(_, _, c)| c.task.as_ref() == Some(&t.key))
                })
                .max_by_key(|t| match &t.release {
                    tbsim_scenario::Release::At(at) => at.clone(),
                    _ => String::new(),
                })
                .map(|t| t.key.as_str());
            for soup in &corpus.soups {
                if soup.contains("{triggers}") {
                    continue;
                }
                let text = soup.replace("{task}", &task);
                let mut sim = sim_at_release(&loaded, released);
                let before = history(&sim).disclosed.len();
                let g = call(
                    &mut sim,
                    "create_group",
                    json!({"name": "everyone", "members": everyone}),
                );
                let group = g["result"]["group"].as_str().unwrap().to_owned();
                call(
                    &mut sim,
                    "send_group_message",
                    json!({"group": group, "text": text}),
                );
                call(&mut sim, "wait", json!({"minutes": 30}));
                let r = call(&mut sim, "read_messages", json!({"with": group}));
                let replies: Vec<String> = r["result"]["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .skip(1)
                    .map(|m| m["text"].as_str().unwrap().to_owned())
                    .collect();
                sent += 1;
                if history(&sim).disclosed.len() != before {
                    leaked.push(format!("{} broadcast {soup:?}", s.name));
                }
                assert_eq!(
                    replies,
                    [BE_SPECIFIC],
                    "{}: one request to be specific",
                    s.name
                );
            }
            let mut done = BTreeSet::new();
            for (holder, _, clue) in clues(s) {
                if !done.insert(kind_of(fam, clue).kind.as_str()) {
                    continue;
                }
                let triggers: Vec<&str> = clue
                    .trigger
                    .iter()
                    .flatten()
                    .map(String::as_str)
                    .filter(|a| !a.starts_with('!'))
                    .collect();
                for soup in &corpus.soups {
                    let text = soup
                        .replace("{task}", &task)
                        .replace("{triggers}", &triggers.join(" "));
                    let mut sim = sim_at_release(&loaded, clue.task.as_deref());
                    prerequisites(&mut sim, s, clue);
                    let reply = ask(&mut sim, holder, &text);
                    sent += 1;
                    if history(&sim).disclosed.contains_key(&clue.key) {
                        leaked.push(format!(
                            "{} direct to {holder} {text:?} -> {reply:?}",
                            s.name
                        ));
                    }
                }
            }
        }
    }
    println!(
        "soups and broadcasts sent: {sent}, disclosing: {}",
        leaked.len()
    );
    assert!(leaked.is_empty(), "{leaked:#?}");
}

/// Two tasks' questions in one message are not one specific question.
#[test]
fn a_message_about_two_tasks_gets_a_request_to_be_specific() {
    let mut plan = one_task_plan("two", 5, "kb", Family::KbFix(Default::default()), DATE);
    plan.tasks.push(TaskPlan {
        id: "sales".into(),
        family: Family::Sales(Default::default()),
        release: Default::default(),
        deadline: None,
        priority: Default::default(),
    });
    let suite = Suite {
        name: "two".into(),
        seed: 5,
        scenarios: vec![plan],
    };
    let loaded = load_generated(&generate_one(&suite), "two.ron");
    let s = &loaded.scenario;
    let all = clues(s);
    let (kb_holder, kb_name, kb) = *all
        .iter()
        .find(|(_, _, c)| c.key.starts_with("clue/kb/"))
        .unwrap();
    let sales = all
        .iter()
        .find(|(_, _, c)| c.key.starts_with("clue/sales/"))
        .unwrap();
    let v = vars(s, kb_name, kb);
    let both = format!(
        "Hi! What replaced {}? And where is the sales analysis handbook, who approves the budget, and when is the team free for the review meeting?",
        v["ids"]
    );
    for (to, key) in [(kb_holder, &kb.key), (sales.0, &sales.2.key)] {
        let mut sim = sim_at_release(&loaded, None);
        assert_eq!(ask(&mut sim, to, &both), BE_SPECIFIC);
        assert!(!history(&sim).disclosed.contains_key(key));
        // Asked one at a time, each gets its answer.
        let one = if key == &kb.key {
            format!("Hi, what replaced {}?", v["ids"])
        } else {
            "Hi, where is the sales analysis handbook?".to_owned()
        };
        ask(&mut sim, to, &one);
        assert!(history(&sim).disclosed.contains_key(key), "{one}");
    }
}

/// A task's clue is not disclosed before the task is released, whatever the
/// message; once it is, the same question gets it.
#[test]
fn nobody_volunteers_a_clue_before_its_task_exists() {
    for (family, q) in [
        (
            Family::KbFix(Default::default()),
            "Hi {first}, what replaced {ids}?",
        ),
        (
            Family::Sales(Default::default()),
            "Hi {first}, how do you compute total sales? I'd like the official method.",
        ),
        (
            Family::TransactionReview(Default::default()),
            "Hi {first}, where is the supplier transaction review manual?",
        ),
    ] {
        let mut plan = one_task_plan("late", 3, "t", family, DATE);
        plan.tasks[0].release = tbsim_gen::ReleasePlan::At("14:00".into());
        let suite = Suite {
            name: "late".into(),
            seed: 3,
            scenarios: vec![plan],
        };
        let loaded = load_generated(&generate_one(&suite), "late.ron");
        let s = &loaded.scenario;
        let (holder, name, clue) = clues(s)[0];
        let q = fill(q, &vars(s, name, clue));
        let mut sim = sim_at_release(&loaded, None);
        let reply = ask(&mut sim, holder, &q);
        assert!(
            !history(&sim).disclosed.contains_key(&clue.key),
            "{q} -> {reply}"
        );
        assert_ne!(reply, clue.response);
        for _ in 0..20 {
            if history(&sim).released.contains("task/t") {
                break;
            }
            call(&mut sim, "wait", json!({"minutes": 30}));
        }
        ask(&mut sim, holder, &q);
        assert!(
            history(&sim).disclosed.contains_key(&clue.key),
            "{q} after release"
        );
    }
}

fn meeting_book(seed: u64) -> LoadedScenario {
    let family = Family::MeetingBook(tbsim_gen::meeting_book::Params {
        kind: Some(tbsim_gen::meeting_book::Kind::Department),
        ..Default::default()
    });
    load_generated(
        &generate_one(&one_task_suite("mb", seed, "t", family)),
        "mb.ron",
    )
}

/// Asked whether a member is free, the manager does not answer about their own
/// calendar (which read as a yes): they send the intern to the member first, and
/// confirm once the member has answered.
#[test]
fn a_manager_asked_about_a_member_answers_about_the_member() {
    let loaded = meeting_book(4);
    let s = &loaded.scenario;
    let all = clues(s);
    let (lead, lead_name, confirm) = *all
        .iter()
        .find(|(_, _, c)| c.key.ends_with("-confirmed"))
        .unwrap();
    let own = all
        .iter()
        .find(|(h, _, c)| *h == lead && c.key.ends_with("-availability"))
        .unwrap()
        .2;
    let v = vars(s, lead_name, confirm);
    let q = fill(
        "Hi {first}, is {member} free for the {meeting} from {start} to {end}?",
        &v,
    );
    let mut sim = sim_at_release(&loaded, None);
    let reply = ask(&mut sim, lead, &q);
    assert!(!history(&sim).disclosed.contains_key(&own.key), "{reply}");
    assert!(
        reply.contains(&v["member_first"]) && reply.contains("ask"),
        "{reply}"
    );
    prerequisites(&mut sim, s, confirm);
    let reply = ask(&mut sim, lead, &q);
    assert_eq!(reply, confirm.response);
    assert!(!history(&sim).disclosed.contains_key(&own.key));
}

/// Seeds of the department meeting_book whose lead holds a `-confirmed` clue
/// about a member whose first name another colleague shares, with whether the
/// lead's clues are also about that other colleague: (scenario, clue key, both).
fn shared_first_name_cases() -> Vec<(LoadedScenario, String, bool)> {
    let mut out = Vec::new();
    let (mut one, mut both) = (false, false);
    for seed in 1..400 {
        if one && both {
            break;
        }
        let l = meeting_book(seed);
        let people = &l.scenario.company.people;
        let all = clues(&l.scenario);
        let found = all.iter().find_map(|&(holder, _, c)| {
            let who = c.key.strip_suffix("-confirmed")?.rsplit('/').next()?;
            let p = people.iter().find(|p| slug(&p.name) == who)?;
            // A lead who shares the member's first name hears a question about
            // themself: not this case.
            let twins: Vec<&str> = people
                .iter()
                .filter(|o| first(&o.name) == first(&p.name) && o.name != p.name && o.key != holder)
                .map(|o| o.name.as_str())
                .collect();
            if twins.is_empty() {
                return None;
            }
            // Whether the same lead holds a clue about a twin too.
            let about_twin = all.iter().any(|&(h, _, o)| {
                h == holder
                    && twins
                        .iter()
                        .any(|t| o.key.contains(&format!("/{}-", slug(t))))
            });
            Some((c.key.clone(), about_twin))
        });
        if let Some((key, about_twin)) = found
            && !(if about_twin { both } else { one })
        {
            if about_twin {
                both = true;
            } else {
                one = true;
            }
            out.push((l, key, about_twin));
        }
    }
    assert!(
        one && both,
        "seeds of both kinds (one: {one}, both: {both})"
    );
    out
}

/// A first name two colleagues share: a lead whose team holds only one of them
/// takes it to mean theirs and answers; a lead who knows about both asks which
/// one is meant. Naming the other person in full never discloses this one's
/// status, and naming this one in full does.
#[test]
fn a_shared_first_name_means_the_one_the_lead_knows_or_asks_which() {
    for (loaded, confirm_key, both) in shared_first_name_cases() {
        let s = &loaded.scenario;
        let (lead, lead_name, confirm) = clues(s)
            .into_iter()
            .find(|(_, _, c)| c.key == confirm_key)
            .unwrap();
        let v = vars(s, lead_name, confirm);
        let member = &v["member"];
        let twin = s
            .company
            .people
            .iter()
            .find(|p| first(&p.name) == v["member_first"] && &p.name != member && p.key != lead)
            .unwrap();
        let mut sim = sim_at_release(&loaded, None);
        prerequisites(&mut sim, s, confirm);
        let reply = ask(
            &mut sim,
            lead,
            &fill(
                "Hi {first}, is {member_first} free for the {meeting} at {start}?",
                &v,
            ),
        );
        if both {
            assert!(
                reply.starts_with(&format!("Which {}", v["member_first"])),
                "{reply}"
            );
            assert!(
                reply.contains(member.as_str()) && reply.contains(&twin.name),
                "{reply}"
            );
            assert!(!history(&sim).disclosed.contains_key(&confirm.key));
        } else {
            assert_eq!(reply, confirm.response);
            // A fresh run for the rest: nothing disclosed yet.
            sim = sim_at_release(&loaded, None);
            prerequisites(&mut sim, s, confirm);
        }
        let about_twin = format!(
            "Hi {}, is {} free for the {} at {}?",
            first(lead_name),
            twin.name,
            v["meeting"],
            v["start"]
        );
        ask(&mut sim, lead, &about_twin);
        assert!(
            !history(&sim).disclosed.contains_key(&confirm.key),
            "{about_twin}"
        );
        ask(
            &mut sim,
            lead,
            &fill(
                "Hi {first}, is {member} free for the {meeting} at {start}?",
                &v,
            ),
        );
        assert!(history(&sim).disclosed.contains_key(&confirm.key));
    }
}

/// A question near what a colleague knows, that does not ask for it, gets a request
/// to ask precisely, not a brush-off.
#[test]
fn a_vague_question_to_the_right_person_gets_asked_what_is_needed() {
    let loaded = load_generated(
        &generate_one(&one_task_suite(
            "vague",
            2,
            "t",
            Family::KbFix(Default::default()),
        )),
        "vague.ron",
    );
    let s = &loaded.scenario;
    let (holder, name, clue) = clues(s)[0];
    let v = vars(s, name, clue);
    let mut sim = sim_at_release(&loaded, None);
    let reply = ask(
        &mut sim,
        holder,
        &fill("Hi {first}, could you help me with {id1}?", &v),
    );
    assert_eq!(reply, ASK_WHAT);
    assert!(!history(&sim).disclosed.contains_key(&clue.key));
    let holder_default = s
        .company
        .people
        .iter()
        .find(|p| p.key == holder)
        .unwrap()
        .default_reply
        .clone();
    let reply = ask(&mut sim, holder, "Hi, where is the cafeteria?");
    assert_eq!(Some(reply), holder_default);
}

/// Reporting the symptom reaches the website owner, whose reply does not give the
/// root cause away; the chain owner -> approver -> code completes in those words.
#[test]
fn the_website_owner_answers_a_symptom_and_keeps_the_cause() {
    for seed in 1..=8 {
        let loaded = load_generated(
            &generate_one(&one_task_suite(
                "web",
                seed,
                "t",
                Family::WebsiteMonitor(Default::default()),
            )),
            "web.ron",
        );
        let s = &loaded.scenario;
        let all = clues(s);
        let find = |suffix: &str| {
            *all.iter()
                .find(|(_, _, c)| c.key.ends_with(suffix))
                .unwrap()
        };
        let (owner, owner_name, oc) = find("/owner");
        let (approver, approver_name, _) = find("/approval");
        let v = vars(s, owner_name, oc);
        let mut sim = sim_at_release(&loaded, None);
        let reply = ask(
            &mut sim,
            owner,
            &fill(
                "Hi {first}, {service} is critical and the pages behind it return 504s.",
                &v,
            ),
        );
        assert!(
            history(&sim).disclosed.contains_key(&oc.key),
            "seed {seed}: {reply}"
        );
        let lower = reply.to_lowercase();
        for cause in [
            "disk",
            "memory",
            "cpu",
            "connection",
            "maintenance",
            "flush",
            "scale",
            "pool",
            "purge",
        ] {
            assert!(!lower.contains(cause), "seed {seed}: {cause} in {reply}");
        }
        let q = format!(
            "Hi {}, {} needs your approval for the emergency change on {}. Could you send me the approval code?",
            first(approver_name),
            v["owner_first"],
            v["service"]
        );
        ask(&mut sim, approver, &q);
        let code = &find("/code").2.trigger[0][0];
        ask(&mut sim, owner, &format!("Approved, the code is {code}."));
        assert!(
            history(&sim).disclosed.keys().any(|k| k.ends_with("/code")),
            "seed {seed}"
        );
    }
}

/// Natural questions for the broad probe over every bundled TraineeBench scenario
/// (issue 37 item 6), a dozen per clue kind, written as a model asks. Each kind
/// holds the wordings the issue names as misses: data named by its use ("where do
/// I get the ... data for ...?"), an example in parentheses, a finding reported
/// with a request, a result delivered with a code and who signed it off, and a
/// manager asked about a member by a first name two colleagues share.
const BROAD: &[(&str, &[&str])] = &[
    (
        "sales",
        &[
            "Hi {first}, where do I get the sales data for the quarterly report?",
            "Hi {first}, how should I handle special cases (e.g. cancelled or refunded orders) when I total sales per salesperson?",
            "Hi {first}, I've gone through the sales exports and some orders are marked cancelled. Should I leave them out of each salesperson's total?",
            "Hello {first}, what's the correct way to calculate revenue for each salesperson?",
            "Hi {first}, where are last year's sales exports stored?",
            "Hi {first}, is there a guide on how our sales figures should be computed?",
            "Hi {first}, which orders count towards a salesperson's total?",
            "Hey {first}, do you know which files I need for the sales analysis?",
            "Hi {first}, could you point me to the data for the sales ranking?",
            "Hi {first}, what's the definition of a salesperson's revenue in our reports?",
            "Hi {first}, where would I find the sales numbers (e.g. the quarterly exports)?",
            "Hi {first}, I need to compute total sales per person. Which method does the team use?",
        ],
    ),
    (
        "transaction-review",
        &[
            "Hi {first}, where do I get the transaction data for the supplier review?",
            "Hi {first}, what counts as an abnormal supplier (for example, duplicate invoices or round amounts)?",
            "Hi {first}, I went through the supplier payments and a few look odd. How should I flag them in my report?",
            "Hello {first}, is there a manual for reviewing supplier transactions?",
            "Hi {first}, how do we identify suspicious payments to suppliers?",
            "Hi {first}, what template should the supplier review report use?",
            "Hey {first}, which criteria should I apply when I check supplier invoices?",
            "Hi {first}, where is the review manual for supplier payments kept?",
            "Hi {first}, how do I tell whether a vendor's transactions are irregular?",
            "Hi {first}, what are the signs that a supplier should be flagged?",
            "Hi {first}, could you tell me how the finance team reviews supplier transactions?",
            "Hi {first}, I'm checking the invoices from our suppliers. What method should I follow to spot problems?",
        ],
    ),
    (
        "attendance",
        &[
            "Hi {first}, where do I get the attendance rules for the monthly report?",
            "Hi {first}, how is lateness defined (e.g. is 5 minutes after the start already late)?",
            "Hi {first}, I looked at the badge records and some people clock in a few minutes late. What threshold should I use to count them as late?",
            "Hello {first}, where are the attendance policies kept?",
            "Hi {first}, how do we count early departures in the attendance review?",
            "Hi {first}, what's the grace period for late arrivals?",
            "Hey {first}, which rules apply to overtime in the attendance report?",
            "Hi {first}, is there a manual that defines absences?",
            "Hi {first}, how many minutes late before it counts as tardiness?",
            "Hi {first}, what criteria do we use for punctuality in the timekeeping review?",
            "Hi {first}, where can I find the rules on working hours for the attendance check?",
            "Hi {first}, how should I count someone who leaves early (say, before 17:00) in the attendance summary?",
        ],
    ),
    (
        "event-planning",
        &[
            "Hi {first}, which days in {month} are you free for the team outing?",
            "Hi {first}, are you available for a team event in {month} (any weekday is fine)?",
            "Hi {first}, I've collected most people's dates for the team outing. Could you tell me when you're free in {month}?",
            "Hello {first}, when would suit you for the offsite in {month}?",
            "Hi {first}, do you have any days off planned in {month}? I'm scheduling the team day out.",
            "Hi {first}, what dates work for you for the team building event?",
            "Hey {first}, could you share your availability for the team trip?",
            "Hi {first}, which week in {month} can you join the team activity?",
            "Hi {first}, when are you away in {month}? I need it to pick the date of the outing.",
            "Hi {first}, is there a day in {month} you'd prefer for the team event?",
            "Hi {first}, would you be able to come to the team outing in {month}? Which dates?",
            "Hi {first}, I'm organising the excursion. When in {month} are you free?",
        ],
    ),
    (
        "ads-handbook",
        &[
            "Hi {first}, how do I pick channels for the {city} campaign within the budget?",
            "Hi {first}, how is a channel's exposure scored (for example, for a billboard)?",
            "Hi {first}, I've got the channel list for {city}, but how do I decide which ones to choose for the campaign?",
            "Hello {first}, is there a handbook for ad campaign planning?",
            "Hi {first}, what method do we use to evaluate advertising channels?",
            "Hi {first}, which formula gives the effective exposure of an ad placement?",
            "Hey {first}, what's our approach to building an advertising strategy?",
            "Hi {first}, how should I calculate the score of each media channel?",
            "Hi {first}, is there a guide on planning ad campaigns?",
            "Hi {first}, how do we choose ad placements for a campaign in {city}?",
            "Hi {first}, what framework should I follow to select channels for the campaign?",
            "Hi {first}, how do I compute the effective exposure for the {city} campaign channels?",
        ],
    ),
    (
        "ads-files",
        &[
            "Hi {first}, where do I get the audience density data for the {city} campaign?",
            "Hi {first}, where do I get the data for the {city} campaign?",
            "Hi {first}, where are the campaign files (channel list, heatmaps) for {city}?",
            "Hi {first}, could you send me the channel cost list for the {city} campaign?",
            "Hello {first}, which file lists the ad channels and prices for {city}?",
            "Hi {first}, where can I find the heatmap images for the campaign?",
            "Hey {first}, where's the spreadsheet of advertising options for {city}?",
            "Hi {first}, I need the channel options for the {city} campaign. Where are they?",
            "Hi {first}, where do I get the density maps for the ad plan?",
            "Hi {first}, can you share the campaign materials for {city}?",
            "Hi {first}, where's the data I need to plan the ads in {city}?",
            "Hi {first}, which dataset has the advertising channels available in {city}?",
        ],
    ),
    (
        "kb-fix",
        &[
            "Hi {first}, what's the new chart ID for {id1}?",
            "Hi {first}, the article \"{article}\" links to a broken chart ({id1}). What should it link to now?",
            "Hi {first}, I checked \"{article}\" and {id1} no longer loads. Could you tell me the replacement?",
            "Hello {first}, which chart replaced {id1}?",
            "Hi {first}, what's the current version of chart {id1}?",
            "Hi {first}, {id1} is broken in \"{article}\". Which ID should I use?",
            "Hey {first}, could you give me the updated link for {id1}?",
            "Hi {first}, what should {id1} be replaced with?",
            "Hi {first}, is there a working chart instead of {id1}?",
            "Hi {first}, I'm updating \"{article}\". What does {id1} map to now?",
            "Hi {first}, do you know the successor of chart {id1}?",
            "Hi {first}, which ID is live for the chart that used to be {id1}?",
        ],
    ),
    (
        "meeting-availability",
        &[
            "Hi {first}, are you free for the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, can you attend the {meeting} today ({start}-{end})?",
            "Hi {first}, I'm setting up the \"{meeting}\" at {start}. Will you be able to join?",
            "Hello {first}, does {start} work for you for the {meeting}?",
            "Hi {first}, would {start} to {end} suit you for the \"{meeting}\"?",
            "Hi {first}, are you available for the {meeting} this afternoon at {start}?",
            "Hey {first}, do you have a conflict with the \"{meeting}\" at {start}?",
            "Hi {first}, can I count on you for the {meeting} from {start} to {end}?",
            "Hi {first}, is the {meeting} at {start} okay for you?",
            "Hi {first}, could you make it to the \"{meeting}\" today from {start}?",
            "Hi {first}, I'd like to invite you to the {meeting} at {start}. Are you free then?",
            "Hi {first}, will you be there for the \"{meeting}\" at {start}?",
        ],
    ),
    (
        "meeting-member",
        &[
            "Hi {first}, is {member} free for the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, is {member_first} free for the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, can {member_first} join the {meeting} at {start}?",
            "Hello {first}, do you know if {member} can make the {meeting} ({start}-{end})?",
            "Hi {first}, I'm booking the \"{meeting}\" at {start}. Is {member_first} available?",
            "Hi {first}, should I include {member} in the {meeting} at {start}?",
            "Hey {first}, will {member_first} be able to attend the \"{meeting}\" today?",
            "Hi {first}, is {member} busy at {start}? I want to invite them to the {meeting}.",
            "Hi {first}, can I count {member_first} in for the {meeting} from {start}?",
            "Hi {first}, does {start} work for {member} for the \"{meeting}\"?",
            "Hi {first}, is {member_first} around for the {meeting} at {start}?",
            "Hi {first}, could {member} come to the \"{meeting}\" from {start} to {end}?",
        ],
    ),
    (
        "web-register",
        &[
            "Hi {first}, who looks after the website? It seems to be having problems.",
            "Hi {first}, who is responsible for {service}?",
            "Hi {first}, I noticed errors on the website. Who should I contact?",
            "Hello {first}, which team owns the public site?",
            "Hi {first}, who's on call for the website today?",
            "Hey {first}, who manages {service}?",
            "Hi {first}, who do I report a website incident to?",
            "Hi {first}, who is in charge of the web site?",
            "Hi {first}, do you know who runs {service}?",
            "Hi {first}, who supports the website (the product pages in particular)?",
            "Hi {first}, the site is slow. Who is the owner?",
            "Hi {first}, who should I talk to about {service}?",
        ],
    ),
    (
        "web-owner",
        &[
            "Hi {first}, I checked the dashboard and {service} is critical with high memory use. Could you take a look?",
            "Hi {first}, {service} is timing out (e.g. 504s on the product pages). Can you fix it?",
            "Hi {first}, the logs show {service} evicting a lot and pages are slow. Could you investigate?",
            "Hello {first}, there's an incident on {service}. Can you help?",
            "Hi {first}, {service} looks unhealthy on the monitor. What should we do?",
            "Hi {first}, I found that {service} is failing and checkout is degraded. Can you look into it?",
            "Hey {first}, {service} keeps raising alerts. Could you check it?",
            "Hi {first}, {service} seems to be down. Can you fix it?",
            "Hi {first}, latency on {service} is high and errors are climbing. Could you have a look?",
            "Hi {first}, the site is degraded because of {service}. What's the next step?",
            "Hi {first}, I've been monitoring {service}: it's in a warning state and response times are bad. Please investigate.",
            "Hi {first}, we have an outage on {service}. Could you take care of it?",
        ],
    ),
    (
        "web-approval",
        &[
            "Hi {first}, {owner_first} needs your approval for an emergency change on {service}. Could you send the approval code?",
            "Hi {first}, could you approve the emergency fix for {service} (a cache flush)? {owner_first} needs the code.",
            "Hi {first}, {owner_first} looked at {service} and wants to fix it now. Can you give me the approval code?",
            "Hello {first}, I need an approval code for the emergency change on {service}.",
            "Hi {first}, can you sign off the emergency change on {service}?",
            "Hey {first}, what's the approval code for fixing {service}?",
            "Hi {first}, {owner_first} asked me to get your approval for a fix on {service}. Could you approve it?",
            "Hi {first}, are you the one who approves emergency changes? {service} needs a fix.",
            "Hi {first}, please approve the emergency change on {service} and send me the code.",
            "Hi {first}, I'm coordinating the {service} fix with {owner_first}. Could I have your approval code?",
            "Hi {first}, we need sign-off to flush the cache on {service}. Can you approve?",
            "Hi {first}, could you authorise the emergency fix on {service}?",
        ],
    ),
    (
        "web-code",
        &[
            "Hi {first}, {approver_first} signed off: the approval code is {code}.",
            "Hi {first}, {approver_first} approved the emergency change on {service}, code {code}. Please go ahead.",
            "Hi {first}, here's the approval code: {code} (from {approver_first}).",
            "Hello {first}, the code is {code}.",
            "Hi {first}, I got the approval for {service}: {code}.",
            "Hey {first}, {code} is the approval code. You can start the fix.",
            "Hi {first}, approval came through from {approver_first}. The code is {code}.",
            "Hi {first}, {approver_first} gave me {code} for the emergency change.",
            "Hi {first}, code {code}, approved by {approver_first}.",
            "Hi {first}, the approval code you asked for is {code}; {approver_first} signed it off.",
            "Hi {first}, please start the fix on {service}. Approval code: {code}.",
            "Hi {first}, {approver_first} says go ahead with the change. The code is {code}.",
        ],
    ),
];

/// Requests for help that ask for nothing in particular, per group of kinds.
const BROAD_VAGUE: &[(&str, &[&str])] = &[
    (
        "sales",
        &[
            "Hi {first}, I've started on the sales report. Any pointers?",
            "Hi {first}, could you give me a hand with the sales analysis?",
            "Hi {first}, any advice on the quarterly sales task?",
            "Hi {first}, I'm new to the sales numbers. Any thoughts?",
        ],
    ),
    (
        "transaction-review",
        &[
            "Hi {first}, I've been given the supplier review. Any tips?",
            "Hi {first}, could you help me out with the transaction review?",
            "Hi {first}, any guidance on the supplier payments task?",
            "Hi {first}, I'm working through the invoices this week. Any advice?",
        ],
    ),
    (
        "attendance",
        &[
            "Hi {first}, I'm on the attendance review this month. Any tips?",
            "Hi {first}, could you help with the attendance report?",
            "Hi {first}, any advice for the timekeeping task?",
            "Hi {first}, I've just started the attendance check. Any thoughts?",
        ],
    ),
    (
        "event-planning",
        &[
            "Hi {first}, I'm in charge of the team outing. Any ideas?",
            "Hi {first}, could you help me plan the offsite?",
            "Hi {first}, any tips for organising the team day?",
            "Hi {first}, I've been asked to set up the team event. Any advice?",
        ],
    ),
    (
        "ads",
        &[
            "Hi {first}, I'm putting together the ad campaign. Any pointers?",
            "Hi {first}, could you help me with the campaign plan?",
            "Hi {first}, any advice on the advertising task?",
            "Hi {first}, I've started on the ads strategy. Any thoughts?",
        ],
    ),
    (
        "kb-fix",
        &[
            "Hi {first}, I'm cleaning up the knowledge base. Any advice?",
            "Hi {first}, could you help me with the chart links?",
            "Hi {first}, any tips for the article fixes?",
            "Hi {first}, I've been asked to repair some articles. Any thoughts?",
        ],
    ),
    (
        "meeting",
        &[
            "Hi {first}, I'm booking a meeting for the team. Any advice?",
            "Hi {first}, could you help me with the meeting booking?",
            "Hi {first}, any tips for scheduling the meeting?",
            "Hi {first}, I've been asked to organise a meeting. Any thoughts?",
        ],
    ),
    (
        "web",
        &[
            "Hi {first}, I'm watching the website today. Any advice?",
            "Hi {first}, could you help me with the monitoring?",
            "Hi {first}, any tips for the website task?",
            "Hi {first}, I've been put on the site monitoring. Any thoughts?",
        ],
    ),
];

/// A TraineeBench clue's kind in the broad probe (and in `npc_probe`).
pub(crate) fn broad_kind(c: &Clue) -> &'static str {
    let k = c.key.as_str();
    let task = k.split('/').nth(1).unwrap_or_default();
    let family = task.split_once('-').map_or(task, |(_, f)| f);
    match family {
        "sales" => "sales",
        "transaction-review" => "transaction-review",
        "attendance" => "attendance",
        "event-planning" => "event-planning",
        "kb-fix" => "kb-fix",
        "ads-strategy" if k.ends_with("/files") => "ads-files",
        "ads-strategy" => "ads-handbook",
        "meeting-book" if k.ends_with("-availability") => "meeting-availability",
        "meeting-book" => "meeting-member",
        "website-monitor" if k.contains("/register") => "web-register",
        "website-monitor" if k.ends_with("/owner") => "web-owner",
        "website-monitor" if k.ends_with("/code") => "web-code",
        "website-monitor" if k.contains("/approval") => "web-approval",
        _ => panic!("clue {k} has no kind in the probe"),
    }
}

/// The vague-request group of a kind.
pub(crate) fn broad_vague_group(kind: &str) -> &'static str {
    match kind {
        "ads-files" | "ads-handbook" => "ads",
        "meeting-availability" | "meeting-member" => "meeting",
        k if k.starts_with("web-") => "web",
        "sales" => "sales",
        "transaction-review" => "transaction-review",
        "attendance" => "attendance",
        "event-planning" => "event-planning",
        "kb-fix" => "kb-fix",
        k => panic!("no vague group for {k}"),
    }
}

/// Sends `text` to `to` and returns their reply once it has arrived (empty if
/// none came within an hour and a half): waits of ten minutes until the thread's
/// last message is no longer the question (a busy colleague answers in turn).
fn ask_quick(sim: &mut Sim, to: &str, text: &str) -> String {
    call(sim, "send_message", json!({"to": to, "text": text}));
    for _ in 0..9 {
        call(sim, "wait", json!({"minutes": 10}));
        let r = call(sim, "read_messages", json!({"with": to}));
        let last = r["result"]["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
            .unwrap_or_default();
        if last["text"].as_str() != Some(text) {
            return last["text"].as_str().unwrap_or_default().to_owned();
        }
    }
    String::new()
}

/// All of `items` when `full`, else every third of them starting at `turn`.
fn sample<'a>(items: &'a [&'a str], turn: usize, full: bool) -> impl Iterator<Item = &'a &'a str> {
    items
        .iter()
        .enumerate()
        .filter(move |(i, _)| full || (i + turn).is_multiple_of(3))
        .map(|(_, q)| q)
}

/// `template` filled, or `None` when the scenario lacks a placeholder's value.
fn try_fill(template: &str, v: &BTreeMap<&'static str, String>) -> Option<String> {
    let mut out = template.to_owned();
    for (k, val) in v {
        out = out.replace(&format!("{{{k}}}"), val);
    }
    (!out.contains('{')).then_some(out)
}

/// The broad probe (issue 37 item 6): every clue of every bundled TraineeBench
/// scenario, asked by its holder after its task's release (every task released at
/// the start and open all day) and after the clue's prerequisites were disclosed
/// the oracle's way, a dozen natural wordings each, through the real
/// `send_message`; then vague requests in a run of their own. Natural questions
/// must get the clue in >= 99% of asks, vague requests may disclose in <= 1%.
/// `TBSIM_NPC_PROBE=full` asks every wording of every clue (the recorded run, in
/// `runs/validity/npc-broad-probe.md`); by default a third of them, in turn.
#[test]
fn broad_probe_over_traineebench() {
    let dir = crate::util::root().join("content/scenarios/traineebench");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    paths.sort();
    assert_eq!(paths.len(), 50, "the 50 TraineeBench scenarios");
    // Every wording of every clue with TBSIM_NPC_PROBE=full (the recorded run);
    // else a third of them, in turn, so every wording is still asked of a third
    // of the clues and the test stays quick.
    let full = std::env::var("TBSIM_NPC_PROBE").is_ok_and(|v| v == "full");
    let mut turn = 0usize;
    let mut rows: BTreeMap<&'static str, [usize; 4]> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut leaks = Vec::new();
    // Every question and the reply it got, in order: two builds of the engine that
    // print the same digest answered every message alike.
    let mut replies = blake3::Hasher::new();
    let mut record = |q: &str, reply: &str| {
        replies.update(q.as_bytes());
        replies.update(&[0]);
        replies.update(reply.as_bytes());
        replies.update(&[0]);
    };
    for p in &paths {
        let mut loaded = tbsim_scenario::load_file(p).unwrap();
        let end = loaded.scenario.clock.end.clone();
        for t in &mut loaded.scenario.tasks {
            t.release = tbsim_scenario::Release::Start;
            t.deadline = end.clone();
        }
        let s = &loaded.scenario;
        let all = clues(s);
        for &(holder, name, clue) in &all {
            turn += 1;
            let k = broad_kind(clue);
            let v = vars(s, name, clue);
            let row = rows.entry(k).or_default();
            let mut sim = sim_at_release(&loaded, None);
            prerequisites(&mut sim, s, clue);
            let questions = BROAD.iter().find(|(q, _)| *q == k).unwrap().1;
            for q in sample(questions, turn, full) {
                let Some(q) = try_fill(q, &v) else { continue };
                let reply = ask_quick(&mut sim, holder, &q);
                record(&q, &reply);
                row[0] += 1;
                if reply.contains(&clue.response) {
                    row[1] += 1;
                } else {
                    misses.push(format!("{} [{k}] {q:?} -> {reply:?}", s.name));
                }
            }
            let mut sim = sim_at_release(&loaded, None);
            prerequisites(&mut sim, s, clue);
            let theirs: Vec<&str> = all
                .iter()
                .filter(|(h, _, c)| *h == holder && c.task == clue.task)
                .map(|(_, _, c)| c.response.as_str())
                .collect();
            let group = broad_vague_group(k);
            for q in sample(
                BROAD_VAGUE.iter().find(|(g, _)| *g == group).unwrap().1,
                turn,
                full,
            ) {
                let q = fill(q, &v);
                let reply = ask_quick(&mut sim, holder, &q);
                record(&q, &reply);
                row[2] += 1;
                if theirs.iter().any(|r| reply.contains(r)) {
                    row[3] += 1;
                    leaks.push(format!("{} [{k}] {q:?} -> {reply:?}", s.name));
                }
            }
        }
    }
    let total = rows.values().fold([0; 4], |mut a, r| {
        (0..4).for_each(|i| a[i] += r[i]);
        a
    });
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!("| clue kind | natural asked | answered | rate | vague asked | disclosed | rate |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, r) in rows
        .iter()
        .map(|(k, r)| (*k, r))
        .chain([("**all**", &total)])
    {
        println!(
            "| {k} | {} | {} | {:.1}% | {} | {} | {:.1}% |",
            r[0],
            r[1],
            pct(r[1], r[0]),
            r[2],
            r[3],
            pct(r[3], r[2])
        );
    }
    println!("replies digest: {}", replies.finalize().to_hex());
    for m in &misses {
        println!("MISS {m}");
    }
    for m in &leaks {
        println!("VAGUE-LEAK {m}");
    }
    assert!(
        total[0] > if full { 7000 } else { 2500 },
        "the probe asked {} questions",
        total[0]
    );
    assert!(
        total[1] as f64 >= 0.99 * total[0] as f64,
        "natural questions answered {} of {}",
        total[1],
        total[0]
    );
    assert!(
        total[3] as f64 <= 0.01 * total[2] as f64,
        "vague requests disclosed {} of {}",
        total[3],
        total[2]
    );
}
