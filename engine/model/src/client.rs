//! Calling a model: one chat-completions request, retried until it succeeds or the
//! retry budget is spent.
//!
//! Retried: HTTP 408, 409, 429 and 5xx, timeouts, connection failures, and 2xx
//! bodies that are not a chat completion (proxies sometimes answer with HTML).
//! Not retried: other 4xx (a bad key or request will not get better). A refusal
//! because the conversation is longer than the model's context window (llama.cpp's
//! "exceeds the available context size", OpenAI's `context_length_exceeded`) is
//! told apart ([`LlmError::ContextExceeded`]): it is the agent's failure, not the
//! infrastructure's.
//!
//! Each call's wall time, attempts and timed-out attempts come back with it
//! ([`CallTiming`]), for the run directory's call log; nothing simulated reads them. The wait
//! before retry `n` (from 0) is `min(cap, base * 2^n)` scaled by a jitter factor in
//! `[0.5, 1)`, drawn from a stream seeded by (run seed, request ordinal, attempt) so
//! that runs do not depend on wall-clock randomness; a `Retry-After` header (in
//! seconds) lengthens the wait to at least what the server asked, up to five
//! minutes. Sleeping takes wall time only: the simulated clock never sees it.
//!
//! Requests are spawned on a tokio runtime, so the returned futures can be awaited
//! from any executor (the runner's `block_on` included).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::runtime::Handle;

use super::config::{ModelConfig, RetryPolicy};
use super::message::Message;
use tbsim_core::protocol::ModelUsage;
pub use tbsim_core::protocol::{CallTiming, RequestBody, TurnParts};

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// A model call that failed for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// Every attempt failed with a retryable error.
    #[error("the model API failed {attempts} times; last: {last}")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// The API refused the request (a 4xx other than 408/409/429).
    #[error("the model API refused the request: {0}")]
    Refused(String),
    /// The API refused the request as longer than the model's context window.
    #[error("the request does not fit the model's context window: {0}")]
    ContextExceeded(String),
    /// The client could not be set up.
    #[error("cannot set up the model client: {0}")]
    Setup(String),
}

/// The outcome of one logical call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The raw response body, or why there is none.
    pub response: Result<Value, LlmError>,
    /// Failed attempts before the outcome, one line each (keys redacted).
    pub failures: Vec<String>,
    /// Wall time, attempts and timeouts (not part of the trajectory).
    pub timing: CallTiming,
}

/// Whether an error body says the request is longer than the context window
/// (llama.cpp: "exceeds the available context size", type
/// `exceed_context_size_error`; OpenAI: code `context_length_exceeded`, "maximum
/// context length"; others: "context window", "context length").
pub fn is_context_refusal(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    [
        "exceeds the available context size",
        "exceed_context_size",
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "context length",
        "too many tokens",
    ]
    .iter()
    .any(|p| b.contains(p))
}

/// The chat-completions request, serialised straight from borrowed parts (no
/// intermediate `Value` tree).
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

/// A boxed call future.
pub type CallFuture = Pin<Box<dyn Future<Output = CallOutcome> + Send + 'static>>;

/// Sends requests to a model. Replaceable (tests, other transports).
pub trait ModelCaller: Send + Sync {
    /// The provider's model name.
    fn model(&self) -> &str;
    /// The request body for `messages` (and `tools`, a JSON array of function
    /// schemas, if any). `temperature` is used when the configuration sets none.
    fn body(
        &self,
        messages: &[Message],
        tools: Option<&RawValue>,
        temperature: Option<f64>,
    ) -> RequestBody;
    /// Sends one request; `ordinal` numbers the caller's requests (it seeds jitter).
    fn call(&self, body: RequestBody, ordinal: u64) -> CallFuture;
    /// Tokens and cost of a response.
    fn usage(&self, raw: &Value) -> ModelUsage;
    /// The reply limit sent with each request, if any.
    fn max_tokens(&self) -> Option<u32> {
        None
    }
    /// The model's context window in tokens, when known (configured, or said by
    /// the server).
    fn context_tokens(&self) -> Option<u32> {
        None
    }
    /// `text` with the caller's secrets (its API key) replaced, or `None` if it holds
    /// none. Applied to every reply before anything records it: a model can echo
    /// the key it was called with.
    fn redact(&self, text: &str) -> Option<String> {
        let _ = text;
        None
    }
}

struct Inner {
    http: reqwest::Client,
    cfg: ModelConfig,
    /// The context window the server said it has (asked once, see
    /// [`HttpModel::discover_context`]).
    discovered: std::sync::OnceLock<Option<(u32, String)>>,
}

/// Calls an OpenAI-compatible HTTP API.
///
/// Building one costs milliseconds (the TLS setup of its HTTP client), so a batch
/// builds one per model and gives each run a [`HttpModel::reseeded`] copy: the
/// copies share the client and its connection pool.
#[derive(Clone)]
pub struct HttpModel {
    inner: Arc<Inner>,
    handle: Handle,
    seed: u64,
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("alias", &self.inner.cfg.alias)
            .field("model", &self.inner.cfg.model_name)
            .finish_non_exhaustive()
    }
}

impl HttpModel {
    /// A caller for `cfg`, running its requests on `handle`'s runtime. `seed` seeds
    /// the retry jitter.
    pub fn new(cfg: ModelConfig, handle: Handle, seed: u64) -> Result<HttpModel, LlmError> {
        let mut b =
            reqwest::Client::builder().user_agent(concat!("tbsim/", env!("CARGO_PKG_VERSION")));
        if let Some(p) = &cfg.proxy_url {
            let proxy =
                reqwest::Proxy::all(p).map_err(|e| LlmError::Setup(format!("proxy `{p}`: {e}")))?;
            b = b.proxy(proxy);
        }
        let http = b.build().map_err(|e| LlmError::Setup(e.to_string()))?;
        super::reply::register_secret(cfg.key.expose());
        Ok(HttpModel {
            inner: Arc::new(Inner {
                http,
                cfg,
                discovered: std::sync::OnceLock::new(),
            }),
            handle,
            seed,
        })
    }

    /// The same model and HTTP client, with retry jitter seeded by `seed`.
    pub fn reseeded(&self, seed: u64) -> HttpModel {
        HttpModel {
            seed,
            ..self.clone()
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ModelConfig {
        &self.inner.cfg
    }

    /// The model's context window and where it came from: the configuration's
    /// `context_tokens`, else what the server says (asked once per model, on a
    /// thread of its own so any caller may block on it): llama.cpp's `/props`
    /// (`default_generation_settings.n_ctx`) at the server's root, else the
    /// model's entry in `{base_url}/models` (`context_length`, `max_model_len`,
    /// `context_window`, or llama.cpp's `meta.n_ctx`). `None` when nobody says.
    pub fn discover_context(&self) -> Option<(u32, String)> {
        if let Some(c) = self.inner.cfg.context_tokens {
            return Some((c, "context_tokens in the model configuration".into()));
        }
        self.inner
            .discovered
            .get_or_init(|| {
                let inner = self.inner.clone();
                let handle = self.handle.clone();
                std::thread::spawn(move || handle.block_on(ask_context(&inner)))
                    .join()
                    .ok()
                    .flatten()
            })
            .clone()
    }
}

/// Reads a JSON document at `url` within a few seconds (`None` on any failure).
async fn get_json(inner: &Inner, url: &str) -> Option<Value> {
    let resp = inner
        .http
        .get(url)
        .bearer_auth(inner.cfg.key.expose())
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    serde_json::from_str(&resp.text().await.ok()?).ok()
}

fn positive(v: &Value) -> Option<u32> {
    v.as_u64()
        .filter(|n| *n >= 256)
        .and_then(|n| u32::try_from(n).ok())
}

async fn ask_context(inner: &Inner) -> Option<(u32, String)> {
    let base = &inner.cfg.base_url;
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let props = format!("{root}/props");
    if let Some(v) = get_json(inner, &props).await
        && let Some(n) = positive(&v["default_generation_settings"]["n_ctx"])
    {
        return Some((n, format!("the server's {props}")));
    }
    let models = format!("{base}/models");
    let v = get_json(inner, &models).await?;
    let entries = v["data"].as_array()?;
    let name = &inner.cfg.model_name;
    // The configured model's entry; a server serving one model may name it otherwise.
    let entry = entries
        .iter()
        .find(|e| e["id"].as_str() == Some(name))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))?;
    ["context_length", "max_model_len", "context_window"]
        .iter()
        .find_map(|k| positive(&entry[*k]))
        .or_else(|| positive(&entry["meta"]["n_ctx"]))
        .map(|n| (n, format!("the server's {models}")))
}

/// A runtime for model requests: one worker thread is plenty, since requests wait
/// on the network and simulations run on their own (non-runtime) threads, where
/// [`tbsim_engine::agent::block_on`] waits for the spawned requests.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("tbsim-llm")
        .enable_all()
        .build()
}

/// The wait before retry `attempt` (from 0).
pub fn backoff(
    policy: &RetryPolicy,
    seed: u64,
    ordinal: u64,
    attempt: u32,
    retry_after: Option<Duration>,
) -> Duration {
    let exp = policy
        .base
        .saturating_mul(1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX))
        .min(policy.max);
    let mix = seed
        ^ ordinal.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(attempt).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let jitter: f64 = Xoshiro256PlusPlus::seed_from_u64(mix).random_range(0.5..1.0);
    let wait = exp.mul_f64(jitter);
    match retry_after {
        Some(r) => wait.max(r.min(MAX_RETRY_AFTER)),
        None => wait,
    }
}

fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    // Seconds; an HTTP date is not worth a date parser here: backoff applies then.
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

enum Attempt {
    Done(Value),
    Retry(String, Option<Duration>),
    Fatal(String),
    /// Refused as longer than the context window.
    Context(String),
}

async fn attempt(inner: &Inner, body: &RequestBody) -> Attempt {
    let url = format!("{}/chat/completions", inner.cfg.base_url);
    let sent = inner
        .http
        .post(&url)
        .bearer_auth(inner.cfg.key.expose())
        .timeout(inner.cfg.timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.text().to_owned())
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            let what = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "request failed"
            };
            return Attempt::Retry(format!("{what}: {e}"), None);
        }
    };
    let status = resp.status();
    let after = retry_after(resp.headers());
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) => {
            let what = if e.is_timeout() {
                "timed out"
            } else {
                "body failed"
            };
            return Attempt::Retry(format!("HTTP {status}, {what}: {e}"), after);
        }
    };
    let snippet: String = text.chars().take(300).collect();
    if status.is_success() {
        // A body too deep for the reader is still the model's answer: its too-deep
        // parts come back as text, and a tool call holding one fails as the agent's
        // malformed arguments, not as the provider's unreadable reply.
        return match super::reply::parse_completion(&text) {
            Ok(v) if v["choices"][0]["message"].is_object() => Attempt::Done(v),
            _ => Attempt::Retry(
                format!("HTTP {status} but not a chat completion: {snippet}"),
                after,
            ),
        };
    }
    let code = status.as_u16();
    if code == 408 || code == 409 || code == 429 || status.is_server_error() {
        Attempt::Retry(format!("HTTP {status}: {snippet}"), after)
    } else if (code == 400 || code == 413) && is_context_refusal(&text) {
        Attempt::Context(format!("HTTP {status}: {snippet}"))
    } else {
        Attempt::Fatal(format!("HTTP {status}: {snippet}"))
    }
}

async fn call_with_retries(
    inner: Arc<Inner>,
    seed: u64,
    body: RequestBody,
    ordinal: u64,
) -> CallOutcome {
    let policy = inner.cfg.retry;
    let redact = |s: String| inner.cfg.key.redact(&s);
    let mut failures = Vec::new();
    // Wall time is read here, at the edge, for the call log only.
    let started = std::time::Instant::now();
    let mut timing = CallTiming::default();
    let done = |timing: &mut CallTiming| {
        timing.wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        *timing
    };
    for n in 0..=policy.max_retries {
        timing.attempts += 1;
        let (response, retry) = match attempt(&inner, &body).await {
            Attempt::Done(v) => (Ok(v), None),
            Attempt::Fatal(m) => (Err(LlmError::Refused(redact(m))), None),
            Attempt::Context(m) => (Err(LlmError::ContextExceeded(redact(m))), None),
            Attempt::Retry(m, after) => (Err(LlmError::Setup(String::new())), Some((m, after))),
        };
        let Some((m, after)) = retry else {
            return CallOutcome {
                response,
                failures,
                timing: done(&mut timing),
            };
        };
        if m.starts_with("timed out") || m.contains(", timed out") {
            timing.timeouts += 1;
        }
        failures.push(redact(m));
        if n < policy.max_retries {
            tokio::time::sleep(backoff(&policy, seed, ordinal, n, after)).await;
        }
    }
    let last = failures.last().cloned().unwrap_or_default();
    CallOutcome {
        response: Err(LlmError::Exhausted {
            attempts: policy.max_retries + 1,
            last,
        }),
        failures,
        timing: done(&mut timing),
    }
}

impl ModelCaller for HttpModel {
    fn model(&self) -> &str {
        &self.inner.cfg.model_name
    }

    fn body(
        &self,
        messages: &[Message],
        tools: Option<&RawValue>,
        temperature: Option<f64>,
    ) -> RequestBody {
        let cfg = &self.inner.cfg;
        RequestBody::new(&WireRequest {
            model: &cfg.model_name,
            messages,
            tools,
            tool_choice: tools.map(|_| "auto"),
            temperature: cfg.temperature.or(temperature),
            max_tokens: Some(cfg.max_tokens),
        })
    }

    fn call(&self, body: RequestBody, ordinal: u64) -> CallFuture {
        let inner = self.inner.clone();
        let task = self
            .handle
            .spawn(call_with_retries(inner, self.seed, body, ordinal));
        Box::pin(async move {
            task.await.unwrap_or_else(|e| CallOutcome {
                response: Err(LlmError::Setup(format!("the request task failed: {e}"))),
                failures: Vec::new(),
                timing: CallTiming::default(),
            })
        })
    }

    fn usage(&self, raw: &Value) -> ModelUsage {
        usage_with_prices(raw, self.inner.cfg.price_in, self.inner.cfg.price_out)
    }

    fn max_tokens(&self) -> Option<u32> {
        Some(self.inner.cfg.max_tokens)
    }

    fn context_tokens(&self) -> Option<u32> {
        self.inner.cfg.context_tokens.or_else(|| {
            self.inner
                .discovered
                .get()
                .and_then(|d| d.as_ref().map(|d| d.0))
        })
    }

    fn redact(&self, text: &str) -> Option<String> {
        let key = self.inner.cfg.key.expose();
        (!key.is_empty() && text.contains(key))
            .then(|| self.inner.cfg.key.redact(text))
            .filter(|r| r.as_str() != text)
    }
}

/// Makes a model reply safe to use and record: the caller's secrets redacted from
/// every string, over-long arguments and text cut (see [`super::reply`]).
pub fn contain_reply(caller: &dyn ModelCaller, raw: &mut Value) {
    super::reply::redact_value(raw, &|s| caller.redact(s));
    super::reply::contain(raw);
}

/// Tokens of a response (`usage.prompt_tokens`, `usage.completion_tokens`), their
/// cost at the given prices per million tokens, and whether the reply limit cut
/// it off (`finish_reason: "length"`).
pub fn usage_with_prices(raw: &Value, price_in: Option<f64>, price_out: Option<f64>) -> ModelUsage {
    let input = raw["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
    let output = raw["usage"]["completion_tokens"].as_u64().unwrap_or(0);
    let cost = match (price_in, price_out) {
        (None, None) => None,
        (a, b) => {
            Some((input as f64 * a.unwrap_or(0.0) + output as f64 * b.unwrap_or(0.0)) / 1_000_000.0)
        }
    };
    ModelUsage {
        calls: 1,
        input_tokens: input,
        output_tokens: output,
        cost,
        cut_off: u64::from(is_cut_off(raw)),
    }
}

/// Whether the server stopped the reply at the reply limit.
pub fn is_cut_off(raw: &Value) -> bool {
    raw["choices"][0]["finish_reason"] == "length"
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn backoff_grows_is_capped_seeded_and_honours_retry_after() {
        let p = RetryPolicy {
            max_retries: 5,
            base: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        let a: Vec<Duration> = (0..6).map(|n| backoff(&p, 7, 3, n, None)).collect();
        let b: Vec<Duration> = (0..6).map(|n| backoff(&p, 7, 3, n, None)).collect();
        assert_eq!(a, b, "same seed, same waits");
        for (n, d) in a.iter().enumerate() {
            let full = Duration::from_millis((100u64 << n).min(1000));
            assert!(*d >= full / 2 && *d < full, "{n}: {d:?}");
        }
        assert_ne!(
            backoff(&p, 8, 3, 0, None),
            a[0],
            "another seed, another jitter"
        );
        let r = backoff(&p, 7, 3, 0, Some(Duration::from_secs(2)));
        assert_eq!(r, Duration::from_secs(2));
        let capped = backoff(&p, 7, 3, 0, Some(Duration::from_secs(100_000)));
        assert_eq!(capped, MAX_RETRY_AFTER);
    }

    #[test]
    fn usage_and_cost() {
        let raw = json!({"usage": {"prompt_tokens": 1000, "completion_tokens": 200}});
        let u = usage_with_prices(&raw, Some(2.0), Some(10.0));
        assert_eq!((u.input_tokens, u.output_tokens, u.calls), (1000, 200, 1));
        assert!((u.cost.unwrap() - 0.004).abs() < 1e-12);
        assert_eq!(usage_with_prices(&raw, None, None).cost, None);
        assert_eq!(u.cut_off, 0);
        let cut = json!({"choices": [{"finish_reason": "length", "message": {}}]});
        assert_eq!(usage_with_prices(&cut, None, None).cut_off, 1);
    }

    #[test]
    fn context_refusals_are_told_apart() {
        // llama.cpp's and OpenAI's bodies, as they send them.
        assert!(is_context_refusal(
            r#"{"error":{"code":400,"message":"request (8270 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":8270,"n_ctx":8192}}"#
        ));
        assert!(is_context_refusal(
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#
        ));
        assert!(!is_context_refusal(
            r#"{"error":{"message":"invalid api key","type":"invalid_request_error"}}"#
        ));
    }
}
