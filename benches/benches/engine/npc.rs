//! What a message to colleagues costs: the scripted NPC path that every chat tool
//! call takes, on `traineebench-plus-006` (the bundled scenario with the most clue
//! triggers: 15 colleagues, 46 triggers).
//!
//! * `concepts`: folding one question into concepts (lower-case, stem, synonyms),
//!   done once per message and once per trigger alternative when a world is built.
//! * `judge`: whether a message is one specific question, against every clue, task
//!   objective and name of the company (the scope is built once, outside timing, as
//!   the engine does when it builds a world); four messages per iteration: a specific
//!   question, a keyword soup, a forwarded task text and a two-task question.
//! * `send_message` / `send_group_message`: one agent step holding that one call
//!   (direct to one colleague; to a group of everyone), on a fresh world built
//!   outside timing: the tool, the specificity verdict, every recipient's clue
//!   matching and the scripted replies, as `tbsim run` executes them. The world
//!   is dropped inside timing (the routine consumes it).
//! * `send_message_step`: the same step with the world dropped outside timing.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use serde_json::json;
use tbsim_benches::{load_scenario, oracle_config};
use tbsim_core::protocol::Decision;
use tbsim_core::protocol::ToolCall;
use tbsim_engine::npc::{Scope, Trigger, concepts};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;

criterion_group!(benches, npc);

const SCENARIO: &str = "traineebench-plus/traineebench-plus-006.ron";

const QUESTION: &str = "Hi, could you tell me where the attendance records for last \
                        week are kept, and who owns the approval for the supplier budget?";

fn call(name: &str, arguments: serde_json::Value) -> Decision {
    Decision {
        calls: vec![ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }],
    }
}

fn npc(c: &mut Criterion) {
    let loaded = load_scenario(SCENARIO);
    let s = &loaded.scenario;
    let triggers: Vec<(Option<&str>, Trigger)> = s
        .company
        .people
        .iter()
        .flat_map(|p| p.clues.iter())
        .map(|c| (c.task.as_deref(), Trigger::new(&c.trigger)))
        .collect();
    let scope = Scope::new(
        triggers.iter().map(|(t, tr)| (*t, tr)),
        s.tasks.iter().map(|t| t.objective.as_str()),
        s.company.people.iter().map(|p| p.name.as_str()),
    );
    let forwarded = s
        .tasks
        .first()
        .map(|t| t.objective.clone())
        .expect("the scenario has tasks");
    let messages = [
        QUESTION.to_owned(),
        "chart link id manual owner approval code available free budget".to_owned(),
        forwarded,
        "Where is the sales handbook, and which new chart id replaced the old one in the \
         onboarding article, and who approves the budget?"
            .to_owned(),
    ];
    let keys: Vec<String> = s.company.people.iter().map(|p| p.key.clone()).collect();
    let first = keys[0].clone();

    let fresh = || {
        let mut sim = Sim::new(
            &loaded,
            oracle_config(),
            Trajectory::in_memory(),
            Box::new(LivePython::default()),
        );
        sim.begin();
        sim
    };
    // Once, untimed: the group call really reaches every colleague.
    let group = call("create_group", json!({"name": "everyone", "members": keys}));
    let mut sim = fresh();
    let obs = sim.step(&group);
    assert!(
        obs.results.iter().all(|r| r.ok),
        "create_group must succeed: {obs:?}"
    );
    let sent = sim.step(&call(
        "send_group_message",
        json!({"group": "thread/group/1", "text": QUESTION}),
    ));
    assert!(
        sent.results.iter().all(|r| r.ok),
        "send_group_message must succeed: {sent:?}"
    );

    let mut g = c.benchmark_group("npc");
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));

    g.throughput(Throughput::Elements(1));
    g.bench_function("concepts", |b| b.iter(|| concepts(black_box(QUESTION))));

    g.throughput(Throughput::Elements(messages.len() as u64));
    g.bench_function("judge", |b| {
        b.iter(|| {
            for m in &messages {
                let _ = black_box(scope.judge(black_box(m)));
            }
        });
    });

    g.throughput(Throughput::Elements(1));
    let direct = call("send_message", json!({"to": first, "text": QUESTION}));
    g.bench_function("send_message", |b| {
        b.iter_batched(
            fresh,
            |mut sim| black_box(sim.step(&direct)),
            BatchSize::LargeInput,
        );
    });
    // The same step with the world dropped outside timing: `send_message` above
    // also times dropping the whole world (its entities, trajectory and queue),
    // which the routine consumes.
    g.bench_function("send_message_step", |b| {
        b.iter_batched_ref(
            fresh,
            |sim| black_box(sim.step(&direct)),
            BatchSize::LargeInput,
        );
    });
    g.throughput(Throughput::Elements(keys.len() as u64));
    let to_all = call(
        "send_group_message",
        json!({"group": "thread/group/1", "text": QUESTION}),
    );
    g.bench_function("send_group_message", |b| {
        b.iter_batched(
            || {
                let mut sim = fresh();
                sim.step(&group);
                sim
            },
            |mut sim| black_box(sim.step(&to_all)),
            BatchSize::LargeInput,
        );
    });
    g.finish();
}
