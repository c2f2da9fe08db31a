//! Checkpoint predicates, evaluated against a read-only view of the world.
//!
//! Evaluation is total: a missing file, malformed JSON or a wrong type simply fails
//! the check. Nothing here can panic on agent-written content.

use serde_json::Value;

use crate::scenario::{Check, Record};
use crate::time::SimTime;

/// A meeting the intern booked, as a check sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookedMeeting {
    /// Title.
    pub title: String,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Invitee keys (the intern excluded).
    pub attendees: Vec<String>,
    /// When the intern joined it.
    pub joined_at: Option<SimTime>,
}

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
    /// The meetings the intern organised and has not cancelled, in any order.
    fn booked_meetings(&self) -> Vec<BookedMeeting> {
        Vec::new()
    }
    /// A scenario timestamp (`YYYY-MM-DDTHH:MM` or `HH:MM`) as simulated time.
    fn time(&self, _timestamp: &str) -> Option<SimTime> {
        None
    }
    /// Whether the agent has called a tool (with well-formed arguments).
    fn tool_called(&self, _tool: &str) -> bool {
        false
    }
    /// The texts the agent itself sent in its direct conversation with `person`, in
    /// order, keeping those sent at or after `since` (a scenario timestamp; an
    /// unparsable one keeps nothing).
    fn sent_to(&self, _person: &str, _since: Option<&str>) -> Vec<&str> {
        Vec::new()
    }
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

/// Parses CSV text (RFC 4180: quoted fields, `""` escapes, `\n` or `\r\n` line
/// ends; a leading byte-order mark is dropped). Empty lines are skipped, as CSV
/// readers commonly do. `None` when a quoted field is never closed.
pub fn parse_csv(text: &str) -> Option<Vec<Vec<String>>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    // Whether the current line has any content yet (so empty lines can be skipped).
    let mut started = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                quoted = true;
                started = true;
            }
            ',' => {
                row.push(std::mem::take(&mut field));
                started = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                if started {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                started = false;
            }
            _ => {
                field.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return None;
    }
    if started {
        row.push(field);
        rows.push(row);
    }
    Some(rows)
}

fn cell_matches(want: &str, got: &str, tol: f64) -> bool {
    let (want, got) = (want.trim(), got.trim());
    let num = |s: &str| s.parse::<f64>().ok().filter(|f| f.is_finite());
    match (num(want), num(got)) {
        (Some(w), Some(g)) => (w - g).abs() <= tol,
        _ => want == got,
    }
}

fn csv_table(got: &str, expected: &str, columns: &[String], tol: f64) -> bool {
    let (Some(got), Some(want)) = (parse_csv(got), parse_csv(expected)) else {
        return false;
    };
    let (Some(gh), Some(wh)) = (got.first(), want.first()) else {
        return false;
    };
    let header = |h: &[String]| h.iter().map(|c| c.trim().to_owned()).collect::<Vec<_>>();
    if header(gh) != header(wh) || got.len() != want.len() || columns.is_empty() {
        return false;
    }
    let Some(idx) = columns
        .iter()
        .map(|c| wh.iter().position(|h| h.trim() == c.trim()))
        .collect::<Option<Vec<usize>>>()
    else {
        return false;
    };
    got.iter().zip(&want).skip(1).all(|(g, w)| {
        g.len() == wh.len()
            && idx.iter().all(|&i| {
                cell_matches(
                    w.get(i).map_or("", String::as_str),
                    g.get(i).map_or("", String::as_str),
                    tol,
                )
            })
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
        Check::CsvTable {
            path,
            expected,
            columns,
            tolerance,
        } => text(view, path).is_some_and(|t| csv_table(t, expected, columns, *tolerance)),
        Check::All(checks) => !checks.is_empty() && checks.iter().all(|c| evaluate(c, view)),
        Check::Disclosed(clues) => !clues.is_empty() && clues.iter().all(|c| view.disclosed(c)),
        Check::Attended(m) => view.attended_on_time(m),
        Check::Consulted(p) => view.consulted(p),
        Check::Booked {
            title_contains,
            window_start,
            window_end,
            min_minutes,
            must_invite,
            must_not_invite,
            only_listed,
            joined_within_min,
        } => {
            let (Some(from), Some(to)) = (view.time(window_start), view.time(window_end)) else {
                return false;
            };
            let title = title_contains.as_deref().map(fold);
            view.booked_meetings().iter().any(|m| {
                m.start >= from
                    && m.end <= to
                    && m.end.0.saturating_sub(m.start.0) >= u64::from(*min_minutes) * 60
                    && title.as_ref().is_none_or(|t| fold(&m.title).contains(t))
                    && must_invite.iter().all(|p| m.attendees.contains(p))
                    && !must_not_invite.iter().any(|p| m.attendees.contains(p))
                    && (!only_listed || m.attendees.iter().all(|a| must_invite.contains(a)))
                    && joined_within_min.is_none_or(|n| {
                        m.joined_at
                            .is_some_and(|j| j >= m.start && j.0 <= m.start.0 + u64::from(n) * 60)
                    })
            })
        }
        Check::ToolCalled { tool, called } => view.tool_called(tool) == *called,
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
    fn csv_parsing_handles_quotes_line_ends_and_blank_lines() {
        let rows = parse_csv("\u{feff}a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n\n1,\n").unwrap();
        assert_eq!(
            rows,
            vec![
                vec!["a".to_string(), "b".into()],
                vec!["x, y".into(), "say \"hi\"".into()],
                vec!["1".into(), "".into()],
            ]
        );
        assert_eq!(parse_csv("a,b").unwrap().len(), 1, "no final newline");
        assert!(parse_csv("a,\"b\n").is_none(), "unclosed quote");
        assert!(parse_csv("").unwrap().is_empty());
    }

    #[test]
    fn csv_tables_compare_listed_columns_with_tolerance() {
        let expected = "id,name,amount,rate\n1,North,120.50,0.25\n2,South,99,\n";
        let table = |columns: &[&str], tolerance: f64| Check::CsvTable {
            path: "w.csv".into(),
            expected: expected.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            tolerance,
        };
        let amount = table(&["amount"], 0.01);
        let others = table(&["id", "name", "rate"], 0.0);
        let pass = |c: &Check, body: &str| evaluate(c, &with("w.csv", body));
        // Reformatted numbers, quoting and CRLF are fine.
        let good = "id,name,amount,rate\r\n1,\"North\",120.5,0.250\r\n2,South,99.004,\r\n";
        assert!(pass(&amount, good) && pass(&others, good));
        // A number outside the tolerance, a changed text cell, a filled blank.
        assert!(!pass(
            &amount,
            "id,name,amount,rate\n1,North,120.52,0.25\n2,South,99,\n"
        ));
        assert!(!pass(
            &others,
            "id,name,amount,rate\n1,north,120.5,0.25\n2,South,99,\n"
        ));
        assert!(!pass(
            &others,
            "id,name,amount,rate\n1,North,120.5,0.25\n2,South,99,0\n"
        ));
        assert!(pass(
            &amount,
            "id,name,amount,rate\n1,North,120.5,0.25\n2,South,99,0\n"
        ));
        // A blank where a number is expected fails whatever the tolerance.
        assert!(!pass(
            &table(&["amount"], 1e15),
            "id,name,amount,rate\n1,North,,0.25\n2,South,99,\n"
        ));
        assert!(pass(
            &table(&["amount"], 1e15),
            "id,name,amount,rate\n1,North,0,0.25\n2,South,7,\n"
        ));
        // Structure: header, row count, ragged rows, unknown columns, junk.
        assert!(!pass(
            &amount,
            "id,name,amt,rate\n1,North,120.5,0.25\n2,South,99,\n"
        ));
        assert!(!pass(&amount, "id,name,amount,rate\n1,North,120.5,0.25\n"));
        assert!(!pass(
            &amount,
            "id,name,amount,rate\n1,North,120.5\n2,South,99,\n"
        ));
        assert!(!pass(&table(&["total"], 1.0), good));
        assert!(!pass(&table(&[], 1.0), good));
        assert!(!pass(&amount, ""));
        assert!(!pass(&amount, "{\"not\": \"csv\"}"));
        assert!(!evaluate(&amount, &V::default()), "missing file");
        // NaN is not a number here, so it cannot stand in for a value.
        assert!(!pass(
            &amount,
            "id,name,amount,rate\n1,North,NaN,0.25\n2,South,99,\n"
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

    /// A world with only booked meetings; times are minutes after 13:00 on day 0.
    struct Calendar(Vec<BookedMeeting>);
    impl WorldView for Calendar {
        fn file(&self, _: &str) -> Option<&[u8]> {
            None
        }
        fn disclosed(&self, _: &str) -> bool {
            false
        }
        fn consulted(&self, _: &str) -> bool {
            false
        }
        fn attended_on_time(&self, _: &str) -> bool {
            false
        }
        fn booked_meetings(&self) -> Vec<BookedMeeting> {
            self.0.clone()
        }
        fn time(&self, ts: &str) -> Option<SimTime> {
            crate::time::Epoch::from_timestamp("2025-10-01T09:00")
                .ok()?
                .parse(ts)
                .ok()
        }
    }

    fn at(min: u64) -> SimTime {
        SimTime(13 * 3600 + min * 60)
    }

    fn booked(title: &str, from: u64, to: u64, who: &[&str], joined: Option<u64>) -> BookedMeeting {
        BookedMeeting {
            title: title.into(),
            start: at(from),
            end: at(to),
            attendees: who.iter().map(|s| s.to_string()).collect(),
            joined_at: joined.map(at),
        }
    }

    fn booking(invite: &[&str], avoid: &[&str], only: bool, join: Option<u32>) -> Check {
        Check::Booked {
            title_contains: Some("Roadmap  review".into()),
            window_start: "2025-10-01T13:00".into(),
            window_end: "2025-10-01T14:00".into(),
            min_minutes: 60,
            must_invite: invite.iter().map(|s| s.to_string()).collect(),
            must_not_invite: avoid.iter().map(|s| s.to_string()).collect(),
            only_listed: only,
            joined_within_min: join,
        }
    }

    #[test]
    fn bookings_match_window_title_and_length() {
        let c = booking(&[], &[], false, None);
        let ok = booked("Q4 roadmap review", 0, 60, &[], None);
        assert!(evaluate(&c, &Calendar(vec![ok.clone()])));
        assert!(!evaluate(&c, &Calendar(vec![])), "nothing booked");
        for (label, m) in [
            ("too short", booked("Roadmap review", 0, 30, &[], None)),
            ("starts early", booked("Roadmap review", 0, 60, &[], None)),
            ("ends late", booked("Roadmap review", 30, 90, &[], None)),
            ("wrong title", booked("Budget review", 0, 60, &[], None)),
        ] {
            let m = if label == "starts early" {
                BookedMeeting {
                    start: SimTime(at(0).0 - 1800),
                    ..m
                }
            } else {
                m
            };
            assert!(!evaluate(&c, &Calendar(vec![m])), "{label}");
        }
        assert!(
            evaluate(&c, &Calendar(vec![booked("Other", 0, 30, &[], None), ok])),
            "any matching booking counts"
        );
        // A window wider than the minimum length admits any slot inside it.
        let loose = Check::Booked {
            title_contains: None,
            window_start: "13:00".into(),
            window_end: "15:00".into(),
            min_minutes: 30,
            must_invite: vec![],
            must_not_invite: vec![],
            only_listed: false,
            joined_within_min: None,
        };
        assert!(evaluate(
            &loose,
            &Calendar(vec![booked("x", 45, 75, &[], None)])
        ));
        let mut broken = loose;
        if let Check::Booked { window_start, .. } = &mut broken {
            *window_start = "not a time".into();
        }
        assert!(!evaluate(
            &broken,
            &Calendar(vec![booked("x", 45, 75, &[], None)])
        ));
    }

    #[test]
    fn bookings_check_who_was_invited() {
        let team = ["npc/a", "npc/b"];
        let m = |who: &[&str]| Calendar(vec![booked("Roadmap review", 0, 60, who, None)]);
        let must = booking(&team, &["npc/x"], false, None);
        assert!(evaluate(&must, &m(&["npc/b", "npc/a"])));
        assert!(
            evaluate(&must, &m(&["npc/b", "npc/a", "npc/c"])),
            "extras allowed"
        );
        assert!(!evaluate(&must, &m(&["npc/a"])), "missing one");
        assert!(
            !evaluate(&must, &m(&["npc/a", "npc/b", "npc/x"])),
            "a conflict invited"
        );
        let exact = booking(&team, &["npc/x"], true, None);
        assert!(evaluate(&exact, &m(&["npc/a", "npc/b"])));
        assert!(
            !evaluate(&exact, &m(&["npc/a", "npc/b", "npc/c"])),
            "an outsider"
        );
        let nobody = booking(&[], &[], true, None);
        assert!(evaluate(&nobody, &m(&[])));
        assert!(!evaluate(&nobody, &m(&["npc/a"])));
    }

    #[test]
    fn bookings_check_joining_on_time() {
        let c = booking(&[], &[], false, Some(5));
        let joined = |j: Option<u64>| Calendar(vec![booked("Roadmap review", 0, 60, &[], j)]);
        assert!(evaluate(&c, &joined(Some(0))));
        assert!(evaluate(&c, &joined(Some(5))));
        assert!(!evaluate(&c, &joined(Some(6))), "late");
        assert!(!evaluate(&c, &joined(None)), "never joined");
        assert!(evaluate(&booking(&[], &[], false, None), &joined(None)));
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

#[cfg(test)]
mod message_sent_tests {
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
