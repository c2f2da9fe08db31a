//! Handoff chains: each stage reads the files its objective names (the previous
//! stage's output among them), computes, and writes its file or sends its figure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Brief, Cx, Job, Next, backticked, csv_records, file_text, listed, md_rows, number_after, read,
    send, write,
};
use tbsim_core::protocol::ToolResult;

#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Merge {
        form: String,
        mail: String,
        out: String,
    },
    Count {
        input: String,
        out: String,
    },
    Seat {
        input: String,
        size: u64,
        /// The venue's fee per table.
        fee: u64,
        out: String,
    },
    Convert {
        claims: String,
        fx_folder: String,
        out: String,
    },
    Totals {
        input: String,
        out: String,
    },
    OverBudget {
        totals: String,
        budgets: String,
        out: String,
    },
    Closing {
        opening: String,
        moves: String,
        out: String,
    },
    Reorder {
        stock: String,
        levels: String,
        out: String,
    },
    Cost {
        list: String,
        prices: String,
        buyer: String,
    },
}

fn parse(o: &str) -> Option<Stage> {
    let t = backticked(o);
    let csv: Vec<&String> = t.iter().filter(|p| p.ends_with(".csv")).collect();
    let json: Vec<&String> = t.iter().filter(|p| p.ends_with(".json")).collect();
    let md: Vec<&String> = t.iter().filter(|p| p.ends_with(".md")).collect();
    Some(if o.contains("two sign-up lists") {
        Stage::Merge {
            form: csv.first()?.to_string(),
            mail: csv.get(1)?.to_string(),
            out: json.first()?.to_string(),
        }
    } else if o.contains("count the attendees per team") {
        Stage::Count {
            input: json.first()?.to_string(),
            out: json.get(1)?.to_string(),
        }
    } else if o.contains("each table seats") {
        // Whole numbers in the brief; a fraction is not this brief's.
        let whole = |anchor: &str| {
            let v = number_after(o, anchor)?;
            (v >= 0.0 && v.fract() == 0.0).then_some(v as u64)
        };
        let size = whole("each table seats ")?;
        let fee = whole("the venue charges ")?;
        Stage::Seat {
            input: json.first()?.to_string(),
            size,
            fee,
            out: json.get(1)?.to_string(),
        }
    } else if o.contains("Convert every claim") {
        Stage::Convert {
            claims: csv.first()?.to_string(),
            fx_folder: t
                .iter()
                .find(|p| p.ends_with('/'))?
                .trim_end_matches('/')
                .to_owned(),
            out: json.first()?.to_string(),
        }
    } else if o.contains("add up the euro amounts per cost centre") {
        Stage::Totals {
            input: json.first()?.to_string(),
            out: json.get(1)?.to_string(),
        }
    } else if o.contains("overspent") {
        Stage::OverBudget {
            totals: json.first()?.to_string(),
            budgets: md.first()?.to_string(),
            out: json.get(1)?.to_string(),
        }
    } else if o.contains("opening stock") && o.contains("closing stock") {
        let opening = csv.iter().find(|p| p.contains("opening"))?.to_string();
        let moves = csv.iter().find(|p| !p.contains("opening"))?.to_string();
        Stage::Closing {
            opening,
            moves,
            out: json.first()?.to_string(),
        }
    } else if o.contains("reorder point") {
        Stage::Reorder {
            stock: json.first()?.to_string(),
            levels: csv.first()?.to_string(),
            out: json.get(1)?.to_string(),
        }
    } else if o.contains("Price your reorder list") {
        let buyer = o
            .split(" and message ")
            .nth(1)?
            .split(" in ")
            .next()?
            .trim()
            .to_owned();
        Stage::Cost {
            list: json.first()?.to_string(),
            prices: csv.first()?.to_string(),
            buyer,
        }
    } else {
        return None;
    })
}

/// The solver if the objective is a handoff-chain stage.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let stage = parse(&task.objective)?;
    let reads = match &stage {
        Stage::Merge { form, mail, .. } => vec![form.clone(), mail.clone()],
        Stage::Count { input, .. } | Stage::Seat { input, .. } | Stage::Totals { input, .. } => {
            vec![input.clone()]
        }
        // The rate file is chosen once the claims' month is known.
        Stage::Convert { claims, .. } => vec![claims.clone()],
        Stage::OverBudget {
            totals, budgets, ..
        } => vec![totals.clone(), budgets.clone()],
        Stage::Closing { opening, moves, .. } => vec![opening.clone(), moves.clone()],
        Stage::Reorder { stock, levels, .. } => vec![stock.clone(), levels.clone()],
        Stage::Cost { list, prices, .. } => vec![list.clone(), prices.clone()],
    };
    Some(Box::new(Chain {
        stage,
        reads,
        texts: BTreeMap::new(),
        phase: Phase::Read,
    }))
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Read,
    ListFx,
    ReadFx(String),
    Deliver,
    Done,
}

struct Chain {
    stage: Stage,
    reads: Vec<String>,
    texts: BTreeMap<String, String>,
    phase: Phase,
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn num(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(0.0)
}

fn cents_of(s: &str) -> i64 {
    (s.trim().parse::<f64>().unwrap_or(0.0) * 100.0).round() as i64
}

impl Chain {
    fn text(&self, p: &str) -> &str {
        self.texts.get(p).map_or("", String::as_str)
    }

    /// The deliverable: a file to write, or a message to send.
    fn deliver(&self, cx: &Cx) -> Next {
        match &self.stage {
            Stage::Merge { form, mail, out } => {
                let mut m: BTreeMap<String, String> = BTreeMap::new();
                for p in [mail, form] {
                    for r in csv_records(self.text(p)) {
                        let email = r
                            .get("email")
                            .map(|e| e.trim().to_lowercase())
                            .unwrap_or_default();
                        if !email.is_empty() {
                            m.insert(email, r.get("team").cloned().unwrap_or_default());
                        }
                    }
                }
                let list: Vec<Value> = m
                    .iter()
                    .map(|(e, t)| json!({"email": e, "team": t}))
                    .collect();
                write(out, &json!({"attendees": list}).to_string())
            }
            Stage::Count { input, out } => {
                let v = json_of(self.text(input));
                let mut c: BTreeMap<String, u64> = BTreeMap::new();
                for a in v["attendees"].as_array().into_iter().flatten() {
                    *c.entry(a["team"].as_str().unwrap_or("").to_owned())
                        .or_default() += 1;
                }
                let list: Vec<Value> = c
                    .iter()
                    .map(|(t, n)| json!({"team": t, "count": n}))
                    .collect();
                write(out, &json!({"teams": list}).to_string())
            }
            Stage::Seat {
                input,
                size,
                fee,
                out,
            } => {
                let v = json_of(self.text(input));
                let mut total = 0;
                let list: Vec<Value> = v["teams"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        let n = (num(&t["count"]) as u64).div_ceil(*size);
                        total += n;
                        json!({"team": t["team"], "tables": n})
                    })
                    .collect();
                write(
                    out,
                    &json!({"tables": list, "table_cost": total * fee}).to_string(),
                )
            }
            Stage::Convert { claims, out, .. } => {
                let fx = self
                    .texts
                    .iter()
                    .find(|(p, _)| p.ends_with(".md"))
                    .map_or("", |(_, t)| t.as_str());
                let rates: BTreeMap<String, i64> = md_rows(fx)
                    .into_iter()
                    .filter_map(|r| {
                        let rate = r.get(1)?.trim().parse::<f64>().ok()?;
                        Some((r[0].clone(), (rate * 10_000.0).round() as i64))
                    })
                    .collect();
                let list: Vec<Value> = csv_records(self.text(claims))
                    .into_iter()
                    .map(|r| {
                        let cur = r.get("currency").cloned().unwrap_or_default();
                        let c = cents_of(r.get("amount").map_or("0", String::as_str));
                        let rate = if cur == "EUR" { 10_000 } else { rates.get(&cur).copied().unwrap_or(10_000) };
                        let eur = (c * rate + 5_000) / 10_000;
                        json!({"claim_id": r.get("claim_id"), "cost_centre": r.get("cost_centre"), "amount_eur": eur as f64 / 100.0})
                    })
                    .collect();
                write(out, &json!({"claims": list}).to_string())
            }
            Stage::Totals { input, out } => {
                let v = json_of(self.text(input));
                let mut m: BTreeMap<String, i64> = BTreeMap::new();
                for c in v["claims"].as_array().into_iter().flatten() {
                    *m.entry(c["cost_centre"].as_str().unwrap_or("").to_owned())
                        .or_default() += (num(&c["amount_eur"]) * 100.0).round() as i64;
                }
                let list: Vec<Value> = m
                    .iter()
                    .map(|(cc, e)| json!({"cost_centre": cc, "total_eur": *e as f64 / 100.0}))
                    .collect();
                write(out, &json!({"totals": list}).to_string())
            }
            Stage::OverBudget {
                totals,
                budgets,
                out,
            } => {
                let v = json_of(self.text(totals));
                let budget: BTreeMap<String, f64> = md_rows(self.text(budgets))
                    .into_iter()
                    .filter_map(|r| {
                        Some((r.first()?.clone(), r.last()?.replace(',', "").parse().ok()?))
                    })
                    .collect();
                let over: Vec<String> = v["totals"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| {
                        let cc = t["cost_centre"].as_str()?.to_owned();
                        let b = *budget.get(&cc)?;
                        (num(&t["total_eur"]) > b).then_some(cc)
                    })
                    .collect();
                write(out, &json!({"over_budget": over}).to_string())
            }
            Stage::Closing {
                opening,
                moves,
                out,
            } => {
                let mut m: BTreeMap<String, i64> = BTreeMap::new();
                for r in csv_records(self.text(opening)) {
                    let q = r
                        .get("opening_quantity")
                        .and_then(|q| q.parse().ok())
                        .unwrap_or(0);
                    m.insert(r.get("sku").cloned().unwrap_or_default(), q);
                }
                for r in csv_records(self.text(moves)) {
                    let q: i64 = r.get("quantity").and_then(|q| q.parse().ok()).unwrap_or(0);
                    let sign = if r.get("direction").is_some_and(|d| d == "out") {
                        -1
                    } else {
                        1
                    };
                    *m.entry(r.get("sku").cloned().unwrap_or_default())
                        .or_default() += sign * q;
                }
                let list: Vec<Value> = m
                    .iter()
                    .map(|(s, c)| json!({"sku": s, "closing": c}))
                    .collect();
                write(out, &json!({"stock": list}).to_string())
            }
            Stage::Reorder { stock, levels, out } => {
                let v = json_of(self.text(stock));
                let lv: BTreeMap<String, (i64, i64)> = csv_records(self.text(levels))
                    .into_iter()
                    .filter_map(|r| {
                        Some((
                            r.get("sku")?.clone(),
                            (
                                r.get("reorder_point")?.parse().ok()?,
                                r.get("target_level")?.parse().ok()?,
                            ),
                        ))
                    })
                    .collect();
                let list: Vec<Value> = v["stock"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| {
                        let sku = s["sku"].as_str()?;
                        let c = num(&s["closing"]) as i64;
                        let (p, t) = lv.get(sku)?;
                        (c < *p).then(|| json!({"sku": sku, "quantity": t - c}))
                    })
                    .collect();
                write(out, &json!({"orders": list}).to_string())
            }
            Stage::Cost {
                list,
                prices,
                buyer,
            } => {
                let v = json_of(self.text(list));
                let price: BTreeMap<String, f64> = csv_records(self.text(prices))
                    .into_iter()
                    .filter_map(|r| {
                        Some((
                            r.get("sku")?.clone(),
                            r.get("unit_price_eur")?.parse().ok()?,
                        ))
                    })
                    .collect();
                let total: f64 = v["orders"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|o| {
                        num(&o["quantity"])
                            * price
                                .get(o["sku"].as_str().unwrap_or(""))
                                .copied()
                                .unwrap_or(0.0)
                    })
                    .sum();
                let to = cx.colleague(buyer).map_or(buyer.clone(), |c| c.key.clone());
                let figure = if total.fract() == 0.0 {
                    format!("{}", total as i64)
                } else {
                    format!("{total:.2}")
                };
                send(
                    &to,
                    &format!("Hi {buyer}, the stationery reorder comes to {figure} EUR in total."),
                )
            }
        }
    }
}

impl Job for Chain {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::Read => {
                    if let Some(r) = last.take() {
                        let p = self.reads.remove(0);
                        self.texts
                            .insert(p, file_text(r).unwrap_or_default().to_owned());
                    }
                    if let Some(p) = self.reads.first() {
                        return read(p);
                    }
                    self.phase = if matches!(self.stage, Stage::Convert { .. }) {
                        Phase::ListFx
                    } else {
                        Phase::Deliver
                    };
                }
                Phase::ListFx => {
                    let Stage::Convert {
                        claims, fx_folder, ..
                    } = self.stage.clone()
                    else {
                        unreachable!("only converts list rates")
                    };
                    if let Some(r) = last.take() {
                        // The claims' month (YYYY_MM) picks the rate file.
                        let month = csv_records(self.text(&claims))
                            .first()
                            .and_then(|r| {
                                r.get("date")
                                    .map(|d| d.get(..7).unwrap_or("").replace('-', "_"))
                            })
                            .unwrap_or_default();
                        let files = listed(r);
                        let pick = files
                            .iter()
                            .find(|f| f.ends_with(&format!("{month}.md")))
                            .or_else(|| files.iter().find(|f| f.ends_with(".md")))
                            .cloned()
                            .unwrap_or_default();
                        self.phase = Phase::ReadFx(pick);
                        continue;
                    }
                    return Next::Call("list_folder", json!({"path": fx_folder}));
                }
                Phase::ReadFx(p) => {
                    if let Some(r) = last.take() {
                        self.texts
                            .insert(p, file_text(r).unwrap_or_default().to_owned());
                        self.phase = Phase::Deliver;
                        continue;
                    }
                    return read(&p);
                }
                Phase::Deliver => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    return self.deliver(cx);
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}
