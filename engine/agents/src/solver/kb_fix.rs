//! KB link fix: ask each chart owner named in the articles for their new chart IDs,
//! then save each article with only those IDs replaced.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Brief, Cx, Incoming, Job, Next, file_text};
use tbsim_core::protocol::ToolResult;

const MANUAL: &str = "drive/kb/kb_fix_manual.md";
/// Questions per owner beyond one per article before giving up on them.
const SPARE_ASKS: u32 = 2;

#[derive(Debug, Default)]
struct Owner {
    olds: Vec<String>,
    titles: Vec<String>,
    /// The old IDs of each article (same order as `titles`).
    by_title: Vec<Vec<String>>,
    asks: u32,
    /// Replies seen since the last question.
    answered: bool,
}

#[derive(Debug)]
pub(crate) struct KbFix {
    /// (source, output) per article.
    articles: Vec<(String, String)>,
    texts: BTreeMap<String, String>,
    manual_read: bool,
    reads: usize,
    owners: BTreeMap<String, Owner>,
    owners_known: bool,
    new_ids: BTreeMap<String, String>,
    written: usize,
}

pub(crate) fn recognise(b: &Brief) -> Option<Box<dyn Job>> {
    let o = &b.objective;
    if !o.contains("chart links are broken") {
        return None;
    }
    let articles: Vec<(String, String)> = o
        .lines()
        .filter_map(|l| {
            let q: Vec<&str> = l.split('`').skip(1).step_by(2).collect();
            (q.len() == 2 && l.contains("save as")).then(|| (q[0].to_owned(), q[1].to_owned()))
        })
        .collect();
    if articles.is_empty() {
        return None;
    }
    Some(Box::new(KbFix {
        articles,
        texts: BTreeMap::new(),
        manual_read: false,
        reads: 0,
        owners: BTreeMap::new(),
        owners_known: false,
        new_ids: BTreeMap::new(),
        written: 0,
    }))
}

/// (old id, owner) of every chart link line.
fn links(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let id = l.split("charts?id=").nth(1)?.split_whitespace().next()?;
            let owner = l
                .split("(Chart owner:")
                .nth(1)?
                .trim()
                .trim_end_matches(')');
            Some((id.to_owned(), owner.trim().to_owned()))
        })
        .collect()
}

fn first_name(full: &str) -> &str {
    full.split_whitespace().next().unwrap_or(full)
}

impl KbFix {
    fn collect_owners(&mut self) {
        for (src, _) in &self.articles {
            let Some(text) = self.texts.get(src) else {
                continue;
            };
            let title = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches('#')
                .trim()
                .to_owned();
            for (old, owner) in links(text) {
                let o = self.owners.entry(owner).or_default();
                o.olds.push(old.clone());
                match o.titles.iter().position(|t| *t == title) {
                    Some(i) => o.by_title[i].push(old),
                    None => {
                        o.titles.push(title.clone());
                        o.by_title.push(vec![old]);
                    }
                }
            }
        }
        self.owners_known = true;
    }

    fn resolved(&self, o: &Owner) -> bool {
        o.olds.iter().all(|id| self.new_ids.contains_key(id))
    }
}

impl Job for KbFix {
    fn step(&mut self, _cx: &Cx, _last: Option<&ToolResult>) -> Next {
        if !self.manual_read {
            self.manual_read = true;
            return Next::Call("read_file", json!({"path": MANUAL}));
        }
        if self.reads < self.articles.len() {
            let path = self.articles[self.reads].0.clone();
            self.reads += 1;
            return Next::Call("read_file", json!({"path": path}));
        }
        if !self.owners_known {
            self.collect_owners();
        }
        let mut waiting = false;
        let pending: Vec<String> = self
            .owners
            .iter()
            .filter(|(_, o)| !self.resolved(o))
            .map(|(k, _)| k.clone())
            .collect();
        for name in pending {
            let unresolved = |ids: &[String]| -> Vec<String> {
                ids.iter()
                    .filter(|id| !self.new_ids.contains_key(*id))
                    .cloned()
                    .collect()
            };
            let o = &self.owners[&name];
            let budget = o.titles.len() as u32 + SPARE_ASKS;
            if !(o.asks == 0 || (o.answered && o.asks < budget)) {
                if !o.answered {
                    waiting = true;
                }
                continue;
            }
            let open: Vec<(String, Vec<String>)> = o
                .titles
                .iter()
                .zip(&o.by_title)
                .map(|(t, ids)| (t.clone(), unresolved(ids)))
                .filter(|(_, ids)| !ids.is_empty())
                .collect();
            let text = if o.asks == 0 {
                format!(
                    "Hi {}, the chart links with IDs {} in our KB article(s) \"{}\" are broken since the charts were rebuilt. What are the new chart IDs?",
                    first_name(&name),
                    o.olds.join(", "),
                    o.titles.join("\", \"")
                )
            } else if open.len() > 1 {
                // Everything at once was too much for them: one article at a time.
                let (title, ids) = &open[0];
                format!(
                    "Hi {}, which new chart IDs replace {} in our KB article \"{title}\"?",
                    first_name(&name),
                    ids.join(", ")
                )
            } else {
                format!(
                    "Sorry to ask again: which new chart ID replaces each of these old chart IDs: {}?",
                    unresolved(&o.olds).join(", ")
                )
            };
            let o = self.owners.get_mut(&name).expect("listed");
            o.asks += 1;
            o.answered = false;
            return Next::Call("send_message", json!({"to": name, "text": text}));
        }
        if waiting {
            return Next::Idle;
        }
        if self.written < self.articles.len() {
            let (src, out) = self.articles[self.written].clone();
            self.written += 1;
            let mut text = self.texts.get(&src).cloned().unwrap_or_default();
            for (old, new) in &self.new_ids {
                text = text.replace(&format!("charts?id={old} "), &format!("charts?id={new} "));
            }
            return Next::Call("write_file", json!({"path": out, "content": text}));
        }
        Next::Done
    }

    fn on_result(&mut self, r: &ToolResult) {
        if r.tool != "read_file" {
            return;
        }
        if let (Some(text), Some(path)) = (
            file_text(r),
            r.result.as_ref().and_then(|v| v["path"].as_str()),
        ) {
            self.texts.insert(path.to_owned(), text.to_owned());
        }
    }

    fn on_message(&mut self, m: &Incoming) {
        let Some(owner) = self.owners.get_mut(&m.from_name) else {
            return;
        };
        owner.answered = true;
        // "- OLD123 (in ...) has four versions:" then one line per version,
        // "  NEW456: <what the owner says of it>": one live, the others withdrawn
        // or drafts, said in varied words (a live one may carry "not", a dead one
        // none), so the status is read from what the words mean.
        let mut old: Option<String> = None;
        for line in m.text.lines() {
            let w: Vec<&str> = line
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
                .collect();
            if let Some(o) = w.iter().find(|x| owner.olds.iter().any(|y| y == *x)) {
                old = Some((*o).to_owned());
            } else if let (Some(o), Some((id, status))) = (&old, line.trim().split_once(": "))
                && is_live(status)
            {
                self.new_ids.insert(o.clone(), id.trim().to_owned());
            }
        }
    }
}

/// Whether an owner's description of a chart version says it is the one to link:
/// not retired, replaced or taken down, not a draft, test, staging or sandbox copy, and
/// said to be current, live or in use ("not live yet" is a draft's).
fn is_live(status: &str) -> bool {
    let s = status.to_lowercase();
    let dead = [
        "withdrawn",
        "retired",
        "superseded",
        "replaced",
        "no longer",
        "taken down",
    ];
    let copies = [
        "copy", "sandbox", "snapshot", "export", "scratch", "frozen", "one-off",
    ];
    let unfinished = [
        "draft",
        "review",
        "test copy",
        "staging",
        "in progress",
        "reworked",
        "not live",
    ];
    let live = [
        "current",
        "live",
        "in use",
        "we use",
        "link this one",
        "link it",
    ];
    !dead
        .iter()
        .chain(&unfinished)
        .chain(&copies)
        .any(|w| s.contains(w))
        && live.iter().any(|w| s.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_versions_are_told_by_meaning_not_by_negation() {
        assert!(is_live("not going anywhere, it's the live one"));
        assert!(is_live("nothing newer exists, link this one"));
        assert!(!is_live("draft, not live yet, do not link"));
        assert!(!is_live("replaced by a later rebuild"));
        assert!(!is_live("being reworked by the analysts"));
        assert!(!is_live("a sandbox copy, not for articles"));
        assert!(!is_live("not maintained, a one-off export"));
    }

    #[test]
    fn link_lines_name_id_and_owner() {
        let t = "Intro\n\nChart: kb.internal/charts?id=OLD123456 (Chart owner: Dana Li)\n\nMore";
        assert_eq!(
            links(t),
            vec![("OLD123456".to_owned(), "Dana Li".to_owned())]
        );
    }
}
