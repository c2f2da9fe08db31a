//! `fake-llm`: run the test server by hand.
//!
//! ```text
//! fake-llm [--port N] [--script turns.json | --from-trajectory run/trajectory.jsonl] [--per-turn K]
//!          [--context-tokens N]
//! ```
//!
//! `turns.json` is a JSON array of turns, each an array of `{"name", "arguments"}`.
//! The server prints its base URL and serves until interrupted.

use std::process::ExitCode;

use fake_llm::{Config, FakeServer, ScriptCall, script_from_trajectory};

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    // Nobody reads a standalone server's statistics: do not let them grow.
    let mut cfg = Config {
        keep_bodies: false,
        ..Config::default()
    };
    let mut per_turn = 1usize;
    let mut trajectory = None;
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--port" => port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--per-turn" => per_turn = value()?.parse().map_err(|e| format!("--per-turn: {e}"))?,
            "--script" => {
                let p = value()?;
                let text = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
                cfg.script = serde_json::from_str::<Vec<Vec<ScriptCall>>>(&text)
                    .map_err(|e| format!("{p}: {e}"))?;
            }
            "--from-trajectory" => trajectory = Some(value()?),
            "--npc-model" => cfg.npc_model = value()?,
            "--context-tokens" => {
                cfg.context_tokens = Some(
                    value()?
                        .parse()
                        .map_err(|e| format!("--context-tokens: {e}"))?,
                )
            }
            "--delay-ms" => {
                cfg.delay_ms = value()?.parse().map_err(|e| format!("--delay-ms: {e}"))?
            }
            "-h" | "--help" => {
                println!(
                    "fake-llm [--port N] [--script FILE | --from-trajectory FILE] [--per-turn K] [--npc-model NAME] [--delay-ms MS] [--context-tokens N]"
                );
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    if let Some(p) = trajectory {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
        cfg.script = script_from_trajectory(&text, per_turn);
    }
    let server = FakeServer::start_on(cfg, port).map_err(|e| e.to_string())?;
    println!("listening on {}", server.base_url());
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
