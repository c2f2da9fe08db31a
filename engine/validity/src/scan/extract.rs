//! Generic extractors: rules that pull a candidate answer out of a text without
//! knowing what it means (the only / first / last / largest / smallest / median
//! number of a text or a CSV column, the first row, every list item, a document's
//! JSON example, the names in a text, the value beside an ID, dates, constants).
//!
//! Every candidate carries a label `<extractor> of <source>`; sources are labelled
//! by kind, never by instance (file paths with their digits folded to `#`, "reply",
//! "meeting", ...), so the same label names the same rule in every instance.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tbsim_scenario::check::parse_csv;

use crate::scrape;

/// A text an agent observed, with its kind label.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    /// Kind label (`file drive/finance/#.md`, `reply`, `replies`, `meeting`, ...).
    pub label: String,
    /// The text.
    pub text: String,
}

/// Candidate values by type; each value keeps every label that produced it
/// (sorted, distinct), so one evaluation credits every rule at once.
#[derive(Debug, Default, Clone)]
pub struct Pool {
    /// Numbers, keyed by their exact bit pattern's text.
    pub numbers: BTreeMap<String, (f64, Vec<String>)>,
    /// String lists.
    pub lists: BTreeMap<Vec<String>, Vec<String>>,
    /// Arrays of records (or of strings), as JSON.
    pub arrays: BTreeMap<String, (Value, Vec<String>)>,
    /// Texts (a file's whole content, a message, a date, a number as written).
    pub texts: BTreeMap<String, Vec<String>>,
    /// JSON documents (examples), with labels.
    pub examples: BTreeMap<String, (Value, Vec<String>)>,
    /// Meetings a policy could book ([`super::booking`]), with labels.
    pub bookings: Vec<(super::booking::BookingFill, Vec<String>)>,
    /// The scenario's calendar anchor, for judging bookings.
    pub epoch: Option<tbsim_core::time::Epoch>,
}

fn credit(labels: &mut Vec<String>, label: &str) {
    if let Err(i) = labels.binary_search_by(|l| l.as_str().cmp(label)) {
        labels.insert(i, label.to_owned());
    }
}

impl Pool {
    fn number(&mut self, v: f64, label: String) {
        let e = self
            .numbers
            .entry(scrape::format_number(v))
            .or_insert((v, Vec::new()));
        credit(&mut e.1, &label);
        self.text(scrape::format_number(v), label);
    }

    fn list(&mut self, v: Vec<String>, label: String) {
        if v.len() > 1 {
            self.text(v.join("\n"), format!("{label}, one a line"));
        }
        let arr = Value::Array(v.iter().cloned().map(Value::String).collect());
        self.array(arr, label.clone());
        credit(self.lists.entry(v).or_default(), &label);
    }

    fn array(&mut self, v: Value, label: String) {
        let e = self.arrays.entry(v.to_string()).or_insert((v, Vec::new()));
        credit(&mut e.1, &label);
    }

    fn text(&mut self, t: String, label: String) {
        if !t.trim().is_empty() {
            credit(self.texts.entry(t).or_default(), &label);
        }
    }

    fn example(&mut self, v: Value, label: String) {
        let e = self
            .examples
            .entry(v.to_string())
            .or_insert((v, Vec::new()));
        credit(&mut e.1, &label);
    }

    /// Every candidate of every source; `names` are the colleagues' full names.
    pub fn build(sources: &[Source], names: &[String]) -> Pool {
        let mut p = Pool::default();
        p.list(Vec::new(), "empty list".into());
        p.text("true".into(), "true".into());
        p.text("false".into(), "false".into());
        for s in sources {
            p.add(s, names);
        }
        p
    }

    fn add(&mut self, s: &Source, names: &[String]) {
        let of = |ex: &str| format!("{ex} of {}", s.label);
        let text = &s.text;
        self.text(text.clone(), of("copy"));
        if let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
            self.text(first.to_owned(), of("first line"));
        }
        // Numbers of the whole text.
        let nums = numbers(text);
        for (ex, v) in summaries(&nums) {
            self.number(v, of(&format!("{ex} number")));
        }
        // Dates.
        let dates = scrape::dates(text);
        if let Some(d) = dates.first() {
            self.text(d.clone(), of("first date"));
        }
        if let Some(d) = dates.last() {
            self.text(d.clone(), of("last date"));
        }
        if !dates.is_empty() {
            let mut sorted = dates.clone();
            sorted.sort();
            self.text(sorted[(sorted.len() - 1) / 2].clone(), of("median date"));
        }
        // List items.
        let items = list_items(text);
        if !items.is_empty() {
            self.text(items[0].clone(), of("first list item"));
            self.list(vec![items[0].clone()], of("first list item"));
            self.list(items.clone(), of("every list item"));
            if items.len() >= 3 {
                self.plan(&items[..3], of("first three list items"));
            }
        }
        // Names of colleagues, in the order the text gives them.
        let mut found: Vec<(usize, &String)> = names
            .iter()
            .filter_map(|n| text.find(n.as_str()).map(|i| (i, n)))
            .collect();
        found.sort();
        let found: Vec<String> = found.into_iter().map(|(_, n)| n.clone()).collect();
        if !found.is_empty() {
            self.text(found[0].clone(), of("first name"));
            self.list(vec![found[0].clone()], of("first name"));
            self.list(found.clone(), of("every name"));
            self.text(found.join(", "), of("every name"));
            if found.len() >= 3 {
                self.plan(&found[..3], of("first three names"));
            }
        }
        // The value beside an ID (`OLD123: NEW456`, `CH001 -> CH009`, `EMP-1 | 40`).
        for line in text.lines() {
            let ids = scrape::id_tokens(line);
            if let Some(id) = ids.first()
                && let Some(at) = line.find(id.as_str())
            {
                let rest = line[at + id.len()..]
                    .trim_start_matches([' ', ':', '-', '>', '|', '=', ',', '\t', '→']);
                let word: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != ',' && *c != ';')
                    .collect();
                let word = word.trim_end_matches(['.', ')']).to_owned();
                if !word.is_empty() {
                    self.text(word.clone(), of("value beside an ID"));
                    if let Some(v) = numbers(&word).first() {
                        self.number(*v, of("value beside an ID"));
                    }
                }
            }
        }
        // CSV: rows and columns.
        if let Some(rows) = parse_csv(text).filter(|r| r.len() >= 2 && r[0].len() >= 2) {
            let header = &rows[0];
            let body = &rows[1..];
            self.text(body[0].join(","), of("first row"));
            self.list(vec![body[0][0].clone()], of("first row"));
            self.array(
                Value::Array(vec![record(header, &body[0])]),
                of("first row"),
            );
            self.array(
                Value::Array(body.iter().map(|r| record(header, r)).collect()),
                of("every row"),
            );
            for (c, name) in header.iter().enumerate() {
                let col: Vec<f64> = body
                    .iter()
                    .filter_map(|r| r.get(c))
                    .filter_map(|v| numbers(v).first().copied())
                    .collect();
                for (ex, v) in summaries(&col) {
                    self.number(v, of(&format!("{ex} of column {name}")));
                }
            }
        }
        // JSON examples: a ```json block or a balanced `{...}`.
        for v in json_examples(text) {
            self.example(v, of("JSON example"));
        }
    }

    fn plan(&mut self, three: &[String], label: String) {
        let mut m = Map::new();
        for (k, v) in ["morning", "lunch", "afternoon"].iter().zip(three) {
            m.insert((*k).into(), Value::String(v.clone()));
        }
        let mut doc = Map::new();
        doc.insert("plan".into(), Value::Object(m));
        self.example(Value::Object(doc), label);
    }
}

/// Named summaries of a list of numbers: the only, first, last, largest, smallest
/// and (lower) median.
fn summaries(v: &[f64]) -> Vec<(&'static str, f64)> {
    if v.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut distinct: Vec<f64> = Vec::new();
    for x in v {
        if !distinct.contains(x) {
            distinct.push(*x);
        }
    }
    if distinct.len() == 1 {
        out.push(("only", v[0]));
    }
    out.push(("first", v[0]));
    out.push(("last", v[v.len() - 1]));
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    out.push(("largest", s[s.len() - 1]));
    out.push(("smallest", s[0]));
    out.push(("median", s[(s.len() - 1) / 2]));
    out
}

/// A CSV row as a record: numeric cells as numbers, the rest as text.
fn record(header: &[String], row: &[String]) -> Value {
    let mut m = Map::new();
    for (k, v) in header.iter().zip(row) {
        let t = v.trim();
        let val = match t.parse::<f64>() {
            Ok(n) if n.is_finite() => serde_json::json!(n),
            _ => Value::String(t.to_owned()),
        };
        m.insert(k.trim().to_owned(), val);
    }
    Value::Object(m)
}

/// Numbers as written in prose: `8,000`, `$12,500.50`, `7.5%`, `-3`; dates and
/// clock times are not numbers, and neither are the digits inside a word (`CH001`).
pub fn numbers(text: &str) -> Vec<f64> {
    let cleaned = without_dates_and_times(text);
    let b: Vec<char> = cleaned.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_' || b[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut s = String::new();
        while j < b.len() {
            let c = b[j];
            let next_digit = b.get(j + 1).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() {
                s.push(c);
            } else if c == ','
                && (1..=3).all(|k| b.get(j + k).is_some_and(char::is_ascii_digit))
                && b.get(j + 4).is_none_or(|x| !x.is_ascii_digit())
            {
                // A thousands separator is followed by exactly three digits.
            } else if c == '.' && next_digit && !s.contains('.') {
                s.push(c);
            } else {
                break;
            }
            j += 1;
        }
        let glued = b.get(j).is_some_and(|c| c.is_alphabetic() || *c == '_');
        let negative = i > 0 && b[i - 1] == '-' && (i < 2 || b[i - 2].is_whitespace());
        if !glued && let Ok(v) = s.parse::<f64>() {
            out.push(if negative { -v } else { v });
        }
        i = j.max(i + 1);
    }
    out
}

/// `text` with every occurrence of each date and clock time it holds replaced by one
/// space: what replacing each distinct one in first-seen order does, in one pass.
///
/// Every occurrence of a date or time string has the shape of one (digits and `-`
/// or `:`), so one pass over the text finds them all; when no two overlap, the
/// replacements in turn are independent (no pattern holds a space, so none is made
/// or broken by another's) and the result is the same. Overlapping ones (which only
/// contrived text has) take the replacements in turn.
fn without_dates_and_times(text: &str) -> String {
    let mut order: Vec<String> = scrape::dates(text);
    order.extend(scrape::clock_times(text));
    if order.is_empty() {
        return text.to_owned();
    }
    let set: std::collections::BTreeSet<&str> = order.iter().map(String::as_str).collect();
    let b = text.as_bytes();
    let digit = |i: usize| b[i].is_ascii_digit();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for i in 0..b.len() {
        // All bytes of a shaped window are ASCII, so its ends are char boundaries.
        let date = i + 10 <= b.len()
            && (0..10).all(|k| {
                if k == 4 || k == 7 {
                    b[i + k] == b'-'
                } else {
                    digit(i + k)
                }
            });
        let time = i + 5 <= b.len()
            && (0..5).all(|k| {
                if k == 2 {
                    b[i + k] == b':'
                } else {
                    digit(i + k)
                }
            });
        let len = if date && set.contains(&text[i..i + 10]) {
            10
        } else if time && set.contains(&text[i..i + 5]) {
            5
        } else {
            continue;
        };
        if spans.last().is_some_and(|&(_, end)| i < end) {
            // Overlapping occurrences: the replacements' order matters.
            let mut cleaned = text.to_owned();
            let mut done = std::collections::BTreeSet::new();
            for d in &order {
                if done.insert(d) {
                    cleaned = cleaned.replace(d.as_str(), " ");
                }
            }
            return cleaned;
        }
        spans.push((i, i + len));
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&text[at..start]);
        out.push(' ');
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Lines written as list items (`- x`, `* x`, `• x`, `1. x`, `1) x`), in order.
pub fn list_items(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let rest = if let Some(r) = l
            .strip_prefix("- ")
            .or_else(|| l.strip_prefix("* "))
            .or_else(|| l.strip_prefix("• "))
        {
            Some(r)
        } else {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            (digits > 0 && digits <= 3)
                .then(|| &l[digits..])
                .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
        };
        if let Some(r) = rest.map(str::trim).filter(|r| !r.is_empty()) {
            out.push(r.to_owned());
        }
    }
    out
}

/// JSON values a document shows as examples: every ```json fenced block and every
/// balanced `{...}` that parses, in order, distinct.
pub fn json_examples(text: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut push = |v: Value| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    for (i, block) in text.split("```").enumerate() {
        if i % 2 == 1 {
            let body = block.strip_prefix("json").unwrap_or(block);
            if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
                push(v);
            }
        }
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            let mut depth = 0usize;
            let mut end = None;
            let mut in_str = false;
            for (j, &c) in b.iter().enumerate().skip(i) {
                match c {
                    b'"' if j == 0 || b[j - 1] != b'\\' => in_str = !in_str,
                    b'{' if !in_str => depth += 1,
                    b'}' if !in_str => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(e) = end
                && let Ok(v) = serde_json::from_str::<Value>(&text[i..=e])
            {
                push(v);
                i = e + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// A source label for a file: its path with every run of digits folded to `#`, so
/// one rule names the same file in every instance.
pub fn file_label(path: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in path.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    format!("file {out}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_prose_not_dates_or_ids() {
        assert_eq!(
            numbers("Cap: $8,000 (was 7,500.50) on 2025-10-01 at 09:30, ticket CH001, -3 left."),
            [8000.0, 7500.5, -3.0]
        );
        assert_eq!(numbers("1,2,3"), [1.0, 2.0, 3.0]);
    }

    /// The reference: each distinct date and time replaced by a space in turn.
    fn in_turn(text: &str) -> String {
        let mut cleaned = text.to_owned();
        let mut done = std::collections::BTreeSet::new();
        for d in scrape::dates(text)
            .into_iter()
            .chain(scrape::clock_times(text))
        {
            if done.insert(d.clone()) {
                cleaned = cleaned.replace(&d, " ");
            }
        }
        cleaned
    }

    /// The one-pass blanking against the reference, on hand-picked texts.
    #[test]
    fn dates_and_times_blank_as_replacing_them_in_turn_does() {
        let texts = [
            "",
            "no dates at all, 12 and 7.5",
            "2025-10-01 at 09:30; again 2025-10-01 09:30, then 2025-10-02 at 10:00",
            "glued: x2025-10-01y 109:30 12025-10-01 and 09:30:15",
            // Overlaps: a date running into a time, a date overlapping itself.
            "2025-10-01:30 then 01:30 alone",
            "1111-11-1111-11-11 and 1111-11-11",
            "12:12:12 and 12:12",
            "é2025-10-01ü 09:30€",
        ];
        for t in texts {
            assert_eq!(without_dates_and_times(t), in_turn(t), "{t:?}");
        }
    }

    proptest::proptest! {
        /// Texts glued from dates, times, their pieces and other characters, so
        /// repeats, overlaps and glued windows are frequent.
        #[test]
        fn blanking_matches_replacing_in_turn_on_any_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "2025-10-01", "2025-10-0", "1111-11-11", "11-11", "09:30", "12:12",
                    "1", "0", "-", ":", " ", "a", "é",
                ]),
                0..14,
            )
        ) {
            let t = parts.concat();
            proptest::prop_assert_eq!(without_dates_and_times(&t), in_turn(&t));
        }
    }

    #[test]
    fn summaries_name_the_rules() {
        let s = summaries(&[3.0, 9.0, 1.0, 5.0]);
        let get = |k: &str| s.iter().find(|(n, _)| *n == k).map(|x| x.1);
        assert_eq!(get("only"), None);
        assert_eq!(get("first"), Some(3.0));
        assert_eq!(get("last"), Some(5.0));
        assert_eq!(get("largest"), Some(9.0));
        assert_eq!(get("smallest"), Some(1.0));
        assert_eq!(get("median"), Some(3.0));
        assert_eq!(summaries(&[4.0, 4.0])[0], ("only", 4.0));
    }

    #[test]
    fn lists_and_json_examples() {
        let t = "Rules:\n- Alpha one\n* Beta\n2. Gamma\nExample: {\"a\": [\"x\"], \"n\": 5}\n```json\n{\"b\": 1}\n```";
        assert_eq!(list_items(t), ["Alpha one", "Beta", "Gamma"]);
        let ex = json_examples(t);
        assert!(ex.contains(&serde_json::json!({"a": ["x"], "n": 5})));
        assert!(ex.contains(&serde_json::json!({"b": 1})));
    }

    #[test]
    fn file_labels_fold_digits() {
        assert_eq!(
            file_label("drive/data/day2/t_014.csv"),
            "file drive/data/day#/t_#.csv"
        );
    }
}
