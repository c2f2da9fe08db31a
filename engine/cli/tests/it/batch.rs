use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tbsim_core::protocol::{Observation, SimConfig};
use tbsim_engine::agent::{Agent, AgentError, AgentFuture, Oracle};
use tbsim_engine::batch::{BatchSpec, Job, NoProgress, plan, run_jobs_blocking};
use tbsim_engine::run::RunLimits;

use crate::util::{bundled, root, tbsim, text};

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn bundled_args() -> Vec<String> {
    bundled().iter().map(|p| p.display().to_string()).collect()
}

fn run_cli(extra: &[&str], out: &Path) -> (String, String) {
    let files = bundled_args();
    let mut args = vec!["run", "--out", out.to_str().unwrap()];
    args.extend(extra);
    args.extend(files.iter().map(String::as_str));
    let o = tbsim(&args, &root());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    (stdout, stderr)
}

fn json_file(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn concurrency_changes_no_byte_of_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let (one, four) = (dir.path().join("c1"), dir.path().join("c4"));
    let (out1, _) = run_cli(&["--trials", "2", "--concurrency", "1"], &one);
    let (out4, _) = run_cli(&["--trials", "2", "--concurrency", "4"], &four);
    let (a, b) = (tree(&one), tree(&four));
    let n = bundled().len();
    assert_eq!(
        a.keys().filter(|p| p.ends_with("result.json")).count(),
        2 * n
    );
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "same files"
    );
    for (path, bytes) in &a {
        assert!(
            b[path] == *bytes,
            "{} differs with --concurrency 4",
            path.display()
        );
    }
    // The printed tables and summary too (all but the line naming the output dir).
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("run written to"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&out1), strip(&out4));
    assert!(
        out1.contains(&format!(
            "batch: {} runs ({n} scenarios x 2 trials), {} completed, 0 failed",
            2 * n,
            2 * n
        )),
        "{out1}"
    );
    assert!(out1.contains("| pass^2 1.000"), "{out1}");

    // The library runner agrees with the CLI at any concurrency, and a single trial keeps
    // the one-run-per-scenario layout of `tbsim run`.
    let scenarios: Vec<_> = bundled()
        .iter()
        .map(|p| Arc::new(tbsim_scenario::load_file(p).unwrap()))
        .collect();
    let mut digests = Vec::new();
    for c in [1, 3] {
        let out = dir.path().join(format!("lib{c}"));
        let jobs = plan(&scenarios, 2, None, &out).unwrap();
        let spec = BatchSpec {
            concurrency: c,
            limits: RunLimits::default(),
            config: SimConfig {
                agent: "oracle".into(),
                ..SimConfig::default()
            },
            compress: false,
        };
        let factory = Arc::new(|job: &Job| -> Result<Box<dyn Agent>, AgentError> {
            Ok(Box::new(Oracle::new(&job.scenario.scenario)))
        });
        let outcomes = run_jobs_blocking(jobs, &spec, factory, Arc::new(NoProgress)).unwrap();
        let ds: Vec<String> = outcomes
            .into_iter()
            .map(|o| o.result.unwrap().digest)
            .collect();
        // The CLI also records its options (`run.json`, for `--resume`); the runs agree.
        let cli_runs: std::collections::BTreeMap<_, _> = a
            .iter()
            .filter(|(p, _)| !p.ends_with("run.json"))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect();
        assert_eq!(tree(&out), cli_runs, "library batch at concurrency {c}");
        digests.push(ds);
    }
    assert_eq!(digests[0], digests[1]);
}

/// An agent whose decisions really await the runtime: each one hands the oracle's
/// decision through a task spawned on tokio and a cross-thread wake-up, as a model
/// client awaiting HTTP would.
struct Remote(Oracle);

impl Agent for Remote {
    fn name(&self) -> String {
        "oracle".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        Box::pin(async move {
            let d = self.0.decide(obs).await?;
            // Panics without a tokio runtime in context.
            tokio::spawn(async move { d })
                .await
                .map_err(|e| AgentError::Agent(e.to_string()))
        })
    }
}

#[test]
fn an_async_agent_runs_in_the_batch_and_matches_the_sync_one() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios: Vec<_> = ["busy-day", "two-days", "meeting-check-sum"]
        .iter()
        .map(|n| Arc::new(crate::util::scenario(n)))
        .collect();
    let spec = BatchSpec {
        concurrency: 3,
        limits: RunLimits::default(),
        config: SimConfig {
            agent: "oracle".into(),
            ..SimConfig::default()
        },
        compress: false,
    };
    let remote = Arc::new(|job: &Job| -> Result<Box<dyn Agent>, AgentError> {
        Ok(Box::new(Remote(Oracle::new(&job.scenario.scenario))))
    });
    let outcomes = run_jobs_blocking(
        plan(&scenarios, 1, None, &dir.path().join("async")).unwrap(),
        &spec,
        remote,
        Arc::new(NoProgress),
    )
    .unwrap();
    for (o, s) in outcomes.iter().zip(&scenarios) {
        let r = o.result.as_ref().unwrap();
        let (sync, _) = crate::util::run(s, &mut Oracle::new(&s.scenario), None);
        assert_eq!(r.digest, sync.digest, "{}", s.scenario.name);
        assert_eq!(r.checkpoint_score, 1.0);
    }
    // A failing factory fails its jobs only, with a typed error; the batch finishes.
    let failing = Arc::new(|job: &Job| -> Result<Box<dyn Agent>, AgentError> {
        if job.name() == "two-days" {
            Err(AgentError::Agent("no key".into()))
        } else {
            Ok(Box::new(Oracle::new(&job.scenario.scenario)))
        }
    });
    let outcomes = run_jobs_blocking(
        plan(&scenarios, 1, None, &dir.path().join("failing")).unwrap(),
        &spec,
        failing,
        Arc::new(NoProgress),
    )
    .unwrap();
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(
        failed,
        ["cannot create the agent for `two-days` trial 0: agent error: no key"]
    );
}

#[test]
fn trials_get_distinct_seeds_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let scen = root().join("content/scenarios/kb-fix-medium.ron");
    let two = root().join("content/scenarios/two-days.ron");
    let o = tbsim(
        &[
            "run",
            "--trials",
            "3",
            "--seed",
            "100",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
            scen.to_str().unwrap(),
            two.to_str().unwrap(),
        ],
        &root(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no progress bar drawn into a pipe: {stderr:?}"
    );
    for name in ["kb-fix-medium", "two-days"] {
        let mut digests = std::collections::BTreeSet::new();
        for t in 0..3u64 {
            let run = out.join(name).join(format!("trial-{t}"));
            let r = json_file(&run.join("result.json"));
            assert_eq!(r["seed"], 100 + t, "{name} trial {t}");
            assert_eq!(r["trial"], t);
            let header: Value = serde_json::from_str(
                fs::read_to_string(run.join("trajectory.jsonl"))
                    .unwrap()
                    .lines()
                    .next()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(header["seed"], 100 + t, "the trajectory records the seed");
            digests.insert(r["digest"].as_str().unwrap().to_owned());
        }
        assert_eq!(digests.len(), 3, "{name}: three distinct runs");
        assert!(!out.join(name).join("trial-3").exists());
    }
    assert!(
        stdout.contains("batch: 6 runs (2 scenarios x 3 trials)"),
        "{stdout}"
    );

    // Without --seed the base is each scenario's own seed.
    let own = dir.path().join("own");
    let o = tbsim(
        &[
            "run",
            "--trials",
            "2",
            "--out",
            own.to_str().unwrap(),
            scen.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success());
    let base = crate::util::scenario("kb-fix-medium").scenario.seed;
    assert_eq!(
        json_file(&own.join("kb-fix-medium/trial-1/result.json"))["seed"],
        base + 1
    );

    // A single trial records no trial index and keeps today's layout.
    let single = dir.path().join("single");
    assert!(
        tbsim(
            &[
                "run",
                "--out",
                single.to_str().unwrap(),
                scen.to_str().unwrap()
            ],
            &root()
        )
        .status
        .success()
    );
    assert!(
        json_file(&single.join("result.json"))
            .get("trial")
            .is_none()
    );

    // Replay finds runs at any depth.
    let o = tbsim(&["replay", out.to_str().unwrap()], &root());
    let (stdout, _) = text(&o);
    assert!(o.status.success(), "{stdout}");
    assert_eq!(stdout.matches(": identical").count(), 6, "{stdout}");
}

/// C(n, k) by Pascal's rule, as a check independent of the report's product formula.
fn binomial(n: usize, k: usize) -> f64 {
    let mut row = vec![1.0f64];
    for _ in 0..n {
        let mut next = vec![1.0; row.len() + 1];
        for i in 1..row.len() {
            next[i] = row[i - 1] + row[i];
        }
        row = next;
    }
    row.get(k).copied().unwrap_or(0.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn report_on_a_real_batch() {
    let dir = tempfile::tempdir().unwrap();
    // Two full oracle trials per scenario, plus one oracle run cut short at 12 steps (some
    // scenarios unfinished), plus idle runs: mixed numbers to check.
    let full = dir.path().join("full");
    let short = dir.path().join("short");
    let idle = dir.path().join("idle");
    run_cli(&["--trials", "2", "--concurrency", "2"], &full);
    run_cli(&["--max-steps", "12"], &short);
    run_cli(&["--agent", "idle"], &idle);
    let out = dir.path().join("rep");
    let o = tbsim(
        &[
            "report",
            full.to_str().unwrap(),
            short.to_str().unwrap(),
            idle.to_str().unwrap(),
            // A run dir inside one already given counts once.
            full.join("busy-day").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
    );
    let (md, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let n = bundled().len();

    // Hand computation straight from the result.json files.
    let mut results = Vec::new();
    for base in [&full, &short, &idle] {
        for p in tbsim_report::find_named(std::slice::from_ref(base), "result.json").unwrap() {
            results.push(json_file(&p));
        }
    }
    assert_eq!(results.len(), 4 * n);
    let oracle: Vec<&Value> = results.iter().filter(|r| r["agent"] == "oracle").collect();
    let f = |v: &Value| v.as_f64().unwrap();
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len() as f64;
    let score = mean(oracle.iter().map(|r| f(&r["checkpoint_score"])).collect());
    let steps = mean(oracle.iter().map(|r| f(&r["steps"])).collect());
    assert!(
        score < 1.0 && score > 0.5,
        "the short runs pull the score down: {score}"
    );

    let rep = json_file(&out.join("report.json"));
    assert_eq!(rep["runs"], 4 * n);
    let model = rep["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["agent"] == "oracle")
        .unwrap();
    assert_eq!(model["runs"], 3 * n);
    assert!(close(f(&model["checkpoint_score"]), score));
    assert!(close(f(&model["avg_steps"]), steps));
    // The same numbers, rounded, in the Markdown, and at full precision in the CSV.
    let md_row = format!("| oracle | {} | {n} | {score:.3} |", 3 * n);
    assert!(md.contains(&md_row), "{md_row} not in\n{md}");
    assert_eq!(md, fs::read_to_string(out.join("report.md")).unwrap());
    let csv = fs::read_to_string(out.join("models.csv")).unwrap();
    assert!(csv.starts_with(
        "agent,runs,scenarios,checkpoint_score,success_rate,solved,avg_steps,avg_tool_calls,avg_guidance,infra_failures\n"
    ));
    let csv_row = csv.lines().find(|l| l.starts_with("oracle,")).unwrap();
    let cols: Vec<&str> = csv_row.split(',').collect();
    // CSV rounds to six decimals.
    let near = |col: &str, x: f64| (col.parse::<f64>().unwrap() - x).abs() <= 5e-7;
    assert!(near(cols[3], score), "{csv_row}");
    assert!(near(cols[6], steps), "{csv_row}");

    // By number of tasks in one working day: a one-day run counts once, a
    // multi-day run once per day by that day's tasks. The largest stratum.
    let units: Vec<(usize, f64)> = oracle
        .iter()
        .flat_map(|r| {
            let days = r["days"].as_array().cloned().unwrap_or_default();
            if days.len() >= 2 {
                days.iter()
                    .map(|d| {
                        (
                            d["tasks"].as_u64().unwrap() as usize,
                            f(&d["checkpoint_score"]),
                        )
                    })
                    .collect::<Vec<_>>()
            } else {
                vec![(
                    r["tasks"].as_array().unwrap().len(),
                    f(&r["checkpoint_score"]),
                )]
            }
        })
        .collect();
    assert!(
        oracle
            .iter()
            .any(|r| r["days"].as_array().is_some_and(|d| d.len() >= 2)),
        "the batch holds a multi-day run"
    );
    let most = units.iter().map(|u| u.0).max().unwrap();
    let biggest: Vec<f64> = units.iter().filter(|u| u.0 == most).map(|u| u.1).collect();
    let row = rep["by_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == "oracle" && r["stratum"].as_str() == Some(&*most.to_string()))
        .unwrap();
    assert_eq!(row["runs"], biggest.len());
    assert!(close(f(&row["checkpoint_score"]), mean(biggest.clone())));

    // By difficulty, over tasks.
    let hard: Vec<f64> = oracle
        .iter()
        .flat_map(|r| r["tasks"].as_array().unwrap())
        .filter(|t| t["difficulty"] == "hard")
        .map(|t| f(&t["score"]))
        .collect();
    let row = rep["by_difficulty"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == "oracle" && r["stratum"] == "hard")
        .unwrap();
    assert_eq!(row["tasks"], hard.len());
    assert!(close(f(&row["checkpoint_score"]), mean(hard)));

    // By day: day 2 of the multi-day runs, and its gain.
    let multi: Vec<&&Value> = oracle
        .iter()
        .filter(|r| r["days"].as_array().unwrap().len() >= 2)
        .collect();
    assert!(!multi.is_empty());
    let day2 = mean(
        multi
            .iter()
            .map(|r| f(&r["days"][1]["checkpoint_score"]))
            .collect(),
    );
    let gain = mean(multi.iter().map(|r| f(&r["day_gain"][0])).collect());
    let row = rep["by_day"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == "oracle" && r["day"] == 2)
        .unwrap();
    assert!(close(f(&row["checkpoint_score"]), day2));
    assert!(close(f(&row["gain"]), gain));

    // pass^k: per scenario n = 3 oracle trials, c solved; C(c,k)/C(n,k) averaged.
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &oracle {
        let e = per.entry(r["scenario"].as_str().unwrap()).or_default();
        e.0 += 1;
        e.1 += usize::from(f(&r["success_rate"]) == 1.0);
    }
    assert!(per.values().any(|&(_, c)| c < 3), "some short run failed");
    for k in 1..=3 {
        let expected = mean(
            per.values()
                .map(|&(n, c)| binomial(c, k) / binomial(n, k))
                .collect(),
        );
        let row = rep["pass_k"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["agent"] == "oracle" && r["k"] == k)
            .unwrap();
        assert!(close(f(&row["pass_k"]), expected), "pass^{k}");
        assert!(
            md.contains(&format!("| oracle | {k} | {n} | {expected:.3} |")),
            "{md}"
        );
    }
    assert!(
        !rep["pass_k"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["k"] == 4),
        "k stops at the fewest trials"
    );
    assert_eq!(rep["tokens"][0]["tokens_in"], 0, "no model, no tokens");

    // Every file, and the charts with one bar per (model, stratum).
    for f in [
        "report.md",
        "report.json",
        "models.csv",
        "by_tasks.csv",
        "by_difficulty.csv",
        "by_family.csv",
        "by_day.csv",
        "pass_k.csv",
        "errors.csv",
        "end_reasons.csv",
        "tokens.csv",
        "model_calls.csv",
        "infra_failures.csv",
        "score_by_tasks.svg",
        "score_by_day.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let svg = fs::read_to_string(out.join("score_by_tasks.svg")).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(
        svg.contains(&format!(
            "<title>oracle, {most} tasks: {:.3}</title>",
            mean(biggest)
        )),
        "{svg}"
    );
    assert_eq!(
        svg.matches("<rect x=").count() - 1 - 2,
        rep["by_tasks"].as_array().unwrap().len(),
        "one bar per row, plus the background and two legend swatches"
    );
    let svg = fs::read_to_string(out.join("score_by_day.svg")).unwrap();
    assert!(
        svg.contains(&format!("<title>oracle, day 2: {day2:.3}</title>")),
        "{svg}"
    );

    // Same inputs, same report bytes; the default output is beside the first run dir.
    let o = tbsim(&["report", idle.to_str().unwrap()], &root());
    assert!(o.status.success());
    assert!(idle.join("report/report.md").is_file());
    let o2 = tbsim(&["report", idle.to_str().unwrap()], &root());
    assert_eq!(o.stdout, o2.stdout);

    // Nothing to report on is an error naming the directory.
    let empty = dir.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let o = tbsim(&["report", empty.to_str().unwrap()], &root());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("no result.json under"),
        "{}",
        text(&o).1
    );
}

/// A result.json as the report reads it, with only the fields it uses.
#[allow(clippy::too_many_arguments)]
fn result(
    agent: &str,
    scenario: &str,
    trial: u32,
    tasks: &[(&str, &str, u32, f64)],
    steps: u64,
    errors: Value,
    end: &str,
    tokens: Option<(u64, u64, f64)>,
) -> Value {
    let task_values: Vec<Value> = tasks
        .iter()
        .map(|(family, difficulty, day, score)| {
            json!({"family": family, "difficulty": difficulty, "day": day, "score": score, "success": *score == 1.0})
        })
        .collect();
    let n = tasks.len() as f64;
    let mut days = Vec::new();
    let max_day = tasks.iter().map(|t| t.2).max().unwrap_or(1);
    for d in 1..=max_day {
        let mine: Vec<f64> = tasks.iter().filter(|t| t.2 == d).map(|t| t.3).collect();
        let k = mine.len().max(1) as f64;
        days.push(json!({
            "day": d,
            "tasks": mine.len(),
            "checkpoint_score": mine.iter().sum::<f64>() / k,
            "success_rate": mine.iter().filter(|s| **s == 1.0).count() as f64 / k,
        }));
    }
    let gains: Vec<f64> = days
        .windows(2)
        .map(|w| {
            w[1]["checkpoint_score"].as_f64().unwrap() - w[0]["checkpoint_score"].as_f64().unwrap()
        })
        .collect();
    let mut v = json!({
        "scenario": scenario,
        "agent": agent,
        "seed": 7 + u64::from(trial),
        "trial": trial,
        "checkpoint_score": tasks.iter().map(|t| t.3).sum::<f64>() / n,
        "success_rate": tasks.iter().filter(|t| t.3 == 1.0).count() as f64 / n,
        "steps": steps,
        "tool_calls": steps + 2,
        "errors": errors,
        "end_reason": end,
        "days": days,
        "day_gain": gains,
        "tasks": task_values,
    });
    // As `tbsim run` writes a model-backed run's usage (see `llm.rs` for a report
    // built from a result.json a real run wrote).
    if let Some((i, o, c)) = tokens {
        v["model"] = json!({"calls": steps, "input_tokens": i, "output_tokens": o, "cost": c});
    }
    v
}

#[test]
fn report_markdown_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    // model-a: three trials of two scenarios, one of them over two days.
    for t in 0..3 {
        runs.push(result(
            "model-a",
            "alpha",
            t,
            &[
                ("kb_fix", "easy", 1, 1.0),
                (
                    "transaction_review",
                    "hard",
                    1,
                    if t == 2 { 0.5 } else { 1.0 },
                ),
            ],
            20 + u64::from(t),
            json!({"invalid_arguments": t, "unknown_tool": 1}),
            "finished",
            Some((12_000 + 1000 * u64::from(t), 800, 0.0125)),
        ));
        runs.push(result(
            "model-a",
            "beta",
            t,
            &[
                ("meeting_attend", "easy", 1, 0.5),
                ("kb_fix", "hard", 1, 0.0),
                ("meeting_attend", "easy", 2, 1.0),
                (
                    "transaction_review",
                    "easy",
                    2,
                    if t == 0 { 1.0 } else { 0.75 },
                ),
            ],
            41,
            json!({}),
            if t == 1 { "max_steps" } else { "day_end" },
            Some((30_000, 2_000, 0.04)),
        ));
    }
    // model-b: one trial each, no tokens, one run that never ended.
    runs.push(result(
        "model-b",
        "alpha",
        0,
        &[
            ("kb_fix", "easy", 1, 1.0),
            ("transaction_review", "hard", 1, 1.0),
        ],
        12,
        json!({"path_outside_workspace": 3}),
        "finished",
        None,
    ));
    let mut beta = result(
        "model-b",
        "beta",
        0,
        &[
            ("meeting_attend", "easy", 1, 0.0),
            ("kb_fix", "hard", 1, 0.0),
            ("meeting_attend", "easy", 2, 0.0),
            ("transaction_review", "easy", 2, 0.25),
        ],
        400,
        json!({}),
        "",
        None,
    );
    beta["end_reason"] = Value::Null;
    runs.push(beta);
    // model-b: a second trial of alpha that the infrastructure cut short, scoring 0:
    // left out of the scores, listed apart; its tokens still count.
    let mut outage = result(
        "model-b",
        "alpha",
        1,
        &[
            ("kb_fix", "easy", 1, 0.0),
            ("transaction_review", "hard", 1, 0.0),
        ],
        3,
        json!({}),
        "infra_error",
        Some((900, 40, 0.001)),
    );
    outage["infra_error"] = json!("turn call: the model API failed 6 times; last: HTTP 503");
    runs.push(outage);
    for r in &runs {
        let d = dir.path().join(format!(
            "{}/{}/trial-{}",
            r["agent"].as_str().unwrap(),
            r["scenario"].as_str().unwrap(),
            r["trial"]
        ));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("result.json"),
            serde_json::to_string_pretty(r).unwrap(),
        )
        .unwrap();
    }
    let o = tbsim(
        &[
            "report",
            dir.path().to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        &root(),
    );
    let (md, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    insta::assert_snapshot!("report_markdown", md);
    // Spot checks against the fixture. model-a solved alpha in 2 of 3 trials and beta in
    // none: pass^1 = (2/3 + 0) / 2, pass^3 = (C(2,3)/C(3,3) + 0) / 2 = 0.
    assert!(md.contains("| model-a | 1 | 2 | 0.333 |"), "{md}");
    assert!(md.contains("| model-a | 3 | 2 | 0.000 |"), "{md}");
    let tokens = fs::read_to_string(dir.path().join("out/tokens.csv")).unwrap();
    assert_eq!(
        tokens,
        "agent,runs,calls,tokens_in,tokens_out,cost,cost_per_run\nmodel-a,6,186,129000,8400,0.1575,0.02625\nmodel-b,3,3,900,40,0.001,0.000333\n"
    );
    // The outage is out of model-b's means: alpha (1.0) and beta (0.0625) only.
    let models = fs::read_to_string(dir.path().join("out/models.csv")).unwrap();
    assert!(models.contains("\nmodel-b,2,2,0.53125,"), "{models}");
    assert!(models.lines().nth(2).unwrap().ends_with(",1"), "{models}");
    let infra = fs::read_to_string(dir.path().join("out/infra_failures.csv")).unwrap();
    assert_eq!(
        infra,
        "agent,scenario,seed,trial,steps,error\nmodel-b,alpha,8,1,3,turn call: the model API failed 6 times; last: HTTP 503\n"
    );
}

/// Cuts a trajectory to its first `keep` lines plus half of the next one (a torn
/// write), and removes the run's result, as a kill mid-run leaves it.
fn interrupt(run: &Path, keep: usize) {
    let traj = run.join("trajectory.jsonl");
    let text = fs::read_to_string(&traj).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() > keep + 1,
        "{} has {} lines",
        run.display(),
        lines.len()
    );
    let torn = &lines[keep][..lines[keep].len() / 2];
    fs::write(&traj, format!("{}\n{torn}", lines[..keep].join("\n"))).unwrap();
    fs::remove_file(run.join("result.json")).unwrap();
}

#[test]
fn an_interrupted_batch_resumes_to_the_bytes_of_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, cut) = (dir.path().join("whole"), dir.path().join("cut"));
    let files = ["kb-fix-medium.ron", "meeting-check-sum.ron"].map(|f| {
        root()
            .join("content/scenarios")
            .join(f)
            .display()
            .to_string()
    });
    for out in [&whole, &cut] {
        let mut args = vec!["run", "--trials", "2", "--out", out.to_str().unwrap()];
        args.extend(files.iter().map(String::as_str));
        let o = tbsim(&args, &root());
        assert!(o.status.success(), "{}", text(&o).1);
    }
    // One run finished, two cut mid-way, one never started (its directory holds only
    // what `tbsim run` writes before any world starts).
    interrupt(&cut.join("kb-fix-medium/trial-1"), 6);
    interrupt(&cut.join("meeting-check-sum/trial-1"), 1);
    let never = cut.join("meeting-check-sum/trial-0");
    fs::remove_file(never.join("trajectory.jsonl")).unwrap();
    fs::remove_file(never.join("result.json")).unwrap();
    assert_ne!(tree(&whole), tree(&cut));

    let o = tbsim(
        &[
            "run",
            "--resume",
            cut.to_str().unwrap(),
            "--concurrency",
            "2",
        ],
        &root(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("4 runs"), "{stdout}");
    assert_eq!(
        tree(&whole),
        tree(&cut),
        "every file as if never interrupted"
    );
    let o = tbsim(&["replay", cut.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).0);

    // Resuming again changes nothing: every run has ended.
    let o = tbsim(&["run", "--resume", cut.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(tree(&whole), tree(&cut));

    // Options are the recorded ones: new ones are refused, mixed batches too.
    let o = tbsim(
        &["run", "--resume", cut.to_str().unwrap(), "--hints", "2"],
        &root(),
    );
    assert!(!o.status.success());
    assert!(text(&o).1.contains("--hints"), "{}", text(&o).1);
    let odd = cut.join("meeting-check-sum/trial-1/run.json");
    let mut file = json_file(&odd);
    file["max_steps"] = json!(7);
    fs::write(&odd, file.to_string()).unwrap();
    let o = tbsim(&["run", "--resume", cut.to_str().unwrap()], &root());
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(
        stderr.contains("trial-1") && stderr.contains("other options"),
        "{stderr}"
    );
}

#[test]
fn resuming_a_directory_without_runs_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = tbsim(&["run", "--resume", dir.path().to_str().unwrap()], &root());
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("holds no run.json"), "{stderr}");
}

/// `tbsim report --compare`: two agents' batches with two trials each, paired by
/// scenario, seed and trial; the exact permutation test on four pairs; the noise
/// floor of each group; the same bytes twice; a single group refused.
#[test]
fn report_compare_pairs_runs_and_prints_intervals_and_p_values() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = [
        root().join("content/scenarios/meeting-only.ron"),
        root().join("content/scenarios/kb-fix-medium.ron"),
    ];
    let batch = |agent: &str| {
        let out = dir.path().join(agent);
        let mut args = vec![
            "run",
            "--agent",
            agent,
            "--trials",
            "2",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(scenarios.iter().map(|p| p.to_str().unwrap()));
        let o = tbsim(&args, &root());
        assert!(o.status.success(), "{}", text(&o).1);
        out
    };
    let (oracle, idle) = (batch("oracle"), batch("idle"));
    let out = dir.path().join("cmp");
    let args = [
        "report",
        "--compare",
        oracle.to_str().unwrap(),
        idle.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = tbsim(&args, &root());
    assert!(o.status.success(), "{}", text(&o).1);
    let md = text(&o).0;
    assert!(
        md.contains("## Paired difference (B − A) over runs"),
        "{md}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    let c = &v["contrasts"][0];
    assert_eq!(c["pairs"], 4, "2 scenarios x 2 trials: {c}");
    assert_eq!(
        (c["unpaired_a"].as_u64(), c["unpaired_b"].as_u64()),
        (Some(0), Some(0))
    );
    let score = &c["score"];
    assert_eq!(score["diff"], -1.0);
    assert_eq!(
        (score["ci_low"].as_f64(), score["ci_high"].as_f64()),
        (Some(-1.0), Some(-1.0))
    );
    // Four equal differences: 2 of the 16 sign assignments are as extreme.
    assert_eq!(score["exact"], true);
    assert_eq!(score["p_value"], 0.125);
    assert!(c["families"].as_array().unwrap().len() >= 2);
    assert_eq!(
        v["noise"].as_array().unwrap().len(),
        2,
        "both groups ran two trials"
    );
    for f in [
        "compare.md",
        "compare.svg",
        "compare_runs.csv",
        "compare_families.csv",
        "compare_noise.csv",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let again = tbsim(&args, &root());
    assert_eq!(o.stdout, again.stdout, "same runs, same comparison");

    let one = tbsim(&["report", "--compare", oracle.to_str().unwrap()], &root());
    assert_eq!(one.status.code(), Some(2));
    assert!(text(&one).1.contains("at least two"), "{}", text(&one).1);
}

/// Three shards as three processes, each told its share a different way (the flag,
/// a Kubernetes Indexed Job's variables, a Slurm array's), together run exactly the
/// batch: the same run directories, and `tbsim report` over the three output
/// directories writes byte for byte the tables of one unsharded run.
#[test]
fn sharded_runs_report_like_one_run() {
    use crate::util::tbsim_command;
    let dir = tempfile::tempdir().unwrap();
    let scenarios: Vec<String> = ["meeting-only", "busy-day", "kb-fix-medium"]
        .iter()
        .map(|s| {
            root()
                .join(format!("content/scenarios/{s}.ron"))
                .display()
                .to_string()
        })
        .collect();
    let run = |out: &Path, shard: Option<&str>, env: &[(&str, &str)]| {
        let mut args = vec![
            "run",
            "--agent",
            "adversary:join-all-meetings",
            "--trials",
            "2",
        ];
        let out_s = out.display().to_string();
        args.extend(["--out", out_s.as_str()]);
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        args.extend(scenarios.iter().map(String::as_str));
        let mut c = tbsim_command(&args, &root());
        c.envs(env.iter().copied());
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).1
    };
    let whole = dir.path().join("whole");
    run(&whole, None, &[]);
    let shards = [
        dir.path().join("s1"),
        dir.path().join("s2"),
        dir.path().join("s3"),
    ];
    let said = [
        run(&shards[0], Some("1/3"), &[]),
        run(
            &shards[1],
            None,
            &[("JOB_COMPLETION_INDEX", "1"), ("TBSIM_SHARD_COUNT", "3")],
        ),
        run(
            &shards[2],
            None,
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
        ),
    ];
    assert!(
        said[0].contains("shard 1/3 (from --shard): 2 of the batch's 6 runs"),
        "{}",
        said[0]
    );
    assert!(
        said[1].contains("shard 2/3 (from JOB_COMPLETION_INDEX)"),
        "{}",
        said[1]
    );
    assert!(
        said[2].contains("shard 3/3 (from SLURM_ARRAY_TASK_ID)"),
        "{}",
        said[2]
    );

    // Every run directory of the whole batch exists in exactly one shard.
    let runs = |d: &Path| -> Vec<String> {
        tbsim_report::find_named(&[d.to_path_buf()], "result.json")
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().display().to_string())
            .collect()
    };
    let mut union: Vec<String> = shards.iter().flat_map(|s| runs(s)).collect();
    union.sort();
    assert_eq!(union, runs(&whole));
    assert_eq!(union.len(), 6);

    let report = |dirs: &[&Path], out: &Path| {
        let mut args = vec!["report".to_owned()];
        args.extend(dirs.iter().map(|d| d.display().to_string()));
        args.extend(["--out".to_owned(), out.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tbsim(&args, &root());
        assert!(o.status.success(), "{}", text(&o).1);
    };
    let (r1, r2) = (dir.path().join("r-whole"), dir.path().join("r-shards"));
    report(&[&whole], &r1);
    report(&[&shards[0], &shards[1], &shards[2]], &r2);
    let mut files: Vec<_> = fs::read_dir(&r1)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for f in files {
        assert_eq!(
            fs::read(r1.join(&f)).unwrap(),
            fs::read(r2.join(&f)).unwrap(),
            "{f:?} differs between the sharded and the unsharded report"
        );
    }
}

/// Scheduling figures are written into `result.json`, and `tbsim report` computes
/// them from the trajectory for results that lack them (older runs), with the same
/// outcome: nothing is re-run.
#[test]
fn report_computes_scheduling_from_trajectories_of_recorded_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let a = root().join("content/scenarios/busy-day.ron");
    let b = root().join("content/scenarios/two-days.ron");
    crate::util::run_agent("oracle", &out, &[&a, &b]);
    let row = |name: &str| -> Value {
        let r = dir.path().join(name);
        let o = tbsim(
            &[
                "report",
                out.to_str().unwrap(),
                "--out",
                r.to_str().unwrap(),
            ],
            &root(),
        );
        assert!(o.status.success(), "{}", text(&o).1);
        let rep: Value =
            serde_json::from_str(&fs::read_to_string(r.join("report.json")).unwrap()).unwrap();
        rep["schedule"][0].clone()
    };
    let results = tbsim_report::find_named(std::slice::from_ref(&out), "result.json").unwrap();
    assert_eq!(results.len(), 2);
    for f in &results {
        let v: Value = serde_json::from_str(&fs::read_to_string(f).unwrap()).unwrap();
        let s = &v["schedule"];
        assert!(
            s["tasks"].as_array().is_some_and(|t| !t.is_empty()),
            "{f:?}"
        );
        assert_eq!(s["missed_meetings"], 0);
    }
    let with = row("with");
    assert_eq!(with["runs"], 2);
    assert_eq!(with["late_share"], 0.0, "the oracle is never late: {with}");
    // Strip the figures, as a result written before they existed: the report
    // computes the same from trajectory.jsonl and scenario.ron.
    for f in &results {
        let mut v: Value = serde_json::from_str(&fs::read_to_string(f).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("schedule");
        fs::write(f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }
    assert_eq!(row("without"), with);
}

#[test]
fn compressed_runs_hold_the_same_lines_and_replay_regrade_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, packed) = (dir.path().join("plain"), dir.path().join("packed"));
    for (out, extra) in [(&plain, vec![]), (&packed, vec!["--compress"])] {
        let mut args = vec!["run", "busy-day", "meeting-only", "--trials", "2", "--out"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        let o = tbsim(&args, &root());
        assert!(o.status.success(), "{}", text(&o).1);
    }
    for run in [
        "busy-day/trial-0",
        "busy-day/trial-1",
        "meeting-only/trial-1",
    ] {
        let (p, z) = (plain.join(run), packed.join(run));
        assert!(!z.join("trajectory.jsonl").exists(), "{run}");
        let bytes = fs::read(z.join("trajectory.jsonl.zst")).unwrap();
        let text_of = tbsim_engine::zst::decompress(&bytes, 1 << 30).unwrap();
        let plain_text = fs::read(p.join("trajectory.jsonl")).unwrap();
        assert_eq!(text_of, plain_text, "{run}: the same lines");
        // Frames are cut as the run goes, so a short run gains less.
        let gain = if run.starts_with("busy-day") { 3 } else { 1 };
        assert!(bytes.len() * gain < plain_text.len(), "{run}: compressed");
        assert_eq!(
            json_file(&p.join("result.json")),
            json_file(&z.join("result.json")),
            "{run}"
        );
    }
    // The whole batch replays and regrades from the compressed files.
    let o = tbsim(&["replay", packed.to_str().unwrap()], &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(out.matches(": identical").count(), 4, "{out}");
    let o = tbsim(&["regrade", packed.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
    let report = dir.path().join("report");
    let o = tbsim(
        &[
            "report",
            packed.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    // Not resumable, and the console says how to open one.
    let o = tbsim(
        &["run", "--compress", "--resume", packed.to_str().unwrap()],
        &root(),
    );
    assert!(!o.status.success());
    let run = packed.join("busy-day/trial-0");
    let o = tbsim(
        &[
            "view",
            run.to_str().unwrap(),
            "--export",
            dir.path().join("x").to_str().unwrap(),
        ],
        &root(),
    );
    assert!(!o.status.success());
    assert!(text(&o).1.contains("zstd -d"), "{}", text(&o).1);
}
