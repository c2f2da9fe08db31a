//! Meetings to attend, and the purchase-request summaries handed out in them.
//!
//! Attending: find the meeting on the calendar by its title, wait until just before
//! it starts, join; when the objective asks for the meeting's decision to be
//! recorded, work the cap out from the join result's notes (said only in the
//! meeting) and write it where the objective names. The notes state several figures
//! and the decision is a change to one of them (last month's cap raised or lowered
//! by a step, a colleague's proposal trimmed), so the solver reads what each
//! sentence says: which one decides, and which figure it starts from. Summarising: the requests are in the objective
//! as announced, less any withdrawn later in the meeting; when the rules file is named, read its three limits and keep the requests within
//! all of them.

use serde_json::{Value, json};

use super::{Brief, Cx, Job, Next, backticked, file_text, first_number, number_after, read, write};
use tbsim_core::protocol::ToolResult;
use tbsim_core::time::SimTime;

/// The solver if the objective is a meeting to attend or a request summary.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if o.contains("invited you to the ") && o.contains("Attend it") {
        let title = o
            .split("invited you to the ")
            .nth(1)?
            .split(" in the ")
            .next()?
            .to_owned();
        // "record the cap it set in `<path>`": the first backticked name after it.
        let record = o
            .split("record the cap it set in ")
            .nth(1)
            .and_then(|rest| backticked(rest).into_iter().next());
        return Some(Box::new(Attend {
            title,
            meeting: None,
            start: None,
            joined: false,
            looked: false,
            record,
        }));
    }
    if o.contains("summarise the purchase requests") {
        return Some(Box::new(Summary::parse(o)?));
    }
    None
}

/// Attending a meeting.
pub struct Attend {
    /// The meeting's title as the objective names it.
    pub title: String,
    meeting: Option<String>,
    start: Option<SimTime>,
    joined: bool,
    looked: bool,
    /// Where to record the meeting's budget cap, if the objective asks.
    record: Option<String>,
}

/// How long before the start to join (joining opens a few minutes early).
const EARLY_SECS: u64 = 60;

impl Job for Attend {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        if self.joined {
            return Next::Done;
        }
        if let Some(r) = last {
            if r.tool == "my_calendar" {
                let found = r
                    .result
                    .as_ref()
                    .and_then(|v| v.get("meetings"))
                    .and_then(Value::as_array)
                    .and_then(|list| {
                        // The same meeting may recur on several days: the one with this
                        // title that has not ended yet.
                        list.iter().find(|m| {
                            m.get("title")
                                .and_then(Value::as_str)
                                .is_some_and(|t| t == self.title)
                                && m.get("end")
                                    .and_then(Value::as_str)
                                    .and_then(|e| cx.parse_time(e))
                                    .is_none_or(|end| end > cx.now)
                        })
                    })
                    .cloned();
                if let Some(m) = found {
                    self.meeting = m.get("meeting").and_then(Value::as_str).map(str::to_owned);
                    self.start = m
                        .get("start")
                        .and_then(Value::as_str)
                        .and_then(|s| cx.parse_time(s));
                }
            } else if r.tool == "join_meeting" {
                self.joined = true;
                let cap = r
                    .result
                    .as_ref()
                    .and_then(|v| v.get("notes"))
                    .and_then(Value::as_str)
                    .and_then(read_cap);
                return match (self.record.take(), cap) {
                    (Some(path), Some(cap)) => {
                        write(&path, &json!({ "budget_cap": cap }).to_string())
                    }
                    _ => Next::Done,
                };
            }
        }
        if !self.looked {
            self.looked = true;
            return Next::Call("my_calendar", json!({}));
        }
        let (Some(key), Some(start)) = (self.meeting.clone(), self.start) else {
            return Next::Done;
        };
        let go = SimTime(start.0.saturating_sub(EARLY_SECS));
        if cx.now < go {
            return Next::Until(go);
        }
        Next::Call("join_meeting", json!({"meeting": key}))
    }
}

/// The cap the meeting set, read from its notes: the sentence that decides (not a
/// figure merely proposed, countered or turned down), and, when it changes another
/// figure, that figure and the step.
fn read_cap(notes: &str) -> Option<f64> {
    let sentences: Vec<&str> = notes.split(". ").map(str::trim).collect();
    let last = sentences
        .iter()
        .find(|s| s.starts_with("Last month"))
        .and_then(|s| first_number(s));
    let proposed = |name: &str| {
        sentences.iter().find_map(|s| {
            s.strip_prefix(&format!("{name} proposed "))
                .and_then(first_number)
        })
    };
    for s in &sentences {
        let rejected = ["turned down", "does not take it up", "finds no support"]
            .iter()
            .any(|w| s.contains(w));
        if rejected || s.starts_with("Last month") || s.contains(" proposed ") {
            continue;
        }
        if s.contains("'s proposal") && s.contains("trim") {
            let name = s
                .trim_start_matches("Decision: next month's cap is ")
                .trim_start_matches("They take ")
                .split("'s proposal")
                .next()?;
            return Some(proposed(name.trim())? - number_after(s, " by ")?);
        }
        if s.contains("last month's cap")
            || s.contains("they lower it")
            || s.contains("they raise it")
        {
            let by = number_after(s, " by ")?;
            if s.contains("lower") {
                return Some(last? - by);
            }
            if s.contains("raise") {
                return Some(last? + by);
            }
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq)]
struct Request {
    name: String,
    item: String,
    quantity: f64,
    unit_price: f64,
}

/// Summarising announced purchase requests.
struct Summary {
    requests: Vec<Request>,
    out: String,
    totals: bool,
    rules: Option<String>,
    limits: Option<(f64, f64, f64)>,
    phase: u8,
}

impl Summary {
    fn parse(o: &str) -> Option<Summary> {
        let requests: Vec<Request> = o
            .lines()
            .filter_map(|l| {
                let l = l.trim().strip_prefix("- ")?;
                let (name, rest) = l.split_once(": ")?;
                let (qty, rest) = rest.split_once(" x ")?;
                let (item, price) = rest.rsplit_once(" at ")?;
                let price = price.trim_end_matches(" each");
                Some(Request {
                    name: name.trim().to_owned(),
                    item: item.trim().to_owned(),
                    quantity: qty.trim().parse().ok()?,
                    unit_price: price.trim().parse().ok()?,
                })
            })
            .collect();
        // "Later in the meeting, <name> withdrew their <item> request." Other later
        // remarks confirm a request; only those that take one back remove it.
        let withdrawn: Vec<(String, String)> = o
            .lines()
            .filter_map(|l| {
                let l = l.trim().strip_prefix("Later in the meeting, ")?;
                for (verb, end) in [
                    (" withdrew their ", " request."),
                    (" dropped their ", " request."),
                    (" said they no longer need the ", "."),
                    (" said they don't need the ", " after all."),
                ] {
                    if let Some((name, rest)) = l.split_once(verb)
                        && let Some(item) = rest.strip_suffix(end)
                    {
                        return Some((name.to_owned(), item.to_owned()));
                    }
                }
                None
            })
            .collect();
        let requests: Vec<Request> = requests
            .into_iter()
            .filter(|r| !withdrawn.iter().any(|(n, i)| *n == r.name && *i == r.item))
            .collect();
        let ticks = backticked(o);
        let out = ticks
            .iter()
            .find(|t| t.starts_with("workspace/") && t.ends_with(".json"))?
            .clone();
        let rules = ticks.iter().find(|t| t.starts_with("drive/")).cloned();
        let totals = o.contains("\"total\"");
        Some(Summary {
            requests,
            out,
            totals,
            rules,
            limits: None,
            phase: 0,
        })
    }

    fn answer(&self) -> String {
        let kept: Vec<&Request> = self
            .requests
            .iter()
            .filter(|r| {
                self.limits.is_none_or(|(q, p, t)| {
                    r.quantity <= q && r.unit_price <= p && r.quantity * r.unit_price <= t
                })
            })
            .collect();
        let list: Vec<Value> = kept
            .iter()
            .map(|r| {
                let mut v = json!({"name": r.name, "item": r.item, "quantity": r.quantity, "unit_price": r.unit_price});
                if self.totals {
                    v["total"] = json!(r.quantity * r.unit_price);
                }
                v
            })
            .collect();
        let mut a = json!({"requests": list});
        if self.totals {
            let sum: f64 = kept.iter().map(|r| r.quantity * r.unit_price).sum();
            a["statistics"] = json!({"total_cost": sum});
        }
        a.to_string()
    }
}

fn limits(rules: &str) -> Option<(f64, f64, f64)> {
    // The real limits are the numbered list before the worked examples.
    let head = rules.split("## Worked examples").next().unwrap_or(rules);
    let q = number_after(head, "quantity is at most")?;
    let p = number_after(head, "unit price is at most")?;
    let t = head
        .lines()
        .find(|l| l.contains("total") && l.contains("at most"))
        .and_then(|l| first_number(l.split("at most").nth(1)?))?;
    Some((q, p, t))
}

impl Job for Summary {
    fn step(&mut self, _cx: &Cx, last: Option<&ToolResult>) -> Next {
        match self.phase {
            0 => {
                self.phase = 1;
                if let Some(r) = &self.rules {
                    return read(r);
                }
                self.step(_cx, None)
            }
            1 => {
                if let Some(r) = last {
                    self.limits = file_text(r).and_then(limits);
                }
                self.phase = 2;
                write(&self.out, &self.answer())
            }
            _ => Next::Done,
        }
    }
}
