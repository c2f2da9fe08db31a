//! Resume shortlisting: read the requirements from the request, read every resume
//! in the folder, and keep the applicants who meet all of them.

use serde_json::json;

use super::{Brief, Cx, Job, Next, backticked, file_text, listed, read, write};
use tbsim_core::protocol::ToolResult;

#[derive(Debug, Clone, PartialEq)]
struct Req {
    position: String,
    degree: usize,
    major: String,
    years: u32,
    skills: Vec<String>,
    folder: String,
    out: String,
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(&s[i..j])
}

fn and_split(s: &str) -> Vec<String> {
    let s = s.replace(", and ", ", ").replace(" and ", ", ");
    s.split(", ")
        .map(|x| x.trim().to_owned())
        .filter(|x| !x.is_empty())
        .collect()
}

fn parse(o: &str) -> Option<Req> {
    let position = between(o, "We are hiring a ", ".")
        .or_else(|| between(o, "We are hiring an ", "."))?
        .trim()
        .to_owned();
    let ticks = backticked(o);
    let folder = ticks
        .iter()
        .find(|t| t.starts_with("drive/"))?
        .trim_end_matches('/')
        .to_owned();
    let out = ticks.iter().find(|t| t.ends_with(".json"))?.clone();
    let degree_line = between(o, "they hold ", ", exactly that field")?;
    let degree = if degree_line.contains("Bachelor") {
        0
    } else if degree_line.contains("Master") {
        1
    } else {
        2
    };
    let major = degree_line.rsplit(" in ").next()?.trim().to_owned();
    let years: u32 = between(o, "have at least ", " of professional experience")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let skills = and_split(between(o, "they list ", " under Skills")?);
    Some(Req {
        position,
        degree,
        major,
        years,
        skills,
        folder,
        out,
    })
}

/// The solver if the objective is a shortlist request.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    if !task.objective.contains("shortlist") {
        return None;
    }
    let req = parse(&task.objective)?;
    Some(Box::new(Shortlist {
        req,
        phase: Phase::List,
        files: Vec::new(),
        chosen: Vec::new(),
    }))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    List,
    Read,
    Write,
    Done,
}

struct Shortlist {
    req: Req,
    phase: Phase,
    files: Vec<String>,
    chosen: Vec<String>,
}

/// The lines of a `## name` section (up to the next `## ` heading).
fn section(text: &str, pred: impl Fn(&str) -> bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if let Some(h) = l.strip_prefix("## ") {
            inside = pred(h.trim());
            continue;
        }
        if inside {
            out.push(l);
        }
    }
    out
}

fn level(label: &str) -> Option<usize> {
    let l = label.trim();
    if l.starts_with("Bachelor") || l.starts_with("B.Sc") || l.starts_with("B.Eng") {
        Some(0)
    } else if l.starts_with("Master") || l.starts_with("M.Sc") || l.starts_with("M.Eng") {
        Some(1)
    } else if l.starts_with("Ph.D") || l.starts_with("Doctor") {
        Some(2)
    } else {
        None
    }
}

/// The applicant's name if the resume meets every requirement.
fn judge(text: &str, r: &Req) -> Option<String> {
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("# "))?
        .trim()
        .to_owned();
    let summary = section(text, |h| h == "Summary").join(" ");
    let padded = format!(" {summary} ");
    let role = [" ", ".", ",", "!", ";"]
        .iter()
        .any(|end| padded.contains(&format!(" {}{end}", r.position)));
    let degree = section(text, |h| h == "Education").iter().any(|l| {
        let Some(item) = l.trim().strip_prefix("- ") else {
            return false;
        };
        if item.contains("in progress") {
            return false;
        }
        let Some((label, rest)) = item.split_once(" in ") else {
            return false;
        };
        let major = rest.split(',').next().unwrap_or("").trim();
        level(label).is_some_and(|lv| lv >= r.degree) && major == r.major
    });
    let years: u32 = section(text, |h| {
        h.contains("xperience") || h.contains("history") || h.contains("History")
    })
    .iter()
    .filter(|l| l.trim().chars().next().is_some_and(|c| c.is_ascii_digit()))
    .filter_map(|l| {
        let inner = l.rsplit_once('(')?.1.split_once(')')?.0;
        let (n, unit) = inner.split_once(' ')?;
        unit.starts_with("year")
            .then(|| n.parse::<u32>().ok())
            .flatten()
    })
    .sum();
    let listed: Vec<String> = section(text, |h| h == "Skills")
        .join(",")
        .split(',')
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let skills = r
        .skills
        .iter()
        .all(|s| listed.iter().any(|l| *l == s.to_lowercase()));
    (role && degree && years >= r.years && skills).then_some(name)
}

impl Job for Shortlist {
    fn step(&mut self, _cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase {
                Phase::List => {
                    if let Some(r) = last.take() {
                        self.files = listed(r)
                            .into_iter()
                            .filter(|p| p.ends_with(".md"))
                            .collect();
                        self.phase = Phase::Read;
                        continue;
                    }
                    return Next::Call("list_folder", json!({"path": self.req.folder}));
                }
                Phase::Read => {
                    if let Some(r) = last.take() {
                        self.files.remove(0);
                        if let Some(name) = file_text(r).and_then(|t| judge(t, &self.req)) {
                            self.chosen.push(name);
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
                    return write(
                        &self.req.out,
                        &json!({"candidates": self.chosen}).to_string(),
                    );
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}
