//! The console's runs list over many recorded runs (`tbsim view` of a big batch):
//! what its first request costs, and what it cost when every run was replayed.
//!
//! One busy-day oracle run is written untimed, then hard-linked as `RUNS` run
//! folders of one batch (`batch/<scenario>/trial-<t>`). `list/cold` makes a fresh
//! console over them (reading each trajectory's header, as `tbsim view` does before
//! it listens) and answers its first `runs()`: summaries read from `result.json`
//! for `LIST_BUDGET` at most, the rest from what is cheap (`indexing`).
//! `list/read_all` is a fresh console reading every summary (`index()`: what the
//! first list cost before it had a budget, and what the background index does).
//! `list/warm` is a later request (the summaries cached). `replay/per_run` is the
//! oldest way, one run's summary by replaying it.
//!
//! `world/next_step/kept` is the world one step after one already shown, from the
//! console's kept worlds (one decision re-driven); `world/next_step/fresh` is the
//! same world replayed from the start, as every world request did before.
//!
//! `open/replayed` is what a console's first look at a finished run costs the
//! server (its detail's figures and the world at its end: one replay), and
//! `open/cached` the same answered from the view cache a console wrote before (the
//! background check against a replay is waited for outside the timing).
//! `TBSIM_BENCH_RUN=<run dir>` times those two on that run instead of the busy-day
//! oracle run (e.g. `tools/console-tests/long-run.sh`'s 2,000 decisions).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use tbsim_benches::{BUSY_DAY, load_scenario, oracle_config};
use tbsim_engine::agent::Oracle;
use tbsim_engine::run::{RunLimits, run_to_dir};
use tbsim_serve::console::view_cache::ViewCache;
use tbsim_serve::console::worlds::Worlds;
use tbsim_serve::console::{AgentMaker, Console, FixedRun, Mode};
use tbsim_serve::registry::{Registry, RegistryConfig};

criterion_group!(benches, console_index);

/// Run folders listed.
const RUNS: usize = 1000;

struct NoAgents;

impl AgentMaker for NoAgents {
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
    fn make(
        &self,
        name: &str,
        _: &tbsim_scenario::LoadedScenario,
        _: u64,
    ) -> Result<Box<dyn tbsim_engine::agent::Agent>, String> {
        Err(format!("no agent `{name}`"))
    }
}

fn console_over(dirs: &[(String, PathBuf)], forks: &Path) -> Console {
    let registry = Arc::new(Registry::new(RegistryConfig {
        roots: tbsim_serve::scenarios::ScenarioRoots::default(),
        out: forks.to_path_buf(),
        max_sessions: 4,
        idle_timeout: Duration::from_secs(600),
        unused_timeout: Duration::from_secs(60),
        keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
        view_cache: None,
    }));
    let fixed = dirs
        .iter()
        .map(|(id, d)| Arc::new(FixedRun::recorded(id.clone(), d.clone()).unwrap()))
        .collect();
    Console::new(Mode::View, registry, fixed, Arc::new(NoAgents))
}

fn console_index(c: &mut Criterion) {
    let loaded = load_scenario(BUSY_DAY);
    let root = std::env::temp_dir().join(format!("tbsim-bench-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let one = root.join("one");
    let mut oracle = Oracle::new(&loaded.scenario);
    run_to_dir(
        &loaded,
        &mut oracle,
        oracle_config(),
        &RunLimits::default(),
        &one,
    )
    .expect("the oracle's run is written");
    let files: Vec<PathBuf> = std::fs::read_dir(&one)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    let mut dirs = Vec::new();
    for t in 0..RUNS {
        let d = root.join(format!("batch/busy-day/trial-{t}"));
        std::fs::create_dir_all(&d).unwrap();
        for f in &files {
            std::fs::hard_link(f, d.join(f.file_name().unwrap())).unwrap();
        }
        dirs.push((format!("batch:busy-day:trial-{t}"), d));
    }
    let forks = root.join("forks");

    let mut g = c.benchmark_group("console_index");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    g.bench_function(format!("list/cold/{RUNS}"), |b| {
        b.iter(|| {
            let console = console_over(&dirs, &forks);
            black_box(console.runs())
        });
    });
    g.bench_function(format!("list/read_all/{RUNS}"), |b| {
        b.iter(|| {
            let console = console_over(&dirs, &forks);
            console.index();
            black_box(console.runs())
        });
    });
    let warm = console_over(&dirs, &forks);
    warm.index();
    assert_eq!(warm.runs().len(), RUNS);
    assert!(warm.runs().iter().all(|r| !r.indexing));
    g.bench_function(format!("list/warm/{RUNS}"), |b| {
        b.iter(|| black_box(warm.runs()));
    });
    g.bench_function("replay/per_run", |b| {
        b.iter(|| {
            let console = console_over(&dirs[..1], &forks);
            black_box(console.detail(&dirs[0].0).unwrap())
        });
    });
    let dir = &dirs[0].1;
    let mid = tbsim_engine::replay::Replayer::open(dir).unwrap().steps / 2;
    g.bench_function("world/next_step/kept", |b| {
        b.iter_batched(
            || {
                let w = Worlds::new();
                w.view(dir, Some(mid), false).unwrap();
                w
            },
            |w| black_box(w.view(dir, Some(mid + 1), false).unwrap()),
            BatchSize::PerIteration,
        );
    });
    g.bench_function("world/next_step/fresh", |b| {
        b.iter(|| black_box(tbsim_engine::inspect::world_at(dir, Some(mid + 1), false).unwrap()));
    });
    let open_dir = std::env::var_os("TBSIM_BENCH_RUN").map_or_else(|| dir.clone(), PathBuf::from);
    g.bench_function("open/replayed", |b| {
        b.iter(|| {
            let w = Worlds::new();
            black_box(w.end_facts(&open_dir).unwrap());
            black_box(w.view(&open_dir, None, false).unwrap())
        });
    });
    let cache = root.join("view-cache");
    let primed = Worlds::with_cache(Arc::new(ViewCache::open(&cache).unwrap()));
    primed.end_facts(&open_dir).unwrap();
    primed.view(&open_dir, None, false).unwrap();
    g.bench_function("open/cached", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                let w = Worlds::with_cache(Arc::new(ViewCache::open(&cache).unwrap()));
                let t = std::time::Instant::now();
                black_box(w.end_facts(&open_dir).unwrap());
                black_box(w.view(&open_dir, None, false).unwrap());
                spent += t.elapsed();
                assert_eq!(w.cache_hits(), 1);
                w.wait_for_checks();
                assert_eq!(w.corrections(), 0);
            }
            spent
        });
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&root);
}
