//! Scenario loading and validation (and, when valid, building and starting the world).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tbsim_engine::fuzz::scenario_bytes(data);
});
