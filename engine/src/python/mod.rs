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
//!   process limit binds) the script instead runs as a uid of its own per
//!   sandbox (from 0x70000000 up, see `SandboxUid`) with no
//!   capabilities, so that one sandbox's processes never count against
//!   another's `RLIMIT_NPROC`. A seccomp filter ([`seccomp`]) refuses every
//!   socket family but `AF_UNIX` (`AF_VSOCK`, `AF_NETLINK`, ... are not
//!   covered by the network namespace) and io_uring. When bubblewrap is
//!   missing or broken, [`run`] fails with
//!   [`PythonError::SandboxUnavailable`] instead of running unconfined, unless
//!   `TBSIM_PYTHON_UNCONFINED=1` asks for the old behaviour: `unshare -rn`
//!   when the host allows it, no filesystem isolation and only the
//!   per-process memory limit;
//! * resources, for the sandbox as a whole (see [`PythonLimits`] and
//!   [`containment`]), enforced by the kernel where it can be:
//!   - a cgroup per sandbox ([`cgroup`]; v2 where our cgroup or its parent
//!     delegates the memory controller, v1 where `/sys/fs/cgroup/memory`
//!     and `pids` are writable, as in a container running as root; else a
//!     systemd scope where one can be made). A shell step joins it before
//!     it becomes bubblewrap, so every process of the sandbox is born
//!     inside. Memory (swap excluded; shared memory, memfd, tmpfs pages and
//!     kernel memory such as inodes included) is capped at `memory_bytes`
//!     plus the sizes of `/tmp` and the workspace tmpfs plus 48 MiB for the
//!     supervisor; tasks at `max_processes + 2`. An OOM kill is read back
//!     from the cgroup (`memory.events` / `memory.oom_control`);
//!   - as root, the workspace copy and `/tmp` are tmpfs mounts tbsim makes
//!     with `size=` and `nr_inodes=`, so `fallocate`, deep trees and entry
//!     floods stop at the filesystem's cap. As an ordinary user `/tmp` is
//!     bubblewrap's `--size` tmpfs (bytes only) and the workspace copy is on
//!     disk, capped by `RLIMIT_FSIZE` per file and the supervisor's polling;
//!   - the prelude runs as PID 1 of the sandbox and supervises the script.
//!     The script gets `RLIMIT_NPROC`, `RLIMIT_AS` (per process; it covers
//!     shared mappings too), `RLIMIT_CPU` and `RLIMIT_FSIZE` (any one file,
//!     memfd included). The supervisor polls every 10 ms the number of
//!     processes, their memory (`RssAnon` + `RssShmem` from
//!     `/proc/PID/status`, so shared mappings count, plus, every 50 ms,
//!     memfd files held open) and total
//!     CPU time, and every 50 ms the size (allocated or apparent) and entry
//!     count of the workspace copy, walking by directory fds so that no
//!     depth hides anything; it kills every process in the sandbox when
//!     one is over its cap. Without a cgroup, polling bounds totals only up
//!     to what can be allocated between two polls;
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

mod cgroup;
mod confinement;
mod interpreter;
mod limits;
mod output;
mod seccomp;
mod workspace;

pub use cgroup::CgroupVersion;
use cgroup::*;
use confinement::*;
pub use confinement::{Containment, Enforcement, containment};
use interpreter::*;
use limits::*;
pub use limits::{LimitHit, PythonLimits};
use output::*;
use workspace::*;

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

const MIB: u64 = 1024 * 1024;

/// A tmpfs block; sizes on one are rounded up to it.
const PAGE: u64 = 4096;

/// Room in the kernel's memory cap for the supervisor (a Python
/// interpreter), bubblewrap and page tables.
const SUPERVISOR_MEMORY: u64 = 48 * MIB;

/// Bytes (rounded to tmpfs blocks) and entries (files and the folders
/// above them) the inputs take in the workspace copy.
fn input_footprint(files: &BTreeMap<String, Vec<u8>>) -> (u64, u64) {
    let bytes = files
        .values()
        .map(|b| (b.len() as u64).div_ceil(PAGE) * PAGE)
        .sum();
    let mut entries = BTreeSet::new();
    for path in files.keys() {
        let mut end = 0;
        for part in path.split('/') {
            end += part.len();
            entries.insert(&path[..end]);
            end += 1;
        }
    }
    (bytes, entries.len() as u64)
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
    /// The memory cap stopped the script: the supervisor or the kernel's
    /// OOM killer (read from the sandbox's cgroup) killed it, or it failed
    /// with a `MemoryError`. A death by SIGKILL alone is not taken as one.
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

/// Infrastructure failures only; the script's own failures are outcomes. (Each
/// variant's `#[error]` message is its documentation.)
#[derive(Debug, Error)]
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

fn run_confined(
    req: &PythonRequest<'_>,
    confinement: &Confinement,
) -> Result<PythonOutcome, PythonError> {
    if let Confinement::Bubblewrap(bwrap) = confinement {
        check_bwrap(bwrap).map_err(|reason| PythonError::SandboxUnavailable { reason })?;
    }
    let python = resolve_interpreter()?;
    let confined = matches!(confinement, Confinement::Bubblewrap(_));
    // As root, a uid of this sandbox's own (held until the run ends).
    let user = (confined && running_as_root()).then(SandboxUid::allocate);
    let owner = user.as_ref().map(|user| user.uid);

    let temp = tempfile::Builder::new()
        .prefix("tbsim-py-")
        .tempdir()
        .map_err(io_error("creating the temporary directory"))?;
    let root = temp.path();
    let workspace = root.join("ws");
    fs::create_dir(&workspace).map_err(io_error("creating the workspace copy"))?;
    let (input_bytes, input_entries) = input_footprint(req.files);
    let workspace_bytes = req.limits.workspace_bytes.max(input_bytes + 1);
    // Declared after `temp`, so unmounted before it is removed.
    let mut mounts = Vec::new();
    let mut tmp_mount = None;
    if let Some(uid) = owner
        && tmpfs_mounts_work()
    {
        let workspace_inodes = u64::from(req.limits.workspace_entries).max(input_entries) + 1;
        // 0755: bubblewrap (root without CAP_DAC_OVERRIDE) must enter it; the
        // host folder above is private to us. A page over the cap, so that a
        // file stopped at the per-file cap (RLIMIT_FSIZE, the same number)
        // gets "File too large", not "No space left on device".
        let fs_bytes = workspace_bytes.div_ceil(PAGE) * PAGE + PAGE;
        mounts.push(
            Tmpfs::mount(&workspace, fs_bytes, workspace_inodes, "0755", uid)
                .map_err(io_error("mounting the workspace copy's tmpfs"))?,
        );
        let tmp = root.join("tmp");
        fs::create_dir(&tmp).map_err(io_error("creating /tmp"))?;
        let tmp_bytes = req.limits.tmp_bytes.max(PAGE);
        let tmp_inodes = u64::from(req.limits.tmp_entries.max(1)) + 1;
        mounts.push(
            Tmpfs::mount(&tmp, tmp_bytes, tmp_inodes, "1777", uid)
                .map_err(io_error("mounting /tmp's tmpfs"))?,
        );
        tmp_mount = Some(tmp);
    }
    chown_to(&workspace, owner)
        .map_err(io_error("handing the workspace copy to the sandbox user"))?;
    let mut refused_inputs = Vec::new();
    let inputs = write_inputs(&workspace, req.files, owner, &mut refused_inputs);
    // Both live outside the workspace copy, so they are never copied back.
    let sandbox_dir = root.join("sandbox");
    fs::create_dir(&sandbox_dir).map_err(io_error("creating the script folder"))?;
    fs::write(sandbox_dir.join("script.py"), req.script).map_err(io_error("writing script.py"))?;
    fs::write(sandbox_dir.join("prelude.py"), PRELUDE).map_err(io_error("writing prelude.py"))?;

    let supervision = Supervision {
        limits: req.limits,
        workspace_bytes,
        run_as: owner,
        workspace_fs: !mounts.is_empty(),
    };
    // The kernel's memory cap: the script's memory plus what its tmpfs
    // pages may take, plus room for the supervisor and bubblewrap; the
    // supervisor enforces the script's share (`memory_bytes`) itself.
    let kernel_memory = match req.limits.memory_bytes {
        0 => None,
        bytes => Some(
            bytes
                .saturating_add(req.limits.tmp_bytes)
                .saturating_add(if mounts.is_empty() {
                    0
                } else {
                    workspace_bytes
                })
                .saturating_add(SUPERVISOR_MEMORY),
        ),
    };
    let cgroup = match (confined, cgroup_base()) {
        (true, Some(base)) => Some(
            SandboxCgroup::create(
                base,
                kernel_memory,
                req.limits.max_processes.max(2).saturating_add(2),
            )
            .map_err(io_error("creating the sandbox's cgroup"))?,
        ),
        _ => None,
    };
    let seccomp = match seccomp::native_filter() {
        Some(filter) if confined => {
            let path = root.join("seccomp.bpf");
            fs::write(&path, filter).map_err(io_error("writing the seccomp filter"))?;
            Some(path)
        }
        _ => None,
    };
    let (mut command, status_pipe) = match confinement {
        Confinement::Bubblewrap(bwrap) => {
            let (reader, writer) = io::pipe().map_err(io_error("creating the status pipe"))?;
            let setup = Setup {
                cgroup: cgroup.as_ref(),
                seccomp: seccomp.as_deref(),
                tmp: tmp_mount.as_deref(),
                scope_memory: kernel_memory.unwrap_or(u64::MAX / 2),
            };
            let command = bubblewrap_command(
                bwrap,
                &python,
                &sandbox_dir,
                &workspace,
                &supervision,
                &setup,
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

    // The signal is not used: a SIGKILL is not evidence of an OOM kill.
    let (exit_code, _signal, mut limits_hit) = match status_reader {
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

    // The kernel's word on an OOM kill; a SIGKILL alone proves nothing (the
    // script may have sent it itself).
    if cgroup.as_ref().is_some_and(SandboxCgroup::oom_killed) {
        limits_hit.push(LimitHit::Memory);
        limits_hit.sort();
        limits_hit.dedup();
    }
    drop(cgroup);
    let memory_exceeded = limits_hit.contains(&LimitHit::Memory)
        || stderr.contains("MemoryError")
        || stderr.contains("Cannot allocate memory");

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

/// The environment the script sees, apart from `HOME`.
const SCRIPT_ENV: [(&str, &str); 5] = [
    ("PATH", SAFE_PATH),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONHASHSEED", "0"),
    ("PYTHONIOENCODING", "utf-8"),
    ("LC_ALL", "C.UTF-8"),
];

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

/// The supervisor and prelude; see the comments at its top.
const PRELUDE: &str = include_str!("prelude.py");

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a test must skip for want of `what`: never in CI (`CI` set),
    /// where `.ci/run` installs python3 and bubblewrap, so a broken install
    /// fails the suite instead of passing it by skipping.
    fn missing(present: bool, what: &str) -> bool {
        if !present {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must provide {what} (see .ci/run)"
            );
            eprintln!("skipping: {what} is not usable here");
        }
        !present
    }

    /// Skips the test unless both python3 and bubblewrap work here (fails in CI).
    macro_rules! require_python {
        () => {
            if missing(python_available(), "python3")
                || missing(sandbox_available(), "bubblewrap (bwrap)")
            {
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
        if containment().enforcement == Enforcement::Supervisor {
            eprintln!(
                "skipping: no cgroup can be had here; containment is {}",
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
            "/tmp is full: it is capped at 8 MiB and 10000 files and folders"
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
        // The file alone also fills the workspace cap (the same number).
        assert!(out.limits_hit.contains(&LimitHit::FileSize), "{out:?}");
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
        // Refused by the filesystem (a capped tmpfs) or stopped by the supervisor.
        assert_ne!(out.exit_code, Some(0), "{out:?}");
        assert!(out.written.len() <= 16, "{:?}", out.written.keys());
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
        // The namespace's interfaces, as the kernel lists them (netlink
        // itself is closed by the seccomp filter).
        let out = run_script(
            "print([l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]])\n",
        );
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, "['lo']\n");
    }

    #[test]
    fn signals_and_high_exit_codes_are_told_apart() {
        require_python!();
        // A script that kills itself did not run out of memory (it was
        // reported as memory_exceeded before the kernel's word was asked).
        let out = run_script("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n");
        assert_eq!(out.exit_code, None, "{out:?}");
        assert!(!out.memory_exceeded && !out.timed_out, "{out:?}");
        assert!(out.limits_hit.is_empty(), "{out:?}");
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
        if missing(python_available(), "python3") {
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
        if missing(python_available(), "python3") {
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

    /// Limits small enough that the kernel's cap (memory, /tmp and the
    /// workspace copy together) sits far below what the attacks take.
    fn small_sandbox() -> PythonLimits {
        PythonLimits {
            memory_bytes: 256 * MIB,
            tmp_bytes: 8 * MIB,
            workspace_bytes: 16 * MIB,
            ..PythonLimits::default()
        }
    }

    /// Skips (fails in CI) unless tbsim can mount capped tmpfs filesystems,
    /// which needs root; CI runs as root.
    fn require_capped_filesystems() -> bool {
        !missing(
            containment().capped_filesystems,
            "capped tmpfs mounts (root)",
        )
    }

    /// Four processes each holding 150 MiB of `hold` (under the per-process
    /// address-space cap) would take 600 MiB; the sandbox may use 256 MiB.
    fn four_holders(hold: &str) -> String {
        format!(
            "{CTYPES_FORK}import mmap\nfor i in range(4):\n    if libc.fork() == 0:\n{hold}        open('held%d' % i, 'w').write('x')\n        time.sleep(20)\n        os._exit(0)\ntime.sleep(20)\n"
        )
    }

    #[test]
    fn shared_anonymous_memory_counts_against_the_cap() {
        require_python!();
        let hold = "        m = mmap.mmap(-1, 150 << 20, flags=mmap.MAP_SHARED)\n        chunk = b'x' * (1 << 20)\n        for _ in range(150):\n            m.write(chunk)\n";
        let out = run_with(&four_holders(hold), &BTreeMap::new(), small_sandbox());
        assert!(out.limits_hit.contains(&LimitHit::Memory), "{out:?}");
        assert!(out.memory_exceeded && !out.timed_out, "{out:?}");
        assert!(out.written.len() < 4, "all four held their memory: {out:?}");
    }

    #[test]
    fn memfd_memory_counts_against_the_cap() {
        require_python!();
        // Ten files of 15 MiB each, under the per-file cap (RLIMIT_FSIZE).
        let hold = "        fds = []\n        chunk = b'x' * (1 << 20)\n        for _ in range(10):\n            fds.append(os.memfd_create('hold'))\n            for _ in range(15):\n                os.write(fds[-1], chunk)\n";
        let out = run_with(&four_holders(hold), &BTreeMap::new(), small_sandbox());
        assert!(out.limits_hit.contains(&LimitHit::Memory), "{out:?}");
        assert!(out.memory_exceeded && !out.timed_out, "{out:?}");
        assert!(out.written.len() < 4, "all four held their memory: {out:?}");
    }

    #[test]
    fn fallocate_cannot_reserve_past_the_workspace_cap() {
        require_python!();
        if !require_capped_filesystems() {
            return;
        }
        // Each file is under the per-file cap; together they are 6x the
        // workspace cap, reserved faster than any poll (on today's main all
        // 96 MiB were reserved and the script ended before a poll).
        let script = "import os\nreserved = 0\nfor i in range(24):\n    fd = os.open('r%d' % i, os.O_CREAT | os.O_WRONLY)\n    try:\n        os.posix_fallocate(fd, 0, 4 << 20)\n        reserved += 4\n    except OSError as e:\n        print('refused', e.strerror)\n        break\nprint('reserved', reserved)\n";
        let out = run_with(script, &BTreeMap::new(), small_sandbox());
        // (Not `{out:?}`: the written files would fill the log.)
        let shown = (&out.exit_code, &out.stderr, &out.limits_hit);
        assert_eq!(out.exit_code, Some(0), "{shown:?}");
        assert_eq!(out.stdout, "refused No space left on device\nreserved 16\n");
        assert_eq!(out.limits_hit, [LimitHit::Workspace], "{shown:?}");
    }

    #[test]
    fn a_workspace_deeper_than_path_max_hides_nothing() {
        require_python!();
        if !require_capped_filesystems() {
            return;
        }
        // 20 folders of 250-byte names: deeper than PATH_MAX (4096), where a
        // walk by path names cannot follow.
        let script = "import os\nfor i in range(20):\n    os.mkdir('d' * 250)\n    os.chdir('d' * 250)\nmade = 0\ntry:\n    for i in range(300):\n        open('e%d' % i, 'w').close()\n        made += 1\nexcept OSError as e:\n    print(e.strerror)\nmib = 0\ntry:\n    for i in range(3):\n        with open('big%d' % i, 'wb') as f:\n            for _ in range(8):\n                f.write(b'0' * (1 << 20))\n                mib += 1\nexcept OSError as e:\n    print(e.strerror)\nprint(made, mib)\n";
        let limits = PythonLimits {
            workspace_entries: 200,
            ..small_sandbox()
        };
        let out = run_with(script, &BTreeMap::new(), limits);
        let last = out.stdout.lines().last().unwrap_or("");
        let counts: Vec<u32> = last.split(' ').filter_map(|n| n.parse().ok()).collect();
        assert_eq!(counts.len(), 2, "{out:?}");
        assert!(counts[0] < 200 && counts[1] <= 16, "{out:?}");
        assert!(out.limits_hit.contains(&LimitHit::Entries), "{out:?}");
        // The host's read-back refuses what it cannot reach; it does not fail.
        assert!(out.written.is_empty(), "{:?}", out.written.keys());
    }

    #[test]
    fn empty_files_in_tmp_are_capped_in_number() {
        require_python!();
        if !require_capped_filesystems() {
            return;
        }
        let script = "made = 0\ntry:\n    for i in range(5000):\n        open('/tmp/e%d' % i, 'w').close()\n        made += 1\nexcept OSError as e:\n    print(e.strerror)\nprint(made)\n";
        let limits = PythonLimits {
            tmp_entries: 1000,
            ..small_sandbox()
        };
        let out = run_with(script, &BTreeMap::new(), limits);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(out.stdout, "No space left on device\n1000\n", "{out:?}");
        assert_eq!(out.limits_hit, [LimitHit::Tmp], "{out:?}");
    }

    #[test]
    fn a_neighbour_sandbox_does_not_use_up_our_processes() {
        require_python!();
        // A holds 28 of its 32 processes for a while; B, started meanwhile,
        // must still fork (as root, both once ran as `nobody` and shared
        // one RLIMIT_NPROC count).
        let holder = format!(
            "{CTYPES_FORK}n = 0\nfor i in range(28):\n    if libc.fork() == 0:\n        time.sleep(6)\n        os._exit(0)\n    n += 1\nprint('held', n, flush=True)\ntime.sleep(6)\n"
        );
        let a = thread::spawn(move || run_with(&holder, &BTreeMap::new(), PythonLimits::default()));
        thread::sleep(Duration::from_millis(1500));
        let forker = format!(
            "{CTYPES_FORK}ok = failed = 0\nfor i in range(10):\n    pid = libc.fork()\n    if pid == 0:\n        time.sleep(1)\n        os._exit(0)\n    if pid > 0:\n        ok += 1\n    else:\n        failed += 1\nprint(ok, failed)\n"
        );
        let b = run_script(&forker);
        let a = a.join().expect("sandbox A");
        assert_eq!(a.stdout, "held 28\n", "{a:?}");
        assert!(a.limits_hit.is_empty(), "{a:?}");
        assert_eq!(b.stdout, "10 0\n", "{b:?}");
        assert_eq!(b.exit_code, Some(0), "{b:?}");
    }

    #[test]
    fn only_unix_sockets_can_be_created() {
        require_python!();
        if missing(
            containment().seccomp,
            "a seccomp filter for this architecture",
        ) {
            return;
        }
        let script = "import errno, socket\nfor name in ['AF_VSOCK', 'AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_PACKET', 'AF_UNIX']:\n    kind = socket.SOCK_STREAM if name in ('AF_VSOCK', 'AF_UNIX') else socket.SOCK_DGRAM\n    try:\n        socket.socket(getattr(socket, name), kind).close()\n        print(name, 'created')\n    except OSError as e:\n        print(name, errno.errorcode[e.errno])\na, b = socket.socketpair()\nprint('pair', a.family.name)\n";
        let out = run_script(script);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(
            out.stdout,
            "AF_VSOCK EAFNOSUPPORT\nAF_INET EAFNOSUPPORT\nAF_INET6 EAFNOSUPPORT\nAF_NETLINK EAFNOSUPPORT\nAF_PACKET EAFNOSUPPORT\nAF_UNIX created\npair AF_UNIX\n"
        );
    }

    #[test]
    fn input_footprint_counts_blocks_and_folders() {
        let input = files(&[("a/b/c.txt", "x"), ("a/d.txt", ""), ("e.bin", "")]);
        // One block for c.txt, none for the empty files; a, a/b and 3 files.
        assert_eq!(input_footprint(&input), (PAGE, 5));
        let big = BTreeMap::from([("f".to_owned(), vec![0u8; PAGE as usize + 1])]);
        assert_eq!(input_footprint(&big), (2 * PAGE, 1));
    }

    #[test]
    fn sandboxes_at_once_get_distinct_uids() {
        // Half the slots: tests running alongside may hold a few.
        let held: Vec<SandboxUid> = (0..UID_SLOTS / 2).map(|_| SandboxUid::allocate()).collect();
        let uids: BTreeSet<u32> = held.iter().map(|user| user.uid).collect();
        assert_eq!(uids.len(), held.len());
        assert!(
            uids.iter()
                .all(|&uid| (UID_BASE..0x7400_0000).contains(&uid))
        );
        // All from this process's block of uids.
        let block = (held[0].uid - UID_BASE) / UID_SLOTS;
        assert_eq!(block, std::process::id() & 0x3f_ffff);
        assert!(
            uids.iter()
                .all(|&uid| (uid - UID_BASE) / UID_SLOTS == block)
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
