//! Entry points shared by the cargo-fuzz targets (`engine/fuzz/`) and the smoke test
//! that runs in the normal suite, so both exercise exactly the same code.
//!
//! Each entry takes arbitrary bytes and must return without panicking, hanging or
//! touching the host: a panic here is a bug in the engine, never in the input.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::protocol::ToolCall;
use crate::protocol::{Decision, SimConfig};
use crate::sim::Sim;
use crate::tools::PythonBackend;
use crate::trajectory::Trajectory;
use tbsim_scenario::LoadedScenario;

/// Most tool calls one input may make (keeps each execution short).
pub const MAX_CALLS: usize = 48;

/// Scenario loading: parse the bytes as a scenario file and validate it; a scenario
/// that validates is also built into a world and started, as `tbsim run` would.
/// Sidecars are not read (no assets directory), so the host's files stay out of reach.
pub fn scenario_bytes(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    let file = Path::new("fuzz.ron");
    let Ok(parsed) = tbsim_scenario::parse_str(&src, file) else {
        return;
    };
    let Ok(assets) = tbsim_scenario::validate(&parsed, file, None) else {
        return;
    };
    let loaded = LoadedScenario {
        blake3: blake3::hash(src.as_bytes()).to_hex().to_string(),
        source: src.into_owned(),
        path: file.to_path_buf(),
        scenario: parsed,
        assets,
    };
    let mut sim = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::digest_only(),
        Box::new(ScriptedPython),
    );
    sim.begin();
}

/// Tool-argument parsing and execution against a world built from `world`.
///
/// The input is a list of calls, one per line, `name<TAB>arguments`; a blank line
/// ends a decision, so one decision may hold several calls. The `run_python` backend
/// never starts a process: it reads the script as the JSON outcome record a sandbox
/// would return (so the code that brings files back is fuzzed too) or reports itself
/// unavailable.
pub fn tool_calls(world: &LoadedScenario, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut decisions: Vec<Decision> = vec![Decision::default()];
    let mut calls = 0;
    for line in text.split('\n') {
        if calls >= MAX_CALLS {
            break;
        }
        if line.trim().is_empty() {
            if decisions.last().is_some_and(|d| !d.calls.is_empty()) {
                decisions.push(Decision::default());
            }
            continue;
        }
        let (name, arguments) = line.split_once('\t').unwrap_or((line, ""));
        calls += 1;
        if let Some(d) = decisions.last_mut() {
            d.calls.push(ToolCall {
                id: format!("c{calls}"),
                name: name.to_owned(),
                arguments: arguments.to_owned(),
            });
        }
    }
    let mut sim = Sim::new(
        world,
        SimConfig::default(),
        Trajectory::digest_only(),
        Box::new(ScriptedPython),
    );
    sim.begin();
    for d in &decisions {
        if sim.is_over() {
            break;
        }
        sim.step(d);
    }
    let _ = sim.results();
}

/// A `run_python` backend whose outcome is the script itself, read as an outcome
/// record; anything else is reported as the sandbox being unavailable.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptedPython;

impl PythonBackend for ScriptedPython {
    fn run(
        &mut self,
        _step: u64,
        _call_id: &str,
        code: &str,
        _files: &BTreeMap<String, Vec<u8>>,
    ) -> Value {
        match serde_json::from_str::<Value>(code) {
            Ok(v) if v.is_object() && v.get("error").is_none() => v,
            _ => json!({"error": "the fuzzing backend runs no scripts"}),
        }
    }
}

/// Seeds for [`tool_calls`] drawn from a scenario: every task's oracle plan as one
/// input (the calls that reach deep into that task's state), then hand-made calls
/// covering every tool, including the argument shapes models get wrong.
pub fn tool_seeds(s: &tbsim_scenario::Scenario) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = s
        .tasks
        .iter()
        .filter(|t| !t.plan.is_empty())
        .map(|t| {
            let mut out = String::new();
            for step in &t.plan {
                out.push_str(&step.tool);
                out.push('\t');
                // A line holds one call, so the arguments must be on one line.
                out.push_str(&step.args.replace('\n', " "));
                out.push('\n');
            }
            out.into_bytes()
        })
        .collect();
    let person = s.company.people.first().map_or("", |p| p.key.as_str());
    let outcome = json!({"exit_code": 0, "stdout": "ok", "stderr": "", "timed_out": false,
        "memory_exceeded": false, "written": {"out.txt": "aGVsbG8=", "../x": "eA=="}, "deleted": [], "refused": []});
    let hand = [
        "list_colleagues\t{}\nmy_tasks\t\nmy_calendar\t{}\n\nlist_folder\t{\"path\":\"drive\"}\nlist_folder\t{\"path\":\"workspace\"}".to_owned(),
        format!("send_message\t{{\"to\":\"{person}\",\"text\":\"hello\"}}\n\nread_messages\t{{\"with\":\"{person}\"}}\nwait\t{{\"minutes\":30}}"),
        format!("create_group\t{{\"name\":\"g\",\"members\":[\"{person}\"]}}\nsend_group_message\t{{\"group\":\"group/1\",\"text\":\"hi\"}}"),
        "write_file\t{\"path\":\"workspace/a.md\",\"content\":\"x\"}\nread_file\t{\"path\":\"workspace/a.md\"}\ncopy_from_drive\t{\"path\":\"drive/a\",\"to\":\"workspace/b\"}".to_owned(),
        "available_rooms\t{\"start\":\"2025-10-07T10:00\",\"end\":\"2025-10-07T11:00\"}\nbook_meeting\t{\"title\":\"t\",\"room\":\"r\",\"start\":\"10:00\",\"end\":\"11:00\",\"attendees\":[]}\ncancel_booking\t{\"meeting\":\"t\"}\njoin_meeting\t{\"meeting\":\"t\"}".to_owned(),
        "calculator\t{\"expression\":\"(120 + 45.5) * 3 ^ 2 % 7\"}\ncalculator\t{\"expression\":\"1/0\"}".to_owned(),
        format!("run_python\t{{\"code\":{}}}\nrun_python\t{{\"code\":\"print(1)\"}}", serde_json::to_string(&outcome.to_string()).unwrap_or_default()),
        "list_services\t{}\nservice_health\t{\"service\":\"web\"}\npage_load_times\t{\"service\":\"web\"}\nerror_logs\t{\"service\":\"web\"}\nreboot_server\t{\"service\":\"web\"}".to_owned(),
        "wait\t{\"until\":\"2025-10-07T17:59\"}\nwait\t{}\nfinish\t{}".to_owned(),
        "read_file\t{\"path\":\"drive/../../etc/passwd\"}\nread_file\t[1,2]\nnope\t{}\nwait\t{\"minutes\":-1}\nread_file\t{\"path\":".to_owned(),
    ];
    seeds.extend(hand.into_iter().map(String::into_bytes));
    seeds
}
/// The scenario the run-directory target's runs are of (small: a replay of it takes
/// milliseconds).
const RUN_DIR_SCENARIO: &str = include_str!("../../content/scenarios/meeting-only.ron");

/// The byte that separates an input's files: `trajectory.jsonl`, then `result.json`,
/// then `run.json`.
pub const RUN_DIR_SEPARATOR: u8 = 0x1e;

/// A run directory from a shared source: the bytes are split at
/// [`RUN_DIR_SEPARATOR`] into `trajectory.jsonl`, `result.json` and `run.json`,
/// written beside a copy of a fixed scenario, and the directory is read the ways the
/// commands read it: `replay`, `regrade`, `fork` (opening the fork point), the
/// console's timeline and `run.json`. A header naming the wrong scenario hash is
/// given the right one, so mutations reach the re-driving code. Every outcome is
/// fine except a panic or a hang.
pub fn run_dir_bytes(data: &[u8]) {
    let mut parts = data.splitn(3, |b| *b == RUN_DIR_SEPARATOR);
    let traj = parts.next().unwrap_or_default();
    let result = parts.next();
    let run = parts.next();
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let d = dir.path();
    let hash = blake3::hash(RUN_DIR_SCENARIO.as_bytes())
        .to_hex()
        .to_string();
    let traj = fix_scenario_hash(traj, &hash);
    let wrote = std::fs::write(d.join("scenario.ron"), RUN_DIR_SCENARIO)
        .and_then(|()| std::fs::write(d.join("trajectory.jsonl"), &traj))
        .and_then(|()| result.map_or(Ok(()), |r| std::fs::write(d.join("result.json"), r)))
        .and_then(|()| run.map_or(Ok(()), |r| std::fs::write(d.join("run.json"), r)));
    if wrote.is_err() {
        return;
    }
    let _ = crate::run_file::RunFile::read(d);
    let _ = crate::replay::replay(d);
    let _ = crate::replay::regrade(d, None);
    for step in [0, 1, 3] {
        let _ = crate::fork::ForkPoint::open(d, step);
    }
    if let Ok(loaded) = tbsim_scenario::load_file(&d.join("scenario.ron")) {
        let epoch = crate::inspect::epoch_of(&loaded);
        let _ = crate::inspect::entries_from(&d.join("trajectory.jsonl"), 0, &epoch, true);
    }
}

/// `traj` with the hash after its first `"scenario_blake3":"` set to `hash` (text
/// only, so the header's bytes otherwise stay as the fuzzer made them).
fn fix_scenario_hash(traj: &[u8], hash: &str) -> Vec<u8> {
    const KEY: &[u8] = br#""scenario_blake3":""#;
    let mut out = traj.to_vec();
    if let Some(at) = traj.windows(KEY.len()).position(|w| w == KEY) {
        let from = at + KEY.len();
        let to = traj[from..]
            .iter()
            .position(|b| *b == b'"')
            .map_or(traj.len(), |n| from + n);
        out.splice(from..to, hash.bytes());
    }
    out
}
