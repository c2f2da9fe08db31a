//! The tbsim bench suite: one criterion binary aggregating per-area groups.
//!
//! Run it with `cargo bench -p tbsim-benches`; see `benches/README.md`.

use criterion::criterion_main;

// The allocator `tbsim` ships with (engine/cli/src/main.rs), so the figures are the
// product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod batch;
mod console;
mod console_index;
mod day;
mod generate;
mod llm_concurrency;
mod llm_turn;
mod multiday;
mod npc;
mod queue;
mod script_gen;
mod serve;
mod traineebench;

criterion_main!(
    queue::benches,
    day::benches,
    batch::benches,
    llm_turn::benches,
    generate::benches,
    multiday::benches,
    npc::benches,
    traineebench::benches,
    llm_concurrency::benches,
    serve::benches,
    console::benches,
    console_index::benches,
    script_gen::benches
);
