//! Collecting a run's [`RunResult`] from the world: the result types are plain data
//! ([`crate::result`]); reading them out of the world's tasks, checkpoints, clock and
//! run state is done here, by the simulation, once the run ends.

use bevy_ecs::prelude::*;

use crate::guidance::GuidanceCount;
use crate::protocol::SimConfig;
use crate::result::{CheckpointResult, DayResult, Provenance, RunResult, TaskResult};
use crate::world::{Checkpoint, Clock, RunState, Task};

/// The result of the run in `world` so far (the digest and provenance are filled in by
/// the caller, which knows the trajectory and the scenario file).
pub(crate) fn collect(
    world: &mut World,
    scenario: &str,
    config: &SimConfig,
    steps: u64,
    tool_calls: u64,
) -> RunResult {
    let clock = world.resource::<Clock>().clone();
    let mut cps: Vec<Checkpoint> = world.query::<&Checkpoint>().iter(world).cloned().collect();
    cps.sort_by_key(|c| c.order);
    let mut tasks: Vec<Task> = world.query::<&Task>().iter(world).cloned().collect();
    tasks.sort_by_key(|t| t.order);
    let run = world.resource::<RunState>();
    let iso = |t: crate::time::SimTime| clock.epoch.iso(t);
    let task_results: Vec<TaskResult> = tasks
        .iter()
        .map(|t| {
            let all: Vec<&Checkpoint> = cps.iter().filter(|c| c.task == t.spec.key).collect();
            let mine: Vec<&Checkpoint> = all.iter().copied().filter(|c| c.kind.scored()).collect();
            let passed = mine.iter().filter(|c| c.passed_at.is_some()).count();
            let success = passed == mine.len() && !mine.is_empty();
            let gate_failed = match (&t.released_at, &t.spec.release) {
                (None, tbsim_scenario::Release::AfterCheckpoint { task, checkpoint }) => {
                    Some(format!("{task}#{checkpoint}"))
                }
                _ => None,
            };
            let anchor = t
                .released_at
                .unwrap_or_else(|| clock.epoch.parse(&t.spec.deadline).unwrap_or(clock.start));
            let day = (crate::time::Epoch::day_of(anchor)
                .saturating_sub(crate::time::Epoch::day_of(clock.start))
                + 1) as u32;
            TaskResult {
                day: day.min(clock.days.len().max(1) as u32),
                key: t.spec.key.clone(),
                title: t.spec.title.clone(),
                family: t.spec.family.clone(),
                variant: t.spec.variant.clone(),
                difficulty: t.spec.difficulty,
                priority: t.spec.priority,
                released_at: t.released_at.map(iso),
                gate_failed,
                deadline: clock
                    .epoch
                    .parse(&t.spec.deadline)
                    .map(iso)
                    .unwrap_or_default(),
                score: weighted_score(mine.iter().copied()),
                success,
                completed_at: if success {
                    mine.iter().filter_map(|c| c.passed_at).max().map(iso)
                } else {
                    None
                },
                passed,
                total: mine.len(),
                checkpoints: all
                    .iter()
                    .map(|c| CheckpointResult {
                        key: c.key.clone(),
                        description: c.description.clone(),
                        weight: c.weight,
                        kind: c.kind,
                        passed: c.passed_at.is_some(),
                        at: c.passed_at.map(iso),
                        feedback: c.passed_at.is_none().then(|| c.feedback.clone()),
                    })
                    .collect(),
                guidance: run
                    .guidance
                    .get(&t.spec.key)
                    .filter(|g| !g.is_empty())
                    .copied(),
            }
        })
        .collect();
    let n = task_results.len().max(1) as f64;
    let guidance = run
        .guidance
        .values()
        .fold(GuidanceCount::default(), |a, g| GuidanceCount {
            hints: a.hints + g.hints,
            messages: a.messages + g.messages,
            top_tier: a.top_tier.max(g.top_tier),
        });
    let days: Vec<DayResult> = (1..=clock.days.len().max(1) as u32)
        .map(|d| {
            let mine: Vec<&TaskResult> = task_results.iter().filter(|t| t.day == d).collect();
            let k = mine.len().max(1) as f64;
            DayResult {
                day: d,
                date: clock
                    .epoch
                    .iso(clock.days.get(d as usize - 1).map_or(clock.start, |x| x.0))[..10]
                    .to_owned(),
                tasks: mine.len(),
                checkpoint_score: mine.iter().map(|t| t.score).sum::<f64>() / k,
                success_rate: mine.iter().filter(|t| t.success).count() as f64 / k,
            }
        })
        .collect();
    let day_gain = days
        .windows(2)
        .map(|w| w[1].checkpoint_score - w[0].checkpoint_score)
        .collect();
    RunResult {
        feedback: world.resource::<crate::world::Feedback>().0,
        days,
        day_gain,
        scenario: scenario.to_owned(),
        agent: config.agent.clone(),
        seed: world.resource::<crate::world::Rngs>().0.master(),
        trial: None,
        hints: config.hints,
        checkpoint_score: task_results.iter().map(|t| t.score).sum::<f64>() / n,
        success_rate: task_results.iter().filter(|t| t.success).count() as f64 / n,
        steps,
        tool_calls,
        empty_turns: run.empty_turns,
        errors: run.errors.clone(),
        end_reason: run.over,
        sim_start: iso(clock.start),
        sim_end: iso(clock.now),
        digest: String::new(),
        tasks: task_results,
        model: None,
        npc_model: None,
        infra_error: run.infra_error.clone(),
        agent_error: run.agent_error.clone(),
        warnings: Vec::new(),
        // Filled in by the simulation, which knows the scenario file.
        provenance: Provenance::default(),
        guidance: (!guidance.is_empty()).then_some(guidance),
        schedule: None,
    }
}

/// A task's score: the weighted share of `scored` checkpoints (the task's scored
/// ones) that passed, 0 when they weigh nothing. The progress snapshot uses it too, so
/// its running total ends equal to the result's.
pub(crate) fn weighted_score<'a>(scored: impl Iterator<Item = &'a Checkpoint>) -> f64 {
    let (mut total, mut passed) = (0u32, 0u32);
    for c in scored {
        total += c.weight;
        if c.passed_at.is_some() {
            passed += c.weight;
        }
    }
    if total == 0 {
        0.0
    } else {
        f64::from(passed) / f64::from(total)
    }
}
