//! One full simulated day of `content/scenarios/busy-day.ron` with the oracle agent.
//!
//! The scenario is loaded and validated once, outside timing. Each iteration builds a
//! fresh world and oracle and runs the day to the end, scores included:
//!
//! * `digest_only`: the trajectory is hashed but neither kept nor written, so this
//!   is the engine's own cost.
//! * `to_file`: the trajectory goes to `trajectory.jsonl` in a temporary directory,
//!   flushed after every line as `tbsim run` does; the difference from `digest_only`
//!   is the cost of per-line flushing (one `write` system call per line).
//!
//! * `build_only`: `Sim::new` alone (world, schedule, header line), no agent step;
//!   the part of a day's cost that does not depend on how much happens in it.
//! * `from_prototype`: `Sim::from_prototype`, the same simulation copied from the
//!   scenario's `Prototype` (built once, outside timing), as the validity gate and
//!   `run::Scorer` build the many worlds of one instance.
//! * `day/busy_day/score_only`: the whole day as `run::Scorer::score` runs it: the
//!   world from the prototype, nothing serialised or hashed.
//!
//! Throughput is in trajectory lines (header, events, decisions, tool results, end
//! and scores), counted from one in-memory run before timing.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use tbsim_benches::{BUSY_DAY, load_scenario, oracle_config, run_oracle_day};
use tbsim_engine::agent::Oracle;
use tbsim_engine::run::{RunLimits, Scorer};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_engine::world::Prototype;

criterion_group!(benches, day);

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

fn day(c: &mut Criterion) {
    let loaded = load_scenario(BUSY_DAY);

    // Once, untimed: the run must be a correct one, and every sink must produce the
    // same trajectory.
    let (reference, lines) = run_oracle_day(&loaded, Trajectory::in_memory());
    assert_eq!(
        reference.checkpoint_score, 1.0,
        "the oracle must solve busy-day completely: {reference:?}"
    );
    assert_eq!(reference.success_rate, 1.0, "{reference:?}");
    let events = lines.len() as u64;
    let event_lines = lines
        .iter()
        .filter(|l| l.contains(r#""type":"event""#))
        .count();
    eprintln!(
        "busy-day oracle run: checkpoint score {}, {events} trajectory lines \
         ({event_lines} queue events), {} decisions",
        reference.checkpoint_score, reference.steps
    );
    let (digest_run, _) = run_oracle_day(&loaded, Trajectory::digest_only());
    assert_eq!(
        digest_run.digest, reference.digest,
        "digest-only run differs"
    );
    let scratch = ScratchDir::new("day");
    let traj_path = scratch.0.join("trajectory.jsonl");
    let file_trace = Trajectory::to_file(&traj_path).expect("create the trajectory file");
    let (file_run, _) = run_oracle_day(&loaded, file_trace);
    assert_eq!(
        file_run.digest, reference.digest,
        "file-writing run differs"
    );
    let written = std::fs::read_to_string(&traj_path).expect("read the trajectory back");
    assert_eq!(written.lines().count() as u64, events);

    let mut group = c.benchmark_group("day");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(6));
    // A few milliseconds per day: flat sampling (the same iteration count in every
    // sample) keeps the group inside its time budget even on a loaded machine.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(40);
    group.throughput(Throughput::Elements(events));
    group.bench_function(BenchmarkId::new("busy_day", "digest_only"), |b| {
        b.iter(|| {
            let (r, _) = run_oracle_day(&loaded, Trajectory::digest_only());
            black_box(r)
        });
    });
    group.bench_function(BenchmarkId::new("busy_day", "to_file"), |b| {
        b.iter_batched(
            || Trajectory::to_file(&traj_path).expect("create the trajectory file"),
            |trace| {
                let (r, _) = run_oracle_day(&loaded, trace);
                black_box(r)
            },
            BatchSize::PerIteration,
        );
    });
    let scorer = Scorer::new(&loaded);
    let scored = scorer.score(
        &mut Oracle::new(&loaded.scenario),
        oracle_config(),
        &RunLimits::default(),
    );
    assert_eq!(scored.checkpoint_score, reference.checkpoint_score);
    assert_eq!(scored.steps, reference.steps);
    group.bench_function(BenchmarkId::new("busy_day", "score_only"), |b| {
        b.iter(|| {
            black_box(scorer.score(
                &mut Oracle::new(&loaded.scenario),
                oracle_config(),
                &RunLimits::default(),
            ))
        });
    });
    group.finish();

    // Separate group: a per-line throughput would be meaningless here.
    let mut group = c.benchmark_group("day_build");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function(BenchmarkId::new("busy_day", "build_only"), |b| {
        b.iter(|| {
            black_box(Sim::new(
                &loaded,
                oracle_config(),
                Trajectory::digest_only(),
                Box::new(LivePython::default()),
            ))
        });
    });
    let proto = Prototype::new(&loaded);
    group.bench_function(BenchmarkId::new("busy_day", "from_prototype"), |b| {
        b.iter(|| {
            black_box(Sim::from_prototype(
                &proto,
                oracle_config(),
                Trajectory::digest_only(),
                Box::new(LivePython::default()),
            ))
        });
    });
    group.finish();
}
