//! A smoke run of the host's fuzz targets (`engine/fuzz/script/`) inside the
//! normal tests, with no cargo-fuzz or nightly toolchain: the targets' own
//! checks, fed the bundled families and seeded mutations of them. A `family.star`
//! must load or fail with a [`ScriptError`](crate::ScriptError); every protocol
//! line must be answered with one JSON value (`ok`, `err` or a `tools` call).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::protocol::Host;
use crate::tools::{Channel, Closed};
use crate::{Limits, ScriptFamily};

/// The bundled script families: the seeds of both targets.
const SEEDS: &[(&str, &str)] = &[
    (
        "inventory_reorder/family.star",
        include_str!("../../../content/families/inventory_reorder/family.star"),
    ),
    (
        "incident_postmortem/family.star",
        include_str!("../../../content/families/incident_postmortem/family.star"),
    ),
    (
        "shift_roster/family.star",
        include_str!("../../../content/families/shift_roster/family.star"),
    ),
];

/// Fragments that mean something to Starlark, JSON or the protocol.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "\"",
    "'",
    "\\",
    "\n",
    "\n    ",
    "def ",
    "lambda x: x",
    "return ",
    "for i in range(99999):\n",
    "*",
    "**",
    "1e309",
    "-1",
    "9999999999999999999999",
    "None",
    "\u{0}",
    "é",
    "\"op\"",
    "\"handle\": 0",
    "\"generate\"",
    "\"solve\"",
    "\"load\"",
    "[[[[[[[[",
    "]]]]]]]]",
    "x = [x]\n",
    "fail(\"x\")\n",
    "str(",
    "json.encode(",
];

/// splitmix64: a fixed, dependency-free stream for the mutations.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One to four edits of `text` (cut a span, repeat one, insert a token, swap
/// two bytes), kept on character boundaries.
fn mutate(text: &str, m: &mut Mix) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..=m.below(4) {
        let n = s.len();
        let at = m.below(n + 1);
        match m.below(4) {
            0 if n > 0 => {
                let end = (at + 1 + m.below(40)).min(n);
                s.drain(at.min(n)..end);
            }
            1 if n > 0 => {
                let end = (at + 1 + m.below(40)).min(n);
                let span: Vec<char> = s[at.min(n)..end].to_vec();
                for (k, c) in span.into_iter().enumerate() {
                    s.insert(at.min(n) + k, c);
                }
            }
            2 => {
                let t = TOKENS[m.below(TOKENS.len())];
                for (k, c) in t.chars().enumerate() {
                    s.insert(at + k, c);
                }
            }
            _ if n > 1 => {
                let b = m.below(n);
                s.swap(at.min(n - 1), b);
            }
            _ => {}
        }
    }
    s.into_iter().collect()
}

/// The `family_star` target's bounds.
fn limits() -> Limits {
    Limits {
        ticks: 200_000,
        heap_bytes: 64 << 20,
        call_depth: 50,
        wall: Some(Duration::from_secs(2)),
    }
}

/// Mutations of each seed per target; a load takes about a millisecond.
const MUTATIONS: u64 = 120;

#[test]
fn family_star_target_survives_the_seeds_and_their_mutations() {
    for (file, source) in SEEDS {
        let f = ScriptFamily::from_source(file, source, limits())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(f.variants().iter().all(|v| v.params.is_object()));
        for k in 0..MUTATIONS {
            let mut m = Mix(k ^ (file.len() as u64) << 32);
            let text = mutate(source, &mut m);
            if let Ok(f) = ScriptFamily::from_source(file, &text, limits()) {
                for v in f.variants() {
                    assert!(v.params.is_object(), "{file} mutation {k}: {}", v.key);
                }
            }
        }
    }
}

fn answered(host: &mut Host, line: &str) {
    let answer = host.answer(line);
    let v: Value = serde_json::from_str(&answer)
        .unwrap_or_else(|e| panic!("{e}: not one JSON value for {line:?}: {answer}"));
    assert!(
        v.get("ok").is_some() || v.get("err").is_some() || v.get("call").is_some(),
        "{line:?}: {answer}"
    );
}

#[test]
fn protocol_target_answers_every_line_of_the_seeds_and_their_mutations() {
    let (file, source) = SEEDS[0];
    let input = json!({"seed": 7, "scenario": "s", "id": "t", "date": "2025-10-01",
        "start": "09:00", "deadline": "17:00", "day": 1, "mentor": "npc/a"});
    let lines = [
        json!({"op": "hello"}).to_string(),
        json!({"op": "corpus", "corpus": {"company": "Acme"}}).to_string(),
        json!({"op": "load", "file": file, "source": source}).to_string(),
        json!({"op": "generate", "handle": 0, "input": input, "params": {"level": "easy"}})
            .to_string(),
        json!({"op": "claims", "handle": 0, "task": {"title": "Reorder supplies before they run out"}})
            .to_string(),
        json!({"op": "solve", "handle": 0, "task": {"objective": "a `b` c `d` e `f`"}}).to_string(),
    ];
    for k in 0..MUTATIONS * 2 {
        let mut m = Mix(k);
        let chan: Box<dyn Channel> = Box::new(Closed);
        let mut host = Host::new(Arc::new(Mutex::new(chan)));
        for line in &lines[..3] {
            answered(&mut host, line);
        }
        // Whole lines as sent, then mutated ones (the load, a generate, garbage).
        let pick = &lines[m.below(lines.len())];
        let line = mutate(pick, &mut m).replace('\n', " ");
        answered(&mut host, &line);
        answered(&mut host, &lines[3]);
    }
}
