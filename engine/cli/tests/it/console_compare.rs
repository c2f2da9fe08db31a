//! The console's comparison route and `tbsim view --export`, against the real
//! binary: two runs of one scenario diverge at the step their trajectories say, two
//! batches get `tbsim report --compare`'s numbers, and an export holds every run's
//! world at every step with no host path and no hidden text.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::{Value, json};

use crate::serve::{Server, error_code};
use crate::util::{root, run_agent, tbsim, text};

/// Each decision's calls as (tool, arguments parsed), from a run's trajectory.
fn decisions(dir: &Path) -> Vec<Vec<(String, Value)>> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "decision")
        .map(|l| {
            l["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let args = c["arguments"].as_str().unwrap();
                    (
                        c["name"].as_str().unwrap().to_owned(),
                        serde_json::from_str(args).unwrap_or(json!(args)),
                    )
                })
                .collect()
        })
        .collect()
}

/// The first step (from 1) at which two runs' decisions differ, counted here
/// independently of the console.
fn first_difference(a: &Path, b: &Path) -> Option<u64> {
    let (a, b) = (decisions(a), decisions(b));
    let n = a.len().min(b.len());
    (0..n)
        .find(|&i| a[i] != b[i])
        .map(|i| i as u64 + 1)
        .or((a.len() != b.len()).then_some(n as u64 + 1))
}

fn view(dirs: &[&Path], forks: &Path) -> Server {
    let mut args = vec!["view"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    args.extend(["--bind", "127.0.0.1:0", "--out", forks.to_str().unwrap()]);
    let (child, addr) = crate::util::spawn_listening(crate::util::tbsim_command(&args, &root()));
    let addr: SocketAddr = addr.parse().unwrap_or_else(|_| panic!("{addr}"));
    Server {
        child,
        addr,
        token: None,
    }
}

/// Two batches (oracle and idle) of the same two scenarios, and a second oracle
/// batch of one (identical decisions).
fn batches(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let busy = root().join("content/scenarios/busy-day.ron");
    let meeting = root().join("content/scenarios/meeting-only.ron");
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    run_agent("oracle", &a, &[&busy, &meeting]);
    run_agent("idle", &b, &[&busy, &meeting]);
    // One scenario: the run is written into `c` itself.
    run_agent("oracle", &c, &[&busy]);
    (a, b, c)
}

#[test]
fn runs_compare_side_by_side_with_the_first_divergence_and_batches_get_the_paired_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = batches(tmp.path());
    let s = view(&[&a, &b, &c], &tmp.path().join("forks"));

    // Oracle against idle: they part where the trajectories say.
    let (code, v) = s.request(
        "GET",
        "/v1/console/compare?runs=a:busy-day,b:busy-day",
        None,
    );
    assert_eq!(code, 200, "{v}");
    let expected = first_difference(&a.join("busy-day"), &b.join("busy-day"));
    assert!(expected.is_some());
    assert_eq!(v["divergence"], json!(expected), "{v}");
    assert_eq!(v["runs"][1]["diverges_at"], json!(expected));
    assert_eq!(v["same_scenario"], json!(true));
    let div = expected.unwrap() as usize;
    assert_eq!(v["steps"][div - 1]["differs"], json!(true));
    if div > 1 {
        assert_eq!(v["steps"][div - 2]["differs"], json!(false));
    }
    // Per-task scores as each run's result has them, checkpoints that differ flagged.
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("busy-day/result.json")).unwrap())
            .unwrap();
    assert_eq!(v["runs"][0]["score"], result["checkpoint_score"]);
    let tasks = v["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty());
    assert!(tasks.iter().any(|t| t["differs"] == json!(true)));
    for t in tasks {
        for cp in t["checkpoints"].as_array().unwrap() {
            let states = cp["states"].as_array().unwrap();
            assert_eq!(cp["differs"], json!(states[0] != states[1]), "{cp}");
        }
    }
    // No host path in what the page gets.
    assert!(!v.to_string().contains(tmp.path().to_str().unwrap()));

    // Two oracle runs of one scenario and seed make the same decisions.
    let (code, v) = s.request("GET", "/v1/console/compare?runs=a:busy-day,c", None);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["divergence"], Value::Null, "{}", v["runs"]);
    assert!(
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["differs"] == json!(false))
    );

    // Batches: the numbers `tbsim report --compare` computes.
    let (code, v) = s.request("GET", "/v1/console/compare?batches=a,b", None);
    assert_eq!(code, 200, "{v}");
    let report = tbsim_report::compare::Comparison::load(&[a.clone(), b.clone()]).unwrap();
    let k = &v["comparison"]["contrasts"][0];
    assert_eq!(k["pairs"], json!(2));
    assert_eq!(
        k["score"],
        serde_json::to_value(&report.contrasts[0].score).unwrap()
    );
    assert_eq!(
        k["success"],
        serde_json::to_value(&report.contrasts[0].success).unwrap()
    );
    assert!(
        k["score"]["diff"].as_f64().unwrap() < 0.0,
        "idle scores below the oracle"
    );
    assert_eq!(v["batches"], json!(["a", "b"]));

    // Bad asks are refused, clearly.
    for (q, status, code) in [
        ("runs=a:busy-day", 422, "invalid_query"),
        ("runs=a:busy-day,nope", 404, "unknown_run"),
        ("batches=a,nope", 404, "unknown_run"),
        ("", 400, "invalid_query"),
        (
            "runs=a:busy-day,b:busy-day&batches=a,b",
            400,
            "invalid_query",
        ),
    ] {
        let (got, v) = s.request("GET", &format!("/v1/console/compare?{q}"), None);
        assert_eq!((got, error_code(&v)), (status, code), "{q}: {v}");
    }
}

/// A data file's JSON: `TBSIM_STATIC.<method>(["id", [k, ]]<json>);`.
fn data_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let body = text
        .trim_end()
        .strip_suffix(");")
        .unwrap()
        .split_once('(')
        .unwrap()
        .1;
    let body = match body.strip_prefix('"') {
        Some(rest) => rest.split_once("\", ").unwrap().1,
        None => body,
    };
    // A page's or a chunk's number after the id.
    let body = match body.split_once(", ") {
        Some((k, rest)) if k.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => body,
    };
    serde_json::from_str(body).unwrap()
}

/// A step's world from an export's worlds (stored as changes), rebuilt as
/// `static.js` does: each part from the last step that changed it, its items
/// looked up.
fn world_of(worlds: &Value, step: usize) -> Value {
    let steps = worlds["steps"].as_array().unwrap();
    let items = worlds["items"].as_array().unwrap();
    let mut out = steps[step]["view"].clone();
    for k in ["tasks", "files", "calendar"] {
        let ids = steps[..=step]
            .iter()
            .rev()
            .find_map(|s| s.get(k))
            .unwrap_or_else(|| panic!("no step up to {step} lists {k}"));
        out[k] = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|i| items[i.as_u64().unwrap() as usize].clone())
            .collect();
    }
    out
}

#[test]
fn view_export_writes_every_runs_world_at_every_step_without_host_paths_or_hidden_text() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, _) = batches(tmp.path());
    let site = tmp.path().join("site");
    let o = tbsim(
        &[
            "view",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--export",
            site.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    for f in [
        "index.html",
        "assets/app.js",
        "assets/app.css",
        "assets/compare.js",
        "assets/static.js",
        "data/index.js",
    ] {
        assert!(site.join(f).is_file(), "{f}");
    }
    let index = data_json(&site.join("data/index.js"));
    assert_eq!(index["info"]["static"], json!(true));
    assert_eq!(index["info"]["answers_allowed"], json!(false));
    assert_eq!(index["runs"].as_array().unwrap().len(), 4);
    // Each scenario's pair and the batch pair are precomputed.
    let compare = index["compare"].as_object().unwrap();
    assert!(
        compare.contains_key("runs=a:busy-day,b:busy-day"),
        "{:?}",
        compare.keys()
    );
    assert!(compare.contains_key("batches=a,b"));

    // A run's files are named from a prefix: its worlds, then its timeline's pages.
    let id = "a:busy-day";
    let prefix = index["files"][id].as_str().unwrap();
    let run = data_json(&site.join(format!("{prefix}.js")));
    let steps = index["details"][id]["steps"].as_u64().unwrap();
    let worlds = &run["worlds"];
    assert_eq!(
        worlds["steps"].as_array().unwrap().len() as u64,
        steps + 1,
        "a world for step 0 to the last"
    );
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("busy-day/result.json")).unwrap())
            .unwrap();
    assert_eq!(
        world_of(worlds, steps as usize)["score"],
        result["checkpoint_score"]
    );
    // The world at a middle step is the one the console's own route computes.
    let mid = steps / 2;
    let direct = tbsim_engine::inspect::world_at(&a.join("busy-day"), Some(mid), false).unwrap();
    let direct = serde_json::to_value(direct).unwrap();
    let w = world_of(worlds, mid as usize);
    for k in ["time", "tasks", "files", "calendar"] {
        assert_eq!(w[k], direct[k], "{k} at step {mid}");
    }
    // The timeline's pages start where the run's data says and hold every entry
    // once, in order.
    let starts = run["timeline"]["pages"].as_array().unwrap();
    assert!(!starts.is_empty());
    let mut seen = Vec::new();
    for (k, start) in starts.iter().enumerate() {
        let page = data_json(&site.join(format!("{prefix}-tl-{k}.js")));
        let page = page.as_array().unwrap();
        assert_eq!(&page[0]["i"], start, "page {k}'s first entry");
        seen.extend(page.iter().map(|l| l["i"].as_u64().unwrap()));
    }
    assert!(
        seen.windows(2).all(|p| p[0] < p[1]),
        "entries in order, each once"
    );
    assert_eq!(
        seen.last().map(|i| i + 1),
        run["timeline"]["next"].as_u64(),
        "every entry read"
    );

    // Nothing names the host, nothing hidden is written.
    let hidden = crate::console_api::hidden_texts(
        &root().join("content/scenarios/busy-day.ron"),
        &a.join("busy-day"),
    );
    for entry in walk(&site) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(
            !text.contains(tmp.path().to_str().unwrap()),
            "{} names a host path",
            entry.display()
        );
        if entry.extension().is_some_and(|e| e == "js") && entry.starts_with(site.join("data")) {
            for h in &hidden {
                assert!(
                    !text.contains(h.as_str()),
                    "{} holds hidden text {h:?}",
                    entry.display()
                );
            }
        }
    }

    // An export never writes over a directory in use.
    let o = tbsim(
        &[
            "view",
            a.to_str().unwrap(),
            "--export",
            site.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(!o.status.success());
    assert!(text(&o).1.contains("not empty"), "{}", text(&o).1);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}
