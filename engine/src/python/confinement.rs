//! How the interpreter is confined: bubblewrap (probed once per binary), the
//! sandbox user, the optional systemd scope, and the unconfined fallback.

use super::*;

/// How the interpreter is confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Confinement {
    /// Inside bubblewrap, started from this binary.
    Bubblewrap(OsString),
    /// `unshare -rn` when available; no filesystem isolation.
    Unconfined,
}

impl Confinement {
    pub(super) fn from_env() -> Self {
        if std::env::var_os(UNCONFINED_ENV_VAR).is_some_and(|v| v == "1") {
            Self::Unconfined
        } else {
            Self::Bubblewrap(bwrap_from_env())
        }
    }
}

pub(super) fn bwrap_from_env() -> OsString {
    std::env::var_os(BWRAP_ENV_VAR)
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| OsString::from("bwrap"))
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
pub(super) fn systemd_scope_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let mut command = Command::new("systemd-run");
        systemd_env(&mut command);
        command
            .args(systemd_scope_args(64 * MIB, 8))
            .arg("true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command.status().is_ok_and(|status| status.success())
    })
}

/// A cleared environment plus what `systemd-run` needs to find the service
/// manager; bubblewrap's `--clearenv` keeps all of it from the script.
pub(super) fn systemd_env(command: &mut Command) {
    command.env_clear().env("PATH", SAFE_PATH);
    for name in ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

pub(super) fn systemd_scope_args(memory: u64, tasks: u32) -> Vec<String> {
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
pub(super) fn sandbox_uid() -> Option<u32> {
    const NOBODY: u32 = 65534;
    static ROOT: OnceLock<bool> = OnceLock::new();
    // /proc/self belongs to the effective user.
    let root = *ROOT.get_or_init(|| fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0));
    root.then_some(NOBODY)
}

/// Whether this bubblewrap binary can set up the namespaces we use, cached
/// per binary. `Err` carries the reason for the error message.
pub(super) fn check_bwrap(bwrap: &OsStr) -> Result<(), String> {
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

pub(super) fn probe_bwrap(bwrap: &OsStr) -> Result<(), String> {
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
pub(super) fn isolation_args() -> Vec<&'static str> {
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
pub(super) fn unshare_works() -> bool {
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

/// The old, unconfined mode: `sh` sets the memory limit, then becomes
/// Python; `unshare -rn` removes the network when the host allows it.
pub(super) fn unconfined_command(
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
pub(super) fn bubblewrap_command(
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
    systemd_env(&mut command);
    command.args(isolation_args()).arg("--clearenv");
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
pub(super) fn interpreter_binds(python: &Interpreter, mut visible: Vec<PathBuf>) -> Vec<PathBuf> {
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
