//! Supplier transaction review: ask Finance where the review manual is, read it,
//! read the table, and list the suppliers that show every sign the manual names.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::{
    Brief, Cx, Job, Next, backticked, csv_records, file_text, number_after, paths_in, read, send,
    write,
};
use tbsim_core::protocol::ToolResult;

/// The solver if the objective is a transaction review.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if !(o.contains("supplier transactions") && o.contains("abnormal")) {
        return None;
    }
    let ticks = backticked(o);
    let table = ticks.iter().find(|p| p.ends_with(".csv"))?.clone();
    let report = ticks.iter().find(|p| p.ends_with(".json"))?.clone();
    Some(Box::new(Review {
        table,
        report,
        phase: Phase::Ask,
        tried: Vec::new(),
        since: 0,
        asking: None,
        manual: None,
        format: Vec::new(),
    }))
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Ask,
    AwaitReply,
    ReadManual(String),
    ReadTable,
    Write(String),
    Done,
}

struct Review {
    table: String,
    report: String,
    phase: Phase,
    tried: Vec<String>,
    since: usize,
    asking: Option<String>,
    manual: Option<Rules>,
    /// The report's keys, from the manual's example.
    format: Vec<String>,
}

/// The keys of the report as the manual's example object shows them, in order.
fn report_keys(manual: &str) -> Vec<String> {
    let section = manual
        .split("## ")
        .find(|s| s.to_lowercase().starts_with("the report"))
        .unwrap_or(manual);
    section
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('{'))
        .find_map(|l| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(l).ok())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The report: the suppliers, and every other key of the manual's example that asks
/// for the limit applied (Finance checks which version of the manual was followed).
fn report(keys: &[String], list: &[String], rules: Rules) -> String {
    let mut out = serde_json::Map::new();
    out.insert("abnormal_suppliers".into(), json!(list));
    for k in keys {
        if k.contains("limit") {
            let v = if rules.limit.fract() == 0.0 {
                json!(rules.limit as i64)
            } else {
                json!(rules.limit)
            };
            out.insert(k.clone(), v);
        }
    }
    serde_json::Value::Object(out).to_string()
}

/// The four signs' thresholds as the manual states them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rules {
    limit: f64,
    share: f64,
    months: f64,
    per_month: usize,
}

fn rules(manual: &str) -> Option<Rules> {
    let limit = number_after(manual, "single-approval limit of")?;
    // "each is at least 95% of that limit" (older manuals: "by less than 5%").
    let pct = number_after(manual, "each is at least")
        .map(|share| 100.0 - share)
        .or_else(|| number_after(manual, "by less than"))
        .unwrap_or(5.0);
    let months = number_after(manual, "span fewer than")?;
    let per_month = if manual.contains("two or more of its payments") {
        2
    } else {
        number_after(manual, "payments in the same month").map_or(2, |n| n as usize)
    };
    Some(Rules {
        limit,
        share: 1.0 - pct / 100.0,
        months,
        per_month,
    })
}

/// Whole months from the first to the last payment, counted inclusively.
fn month_index(date: &str) -> Option<i64> {
    let mut it = date.split('-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    Some(y * 12 + m - 1)
}

fn abnormal(table: &str, r: Rules) -> Vec<String> {
    let mut by: BTreeMap<String, Vec<(String, String, f64)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for rec in csv_records(table) {
        let name = rec.get("supplier").cloned().unwrap_or_default();
        if !by.contains_key(&name) {
            order.push(name.clone());
        }
        by.entry(name).or_default().push((
            rec.get("date").cloned().unwrap_or_default(),
            rec.get("supplier_rating").cloned().unwrap_or_default(),
            rec.get("amount")
                .and_then(|a| a.parse().ok())
                .unwrap_or(0.0),
        ));
    }
    order
        .into_iter()
        .filter(|name| {
            let rows = &by[name];
            let unrated = rows.iter().all(|(_, rating, _)| rating.trim().is_empty());
            let months: Vec<i64> = rows.iter().filter_map(|(d, _, _)| month_index(d)).collect();
            let span = months
                .iter()
                .max()
                .zip(months.iter().min())
                .map_or(0, |(a, b)| a - b + 1);
            let short = (span as f64) < r.months;
            let mut per: BTreeMap<i64, usize> = BTreeMap::new();
            for m in &months {
                *per.entry(*m).or_default() += 1;
            }
            let crowded = per.values().any(|&n| n >= r.per_month);
            let under = rows
                .iter()
                .all(|(_, _, a)| *a < r.limit && *a >= r.limit * r.share);
            unrated && short && crowded && under
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

impl Job for Review {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::Ask => {
                    let next = cx
                        .in_department("Finance")
                        .into_iter()
                        .find(|c| !self.tried.contains(&c.key));
                    let Some(c) = next else {
                        // Nobody in Finance pointed to a manual: work from the
                        // table alone is impossible without the rules.
                        self.phase = Phase::Done;
                        continue;
                    };
                    self.tried.push(c.key.clone());
                    self.asking = Some(c.key.clone());
                    self.since = cx.inbox.len();
                    self.phase = Phase::AwaitReply;
                    let first = c.name.split_whitespace().next().unwrap_or(&c.name);
                    return send(
                        &c.key,
                        &format!(
                            "Hi {first}, I've been asked to review the supplier transactions for abnormal suppliers. Could you tell me where Finance's transaction review manual is?"
                        ),
                    );
                }
                Phase::AwaitReply => {
                    // The result of the send itself carries nothing to use.
                    last.take();
                    let who = self.asking.clone().unwrap_or_default();
                    let replies = cx.replies_from(&who, self.since);
                    if replies.is_empty() {
                        return Next::Idle;
                    }
                    let found = replies
                        .iter()
                        .flat_map(|h| paths_in(&h.text))
                        .find(|p| p.starts_with("drive/") && p.ends_with(".md"));
                    self.phase = match found {
                        Some(p) => Phase::ReadManual(p),
                        None => Phase::Ask,
                    };
                }
                Phase::ReadManual(p) => {
                    if let Some(r) = last.take() {
                        self.manual = file_text(r).and_then(rules);
                        self.format = file_text(r).map(report_keys).unwrap_or_default();
                        self.phase = if self.manual.is_some() {
                            Phase::ReadTable
                        } else {
                            Phase::Ask
                        };
                        continue;
                    }
                    return read(&p);
                }
                Phase::ReadTable => {
                    if let Some(r) = last.take() {
                        let Some(text) = file_text(r) else {
                            self.phase = Phase::Done;
                            continue;
                        };
                        let rules = self.manual.expect("read before the table");
                        let list = abnormal(text, rules);
                        self.phase = Phase::Write(report(&self.format, &list, rules));
                        continue;
                    }
                    return read(&self.table);
                }
                Phase::Write(content) => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    return write(&self.report, &content);
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}
