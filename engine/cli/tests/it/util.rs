//! Shared helpers for the integration tests.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig, ToolResult};
use tbsim_engine::agent::{Agent, Idle, Oracle};
use tbsim_engine::result::RunResult;
use tbsim_engine::run::{RunLimits, run_in_memory};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, ScenarioPlan, Suite, generate_suite, to_ron};
use tbsim_scenario::{LoadedScenario, Scenario, load_file, parse_str, validate};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The bundled scenario files, sorted.
pub fn bundled() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("content/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    v.sort();
    v
}

/// Loads a bundled scenario by name.
pub fn scenario(name: &str) -> LoadedScenario {
    load_file(&root().join(format!("content/scenarios/{name}.ron"))).unwrap()
}

/// Runs an agent in memory.
pub fn run(
    loaded: &LoadedScenario,
    agent: &mut dyn Agent,
    seed: Option<u64>,
) -> (RunResult, Vec<String>) {
    let config = SimConfig {
        seed,
        agent: agent.name(),
        ..SimConfig::default()
    };
    run_in_memory(loaded, agent, config, &RunLimits::default())
}

/// Runs the real `tbsim` binary.
pub fn tbsim(args: &[&str], cwd: &Path) -> Output {
    tbsim_command(args, cwd)
        .output()
        .expect("the tbsim binary runs")
}

/// `tbsim run --agent <agent> --out <out> <scenarios...>` through the real binary;
/// panics with its stderr if it fails.
pub fn run_agent(agent: &str, out: &Path, scenarios: &[&Path]) {
    let mut args = vec!["run", "--agent", agent, "--out", out.to_str().unwrap()];
    args.extend(scenarios.iter().map(|p| p.to_str().unwrap()));
    let o = tbsim(&args, &root());
    assert!(o.status.success(), "{}", text(&o).1);
}

/// The job-engine variables `tbsim run` shards by.
pub const SHARD_VARS: [&str; 6] = [
    "JOB_COMPLETION_INDEX",
    "TBSIM_SHARD_COUNT",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_COUNT",
];

/// The real `tbsim` binary, ready to run: without the job-engine variables, so tests
/// run inside a Slurm array or an Indexed Job still run whole batches.
pub fn tbsim_command(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tbsim"));
    c.args(args).current_dir(cwd);
    for v in SHARD_VARS {
        c.env_remove(v);
    }
    c
}

/// stdout and stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Seeds a family sweep draws with unset parameters.
pub const SEEDS: u64 = 200;

/// The day one-task plans start on unless a test asks for another.
pub const DATE: &str = "2025-10-01";

/// A 09:00-18:00 day named `{name}-{seed}` at a 40-person company with one task
/// `id` of `family`, released at the start with no deadline.
pub fn one_task_plan(name: &str, seed: u64, id: &str, family: Family, date: &str) -> ScenarioPlan {
    ScenarioPlan::one_task(&format!("{name}-{seed}"), date, id, family)
}

/// A suite at `seed` holding only `one_task_plan(name, seed, id, family, DATE)`.
pub fn one_task_suite(name: &str, seed: u64, id: &str, family: Family) -> Suite {
    Suite {
        name: name.into(),
        seed,
        scenarios: vec![one_task_plan(name, seed, id, family, DATE)],
    }
}

/// The RON text of a suite's first scenario.
pub fn generate_one(suite: &Suite) -> String {
    generate_suite(suite).unwrap().remove(0).1
}

/// Parses and validates generated RON as the CLI would, as if read from `name`.
pub fn load_generated(text: &str, name: &str) -> LoadedScenario {
    let path = Path::new(name);
    let scenario = parse_str(text, path).expect("generated RON parses");
    validate(&scenario, path, None).expect("generated scenarios validate");
    LoadedScenario {
        scenario,
        path: path.into(),
        source: text.into(),
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        assets: Default::default(),
    }
}

/// The oracle scores 1.0 with no tool errors and the idle agent scores 0.
/// `ctx` (e.g. `seed 7`) prefixes the failure messages.
pub fn assert_solvable(loaded: &LoadedScenario, ctx: &str) {
    let (o, _) = run(loaded, &mut Oracle::new(&loaded.scenario), None);
    assert_eq!(
        o.checkpoint_score, 1.0,
        "{ctx}: oracle failed: {:#?}",
        o.tasks
    );
    assert!(o.errors.is_empty(), "{ctx}: {:?}", o.errors);
    let (i, _) = run(loaded, &mut Idle::default(), None);
    assert_eq!(
        i.checkpoint_score, 0.0,
        "{ctx}: a checkpoint passed with no action: {:#?}",
        i.tasks
    );
}

/// Generates `suite()`'s scenario twice (the bytes must match), loads it as `name`
/// and requires it solvable (`assert_solvable`). Returns the text and the scenario.
pub fn check_generated(
    ctx: &str,
    name: &str,
    suite: impl Fn() -> Suite,
) -> (String, LoadedScenario) {
    let text = generate_one(&suite());
    assert_eq!(
        generate_one(&suite()),
        text,
        "{ctx} regenerates identically"
    );
    let loaded = load_generated(&text, name);
    assert_solvable(&loaded, ctx);
    (text, loaded)
}

/// Like `check_generated` for a bare scenario: generated twice to the same RON, which
/// loads back (as `name`) to the very same scenario, and solvable.
pub fn check_round_trip(
    ctx: &str,
    name: &str,
    generate: impl Fn() -> Scenario,
) -> (String, Scenario) {
    let s = generate();
    let text = to_ron(&s);
    assert_eq!(text, to_ron(&generate()), "{ctx} regenerates identically");
    let loaded = load_generated(&text, name);
    assert_eq!(loaded.scenario, s, "{ctx}: RON round trip");
    assert_solvable(&loaded, ctx);
    (text, s)
}

/// Calls `one` for seeds `0..seeds` and requires the RON texts it returns to differ.
pub fn assert_distinct_worlds(label: &str, seeds: u64, one: impl FnMut(u64) -> String) {
    let texts: BTreeSet<String> = (0..seeds).map(one).collect();
    assert_eq!(
        texts.len() as u64,
        seeds,
        "{label}: every seed gives a different world"
    );
}

/// Starts the day, writes `content` to `path` (tool call `1`), ends the day and
/// returns the results; `on_write` sees the write's tool result.
pub fn write_answer_and(
    loaded: &LoadedScenario,
    path: &str,
    content: &str,
    on_write: impl FnOnce(&ToolResult),
) -> RunResult {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    let args = serde_json::json!({"path": path, "content": content}).to_string();
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "1".into(),
            name: "write_file".into(),
            arguments: args,
        }],
    });
    on_write(&obs.results[0]);
    sim.end(tbsim_core::protocol::EndReason::Finished);
    sim.results()
}

/// `write_answer_and` without a look at the write itself.
pub fn write_answer(loaded: &LoadedScenario, path: &str, content: &str) -> RunResult {
    write_answer_and(loaded, path, content, |_| {})
}

/// The first task's checkpoints as (key, passed).
pub fn first_task_checkpoints(r: &RunResult) -> Vec<(String, bool)> {
    r.tasks[0]
        .checkpoints
        .iter()
        .map(|c| (c.key.clone(), c.passed))
        .collect()
}

/// A family's `(variant key, params)` list with the params wrapped by `family`.
pub fn family_variants<P>(
    variants: Vec<(String, P)>,
    family: impl Fn(P) -> Family,
) -> Vec<(String, Family)> {
    variants.into_iter().map(|(k, p)| (k, family(p))).collect()
}

/// The trajectory's lines with the header's agent renamed to `agent`, the header's
/// bytes otherwise as written (so the digest of runs that differ only in the agent's
/// name comes out the same).
pub fn lines_as(dir: &Path, agent: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let was = format!("\"agent\":{}", header["agent"]);
    assert!(
        lines[0].contains(&was),
        "header names its agent: {}",
        lines[0]
    );
    lines[0] = lines[0].replacen(&was, &format!("\"agent\":{}", serde_json::json!(agent)), 1);
    lines
}

/// Starts `tbsim serve` on a free loopback port with `--out out` and `extra`
/// arguments; returns the child and the `host:port` it printed.
pub fn spawn_serve(out: &Path, extra: &[&str]) -> (std::process::Child, String) {
    let mut args = vec![
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    spawn_listening(tbsim_command(&args, &root()))
}

/// Spawns a tbsim server (`serve`, `view`) and returns the child with the
/// `host:port` of the `http://` URL on its first line of output.
pub fn spawn_listening(mut cmd: Command) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the tbsim server starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .rsplit("http://")
        .next()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_owned();
    (child, addr)
}
