//! The session API end to end on loopback (issue 11, item 5): the real axum router
//! of `tbsim serve` (`tbsim_serve::http::serve`) on `127.0.0.1:0` inside the bench
//! process, driven by a minimal HTTP/1.1 client over one keep-alive TCP connection.
//!
//! * `step_cheap_tool`: one `POST /v1/sessions/{id}/step` holding one `my_tasks`
//!   call on `busy-day` (`max_steps` 1,000,000), from the first byte written to the
//!   last byte of the response read: routing, JSON parsing, the hop to the session's
//!   run thread, the engine's step, the observation back and its JSON. When the run
//!   ends (the working day is over) the next session is opened outside timing, and
//!   the finished one deleted. Goal: median (p50) ≤ 200 µs.
//! * `create_session`: one `POST /v1/sessions` on `busy-day` (the scenario is read
//!   and validated, the run directory and `run.json` written, the run started on its
//!   thread and the first observation returned); the `DELETE` that keeps the number
//!   of sessions bounded is outside timing. Sessions per second = 1 / median.
//!
//! Memory per idle session is not a criterion figure: see
//! `benches/examples/serve_memory.rs`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::Value;
use tbsim_benches::scenarios_dir;
use tbsim_serve::http::{ApiState, DEFAULT_MAX_BODY, serve};
use tbsim_serve::registry::{Registry, RegistryConfig};
use tbsim_serve::scenarios::ScenarioRoots;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

criterion_group!(benches, serve_api);

const CREATE: &str = r#"{"scenario": "busy-day", "agent": "bench", "max_steps": 1000000}"#;
const STEP: &str = r#"{"tool_calls": [{"name": "my_tasks", "arguments": {}}]}"#;

/// A scratch directory under the system temp dir, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tbsim-bench-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the bench temp dir");
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `tbsim serve`'s server (router, registry, idle reaper) on an ephemeral loopback port.
struct Server {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(out: PathBuf) -> Server {
        let roots = ScenarioRoots::new(&[scenarios_dir()]).expect("the bundled scenarios");
        let registry = Arc::new(Registry::new(RegistryConfig {
            roots,
            out,
            max_sessions: 256,
            idle_timeout: Duration::from_secs(3600),
            unused_timeout: Duration::from_secs(3600),
            keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
            view_cache: None,
        }));
        let api = Arc::new(ApiState::new(registry, None, None));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, api, DEFAULT_MAX_BODY, async {
            let _ = stopped.await;
        }));
        Server { addr, stop, task }
    }

    /// Stops the server; every open session is closed and written.
    async fn stop(self) {
        let _ = self.stop.send(());
        self.task
            .await
            .expect("the server task")
            .expect("the server");
    }
}

/// A minimal HTTP/1.1 client on one keep-alive connection: one request at a time,
/// responses framed by `Content-Length` (as axum sends JSON bodies).
struct Conn {
    stream: TcpStream,
    addr: SocketAddr,
    buf: Vec<u8>,
}

impl Conn {
    async fn connect(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr)
            .await
            .expect("connect to the server");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        Conn {
            stream,
            addr,
            buf: Vec::with_capacity(1 << 16),
        }
    }

    /// Sends one request and reads the whole response: (status, body).
    async fn request(&mut self, method: &str, path: &str, body: &str) -> (u16, Vec<u8>) {
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.stream
            .write_all(req.as_bytes())
            .await
            .expect("send the request");
        self.buf.clear();
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i + 4;
            }
            self.read_more().await;
        };
        let head = std::str::from_utf8(&self.buf[..head_end]).expect("an ASCII header");
        let status: u16 = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .expect("a Content-Length header");
        while self.buf.len() < head_end + len {
            self.read_more().await;
        }
        assert_eq!(
            self.buf.len(),
            head_end + len,
            "one response per request, nothing pipelined"
        );
        (status, self.buf[head_end..].to_vec())
    }

    async fn read_more(&mut self) {
        let mut chunk = [0u8; 16384];
        let n = self
            .stream
            .read(&mut chunk)
            .await
            .expect("read the response");
        assert!(n > 0, "the server closed the connection");
        self.buf.extend_from_slice(&chunk[..n]);
    }

    /// Opens a session on `busy-day`: its id.
    async fn open(&mut self) -> String {
        let (status, body) = self.request("POST", "/v1/sessions", CREATE).await;
        let v: Value = serde_json::from_slice(&body).expect("a JSON body");
        assert_eq!(status, 201, "create failed: {v}");
        v["session"].as_str().expect("a session id").to_owned()
    }

    /// Deletes a session (its run ends, its directory is written).
    async fn delete(&mut self, id: &str) {
        let (status, body) = self
            .request("DELETE", &format!("/v1/sessions/{id}"), "")
            .await;
        assert_eq!(
            status,
            200,
            "delete failed: {}",
            String::from_utf8_lossy(&body)
        );
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn serve_api(c: &mut Criterion) {
    let rt = runtime();
    let scratch = ScratchDir::new("serve");
    let server = rt.block_on(Server::start(scratch.0.clone()));
    let mut conn = rt.block_on(Conn::connect(server.addr));

    // Once, untimed: the cheap call really succeeds and costs simulated time.
    let mut id = rt.block_on(conn.open());
    let mut path = format!("/v1/sessions/{id}/step");
    let (status, body) = rt.block_on(conn.request("POST", &path, STEP));
    let v: Value = serde_json::from_slice(&body).expect("a JSON body");
    assert_eq!(status, 200, "step failed: {v}");
    assert_eq!(v["terminated"], false, "{v}");
    let results = &v["observation"]["results"];
    assert!(results[0]["ok"] == true, "my_tasks must succeed: {results}");

    let mut g = c.benchmark_group("serve");
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(1));

    let mut runs = 0u64;
    g.bench_function("step_cheap_tool", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let (status, body) = conn.request("POST", &path, STEP).await;
                    timed += t.elapsed();
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
                    let v: Value = serde_json::from_slice(&body).expect("a JSON body");
                    if v["terminated"] == true || v["truncated"] == true {
                        // The day is over: a fresh session, outside timing.
                        conn.delete(&id).await;
                        id = conn.open().await;
                        path = format!("/v1/sessions/{id}/step");
                        runs += 1;
                    }
                }
                timed
            })
        });
    });
    rt.block_on(conn.delete(&id));
    eprintln!("serve/step_cheap_tool: {runs} runs ended (day over) and were reopened");

    g.sample_size(30);
    g.bench_function("create_session", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let id = conn.open().await;
                    timed += t.elapsed();
                    conn.delete(&id).await;
                }
                timed
            })
        });
    });
    g.finish();

    drop(conn);
    rt.block_on(server.stop());
}
