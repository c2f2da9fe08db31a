//! `tbsim validity scan`: the answer-in-observation scan over scenarios and suites
//! (the method is in `tbsim_validity::scan` and `docs/validity.md`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use tbsim_gen::{Family, ScenarioPlan, generate_scenario, load_suite, to_ron};
use tbsim_scenario::{LoadedScenario, load_file, parse_str, validate};
use tbsim_validity::scan::{CheckpointScan, Tally, scan};

#[derive(Subcommand, Debug)]
pub(crate) enum ValidityCommand {
    /// For every scored answer checkpoint, try generic extraction rules on
    /// everything an agent can observe without reasoning; report the share of
    /// instances each rule solves (exit 1 when a share exceeds --max-share).
    Scan(ScanArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ScanArgs {
    /// Scenario files, directories of scenario files, or suite files (a suite is
    /// scanned as one-task instances of every variant of each family it uses,
    /// over `--seeds` seeds each).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Seeds per variant for a suite.
    #[arg(long, default_value_t = 200)]
    pub seeds: u64,
    /// Highest share of scanned instances any one rule may solve.
    #[arg(long, default_value_t = 0.05)]
    pub max_share: f64,
    /// A `family/checkpoint` row allowed over the share (repeatable): reported,
    /// but not a failure.
    #[arg(long)]
    pub allow: Vec<String>,
    /// Worlds scanned at once (the output is the same whatever the number).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// One instance to scan: a scenario, its seed and its first task (the prefix of
/// its follow-up stages; empty for scenario files).
struct Instance {
    loaded: LoadedScenario,
    seed: Option<u64>,
    first_task: String,
}

pub(crate) fn cmd_validity(cmd: ValidityCommand) -> Result<ExitCode> {
    let ValidityCommand::Scan(a) = cmd;
    if !(0.0..=1.0).contains(&a.max_share) {
        bail!("--max-share must be between 0 and 1");
    }
    let (jobs, not_generated) = instances(&a.inputs, a.seeds)?;
    if jobs.is_empty() {
        bail!("nothing to scan");
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 64);
    let results = scan_all(&jobs, threads);
    let mut tally = Tally::default();
    for (job, r) in jobs.iter().zip(&results) {
        tally.add(r, &job.first_task);
    }
    let over: Vec<&str> = tally
        .over(a.max_share)
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !a.allow.iter().any(|x| x == k))
        .collect();
    let mut out = std::io::stdout().lock();
    if a.json {
        let mut v = tally.json(a.max_share);
        v["not_generated"] = not_generated.into();
        v["allowed"] = a.allow.clone().into();
        v["failing"] = over.clone().into();
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(
            out,
            "{} instances scanned ({} seeds not generated); max share {}\n",
            tally.instances, not_generated, a.max_share
        )?;
        write!(out, "{}", tally.markdown(a.max_share))?;
        // The table `adversary:extract`'s rules come from.
        writeln!(
            out,
            "\n| answer shape | best rule (instances it solves where it is best) |\n|---|---|"
        )?;
        for (shape, rules) in tally.rules_by_shape() {
            let list: Vec<String> = rules.iter().map(|(r, n)| format!("{r} ({n})")).collect();
            writeln!(out, "| {shape} | {} |", list.join("; ").replace('|', "\\|"))?;
        }
        for k in &over {
            writeln!(out, "over the share: {k}")?;
        }
    }
    Ok(if over.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Scans every instance on `threads` threads; results in instance order.
fn scan_all(jobs: &[Instance], threads: usize) -> Vec<Vec<CheckpointScan>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Vec<CheckpointScan>>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = scan(&job.loaded, job.seed);
                    results.lock().expect("no thread panicked")[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no thread panicked")
        .into_iter()
        .map(|r| r.expect("every instance scanned"))
        .collect()
}

/// The instances of every input, and the count of suite seeds generation refused.
fn instances(inputs: &[PathBuf], seeds: u64) -> Result<(Vec<Instance>, u64)> {
    let mut out = Vec::new();
    let mut refused = 0;
    for input in inputs {
        if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("reading {}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "ron"))
                .collect();
            files.sort();
            for f in files {
                out.push(scenario_file(&f)?);
            }
            continue;
        }
        match load_file(input) {
            Ok(loaded) => out.push(Instance {
                loaded,
                seed: None,
                first_task: String::new(),
            }),
            Err(scenario_err) => match load_suite(input) {
                Ok(suite) => {
                    let mut keys: Vec<&'static str> = suite
                        .scenarios
                        .iter()
                        .flat_map(|p| p.day_plans().into_iter().flatten())
                        .map(|t| t.family.key())
                        .collect();
                    keys.sort();
                    keys.dedup();
                    for v in Family::all_variants()
                        .into_iter()
                        .filter(|v| keys.contains(&v.family.key()))
                    {
                        for seed in 0..seeds {
                            match one_task(&v.key, seed, v.family.clone())? {
                                Some(loaded) => out.push(Instance {
                                    loaded,
                                    seed: Some(seed),
                                    first_task: "task/t".into(),
                                }),
                                None => refused += 1,
                            }
                        }
                    }
                }
                Err(suite_err) => bail!(
                    "{} is neither a scenario ({scenario_err}) nor a suite ({suite_err})",
                    input.display()
                ),
            },
        }
    }
    Ok((out, refused))
}

fn scenario_file(f: &Path) -> Result<Instance> {
    let loaded = load_file(f).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Instance {
        loaded,
        seed: None,
        first_task: String::new(),
    })
}

/// A one-task scenario of `family` at `seed` (a 09:00-18:00 day, 40 people, no
/// deadline), or none when the generator refuses the seed.
fn one_task(variant: &str, seed: u64, family: Family) -> Result<Option<LoadedScenario>> {
    let plan = ScenarioPlan::one_task(
        &format!("scan-{}-{seed}", variant.replace('/', "-")),
        "2025-10-01",
        "t",
        family,
    );
    let Ok(s) = generate_scenario(seed, &plan) else {
        return Ok(None);
    };
    let text = to_ron(&s);
    let path = PathBuf::from(format!("{}.ron", plan.name));
    let scenario = parse_str(&text, &path).map_err(|e| anyhow::anyhow!("{e}"))?;
    validate(&scenario, &path, None).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(LoadedScenario {
        scenario,
        path,
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        source: text,
        assets: Default::default(),
    }))
}
