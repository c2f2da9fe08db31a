//! Data completion: fill the one column with gaps from the handbook's relations,
//! asking the owning team for reference data (fee rates, carrier SLAs) when the
//! relation needs it.
//!
//! The relations are the handbook's, keyed by the table's header; the solver reads
//! the handbook and refuses a table whose header it does not find described there.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Brief, Cx, Incoming, Job, Next, file_text, paths_about, rank_by_folder};
use tbsim_core::protocol::ToolResult;

/// Reference data a table needs: fee rates or carrier service levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    Nothing,
    FeeRates,
    CarrierSla,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    ReadHandbook,
    ReadData,
    Colleagues,
    Ask,
    AwaitReply,
    ReadResource(String),
    Write,
    Done,
}

#[derive(Debug)]
pub(crate) struct DataCompletion {
    handbook: String,
    dataset: String,
    output: String,
    owner_dept: Option<String>,
    stage: Stage,
    handbook_text: String,
    table: Vec<Vec<String>>,
    contacts: Vec<(String, String)>,
    asked: usize,
    resource: Vec<Vec<String>>,
}

pub(crate) fn recognise(b: &Brief) -> Option<Box<dyn Job>> {
    let o = &b.objective;
    if !o.starts_with("Some values are missing from the") {
        return None;
    }
    let q: Vec<&str> = o.split('`').skip(1).step_by(2).collect();
    let dataset = q
        .iter()
        .find(|p| p.starts_with("drive/") && p.ends_with(".csv"))?;
    let handbook = q.iter().find(|p| p.ends_with(".md"))?;
    let output = q.iter().find(|p| p.starts_with("workspace/"))?;
    let owner_dept = o.find(" keeps them").and_then(|i| {
        o[..i]
            .rsplit(';')
            .next()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    });
    Some(Box::new(DataCompletion {
        handbook: (*handbook).to_owned(),
        dataset: (*dataset).to_owned(),
        output: (*output).to_owned(),
        owner_dept,
        stage: Stage::ReadHandbook,
        handbook_text: String::new(),
        table: Vec::new(),
        contacts: Vec::new(),
        asked: 0,
        resource: Vec::new(),
    }))
}

fn parse_csv(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|c| c.trim().to_owned()).collect())
        .collect()
}

fn needs(header: &[String]) -> Needs {
    let has = |c: &str| header.iter().any(|h| h == c);
    if has("fee") && has("category") {
        Needs::FeeRates
    } else if has("carrier") && has("eta_hours") {
        Needs::CarrierSla
    } else {
        Needs::Nothing
    }
}

/// Decimals used by the known cells of column `c`.
fn decimals(rows: &[Vec<String>], c: usize) -> usize {
    rows.iter()
        .filter_map(|r| r.get(c))
        .find(|v| !v.is_empty())
        .map_or(0, |v| v.split_once('.').map_or(0, |(_, f)| f.len()))
}

fn fmt(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    // "-0.00" reads as a sign error.
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_owned()
    } else {
        s
    }
}

/// Fills the table's gaps; `reference` maps a category or carrier to its numbers.
/// Returns `None` when the header matches no relation or a value cannot be derived.
fn complete(
    table: &[Vec<String>],
    reference: &BTreeMap<String, Vec<f64>>,
) -> Option<Vec<Vec<String>>> {
    let header = table.first()?.clone();
    let mut rows: Vec<Vec<String>> = table[1..].to_vec();
    let col = |name: &str| header.iter().position(|h| h == name);
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let blank = |rows: &[Vec<String>], c: usize| -> Vec<usize> {
        (0..rows.len())
            .filter(|&r| rows[r].get(c).is_some_and(String::is_empty))
            .collect()
    };
    let num = |r: &[String], c: usize| -> Option<f64> { r.get(c)?.parse().ok() };
    // The column with gaps (qoq is blank by definition in first quarters).
    let target = (0..header.len()).find(|&c| {
        let b = blank(&rows, c);
        if names[c] == "qoq" {
            b.iter().any(|&r| !rows[r][1].ends_with("-Q1"))
        } else {
            !b.is_empty()
        }
    })?;
    let d = decimals(&rows, target);
    let gaps: Vec<usize> = blank(&rows, target)
        .into_iter()
        .filter(|&r| !(names[target] == "qoq" && rows[r][1].ends_with("-Q1")))
        .collect();
    // Row relations `total = sum of parts`, per kind of table.
    let sums: &[(&[&str], &str)] = &[
        (&["m1", "m2", "m3"], "quarter_total"),
        (&["item_a", "item_b", "item_c"], "total"),
        (&["detail1", "detail2", "detail3"], "balance"),
        (&["seg1", "seg2", "seg3"], "total_time"),
    ];
    let t = names[target];
    if let Some((parts, total)) = sums
        .iter()
        .find(|(p, t)| p.iter().chain([t]).all(|c| names.contains(c)) && names.len() <= 6)
    {
        let (pc, tc): (Vec<usize>, usize) =
            (parts.iter().filter_map(|p| col(p)).collect(), col(total)?);
        for &r in &gaps {
            let v = if target == tc {
                pc.iter().map(|&c| num(&rows[r], c)).sum::<Option<f64>>()?
            } else {
                num(&rows[r], tc)?
                    - pc.iter()
                        .filter(|&&c| c != target)
                        .map(|&c| num(&rows[r], c))
                        .sum::<Option<f64>>()?
            };
            rows[r][target] = fmt(v, d);
        }
        return Some(with_header(header, rows));
    }
    match names.as_slice() {
        [
            "entity",
            "day",
            "begin",
            "inbound",
            "outbound",
            "shrinkage",
            "ending",
        ] => {
            for &r in &gaps {
                let v: Vec<f64> = (2..7).map(|c| num(&rows[r], c).unwrap_or(0.0)).collect();
                // begin + inbound - outbound - shrinkage - ending = 0, solved for the gap.
                let signs = [1.0, 1.0, -1.0, -1.0, -1.0];
                let i = target - 2;
                let rest: f64 = (0..5).filter(|&k| k != i).map(|k| signs[k] * v[k]).sum();
                rows[r][target] = fmt(-rest / signs[i], d);
            }
        }
        ["entity", "cost", "salvage", "life_months", "monthly_dep"] => {
            for &r in &gaps {
                let g = |c| num(&rows[r], c);
                let v = match t {
                    "cost" => g(4)? * g(3)? + g(2)?,
                    "salvage" => g(1)? - g(4)? * g(3)?,
                    "life_months" => (g(1)? - g(2)?) / g(4)?,
                    _ => (g(1)? - g(2)?) / g(3)?,
                };
                rows[r][target] = fmt(v, d);
            }
        }
        ["entity", "date", "category", "amount", "fee"] => {
            for &r in &gaps {
                let rate = *reference.get(&rows[r][2])?.first()?;
                let v = if t == "fee" {
                    num(&rows[r], 3)? * rate
                } else {
                    num(&rows[r], 4)? / rate
                };
                rows[r][target] = fmt(v, d);
            }
        }
        ["shipment", "distance_km", "carrier", "eta_hours"] => {
            for &r in &gaps {
                let sla = reference.get(&rows[r][2])?;
                let (speed, handling) = (*sla.first()?, *sla.get(1)?);
                let v = if t == "eta_hours" {
                    num(&rows[r], 1)? / speed + handling
                } else {
                    (num(&rows[r], 3)? - handling) * speed
                };
                rows[r][target] = fmt(v, d);
            }
        }
        ["entity", "impressions", "ctr", "clicks"] => {
            for &r in &gaps {
                let g = |c| num(&rows[r], c);
                let v = match t {
                    "clicks" => g(1)? * g(2)?,
                    "impressions" => g(3)? / g(2)?,
                    _ => g(3)? / g(1)?,
                };
                rows[r][target] = fmt(v, d.max(if t == "ctr" { 4 } else { 0 }));
            }
        }
        ["entity", "quarter", "quarter_total", "qoq"] => {
            // Per entity; totals spread from the known quarters both ways.
            for _ in 0..4 {
                for r in 0..rows.len() {
                    let same_prev = r > 0 && rows[r - 1][0] == rows[r][0];
                    if t == "qoq" {
                        if gaps.contains(&r) && same_prev {
                            let (p, c) = (num(&rows[r - 1], 2)?, num(&rows[r], 2)?);
                            rows[r][3] = format!("{:.6}", (c - p) / p);
                        }
                        continue;
                    }
                    if !same_prev {
                        continue;
                    }
                    let q = num(&rows[r], 3);
                    match (num(&rows[r - 1], 2), num(&rows[r], 2), q) {
                        (Some(p), None, Some(q)) => rows[r][2] = fmt((p * (1.0 + q)).round(), 0),
                        (None, Some(c), Some(q)) => {
                            rows[r - 1][2] = fmt((c / (1.0 + q)).round(), 0);
                        }
                        _ => {}
                    }
                }
            }
            if gaps.iter().any(|&r| rows[r][target].is_empty()) {
                return None;
            }
        }
        ["day", "stock_level"] => {
            let known: Vec<usize> = (0..rows.len()).filter(|r| !gaps.contains(r)).collect();
            for &r in &gaps {
                let a = *known.iter().rev().find(|&&k| k < r)?;
                let b = *known.iter().find(|&&k| k > r)?;
                let (va, vb) = (num(&rows[a], 1)?, num(&rows[b], 1)?);
                let v = va + (vb - va) * (r - a) as f64 / (b - a) as f64;
                rows[r][1] = format!("{v:.4}");
            }
        }
        ["day", "metric", "rolling_7d"] => {
            for &r in &gaps {
                let from = r.saturating_sub(6);
                let w: Vec<f64> = (from..=r)
                    .map(|k| num(&rows[k], 1))
                    .collect::<Option<_>>()?;
                rows[r][2] = format!("{:.4}", w.iter().sum::<f64>() / w.len() as f64);
            }
        }
        _ => return None,
    }
    Some(with_header(header, rows))
}

fn with_header(header: Vec<String>, rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    std::iter::once(header).chain(rows).collect()
}

fn to_csv(rows: &[Vec<String>]) -> String {
    rows.iter().map(|r| r.join(",") + "\n").collect()
}

impl DataCompletion {
    fn needs(&self) -> Needs {
        self.table.first().map_or(Needs::Nothing, |h| needs(h))
    }

    fn reference(&self) -> BTreeMap<String, Vec<f64>> {
        self.resource
            .iter()
            .skip(1)
            .filter_map(|r| {
                let nums: Vec<f64> = r[1..].iter().filter_map(|v| v.parse().ok()).collect();
                Some((r.first()?.clone(), nums))
            })
            .collect()
    }

    fn question(&self) -> String {
        let ds = &self.dataset;
        match self.needs() {
            Needs::FeeRates => format!(
                "I'm filling in missing fees in `{ds}`. Where can I find the fee rates table?"
            ),
            _ => format!(
                "I'm completing missing ETAs in the shipments table `{ds}`. Where can I find the carriers' SLA speeds and handling times?"
            ),
        }
    }
}

impl Job for DataCompletion {
    fn step(&mut self, _cx: &Cx, _last: Option<&ToolResult>) -> Next {
        match self.stage.clone() {
            Stage::ReadHandbook => Next::Call("read_file", json!({"path": self.handbook})),
            Stage::ReadData => Next::Call("read_file", json!({"path": self.dataset})),
            Stage::Colleagues => Next::Call("list_colleagues", json!({})),
            Stage::Ask => {
                let Some((key, name)) = self.contacts.get(self.asked).cloned() else {
                    self.stage = Stage::Done;
                    return Next::Done;
                };
                self.asked += 1;
                self.stage = Stage::AwaitReply;
                let first = name.split_whitespace().next().unwrap_or(&name).to_owned();
                Next::Call(
                    "send_message",
                    json!({"to": key, "text": format!("Hi {first}, {}", self.question())}),
                )
            }
            Stage::AwaitReply => Next::Idle,
            Stage::ReadResource(p) => Next::Call("read_file", json!({"path": p})),
            Stage::Write => {
                self.stage = Stage::Done;
                // The relation must be one the handbook describes.
                let header = self.table.first().map(|h| h.join(", ")).unwrap_or_default();
                if !self.handbook_text.contains(&format!("(`{header}`)")) {
                    return Next::Done;
                }
                match complete(&self.table, &self.reference()) {
                    Some(t) => Next::Call(
                        "write_file",
                        json!({"path": self.output, "content": to_csv(&t)}),
                    ),
                    None => Next::Done,
                }
            }
            Stage::Done => Next::Done,
        }
    }

    fn on_result(&mut self, r: &ToolResult) {
        match (&self.stage, r.tool.as_str()) {
            (Stage::ReadHandbook, "read_file") => {
                self.handbook_text = file_text(r).unwrap_or_default().to_owned();
                self.stage = Stage::ReadData;
            }
            (Stage::ReadData, "read_file") => {
                self.table = parse_csv(file_text(r).unwrap_or_default());
                self.stage = if self.needs() == Needs::Nothing {
                    Stage::Write
                } else {
                    Stage::Colleagues
                };
            }
            (Stage::Colleagues, "list_colleagues") => {
                let dept = self.owner_dept.clone().unwrap_or_default();
                let list = r
                    .result
                    .as_ref()
                    .and_then(|v| v["colleagues"].as_array().cloned())
                    .unwrap_or_default();
                let mut in_dept: Vec<(bool, String, String)> = list
                    .iter()
                    .filter(|c| c["department"].as_str() == Some(dept.as_str()))
                    .map(|c| {
                        (
                            c["position"].as_str().unwrap_or("").ends_with("Manager"),
                            c["key"].as_str().unwrap_or("").to_owned(),
                            c["name"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect();
                // Staff first: they keep the tables day to day.
                in_dept.sort_by_key(|c| c.0);
                self.contacts = in_dept.into_iter().map(|c| (c.1, c.2)).take(3).collect();
                self.stage = Stage::Ask;
            }
            (Stage::ReadResource(_), "read_file") => {
                self.resource = parse_csv(file_text(r).unwrap_or_default());
                self.stage = Stage::Write;
            }
            _ => {}
        }
    }

    fn on_message(&mut self, m: &Incoming) {
        if self.stage != Stage::AwaitReply || !self.contacts.iter().any(|(k, _)| *k == m.from) {
            return;
        }
        let topic: &[&str] = match self.needs() {
            Needs::FeeRates => &["fee"],
            _ => &["carrier", "service level"],
        };
        let mut paths = paths_about(&m.text, topic);
        rank_by_folder(&mut paths, &self.dataset);
        self.stage = match paths
            .into_iter()
            .find(|p| p.starts_with("drive/") && p.ends_with(".csv"))
        {
            Some(p) => Stage::ReadResource(p),
            None => Stage::Ask,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<Vec<String>> {
        parse_csv(s)
    }

    #[test]
    fn sums_turn_around() {
        let got = complete(
            &t("job,seg1,seg2,seg3,total_time\nA,1.50,,3.00,7.25\nB,1.00,2.00,3.00,6.00\n"),
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(got[1][2], "2.75");
    }

    #[test]
    fn quarter_totals_spread_from_known_quarters() {
        let got = complete(
            &t("entity,quarter,quarter_total,qoq\nB,2024-Q1,,\nB,2024-Q2,,0.100000\nB,2024-Q3,13200,0.200000\n"),
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(got[2][2], "11000");
        assert_eq!(got[1][2], "10000");
    }

    #[test]
    fn interpolation_weights_by_distance() {
        let got = complete(
            &t("day,stock_level\nd1,100\nd2,\nd3,\nd4,130\n"),
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(
            (got[2][1].as_str(), got[3][1].as_str()),
            ("110.0000", "120.0000")
        );
    }
}
