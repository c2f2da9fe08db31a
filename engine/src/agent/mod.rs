//! Agents: whatever decides the next tool calls.
//!
//! [`Agent::decide`] returns a boxed future so the same trait fits agents that answer
//! at once (the built-in oracle and idle agents), a model behind an HTTP API, or an
//! external agent driven over a protocol. The simulation itself never awaits: the
//! runner drives one decision at a time, and the clock only moves inside the engine.
//!
//! A model-backed agent pushes each model call (request and response) into its
//! [`RecordSink`] as soon as the call completes; the runner drains the sink after
//! every poll of the decision and writes the records to the trajectory, so a crash
//! while a later call of the same decision is in flight loses no completed call. After
//! the decision the runner collects the rest of the agent's [`TurnLog`] (records not
//! yet drained, and the decision's token usage), then records the decision.
//!
//! To continue an interrupted run, the runner replays the recorded decisions into a
//! fresh world and hands the agent what happened ([`Agent::resume`]): the past steps,
//! and the model lines recorded after the last decision (calls of the decision that
//! was interrupted). A model-backed agent restores its conversation from the recorded
//! requests, and answers a call from those later lines when it would send the same
//! request again, so no completed call is made twice.

mod idle;
mod oracle;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

pub use idle::Idle;
pub use oracle::Oracle;

use serde_json::Value;

use crate::progress::Progress;
use crate::protocol::ModelUsage;
use crate::protocol::{Decision, Observation};
pub use tbsim_core::protocol::ModelRecord;

/// A future returned by an agent.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<Decision, AgentError>> + Send + 'a>>;

/// An agent that failed to decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The agent itself failed (it cannot go on).
    #[error("agent error: {0}")]
    Agent(String),
    /// The infrastructure failed (a model API gave up after its retry budget): the
    /// run ends without judging the agent.
    #[error("infrastructure error: {0}")]
    Infra(String),
    /// The agent went away (an external agent's session was closed or timed out):
    /// the run ends as [`crate::protocol::EndReason::Abandoned`].
    #[error("agent abandoned the run: {0}")]
    Abandoned(String),
    /// The model's server refused the conversation as longer than its context
    /// window: the agent's failure (its history outgrew its model), ending the run
    /// as [`crate::protocol::EndReason::ContextExceeded`]. Never retried or resumed:
    /// the same request would be refused again.
    #[error("the model's context window is full: {0}")]
    ContextFull(String),
}

/// Where an agent puts its model records as their calls complete; the runner drains
/// it while the decision is still in flight (see the module docs). Clones share the
/// same records.
#[derive(Debug, Clone, Default)]
pub struct RecordSink(Arc<Mutex<Vec<ModelRecord>>>);

impl RecordSink {
    /// Adds a completed call.
    pub fn push(&self, record: ModelRecord) {
        self.lock().push(record);
    }

    /// Takes every record pushed since the last drain, oldest first.
    pub fn drain(&self) -> Vec<ModelRecord> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ModelRecord>> {
        // A panic while pushing cannot leave the vector half-updated.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What an agent reports about its latest decision besides the calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnLog {
    /// Model calls behind the decision not yet taken from the agent's
    /// [`RecordSink`] (all of them when no runner drains it).
    pub records: Vec<ModelRecord>,
    /// The usage of every model line before the decision, including lines an
    /// interrupted run recorded and the agent was resumed with (the runner counts it
    /// once, here, and charges its output tokens as the decision's thinking time).
    pub usage: ModelUsage,
    /// Things about the model the person running it should know (e.g. its chat
    /// template dropped the tool catalogue); the runner puts them in the result.
    pub warnings: Vec<String>,
}

/// One recorded step of an interrupted run, for [`Agent::resume`].
#[derive(Debug, Clone)]
pub struct PastStep {
    /// What the agent observed before deciding.
    pub observation: Observation,
    /// The model records that led to the decision.
    pub records: Vec<Value>,
    /// The decision it made.
    pub decision: Decision,
}

/// Decides tool calls from observations.
pub trait Agent: Send {
    /// Name recorded in results.
    fn name(&self) -> String;
    /// The next decision.
    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a>;
    /// Model calls and usage since the last call of this method (none by default).
    fn take_log(&mut self) -> TurnLog {
        TurnLog::default()
    }
    /// Where the agent puts model records as their calls complete, for the runner to
    /// write while a decision is in flight (none by default: records come with
    /// [`Agent::take_log`] only).
    fn record_sink(&self) -> Option<RecordSink> {
        None
    }
    /// Whether the agent is backed by a model (its usage goes into the results).
    fn uses_model(&self) -> bool {
        false
    }
    /// Whether the agent is outside the process (a program over a protocol, or a
    /// person): a console shows it as waiting for the agent while it decides.
    fn external(&self) -> bool {
        false
    }
    /// Whether the runner should hand this agent the run's [`Progress`] with each
    /// observation (see [`Agent::observe`]); off by default, as computing it costs a
    /// pass over the tasks.
    fn wants_progress(&self) -> bool {
        false
    }
    /// When [`Agent::wants_progress`]: each observation with the run's progress,
    /// right before the agent decides on it, and once more when the run has ended
    /// (the last observation, which no decision follows, with the final scores). A
    /// front end serving an external agent hands both out from here.
    fn observe(&mut self, obs: &Observation, progress: &Progress) {
        let _ = (obs, progress);
    }
    /// Brings the agent to the state it had after `past` (an interrupted run's steps),
    /// without calling any model. `pending` holds the model lines recorded after the
    /// last decision (calls of the decision in flight when the run stopped; they stay
    /// in the trajectory). Model lines come with full requests
    /// ([`crate::trajectory::expand_requests`] applied). The default ignores them, re-runs `decide` on each
    /// observation, which suits agents that decide for free and deterministically,
    /// and checks that they decide as recorded.
    fn resume(&mut self, past: &[PastStep], pending: &[Value]) -> Result<(), AgentError> {
        let _ = pending;
        for (i, p) in past.iter().enumerate() {
            let d = block_on(self.decide(&p.observation))?;
            if d != p.decision {
                return Err(AgentError::Agent(format!(
                    "cannot resume: at step {} the agent decides differently than recorded",
                    i + 1
                )));
            }
        }
        self.take_log();
        Ok(())
    }
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on the current thread (for agents without a runtime).
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}
