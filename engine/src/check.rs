//! Checkpoint predicates, evaluated against a read-only view of the world.
//!
//! Evaluation is total: a missing file, malformed JSON or a wrong type simply fails
//! the check. Nothing here can panic on agent-written content.

use serde_json::Value;

use crate::scenario::{
    BudgetAspect, BudgetCheck, Check, DomainCheck, OutingAspect, OutingCheck, OutingMap,
    OutingMetric, Record,
};

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
        Check::Domain(d) => evaluate_domain(d, view),
    }
}

fn evaluate_domain(d: &DomainCheck, view: &dyn WorldView) -> bool {
    match d {
        DomainCheck::Budget(b) => budget_passes(b, view),
        DomainCheck::Outing(o) => outing_passes(o, view),
        DomainCheck::DateIn {
            path,
            pointer,
            first,
            last,
        } => json_at(view, path, pointer)
            .as_ref()
            .and_then(Value::as_str)
            .and_then(|d| parse_date(d.trim()))
            .is_some_and(|d| {
                parse_date(first).is_some_and(|f| f <= d)
                    && parse_date(last).is_some_and(|l| d <= l)
            }),
    }
}

/// `YYYY-MM-DD` as `(year, month, day)`, with a real day of the month.
pub fn parse_date(s: &str) -> Option<(u32, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&d).then_some((y, m, d))
}

/// `HH:MM` (or `H:MM`) as minutes after midnight.
pub fn parse_hhmm(s: &str) -> Option<u32> {
    let (h, m) = s.trim().split_once(':')?;
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Money and ratings with two decimals, as exact integer hundredths.
fn cents(v: f64) -> i64 {
    (v * 100.0).round() as i64
}

/// The exact 0/1 knapsack: the best total value (in hundredths) of items whose
/// costs sum to at most `capacity`, and one selection achieving it (indices in
/// ascending order). Dynamic programming over integer costs; among equal values the
/// selection found is fixed by the item order, so the result is deterministic.
pub fn budget_best(items: &[(String, u64, f64)], capacity: u64) -> (i64, Vec<usize>) {
    let cap = capacity as usize;
    let mut best = vec![0i64; cap + 1];
    let mut keep = vec![false; items.len() * (cap + 1)];
    for (i, (_, cost, value)) in items.iter().enumerate() {
        let (c, v) = (*cost as usize, cents(*value));
        if c > cap || v <= 0 {
            continue;
        }
        for w in (c..=cap).rev() {
            if best[w - c] + v > best[w] {
                best[w] = best[w - c] + v;
                keep[i * (cap + 1) + w] = true;
            }
        }
    }
    let mut chosen = Vec::new();
    let mut w = cap;
    for i in (0..items.len()).rev() {
        if keep[i * (cap + 1) + w] {
            chosen.push(i);
            w -= items[i].1 as usize;
        }
    }
    chosen.reverse();
    (best[cap], chosen)
}

/// The answer's selection as item indices: `None` unless it is a non-empty list of
/// distinct known ids.
fn selection(b: &BudgetCheck, view: &dyn WorldView) -> Option<Vec<usize>> {
    let Some(Value::Array(ids)) = json_at(view, &b.path, &b.selection) else {
        return None;
    };
    if ids.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in &ids {
        let id = fold(id.as_str()?);
        let i = b.items.iter().position(|(k, _, _)| fold(k) == id)?;
        if out.contains(&i) {
            return None;
        }
        out.push(i);
    }
    Some(out)
}

fn budget_passes(b: &BudgetCheck, view: &dyn WorldView) -> bool {
    let Some(sel) = selection(b, view) else {
        return false;
    };
    if b.aspect == BudgetAspect::Valid {
        return true;
    }
    let cost: u64 = sel.iter().map(|&i| b.items[i].1).sum();
    if cost > b.capacity {
        return false;
    }
    let value: i64 = sel.iter().map(|&i| cents(b.items[i].2)).sum();
    let reported = |pointer: &str| json_at(view, &b.path, pointer).as_ref().and_then(number);
    match &b.aspect {
        BudgetAspect::Valid | BudgetAspect::WithinCapacity => true,
        BudgetAspect::Cost { pointer, relative } => {
            reported(pointer).is_some_and(|r| (r - cost as f64).abs() <= relative * cost as f64)
        }
        BudgetAspect::Value { pointer, relative } => reported(pointer).is_some_and(|r| {
            let v = value as f64 / 100.0;
            (r - v).abs() <= relative * v.abs()
        }),
        BudgetAspect::Optimal { tolerance } => value as f64 / 100.0 >= b.best - tolerance - 1e-9,
    }
}

impl OutingMetric {
    /// The key of this metric in an answer's `metrics` object.
    pub fn key(self) -> &'static str {
        match self {
            OutingMetric::Interest => "interest",
            OutingMetric::Cost => "cost",
            OutingMetric::Distance => "distance",
            OutingMetric::Score => "score",
        }
    }
    /// Whether larger values are better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, OutingMetric::Interest | OutingMetric::Score)
    }
}

/// One feasible outing and its metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Outing {
    /// Index of the morning site.
    pub morning: usize,
    /// Index of the restaurant.
    pub lunch: usize,
    /// Index of the afternoon site.
    pub afternoon: usize,
    /// Sum of the three interest ratings.
    pub interest: f64,
    /// Two tickets and the meal.
    pub cost: f64,
    /// Kilometres on the four legs.
    pub distance: f64,
    /// Normalised score (see [`OutingMetric::Score`]).
    pub score: f64,
    /// Return to base, minutes after midnight.
    pub back: u32,
}

impl Outing {
    /// The value of one metric.
    pub fn metric(&self, m: OutingMetric) -> f64 {
        match m {
            OutingMetric::Interest => self.interest,
            OutingMetric::Cost => self.cost,
            OutingMetric::Distance => self.distance,
            OutingMetric::Score => self.score,
        }
    }
}

/// Every feasible outing on a map (morning site, restaurant, different afternoon
/// site, in that nesting order) with its metrics. Errors name what is wrong with
/// the map: duplicate or unknown names, bad distances, places the roads do not reach.
pub fn outings(map: &OutingMap) -> Result<Vec<Outing>, String> {
    let mut names: Vec<String> = vec![fold(&map.base)];
    names.extend(map.sites.iter().map(|s| fold(&s.0)));
    names.extend(map.restaurants.iter().map(|r| fold(&r.0)));
    let n = names.len();
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(format!("the name `{a}` is used twice"));
        }
    }
    if map.sites.len() < 2 || map.restaurants.is_empty() {
        return Err("an outing needs at least two sites and one restaurant".into());
    }
    if map.speed_kmh == 0 {
        return Err("the speed must be at least 1 km/h".into());
    }
    let depart = parse_hhmm(&map.depart).ok_or("the departure must be HH:MM")?;
    const INF: i64 = i64::MAX / 4;
    let mut d = vec![INF; n * n];
    for i in 0..n {
        d[i * n + i] = 0;
    }
    for (a, b, km) in &map.roads {
        let find = |x: &str| names.iter().position(|k| *k == fold(x));
        let (Some(i), Some(j)) = (find(a), find(b)) else {
            return Err(format!("the road {a} - {b} names an unknown place"));
        };
        if !(km.is_finite() && *km > 0.0 && *km < 10_000.0) {
            return Err(format!("the road {a} - {b} has a bad length {km}"));
        }
        let k = cents(*km).max(1);
        d[i * n + j] = d[i * n + j].min(k);
        d[j * n + i] = d[j * n + i].min(k);
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                let via = d[i * n + k] + d[k * n + j];
                if via < d[i * n + j] {
                    d[i * n + j] = via;
                }
            }
        }
    }
    if d.iter().any(|&x| x >= INF) {
        return Err("the roads do not connect every place".into());
    }
    let speed = i64::from(map.speed_kmh) * 100;
    // ceil(hundredths * 60 / (speed * 100)) minutes, in integers.
    let minutes = |h: i64| ((h * 60 + speed - 1) / speed) as u32;
    let (ns, site0, rest0) = (map.sites.len(), 1, 1 + map.sites.len());
    let mut out = Vec::new();
    for m in 0..ns {
        for l in 0..map.restaurants.len() {
            for a in (0..ns).filter(|&a| a != m) {
                let stops = [0, site0 + m, rest0 + l, site0 + a, 0];
                let legs: Vec<i64> = stops.windows(2).map(|w| d[w[0] * n + w[1]]).collect();
                let travel: u32 = legs.iter().map(|&h| minutes(h)).sum();
                let (s1, s2, s3) = map.stays;
                out.push(Outing {
                    morning: m,
                    lunch: l,
                    afternoon: a,
                    interest: (cents(map.sites[m].2)
                        + cents(map.restaurants[l].2)
                        + cents(map.sites[a].2)) as f64
                        / 100.0,
                    cost: f64::from(map.sites[m].1 + map.restaurants[l].1 + map.sites[a].1),
                    distance: legs.iter().sum::<i64>() as f64 / 100.0,
                    score: 0.0,
                    back: depart + travel + s1 + s2 + s3,
                });
            }
        }
    }
    let range = |f: fn(&Outing) -> f64| {
        let lo = out.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = out.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let norm = |v: f64, (lo, hi): (f64, f64)| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let (rc, ri, rd) = (
        range(|o| o.cost),
        range(|o| o.interest),
        range(|o| o.distance),
    );
    for o in &mut out {
        o.score = 0.4 * (1.0 - norm(o.cost, rc))
            + 0.4 * norm(o.interest, ri)
            + 0.2 * (1.0 - norm(o.distance, rd));
    }
    Ok(out)
}

fn outing_passes(o: &OutingCheck, view: &dyn WorldView) -> bool {
    let Some(answer) = text(view, &o.path).and_then(|t| serde_json::from_str::<Value>(t).ok())
    else {
        return false;
    };
    let Ok(all) = outings(&o.map) else {
        return false;
    };
    let named = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(fold);
    let plan = answer.get("plan");
    let answered = plan.and_then(|p| {
        Some((
            named(p, "morning")?,
            named(p, "lunch")?,
            named(p, "afternoon")?,
        ))
    });
    let judged = match &o.given {
        Some((m, l, a)) => Some((fold(m), fold(l), fold(a))),
        None => answered.clone(),
    };
    let Some((m, l, a)) = judged else {
        return false;
    };
    let Some(outing) = all.iter().find(|x| {
        fold(&o.map.sites[x.morning].0) == m
            && fold(&o.map.restaurants[x.lunch].0) == l
            && fold(&o.map.sites[x.afternoon].0) == a
    }) else {
        return false;
    };
    match &o.aspect {
        OutingAspect::Plan => answered == Some((m, l, a)),
        OutingAspect::Metric { metric, tolerance } => answer
            .pointer(&format!("/metrics/{}", metric.key()))
            .and_then(number)
            .is_some_and(|g| (g - outing.metric(*metric)).abs() <= tolerance + 1e-9),
        OutingAspect::EndTime { minutes } => answer
            .get("end_time")
            .and_then(Value::as_str)
            .and_then(parse_hhmm)
            .is_some_and(|t| t.abs_diff(outing.back) <= *minutes),
        OutingAspect::OnTime { limit } => {
            let said = match answer.get("can_complete_on_time") {
                Some(Value::Bool(b)) => Some(*b),
                Some(Value::String(s)) => match s.trim().to_lowercase().as_str() {
                    "true" | "yes" => Some(true),
                    "false" | "no" => Some(false),
                    _ => None,
                },
                _ => None,
            };
            parse_hhmm(limit).is_some_and(|lim| said == Some(outing.back <= lim))
        }
        OutingAspect::Optimal { metric } => {
            let vals = all.iter().map(|x| x.metric(*metric));
            let best = if metric.higher_is_better() {
                vals.fold(f64::NEG_INFINITY, f64::max)
            } else {
                vals.fold(f64::INFINITY, f64::min)
            };
            (outing.metric(*metric) - best).abs() <= 1e-9
        }
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

    fn budget(aspect: BudgetAspect) -> Check {
        let items: Vec<(String, u64, f64)> = vec![
            ("CH001".into(), 400, 1000.5),
            ("CH002".into(), 300, 700.25),
            ("CH003".into(), 300, 720.0),
            ("CH004".into(), 500, 900.0),
        ];
        let (best, _) = budget_best(&items, 700);
        Check::Domain(Box::new(DomainCheck::Budget(BudgetCheck {
            path: "p".into(),
            selection: "/selected".into(),
            aspect,
            capacity: 700,
            best: best as f64 / 100.0,
            items,
        })))
    }

    #[test]
    fn knapsack_is_exact() {
        let items: Vec<(String, u64, f64)> = vec![
            ("a".into(), 400, 1000.5),
            ("b".into(), 300, 700.25),
            ("c".into(), 300, 720.0),
            ("d".into(), 500, 900.0),
        ];
        assert_eq!(budget_best(&items, 700), (172_050, vec![0, 2]));
        assert_eq!(budget_best(&items, 299), (0, vec![]));
        // Against brute force on pseudo-random instances.
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) % m
        };
        for _ in 0..200 {
            let n = 1 + next(10) as usize;
            let items: Vec<(String, u64, f64)> = (0..n)
                .map(|i| (format!("i{i}"), 1 + next(50), next(10_000) as f64 / 100.0))
                .collect();
            let cap = next(150);
            let mut brute = 0i64;
            for mask in 0u32..(1 << n) {
                let sel: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
                let c: u64 = sel.iter().map(|&i| items[i].1).sum();
                if c <= cap {
                    brute = brute.max(sel.iter().map(|&i| cents(items[i].2)).sum());
                }
            }
            let (best, chosen) = budget_best(&items, cap);
            assert_eq!(best, brute);
            assert!(chosen.iter().map(|&i| items[i].1).sum::<u64>() <= cap);
            assert_eq!(chosen.iter().map(|&i| cents(items[i].2)).sum::<i64>(), best);
        }
    }

    #[test]
    fn budget_aspects_require_a_real_selection_within_the_limit() {
        let opt = budget(BudgetAspect::Optimal { tolerance: 0.05 });
        let good = r#"{"selected": ["ch001", " CH003"], "cost": 700, "value": 1720.5}"#;
        assert!(evaluate(&opt, &with("p", good)));
        // Over the limit: every candidate.
        let all =
            r#"{"selected": ["CH001","CH002","CH003","CH004"], "cost": 1500, "value": 3320.75}"#;
        for a in [
            BudgetAspect::WithinCapacity,
            BudgetAspect::Cost {
                pointer: "/cost".into(),
                relative: 0.01,
            },
            BudgetAspect::Value {
                pointer: "/value".into(),
                relative: 0.05,
            },
            BudgetAspect::Optimal { tolerance: 0.05 },
        ] {
            assert!(!evaluate(&budget(a.clone()), &with("p", all)), "{a:?}");
            assert!(evaluate(&budget(a.clone()), &with("p", good)), "{a:?}");
        }
        assert!(evaluate(&budget(BudgetAspect::Valid), &with("p", all)));
        for bad in [
            r#"{"selected": []}"#,
            r#"{"selected": ["CH001", "CH001"]}"#,
            r#"{"selected": ["CH009"]}"#,
            r#"{"selected": "CH001"}"#,
            r#"{"selected": [1]}"#,
            "",
        ] {
            assert!(
                !evaluate(&budget(BudgetAspect::Valid), &with("p", bad)),
                "{bad}"
            );
        }
        // Feasible but not optimal; reported numbers checked against the selection.
        let sub = r#"{"selected": ["CH002", "CH003"], "cost": "600", "value": 1420.25}"#;
        assert!(!evaluate(&opt, &with("p", sub)));
        assert!(evaluate(
            &budget(BudgetAspect::Cost {
                pointer: "/cost".into(),
                relative: 0.01
            }),
            &with("p", sub)
        ));
        let off = r#"{"selected": ["CH002", "CH003"], "cost": 640, "value": 1600}"#;
        assert!(!evaluate(
            &budget(BudgetAspect::Cost {
                pointer: "/cost".into(),
                relative: 0.01
            }),
            &with("p", off)
        ));
        assert!(!evaluate(
            &budget(BudgetAspect::Value {
                pointer: "/value".into(),
                relative: 0.05
            }),
            &with("p", off)
        ));
    }

    fn map() -> OutingMap {
        // Office O; sites A, B; restaurants R, S. Roads: O-A 10, A-R 5, R-B 4, O-S 3, S-B 30.
        OutingMap {
            base: "Office".into(),
            sites: vec![("A".into(), 20, 4.0), ("B".into(), 0, 3.5)],
            restaurants: vec![("R".into(), 60, 4.5), ("S".into(), 80, 3.25)],
            roads: vec![
                ("Office".into(), "A".into(), 10.0),
                ("a".into(), "R".into(), 5.0),
                ("R".into(), "B".into(), 4.0),
                ("Office".into(), "S".into(), 3.0),
                ("S".into(), "B".into(), 30.0),
            ],
            depart: "09:00".into(),
            speed_kmh: 30,
            stays: (120, 90, 120),
        }
    }

    #[test]
    fn outings_follow_shortest_roads_and_round_travel_up() {
        let all = outings(&map()).unwrap();
        assert_eq!(all.len(), 4);
        // A -> R -> B: legs 10, 5, 4, back B->R->A->O = 19; minutes 20+10+8+38.
        let arb = all
            .iter()
            .find(|o| (o.morning, o.lunch, o.afternoon) == (0, 0, 1))
            .unwrap();
        assert_eq!(arb.distance, 38.0);
        assert_eq!(arb.cost, 80.0);
        assert_eq!(arb.interest, 12.0);
        assert_eq!(arb.back, 9 * 60 + 20 + 120 + 10 + 90 + 8 + 120 + 38);
        // B -> S -> A: O->B = 19 (via A, R), B->S = 30 (direct beats 4+5+10+3=22? no: 22 < 30).
        let bsa = all
            .iter()
            .find(|o| (o.morning, o.lunch, o.afternoon) == (1, 1, 0))
            .unwrap();
        assert_eq!(bsa.distance, 19.0 + 22.0 + 13.0 + 10.0);
        let best = all.iter().map(|o| o.score).fold(f64::MIN, f64::max);
        assert!((0.0..=1.0).contains(&best));
        let mut m = map();
        m.roads.pop();
        m.roads.pop();
        assert!(outings(&m).unwrap_err().contains("connect"));
        m = map();
        m.restaurants[0].0 = "a".into();
        assert!(outings(&m).unwrap_err().contains("twice"));
    }

    fn outing(aspect: OutingAspect, given: bool) -> Check {
        Check::Domain(Box::new(DomainCheck::Outing(OutingCheck {
            path: "p".into(),
            aspect,
            given: given.then(|| ("A".into(), "R".into(), "B".into())),
            map: map(),
        })))
    }

    #[test]
    fn outing_aspects() {
        let arb = outings(&map()).unwrap()[0].clone();
        let end = 9 * 60 + 20 + 120 + 10 + 90 + 8 + 120 + 38;
        assert_eq!(arb.back, end);
        let ans = format!(
            r#"{{"plan": {{"morning": "a", "lunch": "R", "afternoon": "B"}}, "metrics": {{"interest": 12, "cost": 80, "distance": 38.04, "score": {:.4}}}, "end_time": "{:02}:{:02}", "can_complete_on_time": false}}"#,
            arb.score,
            end / 60,
            end % 60 + 2
        );
        let v = with("p", &ans);
        for given in [false, true] {
            assert!(evaluate(&outing(OutingAspect::Plan, given), &v));
            for (metric, tol) in [
                (OutingMetric::Interest, 0.01),
                (OutingMetric::Cost, 0.5),
                (OutingMetric::Distance, 0.05),
                (OutingMetric::Score, 0.001),
            ] {
                assert!(
                    evaluate(
                        &outing(
                            OutingAspect::Metric {
                                metric,
                                tolerance: tol
                            },
                            given
                        ),
                        &v
                    ),
                    "{metric:?}"
                );
            }
            assert!(evaluate(
                &outing(OutingAspect::EndTime { minutes: 3 }, given),
                &v
            ));
            assert!(!evaluate(
                &outing(OutingAspect::EndTime { minutes: 1 }, given),
                &v
            ));
            let limit = |m: u32| format!("{:02}:{:02}", m / 60, m % 60);
            assert!(evaluate(
                &outing(
                    OutingAspect::OnTime {
                        limit: limit(end - 1)
                    },
                    given
                ),
                &v
            ));
            assert!(!evaluate(
                &outing(OutingAspect::OnTime { limit: limit(end) }, given),
                &v
            ));
        }
        // The same location twice, unknown names, or a missing plan.
        for plan in [
            r#"{"morning": "A", "lunch": "R", "afternoon": "A"}"#,
            r#"{"morning": "A", "lunch": "Q", "afternoon": "B"}"#,
            r#"["A", "R", "B"]"#,
        ] {
            let v = with(
                "p",
                &format!(r#"{{"plan": {plan}, "metrics": {{"cost": 80}}}}"#),
            );
            assert!(!evaluate(&outing(OutingAspect::Plan, false), &v), "{plan}");
            assert!(!evaluate(&outing(OutingAspect::Plan, true), &v), "{plan}");
        }
        // A given plan is judged even if the answer names another, but Plan wants it echoed.
        let other = with(
            "p",
            r#"{"plan": {"morning": "B", "lunch": "R", "afternoon": "A"}, "metrics": {"cost": 80}}"#,
        );
        assert!(!evaluate(&outing(OutingAspect::Plan, true), &other));
        assert!(evaluate(&outing(OutingAspect::Plan, false), &other));
        assert!(evaluate(
            &outing(
                OutingAspect::Metric {
                    metric: OutingMetric::Cost,
                    tolerance: 0.5
                },
                true
            ),
            &other
        ));
        // Optimal: the cheapest outing is B(0) + R(60) + A(20) = 80 as well as A R B: ties pass.
        let opt = outing(
            OutingAspect::Optimal {
                metric: OutingMetric::Cost,
            },
            false,
        );
        assert!(evaluate(&opt, &other));
        assert!(!evaluate(
            &opt,
            &with(
                "p",
                r#"{"plan": {"morning": "A", "lunch": "S", "afternoon": "B"}}"#
            )
        ));
    }

    #[test]
    fn dates_are_checked_as_a_range() {
        let c = Check::Domain(Box::new(DomainCheck::DateIn {
            path: "p".into(),
            pointer: "/d".into(),
            first: "2025-11-12".into(),
            last: "2025-11-14".into(),
        }));
        for (d, ok) in [
            ("2025-11-12", true),
            ("2025-11-13", true),
            (" 2025-11-14 ", true),
            ("2025-11-11", false),
            ("2025-11-15", false),
            ("2025-11-13T10:00", false),
            ("2025-02-30", false),
            ("13 Nov 2025", false),
        ] {
            assert_eq!(
                evaluate(&c, &with("p", &format!(r#"{{"d": "{d}"}}"#))),
                ok,
                "{d}"
            );
        }
        assert!(!evaluate(
            &c,
            &with("p", r#"{"d": ["2025-11-12", "2025-11-13"]}"#)
        ));
        assert_eq!(parse_date("2024-02-29"), Some((2024, 2, 29)));
        assert_eq!(parse_date("2100-02-29"), None);
        assert_eq!(parse_hhmm("9:05"), Some(545));
        assert_eq!(parse_hhmm("24:00"), None);
    }
}
