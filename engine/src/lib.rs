//! # tbsim-engine — the simulation
//!
//! tbsim turns the TraineeBench idea into a benchmark and training environment: an
//! agent works as a new intern in a simulated company. Tasks stream in with
//! deadlines and priorities, meetings interrupt work, tasks are released by earlier
//! ones, and the facts needed are hidden in files and with colleagues who must be
//! asked. Each task is scored by checkpoints and explained by feedback.
//!
//! This crate sits on `tbsim-core` (time, rng, paths, the queue and the agent ⇄
//! engine [`protocol`]) and `tbsim-scenario` (the scenario format, checkpoint
//! predicates, drawings); the model client, the generators, the report and the CLI
//! sit above it and it imports none of them.
//!
//! ## Model
//!
//! * A scenario file (RON, `tbsim-scenario`) is the whole truth: company, files,
//!   rooms, meetings, tasks with checkpoints, clues, hints, feedback and an oracle
//!   plan, and timed events. Pictures are stored as drawing recipes and rendered to
//!   PNG when the world is built.
//! * The [`world`] is a bevy_ecs `World`: people, files, folders, rooms, meetings,
//!   tasks, deadlines, checkpoints and chat threads are entities with stable keys;
//!   the clock, event [`queue`], RNG streams and trajectory are resources.
//! * [`sim::Sim`] advances time through the queue. After each batch of same-time
//!   events one chained schedule of systems runs (releases, interrupts, deliveries,
//!   checkpoint evaluation, deadline latching, end of day).
//! * An [`agent::Agent`] sees [`protocol::Observation`]s and returns
//!   [`protocol::Decision`]s; [`tools`] are its only way to reach the world. Agents
//!   here: the plan-following oracle and the idle agent (the model-backed agent is in
//!   `tbsim-model`, the solver and adversaries in `tbsim-agents`).
//! * Colleagues answer through an [`npc::NpcEngine`]: scripted from their clue
//!   rules here, or played by a model (`tbsim-model`). Model calls happen outside the
//!   simulated clock and are recorded, so replay needs no network.
//! * Each run writes a [`trajectory`]; [`replay`] re-drives a fresh world from it and
//!   must reproduce every line and the digest. A model turn request is written relative
//!   to the previous one ([`trajectory::expand_requests`] restores it in full).
//! * [`progress`] is a run's progress as plain data while it goes on (clock, released
//!   tasks, score so far; nothing hidden), handed to agents that ask for it
//!   ([`agent::Agent::wants_progress`]): the session API's reward comes from it.
//! * [`inspect`] is what the console shows of a run: the world after a decision,
//!   its files and the trajectory as timeline entries, with nothing hidden.
//! * A run's [`result`] is plain data collected from the world by [`sim`];
//!   [`schedule`] computes the scheduling metrics from a trajectory.
//! * [`run`] drives one agent through one world into a run directory; [`batch`] runs
//!   many scenarios and trials as independent worlds, a bounded number at a time,
//!   with identical outputs whatever the concurrency; [`run_file`] is the `run.json`
//!   every front end writes beside a run.
//! * **Runs that only need a score** use [`run::Scorer`]: the scenario's world is
//!   built once ([`world::Prototype`]) and copied for each run, and nothing is
//!   written, kept or serialised (the trajectory's lines are only counted), so the
//!   validity gate's twenty agents per instance, the scan and RL rollouts pay for
//!   the simulation alone. The result is that of [`run::run_unrecorded`], field for
//!   field; a world copied from a prototype writes the same bytes as one built anew
//!   ([`sim::Sim::from_prototype`]).
//! * Long RL jobs can keep their run directories small: [`run::RunHooks::compress`]
//!   writes `trajectory.jsonl.zst` (zstd frames, [`zst`]) with the same
//!   lines and digest; [`replay`], regrading and [`run_dir::read_trajectory`] read
//!   either form.
//!
//! ## Ordering guarantees
//!
//! These make every run a pure function of (scenario bytes, seed, agent decisions):
//!
//! 1. **Integer time.** [`time::SimTime`] is whole seconds since the scenario epoch.
//!    The clock never moves backwards: events are never scheduled before `now`, and
//!    waiting for a past time is refused.
//! 2. **A total order on events.** The queue pops by `(time, class, seq)`. At one
//!    instant, classes pop in the order day start, interrupt, release, delivery, agent,
//!    deadline, day end ([`queue::EventClass`]); within a class, events pop in push
//!    order (FIFO). Rescheduling an event gives it a fresh sequence number.
//! 3. **Batches.** All events due at one instant form a batch; the tick runs once
//!    per batch, then again for events the tick itself scheduled at that instant.
//!    Checkpoints are evaluated before deadlines latch, so work done at the deadline
//!    instant counts.
//! 4. **Days.** A scenario may span several working days. Between a day's end and the
//!    next day's start nothing acts: the engine moves the clock straight to the next
//!    morning, where the mentor's feedback on the previous day is delivered.
//! 5. **Agent actions** are applied at the current instant after every event due at
//!    that instant, each followed by a tick, then time advances by the tool's cost.
//! 6. **Systems** run as one chain (a total order) on the single-threaded executor.
//!    Every system writes the trajectory or the queue, so none may run unordered:
//!    ambiguity detection is an error, and a system added outside the chain fails
//!    the first tick. Pinned oracle digests of the bundled examples catch any change
//!    in what a run writes.
//! 7. **Randomness** comes from streams keyed by `(master seed, stable key)`
//!    ([`rng`]); adding an object never changes another object's draws.
//! 8. **No hash-order output.** Everything observable is sorted by key or scenario
//!    order; `Entity` ids never leave the process.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use tbsim_core::{path, protocol, queue, rng, time};

pub mod agent;
pub mod batch;
mod calculator;
mod collect;
pub mod event;
pub mod fork;
pub mod fuzz;
pub mod guidance;
pub mod inspect;
pub mod live;
pub mod npc;
pub mod progress;
mod python;
pub mod replay;
pub mod result;
pub mod run;
pub mod run_dir;
pub mod run_file;
pub mod schedule;
pub mod sim;
pub mod tools;
pub mod trajectory;
pub mod world;
pub mod zst;
