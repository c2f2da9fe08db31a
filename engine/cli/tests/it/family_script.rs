//! Script families (`content/families/`) through the real binary: the validity
//! gate on every bundled family, the Rust solver on the `kb_fix` port, the
//! scaffold, and a broken script's located error.

use crate::util::{root, tbsim, text};

/// Seeds per variant in CI (debug build); the release measurement uses 200.
const CI_SEEDS: &str = "2";

#[test]
fn every_bundled_script_family_passes_the_gate() {
    let mut dirs: Vec<String> = std::fs::read_dir(root().join("content/families"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("family.star").is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2, "{dirs:?}");
    let mut args = vec!["family", "check", "--screen", "--seeds", CI_SEEDS];
    args.extend(dirs.iter().map(String::as_str));
    let o = tbsim(&args, &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("gate passed"), "{out}");
    assert!(out.contains("| inventory_reorder/hard |"), "{out}");
}

/// The gate over every Rust family in CI: one seed per variant, judged as a
/// screen, with one adversary, so it fits a couple of minutes. At one seed the
/// statistical checks cannot pass a family that leaks at all (one scan hit of one
/// is over 5% at 95% confidence), and some families do (issue 37): those failures
/// are printed, not asserted. What is asserted is that every family runs through
/// every check and that none fails a check that needs no statistics (oracle,
/// solver, idle, byte-stable generation, round trip, listed wrong answers). The
/// standard (200 seeds, upper bounds, every adversary) is the release run recorded
/// under `runs/validity/`.
#[test]
fn every_rust_family_runs_the_gate_and_passes_its_exact_checks() {
    let keys: Vec<&str> = tbsim_gen::registry::FAMILIES
        .iter()
        .map(|f| f.key())
        .collect();
    let mut args = vec![
        "family",
        "check",
        "--screen",
        "--seeds",
        "1",
        "--adversaries",
        "copy-drive",
    ];
    args.extend(keys.iter().copied());
    let o = tbsim(&args, &root());
    let (out, err) = text(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}\n{err}");
    for k in &keys {
        assert!(out.contains(&format!("family `{k}`")), "{k}: {out}");
        assert!(
            out.contains(&format!("shortcut probe (`{k}`)")),
            "{k}: {out}"
        );
    }
    const EXACT: &[&str] = &[
        "the oracle scores",
        "the Rust solver scores",
        "the idle agent scores",
        "generating twice",
        "does not round-trip",
        "a listed wrong answer",
    ];
    let hard: Vec<&str> = out
        .lines()
        .filter(|l| EXACT.iter().any(|e| l.contains(e)))
        .collect();
    assert!(hard.is_empty(), "{}", hard.join("\n"));
    println!("{out}");
}

#[test]
fn a_bundled_family_checked_by_key_passes_from_any_directory() {
    // Its script is compiled in; its README (the example questions the gate asks
    // colleagues) comes from the bundled content, not from the working directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            CI_SEEDS,
            "--adversaries",
            "copy-drive",
            "inventory_reorder",
        ],
        elsewhere.path(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("gate passed"), "{out}");
}

/// A Rust family goes through the same gate, with its Rust solver (the script
/// port `kb_fix_script` was removed: one implementation per family, issue 37).
#[test]
fn the_gate_checks_a_rust_family_with_its_solver() {
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            CI_SEEDS,
            "--adversaries",
            "copy-drive",
            "kb_fix",
        ],
        &root(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("| kb_fix/hard | 2 | 1.000 | 0.000 | - | 1.000 |"),
        "{out}"
    );
}

#[test]
fn a_scaffolded_family_passes_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let fam = dir.path().join("demo_family");
    let o = tbsim(&["family", "new", fam.to_str().unwrap()], &root());
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(fam.join("README.md").is_file());
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            "2",
            "--adversaries",
            "copy-drive,extract",
            fam.to_str().unwrap(),
        ],
        &root(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("family `demo_family`"), "{out}");
    // A second scaffold over it is refused.
    let o = tbsim(&["family", "new", fam.to_str().unwrap()], &root());
    assert!(!o.status.success());
}

/// `--variants` gates only the variants a change touched; a prefix that matches
/// nothing is a located failure, not an empty pass.
#[test]
fn the_gate_can_be_narrowed_to_variants_by_prefix() {
    let fam = root().join("content/families/inventory_reorder");
    let fam = fam.to_str().unwrap();
    let args = [
        "family",
        "check",
        "--screen",
        "--seeds",
        "1",
        "--no-probe",
        "--adversaries",
        "copy-drive",
        "--variants",
        "inventory_reorder/hard",
        fam,
    ];
    let o = tbsim(&args, &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("(of "), "{out}");
    assert!(out.contains("chosen by --variants"), "{out}");
    assert!(out.contains("| inventory_reorder/hard |"), "{out}");
    assert!(!out.contains("| inventory_reorder/easy |"), "{out}");

    let o = tbsim(
        &[
            "family",
            "check",
            "--seeds",
            "1",
            "--variants",
            "inventory_reorder/nonesuch",
            fam,
        ],
        &root(),
    );
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("family.star:")
            && out.contains(
                "no variant of `inventory_reorder` starts with `inventory_reorder/nonesuch`"
            ),
        "{out}"
    );
}

#[test]
fn a_broken_script_fails_the_gate_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let fam = dir.path().join("broken_demo");
    std::fs::create_dir(&fam).unwrap();
    std::fs::write(
        fam.join("family.star"),
        "FAMILY = {\"key\": \"broken_demo\", \"domain\": \"time_management\"}\nVARIANTS = [{\"key\": \"easy\"}]\n\ndef generate(ctx, params):\n    return {\"tasks\": [params[\"level\"]]}\n",
    )
    .unwrap();
    let o = tbsim(
        &["family", "check", "--seeds", "1", fam.to_str().unwrap()],
        &root(),
    );
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("family.star:5:"), "{out}");
    assert!(out.contains("error[TB0026]"), "{out}");
    assert!(out.contains("broken_demo/easy seed 0"), "{out}");
}

#[test]
fn script_families_are_listed_and_drawn_by_name() {
    let o = tbsim(&["metatasks", "--json"], &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("inventory_reorder/medium"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.ron");
    let o = tbsim(
        &[
            "suite",
            "new",
            "--scenarios",
            "2",
            "--seed",
            "3",
            "--families",
            "inventory_reorder,shift_roster,sales",
            "--min-tasks",
            "2",
            "--max-tasks",
            "3",
            "--out",
            suite.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let s = std::fs::read_to_string(&suite).unwrap();
    assert!(s.contains("Script(\"inventory_reorder\""), "{s}");
    let out_dir = dir.path().join("gen");
    let o = tbsim(
        &[
            "gen",
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let refs: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    crate::util::run_agent("oracle", &dir.path().join("runs"), &refs);
}

/// A family whose `solve` the gate runs: `answer` is what the solver writes.
fn demo_with_solve(dir: &std::path::Path, answer: &str) -> std::path::PathBuf {
    let fam = dir.join("solve_demo");
    std::fs::create_dir(&fam).unwrap();
    let src = format!(
        r#"FAMILY = {{"key": "solve_demo", "domain": "proactive_inquiry"}}
VARIANTS = [{{"key": "one"}}]

def generate(ctx, params):
    rng = ctx.rng("code")
    holder = rng.choice([p for p in ctx.people if p["department"] != "Executive"])
    code = "K%d" % rng.range(100000, 1000000)
    key = ctx.clue_key("code")
    t = task("one", "Find the vault code",
             "Ask %s for the vault code and write it to `workspace/code.txt`." % holder["name"],
             [checkpoint("asked", "Asked", disclosed([key]), "Ask the holder."),
              checkpoint("code", "The code", file_text("workspace/code.txt", code + "\n"), "Write the code.")],
             [step("send_message", {{"to": holder["key"], "text": "What is the vault code?"}}),
              step("read_messages", {{"with": holder["key"]}}, reply_from = holder["key"]),
              step("write_file", {{"path": "workspace/code.txt", "content": code + "\n"}})],
             people_to_ask = 1)
    return {{"tasks": [t], "clues": [clue(holder["key"], key, [["vault"], ["code"]], "The vault code is %s." % code, task = ctx.task_key)]}}

def solve(tools, task):
    name = task["objective"].split("Ask ")[1].split(" for the vault")[0]
    keys = {{c["name"]: c["key"] for c in tools.colleagues()["colleagues"]}}
    reply = tools.send_message(keys[name], "What is the vault code?")
    code = reply.split("is ")[1].rstrip(".")
    tools.write_file("workspace/code.txt", {answer})
"#
    );
    std::fs::write(fam.join("family.star"), &src).unwrap();
    std::fs::write(
        fam.join("README.md"),
        "# solve_demo\n\n## Example questions\n\n- Hi {first}, what is the vault code?\n- Hello {first}, could you tell me the code for the vault?\n",
    )
    .unwrap();
    fam
}

#[test]
fn the_gate_runs_the_scripts_own_solver_through_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let fam = demo_with_solve(dir.path(), r#"code + "\n""#);
    let args = |f: &std::path::Path| {
        vec![
            "family".to_owned(),
            "check".into(),
            // The demo's code is the only ID a colleague says (a fixture for the
            // solver path); the probe has tests of its own.
            "--no-probe".into(),
            // Three seeds: the lower bound (an upper one cannot pass below ~50).
            "--screen".into(),
            "--seeds".into(),
            "3".into(),
            "--adversaries".into(),
            "copy-drive".into(),
            f.to_string_lossy().into_owned(),
        ]
    };
    let run = |f: &std::path::Path| {
        let a = args(f);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        tbsim(&refs, &root())
    };
    let o = run(&fam);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("| solve_demo/one | 3 | 1.000 | 0.000 | 1.000 | - |"),
        "{out}"
    );
    // A solver that copies the wrong thing (the reply's whole text) fails the gate,
    // located at the script and the seed.
    let dir2 = tempfile::tempdir().unwrap();
    let fam2 = demo_with_solve(dir2.path(), "reply");
    let o = run(&fam2);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("the script's solver scores"), "{out}");
    assert!(out.contains("missed [\"code\"]"), "{out}");
    assert!(out.contains("solve_demo/one seed 0"), "{out}");
}

#[test]
fn a_follow_up_task_s_answers_are_judged_like_the_first_tasks() {
    // The first task varies per seed; its follow-up always wants the same file, and
    // the family lists that right answer as a wrong one: the gate must name the
    // follow-up for both, though it is released only after the first is solved.
    let dir = tempfile::tempdir().unwrap();
    let fam = demo_with_solve(dir.path(), r#"code + "\n""#);
    let src = std::fs::read_to_string(fam.join("family.star")).unwrap();
    let src = src
        .replace(
            r#"    return {"tasks": [t], "clues""#,
            r#"    ack = task("one", "Confirm", "Write `done` to `workspace/ack.txt`.",
             [checkpoint("ack", "Acknowledged", file_text("workspace/ack.txt", "done\n"), "Write done.")],
             [step("write_file", {"path": "workspace/ack.txt", "content": "done\n"})],
             key = ctx.task_key + "-ack", release = after_checkpoint(ctx.task_key, "code"), deadline = "17:50")
    return {"tasks": [t, ack], "clues""#,
        )
        .replace(
            "def solve(tools, task):\n",
            "def wrong_answers(task, scenario):\n    if task[\"key\"].endswith(\"-ack\"):\n        return [[\"workspace/ack.txt\", \"done\\n\"]]\n    return []\n\ndef solve(tools, task):\n    if \"ack.txt\" in task[\"objective\"]:\n        tools.write_file(\"workspace/ack.txt\", \"done\\n\")\n        return\n",
        );
    assert!(
        src.contains("-ack") && src.contains("def wrong_answers"),
        "{src}"
    );
    std::fs::write(fam.join("family.star"), &src).unwrap();
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            "20",
            "--adversaries",
            "copy-drive",
            fam.to_str().unwrap(),
        ],
        &root(),
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains(
            "solve_demo/one: task `task/t-ack`: one expected answer is shared by 100% of instances"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "a listed wrong answer for `workspace/ack.txt` of `task/t-ack` passes a checkpoint"
        ),
        "{out}"
    );
    // The first task is still judged as before, and passes.
    assert!(!out.contains("task `task/t`:"), "{out}");
    assert!(
        out.contains("| solve_demo/one | 20 | 1.000 | 0.000 | 1.000 |"),
        "{out}"
    );
}

#[test]
fn a_family_without_a_solver_does_not_pass_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let fam = demo_with_solve(dir.path(), r#"code + "\n""#);
    let src = std::fs::read_to_string(fam.join("family.star")).unwrap();
    let cut = src.find("def solve(").unwrap();
    std::fs::write(fam.join("family.star"), &src[..cut]).unwrap();
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            "1",
            "--adversaries",
            "copy-drive",
            fam.to_str().unwrap(),
        ],
        &root(),
    );
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("defines no `def solve(tools, task)`"), "{out}");
}

#[test]
fn a_rust_family_is_checked_by_key_with_its_rust_solver() {
    let o = tbsim(
        &[
            "family",
            "check",
            "--screen",
            "--seeds",
            "2",
            "--adversaries",
            "copy-drive",
            "kb_fix",
        ],
        &root(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("| kb_fix/easy | 2 | 1.000 | 0.000 | - | 1.000 |"),
        "{out}"
    );
}

#[test]
fn the_script_solver_runs_as_an_agent_on_a_suite_of_script_families() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.ron");
    let o = tbsim(
        &[
            "suite",
            "new",
            "--scenarios",
            "1",
            "--seed",
            "5",
            "--families",
            "inventory_reorder,shift_roster",
            "--min-tasks",
            "2",
            "--max-tasks",
            "2",
            "--out",
            suite.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let out_dir = dir.path().join("gen");
    let o = tbsim(
        &[
            "gen",
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let refs: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let runs = dir.path().join("runs");
    crate::util::run_agent("script-solver", &runs, &refs);
    // Every task of the scenario is solved by its family's own solver.
    let mut scores = Vec::new();
    for e in walk(&runs) {
        if e.file_name().is_some_and(|n| n == "result.json") {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&e).unwrap()).unwrap();
            scores.push(v["checkpoint_score"].as_f64().unwrap());
        }
    }
    assert_eq!(scores, vec![1.0], "{scores:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn colleagues_must_answer_the_readmes_questions_and_refuse_soups() {
    let dir = tempfile::tempdir().unwrap();
    let fam = demo_with_solve(dir.path(), r#"code + "\n""#);
    let check = |fam: &std::path::Path| {
        tbsim(
            &[
                "family",
                "check",
                // A fixture for the colleague check: its code is the only ID said.
                "--no-probe",
                "--screen",
                "--seeds",
                "2",
                "--adversaries",
                "copy-drive",
                fam.to_str().unwrap(),
            ],
            &root(),
        )
    };
    let o = check(&fam);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // 2 seeds x 1 clue x 2 questions, and 4 soups each.
    assert!(out.contains("| 4/4 | 8/8 | 0 |"), "{out}");
    // A question the colleague cannot tell is about the vault fails the gate.
    std::fs::write(
        fam.join("README.md"),
        "# solve_demo\n\n## Example questions\n\n- Hi {first}, what is the vault code?\n- Hi {first}, how was your weekend?\n",
    )
    .unwrap();
    let o = check(&fam);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("colleagues answer 2 of 4 natural questions"),
        "{out}"
    );
    assert!(out.contains("how was your weekend?` did not get"), "{out}");
    // No questions at all, with clues to ask for, fails too.
    std::fs::write(fam.join("README.md"), "# solve_demo\n").unwrap();
    let o = check(&fam);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("lists no \"## Example questions\""), "{out}");
}

#[test]
fn a_drafted_family_is_fed_the_gates_failures_until_it_passes() {
    let dir = tempfile::tempdir().unwrap();
    // The fixed draft: the demo family (with its solver and README) as one reply.
    let good = demo_with_solve(dir.path(), r#"code + "\n""#);
    let script = std::fs::read_to_string(good.join("family.star"))
        .unwrap()
        .replace("solve_demo", "vault_code");
    let readme = std::fs::read_to_string(good.join("README.md")).unwrap();
    let fixed = format!("Fixed.\n```starlark\n{script}```\n\n```markdown\n{readme}```\n");
    // The first draft fails at a line the gate names.
    let broken = format!(
        "Here you go.\n```starlark\n{}```\n\n```markdown\n{readme}```\n",
        script.replace("code = \"K%d\"", "code = undefined_name + \"K%d\"")
    );
    let server = fake_llm::FakeServer::start(fake_llm::Config {
        text_replies: vec![broken, fixed],
        ..fake_llm::Config::default()
    })
    .unwrap();
    let cfg = dir.path().join("api_config.json");
    std::fs::write(
        &cfg,
        format!(
            r#"{{"drafter": {{"model_name": "fake-agent", "api_key_var": "k", "base_url": "{}"}}, "default": "drafter"}}"#,
            server.base_url()
        ),
    )
    .unwrap();
    let out = dir.path().join("vault_code");
    let o = tbsim(
        &[
            "family",
            "draft",
            "Find a code a colleague holds and write it down",
            "--model",
            "drafter",
            "--api-config",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--seeds",
            "2",
            "--adversaries",
            "copy-drive",
            // Two seeds cannot bring an upper bound under 5%: the rounds screen.
            "--screen",
        ],
        &root(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("round 1: the gate failed"), "{stderr}");
    assert!(
        stdout.contains("round 2: `vault_code` passes the gate's screen at 2 seeds"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("family.star")).unwrap(),
        script
    );
    // The second request carried the gate's located failure back to the model.
    let bodies = server.stats().bodies;
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let second = bodies[1].to_string();
    assert!(second.contains("family.star:"), "{second}");
    assert!(second.contains("undefined_name"), "{second}");
    let log = std::fs::read_to_string(out.join("DRAFT_LOG.md")).unwrap();
    assert!(log.contains("## Round 2: the gate"), "{log}");
}

#[test]
fn the_authoring_guides_api_tables_are_the_ones_the_code_generates() {
    let o = tbsim(&["family", "reference"], &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("| `tools.send_message("), "{out}");
    let doc = std::fs::read_to_string(root().join("docs/authoring.md")).unwrap();
    let start = "<!-- reference:start -->\n";
    let inside =
        &doc[doc.find(start).unwrap() + start.len()..doc.find("<!-- reference:end -->").unwrap()];
    assert_eq!(
        inside, out,
        "docs/authoring.md's reference is stale: replace it with `tbsim family reference`"
    );
}

#[test]
fn serve_families_reloads_an_edited_script_for_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let fam = demo_with_solve(dir.path(), r#"code + "\n""#);
    let server = crate::serve::Server::start(
        &dir.path().join("serve"),
        &["--families", fam.to_str().unwrap()],
    );
    // The objective of the task a new session of the instance is given.
    let objective = || {
        let (status, created) = server.post(
            "/v1/sessions",
            &serde_json::json!({"scenario": "solve_demo-one"}),
        );
        assert_eq!(status, 201, "{created}");
        let id = created["session"].as_str().unwrap().to_owned();
        let mut text = created["observation"].to_string();
        if !text.contains("vault") {
            // Released at the start of the day: one wait shows it.
            let (_, out) = server.post(
                &format!("/v1/sessions/{id}/step"),
                &serde_json::json!({"calls": [{"id": "w", "name": "wait", "arguments": "{\"minutes\": 5}"}]}),
            );
            text = out["observation"].to_string();
        }
        server.request("DELETE", &format!("/v1/sessions/{id}"), None);
        text
    };
    assert!(
        objective().contains("for the vault code"),
        "{}",
        objective()
    );
    let path = fam.join("family.star");
    let src = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        src.replace("for the vault code", "for the safe's vault code"),
    )
    .unwrap();
    // The watcher polls every 300 ms; the next session after the reload shows it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let o = objective();
        if o.contains("for the safe's vault code") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not reloaded: {o}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The bundled suite of script-only families: its committed scenarios are what its
/// plan generates, the oracle and the families' own solvers score 1 on each, and
/// the idle agent 0. (The adversary ceiling covers it with every bundled suite.)
#[test]
fn traineebench_script_is_generated_and_solved_by_the_script_solvers() {
    use tbsim_engine::agent::{Idle, Oracle};
    let suite =
        tbsim_gen::load_suite(&root().join("content/suites/traineebench-script.ron")).unwrap();
    let dir = root().join("content/scenarios/traineebench-script");
    let files = tbsim_gen::generate_suite(&suite).unwrap();
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        files.len(),
        "every generated scenario is committed, and nothing else"
    );
    let mut families = std::collections::BTreeSet::new();
    for (file, text) in &files {
        let path = dir.join(file);
        assert!(
            std::fs::read_to_string(&path).unwrap_or_default() == *text,
            "{} drifted; regenerate with `tbsim gen --suite content/suites/traineebench-script.ron --out content/scenarios/traineebench-script`",
            path.display()
        );
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        for t in &loaded.scenario.tasks {
            families.insert(t.family.clone());
        }
        let (o, _) = crate::util::run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(o.checkpoint_score, 1.0, "{file}: oracle");
        let (i, _) = crate::util::run(&loaded, &mut Idle::default(), None);
        assert_eq!(i.checkpoint_score, 0.0, "{file}: idle");
        let mut solver = tbsim_gen::script_solver::ScriptSolver::new(tbsim_gen::script::entries());
        let (s, _) = crate::util::run(&loaded, &mut solver, None);
        assert_eq!(
            s.checkpoint_score,
            1.0,
            "{file}: the script solvers ({:?}): {:#?}",
            solver.errors(),
            s.tasks.iter().filter(|t| !t.success).collect::<Vec<_>>()
        );
    }
    // Only script families, and the three written for it among them.
    for f in ["inventory_reorder", "incident_postmortem", "shift_roster"] {
        assert!(families.contains(f), "{f} missing from {families:?}");
    }
    assert!(
        families
            .iter()
            .all(|f| tbsim_gen::script::entry(f).is_some()),
        "{families:?}"
    );
}
