//! The error every script family reports, on both sides of the family-script
//! host's pipe: a script that cannot be read, parsed or evaluated, a bound it hit,
//! data of the wrong shape, or a host that cannot be started. The host
//! (`tbsim-script`) builds it and sends it as an answer ([`ScriptError::to_answer`]);
//! tbsim reads it back ([`ScriptError::from_answer`]) or makes its own when a host
//! dies. One type, so the two sides cannot drift apart.

use serde_json::{Value, json};

/// The TB code every script error carries (its page: `docs/errors/TB0026.md`).
pub const ERROR_CODE: &str = "TB0026";

/// How the host program begins a line on its standard error that says the
/// statement a script was at (`line:column`, and during a load ` next line:column`);
/// tbsim reads the last one of a host that died or was killed.
pub const POSITION_PREFIX: &str = "tbsim-script: at ";

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

    /// An error of the host itself, about no script.
    pub fn host(message: impl Into<String>) -> ScriptError {
        ScriptError::at_file("<host>", message)
    }

    /// The error as the host's protocol sends it:
    /// `{file, position: [line, column] | null, message, trace}`.
    pub fn to_answer(&self) -> Value {
        json!({
            "file": self.file,
            "position": self.position.map(|(l, c)| json!([l, c])),
            "message": self.message,
            "trace": self.trace,
        })
    }

    /// Reads [`to_answer`](Self::to_answer)'s shape; missing fields read empty.
    pub fn from_answer(v: &Value) -> ScriptError {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_crosses_the_pipe_unchanged_and_renders_its_position() {
        let e = ScriptError {
            file: "fam/family.star".into(),
            position: Some((7, 9)),
            message: "`generate` ran past its limit".into(),
            trace: "  at fam/family.star:7:9".into(),
        };
        assert_eq!(ScriptError::from_answer(&e.to_answer()), e);
        assert!(
            e.to_string()
                .starts_with("fam/family.star:7:9: error[TB0026]: `generate`")
        );
        let h = ScriptError::host("no host");
        assert_eq!(ScriptError::from_answer(&h.to_answer()), h);
        assert_eq!(h.to_string(), "<host>: error[TB0026]: no host");
    }
}
