//! Human guidance and forks: a console's control over a live run (pause, single
//! steps, hint tiers and messages) is recorded, counted, reported and replayed;
//! `tbsim fork` starts new runs from any step of another.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tbsim_core::protocol::{Notification, Observation, SimConfig};
use tbsim_engine::agent::{Agent, AgentFuture, Oracle, block_on};
use tbsim_engine::live::{Control, GuidanceKind, GuidanceRequest, GuideError, LiveState};
use tbsim_engine::npc::Scripted;
use tbsim_engine::run::{RunHooks, RunLimits, run_to_dir_hooked};

use crate::util::{root, scenario, tbsim, text};

/// The oracle, keeping every guidance notification it is shown.
struct Listening {
    inner: Oracle,
    heard: Arc<Mutex<Vec<(u64, Notification)>>>,
}

impl Agent for Listening {
    fn name(&self) -> String {
        "oracle".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        for n in &obs.notifications {
            if matches!(n, Notification::Guidance { .. }) {
                self.heard.lock().unwrap().push((obs.step, n.clone()));
            }
        }
        self.inner.decide(obs)
    }
}

fn wait_until(control: &Control, what: &str, ok: impl Fn(&tbsim_engine::live::LiveStatus) -> bool) {
    let start = std::time::Instant::now();
    while !ok(&control.status()) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "timed out waiting for {what}: {:?}",
            control.status()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn hint(task: &str) -> GuidanceRequest {
    GuidanceRequest {
        by: "human:ana".into(),
        task: Some(task.into()),
        kind: GuidanceKind::NextHint,
    }
}

fn lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A paused run waits; single steps let one decision through each; hints and a
/// message reach the agent before its next decision, are written to the trajectory
/// and counted in result.json; the run replays identically and the report shows it.
#[test]
fn guidance_is_delivered_recorded_counted_and_replayed() {
    let loaded = scenario("busy-day");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("guided");
    let control = Control::new(true);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let runner = {
        let (control, heard, dir) = (Arc::clone(&control), Arc::clone(&heard), dir.clone());
        std::thread::spawn(move || {
            let mut agent = Listening {
                inner: Oracle::new(&loaded.scenario),
                heard,
            };
            let config = SimConfig {
                agent: "oracle".into(),
                ..SimConfig::default()
            };
            block_on(run_to_dir_hooked(
                &loaded,
                &mut agent,
                config,
                &RunLimits::default(),
                &dir,
                None,
                Box::new(Scripted),
                RunHooks::with_control(control),
            ))
            .unwrap()
        })
    };
    wait_until(&control, "the first hold", |s| {
        s.state == LiveState::Paused && s.progress.is_some()
    });
    assert_eq!(
        control.status().progress.unwrap().step,
        0,
        "held before deciding"
    );
    for _ in 0..3 {
        control.step_once();
    }
    wait_until(&control, "three single steps", |s| {
        s.state == LiveState::Paused && s.progress.as_ref().is_some_and(|p| p.step == 3)
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(control.status().progress.unwrap().step, 3, "still held");

    // A released task with hint tiers; hints for it run out after its last tier.
    let status = control.status();
    let (task, &(given, total)) = status
        .hint_tiers
        .iter()
        .find(|(_, (_, total))| *total > 0)
        .expect("a released task with hints");
    assert_eq!(given, 0, "no hints up front at level 0");
    for tier in 1..=total {
        assert_eq!(control.guide(hint(task)), Ok(tier));
    }
    assert_eq!(
        control.guide(hint(task)),
        Err(GuideError::NoMoreTiers(task.clone()))
    );
    assert_eq!(
        control.guide(hint("no-such-task")),
        Err(GuideError::UnknownTask("no-such-task".into()))
    );
    let message = GuidanceRequest {
        by: "human:ana".into(),
        task: None,
        kind: GuidanceKind::Message("Check the drive before asking.".into()),
    };
    assert_eq!(control.guide(message), Ok(0));
    control.resume();
    let result = runner.join().unwrap();
    assert_eq!(result.checkpoint_score, 1.0);

    // The agent was told, before its fourth decision.
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len(), usize::from(total) + 1, "{heard:?}");
    assert!(heard.iter().all(|(step, _)| *step == 3));
    let Notification::Guidance { tier, from, .. } = &heard[0].1 else {
        unreachable!()
    };
    assert_eq!((*tier, from.as_str()), (Some(1), "ana"));

    // Written before decision 4, in the order sent.
    let all = lines(&dir);
    let guidance: Vec<&Value> = all.iter().filter(|l| l["type"] == "guidance").collect();
    assert_eq!(guidance.len(), usize::from(total) + 1);
    assert!(
        guidance
            .iter()
            .all(|g| g["step"] == 4 && g["by"] == "human:ana")
    );
    assert_eq!(guidance[0]["tier"], 1);
    assert_eq!(guidance[usize::from(total)]["tier"], Value::Null);
    assert_eq!(
        guidance[usize::from(total)]["text"],
        "Check the drive before asking."
    );
    let first = all.iter().position(|l| l["type"] == "guidance").unwrap();
    let decision4 = all
        .iter()
        .position(|l| l["type"] == "decision" && l["step"] == 4)
        .unwrap();
    assert!(first < decision4);

    // Counted per task and over the run.
    let res: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(res["guidance"]["hints"], u64::from(total));
    assert_eq!(res["guidance"]["messages"], 1);
    let t = res["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["key"] == task.as_str())
        .unwrap();
    assert_eq!(t["guidance"]["hints"], u64::from(total));
    assert_eq!(t["guidance"]["top_tier"], u64::from(total));

    // Replayed without anyone guiding.
    let out = tbsim(&["replay", dir.to_str().unwrap()], &root());
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("identical"), "{stdout}");

    // The report's guidance column and table.
    let report = tmp.path().join("report");
    let out = tbsim(
        &[
            "report",
            dir.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## By guidance"), "{md}");
    let row = format!("| oracle | 0 | 1 | 1 | {total} | 1 | 1.000 | 1.000 |");
    assert!(md.contains(&row), "{row} in\n{md}");
}

/// A guidance line edited into a trajectory (a hint the task does not have) makes
/// replay report the divergence instead of inventing a hint.
#[test]
fn an_edited_guidance_line_is_caught_by_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = tbsim(
        &[
            "run",
            root()
                .join("content/scenarios/meeting-only.ron")
                .to_str()
                .unwrap(),
            "--agent",
            "oracle",
            "--out",
            dir.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let path = dir.join("trajectory.jsonl");
    let mut l: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let at = l
        .iter()
        .position(|x| x.contains(r#""type":"decision""#))
        .unwrap();
    l.insert(
        at,
        r#"{"type":"guidance","step":1,"t":0,"by":"human:x","task":"no-such-task","tier":1,"text":"made up"}"#
            .to_owned(),
    );
    std::fs::write(&path, l.join("\n") + "\n").unwrap();
    let out = tbsim(&["replay", dir.to_str().unwrap()], &root());
    assert!(!out.status.success(), "{:?}", text(&out));
}

fn run_oracle(out: &Path, scenario: &str) {
    let o = tbsim(
        &[
            "run",
            root()
                .join(format!("content/scenarios/{scenario}.ron"))
                .to_str()
                .unwrap(),
            "--agent",
            "oracle",
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
}

/// `tbsim fork` takes over the first N decisions, names its parent and the shared
/// prefix's digest, and replays; the shared lines are the parent's.
#[test]
fn a_fork_takes_over_the_parents_first_decisions_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("parent");
    run_oracle(&parent, "busy-day");
    for (agent, name) in [("idle", "f-idle"), ("oracle", "f-oracle")] {
        let fork = tmp.path().join(name);
        let o = tbsim(
            &[
                "fork",
                parent.to_str().unwrap(),
                "--at-step",
                "5",
                "--agent",
                agent,
                "--out",
                fork.to_str().unwrap(),
            ],
            &root(),
        );
        assert!(o.status.success(), "{:?}", text(&o));
        let mine = lines(&fork);
        let theirs = lines(&parent);
        assert_eq!(mine[0]["agent"], agent);
        assert_eq!(mine[0]["fork"]["parent"], "parent");
        assert_eq!(mine[0]["fork"]["step"], 5);
        // Everything up to decision 6 is the parent's, header aside.
        let cut = theirs
            .iter()
            .position(|l| l["step"] == 6 && (l["type"] == "decision" || l["type"] == "model"))
            .unwrap();
        assert_eq!(mine[1..cut], theirs[1..cut], "{agent}");
        let prefix: String = std::fs::read_to_string(parent.join("trajectory.jsonl"))
            .unwrap()
            .lines()
            .take(cut)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            mine[0]["fork"]["parent_digest"],
            blake3::hash(prefix.as_bytes()).to_hex().as_str()
        );
        let out = tbsim(&["replay", fork.to_str().unwrap()], &root());
        assert!(out.status.success(), "{:?}", text(&out));
        let res: Value =
            serde_json::from_str(&std::fs::read_to_string(fork.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(res["agent"], agent);
        if agent == "oracle" {
            assert_eq!(res["checkpoint_score"], 1.0, "the oracle finishes the work");
        }
    }
    // Past the end, and a fork of nothing, are refused with a reason.
    let o = tbsim(
        &[
            "fork",
            parent.to_str().unwrap(),
            "--at-step",
            "999",
            "--agent",
            "idle",
        ],
        &root(),
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr.contains("complete decisions; cannot fork at step 999"),
        "{stderr}"
    );
    let o = tbsim(
        &[
            "fork",
            tmp.path().join("nothing").to_str().unwrap(),
            "--at-step",
            "1",
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    let o = tbsim(
        &[
            "fork",
            parent.to_str().unwrap(),
            "--at-step",
            "1",
            "--agent",
            "human:x",
        ],
        &root(),
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr.contains("console"), "{stderr}");
}

/// A fork of a fork replays, and a fork of a still-running (torn) trajectory takes
/// only complete decisions.
#[test]
fn forks_chain_and_a_live_parent_is_cut_at_its_last_complete_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("p");
    run_oracle(&parent, "busy-day");
    let f1 = tmp.path().join("f1");
    let f2 = tmp.path().join("f2");
    for (from, to, step) in [(&parent, &f1, "10"), (&f1, &f2, "20")] {
        let o = tbsim(
            &[
                "fork",
                from.to_str().unwrap(),
                "--at-step",
                step,
                "--agent",
                "oracle",
                "--out",
                to.to_str().unwrap(),
            ],
            &root(),
        );
        assert!(o.status.success(), "{:?}", text(&o));
        assert!(
            tbsim(&["replay", to.to_str().unwrap()], &root())
                .status
                .success()
        );
    }
    // Cut the parent inside a decision: the decision line is there, its result not.
    let live = tmp.path().join("live");
    std::fs::create_dir_all(&live).unwrap();
    std::fs::copy(parent.join("scenario.ron"), live.join("scenario.ron")).unwrap();
    let text_all = std::fs::read_to_string(parent.join("trajectory.jsonl")).unwrap();
    let all: Vec<&str> = text_all.lines().collect();
    let d8 = all
        .iter()
        .position(|l| l.starts_with(r#"{"type":"decision","step":8,"#))
        .unwrap();
    let cut: String = all[..=d8].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(live.join("trajectory.jsonl"), cut + "{\"type\":\"res").unwrap();
    let o = tbsim(
        &[
            "fork",
            live.to_str().unwrap(),
            "--at-step",
            "8",
            "--agent",
            "idle",
        ],
        &root(),
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has 7 complete decisions"), "{stderr}");
    let o = tbsim(
        &[
            "fork",
            live.to_str().unwrap(),
            "--at-step",
            "7",
            "--agent",
            "idle",
            "--out",
            tmp.path().join("from-live").to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
}

/// A guided run cut short is resumed from its trajectory: the recorded guidance is
/// applied again where it was, and the resumed run writes the same lines.
#[test]
fn a_guided_run_resumes_with_its_guidance() {
    let loaded = scenario("busy-day");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("guided");
    let control = Control::new(false);
    // Queued before the run starts: applied before the first decision.
    let note = GuidanceRequest {
        by: "human:ana".into(),
        task: None,
        kind: GuidanceKind::Message("Meetings first today.".into()),
    };
    assert_eq!(control.guide(note), Ok(0));
    let config = SimConfig {
        agent: "oracle".into(),
        ..SimConfig::default()
    };
    let whole = block_on(run_to_dir_hooked(
        &loaded,
        &mut Oracle::new(&loaded.scenario),
        config,
        &RunLimits::default(),
        &dir,
        None,
        Box::new(Scripted),
        RunHooks::with_control(control),
    ))
    .unwrap();
    assert_eq!(whole.guidance.map(|g| g.messages), Some(1));
    let full = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
    assert!(full.lines().nth(1).is_some_and(|l| !l.contains("guidance")));
    let g = full
        .lines()
        .position(|l| l.contains(r#""type":"guidance""#))
        .unwrap();
    // Cut after decision 3 (the guidance is well before it).
    let d4 = full
        .lines()
        .position(|l| l.starts_with(r#"{"type":"decision","step":4,"#))
        .unwrap();
    assert!(g < d4);
    let cut: String = full.lines().take(d4).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("trajectory.jsonl"), cut).unwrap();
    std::fs::remove_file(dir.join("result.json")).unwrap();
    let resumed = tbsim_engine::run::resume_dir(
        &dir,
        &mut Oracle::new(&loaded.scenario),
        &RunLimits::default(),
        Box::new(Scripted),
        None,
    )
    .unwrap();
    assert_eq!(resumed.digest, whole.digest);
    assert_eq!(resumed.guidance, whole.guidance);
    assert_eq!(
        std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap(),
        full
    );
}
