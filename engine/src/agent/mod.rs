//! Agents: whatever decides the next tool calls.
//!
//! [`Agent::decide`] returns a boxed future so the same trait fits agents that answer
//! at once (the built-in oracle and idle agents), a model behind an HTTP API, or an
//! external agent driven over a protocol. The simulation itself never awaits: the
//! runner drives one decision at a time, and the clock only moves inside the engine.

mod idle;
mod oracle;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

pub use idle::Idle;
pub use oracle::Oracle;

use crate::sim::{Decision, Observation};

/// A future returned by an agent.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<Decision, AgentError>> + Send + 'a>>;

/// An agent that failed to decide (e.g. a model API gave up).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent error: {0}")]
pub struct AgentError(pub String);

/// Decides tool calls from observations.
pub trait Agent: Send {
    /// Name recorded in results.
    fn name(&self) -> String;
    /// The next decision.
    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a>;
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

/// The built-in agents by name.
pub const BUILTIN: &[&str] = &["oracle", "idle"];
