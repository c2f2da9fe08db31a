//! The website monitor family over many seeds, its trap and its approval order,
//! and the monitoring tools against a generated incident.

use serde_json::Value;
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig, ToolResult};
use tbsim_engine::agent::Oracle;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, website_monitor};
use tbsim_scenario::{Content, Gate, LoadedScenario, PlanStep};

use crate::family_sales::{assert_wrong_answers_fail, load, suite, sweep};
use crate::util::{family_variants, generate_one};

fn unset() -> Family {
    Family::WebsiteMonitor(website_monitor::Params::default())
}

fn incident(seed: u64) -> LoadedScenario {
    load(&generate_one(&suite(seed, unset())))
}

#[test]
fn website_monitor_over_seeds() {
    let variants = family_variants(website_monitor::variants(), Family::WebsiteMonitor);
    let reached = sweep(unset, variants);
    assert_eq!(reached.len(), 1);
}

#[test]
fn website_monitor_seeds_vary_what_matters() {
    let mut answers = std::collections::BTreeSet::new();
    for seed in 0..30 {
        let s = incident(seed).scenario;
        let last = s.tasks[0].plan.last().unwrap();
        let v: Value = serde_json::from_str(&last.args).unwrap();
        let a: Value = serde_json::from_str(v["content"].as_str().unwrap()).unwrap();
        answers.insert((
            a["slow_pages"].to_string(),
            a["failing_services"].to_string(),
            a["causes"].to_string(),
        ));
    }
    assert!(answers.len() >= 15, "{answers:?}");
}

#[test]
fn website_monitor_trivially_wrong_answers_fail() {
    for seed in 0..12 {
        let loaded = incident(seed);
        let runbook = loaded
            .scenario
            .files
            .iter()
            .find_map(|f| match &f.content {
                Content::Text(t) if f.path == website_monitor::RUNBOOK => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        assert_wrong_answers_fail(&loaded, website_monitor::wrong_answers, &runbook);
    }
}

fn with_plan(loaded: &LoadedScenario, plan: Vec<PlanStep>) -> LoadedScenario {
    let mut s = loaded.scenario.clone();
    s.tasks[0].plan = plan;
    let text = tbsim_gen::to_ron(&s);
    load(&text)
}

fn passed(loaded: &LoadedScenario) -> (Vec<String>, tbsim_engine::result::RunResult) {
    let (r, _) = crate::util::run(loaded, &mut Oracle::new(&loaded.scenario), None);
    let keys = r.tasks[0]
        .checkpoints
        .iter()
        .filter(|c| c.passed)
        .map(|c| c.key.clone())
        .collect();
    (keys, r)
}

#[test]
fn trying_the_trap_costs_only_the_no_reboot_checkpoint() {
    let loaded = incident(4);
    let plan = loaded.scenario.tasks[0].plan.clone();
    let failing = plan
        .iter()
        .filter(|s| s.tool == "error_logs")
        .nth(1)
        .map(|s| serde_json::from_str::<Value>(&s.args).unwrap()["service"].clone())
        .unwrap();
    let mut trapped = plan.clone();
    trapped.insert(
        3,
        PlanStep {
            gate: Gate::Ready,
            tool: "reboot_server".into(),
            args: serde_json::json!({"service": failing}).to_string(),
        },
    );
    let (keys, r) = passed(&with_plan(&loaded, trapped));
    assert!(!keys.contains(&"no_reboot".to_owned()), "{keys:?}");
    assert_eq!(keys.len(), loaded.scenario.tasks[0].checkpoints.len() - 1);
    assert_eq!(r.errors.get("permission"), Some(&1), "{:?}", r.errors);
    // Rebooting after the incident was handed over no longer matters: the checkpoint latched.
    let mut late = plan;
    late.push(PlanStep {
        gate: Gate::Ready,
        tool: "reboot_server".into(),
        args: serde_json::json!({"service": failing}).to_string(),
    });
    let (keys, _) = passed(&with_plan(&loaded, late));
    assert!(keys.contains(&"no_reboot".to_owned()), "{keys:?}");
}

#[test]
fn the_approver_gives_no_code_before_the_owner_asks() {
    let loaded = incident(9);
    let plan = loaded.scenario.tasks[0].plan.clone();
    // Steps: ... [6] ask HR, [7] read, [8] read the register, [9] tell owner,
    // [10] read, [11] ask approver, [12] read, [13] code to owner, [14] read,
    // [15] report. Ask the approver first.
    assert_eq!(plan[11].tool, "send_message");
    let mut early = plan[..6].to_vec();
    early.extend([plan[11].clone(), plan[12].clone()]);
    early.extend(plan[6..11].iter().cloned());
    early.extend(plan[13..].iter().cloned());
    let (keys, _) = passed(&with_plan(&loaded, early));
    for k in ["approval_obtained", "approval_delivered", "no_reboot"] {
        assert!(!keys.contains(&k.to_owned()), "{k} passed: {keys:?}");
    }
    for k in ["slow_page", "root_cause", "owner_found", "owner_alerted"] {
        assert!(keys.contains(&k.to_owned()), "{k} failed: {keys:?}");
    }
}

fn call(sim: &mut Sim, name: &str, args: Value) -> ToolResult {
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
    obs.results.into_iter().next().unwrap()
}

#[test]
fn monitoring_tools_accept_empty_arguments_and_follow_simulated_time() {
    // Find a seed whose disk is filling, to watch a metric move.
    let (loaded, failing) = (0..200)
        .find_map(|seed| {
            let l = incident(seed);
            let failing = l.scenario.services.iter().find(|s| {
                s.metrics
                    .iter()
                    // A filling disk: critical from the morning, then held and
                    // fixed at night (two more points).
                    .any(|m| {
                        m.name == "disk_used_pct"
                            && m.points.len() >= 4
                            && m.points[1].value >= 90.0
                    })
            })?;
            let name = failing.name.clone();
            Some((l, name))
        })
        .expect("some seed fills a disk");
    let mut sim = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    for tool in ["list_services", "service_health", "page_load_times"] {
        let r = call(&mut sim, tool, serde_json::json!({}));
        assert!(r.ok, "{tool} {{}}: {:?}", r.error);
    }
    let bad = call(&mut sim, "error_logs", serde_json::json!({}));
    assert_eq!(
        bad.error.unwrap().kind,
        tbsim_core::protocol::ErrorKind::Schema
    );
    let bad = call(
        &mut sim,
        "page_load_times",
        serde_json::json!({"window": "last_month"}),
    );
    assert!(bad.error.unwrap().message.contains("last_7_days"));
    let bad = call(
        &mut sim,
        "service_health",
        serde_json::json!({"service": "nope"}),
    );
    assert_eq!(
        bad.error.unwrap().kind,
        tbsim_core::protocol::ErrorKind::NotFound
    );

    let disk = |sim: &mut Sim| -> (f64, usize) {
        let r = call(
            sim,
            "service_health",
            serde_json::json!({"service": failing}),
        );
        let v = r.result.unwrap();
        let m = v["services"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "disk_used_pct")
            .unwrap()
            .clone();
        assert_eq!(v["services"][0]["status"], "critical");
        let logs = call(
            sim,
            "error_logs",
            serde_json::json!({"service": failing, "lines": 200}),
        );
        let n = logs.result.unwrap()["lines"].as_array().unwrap().len();
        (m["value"].as_f64().unwrap(), n)
    };
    let (morning, logs_morning) = disk(&mut sim);
    let r = call(&mut sim, "wait", serde_json::json!({"until": "14:00"}));
    assert!(r.ok);
    let (afternoon, logs_afternoon) = disk(&mut sim);
    assert!(afternoon > morning, "{morning} -> {afternoon}");
    assert!(
        logs_afternoon > logs_morning,
        "later log lines appear with time"
    );
    let limited = call(
        &mut sim,
        "error_logs",
        serde_json::json!({"service": failing, "lines": 2}),
    );
    assert_eq!(
        limited.result.unwrap()["lines"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn services_are_validated() {
    use tbsim_scenario::{Check, Point, validate};
    let good = incident(2).scenario;
    assert!(tbsim_gen::to_ron(&good).contains("services: ["));
    let errors = |f: &dyn Fn(&mut tbsim_scenario::Scenario)| -> String {
        let mut s = good.clone();
        f(&mut s);
        validate(&s, std::path::Path::new("x.ron"), None)
            .expect_err("invalid")
            .to_string()
    };
    let e = errors(&|s| {
        let mut twin = s.services[0].clone();
        twin.key = "service/twin".into();
        s.services.push(twin);
    });
    assert!(e.contains("is used twice"), "{e}");
    let e = errors(&|s| s.services[0].key = "svc/x".into());
    assert!(e.contains("must look like `service/<name>`"), "{e}");
    let e = errors(&|s| {
        let m = &mut s.services[0].metrics[0];
        m.points = vec![
            Point {
                at: "2025-10-01T10:00".into(),
                value: 1.0,
            },
            Point {
                at: "2025-10-01T09:00".into(),
                value: 2.0,
            },
        ];
        m.thresholds = Some((5.0, 5.0));
    });
    assert!(e.contains("time order") && e.contains("thresholds"), "{e}");
    let e = errors(&|s| {
        let web = s.services.iter_mut().find(|v| !v.pages.is_empty()).unwrap();
        web.pages[0].load_ms[0].window = "last_year".into();
    });
    assert!(e.contains("unknown or repeated window `last_year`"), "{e}");
    let e = errors(&|s| {
        let web = s.services.iter_mut().find(|v| !v.pages.is_empty()).unwrap();
        web.pages[0].load_ms.pop();
        web.pages[1].path = "blog".into();
    });
    assert!(
        e.contains("each window") && e.contains("start with `/`"),
        "{e}"
    );
    let e = errors(&|s| {
        s.tasks[0].checkpoints[0].check = Check::ToolCalled {
            tool: "hack".into(),
            called: false,
        }
    });
    assert!(e.contains("unknown tool `hack`"), "{e}");
}
