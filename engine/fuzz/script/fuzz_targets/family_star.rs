//! `family.star` parsing and loading: the bytes are a script's text, loaded as
//! `tbsim family check` loads one, under small bounds. It must load or fail with
//! a `ScriptError`, never panic, overflow the stack or run past its bounds.
#![no_main]

use std::time::Duration;

use tbsim_script::{Limits, ScriptFamily};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        ticks: 200_000,
        heap_bytes: 64 << 20,
        call_depth: 50,
        wall: Some(Duration::from_secs(2)),
    };
    if let Ok(f) = ScriptFamily::from_source("fuzz/family.star", source, limits) {
        // What loaded was checked: its declarations are plain, shallow data.
        for v in f.variants() {
            assert!(v.params.is_object(), "{}", v.key);
        }
    }
});
