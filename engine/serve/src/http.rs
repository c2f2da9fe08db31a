//! The HTTP session API (axum): the routes, request parsing and error bodies.
//!
//! | route | |
//! | --- | --- |
//! | `POST /v1/sessions` | `{scenario, seed?, hints?, feedback?, max_steps?, agent?, tag?, compress?}` → `{session, observation, progress, info}` (`compress`: the trajectory written as `trajectory.jsonl.zst`); or `{resume: RUN}` to reattach to an interrupted session run under `--out` (adds `restored_steps`) |
//! | `POST /v1/sessions/{id}/step` | `{tool_calls: [{name, arguments, id?}]}` → `{observation, reward, terminated, truncated, info}` |
//! | `GET /v1/sessions/{id}` | the session's state; once it has ended and left (deleted, expired, its MCP transport gone) its final state with per-task results, kept in memory for `--keep-finished`, then read back from its run directory |
//! | `DELETE /v1/sessions/{id}` | ends the run (as abandoned if it was going), writes its directory, returns the final state |
//! | `GET /v1/scenarios?suite=S` | the scenarios clients may name (as `tbsim scenarios --json`) |
//! | `GET /v1/tools` | the tool catalogue (as `tbsim tools --json`) |
//! | `GET /openapi.json` | the OpenAPI 3.1 document of this API |
//! | `/mcp` | MCP over streamable HTTP (`crate::mcp`); the `initialize` request's query names the world: `/mcp?scenario=busy-day&seed=3` |
//!
//! Every error is `{"error": {"code", "message"}}` with a 4xx or 5xx status (see
//! [`ApiError`]); with a token configured every route wants
//! `Authorization: Bearer <token>`.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};

use tbsim_core::protocol::{Decision, FeedbackPolicy, ToolCall};

pub use crate::conn::ConnAddrs;
use crate::conn::{Limits, StreamSlots};
use crate::registry::{OpenRequest, Registry, RegistryError};
use crate::scenarios::ResolveError;
use crate::session::{SessionError, SessionState, Turn};
use tbsim_engine::run::RunError;

/// The OpenAPI 3.1 document of the API.
pub const OPENAPI: &str = include_str!("openapi.json");

/// The default cap on a request body (bytes).
pub const DEFAULT_MAX_BODY: usize = 1 << 20;

/// The longest client name accepted (`agent` in the create request).
pub const MAX_AGENT_NAME: usize = 64;

/// What the server shares between requests.
#[derive(Debug)]
pub struct ApiState {
    /// The sessions.
    pub registry: Arc<Registry>,
    /// The bearer token every request to the session API and MCP must carry, if any
    /// (the agents' token).
    pub token: Option<String>,
    /// The token of the console's routes (`/v1/console/…`), if any: the operators'.
    /// It is kept apart from the agents' token because the console can start the
    /// oracle and show what it writes: an agent holding only its own token must not
    /// reach it. With an agents' token and no console token the console is off.
    pub console_token: Option<String>,
    /// Host names requests may name besides localhost, loopback addresses and the
    /// address a client connected to (`--allow-host`: a DNS name of this machine, a
    /// reverse proxy's name).
    pub allowed_hosts: Vec<String>,
    /// Connection and stream limits.
    pub limits: Limits,
    /// The event streams open now.
    pub streams: Arc<StreamSlots>,
}

impl ApiState {
    /// A server's state with default limits and no extra host names.
    pub fn new(
        registry: Arc<Registry>,
        token: Option<String>,
        console_token: Option<String>,
    ) -> ApiState {
        ApiState {
            registry,
            token,
            console_token,
            allowed_hosts: Vec::new(),
            limits: Limits::default(),
            streams: Arc::new(StreamSlots::default()),
        }
    }
}

/// An error response: a status, a stable code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code.
    pub code: &'static str,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        let message = e.to_string();
        match e {
            RegistryError::UnknownSession(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "unknown_session", message)
            }
            RegistryError::Scenario(ResolveError::Unknown(_)) => {
                ApiError::new(StatusCode::NOT_FOUND, "unknown_scenario", message)
            }
            RegistryError::Scenario(ResolveError::BadName(_)) => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_scenario_name", message)
            }
            RegistryError::InvalidScenario(..) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_scenario",
                message,
            ),
            RegistryError::TooMany(_) => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too_many_sessions", message)
            }
            RegistryError::Session(e) => e.into(),
            RegistryError::Random(_) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
            }
            RegistryError::BadRunName => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_run_name", message)
            }
            RegistryError::UnknownRun(_) => {
                ApiError::new(StatusCode::NOT_FOUND, "unknown_run", message)
            }
            RegistryError::RunInUse(_) => {
                ApiError::new(StatusCode::CONFLICT, "run_in_use", message)
            }
        }
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> Self {
        let message = e.to_string();
        match e {
            SessionError::Over(_) => ApiError::new(StatusCode::CONFLICT, "session_over", message),
            SessionError::NotRemote => ApiError::new(StatusCode::CONFLICT, "not_playable", message),
            SessionError::Fork(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "fork_refused", message)
            }
            SessionError::WriteFailed(_) => ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "trajectory_write_failed",
                message,
            ),
            SessionError::Failed(_) => ApiError::new(StatusCode::GONE, "run_ended", message),
            SessionError::Finished(_) => {
                ApiError::new(StatusCode::CONFLICT, "run_finished", message)
            }
            SessionError::NotResumable(_)
            | SessionError::RunFile(_)
            | SessionError::Run(RunError::Diverged(_) | RunError::Replay(_)) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "unresumable", message)
            }
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "run_failed", message),
        }
    }
}

/// The body of a request, parsed as `T`: 413 past the size limit, 400 for
/// anything that is not JSON or not of the expected shape.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let bytes = body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                "the request body is larger than the server accepts",
            )
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "bad_body", r.body_text())
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        let code = if e.is_data() {
            "invalid_request"
        } else {
            "malformed_json"
        };
        ApiError::new(StatusCode::BAD_REQUEST, code, e.to_string())
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    #[serde(default)]
    scenario: Option<String>,
    #[serde(default)]
    resume: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    hints: Option<u8>,
    #[serde(default)]
    feedback: Option<FeedbackPolicy>,
    #[serde(default)]
    max_steps: Option<u64>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    compress: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepBody {
    tool_calls: Vec<CallBody>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallBody {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// The decision a step body stands for: arguments given as an object (or any
/// JSON value) are serialised, a string is passed as written (the engine judges
/// it), absent ones are `{}`; missing ids become `call_<step>_<n>`.
pub(crate) fn decision(body: StepBody, step: u64) -> Decision {
    Decision {
        calls: body
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c
                    .id
                    .unwrap_or_else(|| format!("call_{}_{}", step + 1, i + 1)),
                name: c.name,
                arguments: match c.arguments {
                    None | Some(Value::Null) => "{}".into(),
                    Some(Value::String(s)) => s,
                    Some(v) => v.to_string(),
                },
            })
            .collect(),
    }
}

fn info(turn: &Turn) -> Value {
    json!({
        "score": turn.progress.score,
        "step": turn.progress.step,
        "end_reason": turn.progress.end_reason,
        "errors": turn.progress.error_count(),
        "errors_by_kind": turn.progress.errors,
        "tasks": turn.progress.tasks,
        "day": turn.progress.day,
        "time": turn.progress.time,
    })
}

fn state_body(id: &str, state: SessionState) -> Value {
    let mut v = serde_json::to_value(state).expect("states serialise");
    v["session"] = json!(id);
    v
}

async fn create(
    State(api): State<Arc<ApiState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let b: CreateBody = parse(body)?;
    let invalid = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", m);
    if let Some(run) = &b.resume {
        // The run's own settings (recorded) apply: nothing else may be asked for.
        if b.scenario.is_some()
            || b.seed.is_some()
            || b.hints.is_some()
            || b.feedback.is_some()
            || b.max_steps.is_some()
            || b.agent.is_some()
            || b.tag.is_some()
            || b.compress.is_some()
        {
            return Err(invalid(
                "`resume` takes no other field: the run's recorded settings apply",
            ));
        }
        let (id, turn) = api.registry.reattach(run).await?;
        let body = json!({
            "session": id,
            "observation": turn.observation,
            "info": info(&turn),
            "restored_steps": turn.progress.step,
        });
        return Ok((StatusCode::CREATED, Json(body)).into_response());
    }
    let Some(scenario) = b.scenario else {
        return Err(invalid("`scenario` (or `resume`) is required"));
    };
    let hints = b.hints.unwrap_or(0);
    if hints > 3 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "hints must be 0-3",
        ));
    }
    let client = b.agent.unwrap_or_else(|| "client".into());
    if client.is_empty()
        || client.len() > MAX_AGENT_NAME
        || !client
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("agent must be 1-{MAX_AGENT_NAME} characters of A-Z, a-z, 0-9, `-`, `_`, `.`"),
        ));
    }
    if let Some(tag) = &b.tag {
        tbsim_engine::run_file::check_tag(tag).map_err(|e| {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", e.to_string())
        })?;
    }
    let req = OpenRequest {
        scenario,
        seed: b.seed,
        hints,
        feedback: b.feedback.unwrap_or_default(),
        max_steps: b.max_steps.unwrap_or(400),
        agent: format!("http:{client}"),
        tag: b.tag,
        compress: b.compress.unwrap_or(false),
    };
    let (id, turn) = api.registry.open(req).await?;
    let body = json!({
        "session": id,
        "observation": turn.observation,
        "info": info(&turn),
    });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn step(
    State(api): State<Arc<ApiState>>,
    Id(id): Id,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let entry = api.registry.get(&id)?;
    let b: StepBody = parse(body)?;
    let mut session = entry.session.lock().await;
    let d = decision(b, session.state().steps);
    let turn = session.step(d).await?;
    Ok(Json(json!({
        "observation": turn.observation,
        "reward": turn.reward,
        "terminated": turn.terminated,
        "truncated": turn.truncated,
        "info": info(&turn),
    })))
}

async fn state(State(api): State<Arc<ApiState>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    Ok(Json(state_body(&id, api.registry.state(&id).await?)))
}

async fn delete(State(api): State<Arc<ApiState>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    Ok(Json(state_body(&id, api.registry.end(&id).await?)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenariosQuery {
    suite: Option<String>,
}

async fn scenarios(
    State(api): State<Arc<ApiState>>,
    q: Result<axum::extract::Query<ScenariosQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = q
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))?
        .0;
    let registry = Arc::clone(&api.registry);
    // The first listing parses every file: off the async workers.
    let all = tokio::task::spawn_blocking(move || registry.config().roots.catalog().clone())
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let cat = match q.suite {
        Some(s) => {
            let c = all.in_suite(&s);
            // An unknown suite is a mistake, not an empty suite: say which exist.
            if c.scenarios.is_empty() {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown_suite",
                    unknown_suite(&s, &all.suites()),
                ));
            }
            c
        }
        None => all,
    };
    Ok(Json(
        serde_json::to_value(cat).expect("the listing serialises"),
    ))
}

/// The message for a suite no listed scenario belongs to.
pub fn unknown_suite(suite: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("no suite `{suite}`: the served scenarios belong to no suite")
    } else {
        format!("no suite `{suite}`; the suites are: {}", known.join(", "))
    }
}

async fn tools() -> Json<Value> {
    Json(serde_json::to_value(tbsim_core::protocol::catalogue()).expect("the catalogue serialises"))
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// A route's `{id}`; a path that cannot be read (bytes that are not UTF-8 once
/// percent-decoded) is refused with a JSON error like every other refusal, where
/// axum's own rejection would answer in plain text.
pub(crate) struct Id(pub(crate) String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Id {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| Id(id))
            .map_err(|r| ApiError::new(r.status(), "bad_path", r.body_text()))
    }
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}

/// The cookie the console's page carries the token in (set by `GET /login`).
pub const TOKEN_COOKIE: &str = "tbsim_token";

fn same_secret(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `headers` carry `Authorization: Bearer <token>` (compared in constant
/// time). Programs authenticate this way; a browser never adds it on its own, so a
/// page of another site cannot forge it.
fn bearer_ok(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|g| same_secret(g, token))
}

/// Whether `headers` carry the console's cookie with `token`. Browsers attach it to
/// requests other pages make too, so it is honoured on the console's routes only,
/// behind the origin checks and the console's header ([`CONSOLE_HEADER`]).
fn cookie_ok(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().strip_prefix(TOKEN_COOKIE)?.strip_prefix('='))
        .any(|g| same_secret(g, token))
}

/// The console's page and its login need no token: they hold nothing of a run.
fn public_path(path: &str) -> bool {
    path == "/" || path == "/login" || path.starts_with("/assets/")
}

#[derive(Debug, Deserialize)]
struct LoginQuery {
    #[serde(default)]
    token: String,
}

/// `GET /login?token=…`: with the console's token, sets the console's cookie
/// (HttpOnly, SameSite=Strict) and sends the browser to the page.
async fn login(
    State(api): State<Arc<ApiState>>,
    axum::extract::Query(q): axum::extract::Query<LoginQuery>,
) -> Response {
    match console_gate(&api) {
        Err(e) => e.into_response(),
        Ok(Some(t)) if !same_secret(&q.token, t) => {
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "wrong token").into_response()
        }
        Ok(Some(t)) => (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, "/".to_owned()),
                (
                    header::SET_COOKIE,
                    format!("{TOKEN_COOKIE}={t}; HttpOnly; SameSite=Strict; Path=/"),
                ),
            ],
        )
            .into_response(),
        Ok(None) => (StatusCode::SEE_OTHER, [(header::LOCATION, "/".to_owned())]).into_response(),
    }
}

/// The token the console wants (`None`: none), or why it is off.
fn console_gate(api: &ApiState) -> Result<Option<&str>, ApiError> {
    match (&api.console_token, &api.token) {
        (Some(c), _) => Ok(Some(c)),
        (None, Some(_)) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "console_disabled",
            "this server's agents use a token, and the console needs its own: restart with --console-token <secret> (the console can start the oracle, so agents must not reach it)",
        )),
        (None, None) => Ok(None),
    }
}

/// The header every request of the console's page that changes something carries
/// (`X-Tbsim-Console: 1`). A page of another origin cannot send a custom header
/// without a CORS preflight, which this server never grants, so a cross-site (or
/// cross-port, same-site) form or fetch cannot reach a console action even when the
/// browser attaches the console's cookie.
pub const CONSOLE_HEADER: &str = "x-tbsim-console";

/// The host a request names, without its port (`Host` header).
fn host_of(headers: &HeaderMap) -> Option<&str> {
    let h = headers.get(header::HOST)?.to_str().ok()?;
    Some(match h.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => h.rsplit_once(':').map_or(h, |(name, _)| name),
    })
}

/// Whether `host` (a `Host` header's name) is one this server is reached under:
/// `localhost`, a loopback address, the very address the client connected to (an
/// address literal names no DNS record an attacker could rebind; with `--bind
/// 0.0.0.0` that is whichever of the machine's addresses the client used), or a
/// name the operator allowed (`--allow-host`, for a DNS name or a proxy).
fn known_host(api: &ApiState, host: &str, conn: Option<&ConnAddrs>) -> bool {
    if host.eq_ignore_ascii_case("localhost")
        || api
            .allowed_hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(host))
    {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || conn.is_some_and(|c| c.local.ip() == ip),
        Err(_) => false,
    }
}

/// The checks that keep browsers' pages of other origins out, on every route and
/// whatever tokens are set (a token stops strangers, not a page the operator's own
/// browser runs):
///
/// * the `Host` must be one this server is reached under ([`known_host`]): a DNS
///   rebinding page names its own host;
/// * a request carrying an `Origin` must come from this server's own origin (a
///   cross-site or cross-port fetch or form carries its page's; programs send
///   none), but for a plain navigation to the page or its login;
/// * a request whose `Sec-Fetch-Site` says another origin made it (`same-site`
///   included: another port of 127.0.0.1 is the same site) is refused but for
///   those navigations;
/// * a console request that changes something must carry [`CONSOLE_HEADER`].
fn browser_refusal(api: &ApiState, req: &Request) -> Option<ApiError> {
    let h = req.headers();
    let path = req.uri().path();
    let host = host_of(h).unwrap_or("");
    if !known_host(api, host, req.extensions().get::<ConnAddrs>()) {
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            "bad_host",
            format!(
                "this server answers only under localhost, a loopback address, the address it was reached at, or a name given with --allow-host; not `{host}`"
            ),
        ));
    }
    let safe = matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    // The page, its files and the login are what a person opens from elsewhere
    // (a link, a bookmark): navigations there are fine; nothing there acts.
    let navigation = safe && public_path(path);
    let authority = h
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let own = |o: &str| {
        o.strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"))
            .is_some_and(|a| a.eq_ignore_ascii_case(authority))
    };
    if let Some(o) = h.get(header::ORIGIN)
        && !navigation
        && !o.to_str().is_ok_and(own)
    {
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "this server takes requests only from its own pages (or from programs, which send no Origin)",
        ));
    }
    let site = h.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if let Some(s) = site
        && !navigation
        && !matches!(s, "same-origin" | "none")
    {
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_origin",
            format!(
                "this server takes requests only from its own pages; this one came from another ({s})"
            ),
        ));
    }
    let console = path.starts_with("/v1/console/");
    if console && !safe && h.get(CONSOLE_HEADER).is_none_or(|v| v.as_bytes() != b"1") {
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            "console_header_required",
            "a console request that changes something must carry `X-Tbsim-Console: 1` (the page sends it; other sites' pages cannot)",
        ));
    }
    None
}

async fn auth(State(api): State<Arc<ApiState>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if let Some(e) = browser_refusal(&api, &req) {
        return e.into_response();
    }
    if public_path(path) {
        return next.run(req).await;
    }
    if let Some(e) = unauthenticated(&api, &req) {
        return e;
    }
    // A body trickled in byte by byte must not hold its connection for ever.
    let has_body = req.headers().contains_key(header::CONTENT_LENGTH)
        || req.headers().contains_key(header::TRANSFER_ENCODING);
    let req = if has_body {
        let within = api.limits.body_timeout;
        req.map(|b| crate::conn::with_deadline(b, within))
    } else {
        req
    };
    if !is_stream(&req) {
        return next.run(req).await;
    }
    let client = crate::conn::client_of(&req);
    let Some(slot) = api.streams.take(client, &api.limits) else {
        return ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams",
            format!(
                "too many event streams open (at most {} per client, {} in all); close one",
                api.limits.max_streams_per_client, api.limits.max_streams
            ),
        )
        .into_response();
    };
    next.run(req)
        .await
        .map(|body| crate::conn::hold(body, slot))
}

/// Whether `req` opens an event stream (the console's live views, MCP's standalone
/// stream), which holds its connection as long as the client likes.
fn is_stream(req: &Request) -> bool {
    let path = req.uri().path();
    req.method() == axum::http::Method::GET
        && (path == "/mcp" || (path.starts_with("/v1/console/") && path.ends_with("/stream")))
}

/// The refusal of a request without the credential its route wants.
fn unauthenticated(api: &ApiState, req: &Request) -> Option<Response> {
    let path = req.uri().path();
    let unauthorised = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong bearer token (send `Authorization: Bearer <token>`)",
        )
        .into_response()
    };
    let h = req.headers();
    if path.starts_with("/v1/console/") {
        return match console_gate(api) {
            Err(e) => Some(e.into_response()),
            Ok(Some(t)) if !bearer_ok(h, t) && !cookie_ok(h, t) => Some(unauthorised()),
            Ok(_) => None,
        };
    }
    // The session API and MCP: the agents' token, or the operators', as a bearer
    // token only (the console's cookie is a browser's, which other pages can make
    // it send).
    match &api.token {
        Some(t)
            if !bearer_ok(h, t)
                && !api
                    .console_token
                    .as_deref()
                    .is_some_and(|c| bearer_ok(h, c)) =>
        {
            Some(unauthorised())
        }
        _ => None,
    }
}

/// The API's router over `api`, with request bodies capped at `max_body` bytes.
pub fn router(api: Arc<ApiState>, max_body: usize) -> Router {
    router_with(api, max_body, None)
}

/// The API's router with, when given, more routes (the console's: `/`,
/// `/v1/console/…`) behind the same token
/// and body limit.
pub fn router_with(api: Arc<ApiState>, max_body: usize, extra: Option<Router>) -> Router {
    let extra = extra.unwrap_or_default();
    // The host and origin checks are `auth`'s, on every route: rmcp's own host list
    // would refuse the address the client connected to.
    let (mcp, watch, fast) = crate::mcp::http_service(api.registry.clone(), max_body, true);
    Router::new()
        .route("/v1/sessions", post(create))
        .route("/v1/sessions/{id}/step", post(step))
        .route("/v1/sessions/{id}", get(state).delete(delete))
        .route("/v1/scenarios", get(scenarios))
        .route("/v1/tools", get(tools))
        .route("/openapi.json", get(openapi))
        // MCP over streamable HTTP (`crate::mcp`): one world per MCP session, sharing
        // the registry's cap, idle expiry and scenario roots, and the token below.
        .route("/login", get(login))
        .with_state(api.clone())
        .merge(
            Router::new()
                .route_service("/mcp", mcp)
                .layer(axum::middleware::from_fn_with_state(
                    fast,
                    crate::mcp::fast_call,
                ))
                .layer(axum::middleware::from_fn(mcp_deleted))
                .layer(axum::middleware::from_fn_with_state(watch, mcp_watched)),
        )
        .merge(extra)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::from_fn_with_state(api, auth))
}

/// An MCP session's DELETE answers 204, not rmcp's 202: the session is gone by
/// then, and the Python SDK logs every 202 as a failed termination. (A POSTed
/// notification keeps its 202, as the protocol asks.)
async fn mcp_deleted(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = req.method() == axum::http::Method::DELETE;
    let mut r = next.run(req).await;
    if delete && r.status() == axum::http::StatusCode::ACCEPTED {
        *r.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    r
}

/// A session's standalone stream (`GET /mcp` answered with an event stream) is
/// counted open until its body drops: the client going away closes its session
/// (see [`crate::mcp::StreamWatch`]).
async fn mcp_watched(
    State(watch): State<crate::mcp::StreamWatch>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let session = (req.method() == axum::http::Method::GET)
        .then(|| req.headers().get("mcp-session-id")?.to_str().ok())
        .flatten()
        .map(str::to_owned);
    let r = next.run(req).await;
    match session {
        Some(id) if r.status() == StatusCode::OK => {
            let guard = watch.opened(&id);
            r.map(|body| {
                axum::body::Body::from_stream(body.into_data_stream().map(move |chunk| {
                    let _open = &guard;
                    chunk
                }))
            })
        }
        _ => r,
    }
}

/// Serves the API on `listener` until `shutdown` resolves, expiring idle sessions
/// meanwhile; then closes every session (each run directory is written).
pub async fn serve(
    listener: tokio::net::TcpListener,
    api: Arc<ApiState>,
    max_body: usize,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, api, max_body, None, shutdown).await
}

/// [`serve`] with more routes, the console's (see [`router_with`]).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    api: Arc<ApiState>,
    max_body: usize,
    extra: Option<Router>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let reaper = tokio::spawn(api.registry.clone().reap());
    let app = router_with(api.clone(), max_body, extra);
    let served = crate::conn::serve_connections(listener, app, &api.limits, shutdown).await;
    reaper.abort();
    api.registry.close_all().await;
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` in `v` names a component that exists.
    fn refs(v: &Value, doc: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    let ptr = r.strip_prefix('#').expect("local refs only");
                    assert!(doc.pointer(ptr).is_some(), "dangling {r}");
                    out.push(r.clone());
                }
                m.values().for_each(|x| refs(x, doc, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, doc, out)),
            _ => {}
        }
    }

    /// The (path, method) pairs of a router's `.route("path", method(handler)...)`
    /// lines in `src` (methods chained as `get(a).delete(b)`; not `.route_service`).
    fn routes_in(src: &str) -> std::collections::BTreeSet<(String, String)> {
        let mut out = std::collections::BTreeSet::new();
        for line in src.lines() {
            let Some(rest) = line.trim().strip_prefix(".route(\"") else {
                continue;
            };
            let (path, mut chain) = rest.split_once("\", ").expect("a route's handler");
            loop {
                let (method, after) = chain.split_once('(').expect("a method router");
                assert!(
                    ["get", "post", "put", "patch", "delete"].contains(&method),
                    "{method} in {line}"
                );
                out.insert((path.to_owned(), method.to_owned()));
                let close = after.find(')').expect("the handler's `)`");
                match after[close + 1..].strip_prefix('.') {
                    Some(next) => chain = next,
                    None => break,
                }
            }
        }
        out
    }

    /// The (path, method) pairs of the document's operations, those tagged
    /// `console` apart.
    type Ops = std::collections::BTreeSet<(String, String)>;
    fn documented(doc: &Value) -> (Ops, Ops) {
        let (mut console, mut api) = (Ops::new(), Ops::new());
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let pair = (path.clone(), method.clone());
                if op["tags"]
                    .as_array()
                    .is_some_and(|t| t.contains(&json!("console")))
                {
                    console.insert(pair);
                } else {
                    api.insert(pair);
                }
            }
        }
        (console, api)
    }

    #[test]
    fn the_openapi_document_covers_every_route_and_resolves() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        let api_routes = [
            ("/v1/sessions", &["post"][..]),
            ("/v1/sessions/{id}/step", &["post"]),
            ("/v1/sessions/{id}", &["get", "delete"]),
            ("/v1/scenarios", &["get"]),
            ("/v1/tools", &["get"]),
            ("/openapi.json", &["get"]),
        ];
        let console_routes = [
            ("/", &["get"][..]),
            ("/assets/app.js", &["get"]),
            ("/assets/app.css", &["get"]),
            ("/assets/compare.js", &["get"]),
            ("/login", &["get"]),
            ("/v1/console/info", &["get"]),
            ("/v1/console/runs", &["get"]),
            ("/v1/console/runs/stream", &["get"]),
            ("/v1/console/compare", &["get"]),
            ("/v1/console/start", &["post"]),
            ("/v1/console/pause-all", &["post"]),
            ("/v1/console/resume-all", &["post"]),
            ("/v1/console/runs/{id}", &["get"]),
            ("/v1/console/runs/{id}/timeline", &["get"]),
            ("/v1/console/runs/{id}/stream", &["get"]),
            ("/v1/console/runs/{id}/world", &["get"]),
            ("/v1/console/runs/{id}/file", &["get"]),
            ("/v1/console/runs/{id}/turn", &["get"]),
            ("/v1/console/runs/{id}/act", &["post"]),
            ("/v1/console/runs/{id}/pause", &["post"]),
            ("/v1/console/runs/{id}/resume", &["post"]),
            ("/v1/console/runs/{id}/step", &["post"]),
            ("/v1/console/runs/{id}/guide", &["post"]),
            ("/v1/console/runs/{id}/hints", &["get"]),
            ("/v1/console/runs/{id}/fork", &["post"]),
            ("/v1/console/runs/{id}/close", &["post"]),
            ("/v1/console/runs/{id}/messages", &["get"]),
            ("/v1/console/runs/{id}/history", &["get"]),
        ];
        let mut ids = std::collections::BTreeSet::new();
        for (console, table) in [(false, &api_routes[..]), (true, &console_routes[..])] {
            for (path, methods) in table {
                let item = doc["paths"][path].as_object().expect(path);
                assert_eq!(item.len(), methods.len(), "methods of {path}");
                for m in *methods {
                    let op = &doc["paths"][path][m];
                    assert!(op.is_object(), "{m} {path}");
                    assert!(op["responses"].is_object(), "{m} {path}");
                    let id = op["operationId"].as_str().expect("an operationId");
                    assert!(ids.insert(id), "operationId {id} twice");
                    if console {
                        assert_eq!(op["tags"], json!(["console"]), "{m} {path}");
                        assert!(op["security"].is_array(), "{m} {path}");
                        for (status, r) in op["responses"].as_object().unwrap() {
                            if status.starts_with('4') || status.starts_with('5') {
                                let content = &r["content"];
                                let schema = &content["application/json"]["schema"];
                                assert!(
                                    schema["$ref"] == "#/components/schemas/Error"
                                        || (path == &"/login" && status == "400"),
                                    "{m} {path} {status}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(
            doc["paths"].as_object().unwrap().len(),
            api_routes.len() + console_routes.len()
        );
        // The agents' token and the console's are distinct schemes.
        let schemes = &doc["components"]["securitySchemes"];
        assert_eq!(schemes["bearer"]["scheme"], "bearer");
        assert_eq!(schemes["consoleBearer"]["scheme"], "bearer");
        assert_eq!(schemes["consoleCookie"]["in"], "cookie");
        assert_eq!(schemes["consoleCookie"]["name"], TOKEN_COOKIE);
        let login = &doc["paths"]["/login"]["get"]["responses"];
        assert!(login["303"]["headers"]["Set-Cookie"].is_object());
        assert!(login["401"].is_object());
        let mut seen = Vec::new();
        refs(&doc, &doc, &mut seen);
        assert!(seen.len() > 10);
        for schema in [
            "RunSummary",
            "RunDetail",
            "WorldView",
            "TimelineEntry",
            "Timeline",
            "Turn",
            "RunComparison",
            "BatchComparison",
        ] {
            let r = format!("#/components/schemas/{schema}");
            assert!(seen.contains(&r), "{schema} is never used");
        }
    }

    /// The document against the routers' source: a route added without being
    /// documented (or documented and gone) fails here.
    #[test]
    fn the_openapi_document_lists_exactly_the_routers_routes() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        let (console_ops, api_ops) = documented(&doc);
        let console = routes_in(include_str!("console/routes.rs"));
        // This file's router, without its tests (whose strings are not routes).
        let own = include_str!("http.rs");
        let own = &own[..own.find("#[cfg(test)]").expect("the tests module")];
        let mut api = routes_in(own);
        assert!(console.len() > 15, "{console:?}");
        assert!(api.len() >= 6, "{api:?}");
        // `/login` is the API router's route, but the console's operation.
        let login = ("/login".to_owned(), "get".to_owned());
        assert!(api.remove(&login), "{api:?}");
        let mut console = console;
        console.insert(login);
        let missing: Vec<_> = console.difference(&console_ops).collect();
        let extra: Vec<_> = console_ops.difference(&console).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "console routes not documented: {missing:?}; documented, not routed: {extra:?}"
        );
        assert_eq!(api_ops, api, "the session API's routes");
    }

    #[test]
    fn step_bodies_become_decisions() {
        let b: StepBody = serde_json::from_str(
            r#"{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"id": "k", "name": "b", "arguments": "{\"y\": 2}"}, {"name": "c"}]}"#,
        )
        .unwrap();
        let d = decision(b, 4);
        assert_eq!(d.calls[0].id, "call_5_1");
        assert_eq!(d.calls[0].arguments, r#"{"x":1}"#);
        assert_eq!(d.calls[1].id, "k");
        assert_eq!(d.calls[1].arguments, r#"{"y": 2}"#);
        assert_eq!(d.calls[2].arguments, "{}");
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let mut h = HeaderMap::new();
        assert!(!bearer_ok(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, "Bearer s3cre".parse().unwrap());
        assert!(!bearer_ok(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, "Basic s3cret".parse().unwrap());
        assert!(!bearer_ok(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(bearer_ok(&h, "s3cret"));
        // The cookie is a separate credential, never a bearer one.
        let mut c = HeaderMap::new();
        c.insert(header::COOKIE, "a=b; tbsim_token=s3cret".parse().unwrap());
        assert!(cookie_ok(&c, "s3cret") && !bearer_ok(&c, "s3cret"));
    }
}
