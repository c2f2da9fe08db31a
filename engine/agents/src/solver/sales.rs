//! Quarterly sales analysis: ask Sales for the analysis handbook, read it, read the
//! exports the request needs and the quarters' cancellation logs, and compute the
//! figure the way the handbook says (orders in the log dropped, people told apart
//! by `employee_id`, active means at least one booked order). A `status` column,
//! where an export has one, is honoured too.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Asked, Brief, Cx, Inquiry, Job, Next, backticked, csv_records, department_keys, drive_path,
    file_text, listed, read, write,
};
use tbsim_core::protocol::ToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Top,
    Stats,
    CrossExtreme { top: bool },
    PerTeamExtreme { top: bool },
    PerTeamAvg,
    PerTeamTopN(usize),
    CrossTopN(usize),
    PersonQoq { up: bool },
    TeamQoq { up: bool },
}

#[derive(Debug, Clone)]
struct Request {
    kind: Kind,
    /// Named teams (empty: every team in the folder).
    teams: Vec<String>,
    quarter: u32,
    year: u32,
    folder: String,
    out: String,
}

fn words_after<'a>(text: &'a str, anchor: &str) -> Option<&'a str> {
    text.find(anchor).map(|i| &text[i + anchor.len()..])
}

/// `North, East and West` -> the names.
fn team_list(s: &str) -> Vec<String> {
    s.replace(" and ", ", ")
        .split(',')
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

fn quarter_year(s: &str) -> Option<(u32, u32)> {
    // The first `Q<d> <yyyy>` in the text.
    s.match_indices('Q').find_map(|(i, _)| {
        let rest = s.get(i + 1..i + 7)?;
        let q: u32 = rest.get(..1)?.parse().ok()?;
        (rest.as_bytes()[1] == b' ').then_some(())?;
        let year: u32 = rest.get(2..6)?.parse().ok()?;
        Some((q, year))
    })
}

fn parse(o: &str) -> Option<Request> {
    let ticks = backticked(o);
    let folder = ticks.iter().find(|t| t.starts_with("drive/"))?.clone();
    let out = ticks.iter().find(|t| t.ends_with(".json"))?.clone();
    let request = words_after(o, "quarterly review. ")?;
    let n_of = |s: &str| -> Option<usize> {
        words_after(s, "top ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let mode_top = |s: &str| !s.contains("bottom seller");
    let (kind, teams) = if let Some(r) = words_after(request, "Find the top seller of the ") {
        (Kind::Top, vec![r.split(" team").next()?.to_owned()])
    } else if let Some(r) = words_after(request, "Work out the ") {
        (Kind::Stats, vec![r.split(" team's").next()?.to_owned()])
    } else if request.starts_with("Find the ") && request.contains("taken together") {
        let many = words_after(request, "across the ")?
            .split(" teams")
            .next()?;
        (
            Kind::CrossExtreme {
                top: mode_top(request),
            },
            team_list(many),
        )
    } else if let Some(r) = words_after(request, "For each of the ") {
        let many = r.split(" teams").next()?;
        let kind = if request.contains("find its") {
            Kind::PerTeamExtreme {
                top: mode_top(request),
            }
        } else if request.contains("average") {
            Kind::PerTeamAvg
        } else {
            Kind::PerTeamTopN(n_of(request)?)
        };
        (kind, team_list(many))
    } else if request.starts_with("List the top ") {
        let many = words_after(request, "across the ")?
            .split(" teams")
            .next()?;
        (Kind::CrossTopN(n_of(request)?), team_list(many))
    } else if let Some(r) = words_after(request, "Count the sales teams") {
        (
            Kind::TeamQoq {
                up: r.contains("went up"),
            },
            Vec::new(),
        )
    } else if let Some(r) = words_after(request, "Count the ") {
        let team = r.split(" team's").next()?.to_owned();
        (
            Kind::PersonQoq {
                up: r.contains("went up"),
            },
            vec![team],
        )
    } else {
        return None;
    };
    let (quarter, year) = quarter_year(request)?;
    Some(Request {
        kind,
        teams,
        quarter,
        year,
        folder,
        out,
    })
}

/// The solver if the objective is a sales analysis.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if !(o.contains("sales") && o.contains("handbook")) {
        return None;
    }
    let req = parse(o)?;
    Some(Box::new(Sales {
        req,
        phase: Phase::Start,
        ask: None,
        files: Vec::new(),
        orders: BTreeMap::new(),
        cancelled: BTreeMap::new(),
    }))
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Start,
    Asking,
    ReadHandbook(String),
    List,
    Read,
    Write,
    Done,
}

struct Sales {
    req: Request,
    phase: Phase,
    ask: Option<Inquiry>,
    /// Export paths still to read.
    files: Vec<String>,
    /// (team, quarter) -> the export's orders not marked cancelled in it.
    orders: BTreeMap<(String, u32), Vec<Order>>,
    /// quarter -> the order IDs in its cancellation log.
    cancelled: BTreeMap<u32, std::collections::BTreeSet<String>>,
}

/// (employee_id, name, cents).
type Seller = (String, String, i64);

/// An export row: (order_id, employee_id, name, cents).
type Order = (String, String, String, i64);

fn cents(s: &str) -> Option<i64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    let w: i64 = whole.parse().ok()?;
    let mut f = frac.to_owned();
    f.truncate(2);
    while f.len() < 2 {
        f.push('0');
    }
    let f: i64 = f.parse().ok()?;
    Some(if w < 0 { w * 100 - f } else { w * 100 + f })
}

fn dollars(c: i64) -> f64 {
    c as f64 / 100.0
}

impl Sales {
    /// employee_id -> (name, cents) over the orders not in the quarter's log.
    fn sheet(&self, team: &str, q: u32) -> BTreeMap<String, (String, i64)> {
        let gone = self.cancelled.get(&q);
        let mut sheet: BTreeMap<String, (String, i64)> = BTreeMap::new();
        for (order, id, name, c) in self.orders.get(&(team.to_owned(), q)).into_iter().flatten() {
            if gone.is_some_and(|g| g.contains(order)) {
                continue;
            }
            sheet
                .entry(id.clone())
                .or_insert_with(|| (name.clone(), 0))
                .1 += c;
        }
        sheet
    }

    fn teams(&self) -> Vec<String> {
        if !self.req.teams.is_empty() {
            return self.req.teams.clone();
        }
        let mut t: Vec<String> = self.orders.keys().map(|(t, _)| t.clone()).collect();
        t.dedup();
        t
    }

    fn person(id: &str, name: &str, c: i64) -> Value {
        json!({"employee_id": id, "name": name, "total_sales": dollars(c)})
    }

    fn extreme(people: &[(String, String, i64)], top: bool) -> Vec<Value> {
        let best = if top {
            people.iter().map(|p| p.2).max()
        } else {
            people.iter().map(|p| p.2).min()
        };
        people
            .iter()
            .filter(|p| Some(p.2) == best)
            .map(|p| Self::person(&p.0, &p.1, p.2))
            .collect()
    }

    fn top_n(people: &[(String, String, i64)], n: usize) -> Vec<Value> {
        let mut v = people.to_vec();
        v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        v.iter()
            .take(n)
            .map(|p| Self::person(&p.0, &p.1, p.2))
            .collect()
    }

    fn people(&self, teams: &[String], q: u32) -> Vec<(String, String, i64)> {
        let mut v = Vec::new();
        for t in teams {
            for (id, (name, c)) in self.sheet(t, q) {
                v.push((id, name, c));
            }
        }
        v
    }

    fn answer(&self) -> Value {
        let q = self.req.quarter;
        let teams = self.teams();
        let per_team = |f: &dyn Fn(&[Seller]) -> Value| -> Value {
            let mut m = serde_json::Map::new();
            for t in &teams {
                m.insert(t.clone(), f(&self.people(std::slice::from_ref(t), q)));
            }
            Value::Object(m)
        };
        match self.req.kind {
            Kind::Top => json!(Self::extreme(&self.people(&teams, q), true)),
            Kind::CrossExtreme { top } => json!(Self::extreme(&self.people(&teams, q), top)),
            Kind::CrossTopN(n) => json!(Self::top_n(&self.people(&teams, q), n)),
            Kind::PerTeamExtreme { top } => per_team(&|p| json!(Self::extreme(p, top))),
            Kind::PerTeamTopN(n) => per_team(&|p| json!(Self::top_n(p, n))),
            Kind::PerTeamAvg => per_team(&|p| {
                let total: i64 = p.iter().map(|x| x.2).sum();
                json!(dollars(total) / p.len().max(1) as f64)
            }),
            Kind::Stats => {
                let p = self.people(&teams, q);
                let total: i64 = p.iter().map(|x| x.2).sum();
                let ids: Vec<&str> = p.iter().map(|x| x.0.as_str()).collect();
                json!({"team": teams.first().cloned().unwrap_or_default(), "employees": p.len(),
                       "employee_ids": ids,
                       "total_sales": dollars(total), "avg_sales_per_person": dollars(total) / p.len().max(1) as f64})
            }
            Kind::PersonQoq { up } => {
                let before = self.sheet(&teams[0], q - 1);
                let now = self.sheet(&teams[0], q);
                let ids: Vec<String> = now
                    .iter()
                    .filter_map(|(id, (_, c))| {
                        let (_, b) = before.get(id)?;
                        let moved = if up { c > b } else { c < b };
                        moved.then(|| id.clone())
                    })
                    .collect();
                json!({"count": ids.len(), "employee_ids": ids})
            }
            Kind::TeamQoq { up } => {
                let total =
                    |t: &str, q: u32| -> i64 { self.sheet(t, q).values().map(|v| v.1).sum() };
                let named: Vec<String> = teams
                    .iter()
                    .filter(|t| {
                        let (a, b) = (total(t, q - 1), total(t, q));
                        if up { b > a } else { b < a }
                    })
                    .cloned()
                    .collect();
                json!({"count": named.len(), "teams": named})
            }
        }
    }

    /// The quarters the request reads.
    fn quarters(&self) -> Vec<u32> {
        match self.req.kind {
            Kind::PersonQoq { .. } | Kind::TeamQoq { .. } => {
                vec![self.req.quarter - 1, self.req.quarter]
            }
            _ => vec![self.req.quarter],
        }
    }

    fn absorb(&mut self, path: &str, text: &str) {
        let name = path.rsplit('/').next().unwrap_or(path);
        let Some(stem) = name.strip_suffix(".csv") else {
            return;
        };
        let parts: Vec<&str> = stem.split('_').collect();
        let quarter = |q: &str| q.strip_prefix('Q').and_then(|q| q.parse::<u32>().ok());
        match parts.as_slice() {
            ["cancellations", q, _year] => {
                let Some(q) = quarter(q) else { return };
                let log = self.cancelled.entry(q).or_default();
                log.extend(
                    csv_records(text)
                        .into_iter()
                        .filter_map(|r| r.get("order_id").cloned()),
                );
            }
            ["sales", team, q, _year] => {
                let Some(q) = quarter(q) else { return };
                let rows = self.orders.entry(((*team).to_owned(), q)).or_default();
                for r in csv_records(text) {
                    if r.get("status")
                        .is_some_and(|s| s.eq_ignore_ascii_case("cancelled"))
                    {
                        continue;
                    }
                    let (Some(id), Some(c)) =
                        (r.get("employee_id"), r.get("amount").and_then(|a| cents(a)))
                    else {
                        continue;
                    };
                    rows.push((
                        r.get("order_id").cloned().unwrap_or_default(),
                        id.clone(),
                        r.get("name").cloned().unwrap_or_default(),
                        c,
                    ));
                }
            }
            _ => {}
        }
    }
}

impl Job for Sales {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::Start => {
                    self.ask = Some(Inquiry::new(
                        department_keys(cx, "Sales"),
                        format!(
                            "Hi {{first}}, I'm analysing the Q{} {} sales figures for the quarterly review. Where can I find the Sales team's handbook on how sales figures are computed?",
                            self.req.quarter, self.req.year
                        ),
                    ));
                    self.phase = Phase::Asking;
                }
                Phase::Asking => {
                    last.take();
                    let ask = self.ask.as_mut().expect("set at start");
                    match ask.poll(cx) {
                        Asked::Send(a) => return a,
                        Asked::Waiting(t) => return Next::Until(t),
                        Asked::Replied(_, texts) => match drive_path(&texts, ".md") {
                            Some(p) => self.phase = Phase::ReadHandbook(p),
                            None => ask.next_person(),
                        },
                        // The rules are the handbook's; without it, still answer.
                        Asked::Exhausted => self.phase = Phase::List,
                    }
                }
                Phase::ReadHandbook(p) => {
                    if last.take().is_some() {
                        self.phase = Phase::List;
                        continue;
                    }
                    return read(&p);
                }
                Phase::List => {
                    if let Some(r) = last.take() {
                        let quarters = self.quarters();
                        let year = self.req.year.to_string();
                        self.files = listed(r)
                            .into_iter()
                            .filter(|p| {
                                let name = p.rsplit('/').next().unwrap_or("");
                                let parts: Vec<&str> =
                                    name.trim_end_matches(".csv").split('_').collect();
                                match parts.as_slice() {
                                    ["cancellations", q, y] => {
                                        *y == year && quarters.iter().any(|x| *q == format!("Q{x}"))
                                    }
                                    ["sales", team, q, y] => {
                                        *y == year
                                            && quarters.iter().any(|x| *q == format!("Q{x}"))
                                            && (self.req.teams.is_empty()
                                                || self.req.teams.iter().any(|t| t == team))
                                    }
                                    _ => false,
                                }
                            })
                            .collect();
                        self.phase = Phase::Read;
                        continue;
                    }
                    return Next::Call("list_folder", json!({"path": self.req.folder}));
                }
                Phase::Read => {
                    if let Some(r) = last.take() {
                        let path = self.files.remove(0);
                        if let Some(t) = file_text(r) {
                            self.absorb(&path, t);
                        }
                    }
                    match self.files.first() {
                        Some(p) => return read(p),
                        None => self.phase = Phase::Write,
                    }
                }
                Phase::Write => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    return write(&self.req.out, &self.answer().to_string());
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}
