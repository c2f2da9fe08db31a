//! Where a batch of model-backed runs spends its wall time: when runs start and
//! finish, and when each of their model calls is sent and answered, relative to the
//! start of the batch. The companion of the `llm_concurrency` bench: it explains a
//! shortfall from linear throughput (a spread of start times means the runs queue
//! behind each other's fixed work; a long round trip means the client or server
//! is slow).
//!
//! ```text
//! cargo run --release -p tbsim-benches --example batch_timeline -- \
//!     [CONCURRENCY=256] [WAVES=1] [SCENARIO=meeting-only.ron] [DELAY_MS=200]
//! ```
//!
//! The scenario comes from `content/scenarios/`; the fake model replays the
//! oracle's calls one per turn. Each batch is run twice; the first pays for
//! warming the page cache and the allocator.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use fake_llm::{Config, script_from_trajectory};
use serde_json::Value;
use serde_json::value::RawValue;
use tbsim_benches::{fake_model, load_scenario, run_oracle_day};
use tbsim_core::protocol::ModelUsage;
use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::{Agent, AgentError};
use tbsim_engine::batch::{
    AgentFactory, BatchSpec, Job, JobResult, Progress, plan, run_jobs_blocking,
};
use tbsim_engine::run::RunLimits;
use tbsim_engine::trajectory::Trajectory;
use tbsim_model::HttpModel;
use tbsim_model::agent::{LlmAgent, Memory};
use tbsim_model::client::{CallFuture, ModelCaller, RequestBody};
use tbsim_model::history::SummaryPolicy;
use tbsim_model::message::Message;
use tbsim_model::prompt::Templates;

/// One model call: its ordinal within its run, when it was sent and answered (µs).
type Call = (u64, u128, u128);

/// A model caller that notes when each call is sent and answered.
struct Timed {
    inner: Arc<HttpModel>,
    t0: Instant,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl ModelCaller for Timed {
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn body(&self, m: &[Message], tools: Option<&RawValue>, t: Option<f64>) -> RequestBody {
        self.inner.body(m, tools, t)
    }
    fn call(&self, body: RequestBody, ordinal: u64) -> CallFuture {
        let (t0, calls) = (self.t0, self.calls.clone());
        let sent = t0.elapsed().as_micros();
        let reply = self.inner.call(body, ordinal);
        Box::pin(async move {
            let r = reply.await;
            let answered = t0.elapsed().as_micros();
            calls
                .lock()
                .expect("not poisoned")
                .push((ordinal, sent, answered));
            r
        })
    }
    fn usage(&self, raw: &Value) -> ModelUsage {
        self.inner.usage(raw)
    }
}

/// Notes when jobs start and finish (µs).
struct Times {
    t0: Instant,
    started: Mutex<Vec<u128>>,
    finished: Mutex<Vec<u128>>,
}

impl Progress for Times {
    fn started(&self, _: &Job) {
        let t = self.t0.elapsed().as_micros();
        self.started.lock().expect("not poisoned").push(t);
    }
    fn finished(&self, _: &Job, _: &JobResult) {
        let t = self.t0.elapsed().as_micros();
        self.finished.lock().expect("not poisoned").push(t);
    }
}

/// Min, median, 90th percentile and max, in ms.
fn spread(mut v: Vec<u128>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.sort_unstable();
    let ms = |i: usize| v[i] as f64 / 1e3;
    let n = v.len();
    format!(
        "min {:7.1}  p50 {:7.1}  p90 {:7.1}  max {:7.1} ms",
        ms(0),
        ms(n / 2),
        ms(n * 9 / 10),
        ms(n - 1)
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let conc: usize = args.next().map_or(256, |s| s.parse().expect("CONCURRENCY"));
    let waves: usize = args.next().map_or(1, |s| s.parse().expect("WAVES"));
    let scenario = args.next().unwrap_or_else(|| "meeting-only.ron".into());
    let delay_ms: u64 = args.next().map_or(200, |s| s.parse().expect("DELAY_MS"));

    let loaded = Arc::new(load_scenario(&scenario));
    let (_, lines) = run_oracle_day(&loaded, Trajectory::in_memory());
    let script = script_from_trajectory(&lines.join("\n"), 1);
    let turns = script.len();
    let (_server, cfg) = fake_model(Config {
        script,
        delay_ms,
        keep_bodies: false,
        ..Config::default()
    });
    let runtime = tbsim_model::client::runtime().expect("runtime");
    let http = Arc::new(HttpModel::new(cfg, runtime.handle().clone(), 0).expect("client"));
    let out = std::env::temp_dir().join(format!("tbsim-timeline-{}", std::process::id()));
    let ideal = (waves * turns) as u64 * delay_ms;
    println!(
        "{scenario}: {turns} turns at {delay_ms} ms, {} runs at concurrency {conc}; ideal {ideal} ms",
        conc * waves
    );
    for round in 1..=2 {
        let t0 = Instant::now();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let prompts = Arc::new(Templates::builtin());
        let (http, timed) = (http.clone(), calls.clone());
        let agents: Arc<dyn AgentFactory> =
            Arc::new(move |job: &Job| -> Result<Box<dyn Agent>, AgentError> {
                // As the CLI does: one HTTP client per model, reseeded per run.
                let caller = Timed {
                    inner: Arc::new(http.reseeded(job.seed)),
                    t0,
                    calls: timed.clone(),
                };
                Ok(Box::new(LlmAgent::new(
                    "llm:fake",
                    Arc::new(caller),
                    prompts.clone(),
                    Box::new(SummaryPolicy::default()),
                    Memory::None,
                )))
            });
        let trials = u32::try_from(conc * waves).expect("a small batch");
        let jobs = plan(std::slice::from_ref(&loaded), trials, None, &out).expect("plan");
        let spec = BatchSpec {
            concurrency: conc,
            limits: RunLimits::default(),
            config: SimConfig {
                agent: "llm:fake".into(),
                ..SimConfig::default()
            },
            compress: false,
        };
        let times = Arc::new(Times {
            t0,
            started: Mutex::new(Vec::new()),
            finished: Mutex::new(Vec::new()),
        });
        run_jobs_blocking(jobs, &spec, agents, times.clone()).expect("runtime");
        let total = t0.elapsed();
        let calls = calls.lock().expect("not poisoned").clone();
        println!(
            "round {round}: {total:.2?} ({:.1}% of linear)",
            100.0 * ideal as f64 / (total.as_secs_f64() * 1e3)
        );
        let started = times.started.lock().expect("not poisoned").clone();
        let finished = times.finished.lock().expect("not poisoned").clone();
        println!("  run started     {}", spread(started));
        println!("  run finished    {}", spread(finished));
        println!(
            "  round trip      {}",
            spread(calls.iter().map(|c| c.2 - c.1).collect())
        );
        for ordinal in 1..=3u64.min(turns as u64) {
            let of = |f: fn(&Call) -> u128| {
                spread(calls.iter().filter(|c| c.0 == ordinal).map(f).collect())
            };
            println!("  call {ordinal} sent     {}", of(|c| c.1));
            println!("  call {ordinal} answered {}", of(|c| c.2));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
