//! Every answer an agent could pick from what it observed, each described by
//! generic surface features only.
//!
//! A candidate is a figure, a date, an ID, a colleague's name, a line, a clause or
//! a list item of any text the agent saw (files, meeting notes, colleagues'
//! replies, tool errors, objectives). Its features say where it sits and what
//! surrounds it, never what it means: its source's kind, its place in its text,
//! line and list, its rank among the figures or dates of its text, its residues on
//! round grids, the negation and hedge words of its line and clause, its clause's
//! length and that length's rank, how often it recurs, and how many words of its
//! clause the objective shares. A learner over these features is the shortcut an
//! agent trained on generated instances could find.

use std::collections::{BTreeMap, BTreeSet};

use crate::scan::extract::{list_items, numbers};
use crate::scan::observe::Observed;
use crate::scrape;

/// What a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CandKind {
    /// A figure (`8,000`, `7.5%`).
    Figure,
    /// A `YYYY-MM-DD` date.
    Date,
    /// An ID-like token (`TX-1042`).
    Id,
    /// A colleague's full name.
    Name,
    /// A whole line.
    Line,
    /// A clause of a line (split at `,`, `;`, `:` and sentence ends).
    Clause,
    /// A list item (`- x`, `1. x`).
    ListItem,
}

/// One candidate answer, deduplicated over everything observed.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its kind (the first occurrence's).
    pub kind: CandKind,
    /// Its text as it appears (a figure as written, without separators).
    pub text: String,
    /// A figure's value.
    pub value: Option<f64>,
    /// Its features (see [`FEATURES`]), from its first occurrence, with the counts
    /// over every occurrence.
    pub features: Vec<f64>,
}

/// The features' names, in order.
pub const FEATURES: &[&str] = &[
    "source: file",
    "source: meeting",
    "source: reply",
    "source: objective",
    "source: tool error",
    "source: the assigner's reply",
    "source: index among its kind (relative)",
    "position among its kind in the text (relative)",
    "first of its kind in the text",
    "last of its kind in the text",
    "items of its kind in the text (log)",
    "line position in the text (relative)",
    "clause position in the line (relative)",
    "first clause of the line",
    "last clause of the line",
    "value rank among the text's figures (relative)",
    "largest figure of the text",
    "smallest figure of the text",
    "lower median figure of the text",
    "on the grid of 5",
    "on the grid of 10",
    "on the grid of 25",
    "on the grid of 100",
    "whole number",
    "magnitude (log10)",
    "negation word in the line",
    "negation word in the clause",
    "hedge word in the line",
    "hedge word in the clause",
    "clause length in words",
    "clause length rank in the line (relative, longest 1)",
    "longest clause of the text",
    "shortest clause of the text",
    "occurrences (log)",
    "source kinds it occurs in",
    "date order in the text (relative)",
    "earliest date of the text",
    "latest date of the text",
    "clause words shared with the objectives (share)",
    "appears in an objective",
    "inside a list item",
    "list item position (relative)",
    "last list item",
    "length in characters (log)",
    "kind: figure",
    "kind: date",
    "kind: id",
    "kind: name",
    "kind: line",
    "kind: clause",
    "kind: list item",
    "character position in the text (relative)",
];

/// Where [`FEATURES`] holds the one-hot kind of a candidate's source.
pub const SOURCE_FEATURES: std::ops::Range<usize> = 0..5;
/// Where [`FEATURES`] holds the one-hot kind of a candidate.
pub const KIND_FEATURES: std::ops::Range<usize> = 44..51;

const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "none",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "won't",
    "can't",
    "cannot",
    "without",
    "nor",
    "neither",
    "instead",
    "no longer",
    "old",
    "outdated",
    "superseded",
    "cancelled",
    "canceled",
    "withdrawn",
    "wrong",
    "ignore",
];
const HEDGES: &[&str] = &[
    "maybe",
    "perhaps",
    "probably",
    "might",
    "may",
    "could",
    "think",
    "believe",
    "guess",
    "roughly",
    "about",
    "around",
    "approximately",
    "unsure",
    "not sure",
    "i think",
    "draft",
    "tentative",
    "proposed",
    "estimate",
    "was",
    "used to",
    "previously",
    "earlier",
];

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn has_any(text: &str, lex: &Lexicon) -> bool {
    has_any_of(&words(text), lex)
}

/// A word list split for lookup: its single words sorted, its phrases padded with
/// spaces (`" no longer "`), as they are found in a padded, joined text.
struct Lexicon {
    words: Vec<&'static str>,
    phrases: Vec<String>,
}

impl Lexicon {
    fn of(list: &[&'static str]) -> Self {
        let mut words: Vec<&str> = list.iter().copied().filter(|w| !w.contains(' ')).collect();
        words.sort_unstable();
        let phrases = list
            .iter()
            .filter(|w| w.contains(' '))
            .map(|w| format!(" {w} "))
            .collect();
        Self { words, phrases }
    }
}

static NEGATION_LEXICON: std::sync::LazyLock<Lexicon> =
    std::sync::LazyLock::new(|| Lexicon::of(NEGATIONS));
static HEDGE_LEXICON: std::sync::LazyLock<Lexicon> =
    std::sync::LazyLock::new(|| Lexicon::of(HEDGES));

/// [`has_any`] on a text's [`words`], for a caller that has them already: whether
/// any word of the list is one of them, or any phrase runs through them.
fn has_any_of(ws: &[String], lex: &Lexicon) -> bool {
    ws.iter()
        .any(|x| lex.words.binary_search(&x.as_str()).is_ok())
        || (!lex.phrases.is_empty() && {
            let lower = format!(" {} ", ws.join(" "));
            lex.phrases.iter().any(|p| lower.contains(p.as_str()))
        })
}

/// The clauses of a line: split after `,`, `;`, `:` and sentence ends.
pub fn clauses(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        let next_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        // A comma inside a figure (`8,000`) or a point inside one (`7.5`) ends nothing.
        let ends = matches!(c, ';' | ':' | '?' | '!') || (matches!(c, ',' | '.') && next_space);
        if ends {
            let t = cur
                .trim()
                .trim_end_matches([',', ';', ':'])
                .trim()
                .to_owned();
            if !t.is_empty() {
                out.push(t);
            }
            cur.clear();
        }
    }
    let t = cur.trim().to_owned();
    if !t.is_empty() {
        out.push(t);
    }
    out
}

/// A line without its list mark.
fn strip_bullet(line: &str) -> (&str, bool) {
    let l = line.trim();
    for m in ["- ", "* ", "• "] {
        if let Some(r) = l.strip_prefix(m) {
            return (r.trim(), true);
        }
    }
    let digits = l.chars().take_while(char::is_ascii_digit).count();
    if (1..=3).contains(&digits)
        && let Some(r) = l[digits..]
            .strip_prefix(". ")
            .or_else(|| l[digits..].strip_prefix(") "))
    {
        return (r.trim(), true);
    }
    (l, false)
}

/// A source text with its kind.
#[derive(Debug, Clone)]
struct Text<'a> {
    kind: usize,
    from_assigner: bool,
    index: f64,
    text: &'a str,
}

/// One occurrence before deduplication.
#[derive(Debug, Clone)]
struct Occurrence {
    kind: CandKind,
    key: String,
    text: String,
    value: Option<f64>,
    source_kind: usize,
    features: Vec<f64>,
}

fn rel(i: usize, n: usize) -> f64 {
    if n <= 1 {
        0.0
    } else {
        i as f64 / (n - 1) as f64
    }
}

fn on_grid(v: f64, g: f64) -> f64 {
    f64::from(v.fract() == 0.0 && (v % g) == 0.0)
}

/// The figure's key (its value as written plainly).
pub fn figure_key(v: f64) -> String {
    scrape::format_number(v)
}

/// Every candidate of everything `seen` holds, deduplicated by kind and text (the
/// first occurrence's features, with counts over all), in a fixed order.
pub fn candidates(seen: &Observed) -> Vec<Candidate> {
    let assigners: BTreeSet<&str> = seen.tasks.iter().map(|t| t.2.as_str()).collect();
    let names: Vec<&str> = seen
        .colleagues
        .iter()
        .map(|c| c.1.as_str())
        .filter(|n| n.contains(' '))
        .collect();
    let objective_words: BTreeSet<String> = seen
        .tasks
        .iter()
        .flat_map(|t| words(&t.1))
        .filter(|w| w.len() > 3)
        .collect();
    let objectives: String = seen
        .tasks
        .iter()
        .map(|t| t.1.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut texts: Vec<Text> = Vec::new();
    let n_files = seen.files.len();
    for (i, t) in seen.files.values().enumerate() {
        texts.push(Text {
            kind: 0,
            from_assigner: false,
            index: rel(i, n_files),
            text: t,
        });
    }
    for (i, (_, t)) in seen.meetings.iter().enumerate() {
        texts.push(Text {
            kind: 1,
            from_assigner: false,
            index: rel(i, seen.meetings.len()),
            text: t,
        });
    }
    for (i, (from, t)) in seen.replies.iter().enumerate() {
        let name = seen
            .colleagues
            .iter()
            .find(|c| &c.0 == from)
            .map_or("", |c| c.1.as_str());
        texts.push(Text {
            kind: 2,
            from_assigner: assigners.contains(name),
            index: rel(i, seen.replies.len()),
            text: t,
        });
    }
    for (i, t) in seen.tasks.iter().enumerate() {
        texts.push(Text {
            kind: 3,
            from_assigner: false,
            index: rel(i, seen.tasks.len()),
            text: &t.1,
        });
    }
    for (i, t) in seen.errors.iter().enumerate() {
        texts.push(Text {
            kind: 4,
            from_assigner: false,
            index: rel(i, seen.errors.len()),
            text: t,
        });
    }
    let mut occ: Vec<Occurrence> = Vec::new();
    for t in &texts {
        occurrences(t, &names, &objective_words, &objectives, &mut occ);
    }
    // Counts over every occurrence, then the first occurrence of each candidate.
    let mut counts: BTreeMap<(CandKind, String), (usize, BTreeSet<usize>)> = BTreeMap::new();
    for o in &occ {
        let e = counts.entry((o.kind, o.key.clone())).or_default();
        e.0 += 1;
        e.1.insert(o.source_kind);
    }
    let mut seen_keys: BTreeSet<(CandKind, String)> = BTreeSet::new();
    let mut out = Vec::new();
    for o in occ {
        let k = (o.kind, o.key.clone());
        if !seen_keys.insert(k.clone()) {
            continue;
        }
        let (n, kinds) = &counts[&k];
        let mut f = o.features;
        f[33] = (*n as f64).ln_1p();
        f[34] = kinds.len() as f64;
        out.push(Candidate {
            kind: o.kind,
            text: o.text,
            value: o.value,
            features: f,
        });
    }
    out
}

#[allow(clippy::too_many_lines)]
fn occurrences(
    t: &Text,
    names: &[&str],
    objective_words: &BTreeSet<String>,
    objectives: &str,
    out: &mut Vec<Occurrence>,
) {
    let lines: Vec<&str> = t.text.lines().filter(|l| !l.trim().is_empty()).collect();
    let text_len = t.text.len().max(1) as f64;
    let all_figures = numbers(t.text);
    let mut sorted_figs = all_figures.clone();
    sorted_figs.sort_by(f64::total_cmp);
    sorted_figs.dedup();
    let all_dates = scrape::dates(t.text);
    let mut sorted_dates = all_dates.clone();
    sorted_dates.sort();
    let items = list_items(t.text);
    // Clause lengths over the whole text, for "longest/shortest clause of the text".
    let clause_lens: Vec<usize> = lines
        .iter()
        .flat_map(|l| clauses(strip_bullet(l).0))
        .map(|c| words(&c).len())
        .collect();
    let (max_len, min_len) = (
        clause_lens.iter().copied().max().unwrap_or(0),
        clause_lens.iter().copied().min().unwrap_or(0),
    );
    // Per kind: occurrences so far in this text, and the totals (filled after).
    let mut per_kind: BTreeMap<CandKind, Vec<usize>> = BTreeMap::new();
    let start = out.len();
    let mut list_pos = 0usize;
    for (li, line) in lines.iter().enumerate() {
        let (body, bullet) = strip_bullet(line);
        let cls = clauses(body);
        let mut lens: Vec<usize> = cls.iter().map(|c| words(c).len()).collect();
        lens.sort_unstable();
        let neg_line = has_any(body, &NEGATION_LEXICON);
        let hedge_line = has_any(body, &HEDGE_LEXICON);
        // The line's own offset (a subslice of the text): searching the text for
        // each line made a long file quadratic, most of the probe's time.
        let char_pos = (line.as_ptr().addr() - t.text.as_ptr().addr()) as f64 / text_len;
        let this_item = if bullet {
            list_pos += 1;
            Some(list_pos - 1)
        } else {
            None
        };
        let base = |ci: usize, clause: &str| -> Vec<f64> {
            let mut f = vec![0.0; FEATURES.len()];
            f[t.kind] = 1.0;
            f[5] = f64::from(t.from_assigner);
            f[6] = t.index;
            f[11] = rel(li, lines.len());
            f[12] = rel(ci, cls.len());
            f[13] = f64::from(ci == 0);
            f[14] = f64::from(ci + 1 == cls.len());
            let ws = words(clause);
            f[25] = f64::from(neg_line);
            f[26] = f64::from(has_any_of(&ws, &NEGATION_LEXICON));
            f[27] = f64::from(hedge_line);
            f[28] = f64::from(has_any_of(&ws, &HEDGE_LEXICON));
            let len = ws.len();
            f[29] = len as f64;
            f[30] = rel(lens.iter().position(|&l| l == len).unwrap_or(0), lens.len());
            f[31] = f64::from(len == max_len);
            f[32] = f64::from(len == min_len);
            f[38] = if ws.is_empty() {
                0.0
            } else {
                ws.iter().filter(|w| objective_words.contains(*w)).count() as f64 / ws.len() as f64
            };
            f[40] = f64::from(bullet);
            if let Some(p) = this_item {
                f[41] = rel(p, items.len());
                f[42] = f64::from(p + 1 == items.len());
            }
            f[51] = char_pos;
            f
        };
        let mut push =
            |kind: CandKind, key: String, text: String, value: Option<f64>, mut f: Vec<f64>| {
                f[39] = f64::from(t.kind != 3 && objectives.contains(text.as_str()));
                f[43] = (text.len() as f64).ln_1p();
                f[KIND_FEATURES.start + kind as usize] = 1.0;
                per_kind.entry(kind).or_default().push(out.len());
                out.push(Occurrence {
                    kind,
                    key,
                    text,
                    value,
                    source_kind: t.kind,
                    features: f,
                });
            };
        push(
            CandKind::Line,
            body.to_owned(),
            body.to_owned(),
            None,
            base(0, body),
        );
        if bullet {
            push(
                CandKind::ListItem,
                body.to_owned(),
                body.to_owned(),
                None,
                base(0, body),
            );
        }
        for (ci, clause) in cls.iter().enumerate() {
            // The clause's features, once for all its candidates (the same for each).
            let clause_base = base(ci, clause);
            if cls.len() > 1 {
                push(
                    CandKind::Clause,
                    clause.clone(),
                    clause.clone(),
                    None,
                    clause_base.clone(),
                );
            }
            for v in numbers(clause) {
                let mut f = clause_base.clone();
                let rank = sorted_figs.iter().position(|x| *x == v).unwrap_or(0);
                f[15] = rel(rank, sorted_figs.len());
                f[16] = f64::from(rank + 1 == sorted_figs.len());
                f[17] = f64::from(rank == 0);
                f[18] = f64::from(!sorted_figs.is_empty() && rank == (sorted_figs.len() - 1) / 2);
                f[19] = on_grid(v, 5.0);
                f[20] = on_grid(v, 10.0);
                f[21] = on_grid(v, 25.0);
                f[22] = on_grid(v, 100.0);
                f[23] = f64::from(v.fract() == 0.0);
                f[24] = v.abs().max(1e-9).log10().clamp(-9.0, 12.0);
                let key = figure_key(v);
                push(CandKind::Figure, key.clone(), key, Some(v), f);
            }
            for d in scrape::dates(clause) {
                let mut f = clause_base.clone();
                let rank = sorted_dates.iter().position(|x| *x == d).unwrap_or(0);
                f[35] = rel(rank, sorted_dates.len());
                f[36] = f64::from(rank == 0);
                f[37] = f64::from(rank + 1 == sorted_dates.len());
                push(CandKind::Date, d.clone(), d, None, f);
            }
            for id in scrape::id_tokens(clause) {
                push(CandKind::Id, id.clone(), id, None, clause_base.clone());
            }
            for n in scrape::mentions(clause, names.iter().copied()) {
                push(
                    CandKind::Name,
                    n.to_owned(),
                    n.to_owned(),
                    None,
                    clause_base.clone(),
                );
            }
        }
    }
    // Positions among the text's occurrences of each kind.
    for idx in per_kind.values() {
        let n = idx.len();
        for (i, &j) in idx.iter().enumerate() {
            let f = &mut out[j].features;
            f[7] = rel(i, n);
            f[8] = f64::from(i == 0);
            f[9] = f64::from(i + 1 == n);
            f[10] = (n as f64).ln_1p();
        }
    }
    debug_assert!(
        out[start..]
            .iter()
            .all(|o| o.features.len() == FEATURES.len())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_hot_ranges_name_sources_and_kinds() {
        assert!(
            FEATURES[SOURCE_FEATURES]
                .iter()
                .all(|f| f.starts_with("source: "))
        );
        assert!(
            FEATURES[KIND_FEATURES]
                .iter()
                .all(|f| f.starts_with("kind: "))
        );
        assert_eq!(KIND_FEATURES.len(), 7);
    }

    fn seen(reply: &str) -> Observed {
        Observed {
            replies: vec![("p1".into(), reply.into())],
            colleagues: vec![("p1".into(), "Dana Whitfield".into())],
            tasks: vec![(
                "task/t".into(),
                "Find the approval limit for travel.".into(),
                "Dana Whitfield".into(),
            )],
            ..Observed::default()
        }
    }

    #[test]
    fn clauses_split_at_marks_but_not_inside_figures() {
        assert_eq!(
            clauses("The limit was 8,000, it is 7.5% now; ask Dana. Thanks"),
            [
                "The limit was 8,000",
                "it is 7.5% now",
                "ask Dana.",
                "Thanks"
            ]
        );
    }

    #[test]
    fn figures_carry_rank_grid_and_negation_features() {
        let c = candidates(&seen(
            "Hi! It is not 500 any more, the limit is 730 since 2025-09-01.",
        ));
        let fig = |t: &str| {
            c.iter()
                .find(|x| x.kind == CandKind::Figure && x.text == t)
                .unwrap()
        };
        let f500 = &fig("500").features;
        let f730 = &fig("730").features;
        assert_eq!(f500[22], 1.0, "500 is on the grid of 100");
        assert_eq!(f730[22], 0.0);
        assert_eq!(f500[26], 1.0, "its clause holds a negation");
        assert_eq!(f730[26], 0.0);
        assert_eq!(f730[16], 1.0, "730 is the largest figure");
        assert_eq!(f500[8], 1.0, "500 is the first figure");
        assert_eq!(f500[2], 1.0, "from a reply");
        assert_eq!(f500[5], 1.0, "from the assigner");
        // The date is a date, not a figure.
        assert!(
            c.iter()
                .any(|x| x.kind == CandKind::Date && x.text == "2025-09-01")
        );
        assert!(
            !c.iter()
                .any(|x| x.kind == CandKind::Figure && x.text == "2025")
        );
        assert!(c.iter().all(|x| x.features.len() == FEATURES.len()));
    }

    #[test]
    fn candidates_are_deduplicated_with_their_recurrence() {
        let mut s = seen("The code is AB-1234. Again: AB-1234.");
        s.files
            .insert("drive/x.md".into(), "- AB-1234\n- CD-5678\n".into());
        let c = candidates(&s);
        let ids: Vec<&Candidate> = c.iter().filter(|x| x.kind == CandKind::Id).collect();
        assert_eq!(ids.len(), 2);
        let ab = ids.iter().find(|x| x.text == "AB-1234").unwrap();
        assert!(ab.features[33] > (2.0f64).ln_1p(), "three occurrences");
        assert_eq!(ab.features[34], 2.0, "in a file and a reply");
        let items: Vec<&str> = c
            .iter()
            .filter(|x| x.kind == CandKind::ListItem)
            .map(|x| x.text.as_str())
            .collect();
        assert_eq!(items, ["AB-1234", "CD-5678"]);
    }
}
