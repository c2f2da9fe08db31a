//! # tbsim-agents — the independent solver
//!
//! Sits on `tbsim-core`, `tbsim-scenario` (only to render a drawing the solver
//! reads) and `tbsim-engine` (the [`Agent`] trait). The solver never sees a
//! scenario: it acts only through the tools, like any agent from outside.
//!
//! * [`Solver`]: the independent solver. It recognises each released task's family
//!   from its objective and works the answer out from what the tools return; its
//!   agreement with the generators is the evidence that every task is solvable from
//!   what an agent can observe.
//!
//! The rest of the validity machinery (the gate, the scan, the probe, the
//! adversaries) lives in `tbsim-validity`, which uses this solver as one of its
//! agents.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod solver;

pub use solver::Solver;

use tbsim_engine::agent::{Agent, AgentFuture};
