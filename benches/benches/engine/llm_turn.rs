//! The runner's overhead per model turn.
//!
//! `busy-day.ron` is run twice per iteration pair: by the oracle in process, and by
//! the built-in model-backed agent against `tools/fake-llm` on 127.0.0.1, which
//! replays the oracle's calls one per turn and answers instantly. Both runs make the
//! same tool calls, so the difference per turn is what a model turn costs the
//! runner: building the prompt and request, serialising it, the loopback HTTP round
//! trip (the fake server's own parsing included), parsing the response, and
//! recording request and response. Throughput is in turns (= oracle decisions).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use fake_llm::{Config, script_from_trajectory};
use tbsim_benches::{BUSY_DAY, fake_model, load_scenario, run_oracle_day};
use tbsim_core::protocol::SimConfig;
use tbsim_engine::run::{RunLimits, run_with};
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_model::HttpModel;
use tbsim_model::agent::{LlmAgent, Memory};
use tbsim_model::history::SummaryPolicy;
use tbsim_model::prompt::Templates;

criterion_group!(benches, llm_turn);

fn llm_turn(c: &mut Criterion) {
    let loaded = load_scenario(BUSY_DAY);
    let (reference, lines) = run_oracle_day(&loaded, Trajectory::in_memory());
    let script = script_from_trajectory(&lines.join("\n"), 1);
    let turns = script.len() as u64;
    let (_server, cfg) = fake_model(Config {
        script,
        ..Config::default()
    });
    let rt = tbsim_model::client::runtime().expect("runtime");
    let caller = Arc::new(HttpModel::new(cfg, rt.handle().clone(), 0).expect("client"));
    let prompts = Arc::new(Templates::builtin());
    let run_llm = || {
        let mut agent = LlmAgent::new(
            "llm:fake",
            caller.clone(),
            prompts.clone(),
            Box::new(SummaryPolicy::default()),
            Memory::None,
        );
        let config = SimConfig {
            agent: "llm:fake".into(),
            ..SimConfig::default()
        };
        run_with(
            &loaded,
            &mut agent,
            config,
            &RunLimits::default(),
            Trajectory::digest_only(),
            Box::new(LivePython::default()),
        )
        .0
    };
    // Once, untimed: the model-backed run must be the oracle's run.
    let r = run_llm();
    assert_eq!(r.checkpoint_score, reference.checkpoint_score, "{r:?}");
    assert_eq!(r.steps, turns);
    assert_eq!(r.tool_calls, reference.tool_calls);

    let mut group = c.benchmark_group("llm_turn");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.sample_size(20);
    group.throughput(Throughput::Elements(turns));
    group.bench_function(BenchmarkId::new("busy_day", "oracle_in_process"), |b| {
        b.iter(|| black_box(run_oracle_day(&loaded, Trajectory::digest_only()).0));
    });
    group.bench_function(BenchmarkId::new("busy_day", "llm_over_http"), |b| {
        b.iter(|| black_box(run_llm()));
    });
    group.finish();
}
