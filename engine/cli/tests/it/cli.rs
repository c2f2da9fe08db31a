use std::fs;

use crate::util::{root, tbsim, text};

#[test]
fn run_then_replay_every_bundled_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let mut args = vec!["run", "--out", out.to_str().unwrap()];
    let files: Vec<String> = crate::util::bundled()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    args.extend(files.iter().map(String::as_str));
    let o = tbsim(&args, &root());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("using the built-in `oracle` agent"),
        "the default agent is announced: {stderr}"
    );
    let n = crate::util::bundled().len();
    assert!(n >= 5, "at least five bundled scenarios");
    let overall =
        format!("overall: {n} scenarios | mean checkpoint score 1.000 | mean success rate 1.000");
    assert!(stdout.contains(&overall), "{stdout}");
    for f in crate::util::bundled() {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let run = out.join(name);
        for file in ["trajectory.jsonl", "result.json", "scenario.ron"] {
            assert!(run.join(file).is_file(), "{name}/{file}");
        }
        let result: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(run.join("result.json")).unwrap()).unwrap();
        for key in [
            "scenario",
            "agent",
            "seed",
            "checkpoint_score",
            "success_rate",
            "steps",
            "tool_calls",
            "sim_start",
            "sim_end",
            "digest",
            "tasks",
        ] {
            assert!(result.get(key).is_some(), "result.json lacks {key}");
        }
        let cp = &result["tasks"][0]["checkpoints"][0];
        for key in ["key", "passed", "at", "feedback"] {
            assert!(cp.get(key).is_some(), "checkpoint lacks {key}");
        }
    }
    let o = tbsim(&["replay", out.to_str().unwrap()], &root());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout.matches(": identical").count(), n, "{stdout}");
}

#[test]
fn replay_reports_the_first_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let scen = root().join("content/scenarios/kb-fix-medium.ron");
    let o = tbsim(
        &[
            "run",
            "--agent",
            "oracle",
            "--out",
            out.to_str().unwrap(),
            scen.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success());
    // Tamper with one recorded tool result: replay must point at it.
    let path = out.join("trajectory.jsonl");
    let original = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let idx = lines
        .iter()
        .position(|l| l.contains("\"type\":\"result\"") && l.contains("\"step\":3,"))
        .unwrap();
    lines[idx] = lines[idx].replacen("\"ok\":true", "\"ok\":false", 1);
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let o = tbsim(&["replay", out.to_str().unwrap()], &root());
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("DIVERGED at line {} (step 3)", idx + 1)),
        "{stdout}"
    );
    assert!(
        stdout.contains("expected: ") && stdout.contains("got:      "),
        "{stdout}"
    );

    // A changed scenario copy is refused outright.
    fs::write(&path, &original).unwrap();
    let scen_copy = out.join("scenario.ron");
    let s = fs::read_to_string(&scen_copy).unwrap();
    fs::write(
        &scen_copy,
        s.replacen("Fix broken chart links", "Fix broken chart links!", 1),
    )
    .unwrap();
    let o = tbsim(&["replay", out.to_str().unwrap()], &root());
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr.contains("but the trajectory was recorded with"),
        "{stderr}"
    );
}

#[test]
fn json_output_and_idle_agent() {
    let dir = tempfile::tempdir().unwrap();
    let a = root().join("content/scenarios/meeting-check-sum.ron");
    let b = root().join("content/scenarios/transactions-two-abnormal.ron");
    let o = tbsim(
        &[
            "run",
            "--agent",
            "idle",
            "--json",
            "--out",
            dir.path().to_str().unwrap(),
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        &root(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let runs = v.as_array().expect("several scenarios print an array");
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["agent"], "idle");
        assert_eq!(r["checkpoint_score"], 0.0);
        assert_eq!(r["end_reason"], "day_end");
    }
}

#[test]
fn validate_reports_errors_with_positions_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ron");
    fs::write(&bad, "Scenario(\n  name: \"x\",\n  seeed: 3,\n)\n").unwrap();
    let good = root().join("content/scenarios/meeting-only.ron");
    let o = tbsim(
        &["validate", good.to_str().unwrap(), bad.to_str().unwrap()],
        &root(),
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout.contains("ok: ") && stdout.contains("meeting-only.ron"),
        "{stdout}"
    );
    assert!(
        stderr.contains("bad.ron:3:")
            && stderr.contains("error[TB0001]")
            && stderr.contains("seeed"),
        "{stderr}"
    );
    // `run` refuses to start when any file is invalid.
    let o = tbsim(
        &[
            "run",
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--out",
            dir.path().join("r").to_str().unwrap(),
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !dir.path().join("r").exists(),
        "nothing runs when an input is invalid"
    );
    let o = tbsim(&["run", "--agent", "gpt", good.to_str().unwrap()], &root());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("unknown agent `gpt`"));
}

#[test]
fn tools_catalogue_as_text_and_json() {
    let o = tbsim(&["tools", "--json"], &root());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, tbsim_core::protocol::TOOL_NAMES);
    for t in v.as_array().unwrap() {
        assert_eq!(t["parameters"]["type"], "object");
        assert_eq!(t["parameters"]["additionalProperties"], false);
    }
    let o = tbsim(&["tools"], &root());
    let (stdout, _) = text(&o);
    assert!(stdout.contains("send_message") && stdout.contains("run_python"));
}

#[test]
fn gen_regenerates_the_bundled_examples_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let o = tbsim(
        &[
            "gen",
            "--suite",
            "content/suites/examples.ron",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let committed = crate::util::bundled();
    let mut generated: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    generated.sort();
    assert_eq!(
        generated.len(),
        committed.len(),
        "every generated scenario is committed and vice versa"
    );
    for c in committed {
        let g = dir.path().join(c.file_name().unwrap());
        assert!(
            fs::read(&g).unwrap() == fs::read(&c).unwrap(),
            "{} drifted from its generator; run `tbsim gen --suite content/suites/examples.ron --out content/scenarios`",
            c.display()
        );
    }
    // A bad suite gets a positioned error.
    let bad = dir.path().join("bad-suite.ron");
    fs::write(&bad, "Suite(name: \"x\", seed: 1, scenarios: [ScenarioPlan(name: \"a\", date: \"2025-10-01\", tasks: [TaskPlan(id: \"t\", family: Unknown(()))])])").unwrap();
    let o = tbsim(
        &[
            "gen",
            "--suite",
            bad.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    let (_, stderr) = text(&o);
    assert!(
        stderr.contains("bad-suite.ron:1:") && stderr.contains("Unknown"),
        "{stderr}"
    );
}

#[test]
fn suite_new_then_gen_then_run() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("mine.ron");
    let o = tbsim(
        &[
            "suite",
            "new",
            "--scenarios",
            "4",
            "--days",
            "2",
            "--seed",
            "11",
            "--mode",
            "mutable",
            "--out",
            suite.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let again = dir.path().join("again.ron");
    let o = tbsim(
        &[
            "suite",
            "new",
            "--scenarios",
            "4",
            "--days",
            "2",
            "--seed",
            "11",
            "--mode",
            "mutable",
            "--name",
            "mine",
            "--out",
            again.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success());
    assert_eq!(
        fs::read(&suite).unwrap(),
        fs::read(&again).unwrap(),
        "same seed, same suite"
    );
    let out = dir.path().join("scen");
    assert!(
        tbsim(
            &[
                "gen",
                "--suite",
                suite.to_str().unwrap(),
                "--out",
                out.to_str().unwrap()
            ],
            &root()
        )
        .status
        .success()
    );
    let mut files: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4);
    let runs = dir.path().join("runs");
    let mut args = vec!["run", "--json", "--out", runs.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    let o = tbsim(&args, &root());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in v.as_array().unwrap() {
        assert_eq!(r["checkpoint_score"], 1.0);
        assert_eq!(r["days"].as_array().unwrap().len(), 2);
    }
    let o = tbsim(
        &[
            "suite",
            "new",
            "--scenarios",
            "1",
            "--seed",
            "1",
            "--families",
            "kb_fix,nonsense",
            "--out",
            dir.path().join("x.ron").to_str().unwrap(),
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("unknown family `nonsense`"));
}

#[test]
fn metatasks_lists_every_variant() {
    let o = tbsim(&["metatasks", "--json"], &root());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), tbsim_gen::Family::all_variants().len());
    for m in list {
        for k in ["family", "variant", "params", "difficulty", "domain"] {
            assert!(m.get(k).is_some(), "{k}");
        }
    }
    let keys: std::collections::BTreeSet<&str> = list
        .iter()
        .map(|m| m["variant"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), list.len(), "variant keys are unique");
}

/// `tbsim regrade`: the oracle's recorded run re-driven against its own scenario
/// (nothing changes), against a scenario whose expected answer was fixed (the
/// verdict changes, the agent saw the same), and against one whose manual changed
/// too (the agent would have seen something else, and from which step). Results
/// carry the provenance regrading relies on.
#[test]
fn regrade_reports_changed_checkpoints_and_what_the_agent_saw() {
    use crate::util::{root, tbsim, text};
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let scen = root().join("content/scenarios/transactions-two-abnormal.ron");
    crate::util::run_agent("oracle", &run, &[&scen]);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("result.json")).unwrap()).unwrap();
    let loaded = tbsim_scenario::load_file(&scen).unwrap();
    assert_eq!(
        result["provenance"]["scenario_blake3"],
        loaded.blake3.as_str()
    );
    assert_eq!(
        result["provenance"]["checker"],
        tbsim_scenario::check::CHECKER_VERSION
    );
    assert_eq!(
        result["provenance"]["generated_by"],
        format!("tbsim-gen/{}", tbsim_gen::GENERATOR_VERSION)
    );

    let regrade = |fixed: Option<&std::path::Path>| {
        let mut args = vec!["regrade".to_owned(), run.display().to_string()];
        if let Some(f) = fixed {
            args.extend(["--scenario".to_owned(), f.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tbsim(&args, &root());
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0
    };
    let same = regrade(None);
    assert!(
        same.contains("1.000 -> 1.000") && same.contains("0 checkpoints changed"),
        "{same}"
    );
    assert!(same.contains("saw the same tool results"), "{same}");
    assert!(run.join("result.regraded.json").is_file());

    let original = std::fs::read_to_string(&scen).unwrap();
    assert!(original.contains("expected: 8000.0,"));
    let answer_fixed = dir.path().join("answer.ron");
    std::fs::write(
        &answer_fixed,
        original.replace("expected: 8000.0,", "expected: 9000.0,"),
    )
    .unwrap();
    let out = regrade(Some(&answer_fixed));
    assert!(
        out.contains("task/review#suppliers_correct: passed -> failed"),
        "{out}"
    );
    assert!(out.contains("saw the same tool results"), "{out}");
    let regraded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("result.regraded.json")).unwrap())
            .unwrap();
    assert_eq!(regraded["checkpoint_score"], 0.0);
    // The recorded result is left as it was.
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("result.json")).unwrap()).unwrap();
    assert_eq!(kept["checkpoint_score"], 1.0);

    let manual_fixed = dir.path().join("manual.ron");
    let text_fixed = original
        .replace("expected: 8000.0,", "expected: 9000.0,")
        .replace("limit of 8000", "limit of 9000");
    assert_ne!(
        text_fixed,
        original.replace("expected: 8000.0,", "expected: 9000.0,")
    );
    std::fs::write(&manual_fixed, text_fixed).unwrap();
    let out = regrade(Some(&manual_fixed));
    assert!(
        out.contains("would have seen a different result from step"),
        "{out}"
    );
    assert!(out.contains("passed -> failed"), "{out}");
}

/// `--agent`'s help names every adversary of the registry (it once missed `extract`
/// and `relay`, added after the help was written by hand) and every built-in agent.
#[test]
fn agent_help_lists_every_adversary() {
    for cmd in ["run", "fork"] {
        let o = tbsim(&[cmd, "--help"], &root());
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        // clap wraps long help at spaces; compare with whitespace collapsed.
        let help = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        let attackers = help
            .split_once("content-blind attacker: ")
            .unwrap_or_else(|| panic!("{cmd} --help names no adversaries:\n{stdout}"))
            .1;
        let attackers = attackers.split(')').next().unwrap_or_default();
        let listed: Vec<&str> = attackers.split(", ").collect();
        let registry: Vec<&str> = tbsim_validity::adversary::ADVERSARIES
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(listed, registry, "{cmd} --help");
        assert!(listed.contains(&"extract") && listed.contains(&"relay"));
        for agent in ["`oracle`", "`idle`", "`solver`", "`llm:<alias>`"] {
            assert!(help.contains(agent), "{cmd} --help lacks {agent}");
        }
    }
}
