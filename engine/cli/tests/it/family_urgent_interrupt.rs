//! Urgent interrupt over many seeds, plus the helpers the three discrete-event
//! families (urgent interrupt, changed requirement, handoff chain) share.

use std::collections::BTreeSet;

use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig};
use tbsim_core::time::Epoch;
use tbsim_engine::agent::Oracle;
use tbsim_engine::result::RunResult;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, generate_suite, urgent_interrupt};
use tbsim_scenario::{Check, Gate, LoadedScenario, Release, Scenario, TaskSpec};

pub(crate) use crate::family_ads_strategy::{load, suite};
use crate::util::{SEEDS, assert_distinct_worlds, check_generated, family_variants, generate_one};

/// Generates, round-trips and runs one scenario: the oracle scores 1.0 without tool
/// errors, the idle agent 0, and generation is byte-stable.
pub(crate) fn check_one(label: &str, seed: u64, family: &Family) -> (String, LoadedScenario) {
    check_generated(&format!("{label}: seed {seed}"), "sweep.ron", || {
        suite(seed, family.clone())
    })
}

/// The seed sweep: `SEEDS` seeds with unset parameters and every variant once.
/// Returns every tenth default-parameter scenario for further checks.
pub(crate) fn sweep(
    label: &str,
    default: Family,
    variants: Vec<(String, Family)>,
) -> Vec<LoadedScenario> {
    let mut seen = BTreeSet::new();
    let mut sample = Vec::new();
    assert_distinct_worlds(label, SEEDS, |seed| {
        let (text, loaded) = check_one(label, seed, &default);
        seen.extend(loaded.scenario.tasks.iter().map(|t| t.variant.clone()));
        if seed % 10 == 0 {
            sample.push(loaded);
        }
        text
    });
    for (i, (key, family)) in variants.iter().enumerate() {
        let (_, loaded) = check_one(key, 10_000 + i as u64, family);
        assert!(
            loaded.scenario.tasks.iter().all(|t| &t.variant == key),
            "{key}: tasks carry the variant key"
        );
        seen.insert(key.clone());
    }
    assert!(
        seen.len() >= variants.len(),
        "{label}: variants covered: {seen:?}"
    );
    sample
}

fn epoch(loaded: &LoadedScenario) -> Epoch {
    Epoch::from_timestamp(&loaded.scenario.clock.start).unwrap()
}

fn call(sim: &mut Sim, name: &str, args: serde_json::Value) {
    sim.step(&Decision {
        calls: vec![ToolCall {
            id: "x".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
}

/// Waits (repeatedly: notifications wake the agent early) until `ts`.
pub(crate) fn wait_until(sim: &mut Sim, loaded: &LoadedScenario, ts: &str) {
    let target = epoch(loaded).parse(ts).unwrap();
    while sim.now() < target && !sim.is_over() {
        call(sim, "wait", serde_json::json!({"until": ts}));
    }
}

/// Whether a check looks at `path` or at messages to `person`.
pub(crate) fn touches(check: &Check, path: Option<&str>, person: Option<&str>) -> bool {
    match check {
        Check::FileExists { path: p }
        | Check::FileText { path: p, .. }
        | Check::FileContains { path: p, .. }
        | Check::JsonStringSet { path: p, .. }
        | Check::JsonRecords { path: p, .. }
        | Check::JsonNumber { path: p, .. }
        | Check::JsonArray { path: p, .. } => Some(p.as_str()) == path,
        Check::MessageSent { to, .. } => Some(to.as_str()) == person,
        Check::All(subs) => subs.iter().any(|c| touches(c, path, person)),
        _ => false,
    }
}

/// A fresh sim with `task` released and every task it waits on solved by its plan's
/// file writes.
fn sim_at_release(loaded: &LoadedScenario, task: &TaskSpec) -> Sim {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    let mut chain = Vec::new();
    let mut cur = task;
    while let Release::AfterCheckpoint { task: prev, .. } = &cur.release {
        cur = loaded
            .scenario
            .tasks
            .iter()
            .find(|t| &t.key == prev)
            .unwrap();
        chain.push(cur);
    }
    for t in chain.iter().rev() {
        for s in t.plan.iter().filter(|s| s.tool == "write_file") {
            sim.step(&Decision {
                calls: vec![ToolCall {
                    id: "prep".into(),
                    name: s.tool.clone(),
                    arguments: s.args.clone(),
                }],
            });
        }
    }
    // An answer gate opens when the gate task closes, at its deadline.
    if let Some(gate) = chain.first() {
        wait_until(&mut sim, loaded, &gate.deadline);
    }
    if let Release::At(ts) = &task.release {
        wait_until(&mut sim, loaded, ts);
    }
    sim
}

fn result_of<'a>(r: &'a RunResult, task: &str) -> &'a tbsim_engine::result::TaskResult {
    r.tasks.iter().find(|t| t.key == task).unwrap()
}

/// Every trivially wrong file and message for `task` leaves the checkpoints that
/// look at it unpassed (each tried in a fresh world, after the task's release).
pub(crate) fn assert_wrong_fail(
    loaded: &LoadedScenario,
    task: &TaskSpec,
    files: &[(String, String)],
    messages: &[(String, String)],
) {
    assert!(
        !files.is_empty() || !messages.is_empty(),
        "{}: nothing to try",
        task.key
    );
    let check = |sim: &mut Sim, path: Option<&str>, person: Option<&str>, label: &str| {
        sim.end(tbsim_core::protocol::EndReason::Finished);
        let r = sim.results();
        let tr = result_of(&r, &task.key);
        assert!(tr.released_at.is_some(), "{}: released", task.key);
        for cp in &task.checkpoints {
            if touches(&cp.check, path, person) {
                let got = tr.checkpoints.iter().find(|c| c.key == cp.key).unwrap();
                assert!(
                    !got.passed,
                    "{}: {label} passed checkpoint {}",
                    task.key, cp.key
                );
            }
        }
    };
    for (path, content) in files {
        let mut sim = sim_at_release(loaded, task);
        call(
            &mut sim,
            "write_file",
            serde_json::json!({"path": path, "content": content}),
        );
        let label = format!("{:.60?}", content);
        check(&mut sim, Some(path), None, &label);
    }
    for (to, text) in messages {
        let mut sim = sim_at_release(loaded, task);
        for cp in &task.checkpoints {
            if let Check::MessageSent {
                after: Some(a),
                to: t,
                ..
            } = &cp.check
                && t == to
            {
                wait_until(&mut sim, loaded, a);
            }
        }
        call(
            &mut sim,
            "send_message",
            serde_json::json!({"to": to, "text": text}),
        );
        check(&mut sim, None, Some(to), text);
    }
}

/// The loaded scenario with one task's plan changed.
pub(crate) fn with_plan(
    loaded: &LoadedScenario,
    task: &str,
    edit: impl FnOnce(&mut Vec<tbsim_scenario::PlanStep>),
) -> LoadedScenario {
    let mut s = loaded.scenario.clone();
    let t = s.tasks.iter_mut().find(|t| t.key == task).unwrap();
    edit(&mut t.plan);
    let text = tbsim_gen::to_ron(&s);
    load(&text)
}

/// Every trivially wrong file (`answers`) and message (`messages`) of each task in
/// `sample` fails (`assert_wrong_fail`).
pub(crate) fn assert_sample_wrong_fail(
    sample: &[LoadedScenario],
    answers: fn(&TaskSpec, &Scenario) -> Vec<(String, String)>,
    messages: fn(&TaskSpec) -> Vec<(String, String)>,
) {
    for loaded in sample {
        for task in &loaded.scenario.tasks {
            assert_wrong_fail(
                loaded,
                task,
                &answers(task, &loaded.scenario),
                &messages(task),
            );
        }
    }
}

pub(crate) fn oracle(loaded: &LoadedScenario) -> RunResult {
    crate::util::run(loaded, &mut Oracle::new(&loaded.scenario), None).0
}

fn variants() -> Vec<(String, Family)> {
    family_variants(urgent_interrupt::variants(), Family::UrgentInterrupt)
}

#[test]
fn urgent_interrupt_over_seeds() {
    let sample = sweep(
        "urgent_interrupt",
        Family::UrgentInterrupt(Default::default()),
        variants(),
    );
    assert_sample_wrong_fail(
        &sample,
        urgent_interrupt::wrong_answers,
        urgent_interrupt::wrong_messages,
    );
}

#[test]
fn the_interrupt_lands_mid_routine_and_the_oracle_resumes() {
    for seed in 0..40 {
        let text = generate_one(&suite(seed, Family::UrgentInterrupt(Default::default())));
        let loaded = load(&text);
        let s = &loaded.scenario;
        let (urgent, routine) = (&s.tasks[0], &s.tasks[1]);
        assert_eq!(urgent.priority, tbsim_scenario::Priority::Urgent);
        // The manager's message arrives exactly at the release; the objective does
        // not carry the request.
        let Release::At(at) = &urgent.release else {
            panic!("released at a time")
        };
        assert_eq!(s.events.len(), 1);
        assert_eq!(&s.events[0].at, at);
        let r = oracle(&loaded);
        let (u, rt) = (result_of(&r, &urgent.key), result_of(&r, &routine.key));
        let e = epoch(&loaded);
        let p = |v: &Option<String>| e.parse(v.as_deref().unwrap()).unwrap();
        assert!(p(&rt.released_at) < p(&u.released_at), "seed {seed}");
        assert!(
            p(&u.released_at) < p(&rt.completed_at),
            "seed {seed}: the routine is still open when the interrupt lands"
        );
        assert!(p(&u.completed_at) <= e.parse(&urgent.deadline).unwrap());
        let _ = routine;
    }
}

#[test]
fn answering_after_the_deadline_fails_the_urgent_task_only() {
    for seed in 0..12 {
        let family = Family::UrgentInterrupt(urgent_interrupt::Params {
            kind: Some(
                [
                    urgent_interrupt::Kind::Lookup,
                    urgent_interrupt::Kind::Brief,
                    urgent_interrupt::Kind::Forward,
                    urgent_interrupt::Kind::Relay,
                ][seed as usize % 4],
            ),
            ..Default::default()
        });
        let text = generate_one(&suite(seed, family));
        let loaded = load(&text);
        let urgent = loaded.scenario.tasks[0].clone();
        let e = epoch(&loaded);
        let late = e.iso(
            e.parse(&urgent.deadline)
                .unwrap()
                .after(tbsim_core::time::SimDuration::minutes(1)),
        );
        let slow = with_plan(&loaded, &urgent.key, |plan| {
            plan[0].gate = Gate::NotBefore(late[..16].to_owned());
        });
        let r = oracle(&slow);
        let u = result_of(&r, &urgent.key);
        let answer = u.checkpoints.last().unwrap();
        assert!(!answer.passed, "seed {seed}: a late answer must not count");
        assert_eq!(
            result_of(&r, &loaded.scenario.tasks[1].key).score,
            1.0,
            "seed {seed}"
        );
    }
}

#[test]
fn out_of_range_parameters_are_clear_errors() {
    for (p, needle) in [
        (
            urgent_interrupt::Params {
                workshops: Some(5),
                ..Default::default()
            },
            "workshops",
        ),
        (
            urgent_interrupt::Params {
                at: Some("08:00".into()),
                ..Default::default()
            },
            "`at`",
        ),
        (
            urgent_interrupt::Params {
                kind: Some(urgent_interrupt::Kind::Relay),
                deadline_min: Some(20),
                ..Default::default()
            },
            "too tight",
        ),
    ] {
        let err = generate_suite(&suite(1, Family::UrgentInterrupt(p)))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}

/// `MessageSent` through the real world: only the agent's own direct messages to
/// that person count, from the given time on, and a colleague quoting the value
/// (here, in a timed message) never passes it.
#[test]
fn message_checks_count_only_the_agents_own_messages() {
    let src = r#"Scenario(
  name: "msg",
  seed: 1,
  clock: ClockSpec(start: "2025-10-08T09:00", end: "2025-10-08T18:00"),
  company: Company(name: "Acme", people: [
    Person(key: "npc/ann", name: "Ann Lee", department: "Ops", position: "Manager"),
    Person(key: "npc/bob", name: "Bob Ray", department: "Ops", position: "Analyst"),
  ]),
  intern: Intern(key: "agent/intern", name: "Avery Smith", department: "Ops", manager: "npc/ann"),
  tasks: [TaskSpec(
    key: "task/t", family: "demo", variant: "demo/easy", difficulty: easy,
    title: "T", objective: "O", assigned_by: "npc/ann", release: Start,
    deadline: "2025-10-08T17:00",
    checkpoints: [CheckpointSpec(key: "c", description: "d",
      check: MessageSent(to: "npc/ann", contains: ["4210"], absent: ["3980"], after: Some("2025-10-08T10:00")),
      feedback: "f")],
  )],
  events: [TimedEvent(at: "2025-10-08T09:30", change: Message(from: "npc/ann", text: "Is it 4210?"))],
)"#;
    let loaded = load(src);
    let run = |msgs: &[(&str, &str, Option<&str>)]| -> bool {
        let mut sim = Sim::new(
            &loaded,
            SimConfig::default(),
            Trajectory::in_memory(),
            Box::new(LivePython::default()),
        );
        sim.begin();
        for (to, text, at) in msgs {
            if let Some(at) = at {
                wait_until(&mut sim, &loaded, at);
            }
            call(
                &mut sim,
                "send_message",
                serde_json::json!({"to": to, "text": text}),
            );
        }
        wait_until(&mut sim, &loaded, "2025-10-08T11:00");
        sim.results().tasks[0].checkpoints[0].passed
    };
    assert!(!run(&[]), "the colleague's own message does not count");
    assert!(run(&[(
        "npc/ann",
        "It is 4,210.",
        Some("2025-10-08T10:00")
    )]));
    assert!(!run(&[("npc/ann", "It is 4210.", None)]), "sent too early");
    assert!(
        !run(&[("npc/bob", "It is 4210.", Some("2025-10-08T10:00"))]),
        "sent to someone else"
    );
    assert!(
        !run(&[("npc/ann", "4210 or 3980", Some("2025-10-08T10:00"))]),
        "a forbidden candidate"
    );
}
