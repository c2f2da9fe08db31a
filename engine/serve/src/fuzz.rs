//! The HTTP fuzz target's entry point (`engine/fuzz/fuzz_targets/http_body.rs`),
//! shared with the smoke test in the normal suite so both drive the same code.
//!
//! An input is up to [`MAX_REQUESTS`] requests separated by [`HTTP_SEPARATOR`]. Each
//! request's first byte picks a route and method from [`ROUTES`] (the session API's
//! and the console's state-changing routes and MCP's JSON-RPC posts), its second byte
//! picks which headers go wrong ([`faults`]), and the rest is the body. The requests
//! go through the real router (`tbsim serve`'s, console merged in, behind the same
//! auth layer) in process, against a fresh registry serving the bundled scenarios
//! into a temporary output directory. What must hold whatever the bytes: no panic,
//! an answer to every request (within 20 s), never a 500, and every refusal of the session API and the console is a JSON
//! error (`{"error": {"code", "message"}}`).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::Value;
use tower_service::Service;

use crate::console::{AgentMaker, Console, Mode};
use crate::http::{ApiState, CONSOLE_HEADER, DEFAULT_MAX_BODY, router_with};
use crate::registry::{OpenRequest, Registry, RegistryConfig};
use crate::scenarios::ScenarioRoots;

/// The byte that separates an input's requests.
pub const HTTP_SEPARATOR: u8 = 0x1e;
/// Most requests one input makes (each may build a world).
pub const MAX_REQUESTS: usize = 4;
/// The agents' token the fuzzed server is started with.
const TOKEN: &str = "fuzz-agent-token";
/// The operators' (console) token.
const CONSOLE_TOKEN: &str = "fuzz-console-token";
/// How long one request may take (meeting-only builds in milliseconds).
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// The scenario sessions opened for `{id}` routes run (small: built in milliseconds).
const SCENARIO: &str = "meeting-only";

/// The routes an input can pick: method and path (`{id}` is replaced by the id of
/// a session the input opened, or of one opened for it; `{raw}` by the body's first
/// line, percent-encoded).
pub const ROUTES: &[(&str, &str)] = &[
    ("POST", "/v1/sessions"),
    ("POST", "/v1/sessions/{id}/step"),
    ("DELETE", "/v1/sessions/{id}"),
    ("GET", "/v1/sessions/{id}"),
    ("POST", "/v1/console/start"),
    ("POST", "/v1/console/pause-all"),
    ("POST", "/v1/console/resume-all"),
    ("POST", "/v1/console/runs/{id}/act"),
    ("POST", "/v1/console/runs/{id}/pause"),
    ("POST", "/v1/console/runs/{id}/resume"),
    ("POST", "/v1/console/runs/{id}/step"),
    ("POST", "/v1/console/runs/{id}/guide"),
    ("POST", "/v1/console/runs/{id}/fork"),
    ("POST", "/v1/console/runs/{id}/close"),
    ("POST", "/mcp?scenario=meeting-only"),
    ("POST", "/mcp"),
    ("DELETE", "/mcp"),
    // The path's id is the body's first line (percent-encoded), the body the rest.
    ("POST", "/v1/sessions/{raw}/step"),
    ("POST", "/v1/console/runs/{raw}/guide"),
    // Appended, so that older corpora keep their routes. The first line of the body
    // goes in the query: after the open session's id twice, more of an id or more
    // ids (`,`-separated), or batch names.
    ("GET", "/v1/console/compare?runs={id},{id}{raw}"),
    ("GET", "/v1/console/compare?batches={raw}"),
];

/// The header faults a request's second byte selects (bit `n` set: fault `n`).
pub mod faults {
    /// A wrong bearer token.
    pub const WRONG_TOKEN: u8 = 1;
    /// No bearer token at all.
    pub const NO_TOKEN: u8 = 1 << 1;
    /// `Content-Type: text/plain` instead of JSON.
    pub const TEXT_BODY: u8 = 1 << 2;
    /// An `Origin` of another site.
    pub const FOREIGN_ORIGIN: u8 = 1 << 3;
    /// No `X-Tbsim-Console: 1` (the console's state-changing routes want it).
    pub const NO_CONSOLE_HEADER: u8 = 1 << 4;
    /// A `Host` this server is not reached under.
    pub const FOREIGN_HOST: u8 = 1 << 5;
    /// `Sec-Fetch-Site: cross-site`.
    pub const CROSS_SITE: u8 = 1 << 6;
    /// The other method of the route (GET for POST, PUT for the rest), and for MCP
    /// an `Accept` without `text/event-stream` and no session id.
    pub const OTHER_METHOD: u8 = 1 << 7;
}

/// What stays the same between inputs: the runtime, the scenario roots and the
/// output directory (each input writes under its own subdirectory, removed after).
struct Fixture {
    rt: tokio::runtime::Runtime,
    roots: ScenarioRoots,
    out: tempfile::TempDir,
}

fn fixture() -> Option<&'static Fixture> {
    static F: OnceLock<Option<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        let dir = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../content/scenarios"
        ));
        let roots = ScenarioRoots::new(&[dir]).ok()?;
        let out = tempfile::tempdir().ok()?;
        Some(Fixture { rt, roots, out })
    })
    .as_ref()
}

/// The console's agents: none (a run a built-in agent drives would go on in the
/// background, so an input's outcome would depend on timing); `human:` runs, which
/// the console drives itself, are still offered.
struct NoAgents;

impl AgentMaker for NoAgents {
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
    fn make(
        &self,
        name: &str,
        _scenario: &tbsim_scenario::LoadedScenario,
        _seed: u64,
    ) -> Result<Box<dyn tbsim_engine::agent::Agent>, String> {
        Err(format!("no agent `{name}` in the fuzzed server"))
    }
}

/// One request of an input.
struct Req<'a> {
    route: usize,
    faults: u8,
    body: &'a [u8],
}

fn split(data: &[u8]) -> Vec<Req<'_>> {
    data.split(|b| *b == HTTP_SEPARATOR)
        .filter(|c| !c.is_empty())
        .take(MAX_REQUESTS)
        .map(|c| Req {
            route: usize::from(c[0]) % ROUTES.len(),
            faults: c.get(1).copied().unwrap_or(0),
            body: c.get(2..).unwrap_or_default(),
        })
        .collect()
}

/// `bytes` percent-encoded for a path segment (every byte but unreserved ones).
fn encode_segment(bytes: &[u8]) -> String {
    let mut s = String::new();
    for b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            s.push(char::from(*b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Drives the router with the requests `data` holds; panics if a response breaks
/// the rules in the module's documentation.
pub fn http_body(data: &[u8]) {
    let reqs = split(data);
    if reqs.is_empty() {
        return;
    }
    let Some(f) = fixture() else {
        return;
    };
    let Ok(out) = tempfile::tempdir_in(f.out.path()) else {
        return;
    };
    f.rt.block_on(drive(f, out.path().to_path_buf(), &reqs));
}

async fn drive(f: &Fixture, out: PathBuf, reqs: &[Req<'_>]) {
    let registry = Arc::new(Registry::new(RegistryConfig {
        roots: f.roots.clone(),
        out,
        max_sessions: 8,
        idle_timeout: Duration::from_secs(600),
        unused_timeout: Duration::from_secs(60),
        keep_finished: crate::registry::DEFAULT_KEEP_FINISHED,
        view_cache: None,
    }));
    let console = Arc::new(Console::new(
        Mode::Serve,
        Arc::clone(&registry),
        Vec::new(),
        Arc::new(NoAgents),
    ));
    let api = Arc::new(ApiState::new(
        Arc::clone(&registry),
        Some(TOKEN.into()),
        Some(CONSOLE_TOKEN.into()),
    ));
    let mut app = router_with(
        api,
        DEFAULT_MAX_BODY,
        Some(crate::console::routes::router(console)),
    );
    let mut session: Option<String> = None;
    let mut mcp_session: Option<String> = None;
    for r in reqs {
        let (method, template) = ROUTES[r.route];
        let mut body = r.body;
        let path = if template.contains("{raw}") {
            let (id, rest) = match body.iter().position(|b| *b == b'\n') {
                Some(n) => (&body[..n], &body[n + 1..]),
                None => (body, &[][..]),
            };
            body = rest;
            template.replace("{raw}", &encode_segment(id))
        } else {
            template.to_owned()
        };
        let path = if path.contains("{id}") {
            if session.is_none() {
                session = open(&registry).await;
            }
            let Some(id) = &session else {
                continue;
            };
            path.replace("{id}", id)
        } else {
            path
        };
        let console = path.starts_with("/v1/console/");
        let mcp = path.starts_with("/mcp");
        let other = r.faults & faults::OTHER_METHOD != 0;
        let method = match (method, other) {
            (m, false) => m,
            ("POST", true) => "GET",
            (_, true) => "PUT",
        };
        let mut b = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST))
            .uri(&path);
        let host = if r.faults & faults::FOREIGN_HOST != 0 {
            "evil.example"
        } else {
            "127.0.0.1:8080"
        };
        b = b.header(header::HOST, host);
        let token = if console { CONSOLE_TOKEN } else { TOKEN };
        if r.faults & faults::NO_TOKEN == 0 {
            let t = if r.faults & faults::WRONG_TOKEN != 0 {
                "wrong"
            } else {
                token
            };
            b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let ctype = if r.faults & faults::TEXT_BODY != 0 {
            "text/plain"
        } else {
            "application/json"
        };
        b = b.header(header::CONTENT_TYPE, ctype);
        b = b.header(header::CONTENT_LENGTH, body.len());
        if r.faults & faults::FOREIGN_ORIGIN != 0 {
            b = b.header(header::ORIGIN, "http://evil.example");
        }
        if r.faults & faults::CROSS_SITE != 0 {
            b = b.header("sec-fetch-site", "cross-site");
        }
        if console && r.faults & faults::NO_CONSOLE_HEADER == 0 {
            b = b.header(CONSOLE_HEADER, "1");
        }
        if mcp {
            if other {
                b = b.header(header::ACCEPT, "application/json");
            } else {
                b = b.header(header::ACCEPT, "application/json, text/event-stream");
                if let Some(s) = &mcp_session {
                    b = b.header("mcp-session-id", s.as_str());
                }
            }
        }
        let Ok(req) = b.body(Body::from(body.to_vec())) else {
            continue;
        };
        // A request that never answers would hang the fuzzer's unit (reported as a
        // timeout, without saying which request); this names it.
        let Ok(Ok(resp)) = tokio::time::timeout(ANSWER_WITHIN, app.call(req)).await else {
            panic!("{method} {path} gave no answer within {ANSWER_WITHIN:?}");
        };
        let status = resp.status();
        let sid = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        assert_ne!(
            status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{method} {path} answered 500: {}",
            String::from_utf8_lossy(&bytes)
        );
        if mcp {
            if sid.is_some() {
                mcp_session = sid;
            }
            continue;
        }
        if status.is_client_error() || status.is_server_error() {
            let v: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!(
                    "{method} {path} answered {status} with a body that is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            });
            assert!(
                v["error"]["code"].is_string() && v["error"]["message"].is_string(),
                "{method} {path} answered {status} without an error code and message: {v}"
            );
        } else if status.is_success() {
            // A session the input opened is the one later `{id}` routes use.
            let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if let Some(id) = v["session"].as_str().or(v["id"].as_str()) {
                session = Some(id.to_owned());
            }
        }
    }
    if let Some(s) = mcp_session {
        let end = Request::builder()
            .method(Method::DELETE)
            .uri("/mcp")
            .header(header::HOST, "127.0.0.1:8080")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header("mcp-session-id", s)
            .body(Body::empty());
        if let Ok(end) = end {
            let _ = app.call(end).await;
        }
    }
    registry.close_all().await;
}

/// A session of [`SCENARIO`] opened directly on the registry, for the `{id}` routes
/// of an input that opened none.
async fn open(registry: &Registry) -> Option<String> {
    let req = OpenRequest {
        scenario: SCENARIO.into(),
        seed: None,
        hints: 0,
        feedback: Default::default(),
        max_steps: 50,
        agent: "http:fuzz".into(),
        tag: None,
        compress: false,
    };
    registry.open(req).await.ok().map(|(id, _)| id)
}

/// Seeds: one well-formed request per route (bodies the handlers accept), a few
/// sequences (open, step, close), and requests with each header fault.
pub fn http_seeds() -> Vec<Vec<u8>> {
    let idx = |m: &str, p: &str| {
        ROUTES
            .iter()
            .position(|r| r.0 == m && r.1 == p)
            .and_then(|i| u8::try_from(i).ok())
            .unwrap_or(0)
    };
    let one = |m: &str, p: &str, faults: u8, body: &str| {
        let mut v = vec![idx(m, p), faults];
        v.extend_from_slice(body.as_bytes());
        v
    };
    let create = r#"{"scenario":"meeting-only","seed":3,"hints":1,"feedback":"detailed","max_steps":20,"agent":"fuzz-client"}"#;
    let step = r#"{"tool_calls":[{"name":"my_calendar","arguments":{}},{"id":"k","name":"send_message","arguments":"{\"to\":\"x\",\"text\":\"hi\"}"}]}"#;
    let start =
        r#"{"scenario":"meeting-only","agent":"human:fuzz","seed":1,"hints":0,"paused":true}"#;
    let guide = r#"{"by":"ops","kind":"hint","text":"look at the calendar"}"#;
    let fork = r#"{"step":1,"agent":"oracle"}"#;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"my_calendar","arguments":{}}}"#;
    let mut seeds = vec![
        one("POST", "/v1/sessions", 0, create),
        one("POST", "/v1/sessions", 0, r#"{"resume":"../x"}"#),
        one("POST", "/v1/sessions/{id}/step", 0, step),
        one("DELETE", "/v1/sessions/{id}", 0, ""),
        one("GET", "/v1/sessions/{id}", 0, ""),
        one("POST", "/v1/console/start", 0, start),
        one("POST", "/v1/console/pause-all", 0, ""),
        one("POST", "/v1/console/resume-all", 0, ""),
        one("POST", "/v1/console/runs/{id}/act", 0, step),
        one("POST", "/v1/console/runs/{id}/pause", 0, ""),
        one("POST", "/v1/console/runs/{id}/resume", 0, ""),
        one("POST", "/v1/console/runs/{id}/step", 0, ""),
        one("POST", "/v1/console/runs/{id}/guide", 0, guide),
        one("POST", "/v1/console/runs/{id}/fork", 0, fork),
        one("POST", "/v1/console/runs/{id}/close", 0, ""),
        one("POST", "/mcp?scenario=meeting-only", 0, init),
        one(
            "POST",
            "/v1/sessions/{raw}/step",
            0,
            &format!("../../etc\n{step}"),
        ),
        one(
            "POST",
            "/v1/console/runs/{raw}/guide",
            0,
            &format!("a/b\n{guide}"),
        ),
        one("GET", "/v1/console/compare?runs={id},{id}{raw}", 0, ",nope"),
        one("GET", "/v1/console/compare?batches={raw}", 0, "a,b"),
    ];
    let seq = |parts: &[Vec<u8>]| parts.join(&HTTP_SEPARATOR);
    seeds.push(seq(&[
        one("POST", "/v1/sessions", 0, create),
        one("POST", "/v1/sessions/{id}/step", 0, step),
        one("GET", "/v1/sessions/{id}", 0, ""),
        one("DELETE", "/v1/sessions/{id}", 0, ""),
    ]));
    seeds.push(seq(&[
        one("POST", "/v1/console/start", 0, start),
        one("POST", "/v1/console/runs/{id}/act", 0, step),
        one("POST", "/v1/console/runs/{id}/guide", 0, guide),
        one("POST", "/v1/console/runs/{id}/close", 0, ""),
    ]));
    seeds.push(seq(&[
        one("POST", "/mcp?scenario=meeting-only", 0, init),
        one("POST", "/mcp", 0, initialized),
        one("POST", "/mcp", 0, list),
        one("POST", "/mcp", 0, call),
    ]));
    seeds.push(seq(&[
        one("POST", "/v1/sessions/{id}/step", 0, step),
        one("GET", "/v1/console/compare?runs={id},{id}{raw}", 0, ""),
    ]));
    for bit in 0..8 {
        seeds.push(one("POST", "/v1/console/start", 1 << bit, start));
        seeds.push(one("POST", "/v1/sessions/{id}/step", 1 << bit, step));
    }
    seeds
}
