//! The scripted NPC engine: deciding what a colleague says to a message.
//!
//! A clue's trigger is a list of groups of alternatives; a message triggers the clue
//! when it mentions at least one alternative from every group. Matching is generous
//! on purpose (agents phrase questions in endless ways) but keyed to meaning-bearing
//! words: both sides are lower-cased, split into words, reduced to a crude stem
//! (`charts` -> `chart`, `mapping` -> `map`) and mapped through a table of synonym
//! concepts (`graph` ~ `chart`, `vendor` ~ `supplier`). A multi-word alternative
//! needs all of its words. Identifiers such as `OLD123456` match exactly.

use std::collections::BTreeSet;

/// Synonym concepts. The first word of a group is its canonical form.
const SYNONYMS: &[&[&str]] = &[
    &[
        "chart",
        "graph",
        "figure",
        "diagram",
        "plot",
        "visual",
        "visualization",
        "visualisation",
        "dashboard",
    ],
    &["id", "identifier", "ids", "number", "code", "reference"],
    &[
        "new",
        "updated",
        "replacement",
        "current",
        "correct",
        "latest",
        "right",
        "valid",
        "working",
    ],
    &[
        "broken", "dead", "invalid", "outdated", "stale", "old", "obsolete", "expired", "fix",
        "repair",
    ],
    &["link", "url", "hyperlink", "href"],
    &[
        "manual",
        "handbook",
        "guide",
        "guideline",
        "documentation",
        "doc",
        "instruction",
        "procedure",
        "policy",
        "rule",
        "playbook",
        "sop",
    ],
    &[
        "transaction",
        "payment",
        "expense",
        "spend",
        "spending",
        "ledger",
    ],
    &[
        "review",
        "audit",
        "check",
        "analyse",
        "analyze",
        "analysis",
        "inspect",
        "examine",
        "investigate",
        "verify",
    ],
    &["supplier", "vendor", "provider", "seller", "contractor"],
    &[
        "abnormal",
        "unusual",
        "suspicious",
        "irregular",
        "anomaly",
        "anomalous",
        "odd",
        "strange",
        "fraud",
        "fraudulent",
        "risky",
    ],
    &[
        "where",
        "location",
        "locate",
        "find",
        "path",
        "folder",
        "directory",
        "stored",
        "kept",
    ],
    &["meeting", "session", "call", "sync", "standup"],
    &[
        "procurement",
        "purchasing",
        "purchase",
        "buying",
        "buy",
        "order",
        "request",
        "requisition",
    ],
    &[
        "owner",
        "own",
        "responsible",
        "maintain",
        "maintainer",
        "author",
    ],
    &[
        "map",
        "mapping",
        "replace",
        "swap",
        "change",
        "migrate",
        "migration",
        "translate",
        "correspond",
    ],
    &["article", "page", "post"],
    &[
        "approval",
        "approve",
        "authorise",
        "authorize",
        "authorization",
        "authorisation",
        "sign",
        "signoff",
    ],
    &["limit", "threshold", "cap", "ceiling", "maximum", "max"],
    &["invoice", "bill", "receipt"],
    &["rating", "rate", "grade", "score"],
];

/// Words too common to carry meaning in a trigger.
const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "are", "be", "it", "me",
    "my", "you", "your", "i", "we", "please", "could", "would", "can", "do", "does", "what",
    "which", "with", "about", "hi", "hello", "thanks", "thank",
];

fn stem(w: &str) -> String {
    let w = w.to_ascii_lowercase();
    // Identifiers (letters and digits mixed) are kept whole.
    if w.bytes().any(|b| b.is_ascii_digit()) {
        return w;
    }
    let n = w.len();
    let cut = |suffix: &str, min: usize| n > suffix.len() + min && w.ends_with(suffix);
    if cut("ies", 2) {
        return format!("{}y", &w[..n - 3]);
    }
    if cut("ing", 2) {
        let base = &w[..n - 3];
        return undouble(base);
    }
    if cut("ed", 2) {
        return undouble(&w[..n - 2]);
    }
    if cut("es", 2)
        && (w.ends_with("ses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes"))
    {
        return w[..n - 2].to_owned();
    }
    if cut("s", 2) && !w.ends_with("ss") && !w.ends_with("us") {
        return w[..n - 1].to_owned();
    }
    w
}

fn undouble(base: &str) -> String {
    let b = base.as_bytes();
    if b.len() >= 2
        && b[b.len() - 1] == b[b.len() - 2]
        && !matches!(b[b.len() - 1], b'l' | b's' | b'z')
    {
        base[..base.len() - 1].to_owned()
    } else {
        base.to_owned()
    }
}

/// The canonical concept of a word: its synonym group's head, or its stem.
fn concept(word: &str) -> String {
    let s = stem(word);
    for group in SYNONYMS {
        if group.iter().any(|g| *g == s || stem(g) == s) {
            return group[0].to_owned();
        }
    }
    s
}

/// The set of concepts a text mentions.
pub fn concepts(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(&w.to_ascii_lowercase().as_str()))
        .map(concept)
        .collect()
}

/// A compiled trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    /// Every group must match; within a group any alternative; an alternative is a
    /// set of concepts that must all be present.
    groups: Vec<Vec<BTreeSet<String>>>,
}

impl Trigger {
    /// Compiles the scenario's trigger words.
    pub fn new(groups: &[Vec<String>]) -> Self {
        Trigger {
            groups: groups
                .iter()
                .map(|g| {
                    g.iter()
                        .map(|alt| concepts(alt))
                        .filter(|c| !c.is_empty())
                        .collect()
                })
                .collect(),
        }
    }

    /// Whether a message with these concepts triggers it.
    pub fn matches(&self, message: &BTreeSet<String>) -> bool {
        !self.groups.is_empty()
            && self
                .groups
                .iter()
                .all(|g| g.iter().any(|alt| alt.is_subset(message)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(groups: &[&[&str]]) -> Trigger {
        Trigger::new(
            &groups
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn matches_paraphrases_through_stems_and_synonyms() {
        let trig = t(&[&["chart", "link"], &["new id", "replacement"]]);
        for msg in [
            "Hi Dana, what is the new ID for the chart OLD123456?",
            "Could you give me the replacement identifiers for your graphs?",
            "Which updated numbers should the broken charts point to?",
            "I need the current codes for the figures in the onboarding article",
        ] {
            assert!(trig.matches(&concepts(msg)), "{msg}");
        }
        for msg in [
            "Hello! How are you?",
            "Where is the onboarding article?",
            "new chart",
        ] {
            let want = msg == "new chart";
            assert_eq!(trig.matches(&concepts(msg)), want, "{msg}");
        }
    }

    #[test]
    fn identifiers_must_match_exactly() {
        let trig = t(&[&["OLD123456"]]);
        assert!(trig.matches(&concepts("what replaces old123456?")));
        assert!(!trig.matches(&concepts("what replaces OLD123457?")));
    }

    #[test]
    fn stems_are_reasonable() {
        assert_eq!(stem("charts"), "chart");
        assert_eq!(stem("mapping"), "map");
        assert_eq!(stem("suppliers"), "supplier");
        assert_eq!(stem("policies"), "policy");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("reviewed"), "review");
        assert_eq!(concept("vendors"), "supplier");
        assert_eq!(concept("Handbook"), "manual");
    }

    #[test]
    fn empty_trigger_never_matches() {
        assert!(!Trigger::new(&[]).matches(&concepts("anything at all")));
    }
}
