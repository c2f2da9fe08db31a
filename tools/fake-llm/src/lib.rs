//! An OpenAI-compatible chat-completions server for tests, on 127.0.0.1.
//!
//! It serves `POST /v1/chat/completions` (HTTP/1.1 with keep-alive, so a client's
//! connection pool is exercised as against a real provider) and answers from a
//! script instead of a model:
//!
//! * **Agent turns** (requests that offer `tools`): the reply holds the tool calls of
//!   script turn `n`, where `n` is read from the last user message's status line
//!   (`... · step <n>`, the number of decisions made so far). Deriving the turn from
//!   the request rather than from a counter makes replies a pure function of the
//!   conversation, so a resumed run or a retried request gets the same answer. Past
//!   the script's end the reply is a `finish` call. Call ids are `call-<n>-<i>`.
//! * **Other agent requests** (summaries, reflections): a fixed text.
//! * **Colleague requests** (the model named [`Config::npc_model`]): every
//!   `<fact ...>...</fact>` block of the system prompt, joined; or an apology.
//!
//! Faults are injected by the ordinal of agent requests (every attempt counts, from
//! 0): 429 with `Retry-After`, 500, a slow reply, a dropped connection, or a reply
//! that adds a call with malformed arguments, to an unknown tool, with huge or
//! over-deep arguments, or one that echoes the API key it was called with; or, as
//! llama.cpp answers, a reply cut off at the reply limit (`finish_reason: "length"`)
//! and a refusal of the request as longer than the context window (HTTP 400,
//! `exceed_context_size_error`).
//!
//! With [`Config::context_tokens`] set, the server also behaves like llama.cpp's
//! `llama-server` about its context window: `GET /props` reports it
//! (`default_generation_settings.n_ctx`), and any request whose prompt (counted as
//! a quarter of its body's bytes, as `usage.prompt_tokens` reports it) is longer
//! is refused with that 400.
//! [`script_from_trajectory`] turns a tbsim trajectory's decisions into a script.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptCall {
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// Something to go wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// HTTP 429 with this `Retry-After` (seconds).
    RateLimit {
        /// Seconds.
        retry_after_secs: u64,
    },
    /// HTTP 500.
    ServerError,
    /// The normal reply, after this delay.
    Slow {
        /// Milliseconds.
        ms: u64,
    },
    /// Close the connection without answering.
    Drop,
    /// The normal reply plus a first call whose arguments are not JSON.
    MalformedArgs,
    /// The normal reply plus a first call to a tool that does not exist.
    UnknownTool,
    /// The normal reply plus a first `write_file` call whose `content` is this many
    /// bytes long (a model that floods its arguments).
    HugeArgs {
        /// Bytes of content.
        bytes: u64,
    },
    /// The normal reply plus a first `read_file` call whose arguments are a JSON
    /// object (not text) nested this deep: valid JSON that no depth-limited reader
    /// takes whole.
    DeepArgs {
        /// Levels of nesting.
        depth: u64,
    },
    /// The normal reply, with the bearer token the request carried echoed in the
    /// text and in a first `write_file` call's content (a model leaking its key).
    EchoKey,
    /// Text only, stopped at the reply limit (`finish_reason: "length"`), as a
    /// reply that was writing a long tool call arrives.
    CutOff,
    /// HTTP 400 as llama.cpp refuses a prompt longer than its context window.
    ContextFull,
}

/// Placeholder swapped for a value too large or too deep to build as a `Value`.
const SPLICE: &str = "\u{0}tbsim-fake-splice\u{0}";

/// A fault for agent requests `from..to` (ordinals from 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRule {
    /// First ordinal.
    pub from: u64,
    /// One past the last ordinal.
    pub to: u64,
    /// What happens.
    pub fault: Fault,
}

impl FaultRule {
    /// A fault for one request.
    pub fn at(ordinal: u64, fault: Fault) -> FaultRule {
        FaultRule {
            from: ordinal,
            to: ordinal + 1,
            fault,
        }
    }
}

/// Server settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    /// Tool calls per agent turn.
    pub script: Vec<Vec<ScriptCall>>,
    /// Requests for this model are colleagues'.
    pub npc_model: String,
    /// The bearer token expected (any is accepted when `None`).
    pub key: Option<String>,
    /// Injected faults.
    pub faults: Vec<FaultRule>,
    /// Delay before every agent reply.
    pub delay_ms: u64,
    /// The reply to agent requests without tools (summaries, reflections).
    pub text_reply: String,
    /// When not empty, replies to requests without tools by the conversation's
    /// length: the one with `n` user messages gets entry `n - 1` (the last entry
    /// past the end), so a conversation that feeds back and asks again (`tbsim family
    /// draft`) gets the next answer, and a retried request the same one.
    pub text_replies: Vec<String>,
    /// Keep every request body in [`Stats::bodies`] (tests inspect them; a long
    /// benchmark turns this off so the server does not grow).
    pub keep_bodies: bool,
    /// A context window, in prompt tokens: reported by `GET /props` and enforced
    /// (see the module docs). `None`: no window, and `/props` is not served.
    pub context_tokens: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            script: Vec::new(),
            npc_model: "fake-npc".into(),
            key: None,
            faults: Vec::new(),
            delay_ms: 0,
            text_reply: "Notes: look on the drive first, ask the owner early, and check deadlines before starting. (fake model)".into(),
            text_replies: Vec::new(),
            keep_bodies: true,
            context_tokens: None,
        }
    }
}

/// What the server has seen.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Agent requests received (all attempts).
    pub agent_requests: u64,
    /// Colleague requests received.
    pub npc_requests: u64,
    /// Agent turns answered with tool calls.
    pub turns: u64,
    /// Faults injected.
    pub faults: u64,
    /// Requests with a wrong bearer token.
    pub unauthorised: u64,
    /// Requests refused as longer than the context window.
    pub context_refusals: u64,
    /// Every request body, in arrival order (when [`Config::keep_bodies`]).
    pub bodies: Vec<Value>,
}

struct State {
    config: Mutex<Config>,
    stats: Mutex<Stats>,
}

/// A running server; stops when dropped.
#[derive(Debug)]
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("State")
    }
}

impl FakeServer {
    /// Starts a server on an ephemeral port of 127.0.0.1, on its own thread.
    pub fn start(config: Config) -> std::io::Result<FakeServer> {
        FakeServer::start_on(config, 0)
    }

    /// Starts a server on `port` (0: ephemeral).
    pub fn start_on(config: Config, port: u16) -> std::io::Result<FakeServer> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let state = Arc::new(State {
            config: Mutex::new(config),
            stats: Mutex::new(Stats::default()),
        });
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let thread = std::thread::spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else {
                    return;
                };
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        acc = listener.accept() => {
                            if let Ok((sock, _)) = acc {
                                tokio::spawn(serve(sock, st.clone()));
                            }
                        }
                    }
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        Ok(FakeServer {
            addr,
            state,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A copy of the statistics.
    pub fn stats(&self) -> Stats {
        self.state.stats.lock().expect("not poisoned").clone()
    }

    /// Changes the settings (e.g. faults between runs).
    pub fn configure(&self, f: impl FnOnce(&mut Config)) {
        f(&mut self.state.config.lock().expect("not poisoned"));
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The decisions of a tbsim trajectory as a script, `per_turn` calls per turn (with
/// no thinking cost, grouping consecutive calls does not change what happens).
pub fn script_from_trajectory(jsonl: &str, per_turn: usize) -> Vec<Vec<ScriptCall>> {
    let calls: Vec<ScriptCall> = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "decision")
        .flat_map(|v| {
            v["calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|c| ScriptCall {
                    name: c["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: c["arguments"].as_str().unwrap_or("{}").to_owned(),
                })
        })
        .collect();
    calls.chunks(per_turn.max(1)).map(<[_]>::to_vec).collect()
}

/// What the server reads of a request. Messages stay raw JSON (validated, not
/// built) until one is needed, so a long conversation costs a scan, not a tree.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(default)]
    model: String,
    #[serde(borrow, default)]
    messages: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
}

/// A message's role alone.
#[derive(Deserialize)]
struct Role {
    #[serde(default)]
    role: String,
}

/// A message's content.
#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    content: Value,
}

/// The facts of a request that decide the reply.
struct Seen {
    model: String,
    has_tools: bool,
    /// The step in the last user message.
    step: u64,
    /// The first message's text (a colleague's system prompt).
    first: String,
    /// How many user messages the conversation holds.
    users: usize,
}

impl Seen {
    fn of(body: &[u8]) -> serde_json::Result<Seen> {
        let req: Request<'_> = serde_json::from_slice(body)?;
        let content = |m: &RawValue| {
            serde_json::from_str::<Content>(m.get())
                .map(|c| text_of(&c.content))
                .unwrap_or_default()
        };
        let last_user = req
            .messages
            .iter()
            .rev()
            .find(|m| serde_json::from_str::<Role>(m.get()).is_ok_and(|r| r.role == "user"));
        Ok(Seen {
            model: req.model,
            has_tools: req.tools.is_some(),
            step: last_user.map_or(0, |m| step_in(&content(m))),
            first: req.messages.first().map(|m| content(m)).unwrap_or_default(),
            users: req
                .messages
                .iter()
                .filter(|m| serde_json::from_str::<Role>(m.get()).is_ok_and(|r| r.role == "user"))
                .count(),
        })
    }
}

/// Text content, or the text parts joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The step number in a status line (`... step <n>`).
fn step_in(text: &str) -> u64 {
    let Some(i) = text.find("step ") else {
        return 0;
    };
    text[i + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

/// A completion; prompt tokens are estimated as a quarter of the body's bytes.
fn completion(model: &str, body_len: usize, message: Value, tool_calls: usize) -> Value {
    let prompt_tokens = body_len as u64 / 4;
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if tool_calls > 0 { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 10 + 20 * tool_calls as u64,
                  "total_tokens": prompt_tokens + 10 + 20 * tool_calls as u64}
    })
}

fn npc_reply(system: &str) -> String {
    let mut facts = Vec::new();
    let mut rest = system;
    while let Some(open) = rest.find("<fact") {
        let after = &rest[open..];
        let Some(gt) = after.find('>') else { break };
        let Some(close) = after.find("</fact>") else {
            break;
        };
        facts.push(after[gt + 1..close].trim().to_owned());
        rest = &after[close + 7..];
    }
    if facts.is_empty() {
        "Sorry, I can't help with that one.".into()
    } else {
        facts.join("\n\n")
    }
}

enum Reply {
    Json(u16, Value, Vec<(String, String)>),
    /// A JSON reply whose string [`SPLICE`] is replaced, in the text, by raw JSON.
    Spliced(Value, String),
    Drop,
}

/// What one agent request needs from the settings, taken under the lock so the
/// reply can be awaited without holding it.
struct Plan {
    delay_ms: u64,
    fault: Option<Fault>,
    text_reply: String,
    calls: Vec<ScriptCall>,
}

/// llama.cpp's refusal of a prompt of `prompt` tokens for a window of `n_ctx`.
fn context_refusal(prompt: u64, n_ctx: u64) -> Reply {
    Reply::Json(
        400,
        json!({"error": {
            "code": 400,
            "message": format!("request ({prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"),
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": n_ctx,
        }}),
        Vec::new(),
    )
}

async fn answer(body: &[u8], auth: Option<String>, state: &State) -> Reply {
    let body_len = body.len();
    let Seen {
        model,
        has_tools,
        step,
        first,
        users,
    } = match Seen::of(body) {
        Ok(s) => s,
        Err(e) => {
            return Reply::Json(
                400,
                json!({"error": {"message": format!("bad JSON: {e}")}}),
                Vec::new(),
            );
        }
    };
    let plan = {
        let cfg = state.config.lock().expect("not poisoned");
        let mut st = state.stats.lock().expect("not poisoned");
        if cfg.keep_bodies {
            st.bodies
                .push(serde_json::from_slice(body).expect("parsed above"));
        }
        if cfg.key.is_some() && auth != cfg.key.as_ref().map(|k| format!("Bearer {k}")) {
            st.unauthorised += 1;
            return Reply::Json(
                401,
                json!({"error": {"message": "invalid api key", "type": "invalid_request_error"}}),
                Vec::new(),
            );
        }
        let prompt = body_len as u64 / 4;
        if let Some(n_ctx) = cfg.context_tokens
            && prompt > n_ctx
        {
            st.context_refusals += 1;
            if model != cfg.npc_model {
                st.agent_requests += 1;
            }
            return context_refusal(prompt, n_ctx);
        }
        if model == cfg.npc_model {
            st.npc_requests += 1;
            None
        } else {
            st.agent_requests += 1;
            let ordinal = st.agent_requests - 1;
            let fault = cfg
                .faults
                .iter()
                .find(|f| (f.from..f.to).contains(&ordinal))
                .map(|f| f.fault.clone());
            if fault.is_some() {
                st.faults += 1;
            }
            Some(Plan {
                delay_ms: cfg.delay_ms,
                fault,
                text_reply: match cfg.text_replies.len() {
                    0 => cfg.text_reply.clone(),
                    n => cfg.text_replies[users.clamp(1, n) - 1].clone(),
                },
                calls: match cfg.script.get(step as usize) {
                    Some(c) => c.clone(),
                    None => vec![ScriptCall {
                        name: "finish".into(),
                        arguments: "{}".into(),
                    }],
                },
            })
        }
    };
    let Some(Plan {
        delay_ms,
        fault,
        text_reply,
        mut calls,
    }) = plan
    else {
        let msg = json!({"role": "assistant", "content": npc_reply(&first)});
        return Reply::Json(200, completion(&model, body_len, msg, 0), Vec::new());
    };
    if delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    }
    match &fault {
        Some(Fault::RateLimit { retry_after_secs }) => {
            return Reply::Json(
                429,
                json!({"error": {"message": "rate limited", "type": "rate_limit_error"}}),
                vec![("Retry-After".into(), retry_after_secs.to_string())],
            );
        }
        Some(Fault::ServerError) => {
            return Reply::Json(
                500,
                json!({"error": {"message": "internal error", "type": "server_error"}}),
                Vec::new(),
            );
        }
        Some(Fault::Drop) => return Reply::Drop,
        Some(Fault::ContextFull) => {
            let n_ctx = state
                .config
                .lock()
                .expect("not poisoned")
                .context_tokens
                .unwrap_or(body_len as u64 / 8);
            state.stats.lock().expect("not poisoned").context_refusals += 1;
            return context_refusal((body_len as u64 / 4).max(n_ctx + 1), n_ctx);
        }
        Some(Fault::CutOff) => {
            // A tool call the limit cut short arrives as its text so far.
            let msg = json!({"role": "assistant",
                             "content": "I will write the report now: {\"name\": \"write_file\", \"arguments\": {\"path\": \"workspace/rep"});
            let mut reply = completion(&model, body_len, msg, 0);
            reply["choices"][0]["finish_reason"] = json!("length");
            return Reply::Json(200, reply, Vec::new());
        }
        Some(Fault::Slow { ms }) => tokio::time::sleep(Duration::from_millis(*ms)).await,
        _ => {}
    }
    let mut echo = None;
    if !has_tools {
        let msg = json!({"role": "assistant", "content": text_reply});
        return Reply::Json(200, completion(&model, body_len, msg, 0), Vec::new());
    }
    let mut splice = None;
    match fault {
        Some(Fault::HugeArgs { bytes }) => {
            // Built as text: a `Value` this large would be copied several times.
            let content = "x".repeat(usize::try_from(bytes).unwrap_or(usize::MAX));
            calls.insert(
                0,
                ScriptCall {
                    name: "write_file".into(),
                    arguments: SPLICE.into(),
                },
            );
            let args = format!("{{\"path\":\"workspace/huge.txt\",\"content\":\"{content}\"}}");
            splice = Some(Value::String(args).to_string());
        }
        Some(Fault::DeepArgs { depth }) => {
            calls.insert(
                0,
                ScriptCall {
                    name: "read_file".into(),
                    arguments: SPLICE.into(),
                },
            );
            let d = usize::try_from(depth).unwrap_or(usize::MAX);
            // The arguments as an object, not as text.
            splice = Some(format!(
                "{}\"drive\"{}",
                "{\"path\":".repeat(d),
                "}".repeat(d)
            ));
        }
        Some(Fault::EchoKey) => {
            let key = auth
                .as_deref()
                .and_then(|a| a.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_owned();
            calls.insert(
                0,
                ScriptCall {
                    name: "write_file".into(),
                    arguments:
                        json!({"path": "workspace/key.txt", "content": format!("my key is {key}")})
                            .to_string(),
                },
            );
            echo = Some(key);
        }
        Some(Fault::MalformedArgs) => calls.insert(
            0,
            ScriptCall {
                name: "read_file".into(),
                arguments: "{\"path\": \"drive/".into(),
            },
        ),
        Some(Fault::UnknownTool) => calls.insert(
            0,
            ScriptCall {
                name: "teleport".into(),
                arguments: "{\"to\": \"the beach\"}".into(),
            },
        ),
        _ => {}
    }
    state.stats.lock().expect("not poisoned").turns += 1;
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"id": format!("call-{step}-{i}"), "type": "function",
                   "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    let n = tool_calls.len();
    let mut text = format!("Step {step}: carrying on with the plan.");
    if let Some(key) = echo {
        text.push_str(&format!(" By the way, my API key is {key}."));
    }
    let msg = json!({"role": "assistant", "content": text, "tool_calls": tool_calls});
    let reply = completion(&model, body_len, msg, n);
    match splice {
        Some(raw) => Reply::Spliced(reply, raw),
        None => Reply::Json(200, reply, Vec::new()),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Serves requests on one connection until the client closes it, asks to close,
/// or a fault drops it.
async fn serve(mut sock: TcpStream, state: Arc<State>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            if buf.len() > 1 << 20 {
                return;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut lines = head.lines();
        let request_line = lines.next().unwrap_or_default().to_owned();
        let mut length = 0usize;
        let mut auth = None;
        let mut close = request_line.ends_with("HTTP/1.0");
        for l in lines {
            if let Some((k, v)) = l.split_once(':') {
                let k = k.trim().to_ascii_lowercase();
                if k == "content-length" {
                    length = v.trim().parse().unwrap_or(0);
                } else if k == "authorization" {
                    auth = Some(v.trim().to_owned());
                } else if k == "connection" {
                    close = v.trim().eq_ignore_ascii_case("close");
                }
            }
        }
        while buf.len() < head_end + length {
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = &buf[head_end..head_end + length];
        let window = state.config.lock().expect("not poisoned").context_tokens;
        let reply = if request_line.starts_with("POST /v1/chat/completions ") {
            answer(body, auth, &state).await
        } else if let (true, Some(n_ctx)) = (request_line.starts_with("GET /props "), window) {
            // The part of llama.cpp's `/props` a client reads for the window.
            Reply::Json(
                200,
                json!({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1}),
                Vec::new(),
            )
        } else {
            Reply::Json(404, json!({"error": {"message": "not found"}}), Vec::new())
        };
        buf.drain(..head_end + length);
        let (status, text, headers) = match reply {
            Reply::Drop => {
                let _ = sock.shutdown().await;
                return;
            }
            Reply::Json(s, v, h) => (s, v.to_string(), h),
            Reply::Spliced(v, raw) => {
                let quoted = Value::String(SPLICE.into()).to_string();
                (200, v.to_string().replacen(&quoted, &raw, 1), Vec::new())
            }
        };
        let reason = match status {
            200 => "OK",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            429 => "Too Many Requests",
            _ => "Internal Server Error",
        };
        let mut out = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            text.len()
        );
        if close {
            out.push_str("Connection: close\r\n");
        }
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&text);
        if sock.write_all(out.as_bytes()).await.is_err() || close {
            let _ = sock.shutdown().await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_is_read_from_the_last_user_message() {
        let body = json!({"messages": [
            {"role": "user", "content": "[System time] Mon 09:00 · step 0"},
            {"role": "assistant", "content": null},
            {"role": "user", "content": [{"type": "text", "text": "[System time] Mon 09:05 · step 12\n\nnews"}]}
        ]});
        let seen = Seen::of(body.to_string().as_bytes()).unwrap();
        assert_eq!(seen.step, 12);
        assert!(!seen.has_tools);
    }

    #[test]
    fn facts_are_extracted() {
        let body = json!({"messages": [{"role": "system", "content":
            "You are X.\n<fact about=\"a\">\nOne.\n</fact>\n\n<fact about=\"b\">\nTwo.\n</fact>\nBye"}]});
        let seen = Seen::of(body.to_string().as_bytes()).unwrap();
        assert_eq!(npc_reply(&seen.first), "One.\n\nTwo.");
    }

    #[test]
    fn scripts_group_decisions() {
        let t = r#"{"type":"header"}
{"type":"decision","calls":[{"id":"a","name":"wait","arguments":"{}"}]}
{"type":"decision","calls":[{"id":"b","name":"finish","arguments":"{}"}]}
{"type":"decision","calls":[{"id":"c","name":"my_tasks","arguments":"{}"}]}"#;
        let s = script_from_trajectory(t, 2);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0][1].name, "finish");
    }
}
