//! Surface-rule checks (issue 37): content-blind rules of the kind a policy trained
//! on generated instances finds by itself — a position, a rank, an order statistic
//! once the figure off a round grid is set aside, the line without a negation word,
//! the longest clause, the lower median of the dates heard, the list items not named
//! again — applied to what an agent observes of each family's instances over 200
//! seeds. Each test states the rate every rule reaches, and holds it to about chance:
//! the share a uniformly random pick among the same candidates gets, plus a margin of
//! three standard errors (and at most `ABS_MARGIN` above chance when chance is small).
//! Run with `--nocapture` to see the table of rates (recorded in
//! `runs/validity/2026-11-28-surface-rules.md`).

use std::collections::BTreeMap;

use tbsim_scenario::{Check, DomainCheck, TaskSpec};

use crate::Parts;

/// Seeds per test.
pub(crate) const SEEDS: u64 = 200;

/// Negation words and clitics, as the attackers' rules count them.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "nothing", "none", "nobody", "don't", "doesn't", "can't", "won't",
    "isn't", "aren't", "cannot", "didn't", "without",
];

/// Whether a text carries a negation word.
pub(crate) fn negated(text: &str) -> bool {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
        .any(|w| NEGATIONS.contains(&w) || w.ends_with("n't"))
}

/// The numbers of a text in order (integers, thousands separators allowed), dates
/// and clock times left out.
pub(crate) fn numbers(text: &str) -> Vec<f64> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-' || b[i - 1] == b':'))
        {
            let mut j = i;
            while j < b.len()
                && (b[j].is_ascii_digit()
                    || (b[j] == b',' && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            let next = b.get(j).copied();
            let clock_or_date = matches!(next, Some(b':') | Some(b'-'))
                && b.get(j + 1).is_some_and(u8::is_ascii_digit);
            let glued = next.is_some_and(|c| c.is_ascii_alphabetic());
            if !clock_or_date
                && !glued
                && let Ok(v) = text[i..j].replace(',', "").parse::<f64>()
            {
                out.push(v);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The `YYYY-MM-DD` dates of a text in order.
pub(crate) fn dates(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter(|w| w.len() == 10 && w.as_bytes()[4] == b'-' && w.as_bytes()[7] == b'-')
        .map(str::to_owned)
        .collect()
}

/// Sentences (split after `.`, `;`, `:` and `!`/`?` followed by a space).
pub(crate) fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        cur.push(*c);
        let end = matches!(c, '.' | ';' | ':' | '!' | '?' | ',' | '\n')
            && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            let t = cur.trim().to_owned();
            if !t.is_empty() {
                out.push(t);
            }
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

/// Hits of each named rule and the instances counted, plus the summed chance.
#[derive(Default)]
pub(crate) struct Tally {
    hits: BTreeMap<String, u32>,
    n: u32,
    chance: f64,
}

/// The margin allowed above chance when three standard errors are smaller.
const ABS_MARGIN: f64 = 0.04;

impl Tally {
    /// One instance: the rules' verdicts (hit or not) and the chance of a random pick.
    pub(crate) fn add(&mut self, chance: f64, rules: &[(&str, bool)]) {
        self.n += 1;
        self.chance += chance;
        for (name, hit) in rules {
            *self.hits.entry((*name).to_owned()).or_default() += u32::from(*hit);
        }
    }

    /// Prints the rates and fails on any rule beyond chance plus the margin.
    pub(crate) fn check(&self, what: &str) {
        let n = f64::from(self.n.max(1));
        let chance = self.chance / n;
        let se = (chance * (1.0 - chance) / n).sqrt();
        let bound = chance + (3.0 * se).max(ABS_MARGIN);
        println!(
            "## {what}: {} instances, chance {chance:.3}, bound {bound:.3}",
            self.n
        );
        let mut bad = Vec::new();
        for (rule, h) in &self.hits {
            let rate = f64::from(*h) / n;
            println!("| {what} | {rule} | {rate:.3} |");
            if rate > bound {
                bad.push(format!("{rule} {rate:.3}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{what}: rules above chance {chance:.3} (bound {bound:.3}): {bad:?}"
        );
    }
}

/// Every check of a task, `All`s opened.
pub(crate) fn checks(task: &TaskSpec) -> Vec<(&str, &Check)> {
    fn open<'a>(key: &'a str, c: &'a Check, out: &mut Vec<(&'a str, &'a Check)>) {
        match c {
            Check::All(v) => v.iter().for_each(|c| open(key, c, out)),
            c => out.push((key, c)),
        }
    }
    let mut out = Vec::new();
    for cp in &task.checkpoints {
        open(&cp.key, &cp.check, &mut out);
    }
    out
}

/// Order-statistic rules over a list of figures: first, last, largest, smallest,
/// lower and upper median, every k-th smallest (best k reported per instance as its
/// own rule), and the same after setting aside the figures off the 250 grid when
/// some are on it.
pub(crate) fn figure_rules(figs: &[f64], answer: f64) -> Vec<(String, bool)> {
    let hit = |v: Option<&f64>| v.is_some_and(|v| (*v - answer).abs() < 0.5);
    let mut out = vec![
        ("first number".to_owned(), hit(figs.first())),
        ("last number".to_owned(), hit(figs.last())),
    ];
    let stats = |label: &str, figs: &[f64], out: &mut Vec<(String, bool)>| {
        let mut s = figs.to_vec();
        s.sort_by(f64::total_cmp);
        out.push((format!("{label}largest"), hit(s.last())));
        out.push((format!("{label}smallest"), hit(s.first())));
        if !s.is_empty() {
            out.push((
                format!("{label}lower median"),
                hit(s.get((s.len() - 1) / 2)),
            ));
            out.push((format!("{label}upper median"), hit(s.get(s.len() / 2))));
        }
        for k in 0..6 {
            out.push((format!("{label}{}th smallest", k + 1), hit(s.get(k))));
            if s.len() > k {
                out.push((
                    format!("{label}{}th largest", k + 1),
                    hit(s.get(s.len() - 1 - k)),
                ));
            }
        }
    };
    stats("", figs, &mut out);
    let on_grid: Vec<f64> = figs.iter().copied().filter(|v| v % 250.0 == 0.0).collect();
    if !on_grid.is_empty() && on_grid.len() < figs.len() {
        stats("on-grid ", &on_grid, &mut out);
    }
    out
}

/// The chance of picking the answer uniformly among the figures of its own scale
/// (within a factor of four), the candidates a learner that reads no meaning is left
/// with once it has learned each figure's size.
pub(crate) fn alike_chance(figs: &[f64], answer: f64) -> f64 {
    let alike = figs
        .iter()
        .filter(|v| **v >= answer / 4.0 && **v <= answer * 4.0)
        .count();
    let hits = figs.iter().filter(|v| (**v - answer).abs() < 0.5).count();
    if alike == 0 {
        0.0
    } else {
        hits as f64 / alike as f64
    }
}

/// Rules over the clauses holding figures: the first figure of the first clause
/// without a negation word, of the first clause with one, of the longest and of the
/// shortest clause.
pub(crate) fn clause_rules(text: &str, answer: f64) -> Vec<(String, bool)> {
    let with: Vec<(String, f64)> = clauses(text)
        .into_iter()
        .filter_map(|c| numbers(&c).first().map(|v| (c.clone(), *v)))
        .collect();
    let hit = |v: Option<f64>| v.is_some_and(|v| (v - answer).abs() < 0.5);
    vec![
        (
            "un-negated clause".to_owned(),
            hit(with.iter().find(|(c, _)| !negated(c)).map(|x| x.1)),
        ),
        (
            "negated clause".to_owned(),
            hit(with.iter().find(|(c, _)| negated(c)).map(|x| x.1)),
        ),
        (
            "longest clause".to_owned(),
            hit(with.iter().max_by_key(|(c, _)| c.len()).map(|x| x.1)),
        ),
        (
            "shortest clause".to_owned(),
            hit(with.iter().min_by_key(|(c, _)| c.len()).map(|x| x.1)),
        ),
    ]
}

/// The rules' names as `&str` pairs for `Tally::add`.
pub(crate) fn as_pairs(v: &[(String, bool)]) -> Vec<(&str, bool)> {
    v.iter().map(|(k, h)| (k.as_str(), *h)).collect()
}

/// The clue responses of a generated instance.
pub(crate) fn replies(parts: &Parts) -> Vec<&str> {
    parts
        .clues
        .iter()
        .map(|(_, c)| c.response.as_str())
        .collect()
}

/// The date range a `DateIn` check accepts.
pub(crate) fn date_range(task: &TaskSpec) -> Option<(String, String)> {
    checks(task).into_iter().find_map(|(_, c)| match c {
        Check::Domain(d) => match d.as_ref() {
            DomainCheck::DateIn { first, last, .. } => Some((first.clone(), last.clone())),
            _ => None,
        },
        _ => None,
    })
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::{
        event_planning, kb_fix, meeting_attend, meeting_book, transaction_review, urgent_interrupt,
    };
    use tbsim_scenario::Record;

    fn number_answer(task: &TaskSpec, pointer: &str) -> f64 {
        checks(task)
            .into_iter()
            .find_map(|(_, c)| match c {
                Check::JsonNumber {
                    pointer: p,
                    expected,
                    ..
                } if p == pointer => Some(*expected),
                _ => None,
            })
            .expect("the answer checkpoint")
    }

    #[test]
    fn meeting_attend_cap_needs_reading() {
        let mut t = Tally::default();
        for seed in 0..SEEDS {
            let p = meeting_attend::Params {
                kind: Some(meeting_attend::Kind::None),
                level: Some(1),
                ..Default::default()
            };
            let parts =
                crate::with_test_ctx(seed, "ma", 40, |ctx| meeting_attend::generate(ctx, &p))
                    .expect("generates");
            let notes = &parts.meetings[0].notes;
            let cap = number_answer(&parts.tasks[0], "/budget_cap");
            let figs = numbers(notes);
            let mut rules = figure_rules(&figs, cap);
            rules.extend(clause_rules(notes, cap));
            t.add(alike_chance(&figs, cap), &as_pairs(&rules));
        }
        t.check("meeting_attend budget_cap");
    }

    #[test]
    fn meeting_attend_withdrawn_request_needs_reading() {
        let mut t = Tally::default();
        for seed in 0..SEEDS {
            let p = meeting_attend::Params {
                kind: Some(meeting_attend::Kind::Write),
                level: Some(1),
                ..Default::default()
            };
            let parts =
                crate::with_test_ctx(seed, "ma", 40, |ctx| meeting_attend::generate(ctx, &p))
                    .expect("generates");
            let o = &parts.tasks[1].objective;
            let listed: Vec<String> = o
                .lines()
                .filter_map(|l| l.strip_prefix("- ").map(str::to_owned))
                .collect();
            let later: Vec<&str> = o
                .lines()
                .filter(|l| l.starts_with("Later in the meeting"))
                .collect();
            let item = |l: &str| {
                l.split(" x ")
                    .nth(1)
                    .and_then(|r| r.rsplit_once(" at "))
                    .map(|(i, _)| i.to_owned())
                    .unwrap_or_default()
            };
            let expected: Vec<String> = checks(&parts.tasks[1])
                .into_iter()
                .find_map(|(_, c)| match c {
                    Check::JsonRecords { expected, .. } => Some(
                        expected
                            .iter()
                            .map(|r: &Record| r.text.get("item").cloned().unwrap_or_default())
                            .collect(),
                    ),
                    _ => None,
                })
                .expect("the request list");
            let keep = |drop: &dyn Fn(&str) -> bool| -> Vec<String> {
                listed
                    .iter()
                    .map(|l| item(l))
                    .filter(|i| !later.iter().any(|x| x.contains(i.as_str()) && drop(x)))
                    .collect()
            };
            let named = later.len() as f64;
            t.add(
                1.0 / named,
                &[
                    ("drop the items named again", keep(&|_| true) == expected),
                    (
                        "drop the items named again with a negation",
                        keep(&|x| negated(x)) == expected,
                    ),
                    (
                        "drop the items named again without a negation",
                        keep(&|x| !negated(x)) == expected,
                    ),
                    (
                        "drop the first item named again",
                        keep(&|x| later.first().is_some_and(|f| *f == x)) == expected,
                    ),
                    (
                        "drop the last item named again",
                        keep(&|x| later.last().is_some_and(|f| *f == x)) == expected,
                    ),
                    (
                        "drop the longest remark",
                        keep(&|x| {
                            later
                                .iter()
                                .max_by_key(|l| l.len())
                                .is_some_and(|f| *f == x)
                        }) == expected,
                    ),
                    (
                        "drop the shortest remark",
                        keep(&|x| {
                            later
                                .iter()
                                .min_by_key(|l| l.len())
                                .is_some_and(|f| *f == x)
                        }) == expected,
                    ),
                ],
            );
        }
        t.check("meeting_attend withdrawn request");
    }

    #[test]
    fn kb_fix_live_id_needs_reading() {
        let mut t = Tally::default();
        for seed in 0..SEEDS {
            let p = kb_fix::Params {
                difficulty: Some(kb_fix::Level::Hard),
                ..Default::default()
            };
            let parts = crate::with_test_ctx(seed, "kb", 40, |ctx| kb_fix::generate(ctx, &p))
                .expect("generates");
            let live: Vec<String> = checks(&parts.tasks[0])
                .into_iter()
                .flat_map(|(_, c)| match c {
                    Check::FileContains { present, .. } => present
                        .iter()
                        .map(|p| p.trim_start_matches("charts?id=").trim().to_owned())
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            for reply in replies(&parts) {
                // Each old chart's four version lines.
                for block in reply.split("\n- ").skip(1) {
                    let lines: Vec<(&str, &str)> = block
                        .lines()
                        .skip(1)
                        .filter_map(|l| l.trim().split_once(": "))
                        .collect();
                    if lines.len() != 4 {
                        continue;
                    }
                    let hit =
                        |i: Option<usize>| i.is_some_and(|i| live.iter().any(|x| x == lines[i].0));
                    let idx = |f: &dyn Fn(&(&str, &str)) -> bool| lines.iter().position(f);
                    let by_len = |max: bool| {
                        let it = (0..4).map(|i| (lines[i].1.len(), i));
                        if max {
                            it.max().map(|x| x.1)
                        } else {
                            it.min().map(|x| x.1)
                        }
                    };
                    let by_id = |max: bool| {
                        let it = (0..4).map(|i| (lines[i].0, i));
                        if max {
                            it.max().map(|x| x.1)
                        } else {
                            it.min().map(|x| x.1)
                        }
                    };
                    t.add(
                        1.0 / 4.0,
                        &[
                            ("the line without a negation", hit(idx(&|l| !negated(l.1)))),
                            ("the line with a negation", hit(idx(&|l| negated(l.1)))),
                            ("first line", hit(Some(0))),
                            ("second line", hit(Some(1))),
                            ("third line", hit(Some(2))),
                            ("last line", hit(Some(3))),
                            ("longest clause", hit(by_len(true))),
                            ("shortest clause", hit(by_len(false))),
                            ("largest ID", hit(by_id(true))),
                            ("smallest ID", hit(by_id(false))),
                        ],
                    );
                }
            }
        }
        assert!(t.n > 0, "no version lines were read");
        t.check("kb_fix live chart ID");
    }

    #[test]
    fn transaction_review_limit_needs_reading() {
        let mut t = Tally::default();
        let mut empty = Tally::default();
        for seed in 0..SEEDS {
            let parts = crate::with_test_ctx(seed, "tr", 40, |ctx| {
                transaction_review::generate(ctx, &transaction_review::Params::default())
            })
            .expect("generates");
            let manual = parts
                .files
                .iter()
                .find(|f| f.path == transaction_review::MANUAL)
                .and_then(|f| match &f.content {
                    tbsim_scenario::Content::Text(t) => Some(t.clone()),
                    _ => None,
                })
                .expect("the manual");
            let limit = number_answer(&parts.tasks[0], "/approval_limit");
            let figs = numbers(&manual);
            let mut rules = figure_rules(&figs, limit);
            rules.extend(clause_rules(&manual, limit));
            let mut freq: BTreeMap<i64, usize> = BTreeMap::new();
            for f in &figs {
                *freq.entry(*f as i64).or_default() += 1;
            }
            let top = freq
                .iter()
                .max_by_key(|(v, n)| (**n, **v))
                .map(|(v, _)| *v as f64);
            rules.push((
                "most frequent figure".into(),
                top.is_some_and(|v| (v - limit).abs() < 0.5),
            ));
            t.add(alike_chance(&figs, limit), &as_pairs(&rules));
            // `[]` with the manual's median: solved only when nobody is abnormal.
            let none = checks(&parts.tasks[0]).into_iter().any(
                |(_, c)| matches!(c, Check::JsonStringSet { expected, .. } if expected.is_empty()),
            );
            let mut s = figs.clone();
            s.sort_by(f64::total_cmp);
            let median = s.get((s.len().max(1) - 1) / 2).copied().unwrap_or(0.0);
            empty.add(
                0.0,
                &[(
                    "[] with the manual's lower median",
                    none && (median - limit).abs() < 0.5,
                )],
            );
        }
        t.check("transaction_review approval_limit");
        // Solving by `[]` plus a guessed limit stays under the gate's 0.05.
        let n = f64::from(SEEDS as u32);
        let rate = f64::from(empty.hits.values().sum::<u32>()) / n;
        println!(
            "| transaction_review | [] with the manual's lower median (whole answer) | {rate:.3} |"
        );
        assert!(rate <= 0.05, "[] plus the median solves {rate:.3}");
    }

    #[test]
    fn event_planning_date_needs_reading() {
        let mut t = Tally::default();
        for seed in 0..SEEDS {
            let p = event_planning::Params {
                level: Some(event_planning::Level::A1),
                ..Default::default()
            };
            let parts =
                crate::with_test_ctx(seed, "ep", 40, |ctx| event_planning::generate(ctx, &p))
                    .expect("generates");
            let Some((first, last)) = date_range(&parts.tasks[0]) else {
                continue;
            };
            let said: Vec<Vec<String>> = replies(&parts)
                .iter()
                .map(|r| dates(r))
                .filter(|d| !d.is_empty())
                .collect();
            let all: Vec<String> = said.concat();
            let mut sorted = all.clone();
            sorted.sort();
            let inside = |d: Option<&String>| d.is_some_and(|d| *d >= first && *d <= last);
            let mut freq: BTreeMap<&String, usize> = BTreeMap::new();
            for d in &all {
                *freq.entry(d).or_default() += 1;
            }
            let distinct: Vec<&String> = freq.keys().copied().collect();
            let chance = distinct.iter().filter(|d| inside(Some(d))).count() as f64
                / distinct.len().max(1) as f64;
            let latest_first = said.iter().filter_map(|d| d.first()).max();
            let earliest_last = said.iter().filter_map(|d| d.last()).min();
            let n = sorted.len();
            t.add(
                chance,
                &[
                    (
                        "lower median date",
                        inside(sorted.get(n.saturating_sub(1) / 2)),
                    ),
                    ("upper median date", inside(sorted.get(n / 2))),
                    ("earliest date", inside(sorted.first())),
                    ("latest date", inside(sorted.last())),
                    ("latest first date of a reply", inside(latest_first)),
                    ("earliest last date of a reply", inside(earliest_last)),
                    (
                        "most frequent date",
                        inside(
                            freq.iter()
                                .max_by_key(|(d, n)| (**n, std::cmp::Reverse(**d)))
                                .map(|(d, _)| *d),
                        ),
                    ),
                    ("first date heard", inside(all.first())),
                ],
            );
        }
        t.check("event_planning event_date");
    }

    #[test]
    fn urgent_interrupt_signups_need_reading() {
        let mut t = Tally::default();
        for seed in 0..SEEDS {
            let parts = crate::with_test_ctx(seed, "ui", 40, |ctx| {
                urgent_interrupt::generate(ctx, &urgent_interrupt::Params::default())
            })
            .expect("generates");
            let Some(records) = parts
                .tasks
                .iter()
                .flat_map(checks)
                .find_map(|(k, c)| match c {
                    Check::JsonRecords { expected, .. } if k == "signups_recorded" => {
                        Some(expected.clone())
                    }
                    _ => None,
                })
            else {
                continue;
            };
            for (_, clue) in &parts.clues {
                let Some(rec) = records.iter().find(|r| {
                    r.text
                        .get("title")
                        .is_some_and(|ti| clue.response.contains(ti.as_str()))
                }) else {
                    continue;
                };
                if !clue.key.contains("/signups-") {
                    continue;
                }
                let answer = rec.numbers["signups"];
                let figs = numbers(&clue.response);
                let mut rules = figure_rules(&figs, answer);
                rules.extend(clause_rules(&clue.response, answer));
                t.add(alike_chance(&figs, answer), &as_pairs(&rules));
            }
        }
        t.check("urgent_interrupt signups");
    }

    #[test]
    fn meeting_book_replies_need_reading() {
        let mut t = Tally::default();
        for kind in [meeting_book::Kind::Department, meeting_book::Kind::Manager] {
            for seed in 0..SEEDS {
                let p = meeting_book::Params {
                    kind: Some(kind),
                    ..Default::default()
                };
                let Ok(parts) =
                    crate::with_test_ctx(seed, "mb", 40, |ctx| meeting_book::generate(ctx, &p))
                else {
                    continue;
                };
                let Some((invite, leave)) =
                    checks(&parts.tasks[0])
                        .into_iter()
                        .find_map(|(_, c)| match c {
                            Check::Booked {
                                must_invite,
                                must_not_invite,
                                ..
                            } => Some((must_invite.clone(), must_not_invite.clone())),
                            _ => None,
                        })
                else {
                    continue;
                };
                // Decisive replies: a member's own (where no manager confirms) and a
                // manager's confirmation about a member.
                let confirmed: Vec<&str> = parts
                    .clues
                    .iter()
                    .filter(|(_, c)| c.key.ends_with("-confirmed"))
                    .map(|(_, c)| c.key.trim_end_matches("-confirmed"))
                    .collect();
                for (who, clue) in &parts.clues {
                    let about = if let Some(k) = clue.key.strip_suffix("-availability") {
                        if confirmed.contains(&k) {
                            continue;
                        }
                        who.clone()
                    } else if clue.key.ends_with("-confirmed") {
                        let slug = clue
                            .key
                            .trim_end_matches("-confirmed")
                            .rsplit('/')
                            .next()
                            .unwrap_or("");
                        match parts
                            .clues
                            .iter()
                            .find(|(_, c)| c.key.ends_with(&format!("/{slug}-availability")))
                        {
                            Some((k, _)) => k.clone(),
                            None => continue,
                        }
                    } else {
                        continue;
                    };
                    let free = if invite.contains(&about) {
                        true
                    } else if leave.contains(&about) {
                        false
                    } else {
                        continue;
                    };
                    let base = invite.len() as f64 / (invite.len() + leave.len()).max(1) as f64;
                    let text = &clue.response;
                    t.add(
                        base.max(1.0 - base),
                        &[
                            ("free when no negation word", free != negated(text)),
                            ("free when a negation word", free == negated(text)),
                            (
                                "free when shorter than 90 characters",
                                free == (text.len() < 90),
                            ),
                            (
                                "free when longer than 90 characters",
                                free == (text.len() >= 90),
                            ),
                        ],
                    );
                }
            }
        }
        t.check("meeting_book availability");
    }

    #[test]
    fn numbers_skip_dates_times_and_ids() {
        assert_eq!(
            numbers("At 09:30 on 2025-11-03, 7,250 EUR and NEW123456; 12 sign-ups."),
            vec![7250.0, 12.0]
        );
    }

    #[test]
    fn negation_words_are_found() {
        assert!(negated("please don't link it"));
        assert!(negated("Nothing newer exists"));
        assert!(!negated("current, link this one"));
    }

    #[test]
    fn clauses_split_on_punctuation() {
        assert_eq!(clauses("a, b. c; d"), vec!["a,", "b.", "c;", "d"]);
    }
}
