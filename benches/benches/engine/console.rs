//! What the console costs per request on a recorded busy-day oracle run: the
//! world at a step (a fresh replay of the recorded decisions up to it, then the
//! view), a file at the last step, and the whole timeline (every trajectory line
//! read and stripped of hidden parts).
//!
//! The run is written once, untimed, to a scratch directory with `run_to_dir`, as
//! `tbsim run` writes it. A world view costs a replay of the steps before it, so
//! `world/last` over `world/0` is the price of replaying the whole day.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use tbsim_benches::{BUSY_DAY, load_scenario, oracle_config};
use tbsim_engine::agent::Oracle;
use tbsim_engine::inspect;
use tbsim_engine::run::{RunLimits, run_to_dir};

criterion_group!(benches, console);

fn console(c: &mut Criterion) {
    let loaded = load_scenario(BUSY_DAY);
    let dir = std::env::temp_dir().join(format!("tbsim-bench-console-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut oracle = Oracle::new(&loaded.scenario);
    let r = run_to_dir(
        &loaded,
        &mut oracle,
        oracle_config(),
        &RunLimits::default(),
        &dir,
    )
    .expect("the oracle's run is written");
    assert_eq!(r.checkpoint_score, 1.0, "{r:?}");
    let last = r.steps;
    let epoch = inspect::epoch_of(&loaded);
    let traj = dir.join("trajectory.jsonl");
    let written = inspect::world_at(&dir, None, false).expect("the world replays");
    let file = written
        .files
        .iter()
        .find(|f| f.by_agent)
        .expect("the oracle wrote a file")
        .path
        .clone();

    let mut g = c.benchmark_group("console");
    g.measurement_time(Duration::from_secs(5));
    for step in [0, last / 2, last] {
        g.bench_with_input(BenchmarkId::new("world", step), &step, |b, &s| {
            b.iter(|| black_box(inspect::world_at(&dir, Some(s), false).unwrap()));
        });
    }
    g.bench_function("file/last", |b| {
        b.iter(|| black_box(inspect::file_at(&dir, None, &file).unwrap()));
    });
    g.bench_function("timeline/all", |b| {
        b.iter(|| black_box(inspect::entries_from(&traj, 0, &epoch, false).unwrap()));
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}
