//! Bookings a content-blind policy can make: the slot and title copied from an
//! objective, the guests picked by generic rules over the directory, the replies and
//! the tool errors (everyone; a department or its managers when the objective names
//! the department; the people the objective names; each of those minus whoever
//! replied with a refusal word, minus whoever a tool error named, minus whoever's
//! reply names another colleague or a time, or only those who replied). None of
//! these rules understands a reply; a booking checkpoint that one of them passes in
//! many instances is a leak like any echoed number.

use std::collections::{BTreeMap, BTreeSet};

use super::observe::Observed;

/// One synthesised booking.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BookingFill {
    /// Title.
    pub title: String,
    /// Start, as written for `book_meeting` (`YYYY-MM-DDTHH:MM`, or `HH:MM`).
    pub start: String,
    /// End, likewise.
    pub end: String,
    /// Invitee keys, sorted.
    pub attendees: Vec<String>,
}

/// Words a refusal tends to use; matched as whole lower-case words.
const REFUSAL_WORDS: &[&str] = &[
    "no",
    "not",
    "can't",
    "cannot",
    "won't",
    "unable",
    "busy",
    "unavailable",
    "conflict",
    "clash",
    "sorry",
    "afraid",
];

/// Whether a guest rule keeps a person (by key).
type Keep<'a> = &'a dyn Fn(&str) -> bool;

/// Positions that lead a department.
const LEAD_WORDS: &[&str] = &["manager", "head", "director", "lead"];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('\u{2019}', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `needle` occurs in `hay` on word boundaries (case-sensitive).
fn has_word(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The `HH:MM` clock times of a text, in order.
pub fn clock_times(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len() {
        if b[i] != b':' || i == 0 || i + 2 >= b.len() {
            continue;
        }
        let (h1, m1, m2) = (b[i - 1], b[i + 1], b[i + 2]);
        if !(h1.is_ascii_digit() && m1.is_ascii_digit() && m2.is_ascii_digit()) {
            continue;
        }
        if b.get(i + 3).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let h0 = (i >= 2 && b[i - 2].is_ascii_digit()).then(|| b[i - 2]);
        if i >= 3 && h0.is_some() && b[i - 3].is_ascii_digit() {
            continue;
        }
        let hour = match h0 {
            Some(h) => format!("{}{}", h as char, h1 as char),
            None => format!("0{}", h1 as char),
        };
        if hour.as_str() < "24" && m1 < b'6' {
            out.push(format!("{hour}:{}{}", m1 as char, m2 as char));
        }
    }
    out
}

/// The first `YYYY-MM-DD` date of a text.
fn first_date(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let s = &b[i..i + 10];
        let shape = s.iter().enumerate().all(|(j, c)| match j {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
        let bounded = (i == 0 || !b[i - 1].is_ascii_digit())
            && b.get(i + 10).is_none_or(|c| !c.is_ascii_digit());
        (shape && bounded).then(|| &text[i..i + 10])
    })
}

/// The first text in double quotes, else the whole objective.
fn title_of(objective: &str) -> (String, &'static str) {
    for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}')] {
        if let Some(a) = objective.find(open) {
            let rest = &objective[a + open.len_utf8()..];
            if let Some(b) = rest.find(close).filter(|&b| b > 0) {
                return (rest[..b].to_owned(), "the objective's quoted title");
            }
        }
    }
    (objective.to_owned(), "the objective as title")
}

/// Every booking candidate, with the labels of the rules that give it.
pub fn candidates(seen: &Observed) -> Vec<(BookingFill, Vec<String>)> {
    let everyone: BTreeSet<&str> = seen.colleagues.iter().map(|c| c.0.as_str()).collect();
    if everyone.is_empty() {
        return Vec::new();
    }
    let first_name = |full: &str| full.split_whitespace().next().unwrap_or("").to_owned();
    let mut replies: BTreeMap<&str, String> = BTreeMap::new();
    for (from, text) in &seen.replies {
        let r = replies.entry(from.as_str()).or_default();
        r.push_str(text);
        r.push('\n');
    }
    let refused: BTreeSet<&str> = replies
        .iter()
        .filter(|(_, t)| words(t).iter().any(|w| REFUSAL_WORDS.contains(&w.as_str())))
        .map(|(k, _)| *k)
        .collect();
    let in_errors: BTreeSet<&str> = seen
        .colleagues
        .iter()
        .filter(|(k, name)| {
            seen.errors
                .iter()
                .any(|e| has_word(e, name) || has_word(e, k))
        })
        .map(|c| c.0.as_str())
        .collect();
    let not_novel: BTreeSet<&str> = replies
        .iter()
        .filter(|(from, t)| {
            !clock_times(t).is_empty()
                || seen
                    .colleagues
                    .iter()
                    .any(|(k, n)| k != *from && has_word(t, &first_name(n)))
        })
        .map(|(k, _)| *k)
        .collect();
    let replied: BTreeSet<&str> = replies.keys().copied().collect();

    let mut out: BTreeMap<BookingFill, Vec<String>> = BTreeMap::new();
    for (_, objective, _) in &seen.tasks {
        let times = clock_times(objective);
        if times.len() < 2 {
            continue;
        }
        let date = first_date(objective);
        let at = |t: &str| date.map_or_else(|| t.to_owned(), |d| format!("{d}T{t}"));
        let (title, title_rule) = title_of(objective);
        let departments: BTreeSet<&str> = seen
            .directory
            .iter()
            .map(|d| d.1.as_str())
            .filter(|d| has_word(objective, d))
            .collect();
        let in_named_departments = |k: &str| {
            seen.directory
                .iter()
                .any(|d| d.0 == k && departments.contains(d.1.as_str()))
        };
        let leads = |k: &str| {
            seen.directory.iter().any(|d| {
                d.0 == k && {
                    let p = d.2.to_lowercase();
                    LEAD_WORDS.iter().any(|w| has_word(&p, w))
                }
            })
        };
        let named: BTreeSet<&str> = seen
            .colleagues
            .iter()
            .filter(|(_, n)| has_word(objective, n) || has_word(objective, &first_name(n)))
            .map(|c| c.0.as_str())
            .collect();
        let bases: [(&str, BTreeSet<&str>); 4] = [
            ("every colleague", everyone.clone()),
            (
                "the departments the objective names",
                everyone
                    .iter()
                    .copied()
                    .filter(|k| in_named_departments(k))
                    .collect(),
            ),
            (
                "the leads of the departments the objective names",
                everyone
                    .iter()
                    .copied()
                    .filter(|k| in_named_departments(k) && leads(k))
                    .collect(),
            ),
            ("the people the objective names", named),
        ];
        let filters: [(&str, Keep<'_>); 5] = [
            ("", &|_| true),
            (" minus refusal words in replies", &|k| !refused.contains(k)),
            (" minus those a tool error names", &|k| {
                !in_errors.contains(k)
            }),
            (" minus replies naming someone or a time", &|k| {
                !not_novel.contains(k)
            }),
            (" who replied", &|k| replied.contains(k)),
        ];
        // The brief's slot is its first two times; later pairs are other readings.
        for pair in times.windows(2).take(2) {
            let slot_rule = if pair[0] == times[0] {
                "the objective's first two times"
            } else {
                "the objective's second and third times"
            };
            for (base, set) in &bases {
                for (filter, keep) in &filters {
                    let attendees: Vec<String> = set
                        .iter()
                        .copied()
                        .filter(|k| keep(k))
                        .map(str::to_owned)
                        .collect();
                    if attendees.is_empty() {
                        continue;
                    }
                    let fill = BookingFill {
                        title: title.clone(),
                        start: at(&pair[0]),
                        end: at(&pair[1]),
                        attendees,
                    };
                    let label =
                        format!("booking at {slot_rule} under {title_rule} with {base}{filter}");
                    let labels = out.entry(fill).or_default();
                    if !labels.contains(&label) {
                        labels.push(label);
                        labels.sort();
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_and_dates_are_found_on_their_boundaries() {
        assert_eq!(
            clock_times("today (2025-10-01) from 9:30 to 14:00, not 123:45 or 12:345"),
            ["09:30", "14:00"]
        );
        assert_eq!(first_date("on 2025-10-01 at 9"), Some("2025-10-01"));
        assert_eq!(first_date("12025-10-01"), None);
    }

    #[test]
    fn guests_come_from_generic_rules_only() {
        let seen = Observed {
            tasks: vec![(
                "task/t".into(),
                "Book \"Sync\" today (2025-10-01) from 14:00 to 15:00 for the Sales department."
                    .into(),
                "npc/m".into(),
            )],
            colleagues: vec![
                ("npc/a".into(), "Ann Lee".into()),
                ("npc/b".into(), "Bo Chan".into()),
                ("npc/c".into(), "Cy Ode".into()),
            ],
            directory: vec![
                ("npc/a".into(), "Sales".into(), "Sales Manager".into()),
                ("npc/b".into(), "Sales".into(), "Analyst".into()),
                ("npc/c".into(), "Legal".into(), "Counsel".into()),
            ],
            replies: vec![
                ("npc/a".into(), "Count me in.".into()),
                ("npc/b".into(), "Sorry, I'm busy then.".into()),
            ],
            ..Observed::default()
        };
        let c = candidates(&seen);
        let find = |who: &[&str]| {
            c.iter()
                .find(|(f, _)| f.attendees == who)
                .map(|(f, l)| (f.clone(), l.clone()))
        };
        let (f, labels) = find(&["npc/a"]).expect("the sales lead, or sales minus refusals");
        assert_eq!(f.title, "Sync");
        assert_eq!(
            (f.start.as_str(), f.end.as_str()),
            ("2025-10-01T14:00", "2025-10-01T15:00")
        );
        assert!(
            labels.iter().any(|l| l.ends_with(
                "with the departments the objective names minus refusal words in replies"
            )),
            "{labels:?}"
        );
        assert!(find(&["npc/a", "npc/b"]).is_some());
        assert!(find(&["npc/a", "npc/b", "npc/c"]).is_some());
    }
}
