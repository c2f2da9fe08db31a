//! A run's progress as plain data, for front ends that report it while the run goes
//! on (the session API's reward, its state endpoint).
//!
//! [`Progress`] holds only what the agent could already know or what its own work
//! earned: the clock, the tasks released to it (key, title, status, priority,
//! deadline) and the score each has earned so far, the total, and the tool errors
//! it caused. Never an expected answer, a clue, a checkpoint's description or
//! feedback, or the oracle's plan; tasks not yet released are not listed (they only
//! count, at 0, in the total's denominator, as they do in the final score).
//!
//! Scores are computed as [`crate::result`] computes them: a task's score is the
//! weighted share of its scored checkpoints that passed, the total is the mean over
//! every task of the scenario. After [`Sim::results`] (the run's end, where open
//! tasks are judged) the total equals the result's `checkpoint_score`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::{EndReason, Priority};
use crate::sim::Sim;
use crate::time::{Epoch, SimTime};
use crate::world::{Checkpoint, Clock, RunState, Task, TaskState};

/// Where a released task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Released, its deadline not yet passed.
    Open,
    /// Its deadline passed (or the run ended): judged.
    Closed,
}

/// One released task's progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// Key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Open or closed.
    pub status: TaskStatus,
    /// Priority.
    pub priority: Priority,
    /// Deadline (`YYYY-MM-DDTHH:MM:SS`).
    pub deadline: String,
    /// Weighted share of its scored checkpoints passed so far (0..1).
    pub score: f64,
}

/// A run's progress (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Decisions made so far.
    pub step: u64,
    /// Current time, as shown to agents.
    pub time: String,
    /// Seconds since the epoch.
    pub t: SimTime,
    /// The current working day, from 1.
    pub day: u32,
    /// Working days in the scenario.
    pub days: u32,
    /// Released tasks, in scenario order.
    pub tasks: Vec<TaskProgress>,
    /// Mean task score over every task of the scenario so far (0..1).
    pub score: f64,
    /// Tool errors so far, by kind.
    pub errors: BTreeMap<String, u64>,
    /// Why the run ended, once it has.
    pub end_reason: Option<EndReason>,
}

impl Progress {
    /// Tool errors so far, all kinds.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

impl Sim {
    /// The run's progress now (see [`crate::progress`]).
    pub fn progress(&self) -> Progress {
        let world = self.world();
        let clock = world.resource::<Clock>();
        let run = world.resource::<RunState>();
        let mut tasks: Vec<&Task> = match world.try_query::<&Task>() {
            Some(mut q) => q.iter(world).collect(),
            None => Vec::new(),
        };
        tasks.sort_by_key(|t| t.order);
        let cps: Vec<&Checkpoint> = match world.try_query::<&Checkpoint>() {
            Some(mut q) => q.iter(world).collect(),
            None => Vec::new(),
        };
        let score_of = |key: &str| {
            crate::collect::weighted_score(
                cps.iter()
                    .copied()
                    .filter(|c| c.task == key && c.kind.scored()),
            )
        };
        let sum: f64 = tasks.iter().map(|t| score_of(&t.spec.key)).sum();
        let listed = tasks
            .iter()
            .filter(|t| t.state != TaskState::Pending)
            .map(|t| TaskProgress {
                key: t.spec.key.clone(),
                title: t.spec.title.clone(),
                status: if t.state == TaskState::Closed {
                    TaskStatus::Closed
                } else {
                    TaskStatus::Open
                },
                priority: t.spec.priority,
                deadline: clock
                    .epoch
                    .parse(&t.spec.deadline)
                    .map(|d| clock.epoch.iso(d))
                    .unwrap_or_default(),
                score: score_of(&t.spec.key),
            })
            .collect();
        let today = Epoch::day_of(clock.now);
        let day = clock
            .days
            .iter()
            .rposition(|(start, _)| Epoch::day_of(*start) <= today)
            .map_or(1, |i| i + 1);
        Progress {
            step: self.steps(),
            time: clock.epoch.display(clock.now),
            t: clock.now,
            day: day as u32,
            days: clock.days.len().max(1) as u32,
            tasks: listed,
            score: sum / tasks.len().max(1) as f64,
            errors: run.errors.clone(),
            end_reason: run.over,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::agent::Oracle;
    use crate::protocol::SimConfig;
    use crate::run::{RunLimits, drive};
    use crate::sim::Sim;
    use crate::tools::LivePython;
    use crate::trajectory::Trajectory;

    #[test]
    fn the_final_total_is_the_checkpoint_score_and_only_released_tasks_are_listed() {
        for name in ["busy-day", "two-days", "meeting-check-sum"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../content/scenarios/{name}.ron"));
            let loaded = tbsim_scenario::load_file(&path).expect("bundled scenario loads");
            let mut sim = Sim::new(
                &loaded,
                SimConfig::default(),
                Trajectory::digest_only(),
                Box::new(LivePython::default()),
            );
            let start = sim.progress();
            assert_eq!(start.score, 0.0, "{name}");
            let mut oracle = Oracle::new(&loaded.scenario);
            let r = drive(&mut sim, &mut oracle, &RunLimits::default());
            let end = sim.progress();
            assert!((end.score - r.checkpoint_score).abs() < 1e-12, "{name}");
            assert_eq!(end.end_reason, r.end_reason, "{name}");
            assert_eq!(end.step, r.steps, "{name}");
            let released = r.tasks.iter().filter(|t| t.released_at.is_some()).count();
            assert_eq!(end.tasks.len(), released, "{name}: released tasks only");
        }
    }
}
