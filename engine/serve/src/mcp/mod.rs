//! The MCP server: one world per MCP connection, over stdio (`tbsim mcp`) or
//! streamable HTTP (`/mcp` in `tbsim serve`, see [`http_service`]).
//!
//! * `initialize` starts the world: the run's agent is `mcp:<name>` (the `agent=`
//!   query, `--agent-name`, else `clientInfo.name`); the result's `instructions` say
//!   how the world works ([`INSTRUCTIONS`]); the briefing and the first observation's
//!   notifications come once, with the first tool result.
//! * `tools/list` is the catalogue (`tbsim_core::protocol::catalogue()`): the same
//!   names and argument schemas as `tbsim tools --json`, each description ending with
//!   the tool's time cost, the family and cost in minutes also under `_meta`.
//! * `tools/call` is a one-call [`Decision`] stepped through the shared
//!   [`Session`], so it costs and is checked exactly as the built-in agents' calls
//!   are. The result's text is the engine's tool result as JSON (`ok`, `time`,
//!   `result` or `error`, `notifications`, and `run_over`/`end_reason` once the
//!   run is over, and `final`, the run's result, from the call that ended it); images
//!   come as image content. A refused call — unknown tool,
//!   arguments that fail the schema, a call after the run ended — is a result with
//!   `isError: true` whose text is the structured error; JSON-RPC errors are left
//!   to malformed protocol messages. The call id recorded in the trajectory is
//!   `_meta["tbsim/call_id"]` when the request gives one (1-64 characters), else
//!   `mcp-<n>` for the connection's n-th call. `_meta["tbsim/empty_turns"]` (0-1000)
//!   records that many turns without a tool call before it, as `tbsim run` records a
//!   model's empty turns (counted in `result.json`, charged the turn's time); on a
//!   `resources/read` it records a run's last empty turns, which no call follows. Over
//!   HTTP the `initialize` result's
//!   `_meta["tbsim/session"]` is the registry session (the run directory's name).
//! * Notifications also go out as `notifications/message` (logger `tbsim`, level
//!   `info`, the notification as data), and a subscribed resource that changed gets
//!   `notifications/resources/updated`. The resources ([`view::RESOURCES`]:
//!   `tbsim://briefing`, `tbsim://tasks`, `tbsim://calendar`, `tbsim://mailbox`,
//!   `tbsim://notifications`) are built only from what the agent was shown.
//! * `finish`, the end of the working days or the connection closing ends the run;
//!   its directory is written as `tbsim run` writes it.
//!
//! Only protocol versions with an `initialize` handshake are offered (up to
//! `2025-11-25`), since a world lives as long as its connection or MCP session.

// Logging (`notifications/message`, `logging/setLevel`) and `resources/subscribe`
// are deprecated from protocol 2026-07-28 on (SEP-2577) but are those of the
// handshake versions served here.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

use tbsim_core::protocol::{Decision, FeedbackPolicy, Notification, ToolCall, catalogue};
use tbsim_core::segment::{Segment, confined_join};
use tbsim_engine::result::RunResult;
use tbsim_scenario::LoadedScenario;

use crate::registry::{OpenRequest, Registry, RegistryError};
use crate::session::{Session, SessionError, SessionSpec, Turn};

mod fast;
mod http;
mod lines;
pub mod view;

pub use fast::{FastCalls, fast_call};
pub use http::{RECONNECT_GRACE, StartQuery, StreamGuard, StreamWatch, http_service};
pub use lines::MAX_LINE as MAX_STDIO_LINE;
use view::View;

/// The `_meta` key naming the call id a `tools/call` is recorded under.
pub const CALL_ID_META: &str = "tbsim/call_id";

/// The `_meta` key of a `tools/call` saying how many turns the model took without
/// calling a tool since its last call (0-1000): each is recorded before the call as
/// the native loop records it, an empty decision that costs the turn's time.
pub const EMPTY_TURNS_META: &str = "tbsim/empty_turns";

/// The most empty turns one call may carry.
pub const MAX_EMPTY_TURNS: u64 = 1000;

/// `_meta["tbsim/empty_turns"]` read: absent is 0; else an integer 0-1000.
fn empty_count(v: Option<Value>) -> Result<u64, String> {
    match v {
        None => Ok(0),
        Some(n) => match n.as_u64() {
            Some(n) if n <= MAX_EMPTY_TURNS => Ok(n),
            _ => Err(format!(
                "`_meta.{EMPTY_TURNS_META}` must be an integer from 0 to {MAX_EMPTY_TURNS}"
            )),
        },
    }
}

/// The `_meta` key of the `initialize` result naming the registry session of an
/// HTTP world (its run directory is `<out>/<session>/`).
pub const SESSION_META: &str = "tbsim/session";

/// The longest client name kept (from `clientInfo.name`).
pub const MAX_CLIENT_NAME: usize = 64;

/// The logger name of the notifications sent as `notifications/message`.
pub const LOGGER: &str = "tbsim";

/// What a stdio server runs (`tbsim mcp`).
#[derive(Debug, Clone)]
pub struct StdioSpec {
    /// The scenario.
    pub scenario: Arc<LoadedScenario>,
    /// Master seed (default: the scenario's).
    pub seed: Option<u64>,
    /// Hint tier (0-3).
    pub hints: u8,
    /// Mentor feedback between days.
    pub feedback: FeedbackPolicy,
    /// Maximum decisions per working day.
    pub max_steps: u64,
    /// The run directory (default: `runs/<scenario>-mcp-<client>`).
    pub out: Option<PathBuf>,
    /// The agent's name, recorded as `mcp:<name>` (default: `clientInfo.name`).
    pub agent_name: Option<String>,
    /// The run's tag, recorded in `run.json` (checked by the caller).
    pub tag: Option<String>,
}

/// Where a connection's world comes from.
#[derive(Debug)]
enum Start {
    /// A world of its own (stdio).
    Own(StdioSpec),
    /// A session of a server's registry (streamable HTTP); the scenario comes from
    /// the query of the `initialize` request.
    Shared(Arc<Registry>),
}

/// A registry session held by one MCP session; forgotten (and so ended, as
/// abandoned if it was going) when the MCP session goes.
#[derive(Debug)]
struct Lease {
    registry: Arc<Registry>,
    id: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Ok(entry) = self.registry.remove(&self.id) else {
            return;
        };
        // The slot is free now; the run ends (as abandoned if it was going), its
        // directory is written and its final state kept for readers.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                let (registry, id) = (Arc::clone(&self.registry), self.id.clone());
                rt.spawn(async move {
                    let _ = registry.retire(id, &entry).await;
                });
            }
            // Dropping the entry still ends the run; its thread writes the directory.
            Err(_) => {
                drop(entry);
                self.registry.retired(&self.id);
            }
        }
    }
}

#[derive(Debug)]
enum World {
    Own(Box<Session>),
    Shared(Lease),
}

/// A started world and what the connection still owes its agent.
#[derive(Debug)]
pub(crate) struct Live {
    world: World,
    /// Calls made so far on this connection.
    calls: u64,
    /// The first observation's briefing and notifications, given with the first
    /// tool result (and nowhere else).
    pending: Vec<Notification>,
    briefing: Option<Value>,
}

/// Why a step gave no turn.
#[derive(Debug, thiserror::Error)]
enum StepError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{0}")]
    Registry(#[from] RegistryError),
}

impl Live {
    /// One step, and the run's result when the run ended with it (its directory is
    /// written by then).
    async fn step(&mut self, d: Decision) -> Result<(Turn, Option<RunResult>), StepError> {
        match &mut self.world {
            World::Own(s) => {
                let turn = s.step(d).await?;
                Ok((turn, s.result().cloned()))
            }
            World::Shared(lease) => {
                let entry = lease.registry.get(&lease.id)?;
                let mut s = entry.session.lock().await;
                let turn = s.step(d).await?;
                Ok((turn, s.result().cloned()))
            }
        }
    }
}

/// The MCP server of one connection (see the module docs).
#[derive(Debug)]
pub struct McpServer {
    start: Start,
    live: Arc<tokio::sync::Mutex<Option<Live>>>,
    view: Arc<Mutex<View>>,
    subscribed: Arc<Mutex<BTreeSet<String>>>,
    /// The client asked for no `info` log messages (`logging/setLevel` above it).
    quiet: Arc<AtomicBool>,
    /// Where an HTTP session registers for calls answered without rmcp's session
    /// transport (see [`fast`]).
    fast: Option<Arc<fast::FastCalls>>,
}

/// A message a call sends its client besides its result.
#[derive(Debug, Clone)]
pub(crate) enum Outgoing {
    /// `notifications/message` (logger [`LOGGER`]).
    Log(LoggingMessageNotificationParam),
    /// `notifications/resources/updated`.
    Updated(String),
}

impl Outgoing {
    /// Sends it on the session's stream (the standalone one over HTTP).
    async fn send(self, peer: &rmcp::Peer<RoleServer>) {
        // A client gone away is the connection's end, seen elsewhere.
        let _ = match self {
            Outgoing::Log(p) => peer.notify_logging_message(p).await,
            Outgoing::Updated(uri) => {
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await
            }
        };
    }
}

/// What a `tools/call` reads and changes of its connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conn<'a> {
    live: &'a tokio::sync::Mutex<Option<Live>>,
    view: &'a Mutex<View>,
    subscribed: &'a Mutex<BTreeSet<String>>,
    quiet: &'a AtomicBool,
}

impl Conn<'_> {
    fn resources_now(&self) -> Vec<(String, String)> {
        let subscribed: Vec<String> = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if subscribed.is_empty() {
            return Vec::new();
        }
        let view = self.view.lock().unwrap_or_else(PoisonError::into_inner);
        subscribed
            .into_iter()
            .map(|uri| {
                let text = view.read(&uri).map(|v| v.to_string()).unwrap_or_default();
                (uri, text)
            })
            .collect()
    }

    /// Records `n` turns without a tool call, as the native loop records them
    /// (stopping early if the run ends); the notifications they brought.
    async fn step_empty(&self, live: &mut Live, n: u64) -> Result<Vec<Notification>, String> {
        let mut earlier = Vec::new();
        for _ in 0..n {
            match live.step(Decision { calls: Vec::new() }).await {
                Ok((turn, _)) => {
                    self.view
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .observe(&turn.observation);
                    let over = turn.observation.over;
                    earlier.extend(turn.observation.notifications);
                    if over {
                        break;
                    }
                }
                Err(StepError::Session(SessionError::Over(_))) => break,
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(earlier)
    }

    /// Empty turns a client reports without a call to follow them (the model's
    /// last turns of a run): recorded now; what they brought waits for the next
    /// call and shows in the resources. `n` is `_meta["tbsim/empty_turns"]`.
    pub(crate) async fn trailing_empty(&self, n: Option<Value>) -> Result<(), McpError> {
        let n = empty_count(n).map_err(|m| McpError::invalid_params(m, None))?;
        if n == 0 {
            return Ok(());
        }
        let mut guard = self.live.lock().await;
        let Some(live) = guard.as_mut() else {
            return Err(McpError::invalid_request(
                "no world: send `initialize` first",
                None,
            ));
        };
        let earlier = self
            .step_empty(live, n)
            .await
            .map_err(|e| McpError::internal_error(e, None))?;
        live.pending.extend(earlier);
        Ok(())
    }

    /// One `tools/call`: its result, and the notifications and resource updates to
    /// send before it. `given_id` is the request's `_meta["tbsim/call_id"]`.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        given_id: Option<Value>,
        empty_turns: Option<Value>,
    ) -> Result<(CallToolResult, Vec<Outgoing>), McpError> {
        let mut guard = self.live.lock().await;
        let Some(live) = guard.as_mut() else {
            return Err(McpError::invalid_request(
                "no world: send `initialize` first",
                None,
            ));
        };
        let id = match given_id {
            None => format!("mcp-{}", live.calls + 1),
            Some(Value::String(s)) if (1..=64).contains(&s.chars().count()) => s,
            Some(_) => {
                return Ok((
                    tool_error(
                        "schema",
                        format!("`_meta.{CALL_ID_META}` must be a string of 1-64 characters"),
                    ),
                    Vec::new(),
                ));
            }
        };
        let empty = match empty_count(empty_turns) {
            Ok(n) => n,
            Err(m) => return Ok((tool_error("schema", m), Vec::new())),
        };
        // The model's turns without a tool call, recorded before this call as the
        // native loop records them; what they brought arrives with this call.
        let earlier = match self.step_empty(live, empty).await {
            Ok(notes) => notes,
            Err(e) => return Ok((tool_error("unavailable", e), Vec::new())),
        };
        let arguments = match request.arguments {
            None => "{}".to_owned(),
            Some(args) => Value::Object(args).to_string(),
        };
        let decision = Decision {
            calls: vec![ToolCall {
                id,
                name: request.name.into_owned(),
                arguments,
            }],
        };
        let before = self.resources_now();
        let (turn, run_result) = match live.step(decision).await {
            Ok(done) => done,
            Err(StepError::Session(e @ SessionError::Over(_))) => {
                return Ok((tool_error("run_over", e.to_string()), Vec::new()));
            }
            Err(StepError::Session(
                e @ (SessionError::WriteFailed(_) | SessionError::Failed(_)),
            )) => {
                return Ok((
                    tool_error("trajectory_write_failed", e.to_string()),
                    Vec::new(),
                ));
            }
            Err(e) => return Ok((tool_error("unavailable", e.to_string()), Vec::new())),
        };
        live.calls += 1;
        let mut pending = std::mem::take(&mut live.pending);
        pending.extend(earlier);
        let briefing = live.briefing.take();
        drop(guard);
        // The pending notifications were recorded with the first observation.
        self.view
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(&turn.observation);
        let (result, notes) = call_result(turn, pending, briefing, run_result.as_ref());
        let mut out = Vec::new();
        if !self.quiet.load(Ordering::Relaxed) {
            for n in &notes {
                let data = serde_json::to_value(n).expect("notifications serialise");
                out.push(Outgoing::Log(
                    LoggingMessageNotificationParam::new(LoggingLevel::Info, data)
                        .with_logger(LOGGER),
                ));
            }
        }
        let after = self.resources_now();
        for ((uri, old), (_, new)) in before.into_iter().zip(after) {
            if old != new {
                out.push(Outgoing::Updated(uri));
            }
        }
        Ok((result, out))
    }
}

impl McpServer {
    /// A server whose world is its own (stdio).
    pub fn own(spec: StdioSpec) -> McpServer {
        McpServer::new(Start::Own(spec))
    }

    /// A server whose world is a session of `registry` (streamable HTTP).
    pub fn shared(registry: Arc<Registry>) -> McpServer {
        McpServer::new(Start::Shared(registry))
    }

    /// [`McpServer::shared`] whose session registers with `fast` once the client
    /// says it is initialised, so its tool calls can skip rmcp's transport.
    pub(crate) fn shared_fast(registry: Arc<Registry>, fast: Arc<fast::FastCalls>) -> McpServer {
        let mut s = McpServer::new(Start::Shared(registry));
        s.fast = Some(fast);
        s
    }

    fn new(start: Start) -> McpServer {
        McpServer {
            start,
            live: Arc::new(tokio::sync::Mutex::new(None)),
            view: Arc::new(Mutex::new(View::default())),
            subscribed: Arc::new(Mutex::new(BTreeSet::new())),
            quiet: Arc::new(AtomicBool::new(false)),
            fast: None,
        }
    }

    fn conn(&self) -> Conn<'_> {
        Conn {
            live: &self.live,
            view: &self.view,
            subscribed: &self.subscribed,
            quiet: &self.quiet,
        }
    }

    /// A handle that ends the world once the connection is over (see
    /// [`Closer::close`]).
    pub fn closer(&self) -> Closer {
        Closer {
            live: self.live.clone(),
        }
    }

    fn view(&self) -> std::sync::MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn start_world(
        &self,
        client: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(World, Turn), McpError> {
        match &self.start {
            Start::Own(spec) => {
                let client = spec
                    .agent_name
                    .as_deref()
                    .map_or(client.to_owned(), client_name);
                let agent = format!("mcp:{client}");
                let dir = spec.out.clone().unwrap_or_else(|| {
                    let name = &spec.scenario.scenario.name;
                    confined_join(
                        std::path::Path::new("runs"),
                        &Segment::compose(&[name, "mcp", &client]),
                    )
                });
                let (session, turn) = Session::start(SessionSpec {
                    scenario: spec.scenario.clone(),
                    seed: spec.seed,
                    hints: spec.hints,
                    feedback: spec.feedback,
                    max_steps: spec.max_steps,
                    agent,
                    tag: spec.tag.clone(),
                    compress: false,
                    dir,
                    control: None,
                    fork: None,
                    view_cache: None,
                })
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                Ok((World::Own(Box::new(session)), turn))
            }
            Start::Shared(registry) => {
                let query = context
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|p| p.uri.query())
                    .unwrap_or_default();
                let q = StartQuery::parse(query)
                    .map_err(|e| McpError::invalid_params(e, Some(json!({"query": query}))))?;
                let agent = format!(
                    "mcp:{}",
                    q.agent.as_deref().map_or(client.to_owned(), client_name)
                );
                let req = OpenRequest {
                    scenario: q.scenario,
                    seed: q.seed,
                    hints: q.hints,
                    feedback: q.feedback,
                    max_steps: q.max_steps,
                    agent,
                    tag: q.tag,
                    compress: false,
                };
                let (id, turn) = registry.open(req).await.map_err(open_error)?;
                let lease = Lease {
                    registry: registry.clone(),
                    id,
                };
                Ok((World::Shared(lease), turn))
            }
        }
    }
}

/// Ends a connection's world after the connection is over.
#[derive(Debug, Clone)]
pub struct Closer {
    live: Arc<tokio::sync::Mutex<Option<Live>>>,
}

impl Closer {
    /// Ends the run if it is still going (as abandoned), waits until its directory
    /// is written and returns its result; `None` when no world was started (the
    /// client never initialised). For a registry session the registry closes it.
    pub async fn close(&self) -> Result<Option<RunResult>, SessionError> {
        let Some(live) = self.live.lock().await.take() else {
            return Ok(None);
        };
        match live.world {
            World::Own(mut s) => Ok(Some(s.close().await?.clone())),
            World::Shared(_) => Ok(None),
        }
    }
}

fn open_error(e: RegistryError) -> McpError {
    let message = e.to_string();
    match e {
        RegistryError::Scenario(_) | RegistryError::InvalidScenario(..) => {
            McpError::invalid_params(message, None)
        }
        _ => McpError::internal_error(message, None),
    }
}

/// A client name as recorded: `clientInfo.name` with anything but A-Z, a-z, 0-9,
/// `-`, `_` and `.` turned into `-`, at most [`MAX_CLIENT_NAME`] characters;
/// `client` when empty.
pub fn client_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(MAX_CLIENT_NAME)
        .collect();
    if s.is_empty() { "client".into() } else { s }
}

/// The `initialize` instructions: how the world works, never the briefing. The
/// briefing and the first notifications come once, with the first tool result:
/// harnesses (Inspect among them) drop `instructions` but always pass tool results
/// to the model, and a harness that passes both would otherwise show them twice.
pub const INSTRUCTIONS: &str = "You are an intern in a simulated company; a tbsim world runs \
     behind these tools. Every tool call costs simulated time (each tool's description \
     says how much). Your first tool result carries your briefing (`briefing`); new \
     tasks, messages, meetings and mentor feedback arrive in each tool result's \
     `notifications`. The resources tbsim://briefing, tbsim://tasks, tbsim://calendar, \
     tbsim://mailbox and tbsim://notifications keep what you have been told. Call \
     `finish` once you are done for good (its result has your final score); the run \
     also ends with the working day or when you disconnect.";

fn tool_error(kind: &str, message: String) -> CallToolResult {
    let body = json!({"ok": false, "error": {"kind": kind, "message": message}});
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}

/// The tool result of a one-call turn, and every notification it carries.
fn call_result(
    turn: Turn,
    pending: Vec<Notification>,
    briefing: Option<Value>,
    result: Option<&RunResult>,
) -> (CallToolResult, Vec<Notification>) {
    let obs = turn.observation;
    let mut notes = pending;
    let mut images = Vec::new();
    let mut body = match obs.results.into_iter().next() {
        Some(mut r) => {
            notes.append(&mut r.notifications);
            for a in std::mem::take(&mut r.attachments) {
                images.push(ContentBlock::image(a.data, a.mime));
            }
            serde_json::to_value(&r).expect("tool results serialise")
        }
        None => json!({
            "ok": false,
            "time": obs.time,
            "t": obs.t,
            "error": {"kind": "run_over", "message": "the run ended before the call was made"},
        }),
    };
    notes.extend(obs.notifications);
    body["notifications"] = serde_json::to_value(&notes).expect("notifications serialise");
    if let Some(b) = briefing {
        body["briefing"] = b;
    }
    if obs.over {
        body["run_over"] = json!(true);
        body["end_reason"] = json!(turn.progress.end_reason);
        if let Some(r) = result {
            body["final"] = final_result(r);
        }
    }
    let ok = body["ok"] == json!(true);
    let mut content = vec![ContentBlock::text(body.to_string())];
    content.append(&mut images);
    let result = if ok {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    (result, notes)
}

/// What the call that ended the run reports: the run's final checkpoint score,
/// success and per-task results, as in its `result.json`.
fn final_result(r: &RunResult) -> Value {
    let tasks: Vec<Value> = r
        .tasks
        .iter()
        .map(|t| {
            json!({
                "key": t.key, "title": t.title, "score": t.score, "success": t.success,
                "passed": t.passed, "total": t.total,
            })
        })
        .collect();
    json!({
        "checkpoint_score": r.checkpoint_score,
        "success_rate": r.success_rate,
        "success": tbsim_engine::result::is_solved(r.success_rate),
        "end_reason": r.end_reason,
        "steps": r.steps,
        "digest": r.digest,
        "tasks": tasks,
    })
}

/// The catalogue as MCP tools: each description ends with the tool's time cost
/// (harnesses pass name, description and schema to the model, never `_meta`); the
/// family and default cost in minutes are also under `_meta` (`tbsim/family`,
/// `tbsim/cost_minutes`).
pub fn tools() -> Vec<Tool> {
    catalogue()
        .iter()
        .map(|t| {
            let schema = t
                .parameters
                .as_object()
                .cloned()
                .expect("tool schemas are objects");
            let mut meta = serde_json::Map::new();
            meta.insert("tbsim/family".into(), json!(t.family));
            meta.insert("tbsim/cost_minutes".into(), json!(t.cost_minutes));
            Tool::new(t.name, described(t), Arc::new(schema))
                .with_meta(rmcp::model::MetaObject(meta))
        })
        .collect()
}

/// A tool's description with its time cost.
fn described(t: &tbsim_core::protocol::ToolSpec) -> String {
    let unit = if t.cost_minutes == 1 {
        "minute"
    } else {
        "minutes"
    };
    format!(
        "{} Time cost: {} simulated {unit} per call.",
        t.description.trim_end(),
        t.cost_minutes
    )
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("tbsim", env!("CARGO_PKG_VERSION")))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let mut live = self.live.lock().await;
        if live.is_some() {
            return Err(McpError::invalid_request(
                "already initialised: one world per connection",
                None,
            ));
        }
        let mut info = self.negotiate_initialize(&request)?;
        context.peer.set_peer_info(request.clone());
        let client = client_name(&request.client_info.name);
        let (world, turn) = self.start_world(&client, &context).await?;
        self.view().observe(&turn.observation);
        info.instructions = Some(INSTRUCTIONS.to_owned());
        if let World::Shared(lease) = &world {
            // The registry session (its run directory is `<out>/<id>/`).
            let mut meta = serde_json::Map::new();
            meta.insert(SESSION_META.into(), json!(lease.id));
            info.meta = Some(rmcp::model::MetaObject(meta));
        }
        let briefing = turn
            .observation
            .briefing
            .as_ref()
            .map(|b| serde_json::to_value(b).expect("briefings serialise"));
        *live = Some(Live {
            world,
            calls: 0,
            pending: turn.observation.notifications,
            briefing,
        });
        Ok(info)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The SDK moves the request's `_meta` into the context.
        let meta = |key: &str| {
            context
                .meta
                .get(key)
                .cloned()
                .or_else(|| request.meta.as_ref().and_then(|m| m.get(key)).cloned())
        };
        let (given_id, empty_turns) = (meta(CALL_ID_META), meta(EMPTY_TURNS_META));
        let (result, out) = self.conn().call(request, given_id, empty_turns).await?;
        for o in out {
            o.send(&context.peer).await;
        }
        Ok(result.into())
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let Some(fast) = &self.fast else {
            return;
        };
        let session = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        if let Some(session) = session {
            fast.register(
                session,
                fast::Handles {
                    live: Arc::downgrade(&self.live),
                    view: Arc::clone(&self.view),
                    subscribed: Arc::clone(&self.subscribed),
                    quiet: Arc::clone(&self.quiet),
                    peer: context.peer.clone(),
                },
            );
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            view::RESOURCES
                .iter()
                .map(|(uri, name, description)| {
                    Resource::new(*uri, *name)
                        .with_description(*description)
                        .with_mime_type("application/json")
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        // A client whose model ended on turns without a tool call reports them
        // with its last read (the SDK moves `_meta` into the context).
        let empty = context.meta.get(EMPTY_TURNS_META).cloned().or_else(|| {
            request
                .meta
                .as_ref()
                .and_then(|m| m.get(EMPTY_TURNS_META))
                .cloned()
        });
        self.conn().trailing_empty(empty).await?;
        let Some(v) = self.view().read(&request.uri) else {
            return Err(McpError::resource_not_found(
                format!("no resource `{}`", request.uri),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(v.to_string(), request.uri).with_mime_type("application/json"),
        ])
        .into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if self.view().read(&request.uri).is_none() {
            return Err(McpError::resource_not_found(
                format!("no resource `{}`", request.uri),
                None,
            ));
        }
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let quiet = !matches!(request.level, LoggingLevel::Debug | LoggingLevel::Info);
        self.quiet.store(quiet, Ordering::Relaxed);
        Ok(())
    }
}

/// Serves one world over stdin/stdout until the client disconnects or `shutdown`
/// resolves, then ends the run (as abandoned if it was still going) and returns its
/// result (`None` when the client never initialised).
pub async fn serve_stdio(
    spec: StdioSpec,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Option<RunResult>, McpStdioError> {
    serve_io(
        spec,
        tokio::io::stdin(),
        tokio::io::stdout(),
        MAX_STDIO_LINE,
        shutdown,
    )
    .await
}

/// [`serve_stdio`] over any byte streams, lines capped at `max_line` bytes: every
/// line gets an answer, a JSON-RPC error for one too long, not JSON (`-32700`) or
/// not a client's JSON-RPC message (`-32600`) (see `lines`).
pub async fn serve_io<R, W>(
    spec: StdioSpec,
    input: R,
    output: W,
    max_line: usize,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Option<RunResult>, McpStdioError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt as _;
    let server = McpServer::own(spec);
    let closer = server.closer();
    let served = async {
        let running = server
            .serve(lines::guarded(input, output, max_line))
            .await
            .map_err(|e| McpStdioError::Transport(e.to_string()))?;
        let _ = running.waiting().await;
        Ok::<(), McpStdioError>(())
    };
    tokio::select! {
        r = served => r?,
        () = shutdown => {}
    }
    Ok(closer.close().await?)
}

/// A stdio server failed.
#[derive(Debug, thiserror::Error)]
pub enum McpStdioError {
    /// The connection failed before or during the handshake.
    #[error("MCP connection failed: {0}")]
    Transport(String),
    /// The run failed.
    #[error(transparent)]
    Session(#[from] SessionError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_are_confined() {
        assert_eq!(client_name("claude-ai"), "claude-ai");
        assert_eq!(client_name("Claude Desktop/1"), "Claude-Desktop-1");
        assert_eq!(client_name(""), "client");
        assert_eq!(client_name(&"x".repeat(100)).len(), MAX_CLIENT_NAME);
    }

    #[test]
    fn the_tools_are_the_catalogue() {
        let t = tools();
        assert_eq!(t.len(), catalogue().len());
        for (m, c) in t.iter().zip(catalogue()) {
            assert_eq!(m.name, c.name);
            let d = m.description.as_deref().unwrap();
            assert!(d.starts_with(c.description.trim_end()), "{d}");
            assert!(
                d.contains(&format!("Time cost: {} simulated", c.cost_minutes)),
                "{d}"
            );
            assert_eq!(Value::Object((*m.input_schema).clone()), c.parameters);
        }
    }
}
