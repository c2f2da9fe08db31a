//! The tick: one chained schedule run after every batch of same-time events.
//!
//! Order (all systems chained, single-threaded): start of day (mentor feedback),
//! releases, interrupts, deliveries, checkpoint evaluation, deadline latching, end of
//! day (the mentor's review). Checkpoints are evaluated before deadlines latch, so
//! work completed at the deadline instant counts.
//!
//! Events and diagnostics latch in the tick where they first hold. Answers are judged
//! only in the tick where their task's deadline falls (or by [`close_open_tasks`] when
//! the run ends first), so a gate on an answer opens at its task's close, never as a
//! signal that a candidate answer was right.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{LogLevel, ScheduleBuildSettings, SingleThreadedExecutor};

use super::build::{HintTier, TimedFiles};
use super::*;
use crate::queue::EventClass;
use crate::trajectory::Line;
use tbsim_scenario::check::{BookedMeeting, CheckKind, WorldView, evaluate};

/// Builds the tick schedule: one chain, so the systems run in a total order. Every
/// system writes the trajectory or the queue, so no two could run unordered; the
/// ambiguity check is an error, so a system added outside the chain fails the
/// first tick of every test instead of running in an order bevy picks.
pub fn tick_schedule() -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.set_build_settings(ScheduleBuildSettings {
        ambiguity_detection: LogLevel::Error,
        ..Default::default()
    });
    schedule.add_systems(
        (
            start_of_day,
            release_tasks,
            meeting_interrupts,
            deliver,
            evaluate_checkpoints,
            latch_deadlines,
            end_of_day,
        )
            .chain(),
    );
    schedule
}

fn released_notification(
    t: &Task,
    now: SimTime,
    clock: &Clock,
    hints: u8,
    assigner: Option<&str>,
) -> Notification {
    Notification::TaskReleased {
        at: clock.epoch.display(now),
        task: t.spec.key.clone(),
        title: t.spec.title.clone(),
        objective: t.spec.objective.clone(),
        assigned_by: assigner.map_or_else(|| t.spec.assigned_by.clone(), str::to_owned),
        deadline: clock
            .epoch
            .parse(&t.spec.deadline)
            .map(|d| clock.epoch.display(d))
            .unwrap_or_default(),
        priority: t.spec.priority,
        hints: t
            .spec
            .hints
            .iter()
            .take(usize::from(hints))
            .cloned()
            .collect(),
    }
}

fn release_tasks(
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    index: Res<Index>,
    hints: Res<HintTier>,
    npcs: Query<(&Key, &Npc)>,
    mut tasks: Query<&mut Task>,
    mut history: ResMut<History>,
    mut revision: ResMut<Revision>,
    mut inbox: ResMut<Inbox>,
) {
    for due in &batch.0 {
        let SimEvent::Release { task } = &due.event else {
            continue;
        };
        let Some(mut t) = index.keys.get(task).and_then(|e| tasks.get_mut(*e).ok()) else {
            continue;
        };
        if t.state != TaskState::Pending {
            continue;
        }
        t.state = TaskState::Released;
        t.released_at = Some(clock.now);
        history.released.insert(task.clone());
        revision.0 += 1;
        // The assigner's display name (the key itself when no colleague has it).
        let assigner = index
            .keys
            .get(&t.spec.assigned_by)
            .and_then(|e| npcs.get(*e).ok())
            .filter(|(k, _)| k.0 == t.spec.assigned_by)
            .map(|(_, n)| n.name.as_str());
        inbox.0.push(released_notification(
            &t, clock.now, &clock, hints.0, assigner,
        ));
    }
}

fn meeting_interrupts(
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    index: Res<Index>,
    intern: Res<Intern>,
    meetings: Query<&Meeting>,
    rooms: Query<&Room>,
    mut queue: ResMut<Queue>,
    mut inbox: ResMut<Inbox>,
) {
    for due in &batch.0 {
        let (key, m) = match &due.event {
            SimEvent::MeetingStart { meeting }
            | SimEvent::MeetingAnnounce { meeting }
            | SimEvent::MeetingEnd { meeting } => {
                match index.keys.get(meeting).and_then(|e| meetings.get(*e).ok()) {
                    Some(m) if !m.cancelled => (meeting, m),
                    _ => continue,
                }
            }
            _ => continue,
        };
        let invited = m.organizer == intern.key || m.attendees.contains(&intern.key);
        let present = m.joined_at.is_some_and(|j| j <= clock.now);
        match &due.event {
            SimEvent::MeetingStart { .. } if invited && !present => {
                let room = index
                    .keys
                    .get(&m.room)
                    .and_then(|r| rooms.get(*r).ok())
                    .map_or(m.room.clone(), |r| r.name.clone());
                inbox.0.push(Notification::MeetingStarting {
                    at: clock.epoch.display(clock.now),
                    meeting: key.clone(),
                    title: m.title.clone(),
                    room,
                    ends: clock.epoch.display(m.end),
                });
            }
            SimEvent::MeetingAnnounce { .. } if present => {
                let tasks = index.announced_in.get(key).cloned().unwrap_or_default();
                if !m.notes.is_empty() || !tasks.is_empty() {
                    let text = if tasks.is_empty() {
                        m.notes.clone()
                    } else {
                        format!(
                            "{} New work was handed out; see the task notifications.",
                            m.notes
                        )
                        .trim()
                        .to_owned()
                    };
                    inbox.0.push(Notification::Announcement {
                        at: clock.epoch.display(clock.now),
                        meeting: key.clone(),
                        text,
                    });
                }
                for t in tasks {
                    queue.0.push(
                        clock.now,
                        EventClass::Release,
                        SimEvent::Release { task: t },
                    );
                }
            }
            SimEvent::MeetingEnd { .. } if present => {
                inbox.0.push(Notification::MeetingEnded {
                    at: clock.epoch.display(clock.now),
                    meeting: key.clone(),
                });
            }
            _ => {}
        }
    }
}

/// Exclusive: deliveries may create threads and files.
fn deliver(world: &mut World) {
    let batch: Vec<SimEvent> = world
        .resource::<DueEvents>()
        .0
        .iter()
        // Only what this system handles is copied out of the batch.
        .filter(|d| {
            matches!(
                d.event,
                SimEvent::Deliver { .. } | SimEvent::FileChange { .. }
            )
        })
        .map(|d| d.event.clone())
        .collect();
    for ev in batch {
        let now = world.resource::<Clock>().now;
        let at = world.resource::<Clock>().epoch.display(now);
        match ev {
            SimEvent::Deliver {
                thread,
                from,
                text,
                clues,
            } => {
                let existing = world.resource::<Index>().keys.get(&thread).copied();
                let e = match existing {
                    Some(e) => e,
                    None => {
                        let me = world.resource::<Intern>().key.clone();
                        let title = super::display_name(world, &from);
                        let e = world
                            .spawn((
                                Key(thread.clone()),
                                Thread {
                                    title,
                                    members: vec![me, from.clone()],
                                    group: false,
                                    messages: Vec::new(),
                                    read: 0,
                                },
                            ))
                            .id();
                        world.resource_mut::<Index>().keys.insert(thread.clone(), e);
                        e
                    }
                };
                if let Some(mut t) = world.get_mut::<Thread>(e) {
                    t.messages.push(ChatMessage {
                        t: now,
                        from: from.clone(),
                        text: text.clone(),
                    });
                }
                for clue in &clues {
                    let first = !world.resource::<History>().disclosed.contains_key(clue);
                    if first {
                        world
                            .resource_mut::<History>()
                            .disclosed
                            .insert(clue.clone(), now);
                    }
                    let task = world
                        .resource::<Index>()
                        .keys
                        .get(&from)
                        .and_then(|e| world.get::<Npc>(*e))
                        .and_then(|n| {
                            n.clues
                                .iter()
                                .find(|c| &c.key == clue)
                                .and_then(|c| c.task.clone())
                        });
                    world.resource_mut::<Trace>().0.push(&Line::Disclosure {
                        t: now,
                        npc: from.clone(),
                        clue: clue.clone(),
                        task,
                        first,
                    });
                }
                for clue in &clues {
                    super::touch(world, Input::Clue(clue.clone()));
                }
                super::touch(world, Input::Thread(thread.clone()));
                let from_name = super::display_name(world, &from);
                world.resource_mut::<Inbox>().0.push(Notification::Message {
                    at,
                    thread,
                    from,
                    from_name,
                    text,
                });
            }
            SimEvent::FileChange { path, event } => {
                let file = world.resource::<TimedFiles>().0.get(&event).cloned();
                if let Some((p, bytes)) = file {
                    put_file(world, &p, bytes);
                    world
                        .resource_mut::<Inbox>()
                        .0
                        .push(Notification::FileAdded { at, path });
                }
            }
            _ => {}
        }
    }
}

/// Scenario paths may be written loosely (`./drive//x.md`); the world keys them normalised.
fn normalised(path: &str) -> std::borrow::Cow<'_, str> {
    match crate::path::VPath::parse(path) {
        Ok(p) if p.as_str() != path => std::borrow::Cow::Owned(p.as_str().to_owned()),
        _ => std::borrow::Cow::Borrowed(path),
    }
}

struct View<'w, 's, 'a> {
    epoch: crate::time::Epoch,
    intern: &'a str,
    index: &'a Index,
    history: &'a History,
    files: &'a Query<'w, 's, &'static File>,
    meetings: &'a Query<'w, 's, &'static Meeting>,
    threads: &'a Query<'w, 's, &'static Thread>,
}

impl WorldView for View<'_, '_, '_> {
    fn file(&self, path: &str) -> Option<&[u8]> {
        let e = self.index.files.get(normalised(path).as_ref())?;
        self.files.get(*e).ok().map(|f| f.bytes.as_slice())
    }
    fn disclosed(&self, clue: &str) -> bool {
        self.history.disclosed.contains_key(clue)
    }
    fn consulted(&self, path: &str) -> bool {
        self.history.consulted.contains(normalised(path).as_ref())
    }
    fn tool_called(&self, tool: &str) -> bool {
        self.history.tools_called.contains_key(tool)
    }
    fn attended_on_time(&self, meeting: &str) -> bool {
        self.index
            .keys
            .get(meeting)
            .and_then(|e| self.meetings.get(*e).ok())
            .is_some_and(|m| {
                m.joined_at
                    .is_some_and(|j| j >= m.open_at && j <= m.on_time_until)
            })
    }
    fn booked_meetings(&self) -> Vec<BookedMeeting> {
        self.meetings
            .iter()
            .filter(|m| m.organizer == self.intern && !m.cancelled)
            .map(|m| BookedMeeting {
                title: m.title.clone(),
                start: m.start,
                end: m.end,
                attendees: m.attendees.clone(),
                joined_at: m.joined_at,
            })
            .collect()
    }
    fn time(&self, timestamp: &str) -> Option<SimTime> {
        self.epoch.parse(timestamp).ok()
    }
    fn sent_to(&self, person: &str, since: Option<&str>) -> Vec<&str> {
        let since = match since.map(|s| self.epoch.parse(s)) {
            None => SimTime(0),
            Some(Ok(t)) => t,
            Some(Err(_)) => return Vec::new(),
        };
        // The DM thread key mirrors the chat tools' naming.
        let key = format!("thread/dm/{}", person.trim_start_matches("npc/"));
        self.index
            .keys
            .get(&key)
            .and_then(|e| self.threads.get(*e).ok())
            .map(|t| {
                t.messages
                    .iter()
                    .filter(|m| m.from == self.intern && m.t >= since)
                    .map(|m| m.text.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A view that lists what a predicate reads (see [`Changes`]).
struct Recording<'v, 'w, 's, 'a> {
    view: &'v View<'w, 's, 'a>,
    reads: std::cell::RefCell<Vec<Input>>,
}

impl Recording<'_, '_, '_, '_> {
    fn read(&self, input: Input) {
        self.reads.borrow_mut().push(input);
    }
}

impl WorldView for Recording<'_, '_, '_, '_> {
    fn file(&self, path: &str) -> Option<&[u8]> {
        self.read(Input::File(normalised(path).into_owned()));
        self.view.file(path)
    }
    fn disclosed(&self, clue: &str) -> bool {
        self.read(Input::Clue(clue.to_owned()));
        self.view.disclosed(clue)
    }
    fn consulted(&self, path: &str) -> bool {
        self.read(Input::Consulted(normalised(path).into_owned()));
        self.view.consulted(path)
    }
    fn tool_called(&self, tool: &str) -> bool {
        self.read(Input::Tool(tool.to_owned()));
        self.view.tool_called(tool)
    }
    fn attended_on_time(&self, meeting: &str) -> bool {
        self.read(Input::Meetings);
        self.view.attended_on_time(meeting)
    }
    fn booked_meetings(&self) -> Vec<BookedMeeting> {
        self.read(Input::Meetings);
        self.view.booked_meetings()
    }
    fn time(&self, timestamp: &str) -> Option<SimTime> {
        // A function of the scenario's calendar alone: nothing to remember.
        self.view.time(timestamp)
    }
    fn sent_to(&self, person: &str, since: Option<&str>) -> Vec<&str> {
        let key = format!("thread/dm/{}", person.trim_start_matches("npc/"));
        self.read(Input::Thread(key));
        self.view.sent_to(person, since)
    }
}

fn evaluate_checkpoints(
    mut last: Local<u64>,
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    index: Res<Index>,
    intern: Res<Intern>,
    revision: Res<Revision>,
    tasks: Query<&Task>,
    files: Query<&'static File>,
    meetings: Query<&'static Meeting>,
    threads: Query<&'static Thread>,
    mut checkpoints: Query<&mut Checkpoint>,
    mut changes: ResMut<Changes>,
    mut history: ResMut<History>,
    mut queue: ResMut<Queue>,
    mut trace: ResMut<Trace>,
) {
    // Tasks whose deadline is in this batch close now: their answers are judged on
    // what stands at this instant, before the deadline latches.
    let closing: BTreeSet<&str> = batch
        .0
        .iter()
        .filter_map(|d| match &d.event {
            SimEvent::Deadline { task } => Some(task.as_str()),
            _ => None,
        })
        .collect();
    let changed = *last != revision.0;
    if !changed && closing.is_empty() {
        return;
    }
    *last = revision.0;
    // What changed since the last evaluation; a checkpoint that read none of it
    // would judge as before.
    let mut touched = std::mem::take(&mut changes.touched);
    touched.sort_unstable();
    touched.dedup();
    let full = changes.full;
    let stale = |cp: &Checkpoint| {
        full || cp
            .reads
            .as_ref()
            .is_none_or(|reads| reads.iter().any(|r| touched.binary_search(r).is_ok()))
    };
    let view = View {
        epoch: clock.epoch,
        intern: &intern.key,
        index: &index,
        history: &history,
        files: &files,
        meetings: &meetings,
        threads: &threads,
    };
    let released = |task: &str| {
        index
            .keys
            .get(task)
            .and_then(|e| tasks.get(*e).ok())
            .is_some_and(|t| t.state == TaskState::Released)
    };
    let passed = judge(
        &view,
        clock.now,
        &mut checkpoints,
        |cp| match cp.kind {
            CheckKind::Answer => closing.contains(cp.task.as_str()),
            CheckKind::Event | CheckKind::Diagnostic => changed && stale(cp),
        },
        released,
    );
    record_passes(
        passed,
        clock.now,
        &index,
        &mut history,
        &mut queue,
        &mut trace,
    );
}

/// Judges, at `now`, every unfrozen checkpoint of a released task that `due` selects;
/// returns those that passed as `(order, task, key, kind)`, in scenario order.
fn judge(
    view: &View<'_, '_, '_>,
    now: SimTime,
    checkpoints: &mut Query<&mut Checkpoint>,
    due: impl Fn(&Checkpoint) -> bool,
    released: impl Fn(&str) -> bool,
) -> Vec<((usize, usize), String, String, CheckKind)> {
    let mut passed = Vec::new();
    for mut cp in checkpoints.iter_mut() {
        if cp.passed_at.is_some() || cp.frozen || !due(&cp) || !released(&cp.task) {
            continue;
        }
        // Answers are judged once, at their task's close: nothing to remember.
        let holds = if cp.kind == CheckKind::Answer {
            evaluate(&cp.check, view)
        } else {
            let rec = Recording {
                view,
                reads: std::cell::RefCell::new(Vec::new()),
            };
            let holds = evaluate(&cp.check, &rec);
            let mut reads = rec.reads.into_inner();
            reads.sort_unstable();
            reads.dedup();
            cp.reads = Some(reads);
            holds
        };
        if holds {
            cp.passed_at = Some(now);
            passed.push((cp.order, cp.task.clone(), cp.key.clone(), cp.kind));
        }
    }
    // Query order is storage order; report in scenario order.
    passed.sort();
    passed
}

/// Records passes in the trajectory and history, and releases the tasks they gate.
fn record_passes(
    passed: Vec<((usize, usize), String, String, CheckKind)>,
    now: SimTime,
    index: &Index,
    history: &mut History,
    queue: &mut Queue,
    trace: &mut Trace,
) {
    for (_, task, key, kind) in passed {
        trace.0.push(&Line::Checkpoint {
            t: now,
            task: task.clone(),
            checkpoint: key.clone(),
            kind,
        });
        if let Some(waiting) = index.waiting.get(&(task.clone(), key.clone())) {
            for w in waiting {
                queue.0.push(
                    now,
                    EventClass::Release,
                    SimEvent::Release { task: w.clone() },
                );
            }
        }
        history.passed.insert((task, key));
    }
}

/// Closes every task still open when the run ends: its answers are judged on what
/// stands now, exactly as at a deadline, and its checkpoints freeze. Run once, by
/// the simulation, before the results are collected.
pub(crate) fn close_open_tasks(
    clock: Res<Clock>,
    index: Res<Index>,
    intern: Res<Intern>,
    mut tasks: Query<&mut Task>,
    files: Query<&'static File>,
    meetings: Query<&'static Meeting>,
    threads: Query<&'static Thread>,
    mut checkpoints: Query<&mut Checkpoint>,
    mut history: ResMut<History>,
    mut queue: ResMut<Queue>,
    mut trace: ResMut<Trace>,
) {
    let open: BTreeSet<String> = tasks
        .iter()
        .filter(|t| t.state == TaskState::Released)
        .map(|t| t.spec.key.clone())
        .collect();
    if open.is_empty() {
        return;
    }
    let view = View {
        epoch: clock.epoch,
        intern: &intern.key,
        index: &index,
        history: &history,
        files: &files,
        meetings: &meetings,
        threads: &threads,
    };
    let passed = judge(
        &view,
        clock.now,
        &mut checkpoints,
        |cp| cp.kind == CheckKind::Answer,
        |task| open.contains(task),
    );
    record_passes(
        passed,
        clock.now,
        &index,
        &mut history,
        &mut queue,
        &mut trace,
    );
    for mut cp in &mut checkpoints {
        if open.contains(&cp.task) {
            cp.frozen = true;
        }
    }
    for mut t in &mut tasks {
        if open.contains(&t.spec.key) {
            t.state = TaskState::Closed;
        }
    }
}

fn latch_deadlines(
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    index: Res<Index>,
    mut tasks: Query<&mut Task>,
    mut deadlines: Query<&mut Deadline>,
    mut checkpoints: Query<&mut Checkpoint>,
    mut inbox: ResMut<Inbox>,
) {
    for due in &batch.0 {
        let SimEvent::Deadline { task } = &due.event else {
            continue;
        };
        for mut d in &mut deadlines {
            if &d.task == task {
                d.reached = true;
            }
        }
        let mut unfinished = false;
        if let Some(cps) = index.checkpoints.get(task) {
            for e in cps {
                if let Ok(mut c) = checkpoints.get_mut(*e) {
                    c.frozen = true;
                    unfinished |= c.passed_at.is_none();
                }
            }
        }
        if let Some(mut t) = index.keys.get(task).and_then(|e| tasks.get_mut(*e).ok()) {
            // Only unfinished work deserves a "deadline passed" interruption.
            if t.state == TaskState::Released && unfinished {
                inbox.0.push(Notification::DeadlinePassed {
                    at: clock.epoch.display(clock.now),
                    task: task.clone(),
                    title: t.spec.title.clone(),
                });
            }
            t.state = TaskState::Closed;
        }
    }
}

fn start_of_day(
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    mut mentor: ResMut<Mentor>,
    mut inbox: ResMut<Inbox>,
) {
    for due in &batch.0 {
        if let SimEvent::DayStart { day } = due.event {
            inbox.0.push(Notification::DayStarted {
                at: clock.epoch.display(clock.now),
                day,
                feedback: std::mem::take(&mut mentor.pending),
            });
        }
    }
}

/// The mentor's review of tasks whose deadline has passed, once each. Feedback says
/// what was missed and how to find it (the checkpoints' feedback texts), never values.
fn review(policy: FeedbackPolicy, tasks: &[&Task], checkpoints: &[&Checkpoint]) -> Vec<String> {
    let mut out = Vec::new();
    for t in tasks {
        let all: Vec<&&Checkpoint> = checkpoints
            .iter()
            .filter(|c| c.task == t.spec.key)
            .collect();
        let scored = all.iter().filter(|c| c.kind.scored()).count();
        let passed = all
            .iter()
            .filter(|c| c.kind.scored() && c.passed_at.is_some())
            .count();
        let line = match (t.released_at, &t.spec.release) {
            (None, tbsim_scenario::Release::AfterCheckpoint { task, .. }) => {
                let before = tasks
                    .iter()
                    .find(|o| &o.spec.key == task)
                    .map_or(task.as_str(), |o| o.spec.title.as_str());
                format!(
                    "\"{}\": never reached you; it was to follow \"{before}\" once that was done right.",
                    t.spec.title
                )
            }
            (None, _) => format!(
                "\"{}\": you never received this task; it was handed out while you were away.",
                t.spec.title
            ),
            (Some(_), _) if passed == scored => format!(
                "\"{}\": all {scored} checkpoints passed. Well done.",
                t.spec.title
            ),
            (Some(_), _) => format!(
                "\"{}\": {passed} of {scored} checkpoints passed.",
                t.spec.title
            ),
        };
        let mine = all;
        out.push(line);
        if policy == FeedbackPolicy::Detailed {
            out.extend(
                mine.iter()
                    .filter(|c| c.passed_at.is_none())
                    .map(|c| format!("  - {}", c.feedback)),
            );
        }
    }
    out
}

fn end_of_day(
    batch: Res<DueEvents>,
    clock: Res<Clock>,
    policy: Res<Feedback>,
    tasks: Query<&Task>,
    checkpoints: Query<&Checkpoint>,
    mut mentor: ResMut<Mentor>,
    mut run: ResMut<RunState>,
    mut inbox: ResMut<Inbox>,
    mut trace: ResMut<Trace>,
) {
    for due in &batch.0 {
        let SimEvent::DayEnd { day } = due.event else {
            continue;
        };
        let last = day as usize >= clock.days.len();
        inbox.0.push(Notification::DayEnded {
            at: clock.epoch.display(clock.now),
            day,
            more_days: !last,
        });
        if last {
            run.over.get_or_insert(EndReason::DayEnd);
            continue;
        }
        // Review every task whose deadline has passed and that was not reviewed yet.
        let mut due_tasks: Vec<&Task> = tasks
            .iter()
            .filter(|t| t.state == TaskState::Closed && !mentor.reviewed.contains(&t.spec.key))
            .collect();
        due_tasks.sort_by_key(|t| t.order);
        let mut cps: Vec<&Checkpoint> = checkpoints.iter().collect();
        cps.sort_by_key(|c| c.order);
        let feedback = if policy.0 == FeedbackPolicy::None {
            Vec::new()
        } else {
            review(policy.0, &due_tasks, &cps)
        };
        for t in &due_tasks {
            mentor.reviewed.insert(t.spec.key.clone());
        }
        trace.0.push(&Line::Feedback {
            t: clock.now,
            day,
            lines: feedback.clone(),
        });
        mentor.pending = feedback;
        run.asleep_until = clock.days.get(day as usize).map(|d| d.0);
    }
}
