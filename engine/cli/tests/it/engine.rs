//! Engine behaviours seen through the tools: interrupts, releases, deadlines,
//! timed events, group chat, bookings and attachments.

use serde_json::json;
use tbsim_core::protocol::Notification;
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig, ToolResult};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_scenario::{Content, FileSpec, LoadedScenario, TimedEvent, WorldChange};

fn start(loaded: &LoadedScenario) -> (Sim, Vec<Notification>) {
    let mut s = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    let obs = s.begin();
    (s, obs.notifications)
}

fn call(sim: &mut Sim, name: &str, args: serde_json::Value) -> ToolResult {
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
    obs.results.into_iter().next().unwrap()
}

fn kinds(ns: &[Notification]) -> Vec<String> {
    ns.iter()
        .map(|n| {
            serde_json::to_value(n).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn meeting_interrupt_announces_a_task_only_to_those_present() {
    let loaded = crate::util::scenario("meeting-check-sum");
    // On time: the start interrupt wakes a waiting agent, joining hears the announcement.
    let (mut s, first) = start(&loaded);
    assert_eq!(
        kinds(&first),
        ["task_released"],
        "only the attend task is known at the start"
    );
    let r = call(&mut s, "wait", json!({"until": "12:00"}));
    assert_eq!(
        kinds(&r.notifications),
        ["meeting_starting"],
        "the meeting interrupts the wait"
    );
    assert!(r.time.ends_with("09:30"));
    let r = call(
        &mut s,
        "join_meeting",
        json!({"meeting": "meeting/sync-sync"}),
    );
    assert!(r.ok);
    assert!(
        r.time.ends_with("10:30"),
        "joining lasts until the meeting ends: {}",
        r.time
    );
    assert_eq!(
        kinds(&r.notifications),
        ["announcement", "task_released", "meeting_ended"]
    );

    // Late: joining after the announcement misses the announced task.
    let (mut s, _) = start(&loaded);
    call(&mut s, "wait", json!({"until": "09:45"}));
    call(&mut s, "wait", json!({"until": "09:45"}));
    let r = call(
        &mut s,
        "join_meeting",
        json!({"meeting": "meeting/sync-sync"}),
    );
    assert!(
        r.ok && r.result.as_ref().unwrap().get("missed").is_some(),
        "{:?}",
        r.result
    );
    assert!(!kinds(&r.notifications).contains(&"task_released".to_owned()));
    s.end(tbsim_core::protocol::EndReason::Finished);
    let res = s.results();
    assert!(!res.tasks[0].success, "late is not on time");
    assert_eq!(
        res.tasks[1].released_at, None,
        "the announced task never reached a late agent"
    );

    // Early: the room is not open yet.
    let (mut s, _) = start(&loaded);
    let r = call(
        &mut s,
        "join_meeting",
        json!({"meeting": "meeting/sync-sync"}),
    );
    assert_eq!(
        r.error.unwrap().kind,
        tbsim_core::protocol::ErrorKind::Invalid
    );
}

#[test]
fn deadlines_freeze_checkpoints() {
    let loaded = crate::util::scenario("transactions-none-abnormal");
    let (mut s, _) = start(&loaded);
    call(
        &mut s,
        "read_file",
        json!({"path": "drive/finance/review/transaction_review_manual.md"}),
    );
    let r = call(&mut s, "wait", json!({"until": "12:30"}));
    assert!(
        kinds(&r.notifications).contains(&"deadline_passed".to_owned()),
        "{:?}",
        r.notifications
    );
    call(
        &mut s,
        "write_file",
        json!({"path": "workspace/transaction_review_report.json", "content": "{\"abnormal_suppliers\": []}"}),
    );
    s.end(tbsim_core::protocol::EndReason::Finished);
    let res = s.results();
    let passed: Vec<&str> = res.tasks[0]
        .checkpoints
        .iter()
        .filter(|c| c.passed)
        .map(|c| c.key.as_str())
        .collect();
    assert_eq!(
        passed,
        ["manual_consulted"],
        "only work before the deadline counts"
    );
}

#[test]
fn timed_events_and_images_reach_the_agent() {
    let mut loaded = crate::util::scenario("meeting-only");
    let png = {
        // A 1x1 PNG, written by hand: signature, IHDR, IDAT, IEND.
        let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
        v.extend_from_slice(
            b"\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde",
        );
        v.extend_from_slice(b"\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82");
        v
    };
    loaded
        .assets
        .insert("drive/maps/office.png".into(), png.clone());
    loaded.scenario.files.push(FileSpec {
        path: "drive/maps/office.png".into(),
        content: Content::Sidecar {
            path: "office.png".into(),
            blake3: blake3::hash(&png).to_hex().to_string(),
        },
    });
    let boss = loaded.scenario.intern.manager.clone();
    loaded.scenario.events.push(TimedEvent {
        at: "2025-10-08T09:20".into(),
        change: WorldChange::Message {
            from: boss.clone(),
            text: "Welcome aboard!".into(),
        },
    });
    loaded.scenario.events.push(TimedEvent {
        at: "2025-10-08T09:40".into(),
        change: WorldChange::File(FileSpec {
            path: "drive/news/today.md".into(),
            content: Content::Text("Town hall at 4pm.".into()),
        }),
    });
    tbsim_scenario::validate(&loaded.scenario, std::path::Path::new("x.ron"), None).unwrap();
    let (mut s, _) = start(&loaded);
    let r = call(&mut s, "wait", json!({}));
    assert!(r.time.ends_with("09:20"));
    match &r.notifications[0] {
        Notification::Message { from, text, .. } => assert_eq!(
            (from.as_str(), text.as_str()),
            (boss.as_str(), "Welcome aboard!")
        ),
        other => panic!("{other:?}"),
    }
    let r = call(&mut s, "wait", json!({}));
    assert_eq!(kinds(&r.notifications), ["file_added"]);
    let r = call(&mut s, "read_file", json!({"path": "drive/news/today.md"}));
    assert_eq!(r.result.unwrap()["content"], "Town hall at 4pm.");
    let r = call(
        &mut s,
        "read_file",
        json!({"path": "drive/maps/office.png"}),
    );
    assert_eq!(r.result.as_ref().unwrap()["kind"], "image");
    assert_eq!(r.attachments.len(), 1);
    assert_eq!(r.attachments[0].mime, "image/png");
    let r = call(&mut s, "read_messages", json!({"with": boss}));
    assert_eq!(r.result.unwrap()["messages"][0]["text"], "Welcome aboard!");
}

#[test]
fn group_messages_get_replies_only_from_those_who_know() {
    let loaded = crate::util::scenario("transactions-two-abnormal");
    let finance: Vec<&str> = loaded
        .scenario
        .company
        .people
        .iter()
        .filter(|p| p.department == "Finance")
        .map(|p| p.key.as_str())
        .collect();
    let outsider = loaded
        .scenario
        .company
        .people
        .iter()
        .find(|p| p.department == "Marketing")
        .unwrap();
    let (mut s, _) = start(&loaded);
    let mut members: Vec<&str> = finance[..2].to_vec();
    members.push(&outsider.key);
    let r = call(
        &mut s,
        "create_group",
        json!({"name": "review", "members": members}),
    );
    let group = r.result.unwrap()["group"].as_str().unwrap().to_owned();
    let r = call(
        &mut s,
        "create_group",
        json!({"name": "solo", "members": [finance[0]]}),
    );
    assert!(!r.ok, "a group needs two colleagues");
    let mut r = call(
        &mut s,
        "send_group_message",
        json!({"group": group, "text": "Where is the manual for the supplier transaction review?"}),
    );
    let mut replies = Vec::new();
    loop {
        for n in r.notifications {
            if let Notification::Message { from, thread, .. } = n {
                assert_eq!(thread, group);
                replies.push(from);
            }
        }
        assert!(!s.is_over());
        if replies.len() >= 2 {
            break;
        }
        r = call(&mut s, "wait", json!({"minutes": 30}));
    }
    call(&mut s, "wait", json!({"minutes": 60}));
    replies.sort();
    let mut want: Vec<String> = finance[..2].iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(replies, want, "the marketing member has nothing to say");
}

#[test]
fn bookings_check_rooms_people_and_ownership() {
    let loaded = crate::util::scenario("meeting-check-sum");
    let (mut s, _) = start(&loaded);
    let busy_person = loaded.scenario.meetings[0].attendees[0].clone();
    let free_person = loaded
        .scenario
        .company
        .people
        .iter()
        .find(|p| p.department == "Engineering")
        .unwrap()
        .key
        .clone();
    let r = call(
        &mut s,
        "available_rooms",
        json!({"start": "09:45", "end": "10:15"}),
    );
    let rooms = r.result.unwrap()["available"].as_array().unwrap().len();
    assert_eq!(rooms, 5, "the sync holds one room");
    let r = call(
        &mut s,
        "book_meeting",
        json!({"title": "1:1", "room": "Dune Room", "start": "09:45", "end": "10:15", "attendees": [busy_person]}),
    );
    let busy_name = loaded
        .scenario
        .company
        .people
        .iter()
        .find(|p| p.key == busy_person)
        .unwrap()
        .name
        .clone();
    let e = r.error.unwrap();
    assert!(e.message.contains("you are already in"), "{}", e.message);
    assert!(
        !e.message.contains(&busy_name) && !e.message.contains(&busy_person),
        "a booking error never names another person's commitments: {}",
        e.message
    );
    let r = call(
        &mut s,
        "book_meeting",
        json!({"title": "late", "room": "Dune Room", "start": "17:30", "end": "18:30", "attendees": [free_person]}),
    );
    assert!(r.error.unwrap().message.contains("office hours"));
    let r = call(
        &mut s,
        "book_meeting",
        json!({"title": "1:1", "room": "Dune Room", "start": "11:00", "end": "11:30", "attendees": [free_person]}),
    );
    let key = r.result.unwrap()["booked"].as_str().unwrap().to_owned();
    let r = call(
        &mut s,
        "book_meeting",
        json!({"title": "again", "room": "dune room", "start": "11:15", "end": "11:45", "attendees": []}),
    );
    assert!(r.error.unwrap().message.contains("taken"));
    let r = call(
        &mut s,
        "cancel_booking",
        json!({"meeting": "meeting/sync-sync"}),
    );
    assert_eq!(
        r.error.unwrap().kind,
        tbsim_core::protocol::ErrorKind::Permission,
        "only the organiser cancels"
    );
    let r = call(&mut s, "my_calendar", json!({}));
    assert_eq!(r.result.unwrap()["meetings"].as_array().unwrap().len(), 2);
    assert!(call(&mut s, "cancel_booking", json!({"meeting": key})).ok);
    let r = call(&mut s, "my_calendar", json!({}));
    assert_eq!(r.result.unwrap()["meetings"].as_array().unwrap().len(), 1);
}

#[test]
fn files_copy_list_and_confine() {
    let loaded = crate::util::scenario("kb-fix-medium");
    let (mut s, _) = start(&loaded);
    let r = call(
        &mut s,
        "copy_from_drive",
        json!({"path": "drive/kb/articles"}),
    );
    let copied = r.result.unwrap()["copied"].as_array().unwrap().len();
    assert_eq!(copied, 3);
    let t0 = s.now();
    let r = call(&mut s, "list_folder", json!({"path": "workspace/articles"}));
    assert_eq!(r.result.unwrap()["entries"].as_array().unwrap().len(), 3);
    assert_eq!(s.now().0 - t0.0, 60, "listing costs a minute");
    let r = call(
        &mut s,
        "write_file",
        json!({"path": "workspace/articles", "content": "x"}),
    );
    assert!(!r.ok, "cannot overwrite a folder with a file");
    let r = call(
        &mut s,
        "write_file",
        json!({"path": "workspace/notes/today.md", "content": "plan"}),
    );
    assert!(r.ok);
    let r = call(&mut s, "read_file", json!({"path": "workspace/notes"}));
    assert!(r.error.unwrap().message.contains("folder"));
}

#[test]
fn the_trajectory_is_on_disk_while_the_run_is_in_flight() {
    let loaded = crate::util::scenario("kb-fix-medium");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trajectory.jsonl");
    let mut s = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::to_file(&path).unwrap(),
        Box::new(LivePython::default()),
    );
    s.begin();
    call(&mut s, "list_folder", json!({"path": "drive"}));
    // No end, no results: a crash here must still leave every completed step on disk.
    let text = std::fs::read_to_string(&path).unwrap();
    let types: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("header"));
    assert!(
        types.contains(&"decision".to_owned())
            && types.last().map(String::as_str) == Some("result"),
        "{types:?}"
    );
}

#[test]
fn days_persist_the_company_and_deliver_mentor_feedback_each_morning() {
    use tbsim_core::protocol::FeedbackPolicy;
    let loaded = crate::util::scenario("two-days");
    for policy in [
        FeedbackPolicy::None,
        FeedbackPolicy::Summary,
        FeedbackPolicy::Detailed,
    ] {
        let config = SimConfig {
            feedback: policy,
            ..SimConfig::default()
        };
        let mut s = Sim::new(
            &loaded,
            config,
            Trajectory::in_memory(),
            Box::new(LivePython::default()),
        );
        s.begin();
        let boss = loaded.scenario.intern.manager.clone();
        call(
            &mut s,
            "send_message",
            json!({"to": boss, "text": "Good morning!"}),
        );
        // Wait through day 1: the night is skipped, the morning brings feedback.
        let morning = loop {
            let r = call(&mut s, "wait", json!({}));
            if let Some(n) = r
                .notifications
                .iter()
                .find(|n| matches!(n, Notification::DayStarted { .. }))
            {
                assert!(r.notifications.iter().any(|n| matches!(
                    n,
                    Notification::DayEnded {
                        day: 1,
                        more_days: true,
                        ..
                    }
                )));
                assert!(
                    r.time.contains("2025-10-10 09:00"),
                    "woken at the next day's start: {}",
                    r.time
                );
                break n.clone();
            }
        };
        let Notification::DayStarted { day, feedback, .. } = morning else {
            unreachable!()
        };
        assert_eq!(day, 2);
        match policy {
            FeedbackPolicy::None => assert!(feedback.is_empty()),
            FeedbackPolicy::Summary => {
                assert_eq!(
                    feedback.len(),
                    2,
                    "one line per task due on day 1: {feedback:?}"
                );
                assert!(
                    feedback
                        .iter()
                        .all(|l| l.contains(": 0 of ") && l.ends_with(" checkpoints passed."))
                );
            }
            FeedbackPolicy::Detailed => {
                assert!(
                    feedback.len() > 2 && feedback.iter().any(|l| l.contains("chart owner")),
                    "{feedback:?}"
                );
                // Feedback explains how to find things, never the values.
                let secrets: Vec<&str> = loaded
                    .scenario
                    .company
                    .people
                    .iter()
                    .flat_map(|p| &p.clues)
                    .flat_map(|c| c.response.split_whitespace())
                    .filter(|w| w.starts_with("NEW"))
                    .collect();
                assert!(feedback.iter().all(|l| {
                    secrets
                        .iter()
                        .all(|s| !l.contains(s.trim_end_matches(|c: char| !c.is_alphanumeric())))
                }));
            }
        }
        // Day 1's conversation is still there on day 2.
        let r = call(
            &mut s,
            "read_messages",
            json!({"with": loaded.scenario.intern.manager}),
        );
        assert_eq!(r.result.unwrap()["messages"][0]["text"], "Good morning!");
        s.end(tbsim_core::protocol::EndReason::Finished);
        let res = s.results();
        assert_eq!(res.days.len(), 2);
        assert_eq!((res.days[0].tasks, res.days[1].tasks), (2, 3));
        assert_eq!(res.day_gain, vec![0.0]);
    }
}

/// The reported enumeration attack: writing candidate answers one after another
/// until one holds, then (for good measure) overwriting it. Answers are judged when
/// the task closes, on the file as it then stands.
#[test]
fn answers_are_judged_at_close_not_latched_by_enumeration() {
    let loaded = crate::util::scenario("transactions-two-abnormal");
    // The two abnormal suppliers and the manual's limit, as the scenario expects them,
    // and a wrong third candidate.
    let (right, limit) = match &loaded.scenario.tasks[0].checkpoints[1].check {
        tbsim_scenario::Check::All(v) => match (&v[0], &v[1]) {
            (
                tbsim_scenario::Check::JsonStringSet { expected, .. },
                tbsim_scenario::Check::JsonNumber { expected: l, .. },
            ) => (expected.clone(), *l),
            c => panic!("{c:?}"),
        },
        c => panic!("{c:?}"),
    };
    let other = ["Northwind Supply", "Harbourline Freight"]
        .into_iter()
        .find(|n| !right.iter().any(|r| r == n))
        .unwrap()
        .to_owned();
    let names = [right[0].clone(), right[1].clone(), other];
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (r0, r1) = (names[0], names[1]);
    let write = |s: &mut Sim, list: &[&str]| {
        let content = json!({ "abnormal_suppliers": list, "approval_limit": limit }).to_string();
        assert!(
            call(
                s,
                "write_file",
                json!({"path": "workspace/transaction_review_report.json", "content": content}),
            )
            .ok
        );
    };
    let suppliers_passed = |res: &tbsim_engine::result::RunResult| {
        res.tasks[0]
            .checkpoints
            .iter()
            .find(|c| c.key == "suppliers_correct")
            .unwrap()
            .passed
    };
    // Every subset of three names, the right one among them, then garbage last.
    let (mut s, _) = start(&loaded);
    for mask in 0u32..8 {
        let subset: Vec<&str> = (0..3)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| names[i])
            .collect();
        write(&mut s, &subset);
    }
    write(&mut s, &["garbage"]);
    s.end(tbsim_core::protocol::EndReason::Finished);
    let res = s.results();
    assert!(!suppliers_passed(&res), "the last delivery is wrong");
    assert_eq!(res.tasks[0].score, 0.0, "{:#?}", res.tasks[0]);

    // The right answer written once and left standing passes, judged at the close.
    let (mut s, _) = start(&loaded);
    write(&mut s, &[r1, r0]);
    call(&mut s, "wait", json!({"until": "17:30"}));
    let res = s.results();
    assert!(suppliers_passed(&res));
    let at = res.tasks[0]
        .checkpoints
        .iter()
        .find(|c| c.key == "suppliers_correct")
        .unwrap()
        .at
        .clone()
        .unwrap();
    assert!(at.ends_with("17:00:00"), "judged at the deadline: {at}");

    // Right during the day, garbage at the deadline: nothing latched.
    let (mut s, _) = start(&loaded);
    write(&mut s, &[r1, r0]);
    call(&mut s, "wait", json!({"until": "16:30"}));
    write(&mut s, &[]);
    call(&mut s, "wait", json!({"until": "17:30"}));
    assert!(!suppliers_passed(&s.results()));
}

/// Reading every file passes "consulted" checkpoints, but they weigh nothing.
#[test]
fn diagnostics_are_reported_but_not_scored() {
    let loaded = crate::util::scenario("transactions-two-abnormal");
    let (mut s, _) = start(&loaded);
    call(
        &mut s,
        "read_file",
        json!({"path": "drive/finance/review/transaction_review_manual.md"}),
    );
    let res = s.results();
    let t = &res.tasks[0];
    let consulted = t
        .checkpoints
        .iter()
        .find(|c| c.key == "manual_consulted")
        .unwrap();
    assert!(consulted.passed);
    assert_eq!(consulted.kind, tbsim_scenario::check::CheckKind::Diagnostic);
    assert_eq!(t.score, 0.0);
    assert_eq!((t.passed, t.total), (0, 1));
}

/// Calls `run_python` once, then finishes.
struct PythonOnce(u32);

impl tbsim_engine::agent::Agent for PythonOnce {
    fn name(&self) -> String {
        "python-once".into()
    }

    fn decide<'a>(
        &'a mut self,
        _obs: &'a tbsim_core::protocol::Observation,
    ) -> tbsim_engine::agent::AgentFuture<'a> {
        self.0 += 1;
        let (name, arguments) = if self.0 == 1 {
            ("run_python", r#"{"code": "print(6 * 7)"}"#)
        } else {
            ("finish", "{}")
        };
        let decision = Decision {
            calls: vec![ToolCall {
                id: format!("c{}", self.0),
                name: name.into(),
                arguments: arguments.into(),
            }],
        };
        Box::pin(async move { Ok(decision) })
    }
}

#[test]
fn a_run_where_run_python_was_unavailable_replays() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = crate::util::scenario("transactions-two-abnormal");
    std::fs::write(dir.path().join("scenario.ron"), &loaded.source).unwrap();
    let trace = Trajectory::to_file(&dir.path().join("trajectory.jsonl")).unwrap();
    // A configuration switch that makes the sandbox unavailable.
    let python = LivePython {
        bwrap: Some("/nonexistent/bwrap-for-tbsim-test".into()),
        ..LivePython::default()
    };
    let config = SimConfig {
        agent: "python-once".into(),
        ..SimConfig::default()
    };
    let (_, lines) = tbsim_engine::run::run_with(
        &loaded,
        &mut PythonOnce(0),
        config,
        &tbsim_engine::run::RunLimits::default(),
        trace,
        Box::new(python),
    );
    let result = lines
        .iter()
        .find(|l| l.contains(r#""tool":"run_python""#))
        .expect("a run_python result");
    assert!(result.contains("run_python is unavailable"), "{result}");
    assert!(result.contains(r#""record":{"error":"#), "{result}");
    let report = tbsim_engine::replay::replay(dir.path()).unwrap();
    assert!(report.identical(), "{:?}", report.divergence);
    assert_eq!(report.lines, lines.len());
}
