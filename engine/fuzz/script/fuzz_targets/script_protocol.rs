//! The family-script host's protocol: the bytes are request lines (split at
//! newlines) as tbsim would write them to `tbsim-script`, after a `hello`, a
//! small corpus and a bundled family's `load`. Every line must be answered with
//! one JSON line (`ok`, `err` or a `tools` call), never a panic or a hang.
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use tbsim_script::protocol::Host;
use tbsim_script::tools::{Channel, Closed};

fn load_line() -> &'static str {
    static L: OnceLock<String> = OnceLock::new();
    L.get_or_init(|| {
        serde_json::json!({
            "op": "load",
            "file": "inventory_reorder/family.star",
            "source": include_str!("../../../../content/families/inventory_reorder/family.star"),
        })
        .to_string()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let chan: Box<dyn Channel> = Box::new(Closed);
    let mut host = Host::new(Arc::new(Mutex::new(chan)));
    for setup in [
        r#"{"op":"hello"}"#,
        r#"{"op":"corpus","corpus":{"company":"Acme"}}"#,
        load_line(),
    ] {
        let _ = host.answer(setup);
    }
    let text = String::from_utf8_lossy(data);
    for line in text.split('\n').take(16) {
        let answer = host.answer(line);
        let v: serde_json::Value =
            serde_json::from_str(&answer).expect("every answer is one JSON value");
        assert!(
            v.get("ok").is_some() || v.get("err").is_some() || v.get("call").is_some(),
            "{answer}"
        );
    }
});
