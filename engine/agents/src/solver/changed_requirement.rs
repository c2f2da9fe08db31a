//! Changed requirement: select large items from a monthly table, then follow the
//! assigner's later change (threshold, dates, file shape or recipient).
//!
//! The total goes out only once no further change can be expected: after a change
//! arrives, or half an hour before the deadline.

use serde_json::{Value, json};

use super::{Brief, Cx, Incoming, Job, Next, file_text};
use tbsim_core::protocol::ToolResult;
use tbsim_core::time::SimTime;

/// What the latest instructions ask for.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    from: u32,
    to: u32,
    min: u64,
    records: bool,
    recipient: String,
}

#[derive(Debug)]
pub(crate) struct ChangedRequirement {
    assigner: String,
    data: String,
    out: String,
    rule: Rule,
    deadline: Option<SimTime>,
    /// id, day, amount.
    rows: Option<Vec<(String, u32, u64)>>,
    requested_read: bool,
    /// The rule the file on disk follows.
    written: Option<Rule>,
    /// The rule the sent total follows.
    sent: Option<Rule>,
    changed: bool,
}

/// `12th` -> 12.
fn day_of(ordinal: &str) -> Option<u32> {
    ordinal
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()
}

/// "1st to 19th September" (the first `A to B` of ordinals in `text`).
fn range_in(text: &str) -> Option<(u32, u32)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.windows(3).find_map(|w| {
        if w[1] != "to" || !w[0].ends_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        Some((day_of(w[0])?, day_of(w[2])?))
    })
}

/// The number before the first "EUR" after `marker`.
fn eur_after(text: &str, marker: &str) -> Option<u64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let before = &rest[..rest.find("EUR")?];
    before.split_whitespace().last()?.parse().ok()
}

fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

pub(crate) fn recognise(b: &Brief) -> Option<Box<dyn Job>> {
    let o = &b.objective;
    if !o.contains("may send changes before the deadline") {
        return None;
    }
    let assigner = o[..o.find(" needs last month's large ")?].trim().to_owned();
    let quoted = backticked(o);
    let data = quoted.iter().find(|q| q.ends_with(".csv"))?.to_string();
    let out = quoted
        .iter()
        .find(|q| q.starts_with("workspace/"))?
        .to_string();
    let (from, to) = range_in(&o[o.find(" dated ")?..])?;
    let min = eur_after(o, "amount of at least")?;
    Some(Box::new(ChangedRequirement {
        assigner: assigner.clone(),
        data,
        out,
        rule: Rule {
            from,
            to,
            min,
            records: false,
            recipient: assigner,
        },
        deadline: b.deadline,
        rows: None,
        requested_read: false,
        written: None,
        sent: None,
        changed: false,
    }))
}

impl ChangedRequirement {
    fn selection(&self) -> Vec<(String, u64)> {
        self.rows
            .iter()
            .flatten()
            .filter(|(_, d, a)| (self.rule.from..=self.rule.to).contains(d) && *a >= self.rule.min)
            .map(|(id, _, a)| (id.clone(), *a))
            .collect()
    }

    fn answer(&self) -> Value {
        let sel = self.selection();
        if self.rule.records {
            json!({"items": sel.iter().map(|(i, a)| json!({"id": i, "amount": a})).collect::<Vec<_>>()})
        } else {
            json!({"ids": sel.iter().map(|(i, _)| i).collect::<Vec<_>>()})
        }
    }
}

impl Job for ChangedRequirement {
    fn step(&mut self, cx: &Cx, _last: Option<&ToolResult>) -> Next {
        let now = cx.now;
        if self.rows.is_none() {
            if self.requested_read {
                // The table could not be read: nothing to base an answer on.
                return Next::Done;
            }
            self.requested_read = true;
            return Next::Call("read_file", json!({"path": self.data}));
        }
        if self.written.as_ref() != Some(&self.rule) {
            self.written = Some(self.rule.clone());
            return Next::Call(
                "write_file",
                json!({"path": self.out, "content": self.answer().to_string()}),
            );
        }
        let settle = self.deadline.map(|d| SimTime(d.0.saturating_sub(30 * 60)));
        let ready = self.changed || settle.is_some_and(|s| now >= s);
        if self.sent.as_ref() != Some(&self.rule) && ready {
            self.sent = Some(self.rule.clone());
            let sel = self.selection();
            let total: u64 = sel.iter().map(|s| s.1).sum();
            return Next::Call(
                "send_message",
                json!({"to": self.rule.recipient, "text": format!("The {} selected items come to {total} EUR in total.", sel.len())}),
            );
        }
        if self.changed && self.sent.as_ref() == Some(&self.rule) {
            return Next::Done;
        }
        match settle {
            Some(s) if s > now => Next::Until(s),
            Some(_) => Next::Done,
            None => Next::Idle,
        }
    }

    fn on_result(&mut self, r: &ToolResult) {
        if r.tool != "read_file" {
            return;
        }
        let Some(text) = file_text(r) else {
            return;
        };
        let rows = text
            .lines()
            .skip(1)
            .filter_map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                let id = cells.first()?.trim().to_owned();
                let day = cells.get(1)?.trim().rsplit('-').next()?.parse().ok()?;
                let amount = cells.last()?.trim().parse().ok()?;
                Some((id, day, amount))
            })
            .collect();
        self.rows = Some(rows);
    }

    fn on_message(&mut self, m: &Incoming) {
        if m.from_name != self.assigner || !m.text.contains("a change") {
            return;
        }
        let t = &m.text;
        if t.contains("\"items\"") {
            self.rule.records = true;
        } else if let Some(i) = t.find("send the total to ") {
            let rest = &t[i + "send the total to ".len()..];
            if let Some(end) = rest.find(" instead") {
                self.rule.recipient = rest[..end].trim().to_owned();
            }
        } else if let Some(v) = eur_after(t, "everything from") {
            self.rule.min = v;
        } else if let Some(i) = t.find("cover ")
            && let Some((a, b)) = range_in(&t[i..])
        {
            self.rule.from = a;
            self.rule.to = b;
        } else {
            return;
        }
        self.changed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ranges_and_amounts() {
        assert_eq!(
            range_in("dated 3rd to 19th September (inclusive)"),
            Some((3, 19))
        );
        assert_eq!(
            eur_after("want everything from 350 EUR up, not 400 EUR", "from"),
            Some(350)
        );
        assert_eq!(day_of("22nd"), Some(22));
    }
}
