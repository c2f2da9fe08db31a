//! The console's HTTP routes (see docs/console.md for every route and shape).
//!
//! Reads go to the run's directory and its control, never to a world in flight:
//! a world at step N is a replay of the recorded decisions (on the blocking pool;
//! kept worlds are advanced, see `worlds.rs`), so watching a run can neither slow
//! its decisions down nor change them.
//! Live views are server-sent events, computed by polling the trajectory file and
//! the control's version every [`POLL`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::stream::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use tbsim_core::protocol::FeedbackPolicy;
use tbsim_engine::live::{Control, GuidanceKind, GuidanceRequest};

use super::access::{err, playing, queued_check, refuse_while_playing};
use super::{Console, ConsoleError, Found, Mode, RunDetail, RunKind};
use crate::http::{ApiError, Id, decision, parse};
use crate::registry::{Driver, OpenExtras, OpenRequest};

/// How often live streams look for news.
pub const POLL: Duration = Duration::from_millis(200);

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");
const COMPARE_JS: &str = include_str!("assets/compare.js");
const EARLY_JS: &str = include_str!("assets/early.js");

/// The page's scripts and style by file name (a static export copies them).
pub(crate) const ASSETS: &[(&str, &str)] = &[
    ("app.js", APP_JS),
    ("app.css", APP_CSS),
    ("compare.js", COMPARE_JS),
];

/// The longest name a person may guide or play under.
pub const MAX_PERSON: usize = 40;

impl From<ConsoleError> for ApiError {
    fn from(e: ConsoleError) -> Self {
        let message = e.to_string();
        match e {
            ConsoleError::UnknownRun(_) => ApiError {
                status: StatusCode::NOT_FOUND,
                code: "unknown_run",
                message,
            },
            ConsoleError::Unreadable(..) => ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: "unreadable_run",
                message,
            },
        }
    }
}

/// No world to show: why, naming the run's directory by its last component only
/// (never a host path).
fn no_world(dir: &std::path::Path, e: &dyn std::fmt::Display) -> ApiError {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let message = e.to_string().replace(&dir.display().to_string(), &name);
    err(StatusCode::CONFLICT, "no_world", message)
}

/// A query string as `T`, or a JSON error saying what is wrong with it.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|r| err(StatusCode::BAD_REQUEST, "invalid_query", r.body_text()))
}

/// The console's routes (no fallback: they are merged into the API's router).
pub fn router(console: Arc<Console>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/app.css", get(app_css))
        .route("/assets/compare.js", get(compare_js))
        .route("/v1/console/compare", get(compare))
        .route("/v1/console/info", get(info))
        .route("/v1/console/runs", get(runs))
        .route("/v1/console/runs/stream", get(runs_stream))
        .route("/v1/console/start", post(start))
        .route("/v1/console/pause-all", post(pause_all))
        .route("/v1/console/resume-all", post(resume_all))
        .route("/v1/console/runs/{id}", get(detail))
        .route("/v1/console/runs/{id}/timeline", get(timeline))
        .route("/v1/console/runs/{id}/stream", get(run_stream))
        .route("/v1/console/runs/{id}/world", get(world))
        .route("/v1/console/runs/{id}/file", get(file))
        .route("/v1/console/runs/{id}/turn", get(turn))
        .route("/v1/console/runs/{id}/act", post(act))
        .route("/v1/console/runs/{id}/pause", post(pause))
        .route("/v1/console/runs/{id}/resume", post(resume))
        .route("/v1/console/runs/{id}/step", post(step_once))
        .route("/v1/console/runs/{id}/guide", post(guide))
        .route("/v1/console/runs/{id}/hints", get(hints))
        .route("/v1/console/runs/{id}/fork", post(fork))
        .route("/v1/console/runs/{id}/close", post(close))
        .route("/v1/console/runs/{id}/messages", get(messages))
        .route("/v1/console/runs/{id}/history", get(history))
        .with_state(console)
}

/// The page's files: `no-cache` (the browser asks each time, so a new binary's
/// files are used at once), with an ETag (the BLAKE3 of the file), so a browser
/// that holds the file gets a 304 and keeps it, and with it the compiled code of
/// a script the browser kept (a file sent again is compiled again: about a tenth
/// of the first paint on a loaded machine).
fn asset(req: &axum::http::HeaderMap, content_type: &'static str, body: &'static str) -> Response {
    let tag = format!("\"{}\"", &blake3::hash(body.as_bytes()).to_hex()[..32]);
    let held = req
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag
        });
    let mut r = if held {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Where the page names `early.js`, which it carries inline instead.
const EARLY_TAG: &str = r#"<script src="/assets/early.js"></script>"#;

/// The page as served: `index.html` with `early.js` inline, and its
/// Content-Security-Policy, which lets that one inline script run (by its hash).
///
/// Inline, the first requests (the runs list's summaries, or a run's detail,
/// timeline page and world) start as the page is parsed: loaded from its own URL,
/// they waited for one more round trip, 30-50 ms on a loaded machine, before
/// anything else could start.
fn page() -> &'static (String, HeaderValue) {
    static PAGE: std::sync::OnceLock<(String, HeaderValue)> = std::sync::OnceLock::new();
    PAGE.get_or_init(|| {
        use base64::Engine as _;
        use sha2::Digest as _;
        let html = INDEX_HTML.replacen(EARLY_TAG, &format!("<script>{EARLY_JS}</script>"), 1);
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(EARLY_JS));
        // The page loads only its own script and style; images come from the run's
        // files (same origin) or are drawn from blobs.
        let csp = format!(
            "default-src 'none'; script-src 'self' 'sha256-{hash}'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        );
        let csp = HeaderValue::from_str(&csp).unwrap_or_else(|_| {
            HeaderValue::from_static("default-src 'none'; script-src 'self'")
        });
        (html, csp)
    })
}

async fn index(req: axum::http::HeaderMap) -> Response {
    let (html, csp) = page();
    let mut r = asset(&req, "text/html; charset=utf-8", html);
    r.headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, csp.clone());
    r
}

async fn app_js(req: axum::http::HeaderMap) -> Response {
    asset(&req, "text/javascript; charset=utf-8", APP_JS)
}

async fn compare_js(req: axum::http::HeaderMap) -> Response {
    asset(&req, "text/javascript; charset=utf-8", COMPARE_JS)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareQuery {
    #[serde(default)]
    runs: Option<String>,
    #[serde(default)]
    batches: Option<String>,
}

/// Splits a comma-separated list of ids (empty parts dropped).
fn id_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `?runs=a,b` (runs side by side) or `?batches=A,B` (the paired comparison of
/// `tbsim report --compare`); see `compare.rs` for both.
async fn compare(
    State(c): State<Arc<Console>>,
    q: Result<Query<CompareQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query(q)?;
    let joined = tokio::task::spawn_blocking(move || match (q.runs, q.batches) {
        (Some(r), None) => serde_json::to_value(c.compare(&id_list(&r))?)
            .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())),
        (None, Some(b)) => serde_json::to_value(c.compare_batches(&id_list(&b))?)
            .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())),
        _ => Err(err(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            "give either `runs=<id>,<id>,…` or `batches=<name>,<name>,…`",
        )),
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??;
    Ok(Json(joined))
}

async fn app_css(req: axum::http::HeaderMap) -> Response {
    asset(&req, "text/css; charset=utf-8", APP_CSS)
}

async fn info(State(c): State<Arc<Console>>) -> Json<Value> {
    let scenarios = if c.mode() == Mode::Serve {
        c.registry().config().roots.stems()
    } else {
        Vec::new()
    };
    Json(json!({
        "mode": c.mode(),
        "read_only": c.mode() == Mode::View,
        "answers_allowed": c.answers_allowed(),
        "can_start": c.mode() == Mode::Serve,
        "scenarios": scenarios,
        "agents": c.agents().names(),
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// The runs list; summaries it answered without are then read in the background
/// (see [`Console::runs`]).
async fn list(c: &Arc<Console>) -> Vec<super::RunSummary> {
    let c2 = Arc::clone(c);
    let runs = tokio::task::spawn_blocking(move || c2.runs())
        .await
        .unwrap_or_default();
    if runs.iter().any(|r| r.indexing) {
        c.index_in_background();
    }
    runs
}

/// The list's body, written from the summaries themselves: through a `Value`
/// first, a 1,000-run list was built twice over and its keys sorted.
#[derive(Serialize)]
struct RunsBody<'a> {
    runs: &'a [super::RunSummary],
}

async fn runs(State(c): State<Arc<Console>>) -> Response {
    let runs = list(&c).await;
    Json(RunsBody { runs: &runs }).into_response()
}

fn sse<S>(stream: S) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

async fn runs_stream(State(c): State<Arc<Console>>) -> Response {
    let stream = futures_util::stream::unfold((c, String::new()), |(c, last)| async move {
        loop {
            let began = std::time::Instant::now();
            let runs = list(&c).await;
            let body = serde_json::to_string(&RunsBody { runs: &runs }).unwrap_or_default();
            if body != last {
                let ev = Event::default().event("runs").data(body.clone());
                return Some((Ok(ev), (c, body)));
            }
            // A long list costs more to look at: look at most a fifth of the time.
            tokio::time::sleep(POLL.max(began.elapsed() * 4)).await;
        }
    });
    sse(stream)
}

async fn detail_blocking(c: &Arc<Console>, id: &str) -> Result<RunDetail, ApiError> {
    let (c, id) = (Arc::clone(c), id.to_owned());
    tokio::task::spawn_blocking(move || c.detail(&id))
        .await
        .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
        .map_err(ApiError::from)
}

async fn detail(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<RunDetail>, ApiError> {
    Ok(Json(detail_blocking(&c, &id).await?))
}

#[derive(Debug, Deserialize)]
struct TimelineQuery {
    #[serde(default)]
    from: usize,
    /// At most this many lines (a page of a long run; all when absent).
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    answers: Option<u8>,
}

/// Whether the request asks for answers, and may have them.
async fn answers(c: &Arc<Console>, id: &str, asked: Option<u8>) -> Result<bool, ApiError> {
    if asked.unwrap_or(0) == 0 {
        return Ok(false);
    }
    if !c.answers_allowed() {
        return Err(err(
            StatusCode::FORBIDDEN,
            "answers_forbidden",
            "answers are shown only by `tbsim view` (read-only), for finished runs",
        ));
    }
    let d = detail_blocking(c, id).await?;
    if d.summary.state != "finished" {
        return Err(err(
            StatusCode::FORBIDDEN,
            "answers_forbidden",
            "answers are shown only for finished runs",
        ));
    }
    Ok(true)
}

/// Trajectory entries of `dir` from index `from` (see `tbsim_engine::inspect`),
/// reading only the page's lines (`pages.rs`).
fn read_entries(
    c: &Console,
    dir: PathBuf,
    from: usize,
    limit: Option<usize>,
    answers: bool,
) -> Result<tbsim_engine::inspect::Timeline, ApiError> {
    let unreadable = |m: String| err(StatusCode::INTERNAL_SERVER_ERROR, "unreadable_run", m);
    let epoch = c.epoch(&dir).map_err(|e| unreadable(e.to_string()))?;
    c.page(&dir.join("trajectory.jsonl"), from, limit, &epoch, answers)
        .map_err(|e| unreadable(e.to_string()))
}

async fn timeline(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    q: Result<Query<TimelineQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query(q)?;
    let found = c.find(&id)?;
    refuse_while_playing(&c, &found)?;
    queued_check(&found)?;
    let answers = answers(&c, &id, q.answers).await?;
    let dir = found.dir().to_path_buf();
    let c2 = Arc::clone(&c);
    let mut t =
        tokio::task::spawn_blocking(move || read_entries(&c2, dir, q.from, q.limit, answers))
            .await
            .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??;
    for l in &mut t.lines {
        super::messages::with_reply(l);
    }
    Ok(Json(
        json!({ "lines": t.lines, "next": t.next, "finished": t.finished, "total": t.total }),
    ))
}

/// The conversation of a model-backed run as its model saw it, each message once
/// (see `messages.rs`).
async fn messages(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    let found = c.find(&id)?;
    super::access::viewable(&c, &found)?;
    let dir = found.dir().to_path_buf();
    let conv = tokio::task::spawn_blocking(move || {
        let text = std::fs::read_to_string(dir.join("trajectory.jsonl")).map_err(|e| {
            err(
                StatusCode::INTERNAL_SERVER_ERROR,
                "unreadable_run",
                format!("trajectory.jsonl: {e}"),
            )
        })?;
        // Only model lines are parsed (a long run has thousands of others).
        let lines: Vec<Value> = text
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"model\""))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Ok::<_, ApiError>(super::messages::conversation(&lines))
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??;
    Ok(Json(json!({ "messages": conv })))
}

/// What a person playing has seen so far: for a fork, the parent's steps up to the
/// fork (its decisions and what they returned), then every turn of this session
/// (the first one's notifications included), oldest first.
async fn history(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    let e = session_of(&c, &id)?;
    if e.info.builtin {
        return Err(err(
            StatusCode::CONFLICT,
            "not_playable",
            "a built-in agent decides in this run",
        ));
    }
    note_turn(&c, &id, &e);
    let turns = c.play_history(&id);
    let recap = match e.info.fork.clone() {
        Some((parent, step)) => {
            let c2 = Arc::clone(&c);
            tokio::task::spawn_blocking(move || recap_of(&c2, parent, step))
                .await
                .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??
        }
        None => Vec::new(),
    };
    Ok(Json(json!({ "recap": recap, "turns": turns })))
}

/// The parent's decisions and results of steps 1..=`step` (what its agent saw).
fn recap_of(c: &Console, parent: PathBuf, step: u64) -> Result<Vec<Value>, ApiError> {
    let t = read_entries(c, parent, 0, None, false)?;
    Ok(t.lines
        .into_iter()
        .filter(|l| {
            matches!(
                l.get("type").and_then(Value::as_str),
                Some("decision") | Some("result")
            ) && l
                .get("step")
                .and_then(Value::as_u64)
                .is_some_and(|s| s <= step)
        })
        .collect())
}

/// Keeps the session's latest turn in its play history (once).
fn note_turn(c: &Console, id: &str, e: &crate::registry::Entry) {
    let t = e
        .info
        .last_turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    if let Some(t) = t {
        c.note_play_turn(id, turn_json(&t));
    }
}

struct RunStream {
    console: Arc<Console>,
    id: String,
    next: usize,
    last_status: String,
    pending: VecDeque<Event>,
    ended: bool,
}

async fn run_stream(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    q: Result<Query<TimelineQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    c.find(&id)?;
    let st = RunStream {
        console: c,
        id,
        next: q.from,
        last_status: String::new(),
        pending: VecDeque::new(),
        ended: false,
    };
    let stream = futures_util::stream::unfold(st, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.ended {
                return None;
            }
            poll_run(&mut st).await;
            if st.pending.is_empty() {
                tokio::time::sleep(POLL).await;
            }
        }
    });
    Ok(sse(stream))
}

/// One look at a watched run: new lines, a changed status, its end.
async fn poll_run(st: &mut RunStream) {
    let Ok(found) = st.console.find(&st.id) else {
        // The session was closed and forgotten: nothing more will come.
        st.ended = true;
        return;
    };
    if let Found::Session(_, e) = &found {
        // Being watched keeps a paused session from expiring as idle.
        e.touch();
    }
    let dir = found.dir().to_path_buf();
    let from = st.next;
    let c2 = Arc::clone(&st.console);
    // A run being played streams its status only: lines come once it ends.
    let hidden = refuse_while_playing(&st.console, &found).is_err();
    let read = if hidden {
        None
    } else {
        tokio::task::spawn_blocking(move || read_entries(&c2, dir, from, None, false))
            .await
            .ok()
    };
    let mut trajectory_ended = false;
    if let Some(Ok(t)) = read {
        for mut l in t.lines {
            super::messages::with_reply(&mut l);
            st.pending
                .push_back(Event::default().event("line").data(l.to_string()));
        }
        st.next = t.next;
        trajectory_ended = t.finished;
    }
    if let Ok(d) = detail_blocking(&st.console, &st.id).await {
        let body = serde_json::to_string(&d).unwrap_or_default();
        let interrupted = d.summary.state == "interrupted";
        let over = d.summary.state == "finished"
            || interrupted
            || (d.summary.kind == RunKind::Recorded && trajectory_ended);
        if over && (trajectory_ended || interrupted) {
            st.pending
                .push_back(Event::default().event("end").data(body.clone()));
            st.ended = true;
        } else if body != st.last_status {
            st.pending
                .push_back(Event::default().event("status").data(body.clone()));
        }
        st.last_status = body;
    }
}

#[derive(Debug, Deserialize)]
struct WorldQuery {
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    answers: Option<u8>,
    #[serde(default)]
    path: Option<String>,
    /// The step of the world the page holds, and that view's id (the world
    /// route's `x-tbsim-world-id`): the answer may then be the changes from it.
    #[serde(default)]
    since: Option<u64>,
    #[serde(default)]
    since_id: Option<String>,
}

async fn world(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    q: Result<Query<WorldQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let found = c.find(&id)?;
    refuse_while_playing(&c, &found)?;
    queued_check(&found)?;
    let answers = answers(&c, &id, q.answers).await?;
    let dir = found.dir().to_path_buf();
    let c2 = Arc::clone(&c);
    let since = q.since.zip(q.since_id).filter(|_| !answers);
    let (view, source, delta) = tokio::task::spawn_blocking(move || {
        if let Some((since, since_id)) = since {
            return c2
                .worlds()
                .view_since(&dir, q.step, since, &since_id)
                .map_err(|e| no_world(&dir, &e));
        }
        let (view, source) = c2
            .worlds()
            .view_from(&dir, q.step, answers)
            .map_err(|e| no_world(&dir, &e))?;
        if !answers {
            return Ok::<_, ApiError>((view, source, None));
        }
        Ok((with_expected(&c2, &dir, q.step, &view).into(), source, None))
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??;
    let id = super::world_delta::view_id(&view);
    let mut r = delta.unwrap_or_else(|| view.to_string()).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        super::worlds::SOURCE_HEADER,
        HeaderValue::from_static(source.as_str()),
    );
    if let Ok(id) = HeaderValue::from_str(&id) {
        h.insert(super::world_delta::ID_HEADER, id);
    }
    Ok(r)
}

/// A world with answers, each checkpoint given what it expects (`expected`: its
/// check as the scenario states it) and what the agent wrote there at that step
/// (`actual`: the file the check reads, or the value at its JSON pointer), so
/// "show answers" sets the answer beside the agent's.
fn with_expected(c: &Console, dir: &std::path::Path, step: Option<u64>, view: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(view) else {
        return view.to_owned();
    };
    let Ok(loaded) = tbsim_engine::run_dir::load_scenario(&dir.join("scenario.ron")) else {
        return view.to_owned();
    };
    let at = v.get("step").and_then(Value::as_u64).or(step);
    let Some(tasks) = v.get_mut("tasks").and_then(Value::as_array_mut) else {
        return view.to_owned();
    };
    for t in tasks {
        let key = t
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(spec) = loaded.scenario.tasks.iter().find(|s| s.key == key) else {
            continue;
        };
        let Some(cps) = t.get_mut("checkpoints").and_then(Value::as_array_mut) else {
            continue;
        };
        for cp in cps {
            let ck = cp.get("key").and_then(Value::as_str).unwrap_or_default();
            let Some(cs) = spec.checkpoints.iter().find(|s| s.key == ck) else {
                continue;
            };
            let expected = serde_json::to_value(&cs.check).unwrap_or(Value::Null);
            let actual = actual_for(c, dir, at, &expected);
            if let Some(o) = cp.as_object_mut() {
                o.insert("expected".into(), expected);
                if let Some(a) = actual {
                    o.insert("actual".into(), a);
                }
            }
        }
    }
    v.to_string()
}

/// What the agent wrote where a check looks: the file (`path`) at the step, as text
/// (cut at 4,000 characters), or the value at the check's JSON `pointer` in it.
fn actual_for(
    c: &Console,
    dir: &std::path::Path,
    step: Option<u64>,
    check: &Value,
) -> Option<Value> {
    // A check is `{Variant: {fields}}`.
    let fields = check.as_object()?.values().next()?.as_object()?;
    let path = fields.get("path")?.as_str()?;
    let candidates = [
        path.to_owned(),
        format!("workspace/{path}"),
        format!("drive/{path}"),
    ];
    let bytes = candidates
        .iter()
        .find_map(|p| c.worlds().file(dir, step, p).ok().flatten())
        .map(|(b, _)| b);
    let Some(bytes) = bytes else {
        return Some(json!({ "missing": true }));
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(ptr) = fields.get("pointer").and_then(Value::as_str) {
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        return Some(match parsed {
            Some(j) => json!({ "value": j.pointer(ptr).cloned().unwrap_or(Value::Null) }),
            None => {
                json!({ "text": text.chars().take(4000).collect::<String>(), "not_json": true })
            }
        });
    }
    Some(json!({ "text": text.chars().take(4000).collect::<String>() }))
}

async fn file(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    q: Result<Query<WorldQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let found = c.find(&id)?;
    refuse_while_playing(&c, &found)?;
    let Some(path) = q.path.clone() else {
        return Err(err(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "give the file's `path` (drive/… or workspace/…)",
        ));
    };
    queued_check(&found)?;
    let dir = found.dir().to_path_buf();
    let c2 = Arc::clone(&c);
    let got = tokio::task::spawn_blocking(move || {
        c2.worlds()
            .file(&dir, q.step, &path)
            .map_err(|e| no_world(&dir, &e))?
            .ok_or_else(|| {
                err(
                    StatusCode::NOT_FOUND,
                    "no_file",
                    format!("no file `{path}` on the drive or in the workspace at that step"),
                )
            })
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))??;
    let (bytes, content_type) = got;
    let mut r = bytes.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // An agent's file is data, never a page: opened on its own (an SVG with a
    // script, say) it runs in a sandbox without the console's origin.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
        ),
    );
    Ok(r)
}

fn session_of(c: &Console, id: &str) -> Result<Arc<crate::registry::Entry>, ApiError> {
    match c.find(id)? {
        Found::Session(_, e) => {
            e.touch();
            Ok(e)
        }
        Found::Fixed(_) => Err(err(
            StatusCode::CONFLICT,
            "not_playable",
            "this run is not a session a person plays",
        )),
    }
}

fn turn_json(t: &crate::session::Turn) -> Value {
    json!({
        "observation": t.observation,
        "progress": t.progress,
        "reward": t.reward,
        "terminated": t.terminated,
        "truncated": t.truncated,
    })
}

async fn turn(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    let e = session_of(&c, &id)?;
    if e.info.builtin {
        return Err(err(
            StatusCode::CONFLICT,
            "not_playable",
            "a built-in agent decides in this run",
        ));
    }
    let t = e
        .info
        .last_turn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    match t {
        Some(t) => Ok(Json(turn_json(&t))),
        None => Err(err(
            StatusCode::CONFLICT,
            "no_turn",
            "the run has not handed out a turn yet",
        )),
    }
}

async fn act(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let e = session_of(&c, &id)?;
    if !e.info.agent.starts_with("human:") {
        return Err(err(
            StatusCode::CONFLICT,
            "not_playable",
            "only a person's (`human:`) session is played from the console",
        ));
    }
    let b = parse(body)?;
    let mut session = e.session.lock().await;
    // The turn the person acted on is in the history before the one it leads to.
    note_turn(&c, &id, &e);
    let d = decision(b, session.state().steps);
    let t = session.step(d).await?;
    let j = turn_json(&t);
    c.note_play_turn(&id, j.clone());
    Ok(Json(j))
}

fn control_of(c: &Console, id: &str) -> Result<(Arc<Control>, Found), ApiError> {
    let found = c.find(id)?;
    if let Found::Session(_, e) = &found {
        e.touch();
    }
    let Some(ctl) = found.control() else {
        return Err(err(
            StatusCode::CONFLICT,
            "not_controllable",
            "a recorded run (or a job not started yet) cannot be paused, stepped or guided",
        ));
    };
    if ctl.status().state == tbsim_engine::live::LiveState::Finished {
        return Err(err(StatusCode::CONFLICT, "run_over", "the run is over"));
    }
    Ok((ctl, found))
}

/// The control of a run a watcher may hold: not one an external agent (a person
/// playing, a program over the session API or MCP) drives, whose own call would
/// hang until someone resumed it; guidance still reaches such a run.
fn holdable(c: &Console, id: &str) -> Result<Arc<Control>, ApiError> {
    let (ctl, found) = control_of(c, id)?;
    if let Found::Session(_, e) = &found
        && !e.info.builtin
    {
        return Err(err(
            StatusCode::CONFLICT,
            "not_pausable",
            "an external agent (a person or a program) decides in this run: it is not held, paused or stepped from the console; guidance still reaches it",
        ));
    }
    Ok(ctl)
}

async fn pause_all(State(c): State<Arc<Console>>) -> Json<Value> {
    Json(json!({ "changed": c.hold_all(true) }))
}

async fn resume_all(State(c): State<Arc<Console>>) -> Json<Value> {
    Json(json!({ "changed": c.hold_all(false) }))
}

async fn pause(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<RunDetail>, ApiError> {
    holdable(&c, &id)?.pause();
    Ok(Json(detail_blocking(&c, &id).await?))
}

async fn resume(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<RunDetail>, ApiError> {
    holdable(&c, &id)?.resume();
    Ok(Json(detail_blocking(&c, &id).await?))
}

async fn step_once(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<RunDetail>, ApiError> {
    holdable(&c, &id)?.step_once();
    Ok(Json(detail_blocking(&c, &id).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuideBody {
    by: String,
    #[serde(default)]
    task: Option<String>,
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// A person's name as given on the page: trimmed, 1-40 characters of letters,
/// digits, space, `-`, `_`, `.`.
fn person(name: &str) -> Result<String, ApiError> {
    let n = name.trim();
    let ok = !n.is_empty()
        && n.chars().count() <= MAX_PERSON
        && n.chars()
            .all(|ch| ch.is_alphanumeric() || matches!(ch, ' ' | '-' | '_' | '.'));
    if ok {
        Ok(n.to_owned())
    } else {
        Err(err(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("a name is 1-{MAX_PERSON} letters, digits, spaces, `-`, `_` or `.`"),
        ))
    }
}

async fn guide(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let b: GuideBody = parse(body)?;
    let (ctl, found) = control_of(&c, &id)?;
    // The console cannot tell the player from anyone else, so a run a person plays
    // gets no guidance from it at all: a human-alone run stays alone.
    if playing(&found) {
        return Err(err(
            StatusCode::UNPROCESSABLE_ENTITY,
            "guidance_refused",
            "a person is playing this run: it takes no guidance from the console",
        ));
    }
    let by = format!(
        "human:{}",
        person(b.by.strip_prefix("human:").unwrap_or(&b.by))?
    );
    let kind = match (b.kind.as_str(), b.text) {
        ("hint", _) => GuidanceKind::NextHint,
        ("message", Some(t)) => GuidanceKind::Message(t),
        ("message", None) => GuidanceKind::Message(String::new()),
        (other, _) => {
            return Err(err(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("kind is `hint` or `message`, not `{other}`"),
            ));
        }
    };
    let task = b.task.filter(|t| !t.is_empty());
    let tier = ctl.guide(GuidanceRequest { by, task, kind }).map_err(|e| {
        err(
            StatusCode::UNPROCESSABLE_ENTITY,
            "guidance_refused",
            e.to_string(),
        )
    })?;
    Ok(Json(json!({ "tier": tier })))
}

/// The hint each released task would get next from "send next hint tier" (its
/// tier and text), so the person guiding a live run sees what they are about to
/// send. Only where guidance may be sent: never for a run a person plays, nor any
/// run of a scenario being played (`refuse_while_playing`).
async fn hints(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    tokio::task::spawn_blocking(move || {
        let (_, found) = control_of(&c, &id)?;
        refuse_while_playing(&c, &found)?;
        let tiers = c.detail_of(&found).hint_tiers;
        let loaded = tbsim_engine::run_dir::load_scenario(&found.dir().join("scenario.ron"))
            .map_err(|_| {
                err(
                    StatusCode::CONFLICT,
                    "no_scenario",
                    "the run's scenario.ron is not written yet",
                )
            })?;
        Ok(Json(
            json!({ "next": next_hints(&loaded.scenario, &tiers) }),
        ))
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
}

/// Per task with a tier left: the next tier (1-based) and its text.
fn next_hints(
    scenario: &tbsim_scenario::spec::Scenario,
    tiers: &std::collections::BTreeMap<String, (u8, u8)>,
) -> serde_json::Map<String, Value> {
    let mut next = serde_json::Map::new();
    for (task, &(given, _)) in tiers {
        let Some(spec) = scenario.tasks.iter().find(|t| &t.key == task) else {
            continue;
        };
        if let Some(text) = spec.hints.get(usize::from(given)) {
            next.insert(
                task.clone(),
                json!({ "tier": u16::from(given) + 1, "text": text }),
            );
        }
    }
    next
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkBody {
    step: u64,
    agent: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    scenario: String,
    agent: String,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    hints: u8,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    max_steps: Option<u64>,
    #[serde(default)]
    feedback: FeedbackPolicy,
}

/// Who decides for an agent name given on the page: a person (`human:<name>`,
/// through the page), or a built-in agent made for the scenario.
fn driver_for(
    c: &Console,
    agent: &str,
    scenario: &tbsim_scenario::LoadedScenario,
    seed: u64,
) -> Result<(String, Driver), ApiError> {
    if let Some(name) = agent.strip_prefix("human:") {
        let name = person(name)?;
        return Ok((format!("human:{name}"), Driver::Remote));
    }
    let offered = c.agents().names();
    let known = offered.iter().any(|n| n == agent)
        || agent.starts_with("adversary:")
        || (agent.starts_with("llm:") && offered.iter().any(|n| n.starts_with("llm:")));
    if !known {
        return Err(err(
            StatusCode::BAD_REQUEST,
            "unknown_agent",
            format!(
                "unknown agent `{agent}`; available: human:<name>, {}",
                offered.join(", ")
            ),
        ));
    }
    let made = c
        .agents()
        .make(agent, scenario, seed)
        .map_err(|m| err(StatusCode::BAD_REQUEST, "unknown_agent", m))?;
    Ok((agent.to_owned(), Driver::Builtin(made)))
}

async fn fork(
    State(c): State<Arc<Console>>,
    Id(id): Id,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let b: ForkBody = parse(body)?;
    let found = c.find(&id)?;
    let dir = found.dir().to_path_buf();
    let d2 = dir.clone();
    let (loaded, header) = tokio::task::spawn_blocking(move || {
        let loaded = tbsim_engine::run_dir::load_scenario(&d2.join("scenario.ron"));
        (loaded, super::read_header(&d2))
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let loaded = loaded.map_err(|e| err(StatusCode::CONFLICT, "fork_refused", e.to_string()))?;
    let header = header?;
    let (agent, driver) = driver_for(&c, &b.agent, &loaded, header.seed)?;
    let max_steps = tbsim_engine::run_file::RunFile::read(&dir)
        .map(|f| f.options.max_steps)
        .unwrap_or(400);
    let req = OpenRequest {
        scenario: header.scenario.clone(),
        seed: Some(header.seed),
        hints: header.hints,
        feedback: header.feedback,
        max_steps,
        agent,
        tag: None,
        compress: false,
    };
    let extras = OpenExtras {
        control: Some(Control::new(false)),
        fork: Some((dir, b.step)),
    };
    let (new_id, _) = c.registry().open_with(req, driver, extras).await?;
    Ok(Json(json!({ "id": new_id })))
}

async fn start(
    State(c): State<Arc<Console>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    if c.mode() != Mode::Serve {
        return Err(err(
            StatusCode::FORBIDDEN,
            "read_only",
            "runs are started from the console of `tbsim serve` only",
        ));
    }
    let b: StartBody = parse(body)?;
    if b.hints > 3 {
        return Err(err(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "hints must be 0-3",
        ));
    }
    let path = c
        .registry()
        .config()
        .roots
        .resolve(&b.scenario)
        .map_err(crate::registry::RegistryError::from)?;
    let name = b.scenario.clone();
    let p2 = path.clone();
    let loaded = tokio::task::spawn_blocking(move || tbsim_scenario::load_file(&p2))
        .await
        .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
        .map_err(|e| {
            let shown = crate::scenarios::client_message(&name, &path, &e);
            ApiError::from(crate::registry::RegistryError::InvalidScenario(name, shown))
        })?;
    let seed = b.seed.unwrap_or(loaded.scenario.seed);
    let (agent, driver) = driver_for(&c, &b.agent, &loaded, seed)?;
    let req = OpenRequest {
        scenario: b.scenario,
        seed: Some(seed),
        hints: b.hints,
        feedback: b.feedback,
        max_steps: b.max_steps.unwrap_or(400).max(1),
        agent,
        tag: None,
        compress: false,
    };
    // Only a built-in agent's run can be held (see `holdable`). A person's run held
    // from its start would never hand out its first turn, which opening it awaits:
    // the request would hang for ever and its run could never be let go.
    let paused = b.paused && matches!(driver, Driver::Builtin(_));
    let extras = OpenExtras {
        control: Some(Control::new(paused)),
        fork: None,
    };
    let (id, _) = c.registry().open_with(req, driver, extras).await?;
    Ok(Json(json!({ "id": id })))
}

async fn close(State(c): State<Arc<Console>>, Id(id): Id) -> Result<Json<Value>, ApiError> {
    match c.find(&id)? {
        Found::Session(_, e) => {
            // Closed, not forgotten: the finished run stays listed until it expires.
            e.touch();
            e.session.lock().await.close().await?;
            Ok(Json(json!({ "closed": id })))
        }
        Found::Fixed(f) => match f.control() {
            Some(ctl) => {
                ctl.cancel();
                Ok(Json(json!({ "closed": id })))
            }
            None => Err(err(
                StatusCode::CONFLICT,
                "not_controllable",
                "a recorded run (or a job not started yet) cannot be closed",
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::next_hints;

    /// The page carries `early.js` inline, allowed by its hash: a page whose script
    /// and policy disagree would start nothing early (the browser refuses it).
    #[test]
    fn the_page_carries_its_early_script_inline_and_its_policy_allows_exactly_that() {
        use base64::Engine as _;
        use sha2::Digest as _;
        let (html, csp) = super::page();
        assert!(
            super::INDEX_HTML.contains(super::EARLY_TAG),
            "index.html names early.js"
        );
        assert!(!html.contains("/assets/early.js"), "no request for it");
        assert!(
            !super::EARLY_JS.contains("</script"),
            "early.js cannot end its own tag"
        );
        let inline = format!("<script>{}</script>", super::EARLY_JS);
        assert!(html.contains(&inline));
        // The policy names the hash of exactly the script's text.
        let hash = base64::engine::general_purpose::STANDARD
            .encode(sha2::Sha256::digest(super::EARLY_JS.as_bytes()));
        let csp = csp.to_str().unwrap();
        assert!(
            csp.contains(&format!("script-src 'self' 'sha256-{hash}';")),
            "{csp}"
        );
        assert!(!csp.contains("unsafe-inline"), "{csp}");
    }

    #[test]
    fn the_next_hint_is_the_tier_after_those_given() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../content/scenarios/meeting-only.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let task = &loaded.scenario.tasks[0];
        let n = u8::try_from(task.hints.len()).unwrap();
        assert!(n >= 2, "a task with two hints or more");
        let mut tiers = BTreeMap::new();
        tiers.insert(task.key.clone(), (0, n));
        tiers.insert("task/not-in-the-scenario".to_owned(), (0, 3));
        let next = next_hints(&loaded.scenario, &tiers);
        assert_eq!(next.len(), 1, "{next:?}");
        assert_eq!(next[&task.key]["tier"], 1);
        assert_eq!(next[&task.key]["text"], task.hints[0].as_str());
        tiers.insert(task.key.clone(), (1, n));
        let next = next_hints(&loaded.scenario, &tiers);
        assert_eq!(next[&task.key]["tier"], 2);
        assert_eq!(next[&task.key]["text"], task.hints[1].as_str());
        // Every tier given: nothing left to preview.
        tiers.insert(task.key.clone(), (n, n));
        assert!(next_hints(&loaded.scenario, &tiers).is_empty());
    }
}
