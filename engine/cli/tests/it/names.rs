//! Scenarios by name: `tbsim scenarios`, `GET /v1/scenarios`, `tbsim run|mcp NAME`,
//! and the bundled content found relative to the binary (a moved binary, an
//! installed wheel's layout), never through the build's source path.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::serve::Server;
use crate::util::{root, tbsim, tbsim_command, text};

/// The example suite's scenarios, as `content/suites/examples.ron` names them.
const EXAMPLES: [&str; 7] = [
    "busy-day",
    "kb-fix-medium",
    "meeting-check-sum",
    "meeting-only",
    "transactions-none-abnormal",
    "transactions-two-abnormal",
    "two-days",
];

fn names(listing: &Value) -> Vec<String> {
    listing["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn scenarios_lists_names_suites_days_tasks_and_families() {
    let o = tbsim(&["scenarios", "--json", "--suite", "examples"], &root());
    assert!(o.status.success(), "{}", text(&o).1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(names(&v), EXAMPLES);
    let busy = &v["scenarios"][0];
    assert_eq!(busy["suite"], "examples");
    assert_eq!(busy["days"], 1);
    assert_eq!(busy["tasks"], 4);
    // The scenario's own seed, so clients can number trials as `run --trials` does.
    assert_eq!(busy["seed"], 558_448);
    assert_eq!(
        busy["families"],
        serde_json::json!(["kb_fix", "meeting_attend", "transaction_review"])
    );
    let two = v["scenarios"].as_array().unwrap().last().unwrap();
    assert_eq!(two["days"], 2);

    // Every bundled suite labels its scenarios.
    let o = tbsim(&["scenarios", "--json"], &root());
    let all: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(all["invalid"], serde_json::json!([]));
    for suite in ["traineebench", "traineebench-cl", "traineebench-plus"] {
        let n = all["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["suite"] == suite)
            .count();
        assert_eq!(n, 50, "{suite}");
    }

    let o = tbsim(&["scenarios", "--suite", "nope"], &root());
    assert!(!o.status.success());
    assert!(
        text(&o)
            .1
            .contains("no suite `nope`; the suites are: examples"),
        "{}",
        text(&o).1
    );

    // A --scenarios directory is listed first and its names win.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("content/scenarios/meeting-only.ron"),
        tmp.path().join("mine.ron"),
    )
    .unwrap();
    let o = tbsim(
        &["scenarios", "--scenarios", tmp.path().to_str().unwrap()],
        &root(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mine = out.lines().find(|l| l.starts_with("mine ")).unwrap();
    assert!(
        mine.contains(" - ") && mine.ends_with("meeting_attend"),
        "{mine}"
    );
}

#[test]
fn run_takes_a_bundled_name_from_any_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = tbsim(
        &[
            "run",
            "busy-day",
            "--agent",
            "oracle",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    );
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["scenario"], "busy-day", "{stdout}");
    assert_eq!(v["checkpoint_score"], 1.0, "{stdout}");

    // Names are one safe segment: anything else is neither a file nor a name.
    for bad in [
        "../content/scenarios/busy-day",
        ".hidden",
        "no such",
        "nope",
    ] {
        let o = tbsim(&["run", bad, "--agent", "oracle"], tmp.path());
        let err = text(&o).1;
        assert!(!o.status.success(), "{bad}");
        assert!(err.contains("is neither a file nor"), "{bad}: {err}");
    }
}

#[test]
fn mcp_takes_a_bundled_name() {
    let tmp = tempfile::tempdir().unwrap();
    // The client leaves at once (stdin closed): the name resolved, the scenario
    // loaded and the server waited for `initialize`.
    let o = tbsim_command(
        &[
            "mcp",
            "meeting-only",
            "--out",
            tmp.path().join("r").to_str().unwrap(),
        ],
        tmp.path(),
    )
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    let err = text(&o).1;
    assert!(err.contains("initialize"), "{err}");
    let o = tbsim(&["mcp", "nope"], tmp.path());
    assert!(!o.status.success());
    assert!(
        text(&o)
            .1
            .contains("`nope` is neither a file nor a bundled scenario")
    );
}

/// The binary linked into `<prefix>/bin/tbsim`, run with neither the source tree's
/// variables nor `TBSIM_CONTENT`.
fn moved(prefix: &Path, args: &[&str]) -> std::process::Output {
    Command::new(prefix.join("bin/tbsim"))
        .args(args)
        .current_dir(prefix)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("TBSIM_CONTENT")
        .output()
        .unwrap()
}

#[test]
fn a_moved_binary_finds_content_beside_it_or_says_how() {
    // Outside the checkout, so no directory above the binary holds `content/`.
    let tmp = tempfile::Builder::new()
        .prefix("tbsim-moved")
        .tempdir_in("/tmp")
        .unwrap();
    let prefix = tmp.path();
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let bin = prefix.join("bin/tbsim");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_tbsim"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_tbsim"), &bin).unwrap();
    }
    let o = moved(prefix, &["run", "meeting-only", "--agent", "oracle"]);
    assert!(!o.status.success());
    let err = text(&o).1;
    assert!(
        err.contains("no bundled content was found") && err.contains("TBSIM_CONTENT"),
        "{err}"
    );
    let o = moved(prefix, &["serve", "--bind", "127.0.0.1:0"]);
    assert!(!o.status.success());
    assert!(
        text(&o).1.contains("no scenarios to serve"),
        "{}",
        text(&o).1
    );

    // A wheel's layout: the package's data under lib/python3.X/site-packages.
    let pkg = prefix.join("lib/python3.12/site-packages/tbsim");
    std::fs::create_dir_all(&pkg).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root().join("content"), pkg.join("content")).unwrap();
    let o = moved(prefix, &["scenarios", "--json", "--suite", "examples"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(names(&v), EXAMPLES);

    // TBSIM_CONTENT wins, and must be content.
    let o = Command::new(&bin)
        .args(["scenarios"])
        .env("TBSIM_CONTENT", prefix)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).1.contains("holds no `scenarios/` directory"));
}

#[test]
fn the_api_lists_scenarios() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &[]);
    let (status, v) = server.request("GET", "/v1/scenarios?suite=examples", None);
    assert_eq!(status, 200, "{v}");
    assert_eq!(names(&v), EXAMPLES);
    let (status, v) = server.request("GET", "/v1/scenarios", None);
    assert_eq!(status, 200);
    assert_eq!(v["scenarios"].as_array().unwrap().len(), 169, "{v}");
    let (status, v) = server.request("GET", "/v1/scenarios?bogus=1", None);
    assert_eq!(status, 400);
    assert_eq!(v["error"]["code"], "invalid_query");
    // An unknown suite is an error naming the known ones, not an empty list.
    let (status, v) = server.request("GET", "/v1/scenarios?suite=nope", None);
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["error"]["code"], "unknown_suite");
    assert_eq!(
        v["error"]["message"],
        "no suite `nope`; the suites are: examples, traineebench, traineebench-cl, traineebench-plus, traineebench-script"
    );
}
