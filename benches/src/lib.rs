//! Shared helpers for the criterion benches in `benches/engine/`.
//!
//! * Finding and loading the bundled scenarios, independent of the directory cargo
//!   runs the bench binary from ([`scenario_path`], [`load_scenario`]).
//! * Running one simulated day with the oracle agent ([`run_oracle_day`]), so the
//!   benches and their sanity checks drive the engine the same way `tbsim run` does.
//! * Starting the fake model server with a configuration that points at it
//!   ([`fake_model`]), for the model-backed benches.
//! * A tiny seeded generator ([`SplitMix64`]) for synthetic workloads. It is written
//!   out here rather than taken from `rand` so the bench crate adds no dependency
//!   (and no `Cargo.lock` change) beyond `tbsim` and `criterion`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fake_llm::FakeServer;
use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::Oracle;
use tbsim_engine::result::RunResult;
use tbsim_engine::run::{RunLimits, run_with};
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_model::{ApiConfig, ModelConfig};
use tbsim_scenario::{LoadedScenario, load_file};

/// The largest bundled scenario: all three task families on one working day.
pub const BUSY_DAY: &str = "busy-day.ron";

/// `content/scenarios/` at the workspace root, located from this crate's manifest
/// directory (`CARGO_MANIFEST_DIR` is fixed at compile time, so the benches find the
/// scenarios whatever the current directory is).
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("content")
        .join("scenarios")
}

/// The path of the bundled scenario file `name` (for example [`BUSY_DAY`]).
pub fn scenario_path(name: &str) -> PathBuf {
    scenarios_dir().join(name)
}

/// Loads and validates the bundled scenario `name` with [`tbsim_scenario::load_file`].
///
/// Call it once, outside the timed loop: parsing and validation are not what the
/// day benches measure.
///
/// # Panics
///
/// If the file is missing or invalid, with every scenario error in the message: a
/// bench must never silently measure a broken input.
pub fn load_scenario(name: &str) -> LoadedScenario {
    let path = scenario_path(name);
    match load_file(&path) {
        Ok(loaded) => loaded,
        Err(errors) => panic!("cannot load bench scenario {}:\n{errors}", path.display()),
    }
}

/// The simulation settings of an oracle run: the scenario's own seed and turn cost,
/// no hints, agent name `oracle` (as `tbsim run --agent oracle` uses).
pub fn oracle_config() -> SimConfig {
    SimConfig {
        agent: "oracle".into(),
        ..SimConfig::default()
    }
}

/// Runs one full simulated day of `loaded` with a fresh oracle agent, recording into
/// `trace`, and returns the results and the captured trajectory lines (empty unless
/// `trace` is [`Trajectory::in_memory`]).
///
/// This is the whole timed body of the day benches: building the world and its
/// schedule, driving the agent to the end of the day, and collecting scores. The
/// oracle never calls `run_python`, so the [`LivePython`] backend is never used.
pub fn run_oracle_day(loaded: &LoadedScenario, trace: Trajectory) -> (RunResult, Vec<String>) {
    let mut agent = Oracle::new(&loaded.scenario);
    run_with(
        loaded,
        &mut agent,
        oracle_config(),
        &RunLimits::default(),
        trace,
        Box::new(LivePython::default()),
    )
}

/// SplitMix64 (Steele, Lea and Flood 2014): a seeded, portable 64-bit generator that
/// costs about a nanosecond per draw, used to build synthetic queue workloads.
///
/// The same seed always yields the same sequence, so two data structures fed from
/// generators with the same seed see exactly the same keys.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `0..n` by multiply-high (Lemire's method without the rejection
    /// step; the bias is below `n / 2^64`, irrelevant for a workload generator).
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "empty range");
        let wide = u128::from(self.next_u64()) * u128::from(n);
        // The high half of a u64 × u64 product always fits in a u64.
        u64::try_from(wide >> 64).expect("high half fits")
    }
}

/// CPU time (user + system, every thread) this process has used so far, from
/// `/proc/self/stat` (Linux; `None` elsewhere). Its resolution is the kernel's
/// `USER_HZ` tick (10 ms), so read it around long stretches of work.
pub fn process_cpu() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, hence the last ')').
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// Starts `tools/fake-llm` on 127.0.0.1 with `config`, and returns it with the
/// configuration of a model (alias `fake`) served by it, as `api_config.json` would
/// give it to `tbsim run --agent llm:fake`.
pub fn fake_model(config: fake_llm::Config) -> (FakeServer, ModelConfig) {
    let server = FakeServer::start(config).expect("start the fake server");
    let text = format!(
        r#"{{"fake": {{"model_name": "fake-agent", "api_key_var": "bench-key", "base_url": "{}"}}}}"#,
        server.base_url()
    );
    let cfg = ApiConfig::parse(Path::new("bench"), &text)
        .and_then(|c| c.model("fake"))
        .expect("bench config");
    (server, cfg)
}

/// A one-task scenario plan of `family` (a variant's family), named after the
/// variant and seed: what the `script_gen` bench and `examples/script_gen_loop`
/// generate, for a Rust family and its script port alike.
pub fn one_task_plan(
    variant: &str,
    seed: u64,
    family: &tbsim_gen::Family,
) -> tbsim_gen::ScenarioPlan {
    tbsim_gen::ScenarioPlan {
        name: format!("bench-{}-{seed}", variant.replace('/', "-")),
        description: String::new(),
        date: "2025-10-01".into(),
        start: "09:00".into(),
        end: "18:00".into(),
        company_size: 40,
        tasks: vec![tbsim_gen::TaskPlan {
            id: "t".into(),
            family: family.clone(),
            release: Default::default(),
            deadline: None,
            priority: Default::default(),
        }],
        days: Vec::new(),
    }
}

/// One one-task plan per variant of family `key` and seed in `0..seeds`, as
/// (seed, plan); `None` when no such family is registered.
pub fn family_plans(key: &str, seeds: u64) -> Option<Vec<(u64, tbsim_gen::ScenarioPlan)>> {
    let variants = tbsim_gen::registry::by_key(key)?.variants();
    let mut out = Vec::new();
    for v in &variants {
        for seed in 0..seeds {
            out.push((seed, one_task_plan(&v.key, seed, &v.family)));
        }
    }
    Some(out)
}

/// The CPU time the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`).
/// Unlike wall time it leaves out the time the thread waited for a CPU; it still
/// counts the thread running slower beside a busy neighbour (shared caches). It
/// counts everything only for work done on this thread: a family-script host
/// embedded in the process (see [`tbsim_gen::script_host::generates_in_process`]),
/// not one behind a pipe.
pub fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    // A CPU-time clock starts at zero and never goes negative.
    Duration::try_from(t).unwrap_or_default()
}
