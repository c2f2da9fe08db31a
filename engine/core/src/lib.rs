//! tbsim's bottom layer, imported by every other tbsim crate and importing none:
//!
//! * [`time`]: integer simulated time ([`time::SimTime`], seconds since the first
//!   day's midnight) and the calendar anchor that converts it to and from workplace
//!   timestamps. Nothing here reads the wall clock.
//! * [`rng`]: random streams derived from `(master seed, stable key)`, so adding an
//!   object never changes another object's draws.
//! * [`path`]: the agent's paths, normalised and confined to the drive and the
//!   workspace.
//! * [`queue`]: the event queue and its total order, `(time, class, sequence)`.
//!
//! * [`template`]: the one template dialect (`{name}` placeholders) of generated
//!   text and model prompts.
//! * [`script_error`]: the error of family scripts, on both sides of the
//!   script host's pipe.
//! * [`term`]: text written by others (scripts, models, scenarios) escaped for a
//!   terminal.
//! * [`protocol`]: the agent ⇄ engine protocol as plain data: observations,
//!   decisions, tool calls and their errors, notifications, the tool catalogue, run
//!   settings and end reasons, model records and usage.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod path;
pub mod protocol;
pub mod queue;
pub mod rng;
pub mod script_error;
pub mod segment;
pub mod template;
pub mod term;
pub mod time;
