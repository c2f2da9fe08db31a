//! A held-out probe of the scripted colleagues over every bundled TraineeBench
//! scenario (issue 25, item 4): natural questions, written as a model asks them and
//! not from the clue triggers, sent to every clue holder after the clue's task is
//! released; vague requests for help; and each task's objective relayed to its clue
//! holders one sentence per message.
//!
//! Targets: specific questions get their clue in >= 98% of asks (a greeting asked
//! back, "which Uma do you mean?", is a miss); vague ones disclose in <= 1%; copied
//! objective sentences disclose nothing. The measured table is kept in
//! `runs/validity/npc-probe.md`.

use std::collections::BTreeMap;

use serde_json::json;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_scenario::{LoadedScenario, Release, Scenario};

use crate::npc_questions::{
    broad_kind as kind, broad_vague_group as vague_group, call, clues, history, prerequisites, vars,
};
use tbsim_core::protocol::SimConfig;

/// Natural questions per clue kind. Placeholders come from what the agent can see
/// (the objective, the colleague list, the monitoring pages, replies so far).
const SPECIFIC: &[(&str, &[&str])] = &[
    (
        "sales",
        &[
            "Hi {first}, I'm putting together the quarterly sales figures. Is there an official method for calculating each salesperson's total?",
            "Hello {first}! Where can I find the sales export files I need for the report?",
            "Hi {first}, should cancelled orders be counted when I total up the sales per salesperson?",
            "Hi {first}, is there a handbook that explains how we compute sales totals?",
            "Hey {first}, quick question: how do we define revenue per salesperson in our reports?",
            "Hi {first}, which file has the quarterly sales data for last year?",
        ],
    ),
    (
        "transaction-review",
        &[
            "Hi {first}, how do I decide whether a supplier's transactions look abnormal? Is there a manual I should follow?",
            "Hello {first}, where is the supplier transaction review manual kept?",
            "Hi {first}, what format should my supplier review report follow?",
            "Hi {first}, what are the red flags for suspicious supplier payments in our review process?",
            "Hey {first}, which criteria do we use to flag a supplier during a transaction review?",
            "Hi {first}, I'm reviewing the supplier invoices. How do I spot the irregular ones?",
        ],
    ),
    (
        "attendance",
        &[
            "Hi {first}, where can I find the attendance rules for this month?",
            "Hello {first}, how many minutes late counts as lateness under our attendance policy?",
            "Hi {first}, is there a grace period before someone is counted as late?",
            "Hi {first}, which document defines overtime and early departures for the attendance report?",
            "Hey {first}, how do we count absences in the attendance review?",
            "Hi {first}, what are the timekeeping rules I should apply to the badge records?",
        ],
    ),
    (
        "event-planning",
        &[
            "Hi {first}, I'm organising the team outing in {month}. Which days would work for you?",
            "Hello {first}, when are you free in {month} for the team event?",
            "Hi {first}, are there any dates in {month} when you'd be away? I'm planning the team day out.",
            "Hi {first}, could you tell me your availability in {month} for the offsite?",
            "Hey {first}, which dates suit you for the team-building trip in {month}?",
            "Hi {first}, we're picking a day for the team activity in {month}. When can you come?",
        ],
    ),
    (
        "ads-handbook",
        &[
            "Hi {first}, how do we score a channel's exposure when we plan an ad campaign?",
            "Hello {first}, is there a handbook for putting together an advertising plan?",
            "Hi {first}, what method should I use to choose channels for the {city} campaign within the budget?",
            "Hi {first}, how is effective exposure calculated for the ad channels?",
            "Hey {first}, which approach do we follow when picking ad placements for a campaign?",
            "Hi {first}, is there a formula for evaluating advertising channels in the {city} campaign?",
        ],
    ),
    (
        "ads-files",
        &[
            "Where do I get the audience density data for the {city} campaign?",
            "Hi {first}, where's the list of ad channels and their costs for {city}?",
            "Hello {first}, could you share the channel options file for the {city} campaign?",
            "Hi {first}, where are the heatmap images for the {city} campaign?",
            "Hi {first}, which spreadsheet lists the advertising options I can choose from in {city}?",
            "Hey {first}, where do I get the audience density heatmaps for the ads plan?",
        ],
    ),
    (
        "kb-fix",
        &[
            "Hi {first}, which chart should {id1} point to now?",
            "Hello {first}, the chart {id1} in \"{article}\" is broken. What's its replacement ID?",
            "Hi {first}, I'm fixing the links in \"{article}\". What's the current ID for {id1}?",
            "Hi {first}, {id1} no longer works. Which chart replaced it?",
            "Hey {first}, what should I use instead of {id1}?",
            "Hi {first}, do you know the new ID for the broken chart {id1}?",
        ],
    ),
    (
        "meeting-availability",
        &[
            "Hi {first}, are you free for the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, could you make the {meeting} today at {start}?",
            "Hello {first}, does {start} to {end} today work for you for the \"{meeting}\" meeting?",
            "Hi {first}, would you be able to attend the \"{meeting}\" at {start}?",
            "Hi {first}, I'm booking the \"{meeting}\" for {start}-{end}. Can you join?",
            "Hey {first}, do you have a clash with the {meeting} from {start} to {end}?",
        ],
    ),
    (
        "meeting-member",
        &[
            "Hi {first}, is {member} free for the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, can {member} join the {meeting} at {start}?",
            "Hello {first}, do you know if {member} can attend the \"{meeting}\" today at {start}?",
            "Hi {first}, should I invite {member} to the \"{meeting}\" from {start} to {end}?",
            "Hi {first}, is {member} available at {start} for the {meeting}?",
            "Hey {first}, will {member} be able to come to the \"{meeting}\" at {start}?",
        ],
    ),
    (
        "web-register",
        &[
            "Hi {first}, who is responsible for the public website? Something looks wrong with it.",
            "Hello {first}, who should I contact about problems with the website?",
            "Hi {first}, which team looks after {service}?",
            "Hi {first}, who is on call for {service} today?",
            "Hey {first}, do you know who owns {service}? It seems to be failing.",
            "Hi {first}, who manages the website? I need to report an incident.",
        ],
    ),
    (
        "web-owner",
        &[
            "Hi {first}, the front-end logs show {service} timing out while rendering the product pages, and checkout is slow. Can you fix it?",
            "Hello {first}, {service} is throwing errors and the site is degraded. Could you take a look?",
            "Hi {first}, the monitoring dashboard has {service} marked critical. Can you investigate?",
            "Hi {first}, I think {service} is down: pages behind it return 504s. What should we do?",
            "Hey {first}, the alerts for {service} keep firing and latency is high. Could you fix it?",
            "Hi {first}, there's an incident on {service}: requests are failing. Can you help?",
        ],
    ),
    (
        "web-approval",
        &[
            "Hi {first}, {owner_first} asked me to get approval for the emergency change on {service}. Could you send me the approval code?",
            "Hello {first}, could you approve the emergency fix on {service}? {owner_first} needs the approval code.",
            "Hi {first}, we need an approval code for an emergency change to {service}. Can you give it?",
            "Hi {first}, {owner_first} wants to fix {service} now and needs your sign-off. What's the approval code?",
            "Hey {first}, can I have the approval code for the {service} emergency change, please?",
            "Hi {first}, would you sign off the emergency change on {service} and send the code?",
        ],
    ),
    (
        "web-code",
        &[
            "Hi {first}, the approval code is {code}.",
            "Hello {first}, the manager approved it: the code is {code}.",
            "Hi {first}, here's the approval code for the emergency change: {code}.",
            "Hi {first}, {code} is the code you asked for.",
            "Hey {first}, I got the approval. Code: {code}. Can you go ahead?",
            "Hi {first}, approval received ({code}), please start the fix.",
        ],
    ),
];

/// Vague requests for help: they name the work but ask for nothing in particular.
const VAGUE: &[(&str, &[&str])] = &[
    (
        "sales",
        &[
            "I'm working on a sales analysis. Any advice?",
            "Hi {first}, I've been asked to look at the sales numbers. Can you help?",
            "Hi {first}, any tips for the sales report?",
        ],
    ),
    (
        "transaction-review",
        &[
            "Hi {first}, I'm reviewing supplier transactions this week. Any advice?",
            "Hi {first}, could you help me with the supplier review?",
            "Hi {first}, anything I should know about the transaction review?",
        ],
    ),
    (
        "attendance",
        &[
            "Hi {first}, I'm doing the attendance report. Anything I should know?",
            "Hi {first}, can you help me with the attendance review?",
            "Hi {first}, any tips on attendance?",
        ],
    ),
    (
        "event-planning",
        &[
            "Hi {first}, I'm planning the team outing. Any thoughts?",
            "Hi {first}, can you help me with the team event?",
            "Hi {first}, any suggestions for the offsite?",
        ],
    ),
    (
        "ads",
        &[
            "Hi {first}, I'm working on an ad campaign plan. Any advice?",
            "Hi {first}, can you help me with the advertising strategy?",
            "Hi {first}, any tips for the campaign?",
        ],
    ),
    (
        "kb-fix",
        &[
            "Hi {first}, I'm fixing some knowledge base articles. Any tips?",
            "Hi {first}, can you help me with the broken charts?",
            "Hi {first}, anything I should know about the chart links?",
        ],
    ),
    (
        "meeting",
        &[
            "Hi {first}, I'm organising a meeting. Any advice?",
            "Hi {first}, can you help me with the meeting?",
            "Hi {first}, any thoughts on the schedule?",
        ],
    ),
    (
        "web",
        &[
            "Hi {first}, I'm looking into the website. Any advice?",
            "Hi {first}, can you help me with an incident?",
            "Hi {first}, any tips for the monitoring task?",
        ],
    ),
];

/// `template` with its placeholders filled, or `None` when the scenario lacks one.
fn try_fill(template: &str, v: &BTreeMap<&'static str, String>) -> Option<String> {
    let mut out = template.to_owned();
    for (k, val) in v {
        out = out.replace(&format!("{{{k}}}"), val);
    }
    (!out.contains('{')).then_some(out)
}

/// The bundled TraineeBench scenarios with every task released at the start and
/// open all day, so each question can be asked after its task's release.
fn traineebench() -> Vec<LoadedScenario> {
    let dir = crate::util::root().join("content/scenarios/traineebench");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let mut l = tbsim_scenario::load_file(p).unwrap();
            let end = l.scenario.clock.end.clone();
            for t in &mut l.scenario.tasks {
                t.release = Release::Start;
                t.deadline = end.clone();
            }
            l
        })
        .collect()
}

fn fresh(loaded: &LoadedScenario) -> Sim {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::digest_only(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    sim
}

/// Sends `text` to `to` and returns the reply once it has arrived (empty if none
/// came within two hours: a notification from elsewhere can end a wait early).
fn ask(sim: &mut Sim, to: &str, text: &str) -> String {
    call(sim, "send_message", json!({"to": to, "text": text}));
    for _ in 0..12 {
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

/// Whether a reply gives away any of `responses`.
fn discloses(reply: &str, responses: &[&str]) -> bool {
    responses.iter().any(|r| reply.contains(r))
}

/// The sentences of an objective, as a relay would cut them.
fn sentences(objective: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = objective.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        let end = matches!(c, '.' | '?' | '!' | '\n')
            && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            if cur.split_whitespace().count() >= 3 {
                out.push(cur.trim().to_owned());
            }
            cur.clear();
        }
    }
    if cur.split_whitespace().count() >= 3 {
        out.push(cur.trim().to_owned());
    }
    out
}

#[derive(Default)]
struct Row {
    asked: usize,
    hits: usize,
    vague: usize,
    vague_hits: usize,
}

#[test]
fn held_out_questions_over_traineebench() {
    let mut rows: BTreeMap<&'static str, Row> = BTreeMap::new();
    let mut misses: Vec<String> = Vec::new();
    let mut leaks: Vec<String> = Vec::new();
    let (mut relayed, mut relay_leaks) = (0usize, Vec::new());
    for loaded in traineebench() {
        let s: &Scenario = &loaded.scenario;
        let all = clues(s);
        for &(holder, name, clue) in &all {
            let k = kind(clue);
            let v = vars(s, name, clue);
            let row = rows.entry(k).or_default();
            let mut sim = fresh(&loaded);
            prerequisites(&mut sim, s, clue);
            let questions = SPECIFIC.iter().find(|(q, _)| *q == k).unwrap().1;
            for q in questions {
                let Some(q) = try_fill(q, &v) else { continue };
                let reply = ask(&mut sim, holder, &q);
                row.asked += 1;
                if reply.contains(&clue.response) {
                    row.hits += 1;
                } else {
                    misses.push(format!("{} [{k}] {q:?} -> {reply:?}", s.name));
                }
            }
            // Vague requests, in a run of their own (nothing disclosed before).
            let mut sim = fresh(&loaded);
            prerequisites(&mut sim, s, clue);
            let theirs: Vec<&str> = all
                .iter()
                .filter(|(h, _, c)| *h == holder && c.task == clue.task)
                .map(|(_, _, c)| c.response.as_str())
                .collect();
            let vague = VAGUE.iter().find(|(g, _)| *g == vague_group(k)).unwrap().1;
            for q in vague {
                let q = try_fill(q, &v).unwrap();
                let reply = ask(&mut sim, holder, &q);
                row.vague += 1;
                if discloses(&reply, &theirs) {
                    row.vague_hits += 1;
                    leaks.push(format!("{} [{k}] {q:?} -> {reply:?}", s.name));
                }
            }
        }
        // Each task's objective relayed sentence by sentence to each holder of its
        // clues, in one conversation per holder.
        for t in &s.tasks {
            let mut holders: Vec<&str> = all
                .iter()
                .filter(|(_, _, c)| c.task.as_ref() == Some(&t.key))
                .map(|(h, _, _)| *h)
                .collect();
            holders.dedup();
            for holder in holders {
                let theirs: Vec<&str> = all
                    .iter()
                    .filter(|(h, _, _)| *h == holder)
                    .map(|(_, _, c)| c.response.as_str())
                    .collect();
                let mut sim = fresh(&loaded);
                for sentence in sentences(&t.objective) {
                    let reply = ask(&mut sim, holder, &sentence);
                    relayed += 1;
                    if discloses(&reply, &theirs) {
                        relay_leaks.push(format!("{} {holder} {sentence:?} -> {reply:?}", s.name));
                    }
                }
            }
        }
        // One more relay: a group of everyone gets each task's sentences in turn.
        let everyone: Vec<&str> = s.company.people.iter().map(|p| p.key.as_str()).collect();
        let mut sim = fresh(&loaded);
        let g = call(
            &mut sim,
            "create_group",
            json!({"name": "everyone", "members": everyone}),
        );
        let group = g["result"]["group"].as_str().unwrap().to_owned();
        let before = history(&sim).disclosed.len();
        for t in &s.tasks {
            for sentence in sentences(&t.objective) {
                call(
                    &mut sim,
                    "send_group_message",
                    json!({"group": group, "text": sentence}),
                );
                call(&mut sim, "wait", json!({"minutes": 10}));
                relayed += 1;
            }
        }
        if history(&sim).disclosed.len() != before {
            relay_leaks.push(format!(
                "{}: the group relay disclosed {:?}",
                s.name,
                history(&sim).disclosed.keys().collect::<Vec<_>>()
            ));
        }
    }
    let total = rows.values().fold(Row::default(), |a, r| Row {
        asked: a.asked + r.asked,
        hits: a.hits + r.hits,
        vague: a.vague + r.vague,
        vague_hits: a.vague_hits + r.vague_hits,
    });
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!("| clue kind | specific asked | answered | rate | vague asked | disclosed | rate |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, r) in rows
        .iter()
        .map(|(k, r)| (*k, r))
        .chain([("**all**", &total)])
    {
        println!(
            "| {k} | {} | {} | {:.1}% | {} | {} | {:.1}% |",
            r.asked,
            r.hits,
            pct(r.hits, r.asked),
            r.vague,
            r.vague_hits,
            pct(r.vague_hits, r.vague)
        );
    }
    println!(
        "relayed objective sentences: {relayed}, disclosing: {}",
        relay_leaks.len()
    );
    for m in misses.iter().take(400) {
        println!("MISS {m}");
    }
    for m in leaks.iter().take(30) {
        println!("VAGUE-LEAK {m}");
    }
    for m in relay_leaks.iter().take(30) {
        println!("RELAY-LEAK {m}");
    }
    assert!(
        total.hits as f64 >= 0.98 * total.asked as f64,
        "specific questions answered {} of {}",
        total.hits,
        total.asked
    );
    assert!(
        total.vague_hits as f64 <= 0.01 * total.vague as f64,
        "vague questions disclosed {} of {}",
        total.vague_hits,
        total.vague
    );
    assert!(
        relay_leaks.is_empty(),
        "{} relayed sentences disclosed",
        relay_leaks.len()
    );
}
