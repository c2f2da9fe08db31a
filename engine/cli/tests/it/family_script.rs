//! Script families (`content/families/`) through the real binary: the validity
//! gate on every bundled family, the Rust solver on the `kb_fix` port, the
//! scaffold, and a broken script's located error.

use crate::util::{root, tbsim, text};

/// Seeds per variant in CI (debug build); the release measurement uses 200.
const CI_SEEDS: &str = "4";

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
    let mut args = vec!["family", "check", "--seeds", CI_SEEDS];
    args.extend(dirs.iter().map(String::as_str));
    let o = tbsim(&args, &root());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("gate passed"), "{out}");
    assert!(out.contains("| inventory_reorder/hard |"), "{out}");
}

#[test]
fn the_rust_solver_solves_the_kb_fix_port() {
    let o = tbsim(
        &[
            "family",
            "check",
            "--seeds",
            CI_SEEDS,
            "--rust-solver",
            "--adversaries",
            "copy-drive",
            "content/families/kb_fix_script",
        ],
        &root(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("| kb_fix_script/hard | 4 | 1.000 | 0.000 | 1.000 |"),
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
            "inventory_reorder,kb_fix_script,sales",
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
