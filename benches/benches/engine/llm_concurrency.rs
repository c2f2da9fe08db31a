//! Batch throughput of model-backed runs against slow replies (issue 4 §8): does
//! throughput grow linearly with `--concurrency` up to 256 scenarios in one process?
//!
//! Two workloads, each run N times through `tbsim_engine::batch` (`run_jobs_blocking`, the
//! path `tbsim run --concurrency N` takes: each world on its own blocking thread,
//! writing its run directory) by the built-in model-backed agent, built as the CLI
//! builds `llm:<alias>` (one `HttpModel` on the shared request runtime, reseeded
//! for each job, and a fresh `LlmAgent` per job). The model is `tools/fake-llm` on 127.0.0.1 in the same
//! process, replaying the oracle's decisions one call per turn and sleeping 200 ms
//! before every reply:
//!
//! * `kb-fix-medium` (18 model turns, ~3.6 s a run): a typical working session;
//!   N = concurrency (one wave).
//! * `meeting-only` (3 turns, ~0.6 s a run): the worst case for the runner, where a
//!   run's fixed costs (building the world, creating its files, tearing down) weigh
//!   most; N = 2 x concurrency (two waves).
//!
//! Every level ideally takes the same time per batch, so runs per second should
//! grow linearly with concurrency. After the group the bench prints the CPU spent
//! per run (runner and server together) and how busy the cores were. Each criterion
//! sample starts a fresh server outside timing; timed servers keep no request
//! bodies. Throughput is in runs.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use fake_llm::{Config, FakeServer, ScriptCall, script_from_trajectory};
use tbsim_benches::{fake_model, load_scenario, process_cpu, run_oracle_day};
use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::{Agent, AgentError};
use tbsim_engine::batch::{
    AgentFactory, BatchSpec, Job, JobOutcome, NoProgress, plan, run_jobs_blocking,
};
use tbsim_engine::run::RunLimits;
use tbsim_engine::trajectory::Trajectory;
use tbsim_model::HttpModel;
use tbsim_model::agent::{LlmAgent, Memory};
use tbsim_model::history::SummaryPolicy;
use tbsim_model::prompt::Templates;
use tbsim_scenario::LoadedScenario;

criterion_group!(benches, llm_concurrency);

/// (scenario, waves): N = waves x concurrency runs per batch.
const WORKLOADS: [(&str, usize); 2] = [("kb-fix-medium.ron", 1), ("meeting-only.ron", 2)];
const DELAY_MS: u64 = 200;
const CONCURRENCY: [usize; 4] = [1, 16, 64, 256];
const AGENT: &str = "llm:fake";

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

/// Makes a model caller for a config, on the shared request runtime.
type MakeCaller = Box<dyn Fn(tbsim_model::ModelConfig) -> Arc<HttpModel>>;

/// What every batch shares: the scenario, the oracle's script, the request runtime
/// (inside `caller`) and the prompt templates.
struct Setup {
    scenario: Arc<LoadedScenario>,
    script: Vec<Vec<ScriptCall>>,
    caller: MakeCaller,
    prompts: Arc<Templates>,
}

impl Setup {
    /// A fake server replying after `DELAY_MS`, and a model caller pointing at it.
    fn server(&self, keep_bodies: bool) -> (FakeServer, Arc<HttpModel>) {
        let (server, cfg) = fake_model(Config {
            script: self.script.clone(),
            delay_ms: DELAY_MS,
            keep_bodies,
            ..Config::default()
        });
        (server, (self.caller)(cfg))
    }

    /// Runs `n` copies of the scenario, `concurrency` at a time, against `caller`.
    fn batch(
        &self,
        caller: &Arc<HttpModel>,
        n: usize,
        concurrency: usize,
        out: &Path,
    ) -> Vec<JobOutcome> {
        let trials = u32::try_from(n).expect("a small batch");
        let jobs = plan(std::slice::from_ref(&self.scenario), trials, None, out)
            .expect("one scenario, trials > 0");
        let spec = BatchSpec {
            concurrency,
            limits: RunLimits::default(),
            config: SimConfig {
                agent: AGENT.into(),
                ..SimConfig::default()
            },
            compress: false,
        };
        let (caller, prompts) = (caller.clone(), self.prompts.clone());
        let agents: Arc<dyn AgentFactory> =
            Arc::new(move |job: &Job| -> Result<Box<dyn Agent>, AgentError> {
                // As the CLI does: one HTTP client per model, reseeded per run.
                Ok(Box::new(LlmAgent::new(
                    AGENT,
                    Arc::new(caller.reseeded(job.seed)),
                    prompts.clone(),
                    Box::new(SummaryPolicy::default()),
                    Memory::None,
                )))
            });
        run_jobs_blocking(jobs, &spec, agents, Arc::new(NoProgress)).expect("the runtime starts")
    }
}

fn llm_concurrency(c: &mut Criterion) {
    // The CLI's request runtime, shared by every caller (as `tbsim run` shares it).
    let runtime = tbsim_model::client::runtime().expect("runtime");
    let scratch = ScratchDir::new("llm-concurrency");
    let mut group = c.benchmark_group("llm_concurrency");
    group.warm_up_time(Duration::from_millis(100));
    group.measurement_time(Duration::from_secs(10));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    // (workload, concurrency, runs, wall, CPU) over every timed batch.
    let mut spent: Vec<(&str, usize, u64, Duration, Duration)> = Vec::new();
    for (scenario, waves) in WORKLOADS {
        let name = scenario.trim_end_matches(".ron");
        let loaded = load_scenario(scenario);
        let (reference, lines) = run_oracle_day(&loaded, Trajectory::in_memory());
        let script = script_from_trajectory(&lines.join("\n"), 1);
        let turns = script.len();
        let handle = runtime.handle().clone();
        let setup = Setup {
            scenario: Arc::new(loaded),
            script,
            caller: Box::new(move |cfg| {
                Arc::new(HttpModel::new(cfg, handle.clone(), 0).expect("client"))
            }),
            prompts: Arc::new(Templates::builtin()),
        };

        // Once, untimed: every model-backed run is the oracle's run.
        let (server, caller) = setup.server(true);
        let t0 = std::time::Instant::now();
        let outcomes = setup.batch(&caller, 4, 4, &scratch.0.join(format!("check-{name}")));
        let one_wave = t0.elapsed();
        for o in outcomes {
            let r = o.result.expect("the run completes");
            assert_eq!(r.checkpoint_score, reference.checkpoint_score, "{r:?}");
            assert_eq!(r.tool_calls, reference.tool_calls, "{r:?}");
        }
        let st = server.stats();
        let bytes: usize = st.bodies.iter().map(|b| b.to_string().len()).sum();
        eprintln!(
            "llm_concurrency: {scenario}, {turns} model turns per run at {DELAY_MS} ms \
             (ideal run time {} ms); 4 runs at concurrency 4 took {one_wave:?}, \
             {} agent requests, {} kB of request bodies",
            turns as u64 * DELAY_MS,
            st.agent_requests,
            bytes / 1000
        );
        drop(server);

        for conc in CONCURRENCY {
            let n = conc * waves;
            let out = scratch.0.join(format!("{name}-c{conc}"));
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(name, format!("concurrency_{conc}")), |b| {
                // A fresh server per sample (see the module docs), outside timing.
                let (server, caller) = setup.server(false);
                b.iter_custom(|iters| {
                    let cpu0 = process_cpu();
                    let t0 = std::time::Instant::now();
                    for _ in 0..iters {
                        black_box(setup.batch(&caller, n, conc, &out));
                    }
                    let wall = t0.elapsed();
                    if let (Some(a), Some(b)) = (cpu0, process_cpu()) {
                        spent.push((name, conc, iters * n as u64, wall, b.saturating_sub(a)));
                    }
                    wall
                });
                drop(server);
            });
        }
    }
    group.finish();
    drop(runtime);
    // Low utilisation with sub-linear throughput means runs queue behind each
    // other's bursts of fixed work, not that the machine is out of CPU.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (scenario, _) in WORKLOADS {
        let name = scenario.trim_end_matches(".ron");
        for conc in CONCURRENCY {
            let (runs, wall, cpu) = spent
                .iter()
                .filter(|s| s.0 == name && s.1 == conc)
                .fold((0u64, Duration::ZERO, Duration::ZERO), |a, s| {
                    (a.0 + s.2, a.1 + s.3, a.2 + s.4)
                });
            if runs > 0 {
                eprintln!(
                    "llm_concurrency cpu: {name} at concurrency {conc}: {runs} runs, \
                     {:.3} ms CPU per run, {:.0}% of {cores} cores busy",
                    cpu.as_secs_f64() * 1e3 / runs as f64,
                    100.0 * cpu.as_secs_f64() / (wall.as_secs_f64() * cores as f64),
                );
            }
        }
    }
}
