//! The error every script family reports: a script that cannot be read, parsed or
//! evaluated, a bound it hit, or a host that cannot be started. Its own module so
//! the host ([`crate::script_host`]) and its child process ([`crate::script_child`])
//! share it without importing each other.

use serde_json::Value;

/// The TB code every script error carries (its page: `docs/errors/TB0026.md`).
pub const ERROR_CODE: &str = "TB0026";

/// A script that cannot be read, parsed, evaluated, or that returned data of the
/// wrong shape; or a host that cannot be started. Displays as
/// `file:line:column: error[TB0026]: message` followed by the Starlark call stack
/// when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ScriptError {
    /// The script's path as given (`<host>` for the host itself).
    pub file: String,
    /// 1-based line and column of the failing statement, when known.
    pub position: Option<(usize, usize)>,
    /// What went wrong.
    pub message: String,
    /// The Starlark call stack at the failure, innermost last (may be empty).
    pub trace: String,
}

impl ScriptError {
    fn render(&self) -> String {
        let at = match self.position {
            Some((l, c)) => format!("{}:{l}:{c}", self.file),
            None => self.file.clone(),
        };
        let mut s = format!("{at}: error[{ERROR_CODE}]: {}", self.message);
        if !self.trace.trim().is_empty() {
            s.push('\n');
            s.push_str(self.trace.trim_end());
        }
        s
    }

    /// An error at `file` with no position.
    pub fn at_file(file: &str, message: impl Into<String>) -> ScriptError {
        ScriptError {
            file: file.to_owned(),
            position: None,
            message: message.into(),
            trace: String::new(),
        }
    }

    pub(crate) fn host(message: impl Into<String>) -> ScriptError {
        ScriptError::at_file("<host>", message)
    }

    pub(crate) fn from_answer(v: &Value) -> ScriptError {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let position = v.get("position").and_then(Value::as_array).and_then(|p| {
            Some((
                usize::try_from(p.first()?.as_u64()?).ok()?,
                usize::try_from(p.get(1)?.as_u64()?).ok()?,
            ))
        });
        ScriptError {
            file: s("file"),
            position,
            message: s("message"),
            trace: s("trace"),
        }
    }
}
