//! The agent's tools under attack: every bad call is refused with a structured,
//! counted error, nothing panics, time never runs backwards, and no tool reaches
//! hidden answers.

use proptest::prelude::*;
use serde_json::{Value, json};
use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig, ToolResult};
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;

fn sim(name: &str) -> Sim {
    let loaded = crate::util::scenario(name);
    let mut s = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    s.begin();
    s
}

fn call(sim: &mut Sim, name: &str, args: &str) -> ToolResult {
    let obs = sim.step(&Decision {
        calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.into(),
        }],
    });
    obs.results.into_iter().next().expect("one result per call")
}

fn err_kind(r: &ToolResult) -> String {
    assert!(!r.ok, "expected an error, got {:?}", r.result);
    serde_json::to_value(r.error.as_ref().unwrap().kind)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn adversarial_calls_are_refused_and_counted() {
    let mut s = sim("kb-fix-medium");
    let cases: &[(&str, &str, &str)] = &[
        ("read_file", r#"{"path": "../../etc/passwd"}"#, "path"),
        ("read_file", r#"{"path": "/etc/passwd"}"#, "path"),
        (
            "read_file",
            r#"{"path": "drive/../../content/scenarios/kb-fix-medium.ron"}"#,
            "path",
        ),
        ("list_folder", r#"{"path": "workspace/.."}"#, "path"),
        ("read_file", r#"{"path": "scenario.ron"}"#, "path"),
        (
            "copy_from_drive",
            r#"{"path": "drive/kb", "to": "workspace/../drive/x"}"#,
            "path",
        ),
        (
            "write_file",
            r#"{"path": "drive/kb/kb_fix_manual.md", "content": "x"}"#,
            "permission",
        ),
        (
            "send_message",
            r#"{"to": "npc/x", "text": "hi", "sender": "npc/someone"}"#,
            "impersonation",
        ),
        (
            "book_meeting",
            r#"{"title":"t","room":"Atlas Room","start":"15:00","end":"15:30","attendees":[],"organizer":"npc/x"}"#,
            "impersonation",
        ),
        ("wait", r#"{"minutes": -5}"#, "schema"),
        ("wait", r#"{"minutes": 0}"#, "schema"),
        ("wait", r#"{"until": "08:00"}"#, "invalid"),
        ("wait", r#"{"until": "tomorrow"}"#, "schema"),
        ("hack_the_planet", "{}", "unknown_tool"),
        ("read_file", "{not json", "malformed_json"),
        ("read_file", "[1, 2]", "schema"),
        ("read_file", r#"{"path": 7}"#, "schema"),
        ("finish", r#"{"now": true}"#, "schema"),
        (
            "send_message",
            r#"{"to": "Nobody Atall", "text": "hi"}"#,
            "not_found",
        ),
        (
            "send_message",
            r#"{"to": "agent/intern", "text": "hi"}"#,
            "invalid",
        ),
        (
            "send_message",
            r#"{"to": "Avery Smith", "text": "hi"}"#,
            "invalid",
        ),
        ("calculator", r#"{"expression": "1/0"}"#, "invalid"),
        (
            "join_meeting",
            r#"{"meeting": "meeting/nope"}"#,
            "not_found",
        ),
    ];
    let mut last_t = s.now();
    let mut expected: std::collections::BTreeMap<String, u64> = Default::default();
    for (tool, args, kind) in cases {
        let r = call(&mut s, tool, args);
        assert_eq!(&err_kind(&r), kind, "{tool} {args}: {:?}", r.error);
        assert!(!r.error.as_ref().unwrap().message.is_empty());
        assert!(r.t >= last_t, "time never runs backwards");
        last_t = r.t;
        *expected.entry((*kind).to_owned()).or_default() += 1;
    }
    // Tools with no arguments accept `{}` and an empty string.
    for (tool, args) in [
        ("list_colleagues", "{}"),
        ("my_calendar", ""),
        ("list_folder", "{}"),
        ("my_tasks", "{}"),
    ] {
        let r = call(&mut s, tool, args);
        assert!(r.ok, "{tool}: {:?}", r.error);
    }
    s.end(tbsim_core::protocol::EndReason::Finished);
    let res = s.results();
    assert_eq!(res.errors, expected, "errors are counted by kind");
    assert_eq!(res.checkpoint_score, 0.0, "refused calls changed nothing");
}

/// Every file reachable through the tools, with its content.
fn crawl(s: &mut Sim) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec!["drive".to_owned(), "workspace".to_owned()];
    while let Some(dir) = stack.pop() {
        let r = call(s, "list_folder", &json!({"path": dir}).to_string());
        for e in r.result.unwrap()["entries"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap();
            let path = format!("{dir}/{}", name.trim_end_matches('/'));
            if e["kind"] == "folder" {
                stack.push(path);
            } else {
                let f = call(s, "read_file", &json!({"path": path}).to_string());
                out.push((
                    path,
                    f.result.unwrap()["content"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                ));
            }
        }
    }
    out
}

#[test]
fn no_tool_reaches_hidden_answers() {
    let loaded = crate::util::scenario("busy-day");
    // The new chart IDs live only in NPC clues; the abnormal suppliers only in grader data.
    let secrets: Vec<String> = loaded
        .scenario
        .company
        .people
        .iter()
        .flat_map(|p| &p.clues)
        .flat_map(|c| {
            c.response
                .split_whitespace()
                .filter(|w| w.starts_with("NEW"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!secrets.is_empty());
    let mut s = sim("busy-day");
    let files = crawl(&mut s);
    assert!(files.len() >= 8, "the crawl saw the drive: {}", files.len());
    for (path, content) in &files {
        for secret in &secrets {
            assert!(
                !content.contains(secret.trim_end_matches(|c: char| !c.is_alphanumeric())),
                "{path} leaks {secret}"
            );
        }
    }
    // Grader data: no reachable file equals an expected answer file.
    for cp in loaded.scenario.tasks.iter().flat_map(|t| &t.checkpoints) {
        let mut checks = vec![&cp.check];
        while let Some(c) = checks.pop() {
            match c {
                tbsim_scenario::Check::All(v) => checks.extend(v),
                tbsim_scenario::Check::FileText { expected, .. } => {
                    assert!(
                        files.iter().all(|(_, f)| f.trim() != expected.trim()),
                        "a fixed article is on the drive"
                    );
                }
                tbsim_scenario::Check::JsonStringSet { expected, .. } if !expected.is_empty() => {
                    let answer = serde_json::to_string(expected).unwrap();
                    assert!(
                        files.iter().all(|(_, f)| !f.contains(&answer)),
                        "the answer list is on the drive"
                    );
                }
                _ => {}
            }
        }
    }
    // Messages that do not name the right thing get the default reply, not the clue.
    let owner = loaded
        .scenario
        .company
        .people
        .iter()
        .find(|p| !p.clues.is_empty())
        .unwrap();
    let sent = call(
        &mut s,
        "send_message",
        &json!({"to": owner.key, "text": "Hello! How is your day going?"}).to_string(),
    );
    assert!(sent.ok, "{:?} at {}", sent.error, sent.time);
    let mut r = sent;
    let reply = loop {
        let found = r.notifications.iter().find_map(|n| match n {
            tbsim_core::protocol::Notification::Message { from, text, .. }
                if *from == owner.key =>
            {
                Some(text.clone())
            }
            _ => None,
        });
        if let Some(t) = found {
            break t;
        }
        assert!(!s.is_over(), "the colleague never replied");
        r = call(&mut s, "wait", "{}");
    };
    assert!(
        !reply.contains("NEW"),
        "a vague message disclosed a clue: {reply}"
    );
}

fn python_ready() -> bool {
    let ok = tbsim_engine::tools::python_available() && tbsim_engine::tools::sandbox_available();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide python3 and bubblewrap (see .ci/run)"
        );
        eprintln!("skipping: python3 or bubblewrap is not available");
    }
    ok
}

#[test]
fn run_python_works_on_the_workspace_and_is_confined() {
    if !python_ready() {
        return;
    }
    let mut s = sim("transactions-two-abnormal");
    let code = r#"
import csv, json, collections
rows = list(csv.DictReader(open([f for f in __import__('os').listdir('.') if f.endswith('.csv')][0])))
per = collections.Counter(r['supplier'] for r in rows)
json.dump({"suppliers": len(per)}, open("counts.json", "w"))
print(len(rows))
"#;
    let r = call(&mut s, "run_python", &json!({"code": code}).to_string());
    assert!(r.ok, "{:?}", r.error);
    let v = r.result.unwrap();
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(v["written"], json!(["workspace/counts.json"]));
    let f = call(&mut s, "read_file", r#"{"path": "workspace/counts.json"}"#);
    assert!(
        f.result.unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("\"suppliers\": 7")
    );
    // The scenario file (with every answer) is not reachable from the sandbox.
    let scen = crate::util::root().join("content/scenarios/transactions-two-abnormal.ron");
    let leak = format!("print(open({:?}).read()[:100])", scen.display().to_string());
    let r = call(&mut s, "run_python", &json!({"code": leak}).to_string());
    let v = r.result.unwrap();
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(v["stderr"].as_str().unwrap().contains("Error"), "{v}");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~]{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "drive",
            "workspace/x.md",
            "../x",
            "/etc",
            "drive/kb",
            "npc/none",
            "10:30",
            "2025-10-01T23:00",
            "{}",
            ""
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop::collection::btree_map(
            prop::sample::select(vec![
                "path",
                "to",
                "text",
                "content",
                "minutes",
                "until",
                "meeting",
                "members",
                "code",
                "expression",
                "with",
                "x",
            ])
            .prop_map(str::to_owned),
            inner,
            0..4,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Random calls never panic, always produce a result, and never move time backwards.
    #[test]
    fn random_calls_never_panic(calls in prop::collection::vec((prop::sample::select(tbsim_core::protocol::TOOL_NAMES.to_vec()), arb_json()), 1..12)) {
        let mut s = sim("meeting-check-sum");
        let mut last = s.now();
        for (tool, args) in calls {
            if tool == "run_python" || tool == "finish" {
                continue;
            }
            let r = call(&mut s, tool, &args.to_string());
            prop_assert!(r.t >= last);
            prop_assert_eq!(r.ok, r.error.is_none());
            last = r.t;
        }
    }
}

#[test]
fn long_or_deep_workspace_names_are_refused_and_run_python_keeps_working() {
    let mut s = sim("transactions-two-abnormal");
    let long = format!("workspace/{}.txt", "A".repeat(300));
    let deep = format!("workspace/{}x.txt", "d/".repeat(3000));
    for (path, says) in [
        (&long, "name longer than 255 bytes"),
        (&deep, "is longer than 1024 bytes"),
    ] {
        let r = call(
            &mut s,
            "write_file",
            &json!({"path": path, "content": "x"}).to_string(),
        );
        assert_eq!(err_kind(&r), "path");
        let message = &r.error.as_ref().unwrap().message;
        assert!(message.contains(says), "{message}");
        assert!(
            message.len() < 300,
            "the error echoes the whole path: {message}"
        );
    }
    let nested = format!("workspace/{}x.txt", "d/".repeat(40));
    let r = call(
        &mut s,
        "write_file",
        &json!({"path": nested, "content": "x"}).to_string(),
    );
    assert!(
        r.error
            .as_ref()
            .unwrap()
            .message
            .contains("nested more than 32 levels"),
        "{:?}",
        r.error
    );
    let r = call(
        &mut s,
        "copy_from_drive",
        &json!({"path": "drive", "to": long}).to_string(),
    );
    assert!(!r.ok, "{:?}", r.result);
    if !python_ready() {
        return;
    }
    // The script may make such names itself: they stay in the sandbox, and
    // the tool still works on the next call.
    let code = "import os\nos.makedirs('/'.join(['d'] * 40))\nopen('/'.join(['d'] * 40 + ['x.txt']), 'w').write('x')\nopen('B' * 250, 'w').write('y')\n";
    let r = call(&mut s, "run_python", &json!({"code": code}).to_string());
    let v = r.result.unwrap();
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(v["refused"].as_array().unwrap().len(), 1, "{v}");
    for _ in 0..2 {
        let r = call(&mut s, "run_python", r#"{"code": "print('still here')"}"#);
        let v = r.result.unwrap();
        assert_eq!(v["stdout"], "still here\n", "{v}");
    }
}

#[test]
fn many_big_files_do_not_all_come_back_and_the_trajectory_stays_small() {
    if !python_ready() {
        return;
    }
    let mut s = sim("transactions-two-abnormal");
    let code =
        "for i in range(40):\n    open('f%02d.bin' % i, 'wb').write(b'0' * (8 * 1000 * 1000))\n";
    let r = call(&mut s, "run_python", &json!({"code": code}).to_string());
    let v = r.result.unwrap();
    let written = v["written"].as_array().unwrap().len();
    assert!(written <= 2, "{written} files of 8 MB came back");
    let refused = v["refused"].as_array().unwrap();
    assert!(!refused.is_empty(), "{v}");
    assert!(
        refused.iter().any(|r| r
            .as_str()
            .unwrap()
            .contains("at most 8 MiB of new or changed files")),
        "{v}"
    );
    // 40 x 8 MB exceed the workspace copy's cap (256 MiB): stopped, and said so.
    let limits = v["limits"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(limits, 1, "{v}");
    assert!(v["limits"][0].as_str().unwrap().contains("256 MiB"), "{v}");
    let total: usize = s.trajectory().lines().iter().map(String::len).sum();
    assert!(total < 12_000_000, "trajectory of {total} bytes");
}
