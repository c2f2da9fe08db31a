//! A scenario's world built once and stamped out for every run of it.
//!
//! Building a world parses every timestamp, renders drawings, compiles every clue
//! trigger, spawns the company and schedules the timed events. None of that depends
//! on the run (its seed, hint tier, thinking cost, feedback policy or trajectory),
//! and the validity gate and the scan run some twenty worlds of each instance. A
//! [`Prototype`] does the work once; [`Prototype::instantiate`] copies the result
//! into a fresh world.
//!
//! The copy is the same world, not an equivalent one: resources are inserted and
//! entities spawned in the order [`build_world`] uses, so every entity gets the
//! same id and every query iterates in the same order (bevy keeps resources as
//! entities too). A run from a prototype therefore writes the same trajectory,
//! byte for byte, as one from [`build_world`] (tested below and by the pinned
//! digests).

use std::sync::Arc;

use bevy_ecs::prelude::*;

use super::build::{HintTier, TimedFiles, build_world};
use super::*;
use crate::rng::RngStreams;
use tbsim_scenario::LoadedScenario;

/// One content entity of the prototype, with the components it was spawned with.
#[derive(Debug, Clone)]
enum Spawn {
    Npc(Key, Npc),
    Room(Key, Room),
    Folder(Key, Folder),
    File(Key, File),
    Service(Key, Service),
    Meeting(Key, Meeting),
    Task(Key, Task),
    Deadline(Key, Deadline),
    Checkpoint(Key, Checkpoint),
}

/// A scenario's world, ready to be copied for each run.
#[derive(Debug)]
pub struct Prototype {
    clock: Clock,
    intern: Intern,
    company: Company,
    index: Index,
    revision: u64,
    queue: EventQueue<SimEvent>,
    /// Content entities in spawn order, each with the id it must get again.
    spawns: Vec<(Entity, Spawn)>,
    timed: Arc<TimedFiles>,
    scope: Arc<crate::npc::Scope>,
    /// What a simulation needs of the scenario besides its world.
    pub(crate) meta: ScenarioMeta,
}

/// What a simulation keeps of its scenario besides the world.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioMeta {
    /// The scenario's own seed (a run without one uses it).
    pub(crate) seed: u64,
    /// The company's name.
    pub(crate) company: String,
    /// The scenario's name.
    pub(crate) scenario: String,
    /// Where the scenario came from.
    pub(crate) provenance: crate::result::Provenance,
}

impl ScenarioMeta {
    pub(crate) fn of(loaded: &LoadedScenario) -> ScenarioMeta {
        ScenarioMeta {
            seed: loaded.scenario.seed,
            company: loaded.scenario.company.name.clone(),
            scenario: loaded.scenario.name.clone(),
            provenance: crate::result::Provenance {
                scenario_blake3: loaded.blake3.clone(),
                generated_by: loaded.scenario.generated_by.clone(),
                engine: format!("tbsim {}", env!("CARGO_PKG_VERSION")),
                checker: tbsim_scenario::check::CHECKER_VERSION,
            },
        }
    }
}

/// The parts of a run that are not the scenario's.
#[derive(Debug, Clone, Copy)]
pub struct RunParams {
    /// Master seed.
    pub seed: u64,
    /// Hint tier given with each released task.
    pub hints: u8,
    /// Thinking time per decision, overriding the scenario's.
    pub turn_cost: Option<u32>,
    /// Mentor feedback.
    pub feedback: FeedbackPolicy,
}

impl Prototype {
    /// Builds `loaded`'s world once (the scenario must have passed validation).
    pub fn new(loaded: &LoadedScenario) -> Prototype {
        let mut world = build_world(
            loaded,
            0,
            0,
            None,
            FeedbackPolicy::default(),
            Trajectory::discarding(),
        );
        let mut keyed: Vec<(Entity, Key)> = world
            .query::<(Entity, &Key)>()
            .iter(&world)
            .map(|(e, k)| (e, k.clone()))
            .collect();
        keyed.sort_by_key(|(e, _)| e.index());
        let spawns = keyed
            .into_iter()
            .filter_map(|(e, k)| {
                let w = &world;
                let s = if let Some(c) = w.get::<Npc>(e) {
                    Spawn::Npc(k, c.clone())
                } else if let Some(c) = w.get::<Room>(e) {
                    Spawn::Room(k, c.clone())
                } else if let Some(c) = w.get::<Folder>(e) {
                    Spawn::Folder(k, c.clone())
                } else if let Some(c) = w.get::<File>(e) {
                    Spawn::File(k, c.clone())
                } else if let Some(c) = w.get::<Service>(e) {
                    Spawn::Service(k, c.clone())
                } else if let Some(c) = w.get::<Meeting>(e) {
                    Spawn::Meeting(k, c.clone())
                } else if let Some(c) = w.get::<Task>(e) {
                    Spawn::Task(k, c.clone())
                } else if let Some(c) = w.get::<Deadline>(e) {
                    Spawn::Deadline(k, c.clone())
                } else if let Some(c) = w.get::<Checkpoint>(e) {
                    Spawn::Checkpoint(k, c.clone())
                } else {
                    return None;
                };
                Some((e, s))
            })
            .collect();
        let take = |w: &mut World| {
            let index = w.remove_resource::<Index>().unwrap_or_default();
            let queue = w.remove_resource::<Queue>().unwrap_or_default().0;
            let timed = w.remove_resource::<TimedFiles>().unwrap_or_default();
            (index, queue, timed)
        };
        let (index, queue, timed) = take(&mut world);
        Prototype {
            clock: world.resource::<Clock>().clone(),
            intern: world.resource::<Intern>().clone(),
            company: Company(world.resource::<Company>().0.clone()),
            index,
            revision: world.resource::<Revision>().0,
            queue,
            spawns,
            timed: Arc::new(timed),
            scope: Arc::clone(&world.resource::<Specificity>().0),
            meta: ScenarioMeta::of(loaded),
        }
    }

    /// A fresh world for one run, equal to what [`build_world`] builds with these
    /// parameters.
    pub fn instantiate(&self, run: RunParams, trace: Trajectory) -> World {
        let mut world = World::new();
        let mut clock = self.clock.clone();
        if let Some(secs) = run.turn_cost {
            clock.turn_cost = SimDuration(u64::from(secs));
        }
        // The order of `build_world`: resources are entities, so it fixes every id.
        world.insert_resource(clock);
        world.insert_resource(self.intern.clone());
        world.insert_resource(Company(self.company.0.clone()));
        world.insert_resource(self.index.clone());
        world.insert_resource(History::default());
        world.insert_resource(Revision(self.revision));
        world.insert_resource(Inbox::default());
        world.insert_resource(DueEvents::default());
        world.insert_resource(Queue(self.queue.clone()));
        world.insert_resource(Rngs(RngStreams::new(run.seed)));
        world.insert_resource(Trace(trace));
        world.insert_resource(RunState::default());
        world.insert_resource(HintTier(run.hints));
        world.insert_resource(Feedback(run.feedback));
        world.insert_resource(Mentor::default());
        for (id, s) in &self.spawns {
            let e = match s {
                Spawn::Npc(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Room(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Folder(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::File(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Service(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Meeting(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Task(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Deadline(k, c) => world.spawn((k.clone(), c.clone())).id(),
                Spawn::Checkpoint(k, c) => world.spawn((k.clone(), c.clone())).id(),
            };
            // A fresh world hands out ids in order: the same spawns get the same ids,
            // which the index copied above refers to.
            debug_assert_eq!(e, *id, "prototype entity ids drifted");
        }
        world.insert_resource(TimedFiles(self.timed.0.clone()));
        world.insert_resource(Specificity(Arc::clone(&self.scope)));
        world.insert_resource(Changes::default());
        world
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SimConfig;
    use crate::sim::Sim;

    fn loaded(name: &str) -> LoadedScenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios")
            .join(name);
        tbsim_scenario::load_file(&path).unwrap()
    }

    /// Same entities with the same ids and components, same resources: checked
    /// through what a run writes, for several scenarios and run parameters.
    #[test]
    fn a_world_from_the_prototype_runs_as_a_built_one() {
        for name in ["busy-day.ron", "transactions-none-abnormal.ron"] {
            let l = loaded(name);
            let proto = Arc::new(Prototype::new(&l));
            for (seed, hints, feedback) in [
                (None, 0, FeedbackPolicy::default()),
                (Some(7), 2, FeedbackPolicy::Detailed),
            ] {
                let config = SimConfig {
                    seed,
                    hints,
                    feedback,
                    turn_cost_secs: Some(30),
                    agent: "oracle".into(),
                    ..Default::default()
                };
                let run = |sim: &mut Sim| {
                    let mut agent = crate::agent::Oracle::new(&l.scenario);
                    let r = crate::run::drive(sim, &mut agent, &crate::run::RunLimits::default());
                    (r, sim.trajectory().lines().to_vec())
                };
                let python = || Box::new(crate::tools::LivePython::default());
                let mut built =
                    Sim::new_built(&l, config.clone(), Trajectory::in_memory(), python());
                let mut copied =
                    Sim::from_prototype(&proto, config, Trajectory::in_memory(), python());
                let (a, la) = run(&mut built);
                let (b, lb) = run(&mut copied);
                assert!(la.len() > 20, "{name}: a real run");
                assert_eq!(la, lb, "{name}");
                assert_eq!(a.digest, b.digest);
                assert_eq!(
                    serde_json::to_string(&a).unwrap(),
                    serde_json::to_string(&b).unwrap()
                );
            }
        }
    }
}
