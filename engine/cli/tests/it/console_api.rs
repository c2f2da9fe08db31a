//! The console's HTTP routes over real HTTP, against the real binary: a run started
//! from the console is watched, stepped and guided (the guidance lands in the
//! trajectory and `result.json`, and replays); a person plays a meeting task to
//! score 1; a fork replays; `tbsim view` is read-only and shows answers only for a
//! finished run on request; `tbsim run --ui` lets every job be paused and guided;
//! hidden data never reaches a console route; the token guards every route but the
//! page itself.

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::{Server, error_code};
use crate::util::{root, run_agent, tbsim, tbsim_command, text};

/// GET `path` and return the status, the head and the body as text.
pub(crate) fn get_text(addr: SocketAddr, path: &str, headers: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    // Generous: a first open may replay a whole run on a loaded machine.
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{headers}\r\n"
    )
    .unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        crate::serve::dechunk(body)
    } else {
        body.to_owned()
    };
    (status, head.to_owned(), body)
}

fn run_detail(s: &Server, id: &str) -> Value {
    let (code, v) = s.request("GET", &format!("/v1/console/runs/{id}"), None);
    assert_eq!(code, 200, "{v}");
    v
}

/// Polls a run until `pred` holds on its detail (or panics after a minute).
fn wait_for(s: &Server, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let d = run_detail(s, id);
        if pred(&d) {
            return d;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "run {id} never became {what}: {d}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn trajectory(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn result(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap()
}

fn assert_replays(dir: &Path) {
    let o = tbsim(&["replay", dir.to_str().unwrap()], &root());
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "replay of {}: {out}{err}",
        dir.display()
    );
    assert!(out.contains("identical"), "{out}");
}

/// The oracle's decisions of a run, as `act` bodies.
fn decisions(dir: &Path) -> Vec<Value> {
    trajectory(dir)
        .into_iter()
        .filter(|l| l["type"] == "decision")
        .map(|l| {
            let calls: Vec<Value> = l["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    json!({
                        "name": c["name"],
                        "arguments": serde_json::from_str::<Value>(c["arguments"].as_str().unwrap()).unwrap(),
                    })
                })
                .collect();
            json!({ "tool_calls": calls })
        })
        .collect()
}

#[test]
fn the_page_is_served_with_a_strict_policy_and_the_console_wants_its_own_token() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(
        tmp.path(),
        &["--token", "agents-key", "--console-token", "s3cret"],
    );
    let (code, head, body) = get_text(s.addr, "/", "");
    assert_eq!(code, 200);
    assert!(body.contains("app.js"), "{body}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-security-policy: default-src 'none'; script-src 'self'"));
    for asset in [
        "/",
        "/assets/app.js",
        "/assets/app.css",
        "/assets/compare.js",
    ] {
        let (code, head, body) = get_text(s.addr, asset, "");
        assert_eq!(code, 200, "{asset}");
        assert!(body.len() > 100, "{asset}");
        // Asked again with its ETag: 304, nothing sent (the browser keeps the file,
        // and a script's compiled code with it); another tag gets the file.
        let head = head.to_ascii_lowercase();
        let tag = head
            .lines()
            .find_map(|l| l.strip_prefix("etag: "))
            .unwrap_or_else(|| panic!("{asset} has an etag: {head}"));
        let (code, again, body) = get_text(s.addr, asset, &format!("If-None-Match: {tag}\r\n"));
        assert_eq!(code, 304, "{asset}: {again}");
        assert!(body.is_empty(), "{asset}");
        let (code, _, body) = get_text(s.addr, asset, "If-None-Match: \"0123\"\r\n");
        assert_eq!(code, 200, "{asset}");
        assert!(body.len() > 100, "{asset}");
    }
    // Everything else wants a token: a header, or the cookie `/login` sets.
    let (code, _, _) = get_text(s.addr, "/v1/console/runs", "");
    assert_eq!(code, 401);
    // The agents' token opens the session API, never the console (which can start
    // the oracle and show what it writes).
    let agents = "Authorization: Bearer agents-key\r\n";
    let (code, _, _) = get_text(s.addr, "/v1/tools", agents);
    assert_eq!(code, 200);
    let (code, _, _) = get_text(s.addr, "/v1/console/runs", agents);
    assert_eq!(code, 401);
    let (code, _, _) = get_text(s.addr, "/login?token=agents-key", "");
    assert_eq!(code, 401);
    let (code, head, _) = get_text(s.addr, "/login?token=s3cret", "");
    assert_eq!(code, 303);
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap();
    let (code, _, body) = get_text(s.addr, "/v1/console/runs", &format!("Cookie: {pair}\r\n"));
    assert_eq!(code, 200, "{body}");
    let (code, _, _) = get_text(s.addr, "/v1/console/runs", "Cookie: tbsim_token=nope\r\n");
    assert_eq!(code, 401);
    // The operators' token opens the session API too.
    let (code, _, _) = get_text(s.addr, "/v1/tools", "Authorization: Bearer s3cret\r\n");
    assert_eq!(code, 200);
    drop(s);

    // With only the agents' token, the console is off (and says how to turn it on).
    let s = Server::start(&tmp.path().join("b"), &["--token", "agents-key"]);
    let (code, _, body) = get_text(
        s.addr,
        "/v1/console/runs",
        "Authorization: Bearer agents-key\r\n",
    );
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("console_disabled") && body.contains("--console-token"),
        "{body}"
    );
    drop(s);
    let o = tbsim(
        &[
            "serve",
            "--token",
            "same",
            "--console-token",
            "same",
            "--bind",
            "127.0.0.1:0",
        ],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("must differ"), "{}", text(&o).1);
}

#[test]
fn a_run_started_from_the_console_is_stepped_guided_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "oracle", "paused": true}),
    );
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    let d = wait_for(&s, &id, "paused", |d| d["state"] == "paused");
    assert_eq!(d["step"], 0);
    assert_eq!(d["controllable"], true);
    assert_eq!(d["pausable"], true);
    assert_eq!(d["playable"], false);
    // One decision per step, and the run stays held.
    let base = format!("/v1/console/runs/{id}");
    let (code, _) = s.request("POST", &format!("{base}/step"), None);
    assert_eq!(code, 200);
    let d = wait_for(&s, &id, "one step on", |d| {
        d["step"] == 1 && d["state"] == "paused"
    });
    assert_eq!(d["hint_tiers"]["task/standup"], json!([0, 3]));
    // Guidance: the next tier, a message; refused ones say why.
    let (code, v) = s.post(
        &format!("{base}/guide"),
        &json!({"by": "ana", "task": "task/standup", "kind": "hint"}),
    );
    assert_eq!((code, &v["tier"]), (200, &json!(1)), "{v}");
    let (code, v) = s.post(
        &format!("{base}/guide"),
        &json!({"by": "ana", "kind": "message", "text": "The budget is announced at 10:05."}),
    );
    assert_eq!(code, 200, "{v}");
    let (code, v) = s.post(
        &format!("{base}/guide"),
        &json!({"by": "ana", "task": "task/none", "kind": "hint"}),
    );
    assert_eq!((code, error_code(&v)), (422, "guidance_refused"), "{v}");
    let (code, v) = s.post(
        &format!("{base}/guide"),
        &json!({"by": "<script>", "kind": "message", "text": "x"}),
    );
    assert_eq!((code, error_code(&v)), (400, "invalid_request"), "{v}");
    let (code, _) = s.request("POST", &format!("{base}/resume"), None);
    assert_eq!(code, 200);
    let d = wait_for(&s, &id, "finished", |d| d["state"] == "finished");
    assert_eq!(d["score"], 1.0);
    assert_eq!(d["controllable"], false);
    let (code, v) = s.request("POST", &format!("{base}/pause"), None);
    assert_eq!((code, error_code(&v)), (409, "run_over"));

    let dir = tmp.path().join(&id);
    let guidance: Vec<Value> = trajectory(&dir)
        .into_iter()
        .filter(|l| l["type"] == "guidance")
        .collect();
    assert_eq!(guidance.len(), 2, "{guidance:?}");
    assert!(
        guidance
            .iter()
            .all(|g| g["by"] == "human:ana" && g["step"] == 2)
    );
    assert_eq!(guidance[0]["tier"], 1);
    assert_eq!(guidance[1]["tier"], Value::Null);
    let r = result(&dir);
    assert_eq!(r["guidance"]["hints"], 1, "{}", r["guidance"]);
    assert_eq!(r["guidance"]["messages"], 1);
    let task = &r["tasks"][0]["guidance"];
    assert_eq!(
        (task["hints"].as_u64(), task["top_tier"].as_u64()),
        (Some(1), Some(1)),
        "{task}"
    );
    assert_replays(&dir);

    // The timeline shows the guidance, with agent-facing times.
    let (code, v) = s.request("GET", &format!("{base}/timeline?from=0"), None);
    assert_eq!(code, 200);
    assert_eq!(v["finished"], true);
    let lines = v["lines"].as_array().unwrap();
    assert_eq!(lines[0]["type"], "header");
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "guidance" && l["time"].is_string())
    );
    let (code, v) = s.request("GET", &format!("{base}/timeline?from=5"), None);
    assert_eq!(code, 200);
    assert_eq!(v["lines"][0]["i"], 5);
}

#[test]
fn a_person_plays_a_meeting_task_to_score_1_and_forks_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let oracle = tmp.path().join("oracle");
    run_agent(
        "oracle",
        &oracle,
        &[&root().join("content/scenarios/meeting-only.ron")],
    );
    let s = Server::start(&tmp.path().join("serve"), &[]);
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "human:Ana Lee"}),
    );
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    let base = format!("/v1/console/runs/{id}");
    let d = run_detail(&s, &id);
    assert_eq!(d["playable"], true);
    assert_eq!(
        (d["controllable"].as_bool(), d["pausable"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(d["agent"], "human:Ana Lee");
    // Nobody can hold a person's run (their next call would hang).
    for action in ["pause", "step", "resume"] {
        let (code, v) = s.request("POST", &format!("{base}/{action}"), None);
        assert_eq!((code, error_code(&v)), (409, "not_pausable"), "{action}");
    }
    let (code, turn) = s.request("GET", &format!("{base}/turn"), None);
    assert_eq!(code, 200);
    assert!(turn["observation"]["briefing"].is_object(), "{turn}");
    // A fair human baseline: while the person plays, the world is seen only through
    // the tools (each charged its time), and nobody guides the run.
    for view in ["world", "timeline", "file?path=drive/README.md"] {
        let (code, v) = s.request("GET", &format!("{base}/{view}"), None);
        assert_eq!(
            (code, error_code(&v)),
            (403, "hidden_while_playing"),
            "{view}"
        );
    }
    for body in [
        json!({"by": "Ana Lee", "task": "task/x", "kind": "hint"}),
        json!({"by": "someone else", "kind": "message", "text": "do this"}),
    ] {
        let (code, v) = s.post(&format!("{base}/guide"), &body);
        assert_eq!((code, error_code(&v)), (422, "guidance_refused"), "{v}");
    }
    // A bad call is an ordinary tool error, counted, not a failure of the page.
    let (code, t) = s.post(
        &format!("{base}/act"),
        &json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}]}),
    );
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["observation"]["results"][0]["ok"], false, "{t}");
    let mut last = Value::Null;
    for body in decisions(&oracle) {
        let (code, t) = s.post(&format!("{base}/act"), &body);
        assert_eq!(code, 200, "{t}");
        last = t;
    }
    assert_eq!(last["terminated"], true, "{last}");
    assert_eq!(last["progress"]["score"], 1.0);
    let d = wait_for(&s, &id, "finished", |d| d["state"] == "finished");
    assert_eq!(
        (d["score"].as_f64(), d["playable"].as_bool()),
        (Some(1.0), Some(false))
    );
    let (code, v) = s.post(&format!("{base}/act"), &decisions(&oracle)[0]);
    assert_eq!((code, error_code(&v)), (409, "session_over"));
    // Once over, everything opens.
    for view in ["world", "timeline"] {
        let (code, v) = s.request("GET", &format!("{base}/{view}"), None);
        assert_eq!(code, 200, "{view}: {v}");
    }
    let (_, t) = s.request("GET", &format!("{base}/timeline"), None);
    assert!(t["finished"] == true, "{t}");
    let dir = tmp.path().join("serve").join(&id);
    assert_eq!(result(&dir)["checkpoint_score"], 1.0);
    assert_eq!(result(&dir)["agent"], "human:Ana Lee");
    assert_replays(&dir);

    // Fork the person's run after its third decision (the bad call, wait, join):
    // the oracle goes on, and the fork replays.
    let (code, v) = s.post(
        &format!("{base}/fork"),
        &json!({"step": 3, "agent": "oracle"}),
    );
    assert_eq!(code, 200, "{v}");
    let fid = v["id"].as_str().unwrap().to_owned();
    let d = wait_for(&s, &fid, "finished", |d| d["state"] == "finished");
    assert_eq!(d["fork"], json!({"parent": id, "step": 3}));
    let fdir = tmp.path().join("serve").join(&fid);
    let header = &trajectory(&fdir)[0];
    assert_eq!(header["fork"]["step"], 3);
    assert_eq!(header["agent"], "oracle");
    assert_replays(&fdir);
    // Unknown agents and impersonation-shaped names are refused.
    for agent in ["nobody", "human:", "human:../../x", "http:client"] {
        let (code, v) = s.post(&format!("{base}/fork"), &json!({"step": 1, "agent": agent}));
        assert!(code == 400, "{agent}: {code} {v}");
    }
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "../../etc/passwd", "agent": "oracle"}),
    );
    assert!(code == 400 || code == 404, "{code} {v}");
}

/// Every string in `v`, recursively (keys too).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

/// Checkpoint descriptions, colleagues' personas and the clues the run in `run`
/// never disclosed: text the console must never show outside the answers switch.
pub(crate) fn hidden_texts(scenario: &Path, run: &Path) -> Vec<String> {
    let loaded = tbsim_scenario::load_file(scenario).unwrap();
    let disclosed: Vec<String> = trajectory(run)
        .into_iter()
        .filter(|l| l["type"] == "disclosure")
        .map(|l| l["clue"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !disclosed.is_empty(),
        "the oracle asks colleagues in this run"
    );
    let mut hidden = Vec::new();
    for t in &loaded.scenario.tasks {
        for c in &t.checkpoints {
            if c.description.len() > 12 {
                hidden.push(c.description.clone());
            }
        }
    }
    // Several colleagues may know the same thing: a text once told is not hidden.
    let told: Vec<&str> = loaded
        .scenario
        .company
        .people
        .iter()
        .flat_map(|p| &p.clues)
        .filter(|c| disclosed.contains(&c.key))
        .map(|c| c.response.as_str())
        .collect();
    for p in &loaded.scenario.company.people {
        if p.persona.len() > 12 {
            hidden.push(p.persona.clone());
        }
        for c in &p.clues {
            if !told.contains(&c.response.as_str()) && c.response.len() > 12 {
                hidden.push(c.response.clone());
            }
        }
    }
    assert!(!hidden.is_empty());
    hidden
}

#[test]
fn view_is_read_only_and_shows_answers_only_when_asked_for_a_finished_run() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let busy = root().join("content/scenarios/busy-day.ron");
    run_agent(
        "oracle",
        &runs,
        &[&busy, &root().join("content/scenarios/meeting-only.ron")],
    );
    // A run cut off before its end (no result): its answers stay hidden.
    let cut = tmp.path().join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    let full = std::fs::read_to_string(runs.join("busy-day/trajectory.jsonl")).unwrap();
    let kept: Vec<&str> = full.lines().take(12).collect();
    std::fs::write(cut.join("trajectory.jsonl"), kept.join("\n") + "\n").unwrap();
    std::fs::copy(runs.join("busy-day/scenario.ron"), cut.join("scenario.ron")).unwrap();

    let (child, addr) = crate::util::spawn_listening(tbsim_command(
        &[
            "view",
            runs.to_str().unwrap(),
            cut.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
            "--out",
            tmp.path().join("forks").to_str().unwrap(),
        ],
        &root(),
    ));
    let addr: SocketAddr = addr.parse().unwrap_or_else(|_| panic!("{addr}"));
    let s = Server {
        child,
        addr,
        token: None,
    };
    let (code, info) = s.request("GET", "/v1/console/info", None);
    assert_eq!(code, 200);
    assert_eq!(
        (&info["mode"], &info["read_only"], &info["answers_allowed"]),
        (&json!("view"), &json!(true), &json!(true))
    );
    let (_, v) = s.request("GET", "/v1/console/runs", None);
    let runs_list = v["runs"].as_array().unwrap().clone();
    assert_eq!(runs_list.len(), 3, "{v}");
    let busy_id = runs_list
        .iter()
        .find(|r| r["scenario"] == "busy-day" && r["state"] == "finished")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let cut_id = runs_list.iter().find(|r| r["state"] != "finished").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Read-only: nothing to pause, step, guide or close; nothing to start.
    for action in ["pause", "resume", "step", "close"] {
        let (code, v) = s.request(
            "POST",
            &format!("/v1/console/runs/{busy_id}/{action}"),
            None,
        );
        assert_eq!(
            (code, error_code(&v)),
            (409, "not_controllable"),
            "{action}"
        );
    }
    let (code, _) = s.post(
        "/v1/console/start",
        &json!({"scenario": "busy-day", "agent": "oracle"}),
    );
    assert_eq!(code, 403);

    let hidden = hidden_texts(&busy, &runs.join("busy-day"));
    let shown = |path: &str| {
        let (code, v) = s.request("GET", path, None);
        assert_eq!(code, 200, "{path}: {v}");
        let mut all = Vec::new();
        strings(&v, &mut all);
        all
    };
    let leaks = |all: &[String]| -> Vec<String> {
        hidden
            .iter()
            .filter(|h| all.iter().any(|s| s.contains(h.as_str())))
            .cloned()
            .collect()
    };
    let steps = run_detail(&s, &busy_id)["steps"].as_u64().unwrap();
    assert!(steps > 10);
    let mut seen = Vec::new();
    for step in [0, 1, steps / 2, steps] {
        seen.extend(shown(&format!(
            "/v1/console/runs/{busy_id}/world?step={step}"
        )));
    }
    seen.extend(shown(&format!("/v1/console/runs/{busy_id}/timeline")));
    assert_eq!(leaks(&seen), Vec::<String>::new());
    assert!(
        !seen
            .iter()
            .any(|s| s == "disclosure" || s == "clues" || s == "description")
    );
    // The chats show what colleagues told the agent.
    let world = s
        .request("GET", &format!("/v1/console/runs/{busy_id}/world"), None)
        .1;
    assert!(!world["chats"].as_array().unwrap().is_empty(), "{world}");
    assert!(!world["files"].as_array().unwrap().is_empty());
    // With the switch, a finished run shows its checkpoints' descriptions.
    let with = shown(&format!("/v1/console/runs/{busy_id}/world?answers=1"));
    assert!(with.iter().any(|s| s == "description"));
    assert!(!leaks(&with).is_empty());
    let with = shown(&format!("/v1/console/runs/{busy_id}/timeline?answers=1"));
    assert!(with.iter().any(|s| s == "disclosure"));
    // Not for a run that did not finish.
    let (code, v) = s.request(
        "GET",
        &format!("/v1/console/runs/{cut_id}/world?answers=1"),
        None,
    );
    assert_eq!((code, error_code(&v)), (403, "answers_forbidden"));
    let (code, _) = s.request("GET", &format!("/v1/console/runs/{cut_id}/world"), None);
    assert_eq!(code, 200);
    // Bad queries get JSON errors too.
    for q in [
        "world?step=abc",
        "timeline?from=-1",
        "file?step=x&path=drive",
    ] {
        let (code, v) = s.request("GET", &format!("/v1/console/runs/{busy_id}/{q}"), None);
        assert_eq!((code, error_code(&v)), (400, "invalid_query"), "{q}");
    }
    let (code, v) = s.post(
        &format!("/v1/console/runs/{busy_id}/fork"),
        &json!({"step": 9999, "agent": "oracle"}),
    );
    assert_eq!((code, error_code(&v)), (422, "fork_refused"), "{v}");

    // Files: the agent's, the drive's; nothing outside them.
    let ws = world["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["by_agent"] == true)
        .expect("the oracle wrote a file")["path"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, head, body) = get_text(
        addr,
        &format!("/v1/console/runs/{busy_id}/file?path={ws}"),
        "",
    );
    assert_eq!(code, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-security-policy: sandbox")
    );
    assert!(!body.is_empty());
    for bad in [
        "../../etc/passwd",
        "/etc/passwd",
        "scenario.ron",
        "drive/../../x",
        "workspace/../result.json",
    ] {
        let (code, _, body) = get_text(
            addr,
            &format!("/v1/console/runs/{busy_id}/file?path={bad}"),
            "",
        );
        assert_eq!(code, 404, "{bad}: {body}");
    }
    // The stream of a finished run sends every line, then its end.
    let (code, _, body) = get_text(
        addr,
        &format!("/v1/console/runs/{busy_id}/stream?from=0"),
        "",
    );
    assert_eq!(code, 200);
    let lines = body.matches("event: line").count();
    assert!(lines > 20, "{lines}");
    assert!(body.contains("event: end"));
    assert!(!body.contains("\"disclosure\""));

    // A fork from a recorded run replays.
    let (code, v) = s.post(
        &format!("/v1/console/runs/{busy_id}/fork"),
        &json!({"step": 5, "agent": "oracle"}),
    );
    assert_eq!(code, 200, "{v}");
    let fid = v["id"].as_str().unwrap().to_owned();
    wait_for(&s, &fid, "finished", |d| d["state"] == "finished");
    assert_replays(&tmp.path().join("forks").join(&fid));
}

#[test]
fn a_batch_with_ui_is_held_stepped_and_guided_from_its_console() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("batch");
    let mut child = tbsim_command(
        &[
            "run",
            "content/scenarios/meeting-only.ron",
            "content/scenarios/two-days.ron",
            "--agent",
            "oracle",
            "--ui",
            "--ui-paused",
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr: SocketAddr = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no console URL");
        if let Some(a) = line.trim().strip_prefix("console: http://") {
            break a.trim_end_matches('/').parse().unwrap();
        }
    };
    let s = Server {
        child,
        addr,
        token: None,
    };
    let d = wait_for(&s, "job-0", "paused", |d| d["state"] == "paused");
    assert_eq!(d["kind"], "batch");
    // The second job waits for the first (concurrency 1): not started, not controllable.
    let d = run_detail(&s, "job-1");
    assert_eq!(
        (d["state"].as_str(), d["controllable"].as_bool()),
        (Some("queued"), Some(false))
    );
    s.request("POST", "/v1/console/runs/job-0/step", None);
    wait_for(&s, "job-0", "one step on", |d| d["step"] == 1);
    let (code, v) = s.post(
        "/v1/console/runs/job-0/guide",
        &json!({"by": "bo", "task": "task/standup", "kind": "hint"}),
    );
    assert_eq!(code, 200, "{v}");
    // "Resume all" lets the held job go, and the job still to start starts free.
    let (code, v) = s.request("POST", "/v1/console/resume-all", None);
    assert_eq!((code, &v["changed"]), (200, &json!(["job-0"])), "{v}");
    let mut s = s;
    let status = s.child.wait().unwrap();
    assert!(status.success());
    let r = result(&out.join("meeting-only"));
    assert_eq!(r["guidance"]["hints"], 1);
    assert_eq!(r["checkpoint_score"], 1.0);
    assert_replays(&out.join("meeting-only"));
    assert_eq!(result(&out.join("two-days"))["checkpoint_score"], 1.0);
}

/// The world view's shape, pinned: what the console shows of the oracle's
/// meeting-only run at its last step (and at the start).
#[test]
fn the_world_view_of_a_finished_run_is_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mo");
    run_agent(
        "oracle",
        &dir,
        &[&root().join("content/scenarios/meeting-only.ron")],
    );
    let end = tbsim_engine::inspect::world_at(&dir, None, false).unwrap();
    insta::assert_json_snapshot!("world_view_meeting_only_end", end);
    let start = tbsim_engine::inspect::world_at(&dir, Some(0), false).unwrap();
    insta::assert_json_snapshot!("world_view_meeting_only_start", start);
}

/// Without a token the server (console and session API) is a loopback tool: another
/// site's page cannot drive it (cross-site requests carry their `Origin`), nor read
/// it through a name that resolves to loopback (DNS rebinding names the attacker's
/// host).
#[test]
fn other_sites_cannot_drive_or_read_a_tokenless_console() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let body = r#"{"scenario":"meeting-only","agent":"oracle"}"#;
    let post = |origin: &str| {
        let req = format!(
            "POST /v1/console/start HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{origin}X-Tbsim-Console: 1\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
            s.addr,
            body.len()
        );
        s.raw(req.as_bytes())
    };
    let (code, v) = post("Origin: http://evil.example\r\n");
    assert_eq!((code, error_code(&v)), (403, "cross_origin"));
    let (code, v) = post(&format!("Origin: http://{}\r\n", s.addr));
    assert_eq!(code, 200, "{v}");
    // A program (no Origin) may.
    let (code, v) = post("");
    assert_eq!(code, 200, "{v}");
    for path in ["/", "/v1/console/runs"] {
        let (code, _, body) = get_text(s.addr, path, "");
        assert_eq!(code, 200, "{path}");
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: evil.example:8765\r\nConnection: close\r\n\r\n");
        let (code, v) = s.raw(req.as_bytes());
        assert_eq!((code, error_code(&v)), (403, "bad_host"), "{path} {body}");
    }
    let req = "GET /v1/console/runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    assert_eq!(s.raw(req.as_bytes()).0, 200);
    // The session API likewise: a rebinding page cannot open sessions either.
    let req = "GET /v1/tools HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n";
    assert_eq!(s.raw(req.as_bytes()).0, 403);
    let req = format!(
        "POST /v1/sessions HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 27\r\n\r\n{{\"scenario\":\"meeting-only\"}}",
        s.addr
    );
    assert_eq!(s.raw(req.as_bytes()).0, 403);
    let req = "GET /v1/tools HTTP/1.1\r\nHost: localhost:1\r\nConnection: close\r\n\r\n";
    assert_eq!(s.raw(req.as_bytes()).0, 200);
}

/// A session's run stays in the console after the server forgets the session (it
/// expired, or an earlier server wrote it): read back from its directory, read-only.
#[test]
fn expired_sessions_stay_listed_as_recorded_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &["--idle-timeout", "1"]);
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "oracle"}),
    );
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    wait_for(&s, &id, "forgotten", |d| d["kind"] == "recorded");
    let d = run_detail(&s, &id);
    assert_eq!(
        (d["state"].as_str(), d["score"].as_f64()),
        (Some("finished"), Some(1.0))
    );
    let (_, v) = s.request("GET", "/v1/console/runs", None);
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    let (code, w) = s.request("GET", &format!("/v1/console/runs/{id}/world"), None);
    assert_eq!(code, 200);
    assert_eq!(w["score"], 1.0);
    let (code, v) = s.request("POST", &format!("/v1/console/runs/{id}/pause"), None);
    assert_eq!((code, error_code(&v)), (409, "not_controllable"));
    // Only session-shaped names are read back.
    std::fs::create_dir_all(tmp.path().join("notes")).unwrap();
    let (code, _) = s.request("GET", "/v1/console/runs/notes", None);
    assert_eq!(code, 404);
    let (code, _) = s.request("GET", "/v1/console/runs/..%2F..%2Fetc", None);
    assert_eq!(code, 404);
}

/// A paused run nobody watches is held, not abandoned: it outlives the idle timeout
/// and goes on when resumed.
#[test]
fn a_paused_run_does_not_expire_while_paused() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &["--idle-timeout", "1"]);
    let (code, v) = s.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "oracle", "paused": true}),
    );
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    wait_for(&s, &id, "paused", |d| d["state"] == "paused");
    // Reading the detail does not touch the session: only the timeout could keep it.
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let d = run_detail(&s, &id);
    assert_eq!(
        (d["kind"].as_str(), d["state"].as_str()),
        (Some("session"), Some("paused")),
        "{d}"
    );
    let (code, v) = s.request("POST", &format!("/v1/console/runs/{id}/resume"), None);
    assert_eq!(code, 200, "{v}");
    let d = wait_for(&s, &id, "finished", |d| d["state"] == "finished");
    assert_eq!(d["score"], 1.0);
}

/// The paper's guidance study from the console: the same scenario started at hint
/// levels 0-3, one run also guided by a person, then `tbsim report` over the
/// server's directory gives a row per level and counts the person's guidance.
#[test]
fn the_guidance_study_runs_from_the_console_and_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let s = Server::start(&out, &[]);
    let mut ids = Vec::new();
    for hints in 0..=3 {
        let (code, v) = s.post(
            "/v1/console/start",
            &json!({"scenario": "meeting-only", "agent": "idle", "hints": hints, "paused": true}),
        );
        assert_eq!(code, 200, "{v}");
        ids.push(v["id"].as_str().unwrap().to_owned());
    }
    // Level 0, guided by a person: two hint tiers and a message.
    let guided = &ids[0];
    s.request("POST", &format!("/v1/console/runs/{guided}/step"), None);
    wait_for(&s, guided, "one step on", |d| d["step"] == 1);
    for body in [
        json!({"by": "ana", "task": "task/standup", "kind": "hint"}),
        json!({"by": "ana", "task": "task/standup", "kind": "hint"}),
        json!({"by": "ana", "kind": "message", "text": "Join the sync at 10:00."}),
    ] {
        let (code, v) = s.post(&format!("/v1/console/runs/{guided}/guide"), &body);
        assert_eq!(code, 200, "{v}");
    }
    for id in &ids {
        s.request("POST", &format!("/v1/console/runs/{id}/resume"), None);
    }
    for id in &ids {
        wait_for(&s, id, "finished", |d| d["state"] == "finished");
    }
    let report = tmp.path().join("report");
    let o = tbsim(
        &[
            "report",
            out.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
        &root(),
    );
    let (md, err) = text(&o);
    assert!(o.status.success(), "{md}{err}");
    let by_guidance = md
        .split("## By guidance")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .unwrap_or_else(|| panic!("no By guidance table:\n{md}"));
    let rows: Vec<&str> = by_guidance
        .lines()
        .filter(|l| l.starts_with("| idle |"))
        .collect();
    assert_eq!(rows.len(), 4, "{by_guidance}");
    for (level, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], level.to_string(), "{row}");
    }
    // Level 0: one run, guided, two human hints, one message.
    let cells: Vec<&str> = rows[0].split('|').map(str::trim).collect();
    assert_eq!(&cells[3..7], &["1", "1", "2", "1"], "{}", rows[0]);
}
