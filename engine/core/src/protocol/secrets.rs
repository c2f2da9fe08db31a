//! Secrets (API keys) removed from whatever this process writes.
//!
//! A model client registers its key; the trajectory writer redacts every line
//! through [`redact_secrets`]. Both sides sit above this crate, so the registry is
//! here.

/// Secrets shorter than this are not registered for [`redact_secrets`]: they would
/// match ordinary text (test configurations use short dummies).
pub const MIN_SECRET_LEN: usize = 16;

static SECRETS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Registers a configured secret (an API key), so that [`redact_secrets`] removes it
/// from whatever this process writes. Each model client registers its key.
pub fn register_secret(secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut all = SECRETS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !all.iter().any(|s| s == secret) {
        all.push(secret.to_owned());
    }
}

/// `text` with every registered secret replaced by `[redacted]`, or `None` if it
/// holds none (the common case costs one substring search per secret).
pub fn redact_secrets(text: &str) -> Option<String> {
    let all = SECRETS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out: Option<String> = None;
    for s in all.iter() {
        let cur = out.as_deref().unwrap_or(text);
        if cur.contains(s.as_str()) {
            out = Some(cur.replace(s.as_str(), "[redacted]"));
        }
    }
    out
}
