//! Building a world from a validated scenario.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use bevy_ecs::prelude::*;

use super::*;
use crate::npc::{Scope, Trigger};
use crate::queue::EventClass;
use crate::time::SimDuration;
use tbsim_scenario::{LoadedScenario, Release, Scenario, WorldChange};

/// Files that appear later, by scenario event index.
#[derive(Resource, Debug, Default, Clone)]
pub struct TimedFiles(pub BTreeMap<usize, (VPath, Vec<u8>)>);

/// Hint tier given with each released task (0 = none).
#[derive(Resource, Debug, Default, Clone, Copy)]
pub struct HintTier(pub u8);

/// What a [`Scope`] is built from: every clue's task and trigger words, every
/// objective and every colleague's name, as the scenario writes them.
#[derive(Debug, PartialEq, Eq)]
struct ScopeInputs {
    clues: Vec<(Option<String>, Vec<Vec<String>>)>,
    objectives: Vec<String>,
    names: Vec<String>,
}

impl ScopeInputs {
    fn of(s: &Scenario) -> ScopeInputs {
        ScopeInputs {
            clues: s
                .company
                .people
                .iter()
                .flat_map(|p| p.clues.iter().map(|c| (c.task.clone(), c.trigger.clone())))
                .collect(),
            objectives: s.tasks.iter().map(|t| t.objective.clone()).collect(),
            names: s.company.people.iter().map(|p| p.name.clone()).collect(),
        }
    }

    /// Whether `s` has exactly these inputs (compared without copying them).
    fn same_as(&self, s: &Scenario) -> bool {
        let clues = s.company.people.iter().flat_map(|p| &p.clues);
        self.clues
            .iter()
            .map(|(t, tr)| (t, tr))
            .eq(clues.map(|c| (&c.task, &c.trigger)))
            && self
                .objectives
                .iter()
                .eq(s.tasks.iter().map(|t| &t.objective))
            && self
                .names
                .iter()
                .eq(s.company.people.iter().map(|p| &p.name))
    }
}

thread_local! {
    /// The last scope built on this thread, with what it was built from.
    static LAST_SCOPE: RefCell<Option<(ScopeInputs, Arc<Scope>)>> = const { RefCell::new(None) };
}

/// The scope of scenario `s`: built by `build`, or the one this thread built last
/// if `s` has the same clues, objectives and names. A scope is a pure function of
/// those, so sharing it changes nothing but time: the validity gate and the scan
/// build twenty worlds of one instance in a row, and building the scope (stemming
/// every trigger and objective) was a third of building a world.
fn scope_of(s: &Scenario, build: impl FnOnce() -> Scope) -> Arc<Scope> {
    LAST_SCOPE.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((inputs, scope)) = last.as_ref()
            && inputs.same_as(s)
        {
            return Arc::clone(scope);
        }
        let scope = Arc::new(build());
        *last = Some((ScopeInputs::of(s), Arc::clone(&scope)));
        scope
    })
}

/// Every colleague's scenario clues, with the rules compiled from them.
type CompiledClues = (Vec<Vec<tbsim_scenario::Clue>>, Vec<Arc<[ClueRule]>>);

thread_local! {
    /// The clue rules compiled last on this thread, per colleague, with the
    /// scenario clues they were compiled from.
    static LAST_CLUES: RefCell<Option<CompiledClues>> = const { RefCell::new(None) };
}

/// Every colleague's compiled clue rules, in the scenario's order of people: the
/// ones this thread compiled last if the scenario's clues are the same (compared
/// in full), else compiled now. A rule is a pure function of its clue, so sharing
/// changes nothing but time; compiling every trigger was the largest part of
/// building a world.
fn clue_rules_of(s: &Scenario) -> Vec<Arc<[ClueRule]>> {
    let people = &s.company.people;
    LAST_CLUES.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((specs, rules)) = last.as_ref()
            && specs.len() == people.len()
            && specs.iter().zip(people).all(|(a, p)| *a == p.clues)
        {
            return rules.clone();
        }
        let rules: Vec<Arc<[ClueRule]>> = people
            .iter()
            .map(|p| {
                p.clues
                    .iter()
                    .map(|c| ClueRule {
                        key: c.key.clone(),
                        task: c.task.clone(),
                        trigger: Trigger::new(&c.trigger),
                        after: c.after.clone(),
                        response: c.response.clone(),
                        topics: c.trigger.clone(),
                    })
                    .collect()
            })
            .collect();
        *last = Some((
            people.iter().map(|p| p.clues.clone()).collect(),
            rules.clone(),
        ));
        rules
    })
}

/// Spawns every entity of the scenario and schedules its timed events.
///
/// The scenario must have passed validation; values it guarantees are unwrapped
/// with a fallback rather than a panic.
pub fn build_world(
    loaded: &LoadedScenario,
    seed: u64,
    hints: u8,
    turn_cost: Option<u32>,
    feedback: FeedbackPolicy,
    trace: Trajectory,
) -> World {
    let s = &loaded.scenario;
    let epoch = Epoch::from_timestamp(&s.clock.start).expect("validated clock.start");
    let t = |v: &str| epoch.parse(v).unwrap_or_default();
    let mut world = World::new();

    let mut costs: BTreeMap<String, SimDuration> = crate::protocol::catalogue()
        .iter()
        .map(|c| {
            (
                c.name.to_owned(),
                SimDuration::minutes(u64::from(c.cost_minutes)),
            )
        })
        .collect();
    for (k, v) in &s.clock.costs {
        costs.insert(k.clone(), SimDuration::minutes(u64::from(*v)));
    }
    let start = t(&s.clock.start);
    let first_end = t(&s.clock.end);
    let days: Vec<(SimTime, SimTime)> = (0..u64::from(s.clock.days.max(1)))
        .map(|d| {
            (
                SimTime(start.0 + d * 86_400),
                SimTime(first_end.0 + d * 86_400),
            )
        })
        .collect();
    let end = days.last().map_or(first_end, |d| d.1);
    world.insert_resource(Clock {
        epoch,
        now: start,
        start,
        end,
        days: days.clone(),
        office: (
            t(&s.clock.office_open).0 % 86_400,
            t(&s.clock.office_close).0 % 86_400,
        ),
        costs,
        turn_cost: SimDuration(u64::from(turn_cost.unwrap_or(s.clock.turn_cost_secs))),
    });
    world.insert_resource(Intern {
        key: s.intern.key.clone(),
        name: s.intern.name.clone(),
        department: s.intern.department.clone(),
        manager: s.intern.manager.clone(),
    });
    world.insert_resource(Company(s.company.name.clone()));
    world.insert_resource(Index::default());
    world.insert_resource(History::default());
    world.insert_resource(Revision::default());
    world.insert_resource(Inbox::default());
    world.insert_resource(DueEvents::default());
    world.insert_resource(Queue(EventQueue::with_capacity(64)));
    world.insert_resource(Rngs(RngStreams::new(seed)));
    world.insert_resource(Trace(trace));
    world.insert_resource(RunState::default());
    world.insert_resource(HintTier(hints));
    world.insert_resource(Feedback(feedback));
    world.insert_resource(Mentor::default());

    let handbook = s
        .files
        .iter()
        .find(|f| f.path.ends_with("handbook.md"))
        .map(|f| f.path.clone());
    let mut compiled = clue_rules_of(s).into_iter();
    for p in &s.company.people {
        let default_reply = p.default_reply.clone().unwrap_or_else(|| match &handbook {
            Some(h) => format!("Sorry, I can't help with that one. The intern handbook at {h} says who to ask for what."),
            None => "Sorry, I can't help with that one.".to_owned(),
        });
        let npc = Npc {
            name: p.name.clone(),
            department: p.department.clone(),
            position: p.position.clone(),
            persona: p.persona.clone(),
            default_reply,
            reply_minutes: p.reply_minutes.unwrap_or((2, 8)),
            clues: compiled.next().unwrap_or_default(),
            busy_until: SimTime(0),
        };
        let e = world.spawn((Key(p.key.clone()), npc)).id();
        let mut idx = world.resource_mut::<Index>();
        idx.keys.insert(p.key.clone(), e);
        idx.names.insert(p.name.to_lowercase(), p.key.clone());
    }
    for r in &s.rooms {
        let e = world
            .spawn((
                Key(r.key.clone()),
                Room {
                    name: r.name.clone(),
                    capacity: r.capacity,
                },
            ))
            .id();
        world.resource_mut::<Index>().keys.insert(r.key.clone(), e);
    }
    for f in &s.files {
        if let Ok(p) = VPath::parse(&f.path) {
            put_file(&mut world, &p, loaded.file_bytes(f));
        }
    }

    // Monitored services: their state is a function of time, so no events are needed.
    let series = |points: &[tbsim_scenario::Point]| -> Series {
        let mut v: Series = points.iter().map(|p| (t(&p.at), p.value)).collect();
        // Stable: points at the same instant keep their written order (a step).
        v.sort_by_key(|p| p.0);
        v
    };
    for sv in &s.services {
        let mut logs: Vec<Log> = sv
            .logs
            .iter()
            .map(|l| Log {
                at: t(&l.at),
                level: l.level,
                text: l.text.clone(),
            })
            .collect();
        logs.sort_by_key(|l| l.at);
        let service = Service {
            name: sv.name.clone(),
            role: sv.role.clone(),
            metrics: sv
                .metrics
                .iter()
                .map(|m| Metric {
                    name: m.name.clone(),
                    unit: m.unit.clone(),
                    points: series(&m.points),
                    thresholds: m.thresholds,
                })
                .collect(),
            pages: sv
                .pages
                .iter()
                .map(|p| Page {
                    path: p.path.clone(),
                    windows: p
                        .load_ms
                        .iter()
                        .map(|w| (w.window.clone(), series(&w.points)))
                        .collect(),
                })
                .collect(),
            logs,
        };
        let e = world.spawn((Key(sv.key.clone()), service)).id();
        world.resource_mut::<Index>().keys.insert(sv.key.clone(), e);
    }

    let mut events: Vec<(SimTime, EventClass, SimEvent)> = Vec::new();
    for m in &s.meetings {
        let (ms, me) = (t(&m.start), t(&m.end));
        let meeting = Meeting {
            title: m.title.clone(),
            room: m.room.clone(),
            start: ms,
            end: me,
            organizer: m.organizer.clone(),
            attendees: m.attendees.clone(),
            agenda: m.agenda.clone(),
            notes: m.notes.clone(),
            announce_at: ms.after(SimDuration::minutes(u64::from(m.announce_after_min))),
            open_at: SimTime(ms.0.saturating_sub(u64::from(m.early_tolerance_min) * 60)),
            on_time_until: ms.after(SimDuration::minutes(u64::from(m.late_tolerance_min))),
            joined_at: None,
            cancelled: false,
        };
        let announce = meeting.announce_at;
        let e = world.spawn((Key(m.key.clone()), meeting)).id();
        world.resource_mut::<Index>().keys.insert(m.key.clone(), e);
        events.push((
            ms,
            EventClass::Interrupt,
            SimEvent::MeetingStart {
                meeting: m.key.clone(),
            },
        ));
        events.push((
            announce,
            EventClass::Interrupt,
            SimEvent::MeetingAnnounce {
                meeting: m.key.clone(),
            },
        ));
        events.push((
            me,
            EventClass::Interrupt,
            SimEvent::MeetingEnd {
                meeting: m.key.clone(),
            },
        ));
    }

    for (i, task) in s.tasks.iter().enumerate() {
        let deadline = t(&task.deadline);
        let e = world
            .spawn((
                Key(task.key.clone()),
                Task {
                    order: i,
                    spec: task.clone(),
                    state: TaskState::Pending,
                    released_at: None,
                },
            ))
            .id();
        world.spawn((
            Key(format!("deadline/{}", task.key.trim_start_matches("task/"))),
            Deadline {
                task: task.key.clone(),
                at: deadline,
                reached: false,
            },
        ));
        let mut cps = Vec::new();
        for (j, c) in task.checkpoints.iter().enumerate() {
            let ce = world
                .spawn((
                    Key(format!(
                        "checkpoint/{}/{}",
                        task.key.trim_start_matches("task/"),
                        c.key
                    )),
                    Checkpoint {
                        task: task.key.clone(),
                        order: (i, j),
                        key: c.key.clone(),
                        description: c.description.clone(),
                        weight: c.weight,
                        check: c.check.clone(),
                        kind: c.check.kind(),
                        feedback: c.feedback.clone(),
                        passed_at: None,
                        frozen: false,
                        reads: None,
                    },
                ))
                .id();
            cps.push(ce);
        }
        let mut idx = world.resource_mut::<Index>();
        idx.keys.insert(task.key.clone(), e);
        idx.checkpoints.insert(task.key.clone(), cps);
        match &task.release {
            Release::Start => events.push((
                start,
                EventClass::Release,
                SimEvent::Release {
                    task: task.key.clone(),
                },
            )),
            Release::At(v) => events.push((
                t(v),
                EventClass::Release,
                SimEvent::Release {
                    task: task.key.clone(),
                },
            )),
            Release::AfterCheckpoint {
                task: dep,
                checkpoint,
            } => {
                idx.waiting
                    .entry((dep.clone(), checkpoint.clone()))
                    .or_default()
                    .push(task.key.clone());
            }
            Release::InMeeting(m) => idx
                .announced_in
                .entry(m.clone())
                .or_default()
                .push(task.key.clone()),
        }
        events.push((
            deadline,
            EventClass::Deadline,
            SimEvent::Deadline {
                task: task.key.clone(),
            },
        ));
    }

    let mut timed = TimedFiles::default();
    for (i, ev) in s.events.iter().enumerate() {
        let at = t(&ev.at);
        match &ev.change {
            WorldChange::Message { from, text } => events.push((
                at,
                EventClass::Delivery,
                SimEvent::Deliver {
                    thread: format!("thread/dm/{}", from.trim_start_matches("npc/")),
                    from: from.clone(),
                    text: text.clone(),
                    clues: Vec::new(),
                },
            )),
            WorldChange::File(f) => {
                if let Ok(p) = VPath::parse(&f.path) {
                    timed.0.insert(i, (p.clone(), loaded.file_bytes(f)));
                    events.push((
                        at,
                        EventClass::Delivery,
                        SimEvent::FileChange {
                            path: p.as_str().to_owned(),
                            event: i,
                        },
                    ));
                }
            }
        }
    }
    world.insert_resource(timed);
    for (i, (day_start, day_end)) in days.iter().enumerate() {
        let day = i as u32 + 1;
        if day > 1 {
            events.push((*day_start, EventClass::DayStart, SimEvent::DayStart { day }));
        }
        events.push((*day_end, EventClass::DayEnd, SimEvent::DayEnd { day }));
    }

    let scope = scope_of(s, || {
        crate::npc::Scope::new(
            world
                .query::<&Npc>()
                .iter(&world)
                .flat_map(|n| n.clues.iter().map(|c| (c.task.as_deref(), &c.trigger))),
            s.tasks.iter().map(|t| t.objective.as_str()),
            s.company.people.iter().map(|p| p.name.as_str()),
        )
    });
    world.insert_resource(Specificity(scope));
    // Last: ids of everything above stay as they were before it existed, and the
    // files put while building are no change (no checkpoint has read anything yet).
    world.insert_resource(Changes::default());

    // Push in a fixed order: the queue's sequence numbers then follow scenario order.
    let mut q = world.resource_mut::<Queue>();
    for (at, class, ev) in events {
        q.0.push(at, class, ev);
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clues(world: &mut World) -> Vec<Arc<[ClueRule]>> {
        let mut q = world.query::<(&Key, &Npc)>();
        let mut v: Vec<(String, Arc<[ClueRule]>)> = q
            .iter(world)
            .map(|(k, n)| (k.0.clone(), Arc::clone(&n.clues)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(_, c)| c).collect()
    }

    fn build(l: &LoadedScenario) -> World {
        build_world(
            l,
            1,
            0,
            None,
            FeedbackPolicy::default(),
            Trajectory::discarding(),
        )
    }

    /// Consecutive worlds of one scenario on a thread share their compiled clue
    /// rules; a scenario whose clues differ in anything gets rules compiled from its
    /// own clues, and the first scenario's are compiled again after it.
    #[test]
    fn worlds_of_one_scenario_share_their_clue_rules_and_others_do_not() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios/busy-day.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let (a, b) = (clues(&mut build(&loaded)), clues(&mut build(&loaded)));
        assert!(
            a.iter().any(|c| !c.is_empty()),
            "busy-day's colleagues know things"
        );
        assert!(a.iter().zip(&b).all(|(x, y)| Arc::ptr_eq(x, y)));

        let mut other = loaded.clone();
        let (p, c) = other
            .scenario
            .company
            .people
            .iter_mut()
            .enumerate()
            .find_map(|(i, p)| p.clues.first_mut().map(|c| (i, c)))
            .expect("a colleague with a clue");
        c.response = "Something else entirely.".to_owned();
        let key = c.key.clone();
        let o = clues(&mut build(&other));
        assert!(!Arc::ptr_eq(&a[0], &o[0]));
        let person = &other.scenario.company.people[p].key;
        let mut keys: Vec<&String> = other
            .scenario
            .company
            .people
            .iter()
            .map(|p| &p.key)
            .collect();
        keys.sort();
        let at = keys.iter().position(|k| *k == person).unwrap();
        let rule = o[at].iter().find(|r| r.key == key).unwrap();
        assert_eq!(rule.response, "Something else entirely.");

        let d = clues(&mut build(&loaded));
        assert!(!Arc::ptr_eq(&o[at], &d[at]));
        let first = d[at].iter().find(|r| r.key == key).unwrap();
        let before = a[at].iter().find(|r| r.key == key).unwrap();
        assert_eq!(first.response, before.response);
        assert_eq!(first.topics, before.topics);
    }
}
