//! A full multi-day composite run with the oracle: one scenario of 10 working days,
//! 6 tasks a day (families drawn anew each day from all of them), 200 colleagues.
//!
//! Built outside timing with `tbsim_gen::suite::new_suite` (which proves the
//! plan solvable), generated, serialised and parsed back as `tbsim gen` output would
//! be. As of 2026-11-21 `new_suite` rejects every 10-day request with 4 or more tasks
//! a day: its solvability proof runs the oracle under the default limit of 400
//! decisions, which a 10-day run exceeds on day 8. The bench then stitches ten
//! one-day plans, each proven by `new_suite`, into one 10-day plan (ids renumbered
//! per day), and runs it without that step limit. Before timing, one in-memory run
//! must score 1.0. Each iteration builds a fresh
//! world and oracle and runs all ten days, scores included, with
//! `Trajectory::digest_only()`. Throughput is in trajectory lines of that run.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use tbsim_benches::oracle_config;
use tbsim_engine::agent::Oracle;
use tbsim_engine::result::RunResult;
use tbsim_engine::run::{RunLimits, run_with};
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::suite::{Mode, SuiteRequest, family_keys, new_suite};
use tbsim_gen::{DayPlan, ReleasePlan, ScenarioPlan, generate_scenario, to_ron};
use tbsim_scenario::{LoadedScenario, parse_str, validate};

criterion_group!(benches, multiday);

const DAYS: usize = 10;
const TASKS: usize = 6;
const COMPANY: usize = 200;

/// The generated 10-day scenario, loaded as the CLI would load it.
pub fn build() -> LoadedScenario {
    let req = SuiteRequest {
        name: "bench-multiday".into(),
        scenarios: 1,
        days: DAYS,
        seed: 2026_1121,
        families: family_keys().into_iter().map(String::from).collect(),
        mode: Mode::Mutable,
        tasks: (TASKS, TASKS),
        company_size: COMPANY,
    };
    let plan = match new_suite(&req) {
        Ok(suite) => suite.scenarios[0].clone(),
        Err(e) => {
            eprintln!("multiday: new_suite failed ({e}); stitching {DAYS} proven one-day plans");
            stitch(&req)
        }
    };
    let scenario = generate_scenario(req.seed, &plan).expect("generates");
    let text = to_ron(&scenario);
    let path = Path::new("bench-multiday.ron");
    let scenario = parse_str(&text, path).expect("generated RON parses");
    validate(&scenario, path, None).expect("generated scenario validates");
    LoadedScenario {
        scenario,
        path: path.into(),
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        source: text,
        assets: Default::default(),
    }
}

/// The default limit of 400 decisions ends a 10-day, 60-task oracle run on day 8;
/// this bench lifts it (the run ends at the end of its last day).
const MAX_STEPS: u64 = 100_000;

/// One oracle run of all days, as [`tbsim_benches::run_oracle_day`] but without the
/// default step limit.
fn run_oracle(loaded: &LoadedScenario, trace: Trajectory) -> (RunResult, Vec<String>) {
    let mut agent = Oracle::new(&loaded.scenario);
    let limits = RunLimits {
        max_steps: MAX_STEPS,
        ..RunLimits::default()
    };
    run_with(
        loaded,
        &mut agent,
        oracle_config(),
        &limits,
        trace,
        Box::new(LivePython::default()),
    )
}

/// One scenario plan of `req.days` days whose day `k` is the (proven solvable) single
/// day of `new_suite` with seed `req.seed + k`, task ids renumbered to their day.
fn stitch(req: &SuiteRequest) -> ScenarioPlan {
    let mut days: Vec<DayPlan> = Vec::with_capacity(req.days);
    let mut first: Option<ScenarioPlan> = None;
    for k in 0..req.days {
        let one = SuiteRequest {
            days: 1,
            seed: req.seed + k as u64,
            ..req.clone()
        };
        let suite = new_suite(&one).expect("a one-day suite is solvable");
        let mut plan = suite.scenarios[0].clone();
        let prefix = format!("d{}-", k + 1);
        let mut day = plan.days.remove(0);
        for t in &mut day.tasks {
            t.id = format!("{prefix}{}", t.id.trim_start_matches("d1-"));
            if let ReleasePlan::AfterCheckpoint { task, .. } = &mut t.release {
                *task = format!("{prefix}{}", task.trim_start_matches("d1-"));
            }
        }
        days.push(day);
        first.get_or_insert(plan);
    }
    let mut plan = first.expect("at least one day");
    plan.days = days;
    plan
}

fn multiday(c: &mut Criterion) {
    let loaded = build();
    let (reference, lines) = run_oracle(&loaded, Trajectory::in_memory());
    for t in reference.tasks.iter().filter(|t| !t.success) {
        eprintln!("multiday: oracle missed {t:?}");
    }
    assert_eq!(
        reference.checkpoint_score, 1.0,
        "the oracle must solve the multi-day scenario completely: {reference:?}"
    );
    let events = lines.len() as u64;
    let queue_events = lines
        .iter()
        .filter(|l| l.contains(r#""type":"event""#))
        .count();
    eprintln!(
        "multiday oracle run: {DAYS} days x {TASKS} tasks, {COMPANY} people, {} tasks scored, \
         {events} trajectory lines ({queue_events} queue events), {} decisions, {} bytes of RON",
        reference.tasks.len(),
        reference.steps,
        loaded.source.len()
    );
    let (digest_run, _) = run_oracle(&loaded, Trajectory::digest_only());
    assert_eq!(
        digest_run.digest, reference.digest,
        "digest-only run differs"
    );

    let mut group = c.benchmark_group("multiday");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function(
        BenchmarkId::new("composite_10d_6t_200p", "digest_only"),
        |b| {
            b.iter(|| black_box(run_oracle(&loaded, Trajectory::digest_only()).0));
        },
    );
    group.finish();
}
