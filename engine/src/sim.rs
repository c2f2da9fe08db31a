//! The simulation: a world, its tick schedule and the loop that advances time.
//!
//! Time advances only by popping events. `run_until(t)` pops every event due at or
//! before `t`, one instant at a time: all events of that instant form a batch, the
//! batch is recorded, and the tick schedule runs once over it. Systems may schedule
//! new events at the current instant (a release on a checkpoint pass); those form
//! the next batch at the same instant. The clock never moves backwards.
//!
//! An agent decision is applied at the current instant, after every event due then:
//! a thinking cost first (if configured: a fixed cost per decision plus, optionally,
//! a cost per thousand output tokens the model spent on it), then each tool call in
//! order, each followed by a tick (so checkpoints see the change) and by its time
//! advance.
//!
//! A model-backed agent's requests and responses are recorded before the decision
//! they led to ([`Sim::record_agent`]); replay copies them back from the trajectory.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use bevy_ecs::prelude::*;

use crate::guidance::{GuidanceKind, GuidanceRequest, GuideError};

use crate::npc::{NpcEngine, Scripted};
use crate::protocol::ModelRecord;
use crate::protocol::{
    Briefing, Decision, EndReason, Notification, Observation, SimConfig, ToolResult,
};
use crate::protocol::{ErrorKind, ToolCall, ToolError};
use crate::queue::Due;
use crate::time::{SimDuration, SimTime};
use crate::tools::{self, Advance, CallContext, PythonBackend};
use crate::trajectory::{FORMAT, ForkOf, GuidanceLine, Header, Line, ModelLine, Trajectory};
use crate::world::{
    Clock, DueEvents, Inbox, Intern, Prototype, Queue, RunParams, RunState, ScenarioMeta, SimEvent,
    Task, TaskState, Trace, tick_schedule,
};
use tbsim_scenario::LoadedScenario;

thread_local! {
    /// The prototype of the scenario this thread last built a simulation of, with
    /// that scenario as it was then.
    static LAST_PROTOTYPE: RefCell<Option<(LoadedScenario, Arc<Prototype>)>> =
        const { RefCell::new(None) };
}

/// `loaded`'s [`Prototype`]: the one this thread built last if `loaded` is the same
/// scenario (the same file, and the same content and assets compared in full, as a
/// caller may change a loaded scenario), else a new one. A world copied from a
/// prototype is the world [`crate::world::build_world`] builds (`world::prototype`'s tests), so
/// sharing it changes nothing but time: the gate, the scan, batches and benches
/// build many worlds of one scenario in a row, and building one was most of a
/// short run's cost.
fn prototype_of(loaded: &LoadedScenario) -> Arc<Prototype> {
    LAST_PROTOTYPE.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((l, proto)) = last.as_ref()
            && l.blake3 == loaded.blake3
            && l.path == loaded.path
            && l.assets == loaded.assets
            && l.scenario == loaded.scenario
        {
            return Arc::clone(proto);
        }
        // The old prototype goes first: two large worlds are never held at once.
        *last = None;
        let proto = Arc::new(Prototype::new(loaded));
        *last = Some((loaded.clone(), Arc::clone(&proto)));
        proto
    })
}

/// A simulation in progress.
pub struct Sim {
    world: World,
    schedule: Schedule,
    python: Box<dyn PythonBackend>,
    npc: Box<dyn NpcEngine>,
    step: u64,
    tool_calls: u64,
    /// The world's revision when the tick schedule last ran (see [`Sim::tick`]).
    ticked_at: Option<u64>,
    /// Ticks skipped because they could not have done anything.
    #[cfg(test)]
    skipped_ticks: u64,
    finished_scores: bool,
    config: SimConfig,
    company: String,
    scenario: String,
    provenance: crate::result::Provenance,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("scenario", &self.scenario)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl Sim {
    /// Builds a simulation and records the trajectory header.
    pub fn new(
        loaded: &LoadedScenario,
        config: SimConfig,
        trace: Trajectory,
        python: Box<dyn PythonBackend>,
    ) -> Sim {
        Sim::new_with(loaded, config, trace, python, None)
    }

    /// [`Sim::new`] for a fork: the header names the run it was forked from.
    pub fn new_with(
        loaded: &LoadedScenario,
        config: SimConfig,
        trace: Trajectory,
        python: Box<dyn PythonBackend>,
        fork: Option<ForkOf>,
    ) -> Sim {
        Sim::from_prototype_with(&prototype_of(loaded), config, trace, python, fork)
    }

    /// [`Sim::new`] with its world built by `build_world` rather than copied
    /// from the scenario's prototype (tests hold the two to the same bytes).
    #[cfg(test)]
    pub(crate) fn new_built(
        loaded: &LoadedScenario,
        config: SimConfig,
        trace: Trajectory,
        python: Box<dyn PythonBackend>,
    ) -> Sim {
        let meta = ScenarioMeta::of(loaded);
        let seed = config.seed.unwrap_or(meta.seed);
        let world = crate::world::build_world(
            loaded,
            seed,
            config.hints,
            config.turn_cost_secs,
            config.feedback,
            trace,
        );
        Sim::begin_with(world, meta, config, python, None)
    }

    /// [`Sim::new`] from a scenario's [`Prototype`]: the same simulation, byte for
    /// byte, without building the world again (for many runs of one scenario).
    pub fn from_prototype(
        proto: &Prototype,
        config: SimConfig,
        trace: Trajectory,
        python: Box<dyn PythonBackend>,
    ) -> Sim {
        Sim::from_prototype_with(proto, config, trace, python, None)
    }

    /// [`Sim::from_prototype`], for a fork when `fork` names its parent run.
    fn from_prototype_with(
        proto: &Prototype,
        config: SimConfig,
        trace: Trajectory,
        python: Box<dyn PythonBackend>,
        fork: Option<ForkOf>,
    ) -> Sim {
        let seed = config.seed.unwrap_or(proto.meta.seed);
        let world = proto.instantiate(
            RunParams {
                seed,
                hints: config.hints,
                turn_cost: config.turn_cost_secs,
                feedback: config.feedback,
            },
            trace,
        );
        Sim::begin_with(world, proto.meta.clone(), config, python, fork)
    }

    /// Wraps a freshly built world and records the trajectory header.
    fn begin_with(
        world: World,
        meta: ScenarioMeta,
        config: SimConfig,
        python: Box<dyn PythonBackend>,
        fork: Option<ForkOf>,
    ) -> Sim {
        let seed = config.seed.unwrap_or(meta.seed);
        let mut sim = Sim {
            world,
            schedule: tick_schedule(),
            python,
            npc: Box::new(Scripted),
            step: 0,
            tool_calls: 0,
            ticked_at: None,
            #[cfg(test)]
            skipped_ticks: 0,
            finished_scores: false,
            company: meta.company,
            scenario: meta.scenario.clone(),
            provenance: meta.provenance,
            config,
        };
        let header = Line::Header(Header {
            format: FORMAT,
            tbsim: env!("CARGO_PKG_VERSION").to_owned(),
            scenario: meta.scenario,
            scenario_blake3: sim.provenance.scenario_blake3.clone(),
            seed,
            agent: sim.config.agent.clone(),
            hints: sim.config.hints,
            turn_cost_secs: sim.config.turn_cost_secs,
            feedback: sim.config.feedback,
            token_cost_secs: sim.config.token_cost_secs,
            fork,
        });
        sim.trace().push(&header);
        sim
    }

    /// Replaces the engine that answers messages to colleagues (default: [`Scripted`]).
    pub fn set_npc_engine(&mut self, engine: Box<dyn NpcEngine>) {
        self.npc = engine;
    }

    /// Model usage of the colleagues' engine, if it is model-backed.
    pub fn npc_usage(&self) -> Option<crate::protocol::ModelUsage> {
        self.npc.usage()
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.world.resource::<crate::world::Rngs>().0.master()
    }

    /// When the run started (the first day's start).
    pub fn started_at(&self) -> SimTime {
        self.world.resource::<Clock>().start
    }

    /// Records one of the agent's model calls (fields of `record` are kept, after
    /// `type`, `step` — the decision it leads to — and `t`).
    pub fn record_agent(&mut self, record: &ModelRecord) {
        let line = Line::Model(ModelLine::new(self.step + 1, self.now(), record));
        self.trace().push(&line);
    }

    /// Records a line exactly as given (replay and resume copy recorded agent
    /// lines). It must be one line of JSON, as read from a trajectory.
    pub fn record_raw(&mut self, line: &str) {
        self.trace().record_raw(line);
    }

    /// Ends the run as the agent's failure (`reason`: `agent_error` or
    /// `context_exceeded`), recording what failed.
    pub fn end_agent(&mut self, reason: EndReason, message: &str) {
        let mut run = self.world.resource_mut::<RunState>();
        if run.over.is_none() {
            run.agent_error = Some(message.to_owned());
            run.over = Some(reason);
        }
    }

    /// Ends the run as an infrastructure failure (a model API gave up).
    pub fn end_infra(&mut self, message: &str) {
        let mut run = self.world.resource_mut::<RunState>();
        run.infra_error.get_or_insert_with(|| message.to_owned());
        run.over.get_or_insert(EndReason::InfraError);
    }

    fn trace(&mut self) -> &mut Trajectory {
        &mut self.world.resource_mut::<Trace>().into_inner().0
    }

    /// The world (read-only), for results and tests.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The trajectory so far.
    pub fn trajectory(&self) -> &Trajectory {
        &self.world.resource::<Trace>().0
    }

    /// Current time.
    pub fn now(&self) -> SimTime {
        self.world.resource::<Clock>().now
    }

    /// Decisions made.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// Working days in the scenario.
    pub fn days(&self) -> u64 {
        self.world.resource::<Clock>().days.len().max(1) as u64
    }

    /// Tool calls made.
    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    /// Whether the run has ended.
    pub fn is_over(&self) -> bool {
        self.world.resource::<RunState>().over.is_some()
    }

    /// Why the run ended.
    pub fn end_reason(&self) -> Option<EndReason> {
        self.world.resource::<RunState>().over
    }

    /// Ends the run (step limit, agent failure). No-op if already over.
    pub fn end(&mut self, reason: EndReason) {
        self.world
            .resource_mut::<RunState>()
            .over
            .get_or_insert(reason);
    }

    /// Runs the tick schedule over `batch`.
    ///
    /// With no events, every system but the checkpoint evaluation has nothing to
    /// do, and the evaluation does nothing unless the world's [`Revision`] moved
    /// since it last looked (which is when the schedule last ran: no system after
    /// it bumps the revision). So an empty tick with an unchanged revision (after a
    /// call that changed nothing a checkpoint reads) is skipped outright.
    ///
    /// [`Revision`]: crate::world::Revision
    fn tick(&mut self, batch: Vec<Due<SimEvent>>) {
        let revision = self.world.resource::<crate::world::Revision>().0;
        if batch.is_empty() && self.ticked_at == Some(revision) {
            #[cfg(test)]
            {
                self.skipped_ticks += 1;
            }
            return;
        }
        self.world.resource_mut::<DueEvents>().0 = batch;
        self.schedule.run(&mut self.world);
        self.world.resource_mut::<DueEvents>().0.clear();
        self.ticked_at = Some(self.world.resource::<crate::world::Revision>().0);
    }

    /// Processes every event due at or before `target`, then sets the clock to it.
    /// With `stop_on_notification`, stops after the first batch that notifies the agent.
    fn run_until(&mut self, target: SimTime, stop_on_notification: bool) {
        loop {
            if self.is_over() {
                return;
            }
            let next = self.world.resource::<Queue>().0.peek_time();
            let Some(t) = next.filter(|t| *t <= target) else {
                break;
            };
            let now = self.world.resource::<Clock>().now;
            // Events scheduled in the past cannot exist (pushes are never before now),
            // but if one did, it is processed now rather than moving the clock back.
            let t = t.max(now);
            self.world.resource_mut::<Clock>().now = t;
            let mut batch = Vec::new();
            loop {
                let due = {
                    let mut q = self.world.resource_mut::<Queue>();
                    match q.0.peek_time() {
                        Some(pt) if pt <= t => q.0.pop(),
                        _ => None,
                    }
                };
                let Some(due) = due else { break };
                batch.push(due);
            }
            for d in &mut batch {
                // Lent to the line and taken back: no copy of the event's strings.
                let event = std::mem::replace(&mut d.event, SimEvent::DayEnd { day: 0 });
                let line = Line::Event {
                    t,
                    class: d.class,
                    seq: d.seq,
                    event,
                };
                self.trace().push(&line);
                if let Line::Event { event, .. } = line {
                    d.event = event;
                }
            }
            self.tick(batch);
            if stop_on_notification && !self.world.resource::<Inbox>().0.is_empty() {
                return;
            }
        }
        if !self.is_over() {
            let mut clock = self.world.resource_mut::<Clock>();
            clock.now = clock.now.max(target);
        }
    }

    /// After a working day ends (not the last), nothing happens until the next morning:
    /// move straight there, delivering the start-of-day events.
    fn sleep_through_the_night(&mut self) {
        while let Some(wake) = self.world.resource_mut::<RunState>().asleep_until.take() {
            self.run_until(wake, false);
        }
    }

    fn take_inbox(&mut self) -> Vec<Notification> {
        std::mem::take(&mut self.world.resource_mut::<Inbox>().0)
    }

    fn observation(
        &self,
        results: Vec<ToolResult>,
        notifications: Vec<Notification>,
        briefing: Option<Briefing>,
    ) -> Observation {
        let clock = self.world.resource::<Clock>();
        Observation {
            step: self.step,
            time: clock.epoch.display(clock.now),
            t: clock.now,
            briefing,
            results,
            notifications,
            over: self.is_over(),
        }
    }

    /// Starts the day: processes everything due at the start and returns the first observation.
    pub fn begin(&mut self) -> Observation {
        let start = self.world.resource::<Clock>().start;
        self.run_until(start, false);
        let clock = self.world.resource::<Clock>();
        let intern = self.world.resource::<Intern>();
        let briefing = Briefing {
            you: intern.name.clone(),
            key: intern.key.clone(),
            department: intern.department.clone(),
            manager: crate::world::display_name(&self.world, &intern.manager),
            company: self.company.clone(),
            day_starts: clock.epoch.iso(clock.start),
            day_ends: clock.epoch.iso(clock.end),
        };
        let notes = self.take_inbox();
        self.observation(Vec::new(), notes, Some(briefing))
    }

    /// Per released task: hint tiers given so far (up front by the hint policy and
    /// by guidance) and how many the task has.
    pub fn hint_tiers(&self) -> BTreeMap<String, (u8, u8)> {
        let world = &self.world;
        let run = world.resource::<RunState>();
        let Some(mut q) = world.try_query::<&Task>() else {
            return BTreeMap::new();
        };
        q.iter(world)
            .filter(|t| t.state != TaskState::Pending)
            .map(|t| {
                let total = u8::try_from(t.spec.hints.len()).unwrap_or(u8::MAX);
                let given = run
                    .guidance
                    .get(&t.spec.key)
                    .map_or(0, |g| g.top_tier)
                    .max(self.config.hints.min(total));
                (t.spec.key.clone(), (given, total))
            })
            .collect()
    }

    /// Applies human guidance before the next decision: checks it against the
    /// world, records a `guidance` line and counts it, and returns the notification
    /// that tells the agent (the runner adds it to the observation the agent decides
    /// on; replay drops it). Nothing is recorded when it is refused.
    pub fn guide(&mut self, g: &GuidanceRequest) -> Result<Notification, GuideError> {
        g.check_shape()?;
        if self.is_over() {
            return Err(GuideError::Over);
        }
        let tiers = self.hint_tiers();
        let (tier, text) = match (&g.kind, &g.task) {
            (GuidanceKind::NextHint, None) => return Err(GuideError::NeedsTask),
            (kind, Some(task)) => {
                let &(given, total) = tiers
                    .get(task)
                    .ok_or_else(|| GuideError::UnknownTask(task.clone()))?;
                match kind {
                    GuidanceKind::NextHint => {
                        if given >= total {
                            return Err(GuideError::NoMoreTiers(task.clone()));
                        }
                        let text = self
                            .task_spec(task)
                            .and_then(|t| t.hints.get(usize::from(given)).cloned())
                            .unwrap_or_default();
                        (Some(given + 1), text)
                    }
                    GuidanceKind::Message(m) => (None, m.clone()),
                }
            }
            (GuidanceKind::Message(m), None) => (None, m.clone()),
        };
        let key = g.task.clone().unwrap_or_default();
        {
            let mut run = self.world.resource_mut::<RunState>();
            let count = run.guidance.entry(key).or_default();
            match tier {
                Some(t) => {
                    count.hints += 1;
                    count.top_tier = count.top_tier.max(t);
                }
                None => count.messages += 1,
            }
        }
        let now = self.now();
        let line = Line::Guidance(GuidanceLine {
            step: self.step + 1,
            t: now,
            by: g.by.clone(),
            task: g.task.clone(),
            tier,
            text: text.clone(),
        });
        self.trace().push(&line);
        let clock = self.world.resource::<Clock>();
        Ok(Notification::Guidance {
            at: clock.epoch.display(now),
            from: g.by.strip_prefix("human:").unwrap_or(&g.by).to_owned(),
            task: g.task.clone(),
            tier,
            text,
        })
    }

    /// Applies a recorded `guidance` line (replay): the same checks and records.
    pub fn guide_recorded(&mut self, line: &GuidanceLine) -> Result<Notification, GuideError> {
        let kind = if line.tier.is_some() {
            GuidanceKind::NextHint
        } else {
            GuidanceKind::Message(line.text.clone())
        };
        self.guide(&GuidanceRequest {
            by: line.by.clone(),
            task: line.task.clone(),
            kind,
        })
    }

    fn task_spec(&self, key: &str) -> Option<&tbsim_scenario::TaskSpec> {
        let e = self.world.resource::<crate::world::Index>().keys.get(key)?;
        self.world.get::<Task>(*e).map(|t| &t.spec)
    }

    /// Applies a decision and returns what the agent observes next.
    pub fn step(&mut self, decision: &Decision) -> Observation {
        self.step_with(decision, 0)
    }

    /// Applies a decision whose model calls produced `tokens_out` output tokens (they
    /// are charged as thinking time when a per-token cost is configured).
    pub fn step_with(&mut self, decision: &Decision, tokens_out: u64) -> Observation {
        if self.is_over() {
            return self.observation(Vec::new(), Vec::new(), None);
        }
        self.step += 1;
        if decision.calls.is_empty() {
            self.world.resource_mut::<RunState>().empty_turns += 1;
        }
        let step = self.step;
        let t0 = self.now();
        let line = Line::Decision {
            step,
            t: t0,
            calls: decision.calls.clone(),
            tokens_out,
        };
        self.trace().push(&line);
        let per_k = u64::from(self.config.token_cost_secs.unwrap_or(0));
        // Rounded to the nearest second: the clock is in whole seconds.
        let by_tokens = SimDuration((tokens_out * per_k + 500) / 1000);
        let turn = SimDuration(self.world.resource::<Clock>().turn_cost.0 + by_tokens.0);
        if turn > SimDuration(0) {
            self.run_until(t0.after(turn), false);
            self.sleep_through_the_night();
        }
        let mut results = Vec::new();
        for call in &decision.calls {
            let res = self.call(step, call);
            results.push(res);
        }
        let leftover = self.take_inbox();
        self.observation(results, leftover, None)
    }

    fn call(&mut self, step: u64, call: &ToolCall) -> ToolResult {
        let exec = if self.is_over() {
            tools::Exec::from_error(ToolError::new(
                ErrorKind::RunOver,
                "the run is over; no more actions are possible",
            ))
        } else {
            self.tool_calls += 1;
            let mut ctx = CallContext {
                python: self.python.as_mut(),
                npc: self.npc.as_mut(),
                step,
                call_id: &call.id,
            };
            tools::execute(&mut self.world, call, &mut ctx)
        };
        if let Err(e) = &exec.result
            && e.kind != ErrorKind::RunOver
        {
            *self
                .world
                .resource_mut::<RunState>()
                .errors
                .entry(e.kind.as_str().to_owned())
                .or_default() += 1;
        }
        // The action's own effects are visible to checkpoints at the instant it happens.
        self.tick(Vec::new());
        if exec.finish {
            self.end(EndReason::Finished);
        }
        let now = self.now();
        match exec.advance {
            Advance::By(d) => self.run_until(now.after(d), false),
            Advance::Until(t) => self.run_until(t.max(now), false),
            Advance::UntilNotification(limit) => {
                if self.world.resource::<Inbox>().0.is_empty() {
                    self.run_until(limit.max(now), true)
                }
            }
        }
        self.sleep_through_the_night();
        let notifications = self.take_inbox();
        let clock = self.world.resource::<Clock>();
        let (ok, result, error) = match exec.result {
            Ok(v) => (true, Some(v), None),
            Err(e) => (false, None, Some(e)),
        };
        let res = ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            ok,
            time: clock.epoch.display(clock.now),
            t: clock.now,
            result,
            error,
            attachments: exec.attachments,
            notifications,
        };
        let line = Line::Result {
            step,
            call: call.id.clone(),
            t: res.t,
            result: res,
            record: exec.record,
        };
        self.trace().push(&line);
        let Line::Result { result, .. } = line else {
            unreachable!("built as a result line")
        };
        result
    }

    /// Ends the run if needed, records the end and the scores, and returns the results.
    /// Idempotent: the trajectory gets its closing lines once.
    pub fn results(&mut self) -> crate::result::RunResult {
        self.end(EndReason::DayEnd);
        if !self.finished_scores {
            // Tasks still open are judged now, on what the agent delivered.
            use bevy_ecs::system::RunSystemOnce as _;
            if let Err(e) = self
                .world
                .run_system_once(crate::world::systems::close_open_tasks)
            {
                unreachable!("closing tasks is a valid system: {e}");
            }
        }
        let r = crate::collect::collect(
            &mut self.world,
            &self.scenario,
            &self.config,
            self.step,
            self.tool_calls,
        );
        if !self.finished_scores {
            self.finished_scores = true;
            let now = self.now();
            let reason = self.end_reason();
            let line = Line::End {
                t: now,
                reason,
                steps: self.step,
                tool_calls: self.tool_calls,
            };
            self.trace().push(&line);
            for t in &r.tasks {
                let passed = t
                    .checkpoints
                    .iter()
                    .filter(|c| c.passed)
                    .map(|c| c.key.clone())
                    .collect();
                let line = Line::Score {
                    task: t.key.clone(),
                    score: t.score,
                    success: t.success,
                    passed,
                };
                self.trace().push(&line);
            }
            // A compressed trajectory writes out its last frame.
            self.trace().finish();
        }
        let mut r = r;
        r.digest = self.trajectory().digest();
        r.provenance = self.provenance.clone();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(id: &str, name: &str, arguments: Value) -> Decision {
        Decision {
            calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.to_string(),
            }],
        }
    }

    /// Consecutive worlds of one scenario on a thread share its message scope; a
    /// scenario whose colleagues know something else gets its own, and judges
    /// messages by it.
    #[test]
    fn worlds_of_one_scenario_share_their_scope_and_others_do_not() {
        use crate::world::Specificity;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios/transactions-none-abnormal.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let sim = |l: &LoadedScenario| {
            let python = Box::new(crate::tools::LivePython::default());
            Sim::new(l, SimConfig::default(), Trajectory::discarding(), python)
        };
        let scope = |s: &Sim| std::sync::Arc::clone(&s.world.resource::<Specificity>().0);
        let (a, b) = (sim(&loaded), sim(&loaded));
        assert!(std::sync::Arc::ptr_eq(&scope(&a), &scope(&b)));

        // Another objective: a message copying it is a copy there alone.
        let mut other = loaded.clone();
        let q = "Count every zeppelin parked in the northern hangar before the inspectors arrive tomorrow.";
        other.scenario.tasks[0].objective = q.to_owned();
        let c = sim(&other);
        assert!(!std::sync::Arc::ptr_eq(&scope(&a), &scope(&c)));
        assert_eq!(scope(&c).judge(q), Err(crate::npc::Unspecific::Copied));
        assert_ne!(scope(&a).judge(q), Err(crate::npc::Unspecific::Copied));
        // And back: the first scenario's scope, built again, judges as before.
        let d = sim(&loaded);
        assert!(!std::sync::Arc::ptr_eq(&scope(&c), &scope(&d)));
        assert_eq!(scope(&d).judge(q), scope(&a).judge(q));
    }

    /// Calls an agent could make on `s`: every plan step of every task, reading every
    /// file, and a few that change nothing or only the clock.
    fn menu(s: &tbsim_scenario::Scenario) -> Vec<(String, String)> {
        let mut m: Vec<(String, String)> = s
            .tasks
            .iter()
            .flat_map(|t| t.plan.iter().map(|p| (p.tool.clone(), p.args.clone())))
            .collect();
        for f in &s.files {
            m.push(("read_file".into(), json!({ "path": f.path }).to_string()));
        }
        for mt in &s.meetings {
            m.push((
                "join_meeting".into(),
                json!({ "meeting": mt.key }).to_string(),
            ));
        }
        m.push(("list_folder".into(), json!({"path": "drive"}).to_string()));
        m.push(("my_tasks".into(), "{}".into()));
        m.push(("wait".into(), json!({"minutes": 25}).to_string()));
        m.push((
            "write_file".into(),
            json!({"path": "workspace/notes.md", "content": "draft"}).to_string(),
        ));
        m
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 24,
            ..Default::default()
        })]
        /// Skipping checkpoints whose inputs did not change judges exactly as
        /// evaluating every live checkpoint after every change: the same lines
        /// (checkpoint passes and when, releases they gate) and the same result,
        /// whatever the agent does in whatever order.
        #[test]
        fn incremental_checkpoint_evaluation_judges_as_a_full_one(
            scenario in 0usize..6,
            picks in proptest::collection::vec(0usize..10_000, 1..48),
        ) {
            let name = [
                "busy-day.ron",
                "transactions-none-abnormal.ron",
                "kb-fix-medium.ron",
                "two-days.ron",
                "meeting-check-sum.ron",
                "traineebench/traineebench-002.ron",
            ][scenario];
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../content/scenarios")
                .join(name);
            let loaded = tbsim_scenario::load_file(&path).unwrap();
            let menu = menu(&loaded.scenario);
            let run = |full: bool| {
                let python = Box::new(crate::tools::LivePython::default());
                let config = SimConfig { agent: "test".into(), ..Default::default() };
                let mut sim = Sim::new(&loaded, config, Trajectory::in_memory(), python);
                sim.world.resource_mut::<crate::world::Changes>().full = full;
                sim.begin();
                for (i, p) in picks.iter().enumerate() {
                    let (tool, args) = &menu[p % menu.len()];
                    sim.step(&Decision {
                        calls: vec![ToolCall {
                            id: format!("c{i}"),
                            name: tool.clone(),
                            arguments: args.clone(),
                        }],
                    });
                }
                let r = sim.results();
                (sim.trajectory().lines().to_vec(), serde_json::to_string(&r).unwrap())
            };
            let (full_lines, full_result) = run(true);
            let (lines, result) = run(false);
            proptest::prop_assert_eq!(lines, full_lines);
            proptest::prop_assert_eq!(result, full_result);
        }
    }

    /// Ticks after calls that change nothing are skipped, and a checkpoint whose
    /// input changes afterwards is still judged at the instant of that change.
    #[test]
    fn a_checkpoint_whose_input_changes_is_judged_after_skipped_ticks() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios/transactions-none-abnormal.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let config = SimConfig {
            agent: "test".into(),
            ..Default::default()
        };
        let python = Box::new(crate::tools::LivePython::default());
        let mut sim = Sim::new(&loaded, config, Trajectory::in_memory(), python);
        sim.begin();
        let list = || call("c", "list_folder", json!({"path": "drive"}));
        // The first call of a tool changes what `ToolCalled` sees; the second nothing.
        sim.step(&list());
        let skipped = sim.skipped_ticks;
        sim.step(&list());
        assert!(sim.skipped_ticks > skipped, "an idle tick was skipped");
        let lines_before = sim.trajectory().lines().len();
        let skipped = sim.skipped_ticks;
        let manual = "drive/finance/review/transaction_review_manual.md";
        let obs = sim.step(&call("m", "read_file", json!({"path": manual})));
        assert!(obs.results[0].ok, "{obs:?}");
        assert_eq!(sim.skipped_ticks, skipped, "the tick after the read ran");
        let new = &sim.trajectory().lines()[lines_before..];
        let passed = new
            .iter()
            .position(|l| l.contains(r#""type":"checkpoint""#) && l.contains("manual_consulted"))
            .expect("the manual_consulted checkpoint passed");
        let result = new
            .iter()
            .position(|l| l.contains(r#""type":"result""#))
            .expect("the call's result line");
        assert!(passed < result, "judged at the read, before time moved on");
        // Reading it again changes nothing a checkpoint reads... but bumps the
        // revision (a drive read is recorded each time), so the tick runs.
        let skipped = sim.skipped_ticks;
        sim.step(&call("m2", "read_file", json!({"path": manual})));
        assert_eq!(sim.skipped_ticks, skipped);
    }
}
