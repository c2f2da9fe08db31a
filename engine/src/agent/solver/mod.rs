//! The independent solver: works every task out from what the tools show.
//!
//! Unlike the oracle it never looks at a scenario: it recognises each released
//! task's family from its objective and hands it to a [`Job`] that reads the files,
//! asks colleagues specific questions and computes the answer itself. Agreement
//! between its answers and the generators' expected ones is the evidence that an
//! instance is solvable from what an agent can observe.
//!
//! The scheduler makes one call per decision: the first job (in release order) with
//! a call ready; when none has, it waits for the next notification (or the earliest
//! time a job asked to be woken at).

mod ads_strategy;
mod attendance;
mod changed_requirement;
mod data_completion;
mod kb_fix;

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Agent, AgentFuture};
use crate::sim::{Decision, Observation, ToolResult};
use crate::time::{Epoch, SimTime};
use crate::tools::ToolCall;
use crate::world::Notification;

/// A released task as the agent was told about it.
#[derive(Debug, Clone)]
pub(crate) struct Brief {
    /// Objective text.
    pub objective: String,
    /// Deadline, if it could be read.
    pub deadline: Option<SimTime>,
}

/// A colleague's message.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    /// Sender key.
    pub from: String,
    /// Sender name.
    pub from_name: String,
    /// Text.
    pub text: String,
}

/// What a job wants next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// Make this call (tool name, arguments).
    Call(&'static str, Value),
    /// Nothing until a message arrives.
    Idle,
    /// Nothing before this time (or a message).
    Until(SimTime),
    /// Finished.
    Done,
}

/// Solves one task.
pub(crate) trait Job: Send {
    /// The next step, at time `now`.
    fn next(&mut self, now: SimTime) -> Next;
    /// The result of the job's last call.
    fn on_result(&mut self, r: &ToolResult);
    /// A message from a colleague (every job sees every message).
    fn on_message(&mut self, m: &Incoming);
}

/// The families this solver knows, tried in order.
fn recognise(brief: &Brief) -> Option<Box<dyn Job>> {
    attendance::recognise(brief)
        .or_else(|| data_completion::recognise(brief))
        .or_else(|| ads_strategy::recognise(brief))
        .or_else(|| kb_fix::recognise(brief))
        .or_else(|| changed_requirement::recognise(brief))
}

/// The text content of a `read_file` result.
pub(crate) fn file_text(r: &ToolResult) -> Option<&str> {
    r.result.as_ref()?.get("content")?.as_str()
}

/// The backticked paths of a message, those in paragraphs that mention one of
/// `topic` first (a colleague may answer several questions in one reply).
pub(crate) fn paths_about(text: &str, topic: &[&str]) -> Vec<String> {
    let mut near = Vec::new();
    let mut other = Vec::new();
    for para in text.split("\n\n") {
        let lower = para.to_lowercase();
        let on_topic = topic.iter().any(|t| lower.contains(t));
        for p in para.split('`').skip(1).step_by(2) {
            if on_topic { &mut near } else { &mut other }.push(p.to_owned());
        }
    }
    near.extend(other);
    near
}

/// Orders `paths` (stably) by how well their folders fit `near`'s: shared folder
/// names count for, extra ones against. When a colleague repeats an earlier day's
/// answer beside today's, today's files sit beside today's data (`.../day2/`).
pub(crate) fn rank_by_folder(paths: &mut [String], near: &str) {
    let ours: Vec<&str> = near.split('/').collect();
    let fit = |p: &String| -> i64 {
        let dirs: Vec<&str> = p.split('/').collect();
        let dirs = &dirs[..dirs.len().saturating_sub(1)];
        dirs.iter()
            .map(|d| if ours.contains(d) { 1 } else { -1 })
            .sum()
    };
    paths.sort_by_key(|p| std::cmp::Reverse(fit(p)));
}

/// `Wed 2025-10-01 18:00` (as tasks show deadlines) as sim time.
fn parse_shown(epoch: &Epoch, shown: &str) -> Option<SimTime> {
    let rest = shown.split_once(' ')?.1.trim();
    epoch.parse(&rest.replacen(' ', "T", 1)).ok()
}

/// The solver agent.
#[derive(Default)]
pub struct Solver {
    epoch: Option<Epoch>,
    jobs: Vec<(String, Box<dyn Job>)>,
    done: Vec<bool>,
    /// The job whose call is in flight.
    pending: Option<usize>,
    calls: u64,
    /// Tasks seen, so a repeated notification starts nothing twice.
    seen: BTreeSet<String>,
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("jobs", &self.jobs.len())
            .field("calls", &self.calls)
            .finish()
    }
}

impl Solver {
    /// A solver with no tasks yet.
    pub fn new() -> Solver {
        Solver::default()
    }

    fn absorb(&mut self, n: &Notification) {
        match n {
            Notification::TaskReleased {
                task,
                objective,
                deadline,
                ..
            } => {
                if !self.seen.insert(task.clone()) {
                    return;
                }
                let brief = Brief {
                    objective: objective.clone(),
                    deadline: self.epoch.as_ref().and_then(|e| parse_shown(e, deadline)),
                };
                if let Some(job) = recognise(&brief) {
                    self.jobs.push((task.clone(), job));
                    self.done.push(false);
                }
            }
            Notification::Message {
                from,
                from_name,
                text,
                ..
            } => {
                let m = Incoming {
                    from: from.clone(),
                    from_name: from_name.clone(),
                    text: text.clone(),
                };
                for (_, j) in &mut self.jobs {
                    j.on_message(&m);
                }
            }
            _ => {}
        }
    }

    fn call(&mut self, name: &str, args: Value) -> ToolCall {
        self.calls += 1;
        ToolCall {
            id: format!("solver-{}", self.calls),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    fn next(&mut self, now: SimTime) -> ToolCall {
        let mut wake: Option<SimTime> = None;
        let mut ready = None;
        for (i, ((_, job), done)) in self.jobs.iter_mut().zip(&mut self.done).enumerate() {
            if *done {
                continue;
            }
            match job.next(now) {
                Next::Call(tool, args) => {
                    ready = Some((i, tool, args));
                    break;
                }
                Next::Done => *done = true,
                Next::Idle => {}
                Next::Until(t) => wake = Some(wake.map_or(t, |w: SimTime| w.min(t))),
            }
        }
        if let Some((i, tool, args)) = ready {
            self.pending = Some(i);
            return self.call(tool, args);
        }
        self.pending = None;
        let args = match (wake, &self.epoch) {
            (Some(t), Some(e)) => serde_json::json!({"until": e.iso(t)}),
            _ => serde_json::json!({}),
        };
        self.call("wait", args)
    }
}

impl Agent for Solver {
    fn name(&self) -> String {
        "solver".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        if let Some(b) = &obs.briefing {
            self.epoch = Epoch::from_timestamp(&b.day_starts).ok();
        }
        for r in &obs.results {
            if let Some(i) = self.pending.take()
                && r.tool != "wait"
            {
                self.jobs[i].1.on_result(r);
            }
            for n in &r.notifications {
                self.absorb(n);
            }
        }
        for n in &obs.notifications {
            self.absorb(n);
        }
        let call = self.next(obs.t);
        Box::pin(async move { Ok(Decision { calls: vec![call] }) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_on_the_topic_come_first() {
        let t = "Sales: see `drive/a.md`.\n\nThe attendance rules are in `drive/b.md`.";
        assert_eq!(
            paths_about(t, &["attendance"]),
            vec!["drive/b.md", "drive/a.md"]
        );
    }

    #[test]
    fn shown_deadlines_parse() {
        let e = Epoch::from_timestamp("2025-10-01T09:00:00").unwrap();
        assert_eq!(
            parse_shown(&e, "Wed 2025-10-01 18:00"),
            Some(SimTime(18 * 3600))
        );
        assert_eq!(
            parse_shown(&e, "Thu 2025-10-02 09:30"),
            Some(SimTime(86_400 + 9 * 3600 + 1800))
        );
        assert_eq!(parse_shown(&e, "soon"), None);
    }
}
