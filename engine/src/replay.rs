//! Replaying a run directory: re-driving a fresh world with the recorded decisions.
//!
//! Replay needs no agent and no network. `run_python` outcomes, colleagues' replies
//! (`npc` lines) and the agent's model requests and responses (`model` lines) come
//! from the trajectory. Every regenerated line must equal the recorded one; the first
//! line that differs is reported with its step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::npc::RecordedNpc;
use crate::scenario::{ScenarioErrors, load_file};
use crate::sim::{Sim, SimConfig};
use crate::trajectory::{Trajectory, digest_lines};

/// Why a replay could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A run file is missing or unreadable.
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// The run's scenario copy is invalid.
    #[error("{0}")]
    Scenario(ScenarioErrors),
    /// The trajectory is malformed.
    #[error("`{0}` line {1}: {2}")]
    Format(PathBuf, usize, String),
    /// The scenario copy is not the one the run used.
    #[error("`{0}` has BLAKE3 {1} but the trajectory was recorded with {2}")]
    ScenarioChanged(PathBuf, String, String),
}

/// The first line where replay and record differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// 1-based line number in `trajectory.jsonl`.
    pub line: usize,
    /// The decision step the line belongs to (0 before the first decision).
    pub step: u64,
    /// The recorded line (or `<end of file>`).
    pub expected: String,
    /// The replayed line (or `<end of replay>`).
    pub got: String,
}

/// Outcome of a replay.
#[derive(Debug, Clone)]
pub struct ReplayReport {
    /// Lines compared.
    pub lines: usize,
    /// Digest of the replayed trajectory.
    pub digest: String,
    /// Digest recorded in `result.json`, if present.
    pub recorded_digest: Option<String>,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
}

impl ReplayReport {
    /// Whether the replay reproduced the run exactly.
    pub fn identical(&self) -> bool {
        self.divergence.is_none()
            && self
                .recorded_digest
                .as_deref()
                .is_none_or(|d| d == self.digest)
    }
}

/// The simulation settings recorded in a trajectory header.
pub fn config_from_header(header: &Value) -> SimConfig {
    SimConfig {
        seed: header["seed"].as_u64(),
        hints: header["hints"].as_u64().unwrap_or(0) as u8,
        turn_cost_secs: header["turn_cost_secs"].as_u64().map(|v| v as u32),
        token_cost_secs: header["token_cost_secs"].as_u64().map(|v| v as u32),
        agent: header["agent"].as_str().unwrap_or_default().to_owned(),
        feedback: serde_json::from_value(header["feedback"].clone()).unwrap_or_default(),
        shuffle: None,
    }
}

/// Replays the run in `dir`.
pub fn replay(dir: &Path) -> Result<ReplayReport, ReplayError> {
    let traj = dir.join("trajectory.jsonl");
    let rec = crate::run::read_recorded(&traj)?;
    let scen_path = dir.join("scenario.ron");
    let loaded = load_file(&scen_path).map_err(ReplayError::Scenario)?;
    let want = rec.header["scenario_blake3"].as_str().unwrap_or_default();
    if loaded.blake3 != want {
        return Err(ReplayError::ScenarioChanged(
            scen_path,
            loaded.blake3,
            want.to_owned(),
        ));
    }
    let config = config_from_header(&rec.header);
    let mut sim = Sim::new(
        &loaded,
        config,
        Trajectory::in_memory(),
        Box::new(rec.python.clone()),
    );
    let mut npc = RecordedNpc::new(None);
    for l in &rec.npc_lines {
        npc.insert(l);
    }
    sim.set_npc_engine(Box::new(npc));
    sim.begin();
    for s in &rec.steps {
        if sim.is_over() {
            break;
        }
        for r in &s.records {
            sim.record_raw(&r.text);
        }
        sim.step_with(&s.decision, s.tokens_out);
    }
    for r in &rec.trailing {
        sim.record_raw(&r.text);
    }
    if let Some(r) = rec.end {
        sim.end(r);
    }
    let result = sim.results();
    let got = sim.trajectory().lines();
    let recorded: Vec<&str> = rec.lines.iter().map(String::as_str).collect();
    let divergence = first_divergence(&recorded, got);
    let recorded_digest = std::fs::read_to_string(dir.join("result.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<BTreeMap<String, Value>>(&t).ok())
        .and_then(|m| m.get("digest").and_then(Value::as_str).map(str::to_owned));
    Ok(ReplayReport {
        lines: got.len(),
        digest: result.digest,
        recorded_digest,
        divergence,
    })
}

fn first_divergence(recorded: &[&str], got: &[String]) -> Option<Divergence> {
    let n = recorded.len().max(got.len());
    let mut step = 0;
    for i in 0..n {
        let (e, g) = (recorded.get(i).copied(), got.get(i).map(String::as_str));
        if let Some(line) = g.or(e)
            && let Ok(v) = serde_json::from_str::<Value>(line)
            && let Some(s) = v["step"].as_u64()
        {
            step = s;
        }
        if e != g {
            return Some(Divergence {
                line: i + 1,
                step,
                expected: e.unwrap_or("<end of file>").to_owned(),
                got: g.unwrap_or("<end of replay>").to_owned(),
            });
        }
    }
    debug_assert_eq!(
        digest_lines(recorded.iter().copied()),
        digest_lines(got.iter().map(String::as_str))
    );
    None
}
