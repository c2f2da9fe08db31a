//! The independent solver: an agent that recognises each released task's family from
//! its objective and solves it from what the tools show, never from the scenario's
//! hidden data (expected answers, clue texts, plans, other people's calendars).
//!
//! The desk here keeps the observations (colleagues, messages, announcements) and
//! drives one [`TaskSolver`] per released task, one call per decision: the task
//! whose solver has something to do with the earliest deadline goes first; when
//! none has, it waits for the next notification (or the earliest time a solver
//! asked to be woken).

pub mod families_b;
mod handoff_chain;
mod meeting_attend;
mod meeting_book;
mod resume_select;
mod sales;
mod transaction_review;
mod urgent_interrupt;
mod website_monitor;

use serde_json::{Value, json};

pub use families_b::{Act, Colleague, Cx, Heard, Said, TaskInfo, TaskSolver};

use super::{Agent, AgentFuture};
use crate::sim::{Briefing, Decision, Observation, ToolResult};
use crate::time::{Epoch, SimTime};
use crate::tools::ToolCall;
use crate::world::Notification;

struct Slot {
    info: TaskInfo,
    deadline: SimTime,
    order: usize,
    solver: Box<dyn TaskSolver>,
    /// The result of its last call, not yet handed back.
    pending: Option<ToolResult>,
    /// Whether a call of its is in flight.
    waiting: bool,
    done: bool,
}

/// The solver agent.
pub struct Solver {
    epoch: Option<Epoch>,
    briefing: Option<Briefing>,
    colleagues: Vec<Colleague>,
    asked_colleagues: bool,
    inbox: Vec<Heard>,
    said: Vec<Said>,
    slots: Vec<Slot>,
    /// Tasks released that no solver recognised.
    unknown: Vec<TaskInfo>,
    /// Which slot made the call in flight (by call id).
    in_flight: Option<(String, Option<usize>)>,
    calls: u64,
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("tasks", &self.slots.len())
            .finish()
    }
}

impl Default for Solver {
    fn default() -> Self {
        Self::new()
    }
}

impl Solver {
    /// A fresh solver.
    pub fn new() -> Solver {
        Solver {
            epoch: None,
            briefing: None,
            colleagues: Vec::new(),
            asked_colleagues: false,
            inbox: Vec::new(),
            said: Vec::new(),
            slots: Vec::new(),
            unknown: Vec::new(),
            in_flight: None,
            calls: 0,
        }
    }

    /// Tasks released that no solver recognised (titles).
    pub fn unrecognised(&self) -> Vec<String> {
        self.unknown.iter().map(|t| t.title.clone()).collect()
    }

    fn absorb(&mut self, n: &Notification) {
        match n {
            Notification::Message {
                thread, from, text, ..
            } => self.inbox.push(Heard {
                from: from.clone(),
                thread: thread.clone(),
                text: text.clone(),
            }),
            Notification::Announcement { meeting, text, .. } => self.said.push(Said {
                meeting: meeting.clone(),
                text: text.clone(),
            }),
            Notification::TaskReleased {
                task,
                title,
                objective,
                assigned_by,
                deadline,
                ..
            } => {
                if self.slots.iter().any(|s| &s.info.key == task) {
                    return;
                }
                let info = TaskInfo {
                    key: task.clone(),
                    title: title.clone(),
                    objective: objective.clone(),
                    assigned_by: assigned_by.clone(),
                    deadline: deadline.clone(),
                };
                let deadline = self
                    .epoch
                    .and_then(|e| families_b::parse_shown(&e, deadline))
                    .unwrap_or(SimTime(u64::MAX));
                match families_b::solver_for(&info) {
                    Some(solver) => {
                        let order = self.slots.len();
                        self.slots.push(Slot {
                            info,
                            deadline,
                            order,
                            solver,
                            pending: None,
                            waiting: false,
                            done: false,
                        })
                    }
                    None => self.unknown.push(info),
                }
            }
            _ => {}
        }
    }

    fn take_result(&mut self, r: &ToolResult) {
        let Some((id, slot)) = self.in_flight.take() else {
            return;
        };
        if id != r.call_id {
            return;
        }
        match slot {
            Some(i) => {
                let s = &mut self.slots[i];
                s.pending = Some(r.clone());
                s.waiting = false;
            }
            None => {
                if r.tool == "list_colleagues"
                    && let Some(list) = r
                        .result
                        .as_ref()
                        .and_then(|v| v.get("colleagues"))
                        .and_then(Value::as_array)
                {
                    let s = |c: &Value, k: &str| {
                        c.get(k).and_then(Value::as_str).unwrap_or("").to_owned()
                    };
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
            }
        }
    }

    fn next(&mut self, now: SimTime) -> ToolCall {
        self.calls += 1;
        let id = format!("solver-{}", self.calls);
        if !self.asked_colleagues {
            self.asked_colleagues = true;
            self.in_flight = Some((id.clone(), None));
            return ToolCall {
                id,
                name: "list_colleagues".into(),
                arguments: "{}".into(),
            };
        }
        let epoch = self
            .epoch
            .unwrap_or(Epoch::from_timestamp("2025-01-01T00:00").expect("literal"));
        let (me, manager) = self
            .briefing
            .as_ref()
            .map_or((String::new(), String::new()), |b| {
                (b.you.clone(), b.manager.clone())
            });
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&i| (self.slots[i].deadline, self.slots[i].order));
        let mut wake: Option<SimTime> = None;
        for i in order {
            if self.slots[i].done || self.slots[i].waiting {
                continue;
            }
            let cx = Cx {
                now,
                epoch,
                me: &me,
                manager: &manager,
                colleagues: &self.colleagues,
                inbox: &self.inbox,
                said: &self.said,
            };
            let slot = &mut self.slots[i];
            let last = slot.pending.take();
            match slot.solver.step(&cx, last.as_ref()) {
                Act::Call(tool, args) => {
                    slot.waiting = true;
                    self.in_flight = Some((id.clone(), Some(i)));
                    return ToolCall {
                        id,
                        name: tool.into(),
                        arguments: args.to_string(),
                    };
                }
                Act::Idle(until) => {
                    if let Some(t) = until {
                        wake = Some(wake.map_or(t, |w: SimTime| w.min(t)));
                    }
                }
                Act::Done => slot.done = true,
            }
        }
        let args = match wake {
            Some(t) if t > now => json!({"until": epoch.iso(t)}),
            Some(_) => json!({"minutes": 1}),
            None => json!({}),
        };
        ToolCall {
            id,
            name: "wait".into(),
            arguments: args.to_string(),
        }
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
        for n in &obs.notifications {
            self.absorb(n);
        }
        for r in &obs.results {
            // Notifications come before the result is handed back, so a solver sees
            // the messages that arrived while its call ran.
            for n in &r.notifications {
                self.absorb(n);
            }
            self.take_result(r);
        }
        let call = self.next(obs.t);
        Box::pin(async move { Ok(Decision { calls: vec![call] }) })
    }
}
