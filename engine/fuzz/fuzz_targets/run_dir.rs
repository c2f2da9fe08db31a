//! A shared run directory: `trajectory.jsonl`, `result.json` and `run.json` read by
//! replay, regrade, fork and the console's timeline.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tbsim_engine::fuzz::run_dir_bytes(data);
});
