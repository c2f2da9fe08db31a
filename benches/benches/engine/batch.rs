//! The batch runner: every bundled scenario with the oracle agent, through
//! `tbsim_engine::batch` (the path `tbsim run --concurrency N` takes), at concurrency 1, 2
//! and 4.
//!
//! Scenarios are loaded once, outside timing. Each iteration plans the batch, starts
//! the runtime, runs every world to the end and writes its run directory (scenario
//! copy, trajectory flushed per line, `result.json`) into a scratch directory, as the
//! CLI does. Throughput is in runs (scenarios) per second; with oracle agents the
//! worlds are CPU-bound, so the gain from concurrency is bounded by the cores free.
//!
//! NOTE for the integrator (issue 4 §8): the other two figures the issue asks for —
//! the runner's overhead per model turn (test server replying instantly) and
//! throughput growing linearly with `--concurrency` up to 256 scenarios (200 ms
//! replies) — need the model-backed agent and the OpenAI-compatible test server in
//! `tools/` from the LLM branch. They are deliberately not faked here: add them as
//! groups in this file once `llm:<alias>` can be built through an
//! `tbsim_engine::batch::AgentFactory`, and record the figures in `runs/bench/`.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use tbsim_benches::{oracle_config, scenarios_dir};
use tbsim_engine::agent::{Agent, AgentError, Oracle};
use tbsim_engine::batch::{
    AgentFactory, BatchSpec, Job, JobOutcome, NoProgress, plan, run_jobs_blocking,
};
use tbsim_engine::run::RunLimits;
use tbsim_scenario::{LoadedScenario, load_file};

criterion_group!(benches, batch);

const CONCURRENCY: [usize; 3] = [1, 2, 4];

/// A scratch directory under the system temp dir, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tbsim-bench-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the bench temp dir");
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn bundled() -> Vec<Arc<LoadedScenario>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("read content/scenarios")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| match load_file(p) {
            Ok(l) => Arc::new(l),
            Err(e) => panic!("cannot load bench scenario {}:\n{e}", p.display()),
        })
        .collect()
}

fn run(
    scenarios: &[Arc<LoadedScenario>],
    concurrency: usize,
    out: &std::path::Path,
) -> Vec<JobOutcome> {
    let jobs = plan(scenarios, 1, None, out).expect("bundled scenario names are distinct");
    let spec = BatchSpec {
        concurrency,
        limits: RunLimits::default(),
        config: oracle_config(),
        compress: false,
    };
    let agents: Arc<dyn AgentFactory> =
        Arc::new(|job: &Job| -> Result<Box<dyn Agent>, AgentError> {
            Ok(Box::new(Oracle::new(&job.scenario.scenario)))
        });
    run_jobs_blocking(jobs, &spec, agents, Arc::new(NoProgress)).expect("the runtime starts")
}

fn batch(c: &mut Criterion) {
    let scenarios = bundled();
    let scratch = ScratchDir::new("batch");

    // Once, untimed: every run is a correct one, and concurrency changes no digest.
    let digests = |outcomes: Vec<JobOutcome>| -> Vec<String> {
        outcomes
            .into_iter()
            .map(|o| {
                let r = o.result.expect("the run completes");
                assert_eq!(r.checkpoint_score, 1.0, "the oracle solves {}", r.scenario);
                r.digest
            })
            .collect()
    };
    let reference = digests(run(&scenarios, 1, &scratch.0.join("check-1")));
    for n in &CONCURRENCY[1..] {
        assert_eq!(
            digests(run(&scenarios, *n, &scratch.0.join(format!("check-{n}")))),
            reference,
            "concurrency {n} changed a run"
        );
    }

    let mut group = c.benchmark_group("batch");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.sample_size(10);
    group.throughput(Throughput::Elements(scenarios.len() as u64));
    for n in CONCURRENCY {
        let out = scratch.0.join(format!("c{n}"));
        group.bench_function(
            BenchmarkId::new("bundled_oracle", format!("concurrency_{n}")),
            |b| {
                b.iter(|| black_box(run(&scenarios, n, &out)));
            },
        );
    }
    group.finish();
}
