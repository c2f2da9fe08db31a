//! The servers' defences against browsers' pages and greedy clients, over real
//! sockets against the real accept loop (`tbsim_serve::http::serve_with`): host and
//! origin checks on every route whatever tokens are set, the console's cookie and
//! header rules (same-site CSRF), header and idle timeouts, the connection cap and
//! the event-stream caps.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use tbsim_serve::conn::Limits;
use tbsim_serve::console::{AgentMaker, Console, Mode};
use tbsim_serve::http::{ApiState, DEFAULT_MAX_BODY, serve_with};
use tbsim_serve::registry::{Registry, RegistryConfig};
use tbsim_serve::scenarios::ScenarioRoots;

/// Offers no built-in agent: these tests never need one.
struct NoAgents;

impl AgentMaker for NoAgents {
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
    fn make(
        &self,
        name: &str,
        _: &tbsim_scenario::LoadedScenario,
        _: u64,
    ) -> Result<Box<dyn tbsim_engine::agent::Agent>, String> {
        Err(format!("no agent `{name}` here"))
    }
}

/// A server (`tbsim serve`'s routes, console included) on a free loopback port, in
/// its own runtime; stopped when dropped.
struct Srv {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _out: tempfile::TempDir,
}

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../content/scenarios")
}

impl Srv {
    fn start(token: Option<&str>, console_token: Option<&str>, limits: Limits) -> Srv {
        let out = tempfile::tempdir().unwrap();
        let registry = Arc::new(Registry::new(RegistryConfig {
            roots: ScenarioRoots::new(&[scenarios()]).unwrap(),
            out: out.path().to_path_buf(),
            max_sessions: 16,
            idle_timeout: Duration::from_secs(600),
            unused_timeout: Duration::from_secs(60),
            keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
            view_cache: None,
        }));
        let console = Arc::new(Console::new(
            Mode::Serve,
            Arc::clone(&registry),
            Vec::new(),
            Arc::new(NoAgents),
        ));
        let mut api = ApiState::new(
            registry,
            token.map(str::to_owned),
            console_token.map(str::to_owned),
        );
        api.limits = limits;
        let api = Arc::new(api);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let stop = async move {
                    let _ = stop_rx.await;
                };
                let routes = tbsim_serve::console::routes::router(console);
                serve_with(listener, api, DEFAULT_MAX_BODY, Some(routes), stop)
                    .await
                    .unwrap();
            });
        });
        Srv {
            addr: addr_rx.recv().unwrap(),
            stop: Some(stop_tx),
            thread: Some(thread),
            _out: out,
        }
    }

    /// Sends `head` (request line and headers, without the blank line) and `body`;
    /// returns the status and the body as JSON (Null when not JSON).
    fn send(&self, head: &str, body: &str) -> (u16, Value) {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let req = format!(
            "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        parse(&buf)
    }
}

impl Drop for Srv {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn parse(buf: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(buf);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body.split_once("\r\n").map_or("", |(_, b)| b).to_owned()
    } else {
        body.to_owned()
    };
    let json = body
        .find('{')
        .and_then(|i| {
            serde_json::Deserializer::from_str(&body[i..])
                .into_iter()
                .next()
        })
        .and_then(Result::ok)
        .unwrap_or(Value::Null);
    (status, json)
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

const SESSION_BODY: &str = r#"{"scenario":"meeting-only"}"#;
const MCP_INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;

/// Hole 4: with `--console-token` and no `--token` the checks were off on the
/// session API and MCP (a rebinding page opened a session and read it). Every
/// combination of tokens refuses a rebinding `Host` and a foreign `Origin` on the
/// session API, MCP and the console, before any token is looked at.
#[test]
fn host_and_origin_checks_hold_whatever_tokens_are_set() {
    let combos: [(Option<&str>, Option<&str>); 4] = [
        (None, None),
        (Some("agents"), None),
        (None, Some("ops")),
        (Some("agents"), Some("ops")),
    ];
    for (token, console) in combos {
        let s = Srv::start(token, console, Limits::default());
        let auth = token
            .or(console)
            .map_or(String::new(), |t| format!("\r\nAuthorization: Bearer {t}"));
        let ops = console.map_or(String::new(), |t| format!("\r\nAuthorization: Bearer {t}"));
        let routes: [(&str, &str, &str, &str); 4] = [
            ("POST", "/v1/sessions", SESSION_BODY, &auth),
            (
                "POST",
                "/mcp",
                MCP_INIT,
                "\r\nAccept: application/json, text/event-stream",
            ),
            ("GET", "/v1/console/runs", "", &ops),
            ("POST", "/v1/console/pause-all", "", &ops),
        ];
        for (method, path, body, extra) in routes {
            let extra = if path == "/mcp" {
                format!("{extra}{auth}")
            } else {
                extra.to_owned()
            };
            let what = format!("{method} {path} with tokens {token:?}/{console:?}");
            let json = "\r\nContent-Type: application/json\r\nX-Tbsim-Console: 1";
            // A DNS-rebinding page: its own host name, resolving to 127.0.0.1.
            let (status, v) = s.send(
                &format!("{method} {path} HTTP/1.1\r\nHost: rebind.example:8765{extra}{json}"),
                body,
            );
            assert_eq!((status, code(&v)), (403, "bad_host"), "{what}: {v}");
            // Another site's page (any origin but the server's own).
            for origin in ["http://evil.example", "null"] {
                let (status, v) = s.send(
                    &format!(
                        "{method} {path} HTTP/1.1\r\nHost: {}\r\nOrigin: {origin}{extra}{json}",
                        s.addr
                    ),
                    body,
                );
                assert_eq!((status, code(&v)), (403, "cross_origin"), "{what}: {v}");
            }
            // The same request from the page's own origin, or a program, passes.
            let (status, v) = s.send(
                &format!(
                    "{method} {path} HTTP/1.1\r\nHost: {}\r\nOrigin: http://{}{extra}{json}",
                    s.addr, s.addr
                ),
                body,
            );
            if console.is_none() && token.is_some() && path.contains("console") {
                assert_eq!((status, code(&v)), (403, "console_disabled"), "{what}");
            } else {
                assert!(status < 300, "{what}: {status} {v}");
            }
        }
        // The page itself: a rebinding host is refused; a navigation from another
        // site (a link) is fine.
        let (status, v) = s.send("GET / HTTP/1.1\r\nHost: rebind.example", "");
        assert_eq!((status, code(&v)), (403, "bad_host"));
        let (status, _) = s.send(
            &format!(
                "GET / HTTP/1.1\r\nHost: {}\r\nSec-Fetch-Site: cross-site",
                s.addr
            ),
            "",
        );
        assert_eq!(status, 200);
    }
}

/// Hole 5: with a token set, a page on another port of 127.0.0.1 (the same site,
/// so `SameSite=Strict` still sends the cookie) started runs and sessions with the
/// console's cookie.
#[test]
fn the_consoles_cookie_is_honoured_only_for_its_own_pages_requests() {
    let s = Srv::start(Some("agents"), Some("ops"), Limits::default());
    let host = s.addr.to_string();
    let cookie = "Cookie: tbsim_token=ops";
    let console = "X-Tbsim-Console: 1";
    let post = |path: &str, headers: &str, body: &str| {
        s.send(
            &format!("POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{headers}"),
            body,
        )
    };
    // The page's own request passes.
    let (status, v) = post(
        "/v1/console/pause-all",
        &format!("{cookie}\r\n{console}\r\nOrigin: http://{host}\r\nSec-Fetch-Site: same-origin"),
        "",
    );
    assert_eq!(status, 200, "{v}");
    // Another port's page: its origin, or its fetch metadata, gives it away.
    let other = format!("http://127.0.0.1:{}", s.addr.port() + 1);
    for h in [
        format!("Origin: {other}"),
        "Sec-Fetch-Site: same-site".to_owned(),
        "Sec-Fetch-Site: cross-site".to_owned(),
    ] {
        let (status, v) = post(
            "/v1/console/pause-all",
            &format!("{cookie}\r\n{console}\r\n{h}"),
            "",
        );
        assert_eq!((status, code(&v)), (403, "cross_origin"), "{h}: {v}");
        let (status, v) = s.send(
            &format!("GET /v1/console/runs HTTP/1.1\r\nHost: {host}\r\n{cookie}\r\n{h}"),
            "",
        );
        assert_eq!(
            (status, code(&v)),
            (403, "cross_origin"),
            "GET with {h}: {v}"
        );
    }
    // A console action without the page's header (a form cannot add it).
    let (status, v) = post("/v1/console/pause-all", cookie, "");
    assert_eq!((status, code(&v)), (403, "console_header_required"), "{v}");
    let (status, v) = post(
        "/v1/console/pause-all",
        &format!("{cookie}\r\nX-Tbsim-Console: yes"),
        "",
    );
    assert_eq!((status, code(&v)), (403, "console_header_required"), "{v}");
    // The cookie opens the console only: never the session API nor MCP.
    let (status, v) = post("/v1/sessions", cookie, SESSION_BODY);
    assert_eq!((status, code(&v)), (401, "unauthorized"), "{v}");
    let (status, _) = post(
        "/mcp",
        &format!("{cookie}\r\nAccept: application/json, text/event-stream"),
        MCP_INIT,
    );
    assert_eq!(status, 401);
    // Programs keep their bearer tokens.
    let (status, v) = post("/v1/sessions", "Authorization: Bearer agents", SESSION_BODY);
    assert_eq!(status, 201, "{v}");
}

fn fast_limits() -> Limits {
    Limits {
        header_timeout: Duration::from_millis(400),
        body_timeout: Duration::from_millis(600),
        max_connections: 4,
        max_streams: 3,
        max_streams_per_client: 2,
    }
}

/// Reads until the server closes `s` (or `limit` passes); returns what came and how
/// long it took.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, Duration) {
    let t0 = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    (buf, t0.elapsed())
}

/// Hole 6: idle and header-trickling connections were never closed (1,100 of them
/// took the server down). Now a head must arrive in time, however it trickles.
#[test]
fn trickling_and_idle_connections_are_closed_after_the_header_timeout() {
    let s = Srv::start(None, None, fast_limits());
    // A head sent a byte every 100 ms never completes in time.
    let mut trickle = TcpStream::connect(s.addr).unwrap();
    let t0 = Instant::now();
    let mut closed = false;
    for b in b"GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if trickle.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if t0.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    if !closed {
        let (_, took) = read_until_closed(&mut trickle, Duration::from_secs(5));
        assert!(took < Duration::from_secs(3), "still open after {took:?}");
    }
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    // A connection that never says anything, and one kept alive after a request.
    let mut idle = TcpStream::connect(s.addr).unwrap();
    let (_, took) = read_until_closed(&mut idle, Duration::from_secs(5));
    assert!(took < Duration::from_secs(2), "idle for {took:?}");
    let mut kept = TcpStream::connect(s.addr).unwrap();
    kept.write_all(b"GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let (buf, took) = read_until_closed(&mut kept, Duration::from_secs(5));
    assert_eq!(parse(&buf).0, 200);
    assert!(took < Duration::from_secs(2), "kept alive for {took:?}");
    // A body trickled in is cut off too.
    let mut slow = TcpStream::connect(s.addr).unwrap();
    slow.write_all(
        b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{",
    )
    .unwrap();
    let t0 = Instant::now();
    let mut cut = false;
    for b in br#""scenario":"meeting-only"}"# {
        std::thread::sleep(Duration::from_millis(150));
        if slow.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        let mut peek = [0u8; 1];
        slow.set_nonblocking(true).unwrap();
        let got = slow.peek(&mut peek);
        slow.set_nonblocking(false).unwrap();
        if matches!(got, Ok(n) if n > 0) || matches!(got, Ok(0)) {
            cut = true;
            break;
        }
    }
    assert!(cut, "a body trickled for {:?} was taken", t0.elapsed());
    let (buf, _) = read_until_closed(&mut slow, Duration::from_secs(5));
    if !buf.is_empty() {
        assert_eq!(parse(&buf).0, 400, "{}", String::from_utf8_lossy(&buf));
    }
}

/// Hole 6: connections past the cap are closed at once (so descriptors never run
/// out), and the server answers again as soon as idle ones time out.
#[test]
fn connections_past_the_cap_are_refused_and_the_server_keeps_answering() {
    let s = Srv::start(None, None, fast_limits());
    let held: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut extra = TcpStream::connect(s.addr).unwrap();
    let (buf, took) = read_until_closed(&mut extra, Duration::from_secs(5));
    assert!(took < Duration::from_millis(300), "{took:?}");
    assert!(
        buf.is_empty() || String::from_utf8_lossy(&buf).starts_with("HTTP/1.1 503"),
        "{}",
        String::from_utf8_lossy(&buf)
    );
    // The held ones time out; a real request then gets its answer.
    std::thread::sleep(Duration::from_millis(800));
    let (status, v) = s.send("GET /v1/tools HTTP/1.1\r\nHost: localhost", "");
    assert_eq!(status, 200, "{v}");
    drop(held);
}

/// Hole 6: 200 event streams cost 86% CPU; they are capped per client and in total.
#[test]
fn event_streams_are_capped_per_client() {
    let limits = Limits {
        header_timeout: Duration::from_secs(10),
        ..fast_limits()
    };
    let s = Srv::start(None, None, limits);
    let open = || {
        let mut t = TcpStream::connect(s.addr).unwrap();
        t.write_all(b"GET /v1/console/runs/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 512];
        let n = t.read(&mut buf).unwrap();
        (parse(&buf[..n]).0, t)
    };
    let (a, first) = open();
    let (b, _second) = open();
    assert_eq!((a, b), (200, 200));
    let (status, v) = s.send(
        "GET /v1/console/runs/stream HTTP/1.1\r\nHost: localhost",
        "",
    );
    assert_eq!((status, code(&v)), (429, "too_many_streams"), "{v}");
    // Ordinary requests still pass, and a closed stream gives its slot back.
    assert_eq!(
        s.send("GET /v1/console/runs HTTP/1.1\r\nHost: localhost", "")
            .0,
        200
    );
    drop(first);
    let t0 = Instant::now();
    loop {
        let (status, t) = open();
        if status == 200 {
            drop(t);
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the slot never came back"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn registry(roots: &[PathBuf], out: &std::path::Path, max: usize, unused: Duration) -> Registry {
    Registry::new(RegistryConfig {
        roots: ScenarioRoots::new(roots).unwrap(),
        out: out.to_path_buf(),
        max_sessions: max,
        idle_timeout: Duration::from_secs(600),
        unused_timeout: unused,
        keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
        view_cache: None,
    })
}

fn open_req(scenario: &str) -> tbsim_serve::registry::OpenRequest {
    tbsim_serve::registry::OpenRequest {
        scenario: scenario.into(),
        seed: None,
        hints: 0,
        feedback: Default::default(),
        max_steps: 50,
        agent: "mcp:walked-away".into(),
        tag: None,
        compress: false,
    }
}

/// Hole 8: 16 clients that initialised MCP sessions and went away held every slot
/// for the whole idle timeout (15 minutes). A session nobody has stepped gives its
/// slot up to a newcomer once it has been unused for the (short) unused timeout;
/// sessions in use keep theirs.
#[test]
fn sessions_never_stepped_give_their_slots_up_to_new_clients() {
    use tbsim_serve::registry::RegistryError;
    let out = tempfile::tempdir().unwrap();
    let reg = registry(&[scenarios()], out.path(), 2, Duration::from_millis(300));
    runtime().block_on(async {
        let (a, _) = reg.open(open_req("meeting-only")).await.unwrap();
        let (b, _) = reg.open(open_req("meeting-only")).await.unwrap();
        // Fresh sessions keep their slots.
        let r = reg.open(open_req("meeting-only")).await;
        assert!(matches!(r, Err(RegistryError::TooMany(2))), "{r:?}");
        // `b` is in use.
        let entry = reg.get(&b).unwrap();
        let call = tbsim_core::protocol::ToolCall {
            id: "c1".into(),
            name: "read_messages".into(),
            arguments: "{}".into(),
        };
        let d = tbsim_core::protocol::Decision { calls: vec![call] };
        entry.session.lock().await.step(d).await.unwrap();
        drop(entry);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let (c, _) = reg.open(open_req("meeting-only")).await.unwrap();
        assert!(reg.peek(&a).is_err(), "the unused session is gone");
        assert!(reg.peek(&b).is_ok() && reg.peek(&c).is_ok());
        // Its run was ended and written.
        assert!(out.path().join(&a).join("result.json").is_file());
        // `b` (used) and `c` (fresh) both keep theirs.
        let r = reg.open(open_req("meeting-only")).await;
        assert!(matches!(r, Err(RegistryError::TooMany(2))), "{r:?}");
        reg.close_all().await;
    });
}

/// Hole 8: a scenario that did not load was reported with the server's absolute
/// path to it; an agent sees the name it asked for.
#[test]
fn a_scenario_that_does_not_load_is_reported_without_host_paths() {
    let roots = tempfile::tempdir().unwrap();
    std::fs::write(roots.path().join("broken.ron"), "(name: \"broken\", oops").unwrap();
    std::fs::create_dir(roots.path().join("pack")).unwrap();
    std::fs::write(roots.path().join("pack/bad.ron"), "(name: 3)").unwrap();
    let out = tempfile::tempdir().unwrap();
    let reg = registry(
        &[roots.path().to_path_buf()],
        out.path(),
        4,
        Duration::from_secs(60),
    );
    let canonical = roots.path().canonicalize().unwrap();
    runtime().block_on(async {
        for name in ["broken", "pack/bad"] {
            let e = reg.open(open_req(name)).await.unwrap_err();
            let e = tbsim_serve::http::ApiError::from(e);
            assert_eq!((e.status.as_u16(), e.code), (422, "invalid_scenario"));
            for hidden in [roots.path(), canonical.as_path()] {
                let h = hidden.display().to_string();
                assert!(!e.message.contains(&h), "{h} in {}", e.message);
            }
            assert!(e.message.contains(&format!("{name}:1:")), "{}", e.message);
        }
    });
}

/// Hole 8: a restarted server listed the sessions of the one that died as
/// "running" for ever; they are "interrupted" (and their live view ends).
#[test]
fn a_restarted_servers_console_lists_dead_sessions_as_interrupted() {
    let out = tempfile::tempdir().unwrap();
    let first = registry(&[scenarios()], out.path(), 4, Duration::from_secs(60));
    runtime().block_on(async {
        let (id, _) = first.open(open_req("meeting-only")).await.unwrap();
        // A second server on the same directory: the first one is gone for it.
        let second = Arc::new(registry(
            &[scenarios()],
            out.path(),
            4,
            Duration::from_secs(60),
        ));
        let console = Arc::new(Console::new(
            Mode::Serve,
            second,
            Vec::new(),
            Arc::new(NoAgents),
        ));
        let c2 = Arc::clone(&console);
        let runs = tokio::task::spawn_blocking(move || c2.runs())
            .await
            .unwrap();
        let run = runs
            .iter()
            .find(|r| r.id == id)
            .expect("the dead session is listed");
        assert_eq!(run.state, "interrupted", "{run:?}");
        let d = console.detail(&id).unwrap();
        assert_eq!(d.summary.state, "interrupted");
        first.close_all().await;
        // Once its run is written (here: closed), it is finished like any other.
        let c2 = Arc::clone(&console);
        let d = tokio::task::spawn_blocking(move || c2.detail(&id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(d.summary.state, "finished");
    });
}

/// Hole 8: over stdio a 60 MB `tools/call` got no reply, and neither did garbage.
/// Every line now gets an answer: an error for one too long (under its id), a parse
/// error for one that is not JSON, an invalid request for JSON that is not a
/// message; good messages still go through.
#[test]
fn stdio_mcp_answers_every_line_and_caps_their_length() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let out = tempfile::tempdir().unwrap();
    let loaded = tbsim_scenario::load_file(&scenarios().join("meeting-only.ron")).unwrap();
    let spec = tbsim_serve::mcp::StdioSpec {
        scenario: Arc::new(loaded),
        seed: None,
        hints: 0,
        feedback: Default::default(),
        max_steps: 50,
        out: Some(out.path().join("run")),
        agent_name: None,
        tag: None,
    };
    runtime().block_on(async {
        let (mut to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let client = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(from_server).lines();
            let mut ask = async |line: Vec<u8>| -> Value {
                to_server.write_all(&line).await.unwrap();
                let got = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                    .await
                    .expect("an answer to every line")
                    .unwrap()
                    .expect("a line");
                serde_json::from_str(&got).unwrap()
            };
            let v = ask(b"garbage\n".to_vec()).await;
            assert_eq!((v["id"].clone(), v["error"]["code"].as_i64()), (Value::Null, Some(-32700)), "{v}");
            let mut big = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"write_file","arguments":{"content":""#.to_vec();
            big.extend(std::iter::repeat_n(b'a', 300_000));
            big.extend_from_slice(b"\"}}}\n");
            let v = ask(big).await;
            assert_eq!((v["id"].as_i64(), v["error"]["code"].as_i64()), (Some(42), Some(-32600)), "{v}");
            assert!(v["error"]["message"].as_str().unwrap().contains("too long"));
            let v = ask(b"{\"id\": 5, \"hello\": true}\n".to_vec()).await;
            assert_eq!((v["id"].as_i64(), v["error"]["code"].as_i64()), (Some(5), Some(-32600)), "{v}");
            let v = ask(MCP_INIT.as_bytes().iter().chain(b"\n").copied().collect()).await;
            assert_eq!(v["id"], 1, "{v}");
            assert_eq!(v["result"]["serverInfo"]["name"], "tbsim", "{v}");
            // The client goes away: the server ends the run.
            drop(to_server);
        });
        let served = tbsim_serve::mcp::serve_io(
            spec,
            server_in,
            server_out,
            64 * 1024,
            std::future::pending::<()>(),
        )
        .await
        .unwrap();
        client.await.unwrap();
        assert!(served.is_some(), "the world started and was written");
    });
}

/// A session being closed (taken out of the registry, its run not yet written) is
/// still readable: a client that polled the state of a session whose MCP client
/// was killed got "unknown session" in that window.
#[test]
fn a_session_being_closed_keeps_its_state_readable() {
    let out = tempfile::tempdir().unwrap();
    let reg = registry(&[scenarios()], out.path(), 2, Duration::from_secs(60));
    runtime().block_on(async {
        let (id, _) = reg.open(open_req("meeting-only")).await.unwrap();
        let entry = reg.remove(&id).unwrap();
        assert!(reg.get(&id).is_err(), "it holds no slot");
        let during = reg.state(&id).await;
        // Closed before asserting: a panic while the entry is held would hang.
        let (state, closed) = reg.retire(id.clone(), &entry).await;
        drop(entry);
        closed.unwrap();
        let during = during.expect("readable while being closed");
        assert!(!during.finished && during.result.is_none());
        assert!(state.finished && state.result.is_some());
        let after = reg.state(&id).await.unwrap();
        assert!(after.finished && after.result.is_some());
    });
}
