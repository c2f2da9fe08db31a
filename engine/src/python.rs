//! Runs an agent's Python script (`run_python`) against a temporary copy of its
//! workspace, with limits, and reports which files changed.
//!
//! The simulator keeps workspaces in memory, so the interface is bytes in and
//! bytes out: the files are written to a fresh temporary directory, the script
//! runs there, and the directory is read back without following symlinks.
//!
//! Confinement is layered and free of `unsafe`:
//! * filesystem, network, processes: by default the interpreter runs inside
//!   bubblewrap (`bwrap --unshare-all`), which sees only `/usr`, the `/bin` and
//!   `/lib*` links, the interpreter's own prefix (read-only), a fresh `/tmp`,
//!   `/proc` and `/dev`, the workspace copy at `/workspace` and the script at
//!   `/sandbox`. Nothing else of the host (the benchmark's hidden answers
//!   included) is visible. When bubblewrap is missing or broken, [`run`] fails
//!   with [`PythonError::SandboxUnavailable`] instead of running unconfined,
//!   unless `TBSIM_PYTHON_UNCONFINED=1` asks for the old behaviour:
//!   `unshare -rn` when the host allows it, and no filesystem isolation;
//! * always: a Python audit hook that refuses network access and starting
//!   processes (defence in depth);
//! * memory: an address-space limit (`RLIMIT_AS`) on the interpreter only;
//! * wall time: the child gets its own process group, which is killed on
//!   timeout (inside bubblewrap, `--die-with-parent` and the PID namespace
//!   take everything else down with it).
//!
//! Inside bubblewrap, the prelude forks once: the parent waits for the script
//! and reports on its stdin (a pipe back to us) whether it exited or was
//! killed by a signal, which bubblewrap's own exit status cannot tell apart.
//!
//! Python is started with `-s` rather than `-I`: `-I` implies `-E`, which would
//! ignore `PYTHONHASHSEED=0` and make set ordering differ between runs. The
//! environment is cleared anyway, so `-E` would protect nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use thiserror::Error;

/// Environment variable naming the interpreter to use instead of `python3`.
pub const PYTHON_ENV_VAR: &str = "TBSIM_PYTHON";

/// Environment variable naming the bubblewrap binary to use instead of `bwrap`.
pub const BWRAP_ENV_VAR: &str = "TBSIM_BWRAP";

/// Set to `1` to run without bubblewrap, i.e. without filesystem isolation.
pub const UNCONFINED_ENV_VAR: &str = "TBSIM_PYTHON_UNCONFINED";

/// How to fix [`PythonError::SandboxUnavailable`].
const SANDBOX_FIX: &str = "install bubblewrap (apt-get install bubblewrap), or set TBSIM_PYTHON_UNCONFINED=1 to run without filesystem isolation on a trusted machine";

/// The only `PATH` the script sees; nothing from the host leaks through.
const SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Where the workspace copy (read-write) and the script (read-only) appear
/// inside bubblewrap.
const WORKSPACE_MOUNT: &str = "/workspace";
const SCRIPT_MOUNT: &str = "/sandbox";

/// Top-level host entries made visible inside bubblewrap besides `/usr`: as
/// symlinks when they are symlinks on the host (merged /usr), else read-only.
const SYSTEM_DIRS: [&str; 6] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// Appended (on its own line) to stdout or stderr when it was cut short.
pub const TRUNCATION_MARKER: &str = "[output truncated]";

/// Extra raw bytes captured beyond `max_output_bytes`, so that replacing long
/// temporary paths with "." still leaves enough text to fill the limit.
const CAPTURE_SLACK: usize = 64 * 1024;

/// How long to wait for the output pipes to close after the child exits
/// before assuming a stray descendant holds them open.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Resource limits for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonLimits {
    /// Wall-clock time before the whole process group is killed.
    pub wall_time: Duration,
    /// Virtual memory limit (`RLIMIT_AS`); 0 means no limit.
    pub memory_bytes: u64,
    /// Cap on each of stdout and stderr, in bytes, before the marker line.
    pub max_output_bytes: usize,
    /// Files larger than this are not copied back (they go to `refused`).
    pub max_file_bytes: u64,
}

impl Default for PythonLimits {
    fn default() -> Self {
        Self {
            wall_time: Duration::from_secs(10),
            memory_bytes: 512 * 1024 * 1024,
            max_output_bytes: 64 * 1024,
            max_file_bytes: 8 * 1024 * 1024,
        }
    }
}

/// One script run over a snapshot of the workspace.
#[derive(Debug, Clone, Copy)]
pub struct PythonRequest<'a> {
    /// The Python source to run.
    pub script: &'a str,
    /// Workspace-relative paths with '/' separators, e.g. "data/x.csv".
    pub files: &'a BTreeMap<String, Vec<u8>>,
    /// Time, memory and size limits.
    pub limits: PythonLimits,
}

/// What happened. A script that fails is still an outcome, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonOutcome {
    /// `None` when the process was ended by a signal (timeout, OOM killer).
    pub exit_code: Option<i32>,
    /// Standard output (lossy UTF-8, truncated at the limit).
    pub stdout: String,
    /// Standard error (lossy UTF-8, truncated at the limit).
    pub stderr: String,
    /// Killed at the wall-time limit.
    pub timed_out: bool,
    /// Best effort: a `MemoryError`, or death by a signal that is not ours.
    pub memory_exceeded: bool,
    /// Files created or modified, by workspace-relative path.
    pub written: BTreeMap<String, Vec<u8>>,
    /// Input files that no longer exist as regular files, sorted.
    pub deleted: Vec<String>,
    /// "path: reason" for everything that was not copied back, sorted.
    pub refused: Vec<String>,
}

/// Infrastructure failures only; the script's own failures are outcomes.
#[derive(Debug, Error)]
#[expect(
    missing_docs,
    reason = "each variant's #[error] message is its documentation"
)]
pub enum PythonError {
    #[error(
        "python interpreter not found: `{interpreter}` could not be run ({reason}); install python3 or set {var} to the interpreter's path",
        var = PYTHON_ENV_VAR
    )]
    InterpreterNotFound { interpreter: String, reason: String },
    /// Bubblewrap is missing or cannot confine the interpreter on this host;
    /// nothing was run.
    #[error("run_python sandbox unavailable: {reason}; {fix}", fix = SANDBOX_FIX)]
    SandboxUnavailable { reason: String },
    #[error("invalid workspace path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    #[error("run_python sandbox I/O failed while {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> PythonError {
    let context = context.into();
    move |source| PythonError::Io { context, source }
}

/// True when the configured interpreter (`python3` or `$TBSIM_PYTHON`) runs.
/// Says nothing about confinement; see [`sandbox_available`].
pub fn python_available() -> bool {
    resolve_interpreter().is_ok()
}

/// True when bubblewrap (`bwrap` or `$TBSIM_BWRAP`) can confine a process on
/// this host. When false, [`run`] fails with
/// [`PythonError::SandboxUnavailable`] unless `TBSIM_PYTHON_UNCONFINED=1`.
pub fn sandbox_available() -> bool {
    check_bwrap(&bwrap_from_env()).is_ok()
}

/// How the interpreter is confined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Confinement {
    /// Inside bubblewrap, started from this binary.
    Bubblewrap(OsString),
    /// `unshare -rn` when available; no filesystem isolation.
    Unconfined,
}

impl Confinement {
    fn from_env() -> Self {
        if std::env::var_os(UNCONFINED_ENV_VAR).is_some_and(|v| v == "1") {
            Self::Unconfined
        } else {
            Self::Bubblewrap(bwrap_from_env())
        }
    }
}

fn bwrap_from_env() -> OsString {
    std::env::var_os(BWRAP_ENV_VAR)
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| OsString::from("bwrap"))
}

/// Runs the script and collects the outcome.
pub fn run(req: &PythonRequest<'_>) -> Result<PythonOutcome, PythonError> {
    run_confined(req, &Confinement::from_env())
}

fn run_confined(
    req: &PythonRequest<'_>,
    confinement: &Confinement,
) -> Result<PythonOutcome, PythonError> {
    for path in req.files.keys() {
        validate_path(path)?;
    }
    if let Confinement::Bubblewrap(bwrap) = confinement {
        check_bwrap(bwrap).map_err(|reason| PythonError::SandboxUnavailable { reason })?;
    }
    let python = resolve_interpreter()?;

    let temp = tempfile::Builder::new()
        .prefix("tbsim-py-")
        .tempdir()
        .map_err(io_error("creating the temporary directory"))?;
    let root = temp.path();
    let workspace = root.join("ws");
    fs::create_dir(&workspace).map_err(io_error("creating the workspace copy"))?;
    for (path, bytes) in req.files {
        let target = workspace.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io_error(format!("creating folders for {path}")))?;
        }
        fs::write(&target, bytes).map_err(io_error(format!("writing {path}")))?;
    }
    // Both live outside the workspace copy, so they are never copied back.
    let sandbox_dir = root.join("sandbox");
    fs::create_dir(&sandbox_dir).map_err(io_error("creating the script folder"))?;
    fs::write(sandbox_dir.join("script.py"), req.script).map_err(io_error("writing script.py"))?;
    fs::write(sandbox_dir.join("prelude.py"), PRELUDE).map_err(io_error("writing prelude.py"))?;

    let (mut command, status_pipe) = match confinement {
        Confinement::Bubblewrap(bwrap) => {
            let (reader, writer) = io::pipe().map_err(io_error("creating the status pipe"))?;
            let command = bubblewrap_command(
                bwrap,
                &python,
                &sandbox_dir,
                &workspace,
                &req.limits,
                writer,
            );
            (command, Some(reader))
        }
        Confinement::Unconfined => (
            unconfined_command(&python.executable, &sandbox_dir, &workspace, &req.limits),
            None,
        ),
    };
    let spawned = command.spawn();
    // Drops our copy of the status pipe's write end, so that it reaches
    // end-of-file once the sandbox is gone.
    drop(command);
    let mut child = spawned.map_err(io_error("starting the sandboxed interpreter"))?;

    let capture_cap = req.limits.max_output_bytes.saturating_add(CAPTURE_SLACK);
    let stdout_reader = child
        .stdout
        .take()
        .map(|pipe| Reader::spawn(pipe, capture_cap));
    let stderr_reader = child
        .stderr
        .take()
        .map(|pipe| Reader::spawn(pipe, capture_cap));
    let status_reader = status_pipe.map(|pipe| Reader::spawn(pipe, 256));

    let (status, timed_out) = wait_with_deadline(&mut child, req.limits.wall_time)?;
    let readers = [&stdout_reader, &stderr_reader, &status_reader];
    if !wait_for_readers(&readers, PIPE_GRACE) && !timed_out {
        // A descendant still holds the pipes; it is in our group unless it
        // escaped with setsid, in which case its output is simply abandoned.
        kill_group(child.id());
        wait_for_readers(&readers, PIPE_GRACE);
    }

    let replacements = path_replacements(root, matches!(confinement, Confinement::Bubblewrap(_)));
    let stdout = stdout_reader.map_or_else(String::new, |r| {
        r.finish(&replacements, req.limits.max_output_bytes)
    });
    let stderr = stderr_reader.map_or_else(String::new, |r| {
        r.finish(&replacements, req.limits.max_output_bytes)
    });

    let (exit_code, signal) = match status_reader {
        None => (status.code(), status.signal()),
        Some(reader) => {
            let report = reader.finish(&[], usize::MAX);
            match sandbox_exit(&report, status, timed_out) {
                Some(exit) => exit,
                None => {
                    let detail = stderr.trim();
                    let detail = if detail.is_empty() {
                        format!("it ended with {status} and no message")
                    } else {
                        detail.lines().take(5).collect::<Vec<_>>().join(" / ")
                    };
                    return Err(PythonError::SandboxUnavailable {
                        reason: format!("bubblewrap did not start the interpreter ({detail})"),
                    });
                }
            }
        }
    };

    let memory_exceeded = stderr.contains("MemoryError")
        || stderr.contains("Cannot allocate memory")
        || (!timed_out && matches!(signal, Some(6 | 9 | 11)));

    let snapshot = collect_workspace(&workspace, req.files, req.limits.max_file_bytes);
    let deleted = req
        .files
        .keys()
        .filter(|path| !snapshot.present.contains(*path))
        .cloned()
        .collect();

    Ok(PythonOutcome {
        exit_code,
        stdout,
        stderr,
        timed_out,
        memory_exceeded,
        written: snapshot.written,
        deleted,
        refused: snapshot.refused,
    })
}

/// Decodes the prelude's report ("started", then "exit N" or "signal N") into
/// the script's exit code and terminating signal. `None` means the sandbox
/// never got as far as running the prelude.
fn sandbox_exit(
    report: &str,
    bwrap: ExitStatus,
    timed_out: bool,
) -> Option<(Option<i32>, Option<i32>)> {
    let mut lines = report.lines();
    let started = lines.next() == Some("started");
    if timed_out {
        // Our own kill; bubblewrap itself died of SIGKILL.
        return Some((bwrap.code(), bwrap.signal()));
    }
    if !started {
        return None;
    }
    let last = lines.next().and_then(|line| line.split_once(' '));
    let number = |text: &str| text.parse::<i32>().ok();
    Some(match last {
        Some(("exit", code)) if number(code).is_some() => (number(code), None),
        Some(("signal", sig)) if number(sig).is_some() => (None, number(sig)),
        // The prelude's supervising parent itself was killed; bubblewrap
        // reports that, bash-style, as 128 + signal.
        _ => match bwrap.code() {
            Some(code) if code > 128 => (None, Some(code - 128)),
            Some(code) => (Some(code), None),
            None => (None, bwrap.signal()),
        },
    })
}

fn validate_path(path: &str) -> Result<(), PythonError> {
    let reason = if path.is_empty() {
        Some("the path is empty")
    } else if path.starts_with('/') {
        Some("absolute paths are not allowed, use a workspace-relative path")
    } else if path.contains('\0') {
        Some("the path contains a NUL byte")
    } else if path.split('/').any(|part| part == "..") {
        Some("'..' is not allowed")
    } else if path.split('/').any(|part| part.is_empty() || part == ".") {
        Some("empty or '.' path segments are not allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(PythonError::InvalidPath {
            path: path.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The real interpreter and the installation folders it needs at run time.
#[derive(Debug, Clone)]
struct Interpreter {
    executable: PathBuf,
    /// `sys.prefix`, `sys.base_prefix`, `sys.exec_prefix`, `sys.base_exec_prefix`.
    prefixes: Vec<PathBuf>,
}

/// Finds the real interpreter binary. Asking Python for `sys.executable` (with
/// the host environment) sees through launchers such as pyenv shims, which
/// would not work inside the cleared sandbox environment.
fn resolve_interpreter() -> Result<Interpreter, PythonError> {
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

fn probe_interpreter(interpreter: &str) -> Result<Interpreter, String> {
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

/// Whether this bubblewrap binary can set up the namespaces we use, cached
/// per binary. `Err` carries the reason for the error message.
fn check_bwrap(bwrap: &OsStr) -> Result<(), String> {
    static CACHE: OnceLock<Mutex<HashMap<OsString, Result<(), String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let cached = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(bwrap)
        .cloned();
    cached.unwrap_or_else(|| {
        let result = probe_bwrap(bwrap);
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(bwrap.to_owned(), result.clone());
        result
    })
}

fn probe_bwrap(bwrap: &OsStr) -> Result<(), String> {
    let shown = bwrap.to_string_lossy();
    let output = Command::new(bwrap)
        .args([
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv",
            "PATH",
            SAFE_PATH,
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "true",
        ])
        .env_clear()
        .env("PATH", SAFE_PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("`{shown}` could not be run ({e})"))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let detail = stderr.lines().next().unwrap_or("").trim();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    Err(format!(
        "`{shown} --unshare-all` does not work on this host ({}{detail})",
        output.status
    ))
}

/// Whether `unshare -rn` works here (it needs unprivileged user namespaces).
fn unshare_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        Command::new("unshare")
            .args(["-rn", "true"])
            .env_clear()
            .env("PATH", SAFE_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// The environment the script sees, apart from `HOME`.
const SCRIPT_ENV: [(&str, &str); 5] = [
    ("PATH", SAFE_PATH),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONHASHSEED", "0"),
    ("PYTHONIOENCODING", "utf-8"),
    ("LC_ALL", "C.UTF-8"),
];

/// The old, unconfined mode: `sh` sets the memory limit, then becomes
/// Python; `unshare -rn` removes the network when the host allows it.
fn unconfined_command(
    python: &Path,
    sandbox_dir: &Path,
    workspace: &Path,
    limits: &PythonLimits,
) -> Command {
    let mut command = if unshare_works() {
        let mut c = Command::new("unshare");
        // "--" so that sh's "-c" is not taken as unshare's own option.
        c.args(["-rn", "--", "/bin/sh"]);
        c
    } else {
        Command::new("/bin/sh")
    };
    // sh applies the limit to itself, then becomes Python via exec, so the
    // limit covers exactly the interpreter and nothing in this process.
    let limit = match limits.memory_bytes {
        0 => String::new(),
        bytes => format!("ulimit -v {} 2>/dev/null; ", (bytes / 1024).max(1)),
    };
    command
        .arg("-c")
        .arg(format!("{limit}exec \"$0\" \"$@\""))
        .arg(python)
        .arg("-s")
        .arg(sandbox_dir.join("prelude.py"))
        .arg(sandbox_dir.join("script.py"))
        .current_dir(workspace)
        .env_clear()
        .envs(SCRIPT_ENV)
        .env("HOME", workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own process group, so a timeout can kill anything the script forked.
        .process_group(0);
    command
}

/// Bubblewrap with only what the interpreter needs. The prelude gets the
/// memory limit as an extra argument: it forks, limits the child that runs
/// the script, and writes how it ended to `status` (its stdin).
fn bubblewrap_command(
    bwrap: &OsStr,
    python: &Interpreter,
    sandbox_dir: &Path,
    workspace: &Path,
    limits: &PythonLimits,
    status: io::PipeWriter,
) -> Command {
    let mut command = Command::new(bwrap);
    command.env_clear().env("PATH", SAFE_PATH).args([
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]);
    for (name, value) in SCRIPT_ENV.into_iter().chain([("HOME", WORKSPACE_MOUNT)]) {
        command.args(["--setenv", name, value]);
    }
    command.args(["--ro-bind", "/usr", "/usr"]);
    let mut visible = vec![PathBuf::from("/usr")];
    for dir in SYSTEM_DIRS {
        let Ok(metadata) = fs::symlink_metadata(dir) else {
            continue;
        };
        if metadata.file_type().is_symlink() {
            if let Ok(target) = fs::read_link(dir) {
                command.arg("--symlink").arg(target).arg(dir);
            }
        } else if metadata.is_dir() {
            command.args(["--ro-bind", dir, dir]);
            visible.push(PathBuf::from(dir));
        }
    }
    command.args([
        "--ro-bind-try",
        "/etc/alternatives",
        "/etc/alternatives",
        "--ro-bind-try",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
    ]);
    for path in interpreter_binds(python, visible) {
        command.arg("--ro-bind-try").arg(&path).arg(&path);
    }
    command
        .arg("--bind")
        .arg(workspace)
        .arg(WORKSPACE_MOUNT)
        .arg("--ro-bind")
        .arg(sandbox_dir)
        .arg(SCRIPT_MOUNT)
        .args(["--chdir", WORKSPACE_MOUNT, "--"])
        .arg(&python.executable)
        .arg("-s")
        .arg(format!("{SCRIPT_MOUNT}/prelude.py"))
        .arg(format!("{SCRIPT_MOUNT}/script.py"))
        .arg(limits.memory_bytes.to_string())
        .stdin(Stdio::from(status))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own process group, so a timeout kills bubblewrap, whose death takes
        // the whole sandbox down (--die-with-parent, PID namespace).
        .process_group(0);
    command
}

/// The interpreter's installation folders, plus its binary when it lives
/// elsewhere, each bound read-only at its own path. Never `/` itself, and
/// nothing already visible.
fn interpreter_binds(python: &Interpreter, mut visible: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut folders: Vec<&PathBuf> = python.prefixes.iter().collect();
    folders.sort_by_key(|path| path.components().count());
    let mut binds = Vec::new();
    let executable = [
        Some(python.executable.clone()),
        python.executable.canonicalize().ok(),
    ];
    let candidates = folders
        .into_iter()
        .cloned()
        .chain(executable.into_iter().flatten());
    for path in candidates {
        let usable = path.is_absolute() && path.parent().is_some();
        if usable && !visible.iter().any(|seen| path.starts_with(seen)) {
            visible.push(path.clone());
            binds.push(path);
        }
    }
    binds
}

fn wait_with_deadline(
    child: &mut Child,
    wall_time: Duration,
) -> Result<(ExitStatus, bool), PythonError> {
    let deadline = Instant::now() + wall_time;
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status, false)),
            Ok(None) => {}
            Err(source) => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(PythonError::Io {
                    context: "waiting for the interpreter".to_owned(),
                    source,
                });
            }
        }
        let now = Instant::now();
        if now >= deadline {
            // The child is not reaped yet, so its pid (= pgid) cannot have
            // been reused by an unrelated process.
            kill_group(child.id());
            let _ = child.kill();
            let status = child.wait().map_err(io_error("reaping the interpreter"))?;
            return Ok((status, true));
        }
        thread::sleep(pause.min(deadline - now));
        // Short first polls keep quick scripts quick; later ones save CPU.
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .env_clear()
        .env("PATH", SAFE_PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Drains one pipe on its own thread so a chatty script never blocks on a
/// full pipe, keeping only the first `cap` bytes.
#[derive(Debug)]
struct Reader {
    captured: Arc<Mutex<Captured>>,
    handle: JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Reader {
    fn spawn(mut pipe: impl Read + Send + 'static, cap: usize) -> Self {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let sink = Arc::clone(&captured);
        let handle = thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            loop {
                let n = match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut sink = sink.lock().unwrap_or_else(|p| p.into_inner());
                let keep = n.min(cap.saturating_sub(sink.bytes.len()));
                sink.bytes.extend_from_slice(&buffer[..keep]);
                sink.truncated |= keep < n;
            }
        });
        Self { captured, handle }
    }

    /// Decodes, scrubs temporary paths and truncates. A reader that has not
    /// finished is abandoned (its thread ends when the pipe finally closes).
    fn finish(self, replacements: &[(String, &'static str)], max: usize) -> String {
        let finished = self.handle.is_finished();
        if finished {
            let _ = self.handle.join();
        }
        let captured = self.captured.lock().unwrap_or_else(|p| p.into_inner());
        let truncated = captured.truncated || !finished;
        let mut text = String::from_utf8_lossy(&captured.bytes).into_owned();
        drop(captured);
        if truncated {
            strip_partial_path(&mut text, replacements);
        }
        for (from, to) in replacements {
            text = replace_path(&text, from, to);
        }
        truncate_output(text, truncated, max)
    }
}

/// Waits until every reader has seen end-of-file, or `grace` passes.
fn wait_for_readers(readers: &[&Option<Reader>], grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        let done = readers
            .iter()
            .all(|r| r.as_ref().is_none_or(|r| r.handle.is_finished()));
        if done {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Sandbox paths to hide from the agent, longest first so that the
/// workspace form wins over the bare root: "<root>/ws/a.csv" -> "./a.csv",
/// "<root>/sandbox/script.py" -> "./script.py". Inside bubblewrap the paths
/// are fixed ("/workspace", "/sandbox"), but the host ones can still show up
/// in bubblewrap's own messages.
fn path_replacements(root: &Path, bubblewrap: bool) -> Vec<(String, &'static str)> {
    let mut roots = vec![root.to_string_lossy().into_owned()];
    if let Ok(canonical) = root.canonicalize() {
        roots.push(canonical.to_string_lossy().into_owned());
    }
    roots.dedup();
    let mut pairs: Vec<(String, &'static str)> = roots
        .iter()
        .flat_map(|r| {
            [
                (format!("{r}/ws"), "."),
                (format!("{r}/sandbox"), "."),
                (r.clone(), "."),
            ]
        })
        .collect();
    if bubblewrap {
        pairs.push((WORKSPACE_MOUNT.to_owned(), "."));
        pairs.push((SCRIPT_MOUNT.to_owned(), "."));
    }
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    pairs
}

/// Replaces `from` only where it is a whole path: not preceded by a name
/// character or '/', and not followed by more of a file name, so that
/// "/workspace/a.csv" and "'/workspace'" change but "/workspaces" or
/// "/x/workspace" do not.
fn replace_path(text: &str, from: &str, to: &str) -> String {
    fn name_char(c: char) -> bool {
        c.is_alphanumeric() || c == '_' || c == '-'
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, _) in text.match_indices(from) {
        if start < copied {
            continue;
        }
        let end = start + from.len();
        let before = text[..start].chars().next_back();
        let mut after = text[end..].chars();
        let whole = !before.is_some_and(|c| name_char(c) || c == '.' || c == '/')
            && match after.next() {
                Some('.') => !after.next().is_some_and(|c| name_char(c) || c == '.'),
                Some(c) => !name_char(c),
                None => true,
            };
        if whole {
            out.push_str(&text[copied..start]);
            out.push_str(to);
            copied = end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// When capture stopped mid-path, the random part of the temporary name
/// would survive replacement; drop that fragment so output stays stable.
fn strip_partial_path(text: &mut String, replacements: &[(String, &'static str)]) {
    let longest = replacements
        .iter()
        .filter_map(|(path, _)| {
            (1..path.len())
                .rev()
                .find(|&k| path.is_char_boundary(k) && text.ends_with(&path[..k]))
        })
        .max();
    if let Some(k) = longest {
        text.truncate(text.len() - k);
    }
}

fn truncate_output(mut text: String, truncated: bool, max: usize) -> String {
    if !truncated && text.len() <= max {
        return text;
    }
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(TRUNCATION_MARKER);
    text.push('\n');
    text
}

#[derive(Debug, Default)]
struct Snapshot {
    written: BTreeMap<String, Vec<u8>>,
    refused: Vec<String>,
    /// Every path that is (still) a regular file, changed or not.
    present: BTreeSet<String>,
}

/// Reads the workspace copy back without following symlinks. Iterative, so a
/// deeply nested tree cannot exhaust the stack.
fn collect_workspace(
    workspace: &Path,
    inputs: &BTreeMap<String, Vec<u8>>,
    max_file_bytes: u64,
) -> Snapshot {
    let mut snapshot = Snapshot::default();
    let mut pending = vec![(workspace.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                let shown = if prefix.is_empty() { "." } else { &prefix };
                snapshot
                    .refused
                    .push(format!("{shown}: folder could not be read ({e})"));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let relative = format!("{prefix}{}", name.to_string_lossy());
            if name.to_str().is_none() {
                snapshot
                    .refused
                    .push(format!("{relative}: file name is not valid UTF-8"));
                continue;
            }
            let path = entry.path();
            let metadata = match fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    snapshot
                        .refused
                        .push(format!("{relative}: could not be read ({e})"));
                    continue;
                }
            };
            let kind = metadata.file_type();
            let reason = if kind.is_dir() {
                pending.push((path, format!("{relative}/")));
                continue;
            } else if kind.is_symlink() {
                "symbolic link".to_owned()
            } else if kind.is_fifo() {
                "named pipe".to_owned()
            } else if kind.is_socket() {
                "socket".to_owned()
            } else if kind.is_block_device() || kind.is_char_device() {
                "device file".to_owned()
            } else if !kind.is_file() {
                "not a regular file".to_owned()
            } else {
                let original = inputs.get(&relative);
                match read_regular_file(&path, &metadata, original, max_file_bytes) {
                    Ok(bytes) => {
                        snapshot.present.insert(relative.clone());
                        if original != Some(&bytes) {
                            snapshot.written.insert(relative, bytes);
                        }
                        continue;
                    }
                    Err(reason) => reason,
                }
            };
            snapshot.refused.push(format!("{relative}: {reason}"));
        }
    }
    snapshot.refused.sort();
    snapshot
}

/// Reads a file that `symlink_metadata` called regular, refusing it if it is
/// too big or if the path was swapped for something else in the meantime.
fn read_regular_file(
    path: &Path,
    metadata: &fs::Metadata,
    original: Option<&Vec<u8>>,
    max_file_bytes: u64,
) -> Result<Vec<u8>, String> {
    // An unchanged oversized input is not news; only new big content is refused.
    let limit = match original {
        Some(bytes) if bytes.len() as u64 == metadata.len() => max_file_bytes.max(metadata.len()),
        _ => max_file_bytes,
    };
    if metadata.len() > limit {
        return Err(format!("larger than {max_file_bytes} bytes"));
    }
    let file = fs::File::open(path).map_err(|e| format!("could not be read ({e})"))?;
    let opened = file
        .metadata()
        .map_err(|e| format!("could not be read ({e})"))?;
    if !opened.is_file() || opened.dev() != metadata.dev() || opened.ino() != metadata.ino() {
        return Err("changed while being read".to_owned());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not be read ({e})"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {max_file_bytes} bytes"));
    }
    Ok(bytes)
}

/// Runs before the agent's script: installs the audit-hook guards, then runs
/// the script as `__main__` and prints tracebacks without the prelude's frames.
const PRELUDE: &str = r#"# tbsim run_python prelude (not part of the agent's script)
import os
import runpy
import sys
import traceback

# runpy compiles with the absolute path; match it exactly when trimming frames.
_script = os.path.abspath(sys.argv[1])
_prelude = os.path.abspath(__file__)
# What -P would do: the prelude's folder must not be importable.
if sys.path and sys.path[0] != "" and _script.startswith(sys.path[0]):
    del sys.path[0]
# Inside bubblewrap the host passes the memory limit and reads the status.
_memory_limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
sys.argv = ["script.py"]

def _supervise(limit):
    # Bubblewrap reports a death by signal N as exit code 128 + N, so this
    # parent tells the host on fd 0 (a pipe) exactly how the script ended.
    os.write(0, b"started\n")
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        if limit > 0:
            import resource
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            try:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ValueError, OSError):
                pass
        return
    while True:
        try:
            status = os.waitpid(pid, 0)[1]
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        report, code = "signal %d" % os.WTERMSIG(status), 128 + os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
        report = "exit %d" % code
    try:
        os.write(0, (report + "\n").encode())
    except OSError:
        pass
    os._exit(code)

if _memory_limit is not None:
    _supervise(_memory_limit)

# runpy would otherwise set sys.argv[0] to the script's temporary path.
class _KeepArgv0:
    def __init__(self, value):
        pass

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return False

if hasattr(runpy, "_ModifiedArgv0"):
    runpy._ModifiedArgv0 = _KeepArgv0

# Flush per line so output printed before a timeout is not lost in a buffer.
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.reconfigure(line_buffering=True)
    except Exception:
        pass

_NETWORK = frozenset({
    "socket.connect", "socket.bind", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo",
    "socket.sendto", "socket.sendmsg", "urllib.Request",
})
_PROCESS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
    "os.forkpty", "os.spawn", "pty.spawn",
})

def _guard(event, args):
    if event in _NETWORK:
        raise PermissionError("network access is disabled in run_python")
    if event in _PROCESS:
        raise PermissionError("starting processes is disabled in run_python")

sys.addaudithook(_guard)

try:
    runpy.run_path(_script, run_name="__main__")
except SystemExit:
    raise
except BaseException as exc:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != _script:
        tb = tb.tb_next
    report = traceback.TracebackException(type(exc), exc, tb)
    # Frames of the guard hook below are noise to the agent.
    report.stack = traceback.StackSummary.from_list(
        [frame for frame in report.stack if frame.filename != _prelude])
    sys.stderr.write("".join(report.format()))
    sys.stderr.flush()
    sys.exit(1)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Skips the test unless both python3 and bubblewrap work here.
    macro_rules! require_python {
        () => {
            if !python_available() {
                eprintln!("skipping: no python3");
                return;
            }
            if !sandbox_available() {
                eprintln!("skipping: bubblewrap (bwrap) is not usable here");
                return;
            }
        };
    }

    fn sandboxed() -> Confinement {
        Confinement::Bubblewrap(bwrap_from_env())
    }

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        entries
            .iter()
            .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec()))
            .collect()
    }

    fn run_with(
        script: &str,
        files: &BTreeMap<String, Vec<u8>>,
        limits: PythonLimits,
    ) -> PythonOutcome {
        run_in(script, files, limits, &sandboxed())
    }

    fn run_in(
        script: &str,
        files: &BTreeMap<String, Vec<u8>>,
        limits: PythonLimits,
        confinement: &Confinement,
    ) -> PythonOutcome {
        let req = PythonRequest {
            script,
            files,
            limits,
        };
        match run_confined(&req, confinement) {
            Ok(outcome) => outcome,
            Err(e) => panic!("run failed: {e}"),
        }
    }

    fn run_script(script: &str) -> PythonOutcome {
        run_with(script, &BTreeMap::new(), PythonLimits::default())
    }

    #[test]
    fn prints_stdout() {
        require_python!();
        let out = run_script("import sys\nprint('hello', 6 * 7)\nprint(sys.argv)\n");
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, "hello 42\n['script.py']\n");
        assert_eq!(out.stderr, "");
        assert!(!out.timed_out && !out.memory_exceeded);
        assert!(out.written.is_empty() && out.deleted.is_empty() && out.refused.is_empty());
    }

    #[test]
    fn reads_csv_and_writes_json() {
        require_python!();
        let input = files(&[("data/sales.csv", "region,amount\nnorth,10\nsouth,32\n")]);
        let script = r#"
import csv, json, math, sqlite3, statistics
with open("data/sales.csv", newline="") as f:
    rows = list(csv.DictReader(f))
amounts = [int(r["amount"]) for r in rows]
db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(a,) for a in amounts])
total = db.execute("select sum(x) from t").fetchone()[0]
with open("report.json", "w") as f:
    json.dump({"total": total, "mean": statistics.mean(amounts), "root": math.isqrt(total)}, f, sort_keys=True)
"#;
        let out = run_with(script, &input, PythonLimits::default());
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.written.len(), 1);
        assert_eq!(
            out.written["report.json"],
            br#"{"mean": 21, "root": 6, "total": 42}"#.to_vec()
        );
        assert!(out.deleted.is_empty() && out.refused.is_empty());
    }

    #[test]
    fn modifies_and_deletes_files() {
        require_python!();
        let input = files(&[
            ("keep.txt", "same"),
            ("edit.txt", "old"),
            ("gone.txt", "bye"),
            ("dir/nested.txt", "x"),
        ]);
        let script = r#"
import os, shutil
open("edit.txt", "w").write("new")
os.remove("gone.txt")
shutil.rmtree("dir")
os.makedirs("out/deep")
open("out/deep/new.txt", "w").write("fresh")
open("keep.txt", "w").write("same")
"#;
        let out = run_with(script, &input, PythonLimits::default());
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        let written: Vec<_> = out.written.keys().map(String::as_str).collect();
        assert_eq!(written, ["edit.txt", "out/deep/new.txt"]);
        assert_eq!(out.written["edit.txt"], b"new".to_vec());
        assert_eq!(out.deleted, ["dir/nested.txt", "gone.txt"]);
        assert!(out.refused.is_empty(), "{:?}", out.refused);
    }

    #[test]
    fn syntax_error_is_an_outcome_with_traceback() {
        require_python!();
        let out = run_script("x = 1\ndef broken(:\n    pass\n");
        assert_eq!(out.exit_code, Some(1));
        assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);
        assert!(
            out.stderr.contains("./script.py\", line 2"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("tbsim-py-"), "{}", out.stderr);
    }

    #[test]
    fn runtime_error_traceback_shows_script_lines_only() {
        require_python!();
        let out = run_script("def f():\n    return 1 / 0\n\nf()\n");
        assert_eq!(out.exit_code, Some(1));
        assert!(
            out.stderr.starts_with("Traceback (most recent call last):"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("./script.py\", line 4"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("./script.py\", line 2, in f"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("ZeroDivisionError"), "{}", out.stderr);
        assert!(
            !out.stderr.contains("prelude") && !out.stderr.contains("runpy"),
            "{}",
            out.stderr
        );
    }

    #[test]
    fn exit_codes_pass_through() {
        require_python!();
        let out = run_script("import sys\nsys.exit(3)\n");
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.stderr, "");
    }

    #[test]
    fn infinite_loop_times_out() {
        require_python!();
        let started = Instant::now();
        let limits = PythonLimits {
            wall_time: Duration::from_secs(1),
            ..PythonLimits::default()
        };
        let out = run_with(
            "print('start')\nwhile True:\n    pass\n",
            &BTreeMap::new(),
            limits,
        );
        let elapsed = started.elapsed();
        assert!(out.timed_out);
        assert_eq!(out.exit_code, None);
        assert!(!out.memory_exceeded);
        assert_eq!(out.stdout, "start\n");
        assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
        assert!(elapsed >= Duration::from_secs(1), "took {elapsed:?}");
    }

    #[test]
    fn memory_limit_gives_memory_error() {
        require_python!();
        let limits = PythonLimits {
            memory_bytes: 256 * 1024 * 1024,
            ..PythonLimits::default()
        };
        let out = run_with(
            "block = bytearray(2 * 1024 ** 3)\nprint('allocated')\n",
            &BTreeMap::new(),
            limits,
        );
        assert!(out.memory_exceeded, "{out:?}");
        assert_ne!(out.exit_code, Some(0));
        assert!(!out.stdout.contains("allocated"));
        assert!(out.stderr.contains("MemoryError"), "{}", out.stderr);
    }

    #[test]
    fn network_is_refused() {
        require_python!();
        let out = run_script("import socket\nsocket.create_connection(('127.0.0.1', 9))\n");
        assert_ne!(out.exit_code, Some(0));
        assert!(out.stderr.contains("PermissionError"), "{}", out.stderr);
        assert!(
            out.stderr
                .contains("network access is disabled in run_python"),
            "{}",
            out.stderr
        );
    }

    #[test]
    fn starting_processes_is_refused() {
        require_python!();
        let out = run_script("import subprocess\nsubprocess.run(['ls'])\n");
        assert_ne!(out.exit_code, Some(0));
        assert!(
            out.stderr
                .contains("starting processes is disabled in run_python"),
            "{}",
            out.stderr
        );
        let out = run_script("import os\nos.system('echo hi')\n");
        assert!(
            out.stderr.contains("starting processes is disabled"),
            "{}",
            out.stderr
        );
        assert_eq!(out.stdout, "");
    }

    #[test]
    fn symlinks_are_refused_not_followed() {
        require_python!();
        let out = run_script(
            "import os\nos.symlink('/etc/passwd', 'leak')\nos.symlink('/etc', 'etcdir')\n",
        );
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert!(out.written.is_empty(), "{:?}", out.written.keys());
        assert_eq!(
            out.refused,
            ["etcdir: symbolic link", "leak: symbolic link"]
        );
    }

    #[test]
    fn special_and_oversized_files_are_refused() {
        require_python!();
        let limits = PythonLimits {
            max_file_bytes: 1000,
            ..PythonLimits::default()
        };
        let input = files(&[("huge_input.txt", &"x".repeat(2000))]);
        let script = "import os\nos.mkfifo('pipe')\nopen('big.bin', 'wb').write(b'0' * 1001)\nopen('ok.bin', 'wb').write(b'0' * 1000)\n";
        let out = run_with(script, &input, limits);
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(
            out.refused,
            ["big.bin: larger than 1000 bytes", "pipe: named pipe"]
        );
        let written: Vec<_> = out.written.keys().map(String::as_str).collect();
        assert_eq!(written, ["ok.bin"]);
        // The unchanged oversized input is neither refused nor deleted.
        assert!(out.deleted.is_empty());
    }

    #[test]
    fn writes_outside_the_workspace_are_not_reported() {
        require_python!();
        let out = run_script(
            "open('../escape.txt', 'w').write('x')\nimport os\nprint(os.getcwd(), os.environ['HOME'])\n",
        );
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert!(out.written.is_empty() && out.refused.is_empty() && out.deleted.is_empty());
        assert_eq!(out.stdout, ". .\n");
    }

    #[test]
    fn long_output_is_truncated() {
        require_python!();
        let limits = PythonLimits {
            max_output_bytes: 1000,
            ..PythonLimits::default()
        };
        let script = "import sys\nfor i in range(100000):\n    print('line', i)\nsys.stderr.write('e' * 5000)\n";
        let out = run_with(script, &BTreeMap::new(), limits);
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        let marker = format!("\n{TRUNCATION_MARKER}\n");
        assert!(out.stdout.ends_with(&marker), "{}", out.stdout);
        assert!(out.stdout.starts_with("line 0\nline 1\n"));
        assert!(out.stdout.len() <= 1000 + marker.len());
        assert_eq!(out.stderr, format!("{}{marker}", "e".repeat(1000)));
    }

    #[test]
    fn invalid_request_paths_are_errors() {
        for bad in ["../x", "/etc/passwd", "", "a/../../x", "a//b", "./a"] {
            let input = files(&[(bad, "x")]);
            let req = PythonRequest {
                script: "",
                files: &input,
                limits: PythonLimits::default(),
            };
            assert!(
                matches!(run(&req), Err(PythonError::InvalidPath { .. })),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn same_input_gives_identical_outcome() {
        require_python!();
        let input = files(&[("a.txt", "alpha"), ("b/c.txt", "gamma")]);
        let script = r#"
import os
print(sorted(os.listdir(".")), __file__, os.path.abspath("a.txt"))
print(list({"pear", "apple", "fig", "kiwi", "plum", "lime"}), hash("tbsim"))
open("new.txt", "w").write(open("a.txt").read().upper())
os.remove("b/c.txt")
os.symlink("a.txt", "alias")
raise ValueError(os.getcwd())
"#;
        let first = run_with(script, &input, PythonLimits::default());
        let second = run_with(script, &input, PythonLimits::default());
        assert_eq!(first, second);
        assert_eq!(first.exit_code, Some(1));
        assert!(
            first
                .stdout
                .starts_with("['a.txt', 'b'] ./script.py ./a.txt\n"),
            "{}",
            first.stdout
        );
        assert!(
            first.stderr.ends_with("ValueError: .\n"),
            "{}",
            first.stderr
        );
        assert_eq!(first.deleted, ["b/c.txt"]);
        assert_eq!(first.refused, ["alias: symbolic link"]);
    }

    #[test]
    fn missing_interpreter_is_reported() {
        let reason = match probe_interpreter("/nonexistent/python-for-tbsim-test") {
            Ok(path) => panic!("found {path:?}"),
            Err(reason) => reason,
        };
        let error = PythonError::InterpreterNotFound {
            interpreter: "/nonexistent/python-for-tbsim-test".to_owned(),
            reason,
        };
        let message = error.to_string();
        assert!(
            message.contains("install python3 or set TBSIM_PYTHON"),
            "{message}"
        );
    }

    #[test]
    fn host_files_outside_the_workspace_are_invisible() {
        require_python!();
        let secret_dir = tempfile::tempdir().expect("temp dir");
        let secret = secret_dir.path().join("answer.ron");
        fs::write(&secret, "the hidden answer").expect("write secret");
        let crate_dir = env!("CARGO_MANIFEST_DIR");
        let script = format!(
            r#"
import os
for path in [{secret:?}, {parent:?}, {crate_dir:?}, {source:?}, "/work/main/content", "/home", "/etc/hostname"]:
    try:
        with open(path) as f:
            print(path, "READ", f.read())
    except (FileNotFoundError, PermissionError, IsADirectoryError) as e:
        print(type(e).__name__, os.path.exists(path))
print(sorted(os.listdir("/")))
print(os.listdir("/tmp"), os.getcwd(), os.environ["HOME"])
"#,
            secret = secret.to_str().expect("utf-8 path"),
            parent = secret_dir.path().to_str().expect("utf-8 path"),
            source = concat!(env!("CARGO_MANIFEST_DIR"), "/src/python.rs"),
        );
        let out = run_script(&script);
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 9, "{}", out.stdout);
        // The secret file, its folder, this crate, the repo: none exist here.
        for line in &lines[..7] {
            assert_eq!(*line, "FileNotFoundError False", "{}", out.stdout);
        }
        assert!(!out.stdout.contains("hidden answer"), "{}", out.stdout);
        assert!(!out.stdout.contains("READ"), "{}", out.stdout);
        assert_eq!(lines[8], "[] . .");

        let python = resolve_interpreter().expect("interpreter");
        let listing = run_script("import os\nprint(sorted(os.listdir('/')))\n");
        let root_entries: Vec<String> = listing
            .stdout
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .split(", ")
            .map(|name| name.trim_matches('\'').to_owned())
            .collect();
        let prefix_tops: BTreeSet<String> = python
            .prefixes
            .iter()
            .chain([&python.executable])
            .filter_map(|p| p.components().nth(1))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        for entry in &root_entries {
            let system = [
                "usr",
                "bin",
                "sbin",
                "lib",
                "lib32",
                "lib64",
                "libx32",
                "etc",
                "proc",
                "dev",
                "tmp",
                "workspace",
                "sandbox",
            ];
            assert!(
                system.contains(&entry.as_str()) || prefix_tops.contains(entry),
                "unexpected /{entry} in {root_entries:?}"
            );
        }
        assert!(!root_entries.iter().any(|e| e == "work" || e == "home"));
        // /root exists only as the path down to a pyenv-style prefix.
        if root_entries.iter().any(|e| e == "root") {
            let needed: BTreeSet<String> = python
                .prefixes
                .iter()
                .filter_map(|p| p.strip_prefix("/root").ok())
                .filter_map(|p| p.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let out = run_script("import os\nprint('\\n'.join(sorted(os.listdir('/root'))))\n");
            let seen: BTreeSet<String> = out.stdout.lines().map(str::to_owned).collect();
            assert_eq!(seen, needed, "{}", out.stderr);
        }
        // Of /etc, only what the dynamic loader may need.
        let out = run_script(
            "import os\nprint(set(os.listdir('/etc')) <= {'alternatives', 'ld.so.cache'})\n",
        );
        assert_eq!(out.stdout, "True\n", "{}", out.stderr);
    }

    #[test]
    fn network_namespace_has_only_loopback() {
        require_python!();
        // socket.if_nameindex has no audit event, so this sees the kernel's view.
        let out = run_script("import socket\nprint([n for _, n in socket.if_nameindex()])\n");
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, "['lo']\n");
    }

    #[test]
    fn signals_and_high_exit_codes_are_told_apart() {
        require_python!();
        let out = run_script("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n");
        assert_eq!(out.exit_code, None, "{out:?}");
        assert!(out.memory_exceeded && !out.timed_out);
        let out = run_script("import sys\nsys.exit(137)\n");
        assert_eq!(out.exit_code, Some(137), "{out:?}");
        assert!(!out.memory_exceeded);
    }

    #[test]
    fn missing_or_broken_bubblewrap_is_an_error_not_a_fallback() {
        for fake in ["/nonexistent/bwrap-for-tbsim-test", "/bin/false"] {
            let req = PythonRequest {
                script: "print('ran')",
                files: &BTreeMap::new(),
                limits: PythonLimits::default(),
            };
            let error = match run_confined(&req, &Confinement::Bubblewrap(fake.into())) {
                Ok(outcome) => panic!("ran unconfined with {fake}: {outcome:?}"),
                Err(error) => error,
            };
            assert!(
                matches!(error, PythonError::SandboxUnavailable { .. }),
                "{error:?}"
            );
            let message = error.to_string();
            assert!(message.contains(fake), "{message}");
            assert!(
                message.ends_with("install bubblewrap (apt-get install bubblewrap), or set TBSIM_PYTHON_UNCONFINED=1 to run without filesystem isolation on a trusted machine"),
                "{message}"
            );
        }
    }

    #[test]
    fn bubblewrap_that_never_starts_python_is_an_error() {
        if !python_available() {
            eprintln!("skipping: no python3");
            return;
        }
        // `true` passes the probe but runs nothing.
        let req = PythonRequest {
            script: "print('ran')",
            files: &BTreeMap::new(),
            limits: PythonLimits::default(),
        };
        let result = run_confined(&req, &Confinement::Bubblewrap("/bin/true".into()));
        assert!(
            matches!(result, Err(PythonError::SandboxUnavailable { .. })),
            "{result:?}"
        );
    }

    #[test]
    fn unconfined_mode_still_runs() {
        if !python_available() {
            eprintln!("skipping: no python3");
            return;
        }
        let input = files(&[("a.txt", "alpha")]);
        let script = "import os\nprint(open('a.txt').read(), os.getcwd(), __file__)\nopen('b.txt', 'w').write('beta')\nraise SystemExit(4)\n";
        let out = run_in(
            script,
            &input,
            PythonLimits::default(),
            &Confinement::Unconfined,
        );
        assert_eq!(out.exit_code, Some(4), "{}", out.stderr);
        assert_eq!(out.stdout, "alpha . ./script.py\n");
        assert_eq!(out.written["b.txt"], b"beta".to_vec());
        let out = run_in(
            "import socket\nsocket.create_connection(('127.0.0.1', 9))\n",
            &BTreeMap::new(),
            PythonLimits::default(),
            &Confinement::Unconfined,
        );
        assert!(
            out.stderr.contains("network access is disabled"),
            "{}",
            out.stderr
        );
    }

    #[test]
    fn fixed_sandbox_paths_are_replaced_only_as_whole_paths() {
        let pairs = path_replacements(Path::new("/tmp/tbsim-py-abc"), true);
        let scrub = |text: &str| {
            pairs
                .iter()
                .fold(text.to_owned(), |t, (from, to)| replace_path(&t, from, to))
        };
        assert_eq!(
            scrub("'/workspace/a.csv' /sandbox/script.py"),
            "'./a.csv' ./script.py"
        );
        assert_eq!(scrub("cwd=/workspace."), "cwd=..");
        assert_eq!(
            scrub("/workspaces /x/workspace /workspace.bak"),
            "/workspaces /x/workspace /workspace.bak"
        );
        assert_eq!(
            scrub("/tmp/tbsim-py-abc/ws/x /tmp/tbsim-py-abc/sandbox/y"),
            "./x ./y"
        );
    }

    #[test]
    fn truncation_helpers() {
        assert_eq!(truncate_output("abc".into(), false, 10), "abc");
        assert_eq!(
            truncate_output("abcdef".into(), false, 3),
            "abc\n[output truncated]\n"
        );
        // Never splits a UTF-8 character.
        assert_eq!(
            truncate_output("éé".into(), false, 3),
            "é\n[output truncated]\n"
        );
        let pairs = vec![("/tmp/tbsim-py-abc123".to_owned(), ".")];
        let mut text = "see /tmp/tbsim-py-ab".to_owned();
        strip_partial_path(&mut text, &pairs);
        assert_eq!(text, "see ");
    }
}
