//! After a session: runs labelled with a tag (`--tag`, `tag`, `tag=`) that
//! `tbsim report` groups by; finished sessions readable with their full result
//! (kept in memory for `--keep-finished`, then read back from `--out`); and an MCP
//! client that goes away without saying so (a real client whose process dies)
//! closing its session at once, freeing its slot.

use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::serve::{Server, error_code};
use crate::util::{root, tbsim, text};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Polls `GET /v1/sessions/{id}` until the session reports `finished`.
fn finished_state(server: &Server, id: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (status, v) = server.request("GET", &format!("/v1/sessions/{id}"), None);
        if status == 200 && v["finished"] == true && v["result"].is_object() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "not finished in time: {status} {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn run_and_report_group_by_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("runs");
    for (tag, sub) in [("v1", "a"), ("v2", "b")] {
        let dir = out.join(sub);
        let o = tbsim(
            &[
                "run",
                "meeting-only",
                "--agent",
                "oracle",
                "--tag",
                tag,
                "--out",
                dir.to_str().unwrap(),
            ],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", text(&o).1);
        assert_eq!(read_json(&dir.join("run.json"))["tag"], tag);
    }
    let o = tbsim(&["report", out.to_str().unwrap()], tmp.path());
    let (md, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(md.contains("| oracle [v1] |"), "{md}");
    assert!(md.contains("| oracle [v2] |"), "{md}");

    // A tag is one plain word: anything else is refused before a run starts.
    let o = tbsim(
        &["run", "meeting-only", "--agent", "oracle", "--tag", "a b"],
        tmp.path(),
    );
    assert!(!o.status.success());
    assert!(text(&o).1.contains("a tag must be"), "{}", text(&o).1);
}

#[test]
fn finished_sessions_stay_readable_then_are_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    let server = Server::start(&out, &[]);
    let (status, v) = server.post(
        "/v1/sessions",
        &json!({"scenario": "meeting-only", "agent": "m", "tag": "prompt-v2"}),
    );
    assert_eq!(status, 201, "{v}");
    let id = v["session"].as_str().unwrap().to_owned();
    assert_eq!(
        read_json(&out.join(&id).join("run.json"))["tag"],
        "prompt-v2"
    );
    let (status, v) = server.post(
        "/v1/sessions",
        &json!({"scenario": "meeting-only", "tag": "a/b"}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a tag must be")
    );

    let (status, v) = server.post(
        &format!("/v1/sessions/{id}/step"),
        &json!({"tool_calls": [{"name": "list_colleagues"}]}),
    );
    assert_eq!(status, 200, "{v}");
    let (status, deleted) = server.request("DELETE", &format!("/v1/sessions/{id}"), None);
    assert_eq!(status, 200, "{deleted}");

    // Gone from the registry, still readable: the final result, per task.
    let (status, kept) = server.request("GET", &format!("/v1/sessions/{id}"), None);
    assert_eq!(status, 200, "{kept}");
    assert_eq!(kept["finished"], true);
    assert_eq!(kept["tag"], "prompt-v2");
    assert_eq!(kept["result"]["end_reason"], "abandoned");
    assert_eq!(kept["result"]["steps"], 1);
    let tasks = kept["result"]["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty(), "{kept}");
    assert!(tasks[0]["key"].is_string() && tasks[0]["total"].is_number());
    assert_eq!(kept, deleted);
    let result = read_json(&out.join(&id).join("result.json"));
    assert_eq!(
        kept["result"]["checkpoint_score"],
        result["checkpoint_score"]
    );
    assert_eq!(kept["result"]["digest"], result["digest"]);
    drop(server);

    // A new server over the same directory, keeping nothing in memory: the state is
    // read back from the run directory, the same as it was.
    let server = Server::start(&out, &["--keep-finished", "0"]);
    let (status, back) = server.request("GET", &format!("/v1/sessions/{id}"), None);
    assert_eq!(status, 200, "{back}");
    assert_eq!(back["result"], kept["result"]);
    assert_eq!(back["tag"], "prompt-v2");
    assert_eq!(back["agent"], "http:m");
    assert_eq!(back["steps"], 1);
    assert_eq!(back["terminated"], false);
    assert_eq!(back["truncated"], true);
    assert_eq!(back["progress"]["step"], 1);
    assert_eq!(back["progress"]["end_reason"], "abandoned");
    // No run of that name: 404 as before.
    let (status, v) = server.request("GET", &format!("/v1/sessions/{}", "0".repeat(32)), None);
    assert_eq!(status, 404, "{v}");
    assert_eq!(error_code(&v), "unknown_session");
}

#[derive(Debug, Clone, Default)]
struct Walker;

impl rmcp::ClientHandler for Walker {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("walker", "1.0"),
        )
    }
}

#[test]
fn an_mcp_client_that_dies_frees_its_slot_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("serve");
    // One slot, and an idle timeout far beyond the test: only the disconnect can
    // free it.
    let server = Server::start(
        &out,
        &[
            "--max-sessions",
            "1",
            "--idle-timeout",
            "3600",
            "--unused-timeout",
            "3600",
        ],
    );
    let url = format!(
        "http://{}/mcp?scenario=meeting-only&agent=model-a&tag=t1",
        server.addr
    );
    // The client's runtime is torn down without a goodbye (no DELETE): its
    // connections close as a killed process's would.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let id = rt.block_on(async {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url.clone()),
        );
        let conn = Walker.serve(transport).await.expect("initialises");
        let id = conn.peer_info().unwrap().meta.as_ref().unwrap().0["tbsim/session"]
            .as_str()
            .unwrap()
            .to_owned();
        let r = conn
            .call_tool(CallToolRequestParams::new("list_colleagues"))
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true));
        // Leak the connection: nothing of it runs once the runtime is gone.
        std::mem::forget(conn);
        id
    });
    // The slot is taken while the client is there.
    let (status, v) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 429, "{v}");
    let gone = Instant::now();
    rt.shutdown_background();

    let state = finished_state(&server, &id, Duration::from_secs(30));
    let took = gone.elapsed();
    assert!(took < Duration::from_secs(15), "closed after {took:?}");
    assert_eq!(state["result"]["end_reason"], "abandoned", "{state}");
    assert_eq!(state["agent"], "mcp:model-a");
    assert_eq!(state["tag"], "t1");
    assert_eq!(read_json(&out.join(&id).join("run.json"))["tag"], "t1");
    // Its slot is free.
    let (status, v) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201, "{v}");

    // `report` tells the MCP run apart by its tag.
    let o = tbsim(&["report", out.join(&id).to_str().unwrap()], &root());
    let (md, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(md.contains("| mcp:model-a [t1] |"), "{md}");
}
