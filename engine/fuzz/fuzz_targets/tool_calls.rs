//! Tool-argument parsing and execution against the `busy-day` world.
#![no_main]

use std::sync::LazyLock;

use tbsim_scenario::LoadedScenario;

static WORLD: LazyLock<LoadedScenario> = LazyLock::new(|| {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../content/scenarios/busy-day.ron"
    );
    tbsim_scenario::load_file(std::path::Path::new(path)).expect("the bundled scenario loads")
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tbsim_engine::fuzz::tool_calls(&WORLD, data);
});
