//! Changed requirement: a colleague changes a parameter of a task already running.
//!
//! The model: a colleague asks the intern to select the large items of last month
//! from a table on the drive (refund requests, expense claims or purchase orders):
//! items dated within a range with an amount of at least a threshold. The intern
//! saves their IDs and messages the total amount to the colleague. After release, a
//! timed message from the same colleague changes exactly one parameter:
//! - `Threshold`: a different minimum amount;
//! - `Range`: a different date range (the end extended, or the start moved later);
//! - `Format`: the file must list `{"id", "amount"}` records instead of IDs;
//! - `Recipient`: the total goes to another colleague instead.
//!
//! Checkpoints follow the latest requirement only, so the answer to the original
//! specification fails whichever part the change touched (the selection, the
//! format or the recipient), while untouched parts still count when done early.
//! The change arrives `Early` (8-30% into the release-to-deadline window, while a
//! typical agent is still working) or `Late` (55-75% in, after a natural finish,
//! so the agent must notice and redo finished work). The data are built so the
//! change always alters the answer: a planted item sits between the old and new
//! thresholds or dates, and the new selection is a strict subset or superset of
//! the old one, so its total differs. Message checkpoints forbid the old total
//! and the grand total, and no total can be mistaken for a year.
//!
//! Differences from the reference: this family does not exist there (the
//! reference has no timed messages); it is new here. It sets its own message time,
//! so it accepts only `Start` or `At` releases.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::urgent_interrupt::{hm, release_minute, shift_date, to_min, year_month};
use super::{Ctx, Parts, corpus, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::{
    Check, CheckpointSpec, Content, FileSpec, Gate, Record, Scenario, TaskSpec, TimedEvent,
    WorldChange,
};

/// Which parameter the colleague changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    /// The minimum amount.
    Threshold,
    /// The date range.
    Range,
    /// The answer file's shape.
    Format,
    /// Who gets the total.
    Recipient,
}

/// When the change arrives, relative to the release-to-deadline window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Timing {
    /// Before the midpoint (8-30% in).
    Early,
    /// After the midpoint (55-75% in).
    Late,
}

/// Parameters; unset ones are drawn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// What changes.
    #[serde(default)]
    pub change: Option<Change>,
    /// When.
    #[serde(default)]
    pub timing: Option<Timing>,
    /// When the change message arrives, `HH:MM` (overrides `timing`'s draw).
    #[serde(default)]
    pub at: Option<String>,
    /// Rows in the table (20-40).
    #[serde(default)]
    pub rows: Option<u8>,
}

const CHANGES: [(Change, &str); 4] = [
    (Change::Threshold, "threshold"),
    (Change::Range, "range"),
    (Change::Format, "format"),
    (Change::Recipient, "recipient"),
];
const TIMINGS: [(Timing, &str); 2] = [(Timing::Early, "early"), (Timing::Late, "late")];

struct Theme {
    plural: &'static str,
    prefix: &'static str,
    dept: &'static str,
    stem: &'static str,
    party: &'static str,
    purpose: &'static str,
}

const THEMES: &[Theme] = &[
    Theme {
        plural: "refund requests",
        prefix: "RF",
        dept: "Sales",
        stem: "refund_requests",
        party: "customer",
        purpose: "the refunds review with the auditors",
    },
    Theme {
        plural: "expense claims",
        prefix: "EX",
        dept: "Finance",
        stem: "expense_claims",
        party: "employee",
        purpose: "the month-end expense audit",
    },
    Theme {
        plural: "purchase orders",
        prefix: "PO",
        dept: "Engineering",
        stem: "purchase_orders",
        party: "supplier",
        purpose: "the quarterly spend review",
    },
];

const THRESHOLDS: [u32; 5] = [200, 250, 300, 400, 500];

/// One table row: (day of month, amount, party).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    day: u32,
    amount: u32,
    party: String,
}

/// The selection rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spec {
    from: u32,
    to: u32,
    min: u32,
}

impl Spec {
    fn picks(&self, r: &Row) -> bool {
        (self.from..=self.to).contains(&r.day) && r.amount >= self.min
    }
}

fn total(rows: &[Row], spec: Spec) -> u32 {
    rows.iter()
        .filter(|r| spec.picks(r))
        .map(|r| r.amount)
        .sum()
}

fn year_like(v: u32) -> bool {
    (1_900..=2_100).contains(&v)
}

/// Makes the data fit both specs: each selects at least two rows, a row separates
/// them, and no total (old, new, all rows) reads like a year or is below 100.
fn fit(rows: &mut Vec<Row>, old: Spec, new: Spec, rng: &mut StreamRng, parties: &[String]) {
    let party = |rng: &mut StreamRng| parties[rng.random_range(0..parties.len())].clone();
    for spec in [old, new] {
        while rows.iter().filter(|r| spec.picks(r)).count() < 2 {
            let lo = old.min.max(new.min);
            rows.push(Row {
                day: rng.random_range(old.from.max(new.from)..=old.to.min(new.to)),
                amount: rng.random_range(lo..=lo + 1_500),
                party: party(rng),
            });
        }
    }
    if old != new && !rows.iter().any(|r| old.picks(r) != new.picks(r)) {
        // A row picked by exactly one of the specs.
        let (day, amount) = if old.min != new.min {
            let (lo, hi) = (old.min.min(new.min), old.min.max(new.min));
            (
                rng.random_range(old.from.max(new.from)..=old.to.min(new.to)),
                rng.random_range(lo..hi),
            )
        } else {
            let (wide, narrow) = if (new.from..=new.to).contains(&old.from)
                && (new.from..=new.to).contains(&old.to)
            {
                (new, old)
            } else {
                (old, new)
            };
            let outside: Vec<u32> = (wide.from..=wide.to)
                .filter(|d| !(narrow.from..=narrow.to).contains(d))
                .collect();
            (
                outside[rng.random_range(0..outside.len())],
                rng.random_range(old.min..=old.min + 1_200),
            )
        };
        rows.push(Row {
            day,
            amount,
            party: party(rng),
        });
    }
    let everything = Spec {
        from: 1,
        to: 31,
        min: 0,
    };
    for _ in 0..50 {
        let bad = [old, new, everything].iter().any(|s| {
            let t = total(rows, *s);
            year_like(t) || t < 100
        });
        if !bad {
            break;
        }
        // Raise the largest row picked by both specs: every total moves together
        // and no row changes side.
        if let Some(r) = rows
            .iter_mut()
            .filter(|r| old.picks(r) && new.picks(r))
            .max_by_key(|r| r.amount)
        {
            r.amount += 211;
        }
    }
}

/// The variants: what changes x when.
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for (change, cname) in CHANGES {
        for (timing, tname) in TIMINGS {
            v.push((
                format!("changed_requirement/{cname}/{tname}"),
                Params {
                    change: Some(change),
                    timing: Some(timing),
                    ..Params::default()
                },
            ));
        }
    }
    v
}

fn ordinal(d: u32) -> String {
    let suffix = match (d % 10, d % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{d}{suffix}")
}

fn first_name(full: &str) -> &str {
    full.split_whitespace().next().unwrap_or(full)
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut draw = ctx.rng("params");
    let change = p
        .change
        .unwrap_or_else(|| CHANGES[draw.random_range(0..CHANGES.len())].0);
    let timing = p
        .timing
        .unwrap_or_else(|| TIMINGS[draw.random_range(0..TIMINGS.len())].0);
    let n_rows = p.rows.unwrap_or_else(|| draw.random_range(24..=36));
    if !(20..=40).contains(&n_rows) {
        return Err(format!(
            "changed_requirement parameters out of range: rows {n_rows} (20-40)"
        ));
    }
    let cname = CHANGES.iter().find(|c| c.0 == change).map_or("", |c| c.1);

    let mut rng = ctx.rng("data");
    let theme = &THEMES[rng.random_range(0..THEMES.len())];
    let assigner = ctx
        .company
        .managers(theme.dept)
        .first()
        .copied()
        .ok_or_else(|| format!("{} has no manager", theme.dept))?;
    let staff = ctx.company.staff(theme.dept);
    if staff.is_empty() {
        return Err(format!("{} has no staff (raise company_size)", theme.dept));
    }
    let deputy = staff[rng.random_range(0..staff.len())];

    // Last month's calendar.
    let (y, m) = year_month(ctx.date)?;
    let first_this = format!("{y:04}-{m:02}-01");
    let last_prev = shift_date(&first_this, -1)?;
    let month_prefix = &last_prev[..7];
    let days: u32 = last_prev[8..].parse().map_err(|_| "bad date")?;
    let month_name = super::MONTHS[last_prev[5..7].parse::<usize>().map_err(|_| "bad date")? - 1];

    // The original rule and the changed one.
    let t0 = THRESHOLDS[rng.random_range(0..THRESHOLDS.len())];
    let from = rng.random_range(1..=6);
    let to = (from + rng.random_range(12..=17)).min(days - 4);
    let old = Spec { from, to, min: t0 };
    let new = match change {
        Change::Threshold => {
            let deltas: Vec<i32> = [-100, -50, 100, 150]
                .into_iter()
                .filter(|d| t0 as i32 + d >= 100)
                .collect();
            Spec {
                min: (t0 as i32 + deltas[rng.random_range(0..deltas.len())]) as u32,
                ..old
            }
        }
        Change::Range => {
            if rng.random_bool(0.5) {
                Spec { to: days, ..old }
            } else {
                Spec {
                    from: from + rng.random_range(4..=7),
                    ..old
                }
            }
        }
        Change::Format | Change::Recipient => old,
    };

    let parties: Vec<String> = match theme.party {
        "employee" => ctx
            .company
            .non_executives()
            .iter()
            .map(|p| p.name.clone())
            .collect(),
        _ => {
            let combos = corpus::SUPPLIER_PREFIXES.len() * corpus::SUPPLIER_SUFFIXES.len();
            super::pick_distinct(&mut rng, combos, 12)
                .into_iter()
                .map(|i| {
                    format!(
                        "{} {}",
                        corpus::SUPPLIER_PREFIXES[i / corpus::SUPPLIER_SUFFIXES.len()],
                        corpus::SUPPLIER_SUFFIXES[i % corpus::SUPPLIER_SUFFIXES.len()]
                    )
                })
                .collect()
        }
    };
    let low = old.min.min(new.min);
    let mut rows: Vec<Row> = (0..n_rows)
        .map(|_| {
            let amount = if rng.random_bool(0.55) {
                rng.random_range(25..low)
            } else {
                rng.random_range(low..=2_400)
            };
            Row {
                day: rng.random_range(1..=days),
                amount,
                party: parties[rng.random_range(0..parties.len())].clone(),
            }
        })
        .collect();
    fit(&mut rows, old, new, &mut rng, &parties);
    rows.sort();
    let mut used = BTreeSet::new();
    let ids: Vec<String> = rows
        .iter()
        .map(|_| {
            loop {
                let id = format!("{}-{}", theme.prefix, rng.random_range(10_000..100_000u32));
                if used.insert(id.clone()) {
                    break id;
                }
            }
        })
        .collect();
    let mut csv = format!("id,date,{},amount_eur\n", theme.party);
    for (r, id) in rows.iter().zip(&ids) {
        let _ = writeln!(
            csv,
            "{id},{month_prefix}-{:02},{},{}",
            r.day, r.party, r.amount
        );
    }
    let selected = |spec: Spec| -> Vec<(String, u32)> {
        rows.iter()
            .zip(&ids)
            .filter(|(r, _)| spec.picks(r))
            .map(|(r, id)| (id.clone(), r.amount))
            .collect()
    };
    let (old_sel, new_sel) = (selected(old), selected(new));
    let (old_total, new_total) = (total(&rows, old), total(&rows, new));
    let grand: u32 = rows.iter().map(|r| r.amount).sum();

    // Timing of the change.
    let rel = release_minute(ctx, "changed_requirement")?;
    let dl = to_min(ctx.deadline).ok_or("bad deadline")?;
    if dl < rel + 120 {
        return Err(format!(
            "changed_requirement needs at least two hours between release ({}) and deadline ({})",
            hm(rel),
            ctx.deadline
        ));
    }
    let window = dl - rel;
    let at = match &p.at {
        Some(a) => {
            let t = to_min(a).ok_or_else(|| format!("`at` must be HH:MM, found `{a}`"))?;
            if t < rel + 5 || t + 45 > dl {
                return Err(format!(
                    "`at` {a} must fall between {} and {} (after the release, 45 minutes before the deadline)",
                    hm(rel + 5),
                    hm(dl - 45)
                ));
            }
            t
        }
        None => {
            let mut when = ctx.rng("timing");
            let (lo, hi) = match timing {
                Timing::Early => ((window * 8 / 100).max(10), window * 30 / 100),
                Timing::Late => (window * 55 / 100, (window * 75 / 100).min(window - 45)),
            };
            rel + when.random_range(lo..=hi.max(lo))
        }
    };
    // The label follows the actual time, so a pinned `at` cannot mislabel a variant.
    let early = at - rel < window / 2;
    if p.timing.is_some_and(|t| (t == Timing::Early) != early) {
        return Err(format!(
            "`at` {} falls in the {} half of the window, which contradicts `timing`",
            hm(at),
            if early { "first" } else { "second" }
        ));
    }
    let tname = if early { "early" } else { "late" };
    let at_ts = ctx.at(&hm(at));

    let task = ctx.task_key();
    let data = format!(
        "{}/{}_{}.csv",
        ctx.folder(&format!(
            "drive/{}/monthly",
            super::company::slug(theme.dept)
        )),
        theme.stem,
        month_prefix.replace('-', "_")
    );
    let out = format!("workspace/large_{}{}.json", theme.stem, ctx.suffix());
    let recipient = if change == Change::Recipient {
        deputy
    } else {
        assigner
    };
    let range_text = |s: Spec| format!("{} to {} {month_name}", ordinal(s.from), ordinal(s.to));
    let me = first_name(super::company::INTERN_NAME);
    let change_text = match change {
        Change::Threshold => format!(
            "{me}, a change on the large {}: the auditors want everything from {} EUR up, not {} EUR. Dates, file and format stay as they are; the total should cover the new selection.",
            theme.plural, new.min, old.min
        ),
        Change::Range => format!(
            "{me}, a change on the large {}: please cover {} instead of {}. The threshold, file and format stay the same; the total should cover the new selection.",
            theme.plural,
            range_text(new),
            range_text(old)
        ),
        Change::Format => format!(
            "{me}, a change on the large {}: please include the amounts. Save `{out}` as {{\"items\": [{{\"id\": \"...\", \"amount\": ...}}]}} instead of the plain ID list. The selection and everything else stay the same.",
            theme.plural
        ),
        Change::Recipient => format!(
            "{me}, a change on the large {}: please send the total to {} instead of me; {} is putting the pack together. Everything else stays the same.",
            theme.plural,
            deputy.name,
            first_name(&deputy.name)
        ),
    };

    let ids_json = |sel: &[(String, u32)]| {
        json!({"ids": sel.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>()}).to_string()
    };
    let items_json = |sel: &[(String, u32)]| {
        json!({"items": sel.iter().map(|(i, a)| json!({"id": i, "amount": a})).collect::<Vec<_>>()})
            .to_string()
    };
    let total_msg = |n: usize, t: u32| {
        format!(
            "The {n} large {} selected come to {t} EUR in total.",
            theme.plural
        )
    };
    let list_check = match change {
        Change::Format => Check::JsonRecords {
            path: out.clone(),
            pointer: "/items".into(),
            expected: new_sel
                .iter()
                .map(|(i, a)| {
                    let mut r = Record::default();
                    r.text.insert("id".into(), i.clone());
                    r.numbers.insert("amount".into(), f64::from(*a));
                    r
                })
                .collect(),
            tolerance: 0.0,
        },
        _ => Check::JsonStringSet {
            path: out.clone(),
            pointer: "/ids".into(),
            expected: new_sel.iter().map(|(i, _)| i.clone()).collect(),
        },
    };
    let mut absent: Vec<String> = Vec::new();
    if old_total != new_total {
        absent.push(old_total.to_string());
    }
    // Every row at once: the "list everything" answer, whenever it is wrong.
    if grand != new_total {
        absent.push(grand.to_string());
    }
    let message_changed = matches!(
        change,
        Change::Threshold | Change::Range | Change::Recipient
    );
    let since = if message_changed {
        at_ts.clone()
    } else {
        ctx.at(&hm(rel))
    };

    let mut check_msgs = step("read_messages", json!({"with": assigner.key}));
    check_msgs.gate = Gate::NotBefore(at_ts.clone());
    // The oracle does the original selection first, then rereads the colleague's
    // messages at the change and redoes what it touched. It sends the total only
    // after the change: in a busy day an earlier send could slip past the change
    // and quote an outdated figure.
    let mut plan = vec![
        step("read_file", json!({"path": data})),
        step(
            "write_file",
            json!({"path": out, "content": ids_json(&old_sel)}),
        ),
        check_msgs,
    ];
    match change {
        Change::Threshold | Change::Range => plan.push(step(
            "write_file",
            json!({"path": out, "content": ids_json(&new_sel)}),
        )),
        Change::Format => plan.push(step(
            "write_file",
            json!({"path": out, "content": items_json(&new_sel)}),
        )),
        Change::Recipient => {}
    }
    plan.push(step(
        "send_message",
        json!({"to": recipient.key, "text": total_msg(new_sel.len(), new_total)}),
    ));

    let spec = ctx
        .task_spec::<super::meta_task::ChangedRequirement>(format!(
            "changed_requirement/{cname}/{tname}"
        ))
        .key(task.clone())
        .title(format!("Select last month's large {}", theme.plural))
        .objective(format!(
            "{} needs last month's large {} for {}. In `{data}`, select the {} dated {} (inclusive) with an amount of at least {} EUR. Save their IDs to `{out}` as {{\"ids\": [\"...\"]}}, then message {} the total amount of the selected {}. {} is still agreeing the details and may send changes before the deadline; the latest instructions count.",
            assigner.name,
            theme.plural,
            theme.purpose,
            theme.plural,
            range_text(old),
            old.min,
            first_name(&assigner.name),
            theme.plural,
            first_name(&assigner.name),
        ))
        .assigned_by(assigner.key.clone())
        .checkpoints(vec![
            CheckpointSpec {
                key: "list_correct".into(),
                description: format!("`{out}` holds exactly the items the latest instructions select, in the latest format"),
                weight: 2,
                check: list_check,
                feedback: format!(
                    "The list in `{out}` does not follow the latest instructions. {} changed the request after assigning it: re-read their messages, apply every current condition (dates inclusive, amount at least the threshold) and save the file in the shape asked for last.",
                    assigner.name
                ),
            },
            CheckpointSpec {
                key: "total_sent".into(),
                description: "The total of the current selection was messaged to the person the latest instructions name".into(),
                weight: 1,
                check: Check::MessageSent {
                    to: recipient.key.clone(),
                    contains: vec![new_total.to_string()],
                    absent,
                    after: Some(since),
                },
                feedback: "The right total did not reach the right person after the last change. Add up the amounts of exactly the items the current rule selects and message that one figure to whoever the latest instructions name; an outdated total counts as wrong.".into(),
            },
        ])
        .hints(vec![
            format!("Keep reading {}'s messages while you work on this; the request can change.", assigner.name),
            "When a change arrives, redo every part it affects: the selection, the file's shape, the total or who receives it.".into(),
            "Only the latest instructions count: the total is the sum of the amounts of exactly the items in your final list.".into(),
        ])
        .plan(plan, 0)
        .build();
    Ok(Parts {
        tasks: vec![spec],
        files: vec![FileSpec {
            path: data,
            content: Content::Text(csv),
        }],
        meetings: Vec::new(),
        clues: Vec::new(),
        events: vec![TimedEvent {
            at: at_ts,
            change: WorldChange::Message {
                from: assigner.key.clone(),
                text: change_text,
            },
        }],
        ..Default::default()
    })
}

/// Trivially wrong workspace answers: an empty file, the copied table, and every
/// row's ID (or record) in the requested shape.
pub fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(cp) = task.checkpoints.iter().find(|c| c.key == "list_correct") else {
        return out;
    };
    let (path, records) = match &cp.check {
        Check::JsonStringSet { path, .. } => (path.clone(), false),
        Check::JsonRecords { path, .. } => (path.clone(), true),
        _ => return out,
    };
    out.push((path.clone(), String::new()));
    let table = scenario.files.iter().find(|f| {
        f.path.ends_with(".csv") && f.path.contains("/monthly") && task.objective.contains(&f.path)
    });
    if let Some(FileSpec {
        content: Content::Text(csv),
        ..
    }) = table
    {
        out.push((path.clone(), csv.clone()));
        let rows: Vec<Vec<String>> = tbsim_scenario::check::parse_csv(csv)
            .unwrap_or_default()
            .into_iter()
            .skip(1)
            .collect();
        let all = if records {
            json!({"items": rows.iter().map(|r| json!({"id": r[0], "amount": r[3].parse::<u32>().unwrap_or(0)})).collect::<Vec<_>>()})
        } else {
            json!({"ids": rows.iter().map(|r| &r[0]).collect::<Vec<_>>()})
        };
        out.push((path, all.to_string()));
    }
    out
}

/// Trivially wrong messages (every candidate, or a wrong total alone).
pub fn wrong_messages(task: &TaskSpec) -> Vec<(String, String)> {
    super::urgent_interrupt::wrong_messages(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(rng: &mut StreamRng, n: usize, low: u32) -> Vec<Row> {
        (0..n)
            .map(|_| Row {
                day: rng.random_range(1..=30),
                amount: rng.random_range(25..=low + 600),
                party: "X".into(),
            })
            .collect()
    }

    #[test]
    fn fitted_data_always_separates_the_specs() {
        let parties = vec!["A".to_owned(), "B".to_owned()];
        for seed in 0..300 {
            let mut rng = tbsim_core::rng::stream(seed, "fit");
            let old = Spec {
                from: rng.random_range(1..=6),
                to: rng.random_range(18..=24),
                min: 300,
            };
            let new = match seed % 3 {
                0 => Spec { min: 400, ..old },
                1 => Spec { to: 30, ..old },
                _ => Spec {
                    from: old.from + 5,
                    ..old
                },
            };
            let n = rng.random_range(0..12);
            let mut rows = rows_of(&mut rng, n, 300);
            fit(&mut rows, old, new, &mut rng, &parties);
            let a: Vec<&Row> = rows.iter().filter(|r| old.picks(r)).collect();
            let b: Vec<&Row> = rows.iter().filter(|r| new.picks(r)).collect();
            assert!(a.len() >= 2 && b.len() >= 2, "seed {seed}");
            assert_ne!(a, b, "seed {seed}: the change must alter the selection");
            let (ta, tb) = (total(&rows, old), total(&rows, new));
            assert_ne!(ta, tb, "seed {seed}: nested selections differ in total");
            for t in [ta, tb, rows.iter().map(|r| r.amount).sum()] {
                assert!(!year_like(t) && t >= 100, "seed {seed}: total {t}");
            }
        }
    }

    #[test]
    fn specs_select_inclusively() {
        let s = Spec {
            from: 3,
            to: 10,
            min: 300,
        };
        let r = |day, amount| Row {
            day,
            amount,
            party: String::new(),
        };
        assert!(s.picks(&r(3, 300)));
        assert!(s.picks(&r(10, 999)));
        assert!(!s.picks(&r(11, 999)));
        assert!(!s.picks(&r(5, 299)));
    }

    #[test]
    fn ordinals() {
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(3), "3rd");
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(ordinal(30), "30th");
    }
}
