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
    /// The texts the agent itself sent in its direct conversation with `person`, in
    /// order, keeping those sent at or after `since` (a scenario timestamp; an
    /// unparsable one keeps nothing).
    fn sent_to(&self, person: &str, since: Option<&str>) -> Vec<&str>;
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

/// Message text folded for matching: lower case, single spaces, and no thousands
/// separators (a `,`, no-break or narrow no-break space between two digits).
fn fold_message(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for (i, &c) in chars.iter().enumerate() {
        let between_digits = i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if matches!(c, ',' | '\u{a0}' | '\u{202f}') && between_digits {
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether folded `needle` occurs in folded `hay` with no letter or digit touching
/// it on either side.
fn mentions(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let start = from + i;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
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
        Check::MessageSent {
            to,
            contains,
            absent,
            after,
        } => {
            let sent: Vec<String> = view
                .sent_to(to, after.as_deref())
                .into_iter()
                .map(fold_message)
                .collect();
            let want: Vec<String> = contains.iter().map(|c| fold_message(c)).collect();
            let avoid: Vec<String> = absent.iter().map(|a| fold_message(a)).collect();
            !want.is_empty()
                && want.iter().all(|w| sent.iter().any(|m| mentions(m, w)))
                && !avoid.iter().any(|a| sent.iter().any(|m| mentions(m, a)))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Default)]
    struct V(
        BTreeMap<String, Vec<u8>>,
        Vec<(&'static str, &'static str, &'static str)>,
    );
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
        // (person, "HH:MM", text); times compare as strings, which is enough here.
        fn sent_to(&self, person: &str, since: Option<&str>) -> Vec<&str> {
            self.1
                .iter()
                .filter(|(p, t, _)| *p == person && since.is_none_or(|s| *t >= s))
                .map(|(_, _, text)| *text)
                .collect()
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

    fn said(msgs: &[(&'static str, &'static str, &'static str)]) -> V {
        V(BTreeMap::new(), msgs.to_vec())
    }

    fn sent(contains: &[&str], absent: &[&str], after: Option<&str>) -> Check {
        Check::MessageSent {
            to: "npc/boss".into(),
            contains: contains.iter().map(|s| s.to_string()).collect(),
            absent: absent.iter().map(|s| s.to_string()).collect(),
            after: after.map(str::to_owned),
        }
    }

    #[test]
    fn message_sent_needs_the_value_in_the_agents_own_messages() {
        let c = sent(&["4210"], &["3980", "5120"], Some("10:00"));
        assert!(!evaluate(&c, &V::default()), "nothing sent");
        assert!(evaluate(
            &c,
            &said(&[("npc/boss", "10:05", "Q3 North revenue was  4,210 k.")])
        ));
        assert!(evaluate(
            &c,
            &said(&[("npc/boss", "10:05", "It's EUR 4210.00")])
        ));
        assert!(
            !evaluate(&c, &said(&[("npc/boss", "09:55", "4210")])),
            "sent before the request"
        );
        assert!(
            !evaluate(&c, &said(&[("npc/other", "10:05", "4210")])),
            "sent to someone else"
        );
        assert!(
            !evaluate(&c, &said(&[("npc/boss", "10:05", "14210 or 42101")])),
            "inside another number"
        );
        assert!(
            !evaluate(
                &c,
                &said(&[("npc/boss", "10:05", "4210, 3980 or 5120, not sure")])
            ),
            "every candidate"
        );
        assert!(
            !evaluate(
                &c,
                &said(&[
                    ("npc/boss", "10:05", "It is 5,120"),
                    ("npc/boss", "10:06", "Sorry, 4210")
                ])
            ),
            "a wrong figure sent as well"
        );
        assert!(!evaluate(
            &sent(&[], &[], None),
            &said(&[("npc/boss", "10:05", "hi")])
        ));
        let two = sent(&["CTR-4821-KV", "Heron"], &[], None);
        assert!(evaluate(
            &two,
            &said(&[
                ("npc/boss", "10:05", "The reference is ctr-4821-kv."),
                ("npc/boss", "10:06", "(for heron)")
            ])
        ));
        assert!(!evaluate(
            &two,
            &said(&[("npc/boss", "10:05", "The reference is ctr-4821-kv.")])
        ));
    }

    #[test]
    fn message_folding_drops_only_thousands_separators() {
        assert_eq!(fold_message("A  1,234\n5, 6"), "a 1234 5, 6");
        assert!(mentions("total: 1234.", "1234"));
        assert!(!mentions("x1234", "1234"));
        assert!(mentions("é 12 é", "12"));
        assert!(!mentions("", "1"));
    }
}
