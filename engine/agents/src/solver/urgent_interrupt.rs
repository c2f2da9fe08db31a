//! Urgent interrupts and the routine task they interrupt.
//!
//! The urgent task's objective only says a request is in the messages: the solver
//! reads the manager's message and recognises which of four requests it is (a
//! figure from a quarterly report, an incident snapshot, a contract reference to
//! forward, a budget to relay from a named colleague). The routine task collects
//! workshop sign-ups from each host named in the schedule.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Brief, Cx, Job, Next, backticked, csv_records, file_text, first_number, listed, md_rows,
    number_after, read, send, write,
};
use tbsim_core::protocol::ToolResult;

/// The solver if the objective is an urgent request or the workshop sign-ups.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if o.contains("has just sent you an urgent request") {
        return Some(Box::new(Urgent {
            manager: task.assigned_by.clone(),
            request: None,
            phase: Phase::Start,
            more: Vec::new(),
            total: 0,
        }));
    }
    if o.contains("workshop sign-up numbers") {
        let t = backticked(o);
        return Some(Box::new(Signups {
            schedule: t.iter().find(|p| p.ends_with(".md"))?.clone(),
            out: t.iter().find(|p| p.ends_with(".json"))?.clone(),
            hosts: Vec::new(),
            asked: 0,
            since: BTreeMap::new(),
            phase: 0,
        }));
    }
    None
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(&s[i..j])
}

#[derive(Debug, Clone, PartialEq)]
enum Request {
    Lookup {
        metric: String,
        region: String,
        /// One report per quarter whose figures are added up.
        file_suffixes: Vec<String>,
        folder: String,
    },
    Brief {
        service: String,
        folder: String,
        out: String,
    },
    Forward {
        colleague: String,
        vendor: String,
        folder: String,
    },
    Relay {
        project: String,
        holder: String,
    },
}

fn metric_column(spoken: &str) -> &'static str {
    if spoken.contains("revenue") {
        "revenue_keur"
    } else if spoken.contains("new customers") {
        "new_customers"
    } else if spoken.contains("returned") {
        "returns"
    } else {
        "orders"
    }
}

fn parse_request(m: &str) -> Option<Request> {
    let folder = || -> Option<String> {
        backticked(m)
            .into_iter()
            .find(|p| p.starts_with("drive/"))
            .map(|p| p.trim_end_matches('/').to_owned())
    };
    if m.contains(" region over Q") {
        let metric = between(m, "need the ", " for the ")?.to_owned();
        let region =
            between(m, &format!("need the {metric} for the "), " region over Q")?.to_owned();
        let quarters = between(m, " region over ", " combined")?;
        let file_suffixes = quarters
            .split(" and ")
            .map(|q| {
                let (qq, qy) = q.trim().trim_start_matches('Q').split_once(' ')?;
                Some(format!("_{qy}_q{qq}.csv"))
            })
            .collect::<Option<Vec<String>>>()?;
        return Some(Request::Lookup {
            metric,
            region,
            file_suffixes,
            folder: folder()?,
        });
    }
    if m.contains("incidents that are not resolved") {
        return Some(Request::Brief {
            service: between(m, "logged so far by the ", " incidents")?.to_owned(),
            folder: folder()?,
            out: backticked(m).into_iter().find(|p| p.ends_with(".json"))?,
        });
    }
    if m.contains("contract reference") {
        let colleague = between(m, "quick one: ", " (")?.to_owned();
        return Some(Request::Forward {
            colleague,
            vendor: between(m, "on a call with ", " and needs")?.to_owned(),
            folder: folder()?,
        });
    }
    if m.contains("approved budget is still unspent") {
        let project = between(m, "how much of Project ", "'s approved")?.to_owned();
        let before = m.split(" in Finance keeps").next()?;
        let holder = before.rsplit(". ").next()?.trim().to_owned();
        return Some(Request::Relay { project, holder });
    }
    None
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Start,
    List(String),
    Read(String),
    Asked(usize),
    Reply(Next),
    Done,
}

struct Urgent {
    manager: String,
    request: Option<Request>,
    phase: Phase,
    /// Reports still to read for a lookup, and the total so far.
    more: Vec<String>,
    total: u64,
}

impl Urgent {
    fn answer_from(&self, cx: &Cx, text: &str) -> Option<Next> {
        match self.request.as_ref()? {
            // Read report by report in `step`.
            Request::Lookup { .. } => None,
            Request::Brief { service, out, .. } => {
                let mut c: BTreeMap<&str, u64> =
                    [("critical", 0), ("major", 0), ("minor", 0)].into();
                for r in csv_records(text) {
                    if r.get("service").is_some_and(|s| s == service)
                        && r.get("status").is_some_and(|s| s != "resolved")
                        && let Some(n) = r.get("severity").and_then(|s| c.get_mut(s.as_str()))
                    {
                        *n += r.get("minutes_down")?.parse::<u64>().ok()?;
                    }
                }
                Some(write(out, &json!(c).to_string()))
            }
            Request::Forward {
                colleague, vendor, ..
            } => {
                let row = csv_records(text).into_iter().find(|r| {
                    r.get("supplier").is_some_and(|s| s == vendor)
                        && r.get("status").is_some_and(|s| s == "active")
                })?;
                let reference = row.get("contract_ref")?.clone();
                let to = cx
                    .colleague(colleague)
                    .map_or(colleague.clone(), |c| c.key.clone());
                let first = colleague.split_whitespace().next().unwrap_or(colleague);
                Some(send(
                    &to,
                    &format!(
                        "Hi {first}, our current contract reference for {vendor} is {reference}."
                    ),
                ))
            }
            Request::Relay { .. } => None,
        }
    }
}

impl Job for Urgent {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::Start => {
                    // The release names the manager; messages come from their key.
                    if let Some(c) = cx.colleague(&self.manager) {
                        self.manager = c.key.clone();
                    }
                    let found = cx
                        .inbox
                        .iter()
                        .rev()
                        .filter(|h| h.from == self.manager)
                        .find_map(|h| parse_request(&h.text));
                    let Some(req) = found else {
                        return Next::Idle;
                    };
                    self.phase = match &req {
                        Request::Lookup { folder, .. }
                        | Request::Brief { folder, .. }
                        | Request::Forward { folder, .. } => Phase::List(folder.clone()),
                        Request::Relay { .. } => Phase::Asked(cx.inbox.len()),
                    };
                    self.request = Some(req.clone());
                    if let Request::Relay { project, holder } = req {
                        let to = cx
                            .colleague(&holder)
                            .map_or(holder.clone(), |c| c.key.clone());
                        let first = holder
                            .split_whitespace()
                            .next()
                            .unwrap_or(&holder)
                            .to_owned();
                        return send(
                            &to,
                            &format!(
                                "Hi {first}, how much of Project {project}'s approved budget is left? I need the approved amount and what has been spent so far."
                            ),
                        );
                    }
                }
                Phase::List(folder) => {
                    if let Some(r) = last.take() {
                        let files = listed(r);
                        let want = match self.request.as_ref() {
                            Some(Request::Lookup { file_suffixes, .. }) => {
                                let mut found: Vec<String> = file_suffixes
                                    .iter()
                                    .filter_map(|x| {
                                        files.iter().find(|f| f.ends_with(x.as_str())).cloned()
                                    })
                                    .collect();
                                if found.len() != file_suffixes.len() {
                                    self.phase = Phase::Done;
                                    continue;
                                }
                                let first = found.remove(0);
                                self.more = found;
                                Some(first)
                            }
                            Some(Request::Brief { .. }) => files
                                .iter()
                                .find(|f| f.ends_with("incident_log.csv"))
                                .cloned(),
                            Some(Request::Forward { .. }) => files
                                .iter()
                                .find(|f| f.ends_with("contract_register.csv"))
                                .cloned(),
                            _ => None,
                        };
                        let Some(file) =
                            want.or_else(|| files.iter().find(|f| f.ends_with(".csv")).cloned())
                        else {
                            self.phase = Phase::Done;
                            continue;
                        };
                        self.phase = Phase::Read(file);
                        continue;
                    }
                    return Next::Call("list_folder", json!({"path": folder}));
                }
                Phase::Read(file) => {
                    if let Some(r) = last.take() {
                        let text = file_text(r).unwrap_or_default().to_owned();
                        if let Some(Request::Lookup { region, metric, .. }) = &self.request {
                            // The region's cell of this quarter's report, added to the
                            // total; the reply once every report is read.
                            let cell = csv_records(&text)
                                .into_iter()
                                .find(|r| r.get("region").is_some_and(|x| x == region))
                                .and_then(|r| r.get(metric_column(metric))?.parse::<u64>().ok());
                            self.phase = match (cell, self.more.pop()) {
                                (None, _) => Phase::Done,
                                (Some(v), Some(next)) => {
                                    self.total += v;
                                    Phase::Read(next)
                                }
                                (Some(v), None) => {
                                    self.total += v;
                                    Phase::Reply(send(&self.manager, &self.total.to_string()))
                                }
                            };
                            continue;
                        }
                        self.phase = match self.answer_from(cx, &text) {
                            Some(a) => Phase::Reply(a),
                            None => Phase::Done,
                        };
                        continue;
                    }
                    return read(&file);
                }
                Phase::Asked(since) => {
                    last.take();
                    let Some(Request::Relay { project, holder }) = self.request.clone() else {
                        self.phase = Phase::Done;
                        continue;
                    };
                    let key = cx
                        .colleague(&holder)
                        .map_or(holder.clone(), |c| c.key.clone());
                    let replies = cx.replies_from(&key, since);
                    // What is left: the approved amount less what has been spent.
                    let spent = |t: &str| {
                        let head = &t[..t.find(" EUR has been spent")?];
                        let from = head.rfind(|c: char| !(c.is_ascii_digit() || c == ','))?;
                        head[from + 1..].replace(',', "").parse::<f64>().ok()
                    };
                    let Some(amount) = replies
                        .iter()
                        .find_map(|h| Some(number_after(&h.text, "approved ")? - spent(&h.text)?))
                    else {
                        if replies.is_empty() {
                            return Next::Idle;
                        }
                        self.phase = Phase::Done;
                        continue;
                    };
                    self.phase = Phase::Reply(send(
                        &self.manager,
                        &format!(
                            "Project {project} has {} EUR of its approved budget left.",
                            amount as u64
                        ),
                    ));
                }
                Phase::Reply(act) => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    return act;
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}

struct Signups {
    schedule: String,
    out: String,
    /// (title, host name).
    hosts: Vec<(String, String)>,
    asked: usize,
    /// Host key -> inbox length when asked.
    since: BTreeMap<String, usize>,
    phase: u8,
}

fn workshops(schedule: &str) -> Vec<(String, String)> {
    let rows = md_rows(schedule);
    let Some((head, body)) = rows.split_first() else {
        return Vec::new();
    };
    let col = |name: &str| head.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (Some(w), Some(h)) = (col("Workshop"), col("Host")) else {
        return Vec::new();
    };
    body.iter()
        .filter_map(|r| Some((r.get(w)?.clone(), r.get(h)?.clone())))
        .collect()
}

/// The confirmed count in a host's reply, read from what each figure counts: said
/// as confirmed ("12 confirmed sign-ups", "12 are confirmed", "12 sign-ups are
/// confirmed"; never the waiting list's), or as registrations less cancellations ("15 registered ... 3 of
/// them have cancelled", "3 cancellations ... out of 15 registrations"). Waiting-list
/// figures never count.
fn confirmed(text: &str) -> Option<f64> {
    let before = |anchor: &str| -> Option<f64> {
        let i = text.find(anchor)?;
        let head = text[..i].trim_end();
        let start = head
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |p| p + 1);
        first_number(&head[start..])
    };
    if text.contains("have cancelled") || text.contains("cancellations") {
        let total = before(" people registered").or_else(|| number_after(text, "out of "))?;
        let gone = before(" of them have cancelled").or_else(|| before(" cancellations"))?;
        return Some(total - gone);
    }
    before(" are confirmed")
        .or_else(|| before(" sign-ups are confirmed"))
        .or_else(|| before(" confirmed"))
}

impl Job for Signups {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        match self.phase {
            0 => {
                self.phase = 1;
                read(&self.schedule)
            }
            1 => {
                if let Some(r) = last
                    && r.tool == "read_file"
                {
                    self.hosts = workshops(file_text(r).unwrap_or_default());
                }
                if let Some((title, host)) = self.hosts.get(self.asked).cloned() {
                    self.asked += 1;
                    let key = cx.colleague(&host).map_or(host.clone(), |c| c.key.clone());
                    self.since.insert(key.clone(), cx.inbox.len());
                    let first = host.split_whitespace().next().unwrap_or(&host).to_owned();
                    return send(
                        &key,
                        &format!(
                            "Hi {first}, L&D asked me to collect next week's workshop sign-ups. How many confirmed sign-ups do you have for {title}?"
                        ),
                    );
                }
                self.phase = 2;
                self.step(cx, None)
            }
            2 => {
                let mut list = Vec::new();
                for (title, host) in &self.hosts {
                    let key = cx.colleague(host).map_or(host.clone(), |c| c.key.clone());
                    let since = self.since.get(&key).copied().unwrap_or(0);
                    let got = cx
                        .replies_from(&key, since)
                        .iter()
                        .find_map(|h| confirmed(&h.text));
                    match got {
                        Some(n) => list.push(json!({"title": title, "signups": n as u64})),
                        None => return Next::Idle,
                    }
                }
                self.phase = 3;
                write(&self.out, &json!({"workshops": list}).to_string())
            }
            _ => {
                let _: Option<Value> = None;
                Next::Done
            }
        }
    }
}
