//! Helpers the solvers share: reading tool results (files, folder listings, CSV,
//! numbers in prose), building calls, and asking colleagues one question at a time.
//! Nothing here sees the scenario: everything works on tool results and messages.

use serde_json::{Value, json};

use super::{Colleague, Cx, Next};
use tbsim_core::protocol::ToolResult;
use tbsim_core::time::{Epoch, SimTime};

/// Parses `Wed 2025-10-01 09:30`, `2025-10-01 09:30`, `2025-10-01T09:30[:SS]` or `HH:MM`.
pub(crate) fn parse_shown(epoch: &Epoch, s: &str) -> Option<SimTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let iso = match parts.as_slice() {
        [_, d, t] => format!("{d}T{t}"),
        [d, t] => format!("{d}T{t}"),
        [one] => (*one).to_owned(),
        _ => return None,
    };
    epoch.parse(&iso).ok()
}

/// Every `backticked` span of a text, in order.
pub(crate) fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// Every path-like word (`drive/...` or `workspace/...`) of a text, trimmed of
/// punctuation, in order.
pub(crate) fn paths_in(text: &str) -> Vec<String> {
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

/// The text content of a `read_file` result.
pub(crate) fn file_text(r: &ToolResult) -> Option<&str> {
    r.result.as_ref()?.get("content")?.as_str()
}

/// The backticked paths of a message, those in paragraphs that mention one of
/// `topic` first (a colleague may answer several questions in one reply).
pub(crate) fn paths_about(text: &str, topic: &[&str]) -> Vec<String> {
    let mut near = Vec::new();
    let mut other = Vec::new();
    for para in text.split("\n\n") {
        let lower = para.to_lowercase();
        let on_topic = topic.iter().any(|t| lower.contains(t));
        for p in para.split('`').skip(1).step_by(2) {
            if on_topic { &mut near } else { &mut other }.push(p.to_owned());
        }
    }
    near.extend(other);
    near
}

/// Orders `paths` (stably) by how well their folders fit `near`'s: shared folder
/// names count for, extra ones against. When a colleague repeats an earlier day's
/// answer beside today's, today's files sit beside today's data (`.../day2/`).
pub(crate) fn rank_by_folder(paths: &mut [String], near: &str) {
    let ours: Vec<&str> = near.split('/').collect();
    let fit = |p: &String| -> i64 {
        let dirs: Vec<&str> = p.split('/').collect();
        let dirs = &dirs[..dirs.len().saturating_sub(1)];
        dirs.iter()
            .map(|d| if ours.contains(d) { 1 } else { -1 })
            .sum()
    };
    paths.sort_by_key(|p| std::cmp::Reverse(fit(p)));
}

/// Entries of a `list_folder` result as paths (folders end with `/`).
pub(crate) fn listed(r: &ToolResult) -> Vec<String> {
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
pub(crate) fn read(path: &str) -> Next {
    Next::Call("read_file", json!({"path": path}))
}

/// `write_file` arguments.
pub(crate) fn write(path: &str, content: &str) -> Next {
    Next::Call("write_file", json!({"path": path, "content": content}))
}

/// `send_message` arguments.
pub(crate) fn send(to: &str, text: &str) -> Next {
    Next::Call("send_message", json!({"to": to, "text": text}))
}

/// A simple CSV parser (double quotes, no embedded newlines needed here).
pub(crate) fn csv_rows(text: &str) -> Vec<Vec<String>> {
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
pub(crate) fn csv_records(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
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
pub(crate) fn number_after(text: &str, anchor: &str) -> Option<f64> {
    let lower = text.to_lowercase();
    let at = lower.find(&anchor.to_lowercase())? + anchor.len();
    first_number(&text[at..])
}

/// The first number in a text.
pub(crate) fn first_number(text: &str) -> Option<f64> {
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

/// How long to wait for a reply before asking the next person.
pub(crate) const REPLY_PATIENCE_SECS: u64 = 45 * 60;

/// Asking a list of colleagues one question, one at a time, until a reply satisfies
/// the asker.
#[derive(Debug, Clone)]
pub(crate) struct Inquiry {
    /// Keys still to ask, in order.
    pub queue: Vec<String>,
    /// The question (`{first}` becomes the person's first name).
    pub question: String,
    /// Who is being asked now, the inbox length when asked, and when.
    pub asking: Option<(String, usize, SimTime)>,
}

/// Where an inquiry stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// Send this.
    Send(Next),
    /// Waiting for a reply (wake at this time to move on).
    Waiting(SimTime),
    /// The current person replied with these texts.
    Replied(String, Vec<String>),
    /// Nobody left to ask.
    Exhausted,
}

impl Inquiry {
    /// A new inquiry.
    pub(crate) fn new(queue: Vec<String>, question: impl Into<String>) -> Inquiry {
        Inquiry {
            queue,
            question: question.into(),
            asking: None,
        }
    }

    /// The next move. After `Replied`, call [`Inquiry::next_person`] if the reply
    /// did not help.
    pub(crate) fn poll(&mut self, cx: &Cx) -> Asked {
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
    pub(crate) fn next_person(&mut self) {
        self.asking = None;
    }
}

/// Colleagues of a department, staff before managers and heads (who are busier and
/// usually point elsewhere).
pub(crate) fn department_keys(cx: &Cx, dept: &str) -> Vec<String> {
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
pub(crate) fn drive_path(texts: &[String], ext: &str) -> Option<String> {
    texts
        .iter()
        .flat_map(|t| paths_in(t))
        .find(|p| p.starts_with("drive/") && p.ends_with(ext))
}

/// How to name a colleague in a message: the first name when no one else listed
/// shares it, else the full name (a colleague asks back "which X do you mean?" at a
/// shared first name, even in a greeting).
pub(crate) fn short_name(cx: &Cx, full: &str) -> String {
    let first = full.split_whitespace().next().unwrap_or(full);
    let shared = cx
        .colleagues
        .iter()
        .filter(|c| c.name.split_whitespace().next() == Some(first))
        .count()
        > 1;
    if shared { full } else { first }.to_owned()
}

/// Markdown table rows as cells (the separator row left out).
pub(crate) fn md_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.trim_start().starts_with('|') && !l.contains("---"))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}
