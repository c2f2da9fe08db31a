//! Finding the real Python interpreter and the folders it needs.

use super::*;

/// The real interpreter and the installation folders it needs at run time.
#[derive(Debug, Clone)]
pub(super) struct Interpreter {
    pub(super) executable: PathBuf,
    /// `sys.prefix`, `sys.base_prefix`, `sys.exec_prefix`, `sys.base_exec_prefix`.
    pub(super) prefixes: Vec<PathBuf>,
}

/// Finds the real interpreter binary. Asking Python for `sys.executable` (with
/// the host environment) sees through launchers such as pyenv shims, which
/// would not work inside the cleared sandbox environment.
pub(super) fn resolve_interpreter() -> Result<Interpreter, PythonError> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Interpreter, String>>>> = OnceLock::new();
    let interpreter = std::env::var(PYTHON_ENV_VAR)
        .ok()
        .filter(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "python3".to_owned());
    let cache = CACHE.get_or_init(Mutex::default);
    let cached = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&interpreter)
        .cloned();
    let resolved = cached.unwrap_or_else(|| {
        let result = probe_interpreter(&interpreter);
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(interpreter.clone(), result.clone());
        result
    });
    resolved.map_err(|reason| PythonError::InterpreterNotFound {
        interpreter,
        reason,
    })
}

pub(super) fn probe_interpreter(interpreter: &str) -> Result<Interpreter, String> {
    const PROBE: &str = r#"import sys; sys.stdout.write("\0".join([sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))"#;
    let output = Command::new(interpreter)
        .args(["-c", PROBE])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!("it exited with {}", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.split('\0').map(str::trim);
    let executable = match parts.next() {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(interpreter),
    };
    let prefixes = parts
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .collect();
    Ok(Interpreter {
        executable,
        prefixes,
    })
}
