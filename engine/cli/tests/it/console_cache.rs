//! The console's view cache filled when runs end: `tbsim run` and `tbsim serve`
//! put a finished run's end world there, so the run's very first open in a console
//! is answered from it (the world route says so in `x-tbsim-world-source`), with
//! the same bytes a replay answers; run directories gain no file, and their
//! trajectories are the bytes a run without the cache writes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::serve::Server;
use crate::util::{root, tbsim, tbsim_command, text};

/// The files in `dir`, by name, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The cache's entries (`<64 hex>.view`).
fn entries(cache: &Path) -> Vec<String> {
    if !cache.exists() {
        return Vec::new();
    }
    let e: Vec<String> = names(cache)
        .into_iter()
        .filter(|n| n.ends_with(".view"))
        .collect();
    for n in &e {
        let hex = n.trim_end_matches(".view");
        assert!(
            hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{n}"
        );
    }
    e
}

/// `tbsim view` of `runs` from `cwd` with `extra` arguments.
fn view(cwd: &Path, runs: &[&Path], extra: &[&str]) -> Server {
    let mut args = vec!["view", "--bind", "127.0.0.1:0"];
    args.extend(runs.iter().map(|r| r.to_str().unwrap()));
    args.extend_from_slice(extra);
    let (child, addr) = crate::util::spawn_listening(tbsim_command(&args, cwd));
    let addr: SocketAddr = addr.parse().unwrap_or_else(|_| panic!("{addr}"));
    Server {
        child,
        addr,
        token: None,
    }
}

/// The end world of the listed run whose directory ends with `name`: where the
/// answer came from, and its body.
fn end_world(s: &Server, name: &str) -> (String, String) {
    let (code, v) = s.request("GET", "/v1/console/runs", None);
    assert_eq!(code, 200, "{v}");
    let id = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no run {name} in {v}"))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, head, body) =
        crate::console_api::get_text(s.addr, &format!("/v1/console/runs/{id}/world"), "");
    assert_eq!(status, 200, "{head}");
    let source = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("x-tbsim-world-source")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no source header in {head}"));
    (source, body)
}

fn busy_day() -> PathBuf {
    root().join("content/scenarios/busy-day.ron")
}

#[test]
fn a_run_puts_its_end_in_the_view_cache_and_its_first_open_is_answered_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    std::fs::create_dir(cwd.join("runs")).unwrap();
    let scen = busy_day();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["run", "--agent", "oracle", "--out", out];
        args.extend_from_slice(extra);
        args.push(scen.to_str().unwrap());
        let o = tbsim(&args, cwd);
        assert!(o.status.success(), "{}", text(&o).1);
    };
    run("runs/primed", &[]);
    let cache = cwd.join("runs/.console-cache");
    assert_eq!(entries(&cache).len(), 1, "the run's end is kept");
    run("runs/plain", &["--no-view-cache"]);
    assert_eq!(entries(&cache).len(), 1, "--no-view-cache keeps nothing");
    // The run directories are as without the cache: the same files, the same
    // trajectory bytes.
    let (primed, plain) = (cwd.join("runs/primed"), cwd.join("runs/plain"));
    assert_eq!(names(&primed), names(&plain));
    assert_eq!(
        std::fs::read(primed.join("trajectory.jsonl")).unwrap(),
        std::fs::read(plain.join("trajectory.jsonl")).unwrap()
    );
    let before = names(&primed);

    // A console's first open of the run: from the cache, as a replay answers it.
    let s = view(cwd, &[&primed, &plain], &[]);
    let (source, cached) = end_world(&s, "primed");
    assert_eq!(source, "cache");
    // A run of the same bytes shares the entry (it is keyed by them).
    let (source, same) = end_world(&s, "plain");
    assert_eq!((source.as_str(), &same), ("cache", &cached));
    drop(s);
    let s = view(cwd, &[&primed], &["--no-cache"]);
    let (source, again) = end_world(&s, "primed");
    assert_eq!((source.as_str(), &again), ("replay", &cached));
    drop(s);
    assert_eq!(
        names(&primed),
        before,
        "the console wrote nothing in the run"
    );

    // Resuming the ended run finds its entry there: nothing more is written.
    let o = tbsim(&["run", "--resume", primed.to_str().unwrap()], cwd);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(entries(&cache).len(), 1);
}

#[test]
fn a_cache_is_made_neither_in_a_folder_without_runs_nor_in_a_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("work");
    std::fs::create_dir(&cwd).unwrap();
    let out = tmp.path().join("elsewhere/run");
    let scen = busy_day();
    let o = tbsim(
        &[
            "run",
            "--agent",
            "oracle",
            "--out",
            out.to_str().unwrap(),
            scen.to_str().unwrap(),
        ],
        &cwd,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(names(&cwd).is_empty(), "{:?}", names(&cwd));
    let plain = names(&out);
    // Asked for one inside the run: refused with a warning, the run written whole.
    let inside = tmp.path().join("inside/run");
    let o = tbsim(
        &[
            "run",
            "--agent",
            "oracle",
            "--out",
            inside.to_str().unwrap(),
            "--view-cache",
            inside.join("cache").to_str().unwrap(),
            scen.to_str().unwrap(),
        ],
        &cwd,
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("inside the run directory"), "{stderr}");
    assert_eq!(names(&inside), plain);
}

#[test]
fn a_serve_session_puts_its_end_in_the_view_cache_when_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sessions");
    let cache = tmp.path().join("cache");
    let s = Server::start(&out, &["--view-cache", cache.to_str().unwrap()]);
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "oracle"}),
    );
    assert_eq!(code, 200, "{v}");
    // Put beside the run once it has ended (the last step does not wait for it).
    let start = Instant::now();
    while entries(&cache).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no entry for the session's run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(s);
    let dirs = names(&out);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let run = out.join(&dirs[0]);
    let v = view(tmp.path(), &[&run], &["--cache", cache.to_str().unwrap()]);
    let (source, body) = end_world(&v, &dirs[0]);
    assert_eq!(source, "cache");
    drop(v);
    let v = view(tmp.path(), &[&run], &["--no-cache"]);
    assert_eq!(end_world(&v, &dirs[0]), ("replay".to_owned(), body));
}
