//! `api_config.json`: model aliases and how to reach them.
//!
//! The format is the reference's, extended. The file maps an alias to an entry:
//!
//! ```json
//! {
//!   "gpt": {
//!     "model_name": "gpt-4o-2024-08-06",
//!     "api_key_env": "OPENAI_API_KEY",
//!     "base_url": "https://api.openai.com/v1",
//!     "proxy_url": "",
//!     "temperature": 0.8,
//!     "max_tokens": 4096,
//!     "price_in": 2.5,
//!     "price_out": 10.0
//!   },
//!   "default": "gpt"
//! }
//! ```
//!
//! * `proxy_url` is a proxy URL; `false` (as the reference's README writes it),
//!   `null`, `""` or leaving it out all mean no proxy.
//! * `api_key_env` names the environment variable holding the key (preferred: the
//!   file then holds no secret). `api_key_var` is the reference's field and holds the
//!   key itself; it is used only when `api_key_env` is absent.
//! * `price_in`/`price_out` are per million input/output tokens.
//! * Optional robustness settings: `timeout_secs` per request (default 120),
//!   `max_retries` (default 5), `retry_base_ms` (first backoff, default 1000) and
//!   `retry_max_ms` (backoff cap, default 60000).
//! * `max_tokens` caps each reply (default [`DEFAULT_MAX_TOKENS`]): a model whose
//!   reply never stops would otherwise run into `timeout_secs` on every call. A
//!   reply the server stops there (`finish_reason: "length"`) is counted and the
//!   agent is told it was cut off.
//! * `context_tokens` is the model's context window (prompt plus reply). When it is
//!   absent, the agent asks the server once (llama.cpp's `/props`, else the model's
//!   entry in `/v1/models`, where a server says it); when nobody says, only
//!   `--history-tokens` bounds the history.
//! * `default` is an entry, or the name of another alias; it is used when no
//!   `--agent` is given.
//!
//! The file is found at `--api-config <PATH>`, else `$TBSIM_API_CONFIG`, else
//! `./api_config.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// The environment variable that may point at the config file.
pub const CONFIG_ENV: &str = "TBSIM_API_CONFIG";

/// The file looked up when neither the flag nor the variable is set.
pub const DEFAULT_FILE: &str = "api_config.json";

/// The reply limit when `max_tokens` is not configured: room for a long tool call
/// (a file written whole), small enough that a reply that never stops ends in
/// seconds on a local server, not at the request timeout.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;

/// A problem with the model configuration. Every message says what to set.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not there.
    #[error(
        "no model configuration at `{0}`: create it (the format is in README.md, section Models), or point `--api-config <PATH>` or ${CONFIG_ENV} at one"
    )]
    Missing(PathBuf),
    /// The file cannot be read.
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// The file is not valid.
    #[error("`{0}` is not a valid model configuration: {1}")]
    Invalid(PathBuf, String),
    /// No such alias.
    #[error("`{path}` has no model alias `{alias}`; add it, or use one of: {available}")]
    NoAlias {
        /// The config file.
        path: PathBuf,
        /// The alias asked for.
        alias: String,
        /// The aliases present.
        available: String,
    },
    /// The entry gives no key.
    #[error(
        "model alias `{alias}` in `{path}` has no API key: set `api_key_env` to the name of an environment variable holding it (or `api_key_var` to the key itself)"
    )]
    NoKey {
        /// The config file.
        path: PathBuf,
        /// The alias.
        alias: String,
    },
    /// The named variable is not set.
    #[error("model alias `{alias}` reads its API key from ${var}, which is not set: export {var}")]
    KeyUnset {
        /// The alias.
        alias: String,
        /// The variable.
        var: String,
    },
}

/// An API key. Its `Debug` output hides it, so it cannot leak through logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            // A key this short would match ordinary text; such keys are test dummies.
            return text.to_owned();
        }
        text.replace(&self.0, "[redacted]")
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// Retry settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff.
    pub base: Duration,
    /// Backoff cap.
    pub max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            base: Duration::from_millis(1000),
            max: Duration::from_millis(60_000),
        }
    }
}

/// One resolved model alias.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    /// The alias.
    pub alias: String,
    /// The provider's model name.
    pub model_name: String,
    /// Base URL (`.../v1`); requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// HTTP(S) proxy, if any.
    pub proxy_url: Option<String>,
    /// The key.
    pub key: ApiKey,
    /// Sampling temperature (not sent when unset, except for colleagues: 0).
    pub temperature: Option<f64>,
    /// Completion token cap (sent with every request).
    pub max_tokens: u32,
    /// The model's context window in tokens, if configured.
    pub context_tokens: Option<u32>,
    /// Price per million input tokens.
    pub price_in: Option<f64>,
    /// Price per million output tokens.
    pub price_out: Option<f64>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    model_name: String,
    #[serde(default)]
    api_key_var: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    base_url: String,
    #[serde(default, deserialize_with = "proxy_or_none")]
    proxy_url: Option<String>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    context_tokens: Option<u32>,
    #[serde(default)]
    price_in: Option<f64>,
    #[serde(default)]
    price_out: Option<f64>,
    #[serde(default)]
    timeout_secs: Option<f64>,
    #[serde(default)]
    max_retries: Option<u32>,
    #[serde(default)]
    retry_base_ms: Option<u64>,
    #[serde(default)]
    retry_max_ms: Option<u64>,
}

/// `proxy_url` as the original's README writes it: a URL, or `false` (its documented
/// "no proxy"), `null` or `""` for none. `true` names no proxy, so it is refused.
fn proxy_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null | Value::Bool(false) => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(serde::de::Error::custom(format!(
            "`proxy_url` must be a proxy URL, or false, null or \"\" for no proxy; found {other}"
        ))),
    }
}

/// A parsed `api_config.json`.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    path: PathBuf,
    entries: BTreeMap<String, Value>,
}

/// Where the config file is: the flag, else `$TBSIM_API_CONFIG`, else
/// `./api_config.json`. The flag says whether the location was asked for explicitly.
pub fn locate(flag: Option<&Path>) -> (PathBuf, bool) {
    if let Some(p) = flag {
        return (p.to_owned(), true);
    }
    match std::env::var_os(CONFIG_ENV) {
        Some(p) if !p.is_empty() => (PathBuf::from(p), true),
        _ => (PathBuf::from(DEFAULT_FILE), false),
    }
}

impl ApiConfig {
    /// Reads a config file.
    pub fn load(path: &Path) -> Result<ApiConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ConfigError::Missing(path.to_owned()));
            }
            Err(e) => return Err(ConfigError::Io(path.to_owned(), e)),
        };
        ApiConfig::parse(path, &text)
    }

    /// Parses config text (`path` is for messages).
    pub fn parse(path: &Path, text: &str) -> Result<ApiConfig, ConfigError> {
        let entries: BTreeMap<String, Value> = serde_json::from_str(text)
            .map_err(|e| ConfigError::Invalid(path.to_owned(), e.to_string()))?;
        Ok(ApiConfig {
            path: path.to_owned(),
            entries,
        })
    }

    /// The file it came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every configured alias, sorted.
    pub fn aliases(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// Whether an alias is configured.
    pub fn has(&self, alias: &str) -> bool {
        self.entries.contains_key(alias)
    }

    /// Resolves an alias, reading its key from the environment if so configured.
    pub fn model(&self, alias: &str) -> Result<ModelConfig, ConfigError> {
        self.model_with_env(alias, |v| std::env::var(v).ok())
    }

    /// [`ApiConfig::model`] with an explicit environment lookup (for tests).
    pub fn model_with_env(
        &self,
        alias: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ModelConfig, ConfigError> {
        let mut name = alias;
        // `"default": "other"` points at another alias; follow a few such links.
        for _ in 0..4 {
            match self.entries.get(name) {
                Some(Value::String(target)) => name = target,
                _ => break,
            }
        }
        let Some(v) = self.entries.get(name) else {
            let available: Vec<&str> = self.entries.keys().map(String::as_str).collect();
            return Err(ConfigError::NoAlias {
                path: self.path.clone(),
                alias: alias.to_owned(),
                available: if available.is_empty() {
                    "(none)".into()
                } else {
                    available.join(", ")
                },
            });
        };
        let e: Entry = serde_json::from_value(v.clone()).map_err(|err| {
            ConfigError::Invalid(self.path.clone(), format!("alias `{name}`: {err}"))
        })?;
        let key = match (&e.api_key_env, &e.api_key_var) {
            (Some(var), _) if !var.is_empty() => match env(var) {
                Some(k) if !k.is_empty() => k,
                _ => {
                    return Err(ConfigError::KeyUnset {
                        alias: alias.to_owned(),
                        var: var.clone(),
                    });
                }
            },
            (_, Some(k)) if !k.is_empty() => k.clone(),
            _ => {
                return Err(ConfigError::NoKey {
                    path: self.path.clone(),
                    alias: alias.to_owned(),
                });
            }
        };
        let invalid =
            |m: &str| ConfigError::Invalid(self.path.clone(), format!("alias `{name}`: {m}"));
        if !(e.base_url.starts_with("http://") || e.base_url.starts_with("https://")) {
            return Err(invalid("`base_url` must start with http:// or https://"));
        }
        let timeout = e.timeout_secs.unwrap_or(120.0);
        if !(timeout > 0.0 && timeout.is_finite()) {
            return Err(invalid("`timeout_secs` must be positive"));
        }
        if e.max_tokens == Some(0) {
            return Err(invalid("`max_tokens` must be at least 1"));
        }
        if e.context_tokens.is_some_and(|c| c < 256) {
            return Err(invalid(
                "`context_tokens` must be at least 256 (the model's context window in tokens)",
            ));
        }
        let d = RetryPolicy::default();
        Ok(ModelConfig {
            alias: alias.to_owned(),
            model_name: e.model_name,
            base_url: e.base_url.trim_end_matches('/').to_owned(),
            proxy_url: e.proxy_url.filter(|p| !p.is_empty()),
            key: ApiKey(key),
            temperature: e.temperature,
            max_tokens: e.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            context_tokens: e.context_tokens,
            price_in: e.price_in,
            price_out: e.price_out,
            timeout: Duration::from_secs_f64(timeout),
            retry: RetryPolicy {
                max_retries: e.max_retries.unwrap_or(d.max_retries),
                base: e.retry_base_ms.map_or(d.base, Duration::from_millis),
                max: e.retry_max_ms.map_or(d.max, Duration::from_millis),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
        "a": {"model_name": "m-a", "api_key_env": "KEY_A", "base_url": "http://h/v1/", "proxy_url": "",
              "price_in": 1.0, "price_out": 2.0, "max_retries": 2, "retry_base_ms": 10},
        "ref": {"model_name": "m-r", "api_key_var": "sk-literal-key", "base_url": "https://x/v1", "proxy_url": "http://proxy:8080"},
        "nokey": {"model_name": "m", "base_url": "http://h/v1"},
        "default": "ref"
    }"#;

    fn cfg() -> ApiConfig {
        ApiConfig::parse(Path::new("api_config.json"), TEXT).unwrap()
    }

    #[test]
    fn env_key_is_preferred_and_resolved() {
        let m = cfg()
            .model_with_env("a", |v| (v == "KEY_A").then(|| "sk-from-env".to_owned()))
            .unwrap();
        assert_eq!(m.key.expose(), "sk-from-env");
        assert_eq!(m.base_url, "http://h/v1");
        assert_eq!(m.retry.max_retries, 2);
        assert_eq!(m.retry.base, Duration::from_millis(10));
        assert_eq!(m.proxy_url, None);
        assert!(
            !format!("{m:?}").contains("sk-from-env"),
            "Debug hides the key"
        );
    }

    #[test]
    fn reference_format_and_default_link() {
        let m = cfg().model_with_env("default", |_| None).unwrap();
        assert_eq!(m.model_name, "m-r");
        assert_eq!(m.key.expose(), "sk-literal-key");
        assert_eq!(m.proxy_url.as_deref(), Some("http://proxy:8080"));
        assert_eq!(
            m.key.redact("bad key sk-literal-key!"),
            "bad key [redacted]!"
        );
    }

    /// The two entries of the reference's README example, typed from it verbatim.
    const ORIGINAL_README: &str = include_str!("testdata/original_readme_api_config.json");

    #[test]
    fn the_original_readme_config_loads() {
        let c = ApiConfig::parse(Path::new("api_config.json"), ORIGINAL_README).unwrap();
        let mini = c.model_with_env("gpt-4o-mini", |_| None).unwrap();
        assert_eq!(mini.model_name, "gpt-4o-mini");
        assert_eq!(mini.key.expose(), "sk-your_api_key");
        assert_eq!(mini.base_url, "https://your.api.provider/v1");
        assert_eq!(mini.proxy_url, None, "`false` means no proxy");
        let full = c.model_with_env("gpt-4o", |_| None).unwrap();
        assert_eq!(full.model_name, "gpt-4o");
        assert_eq!(full.proxy_url.as_deref(), Some("http://your.proxy.url/"));
    }

    #[test]
    fn proxy_url_accepts_every_way_of_saying_none() {
        for (proxy, want) in [
            ("false", None),
            ("null", None),
            ("\"\"", None),
            ("\"  \"", None),
            ("\"http://p:3128\"", Some("http://p:3128")),
        ] {
            let text = format!(
                r#"{{"m": {{"model_name": "x", "api_key_var": "sk-k", "base_url": "http://h/v1", "proxy_url": {proxy}}}}}"#
            );
            let c = ApiConfig::parse(Path::new("c.json"), &text).unwrap();
            let m = c.model_with_env("m", |_| None).unwrap();
            assert_eq!(m.proxy_url.as_deref(), want, "{proxy}");
        }
        for bad in ["true", "3", "[]"] {
            let text = format!(
                r#"{{"m": {{"model_name": "x", "api_key_var": "sk-k", "base_url": "http://h/v1", "proxy_url": {bad}}}}}"#
            );
            let c = ApiConfig::parse(Path::new("c.json"), &text).unwrap();
            let e = c.model_with_env("m", |_| None).unwrap_err().to_string();
            assert!(
                e.contains("`proxy_url` must be a proxy URL, or false"),
                "{e}"
            );
        }
    }

    #[test]
    fn reply_limit_has_a_default_and_context_is_optional() {
        let m = cfg().model_with_env("ref", |_| None).unwrap();
        assert_eq!((m.max_tokens, m.context_tokens), (DEFAULT_MAX_TOKENS, None));
        let text = r#"{"m": {"model_name": "x", "api_key_var": "sk-k", "base_url": "http://h/v1",
                       "max_tokens": 300, "context_tokens": 8192}}"#;
        let c = ApiConfig::parse(Path::new("c.json"), text).unwrap();
        let m = c.model_with_env("m", |_| None).unwrap();
        assert_eq!((m.max_tokens, m.context_tokens), (300, Some(8192)));
        for (field, v) in [("max_tokens", 0), ("context_tokens", 100)] {
            let text = format!(
                r#"{{"m": {{"model_name": "x", "api_key_var": "sk-k", "base_url": "http://h/v1", "{field}": {v}}}}}"#
            );
            let c = ApiConfig::parse(Path::new("c.json"), &text).unwrap();
            let e = c.model_with_env("m", |_| None).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }

    #[test]
    fn errors_name_what_to_set() {
        let e = cfg().model_with_env("a", |_| None).unwrap_err().to_string();
        assert!(e.contains("KEY_A") && e.contains("export"), "{e}");
        let e = cfg()
            .model_with_env("nokey", |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("api_key_env"), "{e}");
        let e = cfg()
            .model_with_env("zzz", |_| None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no model alias `zzz`") && e.contains("a, default"),
            "{e}"
        );
        let e = ApiConfig::load(Path::new("/nonexistent/api.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--api-config") && e.contains(CONFIG_ENV), "{e}");
    }
}
