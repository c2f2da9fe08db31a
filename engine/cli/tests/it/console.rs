//! The web console in a real browser: `tools/console-tests` (Node's test runner,
//! playwright-core driving the system's headless Chromium) against this build's
//! `tbsim serve` and `tbsim view`: live runs, guidance, play mode, forks, layout at
//! phone and laptop widths, and answers kept hidden.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::root;

/// The Chromium the tests drive (`$CHROMIUM`, else `/usr/bin/chromium`).
fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// What the browser tests need and is missing, if anything.
fn missing(dir: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        missing.push("node".to_owned());
    }
    if !dir
        .join("node_modules/playwright-core/package.json")
        .is_file()
    {
        missing.push(format!(
            "playwright-core (run `npm ci --prefix {}`)",
            dir.display()
        ));
    }
    if !chromium().is_file() {
        missing.push(format!(
            "chromium at {} (apt-get install chromium)",
            chromium().display()
        ));
    }
    missing
}

#[test]
fn the_console_passes_its_browser_tests() {
    let dir = root().join("tools/console-tests");
    let missing = missing(&dir);
    if !missing.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the console's browser tests (see .ci/run); missing: {}",
            missing.join(", ")
        );
        eprintln!(
            "skipped: the console's browser tests need {}",
            missing.join(", ")
        );
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".test.mjs"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.test.mjs in {}", dir.display());
    // A model for the transcript test (transcript.test.mjs): the fake
    // OpenAI-compatible server replaying the oracle's plan of `meeting-only`.
    let llm = fake_llm::FakeServer::start(fake_llm::Config {
        script: crate::llm::oracle_script("meeting-only"),
        ..fake_llm::Config::default()
    })
    .unwrap();
    let o = Command::new("node")
        .arg("--test")
        .args(&files)
        .env("TBSIM_BIN", env!("CARGO_BIN_EXE_tbsim"))
        .env("TBSIM_FAKE_LLM", llm.base_url())
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the console's browser tests failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Every test ran (the transcript test skips only without its model server).
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("# skipped 0"),
        "a browser test was skipped:\n{out}"
    );
}
