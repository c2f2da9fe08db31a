//! The probe on list answers: a set picked by surface features, not one member.
//!
//! A list checkpoint passes only when the whole set is right, so picking one of
//! its items is no shortcut to it: picking the members of a named team from the
//! team's own export is what reading does (issue 37: the top-1 probe scored 99.5%
//! on a headcount whose set no surface rule reproduced). On a list slot the probe
//! behaves as a policy writing a set would: it keeps every distinct text whose
//! learned score reaches a threshold, the threshold that makes the most training
//! sets exact, and scores a hit when the test set is exactly the expected one.
//! Chance is what a reader-less writer gets: every candidate (or every one of the
//! learnt type) written as the set, when that is the answer, else a coin per item.

use std::collections::{BTreeMap, BTreeSet};

/// A set of folded candidate texts.
pub type TextSet = BTreeSet<String>;

/// The set of distinct texts of the candidates `keep` selects.
pub fn texts(texts: &[String], keep: impl Fn(usize) -> bool) -> TextSet {
    texts
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, t)| t.clone())
        .collect()
}

/// Each distinct text's score: the best of its occurrences (a writer lists an item
/// once, when any of its mentions convinces it).
pub fn by_text(texts: &[String], scores: &[f64]) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, f64> = BTreeMap::new();
    for (t, s) in texts.iter().zip(scores) {
        let e = by.entry(t.clone()).or_insert(f64::NEG_INFINITY);
        *e = e.max(*s);
    }
    by
}

/// The thresholds `τ` at which keeping every text scored `>= τ` gives exactly
/// `want`: the interval `(best wrong text, worst right text]`, if not empty.
pub fn exact_interval(scored: &BTreeMap<String, f64>, want: &TextSet) -> Option<(f64, f64)> {
    if want.is_empty() || !want.iter().all(|t| scored.contains_key(t)) {
        return None;
    }
    let low_right = want.iter().map(|t| scored[t]).fold(f64::INFINITY, f64::min);
    let high_wrong = scored
        .iter()
        .filter(|(t, _)| !want.contains(*t))
        .map(|(_, s)| *s)
        .fold(f64::NEG_INFINITY, f64::max);
    (high_wrong < low_right).then_some((high_wrong, low_right))
}

/// The threshold inside the most intervals (ties: the lowest such point), or
/// `None` when no interval is open. An interval `(lo, hi]` contains `τ` when
/// `lo < τ <= hi`; the sweep visits each `hi` (the only points a maximum needs).
pub fn best_threshold(intervals: &[(f64, f64)]) -> Option<f64> {
    let mut best: Option<(usize, f64)> = None;
    let mut his: Vec<f64> = intervals.iter().map(|i| i.1).collect();
    his.sort_by(f64::total_cmp);
    his.dedup();
    for tau in his {
        let n = intervals
            .iter()
            .filter(|(lo, hi)| *lo < tau && tau <= *hi)
            .count();
        if best.is_none_or(|(m, _)| n > m) {
            best = Some((n, tau));
        }
    }
    best.map(|(_, tau)| tau)
}

/// Whether keeping the texts scored `>= tau` gives exactly `want`.
pub fn exact_at(scored: &BTreeMap<String, f64>, want: &TextSet, tau: f64) -> bool {
    let kept: TextSet = scored
        .iter()
        .filter(|(_, s)| **s >= tau)
        .map(|(t, _)| t.clone())
        .collect();
    &kept == want
}

/// A reader-less writer's chance: 1 when writing every candidate (or every one
/// of the learnt type) is the answer, else a fair coin for each distinct text.
pub fn chance(all: &TextSet, typed: Option<&TextSet>, want: &TextSet) -> f64 {
    if all == want || typed.is_some_and(|t| t == want) {
        return 1.0;
    }
    let n = typed.filter(|t| !t.is_empty()).unwrap_or(all).len();
    0.5f64.powi(i32::try_from(n).unwrap_or(i32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> TextSet {
        xs.iter().map(|s| (*s).to_owned()).collect()
    }

    fn scored(xs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        xs.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
    }

    #[test]
    fn a_text_scores_its_best_mention() {
        let t: Vec<String> = ["a", "b", "a"].iter().map(|s| (*s).to_owned()).collect();
        let by = by_text(&t, &[0.1, 0.5, 0.9]);
        assert_eq!(by["a"], 0.9);
        assert_eq!(by["b"], 0.5);
    }

    #[test]
    fn the_exact_interval_lies_between_the_best_wrong_and_the_worst_right() {
        let s = scored(&[("a", 0.9), ("b", 0.7), ("c", 0.4)]);
        assert_eq!(exact_interval(&s, &set(&["a", "b"])), Some((0.4, 0.7)));
        // A wrong text above a right one: no threshold makes the set exact.
        assert_eq!(exact_interval(&s, &set(&["a", "c"])), None);
        // An item nobody observed cannot be written.
        assert_eq!(exact_interval(&s, &set(&["a", "z"])), None);
        assert!(exact_at(&s, &set(&["a", "b"]), 0.7));
        assert!(!exact_at(&s, &set(&["a", "b"]), 0.8));
    }

    #[test]
    fn the_threshold_satisfies_the_most_training_sets() {
        // Two sets are exact at 0.6 (both contain it), one only at 0.2.
        let iv = [(0.5, 0.8), (0.4, 0.6), (0.1, 0.2)];
        assert_eq!(best_threshold(&iv), Some(0.6));
        assert_eq!(best_threshold(&[]), None);
    }

    #[test]
    fn chance_is_one_only_when_writing_everything_is_the_answer() {
        let all = set(&["a", "b", "c"]);
        assert_eq!(chance(&all, None, &all), 1.0);
        assert_eq!(
            chance(&all, Some(&set(&["a", "b"])), &set(&["a", "b"])),
            1.0
        );
        assert_eq!(chance(&all, None, &set(&["a"])), 0.125);
        assert_eq!(chance(&all, Some(&set(&["a", "b"])), &set(&["a"])), 0.25);
    }
}
