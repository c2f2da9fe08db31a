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

/// A first name two colleagues share gets "which one?", and naming the other
/// person in full does not disclose this one's status.
#[test]
fn a_shared_first_name_asks_which_person_is_meant() {
    let (loaded, confirm_key) = (1..200)
        .find_map(|seed| {
            let l = meeting_book(seed);
            let people = &l.scenario.company.people;
            let key = clues(&l.scenario).into_iter().find_map(|(_, _, c)| {
                let who = c.key.strip_suffix("-confirmed")?.rsplit('/').next()?;
                let p = people.iter().find(|p| slug(&p.name) == who)?;
                (people
                    .iter()
                    .filter(|o| first(&o.name) == first(&p.name))
                    .count()
                    > 1)
                .then(|| c.key.clone())
            })?;
            Some((l, key))
        })
        .expect("some seed has a shared first name");
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
        .find(|p| first(&p.name) == v["member_first"] && &p.name != member)
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
    assert!(
        reply.starts_with(&format!("Which {}", v["member_first"])),
        "{reply}"
    );
    assert!(
        reply.contains(member.as_str()) && reply.contains(&twin.name),
        "{reply}"
    );
    assert!(!history(&sim).disclosed.contains_key(&confirm.key));
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
