//! Checkpoint predicates, evaluated against a read-only view of the world.
//!
//! Evaluation is total: a missing file, malformed JSON or a wrong type simply fails
//! the check. Nothing here can panic on agent-written content.

use serde_json::Value;

use crate::scenario::{Check, Record};

/// What a check may look at.
pub trait WorldView {
    /// A file's bytes.
    fn file(&self, path: &str) -> Option<&[u8]>;
    /// Whether a clue has been disclosed to the agent.
    fn disclosed(&self, clue: &str) -> bool;
    /// Whether the agent read or copied a drive file.
    fn consulted(&self, path: &str) -> bool;
    /// Whether the agent joined a meeting within its on-time window.
    fn attended_on_time(&self, meeting: &str) -> bool;
    /// Whether the agent has called a tool (with well-formed arguments).
    fn tool_called(&self, tool: &str) -> bool;
}

/// Normalises text for comparison: `\r\n` to `\n`, trailing spaces per line and
/// trailing blank lines removed.
pub fn normalise(text: &str) -> String {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.trim_end_matches([' ', '\t', '\r']))
        .collect();
    lines.join("\n").trim_end_matches('\n').to_owned()
}

fn text<'a>(view: &'a dyn WorldView, path: &str) -> Option<&'a str> {
    std::str::from_utf8(view.file(path)?).ok()
}

fn json_at(view: &dyn WorldView, path: &str, pointer: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(text(view, path)?).ok()?;
    v.pointer(pointer).cloned()
}

fn fold(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        // Agents often quote numbers; accept plain numeric strings (not "$12").
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

fn record_matches(expected: &Record, got: &Value, tol: f64) -> bool {
    let Some(obj) = got.as_object() else {
        return false;
    };
    expected.text.iter().all(|(k, want)| {
        obj.get(k)
            .and_then(Value::as_str)
            .is_some_and(|g| fold(g) == fold(want))
    }) && expected.numbers.iter().all(|(k, want)| {
        obj.get(k)
            .and_then(number)
            .is_some_and(|g| (g - want).abs() <= tol)
    })
}

/// Whether a check passes now.
pub fn evaluate(check: &Check, view: &dyn WorldView) -> bool {
    match check {
        Check::FileExists { path } => view.file(path).is_some(),
        Check::FileText { path, expected } => {
            text(view, path).is_some_and(|t| normalise(t) == normalise(expected))
        }
        Check::FileContains {
            path,
            present,
            absent,
        } => text(view, path).is_some_and(|t| {
            present.iter().all(|p| t.contains(p.as_str()))
                && !absent.iter().any(|a| t.contains(a.as_str()))
        }),
        Check::JsonStringSet {
            path,
            pointer,
            expected,
        } => {
            let Some(Value::Array(items)) = json_at(view, path, pointer) else {
                return false;
            };
            let mut got: Vec<String> = Vec::with_capacity(items.len());
            for it in &items {
                let Some(s) = it.as_str() else { return false };
                got.push(fold(s));
            }
            got.sort();
            got.dedup();
            let mut want: Vec<String> = expected.iter().map(|s| fold(s)).collect();
            want.sort();
            want.dedup();
            // Duplicates in the answer are tolerated; extra or missing names are not.
            got == want
        }
        Check::JsonRecords {
            path,
            pointer,
            expected,
            tolerance,
        } => {
            let Some(Value::Array(items)) = json_at(view, path, pointer) else {
                return false;
            };
            if items.len() != expected.len() {
                return false;
            }
            // Multiset matching: each expected record claims one distinct answer record.
            // Greedy is exact here because records match on their identifying text fields.
            let mut used = vec![false; items.len()];
            expected.iter().all(|e| {
                match (0..items.len())
                    .find(|&i| !used[i] && record_matches(e, &items[i], *tolerance))
                {
                    Some(i) => {
                        used[i] = true;
                        true
                    }
                    None => false,
                }
            })
        }
        Check::JsonNumber {
            path,
            pointer,
            expected,
            tolerance,
        } => json_at(view, path, pointer)
            .as_ref()
            .and_then(number)
            .is_some_and(|g| (g - expected).abs() <= *tolerance),
        Check::JsonArray { path, pointer } => {
            matches!(json_at(view, path, pointer), Some(Value::Array(a)) if a.iter().all(|v| v.is_string() || v.is_object()))
        }
        Check::All(checks) => !checks.is_empty() && checks.iter().all(|c| evaluate(c, view)),
        Check::Disclosed(clues) => !clues.is_empty() && clues.iter().all(|c| view.disclosed(c)),
        Check::Attended(m) => view.attended_on_time(m),
        Check::Consulted(p) => view.consulted(p),
        Check::ToolCalled { tool, called } => view.tool_called(tool) == *called,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Default)]
    struct V(BTreeMap<String, Vec<u8>>);
    impl WorldView for V {
        fn file(&self, path: &str) -> Option<&[u8]> {
            self.0.get(path).map(Vec::as_slice)
        }
        fn disclosed(&self, c: &str) -> bool {
            c == "clue/yes"
        }
        fn consulted(&self, _: &str) -> bool {
            false
        }
        fn attended_on_time(&self, _: &str) -> bool {
            false
        }
        fn tool_called(&self, tool: &str) -> bool {
            tool == "reboot_server"
        }
    }

    fn with(path: &str, content: &str) -> V {
        let mut v = V::default();
        v.0.insert(path.into(), content.as_bytes().to_vec());
        v
    }

    #[test]
    fn string_sets_are_exact_but_forgiving_on_case_and_space() {
        let c = Check::JsonStringSet {
            path: "workspace/r.json".into(),
            pointer: "/s".into(),
            expected: vec!["Acme  Parts".into(), "Bolt Co".into()],
        };
        assert!(evaluate(
            &c,
            &with(
                "workspace/r.json",
                r#"{"s": ["bolt co", "ACME PARTS", "Bolt Co"]}"#
            )
        ));
        assert!(
            !evaluate(&c, &with("workspace/r.json", r#"{"s": ["bolt co"]}"#)),
            "missing one"
        );
        assert!(
            !evaluate(
                &c,
                &with(
                    "workspace/r.json",
                    r#"{"s": ["bolt co", "acme parts", "Other"]}"#
                )
            ),
            "false positive"
        );
        assert!(
            !evaluate(&c, &with("workspace/r.json", r#"{"s": "bolt co"}"#)),
            "not an array"
        );
        assert!(!evaluate(&c, &with("workspace/r.json", "")), "empty file");
        assert!(!evaluate(&c, &V::default()), "missing file");
        let none = Check::JsonStringSet {
            path: "workspace/r.json".into(),
            pointer: "/s".into(),
            expected: vec![],
        };
        assert!(evaluate(&none, &with("workspace/r.json", r#"{"s": []}"#)));
    }

    #[test]
    fn records_match_as_a_multiset_with_tolerance() {
        let rec = |n: &str, q: f64| Record {
            text: [("name".to_string(), n.to_string())].into(),
            numbers: [("quantity".to_string(), q)].into(),
        };
        let c = Check::JsonRecords {
            path: "w".into(),
            pointer: "/r".into(),
            expected: vec![rec("A", 2.0), rec("A", 2.0)],
            tolerance: 0.5,
        };
        assert!(evaluate(
            &c,
            &with(
                "w",
                r#"{"r":[{"name":"a","quantity":2.2},{"name":"A","quantity":"2"}]}"#
            )
        ));
        assert!(!evaluate(
            &c,
            &with("w", r#"{"r":[{"name":"a","quantity":2.2}]}"#)
        ));
        assert!(!evaluate(
            &c,
            &with(
                "w",
                r#"{"r":[{"name":"a","quantity":3},{"name":"A","quantity":2}]}"#
            )
        ));
    }

    #[test]
    fn text_and_contains() {
        let t = Check::FileText {
            path: "f".into(),
            expected: "a\nb\n".into(),
        };
        assert!(evaluate(&t, &with("f", "a  \r\nb")));
        assert!(!evaluate(&t, &with("f", "a\nc")));
        let c = Check::FileContains {
            path: "f".into(),
            present: vec!["NEW1".into()],
            absent: vec!["OLD1".into()],
        };
        assert!(evaluate(&c, &with("f", "x NEW1 y")));
        assert!(!evaluate(&c, &with("f", "NEW1 OLD1")));
        assert!(evaluate(
            &Check::Disclosed(vec!["clue/yes".into()]),
            &V::default()
        ));
        assert!(!evaluate(&Check::Disclosed(vec![]), &V::default()));
        let n = Check::JsonNumber {
            path: "f".into(),
            pointer: "/x".into(),
            expected: 10.0,
            tolerance: 0.01,
        };
        assert!(evaluate(&n, &with("f", r#"{"x": 10.005}"#)));
        assert!(!evaluate(&n, &with("f", r#"{"x": "$10"}"#)));
    }

    #[test]
    fn tool_called_both_ways_and_paired_with_a_positive_check() {
        let v = V::default();
        let called = |tool: &str, called: bool| Check::ToolCalled {
            tool: tool.into(),
            called,
        };
        assert!(evaluate(&called("reboot_server", true), &v));
        assert!(!evaluate(&called("reboot_server", false), &v));
        assert!(!evaluate(&called("service_health", true), &v));
        assert!(evaluate(&called("service_health", false), &v));
        // "Never rebooted" alone would pass for an idle agent; in an All with real
        // work it passes only when the work is done and the trap was avoided.
        let safe = Check::All(vec![
            Check::Disclosed(vec!["clue/yes".into()]),
            called("service_health", false),
        ]);
        assert!(evaluate(&safe, &v));
        let trapped = Check::All(vec![
            Check::Disclosed(vec!["clue/yes".into()]),
            called("reboot_server", false),
        ]);
        assert!(!evaluate(&trapped, &v));
        let idle = Check::All(vec![
            Check::Disclosed(vec!["clue/no".into()]),
            called("service_health", false),
        ]);
        assert!(!evaluate(&idle, &v));
    }
}
