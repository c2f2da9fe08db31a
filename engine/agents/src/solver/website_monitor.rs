//! Website incidents: find the slow page from the load times (last hour against
//! last week), the failing service and its cause from the health check (the one
//! service in critical state, and its critical metric), and the failing service's
//! owner: HR (following a pointer to the register keeper when given one) says where
//! the system-ownership register is, and the failing service's system's row there
//! names its owner.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Asked, Brief, Cx, Inquiry, Job, Next, backticked, department_keys, drive_path, file_text,
    md_rows, read, write,
};
use tbsim_core::protocol::ToolResult;

/// The solver if the objective is the website incident.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if !(o.contains("website") && o.contains("page_load_times")) {
        return None;
    }
    let t = backticked(o);
    Some(Box::new(Incident {
        runbook: t.iter().find(|p| p.ends_with(".md")).cloned(),
        out: t.iter().find(|p| p.ends_with(".json"))?.clone(),
        phase: 0,
        week: BTreeMap::new(),
        hour: BTreeMap::new(),
        failing: Vec::new(),
        causes: Vec::new(),
        ask: None,
        owner: None,
    }))
}

struct Incident {
    runbook: Option<String>,
    out: String,
    phase: u8,
    week: BTreeMap<(String, String), f64>,
    hour: BTreeMap<(String, String), f64>,
    failing: Vec<String>,
    causes: Vec<String>,
    ask: Option<Inquiry>,
    owner: Option<String>,
}

/// Average load per (page, front end serving it): a page served by two front ends
/// is listed once for each, and only one of them may be slow.
fn loads(r: &ToolResult) -> BTreeMap<(String, String), f64> {
    r.result
        .as_ref()
        .and_then(|v| v.get("pages"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let server = p.get("served_by").and_then(Value::as_str).unwrap_or("");
            Some((
                (p.get("page")?.as_str()?.to_owned(), server.to_owned()),
                p.get("avg_load_ms")?.as_f64()?,
            ))
        })
        .collect()
}

fn cause_of(metric: &str) -> Option<&'static str> {
    Some(match metric {
        m if m.starts_with("disk") => "disk_full",
        m if m.starts_with("connection_pool") => "connection_pool_exhausted",
        m if m.starts_with("memory") => "memory_exhausted",
        m if m.starts_with("cpu") => "cpu_saturated",
        _ => return None,
    })
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(&s[i..j])
}

impl Incident {
    fn slow_page(&self) -> Option<String> {
        self.hour
            .iter()
            .map(|(p, h)| {
                let w = self.week.get(p).copied().unwrap_or(*h).max(1.0);
                (h / w, p.0.clone())
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|x| x.1)
    }

    fn report(&self) -> String {
        let page: Vec<String> = self.slow_page().into_iter().collect();
        let owners: Vec<String> = self.owner.clone().into_iter().collect();
        let summary = format!(
            "{} is slow because {} reports {}; owner: {}.",
            page.join(", "),
            self.failing.join(", "),
            self.causes.join(", "),
            owners.join(", ")
        );
        json!({"slow_pages": page, "failing_services": self.failing, "causes": self.causes,
               "owners": owners, "summary": summary})
        .to_string()
    }
}

impl Job for Incident {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        loop {
            match self.phase {
                0 => {
                    self.phase = 1;
                    if let Some(r) = &self.runbook {
                        return read(r);
                    }
                }
                1 => {
                    self.phase = 2;
                    return Next::Call("page_load_times", json!({"window": "last_7_days"}));
                }
                2 => {
                    if let Some(r) = last {
                        self.week = loads(r);
                    }
                    self.phase = 3;
                    return Next::Call("page_load_times", json!({"window": "last_hour"}));
                }
                3 => {
                    if let Some(r) = last {
                        self.hour = loads(r);
                    }
                    self.phase = 4;
                    return Next::Call("service_health", json!({}));
                }
                4 => {
                    if let Some(r) = last {
                        for s in r
                            .result
                            .as_ref()
                            .and_then(|v| v.get("services"))
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            if s.get("status").and_then(Value::as_str) != Some("critical") {
                                continue;
                            }
                            let name = s
                                .get("service")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned();
                            self.failing.push(name);
                            for m in s
                                .get("metrics")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if m.get("status").and_then(Value::as_str) == Some("critical")
                                    && let Some(c) =
                                        m.get("metric").and_then(Value::as_str).and_then(cause_of)
                                    && !self.causes.iter().any(|x| x == c)
                                {
                                    self.causes.push(c.to_owned());
                                }
                            }
                        }
                    }
                    self.ask = Some(Inquiry::new(
                        department_keys(cx, "Human Resources"),
                        "Hi {first}, our public website has become slow and I need to reach whoever owns it. Who looks after the website?",
                    ));
                    self.phase = 5;
                }
                5 => {
                    let ask = self.ask.as_mut().expect("set before");
                    match ask.poll(cx) {
                        Asked::Send(a) => return a,
                        Asked::Waiting(t) => return Next::Until(t),
                        Asked::Replied(_, texts) => {
                            let text = texts.join(" ");
                            if let Some(path) = drive_path(&texts, ".md") {
                                self.phase = 7;
                                return read(&path);
                            } else if let Some(keeper) = between(&text, "myself; ", " does")
                                && let Some(c) = cx.colleague(keeper.trim())
                            {
                                ask.queue.insert(0, c.key.clone());
                                ask.next_person();
                            } else {
                                ask.next_person();
                            }
                        }
                        Asked::Exhausted => self.phase = 6,
                    }
                }
                6 => {
                    self.phase = 8;
                    return write(&self.out, &self.report());
                }
                7 => {
                    // The register's row of the failing service's system: a running
                    // service is its system's name and an instance number.
                    if let Some(text) = last.and_then(file_text) {
                        let rows = md_rows(text);
                        let col = |name: &str| {
                            rows.first()
                                .and_then(|h| h.iter().position(|c| c.eq_ignore_ascii_case(name)))
                        };
                        if let (Some(sys), Some(own)) = (col("system"), col("owner")) {
                            for failing in &self.failing {
                                let system = failing
                                    .rsplit_once('-')
                                    .filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()))
                                    .map_or(failing.as_str(), |(s, _)| s);
                                if let Some(r) = rows
                                    .iter()
                                    .skip(1)
                                    .find(|r| r.get(sys).is_some_and(|c| c == system))
                                {
                                    self.owner = r.get(own).cloned();
                                }
                            }
                        }
                    }
                    self.phase = 6;
                }
                _ => return Next::Done,
            }
        }
    }
}
