//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tbsim::agent::Agent;
use tbsim::result::RunResult;
use tbsim::run::{RunLimits, run_in_memory};
use tbsim::scenario::{LoadedScenario, load_file};
use tbsim::sim::SimConfig;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
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
    Command::new(env!("CARGO_BIN_EXE_tbsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the tbsim binary runs")
}

/// stdout and stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
