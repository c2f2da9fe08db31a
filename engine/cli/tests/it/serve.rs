//! `tbsim serve`, the HTTP session API, over real HTTP: sessions reproduce
//! `tbsim run` byte for byte (but for the agent's name), every hostile request gets
//! its JSON error (the Python package's tests are in `python.rs`).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tbsim_engine::trajectory::digest_lines;

use crate::util::{lines_as, spawn_serve};
use crate::util::{root, run_agent, tbsim, text};

/// A `tbsim serve` on a free loopback port, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    pub(crate) token: Option<String>,
}

impl Server {
    pub(crate) fn start(out: &Path, extra: &[&str]) -> Server {
        let (child, line) = spawn_serve(out, extra);
        let addr: SocketAddr = line
            .parse()
            .unwrap_or_else(|_| panic!("no address in {line:?}"));
        let token = extra
            .iter()
            .position(|a| *a == "--token")
            .map(|i| extra[i + 1].to_owned());
        Server { child, addr, token }
    }

    /// Sends raw bytes; returns the status and the body as JSON.
    pub(crate) fn raw(&self, request: &[u8]) -> (u16, Value) {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
        s.write_all(request).unwrap();
        let mut buf = Vec::new();
        // The server may close early (an oversized body); what it sent is read.
        let _ = s.read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"));
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_owned()
        };
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    pub(crate) fn request(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        self.request_as(method, path, body, self.token.as_deref())
    }

    pub(crate) fn request_as(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let body = body.unwrap_or("");
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        // Console actions want the page's header (see `tbsim_serve::http::CONSOLE_HEADER`).
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{auth}X-Tbsim-Console: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.raw(req.as_bytes())
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.request("POST", path, Some(&body.to_string()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

pub(crate) fn error_code(v: &Value) -> &str {
    v["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error body: {v}"))
}

/// The recorded decisions of a run directory, as step request bodies.
fn recorded_decisions(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "decision")
        .map(|v| {
            let calls: Vec<Value> = v["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| json!({"id": c["id"], "name": c["name"], "arguments": c["arguments"]}))
                .collect();
            json!({"tool_calls": calls})
        })
        .collect()
}

/// The trajectory's lines with the header's agent name replaced.
fn result_without_agent(dir: &Path) -> Value {
    let mut r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    let m = r.as_object_mut().unwrap();
    m.remove("agent");
    m.remove("digest");
    r
}

#[test]
fn sessions_replaying_the_oracle_reproduce_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("serve"), &[]);
    for name in ["busy-day", "meeting-check-sum", "two-days", "kb-fix-medium"] {
        let scenario = root().join(format!("content/scenarios/{name}.ron"));
        let oracle = tmp.path().join(format!("oracle-{name}"));
        run_agent("oracle", &oracle, &[&scenario]);
        let (status, created) = server.post(
            "/v1/sessions",
            &json!({"scenario": name, "agent": "replayer"}),
        );
        assert_eq!(status, 201, "{name}: {created}");
        let id = created["session"].as_str().unwrap().to_owned();
        let decisions = recorded_decisions(&oracle);
        let mut rewards = 0.0;
        let mut last = Value::Null;
        for (i, d) in decisions.iter().enumerate() {
            let (status, out) = server.post(&format!("/v1/sessions/{id}/step"), d);
            assert_eq!(status, 200, "{name} step {i}: {out}");
            rewards += out["reward"].as_f64().unwrap();
            let ended = out["terminated"].as_bool().unwrap() || out["truncated"].as_bool().unwrap();
            assert_eq!(
                ended,
                i + 1 == decisions.len(),
                "{name}: ends at the last decision"
            );
            last = out;
        }
        let (status, state) = server.request("GET", &format!("/v1/sessions/{id}"), None);
        assert_eq!(status, 200);
        assert_eq!(state["finished"], true, "{name}");
        assert_eq!(state["agent"], "http:replayer");
        let dir = tmp.path().join("serve").join(&id);
        let want = result_without_agent(&oracle);
        assert_eq!(result_without_agent(&dir), want, "{name}: same result.json");
        let score = want["checkpoint_score"].as_f64().unwrap();
        assert!(
            (rewards - score).abs() < 1e-9,
            "{name}: rewards sum to the score"
        );
        assert_eq!(
            last["terminated"].as_bool().unwrap(),
            matches!(want["end_reason"].as_str(), Some("finished" | "day_end")),
            "{name}"
        );
        // The same lines once the header names the same agent, hence the same digest.
        let served = lines_as(&dir, "oracle");
        let recorded = lines_as(&oracle, "oracle");
        assert_eq!(served, recorded, "{name}: same trajectory");
        let oracle_result: Value =
            serde_json::from_str(&std::fs::read_to_string(oracle.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(
            digest_lines(served.iter().map(String::as_str)),
            oracle_result["digest"].as_str().unwrap(),
            "{name}: same digest"
        );
        // The session's run directory replays like any other.
        let o = tbsim(&["replay", dir.to_str().unwrap()], &root());
        assert!(o.status.success(), "{name}: {}", text(&o).1);
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        let cli: Value =
            serde_json::from_str(&std::fs::read_to_string(oracle.join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["agent"], "http:replayer");
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&run),
            keys(&cli),
            "{name}: run.json has the CLI's shape"
        );
        assert_eq!(run["sim"]["seed"], cli["sim"]["seed"]);
        let (status, _) = server.request("DELETE", &format!("/v1/sessions/{id}"), None);
        assert_eq!(status, 200);
    }
}

#[test]
fn hostile_requests_get_json_errors_and_leave_other_sessions_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let server = Server::start(
        &out,
        &[
            "--max-sessions",
            "2",
            "--max-body",
            "4096",
            "--token",
            "s3cret",
        ],
    );
    let (status, live) = server.post("/v1/sessions", &json!({"scenario": "busy-day"}));
    assert_eq!(status, 201, "{live}");
    let live = live["session"].as_str().unwrap().to_owned();
    assert_eq!(live.len(), 32);
    assert!(live.chars().all(|c| c.is_ascii_hexdigit()));

    let step = format!("/v1/sessions/{live}/step");
    let cases: Vec<(&str, &str, Option<String>, u16, &str)> = vec![
        (
            "GET",
            "/v1/sessions/0123456789abcdef0123456789abcdef",
            None,
            404,
            "unknown_session",
        ),
        (
            "POST",
            "/v1/sessions/nope/step",
            Some(r#"{"tool_calls": []}"#.into()),
            404,
            "unknown_session",
        ),
        ("DELETE", "/v1/sessions/nope", None, 404, "unknown_session"),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "no-such-scenario"}"#.into()),
            404,
            "unknown_scenario",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "../../Cargo"}"#.into()),
            400,
            "bad_scenario_name",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "/etc/passwd"}"#.into()),
            400,
            "bad_scenario_name",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "busy-day""#.into()),
            400,
            "malformed_json",
        ),
        (
            "POST",
            "/v1/sessions",
            Some("not json at all".into()),
            400,
            "malformed_json",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": 7}"#.into()),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "busy-day", "hints": 9}"#.into()),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(r#"{"scenario": "busy-day", "agent": "a b"}"#.into()),
            400,
            "invalid_request",
        ),
        ("POST", &step, Some("{]".into()), 400, "malformed_json"),
        (
            "POST",
            &step,
            Some(r#"{"calls": []}"#.into()),
            400,
            "invalid_request",
        ),
        (
            "POST",
            "/v1/sessions",
            Some(format!(r#"{{"scenario": "{}"}}"#, "x".repeat(5000))),
            413,
            "body_too_large",
        ),
        ("GET", "/v1/nothing-here", None, 404, "not_found"),
        ("PUT", "/v1/tools", None, 405, "method_not_allowed"),
    ];
    for (method, path, body, want_status, want_code) in &cases {
        let (status, v) = server.request(method, path, body.as_deref());
        assert_eq!(status, *want_status, "{method} {path}: {v}");
        assert_eq!(error_code(&v), *want_code, "{method} {path}");
    }
    // Wrong or missing token.
    for token in [None, Some("wrong")] {
        let (status, v) = server.request_as("GET", "/v1/tools", None, token);
        assert_eq!(status, 401, "{token:?}");
        assert_eq!(error_code(&v), "unauthorized");
        let (status, _) = server.request_as("GET", &format!("/v1/sessions/{live}"), None, token);
        assert_eq!(status, 401);
    }
    // Too many sessions: the cap is 2.
    let (status, second) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201, "{second}");
    let (status, v) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 429);
    assert_eq!(error_code(&v), "too_many_sessions");
    // The live session was not touched by any of it, and goes on.
    let (status, state) = server.request("GET", &format!("/v1/sessions/{live}"), None);
    assert_eq!(status, 200);
    assert_eq!(state["steps"], 0);
    let (status, stepped) = server.post(
        &format!("/v1/sessions/{live}/step"),
        &json!({"tool_calls": [{"name": "no_such_tool", "arguments": "{oops"}, {"name": "wait", "arguments": {"minutes": 5}}]}),
    );
    assert_eq!(status, 200, "{stepped}");
    let results = &stepped["observation"]["results"];
    assert_eq!(results[0]["error"]["kind"], "unknown_tool", "{stepped}");
    assert_eq!(stepped["info"]["errors"], 1);
    assert_eq!(results[1]["ok"], true, "{stepped}");
    // The tools and the OpenAPI document.
    let (status, tools) = server.request("GET", "/v1/tools", None);
    assert_eq!(status, 200);
    let cli = tbsim(&["tools", "--json"], &root());
    let want: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(tools, want, "the catalogue, as `tbsim tools --json`");
    let (status, doc) = server.request("GET", "/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    // Deleting ends the run as truncated and writes its directory; a second delete is 404.
    let (status, fin) = server.request("DELETE", &format!("/v1/sessions/{live}"), None);
    assert_eq!(status, 200, "{fin}");
    assert_eq!(fin["truncated"], true);
    assert_eq!(fin["result"]["end_reason"], "abandoned");
    assert!(out.join(&live).join("result.json").is_file());
    let (status, _) = server.request("DELETE", &format!("/v1/sessions/{live}"), None);
    assert_eq!(status, 404);
    // A step after the end is refused.
    let second = second["session"].as_str().unwrap();
    let (status, _) = server.post(
        &format!("/v1/sessions/{second}/step"),
        &json!({"tool_calls": [{"name": "finish"}]}),
    );
    assert_eq!(status, 200);
    let (status, v) = server.post(
        &format!("/v1/sessions/{second}/step"),
        &json!({"tool_calls": [{"name": "finish"}]}),
    );
    assert_eq!(status, 409);
    assert_eq!(error_code(&v), "session_over");
}

#[test]
fn idle_sessions_expire_as_truncated_with_their_run_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let server = Server::start(&out, &["--idle-timeout", "1"]);
    let (status, created) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201);
    let id = created["session"].as_str().unwrap();
    let result = out.join(id).join("result.json");
    let started = Instant::now();
    while !result.is_file() {
        assert!(started.elapsed() < Duration::from_secs(60), "never expired");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Expired, it stays readable with its final result (`--keep-finished`).
    let started = Instant::now();
    let v = loop {
        let (status, v) = server.request("GET", &format!("/v1/sessions/{id}"), None);
        assert_eq!(status, 200, "{v}");
        if v["result"].is_object() {
            break v;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never expired");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(v["finished"], true);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["result"]["end_reason"], "abandoned");
    // Written before the session was forgotten: the file is complete.
    std::thread::sleep(Duration::from_millis(200));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(r["end_reason"], "abandoned");
    let o = tbsim(&["replay", out.join(id).to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn a_public_address_without_a_token_is_refused_at_startup() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tbsim(
        &[
            "serve",
            "--bind",
            "0.0.0.0:0",
            "--out",
            tmp.path().to_str().unwrap(),
        ],
        &root(),
    );
    assert!(!o.status.success());
    assert!(text(&o).1.contains("without a token"), "{}", text(&o).1);
}

/// The token from a file or the environment, never the command line (issue #38):
/// a public address takes it, requests without it are refused, and it appears on
/// no command line.
#[test]
fn the_token_comes_from_a_file_or_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("token");
    std::fs::write(&file, "from-a-file\n").unwrap();
    let out = tmp.path().join("serve");
    let file_arg = format!("--token-file={}", file.display());
    for (extra, env_token, token) in [
        (vec![file_arg.as_str()], None, "from-a-file"),
        (vec![], Some("from-the-env"), "from-the-env"),
    ] {
        let mut args = vec![
            "serve",
            "--bind",
            "0.0.0.0:0",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let mut cmd = crate::util::tbsim_command(&args, &root());
        cmd.env_remove("TBSIM_SERVE_TOKEN");
        if let Some(t) = env_token {
            cmd.env("TBSIM_SERVE_TOKEN", t);
        }
        let (child, line) = crate::util::spawn_listening(cmd);
        let port = line.rsplit(':').next().unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let server = Server {
            child,
            addr,
            token: Some(token.into()),
        };
        assert_eq!(server.request_as("GET", "/v1/tools", None, None).0, 401);
        assert_eq!(
            server.request_as("GET", "/v1/tools", None, Some("wrong")).0,
            401
        );
        assert_eq!(server.request("GET", "/v1/tools", None).0, 200);
        #[cfg(target_os = "linux")]
        {
            let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.child.id())).unwrap();
            assert!(!String::from_utf8_lossy(&cmdline).contains(token));
        }
    }
    // An empty file, a directory and both --token and --token-file are refused.
    std::fs::write(&file, "\n").unwrap();
    for bad in [
        vec!["--token-file", file.to_str().unwrap()],
        vec!["--token-file", tmp.path().to_str().unwrap()],
        vec!["--token", "x", "--token-file", file.to_str().unwrap()],
    ] {
        let mut args = vec![
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(bad.iter().copied());
        let o = tbsim(&args, &root());
        assert!(!o.status.success(), "{bad:?}");
    }
}

/// `--exit-with-parent`: the end of stdin (the parent closed its pipe, or died)
/// stops the server, which writes its open sessions, and removes `--remove-on-exit`.
#[test]
fn a_server_stops_when_its_parent_goes() {
    use std::io::BufRead as _;
    let tmp = tempfile::tempdir().unwrap();
    let owned = tmp.path().join("owned");
    std::fs::create_dir(&owned).unwrap();
    let out = tmp.path().join("runs");
    let remove = format!("--remove-on-exit={}", owned.display());
    let args = [
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--out",
        out.to_str().unwrap(),
        "--exit-with-parent",
        "--no-view-cache",
        remove.as_str(),
    ];
    let mut child = crate::util::tbsim_command(&args, &root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr: SocketAddr = line
        .trim()
        .rsplit("http://")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let server = Server {
        child,
        addr,
        token: None,
    };
    let (status, v) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201, "{v}");
    let id = v["session"].as_str().unwrap().to_owned();
    assert!(out.join(&id).is_dir());
    drop(stdin);
    let mut server = server;
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server outlived its stdin");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit:?}");
    assert!(!owned.exists(), "--remove-on-exit left {}", owned.display());
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(&id).join("result.json")).unwrap())
            .unwrap();
    assert_eq!(result["end_reason"], "abandoned");
}

/// A step writing a few kilobytes of trajectory (the arguments are recorded).
fn big_step() -> Value {
    let content = "x".repeat(4000);
    json!({"tool_calls": [{"name": "write_file", "arguments": {"path": "scratch.txt", "content": content}}]})
}

/// A full disk, without a full disk: the server runs under a file-size limit
/// (`ulimit -f`), so a trajectory write past it fails (EFBIG) as one on a full disk
/// does (ENOSPC). Before the fix the session answered 200 to every later step while
/// its trajectory stopped mid-line (and SIGXFSZ would have killed the server).
#[test]
#[cfg(unix)]
fn a_failed_trajectory_write_ends_the_session_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    // 128 blocks (64 KiB in dash's 512-byte blocks, 128 KiB in bash's): room for
    // the scenario copy (27 KiB), not for many 4 KiB steps.
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "ulimit -f 128 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_tbsim"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(root());
    let (child, line) = crate::util::spawn_listening(cmd);
    let mut server = Server {
        child,
        addr: line
            .parse()
            .unwrap_or_else(|_| panic!("no address in {line:?}")),
        token: None,
    };
    let (status, created) = server.post(
        "/v1/sessions",
        &json!({"scenario": "meeting-only", "max_steps": 100000}),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["session"].as_str().unwrap().to_owned();
    let path = format!("/v1/sessions/{id}/step");
    let mut ok = 0;
    let (status, failed) = loop {
        let (status, v) = server.post(&path, &big_step());
        if status != 200 {
            break (status, v);
        }
        ok += 1;
        assert!(ok < 200, "the limit was never hit");
    };
    assert!(ok >= 1, "some steps fit");
    assert_eq!(status, 507, "{failed}");
    assert_eq!(error_code(&failed), "trajectory_write_failed");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("trajectory write failed"), "{message}");
    // Every later step is refused, saying why.
    for _ in 0..2 {
        let (status, v) = server.post(&path, &big_step());
        assert_eq!(status, 410, "{v}");
        assert_eq!(error_code(&v), "run_ended");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.starts_with("run ended: trajectory write failed"), "{m}");
    }
    let (status, state) = server.request("GET", &format!("/v1/sessions/{id}"), None);
    assert_eq!(status, 200);
    assert_eq!(state["finished"], true);
    assert!(state["failure"].is_string(), "{state}");
    let (status, runs) = server.request("GET", "/v1/console/runs", None);
    assert_eq!(status, 200);
    let run = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{runs}"))
        .clone();
    assert_eq!(run["state"], "failed", "{run}");
    assert!(run["failure"].is_string(), "{run}");
    // The server lives on (SIGXFSZ is caught): other sessions still open.
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server died"
    );
    let (status, _) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201);
}

/// A client reattaches to its session's run after the server died, and after its
/// session expired; the run finishes and replays. Hostile run names are refused.
#[test]
fn clients_reattach_to_interrupted_session_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let read = json!({"tool_calls": [{"name": "read_messages"}]});
    let id = {
        let server = Server::start(&out, &[]);
        let (status, created) = server.post(
            "/v1/sessions",
            &json!({"scenario": "meeting-only", "agent": "re"}),
        );
        assert_eq!(status, 201);
        let id = created["session"].as_str().unwrap().to_owned();
        for _ in 0..3 {
            let (status, v) = server.post(&format!("/v1/sessions/{id}/step"), &read);
            assert_eq!(status, 200, "{v}");
        }
        id
        // Dropped: the server is killed (SIGKILL) mid-run.
    };
    assert!(!out.join(&id).join("result.json").exists());
    let server = Server::start(&out, &["--idle-timeout", "1"]);
    let (status, v) = server.post("/v1/sessions", &json!({"resume": id}));
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["session"], id.as_str());
    assert_eq!(v["restored_steps"], 3);
    assert_eq!(v["info"]["step"], 3);
    assert!(v["observation"].is_object());
    // One client at a time.
    let (status, v) = server.post("/v1/sessions", &json!({"resume": id}));
    assert_eq!(status, 409, "{v}");
    assert_eq!(error_code(&v), "run_in_use");
    let step = format!("/v1/sessions/{id}/step");
    let (status, v) = server.post(&step, &read);
    assert_eq!(status, 200, "{v}");
    // Left alone, the session expires (abandoned): reattach once more.
    let result = out.join(&id).join("result.json");
    let started = Instant::now();
    // (An expired session stays readable: finished, with its result.)
    while !result.is_file()
        || !server.request("GET", &format!("/v1/sessions/{id}"), None).1["result"].is_object()
    {
        assert!(started.elapsed() < Duration::from_secs(60), "never expired");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, v) = server.post("/v1/sessions", &json!({"resume": id}));
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["restored_steps"], 4);
    assert!(
        !result.exists(),
        "the abandoned result is gone while the run goes on"
    );
    let (status, v) = server.post(&step, &json!({"tool_calls": [{"name": "finish"}]}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["terminated"], true);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(r["end_reason"], "finished");
    assert_eq!(r["steps"], 5);
    let o = tbsim(&["replay", out.join(&id).to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
    // Finished: nothing to go on with.
    let (status, v) = server.post("/v1/sessions", &json!({"resume": id}));
    assert_eq!(status, 409, "{v}");
    assert_eq!(error_code(&v), "run_finished");

    // Hostile names and directories.
    for bad in [
        "../x", "/etc", "", ".", "..", ".hidden", "a/b", "x\\y", "r\u{0}n",
    ] {
        let (status, v) = server.post("/v1/sessions", &json!({"resume": bad}));
        assert_eq!(
            (status, error_code(&v)),
            (400, "bad_run_name"),
            "{bad:?}: {v}"
        );
    }
    let long = "a".repeat(129);
    let (status, _) = server.post("/v1/sessions", &json!({"resume": long}));
    assert_eq!(status, 400);
    let (status, v) = server.post("/v1/sessions", &json!({"resume": "nope"}));
    assert_eq!((status, error_code(&v)), (404, "unknown_run"), "{v}");
    let (status, v) = server.post("/v1/sessions", &json!({"resume": id, "seed": 3}));
    assert_eq!((status, error_code(&v)), (400, "invalid_request"), "{v}");
    #[cfg(unix)]
    {
        // A symlink to a run directory (it could point anywhere), a FIFO in its
        // place, and a run directory whose trajectory is a FIFO (a reader would
        // hang): refused at once.
        std::os::unix::fs::symlink(out.join(&id), out.join("link")).unwrap();
        let fifo = |p: &Path| {
            let s = std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap();
            assert!(s.success());
        };
        fifo(&out.join("pipe"));
        let copy = out.join("copy");
        std::fs::create_dir(&copy).unwrap();
        for f in ["run.json", "scenario.ron"] {
            std::fs::copy(out.join(&id).join(f), copy.join(f)).unwrap();
        }
        fifo(&copy.join("trajectory.jsonl"));
        let linked = out.join("linked");
        std::fs::create_dir(&linked).unwrap();
        for f in ["run.json", "scenario.ron", "trajectory.jsonl"] {
            std::os::unix::fs::symlink(out.join(&id).join(f), linked.join(f)).unwrap();
        }
        for name in ["link", "pipe", "copy", "linked"] {
            let (status, v) = server.post("/v1/sessions", &json!({"resume": name}));
            assert_eq!(
                (status, error_code(&v)),
                (422, "unresumable"),
                "{name}: {v}"
            );
        }
    }
    // A run no session client drove (cut off before its end) is resumed with
    // `tbsim run --resume`, not here.
    let oracle = out.join("oracle-run");
    run_agent(
        "oracle",
        &oracle,
        &[&root().join("content/scenarios/meeting-only.ron")],
    );
    std::fs::remove_file(oracle.join("result.json")).unwrap();
    let traj = oracle.join("trajectory.jsonl");
    let kept: String = std::fs::read_to_string(&traj)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(r#"{"type":"end""#))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&traj, kept).unwrap();
    let (status, v) = server.post("/v1/sessions", &json!({"resume": "oracle-run"}));
    assert_eq!((status, error_code(&v)), (422, "unresumable"), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tbsim run --resume")
    );
}

/// A session whose run is over holds no slot a new one needs (issue #39): its state
/// stays readable, and its owner's DELETE answers it once.
#[test]
fn a_finished_session_gives_its_slot_up() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--max-sessions", "1"]);
    let open = || server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    let (status, first) = open();
    assert_eq!(status, 201, "{first}");
    let first = first["session"].as_str().unwrap().to_owned();
    assert_eq!(open().0, 429, "a live session holds its slot");
    let finish = json!({"tool_calls": [{"name": "finish", "arguments": {}}]});
    let (status, v) = server.post(&format!("/v1/sessions/{first}/step"), &finish);
    assert_eq!((status, &v["terminated"]), (200, &json!(true)), "{v}");
    let (status, second) = open();
    assert_eq!(status, 201, "{second}");
    let (status, state) = server.request("GET", &format!("/v1/sessions/{first}"), None);
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["result"]["end_reason"], "finished");
    let (status, fin) = server.request("DELETE", &format!("/v1/sessions/{first}"), None);
    assert_eq!(status, 200, "{fin}");
    assert_eq!(fin["result"]["end_reason"], "finished");
    assert_eq!(
        server
            .request("DELETE", &format!("/v1/sessions/{first}"), None)
            .0,
        404
    );
}
