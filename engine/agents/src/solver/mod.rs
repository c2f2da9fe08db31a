//! The independent solver: works every task out from what the tools show.
//!
//! Unlike the oracle it never looks at a scenario: it recognises each released
//! task's family from its objective and hands it to a [`Job`] that reads the files,
//! asks colleagues specific questions and computes the answer itself. Agreement
//! between its answers and the generators' expected ones is the evidence that an
//! instance is solvable from what an agent can observe.
//!
//! The desk keeps what the agent has observed (the colleague list, every message) and
//! makes one call per decision: among the jobs with a call ready, the one whose task
//! is due first (then the one released first); when none has, it waits for the next
//! notification, or the earliest time a job asked to be woken at.

mod ads_strategy;
mod attendance;
mod changed_requirement;
mod common;
mod data_completion;
mod event_planning;
mod handoff_chain;
mod kb_fix;
mod meeting_attend;
mod meeting_book;
mod resume_select;
mod sales;
mod transaction_review;
mod urgent_interrupt;
mod website_monitor;

use std::collections::BTreeSet;

use serde_json::{Value, json};

pub(crate) use common::*;

use crate::{Agent, AgentFuture};
use tbsim_core::protocol::Notification;
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Briefing, Decision, Observation, ToolResult};
use tbsim_core::time::{Epoch, SimTime};

/// A released task as the agent was told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Brief {
    /// Task key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Objective text.
    pub objective: String,
    /// Who assigned it (key or name, as notified).
    pub assigned_by: String,
    /// Deadline, if it could be read.
    pub deadline: Option<SimTime>,
}

/// A colleague as `list_colleagues` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Colleague {
    /// Key (`npc/...`).
    pub key: String,
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
    /// Position.
    pub position: String,
}

/// A colleague's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Incoming {
    /// Sender key.
    pub from: String,
    /// Sender name.
    pub from_name: String,
    /// Thread key.
    pub thread: String,
    /// Text.
    pub text: String,
}

/// What the agent has observed, as a job sees it when asked for its next step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cx<'a> {
    /// Now.
    pub now: SimTime,
    /// The scenario clock (from the briefing's day start).
    pub epoch: Epoch,
    /// The agent's own name.
    pub me: &'a str,
    /// Everyone `list_colleagues` listed.
    pub colleagues: &'a [Colleague],
    /// Every message received, oldest first.
    pub inbox: &'a [Incoming],
}

impl Cx<'_> {
    /// Messages from `who` (a key) at inbox index `since` or later.
    pub fn replies_from(&self, who: &str, since: usize) -> Vec<&Incoming> {
        self.inbox
            .iter()
            .skip(since)
            .filter(|h| h.from == who)
            .collect()
    }

    /// The colleague with this key or name.
    pub fn colleague(&self, key_or_name: &str) -> Option<&Colleague> {
        self.colleagues
            .iter()
            .find(|c| c.key == key_or_name || c.name.eq_ignore_ascii_case(key_or_name))
    }

    /// Colleagues in a department (case-insensitive).
    pub fn in_department(&self, dept: &str) -> Vec<&Colleague> {
        self.colleagues
            .iter()
            .filter(|c| c.department.eq_ignore_ascii_case(dept))
            .collect()
    }

    /// Parses a time as tools show it (`Wed 2025-10-01 09:30`) or accept it.
    pub fn parse_time(&self, s: &str) -> Option<SimTime> {
        parse_shown(&self.epoch, s)
    }
}

/// What a job wants next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// Make this call (tool name, arguments).
    Call(&'static str, Value),
    /// Nothing until something new is observed.
    Idle,
    /// Nothing before this time (or something new).
    Until(SimTime),
    /// Finished.
    Done,
}

/// Solves one task. A job may take its call's result as it comes back
/// ([`Job::on_result`], before the messages that came with it) or as the `last`
/// argument of its next step; colleagues' messages it may take as they arrive
/// ([`Job::on_message`]) or read from [`Cx::inbox`].
pub(crate) trait Job: Send {
    /// The next step. `last` is the result of this job's previous call, given once,
    /// on the first step after it came back.
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next;
    /// The result of this job's last call, as soon as it comes back.
    fn on_result(&mut self, _r: &ToolResult) {}
    /// A message from a colleague (every job sees every message).
    fn on_message(&mut self, _m: &Incoming) {}
}

/// The job for a released task, recognised from its objective; families tried in
/// order (the more specific objectives first).
fn recognise(brief: &Brief) -> Option<Box<dyn Job>> {
    attendance::recognise(brief)
        .or_else(|| data_completion::recognise(brief))
        .or_else(|| ads_strategy::recognise(brief))
        .or_else(|| kb_fix::recognise(brief))
        .or_else(|| changed_requirement::recognise(brief))
        .or_else(|| transaction_review::recognise(brief))
        .or_else(|| resume_select::recognise(brief))
        .or_else(|| sales::recognise(brief))
        .or_else(|| handoff_chain::recognise(brief))
        .or_else(|| website_monitor::recognise(brief))
        .or_else(|| meeting_book::recognise(brief))
        .or_else(|| event_planning::recognise(brief))
        .or_else(|| urgent_interrupt::recognise(brief))
        .or_else(|| meeting_attend::recognise(brief))
}

/// A job and its bookkeeping on the desk.
struct Slot {
    brief: Brief,
    job: Box<dyn Job>,
    /// The result of its last call, not yet handed to its next step.
    last: Option<ToolResult>,
    done: bool,
}

/// The solver agent.
#[derive(Default)]
pub struct Solver {
    epoch: Option<Epoch>,
    briefing: Option<Briefing>,
    colleagues: Vec<Colleague>,
    asked_colleagues: bool,
    inbox: Vec<Incoming>,
    slots: Vec<Slot>,
    /// Titles of released tasks no job recognised.
    unknown: Vec<String>,
    /// The slot whose call is in flight (`None`: the desk's own call).
    pending: Option<Option<usize>>,
    calls: u64,
    /// Tasks seen, so a repeated notification starts nothing twice.
    seen: BTreeSet<String>,
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("jobs", &self.slots.len())
            .field("calls", &self.calls)
            .finish()
    }
}

impl Solver {
    /// A solver with no tasks yet.
    pub fn new() -> Solver {
        Solver::default()
    }

    /// Titles of the released tasks no job recognised.
    pub fn unrecognised(&self) -> &[String] {
        &self.unknown
    }

    fn absorb(&mut self, n: &Notification) {
        match n {
            Notification::TaskReleased {
                task,
                title,
                objective,
                assigned_by,
                deadline,
                ..
            } => {
                if !self.seen.insert(task.clone()) {
                    return;
                }
                let brief = Brief {
                    key: task.clone(),
                    title: title.clone(),
                    objective: objective.clone(),
                    assigned_by: assigned_by.clone(),
                    deadline: self.epoch.as_ref().and_then(|e| parse_shown(e, deadline)),
                };
                match recognise(&brief) {
                    Some(job) => self.slots.push(Slot {
                        brief,
                        job,
                        last: None,
                        done: false,
                    }),
                    None => self.unknown.push(brief.title),
                }
            }
            Notification::Message {
                thread,
                from,
                from_name,
                text,
                ..
            } => {
                let m = Incoming {
                    from: from.clone(),
                    from_name: from_name.clone(),
                    thread: thread.clone(),
                    text: text.clone(),
                };
                for s in &mut self.slots {
                    s.job.on_message(&m);
                }
                self.inbox.push(m);
            }
            _ => {}
        }
    }

    /// Hands a result to the job that asked for it (or keeps the colleague list).
    fn take_result(&mut self, r: &ToolResult) {
        match self.pending.take() {
            Some(Some(i)) => {
                let s = &mut self.slots[i];
                s.job.on_result(r);
                s.last = Some(r.clone());
            }
            Some(None) if r.tool == "list_colleagues" => {
                let Some(list) = r
                    .result
                    .as_ref()
                    .and_then(|v| v.get("colleagues"))
                    .and_then(Value::as_array)
                else {
                    return;
                };
                let s =
                    |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                self.colleagues = list
                    .iter()
                    .map(|c| Colleague {
                        key: s(c, "key"),
                        name: s(c, "name"),
                        department: s(c, "department"),
                        position: s(c, "position"),
                    })
                    .collect();
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
        // Who is who is needed to address anyone; the list is asked for once.
        if !self.asked_colleagues {
            self.asked_colleagues = true;
            self.pending = Some(None);
            return self.call("list_colleagues", json!({}));
        }
        let epoch = self
            .epoch
            .unwrap_or(Epoch::from_timestamp("2025-01-01T00:00").expect("literal"));
        let me = self
            .briefing
            .as_ref()
            .map_or(String::new(), |b| b.you.clone());
        // The task due first goes first: an urgent request released late must not
        // wait behind a long task's questions.
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&i| (self.slots[i].brief.deadline.unwrap_or(SimTime(u64::MAX)), i));
        let mut wake: Option<SimTime> = None;
        for i in order {
            if self.slots[i].done {
                continue;
            }
            let cx = Cx {
                now,
                epoch,
                me: &me,
                colleagues: &self.colleagues,
                inbox: &self.inbox,
            };
            let slot = &mut self.slots[i];
            let last = slot.last.take();
            match slot.job.step(&cx, last.as_ref()) {
                Next::Call(tool, args) => {
                    self.pending = Some(Some(i));
                    return self.call(tool, args);
                }
                Next::Done => slot.done = true,
                Next::Idle => {}
                Next::Until(t) => wake = Some(wake.map_or(t, |w: SimTime| w.min(t))),
            }
        }
        self.pending = None;
        let args = match wake {
            Some(t) if t > now => json!({"until": epoch.iso(t)}),
            // A time already past: look again a minute later.
            Some(_) => json!({"minutes": 1}),
            None => json!({}),
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
            self.briefing = Some(b.clone());
        }
        for r in &obs.results {
            // The result first, then what arrived with it: a job that just asked a
            // question is then ready for the reply.
            self.take_result(r);
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
