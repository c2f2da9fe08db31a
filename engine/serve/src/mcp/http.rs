//! MCP over streamable HTTP: rmcp's server transport as an axum service, one world
//! (a session of the server's registry) per MCP session.
//!
//! The world starts with the MCP `initialize` request, whose URL query names it:
//! `/mcp?scenario=busy-day&seed=3&hints=0&feedback=detailed&max_steps=400&agent=A&tag=T` (only
//! `scenario` is required; it is confined to the served roots exactly as in the
//! session API). Later requests of the MCP session need no query.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use tbsim_core::protocol::FeedbackPolicy;

use super::McpServer;
use super::fast::FastCalls;
use crate::registry::Registry;

/// The default cap on decisions per working day of an MCP world.
pub const DEFAULT_MAX_STEPS: u64 = 400;

/// What the query of an `initialize` request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct StartQuery {
    /// A scenario name (required).
    pub scenario: String,
    /// Master seed.
    pub seed: Option<u64>,
    /// Hint tier (0-3).
    pub hints: u8,
    /// Mentor feedback (`none`, `summary`, `detailed`).
    pub feedback: FeedbackPolicy,
    /// Maximum decisions per working day.
    pub max_steps: u64,
    /// The agent's name, recorded as `mcp:<name>` (default: the client's
    /// `clientInfo.name`), so runs of different models are told apart.
    pub agent: Option<String>,
    /// A label recorded in the run's `run.json` (`tbsim report` groups by it).
    pub tag: Option<String>,
}

fn unhex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-decodes a query component (`+` is a space).
fn decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hi = bytes.get(i + 1).copied().and_then(unhex);
                let lo = bytes.get(i + 2).copied().and_then(unhex);
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    return Err(format!("bad percent escape in `{s}`"));
                };
                out.push(hi * 16 + lo);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("`{s}` is not UTF-8"))
}

impl StartQuery {
    /// Parses a URL query (without the `?`). Unknown or repeated parameters are
    /// refused.
    pub fn parse(query: &str) -> Result<StartQuery, String> {
        let mut scenario = None;
        let mut seed = None;
        let mut hints = None;
        let mut feedback = None;
        let mut max_steps = None;
        let mut agent = None;
        let mut tag = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (k, v) = (decode(k)?, decode(v)?);
            let num = |what: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("`{what}` must be a whole number, not `{v}`"))
            };
            let fresh = match k.as_str() {
                "scenario" => scenario.replace(v.clone()).is_none(),
                "seed" => seed.replace(num("seed")?).is_none(),
                "hints" => {
                    let h = num("hints")?;
                    if h > 3 {
                        return Err("`hints` must be 0-3".into());
                    }
                    hints.replace(h as u8).is_none()
                }
                "feedback" => {
                    let f: FeedbackPolicy =
                        serde_json::from_value(serde_json::Value::String(v.clone())).map_err(
                            |_| format!("`feedback` must be none, summary or detailed, not `{v}`"),
                        )?;
                    feedback.replace(f).is_none()
                }
                "max_steps" => {
                    let n = num("max_steps")?;
                    if n == 0 {
                        return Err("`max_steps` must be at least 1".into());
                    }
                    max_steps.replace(n).is_none()
                }
                "agent" => {
                    if v.is_empty() {
                        return Err("`agent` must not be empty".into());
                    }
                    agent.replace(v.clone()).is_none()
                }
                "tag" => {
                    tbsim_engine::run_file::check_tag(&v).map_err(|e| e.to_string())?;
                    tag.replace(v.clone()).is_none()
                }
                _ => {
                    return Err(format!(
                        "unknown query parameter `{k}` (known: scenario, seed, hints, feedback, max_steps, agent, tag)"
                    ));
                }
            };
            if !fresh {
                return Err(format!("query parameter `{k}` given twice"));
            }
        }
        let scenario = scenario.ok_or_else(|| {
            "no scenario: start an MCP session with `/mcp?scenario=<name>` (e.g. `/mcp?scenario=busy-day&seed=3`)"
                .to_owned()
        })?;
        Ok(StartQuery {
            scenario,
            seed,
            hints: hints.unwrap_or(0),
            feedback: feedback.unwrap_or_default(),
            max_steps: max_steps.unwrap_or(DEFAULT_MAX_STEPS),
            agent,
            tag,
        })
    }
}

/// How long an MCP session whose last standalone stream closed waits for the
/// client to open another before it is closed (a client reconnecting a dropped
/// stream keeps its world; one that went away frees its slot at once).
pub const RECONNECT_GRACE: Duration = Duration::from_secs(2);

/// Watches the standalone event streams (`GET /mcp`) of MCP sessions: a client
/// holds one open for as long as it is connected (the official SDKs open it right
/// after the handshake), so when the last one of a session closes — the client
/// process died, its task was cancelled, its connection dropped — and no other is
/// opened within [`RECONNECT_GRACE`], the session is closed: its world ends as
/// abandoned, its run directory is written and its slot is free, without waiting
/// for the idle timeout.
#[derive(Debug, Clone)]
pub struct StreamWatch {
    sessions: Arc<LocalSessionManager>,
    /// Open standalone streams per MCP session id.
    open: Arc<Mutex<BTreeMap<String, usize>>>,
    grace: Duration,
}

/// One open standalone stream; dropping it is the stream closing.
#[derive(Debug)]
pub struct StreamGuard {
    watch: StreamWatch,
    id: String,
}

impl StreamWatch {
    fn counts(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, usize>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a standalone stream of MCP session `id` open until the guard drops.
    pub fn opened(&self, id: &str) -> StreamGuard {
        *self.counts().entry(id.to_owned()).or_default() += 1;
        StreamGuard {
            watch: self.clone(),
            id: id.to_owned(),
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let last = {
            let mut open = self.watch.counts();
            let n = open.entry(self.id.clone()).or_default();
            *n = n.saturating_sub(1);
            *n == 0
        };
        if !last {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (watch, id) = (self.watch.clone(), self.id.clone());
        rt.spawn(async move {
            tokio::time::sleep(watch.grace).await;
            {
                let mut open = watch.counts();
                if open.get(&id).is_some_and(|n| *n > 0) {
                    return;
                }
                open.remove(&id);
            }
            // Gone already (deleted, expired) is fine.
            let _ = watch.sessions.close_session(&id.as_str().into()).await;
        });
    }
}

/// The `/mcp` service over `registry`, the watch that closes a session once its
/// client's stream goes away (see [`StreamWatch`]; the router wraps `GET /mcp`
/// responses with it), and the sessions whose tool calls the router's
/// [`super::fast::fast_call`] answers without rmcp's transport. MCP sessions expire with the registry's idle timeout;
/// request bodies are capped at `max_body` bytes. `any_host` lets requests with
/// any `Host` header in (the server has a bearer token); otherwise only loopback
/// hosts are accepted, against DNS rebinding.
pub fn http_service(
    registry: Arc<Registry>,
    max_body: usize,
    any_host: bool,
) -> (
    StreamableHttpService<McpServer, LocalSessionManager>,
    StreamWatch,
    Arc<FastCalls>,
) {
    // No SSE priming event (`sse_retry`): an event with empty data that the Python
    // SDK warns about on every call; resuming streams is not offered anyway.
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(max_body)
        .with_sse_retry(None);
    if any_host {
        config = config.disable_allowed_hosts();
    }
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(registry.config().idle_timeout);
    let sessions = Arc::new(sessions);
    let watch = StreamWatch {
        sessions: Arc::clone(&sessions),
        open: Arc::default(),
        grace: RECONNECT_GRACE,
    };
    let fast = Arc::new(FastCalls::new(registry.config().idle_timeout, max_body));
    let fast2 = Arc::clone(&fast);
    let service = StreamableHttpService::new(
        move || Ok(McpServer::shared_fast(registry.clone(), Arc::clone(&fast2))),
        sessions,
        config,
    );
    (service, watch, fast)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_name_the_world() {
        let q = StartQuery::parse("scenario=busy-day&seed=3&feedback=none&hints=1").unwrap();
        assert_eq!(q.scenario, "busy-day");
        assert_eq!(q.seed, Some(3));
        assert_eq!(q.hints, 1);
        assert_eq!(q.feedback, FeedbackPolicy::None);
        assert_eq!(q.max_steps, DEFAULT_MAX_STEPS);
        assert_eq!(StartQuery::parse("scenario=a%2Fb").unwrap().scenario, "a/b");
        assert!(StartQuery::parse("").unwrap_err().contains("no scenario"));
        assert!(StartQuery::parse("scenario=a&scenario=b").is_err());
        assert!(StartQuery::parse("scenario=a&colour=red").is_err());
        assert!(StartQuery::parse("scenario=a&hints=4").is_err());
        assert!(StartQuery::parse("scenario=a&seed=x").is_err());
        let q = StartQuery::parse("scenario=a&agent=gpt%2D5").unwrap();
        assert_eq!(q.agent.as_deref(), Some("gpt-5"));
        assert!(StartQuery::parse("scenario=a&agent=").is_err());
        let q = StartQuery::parse("scenario=a&tag=prompt-v2").unwrap();
        assert_eq!(q.tag.as_deref(), Some("prompt-v2"));
        assert_eq!(StartQuery::parse("scenario=a").unwrap().tag, None);
        for bad in ["tag=", "tag=a%20b", "tag=a/b"] {
            let e = StartQuery::parse(&format!("scenario=a&{bad}")).unwrap_err();
            assert!(e.contains("a tag must be"), "{bad}: {e}");
        }
    }
}
