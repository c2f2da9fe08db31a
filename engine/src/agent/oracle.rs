//! The oracle: solves every task through the ordinary tools by following the plan
//! that generation stored with it.
//!
//! It reads the hidden plans (that is its privilege) but changes the world only
//! through tool calls, and it acts only on tasks it has been told about. It makes one
//! call per decision, choosing among ready steps: time-gated steps (meetings) first,
//! then the earliest deadline (EDF, optimal for meeting deadlines on one worker), then
//! higher priority, then scenario order. When nothing is
//! ready it waits for the next gate time or notification; when every plan is done it
//! finishes.

use std::collections::{BTreeMap, BTreeSet};

use super::{Agent, AgentFuture};
use crate::protocol::Notification;
use crate::protocol::ToolCall;
use crate::protocol::{Decision, Observation};
use crate::time::{Epoch, SimTime};
use tbsim_scenario::{Gate, PlanStep, Priority, Scenario};

/// How long before a time-gated step the oracle stops starting other work.
const GUARD_SECS: u64 = 15 * 60;

#[derive(Debug)]
struct Plan {
    order: usize,
    priority: Priority,
    deadline: SimTime,
    steps: Vec<PlanStep>,
    cursor: usize,
    /// Messages heard per person when this task last sent something.
    heard_at_send: BTreeMap<String, u64>,
}

/// The plan-following agent.
#[derive(Debug)]
pub struct Oracle {
    epoch: Epoch,
    plans: BTreeMap<String, Plan>,
    released: BTreeSet<String>,
    heard: BTreeMap<String, u64>,
    calls: u64,
}

impl Oracle {
    /// An oracle for a scenario.
    pub fn new(s: &Scenario) -> Oracle {
        let epoch = Epoch::from_timestamp(&s.clock.start).expect("validated scenario");
        let plans = s
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    t.key.clone(),
                    Plan {
                        order: i,
                        priority: t.priority,
                        deadline: epoch.parse(&t.deadline).unwrap_or_default(),
                        steps: t.plan.clone(),
                        cursor: 0,
                        heard_at_send: BTreeMap::new(),
                    },
                )
            })
            .collect();
        Oracle {
            epoch,
            plans,
            released: BTreeSet::new(),
            heard: BTreeMap::new(),
            calls: 0,
        }
    }

    fn absorb(&mut self, n: &Notification) {
        match n {
            Notification::TaskReleased { task, .. } => {
                self.released.insert(task.clone());
            }
            Notification::Message { from, .. } => *self.heard.entry(from.clone()).or_default() += 1,
            _ => {}
        }
    }

    fn next(&mut self, now: SimTime) -> ToolCall {
        let mut ready: Vec<(u8, SimTime, std::cmp::Reverse<Priority>, usize, String)> = Vec::new();
        let mut wake: Option<SimTime> = None;
        let mut remaining = false;
        for (key, p) in &self.plans {
            let Some(step) = p.steps.get(p.cursor) else {
                continue;
            };
            remaining = true;
            if !self.released.contains(key) {
                continue;
            }
            let urgent = match &step.gate {
                Gate::Ready => Some(1),
                Gate::NotBefore(t) => {
                    let t = self.epoch.parse(t).unwrap_or_default();
                    if now >= t {
                        Some(0)
                    } else {
                        wake = Some(wake.map_or(t, |w: SimTime| w.min(t)));
                        None
                    }
                }
                Gate::ReplyFrom(person) => {
                    let heard = self.heard.get(person).copied().unwrap_or(0);
                    (heard > p.heard_at_send.get(person).copied().unwrap_or(0)).then_some(1)
                }
            };
            if let Some(u) = urgent {
                ready.push((
                    u,
                    p.deadline,
                    std::cmp::Reverse(p.priority),
                    p.order,
                    key.clone(),
                ));
            }
        }
        self.calls += 1;
        let id = format!("oracle-{}", self.calls);
        ready.sort();
        // Keep clear of an imminent time-gated step (a meeting): a 10-minute copy
        // started just before it would make us late.
        let imminent = wake.filter(|w| w.0 <= now.0 + GUARD_SECS);
        if let (Some(w), Some((1, ..))) = (imminent, ready.first()) {
            return ToolCall {
                id,
                name: "wait".into(),
                arguments: serde_json::json!({"until": self.epoch.iso(w)}).to_string(),
            };
        }
        if let Some((_, _, _, _, key)) = ready.first() {
            let heard = self.heard.clone();
            let p = self.plans.get_mut(key).expect("present");
            let step = p.steps[p.cursor].clone();
            p.cursor += 1;
            // Remember how many messages each addressee had sent us, so the next
            // ReplyFrom gate waits for a reply that comes after this message.
            if step.tool == "send_group_message" {
                p.heard_at_send = heard;
            } else if step.tool == "send_message"
                && let Some(to) = serde_json::from_str::<serde_json::Value>(&step.args)
                    .ok()
                    .and_then(|v| v["to"].as_str().map(str::to_owned))
            {
                let n = heard.get(&to).copied().unwrap_or(0);
                p.heard_at_send.insert(to, n);
            }
            return ToolCall {
                id,
                name: step.tool,
                arguments: step.args,
            };
        }
        if !remaining {
            return ToolCall {
                id,
                name: "finish".into(),
                arguments: "{}".into(),
            };
        }
        let args = match wake {
            Some(t) => serde_json::json!({"until": self.epoch.iso(t)}).to_string(),
            None => "{}".to_owned(),
        };
        ToolCall {
            id,
            name: "wait".into(),
            arguments: args,
        }
    }
}

impl Agent for Oracle {
    fn name(&self) -> String {
        "oracle".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        for n in &obs.notifications {
            self.absorb(n);
        }
        for r in &obs.results {
            for n in &r.notifications {
                self.absorb(n);
            }
        }
        let call = self.next(obs.t);
        Box::pin(async move { Ok(Decision { calls: vec![call] }) })
    }
}
