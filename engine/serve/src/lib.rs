//! # tbsim-serve — worlds driven by external agents
//!
//! The session layer every front end for agents outside the process shares (the
//! HTTP session API here, an MCP server), the HTTP session API itself, and the
//! console people use beside it.
//!
//! * [`session::Session`] owns one world. Its run is `tbsim_engine::run::run_to_dir_async`
//!   — the code `tbsim run` uses — on a blocking thread, with a
//!   [`session::RemoteAgent`] that hands each observation out and awaits the next
//!   decision from a channel; scores, the run directory and `tbsim replay` are
//!   therefore those of a `tbsim run` making the same decisions. The reward is the
//!   change in the run's total checkpoint score ([`tbsim_engine::progress`]).
//! * [`registry::Registry`] holds a server's sessions: unguessable ids, a cap,
//!   idle expiry, and scenario names confined to the server's roots
//!   ([`scenarios`]).
//! * [`http`] is the JSON session API over axum (`tbsim serve`).
//! * [`mcp`] is the MCP server (rmcp): over stdio (`tbsim mcp`) and over streamable
//!   HTTP at `/mcp` in the session API's router, one world per MCP connection.
//! * [`fuzz`] is the HTTP fuzz target's entry point (`engine/fuzz/`).
//! * [`console`] is the web console (`/` and `/v1/console/…`, merged into the same
//!   router): people watch, guide, play and fork runs. It reads runs from their
//!   directories (trajectories tailed, worlds replayed to a step) and their live
//!   controls, through `tbsim_engine::inspect`, which keeps hidden data out.
//!
//! Ordering: a watcher's pause, step and guidance act only at a run's decision
//! boundaries (`tbsim_engine::live`), so what a run records never depends on when a
//! page polled or clicked; only what was applied is written, and replays.
//!
//! Imports `tbsim-core`, `tbsim-scenario` and `tbsim-engine` only.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod conn;
pub mod console;
pub mod fuzz;
pub mod http;
pub mod mcp;
pub mod registry;
pub mod scenarios;
pub mod session;
