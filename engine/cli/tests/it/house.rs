//! The house rules of issue 10: the crates depend on each other one way only, as
//! `engine/README.md` lays out, and no crate's modules import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

use crate::util::root;

/// Each tbsim crate and the tbsim crates it may import (`engine/README.md`).
const LAYERS: &[(&str, &[&str])] = &[
    ("tbsim-core", &[]),
    ("tbsim-scenario", &["tbsim-core"]),
    ("tbsim-engine", &["tbsim-core", "tbsim-scenario"]),
    ("tbsim-model", &["tbsim-core", "tbsim-engine"]),
    (
        "tbsim-agents",
        &["tbsim-core", "tbsim-scenario", "tbsim-engine"],
    ),
    (
        "tbsim-gen",
        &["tbsim-core", "tbsim-scenario", "tbsim-engine"],
    ),
    (
        "tbsim-report",
        &["tbsim-core", "tbsim-scenario", "tbsim-engine"],
    ),
    // The validity machinery (gate, scan, probe, adversaries) runs generated
    // instances with the built-in agents and checks them against the solver.
    (
        "tbsim-validity",
        &[
            "tbsim-core",
            "tbsim-scenario",
            "tbsim-engine",
            "tbsim-gen",
            "tbsim-agents",
        ],
    ),
    // The console's batch comparison is `tbsim report --compare`'s, not a copy.
    (
        "tbsim-serve",
        &[
            "tbsim-core",
            "tbsim-scenario",
            "tbsim-engine",
            "tbsim-report",
        ],
    ),
    (
        "tbsim",
        &[
            "tbsim-core",
            "tbsim-scenario",
            "tbsim-engine",
            "tbsim-model",
            "tbsim-agents",
            "tbsim-gen",
            "tbsim-report",
            "tbsim-serve",
            "tbsim-validity",
        ],
    ),
];

/// Normal (non-dev) dependencies of every workspace package, from `cargo metadata`.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut deps = BTreeMap::new();
    for p in meta["packages"].as_array().unwrap() {
        let names = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        deps.insert(p["name"].as_str().unwrap().to_owned(), names);
    }
    deps
}

#[test]
fn crates_import_only_the_layers_below() {
    let deps = dependencies();
    for (krate, allowed) in LAYERS {
        let got = deps
            .get(*krate)
            .unwrap_or_else(|| panic!("{krate} is not in the workspace"));
        let tbsim: BTreeSet<&str> = got
            .iter()
            .map(String::as_str)
            .filter(|d| d.starts_with("tbsim"))
            .collect();
        let allowed: BTreeSet<&str> = allowed.iter().copied().collect();
        let above: Vec<&&str> = tbsim.difference(&allowed).collect();
        assert!(
            above.is_empty(),
            "{krate} imports {above:?}, outside its layer"
        );
    }
    // The HTTP/TLS stack belongs to the model crate alone.
    for (krate, got) in &deps {
        if got.contains("reqwest") {
            assert_eq!(krate, "tbsim-model", "{krate} pulls reqwest");
        }
    }
}

#[test]
fn no_crate_has_a_module_cycle() {
    let out = Command::new("python3")
        .arg(root().join("tools/module_cycles.py"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 cycle(s)"));
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    // The check must be able to fail: two modules naming each other.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(
        dir.path().join("b.rs"),
        "use crate::{a::A, c};\npub struct B;\n",
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(root().join("tools/module_cycles.py"))
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cycle: a <-> b"));
}

#[test]
fn the_cycle_check_follows_super_self_and_groups() {
    // a -> b through a `use super::{...}` group, b -> c from a file one level down
    // (`super::super::c`), c -> a from an inline module: a three-module circle that
    // only relative paths show. `self::a` in e is e's own child, not the module a,
    // and an import inside the test module or a comment is no edge, so nothing
    // else may be reported.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("b")).unwrap();
    for (file, text) in [
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub struct Thing;\n",
        ),
        (
            "a.rs",
            "use super::{Thing, b::{self, B}};\nuse crate::e::E;\npub struct A;\n",
        ),
        (
            "b/mod.rs",
            "mod inner;\nuse self::inner::I;\npub struct B;\n",
        ),
        ("b/inner.rs", "use super::super::c::C;\npub struct I;\n"),
        (
            "c.rs",
            "pub struct C;\nmod nested {\n    use super::super::a::A;\n}\n",
        ),
        (
            "d.rs",
            "// super::a::A\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n",
        ),
        (
            "e.rs",
            "use self::a::Z;\npub struct E;\nmod a {\n    pub struct Z;\n}\n",
        ),
    ] {
        std::fs::write(p.join(file), text).unwrap();
    }
    let out = Command::new("python3")
        .arg(root().join("tools/module_cycles.py"))
        .arg(p)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("cycle: a <-> b <-> c\n"), "{stdout}");
    assert!(stdout.contains("1 cycle(s)"), "{stdout}");
}

#[test]
fn the_cycle_check_sees_siblings_through_impl_super_blocks() {
    // console::compare names console::routes inside an `impl super::Console` block
    // (no module: `super` is still console) and routes names compare: a circle one
    // level down, which a check of top-level modules alone cannot see. `mod.rs`
    // naming its children, and a child naming its parent, are no circle.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("console")).unwrap();
    for (file, text) in [
        ("lib.rs", "pub mod console;\n"),
        (
            "console/mod.rs",
            "pub mod compare;\npub mod routes;\npub struct Console;\nuse self::routes::R;\n",
        ),
        (
            "console/compare.rs",
            "pub struct CompareError;\nimpl super::Console {\n    fn f(&self) { super::routes::viewable(); }\n}\n",
        ),
        (
            "console/routes.rs",
            "use super::{Console, compare::CompareError};\npub struct R;\npub fn viewable() {}\n",
        ),
    ] {
        std::fs::write(p.join(file), text).unwrap();
    }
    let run = |dir: &std::path::Path| {
        let out = Command::new("python3")
            .arg(root().join("tools/module_cycles.py"))
            .arg(dir)
            .output()
            .expect("python3 runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stdout) = run(p);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("cycle: console::compare <-> console::routes\n"),
        "{stdout}"
    );
    assert!(stdout.contains("1 cycle(s)"), "{stdout}");
    // The way the console broke it: both ask a third sibling.
    std::fs::write(
        p.join("console/compare.rs"),
        "pub struct CompareError;\nimpl super::Console {\n    fn f(&self) { super::access::viewable(); }\n}\n",
    )
    .unwrap();
    std::fs::write(p.join("console/access.rs"), "pub fn viewable() {}\n").unwrap();
    std::fs::write(
        p.join("console/mod.rs"),
        "pub mod access;\npub mod compare;\npub mod routes;\npub struct Console;\n",
    )
    .unwrap();
    let (code, stdout) = run(p);
    assert_eq!(code, Some(0), "{stdout}");
}
