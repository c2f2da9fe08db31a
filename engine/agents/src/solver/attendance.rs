//! Attendance statistics: ask the department's manager where the rules are, read
//! the rules manual, the punch export, the roster and the make-up requests, and
//! apply each department's section of the rules day by day.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Brief, Cx, Incoming, Job, Next, file_text, paths_about, rank_by_folder};
use tbsim_core::protocol::ToolResult;

/// One department's rules as the manual states them (minutes after midnight).
#[derive(Debug, Clone, Default, PartialEq)]
struct Rules {
    start: u32,
    end: u32,
    lunch: u32,
    /// A clock-in after this is late.
    late_after: u32,
    /// Fixed hours: a clock-out before this is early.
    early_before: Option<u32>,
    /// Flexible hours: minutes of work required.
    min_work: Option<u32>,
    ot_from: u32,
    ot_block: u32,
    strict: bool,
    makeup: bool,
}

fn hm(s: &str) -> Option<u32> {
    let s = s.trim_matches(|c: char| !c.is_ascii_digit());
    let (h, m) = s.split_once(':')?;
    Some(h.parse::<u32>().ok()? * 60 + m.parse::<u32>().ok()?)
}

/// The `HH:MM` times in a line, in order.
fn times(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .filter(|w| w.contains(':'))
        .filter_map(hm)
        .collect()
}

/// The number right before `word` in `line`.
fn number_before(line: &str, word: &str) -> Option<u32> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let i = w.iter().position(|x| x.starts_with(word))?;
    w.get(i.checked_sub(1)?)?
        .trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// Each department's section of the manual.
fn parse_manual(text: &str) -> BTreeMap<String, Rules> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Rules)> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.extend(current.take());
            current = Some((h.trim().to_owned(), Rules::default()));
            continue;
        }
        let Some((_, r)) = current.as_mut() else {
            continue;
        };
        let l = line.trim_start_matches("- ").trim();
        let t = times(l);
        if l.starts_with("Scheduled hours:") && t.len() >= 2 {
            r.start = t[0];
            r.end = t[1];
            r.lunch = number_before(l, "minutes").unwrap_or(0);
        } else if l.contains("Late arrival: a clock-in after") && !t.is_empty() {
            r.late_after = t[0];
        } else if l.starts_with("Early departure: a clock-out before") && !t.is_empty() {
            r.early_before = Some(t[0]);
        } else if l.starts_with("Early departure: the time from clock-in") {
            r.min_work = number_before(l, "hours").map(|h| h * 60);
        } else if l.starts_with("Overtime:") && !t.is_empty() {
            r.ot_from = t[0];
            r.ot_block = number_before(l, "minutes").unwrap_or(0);
        } else if l.starts_with("Missing punches:") {
            r.strict = l.contains("without both a clock-in and a clock-out is an absence");
        } else if l.starts_with("Make-up requests are accepted") {
            r.makeup = true;
        }
    }
    out.extend(current);
    // Sections without scheduled hours are not departments.
    out.retain(|_, r| r.end > 0);
    out
}

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    late: (u32, u32),
    early: (u32, u32),
    absent: u32,
    overtime: u32,
    remote: u32,
    present: u32,
}

/// Day of the week, 0 = Sunday.
fn weekday(y: i64, m: i64, d: i64) -> i64 {
    // Zeller-style via days from civil (Hinnant).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days + 4).rem_euclid(7)
}

fn days_in(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A punch: (minute, is clock-in, remote).
type Punch = (u32, bool, bool);

fn judge(rules: &Rules, day: &[Punch], s: &mut Stats) {
    let day: Vec<&Punch> = day
        .iter()
        .filter(|p| (6 * 60..=23 * 60 + 59).contains(&p.0))
        .collect();
    if day.is_empty() {
        s.absent += 1;
        return;
    }
    let first_in = day.iter().filter(|p| p.1).map(|p| p.0).min();
    let last_out = day.iter().filter(|p| !p.1).map(|p| p.0).max();
    if rules.strict && (first_in.is_none() || last_out.is_none()) {
        s.absent += 1;
        return;
    }
    s.present += 1;
    if day.iter().any(|p| p.2) {
        s.remote += 1;
    }
    if let Some(i) = first_in
        && i > rules.late_after
    {
        s.late.0 += 1;
        s.late.1 += i - rules.start;
    }
    if let Some(o) = last_out {
        match (rules.min_work, rules.early_before) {
            (Some(need), _) => {
                if let Some(i) = first_in {
                    let worked = o.saturating_sub(i + rules.lunch);
                    if worked < need {
                        s.early.0 += 1;
                        s.early.1 += need - worked;
                    }
                }
            }
            (None, Some(before)) => {
                if o < before {
                    s.early.0 += 1;
                    s.early.1 += rules.end - o;
                }
            }
            (None, None) => {}
        }
        if o >= rules.ot_from + rules.ot_block {
            s.overtime += o - rules.ot_from;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Question {
    AvgLateEarly,
    HasLateOrEarly,
    TotalAbsence,
    Overtime,
    Statistics,
    /// Late (else early), most (else fewest).
    Extreme(bool, bool),
    /// Percent, late (else early).
    Top(u32, bool),
    Remote,
    Perfect,
}

fn question(o: &str) -> Option<Question> {
    Some(
        if o.contains("average number of late days and of early-departure days") {
            Question::AvgLateEarly
        } else if o.contains("had at least one late arrival or early departure") {
            Question::HasLateOrEarly
        } else if o.contains("total number of absence days") {
            Question::TotalAbsence
        } else if o.contains("average overtime per employee") {
            Question::Overtime
        } else if o.contains("attendance statistics for") {
            Question::Statistics
        } else if let Some(i) = o.find("report the top ") {
            let rest = &o[i + "report the top ".len()..];
            let p = rest.split('%').next()?.parse().ok()?;
            let by = &rest[rest.find(" by ")? + 4..];
            Question::Top(p, by.starts_with("late"))
        } else if o.contains("with the most late days") {
            Question::Extreme(true, true)
        } else if o.contains("with the fewest late days") {
            Question::Extreme(true, false)
        } else if o.contains("with the most early departures") {
            Question::Extreme(false, true)
        } else if o.contains("with the fewest early departures") {
            Question::Extreme(false, false)
        } else if o.contains("with the most remote days") {
            Question::Remote
        } else if o.contains("with perfect attendance") {
            Question::Perfect
        } else {
            return None;
        },
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Colleagues,
    Ask,
    AwaitReply,
    ListFolder,
    Read(usize),
    Write,
    Done,
}

#[derive(Debug)]
pub(crate) struct Attendance {
    q: Question,
    /// `None` for the whole company.
    dept: Option<String>,
    folder: String,
    answer: String,
    month: String,
    stage: Stage,
    contacts: Vec<(String, String)>,
    asked: usize,
    manual: Option<String>,
    approvals: Option<String>,
    to_read: Vec<String>,
    texts: BTreeMap<String, String>,
}

pub(crate) fn recognise(b: &Brief) -> Option<Box<dyn Job>> {
    let o = &b.objective;
    if !o.starts_with("Please analyse last month's attendance") {
        return None;
    }
    let q = question(o)?;
    let quoted: Vec<&str> = o.split('`').skip(1).step_by(2).collect();
    let folder = quoted
        .iter()
        .find(|p| p.starts_with("drive/"))?
        .trim_end_matches('/')
        .to_owned();
    let answer = (*quoted.iter().find(|p| p.starts_with("workspace/"))?).to_owned();
    let month = o[o.find('(')? + 1..o.find(')')?].to_owned();
    let dept = o.find("ask the ").and_then(|i| {
        let rest = &o[i + "ask the ".len()..];
        Some(rest[..rest.find(" manager")?].to_owned())
    });
    Some(Box::new(Attendance {
        q,
        dept,
        folder,
        answer,
        month,
        stage: Stage::Colleagues,
        contacts: Vec::new(),
        asked: 0,
        manual: None,
        approvals: None,
        to_read: Vec::new(),
        texts: BTreeMap::new(),
    }))
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

impl Attendance {
    fn compute(&self) -> Option<Value> {
        let rules = parse_manual(self.texts.get(self.manual.as_ref()?)?);
        let roster: Vec<Value> = self
            .texts
            .iter()
            .find(|(p, _)| p.ends_with("staff_roster.json"))
            .and_then(|(_, t)| serde_json::from_str(t).ok())?;
        let (csv_path, csv) = self.texts.iter().find(|(p, _)| p.ends_with(".csv"))?;
        let ym = csv_path
            .rsplit("attendance_")
            .next()?
            .trim_end_matches(".csv");
        let (y, m) = ym.split_once('-')?;
        let (y, m): (i64, i64) = (y.parse().ok()?, m.parse().ok()?);
        let workdays: Vec<i64> = (1..=days_in(y, m))
            .filter(|&d| !matches!(weekday(y, m, d), 0 | 6))
            .collect();
        // (employee, day) -> punches.
        let mut punches: BTreeMap<(String, i64), Vec<Punch>> = BTreeMap::new();
        for line in csv.lines().skip(1) {
            let c: Vec<&str> = line.split(',').collect();
            let (Some(id), Some(ts), Some(io)) = (c.first(), c.get(1), c.get(2)) else {
                continue;
            };
            let Some((date, time)) = ts.split_once(' ') else {
                continue;
            };
            let (Some(day), Some(min)) = (
                date.rsplit('-').next().and_then(|d| d.parse().ok()),
                hm(time),
            ) else {
                continue;
            };
            let remote = c.get(4).is_some_and(|t| t.contains("remote"));
            punches
                .entry((id.to_string(), day))
                .or_default()
                .push((min, *io == "in", remote));
        }
        let dept_of: BTreeMap<String, String> = roster
            .iter()
            .filter_map(|e| {
                Some((
                    e["employee_id"].as_str()?.to_owned(),
                    e["department"].as_str()?.to_owned(),
                ))
            })
            .collect();
        if let Some(a) = self.approvals.as_ref().and_then(|p| self.texts.get(p)) {
            let list: Vec<Value> = serde_json::from_str(a).unwrap_or_default();
            for r in list {
                let (Some(id), Some(date), Some(io), Some(time)) = (
                    r["employee_id"].as_str(),
                    r["date"].as_str(),
                    r["io"].as_str(),
                    r["time"].as_str(),
                ) else {
                    continue;
                };
                let accepted = dept_of
                    .get(id)
                    .and_then(|d| rules.get(d))
                    .is_some_and(|r| r.makeup);
                if r["status"].as_str() != Some("approved") || !accepted {
                    continue;
                }
                let (Some(day), Some(min)) = (
                    date.rsplit('-').next().and_then(|d| d.parse().ok()),
                    hm(time),
                ) else {
                    continue;
                };
                punches
                    .entry((id.to_owned(), day))
                    .or_default()
                    .push((min, io == "in", false));
            }
        }
        // Employees in scope, in roster order: (id, name, department, stats).
        let mut scope: Vec<(String, String, String, Stats)> = Vec::new();
        for e in &roster {
            let (Some(id), Some(name), Some(d)) = (
                e["employee_id"].as_str(),
                e["name"].as_str(),
                e["department"].as_str(),
            ) else {
                continue;
            };
            if self.dept.as_deref().is_some_and(|want| want != d) {
                continue;
            }
            let r = rules.get(d)?;
            let mut s = Stats::default();
            for &day in &workdays {
                let p = punches
                    .get(&(id.to_owned(), day))
                    .cloned()
                    .unwrap_or_default();
                judge(r, &p, &mut s);
            }
            scope.push((id.to_owned(), name.to_owned(), d.to_owned(), s));
        }
        let n = scope.len() as f64;
        if scope.is_empty() {
            return None;
        }
        let sum = |f: &dyn Fn(&Stats) -> u32| scope.iter().map(|e| f64::from(f(&e.3))).sum::<f64>();
        let key = |s: &Stats, late: bool| if late { s.late } else { s.early };
        let people = |winners: Vec<&(String, String, String, Stats)>, late: Option<bool>| {
            let list: Vec<Value> = winners
                .iter()
                .map(|(id, name, d, s)| match late {
                    Some(l) => {
                        let m = if l { "late" } else { "early" };
                        let (days, mins) = key(s, l);
                        json!({"employee_id": id, "name": name, format!("{m}_days"): days, format!("{m}_minutes_total"): mins})
                    }
                    None if self.q == Question::Remote => {
                        json!({"employee_id": id, "name": name, "remote_days": s.remote})
                    }
                    None => json!({"employee_id": id, "name": name, "department": d}),
                })
                .collect();
            json!({ "employees": list })
        };
        Some(match self.q {
            Question::AvgLateEarly => json!({
                "avg_late_days": r2(sum(&|s| s.late.0) / n),
                "avg_early_days": r2(sum(&|s| s.early.0) / n),
            }),
            Question::HasLateOrEarly => {
                let ids: Vec<&str> = scope
                    .iter()
                    .filter(|e| e.3.late.0 + e.3.early.0 > 0)
                    .map(|e| e.0.as_str())
                    .collect();
                json!({"has_late_or_early": !ids.is_empty(), "employees": ids, "present_days": sum(&|s| s.present) as u64})
            }
            Question::TotalAbsence => json!({"total_absence_days": sum(&|s| s.absent) as u64}),
            Question::Overtime => {
                json!({"average_overtime_hours": r2(sum(&|s| s.overtime) / 60.0 / n)})
            }
            Question::Statistics => json!({
                "employees": scope.len(),
                "avg_late_days": r2(sum(&|s| s.late.0) / n),
                "avg_early_days": r2(sum(&|s| s.early.0) / n),
                "avg_absence_days": r2(sum(&|s| s.absent) / n),
                "attendance_rate": r2(sum(&|s| s.present) / (n * workdays.len() as f64) * 100.0),
            }),
            Question::Extreme(late, most) => {
                let keys = scope.iter().map(|e| key(&e.3, late));
                let best = if most { keys.max() } else { keys.min() }?;
                people(
                    scope.iter().filter(|e| key(&e.3, late) == best).collect(),
                    Some(late),
                )
            }
            Question::Top(p, late) => {
                let mut ranked: Vec<(u32, u32)> = scope
                    .iter()
                    .map(|e| key(&e.3, late))
                    .filter(|k| k.0 > 0)
                    .collect();
                ranked.sort_by(|a, b| b.cmp(a));
                let want = (scope.len() * p as usize).div_ceil(100).max(1);
                let threshold = *ranked.get(want.min(ranked.len()).checked_sub(1)?)?;
                people(
                    scope
                        .iter()
                        .filter(|e| key(&e.3, late).0 > 0 && key(&e.3, late) >= threshold)
                        .collect(),
                    Some(late),
                )
            }
            Question::Remote => {
                let best = scope.iter().map(|e| e.3.remote).max()?;
                people(scope.iter().filter(|e| e.3.remote == best).collect(), None)
            }
            Question::Perfect => people(
                scope
                    .iter()
                    .filter(|e| e.3.late.0 + e.3.early.0 + e.3.absent == 0)
                    .collect(),
                None,
            ),
        })
    }
}

impl Job for Attendance {
    fn step(&mut self, _cx: &Cx, _last: Option<&ToolResult>) -> Next {
        match self.stage.clone() {
            Stage::Colleagues => Next::Call("list_colleagues", json!({})),
            Stage::Ask => {
                let Some((key, name)) = self.contacts.get(self.asked).cloned() else {
                    self.stage = Stage::Done;
                    return Next::Done;
                };
                self.asked += 1;
                self.stage = Stage::AwaitReply;
                let who = match &self.dept {
                    Some(d) => format!("the {d} department"),
                    None => "the whole company".to_owned(),
                };
                let first = name.split_whitespace().next().unwrap_or(&name).to_owned();
                Next::Call(
                    "send_message",
                    json!({"to": key, "text": format!("Hi {first}, I'm preparing the {} attendance figures for {who}. Where can I find the attendance rules manual that applies?", self.month)}),
                )
            }
            Stage::AwaitReply => Next::Idle,
            Stage::ListFolder => Next::Call("list_folder", json!({"path": self.folder})),
            Stage::Read(i) => match self.to_read.get(i) {
                Some(p) => Next::Call("read_file", json!({"path": p})),
                // Only reached with nothing to read: no answer can be computed.
                None => {
                    self.stage = Stage::Done;
                    Next::Done
                }
            },
            Stage::Write => {
                self.stage = Stage::Done;
                match self.compute() {
                    Some(v) => Next::Call(
                        "write_file",
                        json!({"path": self.answer, "content": serde_json::to_string_pretty(&v).unwrap_or_default()}),
                    ),
                    None => Next::Done,
                }
            }
            Stage::Done => Next::Done,
        }
    }

    fn on_result(&mut self, r: &ToolResult) {
        match (&self.stage, r.tool.as_str()) {
            (Stage::Colleagues, "list_colleagues") => {
                let dept = self
                    .dept
                    .clone()
                    .unwrap_or_else(|| "Human Resources".into());
                let list = r
                    .result
                    .as_ref()
                    .and_then(|v| v["colleagues"].as_array().cloned())
                    .unwrap_or_default();
                self.contacts = list
                    .iter()
                    .filter(|c| {
                        c["department"].as_str() == Some(dept.as_str())
                            && c["position"]
                                .as_str()
                                .is_some_and(|p| p.ends_with("Manager"))
                    })
                    .map(|c| {
                        (
                            c["key"].as_str().unwrap_or("").to_owned(),
                            c["name"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .take(3)
                    .collect();
                self.stage = Stage::Ask;
            }
            (Stage::ListFolder, "list_folder") => {
                let entries = r
                    .result
                    .as_ref()
                    .and_then(|v| v["entries"].as_array().cloned())
                    .unwrap_or_default();
                for e in entries {
                    let Some(name) = e["name"].as_str() else {
                        continue;
                    };
                    let path = format!("{}/{name}", self.folder);
                    let wanted = name == "staff_roster.json"
                        || (name.starts_with("attendance_") && name.ends_with(".csv"));
                    if wanted && !self.to_read.contains(&path) {
                        self.to_read.push(path);
                    }
                }
                self.stage = Stage::Read(0);
            }
            (Stage::Read(i), "read_file") => {
                if let (Some(text), Some(p)) = (file_text(r), self.to_read.get(*i)) {
                    self.texts.insert(p.clone(), text.to_owned());
                }
                self.stage = if i + 1 < self.to_read.len() {
                    Stage::Read(i + 1)
                } else {
                    Stage::Write
                };
            }
            _ => {}
        }
    }

    fn on_message(&mut self, m: &Incoming) {
        if self.stage != Stage::AwaitReply || !self.contacts.iter().any(|(k, _)| *k == m.from) {
            return;
        }
        let mut paths = paths_about(&m.text, &["attendance"]);
        rank_by_folder(&mut paths, &self.folder);
        match paths.iter().find(|p| p.ends_with(".md")) {
            Some(manual) => {
                self.manual = Some(manual.clone());
                self.to_read.push(manual.clone());
                if let Some(a) = paths.iter().find(|p| p.ends_with("approvals.json")) {
                    self.approvals = Some(a.clone());
                    self.to_read.push(a.clone());
                }
                self.stage = Stage::ListFolder;
            }
            None => self.stage = Stage::Ask,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekdays() {
        assert_eq!(weekday(2025, 10, 1), 3);
        assert_eq!(weekday(2024, 2, 29), 4);
        assert_eq!(weekday(2026, 1, 4), 0);
    }

    #[test]
    fn manual_sections_parse() {
        let text = "# Rules\n\n## How a working day is read\n\n1. x\n\n## Sales\n\n- Scheduled hours: 09:00 to 18:00, with an unpaid lunch break of 60 minutes.\n- Late arrival: a clock-in after 09:05 (5 minutes' grace). Late minutes are counted from 09:00.\n- Early departure: a clock-out before 17:55 (5 minutes' grace). Early minutes are counted back from 18:00.\n- Overtime: the time from 18:30 to the clock-out. A day with less than 30 minutes of it counts no overtime at all.\n- Missing punches: a working day without both a clock-in and a clock-out is an absence.\n- Make-up requests are accepted (see below).\n";
        let r = &parse_manual(text)["Sales"];
        assert_eq!(
            (r.start, r.end, r.lunch, r.late_after, r.early_before),
            (540, 1080, 60, 545, Some(1075))
        );
        assert_eq!(
            (r.ot_from, r.ot_block, r.strict, r.makeup),
            (1110, 30, true, true)
        );
        assert_eq!(parse_manual(text).len(), 1);
    }
}
