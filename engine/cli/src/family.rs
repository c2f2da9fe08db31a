//! `tbsim family`: script families. `family check` is the validity gate a family
//! must pass before it ships; `family new` scaffolds one that passes it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use tbsim_agents::scan::{Tally, scan};
use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::{Agent, Idle, Oracle};
use tbsim_engine::run::{RunLimits, run_unrecorded};
use tbsim_gen::registry::FamilyEntry;
use tbsim_gen::script::ScriptEntry;
use tbsim_gen::script_solver::ScriptSolver;
use tbsim_gen::{Family, ScenarioPlan, generate_scenario, to_ron};
use tbsim_scenario::{Check, LoadedScenario, TaskSpec, parse_str, validate};

#[derive(Subcommand, Debug)]
pub(crate) enum FamilyCommand {
    /// The validity gate: for every variant and seed, generation is byte-stable,
    /// the scenario validates, the oracle scores 1 and the idle agent 0, every
    /// adversary stays at or under 0.05 and solves nothing, every wrong answer
    /// fails, answers vary, and the answer-in-observation scan finds nothing.
    Check(CheckArgs),
    /// Write a new family folder (`NAME/family.star`, `NAME/README.md`) that
    /// passes `tbsim family check`.
    New {
        /// The family's folder; its last component is the family key (a-z, 0-9, _).
        dir: PathBuf,
    },
    /// Ask a model to write a family, run the gate on it, and feed the gate's
    /// failures back, until it passes or the rounds run out.
    Draft(crate::family_draft::DraftArgs),
    /// Print the script API reference (`ctx`, `rng`, `tools`, built-ins, the
    /// prelude), generated from the host's code; `docs/authoring.md` holds it.
    Reference,
}

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// Family folders (each holding `family.star`), or the keys of registered
    /// families (a Rust family's key checks it the same way, with its Rust solver,
    /// for comparing a port with its original).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Seeds per variant.
    #[arg(long, default_value_t = 200)]
    pub seeds: u64,
    /// Also require the independent Rust solver (`--agent solver`) to score 1 on
    /// every instance (for ports of Rust families).
    #[arg(long)]
    pub rust_solver: bool,
    /// Adversaries to run (default: every one of the library).
    #[arg(long, value_delimiter = ',')]
    pub adversaries: Vec<String>,
    /// Instances checked at once (the output is the same whatever the number).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Highest mean checkpoint score an adversary may reach.
const ADVERSARY_CEILING: f64 = 0.05;
/// Highest share of instances that may share one expected answer.
const TOP_ANSWER_SHARE: f64 = 0.60;
/// Highest share of instances an empty answer may satisfy.
const EMPTY_SHARE: f64 = 0.25;
/// Fewest seeds per variant at which the answer-spread shares are judged: below it
/// a share is mostly chance (two seeds of a variant whose usual answer is "none
/// abnormal" share it half the time). They are still printed.
const MIN_SPREAD_SEEDS: u64 = 20;
/// Highest share of instances one extraction rule of the scan may solve.
const SCAN_SHARE: f64 = 0.05;

pub(crate) fn cmd_family(cmd: FamilyCommand) -> Result<ExitCode> {
    match cmd {
        FamilyCommand::Check(a) => check(&a),
        FamilyCommand::New { dir } => scaffold(&dir),
        FamilyCommand::Draft(a) => crate::family_draft::cmd_draft(&a),
        FamilyCommand::Reference => {
            print!("{}", tbsim_gen::script_host::reference()?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What one instance showed.
#[derive(Debug, Default)]
struct InstanceOutcome {
    /// Failures, each already located.
    failures: Vec<String>,
    oracle: f64,
    idle: f64,
    /// The script's own solver (`solve(tools, task)`), for script families.
    solver: Option<f64>,
    /// The independent Rust solver, when asked for (always for a Rust family).
    rust_solver: Option<f64>,
    /// Adversary name -> (score, solved a task).
    adversaries: Vec<(String, f64, bool)>,
    wrong_answers: usize,
    /// Per task of the instance (a chain's follow-ups too), by key: the expected
    /// answer as the task's answer checks (for the spread), and whether an empty
    /// file at every answer path passes one of its checkpoints.
    answers: Vec<TaskAnswer>,
    scan: Vec<tbsim_agents::scan::CheckpointScan>,
    /// The colleague check (script families, the first seeds only).
    asked: Option<crate::family_questions::Asked>,
}

#[derive(Debug)]
struct TaskAnswer {
    key: String,
    answer: String,
    empty_passes: bool,
}

/// Seeds per variant on which colleagues are asked the README's questions (each
/// question is a fresh run per clue; more seeds add little).
const QUESTION_SEEDS: u64 = 8;
/// The share of natural questions colleagues must answer (as the NPC corpus test).
const QUESTION_GOAL: f64 = 0.95;

fn check(a: &CheckArgs) -> Result<ExitCode> {
    if a.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let adversaries: Vec<String> = if a.adversaries.is_empty() {
        tbsim_agents::adversary::ADVERSARIES
            .iter()
            .map(|(n, _)| (*n).to_owned())
            .collect()
    } else {
        for n in &a.adversaries {
            if tbsim_agents::adversary::by_name(n).is_none() {
                bail!("unknown adversary `{n}`");
            }
        }
        a.adversaries.clone()
    };
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 64);
    // Script errors quote `fail()` messages: escaped before the terminal sees them.
    let mut out = tbsim_core::term::Escaped::new(std::io::stdout().lock());
    let mut all_failures = Vec::new();
    for dir in &a.dirs {
        let subject = match subject(dir) {
            Ok(s) => s,
            Err(e) => {
                writeln!(out, "{e}")?;
                all_failures.push(e.to_string());
                continue;
            }
        };
        let mut questions: Vec<String> = Vec::new();
        let (entry, at, rust_solver): (&dyn FamilyEntry, String, bool) = match subject {
            Subject::Script(entry) => {
                let script = entry.script();
                questions =
                    crate::family_questions::example_questions(entry.readme().unwrap_or_default());
                // Failures after generation are the generator's: located at `generate`.
                let gen_line = script
                    .source()
                    .lines()
                    .position(|l| l.starts_with("def generate("))
                    .map_or(1, |i| i + 1);
                if !script.defines("solve") {
                    all_failures.push(format!(
                        "{}: error[TB0026]: the script defines no `def solve(tools, task)`: its instances are not shown solvable from observations",
                        script.file()
                    ));
                }
                (
                    entry as &dyn FamilyEntry,
                    format!("{}:{gen_line}", script.file()),
                    a.rust_solver,
                )
            }
            Subject::Rust(entry) => (entry, format!("engine/gen/src/{}.rs", entry.key()), true),
        };
        writeln!(
            out,
            "family `{}` ({}): {} variants x {} seeds\n",
            entry.key(),
            at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f),
            entry.variants().len(),
            a.seeds
        )?;
        writeln!(
            out,
            "| variant | instances | oracle | idle | solver | rust solver | worst adversary | wrong answers | top answer | empty answer | scan best | questions answered | soups refused | failures |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        )?;
        // Every (variant, seed) in one pool, so no thread waits for a variant's last
        // instance; rows are written in variant order as each variant completes.
        let variants = entry.variants();
        let jobs: Vec<(usize, u64)> = (0..variants.len())
            .flat_map(|v| (0..a.seeds).map(move |seed| (v, seed)))
            .collect();
        let mut done: Vec<InstanceOutcome> = Vec::new();
        let mut written: std::io::Result<()> = Ok(());
        run_jobs(
            &jobs,
            threads,
            |&(v, seed)| {
                one_instance(
                    &variants[v].key,
                    seed,
                    &variants[v].family,
                    subject,
                    rust_solver,
                    &adversaries,
                    &questions,
                    &at,
                )
            },
            |&(v, _), r| {
                done.push(r);
                if done.len() as u64 == a.seeds && written.is_ok() {
                    let results = std::mem::take(&mut done);
                    match variant_row(&mut out, &variants[v].key, &results, a.seeds, &at) {
                        Ok(f) => all_failures.extend(f),
                        Err(e) => written = Err(e),
                    }
                }
            },
        );
        written?;
        writeln!(out)?;
    }
    if a.seeds < MIN_SPREAD_SEEDS {
        writeln!(
            out,
            "(answer spread not judged below {MIN_SPREAD_SEEDS} seeds per variant)"
        )?;
    }
    if all_failures.is_empty() {
        writeln!(out, "gate passed")?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(out, "{} failures:", all_failures.len())?;
        for f in &all_failures {
            writeln!(out, "{f}")?;
        }
        Ok(ExitCode::from(1))
    }
}

/// Judges one variant's instances: writes its table row and returns its failures.
fn variant_row(
    out: &mut impl Write,
    variant: &str,
    results: &[InstanceOutcome],
    seeds: u64,
    at: &str,
) -> std::io::Result<Vec<String>> {
    let mut failures: Vec<String> = Vec::new();
    let mut tally = Tally::default();
    // Task key -> (expected answer -> instances, instances, empty passes).
    let mut spread: BTreeMap<&str, (BTreeMap<&str, usize>, usize, usize)> = BTreeMap::new();
    let mut adv: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let (mut oracle, mut idle, mut wrong) = (0.0, 0.0, 0);
    let (mut solver, mut rsolver) = (None::<f64>, None::<f64>);
    let mut asked: Option<crate::family_questions::Asked> = None;
    let n = results.len() as f64;
    for r in results {
        failures.extend(r.failures.iter().cloned());
        oracle += r.oracle / n;
        idle += r.idle / n;
        if let Some(x) = r.solver {
            *solver.get_or_insert(0.0) += x / n;
        }
        if let Some(x) = r.rust_solver {
            *rsolver.get_or_insert(0.0) += x / n;
        }
        wrong += r.wrong_answers;
        for t in &r.answers {
            let e = spread.entry(t.key.as_str()).or_default();
            *e.0.entry(t.answer.as_str()).or_default() += 1;
            e.1 += 1;
            e.2 += usize::from(t.empty_passes);
        }
        for (name, score, solved) in &r.adversaries {
            let e = adv.entry(name.as_str()).or_default();
            e.0 += score / n;
            e.1 += usize::from(*solved);
        }
        tally.add(&r.scan, "task/t");
        if let Some(x) = &r.asked {
            let t = asked.get_or_insert_with(Default::default);
            t.questions += x.questions;
            t.answered += x.answered;
            t.soups += x.soups;
            t.leaked += x.leaked;
            t.misses.extend(x.misses.iter().cloned());
        }
    }
    // Judged per task: a chain's follow-ups may not repeat themselves either.
    let (mut top, mut empty_share) = (0.0_f64, 0.0_f64);
    let one_task = spread.len() == 1;
    for (key, (answers, seen, empty)) in &spread {
        let seen = *seen as f64;
        let task_top = answers.values().copied().max().unwrap_or(0) as f64 / seen;
        let task_empty = *empty as f64 / seen;
        top = top.max(task_top);
        empty_share = empty_share.max(task_empty);
        let which = if one_task {
            String::new()
        } else {
            format!(" task `{key}`:")
        };
        if task_top > TOP_ANSWER_SHARE && seeds >= MIN_SPREAD_SEEDS {
            failures.push(format!(
                "{at}: {}:{which} one expected answer is shared by {:.0}% of instances (at most {:.0}%)",
                variant,
                task_top * 100.0,
                TOP_ANSWER_SHARE * 100.0
            ));
        }
        if task_empty > EMPTY_SHARE && seeds >= MIN_SPREAD_SEEDS {
            failures.push(format!(
                "{at}: {}:{which} an empty answer passes a checkpoint in {:.0}% of instances (at most {:.0}%)",
                variant,
                task_empty * 100.0,
                EMPTY_SHARE * 100.0
            ));
        }
    }
    let worst = adv
        .iter()
        .max_by(|x, y| x.1.0.total_cmp(&y.1.0).then(y.0.cmp(x.0)))
        .map(|(k, s)| (k.to_string(), s.0, s.1));
    for (name, (mean, solved)) in &adv {
        if *mean > ADVERSARY_CEILING || *solved > 0 {
            failures.push(format!(
                "{at}: {}: adversary:{name} scores {mean:.3} (at most {ADVERSARY_CEILING}) and solves {solved} instances (none allowed)",
                variant
            ));
        }
    }
    for (key, row) in tally.over(SCAN_SHARE) {
        failures.push(format!(
            "{at}: {}: the validity scan solves `{key}` in {:.1}% of instances by `{}` (at most {:.0}%)",
            variant,
            row.best_share() * 100.0,
            row.best().map_or("?", |b| b.0),
            SCAN_SHARE * 100.0
        ));
    }
    if let Some(x) = &asked {
        let readme = at
            .rsplit_once(':')
            .map_or(at, |(f, _)| f)
            .replace("family.star", "README.md");
        if x.questions == 0 && x.soups > 0 {
            failures.push(format!(
                "{readme}: {}: colleagues hold clues but the README lists no \"## Example questions\" to ask them",
                variant
            ));
        } else if (x.answered as f64) < QUESTION_GOAL * x.questions as f64 {
            failures.push(format!(
                "{readme}: {}: colleagues answer {} of {} natural questions (at least {:.0}%); first misses: {}",
                variant,
                x.answered,
                x.questions,
                QUESTION_GOAL * 100.0,
                x.misses.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
            ));
        }
        if x.leaked > 0 {
            failures.push(format!(
                "{at}: {}: {} keyword soups or forwarded tasks got a clue: {}",
                variant,
                x.leaked,
                x.misses
                    .iter()
                    .filter(|m| m.starts_with("the soup"))
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    let scan_best = tally
        .over(0.0)
        .into_iter()
        .map(|(_, r)| r.best_share())
        .fold(0.0, f64::max);
    writeln!(
        out,
        "| {} | {} | {oracle:.3} | {idle:.3} | {} | {} | {} | {wrong} | {:.0}% | {:.0}% | {:.1}% | {} | {} | {} |",
        variant,
        results.len(),
        solver.map_or("-".into(), |x| format!("{x:.3}")),
        rsolver.map_or("-".into(), |x| format!("{x:.3}")),
        worst.map_or("-".into(), |(k, s, solved)| format!(
            "{k} {s:.3} ({solved} solved)"
        )),
        top * 100.0,
        empty_share * 100.0,
        scan_best * 100.0,
        asked
            .as_ref()
            .map_or("-".into(), |x| format!("{}/{}", x.answered, x.questions)),
        asked.as_ref().map_or("-".into(), |x| format!(
            "{}/{}",
            x.soups - x.leaked,
            x.soups
        )),
        failures.len()
    )?;
    Ok(failures)
}

/// What `family check` checks: a script family (loaded from its folder) or a
/// registered Rust family (by key).
#[derive(Debug, Clone, Copy)]
enum Subject {
    Script(&'static ScriptEntry),
    Rust(&'static dyn FamilyEntry),
}

fn subject(dir: &Path) -> Result<Subject, String> {
    if !dir.exists()
        && let Some(key) = dir.to_str()
        && let Some(e) = tbsim_gen::registry::by_key(key)
    {
        if let Some(s) = tbsim_gen::script::entry(key) {
            return Ok(Subject::Script(s));
        }
        return Ok(Subject::Rust(e));
    }
    tbsim_gen::registry::register_script_dir(dir)
        .map(Subject::Script)
        .map_err(|e| e.to_string())
}

/// Runs `f` over `jobs` on `threads` threads and hands each result to `sink` on
/// the calling thread, in job order, as soon as it and every earlier one are done.
fn run_jobs<J: Sync, T: Send>(
    jobs: &[J],
    threads: usize,
    f: impl Fn(&J) -> T + Sync,
    mut sink: impl FnMut(&J, T),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, T)>();
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    if tx.send((i, f(job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, T> = BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&due) {
                sink(&jobs[due], r);
                due += 1;
            }
        }
    });
}

pub(crate) fn plan(variant: &str, seed: u64, family: &Family) -> ScenarioPlan {
    ScenarioPlan::one_task(
        &format!("check-{}-{seed}", variant.replace('/', "-")),
        "2025-10-01",
        "t",
        family.clone(),
    )
}

fn run(loaded: &LoadedScenario, agent: &mut dyn Agent) -> tbsim_engine::result::RunResult {
    let config = SimConfig {
        agent: agent.name(),
        ..SimConfig::default()
    };
    run_unrecorded(loaded, agent, config, &RunLimits::default())
}

/// The answer checks of a task: every predicate on what the agent delivers (files,
/// messages, bookings, domain checks), judged when the task closes.
fn answer_checks(check: &Check, out: &mut Vec<Check>) {
    match check {
        Check::All(v) => v.iter().for_each(|c| answer_checks(c, out)),
        c if c.kind() == tbsim_scenario::check::CheckKind::Answer => out.push(c.clone()),
        _ => {}
    }
}

fn check_path(c: &Check) -> Option<&str> {
    match c {
        Check::FileExists { path }
        | Check::FileText { path, .. }
        | Check::FileContains { path, .. }
        | Check::JsonStringSet { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonNumber { path, .. }
        | Check::JsonArray { path, .. }
        | Check::CsvTable { path, .. } => Some(path),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn one_instance(
    variant: &str,
    seed: u64,
    family: &Family,
    subject: Subject,
    rust_solver: bool,
    adversaries: &[String],
    questions: &[String],
    at: &str,
) -> InstanceOutcome {
    let mut o = InstanceOutcome::default();
    let fail = |o: &mut InstanceOutcome, m: String| o.failures.push(m);
    let p = plan(variant, seed, family);
    let s = match generate_scenario(seed, &p) {
        Ok(s) => s,
        Err(e) => {
            fail(&mut o, format!("{variant} seed {seed}: {e}"));
            return o;
        }
    };
    let text = to_ron(&s);
    match generate_scenario(seed, &p) {
        Ok(again) if to_ron(&again) == text => {}
        _ => fail(
            &mut o,
            format!("{at}: {variant} seed {seed}: generating twice gives different bytes"),
        ),
    }
    let path = PathBuf::from(format!("{}.ron", p.name));
    let scenario = match parse_str(&text, &path)
        .map_err(|e| e.to_string())
        .and_then(|sc| {
            validate(&sc, &path, None)
                .map(|_| sc)
                .map_err(|e| e.to_string())
        }) {
        Ok(sc) => sc,
        Err(e) => {
            fail(
                &mut o,
                format!("{at}: {variant} seed {seed}: the scenario does not round-trip: {e}"),
            );
            return o;
        }
    };
    let loaded = LoadedScenario {
        scenario,
        path,
        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
        source: text,
        assets: Default::default(),
    };
    let r = run(&loaded, &mut Oracle::new(&loaded.scenario));
    o.oracle = r.checkpoint_score;
    if r.checkpoint_score < 1.0 || !r.errors.is_empty() {
        let missed: Vec<String> = r
            .tasks
            .iter()
            .flat_map(|t| t.checkpoints.iter().filter(|c| !c.passed))
            .map(|c| c.key.clone())
            .collect();
        fail(
            &mut o,
            format!(
                "{at}: {variant} seed {seed}: the oracle scores {:.3} (missed {missed:?}, tool errors {:?})",
                r.checkpoint_score, r.errors
            ),
        );
    }
    let r = run(&loaded, &mut Idle::default());
    o.idle = r.checkpoint_score;
    if r.checkpoint_score > 0.0 {
        fail(
            &mut o,
            format!(
                "{at}: {variant} seed {seed}: the idle agent scores {:.3}",
                r.checkpoint_score
            ),
        );
    }
    if let Subject::Script(entry) = subject
        && entry.script().defines("solve")
    {
        let mut solver = ScriptSolver::new(vec![entry]);
        let r = run(&loaded, &mut solver);
        o.solver = Some(r.checkpoint_score);
        if r.checkpoint_score < 1.0 || !solver.errors().is_empty() {
            let missed: Vec<String> = r
                .tasks
                .iter()
                .flat_map(|t| t.checkpoints.iter().filter(|c| !c.passed))
                .map(|c| c.key.clone())
                .collect();
            let file = entry.script().file();
            fail(
                &mut o,
                format!(
                    "{file}: {variant} seed {seed}: the script's solver scores {:.3} (missed {missed:?}; script errors {:?})",
                    r.checkpoint_score,
                    solver.errors()
                ),
            );
        }
    }
    if rust_solver {
        let r = run(&loaded, &mut tbsim_agents::Solver::new());
        o.rust_solver = Some(r.checkpoint_score);
        if r.checkpoint_score < 1.0 {
            fail(
                &mut o,
                format!(
                    "{at}: {variant} seed {seed}: the Rust solver scores {:.3}",
                    r.checkpoint_score
                ),
            );
        }
    }
    for name in adversaries {
        let Some(mut adv) = tbsim_agents::adversary::by_name(name) else {
            continue;
        };
        let r = run(&loaded, &mut adv);
        let solved = r.tasks.iter().any(|t| t.success);
        o.adversaries
            .push((name.clone(), r.checkpoint_score, solved));
    }
    // Every task of the instance, a chain's follow-ups too (judged on files alone,
    // so a task released later is judged as readily as the first).
    let files = InitialFiles::of(&loaded);
    let scenario_json = match subject {
        Subject::Script(_) => match serde_json::to_value(&loaded.scenario) {
            Ok(v) => Some(v),
            Err(e) => {
                fail(
                    &mut o,
                    format!("{variant} seed {seed}: the scenario as JSON: {e}"),
                );
                None
            }
        },
        Subject::Rust(_) => None,
    };
    for task in &loaded.scenario.tasks {
        let mut answers = Vec::new();
        for c in &task.checkpoints {
            answer_checks(&c.check, &mut answers);
        }
        let mut paths: Vec<&str> = answers.iter().filter_map(check_path).collect();
        paths.sort();
        paths.dedup();
        let written: Vec<(String, String)> = paths
            .iter()
            .map(|p| ((*p).to_owned(), String::new()))
            .collect();
        // A task with nothing to deliver (joining a meeting) has no answer to share.
        o.answers.extend((!answers.is_empty()).then(|| TaskAnswer {
            key: task.key.clone(),
            answer: ron::ser::to_string(&answers).unwrap_or_default(),
            empty_passes: files.passes_any(task, &written),
        }));
        let wrong = match (subject, &scenario_json) {
            (Subject::Script(entry), Some(json)) => match entry.script_wrong_answers(task, json) {
                Ok(w) => w,
                Err(e) => {
                    fail(&mut o, format!("{variant} seed {seed}: {e}"));
                    Vec::new()
                }
            },
            (Subject::Script(_), None) => Vec::new(),
            (Subject::Rust(entry), _) => entry.wrong_answers(task, &loaded.scenario),
        };
        for (path, body) in &wrong {
            if files.passes_any(task, &[(path.clone(), body.clone())]) {
                fail(
                    &mut o,
                    format!(
                        "{at}: {variant} seed {seed}: a listed wrong answer for `{path}` of `{}` passes a checkpoint",
                        task.key
                    ),
                );
            }
        }
        o.wrong_answers += wrong.len();
    }
    o.scan = scan(&loaded, Some(seed));
    if matches!(subject, Subject::Script(_)) && seed < QUESTION_SEEDS {
        o.asked = Some(crate::family_questions::check(
            &loaded,
            &loaded.scenario.tasks[0].key,
            questions,
        ));
    }
    o
}

/// The files of an instance as they stand with nothing done (every file the
/// scenario places, the timed ones too: answers are judged at the end of the day),
/// for judging answers written over them without running a simulation.
struct InitialFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl InitialFiles {
    fn of(loaded: &LoadedScenario) -> InitialFiles {
        let files = loaded
            .scenario
            .all_files()
            .map(|f| (f.path.clone(), loaded.file_bytes(f)))
            .collect();
        InitialFiles { files }
    }

    /// Whether writing these workspace files (and doing nothing else) passes any
    /// checkpoint of `task`. Only `workspace/` is the agent's to write, as in a run.
    fn passes_any(&self, task: &TaskSpec, written: &[(String, String)]) -> bool {
        let view = Written {
            initial: &self.files,
            written: written
                .iter()
                .filter(|(p, _)| p.starts_with("workspace/"))
                .map(|(p, b)| (p.as_str(), b.as_bytes()))
                .collect(),
        };
        task.checkpoints
            .iter()
            .any(|c| tbsim_scenario::check::evaluate(&c.check, &view))
    }
}

/// A world in which the agent has written files over the initial ones and done
/// nothing else.
struct Written<'a> {
    initial: &'a BTreeMap<String, Vec<u8>>,
    written: BTreeMap<&'a str, &'a [u8]>,
}

impl tbsim_scenario::check::WorldView for Written<'_> {
    fn file(&self, path: &str) -> Option<&[u8]> {
        self.written
            .get(path)
            .copied()
            .or_else(|| self.initial.get(path).map(Vec::as_slice))
    }
}

/// The scaffold: the bundled worked example (`inventory_reorder`, which passes
/// the gate) under the new key, to edit from there.
const TEMPLATE: &str = include_str!("../../../content/families/inventory_reorder/family.star");
const TEMPLATE_KEY: &str = "\"key\": \"inventory_reorder\"";
const TEMPLATE_README: &str = "# __KEY__\n\nA script family scaffolded by `tbsim family new` from the worked example\n`inventory_reorder`. Edit `family.star` (see `docs/authoring.md`), then run\n`tbsim family check <this folder>` until it passes.\n\n## Example questions\n\nThe gate sends each to every clue's holder (`{first}`: their first name; `{subject}`: the\nfirst term of the clue's last trigger group). Write them as an intern would ask.\n\n- Hi {first}, what is the current lead time for orders from {subject}?\n- Hello {first}! How many days does delivery from {subject} take at the moment?\n- Hi {first}, do you know the standard lead time for {subject} under the current contract?\n";

fn scaffold(dir: &Path) -> Result<ExitCode> {
    let key = dir
        .file_name()
        .and_then(|n| n.to_str())
        .context("the family folder needs a name")?;
    if key.is_empty()
        || key.len() > 64
        || !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        bail!("a family name is 1-64 characters of a-z, 0-9 and _ (got `{key}`)");
    }
    if tbsim_gen::registry::by_key(key).is_some() {
        bail!("`{key}` is already a family; choose another name");
    }
    if dir.join("family.star").exists() {
        bail!("{} already exists", dir.join("family.star").display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(
        dir.join("family.star"),
        TEMPLATE.replace(TEMPLATE_KEY, &format!("\"key\": \"{key}\"")),
    )?;
    std::fs::write(
        dir.join("README.md"),
        TEMPLATE_README.replace("__KEY__", key),
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wrote {0}/family.star and {0}/README.md; check it with `tbsim family check {0}`",
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_reach_the_sink_in_job_order_whichever_finishes_first() {
        let jobs: Vec<u64> = (0..40).collect();
        let mut seen = Vec::new();
        run_jobs(
            &jobs,
            4,
            |&j| {
                // Later jobs finish sooner, so results arrive out of order.
                std::thread::sleep(std::time::Duration::from_millis((40 - j) % 7));
                j * 2
            },
            |&j, r| seen.push((j, r)),
        );
        let expected: Vec<(u64, u64)> = jobs.iter().map(|&j| (j, j * 2)).collect();
        assert_eq!(seen, expected);
    }
}
