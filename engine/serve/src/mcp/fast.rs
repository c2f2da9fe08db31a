//! `tools/call` over streamable HTTP answered without rmcp's session transport.
//!
//! rmcp serves every request of a stateful session through a per-session worker
//! task and answers it with an event stream of its own, even when the answer is a
//! single message: several task hand-offs, a stream and its keep-alive timer per
//! call. That made an MCP call cost about twice the session API's server CPU for
//! the same step (`runs/bench/`). The protocol lets a server answer a POSTed
//! request with one `application/json` body instead, and clients must accept
//! either (MCP 2025-03-26 on, "Sending Messages to the Server").
//!
//! So a session registers its handles here once the client sends
//! `notifications/initialized` ([`FastCalls::register`]; rmcp handles that
//! notification after its 202, so the middleware holds the 202 back until the
//! session is registered: the call a client sends next is answered here, however
//! loaded the machine), and the `/mcp` route's
//! middleware ([`fast_call`]) answers a POSTed `tools/call` of a registered
//! session itself: the same [`Conn::call`] the rmcp handler runs, the result as
//! one JSON-RPC response, and the call's notifications sent through the session's
//! peer exactly as the rmcp handler sends them (on the standalone stream). Anything
//! else — another method, a batch, a header rmcp checks that this does not
//! (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), an unknown protocol version, a
//! missing `Accept` type, a session not registered or gone — goes to rmcp
//! unchanged, which answers or refuses it as before.
//!
//! rmcp closes a session whose worker saw nothing for its keep-alive (the
//! registry's idle timeout); calls answered here never reach the worker, so one
//! call per [`FastCalls::refresh`] goes through rmcp to keep a busy session open.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RoleServer;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::view::View;
use super::{CALL_ID_META, Conn, EMPTY_TURNS_META, Live};

/// What a call answered here needs of its session. The world is held weakly: the
/// session ending (rmcp dropping its server) ends it, whatever is registered here.
#[derive(Debug, Clone)]
pub(crate) struct Handles {
    pub(crate) live: Weak<tokio::sync::Mutex<Option<Live>>>,
    pub(crate) view: Arc<Mutex<View>>,
    pub(crate) subscribed: Arc<Mutex<std::collections::BTreeSet<String>>>,
    pub(crate) quiet: Arc<AtomicBool>,
    pub(crate) peer: rmcp::Peer<RoleServer>,
}

#[derive(Debug)]
struct Entry {
    handles: Handles,
    /// When a call of this session last went through rmcp.
    last_slow: Instant,
}

/// The sessions whose tool calls are answered without rmcp's transport (see the
/// module docs).
#[derive(Debug)]
pub struct FastCalls {
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Woken on every registration.
    registered: tokio::sync::Notify,
    refresh: Duration,
    max_body: usize,
}

impl FastCalls {
    /// Sessions kept open by rmcp for `keep_alive` without a message; bodies up
    /// to `max_body` bytes.
    pub fn new(keep_alive: Duration, max_body: usize) -> FastCalls {
        FastCalls {
            entries: Mutex::new(BTreeMap::new()),
            registered: tokio::sync::Notify::new(),
            refresh: keep_alive / 4,
            max_body,
        }
    }

    /// How often a busy session's call goes through rmcp anyway.
    pub fn refresh(&self) -> Duration {
        self.refresh
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers MCP session `id`; sessions that have ended are dropped.
    pub(crate) fn register(&self, id: &str, handles: Handles) {
        let mut entries = self.entries();
        entries.retain(|_, e| e.handles.live.strong_count() > 0);
        entries.insert(
            id.to_owned(),
            Entry {
                handles,
                last_slow: Instant::now(),
            },
        );
        drop(entries);
        self.registered.notify_waiters();
    }

    fn knows(&self, id: &str) -> bool {
        self.entries().contains_key(id)
    }

    /// Waits until session `id` is registered, at most `limit`; whether it is.
    async fn await_registration(&self, id: &str, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Enabled before the check, so a registration between the two wakes it.
            let woken = self.registered.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.knows(id) {
                return true;
            }
            if tokio::time::timeout_at(deadline, woken).await.is_err() {
                return self.knows(id);
            }
        }
    }

    /// Forgets MCP session `id` (deleted).
    pub fn forget(&self, id: &str) {
        self.entries().remove(id);
    }

    /// Sessions registered and still going.
    pub fn len(&self) -> usize {
        self.entries()
            .values()
            .filter(|e| e.handles.live.strong_count() > 0)
            .count()
    }

    /// Whether no session is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The handles of session `id` when a call of it may be answered here now;
    /// `None` (rmcp answers) when it is not registered, has ended, or is due a
    /// call through rmcp (which this one then is).
    fn take_turn(&self, id: &str) -> Option<Handles> {
        let mut entries = self.entries();
        let e = entries.get_mut(id)?;
        if e.handles.live.strong_count() == 0 {
            entries.remove(id);
            return None;
        }
        if e.last_slow.elapsed() >= self.refresh {
            e.last_slow = Instant::now();
            return None;
        }
        Some(e.handles.clone())
    }
}

/// Whether a header list names `ty` (`application/json`, ...), or everything.
fn accepts(headers: &HeaderMap, ty: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or("").trim())
        .any(|t| t.eq_ignore_ascii_case(ty) || t == "*/*")
}

/// The session id of a POST this module may answer (headers only; the body is
/// checked after).
fn candidate(req: &Request) -> Option<String> {
    if req.method() != Method::POST {
        return None;
    }
    let h = req.headers();
    let json = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json || !accepts(h, "application/json") || !accepts(h, "text/event-stream") {
        return None;
    }
    // Headers rmcp checks against the body (SEP-2243): rmcp's business.
    if h.keys().any(|k| {
        let k = k.as_str();
        k == "mcp-method" || k == "mcp-name" || k.starts_with("mcp-param-")
    }) {
        return None;
    }
    if let Some(v) = h.get("mcp-protocol-version") {
        let v = v.to_str().ok()?;
        let known = ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE);
        if !known.iter().any(|k| k.as_str() == v) {
            return None;
        }
    }
    Some(h.get("mcp-session-id")?.to_str().ok()?.to_owned())
}

/// A JSON-RPC request as sent (the params left raw until the method is known).
#[derive(Deserialize)]
struct RpcRequest<'a> {
    jsonrpc: &'a str,
    id: Value,
    method: &'a str,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A `tools/call` request: its id and params; `None` for anything else.
fn tool_call(body: &[u8]) -> Option<(Value, CallToolRequestParams)> {
    let r: RpcRequest<'_> = serde_json::from_slice(body).ok()?;
    if r.jsonrpc != "2.0" || r.method != "tools/call" || !(r.id.is_string() || r.id.is_i64()) {
        return None;
    }
    let params = serde_json::from_str(r.params?.get()).ok()?;
    Some((r.id, params))
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// How long an `initialized` notification's 202 waits for its session to
/// register; rmcp takes microseconds, so this only bounds a session that never
/// does (one without a session id, say).
const REGISTRATION_WAIT: Duration = Duration::from_secs(2);

/// Whether a body is the `notifications/initialized` notification.
fn is_initialized(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Note<'a> {
        jsonrpc: &'a str,
        method: &'a str,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Note<'_>>(body).is_ok_and(|n| {
        n.jsonrpc == "2.0" && n.method == "notifications/initialized" && n.id.is_none()
    })
}

/// A request's parts and body, or the 413 for a body over `max` bytes.
async fn read_body(
    req: Request,
    max: usize,
) -> Result<(axum::http::request::Parts, axum::body::Bytes), Response> {
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, max).await {
        Ok(b) => Ok((parts, b)),
        Err(_) => Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over {max} bytes"),
        )
            .into_response()),
    }
}

/// The `/mcp` route's middleware (see the module docs). A DELETE forgets the
/// session before rmcp closes it.
pub async fn fast_call(State(fast): State<Arc<FastCalls>>, req: Request, next: Next) -> Response {
    if req.method() == Method::DELETE {
        if let Some(id) = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            fast.forget(id);
        }
        return next.run(req).await;
    }
    let Some(session) = candidate(&req) else {
        return next.run(req).await;
    };
    let Some(handles) = fast.take_turn(&session) else {
        if fast.knows(&session) {
            return next.run(req).await;
        }
        // Not registered yet: an `initialized` notification is answered once it is.
        let (parts, bytes) = match read_body(req, fast.max_body).await {
            Ok(r) => r,
            Err(too_big) => return too_big,
        };
        let initialized = is_initialized(&bytes);
        let answer = next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
        if initialized && answer.status().is_success() {
            fast.await_registration(&session, REGISTRATION_WAIT).await;
        }
        return answer;
    };
    let (parts, bytes) = match read_body(req, fast.max_body).await {
        Ok(r) => r,
        Err(too_big) => return too_big,
    };
    let Some((id, params)) = tool_call(&bytes) else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let Some(live) = handles.live.upgrade() else {
        // Ended between the look-up and now: rmcp says so.
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let given_id = params
        .meta
        .as_ref()
        .and_then(|m| m.get(CALL_ID_META))
        .cloned();
    let empty_turns = params
        .meta
        .as_ref()
        .and_then(|m| m.get(EMPTY_TURNS_META))
        .cloned();
    let conn = Conn {
        live: &live,
        view: &handles.view,
        subscribed: &handles.subscribed,
        quiet: &handles.quiet,
    };
    let answer = match conn.call(params, given_id, empty_turns).await {
        Ok((result, out)) => {
            for o in out {
                o.send(&handles.peer).await;
            }
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
        }
        Err(e) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": e}),
    };
    json_response(StatusCode::OK, &answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(headers: &[(&str, &str)]) -> Request {
        let mut b = Request::builder().method(Method::POST).uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    }

    const GOOD: [(&str, &str); 4] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-session-id", "abc"),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    #[test]
    fn only_plain_session_posts_are_candidates() {
        assert_eq!(candidate(&post(&GOOD)).as_deref(), Some("abc"));
        let without = |name: &str| {
            let h: Vec<_> = GOOD.iter().copied().filter(|(k, _)| *k != name).collect();
            candidate(&post(&h))
        };
        assert_eq!(without("mcp-session-id"), None);
        assert_eq!(without("accept"), None);
        assert_eq!(without("content-type"), None);
        // No version header: rmcp assumes its default, so may this.
        assert_eq!(without("mcp-protocol-version").as_deref(), Some("abc"));
        let mut h = GOOD.to_vec();
        h[3] = ("mcp-protocol-version", "1999-01-01");
        assert_eq!(candidate(&post(&h)), None);
        let mut h = GOOD.to_vec();
        h[1] = ("accept", "application/json");
        assert_eq!(candidate(&post(&h)), None, "must accept both, as rmcp asks");
        let mut h = GOOD.to_vec();
        h.push(("mcp-method", "tools/call"));
        assert_eq!(candidate(&post(&h)), None);
        let mut h = GOOD.to_vec();
        h.push(("mcp-param-name", "x"));
        assert_eq!(candidate(&post(&h)), None);
        let mut r = post(&GOOD);
        *r.method_mut() = Method::GET;
        assert_eq!(candidate(&r), None);
    }

    #[test]
    fn only_the_initialized_notification_is_recognised() {
        assert!(is_initialized(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
        assert!(is_initialized(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#
        ));
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
            br#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
            b"",
        ] {
            assert!(!is_initialized(other), "{}", String::from_utf8_lossy(other));
        }
    }

    #[tokio::test]
    async fn waiting_for_a_session_that_never_registers_ends_at_the_limit() {
        // (A registration waking its waiter needs an rmcp peer, which only a live
        // session has: the integration test `mcp::http_tool_calls_...` covers it.)
        let fast = FastCalls::new(Duration::from_secs(8), 1024);
        let t = std::time::Instant::now();
        assert!(
            !fast
                .await_registration("other", Duration::from_millis(50))
                .await
        );
        assert!(t.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn only_single_tool_calls_are_taken() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"my_tasks","arguments":{},"_meta":{"tbsim/call_id":"c1"}}}"#;
        let (id, p) = tool_call(call).unwrap();
        assert_eq!(id, serde_json::json!(7));
        assert_eq!(p.name, "my_tasks");
        assert_eq!(
            p.meta.as_ref().and_then(|m| m.get(CALL_ID_META)),
            Some(&serde_json::json!("c1"))
        );
        let (id, _) = tool_call(
            br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"wait"}}"#,
        )
        .unwrap();
        assert_eq!(id, serde_json::json!("x"));
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#[..],
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"wait"}}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}]"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"wait"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"wait"}}"#,
            b"not json",
        ] {
            assert!(
                tool_call(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
