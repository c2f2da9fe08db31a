//! Temporary experiment: where does a 256-wide wave spend its time?
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fake_llm::{Config, FakeServer, script_from_trajectory};
use serde_json::Value;
use serde_json::value::RawValue;
use tbsim::agent::llm::{LlmAgent, Memory};
use tbsim::agent::{Agent, AgentError};
use tbsim::batch::{AgentFactory, BatchSpec, Job, JobResult, Progress, plan, run_jobs_blocking};
use tbsim::llm::client::{CallFuture, ModelCaller, RequestBody};
use tbsim::llm::history::SummaryPolicy;
use tbsim::llm::message::Message;
use tbsim::llm::prompt::Templates;
use tbsim::llm::{ApiConfig, HttpModel};
use tbsim::result::ModelUsage;
use tbsim::run::RunLimits;
use tbsim::sim::SimConfig;
use tbsim::trajectory::Trajectory;
use tbsim_benches::{load_scenario, run_oracle_day};

struct Timed {
    inner: Arc<HttpModel>,
    t0: Instant,
    log: Arc<Mutex<Vec<(u128, u128, u128)>>>, // body built, sent, replied (us)
}
impl ModelCaller for Timed {
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn body(&self, m: &[Message], t: Option<&RawValue>, x: Option<f64>) -> RequestBody {
        self.inner.body(m, t, x)
    }
    fn call(&self, body: RequestBody, ord: u64) -> CallFuture {
        let sent = self.t0.elapsed().as_micros();
        let f = self.inner.call(body, ord);
        let log = self.log.clone();
        let t0 = self.t0;
        Box::pin(async move {
            let r = f.await;
            log.lock()
                .unwrap()
                .push((sent, t0.elapsed().as_micros(), ord as u128));
            r
        })
    }
    fn usage(&self, raw: &Value) -> ModelUsage {
        self.inner.usage(raw)
    }
}

struct P {
    t0: Instant,
    s: Mutex<Vec<u128>>,
    f: Mutex<Vec<u128>>,
}
impl Progress for P {
    fn started(&self, _: &Job) {
        self.s.lock().unwrap().push(self.t0.elapsed().as_micros());
    }
    fn finished(&self, _: &Job, _: &JobResult) {
        self.f.lock().unwrap().push(self.t0.elapsed().as_micros());
    }
}

fn q(v: &mut Vec<u128>) -> String {
    v.sort();
    let n = v.len();
    format!(
        "min {:.1} p50 {:.1} p90 {:.1} max {:.1} ms",
        v[0] as f64 / 1e3,
        v[n / 2] as f64 / 1e3,
        v[n * 9 / 10] as f64 / 1e3,
        v[n - 1] as f64 / 1e3
    )
}

fn main() {
    let conc: usize = std::env::args().nth(1).map_or(256, |s| s.parse().unwrap());
    let waves: usize = std::env::args().nth(2).map_or(1, |s| s.parse().unwrap());
    let name = std::env::args().nth(3).unwrap_or("meeting-only.ron".into());
    let loaded = load_scenario(&name);
    let (_, lines) = run_oracle_day(&loaded, Trajectory::in_memory());
    let script = script_from_trajectory(&lines.join("\n"), 1);
    let server = FakeServer::start(Config {
        script,
        delay_ms: 200,
        keep_bodies: false,
        ..Config::default()
    })
    .unwrap();
    let text = format!(
        r#"{{"fake": {{"model_name": "fake-agent", "api_key_var": "bench-key", "base_url": "{}"}}}}"#,
        server.base_url()
    );
    let cfg = ApiConfig::parse(Path::new("x"), &text)
        .and_then(|c| c.model("fake"))
        .unwrap();
    let rt = tbsim::llm::client::runtime().unwrap();
    let http = Arc::new(HttpModel::new(cfg, rt.handle().clone(), 0).unwrap());
    let loaded = Arc::new(loaded);
    let out = std::env::temp_dir().join("tbsim-timeline");
    for round in 0..2 {
        let t0 = Instant::now();
        let log = Arc::new(Mutex::new(Vec::new()));
        let caller: Arc<dyn ModelCaller> = Arc::new(Timed {
            inner: http.clone(),
            t0,
            log: log.clone(),
        });
        let prompts = Arc::new(Templates::builtin());
        let agents: Arc<dyn AgentFactory> =
            Arc::new(move |_: &Job| -> Result<Box<dyn Agent>, AgentError> {
                Ok(Box::new(LlmAgent::new(
                    "llm:fake",
                    caller.clone(),
                    prompts.clone(),
                    Box::new(SummaryPolicy::default()),
                    Memory::None,
                )))
            });
        let jobs = plan(
            std::slice::from_ref(&loaded),
            (conc * waves) as u32,
            None,
            &out,
        )
        .unwrap();
        let spec = BatchSpec {
            concurrency: conc,
            limits: RunLimits::default(),
            config: SimConfig {
                agent: "llm:fake".into(),
                ..SimConfig::default()
            },
        };
        let p = Arc::new(P {
            t0,
            s: Mutex::new(vec![]),
            f: Mutex::new(vec![]),
        });
        let _ = run_jobs_blocking(jobs, &spec, agents, p.clone()).unwrap();
        let total = t0.elapsed();
        let mut calls = log.lock().unwrap().clone();
        let mut first_sent: Vec<u128> = calls.iter().map(|c| c.0).collect();
        let mut rtt: Vec<u128> = calls.iter_mut().map(|c| c.1 - c.0).collect();
        println!(
            "round {round}: conc {conc} x {waves} waves: total {:?}",
            total
        );
        println!("  started  {}", q(&mut p.s.lock().unwrap()));
        println!("  finished {}", q(&mut p.f.lock().unwrap()));
        println!("  sent     {}", q(&mut first_sent));
        println!("  rtt      {}", q(&mut rtt));
        for o in 1..=4u128 {
            let mut s: Vec<u128> = calls.iter().filter(|c| c.2 == o).map(|c| c.0).collect();
            let mut r: Vec<u128> = calls.iter().filter(|c| c.2 == o).map(|c| c.1).collect();
            if !s.is_empty() {
                println!("  call {o} sent {} | replied {}", q(&mut s), q(&mut r));
            }
        }
    }
}
