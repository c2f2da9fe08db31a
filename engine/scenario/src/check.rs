//! Checkpoint predicates, evaluated against a read-only view of the world.
//!
//! Evaluation is total: a missing file, malformed JSON or a wrong type simply fails
//! the check. Nothing here can panic on agent-written content.
//!
//! ## When a checkpoint is judged
//!
//! Every [`Check`] has a [`CheckKind`] that says when it is judged and whether it
//! counts in the score:
//!
//! * **Answers** (files, JSON and CSV contents, domain checks, messages sent, meetings
//!   booked) are judged once, when their task closes: at its deadline, or at the end
//!   of the run for a task still open then. They are judged on what stands at that
//!   instant: the file as it is, every message the agent sent, the meetings booked
//!   and not cancelled. Nothing an answer check sees latches earlier, so writing
//!   candidates one after another gains nothing, and overwriting a right answer with
//!   a wrong one loses it.
//! * **Events** (joining a meeting on time) are scored and latch the instant they
//!   happen, while the task is open.
//! * **Diagnostics** (a file consulted, a clue disclosed, a tool called) latch the
//!   instant they first hold and are reported, but weigh nothing in the score: a
//!   policy that reads everything or asks everyone must gain nothing from them.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::{
    BudgetAspect, BudgetCheck, Check, DomainCheck, OutingAspect, OutingCheck, OutingMap,
    OutingMetric, Record,
};
use crate::time::SimTime;

/// Version of the checkpoint semantics (what passes, and when it is judged): bumped
/// whenever a check could judge the same work differently; results record it.
pub const CHECKER_VERSION: u32 = 1;

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

/// What a check may look at. Only files are required: every other question has a
/// default answer of "the agent has not done that" (views built to judge files
/// alone, as the validity gate's, need nothing more).
pub trait WorldView {
    /// A file's bytes.
    fn file(&self, path: &str) -> Option<&[u8]>;
    /// Whether a clue has been disclosed to the agent.
    fn disclosed(&self, _clue: &str) -> bool {
        false
    }
    /// Whether the agent read or copied a drive file.
    fn consulted(&self, _path: &str) -> bool {
        false
    }
    /// Whether the agent joined a meeting within its on-time window.
    fn attended_on_time(&self, _meeting: &str) -> bool {
        false
    }
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

/// When a checkpoint is judged and whether it is scored (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Judged once, when the task closes, on what the agent delivered.
    Answer,
    /// Scored; latched the instant it happens while the task is open.
    Event,
    /// Latched the instant it first holds; weight 0 in the score.
    Diagnostic,
}

impl CheckKind {
    /// Whether checkpoints of this kind count in the score.
    pub fn scored(self) -> bool {
        !matches!(self, CheckKind::Diagnostic)
    }
}

impl Check {
    /// This check's kind: an `All` is an answer when any part is one, else an event
    /// when any part is one, else a diagnostic.
    pub fn kind(&self) -> CheckKind {
        match self {
            Check::FileExists { .. }
            | Check::FileText { .. }
            | Check::FileContains { .. }
            | Check::JsonStringSet { .. }
            | Check::JsonRecords { .. }
            | Check::JsonNumber { .. }
            | Check::JsonArray { .. }
            | Check::CsvTable { .. }
            | Check::Booked { .. }
            | Check::MessageSent { .. }
            | Check::Domain(_) => CheckKind::Answer,
            Check::Attended(_) => CheckKind::Event,
            Check::Disclosed(_) | Check::Consulted(_) | Check::ToolCalled { .. } => {
                CheckKind::Diagnostic
            }
            Check::All(parts) => parts
                .iter()
                .map(Check::kind)
                .min()
                .unwrap_or(CheckKind::Diagnostic),
        }
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
/// it on either side. A number is not mentioned inside a longer one: `1257` is not
/// in `1257.86` (a different amount; only zero decimals, `1257.00`, are the same) nor
/// in `0.1257`, so a dump of figures does not pass for the one figure asked for.
fn mentions(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let numeric_end = needle.ends_with(|c: char| c.is_ascii_digit());
    let numeric_start = needle.starts_with(|c: char| c.is_ascii_digit());
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let start = from + i;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        let fraction_after = numeric_end && {
            let rest = hay[end..].strip_prefix('.').unwrap_or("");
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            !digits.is_empty() && digits.chars().any(|d| d != '0')
        };
        let fraction_before = numeric_start && {
            let head = hay[..start].strip_suffix('.').unwrap_or("");
            head.len() < start && head.ends_with(|c: char| c.is_ascii_digit())
        };
        if !before.is_some_and(char::is_alphanumeric)
            && !after.is_some_and(char::is_alphanumeric)
            && !fraction_after
            && !fraction_before
        {
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

/// Parses CSV text, the one CSV reader of graders and generators: RFC 4180 quoted
/// fields with `""` escapes, rows ended by `\n`, `\r\n` or `\r`, rows of any length
/// (ragged rows are kept as they are), fields kept verbatim (no trimming), empty lines
/// skipped and a leading byte-order mark dropped. `None` when the text holds an odd
/// number of `"`: a quoted field left open (or a stray quote) fails the whole table.
///
/// With an even number, a `"` inside an unquoted field is an ordinary character
/// (`5" x,6" y` is two fields), as in Python's `csv` module.
pub fn parse_csv(text: &str) -> Option<Vec<Vec<String>>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.bytes().filter(|&b| b == b'"').count() % 2 == 1 {
        return None;
    }
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.ok().map(|r| r.iter().map(str::to_owned).collect()))
        .collect()
}

fn cell_matches(want: &str, got: &str, tol: f64) -> bool {
    let (want, got) = (want.trim(), got.trim());
    let num = |s: &str| s.parse::<f64>().ok().filter(|f| f.is_finite());
    match (num(want), num(got)) {
        (Some(w), Some(g)) => (w - g).abs() <= tol,
        _ => want == got,
    }
}

/// A parsed table, shared.
type Table = Rc<Vec<Vec<String>>>;

/// The expected table, parsed: the last one is kept per thread, since a grader
/// tries one checkpoint's table against many texts in a row (the validity probe
/// tries every observed line and clause as the file), and parsing the expected
/// table again for each was most of a `data_completion` gate. A pure function's
/// cache: the result is the parse's, whatever was asked before.
fn parse_expected(text: &str) -> Option<Table> {
    thread_local! {
        static LAST: RefCell<Option<(String, Option<Table>)>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((t, parsed)) = last.as_ref()
            && t == text
        {
            return parsed.clone();
        }
        let parsed = parse_csv(text).map(Rc::new);
        *last = Some((text.to_owned(), parsed.clone()));
        parsed
    })
}

fn csv_table(got: &str, expected: &str, columns: &[String], tol: f64) -> bool {
    let (Some(got), Some(want)) = (parse_csv(got), parse_expected(expected)) else {
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
    got.iter().zip(want.iter()).skip(1).all(|(g, w)| {
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
            // Every booking that competes for this checkpoint (starts in the window,
            // has the title, invites someone who must come) is an answer; booking
            // several variants is several competing answers, and none is taken.
            let booked = view.booked_meetings();
            let competing: Vec<&BookedMeeting> = booked
                .iter()
                .filter(|m| {
                    m.start >= from
                        && m.start < to
                        && title.as_ref().is_none_or(|t| fold(&m.title).contains(t))
                        && (must_invite.is_empty()
                            || must_invite.iter().any(|p| m.attendees.contains(p)))
                })
                .collect();
            let [m] = competing.as_slice() else {
                return false;
            };
            m.end <= to
                && m.end.0.saturating_sub(m.start.0) >= u64::from(*min_minutes) * 60
                && must_invite.iter().all(|p| m.attendees.contains(p))
                && !must_not_invite.iter().any(|p| m.attendees.contains(p))
                && (!only_listed || m.attendees.iter().all(|a| must_invite.contains(a)))
                && joined_within_min.is_none_or(|n| {
                    m.joined_at
                        .is_some_and(|j| j >= m.start && j.0 <= m.start.0 + u64::from(n) * 60)
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

/// `YYYY-MM-DD` as `(year, month, day)`, with a real day of the month (see
/// [`Date::parse`](crate::date::Date::parse)).
pub fn parse_date(s: &str) -> Option<(u32, u32, u32)> {
    crate::date::Date::parse(s).map(|d| (d.year() as u32, d.month(), d.day()))
}

/// `HH:MM` (or `H:MM`) as minutes after midnight (see
/// [`Clock::parse`](crate::date::Clock::parse)).
pub fn parse_hhmm(s: &str) -> Option<u32> {
    crate::date::Clock::parse(s).map(|c| c.minutes())
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
    // Totals count for a plan, not a fragment: a selection that leaves room for
    // another item of positive value is no plan (every optimum is maximal), so
    // echoing one row and its cost cell earns nothing.
    let maximal = || {
        !b.items
            .iter()
            .enumerate()
            .any(|(i, (_, c, v))| !sel.contains(&i) && *v > 0.0 && cost + c <= b.capacity)
    };
    match &b.aspect {
        BudgetAspect::Valid | BudgetAspect::WithinCapacity => true,
        BudgetAspect::Cost { pointer, relative } => {
            maximal()
                && reported(pointer)
                    .is_some_and(|r| (r - cost as f64).abs() <= relative * cost as f64)
        }
        BudgetAspect::Value { pointer, relative } => {
            maximal()
                && reported(pointer).is_some_and(|r| {
                    let v = value as f64 / 100.0;
                    (r - v).abs() <= relative * v.abs()
                })
        }
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

    /// A world of files; clue `clue/yes` disclosed; `reboot_server` called.
    #[derive(Default)]
    pub(super) struct V(pub(super) BTreeMap<String, Vec<u8>>);
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

    /// The edge cases of agent-written CSV, pinned (the reader is the `csv` crate).
    #[test]
    fn csv_parsing_edge_cases() {
        let rows = |t: &str| parse_csv(t).unwrap();
        let s = |v: &[&str]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        // Whitespace is kept, around fields and around quoted fields.
        assert_eq!(rows(" a , b \n"), vec![s(&[" a ", " b "])]);
        // Ragged rows stay ragged.
        assert_eq!(
            rows("a,b,c\n1\n1,2,3,4\n"),
            vec![s(&["a", "b", "c"]), s(&["1"]), s(&["1", "2", "3", "4"])]
        );
        // Line ends inside quotes are content; blank lines (also CRLF ones) are skipped.
        assert_eq!(
            rows("\"a\r\nb\",c\r\n\r\n\n\"\",d"),
            vec![s(&["a\r\nb", "c"]), s(&["", "d"])]
        );
        // A line of spaces is a row with one field.
        assert_eq!(rows("a\n  \n"), vec![s(&["a"]), s(&["  "])]);
        // A lone CR ends a row.
        assert_eq!(rows("a,b\rc,d"), vec![s(&["a", "b"]), s(&["c", "d"])]);
        // A quote inside an unquoted field is a character.
        assert_eq!(rows("5\" screen,x\"\n"), vec![s(&["5\" screen", "x\""])]);
        // Text after a closing quote joins the field.
        assert_eq!(rows("\"a\"b,c\n"), vec![s(&["ab", "c"])]);
        // Only a comma separates: semicolons and tabs are content.
        assert_eq!(rows("a;b\tc\n"), vec![s(&["a;b\tc"])]);
        // Trailing commas are empty fields; a lone BOM is no row.
        assert_eq!(rows("a,,\n"), vec![s(&["a", "", ""])]);
        assert!(rows("\u{feff}").is_empty());
        // An unclosed quote anywhere fails the whole table.
        assert!(parse_csv("a,b\n\"c,d\n1,2\n").is_none());
        assert!(parse_csv("5\" screen\n").is_none());
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

    /// The book-every-variant attack: several competing bookings are several answers,
    /// and none of them is taken; cancelling the extras (they leave the calendar)
    /// makes the remaining one the answer.
    #[test]
    fn competing_bookings_do_not_pass() {
        let c = booking(&["npc/a"], &["npc/x"], false, None);
        let right = booked("Roadmap review", 0, 60, &["npc/a"], None);
        let wrong = booked("Roadmap review", 0, 60, &["npc/a", "npc/x"], None);
        assert!(evaluate(&c, &Calendar(vec![right.clone()])));
        assert!(!evaluate(&c, &Calendar(vec![right.clone(), wrong])));
        let twice = booked("Roadmap review sync", 0, 60, &["npc/a"], None);
        assert!(!evaluate(&c, &Calendar(vec![right.clone(), twice])));
        // A booking for someone else entirely does not compete.
        let other = booked("Roadmap review", 0, 60, &["npc/q"], None);
        assert!(evaluate(&c, &Calendar(vec![right, other])));
    }

    #[test]
    fn check_kinds_follow_what_is_judged() {
        use super::CheckKind::*;
        assert_eq!(booking(&[], &[], false, None).kind(), Answer);
        assert_eq!(Check::Consulted("drive/x".into()).kind(), Diagnostic);
        assert_eq!(Check::Disclosed(vec!["clue/x".into()]).kind(), Diagnostic);
        assert_eq!(Check::Attended("meeting/x".into()).kind(), Event);
        let mixed = Check::All(vec![
            Check::Consulted("drive/x".into()),
            Check::FileExists {
                path: "workspace/x".into(),
            },
        ]);
        assert_eq!(mixed.kind(), Answer);
        assert_eq!(
            Check::All(vec![
                Check::Consulted("drive/x".into()),
                Check::Attended("meeting/x".into())
            ])
            .kind(),
            Event
        );
        assert!(!Diagnostic.scored() && Answer.scored() && Event.scored());
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
        assert!(mentions("total: 1234.00 eur", "1234"));
        assert!(mentions("1234.86 rounds to 1234", "1234"));
        assert!(!mentions("total: 1234.86", "1234"));
        assert!(!mentions("ratio 0.1234", "1234"));
        assert!(mentions("1234.86", "1234.86"));
        assert!(!mentions("x1234", "1234"));
        assert!(mentions("é 12 é", "12"));
        assert!(!mentions("", "1"));
    }
}

#[cfg(test)]
mod domain_tests {
    use super::tests::V;
    use super::*;

    fn with(path: &str, content: &str) -> V {
        let mut v = V::default();
        v.0.insert(path.into(), content.as_bytes().to_vec());
        v
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
        // One row and its own cost, with room left for another: a fragment, no plan.
        let one = r#"{"selected": ["CH002"], "cost": 300, "value": 700.25}"#;
        for a in [
            BudgetAspect::Cost {
                pointer: "/cost".into(),
                relative: 0.01,
            },
            BudgetAspect::Value {
                pointer: "/value".into(),
                relative: 0.05,
            },
        ] {
            assert!(!evaluate(&budget(a.clone()), &with("p", one)), "{a:?}");
        }
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
