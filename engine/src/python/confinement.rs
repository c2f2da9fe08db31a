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

/// What enforces the sandbox's memory and process caps on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// A cgroup of its own per sandbox: the kernel caps memory (shared
    /// memory, memfd, tmpfs pages and kernel memory included, swap
    /// excluded) and, with `pids`, the task count at allocation time.
    Cgroup {
        /// Which hierarchy the cgroup is in.
        version: CgroupVersion,
        /// Whether the pids controller caps the task count too.
        pids: bool,
    },
    /// A systemd transient scope (cgroup v2) with `MemoryMax`,
    /// `MemorySwapMax=0` and `TasksMax`.
    SystemdScope,
    /// No cgroup can be had: per-process rlimits and the supervisor's
    /// polling of the totals (private and shared resident memory plus memfd).
    Supervisor,
}

/// How the sandbox's limits are enforced on this host, found at run time
/// (and cached). Always on top of the per-process rlimits and the
/// supervisor's polling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// Memory and processes.
    pub enforcement: Enforcement,
    /// Whether the workspace copy and `/tmp` are tmpfs mounts with a byte
    /// and an inode cap (tbsim mounts them, which needs root); otherwise
    /// `/tmp` has a byte cap only and the workspace copy is on the host's
    /// disk, capped by the supervisor's polling and `RLIMIT_FSIZE`.
    pub capped_filesystems: bool,
    /// Whether the seccomp filter refusing every socket family but
    /// `AF_UNIX` is loaded (x86_64 and aarch64).
    pub seccomp: bool,
}

impl std::fmt::Display for Containment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.enforcement {
            Enforcement::Cgroup { version, pids } => write!(
                f,
                "a cgroup {} per sandbox (memory{})",
                match version {
                    CgroupVersion::V2 => "v2",
                    CgroupVersion::V1 => "v1",
                },
                if pids { ", pids" } else { "" }
            )?,
            Enforcement::SystemdScope => f.write_str("a systemd scope per sandbox (cgroup v2)")?,
            Enforcement::Supervisor => {
                f.write_str("no cgroup: rlimits and the supervisor's polling")?
            }
        }
        f.write_str(if self.capped_filesystems {
            "; workspace and /tmp on tmpfs capped in bytes and inodes"
        } else {
            "; /tmp capped in bytes, workspace on disk (polled)"
        })?;
        f.write_str(if running_as_root() {
            "; a uid of its own"
        } else {
            "; a user namespace"
        })?;
        f.write_str(if self.seccomp {
            "; seccomp: AF_UNIX sockets only"
        } else {
            "; no seccomp filter for this architecture"
        })
    }
}

/// Which [`Containment`] applies to sandboxed runs on this host.
pub fn containment() -> Containment {
    let enforcement = if let Some(base) = cgroup_base() {
        Enforcement::Cgroup {
            version: base.version,
            pids: base.caps_processes(),
        }
    } else if systemd_scope_works() {
        Enforcement::SystemdScope
    } else {
        Enforcement::Supervisor
    };
    Containment {
        enforcement,
        capped_filesystems: tmpfs_mounts_work(),
        seccomp: seccomp::NATIVE.is_some(),
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
    if !running_as_root() {
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

/// Whether tbsim runs as root. Then a user namespace would map the script
/// to host root, whose processes `RLIMIT_NPROC` does not bind; the script
/// instead drops to a uid of its own (see [`SandboxUid`]).
pub(super) fn running_as_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    // /proc/self belongs to the effective user.
    *ROOT.get_or_init(|| fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0))
}

/// The first uid handed to sandboxes: above the usual system, user and
/// systemd-nspawn ranges, below 2^31 (which some tools read as negative).
pub(super) const UID_BASE: u32 = 0x7000_0000;
/// Sandboxes of one tbsim process that get distinct uids at once.
pub(super) const UID_SLOTS: u32 = 16;

/// A host uid for one sandbox (as root), so that one sandbox's processes do
/// not count against another's `RLIMIT_NPROC`, as they did when all ran as
/// `nobody`. Unique among live tbsim processes: derived from our pid (at
/// most 2^22) and a slot held until the sandbox ends.
#[derive(Debug)]
pub(super) struct SandboxUid {
    pub(super) uid: u32,
    slot: Option<u32>,
}

static UID_SLOTS_USED: Mutex<u32> = Mutex::new(0);

impl SandboxUid {
    pub(super) fn allocate() -> Self {
        static SHARED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let mut used = UID_SLOTS_USED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let free = (0..UID_SLOTS).find(|slot| *used & (1 << slot) == 0);
        if let Some(slot) = free {
            *used |= 1 << slot;
        }
        drop(used);
        // More sandboxes at once than slots: share one (only their process
        // counts are then shared).
        let index = free.unwrap_or_else(|| {
            SHARED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % UID_SLOTS
        });
        let pid = std::process::id() & 0x3f_ffff;
        Self {
            uid: UID_BASE + pid * UID_SLOTS + index,
            slot: free,
        }
    }
}

impl Drop for SandboxUid {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            let mut used = UID_SLOTS_USED
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            *used &= !(1 << slot);
        }
    }
}

/// A tmpfs that tbsim mounted (as root) with a byte and an inode cap, so
/// that the filesystem itself bounds `fallocate`, nesting and entry counts;
/// unmounted on drop.
#[derive(Debug)]
pub(super) struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    pub(super) fn mount(
        path: &Path,
        bytes: u64,
        inodes: u64,
        mode: &str,
        owner: u32,
    ) -> io::Result<Self> {
        let options = format!(
            "size={bytes},nr_inodes={inodes},mode={mode},uid={owner},gid={owner},nosuid,nodev"
        );
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &options, "tbsim-sandbox"])
            .arg(path)
            .env_clear()
            .env("PATH", SAFE_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        if output.status.success() {
            Ok(Self {
                path: path.to_path_buf(),
            })
        } else {
            Err(io::Error::other(format!(
                "mount -t tmpfs failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )))
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmount = |lazy: bool| {
            let mut command = Command::new("umount");
            if lazy {
                command.arg("-l");
            }
            command
                .arg(&self.path)
                .env_clear()
                .env("PATH", SAFE_PATH)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        };
        // Busy only if something still has it open; detach it then.
        if !unmount(false) {
            unmount(true);
        }
    }
}

/// Whether we may mount capped tmpfs filesystems (root with
/// `CAP_SYS_ADMIN`), probed once.
pub(super) fn tmpfs_mounts_work() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        running_as_root()
            && tempfile::Builder::new()
                .prefix("tbsim-probe-")
                .tempdir()
                .is_ok_and(|dir| Tmpfs::mount(dir.path(), 4096 * 4, 8, "0700", 0).is_ok())
    })
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
    let mut args = if running_as_root() {
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
            // To list and stat the script's /proc/PID/fd (another uid's)
            // when counting the memfd files it holds.
            "--cap-add",
            "CAP_SYS_PTRACE",
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

/// What the host prepared for one sandbox besides its folders.
#[derive(Debug, Default)]
pub(super) struct Setup<'a> {
    /// The sandbox's own cgroup, which bubblewrap is moved into before it
    /// starts.
    pub(super) cgroup: Option<&'a SandboxCgroup>,
    /// The compiled seccomp filter, a file bubblewrap reads on fd 3.
    pub(super) seccomp: Option<&'a Path>,
    /// A capped tmpfs to use as `/tmp` (else bubblewrap makes one, capped
    /// in bytes only).
    pub(super) tmp: Option<&'a Path>,
    /// The kernel's memory cap when no cgroup of our own can be had but a
    /// systemd scope can.
    pub(super) scope_memory: u64,
}

/// The shell step between us and bubblewrap: it joins the sandbox's cgroups
/// (so everything bubblewrap starts is born inside them) and opens the
/// seccomp filter as fd 3, then becomes bubblewrap. Arguments: the number of
/// `cgroup.procs` files, the files, the filter's path (or ""), bubblewrap's
/// command line. (`Command::pre_exec` would do the same in-process, but it is
/// `unsafe`.)
const JOIN_AND_EXEC: &str = r#"n=$1; shift
while [ "$n" -gt 0 ]; do
  echo $$ > "$1" || { echo "tbsim sandbox: could not join the cgroup ($1)" >&2; exit 125; }
  shift; n=$((n - 1))
done
f=$1; shift
if [ -n "$f" ]; then exec "$@" 3<"$f"; fi
exec "$@""#;

/// Bubblewrap with only what the interpreter needs, in the sandbox's cgroup
/// (or a systemd scope) when there is one. The prelude gets the limits as an
/// extra argument: it supervises the sandbox as PID 1 and writes how the
/// script ended to `status` (its stdin).
pub(super) fn bubblewrap_command(
    bwrap: &OsStr,
    python: &Interpreter,
    sandbox_dir: &Path,
    workspace: &Path,
    supervision: &Supervision,
    setup: &Setup<'_>,
    status: io::PipeWriter,
) -> Command {
    let limits = &supervision.limits;
    let mut command = if setup.cgroup.is_none() && systemd_scope_works() {
        let mut c = Command::new("systemd-run");
        c.args(systemd_scope_args(
            setup.scope_memory,
            limits.max_processes.saturating_add(2),
        ))
        .arg("/bin/sh");
        c
    } else {
        Command::new("/bin/sh")
    };
    let procs = setup
        .cgroup
        .map(SandboxCgroup::procs_files)
        .unwrap_or_default();
    command
        .args(["-c", JOIN_AND_EXEC, "sh"])
        .arg(procs.len().to_string())
        .args(&procs)
        .arg(
            setup
                .seccomp
                .map_or_else(OsString::new, |p| p.as_os_str().to_owned()),
        )
        .arg(bwrap);
    if setup.seccomp.is_some() {
        command.args(["--seccomp", "3"]);
    }
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
    ]);
    match setup.tmp {
        Some(tmp) => {
            command.arg("--bind").arg(tmp).arg("/tmp");
        }
        None => {
            command
                .args(["--perms", "1777", "--size"])
                .arg(limits.tmp_bytes.max(4096).to_string())
                .args(["--tmpfs", "/tmp"]);
        }
    }
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
