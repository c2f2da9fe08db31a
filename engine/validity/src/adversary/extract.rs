//! Adversaries built from the scan's extractors (issue 25): `extract` plays the
//! rule the scan ranks best for each answer shape, `relay` forwards the objective
//! one sentence at a time and answers from the replies.
//!
//! Neither reads an expected answer: the rule for each shape is fixed in [`RULES`],
//! chosen from the scan's per-checkpoint table over the bundled suites (the rule
//! that tops the most rows of that answer shape: `tbsim validity scan
//! content/suites/traineebench-plus.ron` prints that ranking under its table, and
//! `--json` gives it as `rules_by_shape`; `runs/validity/scan.md` records it). Shapes
//! come from what the objective spells out (`{"key": <number>}`) or a document's
//! JSON example.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::scrape::{self, Shape};
use super::{Event, Knowledge, Out, Tactic, TaskSeen, Urgency};
use crate::scan::extract::{json_examples, numbers};

/// The rule per answer shape (see the module docs).
pub const RULES: &[(&str, &str)] = &[
    (
        "number",
        "the only number of a meeting's notes, else the first number of every meeting, else the largest number of the document that shows a JSON example",
    ),
    ("list", "the empty list"),
    (
        "skeleton",
        "a document's JSON example whose keys are the objective's, holes filled by the rules above",
    ),
    ("date", "the median date of every reply"),
];

/// The number rule of [`RULES`].
fn number_rule(k: &Knowledge, ex: &Examples, keys: &[&str]) -> Option<f64> {
    let notes = || {
        k.heard
            .iter()
            .zip(&ex.heard)
            .filter(|((w, _), _)| w == "meeting")
            .map(|(_, n)| n)
    };
    for n in notes() {
        if !n.is_empty() && n.iter().all(|x| *x == n[0]) {
            return Some(n[0]);
        }
    }
    if let Some(x) = notes().flatten().next() {
        return Some(*x);
    }
    example_doc(ex, keys).and_then(|(largest, _)| largest)
}

/// The JSON examples of every file read, by path, parsed once per content, and the
/// numbers of every message heard, read once each: the rules look at them on every
/// event, and reading them again each time made an adversary that reads the whole
/// drive quadratic.
#[derive(Debug, Default)]
struct Examples {
    /// Path -> what the rules read of it.
    by_path: BTreeMap<String, Doc>,
    /// The numbers of each message heard, in `Knowledge::heard`'s order (which only
    /// grows), so each message is read once.
    heard: Vec<Vec<f64>>,
}

/// One file as the rules read it.
#[derive(Debug)]
struct Doc {
    /// The text parsed.
    text: String,
    /// Its JSON examples.
    examples: Vec<Value>,
    /// Its largest number, for a file with examples (the number rule's last resort).
    largest: Option<f64>,
}

impl Examples {
    /// Brings the examples up to date with `k.files` and `k.heard`; whether any
    /// file changed.
    fn update(&mut self, k: &Knowledge) -> bool {
        if self.heard.len() > k.heard.len() {
            self.heard.clear();
        }
        for (_, text) in &k.heard[self.heard.len()..] {
            self.heard.push(numbers(text));
        }
        let mut changed = self.by_path.len() != k.files.len();
        if changed {
            self.by_path.retain(|p, _| k.files.contains_key(p));
        }
        for (path, text) in &k.files {
            match self.by_path.get(path) {
                Some(doc) if doc.text == *text => {}
                _ => {
                    let examples = json_examples(text);
                    let largest = if examples.is_empty() {
                        None
                    } else {
                        numbers(text).into_iter().max_by(f64::total_cmp)
                    };
                    self.by_path.insert(
                        path.clone(),
                        Doc {
                            text: text.clone(),
                            examples,
                            largest,
                        },
                    );
                    changed = true;
                }
            }
        }
        changed
    }

    /// Each file, by path.
    fn iter(&self) -> impl Iterator<Item = &Doc> {
        self.by_path.values()
    }
}

/// The first file (by path) showing a JSON example with every key in `keys`: its
/// largest number and the example.
fn example_doc(ex: &Examples, keys: &[&str]) -> Option<(Option<f64>, Map<String, Value>)> {
    ex.iter().find_map(|doc| {
        doc.examples.iter().find_map(|v| match v {
            Value::Object(m) if !keys.is_empty() && keys.iter().all(|x| m.contains_key(*x)) => {
                Some((doc.largest, m.clone()))
            }
            _ => None,
        })
    })
}

/// The first JSON object any read file shows as an example (files by path).
fn first_example(ex: &Examples) -> Option<Map<String, Value>> {
    ex.iter().find_map(|doc| {
        doc.examples.iter().find_map(|v| match v {
            Value::Object(m) if !m.is_empty() => Some(m.clone()),
            _ => None,
        })
    })
}

/// A JSON value as the shape of an answer: arrays and objects keep their kind,
/// numbers become holes (to be filled), strings and booleans stay literal.
fn shape_of(v: &Value) -> Shape {
    match v {
        Value::Array(_) => Shape::Array(Vec::new()),
        Value::Object(m) => {
            Shape::Object(m.iter().map(|(k, v)| (k.clone(), shape_of(v))).collect())
        }
        Value::String(t) => Shape::Text(t.clone()),
        Value::Bool(b) => Shape::Bool(*b),
        _ => Shape::Hole,
    }
}

fn median_date(texts: &[&str]) -> Option<String> {
    let mut d: Vec<String> = texts.iter().flat_map(|t| scrape::dates(t)).collect();
    d.sort();
    (!d.is_empty()).then(|| d[(d.len() - 1) / 2].clone())
}

/// JSON files the objective asks to save, and workspace files it gives a JSON shape for (`... in `workspace/x.json`
/// as {"key": <number>}`), whatever verb comes before.
fn outputs(objective: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let saved = scrape::output_paths(objective);
    for p in scrape::backticked(objective) {
        let json_out = saved.contains(&p) && p.ends_with(".json");
        if p.starts_with("workspace/")
            && (json_out || scrape::shape_after(objective, &p).is_some())
            && !v.contains(&p)
        {
            v.push(p);
        }
    }
    v
}

/// Which rules a tactic plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Play {
    /// The scan's rules over files and meetings.
    Extract,
    /// Replies only: numbers, dates and names from what colleagues answered.
    Relay,
}

/// Colleagues' names in the order the replies first mention them (by where in
/// the first reply naming them), kept up to date as replies arrive: each reply is
/// searched once for each colleague not yet found, not once per event and task
/// (that search was a quarter of the validity gate's time).
#[derive(Debug, Default)]
struct Mentions {
    /// The colleagues' names the positions are for.
    colleagues: Vec<String>,
    /// How many of `Knowledge::heard` have been searched.
    seen: usize,
    /// Per colleague, the offset of its name in the first reply that has it.
    found: Vec<Option<usize>>,
}

impl Mentions {
    fn update(&mut self, k: &Knowledge) {
        if self.colleagues.len() != k.colleagues.len()
            || self
                .colleagues
                .iter()
                .zip(&k.colleagues)
                .any(|(a, c)| *a != c.name)
        {
            *self = Mentions {
                colleagues: k.colleagues.iter().map(|c| c.name.clone()).collect(),
                seen: 0,
                found: vec![None; k.colleagues.len()],
            };
        }
        for (w, t) in &k.heard[self.seen.min(k.heard.len())..] {
            if w == "meeting" {
                continue;
            }
            for (name, at) in self.colleagues.iter().zip(self.found.iter_mut()) {
                if at.is_none() {
                    *at = t.find(name.as_str());
                }
            }
        }
        self.seen = k.heard.len();
    }

    fn names(&self) -> Vec<&str> {
        let mut found: Vec<(usize, &str)> = self
            .colleagues
            .iter()
            .zip(&self.found)
            .filter_map(|(n, at)| at.map(|i| (i, n.as_str())))
            .collect();
        found.sort();
        found.into_iter().map(|x| x.1).collect()
    }
}

#[cfg(test)]
fn answer(play: Play, task: &TaskSeen, k: &Knowledge) -> Vec<(String, String)> {
    let mut m = Mentions::default();
    m.update(k);
    let mut ex = Examples::default();
    ex.update(k);
    answer_with(play, task, k, &ex, &m.names())
}

fn answer_with(
    play: Play,
    task: &TaskSeen,
    k: &Knowledge,
    ex: &Examples,
    names: &[&str],
) -> Vec<(String, String)> {
    let replies: Vec<&str> = k
        .heard
        .iter()
        .filter(|(w, _)| w != "meeting")
        .map(|(_, t)| t.as_str())
        .collect();
    let mut out = Vec::new();
    for path in outputs(&task.objective) {
        let fields = match scrape::shape_after(&task.objective, &path) {
            Some(Shape::Object(fields)) => fields,
            // No shape in the objective: a document's first JSON example is it.
            _ if play == Play::Extract => match first_example(ex) {
                Some(m) => m
                    .iter()
                    .map(|(key, v)| (key.clone(), shape_of(v)))
                    .collect(),
                None => continue,
            },
            _ => continue,
        };
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        let skeleton = match play {
            Play::Extract => example_doc(ex, &keys).map(|(_, m)| m),
            Play::Relay => None,
        };
        let mut doc = skeleton.unwrap_or_default();
        for (key, shape) in &fields {
            let v = match (play, shape) {
                (_, Shape::Array(_)) => match play {
                    Play::Extract => json!([]),
                    Play::Relay => json!(names.iter().take(1).collect::<Vec<_>>()),
                },
                (_, Shape::Text(t)) if t.contains("YYYY") || key.contains("date") => {
                    match median_date(&replies) {
                        Some(d) => json!(d),
                        None => continue,
                    }
                }
                (_, Shape::Object(sub)) => {
                    // A plan: the first names listed, one per slot.
                    let mut m = Map::new();
                    for ((sk, _), n) in sub.iter().zip(names.iter()) {
                        m.insert(sk.clone(), json!(n));
                    }
                    Value::Object(m)
                }
                (Play::Extract, Shape::Hole | Shape::Number(_)) => {
                    match number_rule(k, ex, &keys) {
                        Some(n) => json!(n),
                        None => continue,
                    }
                }
                (Play::Relay, Shape::Hole | Shape::Number(_)) => {
                    let replied = k
                        .heard
                        .iter()
                        .zip(&ex.heard)
                        .filter(|((w, _), _)| w != "meeting");
                    match replied.flat_map(|(_, n)| n).next() {
                        Some(n) => json!(n),
                        None => continue,
                    }
                }
                _ => continue,
            };
            doc.insert(key.clone(), v);
        }
        if !doc.is_empty() {
            out.push((path, Value::Object(doc).to_string()));
        }
    }
    out
}

/// Writes each output the rules can fill, again whenever what it has seen changes
/// the answer (answers are judged at close, so rewriting costs nothing).
#[derive(Debug)]
pub struct Extract {
    play: Play,
    written: BTreeMap<String, String>,
    relayed: usize,
    copies: usize,
    mentions: Mentions,
    examples: Examples,
    /// What the answers were last worked out from: (messages heard, tasks seen,
    /// names mentioned). Answers depend only on these, the files and the
    /// objectives, so with none of them changed there is nothing new to write.
    last: Option<(usize, usize, Vec<String>)>,
}

impl Extract {
    /// The `extract` tactic: the scan's rules.
    pub fn rules() -> Extract {
        Extract {
            play: Play::Extract,
            written: BTreeMap::new(),
            relayed: 0,
            copies: 0,
            mentions: Mentions::default(),
            examples: Examples::default(),
            last: None,
        }
    }

    /// The `relay` tactic.
    pub fn relay() -> Extract {
        Extract {
            play: Play::Relay,
            written: BTreeMap::new(),
            relayed: 0,
            copies: 0,
            mentions: Mentions::default(),
            examples: Examples::default(),
            last: None,
        }
    }

    fn write(&mut self, k: &Knowledge, out: &mut Out) {
        self.mentions.update(k);
        let files_changed = self.examples.update(k);
        let names = self.mentions.names();
        // `heard` and `tasks` only grow (Knowledge::absorb pushes), so their lengths
        // tell whether they changed.
        let now = (
            k.heard.len(),
            k.tasks.len(),
            names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
        );
        if !files_changed && self.last.as_ref() == Some(&now) {
            return;
        }
        self.last = Some(now);
        for t in &k.tasks {
            for (path, content) in answer_with(self.play, t, k, &self.examples, &names) {
                if self.written.get(&path) != Some(&content) {
                    self.written.insert(path.clone(), content.clone());
                    out.call(
                        Urgency::Answer,
                        "write_file",
                        json!({"path": path, "content": content}),
                    );
                }
            }
        }
    }
}

/// Colleagues a relay forwards to, per task: the assigner, those the objective
/// names, then others, this many in all (each sentence costs five minutes).
const RELAY_TO: usize = 6;

impl Tactic for Extract {
    fn on(&mut self, ev: &Event<'_>, k: &Knowledge, out: &mut Out) {
        match ev {
            Event::Start => {
                out.once(Urgency::Setup, "list_colleagues", json!({}));
            }
            Event::MeetingStarting(_) if self.play == Play::Extract => {
                // Come back after the opening announcement to write from it.
                out.tagged(
                    Urgency::Answer,
                    "wait",
                    json!({"minutes": 15}),
                    "notes".into(),
                );
            }
            Event::Result { .. } | Event::Message { .. } | Event::DayStarted => {}
            Event::Task(_) if self.play == Play::Extract => {
                // A copy of the whole drive brings what listings hide; reading
                // the copy is left to the reader tactic.
                self.copies += 1;
                let to = format!("workspace/extract_copy{}", self.copies);
                out.call(
                    Urgency::Explore,
                    "copy_from_drive",
                    json!({"path": "drive", "to": format!("{to}/")}),
                );
                out.call(Urgency::Explore, "list_folder", json!({"path": to}));
            }
            Event::Task(_) => {}
            _ => return,
        }
        if self.play == Play::Relay {
            while self.relayed < k.tasks.len() && !k.colleagues.is_empty() {
                let t = &k.tasks[self.relayed];
                for c in k.ranked_for(t).into_iter().take(RELAY_TO) {
                    for s in crate::scan::observe::sentences(&t.objective) {
                        out.call(
                            Urgency::Social,
                            "send_message",
                            json!({"to": c.key, "text": s}),
                        );
                    }
                }
                self.relayed += 1;
            }
        }
        self.write(k, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(objective: &str) -> TaskSeen {
        TaskSeen {
            key: "task/x".into(),
            title: String::new(),
            objective: objective.into(),
            assigned_by: String::new(),
        }
    }

    #[test]
    fn extract_fills_a_skeleton_with_an_empty_list_and_the_meeting_number() {
        let mut k = Knowledge::default();
        k.heard
            .push(("meeting".into(), "The cap is 5250 EUR.".into()));
        let t = task(r#"Save it as `workspace/d.json`: {"budget_cap": <number>, "items": [...]}."#);
        let got = answer(Play::Extract, &t, &k);
        assert_eq!(
            got,
            [(
                "workspace/d.json".to_owned(),
                r#"{"budget_cap":5250.0,"items":[]}"#.to_owned()
            )]
        );
    }

    #[test]
    fn relay_answers_from_replies_only() {
        let mut k = Knowledge::default();
        k.heard
            .push(("meeting".into(), "The cap is 5250 EUR.".into()));
        k.heard.push((
            "Ann Lee".into(),
            "Try 2025-10-03 or 2025-10-01 or 2025-10-09.".into(),
        ));
        let t = task(r#"Save `workspace/e.json` as {"date": "YYYY-MM-DD", "cap": <number>}."#);
        let got = answer(Play::Relay, &t, &k);
        // The median date of the replies; the meeting's number is not a reply.
        assert_eq!(got[0].1, r#"{"date":"2025-10-03"}"#);
    }
}
