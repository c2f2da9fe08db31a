//! `tbsim mcp` (stdio) and `/mcp` in `tbsim serve` (streamable HTTP) with a real MCP
//! client (rmcp's): the tools are the catalogue, replaying the oracle's decisions
//! through `tools/call` reproduces its run (scores, trajectory and digest once the
//! header names the same agent), refused calls are tool results with `isError`,
//! resources hold only what the agent was shown; and a raw JSON-RPC client (what a
//! stock client sends) works over stdio.

// Logging and `resources/subscribe` are deprecated from protocol 2026-07-28 on, but
// are those of the handshake versions the server offers.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    LoggingMessageNotificationParam, ProtocolVersion, ReadResourceRequestParams, RequestMetaObject,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::{Value, json};
use tbsim_engine::trajectory::digest_lines;

use crate::util::{lines_as, root, run_agent, spawn_serve, tbsim, tbsim_command, text};

/// The client name every test connects as; runs are recorded as `mcp:tbsim-it`.
const CLIENT: &str = "tbsim-it";

/// An MCP client that keeps the log messages and resource updates it receives.
#[derive(Debug, Clone, Default)]
struct Client {
    logs: Arc<Mutex<Vec<Value>>>,
    updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(CLIENT, "1.0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        assert_eq!(params.logger.as_deref(), Some("tbsim"));
        self.logs.lock().unwrap().push(params.data);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }
}

type Connection = RunningService<RoleClient, Client>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The oracle's decisions, as recorded: (call id, tool, arguments) — one call each.
fn recorded_calls(dir: &Path) -> Vec<(String, String, Value)> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "decision")
        .map(|v| {
            let calls = v["calls"].as_array().unwrap();
            assert_eq!(calls.len(), 1, "the oracle makes one call per decision");
            let c = &calls[0];
            let args: Value = serde_json::from_str(c["arguments"].as_str().unwrap()).unwrap();
            (
                c["id"].as_str().unwrap().to_owned(),
                c["name"].as_str().unwrap().to_owned(),
                args,
            )
        })
        .collect()
}

/// The trajectory's lines with the header's agent name replaced.
fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn result_without_agent(dir: &Path) -> Value {
    let mut r = read_json(&dir.join("result.json"));
    let m = r.as_object_mut().unwrap();
    m.remove("agent");
    m.remove("digest");
    r
}

/// Every string in `v` (values, not keys).
fn leaves(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        _ => {}
    }
}

/// A tool result's JSON text and whether it is an error.
fn call_text(result: &impl serde::Serialize) -> (Value, bool) {
    let v = serde_json::to_value(result).unwrap();
    let text = v["content"][0]["text"].as_str().unwrap();
    (
        serde_json::from_str(text).unwrap(),
        v["isError"].as_bool().unwrap_or(false),
    )
}

/// `initialize`'s instructions say how the world works and never carry the
/// briefing: that comes once, with the first tool result.
fn assert_instructions_are_generic(conn: &Connection) {
    let info = conn.peer_info().expect("initialised");
    let instructions = info.instructions.clone().expect("instructions");
    assert!(instructions.contains("first tool result"), "{instructions}");
    assert!(!instructions.contains("Briefing:"), "{instructions}");
}

async fn call(conn: &Connection, id: Option<&str>, name: &str, args: Value) -> (Value, bool) {
    let mut p = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(m) = args {
        p = p.with_arguments(m);
    }
    if let Some(id) = id {
        let mut meta = serde_json::Map::new();
        meta.insert("tbsim/call_id".into(), json!(id));
        p.meta = Some(RequestMetaObject::from(meta));
    }
    let r = conn.call_tool(p).await.expect("tools/call answers");
    call_text(&r)
}

/// The resources, each as JSON.
async fn resources(conn: &Connection) -> Vec<(String, Value)> {
    let list = conn.list_resources(None).await.unwrap();
    let mut out = Vec::new();
    for r in list.resources {
        let read = conn
            .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
            .await
            .unwrap();
        let v = serde_json::to_value(&read).unwrap();
        let text = v["contents"][0]["text"].as_str().unwrap();
        out.push((r.uri, serde_json::from_str(text).unwrap()));
    }
    out
}

/// `tools/list` is `tbsim tools --json`: same names and schemas; each description
/// is the catalogue's with the tool's time cost.
async fn assert_tools_are_the_catalogue(conn: &Connection) {
    let o = tbsim(&["tools", "--json"], &root());
    assert!(o.status.success());
    let want: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let got = conn.list_all_tools().await.unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        let g = serde_json::to_value(g).unwrap();
        assert_eq!(g["name"], w["name"]);
        let d = g["description"].as_str().unwrap();
        assert!(d.starts_with(w["description"].as_str().unwrap()), "{d}");
        let cost = format!("Time cost: {} simulated minute", w["cost_minutes"]);
        assert!(d.contains(&cost), "{d}");
        assert_eq!(g["inputSchema"], w["parameters"], "{}", w["name"]);
        assert_eq!(g["_meta"]["tbsim/cost_minutes"], w["cost_minutes"]);
        assert_eq!(g["_meta"]["tbsim/family"], w["family"]);
    }
}

/// Replays the oracle's run in `oracle` through `conn`, then checks the refused
/// calls, the notifications and the resources. Returns nothing; the caller checks
/// the run directory.
async fn replay_and_probe(conn: &Connection, client: &Client, oracle: &Path, name: &str) {
    // What the agent has been shown: every tool result (the first has the briefing).
    assert_instructions_are_generic(conn);
    let mut shown = BTreeSet::new();
    conn.subscribe(SubscribeRequestParams::new("tbsim://notifications"))
        .await
        .unwrap();
    let calls = recorded_calls(oracle);
    let mut notes = 0;
    for (i, (id, tool, args)) in calls.iter().enumerate() {
        let (body, is_error) = call(conn, Some(id), tool, args.clone()).await;
        assert_eq!(is_error, body["ok"] != true, "{name} call {i}: {body}");
        assert_eq!(body["call_id"], json!(id));
        assert_eq!(
            body.get("run_over").is_some(),
            i + 1 == calls.len(),
            "{name} call {i}"
        );
        assert_eq!(body.get("briefing").is_some(), i == 0, "{name} call {i}");
        if i + 1 == calls.len() {
            // The call that ended the run reports its final result, per task.
            let fin = &body["final"];
            assert_eq!(fin["checkpoint_score"], 1.0, "{name}: {body}");
            assert_eq!(fin["success"], true, "{name}: {body}");
            assert!(
                !fin["tasks"].as_array().unwrap().is_empty(),
                "{name}: {body}"
            );
        }
        notes += body["notifications"].as_array().unwrap().len();
        leaves(&body, &mut shown);
    }
    // The run is over: a further call is refused as a tool result, not a JSON-RPC error.
    let (body, is_error) = call(conn, None, "my_tasks", json!({})).await;
    assert!(is_error, "{name}: {body}");
    assert_eq!(body["error"]["kind"], "run_over", "{name}: {body}");
    crate::plain_text::assert_plain(name, body["error"]["message"].as_str().unwrap());
    // Every notification also came as a log message (the client handles them on
    // tasks of their own, so give it a moment).
    for _ in 0..100 {
        if client.logs.lock().unwrap().len() >= notes {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(client.logs.lock().unwrap().len(), notes, "{name}");
    if notes > 0 {
        assert!(
            client
                .updated
                .lock()
                .unwrap()
                .iter()
                .all(|u| u == "tbsim://notifications"),
            "{name}: only the subscribed resource is announced"
        );
        assert!(!client.updated.lock().unwrap().is_empty(), "{name}");
    }
    // The resources hold nothing the agent was not shown.
    let res = resources(conn).await;
    let uris: Vec<&str> = res.iter().map(|(u, _)| u.as_str()).collect();
    for want in [
        "tbsim://tasks",
        "tbsim://calendar",
        "tbsim://mailbox",
        "tbsim://briefing",
    ] {
        assert!(uris.contains(&want), "{name}: {uris:?}");
    }
    for (uri, v) in &res {
        let mut got = BTreeSet::new();
        leaves(v, &mut got);
        let unseen: Vec<&String> = got.difference(&shown).collect();
        assert!(
            unseen.is_empty(),
            "{name}: {uri} shows what the agent never saw: {unseen:?}"
        );
    }
    let tasks = &res.iter().find(|(u, _)| u == "tbsim://tasks").unwrap().1;
    assert!(
        !tasks["tasks"].as_array().unwrap().is_empty(),
        "{name}: {tasks}"
    );
}

/// The MCP run reproduces the oracle's: result.json but for the agent, the same
/// trajectory once the header names the same agent (hence the same digest), and
/// `tbsim replay` passes on it.
fn assert_same_run(dir: &Path, oracle: &Path, name: &str, agent: &str) {
    assert_eq!(
        result_without_agent(dir),
        result_without_agent(oracle),
        "{name}: same result.json"
    );
    let result = read_json(&dir.join("result.json"));
    assert_eq!(result["agent"], format!("mcp:{agent}"));
    let served = lines_as(dir, "oracle");
    assert_eq!(
        served,
        lines_as(oracle, "oracle"),
        "{name}: same trajectory"
    );
    assert_eq!(
        digest_lines(served.iter().map(String::as_str)),
        read_json(&oracle.join("result.json"))["digest"]
            .as_str()
            .unwrap(),
        "{name}: same digest"
    );
    // The digest recorded is that of the file as written (with `mcp:<client>`).
    let own = lines_as(dir, &format!("mcp:{agent}"));
    assert_eq!(
        digest_lines(own.iter().map(String::as_str)),
        result["digest"].as_str().unwrap()
    );
    assert_eq!(
        read_json(&dir.join("run.json"))["agent"],
        format!("mcp:{agent}")
    );
    assert!(dir.join("scenario.ron").is_file());
    let o = tbsim(&["replay", dir.to_str().unwrap()], &root());
    assert!(o.status.success(), "{name}: {}", text(&o).1);
    let report = dir.with_extension("report");
    let o = tbsim(
        &[
            "report",
            dir.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{name}: {}", text(&o).1);
    assert!(
        text(&o).0.contains(&format!("mcp:{agent}")),
        "{name}: {}",
        text(&o).0
    );
}

#[test]
fn stdio_clients_replaying_the_oracle_reproduce_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime();
    for name in ["busy-day", "two-days", "kb-fix-medium"] {
        let scenario = root().join(format!("content/scenarios/{name}.ron"));
        let oracle = tmp.path().join(format!("oracle-{name}"));
        run_agent("oracle", &oracle, &[&scenario]);
        let dir = tmp.path().join(format!("mcp-{name}"));
        rt.block_on(async {
            let cmd = tbsim_command(
                &[
                    "mcp",
                    scenario.to_str().unwrap(),
                    "--out",
                    dir.to_str().unwrap(),
                ],
                &root(),
            );
            let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let client = Client::default();
            let conn = client.clone().serve(transport).await.expect("initialises");
            if name == "busy-day" {
                assert_tools_are_the_catalogue(&conn).await;
            }
            replay_and_probe(&conn, &client, &oracle, name).await;
            conn.cancel().await.unwrap();
        });
        assert_same_run(&dir, &oracle, name, CLIENT);
    }
}

/// A `tbsim serve` on a free loopback port, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(out: &Path, extra: &[&str]) -> Server {
        let (child, addr) = spawn_serve(out, extra);
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect_http(url: &str, token: Option<&str>) -> Result<(Connection, Client), String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(t) = token {
        config = config.auth_header(t);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = Client::default();
    let conn = client
        .clone()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())?;
    Ok((conn, client))
}

#[test]
fn http_clients_replaying_the_oracle_reproduce_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let server = Server::start(&out, &["--token", "s3cret", "--max-sessions", "2"]);
    let rt = runtime();
    for name in ["busy-day", "meeting-check-sum"] {
        let scenario = root().join(format!("content/scenarios/{name}.ron"));
        let oracle = tmp.path().join(format!("oracle-{name}"));
        run_agent("oracle", &oracle, &[&scenario]);
        // `agent=` names the run's agent (the client's name otherwise).
        let (url, agent) = match name {
            "busy-day" => (
                format!("http://{}/mcp?scenario={name}", server.addr),
                CLIENT,
            ),
            _ => (
                format!("http://{}/mcp?scenario={name}&agent=model%20b", server.addr),
                "model-b",
            ),
        };
        let id = rt.block_on(async {
            let (conn, client) = connect_http(&url, Some("s3cret"))
                .await
                .expect("initialises");
            let info = conn.peer_info().unwrap();
            let id = info.meta.as_ref().unwrap().0["tbsim/session"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_tools_are_the_catalogue(&conn).await;
            replay_and_probe(&conn, &client, &oracle, name).await;
            conn.cancel().await.unwrap();
            id
        });
        assert_same_run(&out.join(id), &oracle, name, agent);
    }
    rt.block_on(async {
        // No token, or the wrong one: refused before any world starts.
        let url = format!("http://{}/mcp?scenario=busy-day", server.addr);
        assert!(connect_http(&url, None).await.is_err());
        assert!(connect_http(&url, Some("wrong")).await.is_err());
        // No scenario, an unknown one, one outside the served roots: initialize fails.
        for q in [
            "",
            "?scenario=no-such",
            "?scenario=..%2F..%2FCargo.toml",
            "?scenario=busy-day&colour=red",
        ] {
            let url = format!("http://{}/mcp{q}", server.addr);
            assert!(connect_http(&url, Some("s3cret")).await.is_err(), "{q}");
        }
        // The session cap is the server's: two worlds, then the third is refused.
        let url = format!("http://{}/mcp?scenario=meeting-only&seed=3", server.addr);
        let (a, _) = connect_http(&url, Some("s3cret")).await.expect("first");
        let (b, _) = connect_http(&url, Some("s3cret")).await.expect("second");
        assert!(
            connect_http(&url, Some("s3cret")).await.is_err(),
            "over the cap"
        );
        // Closing one MCP session frees its slot and ends its run as abandoned.
        let (body, is_error) = call(&a, None, "list_colleagues", json!({})).await;
        assert!(!is_error, "{body}");
        let a_id = a.peer_info().unwrap().meta.as_ref().unwrap().0["tbsim/session"]
            .as_str()
            .unwrap()
            .to_owned();
        a.cancel().await.unwrap();
        let mut freed = None;
        for _ in 0..50 {
            if let Ok(c) = connect_http(&url, Some("s3cret")).await {
                freed = Some(c);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let (c, _) = freed.expect("a closed MCP session frees its slot");
        c.cancel().await.unwrap();
        b.cancel().await.unwrap();
        let dir = out.join(&a_id);
        for _ in 0..100 {
            if dir.join("result.json").is_file() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let result = read_json(&dir.join("result.json"));
        assert_eq!(result["end_reason"], "abandoned");
        assert_eq!(result["steps"], 1);
        assert_eq!(result["agent"], format!("mcp:{CLIENT}"));
    });
}

/// A raw JSON-RPC conversation over stdio, one message a line.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Raw {
    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The response to request `id` (notifications before it are skipped).
    fn response(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "EOF before response {id}"
            );
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert_eq!(v["jsonrpc"], "2.0");
            if v["id"] == json!(id) {
                return v;
            }
            assert!(v.get("id").is_none(), "unexpected response {v}");
        }
    }

    fn call(&mut self, id: u64, name: &str, args: Value) -> (Value, bool) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": args}}));
        let r = self.response(id);
        call_text(&r["result"])
    }
}

#[test]
fn a_stock_client_speaking_raw_json_rpc_over_stdio_works() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("run");
    let mut child = tbsim_command(
        &[
            "mcp",
            "content/scenarios/meeting-only.ron",
            "--out",
            dir.to_str().unwrap(),
        ],
        &root(),
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
    };
    raw.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw client", "version": "0.1"}}}),
    );
    let init = raw.response(1);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "tbsim");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    assert!(init["result"]["capabilities"]["resources"].is_object());
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("first tool result")
    );
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = raw.response(2);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, tbsim_core::protocol::TOOL_NAMES);
    let (body, is_error) = raw.call(3, "my_tasks", json!({}));
    assert!(!is_error, "{body}");
    assert_eq!(body["call_id"], "mcp-1");
    assert!(body["briefing"]["you"].is_string(), "{body}");
    // Calls sent without waiting for the previous result are made in the order sent.
    for (id, tool) in [
        (20, "my_calendar"),
        (21, "list_colleagues"),
        (22, "my_tasks"),
    ] {
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}}));
    }
    for (id, n) in [(20, 2), (21, 3), (22, 4)] {
        let (body, is_error) = call_text(&raw.response(id)["result"]);
        assert!(!is_error, "{body}");
        assert_eq!(body["call_id"], format!("mcp-{n}"), "{body}");
    }
    // Arguments that fail the schema and unknown tools are tool results with isError.
    let (body, is_error) = raw.call(4, "send_message", json!({"to": 5}));
    assert!(is_error, "{body}");
    assert_eq!(body["error"]["kind"], "schema", "{body}");
    let (body, is_error) = raw.call(5, "no_such_tool", json!({}));
    assert!(is_error, "{body}");
    assert_eq!(body["error"]["kind"], "unknown_tool", "{body}");
    // Malformed protocol messages are JSON-RPC errors.
    raw.send(json!({"jsonrpc": "2.0", "id": 6, "method": "no/such/method"}));
    assert!(raw.response(6)["error"]["code"].is_i64());
    raw.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "wait", "arguments": 5}}));
    assert!(raw.response(7)["error"]["code"].is_i64());
    raw.send(json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": "tbsim://answers"}}));
    assert!(raw.response(8)["error"]["code"].is_i64());
    // Turns the model took without a tool call come with the next call and are
    // recorded as `tbsim run` records them; a bad count is refused, not recorded.
    raw.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "my_tasks", "arguments": {}, "_meta": {"tbsim/empty_turns": 2}}}));
    let (body, is_error) = call_text(&raw.response(10)["result"]);
    assert!(!is_error, "{body}");
    raw.send(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "my_tasks", "arguments": {}, "_meta": {"tbsim/empty_turns": -1}}}));
    let (body, is_error) = call_text(&raw.response(11)["result"]);
    assert!(is_error, "{body}");
    assert_eq!(body["error"]["kind"], "schema", "{body}");
    // Trailing empty turns (a model whose last turns only talked) come with a
    // resource read; a bad count there is a JSON-RPC error and records nothing.
    raw.send(
        json!({"jsonrpc": "2.0", "id": 12, "method": "resources/read",
        "params": {"uri": "tbsim://tasks", "_meta": {"tbsim/empty_turns": 3}}}),
    );
    assert!(raw.response(12)["result"]["contents"].is_array());
    raw.send(
        json!({"jsonrpc": "2.0", "id": 13, "method": "resources/read",
        "params": {"uri": "tbsim://tasks", "_meta": {"tbsim/empty_turns": "many"}}}),
    );
    assert!(raw.response(13)["error"]["code"].is_i64());
    let (body, is_error) = raw.call(9, "finish", json!({}));
    assert!(!is_error, "{body}");
    assert_eq!(body["run_over"], true, "{body}");
    assert_eq!(body["end_reason"], "finished", "{body}");
    drop(raw.stdin);
    let status = raw.child.wait().unwrap();
    assert!(status.success());
    let result = read_json(&dir.join("result.json"));
    assert_eq!(result["agent"], "mcp:raw-client");
    assert_eq!(result["end_reason"], "finished");
    assert_eq!(result["tool_calls"], 8, "{result}");
    assert_eq!(result["empty_turns"], 5, "{result}");
    assert_eq!(result["steps"], 13, "{result}");
    assert_eq!(result["errors"]["schema"], 1, "{result}");
    assert_eq!(result["errors"]["unknown_tool"], 1, "{result}");
    let o = tbsim(&["replay", dir.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn a_client_that_leaves_early_abandons_its_run_which_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let rt = runtime();
    rt.block_on(async {
        let cmd = tbsim_command(
            &[
                "mcp",
                "content/scenarios/busy-day.ron",
                "--out",
                dir.to_str().unwrap(),
            ],
            &root(),
        );
        let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let conn = Client::default().serve(transport).await.unwrap();
        let (body, is_error) = call(&conn, None, "list_colleagues", json!({})).await;
        assert!(!is_error, "{body}");
        conn.cancel().await.unwrap();
    });
    // The server writes the run once it sees the client go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.join("result.json").is_file() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let result = read_json(&dir.join("result.json"));
    assert_eq!(result["end_reason"], "abandoned");
    assert_eq!(result["steps"], 1);
    let o = tbsim(&["replay", dir.to_str().unwrap()], &root());
    assert!(o.status.success(), "{}", text(&o).1);
}

/// One raw HTTP/1.1 exchange with `/mcp` (a new connection, closed after): the
/// status, the head in lower case and the body (de-chunked).
fn mcp_exchange(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    use std::io::Read as _;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let head = head.to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let body = if head.contains("transfer-encoding: chunked") {
        crate::serve::dechunk(body)
    } else {
        body.to_owned()
    };
    (status, head, body)
}

/// The JSON-RPC message with `id` in a response body: the body itself (JSON) or
/// one of its `data:` lines (an event stream).
fn rpc_answer(body: &str, id: &Value) -> Value {
    std::iter::once(body)
        .chain(body.lines().filter_map(|l| l.strip_prefix("data:")))
        .filter_map(|t| serde_json::from_str::<Value>(t.trim()).ok())
        .find(|v| v["id"] == *id)
        .unwrap_or_else(|| panic!("no answer to {id} in {body:?}"))
}

#[test]
fn http_tool_calls_are_answered_as_one_json_body_and_keep_the_session_open() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    // A 12 s idle timeout (a call through rmcp every 3 s): rmcp closes a session its worker has not heard from for
    // that long, so calls answered without it must still keep the session open. The server answers `initialized`
    // once the session is registered, so the first call is answered as JSON unless 3 s pass before it is sent.
    let server = Server::start(&out, &["--idle-timeout", "12"]);
    let accept = ("Accept", "application/json, text/event-stream");
    let json_ct = ("Content-Type", "application/json");
    let (status, head, body) = mcp_exchange(
        &server.addr,
        "POST",
        "/mcp?scenario=busy-day",
        &[accept, json_ct],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-http", "version": "1"}}})
        .to_string(),
    );
    assert_eq!(status, 200, "{head}\n{body}");
    let init = rpc_answer(&body, &json!(1));
    let run = init["result"]["_meta"]["tbsim/session"]
        .as_str()
        .unwrap()
        .to_owned();
    let sid = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("a session id")
        .trim()
        .to_owned();
    let session = ("Mcp-Session-Id", sid.as_str());
    let version = ("MCP-Protocol-Version", "2025-06-18");
    let post = |msg: Value, extra: &[(&str, &str)]| {
        let mut h = vec![accept, json_ct, session, version];
        h.extend_from_slice(extra);
        mcp_exchange(&server.addr, "POST", "/mcp", &h, &msg.to_string())
    };
    let (status, _, _) = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &[],
    );
    assert_eq!(status, 202);

    let call = |id: u64, meta: Option<&str>| {
        let mut params = json!({"name": "my_tasks", "arguments": {}});
        if let Some(m) = meta {
            params["_meta"] = json!({"tbsim/call_id": m});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    // A tool call: one JSON body, its id echoed, the engine's result inside.
    let (status, head, body) = post(call(2, Some("raw-1")), &[]);
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["jsonrpc"], "2.0");
    let (text, is_error) = call_text(&answer["result"]);
    assert!(!is_error, "{text}");
    assert_eq!(text["ok"], true);
    assert!(
        text["briefing"].is_object(),
        "the first result has the briefing"
    );

    // Other requests, and calls whose headers rmcp checks, are rmcp's as before.
    let (status, head, body) = post(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        &[],
    );
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(rpc_answer(&body, &json!(3))["result"]["tools"].is_array());
    let (status, _, _) = mcp_exchange(
        &server.addr,
        "POST",
        "/mcp",
        &[
            accept,
            json_ct,
            session,
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        &call(4, None).to_string(),
    );
    assert_eq!(status, 400, "an unknown protocol version is refused");
    let (status, head, _) = mcp_exchange(
        &server.addr,
        "POST",
        "/mcp",
        &[("Accept", "application/json"), json_ct, session, version],
        &call(5, None).to_string(),
    );
    assert_eq!(status, 406, "rmcp's Accept rule holds: {head}");

    // Busy for longer than the idle timeout: every call answered, most as JSON,
    // and one every 3 s (a quarter of the timeout) through rmcp.
    let start = std::time::Instant::now();
    let (mut as_json, mut as_stream, mut id) = (0, 0, 10);
    while start.elapsed() < std::time::Duration::from_secs(14) {
        id += 1;
        let (status, head, body) = post(call(id, None), &[]);
        assert_eq!(status, 200, "call {id} at {:?}: {body}", start.elapsed());
        let (text, is_error) = call_text(&rpc_answer(&body, &json!(id))["result"]);
        assert!(!is_error && text["ok"] == true, "{text}");
        if head.contains("content-type: application/json") {
            as_json += 1;
        } else {
            as_stream += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // How many of each depends on how fast calls are (a loaded CI machine): the
    // session must stay open past the timeout, and rmcp must be kept informed.
    assert!(as_stream >= 1, "{as_stream} calls through rmcp in 14 s");
    assert!(as_json + as_stream >= 2, "{as_json} answered as JSON");

    // Deleted: gone for both paths.
    let (status, _, _) = mcp_exchange(&server.addr, "DELETE", "/mcp", &[session], "");
    assert_eq!(status, 204);
    let (status, _, _) = post(call(99, None), &[]);
    assert_eq!(status, 404);

    // Every call is in the run, in order, with the id asked for.
    let dir = out.join(&run);
    for _ in 0..100 {
        if dir.join("result.json").is_file() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let calls = recorded_calls(&dir);
    assert_eq!(calls[0].0, "raw-1");
    assert_eq!(calls.len(), 1 + (id - 10) as usize, "{calls:?}");
    assert!(calls.iter().all(|(_, name, _)| name == "my_tasks"));
}
