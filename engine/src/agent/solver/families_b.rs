//! Solvers for the families handoff_chain, meeting_attend,
//! meeting_book, resume_select, sales, transaction_review, urgent_interrupt and
//! website_monitor, and the small protocol a desk uses to drive them.
//!
//! A [`TaskSolver`] is a per-task state machine. The desk hands it what the agent
//! has observed so far ([`Cx`]: the time, colleagues as `list_colleagues` gave them,
//! messages and announcements as they arrived) and the result of the call it asked
//! for last; it answers with the next call, or says it has nothing to do until
//! something new arrives. Nothing here sees the scenario: every answer comes from
//! tool results.

use serde_json::{Value, json};

use crate::sim::ToolResult;
use crate::time::{Epoch, SimTime};

use super::{
    handoff_chain, meeting_attend, meeting_book, resume_select, sales, transaction_review,
    urgent_interrupt, website_monitor,
};

/// A task as the agent was told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    /// Task key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Objective text.
    pub objective: String,
    /// Who assigned it (key or name, as notified).
    pub assigned_by: String,
    /// Deadline as notified.
    pub deadline: String,
}

/// A colleague as `list_colleagues` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colleague {
    /// Key (`npc/...`).
    pub key: String,
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
    /// Position.
    pub position: String,
}

/// A message the agent received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    /// Sender key.
    pub from: String,
    /// Thread key.
    pub thread: String,
    /// Text.
    pub text: String,
}

/// Something said in a meeting the agent attended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// Meeting key.
    pub meeting: String,
    /// Text.
    pub text: String,
}

/// What the agent has observed, as a solver sees it.
#[derive(Debug, Clone, Copy)]
pub struct Cx<'a> {
    /// Now.
    pub now: SimTime,
    /// The scenario clock (from the briefing's day start).
    pub epoch: Epoch,
    /// The agent's own name.
    pub me: &'a str,
    /// The manager's name.
    pub manager: &'a str,
    /// Everyone `list_colleagues` listed.
    pub colleagues: &'a [Colleague],
    /// Every message received, oldest first.
    pub inbox: &'a [Heard],
    /// Every announcement heard, oldest first.
    pub said: &'a [Said],
}

impl Cx<'_> {
    /// Messages from `who` (a key) at inbox index `since` or later.
    pub fn replies_from(&self, who: &str, since: usize) -> Vec<&Heard> {
        self.inbox
            .iter()
            .skip(since)
            .filter(|h| h.from == who)
            .collect()
    }

    /// The colleague with this key or name.
    pub fn colleague(&self, key_or_name: &str) -> Option<&Colleague> {
        self.colleagues
            .iter()
            .find(|c| c.key == key_or_name || c.name.eq_ignore_ascii_case(key_or_name))
    }

    /// The manager's key, if listed.
    pub fn manager_key(&self) -> Option<String> {
        self.colleague(self.manager).map(|c| c.key.clone())
    }

    /// Colleagues in a department (case-insensitive).
    pub fn in_department(&self, dept: &str) -> Vec<&Colleague> {
        self.colleagues
            .iter()
            .filter(|c| c.department.eq_ignore_ascii_case(dept))
            .collect()
    }

    /// Parses a time as tools show it (`Wed 2025-10-01 09:30`) or accept it.
    pub fn parse_time(&self, s: &str) -> Option<SimTime> {
        parse_shown(&self.epoch, s)
    }
}

/// Parses `Wed 2025-10-01 09:30`, `2025-10-01 09:30`, `2025-10-01T09:30[:SS]` or `HH:MM`.
pub fn parse_shown(epoch: &Epoch, s: &str) -> Option<SimTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let iso = match parts.as_slice() {
        [_, d, t] => format!("{d}T{t}"),
        [d, t] => format!("{d}T{t}"),
        [one] => (*one).to_owned(),
        _ => return None,
    };
    epoch.parse(&iso).ok()
}

/// What a solver wants next.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Make this call; its result comes back with the next step.
    Call(&'static str, Value),
    /// Nothing to do until something new is observed, or until this time.
    Idle(Option<SimTime>),
    /// The task is finished.
    Done,
}

impl Act {
    /// A call.
    pub fn call(tool: &'static str, args: Value) -> Act {
        Act::Call(tool, args)
    }
}

/// A per-task state machine.
pub trait TaskSolver: Send {
    /// The next action. `last` is the result of this solver's previous call, given
    /// once, on the first step after it completed.
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Act;
}

/// The solver for a released task of one of these families, recognised from its
/// objective; `None` when the objective is not one of them.
pub fn solver_for(task: &TaskInfo) -> Option<Box<dyn TaskSolver>> {
    if let Some(s) = transaction_review::recognise(task) {
        return Some(s);
    }
    if let Some(s) = resume_select::recognise(task) {
        return Some(s);
    }
    if let Some(s) = sales::recognise(task) {
        return Some(s);
    }
    if let Some(s) = handoff_chain::recognise(task) {
        return Some(s);
    }
    if let Some(s) = website_monitor::recognise(task) {
        return Some(s);
    }
    if let Some(s) = meeting_book::recognise(task) {
        return Some(s);
    }
    if let Some(s) = urgent_interrupt::recognise(task) {
        return Some(s);
    }
    meeting_attend::recognise(task)
}

// ---- helpers shared by the solvers ----

/// Every `backticked` span of a text, in order.
pub fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// Every path-like word (`drive/...` or `workspace/...`) of a text, trimmed of
/// punctuation, in order.
pub fn paths_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.split(|c: char| c.is_whitespace() || c == '`' || c == '"' || c == '(' || c == ')')
    {
        let w = w.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'']);
        if (w.starts_with("drive/") || w.starts_with("workspace/")) && !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// A file's text from a `read_file` result.
pub fn file_text(r: &ToolResult) -> Option<String> {
    r.result
        .as_ref()?
        .get("content")?
        .as_str()
        .map(str::to_owned)
}

/// Entries of a `list_folder` result as paths (folders end with `/`).
pub fn listed(r: &ToolResult) -> Vec<String> {
    let Some(v) = r.result.as_ref() else {
        return Vec::new();
    };
    let base = v
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim_end_matches('/');
    let Some(entries) = v.get("entries").and_then(Value::as_array) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let name = e
                .get("name")
                .and_then(Value::as_str)
                .or_else(|| e.as_str())?;
            let dir = e.get("kind").and_then(Value::as_str) == Some("folder");
            let p = if name.contains('/')
                && (name.starts_with("drive/") || name.starts_with("workspace/"))
            {
                name.to_owned()
            } else {
                format!("{base}/{name}")
            };
            Some(if dir && !p.ends_with('/') {
                format!("{p}/")
            } else {
                p
            })
        })
        .collect()
}

/// `read_file` arguments.
pub fn read(path: &str) -> Act {
    Act::call("read_file", json!({"path": path}))
}

/// `write_file` arguments.
pub fn write(path: &str, content: &str) -> Act {
    Act::call("write_file", json!({"path": path, "content": content}))
}

/// `send_message` arguments.
pub fn send(to: &str, text: &str) -> Act {
    Act::call("send_message", json!({"to": to, "text": text}))
}

/// A simple CSV parser (double quotes, no embedded newlines needed here).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut out = Vec::new();
            let mut cur = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        cur.push('"');
                        chars.next();
                    }
                    '"' => quoted = !quoted,
                    ',' if !quoted => out.push(std::mem::take(&mut cur)),
                    _ => cur.push(c),
                }
            }
            out.push(cur);
            out
        })
        .collect()
}

/// A CSV as header-keyed records.
pub fn csv_records(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let rows = csv_rows(text);
    let Some((head, body)) = rows.split_first() else {
        return Vec::new();
    };
    body.iter()
        .map(|r| {
            head.iter()
                .map(|h| h.trim().to_owned())
                .zip(r.iter().map(|v| v.trim().to_owned()))
                .collect()
        })
        .collect()
}

/// The first number (integer or decimal, commas allowed as thousands separators)
/// in `text` after `anchor` (case-insensitive).
pub fn number_after(text: &str, anchor: &str) -> Option<f64> {
    let lower = text.to_lowercase();
    let at = lower.find(&anchor.to_lowercase())? + anchor.len();
    first_number(&text[at..])
}

/// The first number in a text.
pub fn first_number(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len()
                && (b[j].is_ascii_digit()
                    || b[j] == b'.'
                    || (b[j] == b',' && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            let s: String = text[i..j].trim_end_matches('.').replace(',', "");
            return s.parse().ok();
        }
        i += 1;
    }
    None
}

/// A JSON text of a value (compact, keys in insertion order of `json!`).
pub fn to_json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// How long to wait for a reply before asking the next person.
pub const REPLY_PATIENCE_SECS: u64 = 45 * 60;

/// Asking a list of colleagues one question, one at a time, until a reply satisfies
/// the asker.
#[derive(Debug, Clone)]
pub struct Inquiry {
    /// Keys still to ask, in order.
    pub queue: Vec<String>,
    /// The question (`{first}` becomes the person's first name).
    pub question: String,
    /// Who is being asked now, the inbox length when asked, and when.
    pub asking: Option<(String, usize, SimTime)>,
}

/// Where an inquiry stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// Send this.
    Send(Act),
    /// Waiting for a reply (wake at this time to move on).
    Waiting(SimTime),
    /// The current person replied with these texts.
    Replied(String, Vec<String>),
    /// Nobody left to ask.
    Exhausted,
}

impl Inquiry {
    /// A new inquiry.
    pub fn new(queue: Vec<String>, question: impl Into<String>) -> Inquiry {
        Inquiry {
            queue,
            question: question.into(),
            asking: None,
        }
    }

    /// The next move. After `Replied`, call [`Inquiry::next_person`] if the reply
    /// did not help.
    pub fn poll(&mut self, cx: &Cx) -> Asked {
        if let Some((who, since, at)) = self.asking.clone() {
            let replies = cx.replies_from(&who, since);
            if !replies.is_empty() {
                return Asked::Replied(who, replies.iter().map(|h| h.text.clone()).collect());
            }
            let give_up = SimTime(at.0 + REPLY_PATIENCE_SECS);
            if cx.now < give_up {
                return Asked::Waiting(give_up);
            }
            self.asking = None;
        }
        if self.queue.is_empty() {
            return Asked::Exhausted;
        }
        let who = self.queue.remove(0);
        let first = cx
            .colleague(&who)
            .map(|c| c.name.split_whitespace().next().unwrap_or("").to_owned())
            .unwrap_or_default();
        let text = self.question.replace("{first}", &first);
        self.asking = Some((who.clone(), cx.inbox.len(), cx.now));
        Asked::Send(send(&who, &text))
    }

    /// Drops the current person (their reply did not help).
    pub fn next_person(&mut self) {
        self.asking = None;
    }

    /// Asks the current person a follow-up (replies are awaited again).
    pub fn follow_up(&mut self, cx: &Cx, text: &str) -> Act {
        let who = self
            .asking
            .as_ref()
            .map(|a| a.0.clone())
            .unwrap_or_default();
        self.asking = Some((who.clone(), cx.inbox.len(), cx.now));
        send(&who, text)
    }
}

/// Colleagues of a department, staff before managers and heads (who are busier and
/// usually point elsewhere).
pub fn department_keys(cx: &Cx, dept: &str) -> Vec<String> {
    let mut v: Vec<&Colleague> = cx.in_department(dept);
    v.sort_by_key(|c| {
        let p = c.position.to_lowercase();
        u8::from(
            p.contains("head")
                || p.contains("manager")
                || p.contains("director")
                || p.contains("chief"),
        )
    });
    v.into_iter().map(|c| c.key.clone()).collect()
}

/// A reply's first drive path ending with `ext`.
pub fn drive_path(texts: &[String], ext: &str) -> Option<String> {
    texts
        .iter()
        .flat_map(|t| paths_in(t))
        .find(|p| p.starts_with("drive/") && p.ends_with(ext))
}
