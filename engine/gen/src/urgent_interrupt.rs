//! Urgent interrupt: the manager's message lands mid-task with a short deadline.
//!
//! The model: at a seeded time in the middle of the day the intern's manager sends a
//! direct message with a high-priority request; the urgent task is released at the
//! same instant (`Release::At`), and its content exists only in that message (the
//! task notification just says an urgent request arrived). A few minutes before it,
//! a routine task was released (collect next week's workshop sign-ups from their
//! hosts), which needs several colleague round trips, so any agent is mid-work when
//! the interrupt lands: it must switch, meet the short deadline, and then resume the
//! routine before the end-of-day deadline. The request kinds:
//! - `Lookup`: add up one region's figure over two quarters, each in its own
//!   quarterly report on the drive, and reply to the manager with the total (in no
//!   text: the two cells, and the sums of every other region, measure and pair of
//!   quarters, are forbidden, so listing candidates fails);
//! - `Brief`: add up the downtime minutes of one service's unresolved incidents by
//!   severity and save a small JSON file;
//! - `Forward`: send a colleague the current (active, not expired) contract
//!   reference of a supplier;
//! - `Relay`: ask the budget holder in Finance how much of a project's approved
//!   budget is left and reply to the manager with it: the holder states the
//!   requested, approved and spent amounts and last year's budget in a drawn order,
//!   and the answer, approved minus spent, is in no text (the other figures and
//!   their other differences are forbidden).
//!
//! The deadline is the kind's own tool time (plus the holder's slowest reply for
//! `Relay`) plus a slack of 20-25 minutes (`Tight`) or 45-50 minutes (`Relaxed`),
//! rounded up to 5 minutes and never under 30. The interrupt always has `Urgent`
//! priority; the routine takes the suite's priority and deadline.
//!
//! Differences from the reference: this family does not exist there (the reference
//! has no timed events, no priorities and no deadline scoring); it is new here.
//! The family sets its own release times, so it accepts only `Start` or `At`
//! releases (the interrupt window starts at that time).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::{
    Check, CheckpointSpec, Clue, Condition, Content, FileSpec, Gate, PlanStep, Priority, Record,
    Release, Scenario, TaskSpec, TimedEvent, WorldChange,
};

/// What the manager asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Look up a figure in a drive report and reply with it.
    Lookup,
    /// Produce a short JSON file of downtime totals.
    Brief,
    /// Send a colleague a reference found on the drive.
    Forward,
    /// Ask a colleague for a figure and reply with it.
    Relay,
}

/// How much slack the deadline leaves over the minimum tool time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pace {
    /// 20-25 minutes of slack.
    Tight,
    /// 45-50 minutes of slack.
    Relaxed,
}

/// Parameters; unset ones are drawn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Request kind.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Deadline tightness.
    #[serde(default)]
    pub pace: Option<Pace>,
    /// When the message arrives, `HH:MM` (default: drawn mid-day).
    #[serde(default)]
    pub at: Option<String>,
    /// Minutes from the message to the deadline (20-180; overrides `pace`).
    #[serde(default)]
    pub deadline_min: Option<u32>,
    /// Workshops in the routine task (2-3).
    #[serde(default)]
    pub workshops: Option<u8>,
}

const KINDS: [(Kind, &str); 4] = [
    (Kind::Lookup, "lookup"),
    (Kind::Brief, "brief"),
    (Kind::Forward, "forward"),
    (Kind::Relay, "relay"),
];
const PACES: [(Pace, &str); 2] = [(Pace::Tight, "tight"), (Pace::Relaxed, "relaxed")];

const SCHEDULE: &str = include_str!("corpus/urgent_interrupt/workshop_schedule.md");
const REPORTS_README: &str = include_str!("corpus/urgent_interrupt/regional_reports_readme.md");
const REGISTER_NOTES: &str = include_str!("corpus/urgent_interrupt/contract_register_notes.md");

/// Workshop titles and the words that name each one in a question.
const WORKSHOPS: &[(&str, &[&str])] = &[
    (
        "Spreadsheet Modelling Basics",
        &["spreadsheet", "modelling", "modeling"],
    ),
    ("Writing Clear Status Updates", &["status update", "status"]),
    (
        "Negotiation for Non-Negotiators",
        &["negotiation", "negotiating"],
    ),
    ("Introduction to SQL Reporting", &["sql"]),
    ("Running Better Retrospectives", &["retrospective", "retro"]),
    (
        "Presenting Data to Executives",
        &["presenting", "presentation"],
    ),
    ("Time Blocking in Practice", &["blocking"]),
    (
        "Customer Interview Techniques",
        &["interview", "interviewing"],
    ),
    (
        "Accessible Document Design",
        &["accessible", "accessibility"],
    ),
    ("Giving and Receiving Feedback", &["feedback"]),
    ("Python for Analysts", &["python"]),
    ("Keeping a Project Risk Register", &["risk"]),
];
const SIGNUP_WORDS: &[&str] = &[
    "signup",
    "sign",
    "registered",
    "registration",
    "attendee",
    "attendance",
    "headcount",
    "enrolled",
    "participant",
    "people",
    "many",
    "count",
    "number",
    "seat",
    "register",
    "enrolment",
    "enrollment",
    "enrol",
    "enroll",
    "booked",
    "booking",
    "attending",
    "spot",
    "place",
    "full",
    "capacity",
    "turnout",
    "interest",
    "confirmed",
    "coming",
    "size",
];
const WEEKDAYS: [&str; 5] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];

const REGIONS: &[&str] = &[
    "North",
    "South",
    "East",
    "West",
    "Central",
    "Coastal",
    "Highlands",
    "Metro",
    "Riverside",
    "Lakes",
];
/// Column, how the manager names it, value range.
const METRICS: &[(&str, &str, (u32, u32))] = &[
    (
        "revenue_keur",
        "revenue (in thousands of euros)",
        (300, 2_500),
    ),
    ("orders", "number of orders", (800, 6_000)),
    ("new_customers", "number of new customers", (100, 900)),
    ("returns", "number of returned orders", (100, 600)),
];
const SERVICES: &[&str] = &[
    "Payments",
    "Checkout",
    "Search",
    "Notifications",
    "Reporting",
    "Identity",
    "Billing",
];
const SEVERITIES: [&str; 3] = ["critical", "major", "minor"];
const PROJECTS: &[&str] = &[
    "Heron",
    "Lantern",
    "Quarry",
    "Juniper",
    "Meridian",
    "Saffron",
    "Tidewater",
    "Bramble",
    "Kestrel",
    "Orchard",
];

/// Minutes since midnight of `HH:MM`.
pub(crate) fn to_min(hm: &str) -> Option<u32> {
    tbsim_scenario::date::Clock::parse(hm).map(tbsim_scenario::date::Clock::minutes)
}

/// `HH:MM` of minutes since midnight.
pub(crate) fn hm(min: u32) -> String {
    tbsim_scenario::date::Clock(min).to_string()
}

/// The minute of the day the family's work may start, from the suite's release.
pub(crate) fn release_minute(ctx: &Ctx<'_>, family: &str) -> Result<u32, String> {
    let at = match &ctx.release {
        Release::Start => ctx.start,
        Release::At(ts) => ts.split_once('T').map_or(ts.as_str(), |(_, t)| t),
        _ => {
            return Err(format!(
                "{family} schedules its own messages at fixed times, so it needs a release of Start or At(..)"
            ));
        }
    };
    to_min(at).ok_or_else(|| format!("bad time `{at}`"))
}

/// `YYYY-MM-DD` shifted by `days`.
pub(crate) fn shift_date(date: &str, days: i64) -> Result<String, String> {
    tbsim_scenario::date::Date::parse(date)
        .ok_or_else(|| format!("bad date `{date}`"))?
        .add_days(days)
        .map(|d| d.to_string())
        .ok_or_else(|| format!("{date} shifted by {days} days is out of range"))
}

fn first_name(full: &str) -> &str {
    full.split_whitespace().next().unwrap_or(full)
}

/// A figure that cannot be mistaken for a year in a message (`Q3 2025`).
fn figure(rng: &mut StreamRng, (lo, hi): (u32, u32)) -> u32 {
    loop {
        let v = rng.random_range(lo..=hi);
        if !(1_900..=2_100).contains(&v) {
            return v;
        }
    }
}

/// The variants: request kind x pace.
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for (kind, kname) in KINDS {
        for (pace, pname) in PACES {
            v.push((
                format!("urgent_interrupt/{kname}/{pname}"),
                Params {
                    kind: Some(kind),
                    pace: Some(pace),
                    ..Params::default()
                },
            ));
        }
    }
    v
}

/// What one request kind contributes to the urgent task.
struct Request {
    message: String,
    checkpoints: Vec<CheckpointSpec>,
    plan: Vec<PlanStep>,
    hints: [String; 2],
    files: Vec<FileSpec>,
    clues: Vec<(String, Clue)>,
    people_to_ask: usize,
}

/// Shared inputs of the request builders.
struct Req<'a> {
    ctx: &'a Ctx<'a>,
    task: &'a str,
    manager: &'a tbsim_scenario::Person,
    other: &'a tbsim_scenario::Person,
    at: &'a str,
    due: &'a str,
}

fn dm_reply(to: &str, text: String) -> PlanStep {
    step("send_message", json!({"to": to, "text": text}))
}

fn lookup(r: &Req<'_>, rng: &mut StreamRng) -> Result<Request, String> {
    let (y, m) = year_month(r.ctx.date)?;
    let now_q = y * 4 + (m as i32 - 1) / 3;
    let quarters: Vec<(i32, i32)> = (1..=3)
        .rev()
        .map(|back| {
            let q = now_q - back;
            (q.div_euclid(4), q.rem_euclid(4) + 1)
        })
        .collect();
    let n_regions = rng.random_range(5..=6);
    let regions: Vec<&str> = pick_distinct(rng, REGIONS.len(), n_regions)
        .into_iter()
        .map(|i| REGIONS[i])
        .collect();
    // values[quarter][region][metric]: a base per region and measure, drifting a
    // little from quarter to quarter.
    let mut bases = Vec::with_capacity(regions.len());
    for _ in &regions {
        let row: Vec<u32> = METRICS.iter().map(|m| figure(rng, m.2)).collect();
        bases.push(row);
    }
    let mut values = Vec::with_capacity(quarters.len());
    for _ in &quarters {
        let mut table = Vec::with_capacity(bases.len());
        for row in &bases {
            let mut drifted = Vec::with_capacity(row.len());
            for base in row {
                let v = (f64::from(*base) * rng.random_range(0.85..1.2)).round() as u32;
                drifted.push(if (1_900..=2_100).contains(&v) {
                    v + 250
                } else {
                    v
                });
            }
            table.push(drifted);
        }
        values.push(table);
    }
    // Two of the three quarters, the region and the measure: the answer is the sum
    // of two cells of two files, a figure no text states.
    // A total that reads like a year would be in every reply naming the quarters:
    // drawn again (a few tries at most: sums spread over thousands).
    let sum = |a: usize, b: usize, r: usize, m: usize| values[a][r][m] + values[b][r][m];
    let mut drawn = None;
    for _ in 0..64 {
        let pair = pick_distinct(rng, quarters.len(), 2);
        let (qa, qb) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
        let (ri, mi) = (
            rng.random_range(0..regions.len()),
            rng.random_range(0..METRICS.len()),
        );
        if !(1_900..=2_100).contains(&sum(qa, qb, ri, mi)) {
            drawn = Some((qa, qb, ri, mi));
            break;
        }
    }
    let (qa, qb, ri, mi) = drawn.ok_or("lookup: every total drawn reads like a year")?;
    let answer = sum(qa, qb, ri, mi);
    // Forbidden: every cell of the region and measure, and every other sum of two
    // quarters of one region and measure (another region, measure or pair).
    let mut wrong: BTreeSet<u32> = BTreeSet::new();
    wrong.extend(values.iter().map(|q| q[ri][mi]));
    for a in 0..quarters.len() {
        for b in a + 1..quarters.len() {
            for r in 0..regions.len() {
                for m in 0..METRICS.len() {
                    if (a, b) == (qa, qb) || r == ri || m == mi {
                        wrong.insert(sum(a, b, r, m));
                    }
                }
            }
        }
    }
    wrong.remove(&answer);
    // The years of the two quarters are in any reply that names them.
    for (y, _) in [quarters[qa], quarters[qb]] {
        wrong.remove(&u32::try_from(y).unwrap_or(0));
    }

    let folder = r.ctx.folder("drive/reports/regional");
    let mut files = vec![FileSpec {
        path: format!("{folder}/README.md"),
        content: Content::Text(REPORTS_README.to_owned()),
    }];
    let mut targets = Vec::new();
    for (k, (qy, qq)) in quarters.iter().enumerate() {
        let path = format!("{folder}/regional_sales_{qy}_q{qq}.csv");
        let mut csv = String::from("region,revenue_keur,orders,new_customers,returns\n");
        for (ri2, region) in regions.iter().enumerate() {
            let row = &values[k][ri2];
            let _ = writeln!(csv, "{region},{},{},{},{}", row[0], row[1], row[2], row[3]);
        }
        if k == qa || k == qb {
            targets.push(path.clone());
        }
        files.push(FileSpec {
            path,
            content: Content::Text(csv),
        });
    }
    let ((ya, qqa), (yb, qqb)) = (quarters[qa], quarters[qb]);
    let (col, spoken, _) = METRICS[mi];
    let region = regions[ri];
    let message = format!(
        "{}, sorry to pull you off what you're doing. I'm going into board prep and need the {spoken} for the {region} region over Q{qqa} {ya} and Q{qqb} {yb} combined. The quarterly regional sales reports are in `{folder}/`. Please reply here with just that total, by {} at the latest.",
        first_name(super::company::INTERN_NAME),
        r.due
    );
    let mut plan = vec![
        step("read_messages", json!({"with": r.manager.key})),
        step("list_folder", json!({"path": folder})),
    ];
    for t in &targets {
        plan.push(step("read_file", json!({"path": t})));
    }
    plan.push(dm_reply(
        &r.manager.key,
        format!("{region}, Q{qqa} {ya} and Q{qqb} {yb} combined, {col}: {answer}"),
    ));
    Ok(Request {
        message,
        checkpoints: vec![
            CheckpointSpec {
                key: "report_consulted".into(),
                description: "Opened the reports of both quarters the manager asked about".into(),
                weight: 1,
                check: Check::All(targets.into_iter().map(Check::Consulted).collect()),
                feedback: "The reports of the requested quarters were not both opened. The manager's message names the quarters and the folder; the reports are split into one file per quarter.".into(),
            },
            CheckpointSpec {
                key: "figure_sent".into(),
                description: "Replied to the manager with the requested total over the two quarters, and no other candidate figure, before the deadline".into(),
                weight: 2,
                check: Check::MessageSent {
                    to: r.manager.key.clone(),
                    contains: vec![answer.to_string()],
                    absent: wrong.iter().map(u32::to_string).collect(),
                    after: Some(r.at.to_owned()),
                },
                feedback: "The manager did not get the right total in time. Read the request again for the region, the two quarters and the measure, take the cell at that row and column of each quarter's report, add the two, and reply with the total alone; other figures and sums from the tables count as a wrong answer.".into(),
            },
        ],
        plan,
        hints: [
            format!("The reports in `{folder}/` are split by quarter; the README explains the columns."),
            "Open the files of the two quarters the manager named, find the region's row and the requested column in each, and reply with their sum only.".into(),
        ],
        files,
        clues: Vec::new(),
        people_to_ask: 0,
    })
}

fn brief(r: &Req<'_>, rng: &mut StreamRng) -> Result<Request, String> {
    let n_services = rng.random_range(3..=4);
    let services: Vec<&str> = pick_distinct(rng, SERVICES.len(), n_services)
        .into_iter()
        .map(|i| SERVICES[i])
        .collect();
    let target = services[0];
    let sev = |rng: &mut StreamRng| SEVERITIES[[0, 1, 1, 2, 2, 2][rng.random_range(0..6)]];
    // (service, severity, status)
    let mut rows: Vec<(&str, &str, &str)> = Vec::new();
    // The target service: some unresolved (at least one "monitoring", which still
    // counts), some resolved (so adding up every row is wrong). Two to four
    // unresolved incidents of each severity, so every answer is a sum of two cells
    // or more: a figure no text shows (small counts were: a probe picked them by
    // magnitude whenever the log showed the same small number).
    let per_severity = [
        rng.random_range(2..=3u32),
        rng.random_range(2..=4u32),
        rng.random_range(2..=4u32),
    ];
    let mut unresolved: Vec<&str> = SEVERITIES
        .iter()
        .zip(per_severity)
        .flat_map(|(v, n)| std::iter::repeat_n(*v, n as usize))
        .collect();
    let order = pick_distinct(rng, unresolved.len(), unresolved.len());
    unresolved = order.into_iter().map(|i| unresolved[i]).collect();
    for (i, v) in unresolved.into_iter().enumerate() {
        let status = if i == 0 {
            "monitoring"
        } else if rng.random_bool(0.7) {
            "open"
        } else {
            "monitoring"
        };
        rows.push((target, v, status));
    }
    for _ in 0..rng.random_range(2..=4) {
        rows.push((target, sev(rng), "resolved"));
    }
    for (k, s) in services.iter().enumerate().skip(1) {
        for j in 0..rng.random_range(2..=5) {
            // Another service always has an open incident, so ignoring the service fails.
            let status = if k == 1 && j == 0 {
                "open"
            } else {
                ["open", "monitoring", "resolved", "resolved"][rng.random_range(0..4)]
            };
            rows.push((s, sev(rng), status));
        }
    }
    let mut ids = BTreeSet::new();
    let mut dated: Vec<(String, u32, &str, &str, &str, u32)> = Vec::new();
    for (s, v, st) in rows {
        let back = rng.random_range(0..=13);
        let id = loop {
            let id = rng.random_range(1_000..10_000u32);
            if ids.insert(id) {
                break id;
            }
        };
        let minutes = rng.random_range(5..=480u32);
        dated.push((shift_date(r.ctx.date, -back)?, id, s, v, st, minutes));
    }
    dated.sort();
    let mut csv = String::from("incident_id,opened,service,severity,status,minutes_down\n");
    for (d, id, s, v, st, m) in &dated {
        let _ = writeln!(csv, "INC-{id},{d},{s},{v},{st},{m}");
    }
    let totals: Vec<u32> = SEVERITIES
        .iter()
        .map(|v| {
            dated
                .iter()
                .filter(|(_, _, s, sv, st, _)| *s == target && sv == v && *st != "resolved")
                .map(|row| row.5)
                .sum()
        })
        .collect();
    let folder = r.ctx.folder("drive/ops/incidents");
    let log = format!("{folder}/incident_log.csv");
    let out = format!("workspace/incident_snapshot{}.json", r.ctx.suffix());
    let answer = json!({"critical": totals[0], "major": totals[1], "minor": totals[2]});
    let message = format!(
        "{}, I need a quick snapshot for the ops review: the minutes of downtime logged so far by the {target} incidents that are not resolved yet (status open or monitoring), added up by severity. The incident log is in `{folder}/`. Save the totals in `{out}` as {{\"critical\": minutes, \"major\": minutes, \"minor\": minutes}} by {}, please.",
        first_name(super::company::INTERN_NAME),
        r.due
    );
    Ok(Request {
        message,
        checkpoints: vec![
            CheckpointSpec {
                key: "log_consulted".into(),
                description: "Opened the incident log".into(),
                weight: 1,
                check: Check::Consulted(log.clone()),
                feedback: "The incident log was not opened. The manager's message says which folder it is in.".into(),
            },
            CheckpointSpec {
                key: "snapshot_correct".into(),
                description: format!("`{out}` holds the downtime minutes of the requested service's unresolved incidents, added up by severity, before the deadline"),
                weight: 2,
                check: Check::All(
                    SEVERITIES
                        .iter()
                        .zip(&totals)
                        .map(|(s, c)| Check::JsonNumber {
                            path: out.clone(),
                            pointer: format!("/{s}"),
                            expected: f64::from(*c),
                            tolerance: 0.0,
                        })
                        .collect(),
                ),
                feedback: format!("The snapshot in `{out}` is missing, late or wrong. Take only the requested service's incidents, only those not resolved (both `open` and `monitoring` count), add up their `minutes_down` separately for each severity, and write the three totals as JSON."),
            },
        ],
        plan: vec![
            step("read_messages", json!({"with": r.manager.key})),
            step("list_folder", json!({"path": folder})),
            step("read_file", json!({"path": log})),
            step("write_file", json!({"path": out, "content": answer.to_string()})),
        ],
        hints: [
            "The incident log lists every service and every status; the request is about one service only.".into(),
            "Filter the rows to the named service, drop the `resolved` ones, and add up `minutes_down` of the rest per severity (critical, major, minor).".into(),
        ],
        files: vec![FileSpec {
            path: log,
            content: Content::Text(csv),
        }],
        clues: Vec::new(),
        people_to_ask: 0,
    })
}

fn forward(r: &Req<'_>, rng: &mut StreamRng) -> Result<Request, String> {
    // A register long enough that any fixed row is the answer at most one time in
    // 21 (the 200-seed scan found "send the first row" right in 8% with 8-10 rows).
    let n = rng.random_range(20..=26);
    let combos = corpus::SUPPLIER_PREFIXES.len() * corpus::SUPPLIER_SUFFIXES.len();
    let vendors: Vec<String> = pick_distinct(rng, combos, n)
        .into_iter()
        .map(|i| {
            format!(
                "{} {}",
                corpus::SUPPLIER_PREFIXES[i / corpus::SUPPLIER_SUFFIXES.len()],
                corpus::SUPPLIER_SUFFIXES[i % corpus::SUPPLIER_SUFFIXES.len()]
            )
        })
        .collect();
    let (y, _) = year_month(r.ctx.date)?;
    let mut refs = BTreeSet::new();
    let mut new_ref = |rng: &mut StreamRng| loop {
        let letters: String = (0..2)
            .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
            .collect();
        let re = format!("CTR-{}-{letters}", rng.random_range(1_000..10_000u32));
        if refs.insert(re.clone()) {
            return re;
        }
    };
    let areas = [
        "Engineering",
        "Sales",
        "Marketing",
        "Product",
        "Finance",
        "Human Resources",
    ];
    // (vendor, ref, status, start year, area)
    let mut rows: Vec<(String, String, &str, i32, &str)> = Vec::new();
    for (i, v) in vendors.iter().enumerate() {
        let area = areas[rng.random_range(0..areas.len())];
        let start = y - rng.random_range(0..=2);
        // The requested supplier (index 0) and one other were renewed: an expired
        // row precedes the active one.
        if i <= 1 {
            rows.push((v.clone(), new_ref(rng), "expired", start - 2, area));
        }
        rows.push((v.clone(), new_ref(rng), "active", start, area));
    }
    let vendor = vendors[0].clone();
    let active = rows
        .iter()
        .find(|row| row.0 == vendor && row.2 == "active")
        .map(|row| row.1.clone())
        .ok_or("no active contract")?;
    let wrong: Vec<String> = rows
        .iter()
        .map(|row| row.1.clone())
        .filter(|re| *re != active)
        .collect();
    // Shuffle rows by a drawn key so the requested supplier is not always first.
    let mut keyed: Vec<(u32, usize)> = (0..rows.len())
        .map(|i| (rng.random_range(0..u32::MAX), i))
        .collect();
    keyed.sort();
    // Never the first row, the row a script copies without reading.
    if rows[keyed[0].1].1 == active {
        let j = rng.random_range(1..keyed.len());
        keyed.swap(0, j);
    }
    let mut csv =
        String::from("supplier,contract_ref,status,start_year,end_year,owner_department\n");
    for (_, i) in keyed {
        let (v, re, st, start, area) = &rows[i];
        let end = start + 2;
        let _ = writeln!(csv, "{v},{re},{st},{start},{end},{area}");
    }
    let folder = r.ctx.folder("drive/legal/contracts");
    let register = format!("{folder}/contract_register.csv");
    let colleague = r.other;
    let message = format!(
        "{}, quick one: {} ({}) is on a call with {vendor} and needs our current contract reference for them. The contract register is in `{folder}/`. Please send it to {} directly by {}; no need to copy me.",
        first_name(super::company::INTERN_NAME),
        colleague.name,
        colleague.department,
        first_name(&colleague.name),
        r.due
    );
    Ok(Request {
        message,
        checkpoints: vec![
            CheckpointSpec {
                key: "register_consulted".into(),
                description: "Opened the contract register".into(),
                weight: 1,
                check: Check::Consulted(register.clone()),
                feedback: "The contract register was not opened. The manager's message says which folder it is in.".into(),
            },
            CheckpointSpec {
                key: "reference_forwarded".into(),
                description: "Sent the colleague the supplier's active contract reference, and no other reference, before the deadline".into(),
                weight: 2,
                check: Check::MessageSent {
                    to: colleague.key.clone(),
                    contains: vec![active.clone()],
                    absent: wrong,
                    after: Some(r.at.to_owned()),
                },
                feedback: "The colleague did not get the right contract reference in time. Message the colleague named in the request (not the manager) with the reference of the supplier's active contract; a renewed supplier also has an expired row, and sending other references counts as a wrong answer.".into(),
            },
        ],
        plan: vec![
            step("read_messages", json!({"with": r.manager.key})),
            step("list_folder", json!({"path": folder})),
            step("read_file", json!({"path": register})),
            dm_reply(
                &colleague.key,
                format!(
                    "Hi {}, {} asked me to send you our current contract reference for {vendor}: {active}",
                    first_name(&colleague.name),
                    first_name(&r.manager.name)
                ),
            ),
        ],
        hints: [
            format!("The contract register is in `{folder}/`; a note there explains renewed contracts."),
            "Send the reference straight to the colleague named in the request, and only the one whose status is `active`.".into(),
        ],
        files: vec![
            FileSpec {
                path: format!("{folder}/README.md"),
                content: Content::Text(corpus::fill(REGISTER_NOTES, &[("company", corpus::COMPANY)])),
            },
            FileSpec {
                path: register,
                content: Content::Text(csv),
            },
        ],
        clues: Vec::new(),
        people_to_ask: 0,
    })
}

fn relay(r: &Req<'_>, rng: &mut StreamRng) -> Result<Request, String> {
    let project = PROJECTS[rng.random_range(0..PROJECTS.len())];
    let requested = rng.random_range(40..=300u32) * 500;
    let approved = requested - rng.random_range(2..=(requested / 500 / 4).max(3)) * 500;
    // Spent to date (to the 10 EUR) and last year's budget (to the 500), both drawn
    // around the approved amount, so no rank among the figures marks the two the
    // answer takes.
    let spent = rng.random_range(approved / 600..=approved * 5 / 60) * 10;
    let last_year = rng
        .random_range(approved / 1000..=approved * 3 / 2000)
        .max(1)
        * 500;
    let remaining = approved - spent;
    let holder = r.other;
    let clue_key = format!("clue/{}/approved-budget", r.ctx.id);
    let mut clauses = vec![
        format!("the team asked for {} EUR", thousands(requested)),
        format!(
            "the investment committee approved {} EUR last week",
            thousands(approved)
        ),
        format!("{} EUR has been spent so far", thousands(spent)),
        format!("last year it ran on {} EUR", thousands(last_year)),
    ];
    let order = pick_distinct(rng, clauses.len(), clauses.len());
    clauses = order.into_iter().map(|i| clauses[i].clone()).collect();
    let clue = Clue {
        key: clue_key.clone(),
        task: Some(r.task.to_owned()),
        trigger: vec![
            vec![project.to_owned()],
            [
                "budget",
                "approved",
                "amount",
                "funding",
                "figure",
                "cost",
                "money",
                "number",
                "approval",
                "sum",
                "total",
                "eur",
                "euro",
                "final",
                "committee",
                "granted",
                "allocated",
                "allocation",
                "how much",
                "value",
                "spent",
                "spend",
                "left",
                "remaining",
                "unspent",
                "available",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        ],
        after: vec![Condition::Released(r.task.to_owned())],
        response: format!("Project {project}: {}.", clauses.join("; ")),
    };
    let message = format!(
        "{}, I need a number before my next call: how much of Project {project}'s approved budget is still unspent. {} in Finance keeps the project's figures. Please ask {} and reply to me here with the amount left by {}.",
        first_name(super::company::INTERN_NAME),
        holder.name,
        first_name(&holder.name),
        r.due
    );
    // Forbidden: the figures the holder states that are not the working (the
    // request, last year's) and every difference of two of them but the answer,
    // so a message of candidates fails.
    let figures = [requested, approved, spent, last_year];
    let mut absent: Vec<String> = vec![requested.to_string(), last_year.to_string()];
    for (i, a) in figures.iter().enumerate() {
        for (j, b) in figures.iter().enumerate() {
            if i != j && a > b && !absent.contains(&(a - b).to_string()) {
                absent.push((a - b).to_string());
            }
        }
    }
    absent.retain(|x| {
        ![approved, spent, remaining]
            .iter()
            .any(|v| v.to_string() == *x)
    });
    let mut wait = step("read_messages", json!({"with": holder.key}));
    wait.gate = Gate::ReplyFrom(holder.key.clone());
    Ok(Request {
        message,
        checkpoints: vec![
            CheckpointSpec {
                key: "holder_asked".into(),
                description: "Asked the budget holder about the project's budget".into(),
                weight: 1,
                check: Check::Disclosed(vec![clue_key]),
                feedback: "The budget holder was not asked. The manager's message names the person in Finance who has the figures; ask them about the project by name.".into(),
            },
            CheckpointSpec {
                key: "figure_sent".into(),
                description: "Replied to the manager with the approved budget still unspent (approved minus spent) before the deadline".into(),
                weight: 2,
                check: Check::MessageSent {
                    to: r.manager.key.clone(),
                    contains: vec![remaining.to_string()],
                    absent,
                    after: Some(r.at.to_owned()),
                },
                feedback: "The manager did not get the unspent part of the approved budget in time. Ask the budget holder, then reply to the manager with the amount the committee approved minus what has been spent (not the amount the team asked for, nor last year's budget).".into(),
            },
        ],
        plan: vec![
            step("read_messages", json!({"with": r.manager.key})),
            dm_reply(
                &holder.key,
                format!(
                    "Hi {}, {} needs to know how much of Project {project}'s approved budget is still unspent. What amount was approved, and how much has been spent so far?",
                    first_name(&holder.name),
                    first_name(&r.manager.name)
                ),
            ),
            wait,
            dm_reply(
                &r.manager.key,
                format!(
                    "Project {project} has {remaining} EUR of its approved budget left ({approved} EUR approved, {spent} EUR spent so far)."
                ),
            ),
        ],
        hints: [
            "Only the Finance colleague named in the message knows the figures; ask them about the project by its name.".into(),
            "The holder gives several amounts for the project; what is left is the approved amount minus what has been spent, sent back to the manager.".into(),
        ],
        files: Vec::new(),
        clues: vec![(holder.key.clone(), clue)],
        people_to_ask: 1,
    })
}

/// `48500` as `48,500`.
fn thousands(v: u32) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn year_month(date: &str) -> Result<(i32, u32), String> {
    tbsim_scenario::date::Date::parse(date)
        .map(|d| (d.year(), d.month()))
        .ok_or_else(|| format!("bad date `{date}`"))
}

/// A host's reply about their sign-ups. The confirmed count stands among other
/// counts drawn from its own range (the waiting list; or everyone who registered,
/// some of whom cancelled), in varied order and wording, with negation words in
/// either kind of clause: neither the first, the largest nor the un-negated number
/// is the answer by rule (issue 37: the first number of the reply was), only what
/// the sentence says it counts.
fn signup_reply(
    rng: &mut tbsim_core::rng::StreamRng,
    title: &str,
    signups: u32,
    top: u32,
) -> String {
    let waiting = loop {
        let v = rng.random_range(5..=top);
        if v != signups {
            break v;
        }
    };
    // Four ways of stating the count (it first in two, last in two; its clause the
    // shorter in two; a negation word in the other clause in two), and two where it
    // is registrations less cancellations, said by neither figure.
    match rng.random_range(0..8u32) {
        0 => format!(
            "For {title} I have {signups} confirmed sign-ups so far, plus {waiting} on the waiting list."
        ),
        1 => format!(
            "{waiting} people are on the waiting list for {title}, and {signups} are confirmed, no changes since Monday."
        ),
        2 => format!(
            "{signups} are confirmed so far, and the waiting list for {title} has grown to {waiting}."
        ),
        3 => format!(
            "Nobody new on the waiting list for {title}, still {waiting} there, and {signups} sign-ups are confirmed."
        ),
        _ => {
            // Registered minus cancelled: the count is said by neither figure.
            let cancelled = rng.random_range(1..=8u32);
            let total = signups + cancelled;
            if rng.random_bool(0.5) {
                format!(
                    "{total} people registered for {title}, but {cancelled} of them have cancelled since, so they no longer count; nobody is waiting for a seat."
                )
            } else {
                format!(
                    "For {title}, {cancelled} cancellations came in this week, out of {total} registrations; the rest are confirmed and there is no waiting list."
                )
            }
        }
    }
}

/// Generates one instance: the urgent task (first) and the routine it interrupts.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut draw = ctx.rng("params");
    let kind = p
        .kind
        .unwrap_or_else(|| KINDS[draw.random_range(0..KINDS.len())].0);
    let pace = p
        .pace
        .unwrap_or_else(|| PACES[draw.random_range(0..PACES.len())].0);
    let n_ws = p.workshops.unwrap_or_else(|| draw.random_range(2..=3));
    if !(2..=3).contains(&n_ws) || p.deadline_min.is_some_and(|d| !(20..=180).contains(&d)) {
        return Err(format!(
            "urgent_interrupt parameters out of range: workshops {n_ws} (2-3), deadline_min {:?} (20-180)",
            p.deadline_min
        ));
    }
    let kname = KINDS.iter().find(|k| k.0 == kind).map_or("", |k| k.1);

    // People: the manager asks; `other` is the colleague to forward to or to ask;
    // the hosts run the workshops. All distinct.
    let manager = ctx
        .company
        .people
        .iter()
        .find(|p| p.key == ctx.company.mentor)
        .ok_or("the company has no mentor")?;
    let mut who = ctx.rng("people");
    let other_pool: Vec<&tbsim_scenario::Person> = match kind {
        Kind::Relay => ctx.company.department("Finance"),
        _ => ["Sales", "Product", "Engineering"]
            .iter()
            .flat_map(|d| ctx.company.staff(d))
            .collect(),
    };
    let other_pool: Vec<_> = other_pool
        .into_iter()
        .filter(|p| p.key != manager.key)
        .collect();
    if other_pool.is_empty() {
        return Err("urgent_interrupt needs Finance and Sales staff (raise company_size)".into());
    }
    let other = other_pool[who.random_range(0..other_pool.len())];
    let hr = ctx
        .company
        .managers("Human Resources")
        .first()
        .copied()
        .ok_or("the company has no HR manager")?;
    let host_pool: Vec<&tbsim_scenario::Person> = ctx
        .company
        .non_executives()
        .into_iter()
        .filter(|p| p.key != other.key && p.key != hr.key && p.key != manager.key)
        .collect();
    let hosts: Vec<&tbsim_scenario::Person> =
        pick_distinct(&mut who, host_pool.len(), usize::from(n_ws))
            .into_iter()
            .map(|i| host_pool[i])
            .collect();

    // Timing: deadline length, interrupt time, routine release a few minutes before.
    let mut timing = ctx.rng("timing");
    let tool_min = match kind {
        // Lookup reads two reports.
        Kind::Lookup => 9,
        Kind::Forward => 7,
        Kind::Brief => 3,
        Kind::Relay => 11 + other.reply_minutes.unwrap_or((2, 8)).1,
    };
    let slack = match pace {
        Pace::Tight => timing.random_range(20..=25),
        Pace::Relaxed => timing.random_range(45..=50),
    };
    let minutes = p
        .deadline_min
        .unwrap_or_else(|| ((tool_min + slack).div_ceil(5) * 5).max(30));
    if minutes < tool_min + 10 {
        return Err(format!(
            "deadline_min {minutes} is too tight for a {kname} request (it needs {tool_min} minutes of tool time plus slack)"
        ));
    }
    // The label follows the actual slack (tight below 35 minutes), so a pinned
    // `deadline_min` cannot mislabel a variant.
    let tight = minutes - tool_min < 35;
    if p.pace.is_some_and(|x| (x == Pace::Tight) != tight) {
        return Err(format!(
            "deadline_min {minutes} leaves {} minutes of slack, which contradicts `pace` (tight means under 35)",
            minutes - tool_min
        ));
    }
    let pname = if tight { "tight" } else { "relaxed" };
    let gap = timing.random_range(6..=12);
    let base = release_minute(ctx, "urgent_interrupt")?;
    let day_deadline = to_min(ctx.deadline).ok_or("bad deadline")?;
    let latest = day_deadline.saturating_sub(minutes + 60);
    let at = match &p.at {
        Some(a) => {
            let t = to_min(a).ok_or_else(|| format!("`at` must be HH:MM, found `{a}`"))?;
            if t < base + gap || t > latest {
                return Err(format!(
                    "`at` {a} must fall between {} and {} (after the release, with an hour left before the deadline)",
                    hm(base + gap),
                    hm(latest)
                ));
            }
            t
        }
        None => {
            let (lo, hi) = (base + 90, latest.saturating_sub(15));
            if lo > hi {
                return Err(format!(
                    "the day is too short for an urgent interrupt: work starts at {} and the deadline is {}",
                    hm(base),
                    ctx.deadline
                ));
            }
            timing.random_range(lo..=hi)
        }
    };
    let routine_at = at - gap;
    let at_ts = ctx.at(&hm(at));
    let due = hm(at + minutes);
    let task = ctx.task_key();
    let routine_key = format!("task/{}-routine", ctx.id);

    let req = Req {
        ctx,
        task: &task,
        manager,
        other,
        at: &at_ts,
        due: &due,
    };
    let mut rng = ctx.rng("request");
    let request = match kind {
        Kind::Lookup => lookup(&req, &mut rng)?,
        Kind::Brief => brief(&req, &mut rng)?,
        Kind::Forward => forward(&req, &mut rng)?,
        Kind::Relay => relay(&req, &mut rng)?,
    };
    let urgent = ctx
        .task_spec::<super::meta_task::UrgentInterrupt>(format!("urgent_interrupt/{kname}/{pname}"))
        .key(task.clone())
        .title(format!("Urgent request from {}", manager.name))
        .objective(format!(
            "{} has just sent you an urgent request; it is in your messages from them. Put your other work on hold, get this done by {due}, then go back to what you were doing.",
            manager.name
        ))
        .assigned_by(manager.key.clone())
        .release(Release::At(at_ts.clone()))
        .deadline(ctx.at(&due))
        .priority(Priority::Urgent)
        .checkpoints(request.checkpoints)
        .hints(vec![
            format!(
                "Read {}'s latest message: the whole request and its deadline are there.",
                manager.name
            ),
            request.hints[0].clone(),
            request.hints[1].clone(),
        ])
        .plan(request.plan, request.people_to_ask)
        .build();

    // The routine task.
    let mut rw = ctx.rng("routine");
    let picks = pick_distinct(&mut rw, WORKSHOPS.len(), usize::from(n_ws));
    let days = pick_distinct(&mut rw, WEEKDAYS.len(), usize::from(n_ws));
    let schedule_path = format!(
        "{}/workshops_next_week.md",
        ctx.folder("drive/learning/workshops")
    );
    let out = format!("workspace/workshop_signups{}.json", ctx.suffix());
    let mut rows = Vec::new();
    let mut expected = Vec::new();
    let mut answer = Vec::new();
    let mut clues = request.clues;
    let mut clue_keys = Vec::new();
    let mut asks = Vec::new();
    let mut reads = Vec::new();
    let mut forms = ctx.rng("urgent/signup-replies");
    for (k, (&wi, host)) in picks.iter().zip(&hosts).enumerate() {
        let (title, words) = WORKSHOPS[wi];
        let room = &ctx.rooms[rw.random_range(0..ctx.rooms.len())];
        let signups = rw.random_range(5..=room.capacity.max(6) + 6);
        let top = room.capacity.max(6) + 6;
        rows.push((
            days[k],
            format!(
                "| {title} | {} | {} | {} |",
                WEEKDAYS[days[k]], room.name, host.name
            ),
        ));
        let key = format!("clue/{}/signups-{}", ctx.id, slug(&host.name));
        clues.push((
            host.key.clone(),
            Clue {
                key: key.clone(),
                task: Some(routine_key.clone()),
                trigger: vec![
                    words.iter().map(|w| (*w).to_owned()).collect(),
                    SIGNUP_WORDS.iter().map(|w| (*w).to_owned()).collect(),
                ],
                after: vec![Condition::Released(routine_key.clone())],
                response: signup_reply(&mut forms, title, signups, top),
            },
        ));
        clue_keys.push(key);
        let mut rec = Record::default();
        rec.text.insert("title".into(), title.to_owned());
        rec.numbers.insert("signups".into(), f64::from(signups));
        expected.push(rec);
        answer.push(json!({"title": title, "signups": signups}));
        asks.push(dm_reply(
            &host.key,
            format!(
                "Hi {}, L&D asked me to collect next week's workshop sign-ups. How many people have signed up for {title}?",
                first_name(&host.name)
            ),
        ));
        let mut read = step("read_messages", json!({"with": host.key}));
        read.gate = Gate::ReplyFrom(host.key.clone());
        reads.push(read);
    }
    rows.sort();
    let table: Vec<String> = rows.into_iter().map(|(_, r)| r).collect();
    let mut plan = vec![step("read_file", json!({"path": schedule_path}))];
    plan.extend(asks);
    plan.extend(reads);
    plan.push(step(
        "write_file",
        json!({"path": out, "content": serde_json::to_string_pretty(&json!({"workshops": answer})).unwrap_or_default()}),
    ));
    let routine = ctx
        .task_spec::<super::meta_task::UrgentInterrupt>(format!("urgent_interrupt/{kname}/{pname}"))
        .key(routine_key.clone())
        .title("Collect next week's workshop sign-ups")
        .objective(format!(
            "{} (Learning & Development) needs next week's workshop sign-up numbers to book rooms. The schedule is at `{schedule_path}`; each workshop's host keeps its sign-up list. Ask the hosts and save `{out}` as {{\"workshops\": [{{\"title\": ..., \"signups\": ...}}]}}, one entry per workshop, counting confirmed sign-ups only.",
            hr.name
        ))
        .assigned_by(hr.key.clone())
        .release(Release::At(ctx.at(&hm(routine_at))))
        .checkpoints(vec![
            CheckpointSpec {
                key: "hosts_asked".into(),
                description: "Every workshop host gave you their sign-up count".into(),
                weight: 1,
                check: Check::Disclosed(clue_keys),
                feedback: "Not every workshop host was asked. The schedule names each workshop's host; message each one about their workshop's sign-ups.".into(),
            },
            CheckpointSpec {
                key: "signups_recorded".into(),
                description: format!("`{out}` lists each workshop with its confirmed sign-ups"),
                weight: 2,
                check: Check::JsonRecords {
                    path: out.clone(),
                    pointer: "/workshops".into(),
                    expected,
                    tolerance: 0.0,
                },
                feedback: format!("`{out}` is missing or its numbers are wrong. Use the workshop titles exactly as in the schedule and the confirmed sign-ups each host gave (people on a waiting list do not count). If an urgent request interrupted you, come back to this task afterwards."),
            },
        ])
        .hints(vec![
            format!("The schedule at `{schedule_path}` names each workshop's host."),
            "Message each host about their own workshop; only they know how many signed up.".into(),
            "Record confirmed sign-ups only, not the waiting list, with the titles exactly as in the schedule.".into(),
        ])
        .plan(plan, hosts.len())
        .build();

    let mut files = request.files;
    files.push(FileSpec {
        path: schedule_path,
        content: Content::Text(corpus::fill(
            SCHEDULE,
            &[("company", corpus::COMPANY), ("rows", &table.join("\n"))],
        )),
    });
    Ok(Parts {
        tasks: vec![urgent, routine],
        files,
        meetings: Vec::new(),
        clues,
        events: vec![TimedEvent {
            at: at_ts,
            change: WorldChange::Message {
                from: manager.key.clone(),
                text: request.message,
            },
        }],
        ..Default::default()
    })
}

/// Trivially wrong workspace answers for a task of this family: (path, content).
pub fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for cp in &task.checkpoints {
        match (&cp.key[..], &cp.check) {
            ("signups_recorded", Check::JsonRecords { path, expected, .. }) => {
                let source = scenario
                    .files
                    .iter()
                    .find(|f| f.path.ends_with("workshops_next_week.md"));
                if let Some(FileSpec {
                    content: Content::Text(t),
                    ..
                }) = source
                {
                    out.push((path.clone(), t.clone()));
                }
                out.push((path.clone(), String::new()));
                // Every workshop listed, with no real count.
                let zero: Vec<_> = expected
                    .iter()
                    .map(|r| json!({"title": r.text.get("title"), "signups": 0}))
                    .collect();
                out.push((path.clone(), json!({"workshops": zero}).to_string()));
            }
            ("snapshot_correct", Check::All(checks)) => {
                let Some(Check::JsonNumber { path, .. }) = checks.first() else {
                    continue;
                };
                out.push((path.clone(), String::new()));
                let log = scenario
                    .files
                    .iter()
                    .find(|f| f.path.ends_with("incident_log.csv"));
                let Some(FileSpec {
                    content: Content::Text(csv),
                    ..
                }) = log
                else {
                    continue;
                };
                out.push((path.clone(), csv.clone()));
                // Every incident's minutes added up, whatever its service or status;
                // and the incidents counted instead of their minutes.
                let rows: Vec<Vec<String>> = tbsim_scenario::check::parse_csv(csv)
                    .unwrap_or_default()
                    .into_iter()
                    .skip(1)
                    .collect();
                let of = |s: &'static str| {
                    rows.iter()
                        .filter(move |r| r.get(3).map(String::as_str) == Some(s))
                };
                let all: Vec<u32> = SEVERITIES
                    .iter()
                    .map(|&s| of(s).filter_map(|r| r.get(5)?.parse::<u32>().ok()).sum())
                    .collect();
                out.push((
                    path.clone(),
                    json!({"critical": all[0], "major": all[1], "minor": all[2]}).to_string(),
                ));
                let counted: Vec<usize> = SEVERITIES.iter().map(|&s| of(s).count()).collect();
                out.push((
                    path.clone(),
                    json!({"critical": counted[0], "major": counted[1], "minor": counted[2]})
                        .to_string(),
                ));
            }
            _ => {}
        }
    }
    out
}

/// Trivially wrong messages for the message checkpoints of a task: (person key,
/// text). Each lists every candidate, or gives a wrong candidate alone.
pub fn wrong_messages(task: &TaskSpec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for cp in &task.checkpoints {
        if let Check::MessageSent {
            to,
            contains,
            absent,
            ..
        } = &cp.check
        {
            let all: Vec<&str> = contains.iter().chain(absent).map(String::as_str).collect();
            out.push((
                to.clone(),
                format!("It is one of these: {}", all.join(", ")),
            ));
            if let Some(a) = absent.first() {
                out.push((to.clone(), format!("It is {a}.")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_and_times() {
        assert_eq!(thousands(48_500), "48,500");
        assert_eq!(thousands(500), "500");
        assert_eq!(thousands(150_000), "150,000");
        assert_eq!(to_min("09:05"), Some(545));
        assert_eq!(to_min("24:00"), None);
        assert_eq!(hm(545), "09:05");
        assert_eq!(shift_date("2025-03-01", -1).unwrap(), "2025-02-28");
        assert_eq!(shift_date("2024-12-31", 1).unwrap(), "2025-01-01");
    }

    #[test]
    fn figures_never_look_like_years() {
        let mut rng = tbsim_core::rng::stream(1, "t");
        for _ in 0..2_000 {
            let v = figure(&mut rng, (1_800, 2_200));
            assert!(!(1_900..=2_100).contains(&v));
        }
    }

    #[test]
    fn every_variant_is_listed_once() {
        let v = variants();
        assert_eq!(v.len(), 8);
        let keys: BTreeSet<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 8);
    }
}
