//! The oracle over the whole 50-scenario suite `content/scenarios/traineebench/`,
//! one scenario after another on one thread (scores included, trajectories hashed,
//! not kept). Scenarios are loaded and validated once, outside timing; before timing
//! every run must score 1.0. Throughput is in scenarios; the time is per suite.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use tbsim_benches::{run_oracle_day, scenarios_dir};
use tbsim_engine::trajectory::Trajectory;
use tbsim_scenario::{LoadedScenario, load_file};

criterion_group!(benches, traineebench_oracle);

fn suite() -> Vec<LoadedScenario> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scenarios_dir().join("traineebench"))
        .expect("read content/scenarios/traineebench")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| match load_file(p) {
            Ok(l) => l,
            Err(e) => panic!("cannot load bench scenario {}:\n{e}", p.display()),
        })
        .collect()
}

fn traineebench_oracle(c: &mut Criterion) {
    let scenarios = suite();
    assert_eq!(scenarios.len(), 50, "traineebench has 50 scenarios");
    let mut lines = 0;
    let mut steps = 0;
    for s in &scenarios {
        let (r, l) = run_oracle_day(s, Trajectory::in_memory());
        assert_eq!(r.checkpoint_score, 1.0, "the oracle solves {}", r.scenario);
        lines += l.len();
        steps += r.steps;
    }
    eprintln!(
        "traineebench oracle: {} scenarios, {lines} trajectory lines, {steps} decisions",
        scenarios.len()
    );

    let mut group = c.benchmark_group("traineebench_oracle");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(scenarios.len() as u64));
    group.bench_function(BenchmarkId::new("suite_50", "digest_only"), |b| {
        b.iter(|| {
            for s in &scenarios {
                black_box(run_oracle_day(s, Trajectory::digest_only()).0);
            }
        });
    });
    group.finish();
}
