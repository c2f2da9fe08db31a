//! Pattern matching over text the tools return: the adversaries' only "understanding".
//!
//! Nothing here knows a family or a checkpoint. It finds backticked paths and
//! identifiers, the JSON shape an objective spells out, option lists, quoted titles,
//! clock times, dates, id-like tokens and numbers, the way a script with regular
//! expressions would.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Texts between backticks, in order.
pub fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, s)| i % 2 == 1 && !s.is_empty() && !s.contains('\n'))
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// Workspace paths the objective asks to save to: a backticked `workspace/...` path
/// after a "save", "write", " as " or " to " within the 24 characters before it.
pub fn output_paths(objective: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos: usize = 0;
    for (i, part) in objective.split('`').enumerate() {
        if i % 2 == 1 && part.starts_with("workspace/") && part.contains('.') {
            let before = &objective[..pos.saturating_sub(1)];
            let tail: String = before
                .chars()
                .rev()
                .take(24)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
                .to_lowercase();
            let asks = ["save", "write", " as ", " to ", "->"]
                .iter()
                .any(|w| tail.contains(w));
            if asks && !out.contains(&part.to_owned()) {
                out.push(part.to_owned());
            }
        }
        pos += part.len() + 1;
    }
    out
}

/// Backticked file paths (drive or workspace) that are not among `outputs`.
pub fn input_paths(objective: &str, outputs: &[String]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in backticked(objective) {
        if (p.starts_with("drive/") || p.starts_with("workspace/"))
            && !outputs.contains(&p)
            && !v.contains(&p)
        {
            v.push(p);
        }
    }
    v
}

/// The input a file output is derived from: the backticked path with the same
/// extension on the output's own line (`a -> save as b`), else the first with that
/// extension anywhere.
pub fn source_for(objective: &str, output: &str) -> Option<String> {
    let ext = extension(output);
    let same = |p: &String| extension(p) == ext && p != output && !p.ends_with('/');
    for line in objective.lines() {
        if line.contains(output)
            && let Some(p) = backticked(line).into_iter().find(|p| same(p))
        {
            return Some(p);
        }
    }
    let outs = output_paths(objective);
    input_paths(objective, &outs).into_iter().find(|p| same(p))
}

/// A path's extension, lower case (`""` when none).
pub fn extension(path: &str) -> String {
    path.rsplit_once('.')
        .filter(|(_, e)| !e.contains('/'))
        .map(|(_, e)| e.to_lowercase())
        .unwrap_or_default()
}

/// Backticked bare identifiers (`slow_pages`, `cost`): candidate JSON keys.
pub fn identifiers(text: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for s in backticked(text) {
        let ident = s
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && s.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        if ident && !tbsim_core::protocol::TOOL_NAMES.contains(&s.as_str()) && !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

/// Option lists spelled `one of: a, b, c` (or `one of a, b or c`), in order.
pub fn option_lists(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let lower = text.to_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("one of") {
        let start = from + i + "one of".len();
        let rest = &text[start..];
        let end = rest.find([')', '.', ';', '\n']).unwrap_or(rest.len());
        let items: Vec<String> = rest[..end]
            .trim_start_matches([':', ' '])
            .split([',', '/'])
            .flat_map(|s| s.split(" or "))
            .map(|s| s.trim().trim_matches('`').to_owned())
            .filter(|s| !s.is_empty() && !s.contains(' '))
            .collect();
        if items.len() >= 2 {
            out.push(items);
        }
        from = start;
    }
    out
}

/// The option list that follows a backticked key (`causes` (each one of: ...)).
pub fn options_for(text: &str, key: &str) -> Option<Vec<String>> {
    let at = text.find(&format!("`{key}`"))?;
    let window: String = text[at..].chars().take(160).collect();
    let next_key = window[1 + key.len() + 1..]
        .find('`')
        .unwrap_or(window.len());
    option_lists(&window[..(1 + key.len() + 1 + next_key).min(window.len())])
        .into_iter()
        .next()
}

/// Whether the text right after a backticked key says it is a boolean.
pub fn is_boolean_key(text: &str, key: &str) -> bool {
    text.find(&format!("`{key}`")).is_some_and(|at| {
        let window: String = text[at..]
            .chars()
            .take(60)
            .collect::<String>()
            .to_lowercase();
        window.contains("true or false") || window.contains("true/false")
    })
}

/// Double-quoted phrases (titles), in order.
pub fn quoted(text: &str) -> Vec<String> {
    text.split('"')
        .enumerate()
        .filter(|(i, s)| i % 2 == 1 && !s.is_empty() && s.len() < 80 && !s.contains('\n'))
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// `HH:MM` clock times, in order.
pub fn clock_times(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len().saturating_sub(4) {
        let d = |j: usize| b.get(i + j).is_some_and(u8::is_ascii_digit);
        let edge_before = i == 0 || !b[i - 1].is_ascii_digit() && b[i - 1] != b':';
        let edge_after = b.get(i + 5).is_none_or(|c| !c.is_ascii_digit());
        if edge_before && d(0) && d(1) && b[i + 2] == b':' && d(3) && d(4) && edge_after {
            out.push(text[i..i + 5].to_owned());
        }
    }
    out
}

/// `YYYY-MM-DD` dates, distinct, in order.
pub fn dates(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    for i in 0..b.len().saturating_sub(9) {
        let d = |j: usize| b[i + j].is_ascii_digit();
        let shape = d(0) && d(1) && d(2) && d(3) && b[i + 4] == b'-' && d(5) && d(6);
        if shape && b[i + 7] == b'-' && d(8) && d(9) && (i == 0 || !b[i - 1].is_ascii_digit()) {
            let s = text[i..i + 10].to_owned();
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Id-like tokens: capital letters then digits (`CH001`, `NEW123456`, `EMP-0042`).
pub fn id_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        let t = raw.trim_matches(['-', '_']);
        let letters = t.chars().take_while(char::is_ascii_uppercase).count();
        let rest = &t[letters..];
        let rest = rest.trim_start_matches(['-', '_']);
        if (1..=6).contains(&letters)
            && rest.len() >= 2
            && rest.chars().all(|c| c.is_ascii_digit())
            && !out.iter().any(|o| o == t)
        {
            out.push(t.to_owned());
        }
    }
    out
}

/// Numbers in the text, distinct, in order (at most `cap`).
pub fn numbers(text: &str, cap: usize) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<f64>| {
        let t = cur.trim_end_matches('.');
        if let Ok(v) = t.parse::<f64>()
            && v.is_finite()
            && !out.contains(&v)
        {
            out.push(v);
        }
        cur.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() || (c == '.' && !cur.is_empty()) {
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
        }
        if out.len() >= cap {
            break;
        }
    }
    flush(&mut cur, &mut out);
    out.truncate(cap);
    out
}

/// Distinct non-numeric cell values of a CSV text, column by column, for columns
/// with few distinct values (names, categories); at most `cap`.
pub fn csv_labels(text: &str, cap: usize) -> Vec<String> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::trim).collect())
        .collect();
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut out: Vec<String> = Vec::new();
    for c in 0..width {
        let col: BTreeSet<&str> = rows.iter().filter_map(|r| r.get(c).copied()).collect();
        let labels = col
            .iter()
            .all(|v| v.parse::<f64>().is_err() && !v.is_empty() && v.len() <= 40);
        if labels && col.len() >= 2 && col.len() <= 24 {
            for v in col {
                if out.len() < cap && !out.iter().any(|o| o == v) {
                    out.push(v.to_owned());
                }
            }
        }
    }
    out
}

/// Fills the blank cells of a CSV text column by column with `fill(previous, next)`
/// over the nearest numbers above and below; `None` when nothing is blank.
pub fn fill_csv_blanks(
    text: &str,
    fill: impl Fn(Option<f64>, Option<f64>) -> Option<f64>,
) -> Option<String> {
    let mut rows: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect();
    let mut blank = false;
    for r in 1..rows.len() {
        for c in 0..rows[r].len() {
            if !rows[r][c].trim().is_empty() {
                continue;
            }
            blank = true;
            let num = |row: &Vec<String>| row.get(c).and_then(|v| v.trim().parse::<f64>().ok());
            let prev = rows[1..r].iter().rev().find_map(num);
            let next = rows[r + 1..].iter().find_map(num);
            if let Some(v) = fill(prev, next) {
                rows[r][c] = format_number(v);
            }
        }
    }
    blank.then(|| {
        let mut s = rows
            .iter()
            .map(|r| r.join(","))
            .collect::<Vec<_>>()
            .join("\n");
        if text.ends_with('\n') {
            s.push('\n');
        }
        s
    })
}

/// A number as a script would print it: whole numbers without decimals, else two.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

/// The skeleton of a JSON shape written loosely in prose
/// (`{"a": ..., "b": ["CH001", ...], "c": <number>}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An object's keys and values, in order.
    Object(Vec<(String, Shape)>),
    /// An array with its sample items (placeholders dropped).
    Array(Vec<Shape>),
    /// A literal string (`"YYYY-MM-DD"`, `"Full Name"`).
    Text(String),
    /// A literal number.
    Number(f64),
    /// A literal boolean.
    Bool(bool),
    /// `...`, `<number>` or any other placeholder.
    Hole,
}

/// The JSON shape spelled after `path` in the objective (the first `{` within 80
/// characters after it), if any.
pub fn shape_after(objective: &str, path: &str) -> Option<Shape> {
    let at = objective.find(path)? + path.len();
    let rest = &objective[at..];
    let open = rest.find('{').filter(|i| *i <= 80)?;
    let mut p = ShapeParser {
        s: &rest.as_bytes()[open..],
        i: 0,
    };
    let shape = p.value()?;
    matches!(shape, Shape::Object(_)).then_some(shape)
}

struct ShapeParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl ShapeParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn value(&mut self) -> Option<Shape> {
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut fields = Vec::new();
                loop {
                    match self.peek()? {
                        b'}' => {
                            self.i += 1;
                            return Some(Shape::Object(fields));
                        }
                        b',' => self.i += 1,
                        b'"' => {
                            let Shape::Text(k) = self.value()? else {
                                return None;
                            };
                            if self.peek()? != b':' {
                                return None;
                            }
                            self.i += 1;
                            let v = self.value()?;
                            fields.push((k, v));
                        }
                        _ => {
                            // A placeholder entry (`...`): skip it.
                            self.value()?;
                        }
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    match self.peek()? {
                        b']' => {
                            self.i += 1;
                            return Some(Shape::Array(items));
                        }
                        b',' => self.i += 1,
                        _ => match self.value()? {
                            Shape::Hole => {}
                            v => items.push(v),
                        },
                    }
                }
            }
            b'"' => {
                let start = self.i + 1;
                let end = start + self.s[start..].iter().position(|c| *c == b'"')?;
                self.i = end + 1;
                Some(Shape::Text(
                    String::from_utf8_lossy(&self.s[start..end]).into_owned(),
                ))
            }
            b'<' => {
                let end = self.i + self.s[self.i..].iter().position(|c| *c == b'>')?;
                self.i = end + 1;
                Some(Shape::Hole)
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !b",}]:".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let word = String::from_utf8_lossy(&self.s[start..self.i])
                    .trim()
                    .to_owned();
                if word.is_empty() {
                    return None;
                }
                Some(match word.as_str() {
                    "true" => Shape::Bool(true),
                    "false" => Shape::Bool(false),
                    w => w.parse().map_or(Shape::Hole, Shape::Number),
                })
            }
        }
    }
}

/// Which value a hole gets when a shape is filled.
pub trait Filler {
    /// The value for a hole under `key` (the nearest object key above it).
    fn hole(&mut self, key: &str) -> Value;
    /// The items of an array under `key` whose sample items are `samples`.
    fn array(&mut self, key: &str, samples: &[Shape]) -> Vec<Value>;
    /// A literal string under `key` (placeholders such as `YYYY-MM-DD` may be replaced).
    fn text(&mut self, key: &str, literal: &str) -> Value;
}

/// Fills a shape into a JSON value.
pub fn fill(shape: &Shape, key: &str, f: &mut dyn Filler) -> Value {
    match shape {
        Shape::Object(fields) => {
            let mut m = Map::new();
            for (k, v) in fields {
                m.insert(k.clone(), fill(v, k, f));
            }
            Value::Object(m)
        }
        Shape::Array(samples) => Value::Array(f.array(key, samples)),
        Shape::Text(t) => f.text(key, t),
        Shape::Number(n) => serde_json::json!(n),
        Shape::Bool(b) => Value::Bool(*b),
        Shape::Hole => f.hole(key),
    }
}

/// The words after `<key> at ` in the text, while they are capitalised
/// (`morning at Larch Lake, ...` gives `Larch Lake`).
pub fn named_after(text: &str, key: &str) -> Option<String> {
    let pat = format!("{key} at ");
    let at = text.find(&pat)? + pat.len();
    let words: Vec<&str> = text[at..]
        .split(' ')
        .take_while(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    let mut name = words.join(" ");
    let cut = name.find([',', ')', '.', ';']).unwrap_or(name.len());
    name.truncate(cut);
    (!name.is_empty()).then_some(name)
}

/// Colleague names and department words found in the text, by the names given.
pub fn mentions<'a>(text: &str, names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    names
        .filter(|n| !n.is_empty() && text.contains(*n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEB: &str = "Save a report as `workspace/web_report.json`: a JSON object with `slow_pages` (page paths), `causes` (each one of: disk_full, memory_exhausted, cpu_saturated), `owners`.";

    #[test]
    fn outputs_are_the_paths_to_save_to() {
        let o = "Please review `workspace/tx.csv` and find X. Save your findings as `workspace/report.json`.";
        assert_eq!(output_paths(o), vec!["workspace/report.json"]);
        let kb = "Fix:\n- `drive/kb/a.md` -> save as `workspace/a_fixed.md`\n- `drive/kb/b.md` -> save as `workspace/b_fixed.md`";
        assert_eq!(
            output_paths(kb),
            vec!["workspace/a_fixed.md", "workspace/b_fixed.md"]
        );
        assert_eq!(
            source_for(kb, "workspace/b_fixed.md").as_deref(),
            Some("drive/kb/b.md")
        );
        let plan = r#"Save `workspace/plan.json` as {"a": 1}."#;
        assert_eq!(output_paths(plan), vec!["workspace/plan.json"]);
    }

    #[test]
    fn keys_options_and_booleans_are_read_off_the_prose() {
        assert_eq!(identifiers(WEB), vec!["slow_pages", "causes", "owners"]);
        assert_eq!(
            options_for(WEB, "causes").unwrap(),
            vec!["disk_full", "memory_exhausted", "cpu_saturated"]
        );
        assert!(options_for(WEB, "slow_pages").is_none());
        assert!(is_boolean_key("whether (`ok`, true or false). Save", "ok"));
    }

    #[test]
    fn loose_shapes_parse() {
        let o = r#"Save `workspace/p.json` as {"event_date": "YYYY-MM-DD", "plan": {"morning": ..., "lunch": ...}, "ids": ["CH001", ...], "n": <number>, "ok": true}."#;
        let s = shape_after(o, "workspace/p.json").unwrap();
        let Shape::Object(f) = s else { panic!() };
        assert_eq!(f.len(), 5);
        assert_eq!(
            f[0],
            ("event_date".into(), Shape::Text("YYYY-MM-DD".into()))
        );
        assert_eq!(f[2].1, Shape::Array(vec![Shape::Text("CH001".into())]));
        assert_eq!(f[3].1, Shape::Hole);
        assert_eq!(f[4].1, Shape::Bool(true));
    }

    #[test]
    fn tokens_times_dates_numbers() {
        let t = "Meet 2025-10-01 from 15:00 to 17:30; ids CH001, NEW123456 and EMP-0042 cost 12.50 or 7.";
        assert_eq!(clock_times(t), vec!["15:00", "17:30"]);
        assert_eq!(dates(t), vec!["2025-10-01"]);
        assert_eq!(id_tokens(t), vec!["CH001", "NEW123456", "EMP-0042"]);
        assert!(numbers(t, 20).contains(&12.5));
        assert_eq!(
            named_after(
                "morning at Larch Lake, lunch at Jade Garden Kitchen)",
                "lunch"
            )
            .as_deref(),
            Some("Jade Garden Kitchen")
        );
    }

    #[test]
    fn csv_blanks_fill_from_neighbours() {
        let t = "a,b\nx,1\ny,\nz,3\n";
        let filled = fill_csv_blanks(t, |p, n| Some((p? + n?) / 2.0)).unwrap();
        assert_eq!(filled, "a,b\nx,1\ny,2\nz,3\n");
        assert_eq!(csv_labels(t, 10), vec!["x", "y", "z"]);
        assert!(fill_csv_blanks("a\n1\n", |p, _| p).is_none());
    }
}
