//! # tbsim-validity — the checks that hold the benchmark to account
//!
//! One home for the validity machinery, called by the command line (`tbsim family
//! check`, `tbsim validity scan`) and by the tests:
//!
//! * [`gate`]: the family gate, every check a family must pass over many seeds.
//! * [`scan`]: the answer-in-observation scan: every scored answer checked against
//!   what generic extraction rules pull out of everything an agent can observe.
//! * [`adversary`]: scripted content-blind attackers that try to score without
//!   doing the work.
//! * [`probe`]: the learned shortcut probe: shallow learners over generic surface
//!   features of every observed candidate, trained on some seeds, tested on others.
//! * [`questions`]: the colleague check (natural questions answered, soups refused).
//!
//! Every agent here acts only through the tools; the scenario is read only to
//! judge (checkpoints) and, by the gate, to play the oracle.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod adversary;
pub mod gate;
pub mod jobs;
pub mod probe;
pub mod questions;
pub mod scan;
pub mod scrape;

pub use adversary::Adversary;
