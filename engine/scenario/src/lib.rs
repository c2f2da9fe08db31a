//! # tbsim-scenario — the scenario file format
//!
//! Sits on `tbsim-core` and nothing else of tbsim. It owns the types of a scenario
//! ([`spec`], re-exported here), reading them from RON ([`load_file`],
//! [`parse_str`]) with errors that name the file and line:column or the object path
//! ([`ScenarioErrors`]), the semantic checks ([`validate`]) and their size
//! [`limits`], the checkpoint predicates the engine evaluates ([`check`]) and the
//! rendering of stored drawings to PNG (`Drawing::png`).
//!
//! A scenario is one self-contained RON document: the company and its people, the
//! shared drive and workspace files, rooms, meetings, tasks (with their checkpoints,
//! clues, hints, feedback and oracle plan) and timed world events. `tbsim run` needs
//! nothing else. Every type denies unknown fields, so a typo is an error with a
//! position rather than a silently ignored field.
//!
//! Times are written as `YYYY-MM-DDTHH:MM` (or `HH:MM`, meaning the first day) and are
//! converted to integer [`SimTime`](tbsim_core::time::SimTime) at load time.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod date;
mod error;
pub mod limits;
mod load;
mod raster;
pub mod sidecar;
pub mod spec;
pub mod untrusted;
mod validate;

pub use error::syntax_error;
pub use error::{ErrorCode, Location, ScenarioError, ScenarioErrors};
pub use load::{LoadedScenario, load_file, load_text, parse_str};
pub use raster::text_width;
pub use spec::*;
pub use validate::validate;

// Paths inside this crate name the bottom layer as `crate::time` and so on.
use tbsim_core::{path, protocol, time};
