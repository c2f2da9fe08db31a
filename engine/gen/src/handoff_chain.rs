//! Handoff chain: each task's input is the previous task's output.
//!
//! The model: a chain of two or three tasks, each assigned by a different colleague
//! who picks up the previous result. Only the first is released by the suite; each
//! later one is released (`Release::AfterCheckpoint`) when the previous task's
//! `output_correct` checkpoint passes, which is judged at that stage's own deadline
//! (the chain's window is split into one deadline per stage); its objective points at the
//! previous output file in the workspace. Every expected answer is computed from
//! the correct previous output, so a later stage can only be reached, and only
//! passes, on top of correct earlier work. The kinds of transformation:
//! - `Dedupe`: merge two event sign-up lists (same email in any capitalisation is
//!   one person; the form wins a team conflict) -> attendees per team -> tables
//!   per team for a given table size, and what they cost at the venue's fee;
//! - `Convert`: convert expense claims to euros at the right month's rates (the
//!   previous month's rates sit beside them) -> totals per cost centre -> the cost
//!   centres over their budget;
//! - `Restock`: apply the day's stock movements to the opening stock -> the reorder
//!   list (items strictly below their reorder point, topped up to target) -> the
//!   order's total cost, messaged to the buyer.
//!
//! Differences from the reference: this family does not exist there (the reference
//! has no dependent releases); it is new here. Released stages are not revealed in
//! advance, and no answer key is on the drive.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Ctx, Parts, company::slug, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::{
    Check, CheckpointSpec, Content, FileSpec, PlanStep, Record, Release, Scenario, TaskSpec,
};

/// The kind of transformation along the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Merge sign-up lists -> count per team -> tables per team.
    Dedupe,
    /// Convert currencies -> total per cost centre -> over-budget centres.
    Convert,
    /// Closing stock -> reorder list -> order cost.
    Restock,
}

/// Parameters; unset ones are drawn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Transformation kind.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Number of tasks in the chain (2-3).
    #[serde(default)]
    pub length: Option<u8>,
}

const KINDS: [(Kind, &str); 3] = [
    (Kind::Dedupe, "dedupe"),
    (Kind::Convert, "convert"),
    (Kind::Restock, "restock"),
];

/// The variants: kind x chain length.
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for (kind, name) in KINDS {
        for length in 2..=3u8 {
            v.push((
                format!("handoff_chain/{name}/len{length}"),
                Params {
                    kind: Some(kind),
                    length: Some(length),
                },
            ));
        }
    }
    v
}

/// One stage, before it becomes a task.
struct Stage {
    title: String,
    objective: String,
    assigned_by: String,
    checkpoints: Vec<CheckpointSpec>,
    plan: Vec<PlanStep>,
    hints: Vec<String>,
}

fn answer_checkpoint(description: String, check: Check, feedback: &str) -> CheckpointSpec {
    CheckpointSpec {
        key: "output_correct".into(),
        description,
        weight: 2,
        check,
        feedback: feedback.to_owned(),
    }
}

fn consulted(paths: &[&str], what: &str) -> CheckpointSpec {
    let check = if paths.len() == 1 {
        Check::Consulted(paths[0].to_owned())
    } else {
        Check::All(
            paths
                .iter()
                .map(|p| Check::Consulted((*p).to_owned()))
                .collect(),
        )
    };
    CheckpointSpec {
        key: "inputs_read".into(),
        description: format!("Read {what}"),
        weight: 1,
        check,
        feedback: format!("Not every input was read: {what}. The objective names where they are."),
    }
}

fn write(path: &str, v: &Value) -> PlanStep {
    step(
        "write_file",
        json!({"path": path, "content": serde_json::to_string_pretty(v).unwrap_or_default()}),
    )
}

fn read(path: &str) -> PlanStep {
    step("read_file", json!({"path": path}))
}

fn record(text: &[(&str, &str)], numbers: &[(&str, f64)]) -> Record {
    Record {
        text: text
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        numbers: numbers.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
    }
}

fn people_in<'a>(ctx: &'a Ctx<'_>, depts: &[&str]) -> Vec<&'a tbsim_scenario::Person> {
    depts
        .iter()
        .flat_map(|d| ctx.company.department(d))
        .collect()
}

/// Distinct assigners, one per stage, each from its own pool where possible.
fn assigners(
    ctx: &Ctx<'_>,
    rng: &mut StreamRng,
    pools: &[&[&str]],
) -> Result<Vec<tbsim_scenario::Person>, String> {
    let mut chosen: Vec<tbsim_scenario::Person> = Vec::new();
    for depts in pools {
        let pool: Vec<_> = people_in(ctx, depts)
            .into_iter()
            .filter(|p| !chosen.iter().any(|c| c.key == p.key))
            .collect();
        if pool.is_empty() {
            return Err(format!(
                "handoff_chain needs more people in {} (raise company_size)",
                depts.join(", ")
            ));
        }
        chosen.push(pool[rng.random_range(0..pool.len())].clone());
    }
    Ok(chosen)
}

// ---------------------------------------------------------------- dedupe

const EVENTS: &[&str] = &[
    "Autumn Town Hall",
    "Customer Day",
    "Product Summit",
    "Volunteering Day",
    "Team Offsite",
    "Winter Social",
    "Analytics Forum",
    "Partner Breakfast",
];
const DOMAIN: &str = "ashcombevale.example";
/// The venue's fee per table, whole units.
const TABLE_FEE: (u32, u32) = (30, 90);

/// One sign-up row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignUp {
    /// Name as written.
    pub name: String,
    /// Email as written.
    pub email: String,
    /// Team as written.
    pub team: String,
}

/// The merge rule: one entry per email ignoring case, the form's team winning, in
/// email order.
pub fn merge(form: &[SignUp], email: &[SignUp]) -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for s in email {
        out.insert(s.email.trim().to_lowercase(), s.team.clone());
    }
    for s in form {
        out.insert(s.email.trim().to_lowercase(), s.team.clone());
    }
    out.into_iter().collect()
}

/// Attendees per team, in team order.
pub fn team_counts(attendees: &[(String, String)]) -> Vec<(String, u32)> {
    let mut m: BTreeMap<String, u32> = BTreeMap::new();
    for (_, t) in attendees {
        *m.entry(t.clone()).or_default() += 1;
    }
    m.into_iter().collect()
}

/// Tables per team when each team sits at its own tables of `size`.
pub fn tables(counts: &[(String, u32)], size: u32) -> Vec<(String, u32)> {
    counts
        .iter()
        .map(|(t, c)| (t.clone(), c.div_ceil(size)))
        .collect()
}

fn signups_csv(header: &str, rows: &[SignUp], stamps: &[String]) -> String {
    let mut csv = format!("{header},name,email,team\n");
    for (s, at) in rows.iter().zip(stamps) {
        let _ = writeln!(csv, "{at},{},{},{}", s.name, s.email, s.team);
    }
    csv
}

fn parse_signups(csv: &str) -> Vec<SignUp> {
    csv_rows(csv)
        .into_iter()
        .filter_map(|f| {
            (f.len() == 4).then(|| SignUp {
                name: f[1].clone(),
                email: f[2].clone(),
                team: f[3].clone(),
            })
        })
        .collect()
}

/// Stages and the drive files they read.
type Built = (Vec<Stage>, Vec<FileSpec>);

fn dedupe(ctx: &Ctx<'_>, rng: &mut StreamRng, length: u8) -> Result<Built, String> {
    let event = EVENTS[rng.random_range(0..EVENTS.len())];
    let ev = slug(event).replace('-', "_");
    let people = ctx.company.non_executives();
    // Enough people, and tables small enough, that teams need one to several
    // tables each: the total spreads, so no constant answer is often right
    // (issue 37: at 12-18 people nearly every team needed one table).
    let n = rng
        .random_range(10..=people.len().max(10))
        .min(people.len());
    let chosen: Vec<&tbsim_scenario::Person> = pick_distinct(rng, people.len(), n)
        .into_iter()
        .map(|i| people[i])
        .collect();
    let both = rng.random_range(4..=6);
    let conflicts = rng.random_range(1..=2);
    let teams: Vec<&str> = {
        let mut t: Vec<&str> = ctx
            .company
            .people
            .iter()
            .map(|p| p.department.as_str())
            .filter(|d| *d != "Executive")
            .collect();
        t.sort();
        t.dedup();
        t
    };
    let mut form = Vec::new();
    let mut mail = Vec::new();
    for (i, p) in chosen.iter().enumerate() {
        let local = p.name.to_lowercase().replace(' ', ".");
        let s = SignUp {
            name: p.name.clone(),
            email: format!("{local}@{DOMAIN}"),
            team: p.department.clone(),
        };
        // Chosen order is random: the first `both` are on both lists.
        let on_form = i < both || rng.random_bool(0.5);
        if i < both {
            let mut m = s.clone();
            if rng.random_bool(0.6) {
                // Typed by hand: capitalised, so the same address looks different.
                m.email = format!("{}@{}", p.name.replace(' ', "."), DOMAIN.to_uppercase());
            }
            if i < conflicts {
                let wrong: Vec<&&str> = teams.iter().filter(|t| **t != p.department).collect();
                m.team = (*wrong[rng.random_range(0..wrong.len())]).to_owned();
            }
            mail.push(m);
        }
        if on_form {
            form.push(s);
        } else if i >= both {
            mail.push(s);
        }
    }
    // One person submitted the form twice.
    if !form.is_empty() {
        let again = form[rng.random_range(0..form.len())].clone();
        form.push(again);
    }
    let shuffle = |rng: &mut StreamRng, v: &mut Vec<SignUp>| {
        let mut keyed: Vec<(u32, SignUp)> = v
            .drain(..)
            .map(|s| (rng.random_range(0..u32::MAX), s))
            .collect();
        keyed.sort_by_key(|(k, _)| *k);
        v.extend(keyed.into_iter().map(|(_, s)| s));
    };
    shuffle(rng, &mut form);
    shuffle(rng, &mut mail);
    let stamps = |rng: &mut StreamRng, n: usize, days: i64| -> Result<Vec<String>, String> {
        let mut v: Vec<String> = (0..n)
            .map(|_| {
                let back = rng.random_range(1..=days);
                super::urgent_interrupt::shift_date(ctx.date, -back).map(|d| {
                    format!(
                        "{d} {:02}:{:02}",
                        rng.random_range(8..19),
                        rng.random_range(0..60)
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        v.sort();
        Ok(v)
    };
    let form_stamps = stamps(rng, form.len(), 12)?;
    let mail_stamps = stamps(rng, mail.len(), 12)?;

    let folder = ctx.folder(&format!("drive/events/{}", slug(event)));
    let form_path = format!("{folder}/{ev}_form_responses.csv");
    let mail_path = format!("{folder}/{ev}_email_replies.csv");
    let sfx = ctx.suffix();
    let out1 = format!("workspace/{ev}_attendees{sfx}.json");
    let out2 = format!("workspace/{ev}_team_counts{sfx}.json");
    let out3 = format!("workspace/{ev}_seating{sfx}.json");
    let size = rng.random_range(2..=8u32);
    // The venue's hire fee per table, on its own stream so the rest of the chain
    // draws as before. The seating stage's total is what the tables cost, a
    // product no text states: the number of tables was a small count that one
    // constant matched in a quarter of the instances where a text showed it
    // (issue 37), and the cost spreads over hundreds of values.
    let fee = ctx
        .rng("handoff/table-fee")
        .random_range(TABLE_FEE.0..=TABLE_FEE.1);

    let attendees = merge(&form, &mail);
    let counts = team_counts(&attendees);
    let seats = tables(&counts, size);
    let a1 = json!({"attendees": attendees.iter().map(|(e, t)| json!({"email": e, "team": t})).collect::<Vec<_>>()});
    let a2 = json!({"teams": counts.iter().map(|(t, c)| json!({"team": t, "count": c})).collect::<Vec<_>>()});
    let table_cost: u32 = seats.iter().map(|(_, n)| n).sum::<u32>() * fee;
    let a3 = json!({"tables": seats.iter().map(|(t, n)| json!({"team": t, "tables": n})).collect::<Vec<_>>(), "table_cost": table_cost});

    let who = assigners(
        ctx,
        rng,
        &[&["Marketing"], &["Human Resources"], &["Product", "Sales"]],
    )?;
    let mut stages = vec![
        Stage {
            title: format!("Merge the {event} sign-ups"),
            objective: format!(
                "{} is organising the {event} and has two sign-up lists: `{form_path}` (the registration form) and `{mail_path}` (people who replied by email). Merge them into one attendee list with one entry per person: the same email address is the same person whatever its capitalisation, and where the two lists disagree on someone's team, the form is right. Save `{out1}` as {{\"attendees\": [{{\"email\": ..., \"team\": ...}}]}}. Others will build on your list.",
                who[0].name
            ),
            assigned_by: who[0].key.clone(),
            checkpoints: vec![
                consulted(&[&form_path, &mail_path], "both sign-up lists"),
                answer_checkpoint(
                    format!("`{out1}` lists every attendee exactly once with the right team"),
                    Check::JsonRecords {
                        path: out1.clone(),
                        pointer: "/attendees".into(),
                        expected: attendees
                            .iter()
                            .map(|(e, t)| record(&[("email", e), ("team", t)], &[]))
                            .collect(),
                        tolerance: 0.0,
                    },
                    "The attendee list is wrong: some people are missing, listed twice or carry the wrong team. Treat email addresses case-insensitively, keep one entry per address across both lists (and within the form), and take the team from the form when the lists disagree.",
                ),
            ],
            plan: vec![read(&form_path), read(&mail_path), write(&out1, &a1)],
            hints: vec![
                "Both lists overlap: many people signed up twice, sometimes with different capitalisation.".into(),
                "Key each person by the lower-cased email address; someone may even appear twice in the form.".into(),
                "When the two lists give different teams for the same address, keep the form's team.".into(),
            ],
        },
        Stage {
            title: format!("Count {event} attendees per team"),
            objective: format!(
                "{} is planning catering for the {event} from your attendee list. Using `{out1}` (your merged list), count the attendees per team and save `{out2}` as {{\"teams\": [{{\"team\": ..., \"count\": ...}}]}}, one entry per team with at least one attendee.",
                who[1].name
            ),
            assigned_by: who[1].key.clone(),
            checkpoints: vec![answer_checkpoint(
                format!("`{out2}` has the right count for every team"),
                Check::JsonRecords {
                    path: out2.clone(),
                    pointer: "/teams".into(),
                    expected: counts
                        .iter()
                        .map(|(t, c)| record(&[("team", t)], &[("count", f64::from(*c))]))
                        .collect(),
                    tolerance: 0.0,
                },
                "The team counts are wrong. Count the entries of your merged attendee list per team, one entry per team that has attendees.",
            )],
            plan: vec![read(&out1), write(&out2, &a2)],
            hints: vec![
                format!("Your merged list in `{out1}` is the only input you need."),
                "Group the attendees by team and count each group.".into(),
                "List only teams with at least one attendee, with names exactly as in the list.".into(),
            ],
        },
    ];
    if length == 3 {
        stages.push(Stage {
            title: format!("Plan the {event} seating"),
            objective: format!(
                "{} is laying out the room for the {event}: each table seats {size}, each team sits at its own tables, and the venue charges {fee} per table. Using `{out2}` (your team counts), work out how many tables each team needs and what the tables cost in all, and save `{out3}` as {{\"tables\": [{{\"team\": ..., \"tables\": ...}}], \"table_cost\": n}}.",
                who[2].name
            ),
            assigned_by: who[2].key.clone(),
            checkpoints: vec![answer_checkpoint(
                format!("`{out3}` has the right number of tables per team and their cost"),
                Check::All(vec![
                    Check::JsonRecords {
                        path: out3.clone(),
                        pointer: "/tables".into(),
                        expected: seats
                            .iter()
                            .map(|(t, n)| record(&[("team", t)], &[("tables", f64::from(*n))]))
                            .collect(),
                        tolerance: 0.0,
                    },
                    Check::JsonNumber {
                        path: out3.clone(),
                        pointer: "/table_cost".into(),
                        expected: f64::from(table_cost),
                        tolerance: 0.0,
                    },
                ]),
                "The seating plan is wrong. Teams do not share tables, so each team needs its count divided by the table size, rounded up; the cost is the fee per table times the tables of every team added up.",
            )],
            plan: vec![read(&out2), write(&out3, &a3)],
            hints: vec![
                format!("Start from your team counts in `{out2}`."),
                "Teams never share a table, so round each team's tables up.".into(),
                "`table_cost` is the fee times the sum of the per-team tables, not of the attendees divided by the table size.".into(),
            ],
        });
    }
    let files = vec![
        FileSpec {
            path: form_path,
            content: Content::Text(signups_csv("submitted_at", &form, &form_stamps)),
        },
        FileSpec {
            path: mail_path,
            content: Content::Text(signups_csv("received_at", &mail, &mail_stamps)),
        },
    ];
    Ok((stages, files))
}

// ---------------------------------------------------------------- convert

/// Currency and its typical value in euros, in ten-thousandths.
const CURRENCIES: &[(&str, u32, (u32, u32))] = &[
    ("USD", 9_200, (20, 900)),
    ("GBP", 11_700, (20, 700)),
    ("CHF", 10_500, (20, 800)),
    ("SEK", 870, (200, 9_000)),
    ("DKK", 1_340, (150, 6_000)),
    ("NOK", 850, (200, 9_000)),
    ("PLN", 2_300, (80, 3_500)),
];

/// Converts cents at a rate in ten-thousandths, rounding half up to a cent.
pub fn to_eur_cents(cents: u64, rate: u32) -> u64 {
    (cents * u64::from(rate) + 5_000) / 10_000
}

fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn cents_f64(cents: u64) -> f64 {
    cents as f64 / 100.0
}

fn month_names(date: &str) -> Result<(String, String, String, String), String> {
    let (y, m) = super::urgent_interrupt::year_month(date)?;
    let last = super::urgent_interrupt::shift_date(&format!("{y:04}-{m:02}-01"), -1)?;
    let before = super::urgent_interrupt::shift_date(&format!("{}-01", &last[..7]), -1)?;
    let name = |d: &str| -> String {
        let i: usize = d[5..7].parse().unwrap_or(1);
        format!("{} {}", super::MONTHS[i - 1], &d[..4])
    };
    Ok((
        last[..7].to_owned(),
        name(&last),
        before[..7].to_owned(),
        name(&before),
    ))
}

fn rates_md(month: &str, rates: &[(&str, u32)]) -> String {
    let mut s = format!(
        "# Exchange rates for {month}\n\nMonthly average rates set by Finance. Use them for every expense claim dated in {month}: one unit of the currency is worth this many euros. Claims in euros need no conversion.\n\n| Currency | EUR per unit |\n| --- | --- |\n"
    );
    for (c, r) in rates {
        let _ = writeln!(s, "| {c} | {}.{:04} |", r / 10_000, r % 10_000);
    }
    s
}

fn convert(ctx: &Ctx<'_>, rng: &mut StreamRng, length: u8) -> Result<Built, String> {
    let (ym, month, prev_ym, prev_month) = month_names(ctx.date)?;
    let n_cc = rng.random_range(3..=4);
    let mut cc_codes = BTreeSet::new();
    while cc_codes.len() < n_cc {
        cc_codes.insert(format!("CC-{}", rng.random_range(100..1_000u32)));
    }
    let centres: Vec<String> = cc_codes.into_iter().collect();
    let cc_names = [
        "Field sales travel",
        "Customer workshops",
        "Engineering conferences",
        "Recruiting events",
        "Partner visits",
        "Leadership offsites",
    ];
    let cc_name: Vec<&str> = pick_distinct(rng, cc_names.len(), n_cc)
        .into_iter()
        .map(|i| cc_names[i])
        .collect();
    let used: Vec<usize> = pick_distinct(rng, CURRENCIES.len(), 4);
    let rate_of = |rng: &mut StreamRng, base: u32| {
        let d = f64::from(base) * rng.random_range(-0.03..0.03);
        (f64::from(base) + d).round().max(1.0) as u32
    };
    let rates: Vec<(&str, u32)> = used
        .iter()
        .map(|&i| (CURRENCIES[i].0, rate_of(rng, CURRENCIES[i].1)))
        .collect();
    let mut prev_rates: Vec<(&str, u32)> = Vec::new();
    for (c, r) in &rates {
        // The distractor month always differs.
        let mut p = rate_of(rng, *r);
        if p == *r {
            p += 7;
        }
        prev_rates.push((c, p));
    }
    let n_claims = rng.random_range(10..=16);
    let people = ctx.company.non_executives();
    let mut ids = BTreeSet::new();
    // (id, day, person, centre, currency, cents)
    let mut claims: Vec<(String, u32, String, String, &str, u64)> = Vec::new();
    for k in 0..n_claims {
        let id = loop {
            let id = format!("CL-{}", rng.random_range(1_000..10_000u32));
            if ids.insert(id.clone()) {
                break id;
            }
        };
        // Most claims are in a foreign currency, at least three of them.
        let (cur, range) = if k < 3 || rng.random_bool(0.75) {
            let i = used[rng.random_range(0..used.len())];
            (CURRENCIES[i].0, CURRENCIES[i].2)
        } else {
            ("EUR", (20, 900))
        };
        let cents = rng.random_range(range.0 * 100..=range.1 * 100) as u64;
        claims.push((
            id,
            rng.random_range(1..=28),
            people[rng.random_range(0..people.len())].name.clone(),
            centres[k % centres.len()].clone(),
            cur,
            cents,
        ));
    }
    claims.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let rate = |cur: &str| {
        rates
            .iter()
            .find(|(c, _)| *c == cur)
            .map_or(10_000, |(_, r)| *r)
    };
    let converted: Vec<(String, String, u64)> = claims
        .iter()
        .map(|c| (c.0.clone(), c.3.clone(), to_eur_cents(c.5, rate(c.4))))
        .collect();
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for (_, cc, e) in &converted {
        *totals.entry(cc.clone()).or_default() += e;
    }
    // Budgets: at least one centre over and one under, each by a clear margin.
    let over_n = rng.random_range(1..centres.len());
    let over_set: BTreeSet<usize> = pick_distinct(rng, centres.len(), over_n)
        .into_iter()
        .collect();
    let mut budgets: Vec<(String, &str, u64)> = Vec::new();
    let mut over: Vec<String> = Vec::new();
    for (i, cc) in centres.iter().enumerate() {
        let t = totals.get(cc).copied().unwrap_or(0);
        let b = if over_set.contains(&i) {
            over.push(cc.clone());
            (t.saturating_sub(rng.random_range(2_000..20_000)) / 1_000) * 1_000
        } else {
            (t + rng.random_range(2_000..30_000)).div_ceil(1_000) * 1_000
        };
        budgets.push((cc.clone(), cc_name[i], b));
    }

    let folder = ctx.folder("drive/finance/travel");
    let claims_path = format!("{folder}/expense_claims_{}.csv", ym.replace('-', "_"));
    let fx_folder = ctx.folder("drive/finance/fx");
    let fx_path = format!("{fx_folder}/fx_rates_{}.md", ym.replace('-', "_"));
    let fx_prev = format!("{fx_folder}/fx_rates_{}.md", prev_ym.replace('-', "_"));
    let budget_path = format!("{folder}/travel_budgets_{}.md", ym.replace('-', "_"));
    let sfx = ctx.suffix();
    let out1 = format!("workspace/claims_eur{sfx}.json");
    let out2 = format!("workspace/cost_centre_totals{sfx}.json");
    let out3 = format!("workspace/over_budget{sfx}.json");

    let mut csv = String::from("claim_id,date,employee,cost_centre,currency,amount\n");
    for c in &claims {
        let _ = writeln!(
            csv,
            "{},{ym}-{:02},{},{},{},{}",
            c.0,
            c.1,
            c.2,
            c.3,
            c.4,
            money(c.5)
        );
    }
    let mut budget_md = format!(
        "# Travel budgets for {month}\n\nEach cost centre's travel budget for the month, in euros. A centre is over budget when its claims, converted to euros, add up to more than its budget.\n\n| Cost centre | Name | Budget (EUR) |\n| --- | --- | --- |\n"
    );
    for (cc, name, b) in &budgets {
        let _ = writeln!(budget_md, "| {cc} | {name} | {} |", money(*b));
    }
    let files = vec![
        FileSpec {
            path: claims_path.clone(),
            content: Content::Text(csv),
        },
        FileSpec {
            path: fx_path.clone(),
            content: Content::Text(rates_md(&month, &rates)),
        },
        FileSpec {
            path: fx_prev,
            content: Content::Text(rates_md(&prev_month, &prev_rates)),
        },
        FileSpec {
            path: budget_path.clone(),
            content: Content::Text(budget_md),
        },
    ];

    let a1 = json!({"claims": converted.iter().map(|(id, cc, e)| json!({"claim_id": id, "cost_centre": cc, "amount_eur": cents_f64(*e)})).collect::<Vec<_>>()});
    let a2 = json!({"totals": totals.iter().map(|(cc, e)| json!({"cost_centre": cc, "total_eur": cents_f64(*e)})).collect::<Vec<_>>()});
    let a3 = json!({"over_budget": over});
    let who = assigners(ctx, rng, &[&["Finance"], &["Finance"], &["Finance"]])?;
    let mut stages = vec![
        Stage {
            title: "Convert travel claims to euros".into(),
            objective: format!(
                "{} needs last month's travel claims in euros. Convert every claim in `{claims_path}` to euros at Finance's exchange rates for {month} (the monthly rate files are in `{fx_folder}/`), rounding each amount to the cent. Save `{out1}` as {{\"claims\": [{{\"claim_id\": ..., \"cost_centre\": ..., \"amount_eur\": ...}}]}}, one entry per claim. Others will build on your file.",
                who[0].name
            ),
            assigned_by: who[0].key.clone(),
            checkpoints: vec![
                consulted(&[&claims_path, &fx_path], "the claims and the right month's rates"),
                answer_checkpoint(
                    format!("`{out1}` has every claim converted at {month}'s rates"),
                    Check::JsonRecords {
                        path: out1.clone(),
                        pointer: "/claims".into(),
                        expected: converted
                            .iter()
                            .map(|(id, cc, e)| {
                                record(&[("claim_id", id), ("cost_centre", cc)], &[("amount_eur", cents_f64(*e))])
                            })
                            .collect(),
                        tolerance: 0.011,
                    },
                    "Some converted amounts are wrong or claims are missing. Use the rate file for the month the claims are dated in (not the other month), multiply each amount by its currency's rate, leave euro claims as they are, and round to the cent.",
                ),
            ],
            plan: vec![
                read(&claims_path),
                step("list_folder", json!({"path": fx_folder})),
                read(&fx_path),
                write(&out1, &a1),
            ],
            hints: vec![
                format!("`{fx_folder}/` holds more than one month of rates; the claims are all from {month}."),
                "Multiply each foreign amount by its currency's EUR-per-unit rate; euro claims stay as they are.".into(),
                "Round each converted amount to two decimals and keep each claim's cost centre.".into(),
            ],
        },
        Stage {
            title: "Total travel spend per cost centre".into(),
            objective: format!(
                "{} is closing the month's travel spend. Using `{out1}` (your converted claims), add up the euro amounts per cost centre and save `{out2}` as {{\"totals\": [{{\"cost_centre\": ..., \"total_eur\": ...}}]}}, one entry per cost centre.",
                who[1].name
            ),
            assigned_by: who[1].key.clone(),
            checkpoints: vec![answer_checkpoint(
                format!("`{out2}` has the right euro total for every cost centre"),
                Check::JsonRecords {
                    path: out2.clone(),
                    pointer: "/totals".into(),
                    expected: totals
                        .iter()
                        .map(|(cc, e)| record(&[("cost_centre", cc)], &[("total_eur", cents_f64(*e))]))
                        .collect(),
                    tolerance: 0.05,
                },
                "The cost-centre totals are wrong. Sum the converted euro amounts from your claims file per cost centre.",
            )],
            plan: vec![read(&out1), write(&out2, &a2)],
            hints: vec![
                format!("Your converted claims in `{out1}` are the only input you need."),
                "Group the claims by cost centre and add up `amount_eur`.".into(),
                "One entry per cost centre, with the totals in euros.".into(),
            ],
        },
    ];
    if length == 3 {
        stages.push(Stage {
            title: "Flag cost centres over budget".into(),
            objective: format!(
                "{} wants to know which cost centres overspent on travel. Compare your totals in `{out2}` with the budgets in `{budget_path}` and save `{out3}` as {{\"over_budget\": [\"CC-...\"]}}, listing exactly the cost centres whose total is above their budget.",
                who[2].name
            ),
            assigned_by: who[2].key.clone(),
            checkpoints: vec![
                consulted(&[&budget_path], "the travel budgets"),
                answer_checkpoint(
                    format!("`{out3}` lists exactly the cost centres over budget"),
                    Check::JsonStringSet {
                        path: out3.clone(),
                        pointer: "/over_budget".into(),
                        expected: over,
                    },
                    "The over-budget list is wrong. A cost centre is over budget only when its euro total is above its budget; list the codes of exactly those centres.",
                ),
            ],
            plan: vec![read(&out2), read(&budget_path), write(&out3, &a3)],
            hints: vec![
                format!("The budgets are in `{budget_path}`."),
                "Compare each centre's total with its own budget.".into(),
                "List only centres whose total exceeds the budget, by their `CC-` code.".into(),
            ],
        });
    }
    Ok((stages, files))
}

// ---------------------------------------------------------------- restock

const ITEMS: &[(&str, u32)] = &[
    ("A4 copy paper, box of 5 reams", 24),
    ("Black toner cartridge", 68),
    ("Whiteboard markers, pack of 8", 9),
    ("USB-C charging cable", 12),
    ("Sticky notes, pack of 12", 7),
    ("Coffee beans, 1 kg", 19),
    ("Paper cups, sleeve of 50", 4),
    ("AA batteries, pack of 10", 8),
    ("Surface cleaning wipes", 5),
    ("Shipping labels, roll", 11),
    ("A5 notebooks, pack of 5", 10),
    ("Bin liners, roll of 20", 3),
];

/// Closing stock: opening plus arrivals minus issues, per SKU (in SKU order).
pub fn closing(opening: &[(String, i64)], moves: &[(String, i64)]) -> Vec<(String, i64)> {
    let mut m: BTreeMap<String, i64> = opening.iter().cloned().collect();
    for (sku, q) in moves {
        *m.entry(sku.clone()).or_default() += q;
    }
    m.into_iter().collect()
}

/// The reorder list: SKUs strictly below their reorder point, topped up to target.
pub fn reorder(
    stock: &[(String, i64)],
    levels: &BTreeMap<String, (i64, i64)>,
) -> Vec<(String, i64)> {
    stock
        .iter()
        .filter_map(|(sku, c)| {
            let (point, target) = levels.get(sku)?;
            (c < point).then(|| (sku.clone(), target - c))
        })
        .collect()
}

fn restock(ctx: &Ctx<'_>, rng: &mut StreamRng, length: u8) -> Result<Built, String> {
    let n = rng.random_range(6..=9);
    let items: Vec<(&str, u32)> = pick_distinct(rng, ITEMS.len(), n)
        .into_iter()
        .map(|i| ITEMS[i])
        .collect();
    let mut codes = BTreeSet::new();
    while codes.len() < n {
        codes.insert(format!("SKU-{}", rng.random_range(1_000..10_000u32)));
    }
    let skus: Vec<String> = codes.into_iter().collect();
    let opening: Vec<(String, i64)> = skus
        .iter()
        .map(|s| (s.clone(), rng.random_range(10..=60)))
        .collect();
    let mut moves: Vec<(u32, String, i64)> = Vec::new();
    for (sku, open) in &opening {
        let mut level = *open;
        for _ in 0..rng.random_range(1..=4) {
            let minute = rng.random_range(8 * 60..17 * 60);
            // Issues never take more than is on the shelf.
            let q = if rng.random_bool(0.3) {
                rng.random_range(5..=30)
            } else {
                -rng.random_range(1..=level.clamp(1, 25))
            };
            if level + q < 0 {
                continue;
            }
            level += q;
            moves.push((minute, sku.clone(), q));
        }
    }
    moves.sort();
    let stock = closing(
        &opening,
        &moves
            .iter()
            .map(|(_, s, q)| (s.clone(), *q))
            .collect::<Vec<_>>(),
    );
    // Levels: about half the SKUs fall below their point; one sits exactly on it
    // (not below, so not reordered).
    let mut levels: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let below: BTreeSet<usize> = pick_distinct(rng, n, n / 2).into_iter().collect();
    let on_point = (0..n).find(|i| !below.contains(i));
    for (i, (sku, c)) in stock.iter().enumerate() {
        let point = if below.contains(&i) {
            c + rng.random_range(1..=15)
        } else if Some(i) == on_point {
            *c
        } else {
            (c - rng.random_range(1..=10)).max(0)
        };
        let target = point + rng.random_range(10..=40);
        levels.insert(sku.clone(), (point, target));
    }
    let orders = reorder(&stock, &levels);
    let price: BTreeMap<&str, u32> = skus
        .iter()
        .zip(&items)
        .map(|(s, (_, p))| (s.as_str(), p + rng.random_range(0..=p / 4)))
        .collect();
    let mut cost: u64 = orders
        .iter()
        .map(|(s, q)| *q as u64 * u64::from(price[s.as_str()]))
        .sum();
    // Every SKU topped up to target: the "order everything" candidate.
    let mut everything: u64 = stock
        .iter()
        .map(|(s, c)| (levels[s].1 - c).max(0) as u64 * u64::from(price[s.as_str()]))
        .sum();
    // No total may read like a year or be tiny: raise the first ordered SKU's
    // price by whole euros until neither does (both totals rise by its quantity).
    let mut bump = 0u64;
    let q = orders.first().map_or(0, |(_, q)| *q as u64);
    while q > 0
        && ((1_900..=2_100).contains(&cost) || (1_900..=2_100).contains(&everything) || cost < 100)
    {
        bump += 1;
        cost += q;
        everything += q;
    }
    let mut price = price;
    if let Some((s, _)) = orders.first() {
        *price.get_mut(s.as_str()).expect("priced") += bump as u32;
    }

    let folder = ctx.folder("drive/warehouse/stationery");
    // The store closed yesterday; today starts from yesterday's movements.
    let day = super::urgent_interrupt::shift_date(ctx.date, -1)?;
    let opening_path = format!("{folder}/opening_stock_{}.csv", day.replace('-', "_"));
    let moves_path = format!("{folder}/movements_{}.csv", day.replace('-', "_"));
    let levels_path = format!("{folder}/reorder_levels.csv");
    let prices_path = format!("{folder}/supplier_prices.csv");
    let sfx = ctx.suffix();
    let out1 = format!("workspace/closing_stock{sfx}.json");
    let out2 = format!("workspace/reorder_list{sfx}.json");

    let mut o = String::from("sku,item,opening_quantity\n");
    for ((s, q), (name, _)) in opening.iter().zip(&items) {
        let _ = writeln!(o, "{s},\"{name}\",{q}");
    }
    let mut mv = String::from("time,sku,direction,quantity\n");
    for (minute, s, q) in &moves {
        let _ = writeln!(
            mv,
            "{:02}:{:02},{s},{},{}",
            minute / 60,
            minute % 60,
            if *q > 0 { "in" } else { "out" },
            q.abs()
        );
    }
    let mut lv = String::from("sku,reorder_point,target_level\n");
    for (s, (p, t)) in &levels {
        let _ = writeln!(lv, "{s},{p},{t}");
    }
    let mut pr = String::from("sku,unit_price_eur\n");
    for (s, p) in &price {
        let _ = writeln!(pr, "{s},{p}");
    }
    let files = vec![
        FileSpec {
            path: opening_path.clone(),
            content: Content::Text(o),
        },
        FileSpec {
            path: moves_path.clone(),
            content: Content::Text(mv),
        },
        FileSpec {
            path: levels_path.clone(),
            content: Content::Text(lv),
        },
        FileSpec {
            path: prices_path.clone(),
            content: Content::Text(pr),
        },
    ];

    let who = assigners(
        ctx,
        rng,
        &[
            &["Product", "Engineering"],
            &["Product", "Engineering"],
            &["Finance"],
        ],
    )?;
    let buyer = ctx
        .company
        .staff("Finance")
        .into_iter()
        .find(|p| !who.iter().any(|w| w.key == p.key))
        .or_else(|| ctx.company.department("Finance").into_iter().next())
        .ok_or("the company has no Finance department")?
        .clone();
    let a1 = json!({"stock": stock.iter().map(|(s, c)| json!({"sku": s, "closing": c})).collect::<Vec<_>>()});
    let a2 = json!({"orders": orders.iter().map(|(s, q)| json!({"sku": s, "quantity": q})).collect::<Vec<_>>()});
    let mut stages = vec![
        Stage {
            title: "Work out the stationery closing stock".into(),
            objective: format!(
                "{} runs the stationery store. Apply the movements of {day} in `{moves_path}` to that morning's opening stock in `{opening_path}` (`in` adds, `out` removes) and save the closing stock as `{out1}`: {{\"stock\": [{{\"sku\": ..., \"closing\": ...}}]}}, one entry per SKU. Others will build on your file.",
                who[0].name
            ),
            assigned_by: who[0].key.clone(),
            checkpoints: vec![
                consulted(&[&opening_path, &moves_path], "the opening stock and the day's movements"),
                answer_checkpoint(
                    format!("`{out1}` has the right closing stock for every SKU"),
                    Check::JsonRecords {
                        path: out1.clone(),
                        pointer: "/stock".into(),
                        expected: stock
                            .iter()
                            .map(|(s, c)| record(&[("sku", s)], &[("closing", *c as f64)]))
                            .collect(),
                        tolerance: 0.0,
                    },
                    "Some closing quantities are wrong or SKUs are missing. Start from each SKU's opening quantity, add every `in` movement and subtract every `out` movement; list every SKU, including those that did not move.",
                ),
            ],
            plan: vec![read(&opening_path), read(&moves_path), write(&out1, &a1)],
            hints: vec![
                "Every SKU in the opening stock needs a closing figure, even if nothing moved.".into(),
                "`in` rows add to the shelf and `out` rows take from it.".into(),
                "Closing = opening + all `in` quantities - all `out` quantities, per SKU.".into(),
            ],
        },
        Stage {
            title: "Draw up the stationery reorder list".into(),
            objective: format!(
                "{} places the stationery orders. Using `{out1}` (your closing stock) and the levels in `{levels_path}`, list every SKU whose closing stock is below its reorder point, with the quantity that brings it back up to its target level. Save `{out2}` as {{\"orders\": [{{\"sku\": ..., \"quantity\": ...}}]}}.",
                who[1].name
            ),
            assigned_by: who[1].key.clone(),
            checkpoints: vec![
                consulted(&[&levels_path], "the reorder levels"),
                answer_checkpoint(
                    format!("`{out2}` lists exactly the SKUs to reorder with the right quantities"),
                    Check::JsonRecords {
                        path: out2.clone(),
                        pointer: "/orders".into(),
                        expected: orders
                            .iter()
                            .map(|(s, q)| record(&[("sku", s)], &[("quantity", *q as f64)]))
                            .collect(),
                        tolerance: 0.0,
                    },
                    "The reorder list is wrong. Include a SKU only when its closing stock is strictly below its reorder point (equal is fine), and order its target level minus its closing stock.",
                ),
            ],
            plan: vec![read(&out1), read(&levels_path), write(&out2, &a2)],
            hints: vec![
                format!("Your closing stock in `{out1}` and `{levels_path}` are all you need."),
                "Only SKUs strictly below their reorder point are ordered; a SKU exactly at its point is not.".into(),
                "The quantity is the target level minus the closing stock.".into(),
            ],
        },
    ];
    if length == 3 {
        let mut wrong = vec![everything.to_string()];
        wrong.retain(|w| *w != cost.to_string());
        stages.push(Stage {
            title: "Cost the stationery order".into(),
            objective: format!(
                "{} approves the stationery spend. Price your reorder list in `{out2}` with the unit prices in `{prices_path}` and message {} in Finance the order's total cost in euros (quantity times unit price, summed over the list).",
                who[2].name, buyer.name
            ),
            assigned_by: who[2].key.clone(),
            checkpoints: vec![
                consulted(&[&prices_path], "the supplier prices"),
                answer_checkpoint(
                    format!("{} got the order's total cost", buyer.name),
                    Check::MessageSent {
                        to: buyer.key.clone(),
                        contains: vec![cost.to_string()],
                        absent: wrong,
                        after: None,
                    },
                    "The buyer did not get the right total. Multiply each ordered quantity by its SKU's unit price, add them up over your reorder list only, and message that one figure to the buyer named in the task.",
                ),
            ],
            plan: vec![
                read(&out2),
                read(&prices_path),
                step(
                    "send_message",
                    json!({"to": buyer.key, "text": format!("Hi {}, the stationery reorder comes to {cost} EUR in total.", buyer.name)}),
                ),
            ],
            hints: vec![
                format!("The prices are in `{prices_path}`; your reorder list is in `{out2}`."),
                "Only the SKUs on your reorder list are bought.".into(),
                format!("Send {} one figure: the sum of quantity x unit price.", buyer.name),
            ],
        });
    }
    Ok((stages, files))
}

/// Generates one instance: the chain's tasks, first stage first.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut draw = ctx.rng("params");
    let kind = p
        .kind
        .unwrap_or_else(|| KINDS[draw.random_range(0..KINDS.len())].0);
    let length = p.length.unwrap_or_else(|| draw.random_range(2..=3));
    if !(2..=3).contains(&length) {
        return Err(format!(
            "handoff_chain parameters out of range: length {length} (2-3)"
        ));
    }
    let kname = KINDS.iter().find(|k| k.0 == kind).map_or("", |k| k.1);
    let mut rng = ctx.rng("chain");
    let (stages, files) = match kind {
        Kind::Dedupe => dedupe(ctx, &mut rng, length)?,
        Kind::Convert => convert(ctx, &mut rng, length)?,
        Kind::Restock => restock(ctx, &mut rng, length)?,
    };
    // A later stage opens only when the previous stage's answer is judged, at that
    // stage's deadline; so the window from release to deadline is split into one
    // deadline per stage (on 5-minute marks), the last stage keeping the task's.
    let begin = match &ctx.release {
        Release::At(t) => t.get(11..16).and_then(super::urgent_interrupt::to_min),
        Release::Start => super::urgent_interrupt::to_min(ctx.start),
        // A gated (or meeting-announced) chain's start is unknown; suites leave such a
        // task its family's window (three hours) after the gate opens, so the stages
        // share the last three hours.
        Release::AfterCheckpoint { .. } | Release::InMeeting(_) => {
            super::urgent_interrupt::to_min(ctx.deadline).map(|d| d.saturating_sub(3 * 60))
        }
    };
    let end = super::urgent_interrupt::to_min(ctx.deadline).ok_or("bad deadline")?;
    let n = stages.len() as u32;
    let stage_deadline = |i: u32| -> String {
        match begin {
            Some(b) if i + 1 < n && end > b => {
                let t = b + (end - b) * (i + 1) / n;
                let t = t / 5 * 5;
                ctx.at(&format!("{:02}:{:02}", t / 60, t % 60))
            }
            _ => ctx.at(ctx.deadline),
        }
    };
    let mut tasks: Vec<TaskSpec> = Vec::new();
    for (i, s) in stages.into_iter().enumerate() {
        let key = if i == 0 {
            ctx.task_key()
        } else {
            format!("task/{}-{}", ctx.id, i + 1)
        };
        let release = match tasks.last() {
            None => ctx.release.clone(),
            Some(prev) => Release::AfterCheckpoint {
                task: prev.key.clone(),
                checkpoint: "output_correct".into(),
            },
        };
        tasks.push(
            ctx.task_spec::<super::meta_task::HandoffChain>(format!(
                "handoff_chain/{kname}/len{length}"
            ))
            .key(key)
            .title(s.title)
            .objective(s.objective)
            .assigned_by(s.assigned_by)
            .release(release)
            .deadline(stage_deadline(i as u32))
            .checkpoints(s.checkpoints)
            .hints(s.hints)
            .plan(s.plan, 0)
            .build(),
        );
    }
    Ok(Parts {
        tasks,
        files,
        meetings: Vec::new(),
        clues: Vec::new(),
        events: Vec::new(),
        ..Default::default()
    })
}

fn text_of<'a>(scenario: &'a Scenario, suffix: &str) -> Option<&'a str> {
    scenario.files.iter().find_map(|f| match &f.content {
        Content::Text(t) if f.path.ends_with(suffix) => Some(t.as_str()),
        _ => None,
    })
}

/// The rows of a table below its header (quoted fields may hold commas).
fn csv_rows(csv: &str) -> Vec<Vec<String>> {
    tbsim_scenario::check::parse_csv(csv)
        .unwrap_or_default()
        .into_iter()
        .skip(1)
        .collect()
}

/// The content the previous stage's plan writes (this stage's input), or the first
/// drive file the first stage reads.
fn stage_input(task: &TaskSpec, scenario: &Scenario) -> Option<String> {
    let source = match &task.release {
        Release::AfterCheckpoint { task: prev, .. } => {
            scenario.tasks.iter().find(|t| &t.key == prev)?
        }
        _ => {
            let first = task.plan.iter().find(|s| s.tool == "read_file")?;
            let args: Value = serde_json::from_str(&first.args).ok()?;
            let path = args["path"].as_str()?;
            return text_of(scenario, path).map(str::to_owned);
        }
    };
    let w = source.plan.iter().rev().find(|s| s.tool == "write_file")?;
    let args: Value = serde_json::from_str(&w.args).ok()?;
    args["content"].as_str().map(str::to_owned)
}

/// Trivially wrong workspace answers for one stage: an empty file, the stage's
/// input copied, and the "every candidate" or "skipped the rule" answer.
pub fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
    let Some(cp) = task.checkpoints.iter().find(|c| c.key == "output_correct") else {
        return Vec::new();
    };
    let (path, pointer) = match &cp.check {
        Check::JsonRecords { path, pointer, .. } | Check::JsonStringSet { path, pointer, .. } => {
            (path.clone(), pointer.as_str())
        }
        Check::All(subs) => match subs.first() {
            Some(Check::JsonRecords { path, pointer, .. }) => (path.clone(), pointer.as_str()),
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let mut out = vec![(path.clone(), String::new())];
    if let Some(input) = stage_input(task, scenario) {
        out.push((path.clone(), input));
    }
    let raw_signups = || -> Vec<SignUp> {
        let mut all = parse_signups(text_of(scenario, "_form_responses.csv").unwrap_or(""));
        all.extend(parse_signups(
            text_of(scenario, "_email_replies.csv").unwrap_or(""),
        ));
        all
    };
    let claim_rows = || {
        scenario
            .files
            .iter()
            .find(|f| f.path.contains("/expense_claims_"))
            .and_then(|f| match &f.content {
                Content::Text(t) => Some(csv_rows(t)),
                Content::Sidecar { .. } | Content::Drawing(_) => None,
            })
            .unwrap_or_default()
    };
    let every = match pointer {
        // Both lists concatenated: duplicates kept.
        "/attendees" => {
            json!({"attendees": raw_signups().iter().map(|s| json!({"email": s.email, "team": s.team})).collect::<Vec<_>>()})
        }
        "/teams" => {
            let raw: Vec<(String, String)> = raw_signups()
                .into_iter()
                .map(|s| (s.email, s.team))
                .collect();
            json!({"teams": team_counts(&raw).iter().map(|(t, c)| json!({"team": t, "count": c})).collect::<Vec<_>>()})
        }
        // Amounts left unconverted.
        "/claims" => {
            json!({"claims": claim_rows().iter().map(|r| json!({"claim_id": r[0], "cost_centre": r[3], "amount_eur": r[5].parse::<f64>().unwrap_or(0.0)})).collect::<Vec<_>>()})
        }
        "/totals" => {
            let mut m: BTreeMap<String, f64> = BTreeMap::new();
            for r in claim_rows() {
                *m.entry(r[3].clone()).or_default() += r[5].parse::<f64>().unwrap_or(0.0);
            }
            json!({"totals": m.iter().map(|(c, t)| json!({"cost_centre": c, "total_eur": t})).collect::<Vec<_>>()})
        }
        "/over_budget" => {
            let all: BTreeSet<String> = claim_rows().into_iter().map(|r| r[3].clone()).collect();
            json!({"over_budget": all})
        }
        // Movements ignored.
        "/stock" => {
            let rows = csv_rows(
                scenario
                    .files
                    .iter()
                    .find(|f| f.path.contains("/opening_stock_"))
                    .and_then(|f| match &f.content {
                        Content::Text(t) => Some(t.as_str()),
                        Content::Sidecar { .. } | Content::Drawing(_) => None,
                    })
                    .unwrap_or(""),
            );
            json!({"stock": rows.iter().map(|r| json!({"sku": r[0], "closing": r[2].parse::<i64>().unwrap_or(0)})).collect::<Vec<_>>()})
        }
        // Every SKU ordered up to target, reorder points ignored.
        "/orders" => {
            let rows = csv_rows(text_of(scenario, "reorder_levels.csv").unwrap_or(""));
            json!({"orders": rows.iter().map(|r| json!({"sku": r[0], "quantity": r[2].parse::<i64>().unwrap_or(0)})).collect::<Vec<_>>()})
        }
        _ => Value::Null,
    };
    if !every.is_null() {
        out.push((path, every.to_string()));
    }
    out
}

/// Trivially wrong messages for a message stage (every candidate, or the wrong
/// total alone).
pub fn wrong_messages(task: &TaskSpec) -> Vec<(String, String)> {
    super::urgent_interrupt::wrong_messages(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn su(email: &str, team: &str) -> SignUp {
        SignUp {
            name: String::new(),
            email: email.into(),
            team: team.into(),
        }
    }

    #[test]
    fn merge_keys_on_lowercased_email_and_the_form_wins() {
        let form = [su("a@x", "Sales"), su("b@x", "Finance"), su("a@x", "Sales")];
        let mail = [su("A@X", "Product"), su("c@x", "Product")];
        assert_eq!(
            merge(&form, &mail),
            [
                ("a@x".to_owned(), "Sales".to_owned()),
                ("b@x".to_owned(), "Finance".to_owned()),
                ("c@x".to_owned(), "Product".to_owned()),
            ]
        );
        let counts = team_counts(&merge(&form, &mail));
        assert_eq!(
            counts,
            [
                ("Finance".to_owned(), 1),
                ("Product".to_owned(), 1),
                ("Sales".to_owned(), 1)
            ]
        );
        assert_eq!(
            tables(&[("T".into(), 9), ("U".into(), 8)], 8),
            [("T".to_owned(), 2), ("U".to_owned(), 1)]
        );
    }

    #[test]
    fn conversion_rounds_half_up_to_the_cent() {
        assert_eq!(to_eur_cents(10_000, 9_213), 9_213);
        // 1.00 * 0.0870 = 0.087 -> 0.09
        assert_eq!(to_eur_cents(100, 870), 9);
        // 0.50 * 0.0870 = 0.0435 -> 0.04
        assert_eq!(to_eur_cents(50, 870), 4);
        assert_eq!(money(123_405), "1234.05");
    }

    #[test]
    fn stock_and_reorder_rules() {
        let opening = vec![
            ("S1".to_owned(), 10),
            ("S2".to_owned(), 5),
            ("S3".to_owned(), 7),
        ];
        let moves = vec![
            ("S1".to_owned(), -4),
            ("S1".to_owned(), 2),
            ("S2".to_owned(), -5),
        ];
        let stock = closing(&opening, &moves);
        assert_eq!(
            stock,
            [
                ("S1".to_owned(), 8),
                ("S2".to_owned(), 0),
                ("S3".to_owned(), 7)
            ]
        );
        let levels: BTreeMap<String, (i64, i64)> = [
            ("S1".to_owned(), (9, 20)),
            ("S2".to_owned(), (1, 6)),
            ("S3".to_owned(), (7, 30)),
        ]
        .into();
        // S3 sits exactly on its point: not reordered.
        assert_eq!(
            reorder(&stock, &levels),
            [("S1".to_owned(), 12), ("S2".to_owned(), 6)]
        );
    }

    #[test]
    fn csv_rows_respect_quotes() {
        assert_eq!(
            csv_rows("h\nSKU-1,\"Paper, box\",4"),
            [vec![
                "SKU-1".to_owned(),
                "Paper, box".to_owned(),
                "4".to_owned()
            ]]
        );
    }

    #[test]
    fn every_variant_is_listed_once() {
        let v = variants();
        assert_eq!(v.len(), 6);
        let keys: BTreeSet<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 6);
    }
}
