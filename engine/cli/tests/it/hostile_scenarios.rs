//! Scenario files are untrusted input: each test performs an attack from issue 9
//! (escaping sidecars, special files, oversized content, values no run can meet) and
//! checks it is refused with a located, coded error and without side effects.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use tbsim_core::protocol::SimConfig;
use tbsim_engine::agent::Idle;
use tbsim_engine::run::{RunLimits, run_to_dir};
use tbsim_scenario::limits::{
    LIST_LIMITS, MAX_PATH_BYTES, MAX_PATH_DEPTH, MAX_SCENARIO_BYTES, MAX_SIDECAR_BYTES,
};
use tbsim_scenario::{Content, ErrorCode, FileSpec, ScenarioErrors, load_file, parse_str};

use crate::util::root;

/// A valid one-task scenario; `{files}` and `{check}` and `{deadline}` are filled in.
fn scenario(files: &str, check: &str, deadline: &str) -> String {
    format!(
        r#"Scenario(
  name: "hostile",
  seed: 1,
  clock: ClockSpec(start: "2025-10-08T09:00", end: "2025-10-08T18:00"),
  company: Company(name: "Acme", people: [
    Person(key: "npc/ann", name: "Ann Lee", department: "Ops", position: "Manager"),
  ]),
  intern: Intern(key: "agent/intern", name: "Avery Smith", department: "Ops", manager: "npc/ann"),
  files: [{files}],
  tasks: [TaskSpec(
    key: "task/t", family: "demo", variant: "demo/easy", difficulty: easy,
    title: "T", objective: "O", assigned_by: "npc/ann", release: Start,
    deadline: "{deadline}",
    checkpoints: [CheckpointSpec(key: "c", description: "d", check: {check}, feedback: "f")],
  )],
)"#
    )
}

const CHECK: &str = r#"FileExists(path: "workspace/a.md")"#;
const DEADLINE: &str = "2025-10-08T17:00";

fn sidecar(path: &str, hash: &str) -> String {
    format!(
        r#"FileSpec(path: "drive/data.bin", content: Sidecar(path: "{path}", blake3: "{hash}"))"#
    )
}

/// Writes `src` as `dir/s.ron` and loads it, expecting errors.
fn errors_of(dir: &Path, src: &str) -> ScenarioErrors {
    let path = dir.join("s.ron");
    std::fs::write(&path, src).unwrap();
    match load_file(&path) {
        Ok(_) => panic!("the hostile scenario loaded:\n{src}"),
        Err(e) => e,
    }
}

/// The only error's code and rendered text.
fn only(errors: &ScenarioErrors) -> (ErrorCode, String) {
    assert_eq!(errors.0.len(), 1, "{errors}");
    (errors.0[0].code, errors.to_string())
}

fn hash_of(p: &Path) -> Option<String> {
    std::fs::read(p)
        .ok()
        .map(|b| blake3::hash(&b).to_hex().to_string())
}

/// `root/a/b/pack/` holding the scenario, and `root/victim.txt` three levels up.
fn pack() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("a/b/pack");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = root.path().join("victim.txt");
    std::fs::write(&victim, "OPENAI_API_KEY=sk-secret\n").unwrap();
    (root, dir, victim)
}

#[test]
fn sidecars_outside_the_scenario_folder_are_refused_without_revealing_them() {
    let (_root, dir, victim) = pack();
    let victim_hash = hash_of(&victim).unwrap();
    // With the right hash, the old loader read the file into the drive.
    for (path, host_file) in [
        ("../../../victim.txt", Some(victim.clone())),
        (
            "/proc/self/environ",
            Some(PathBuf::from("/proc/self/environ")),
        ),
        ("/etc/passwd", Some(PathBuf::from("/etc/passwd"))),
        (
            "../../../../../../../../etc/passwd",
            Some(PathBuf::from("/etc/passwd")),
        ),
        ("./../pack/../../../victim.txt", Some(victim.clone())),
        ("~/.bashrc", None),
    ] {
        let wrong = "0".repeat(64);
        for hash in [victim_hash.as_str(), wrong.as_str()] {
            let src = scenario(&sidecar(path, hash), CHECK, DEADLINE);
            let (code, text) = only(&errors_of(&dir, &src));
            assert_eq!(code, ErrorCode::SidecarPath, "{text}");
            assert!(
                text.contains("s.ron: error[TB0018]: files[0].content.path: "),
                "{text}"
            );
            if let Some(h) = host_file.as_deref().and_then(hash_of) {
                assert!(!text.contains(&h), "the message reveals a hash: {text}");
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn symlinks_leading_out_of_the_folder_are_refused() {
    let (root, dir, victim) = pack();
    std::os::unix::fs::symlink(&victim, dir.join("inner.txt")).unwrap();
    std::os::unix::fs::symlink(root.path(), dir.join("up")).unwrap();
    let h = hash_of(&victim).unwrap();
    for path in ["inner.txt", "up/victim.txt"] {
        let (code, text) = only(&errors_of(
            &dir,
            &scenario(&sidecar(path, &h), CHECK, DEADLINE),
        ));
        assert_eq!(code, ErrorCode::SidecarPath, "{text}");
        assert!(text.contains("outside the scenario's folder"), "{text}");
    }
}

/// Loads on another thread, failing (not hanging) if it blocks.
fn load_within(path: PathBuf, secs: u64) -> Result<tbsim_scenario::LoadedScenario, ScenarioErrors> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(load_file(&path));
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("loading blocked on a special file")
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_without_blocking() {
    let (_root, dir, _victim) = pack();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
    std::fs::create_dir(dir.join("folder")).unwrap();
    let h = "0".repeat(64);
    for (path, want) in [
        ("pipe", "not a regular file"),
        ("zero", "outside the scenario's folder"),
        ("/dev/zero", "is absolute"),
        ("folder", "not a regular file"),
    ] {
        std::fs::write(
            dir.join("s.ron"),
            scenario(&sidecar(path, &h), CHECK, DEADLINE),
        )
        .unwrap();
        let errors = load_within(dir.join("s.ron"), 20).unwrap_err();
        let (code, text) = only(&errors);
        assert_eq!(code, ErrorCode::SidecarPath, "{text}");
        assert!(text.contains(want), "{text}");
    }
}

#[test]
fn oversized_sidecars_are_refused_before_reading() {
    let (_root, dir, _victim) = pack();
    // Sparse: creating it costs nothing, reading it would cost 16 MiB.
    let big = std::fs::File::create(dir.join("big.bin")).unwrap();
    big.set_len(MAX_SIDECAR_BYTES + 1).unwrap();
    let src = scenario(&sidecar("big.bin", &"0".repeat(64)), CHECK, DEADLINE);
    let (code, text) = only(&errors_of(&dir, &src));
    assert_eq!(code, ErrorCode::TooLarge, "{text}");
    assert!(text.contains("larger than 16777216 bytes"), "{text}");
}

#[test]
fn an_oversized_scenario_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut src = scenario("", CHECK, DEADLINE);
    src.push_str(&" ".repeat(MAX_SCENARIO_BYTES as usize));
    let (code, text) = only(&errors_of(dir.path(), &src));
    assert_eq!(code, ErrorCode::TooLarge, "{text}");
    assert!(text.contains("larger than 8388608 bytes"), "{text}");
}

#[test]
fn the_run_directory_copy_never_writes_outside_it() {
    // The loader refuses such a scenario; this builds one past it to show the copy
    // itself is confined.
    let (root, dir, victim) = pack();
    let good = dir.join("s.ron");
    std::fs::write(&good, scenario("", CHECK, DEADLINE)).unwrap();
    let mut loaded = load_file(&good).unwrap();
    loaded.scenario.files.push(FileSpec {
        path: "drive/data.bin".into(),
        content: Content::Sidecar {
            path: "../../../victim.txt".into(),
            blake3: String::new(),
        },
    });
    loaded
        .assets
        .insert("drive/data.bin".into(), b"overwritten".to_vec());
    let out = root.path().join("a/b/run");
    let r = run_to_dir(
        &loaded,
        &mut Idle::default(),
        SimConfig::default(),
        &RunLimits::default(),
        &out,
    );
    let e = r.expect_err("the copy must be refused").to_string();
    assert!(e.contains(".."), "{e}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "OPENAI_API_KEY=sk-secret\n"
    );
}

#[test]
fn a_confined_sidecar_loads_and_is_copied_into_the_run() {
    let (root, dir, _victim) = pack();
    std::fs::create_dir(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/t.csv"), "a,b\n1,2\n").unwrap();
    let h = hash_of(&dir.join("data/t.csv")).unwrap();
    let path = dir.join("s.ron");
    std::fs::write(&path, scenario(&sidecar("data/t.csv", &h), CHECK, DEADLINE)).unwrap();
    let loaded = load_file(&path).unwrap();
    assert_eq!(loaded.assets["drive/data.bin"], b"a,b\n1,2\n");
    let out = root.path().join("run");
    run_to_dir(
        &loaded,
        &mut Idle::default(),
        SimConfig::default(),
        &RunLimits::default(),
        &out,
    )
    .unwrap();
    assert_eq!(
        std::fs::read(out.join("data/t.csv")).unwrap(),
        b"a,b\n1,2\n"
    );
    // The run directory loads on its own (replay needs it).
    load_file(&out.join("scenario.ron")).unwrap();
}

fn limit(name: &str) -> usize {
    LIST_LIMITS.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn counts_beyond_the_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let n = limit("files") + 1;
    let files: Vec<String> = (0..n)
        .map(|i| format!(r#"FileSpec(path: "drive/f{i}.md", content: Text("x"))"#))
        .collect();
    let (code, text) = only(&errors_of(
        dir.path(),
        &scenario(&files.join(","), CHECK, DEADLINE),
    ));
    assert_eq!(code, ErrorCode::TooMany, "{text}");
    assert!(
        text.ends_with(&format!(
            "s.ron: error[TB0019]: files: {n} entries in `files`; at most {} are allowed",
            n - 1
        )),
        "{text}"
    );
    // Deeply nested `All` checks.
    let mut check = CHECK.to_owned();
    for _ in 0..20 {
        check = format!("All([{check}])");
    }
    let (code, text) = only(&errors_of(dir.path(), &scenario("", &check, DEADLINE)));
    assert_eq!(code, ErrorCode::TooMany, "{text}");
    assert!(text.contains("nested more than 8 deep"), "{text}");
}

#[test]
fn trigger_groups_and_their_alternatives_have_their_own_limits() {
    let dir = tempfile::tempdir().unwrap();
    let with_trigger = |groups: usize, alternatives: usize| {
        let group: Vec<String> = (0..alternatives).map(|i| format!(r#""w{i}""#)).collect();
        let group = format!("[{}]", group.join(","));
        let trigger = vec![group; groups].join(",");
        scenario("", CHECK, DEADLINE).replace(
            r#"position: "Manager"),"#,
            &format!(
                r#"position: "Manager", clues: [Clue(key: "clue/c", trigger: [{trigger}], response: "r")]),"#
            ),
        )
    };
    // At the limits: many phrasings of each of a few subjects.
    let (groups, alternatives) = (limit("trigger"), limit("trigger group"));
    let path = dir.path().join("ok.ron");
    std::fs::write(&path, with_trigger(groups, alternatives)).unwrap();
    load_file(&path).unwrap();
    // One group too many.
    let (code, text) = only(&errors_of(dir.path(), &with_trigger(groups + 1, 1)));
    assert_eq!(code, ErrorCode::TooMany, "{text}");
    assert!(
        text.ends_with(&format!(
            "company.people[0].clues[0].trigger: {} entries in `trigger`; at most {groups} are allowed",
            groups + 1
        )),
        "{text}"
    );
    // One alternative too many in a group.
    let (code, text) = only(&errors_of(dir.path(), &with_trigger(1, alternatives + 1)));
    assert_eq!(code, ErrorCode::TooMany, "{text}");
    assert!(
        text.ends_with(&format!(
            "company.people[0].clues[0].trigger[0]: {} entries in `trigger group`; at most {alternatives} are allowed",
            alternatives + 1
        )),
        "{text}"
    );
}

#[test]
fn long_strings_and_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let long_key = format!("task/{}", "k".repeat(300));
    let src = scenario("", CHECK, DEADLINE).replace("task/t", &long_key);
    let (code, text) = only(&errors_of(dir.path(), &src));
    assert_eq!(code, ErrorCode::TooLong, "{text}");
    assert!(
        text.contains("tasks[0].key: a string of 305 bytes; at most 200"),
        "{text}"
    );

    let wide = format!("drive/{}.txt", "A".repeat(300));
    let deep = format!("drive/{}x.txt", "d/".repeat(5000));
    let medium = format!("drive/{}x.txt", "d/".repeat(MAX_PATH_DEPTH));
    for p in [&wide, &deep, &medium] {
        let f = format!(r#"FileSpec(path: "{p}", content: Text("x"))"#);
        let (code, text) = only(&errors_of(dir.path(), &scenario(&f, CHECK, DEADLINE)));
        assert_eq!(code, ErrorCode::PathLimit, "{text}");
        assert!(text.contains("files[0].path: the path"), "{text}");
    }
    // The same limits hold for answer paths.
    let check = format!(
        r#"FileExists(path: "workspace/{}")"#,
        "w".repeat(MAX_PATH_BYTES)
    );
    let (code, _) = only(&errors_of(dir.path(), &scenario("", &check, DEADLINE)));
    assert_eq!(code, ErrorCode::PathLimit);
}

#[test]
fn values_no_run_can_meet_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["NaN", "inf", "-inf"] {
        let check = format!(
            r#"JsonNumber(path: "workspace/a.json", pointer: "/x", expected: {v}, tolerance: 0.5)"#
        );
        let (code, text) = only(&errors_of(dir.path(), &scenario("", &check, DEADLINE)));
        assert_eq!(code, ErrorCode::NeverMet, "{text}");
        assert!(
            text.contains("tasks[0].checkpoints[0].check.JsonNumber.expected: "),
            "{text}"
        );
    }
    let (code, text) = only(&errors_of(
        dir.path(),
        &scenario("", CHECK, "9999-12-31T17:00"),
    ));
    assert_eq!(code, ErrorCode::NeverMet, "{text}");
    assert!(
        text.contains("tasks[0].deadline: deadline 9999-12-31T17:00 is after the run ends"),
        "{text}"
    );
    let check = r#"MessageSent(to: "npc/ann", contains: ["x"], after: Some("2031-01-01T09:00"))"#;
    let (code, _) = only(&errors_of(dir.path(), &scenario("", check, DEADLINE)));
    assert_eq!(code, ErrorCode::NeverMet);
    let check = r#"Booked(window_start: "2030-10-08T13:00", window_end: "2030-10-08T14:00", min_minutes: 30)"#;
    let (code, _) = only(&errors_of(dir.path(), &scenario("", check, DEADLINE)));
    assert_eq!(code, ErrorCode::NeverMet);
}

/// Every `.ron` under `content/scenarios`, subfolders included.
fn all_bundled(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all_bundled(&p, out);
        } else if p.extension().is_some_and(|e| e == "ron") {
            out.push(p);
        }
    }
}

#[test]
fn every_bundled_scenario_is_within_the_limits() {
    let mut files = Vec::new();
    all_bundled(&root().join("content/scenarios"), &mut files);
    assert!(files.len() > 100);
    for f in files {
        if let Err(e) = load_file(&f) {
            panic!("{e}");
        }
    }
}

#[test]
fn parsing_alone_accepts_what_validation_refuses() {
    // The limits live in validation, so `parse_str` stays a pure syntax check.
    let check =
        r#"JsonNumber(path: "workspace/a.json", pointer: "/x", expected: NaN, tolerance: 0.5)"#;
    let src = scenario("", check, DEADLINE);
    let s = parse_str(&src, Path::new("s.ron")).unwrap();
    assert!(tbsim_scenario::validate(&s, Path::new("s.ron"), None).is_err());
}

#[test]
fn the_cli_refuses_the_escaping_sidecar_and_accepts_a_bare_relative_path() {
    let (root, dir, victim) = pack();
    let h = hash_of(&victim).unwrap();
    std::fs::write(
        dir.join("evil.ron"),
        scenario(&sidecar("../../../victim.txt", &h), CHECK, DEADLINE),
    )
    .unwrap();
    let out = root.path().join("runs");
    let o = crate::util::tbsim(&["run", "--out", out.to_str().unwrap(), "evil.ron"], &dir);
    let (_, stderr) = crate::util::text(&o);
    assert!(!o.status.success());
    assert!(
        stderr.contains(
            "evil.ron: error[TB0018]: files[0].content.path: `../../../victim.txt` contains `..`"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains(&h), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "OPENAI_API_KEY=sk-secret\n"
    );
    // A confined sidecar, with the scenario named relative to the working directory.
    std::fs::write(dir.join("t.csv"), "a\n").unwrap();
    let h = hash_of(&dir.join("t.csv")).unwrap();
    std::fs::write(
        dir.join("good.ron"),
        scenario(&sidecar("t.csv", &h), CHECK, DEADLINE),
    )
    .unwrap();
    let o = crate::util::tbsim(&["validate", "good.ron"], &dir);
    let (stdout, stderr) = crate::util::text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("ok: good.ron"), "{stdout}");
}
