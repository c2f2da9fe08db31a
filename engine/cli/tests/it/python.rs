//! The Python package (`tools/python`): its wheel is built with maturin, installed
//! into a fresh venv, and ruff, mypy and pytest run against the installed package
//! with no Rust toolchain on PATH (`tools/python/ci.sh`). The wheel carries the
//! family-script host too (tools/python/tests/test_script_families.py).

use std::process::{Command, Stdio};

use crate::util::root;

/// Whether `python3` can make venvs with pip (Debian splits `python3-venv` out).
fn python_can_make_venvs() -> bool {
    let tmp = tempfile::tempdir().unwrap();
    Command::new("python3")
        .args(["-m", "venv"])
        .arg(tmp.path().join("v"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The fake-llm binary beside the tbsim one (built here when this build did not).
fn fake_llm() -> String {
    let p = std::path::Path::new(env!("CARGO_BIN_EXE_tbsim")).with_file_name("fake-llm");
    if !p.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "-p", "fake-llm"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok || std::env::var_os("CI").is_none(),
            "cannot build fake-llm"
        );
    }
    if p.is_file() {
        p.display().to_string()
    } else {
        String::new()
    }
}

/// The family-script host the wheel ships beside tbsim (`tools/script-host.sh`
/// builds it; `.ci/run` does before the tests, so CI requires it; elsewhere it is
/// built here when missing, as tbsim itself would on first need).
fn script_host() -> std::path::PathBuf {
    let p = root().join("target/script/release/tbsim-script");
    if !p.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: CI builds it with tools/script-host.sh before the tests (see .ci/run)",
            p.display()
        );
        let ok = Command::new(root().join("tools/script-host.sh"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tools/script-host.sh failed");
    }
    p
}

#[test]
fn the_python_package_passes_its_tests_installed_from_the_wheel() {
    if !python_can_make_venvs() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have python3 with venv and pip for the Python package's tests (see .ci/run)"
        );
        eprintln!("skipped: python3 cannot make venvs");
        return;
    }
    let o = Command::new(root().join("tools/python/ci.sh"))
        // The wheel is packed around the binary this suite already built: CI
        // compiles the CLI once (release wheels are maturin's, see ci.sh).
        .env("TBSIM_WHEEL_BINARY", env!("CARGO_BIN_EXE_tbsim"))
        // Packed beside it: script families work from the installed wheel.
        .env("TBSIM_WHEEL_SCRIPT_HOST", script_host())
        // `cargo test --workspace` builds fake-llm beside tbsim: the scripted model
        // `vf-eval traineebench` plays against (tools/python/tests/test_verifiers.py).
        .env("TBSIM_FAKE_LLM", fake_llm())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tools/python/ci.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
