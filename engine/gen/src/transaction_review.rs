//! Transaction review: find the suppliers whose payments look like split purchases.
//!
//! A transactions table holds normal suppliers (rated, monthly, long history; steady
//! or seasonal amounts) and abnormal ones (no rating, short history, several payments
//! a month, each just under the single-approval limit). Finance holds the review
//! manual. When there are at least three normal suppliers, one of them is new but
//! legitimate, so a single sign is never enough. Differences from the reference:
//! dates follow the scenario's clock, supplier names are unique, approvers belong to
//! the requesting department, zero-abnormal instances are fully scorable and false
//! positives fail the answer checkpoint.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_scenario::{Check, CheckpointSpec, Clue, Content, FileSpec, Gate, TaskSpec};

/// Parameters; unset ones are drawn uniformly from the reference's space.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Normal suppliers (2-5).
    #[serde(default)]
    pub normal: Option<u8>,
    /// Abnormal suppliers (0-2).
    #[serde(default)]
    pub abnormal: Option<u8>,
}

/// The manual's drive path.
pub const MANUAL: &str = "drive/finance/review/transaction_review_manual.md";
/// Where the report goes.
pub const REPORT: &str = "workspace/transaction_review_report.json";
const HISTORY_MONTHS: u32 = 8;
/// Single-approval limits a scenario's manual may state.
const LIMITS: [u64; 8] = [4_000, 5_000, 6_000, 7_500, 8_000, 9_000, 10_000, 12_000];

struct Row {
    date: (i32, u32, u32),
    supplier: usize,
    amount_cents: u64,
}

fn month_back(y: i32, m: u32, back: u32) -> (i32, u32) {
    let idx = y * 12 + m as i32 - 1 - back as i32;
    (idx.div_euclid(12), idx.rem_euclid(12) as u32 + 1)
}

/// The variants: every (normal, abnormal) pair.
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for normal in 2..=5u8 {
        for abnormal in 0..=2u8 {
            v.push((
                format!("transaction_review/n{normal}-a{abnormal}"),
                Params {
                    normal: Some(normal),
                    abnormal: Some(abnormal),
                },
            ));
        }
    }
    v
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("transactions");
    let report = format!("workspace/transaction_review_report{}.json", ctx.suffix());
    let normal = p.normal.unwrap_or_else(|| rng.random_range(2..=5));
    // Zero abnormal suppliers (an empty list to report) is one draw in eight, not one
    // in three: a suite holds a handful of reviews, and with a third of them `[]` it
    // often crossed a quarter (issue 26). One and two share the rest.
    let abnormal = p
        .abnormal
        .unwrap_or_else(|| match rng.random_range(0..8u8) {
            0 => 0,
            1..=4 => 1,
            _ => 2,
        });
    if !(2..=5).contains(&normal) || abnormal > 2 {
        return Err(format!(
            "transaction_review parameters out of range: normal {normal} (2-5), abnormal {abnormal} (0-2)"
        ));
    }
    // The manual lives at one drive path for the whole scenario, so its approval limit
    // is a fact of the company, drawn once per scenario: a day-2 review must be judged
    // against the same manual the agent can read (two days used to write two versions
    // of one path and only the first survived). Eight values keep a guess unlikely.
    let limit = tbsim_core::rng::stream(
        ctx.seed,
        &format!("gen/{}/transaction_review/approval_limit", ctx.scenario),
    )
    .random_range(0..LIMITS.len());
    let limit = LIMITS[limit];
    // The manual also states a larger sign-off threshold and a smaller petty-cash one,
    // so the limit is neither the manual's largest number nor its only one (issue 26):
    // it has to be read where the manual defines it.
    let mut figures = tbsim_core::rng::stream(
        ctx.seed,
        &format!("gen/{}/transaction_review/thresholds", ctx.scenario),
    );
    let director = limit * figures.random_range(3..=6u64);
    let petty = [150u64, 200, 250, 300][figures.random_range(0..4)];
    // Four more thresholds drawn from the limit's own values (an earlier version's
    // limit, a purchase-order threshold, a corporate-card limit and a tender
    // threshold), each said once in the manual like the limit: the five are alike
    // in size, grid and count, so no order statistic, round grid or recurrence
    // singles the limit out (issue 37: the median of the manual's figures did), and
    // a pick among them is right one time in five; only the sentence that defines
    // the limit tells it.
    let others: Vec<u64> = LIMITS.iter().copied().filter(|l| *l != limit).collect();
    let four = pick_distinct(&mut figures, others.len(), 4);
    let (old_limit, po_threshold, card_limit, tender) = (
        others[four[0]],
        others[four[1]],
        others[four[2]],
        others[four[3]],
    );
    let (y, m) = {
        let mut parts = ctx.date.split('-');
        let y: i32 = parts
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or("bad date")?;
        let m: u32 = parts
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or("bad date")?;
        (y, m)
    };
    let n = usize::from(normal + abnormal);
    let picks = pick_distinct(
        &mut rng,
        corpus::SUPPLIER_PREFIXES.len() * corpus::SUPPLIER_SUFFIXES.len(),
        n,
    );
    let names: Vec<String> = picks
        .iter()
        .map(|i| {
            format!(
                "{} {}",
                corpus::SUPPLIER_PREFIXES[i / corpus::SUPPLIER_SUFFIXES.len()],
                corpus::SUPPLIER_SUFFIXES[i % corpus::SUPPLIER_SUFFIXES.len()]
            )
        })
        .collect();
    // Suppliers 0..normal are normal; the rest abnormal. The table does not reveal this order.
    let depts: Vec<&str> = [
        "Engineering",
        "Sales",
        "Marketing",
        "Product",
        "Human Resources",
        "Finance",
    ]
    .to_vec();
    let mut rows: Vec<Row> = Vec::new();
    let mut ratings = Vec::new();
    let mut supplier_dept = Vec::new();
    for s in 0..n {
        let dept = depts[rng.random_range(0..depts.len())];
        supplier_dept.push(dept);
        if s < usize::from(normal) {
            ratings.push(if rng.random_bool(0.5) { "A" } else { "B" });
            let new_but_fine = normal >= 3 && s == 0;
            let months = if new_but_fine {
                rng.random_range(4..HISTORY_MONTHS)
            } else {
                rng.random_range(18..=30)
            };
            let seasonal = rng.random_bool(0.5);
            let base = rng.random_range(1_200..=(limit * 55 / 100)) as f64;
            let day_anchor = if seasonal { 15 } else { 5 };
            for back in (1..=months).rev() {
                let (yy, mm) = month_back(y, m, back);
                let season = if seasonal {
                    1.0 + 0.35 * ((f64::from(mm) - 1.0) / 12.0 * std::f64::consts::TAU).sin()
                } else {
                    1.0
                };
                let growth = 1.0 + 0.04 * f64::from(months - back) / 12.0;
                let noise = rng.random_range(0.92..1.08);
                let amount = (base * season * growth * noise * 100.0).round() as u64;
                let day = (day_anchor + rng.random_range(0..=6u32))
                    .saturating_sub(3)
                    .clamp(1, 28);
                rows.push(Row {
                    date: (yy, mm, day),
                    supplier: s,
                    amount_cents: amount.min(limit * 85),
                });
            }
        } else {
            ratings.push("");
            let months = rng.random_range(4..=6u32);
            for back in (1..=months).rev() {
                let (yy, mm) = month_back(y, m, back);
                let k = rng.random_range(2..=4usize);
                let mut days: Vec<u32> = pick_distinct(&mut rng, 28, k)
                    .into_iter()
                    .map(|d| d as u32 + 1)
                    .collect();
                days.sort();
                for day in days {
                    let share = rng.random_range(0.955..0.995);
                    rows.push(Row {
                        date: (yy, mm, day),
                        supplier: s,
                        amount_cents: (limit as f64 * share * 100.0).round() as u64,
                    });
                }
            }
        }
    }
    rows.sort_by_key(|r| (r.date, r.supplier));
    let mut ids = BTreeSet::new();
    let mut csv = String::from(
        "transaction_id,date,supplier,supplier_rating,department,requested_by,approved_by,amount\n",
    );
    for r in &rows {
        let id = loop {
            let id = rng.random_range(100_000..1_000_000u32);
            if ids.insert(id) {
                break id;
            }
        };
        let dept = supplier_dept[r.supplier];
        let staff = ctx.company.staff(dept);
        let requester = staff
            .get(rng.random_range(0..staff.len().max(1)))
            .map_or("", |p| p.name.as_str());
        let approver = ctx
            .company
            .managers(dept)
            .first()
            .map_or("", |p| p.name.as_str());
        let (yy, mm, dd) = r.date;
        let _ = writeln!(
            csv,
            "TRX-{id},{yy:04}-{mm:02}-{dd:02},{},{},{dept},{requester},{approver},{}.{:02}",
            names[r.supplier],
            ratings[r.supplier],
            r.amount_cents / 100,
            r.amount_cents % 100
        );
    }
    let table = format!("workspace/transactions_{}.csv", ctx.id.replace('-', "_"));
    let abnormal_names: Vec<String> = names[usize::from(normal)..].to_vec();

    let finance = ctx.company.department("Finance");
    if finance.is_empty() {
        return Err("the company has no Finance department".into());
    }
    let task = ctx.task_key();
    let clues: Vec<(String, Clue)> = finance
        .iter()
        .map(|p| {
            (p.key.clone(), Clue {
                key: format!("clue/{}/{}", ctx.id, slug(&p.name)),
                task: Some(task.clone()),
                trigger: vec![
                    ["transaction", "supplier", "payment", "invoice"].iter().map(|s| (*s).to_owned()).collect(),
                    ["review", "manual", "abnormal", "where", "how", "criteria", "criterion", "method", "flag", "sign", "red flag", "spot", "identify", "detect", "format", "template"]
                        .iter().map(|s| (*s).to_owned()).collect(),
                ],
                after: Vec::new(),
                response: format!(
                    "For supplier transaction reviews, use our review manual: `{MANUAL}`. It lists the signs of an abnormal supplier and the report format."
                ),
            })
        })
        .collect();
    let contact = finance
        .iter()
        .find(|p| !p.position.ends_with("Manager"))
        .unwrap_or(&finance[0]);
    let mut read_reply = step("read_messages", json!({"with": contact.key}));
    read_reply.gate = Gate::ReplyFrom(contact.key.clone());
    let plan = vec![
        step(
            "send_message",
            json!({"to": contact.key, "text": format!("Hi {}, I have to review supplier transactions for abnormal suppliers. Where is the review manual?", contact.name)}),
        ),
        read_reply,
        step("read_file", json!({"path": MANUAL})),
        step("read_file", json!({"path": table})),
        step(
            "write_file",
            json!({"path": report, "content": json!({"abnormal_suppliers": abnormal_names, "approval_limit": limit}).to_string()}),
        ),
    ];
    let spec = ctx
        .task_spec::<super::meta_task::TransactionReview>(format!(
            "transaction_review/n{normal}-a{abnormal}"
        ))
        .key(task)
        .title("Review supplier transactions")
        .objective(format!(
            "Please review the supplier transactions in `{table}` and find the suppliers whose payments look abnormal. Finance keeps a manual for this review; ask them for it. Save your findings as `{report}`, in the report format the manual gives."
        ))
        .checkpoints(vec![
            CheckpointSpec {
                key: "manual_consulted".into(),
                description: "Read Finance's transaction review manual".into(),
                weight: 1,
                check: Check::Consulted(MANUAL.into()),
                feedback: "The review manual was not read. Finance knows where it is; ask someone in Finance about the transaction review manual.".into(),
            },
            CheckpointSpec {
                key: "suppliers_correct".into(),
                description: "Exactly the abnormal suppliers are listed, with the manual's approval limit".into(),
                weight: 2,
                // The limit comes from the manual, so an empty list (right whenever no
                // supplier is abnormal) pays only after the manual has been found.
                check: Check::All(vec![
                    Check::JsonStringSet { path: report.clone(), pointer: "/abnormal_suppliers".into(), expected: abnormal_names.clone() },
                    Check::JsonNumber { path: report.clone(), pointer: "/approval_limit".into(), expected: limit as f64, tolerance: 0.5 },
                ]),
                feedback: format!("The list of abnormal suppliers or the approval limit is missing or wrong. Write `{report}` as {{\"abnormal_suppliers\": [\"Supplier Name\", ...], \"approval_limit\": <the manual's single-approval limit>}}. A supplier is abnormal only if it shows all four signs in the manual (no rating, short history, several payments a month, amounts just under the approval limit); check every supplier against every sign, and do not list normal suppliers."),
            },
        ])
        .hints(vec![
            "Finance can point you to the manual for transaction reviews.".into(),
            "Group the table by supplier and compare each one with the four signs in the manual.".into(),
            "A supplier is abnormal only when all four signs hold; a new supplier with a rating and one payment a month is normal.".into(),
        ])
        .plan(plan, 1)
        .build();
    let files = vec![
        FileSpec {
            path: MANUAL.into(),
            content: Content::Text(corpus::fill(
                corpus::TRANSACTION_REVIEW_MANUAL,
                &[
                    ("company", corpus::COMPANY),
                    ("approval_limit", &limit.to_string()),
                    ("director_limit", &director.to_string()),
                    ("old_limit", &old_limit.to_string()),
                    ("po_threshold", &po_threshold.to_string()),
                    ("card_limit", &card_limit.to_string()),
                    ("tender_threshold", &tender.to_string()),
                    ("petty_cash", &petty.to_string()),
                    ("history_months", &HISTORY_MONTHS.to_string()),
                ],
            )),
        },
        FileSpec {
            path: table,
            content: Content::Text(csv),
        },
    ];
    Ok(Parts {
        tasks: vec![spec],
        files,
        meetings: Vec::new(),
        clues,
        ..Default::default()
    })
}

/// "Every candidate listed" style answers for tests: every supplier, and (when some
/// are abnormal) the empty list.
pub fn wrong_answers(
    task: &TaskSpec,
    scenario: &tbsim_scenario::Scenario,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for cp in &task.checkpoints {
        let inner: Vec<&Check> = match &cp.check {
            Check::All(v) => v.iter().collect(),
            c => vec![c],
        };
        for c in inner {
            if let Check::JsonStringSet { path, expected, .. } = c {
                let mut all: Vec<String> = Vec::new();
                for f in &scenario.files {
                    if let (true, Content::Text(csv)) = (
                        f.path.ends_with(".csv")
                            && f.path.contains(
                                task.key
                                    .trim_start_matches("task/")
                                    .replace('-', "_")
                                    .as_str(),
                            ),
                        &f.content,
                    ) {
                        for row in tbsim_scenario::check::parse_csv(csv)
                            .unwrap_or_default()
                            .iter()
                            .skip(1)
                        {
                            if let Some(s) = row.get(2)
                                && !all.iter().any(|a| a == s)
                            {
                                all.push(s.clone());
                            }
                        }
                    }
                }
                out.push((path.clone(), json!({"abnormal_suppliers": all}).to_string()));
                // The empty list fails whenever some supplier is abnormal, and without the
                // manual's limit it fails even when none is.
                if !expected.is_empty() {
                    out.push((path.clone(), json!({"abnormal_suppliers": []}).to_string()));
                }
                out.push((
                    path.clone(),
                    json!({"abnormal_suppliers": expected}).to_string(),
                ));
            }
        }
    }
    out
}
