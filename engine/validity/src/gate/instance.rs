//! One instance of the gate: generated once, then every agent and check on it.

use std::path::PathBuf;

use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::{Agent, Idle, Oracle};
use tbsim_engine::run::{RunLimits, Scorer};
use tbsim_gen::script_solver::ScriptSolver;
use tbsim_gen::{Family, ScenarioPlan, generate_scenario, to_ron};
use tbsim_scenario::{LoadedScenario, parse_str, validate};

use super::answers::{InitialFiles, answer_checks, check_path};
use super::{InstanceOutcome, QUESTION_SEEDS, Subject, TaskAnswer};
use crate::scan::scan_observed;

/// The one-task plan the gate generates for `variant` at `seed`.
pub fn plan(variant: &str, seed: u64, family: &Family) -> ScenarioPlan {
    ScenarioPlan::one_task(
        &format!("check-{}-{seed}", variant.replace('/', "-")),
        "2025-10-01",
        "t",
        family.clone(),
    )
}

/// A score-only run on a copy of the instance's world: the gate runs about twenty
/// agents on each instance, so the world is built once ([`Scorer`]); the result
/// is an unrecorded run's, field for field.
fn run(scorer: &Scorer, agent: &mut dyn Agent) -> tbsim_engine::result::RunResult {
    let config = SimConfig {
        agent: agent.name(),
        ..SimConfig::default()
    };
    scorer.score(agent, config, &RunLimits::default())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn one_instance(
    variant: &str,
    seed: u64,
    family: &Family,
    subject: Subject,
    rust_solver: bool,
    adversaries: &[String],
    questions: &[String],
    at: &str,
    probe: bool,
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
    let scorer = Scorer::new(&loaded);
    let r = run(&scorer, &mut Oracle::new(&loaded.scenario));
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
    let r = run(&scorer, &mut Idle::default());
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
        let r = run(&scorer, &mut solver);
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
        let r = run(&scorer, &mut tbsim_agents::Solver::new());
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
        let Some(mut adv) = crate::adversary::by_name(name) else {
            continue;
        };
        let r = run(&scorer, &mut adv);
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
    let (scans, seen) = scan_observed(&loaded, Some(seed));
    o.scan = scans;
    if probe {
        o.probe = crate::probe::instance_rows(&loaded, &seen, seed, "task/t");
    }
    if matches!(subject, Subject::Script(_)) && seed < QUESTION_SEEDS {
        o.asked = Some(crate::questions::check(
            &loaded,
            &loaded.scenario.tasks[0].key,
            questions,
        ));
    }
    o
}
