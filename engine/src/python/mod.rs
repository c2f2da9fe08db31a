//! Runs an agent's Python script (`run_python`) against a temporary copy of its
//! workspace, with limits, and reports which files changed.
//!
//! The simulator keeps workspaces in memory, so the interface is bytes in and
//! bytes out: the files are written to a fresh temporary directory, the script
//! runs there, and the directory is read back without following symlinks.
//!
//! Confinement is layered and free of `unsafe`:
//! * filesystem, network, processes: by default the interpreter runs inside
//!   bubblewrap, in its own PID, network, IPC and UTS namespaces, seeing only
//!   `/usr`, the `/bin` and `/lib*` links, the interpreter's own prefix
//!   (read-only), a size-capped `/tmp`, `/proc`, `/dev`, the workspace copy at
//!   `/workspace` and the script at `/sandbox`. Nothing else of the host (the
//!   benchmark's hidden answers included) is visible. When tbsim runs as an
//!   ordinary user bubblewrap also creates a user namespace; when it runs as
//!   root (where a user namespace would map the script to root, which no
//!   process limit binds) the script instead runs as `nobody` (uid 65534) with
//!   no capabilities. When bubblewrap is missing or broken, [`run`] fails with
//!   [`PythonError::SandboxUnavailable`] instead of running unconfined, unless
//!   `TBSIM_PYTHON_UNCONFINED=1` asks for the old behaviour: `unshare -rn`
//!   when the host allows it, no filesystem isolation and only the
//!   per-process memory limit;
//! * resources, for the sandbox as a whole (see [`PythonLimits`] and
//!   [`containment`]): the prelude runs as PID 1 of the sandbox and supervises
//!   the script. The script gets `RLIMIT_NPROC` (process count),
//!   `RLIMIT_AS` (memory per process), `RLIMIT_CPU` and `RLIMIT_FSIZE` (size
//!   of any one file); the supervisor polls every 10 ms the number of
//!   processes, their total anonymous memory and total CPU time, and every
//!   50 ms the size and entry count of the workspace copy, and kills every
//!   process in the sandbox when one is over its cap. `/tmp` is a tmpfs of
//!   fixed size. Polling bounds totals only up to what can be allocated
//!   between two polls; the hard bound is the per-process limits times the
//!   process limit. Where systemd can create a transient scope (cgroup v2),
//!   the whole sandbox also runs under `MemoryMax`, `MemorySwapMax=0` and
//!   `TasksMax`, which the kernel enforces at allocation time;
//! * wall time: the child gets its own process group, which is killed on
//!   timeout (bubblewrap's `--die-with-parent` and the PID namespace take
//!   everything else down with it);
//! * a Python audit hook refuses `socket` connections and the usual ways of
//!   starting processes (`subprocess`, `os.system`, `os.fork`, `os.exec*`,
//!   `os.posix_spawn`, `pty.spawn`) with a clear error. It is a courtesy, not
//!   a boundary: `ctypes` (calling libc's `fork` or `execve`) and
//!   `_posixsubprocess.fork_exec` raise no audit event and bypass it. That is
//!   harmless inside bubblewrap, because such processes are confined by the
//!   same namespaces and limits as the script; in unconfined mode nothing
//!   stops them.
//!
//! The script's exit status reaches the host through the supervisor's stdin,
//! a pipe only PID 1 holds: processes in the namespace cannot signal PID 1,
//! and the supervisor is not dumpable (or, as root, another user), so its
//! `/proc/1/fd` is closed to them. Bubblewrap's own exit status could not tell
//! a death by signal N from `exit(128 + N)`.
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

/// Resource limits for one run. Memory, processes and CPU time are for the
/// sandbox as a whole, not per process (see the module docs for how each is
/// enforced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonLimits {
    /// Wall-clock time before the whole process group is killed.
    pub wall_time: Duration,
    /// CPU time of all the sandbox's processes together.
    pub cpu_time: Duration,
    /// Memory of all the sandbox's processes together, and the address-space
    /// limit (`RLIMIT_AS`) of each; 0 means no limit.
    pub memory_bytes: u64,
    /// Processes the script may have at once, itself included.
    pub max_processes: u32,
    /// Size of the sandbox's `/tmp` (a tmpfs, so host memory).
    pub tmp_bytes: u64,
    /// Size of the workspace copy (host disk), inputs included, and of any one
    /// file in it; raised to the inputs' size when they alone are larger.
    pub workspace_bytes: u64,
    /// Files and folders the workspace copy may hold.
    pub workspace_entries: u32,
    /// Cap on each of stdout and stderr, in bytes, before the marker line.
    pub max_output_bytes: usize,
    /// Files larger than this are not copied back (they go to `refused`).
    pub max_file_bytes: u64,
    /// At most this many new or changed files are copied back per run.
    pub max_files_back: usize,
    /// At most this many bytes of new or changed files are copied back.
    pub max_bytes_back: u64,
}

impl Default for PythonLimits {
    fn default() -> Self {
        Self {
            wall_time: Duration::from_secs(10),
            cpu_time: Duration::from_secs(10),
            memory_bytes: 512 * MIB,
            max_processes: 32,
            tmp_bytes: 64 * MIB,
            workspace_bytes: 256 * MIB,
            workspace_entries: 10_000,
            max_output_bytes: 64 * 1024,
            max_file_bytes: 8 * MIB,
            max_files_back: 64,
            max_bytes_back: 8 * MIB,
        }
    }
}

const MIB: u64 = 1024 * 1024;

/// A sandbox-wide limit the script ran into. The run was stopped (every
/// process killed) for all but [`LimitHit::Tmp`] and [`LimitHit::FileSize`],
/// where the write simply failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LimitHit {
    /// The process count reached [`PythonLimits::max_processes`].
    Processes,
    /// Total memory over [`PythonLimits::memory_bytes`].
    Memory,
    /// Total CPU time over [`PythonLimits::cpu_time`].
    Cpu,
    /// The workspace copy grew over [`PythonLimits::workspace_bytes`].
    Workspace,
    /// The workspace copy holds more than [`PythonLimits::workspace_entries`].
    Entries,
    /// `/tmp` is full ([`PythonLimits::tmp_bytes`]).
    Tmp,
    /// A file reached the per-file size cap.
    FileSize,
}

impl LimitHit {
    fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "processes" => Self::Processes,
            "memory" => Self::Memory,
            "cpu" => Self::Cpu,
            "workspace" => Self::Workspace,
            "entries" => Self::Entries,
            "tmp" => Self::Tmp,
            "file_size" => Self::FileSize,
            _ => return None,
        })
    }

    /// A sentence for the agent, naming the cap.
    pub fn message(self, limits: &PythonLimits) -> String {
        let stopped = "; every process in the sandbox was stopped";
        match self {
            Self::Processes => format!(
                "the script reached the sandbox's limit of {} processes{stopped}",
                limits.max_processes
            ),
            Self::Memory => format!(
                "the sandbox's processes together used more than {} of memory{stopped}",
                show_bytes(limits.memory_bytes)
            ),
            Self::Cpu => format!(
                "the sandbox's processes together used more than {} s of CPU time{stopped}",
                limits.cpu_time.as_secs()
            ),
            Self::Workspace => format!(
                "the workspace copy grew over its cap of {}{stopped}",
                show_bytes(limits.workspace_bytes)
            ),
            Self::Entries => format!(
                "the workspace copy held more than {} files and folders{stopped}",
                limits.workspace_entries
            ),
            Self::Tmp => format!(
                "/tmp is full: it is capped at {}",
                show_bytes(limits.tmp_bytes)
            ),
            Self::FileSize => format!(
                "a file reached the sandbox's size cap for one file ({}); the write failed",
                show_bytes(limits.workspace_bytes)
            ),
        }
    }
}

fn show_bytes(n: u64) -> String {
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
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
    /// "path: reason" for everything that was not copied in or back, sorted.
    pub refused: Vec<String>,
    /// Sandbox-wide limits the script ran into, sorted.
    pub limits_hit: Vec<LimitHit>,
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

/// Runs the script inside the given bubblewrap binary, whatever the
/// environment says (a configuration switch for callers and tests).
pub fn run_with_bwrap(
    req: &PythonRequest<'_>,
    bwrap: &OsStr,
) -> Result<PythonOutcome, PythonError> {
    run_confined(req, &Confinement::Bubblewrap(bwrap.to_owned()))
}

/// How the sandbox's resource limits are enforced on this host, found at run
/// time (and cached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// A systemd transient scope (cgroup v2) caps the sandbox's memory and
    /// tasks at allocation time, on top of the rlimits and the supervisor.
    CgroupScope,
    /// Per-process rlimits (`RLIMIT_NPROC`, `RLIMIT_AS`, `RLIMIT_CPU`,
    /// `RLIMIT_FSIZE`) and the supervisor's polling of the totals.
    Rlimits,
}

impl std::fmt::Display for Containment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::CgroupScope => "cgroup v2 scope (systemd-run) plus rlimits and supervisor",
            Self::Rlimits => "rlimits plus supervisor polling (no cgroup delegation here)",
        })
    }
}

/// Which [`Containment`] applies to sandboxed runs on this host.
pub fn containment() -> Containment {
    if systemd_scope_works() {
        Containment::CgroupScope
    } else {
        Containment::Rlimits
    }
}

/// Whether `systemd-run --scope` can give a scope memory and task limits
/// here: it needs a running systemd (the user's, unless we are root) with the
/// memory and pids controllers delegated.
fn systemd_scope_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let mut command = Command::new("systemd-run");
        command
            .args(systemd_scope_args(64 * MIB, 8))
            .arg("true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command.status().is_ok_and(|status| status.success())
    })
}

fn systemd_scope_args(memory: u64, tasks: u32) -> Vec<String> {
    let mut args = Vec::new();
    if sandbox_uid().is_none() {
        args.push("--user".to_owned());
    }
    args.extend(
        [
            "--scope",
            "--quiet",
            "--collect",
            "-p",
            "MemorySwapMax=0",
            "-p",
        ]
        .map(str::to_owned),
    );
    args.push(format!("MemoryMax={memory}"));
    args.push("-p".to_owned());
    args.push(format!("TasksMax={tasks}"));
    args.push("--".to_owned());
    args
}

/// The user the script runs as when tbsim runs as root: in a user namespace
/// root would stay root on the host, whose processes `RLIMIT_NPROC` does not
/// bind. `None` when tbsim is an ordinary user (the script runs as that user
/// inside a user namespace).
fn sandbox_uid() -> Option<u32> {
    const NOBODY: u32 = 65534;
    static ROOT: OnceLock<bool> = OnceLock::new();
    // /proc/self belongs to the effective user.
    let root = *ROOT.get_or_init(|| fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0));
    root.then_some(NOBODY)
}

/// An input file that could not be placed in the sandbox is refused, not
/// fatal: one bad name must not disable the tool for the rest of the run.
fn write_inputs(
    workspace: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    owner: Option<u32>,
    refused: &mut Vec<String>,
) -> Result<BTreeMap<String, Vec<u8>>, PythonError> {
    let mut placed = BTreeMap::new();
    for (path, bytes) in files {
        if let Err(reason) = validate_path(path) {
            refused.push(format!(
                "{}: not copied into the sandbox ({reason})",
                shorten(path)
            ));
            continue;
        }
        let target = workspace.join(path);
        let written = create_parents(workspace, path, owner)
            .and_then(|()| fs::write(&target, bytes))
            .and_then(|()| chown_to(&target, owner));
        match written {
            Ok(()) => {
                placed.insert(path.clone(), bytes.clone());
            }
            Err(e) => refused.push(format!(
                "{}: not copied into the sandbox ({e})",
                shorten(path)
            )),
        }
    }
    Ok(placed)
}

/// Creates the folders above `path`, owned by the sandbox user when there is one.
fn create_parents(workspace: &Path, path: &str, owner: Option<u32>) -> io::Result<()> {
    let mut folder = workspace.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        folder.push(part);
        match fs::create_dir(&folder) {
            Ok(()) => chown_to(&folder, owner)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && folder.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn chown_to(path: &Path, owner: Option<u32>) -> io::Result<()> {
    match owner {
        Some(uid) => std::os::unix::fs::chown(path, Some(uid), Some(uid)),
        None => Ok(()),
    }
}

/// At most 80 characters of a path, for messages.
fn shorten(path: &str) -> String {
    if path.chars().count() <= 80 {
        return path.to_owned();
    }
    let head: String = path.chars().take(60).collect();
    format!("{head}… ({} bytes)", path.len())
}

fn run_confined(
    req: &PythonRequest<'_>,
    confinement: &Confinement,
) -> Result<PythonOutcome, PythonError> {
    if let Confinement::Bubblewrap(bwrap) = confinement {
        check_bwrap(bwrap).map_err(|reason| PythonError::SandboxUnavailable { reason })?;
    }
    let python = resolve_interpreter()?;
    let owner = match confinement {
        Confinement::Bubblewrap(_) => sandbox_uid(),
        Confinement::Unconfined => None,
    };

    let temp = tempfile::Builder::new()
        .prefix("tbsim-py-")
        .tempdir()
        .map_err(io_error("creating the temporary directory"))?;
    let root = temp.path();
    let workspace = root.join("ws");
    fs::create_dir(&workspace).map_err(io_error("creating the workspace copy"))?;
    chown_to(&workspace, owner)
        .map_err(io_error("handing the workspace copy to the sandbox user"))?;
    let mut refused_inputs = Vec::new();
    let inputs = write_inputs(&workspace, req.files, owner, &mut refused_inputs)?;
    // Both live outside the workspace copy, so they are never copied back.
    let sandbox_dir = root.join("sandbox");
    fs::create_dir(&sandbox_dir).map_err(io_error("creating the script folder"))?;
    fs::write(sandbox_dir.join("script.py"), req.script).map_err(io_error("writing script.py"))?;
    fs::write(sandbox_dir.join("prelude.py"), PRELUDE).map_err(io_error("writing prelude.py"))?;

    let input_bytes: u64 = inputs.values().map(|b| b.len() as u64).sum();
    let supervision = Supervision {
        limits: req.limits,
        workspace_bytes: req.limits.workspace_bytes.max(input_bytes + 1),
        run_as: owner,
    };
    let (mut command, status_pipe) = match confinement {
        Confinement::Bubblewrap(bwrap) => {
            let (reader, writer) = io::pipe().map_err(io_error("creating the status pipe"))?;
            let command = bubblewrap_command(
                bwrap,
                &python,
                &sandbox_dir,
                &workspace,
                &supervision,
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
    let status_reader = status_pipe.map(|pipe| Reader::spawn(pipe, 4096));

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

    let (exit_code, signal, limits_hit) = match status_reader {
        None => (status.code(), status.signal(), Vec::new()),
        Some(reader) => {
            let report = reader.finish(&[], usize::MAX);
            match sandbox_exit(&report, status, timed_out) {
                Ok(exit) => exit,
                Err(supervisor) => {
                    let detail = supervisor.unwrap_or_else(|| {
                        let detail = stderr.trim();
                        if detail.is_empty() {
                            format!("it ended with {status} and no message")
                        } else {
                            detail.lines().take(5).collect::<Vec<_>>().join(" / ")
                        }
                    });
                    return Err(PythonError::SandboxUnavailable {
                        reason: format!("bubblewrap did not start the interpreter ({detail})"),
                    });
                }
            }
        }
    };

    let stopped = limits_hit
        .iter()
        .any(|hit| !matches!(hit, LimitHit::Tmp | LimitHit::FileSize));
    let memory_exceeded = limits_hit.contains(&LimitHit::Memory)
        || stderr.contains("MemoryError")
        || stderr.contains("Cannot allocate memory")
        || (!timed_out && !stopped && matches!(signal, Some(6 | 9 | 11)));

    let mut snapshot = collect_workspace(&workspace, &inputs, &req.limits);
    snapshot.refused.append(&mut refused_inputs);
    snapshot.refused.sort();
    let deleted = inputs
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
        limits_hit,
    })
}

/// What the supervisor inside the sandbox is told (as JSON on its command line).
#[derive(Debug, Clone, Copy)]
struct Supervision {
    limits: PythonLimits,
    /// The workspace cap for this run (raised to the inputs' size).
    workspace_bytes: u64,
    /// The uid the script drops to, when tbsim runs as root.
    run_as: Option<u32>,
}

impl Supervision {
    fn to_json(self) -> String {
        let limits = &self.limits;
        serde_json::json!({
            "memory": limits.memory_bytes,
            "processes": limits.max_processes.max(2),
            "cpu_secs": limits.cpu_time.as_secs().max(1),
            "file_bytes": self.workspace_bytes,
            "workspace_bytes": self.workspace_bytes,
            "workspace_entries": limits.workspace_entries,
            "run_as": self.run_as,
        })
        .to_string()
    }
}

/// The script's exit code, terminating signal and the limits it hit.
type SandboxExit = (Option<i32>, Option<i32>, Vec<LimitHit>);

/// Decodes the supervisor's report ("started", "limit KIND" lines, then
/// "exit N" or "signal N"). `Err` means the sandbox never got as far as
/// running the script, with the supervisor's own reason when it gave one.
fn sandbox_exit(
    report: &str,
    bwrap: ExitStatus,
    timed_out: bool,
) -> Result<SandboxExit, Option<String>> {
    let mut started = false;
    let mut ended = None;
    let mut hits = Vec::new();
    let number = |text: &str| text.parse::<i32>().ok();
    for line in report.lines() {
        match line.split_once(' ') {
            None if line == "started" => started = true,
            Some(("error", reason)) => return Err(Some(reason.to_owned())),
            Some(("limit", kind)) => hits.extend(LimitHit::parse(kind)),
            Some(("exit", code)) if number(code).is_some() => ended = Some((number(code), None)),
            Some(("signal", sig)) if number(sig).is_some() => ended = Some((None, number(sig))),
            _ => {}
        }
    }
    hits.sort();
    hits.dedup();
    if timed_out {
        // Our own kill; bubblewrap itself died of SIGKILL.
        return Ok((bwrap.code(), bwrap.signal(), hits));
    }
    if !started {
        return Err(None);
    }
    let (code, signal) = ended.unwrap_or_else(|| match bwrap.code() {
        // The supervisor itself was killed; bubblewrap reports that,
        // bash-style, as 128 + signal.
        Some(code) if code > 128 => (None, Some(code - 128)),
        Some(code) => (Some(code), None),
        None => (None, bwrap.signal()),
    });
    Ok((code, signal, hits))
}

/// Paths are workspace-relative with '/' separators, within the name limits
/// every workspace path obeys ([`crate::path::check_name_limits`]).
fn validate_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        Err("the path is empty".to_owned())
    } else if path.starts_with('/') {
        Err("absolute paths are not allowed, use a workspace-relative path".to_owned())
    } else if path.contains('\0') {
        Err("the path contains a NUL byte".to_owned())
    } else if path.split('/').any(|part| part == "..") {
        Err("'..' is not allowed".to_owned())
    } else if path.split('/').any(|part| part.is_empty() || part == ".") {
        Err("empty or '.' path segments are not allowed".to_owned())
    } else {
        crate::path::check_name_limits(path).map_err(|e| e.to_string())
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
        .args(isolation_args())
        .args([
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
            "--perms",
            "1777",
            "--size",
            "1048576",
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
        "`{shown}` cannot create the sandbox's namespaces and size-capped /tmp on this host (bubblewrap 0.6 or newer is needed; {}{detail})",
        output.status
    ))
}

/// Namespaces and privileges. As root, no user namespace (it would map the
/// script to host root); the supervisor keeps only what it needs to drop to
/// the sandbox user and to kill the sandbox's processes.
fn isolation_args() -> Vec<&'static str> {
    let mut args = if sandbox_uid().is_some() {
        vec![
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--cap-add",
            "CAP_KILL",
        ]
    } else {
        vec!["--unshare-all"]
    };
    args.extend(["--die-with-parent", "--new-session", "--as-pid-1"]);
    args
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

/// Bubblewrap with only what the interpreter needs, inside a systemd scope
/// when one is available. The prelude gets the limits as an extra argument:
/// it supervises the sandbox as PID 1 and writes how the script ended to
/// `status` (its stdin).
fn bubblewrap_command(
    bwrap: &OsStr,
    python: &Interpreter,
    sandbox_dir: &Path,
    workspace: &Path,
    supervision: &Supervision,
    status: io::PipeWriter,
) -> Command {
    let limits = &supervision.limits;
    let mut command = if systemd_scope_works() {
        let mut c = Command::new("systemd-run");
        // The kernel's cap sits above the supervisor's, which then reports it.
        let memory = match limits.memory_bytes {
            0 => u64::MAX / 2,
            bytes => bytes.saturating_mul(2).saturating_add(limits.tmp_bytes),
        };
        c.args(systemd_scope_args(
            memory,
            limits.max_processes.saturating_add(2),
        ))
        .arg(bwrap);
        c
    } else {
        Command::new(bwrap)
    };
    command
        .env_clear()
        .env("PATH", SAFE_PATH)
        .args(isolation_args())
        .arg("--clearenv");
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
        "--perms",
        "0755",
        "--dir",
        "/etc",
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
        "--perms",
        "1777",
        "--size",
    ]);
    command
        .arg(limits.tmp_bytes.max(4096).to_string())
        .args(["--tmpfs", "/tmp"]);
    let mut made = BTreeSet::new();
    for path in interpreter_binds(python, visible) {
        // Folders bubblewrap creates on the way would be private to root,
        // closing the interpreter to the sandbox user.
        let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
        ancestors.reverse();
        for folder in ancestors {
            if folder.parent().is_some() && made.insert(folder.to_path_buf()) {
                command.args(["--perms", "0755", "--dir"]).arg(folder);
            }
        }
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
        .arg(supervision.to_json())
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
/// deeply nested tree cannot exhaust the stack. Files are taken in path order,
/// so which ones fit under the caps does not depend on the directory order.
fn collect_workspace(
    workspace: &Path,
    inputs: &BTreeMap<String, Vec<u8>>,
    limits: &PythonLimits,
) -> Snapshot {
    let mut snapshot = Snapshot::default();
    let mut regular = Vec::new();
    let mut pending = vec![(workspace.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                let shown = if prefix.is_empty() { "." } else { &prefix };
                snapshot.refused.push(format!(
                    "{}: folder could not be read ({e})",
                    shorten(shown)
                ));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let relative = format!("{prefix}{}", name.to_string_lossy());
            if name.to_str().is_none() {
                snapshot.refused.push(format!(
                    "{}: file name is not valid UTF-8",
                    shorten(&relative)
                ));
                continue;
            }
            let path = entry.path();
            let metadata = match fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    snapshot
                        .refused
                        .push(format!("{}: could not be read ({e})", shorten(&relative)));
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
            } else if let Err(e) = crate::path::check_name_limits(&relative) {
                e.to_string()
            } else {
                regular.push((relative, path, metadata));
                continue;
            };
            snapshot
                .refused
                .push(format!("{}: {reason}", shorten(&relative)));
        }
    }
    regular.sort_by(|a, b| a.0.cmp(&b.0));
    let mut back_bytes = 0u64;
    // Why a new or changed file of `size` bytes cannot come back, if it cannot.
    let over_cap = |count: usize, back: u64, size: u64| {
        if count >= limits.max_files_back {
            Some(format!(
                "not brought back, at most {} new or changed files are brought back per run",
                limits.max_files_back
            ))
        } else if back.saturating_add(size) > limits.max_bytes_back {
            Some(format!(
                "not brought back, at most {} of new or changed files are brought back per run",
                show_bytes(limits.max_bytes_back)
            ))
        } else {
            None
        }
    };
    for (relative, path, metadata) in regular {
        let original = inputs.get(&relative);
        // A regular file that is not brought back still exists: not deleted.
        snapshot.present.insert(relative.clone());
        // Refused before reading when it cannot be an unchanged input, so
        // that a flood of files is never read into memory.
        let maybe_unchanged = original.is_some_and(|o| o.len() as u64 == metadata.len());
        if !maybe_unchanged
            && metadata.len() <= limits.max_file_bytes
            && let Some(reason) = over_cap(snapshot.written.len(), back_bytes, metadata.len())
        {
            snapshot.refused.push(format!("{relative}: {reason}"));
            continue;
        }
        let bytes = match read_regular_file(&path, &metadata, original, limits.max_file_bytes) {
            Ok(bytes) => bytes,
            Err(reason) => {
                snapshot.refused.push(format!("{relative}: {reason}"));
                continue;
            }
        };
        if original == Some(&bytes) {
            continue;
        }
        let size = bytes.len() as u64;
        match over_cap(snapshot.written.len(), back_bytes, size) {
            Some(reason) => snapshot.refused.push(format!("{relative}: {reason}")),
            None => {
                back_bytes += size;
                snapshot.written.insert(relative, bytes);
            }
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

/// The supervisor and prelude; see the comments at its top.
const PRELUDE: &str = include_str!("prelude.py");

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
        // The sandbox's root is not writable by the script (as root, it runs as
        // nobody); either way nothing outside the workspace comes back.
        let out = run_script(
            "try:\n    open('../escape.txt', 'w').write('x')\nexcept PermissionError:\n    pass\nimport os\nprint(os.getcwd(), os.environ['HOME'])\n",
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
    fn bad_input_paths_are_refused_and_the_rest_still_runs() {
        require_python!();
        let long = format!("{}.txt", "A".repeat(300));
        let deep = format!("{}x.txt", "d/".repeat(3000));
        let mut input = files(&[("ok.txt", "fine")]);
        for bad in ["../x", "/etc/passwd", "", "a//b", "./a", &long, &deep] {
            input.insert(bad.to_owned(), b"x".to_vec());
        }
        let out = run_with(
            "import os\nprint(sorted(os.listdir('.')))\n",
            &input,
            PythonLimits::default(),
        );
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, "['ok.txt']\n");
        assert_eq!(out.refused.len(), 7, "{:?}", out.refused);
        assert!(
            out.refused
                .iter()
                .all(|r| r.contains("not copied into the sandbox")),
            "{:?}",
            out.refused
        );
        assert!(
            out.refused
                .iter()
                .any(|r| r.contains("name longer than 255 bytes")),
            "{:?}",
            out.refused
        );
        // Refused inputs are not reported as deleted by the script.
        assert!(out.deleted.is_empty(), "{:?}", out.deleted);
    }

    #[test]
    fn deep_paths_made_by_the_script_are_not_brought_back() {
        require_python!();
        let script = "import os\nos.makedirs('/'.join(['d'] * 40))\nopen('/'.join(['d'] * 40 + ['x.txt']), 'w').write('x')\nopen('ok.txt', 'w').write('y')\n";
        let out = run_script(script);
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.written.keys().collect::<Vec<_>>(), ["ok.txt"]);
        assert_eq!(out.refused.len(), 1, "{:?}", out.refused);
        assert!(
            out.refused[0].contains("nested more than 32 levels"),
            "{:?}",
            out.refused
        );
    }

    /// Forks with libc through ctypes, which no audit event sees.
    const CTYPES_FORK: &str = "import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\n";

    #[test]
    fn a_fork_bomb_is_stopped_at_the_process_limit() {
        require_python!();
        let script = format!(
            "{CTYPES_FORK}forked = 0\nfor i in range(300):\n    pid = libc.fork()\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    if pid > 0:\n        forked += 1\nprint('forked', forked, flush=True)\ntime.sleep(30)\n"
        );
        let limits = PythonLimits {
            max_processes: 16,
            ..PythonLimits::default()
        };
        let out = run_with(&script, &BTreeMap::new(), limits);
        assert_eq!(out.limits_hit, [LimitHit::Processes], "{out:?}");
        assert_eq!(out.exit_code, None, "{out:?}");
        assert!(!out.timed_out && !out.memory_exceeded, "{out:?}");
        assert!(!out.stdout.contains("forked 300"), "{}", out.stdout);
        assert_eq!(
            LimitHit::Processes.message(&limits),
            "the script reached the sandbox's limit of 16 processes; every process in the sandbox was stopped"
        );
    }

    #[test]
    fn process_limit_is_enforced_by_the_kernel() {
        require_python!();
        // Children exit at once, so the supervisor never sees the count at its
        // cap; RLIMIT_NPROC must still refuse the forks beyond it.
        let script = format!(
            "{CTYPES_FORK}ok = failed = 0\nfor i in range(40):\n    pid = libc.fork()\n    if pid == 0:\n        time.sleep(0.5)\n        os._exit(0)\n    if pid > 0:\n        ok += 1\n    else:\n        failed += 1\nprint(ok, failed)\n"
        );
        let limits = PythonLimits {
            max_processes: 64,
            ..PythonLimits::default()
        };
        let out = run_with(&script, &BTreeMap::new(), limits);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(out.stdout, "40 0\n", "{out:?}");
        let limits = PythonLimits {
            max_processes: 8,
            ..PythonLimits::default()
        };
        let script = script.replace("time.sleep(0.5)", "time.sleep(3)");
        let out = run_with(&script, &BTreeMap::new(), limits);
        // Either the kernel refused the forks beyond the cap before the
        // supervisor stopped everything, or the supervisor got there first.
        if out.exit_code == Some(0) {
            let ok: u32 = out
                .stdout
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(99);
            assert!(ok < 8, "{out:?}");
        } else {
            assert_eq!(out.limits_hit, [LimitHit::Processes], "{out:?}");
        }
    }

    #[test]
    fn memory_is_limited_for_the_sandbox_as_a_whole() {
        require_python!();
        // Four children of 200 MiB each (each under the per-process limit)
        // would take 800 MiB; the sandbox as a whole may use 256 MiB.
        let script = format!(
            "{CTYPES_FORK}for i in range(4):\n    if libc.fork() == 0:\n        block = b'x' * (200 * 1024 * 1024)\n        open('held%d' % i, 'w').write('x')\n        time.sleep(20)\n        os._exit(0)\ntime.sleep(20)\n"
        );
        let limits = PythonLimits {
            memory_bytes: 256 * MIB,
            ..PythonLimits::default()
        };
        let out = run_with(&script, &BTreeMap::new(), limits);
        assert_eq!(out.limits_hit, [LimitHit::Memory], "{out:?}");
        assert!(out.memory_exceeded && !out.timed_out, "{out:?}");
        assert!(out.written.len() < 4, "all four held their memory: {out:?}");
    }

    #[test]
    fn cgroup_scope_caps_memory_when_available() {
        require_python!();
        if containment() != Containment::CgroupScope {
            eprintln!(
                "skipping: no systemd scope with delegated memory and pids controllers here; containment is {}",
                containment()
            );
            return;
        }
        let script = "import ctypes, time\nblock = b'x' * (600 * 1024 * 1024)\n";
        let limits = PythonLimits {
            memory_bytes: 1024 * MIB,
            ..PythonLimits::default()
        };
        let out = run_with(script, &BTreeMap::new(), limits);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert!(out.limits_hit.is_empty(), "{out:?}");
    }

    #[test]
    fn cpu_time_is_limited_for_the_sandbox_as_a_whole() {
        require_python!();
        let script = format!("{CTYPES_FORK}libc.fork()\nwhile True:\n    pass\n");
        let limits = PythonLimits {
            cpu_time: Duration::from_secs(1),
            wall_time: Duration::from_secs(20),
            ..PythonLimits::default()
        };
        let started = Instant::now();
        let out = run_with(&script, &BTreeMap::new(), limits);
        assert_eq!(out.limits_hit, [LimitHit::Cpu], "{out:?}");
        assert!(!out.timed_out && !out.memory_exceeded, "{out:?}");
        // Well before the wall-time limit, however busy the machine.
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn tmp_is_capped() {
        require_python!();
        let limits = PythonLimits {
            tmp_bytes: 8 * MIB,
            ..PythonLimits::default()
        };
        let out = run_with(
            "open('/tmp/big', 'wb').write(b'0' * (9 * 1024 * 1024))\n",
            &BTreeMap::new(),
            limits,
        );
        assert_eq!(out.exit_code, Some(1), "{out:?}");
        assert!(
            out.stderr.contains("No space left on device"),
            "{}",
            out.stderr
        );
        assert_eq!(out.limits_hit, [LimitHit::Tmp], "{out:?}");
        assert_eq!(
            LimitHit::Tmp.message(&limits),
            "/tmp is full: it is capped at 8 MiB"
        );
    }

    #[test]
    fn one_big_workspace_file_is_stopped_at_the_cap() {
        require_python!();
        let limits = PythonLimits {
            workspace_bytes: 16 * MIB,
            ..PythonLimits::default()
        };
        let out = run_with(
            "f = open('big.bin', 'wb')\nfor i in range(17):\n    f.write(b'0' * (1024 * 1024))\n",
            &BTreeMap::new(),
            limits,
        );
        assert_eq!(out.exit_code, Some(1), "{out:?}");
        assert!(out.stderr.contains("File too large"), "{}", out.stderr);
        assert_eq!(out.limits_hit, [LimitHit::FileSize], "{out:?}");
        assert!(out.written.is_empty(), "{:?}", out.written.keys());
        assert_eq!(out.refused, ["big.bin: larger than 8388608 bytes"]);
    }

    #[test]
    fn the_workspace_copy_is_capped_as_a_whole() {
        require_python!();
        let limits = PythonLimits {
            workspace_bytes: 16 * MIB,
            ..PythonLimits::default()
        };
        let out = run_with(
            "import time\nfor i in range(40):\n    open('f%02d' % i, 'wb').write(b'0' * (1024 * 1024))\n    time.sleep(0.01)\n",
            &BTreeMap::new(),
            limits,
        );
        assert_eq!(out.limits_hit, [LimitHit::Workspace], "{out:?}");
        assert_eq!(out.exit_code, None, "{out:?}");
    }

    #[test]
    fn files_brought_back_are_capped_in_count_and_size() {
        require_python!();
        let limits = PythonLimits {
            max_files_back: 10,
            max_bytes_back: 64 * 1024,
            ..PythonLimits::default()
        };
        let out = run_with(
            "for i in range(40):\n    open('f%02d' % i, 'wb').write(b'0' * 8192)\n",
            &BTreeMap::new(),
            limits,
        );
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        let back: Vec<_> = out.written.keys().map(String::as_str).collect();
        assert_eq!(
            back,
            ["f00", "f01", "f02", "f03", "f04", "f05", "f06", "f07"]
        );
        assert_eq!(out.refused.len(), 32);
        assert!(
            out.refused[0].ends_with("not brought back, at most 65536 bytes of new or changed files are brought back per run"),
            "{:?}",
            out.refused
        );
        let limits = PythonLimits {
            max_files_back: 5,
            ..limits
        };
        let out = run_with(
            "for i in range(40):\n    open('f%02d' % i, 'wb').write(b'0' * 10)\n",
            &BTreeMap::new(),
            limits,
        );
        assert_eq!(out.written.len(), 5);
        assert!(
            out.refused[0].ends_with("at most 5 new or changed files are brought back per run"),
            "{:?}",
            out.refused
        );
    }

    #[test]
    fn a_forged_exit_status_is_not_believed() {
        require_python!();
        let script = r#"
import os, signal
for target in ["/proc/%d/fd/0" % os.getppid(), "/proc/1/fd/0"]:
    try:
        with open(target, "w") as f:
            f.write("exit 0\n")
        print("wrote", target)
    except OSError as e:
        print(type(e).__name__)
try:
    os.kill(1, signal.SIGKILL)
except OSError as e:
    print(type(e).__name__)
os.write(0, b"exit 0\n") if False else None
os._exit(7)
"#;
        let out = run_script(script);
        assert_eq!(out.exit_code, Some(7), "{out:?}");
        assert!(!out.stdout.contains("wrote"), "{}", out.stdout);
        assert!(out.limits_hit.is_empty(), "{out:?}");
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
