//! Synthesised answers judged by the real checker.
//!
//! A scored answer checkpoint is split into its leaves (the parts of an `All`);
//! each leaf reads one or two *slots* (a JSON pointer of an output file, a whole
//! output file, or the text sent to a person). A candidate from the [`Pool`] fills
//! a slot, the filled slots become files and messages of a synthetic
//! [`WorldView`], and [`evaluate`] — the checker the engine uses — says whether the
//! checkpoint would pass. Nothing compares strings here, so what counts as
//! satisfying is exactly what the checker accepts (tolerances, folding, word
//! boundaries).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use tbsim_core::time::{Epoch, SimTime};
use tbsim_scenario::check::{BookedMeeting, WorldView, evaluate};
use tbsim_scenario::{BudgetAspect, Check, DomainCheck, OutingAspect};

use super::booking::BookingFill;
use super::extract::Pool;

/// Where an answer goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// An output file.
    File(String),
    /// The agent's messages to a person.
    Message(String),
    /// The agent's calendar (a meeting it books).
    Calendar,
}

/// What a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON number.
    Number,
    /// A JSON list of strings.
    List,
    /// A JSON array (of records or strings).
    Array,
    /// Text: a whole file, a message, or a JSON string at a pointer.
    Text,
    /// An outing plan object (`morning`, `lunch`, `afternoon`).
    Plan,
    /// A meeting booked (and joined at its start).
    Booking,
}

/// One place an answer is read from.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The file or person.
    pub target: Target,
    /// The JSON pointer read (none: the whole file or message).
    pub pointer: Option<String>,
    /// What it holds.
    pub kind: Kind,
}

/// A value for a slot.
#[derive(Debug, Clone, PartialEq)]
pub enum Fill {
    /// A JSON value at the slot's pointer.
    Json(Value),
    /// A whole file's text, or a message.
    Text(String),
    /// A meeting booked.
    Booking(BookingFill),
}

/// A leaf check and the slots it reads.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// The check.
    pub check: Check,
    /// One or two slots.
    pub slots: Vec<Slot>,
}

/// The answer leaves of a check (diagnostics and attendance inside an `All` are
/// taken as done: reading, asking and joining are free to any agent).
pub fn shape(check: &Check) -> Vec<Leaf> {
    let mut out = Vec::new();
    collect(check, &mut out);
    out
}

fn file(path: &str, pointer: Option<&str>, kind: Kind) -> Slot {
    Slot {
        target: Target::File(path.to_owned()),
        pointer: pointer.map(str::to_owned),
        kind,
    }
}

/// Pushes the leaves of `c`.
fn collect(c: &Check, out: &mut Vec<Leaf>) {
    let slots = match c {
        Check::All(parts) => return parts.iter().for_each(|p| collect(p, out)),
        Check::Booked { .. } => vec![Slot {
            target: Target::Calendar,
            pointer: None,
            kind: Kind::Booking,
        }],
        Check::Attended(_)
        | Check::Consulted(_)
        | Check::Disclosed(_)
        | Check::ToolCalled { .. } => return,
        Check::FileExists { path }
        | Check::FileText { path, .. }
        | Check::FileContains { path, .. }
        | Check::CsvTable { path, .. } => vec![file(path, None, Kind::Text)],
        Check::JsonStringSet { path, pointer, .. } => vec![file(path, Some(pointer), Kind::List)],
        Check::JsonRecords { path, pointer, .. } | Check::JsonArray { path, pointer } => {
            vec![file(path, Some(pointer), Kind::Array)]
        }
        Check::JsonNumber { path, pointer, .. } => vec![file(path, Some(pointer), Kind::Number)],
        Check::MessageSent { to, .. } => vec![Slot {
            target: Target::Message(to.clone()),
            pointer: None,
            kind: Kind::Text,
        }],
        Check::Domain(d) => match d.as_ref() {
            DomainCheck::DateIn { path, pointer, .. } => {
                vec![file(path, Some(pointer), Kind::Text)]
            }
            DomainCheck::Budget(b) => {
                let mut v = vec![file(&b.path, Some(&b.selection), Kind::List)];
                match &b.aspect {
                    BudgetAspect::Cost { pointer, .. } | BudgetAspect::Value { pointer, .. } => {
                        v.push(file(&b.path, Some(pointer), Kind::Number));
                    }
                    _ => {}
                }
                v
            }
            DomainCheck::Outing(o) => {
                // A given outing is judged without the answer's plan.
                let mut v = Vec::new();
                if o.given.is_none() {
                    v.push(file(&o.path, Some("/plan"), Kind::Plan));
                }
                match &o.aspect {
                    OutingAspect::Metric { metric, .. } => v.push(file(
                        &o.path,
                        Some(&format!("/metrics/{}", metric.key())),
                        Kind::Number,
                    )),
                    OutingAspect::EndTime { .. } => {
                        v.push(file(&o.path, Some("/end_time"), Kind::Text));
                    }
                    OutingAspect::OnTime { .. } => {
                        v.push(file(&o.path, Some("/can_complete_on_time"), Kind::Text));
                    }
                    OutingAspect::Plan | OutingAspect::Optimal { .. } => {}
                }
                v
            }
        },
    };
    out.push(Leaf {
        check: c.clone(),
        slots,
    });
}

/// The candidates for a slot, each with the labels of the rules that produce it.
pub fn candidates(slot: &Slot, pool: &Pool) -> Vec<(Fill, Vec<String>)> {
    let mut out: Vec<(Fill, Vec<String>)> = Vec::new();
    let at = |v: &Value| -> Option<Value> {
        match slot.pointer.as_deref() {
            Some(p) => v.pointer(p).cloned(),
            None => Some(v.clone()),
        }
    };
    let json = slot.pointer.is_some();
    match slot.kind {
        Kind::Number => {
            for (v, labels) in pool.numbers.values() {
                out.push((Fill::Json(serde_json::json!(v)), labels.clone()));
            }
        }
        Kind::List => {
            for (v, labels) in &pool.lists {
                let arr = Value::Array(v.iter().cloned().map(Value::String).collect());
                out.push((Fill::Json(arr), labels.clone()));
            }
        }
        Kind::Array => {
            for (v, labels) in pool.arrays.values() {
                out.push((Fill::Json(v.clone()), labels.clone()));
            }
        }
        Kind::Text if json => {
            for (t, labels) in &pool.texts {
                if t.len() <= 200 {
                    out.push((Fill::Json(Value::String(t.clone())), labels.clone()));
                }
            }
        }
        Kind::Text => {
            for (t, labels) in &pool.texts {
                out.push((Fill::Text(t.clone()), labels.clone()));
            }
            for (v, labels) in pool.examples.values() {
                let t = serde_json::to_string_pretty(v).unwrap_or_default();
                out.push((Fill::Text(t), labels.clone()));
            }
        }
        Kind::Plan => {}
        Kind::Booking => {
            for (b, labels) in &pool.bookings {
                out.push((Fill::Booking(b.clone()), labels.clone()));
            }
        }
    }
    // A document's JSON example gives the value at the slot's pointer.
    if json {
        for (v, labels) in pool.examples.values() {
            if let Some(x) = at(v).filter(|x| fits(slot.kind, x)) {
                out.push((Fill::Json(x), labels.clone()));
            }
        }
    }
    out
}

fn fits(kind: Kind, v: &Value) -> bool {
    match kind {
        Kind::Number => v.is_number(),
        Kind::List => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Kind::Array => v.is_array(),
        Kind::Text => v.is_string(),
        Kind::Plan => v.is_object(),
        Kind::Booking => false,
    }
}

/// A world holding only the synthesised answer.
#[derive(Debug, Default)]
pub struct Synth {
    files: BTreeMap<String, Vec<u8>>,
    messages: BTreeMap<String, Vec<String>>,
    bookings: Vec<BookingFill>,
    epoch: Option<Epoch>,
}

impl Synth {
    /// The world with `fills` in their slots (later fills of one slot win; every
    /// booking stands), its times read from `epoch`.
    pub fn new(fills: &[(&Slot, &Fill)], epoch: Option<Epoch>) -> Synth {
        let mut docs: BTreeMap<String, Value> = BTreeMap::new();
        let mut texts: BTreeMap<String, String> = BTreeMap::new();
        let mut messages: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut bookings: Vec<BookingFill> = Vec::new();
        for (slot, fill) in fills {
            match (&slot.target, fill) {
                (_, Fill::Booking(b)) => {
                    if !bookings.contains(b) {
                        bookings.push(b.clone());
                    }
                }
                (Target::Calendar, _) => {}
                (Target::Message(to), Fill::Text(t)) => {
                    messages.entry(to.clone()).or_default().push(t.clone());
                }
                (Target::Message(to), Fill::Json(v)) => {
                    messages.entry(to.clone()).or_default().push(v.to_string());
                }
                (Target::File(p), Fill::Text(t)) => {
                    texts.insert(p.clone(), t.clone());
                }
                (Target::File(p), Fill::Json(v)) => {
                    let doc = docs
                        .entry(p.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    set_pointer(doc, slot.pointer.as_deref().unwrap_or(""), v.clone());
                }
            }
        }
        let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (p, d) in docs {
            files.insert(p, d.to_string().into_bytes());
        }
        for (p, t) in texts {
            files.insert(p, t.into_bytes());
        }
        Synth {
            files,
            messages,
            bookings,
            epoch,
        }
    }

    /// The tool calls that leave this answer in a real world: each file written,
    /// each message sent, each meeting booked (its `room` left for the player to
    /// pick from `available_rooms`).
    pub fn actions(&self) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        for (p, bytes) in &self.files {
            out.push((
                "write_file",
                serde_json::json!({"path": p, "content": String::from_utf8_lossy(bytes)}),
            ));
        }
        for (to, texts) in &self.messages {
            for t in texts {
                out.push(("send_message", serde_json::json!({"to": to, "text": t})));
            }
        }
        for b in &self.bookings {
            out.push((
                "book_meeting",
                serde_json::json!({"title": b.title, "start": b.start, "end": b.end,
                    "attendees": b.attendees}),
            ));
        }
        out
    }
}

/// Sets `v` at `pointer` in `doc`, making objects on the way.
fn set_pointer(doc: &mut Value, pointer: &str, v: Value) {
    if pointer.is_empty() {
        *doc = v;
        return;
    }
    let mut cur = doc;
    let parts: Vec<String> = pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    for (i, key) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let m = cur.as_object_mut().expect("made an object");
        if i + 1 == parts.len() {
            m.insert(key.clone(), v);
            return;
        }
        cur = m
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

impl WorldView for Synth {
    fn file(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }
    fn disclosed(&self, _: &str) -> bool {
        true
    }
    fn consulted(&self, _: &str) -> bool {
        true
    }
    fn attended_on_time(&self, _: &str) -> bool {
        true
    }
    fn booked_meetings(&self) -> Vec<BookedMeeting> {
        let Some(epoch) = self.epoch else {
            return Vec::new();
        };
        self.bookings
            .iter()
            .filter_map(|b| {
                let start: SimTime = epoch.parse(&b.start).ok()?;
                Some(BookedMeeting {
                    title: b.title.clone(),
                    start,
                    end: epoch.parse(&b.end).ok()?,
                    attendees: b.attendees.clone(),
                    joined_at: Some(start),
                })
            })
            .collect()
    }
    fn time(&self, timestamp: &str) -> Option<SimTime> {
        self.epoch?.parse(timestamp).ok()
    }
    fn sent_to(&self, person: &str, _since: Option<&str>) -> Vec<&str> {
        self.messages
            .get(person)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The most label combinations kept per instance and checkpoint (a bound on work;
/// combinations past it are not credited).
pub const MAX_COMBINATIONS: usize = 4096;

/// The labels (`rule` for one leaf, `rule + rule` across leaves and slots) whose
/// synthesised answer passes the whole checkpoint, sorted.
pub fn solving_labels(leaves: &[Leaf], pool: &Pool) -> BTreeSet<String> {
    solve(leaves, pool).0
}

/// [`solving_labels`], and the slots and fills of the first passing answer (the one a
/// policy playing the rules would leave, to unlock what waits on the checkpoint).
pub fn solve(leaves: &[Leaf], pool: &Pool) -> (BTreeSet<String>, Option<Vec<(Slot, Fill)>>) {
    if leaves.is_empty() {
        return (BTreeSet::new(), None);
    }
    // Per leaf: every (fills, label) that passes the leaf alone.
    let mut per_leaf: Vec<Vec<(Vec<Fill>, String)>> = Vec::new();
    for leaf in leaves {
        let cands: Vec<Vec<(Fill, Vec<String>)>> =
            leaf.slots.iter().map(|s| candidates(s, pool)).collect();
        let mut passing = Vec::new();
        let mut combo = vec![0usize; cands.len()];
        if cands.iter().any(Vec::is_empty) {
            return (BTreeSet::new(), None);
        }
        loop {
            let fills: Vec<(&Slot, &Fill)> = leaf
                .slots
                .iter()
                .zip(&combo)
                .zip(&cands)
                .map(|((s, &i), c)| (s, &c[i].0))
                .collect();
            if evaluate(&leaf.check, &Synth::new(&fills, pool.epoch)) {
                let labels: Vec<&Vec<String>> =
                    combo.iter().zip(&cands).map(|(&i, c)| &c[i].1).collect();
                for l in joined(&labels) {
                    passing.push((fills.iter().map(|f| f.1.clone()).collect(), l));
                }
            }
            if !advance(&mut combo, &cands.iter().map(Vec::len).collect::<Vec<_>>()) {
                break;
            }
        }
        if passing.is_empty() {
            return (BTreeSet::new(), None);
        }
        per_leaf.push(passing);
    }
    if per_leaf.len() == 1 {
        let passing = per_leaf.remove(0);
        let first = passing.first().map(|(fills, _)| {
            leaves[0]
                .slots
                .iter()
                .cloned()
                .zip(fills.iter().cloned())
                .collect()
        });
        return (passing.into_iter().map(|(_, l)| l).collect(), first);
    }
    // Several leaves: every combination is judged together, on one synthesised
    // answer (leaves of one file share it), so the verdict is the checkpoint's.
    let whole = Check::All(leaves.iter().map(|l| l.check.clone()).collect());
    let sizes: Vec<usize> = per_leaf.iter().map(Vec::len).collect();
    let mut combo = vec![0usize; per_leaf.len()];
    let mut out = BTreeSet::new();
    let mut first: Option<Vec<(Slot, Fill)>> = None;
    let mut tried = 0;
    loop {
        tried += 1;
        if tried > MAX_COMBINATIONS {
            break;
        }
        let mut fills: Vec<(&Slot, &Fill)> = Vec::new();
        for ((leaf, &i), passing) in leaves.iter().zip(&combo).zip(&per_leaf) {
            for (s, f) in leaf.slots.iter().zip(&passing[i].0) {
                fills.push((s, f));
            }
        }
        if evaluate(&whole, &Synth::new(&fills, pool.epoch)) {
            let label: Vec<&str> = combo
                .iter()
                .zip(&per_leaf)
                .map(|(&i, p)| p[i].1.as_str())
                .collect();
            out.insert(label.join(" + "));
            if first.is_none() {
                first = Some(
                    fills
                        .iter()
                        .map(|(s, f)| ((*s).clone(), (*f).clone()))
                        .collect(),
                );
            }
        }
        if !advance(&mut combo, &sizes) {
            break;
        }
    }
    (out, first)
}

/// Every way of picking one label per slot, joined with ` + `.
fn joined(labels: &[&Vec<String>]) -> Vec<String> {
    let mut out = vec![String::new()];
    for ls in labels {
        let mut next = Vec::new();
        for prefix in &out {
            for l in *ls {
                next.push(if prefix.is_empty() {
                    l.clone()
                } else {
                    format!("{prefix} + {l}")
                });
            }
        }
        out = next;
        out.truncate(MAX_COMBINATIONS);
    }
    out
}

/// The next combination (odometer order); false after the last.
fn advance(combo: &mut [usize], sizes: &[usize]) -> bool {
    for (c, &n) in combo.iter_mut().zip(sizes).rev() {
        *c += 1;
        if *c < n {
            return true;
        }
        *c = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::extract::Source;

    fn pool(texts: &[(&str, &str)]) -> Pool {
        let s: Vec<Source> = texts
            .iter()
            .map(|(l, t)| Source {
                label: (*l).into(),
                text: (*t).into(),
            })
            .collect();
        Pool::build(&s, &[])
    }

    #[test]
    fn a_number_and_an_empty_list_pass_a_report_together() {
        let check = Check::All(vec![
            Check::JsonStringSet {
                path: "workspace/r.json".into(),
                pointer: "/bad".into(),
                expected: vec![],
            },
            Check::JsonNumber {
                path: "workspace/r.json".into(),
                pointer: "/limit".into(),
                expected: 8000.0,
                tolerance: 0.5,
            },
        ]);
        let leaves = shape(&check);
        let p = pool(&[(
            "file manual",
            "Limits: 500 a day, 8,000 a payment, 2 approvers.",
        )]);
        let got = solving_labels(&leaves, &p);
        assert!(
            got.contains("empty list + largest number of file manual"),
            "{got:?}"
        );
        // Nothing else in the text is the limit.
        assert!(
            got.iter().all(|l| l.starts_with("empty list + ")),
            "{got:?}"
        );
        let p = pool(&[("file manual", "Limits: 500 a day, 7,999 a payment.")]);
        assert!(solving_labels(&leaves, &p).is_empty());
    }

    #[test]
    fn pointers_nest() {
        let mut d = Value::Object(Map::new());
        set_pointer(&mut d, "/a/b", serde_json::json!(1));
        set_pointer(&mut d, "/c", serde_json::json!("x"));
        assert_eq!(d, serde_json::json!({"a": {"b": 1}, "c": "x"}));
    }
}
