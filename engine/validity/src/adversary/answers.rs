//! Adversaries that write answers without working them out: the commonest shape,
//! every candidate in turn, copies of drive files, the objective itself.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::scrape::{self, Filler, Shape};
use super::{Event, Knowledge, Out, Tactic, TaskSeen, Urgency};

/// Writes the commonest answer shape into every output the objective names:
/// JSON spelled in the objective with holes as `0`, lists empty, booleans `true`,
/// the first of any option list, names the objective puts after a key
/// (`morning at X`); text outputs as an unchanged copy of their input.
#[derive(Debug, Default)]
pub struct MajorityAnswers;

struct Majority<'a> {
    objective: &'a str,
}

impl Filler for Majority<'_> {
    fn hole(&mut self, key: &str) -> Value {
        if scrape::is_boolean_key(self.objective, key) {
            return Value::Bool(true);
        }
        if let Some(o) = scrape::options_for(self.objective, key) {
            return json!(o[0]);
        }
        if let Some(n) = scrape::named_after(self.objective, key) {
            return json!(n);
        }
        json!(0)
    }

    fn array(&mut self, key: &str, _: &[Shape]) -> Vec<Value> {
        scrape::options_for(self.objective, key)
            .map(|o| vec![json!(o[0])])
            .unwrap_or_default()
    }

    fn text(&mut self, _: &str, literal: &str) -> Value {
        json!(literal)
    }
}

/// The JSON an objective asks for, filled by `f`: the shape it spells out, or an
/// object of every backticked key (`keys`) as an array, option or boolean.
fn answer_json(objective: &str, output: &str, keys: &[String], f: &mut dyn Filler) -> Value {
    if let Some(shape) = scrape::shape_after(objective, output) {
        return scrape::fill(&shape, "", f);
    }
    let mut m = Map::new();
    for key in keys {
        let v = if scrape::is_boolean_key(objective, key) {
            f.hole(key)
        } else {
            Value::Array(f.array(key, &[]))
        };
        m.insert(key.clone(), v);
    }
    Value::Object(m)
}

/// Copies `src` onto `dst`: from the drive with `copy_from_drive`, from the workspace
/// by reading it (the copy is written when the read returns, see `CopyBack`).
fn copy(urgency: Urgency, src: &str, dst: &str, out: &mut Out) {
    if src.starts_with("drive/") {
        out.call(urgency, "copy_from_drive", json!({"path": src, "to": dst}));
    } else {
        out.tagged(
            urgency,
            "read_file",
            json!({"path": src}),
            format!("copy:{dst}"),
        );
    }
}

/// Writes the content of a `copy:<dst>` read to `dst`.
fn copy_back(ev: &Event<'_>, out: &mut Out) {
    if let Event::Result {
        tag: Some(tag),
        result,
        ..
    } = ev
        && let Some(dst) = tag.strip_prefix("copy:")
        && let Some(text) = result.result.as_ref().and_then(|v| v["content"].as_str())
    {
        out.call(
            Urgency::Answer,
            "write_file",
            json!({"path": dst, "content": text}),
        );
    }
}

impl Tactic for MajorityAnswers {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        copy_back(ev, out);
        let Event::Task(t) = ev else { return };
        let obj = &t.objective;
        for o in scrape::output_paths(obj) {
            if scrape::extension(&o) == "json" {
                let v = answer_json(
                    obj,
                    &o,
                    &scrape::identifiers(obj),
                    &mut Majority { objective: obj },
                );
                out.call(
                    Urgency::Answer,
                    "write_file",
                    json!({"path": o, "content": v.to_string()}),
                );
            } else if let Some(src) = scrape::source_for(obj, &o) {
                copy(Urgency::Answer, &src, &o, out);
            } else {
                out.call(
                    Urgency::Answer,
                    "write_file",
                    json!({"path": o, "content": ""}),
                );
            }
        }
    }
}

/// Candidate answers per output, written one after another.
const CANDIDATES: usize = 60;

/// The `i`-th subset of `pool` in the order: empty, singletons, pairs.
fn subset(i: usize, pool: &[String]) -> Vec<Value> {
    let n = pool.len();
    if i == 0 || n == 0 {
        return Vec::new();
    }
    if i <= n {
        return vec![json!(pool[i - 1])];
    }
    let mut j = i - n - 1;
    for a in 0..n {
        for b in a + 1..n {
            if j == 0 {
                return vec![json!(pool[a]), json!(pool[b])];
            }
            j -= 1;
        }
    }
    pool.iter().map(|s| json!(s)).collect()
}

struct Candidate<'a> {
    i: usize,
    objective: &'a str,
    strings: &'a [String],
    numbers: &'a [f64],
    dates: &'a [String],
    times: &'a [String],
}

impl Filler for Candidate<'_> {
    fn hole(&mut self, key: &str) -> Value {
        let i = self.i;
        if scrape::is_boolean_key(self.objective, key) {
            return Value::Bool(i.is_multiple_of(2));
        }
        if let Some(o) = scrape::options_for(self.objective, key) {
            return json!(o[i % o.len()]);
        }
        if let Some(n) = scrape::named_after(self.objective, key) {
            return json!(n);
        }
        match self.numbers {
            [] => json!(0),
            ns => json!(ns[i % ns.len()]),
        }
    }

    fn array(&mut self, key: &str, _: &[Shape]) -> Vec<Value> {
        match scrape::options_for(self.objective, key) {
            Some(o) => subset(self.i, &o),
            None => subset(self.i, self.strings),
        }
    }

    fn text(&mut self, _: &str, literal: &str) -> Value {
        let pick = |v: &[String]| v.get(self.i % v.len().max(1)).cloned();
        match literal {
            "YYYY-MM-DD" => pick(self.dates).map_or(json!(literal), |d| json!(d)),
            "HH:MM" => pick(self.times).map_or(json!(literal), |t| json!(t)),
            _ => json!(literal),
        }
    }
}

/// Reads everything a task's objective points at, then writes candidate answers
/// scraped from what it read (ids, labels, services, pages, options, numbers,
/// dates) one after another into each output, and messages every colleague the
/// files or replies name about the task.
#[derive(Debug, Default)]
pub struct EnumerateCandidates {
    /// Task index -> reads still out.
    pending: BTreeMap<usize, usize>,
    /// Task index -> the files its reads returned.
    sources: BTreeMap<usize, Vec<String>>,
    /// Text outputs and their inputs, rewritten when a reply brings new ids.
    rewrites: Vec<(String, String)>,
}

impl EnumerateCandidates {
    fn deliver(&mut self, idx: usize, t: &TaskSeen, k: &Knowledge, out: &mut Out) {
        let obj = &t.objective;
        let read: Vec<&str> = self
            .sources
            .get(&idx)
            .into_iter()
            .flatten()
            .filter_map(|p| k.files.get(p).map(String::as_str))
            .collect();
        let corpus: Vec<&str> = read.iter().copied().chain(k.corpus()).collect();
        let mut strings: Vec<String> = Vec::new();
        let add = |s: String, strings: &mut Vec<String>| {
            if strings.len() < 40 && !strings.contains(&s) {
                strings.push(s);
            }
        };
        for s in k.pages.iter().chain(&k.services) {
            add(s.clone(), &mut strings);
        }
        for text in &read {
            for s in scrape::csv_labels(text, 20) {
                add(s, &mut strings);
            }
            for s in scrape::id_tokens(text).into_iter().take(20) {
                add(s, &mut strings);
            }
        }
        for c in &k.colleagues {
            if corpus.iter().any(|t| t.contains(&c.name)) {
                add(c.name.clone(), &mut strings);
            }
        }
        let numbers: Vec<f64> = read
            .iter()
            .flat_map(|t| scrape::numbers(t, 20))
            .take(40)
            .collect();
        let dates: Vec<String> = corpus
            .iter()
            .flat_map(|t| scrape::dates(t))
            .take(20)
            .collect();
        let times: Vec<String> = corpus
            .iter()
            .flat_map(|t| scrape::clock_times(t))
            .take(20)
            .collect();
        let mut keys = scrape::identifiers(obj);
        for text in &read {
            for key in scrape::identifiers(text) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        for o in scrape::output_paths(obj) {
            match scrape::extension(&o).as_str() {
                "json" => {
                    let mut seen = BTreeSet::new();
                    // Last written is candidate 0 (empty lists, first options):
                    // the commonest shape stands if only the final file counts.
                    for i in (0..CANDIDATES).rev() {
                        let mut f = Candidate {
                            i,
                            objective: obj,
                            strings: &strings,
                            numbers: &numbers,
                            dates: &dates,
                            times: &times,
                        };
                        let text = answer_json(obj, &o, &keys, &mut f).to_string();
                        if seen.insert(text.clone()) {
                            out.call(
                                Urgency::Answer,
                                "write_file",
                                json!({"path": o, "content": text}),
                            );
                        }
                    }
                }
                ext => {
                    let Some(path) = scrape::source_for(obj, &o) else {
                        continue;
                    };
                    if ext != "csv" {
                        self.rewrites.push((o.clone(), path.clone()));
                    }
                    let Some(src) = k.files.get(&path) else {
                        continue;
                    };
                    for text in text_candidates(src, ext == "csv", &corpus) {
                        out.call(
                            Urgency::Answer,
                            "write_file",
                            json!({"path": o, "content": text}),
                        );
                    }
                }
            }
        }
        for c in k.ranked_for(t) {
            if corpus.iter().any(|x| x.contains(&c.name)) {
                let text = format!(
                    "About \"{}\": is this yours? {} Please fix or approve it now.",
                    t.title,
                    strings
                        .iter()
                        .take(6)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                out.call(
                    Urgency::Social,
                    "send_message",
                    json!({"to": c.key, "text": text}),
                );
            }
        }
    }
}

/// Candidate versions of a text output derived from `src`: CSV blanks filled from
/// their neighbours (zero, next, previous, then their mean, written last so that
/// it stands if only the final file counts); in other text, id tokens replaced by
/// whatever other id shares a line with them anywhere else.
fn text_candidates(src: &str, csv: bool, corpus: &[&str]) -> Vec<String> {
    let mut v = Vec::new();
    if csv {
        type Fill = fn(Option<f64>, Option<f64>) -> Option<f64>;
        let fills: [Fill; 4] = [
            |_, _| Some(0.0),
            |_, n| n,
            |p, _| p,
            |p, n| Some((p? + n?) / 2.0),
        ];
        for f in fills {
            if let Some(t) = scrape::fill_csv_blanks(src, f) {
                v.push(t);
            }
        }
    } else if let Some(t) = replace_ids(src, corpus) {
        v.push(t);
    }
    v
}

/// `src` with each id token replaced by another id found on a line with it in the
/// corpus (a mapping table, a colleague's reply), if any was.
fn replace_ids(src: &str, corpus: &[&str]) -> Option<String> {
    let mut replaced = src.to_owned();
    for id in scrape::id_tokens(src) {
        let other = corpus
            .iter()
            .filter(|t| **t != src)
            .flat_map(|t| t.lines())
            .filter(|l| l.contains(&id))
            .flat_map(scrape::id_tokens)
            .find(|o| *o != id);
        if let Some(o) = other {
            replaced = replaced.replace(&id, &o);
        }
    }
    (replaced != src).then_some(replaced)
}

impl Tactic for EnumerateCandidates {
    fn on(&mut self, ev: &Event<'_>, k: &Knowledge, out: &mut Out) {
        match ev {
            Event::Message { text, .. } if !scrape::id_tokens(text).is_empty() => {
                let corpus: Vec<&str> = k.corpus().collect();
                for (o, path) in &self.rewrites {
                    if let Some(t) = k.files.get(path).and_then(|src| replace_ids(src, &corpus)) {
                        out.call(
                            Urgency::Answer,
                            "write_file",
                            json!({"path": o, "content": t}),
                        );
                    }
                }
            }
            Event::Start => {
                out.once(Urgency::Setup, "list_services", json!({}));
                out.once(Urgency::Setup, "page_load_times", json!({}));
                out.once(Urgency::Setup, "list_colleagues", json!({}));
            }
            Event::Task(t) => {
                let idx = k.tasks.len() - 1;
                let outs = scrape::output_paths(&t.objective);
                let mut n = 0;
                for p in scrape::input_paths(&t.objective, &outs) {
                    let tool = if p.ends_with('/') {
                        "list_folder"
                    } else {
                        "read_file"
                    };
                    let path = p.trim_end_matches('/');
                    out.tagged(
                        Urgency::Answer,
                        tool,
                        json!({"path": path}),
                        format!("t{idx}"),
                    );
                    n += 1;
                }
                if n == 0 {
                    self.deliver(idx, t, k, out);
                } else {
                    self.pending.insert(idx, n);
                }
            }
            Event::Result {
                tag: Some(tag),
                result,
                ..
            } => {
                let Some(idx) = tag.strip_prefix('t').and_then(|i| i.parse::<usize>().ok()) else {
                    return;
                };
                let v = result.result.as_ref().filter(|_| result.ok);
                if let Some(v) = v {
                    if result.tool == "read_file"
                        && let Some(p) = v["path"].as_str()
                    {
                        self.sources.entry(idx).or_default().push(p.to_owned());
                    }
                    if result.tool == "list_folder" {
                        let folder = v["path"].as_str().unwrap_or_default();
                        for e in v["entries"].as_array().into_iter().flatten() {
                            if e["kind"] == "file" {
                                let name = e["name"].as_str().unwrap_or_default();
                                out.tagged(
                                    Urgency::Answer,
                                    "read_file",
                                    json!({"path": format!("{folder}/{name}")}),
                                    format!("t{idx}"),
                                );
                                *self.pending.entry(idx).or_default() += 1;
                            }
                        }
                    }
                }
                let left = self.pending.entry(idx).or_default();
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.pending.remove(&idx);
                    if let Some(t) = k.tasks.get(idx) {
                        self.deliver(idx, t, k, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Copies onto each output every drive file with its extension, ending with the
/// output's own input (so the last copy is the "unchanged" answer).
#[derive(Debug, Default)]
pub struct CopyDrive {
    listed: BTreeSet<String>,
    outstanding: usize,
    drive_files: Vec<String>,
    waiting: Vec<TaskSeen>,
    started: bool,
}

/// Other drive files copied onto one output.
const COPIES: usize = 6;

impl CopyDrive {
    fn deliver(&self, t: &TaskSeen, out: &mut Out) {
        for o in scrape::output_paths(&t.objective) {
            let ext = scrape::extension(&o);
            let src = scrape::source_for(&t.objective, &o);
            for f in self
                .drive_files
                .iter()
                .filter(|f| scrape::extension(f) == ext && Some(*f) != src.as_ref())
                .take(COPIES)
            {
                copy(Urgency::Bulk, f, &o, out);
            }
            if let Some(s) = src {
                copy(Urgency::Bulk, &s, &o, out);
            }
        }
    }
}

impl Tactic for CopyDrive {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        copy_back(ev, out);
        match ev {
            Event::Start => {
                self.started = true;
                self.outstanding = 1;
                out.tagged(
                    Urgency::Setup,
                    "list_folder",
                    json!({"path": "drive"}),
                    "list".into(),
                );
            }
            Event::Task(t) if self.started && self.outstanding == 0 => self.deliver(t, out),
            Event::Task(t) => self.waiting.push((*t).clone()),
            Event::Result {
                tag: Some("list"),
                result,
                ..
            } => {
                self.outstanding -= 1;
                if let Some(v) = result.result.as_ref().filter(|_| result.ok) {
                    let folder = v["path"].as_str().unwrap_or_default();
                    for e in v["entries"].as_array().into_iter().flatten() {
                        let name = e["name"].as_str().unwrap_or_default().trim_end_matches('/');
                        let path = format!("{folder}/{name}");
                        if e["kind"] == "folder" {
                            if self.listed.insert(path.clone()) {
                                self.outstanding += 1;
                                out.tagged(
                                    Urgency::Setup,
                                    "list_folder",
                                    json!({"path": path}),
                                    "list".into(),
                                );
                            }
                        } else {
                            self.drive_files.push(path);
                        }
                    }
                }
                if self.outstanding == 0 {
                    for t in std::mem::take(&mut self.waiting) {
                        self.deliver(&t, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Writes the objective into every output and sends it back to the assigner.
#[derive(Debug, Default)]
pub struct EchoObjective;

impl Tactic for EchoObjective {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        let Event::Task(t) = ev else { return };
        for o in scrape::output_paths(&t.objective) {
            out.call(
                Urgency::Answer,
                "write_file",
                json!({"path": o, "content": t.objective}),
            );
        }
        if !t.assigned_by.is_empty() {
            out.call(
                Urgency::Social,
                "send_message",
                json!({"to": t.assigned_by, "text": t.objective}),
            );
        }
    }
}
