//! # tbsim-agents — content-blind agents that hold the benchmark to account
//!
//! Sits on `tbsim-core`, `tbsim-scenario` (only to render a drawing the solver
//! reads) and `tbsim-engine` (the [`Agent`] trait). Neither agent ever sees a
//! scenario: both act only through the tools, like any agent from outside.
//!
//! * [`Solver`]: the independent solver. It recognises each released task's family
//!   from its objective and works the answer out from what the tools return; its
//!   agreement with the generators is the evidence that every task is solvable from
//!   what an agent can observe.
//! * [`Adversary`] and [`adversary::ADVERSARIES`]: scripted attackers that try to
//!   score without doing the work, so tests hold every suite to a ceiling.
//! * [`scan`]: the answer-in-observation scan: every scored answer checked against
//!   what generic extraction rules pull out of everything an agent can observe.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod adversary;
pub mod scan;
pub mod scrape;
mod solver;

pub use adversary::Adversary;
pub use solver::Solver;

use tbsim_engine::agent::{Agent, AgentFuture};
