//! The tbsim bench suite: one criterion binary aggregating per-area groups.
//!
//! Run it with `cargo bench -p tbsim-benches`; see `benches/README.md`.

use criterion::criterion_main;

mod batch;
mod day;
mod llm_turn;
mod queue;

criterion_main!(
    queue::benches,
    day::benches,
    batch::benches,
    llm_turn::benches
);
