//! Resource limits: what the caller sets, what the script ran into, and what
//! the supervisor inside the sandbox is told.

use super::*;

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
    /// Files and folders `/tmp` may hold (each costs kernel memory), where
    /// tbsim mounts the tmpfs itself (see [`super::Containment`]).
    pub tmp_entries: u32,
    /// Size of the workspace copy (a tmpfs of this size as root, else host
    /// disk), inputs included, and of any one file in it; raised to the
    /// inputs' size when they alone are larger.
    pub workspace_bytes: u64,
    /// Files and folders the workspace copy may hold (the tmpfs's inode cap
    /// as root), inputs included.
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
            tmp_entries: 10_000,
            workspace_bytes: 256 * MIB,
            workspace_entries: 10_000,
            max_output_bytes: 64 * 1024,
            max_file_bytes: 8 * MIB,
            max_files_back: 64,
            max_bytes_back: 8 * MIB,
        }
    }
}

/// A sandbox-wide limit the script ran into. The run was stopped (every
/// process killed) for [`LimitHit::Processes`], [`LimitHit::Memory`] and
/// [`LimitHit::Cpu`]; at [`LimitHit::Tmp`] and [`LimitHit::FileSize`] the
/// write simply failed; at [`LimitHit::Workspace`] and [`LimitHit::Entries`]
/// either (the filesystem refuses the write where it is a capped tmpfs, the
/// supervisor stops the sandbox where it is not).
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
    /// `/tmp` is full ([`PythonLimits::tmp_bytes`] or
    /// [`PythonLimits::tmp_entries`]).
    Tmp,
    /// A file reached the per-file size cap.
    FileSize,
}

impl LimitHit {
    pub(super) fn parse(word: &str) -> Option<Self> {
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
                "the workspace copy reached its cap of {}; writes beyond it failed or the sandbox was stopped",
                show_bytes(limits.workspace_bytes)
            ),
            Self::Entries => format!(
                "the workspace copy reached its cap of {} files and folders; creating more failed or the sandbox was stopped",
                limits.workspace_entries
            ),
            Self::Tmp => format!(
                "/tmp is full: it is capped at {} and {} files and folders",
                show_bytes(limits.tmp_bytes),
                limits.tmp_entries
            ),
            Self::FileSize => format!(
                "a file reached the sandbox's size cap for one file ({}); the write failed",
                show_bytes(limits.workspace_bytes)
            ),
        }
    }
}

pub(super) fn show_bytes(n: u64) -> String {
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

/// What the supervisor inside the sandbox is told (as JSON on its command line).
#[derive(Debug, Clone, Copy)]
pub(super) struct Supervision {
    pub(super) limits: PythonLimits,
    /// The workspace cap for this run (raised to the inputs' size).
    pub(super) workspace_bytes: u64,
    /// The uid the script drops to, when tbsim runs as root.
    pub(super) run_as: Option<u32>,
    /// Whether /workspace is a tmpfs capped in bytes and inodes, so that a
    /// full one is the cap (and not the host's disk).
    pub(super) workspace_fs: bool,
}

impl Supervision {
    pub(super) fn to_json(self) -> String {
        let limits = &self.limits;
        serde_json::json!({
            "memory": limits.memory_bytes,
            "processes": limits.max_processes.max(2),
            "cpu_secs": limits.cpu_time.as_secs().max(1),
            "file_bytes": self.workspace_bytes,
            "workspace_bytes": self.workspace_bytes,
            "workspace_entries": limits.workspace_entries,
            "run_as": self.run_as,
            "workspace_fs": self.workspace_fs,
        })
        .to_string()
    }
}
