//! A memory (and pids) cgroup per sandbox, so that the kernel caps the
//! sandbox's memory (shared mappings, memfd, tmpfs pages and kernel memory
//! such as inodes included) and process count at allocation time.
//!
//! Found at run time: cgroup v2 when our own cgroup (or its parent, as in a
//! systemd delegated subtree) has the memory controller enabled for its
//! children and we may create one there; cgroup v1 when the `memory` (and
//! `pids`) hierarchies are mounted at `/sys/fs/cgroup/<controller>` and our
//! cgroup in them is writable (typical for a container running as root).
//! Nothing is changed on the host until a sandbox starts; each sandbox's
//! cgroup is removed after it ends.

use std::sync::atomic::{AtomicU64, Ordering};

use super::*;

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Which cgroup version gives the sandbox its cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// The unified hierarchy.
    V2,
    /// Separate `memory` and `pids` hierarchies.
    V1,
}

/// Where sandbox cgroups are created on this host.
#[derive(Debug, Clone)]
pub(super) struct CgroupBase {
    pub(super) version: CgroupVersion,
    /// The parent of each sandbox's memory cgroup (v2: of its only cgroup).
    memory: PathBuf,
    /// v1 only: the parent of each sandbox's pids cgroup, when writable.
    pids: Option<PathBuf>,
    /// v2: whether the pids controller is enabled for the children too.
    v2_pids: bool,
}

impl CgroupBase {
    /// Whether the kernel also caps the sandbox's process count.
    pub(super) fn caps_processes(&self) -> bool {
        self.pids.is_some() || self.v2_pids
    }
}

/// The cached answer to "can this process give a sandbox its own cgroup?".
pub(super) fn cgroup_base() -> Option<&'static CgroupBase> {
    static BASE: OnceLock<Option<CgroupBase>> = OnceLock::new();
    BASE.get_or_init(|| {
        let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
        probe_v2(&membership).or_else(|| probe_v1(&membership))
    })
    .as_ref()
}

/// This process's cgroup in the hierarchy whose controller list (the second
/// field of `/proc/self/cgroup`) satisfies `wanted`, as a relative path.
fn membership_path(membership: &str, wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    membership.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        wanted(controllers).then(|| PathBuf::from(path.trim_start_matches('/')))
    })
}

fn probe_v2(membership: &str) -> Option<CgroupBase> {
    let relative = membership_path(membership, str::is_empty)?;
    // Hybrid hosts mount v2 at /sys/fs/cgroup/unified, usually controller-less.
    let mount = [CGROUP_ROOT, "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(PathBuf::from)
        .find(|m| m.join("cgroup.controllers").is_file())?;
    let own = mount.join(&relative);
    // Our own cgroup first; then its parent, since the cgroup holding our
    // process cannot also hand controllers to children (v2's rule against
    // processes in inner cgroups) unless it is the root.
    for candidate in [Some(own.as_path()), own.parent()].into_iter().flatten() {
        if !candidate.starts_with(&mount) {
            continue;
        }
        let enabled =
            fs::read_to_string(candidate.join("cgroup.subtree_control")).unwrap_or_default();
        let enabled: Vec<&str> = enabled.split_whitespace().collect();
        if !enabled.contains(&"memory") {
            continue;
        }
        let base = CgroupBase {
            version: CgroupVersion::V2,
            memory: candidate.to_path_buf(),
            pids: None,
            v2_pids: enabled.contains(&"pids"),
        };
        if base.try_create().is_ok() {
            return Some(base);
        }
    }
    None
}

fn probe_v1(membership: &str) -> Option<CgroupBase> {
    let has = |name: &'static str| move |c: &str| c.split(',').any(|c| c == name);
    let memory = Path::new(CGROUP_ROOT)
        .join("memory")
        .join(membership_path(membership, has("memory"))?);
    let pids = membership_path(membership, has("pids"))
        .map(|relative| Path::new(CGROUP_ROOT).join("pids").join(relative));
    let mut base = CgroupBase {
        version: CgroupVersion::V1,
        memory,
        pids,
        v2_pids: false,
    };
    if base.try_create().is_err() {
        // Perhaps only the pids hierarchy is read-only.
        base.pids = None;
        base.try_create().ok()?;
    }
    Some(base)
}

impl CgroupBase {
    /// Creates (and removes) a cgroup with small limits, proving we may.
    fn try_create(&self) -> io::Result<()> {
        SandboxCgroup::create(self, Some(64 * MIB), 8).map(drop)
    }
}

/// One sandbox's cgroup(s), removed on drop.
#[derive(Debug)]
pub(super) struct SandboxCgroup {
    version: CgroupVersion,
    memory: PathBuf,
    /// v1's separate pids cgroup; v2 keeps pids in `memory`.
    pids: Option<PathBuf>,
}

impl SandboxCgroup {
    /// A fresh cgroup under `base` with `memory` bytes (swap included; `None`
    /// for no cap) and `processes` tasks at most.
    pub(super) fn create(
        base: &CgroupBase,
        memory: Option<u64>,
        processes: u32,
    ) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "tbsim-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let make = |parent: &Path| -> io::Result<PathBuf> {
            let dir = parent.join(&name);
            // Left over by an earlier process with our pid that was killed.
            let _ = fs::remove_dir(&dir);
            fs::create_dir(&dir)?;
            Ok(dir)
        };
        let mut cgroup = Self {
            version: base.version,
            memory: make(&base.memory)?,
            pids: None,
        };
        if let Some(parent) = &base.pids {
            cgroup.pids = Some(make(parent)?);
        }
        cgroup.set_limits(memory, processes, base.caps_processes())?;
        Ok(cgroup)
    }

    fn set_limits(&self, memory: Option<u64>, processes: u32, pids: bool) -> io::Result<()> {
        let write = |dir: &Path, file: &str, value: String| fs::write(dir.join(file), value);
        let optional = |dir: &Path, file: &str, value: String| -> io::Result<()> {
            match fs::write(dir.join(file), value) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            }
        };
        match self.version {
            CgroupVersion::V2 => {
                let memory = memory.map_or_else(|| "max".to_owned(), |m| m.to_string());
                write(&self.memory, "memory.max", memory)?;
                // Absent when swap accounting is off, and then swap is no way out.
                optional(&self.memory, "memory.swap.max", "0".to_owned())?;
                // An OOM kill takes the whole sandbox, not one process of it.
                optional(&self.memory, "memory.oom.group", "1".to_owned())?;
                if pids {
                    write(&self.memory, "pids.max", processes.to_string())?;
                }
            }
            CgroupVersion::V1 => {
                let memory = memory.map_or_else(|| "-1".to_owned(), |m| m.to_string());
                // Memory plus swap, set after memory (it may not be lower).
                write(&self.memory, "memory.limit_in_bytes", memory.clone())?;
                optional(&self.memory, "memory.memsw.limit_in_bytes", memory)?;
                if let Some(dir) = &self.pids {
                    write(dir, "pids.max", processes.to_string())?;
                }
            }
        }
        Ok(())
    }

    /// The `cgroup.procs` files the sandbox's first process writes its pid
    /// to before it becomes bubblewrap.
    pub(super) fn procs_files(&self) -> Vec<PathBuf> {
        [Some(&self.memory), self.pids.as_ref()]
            .into_iter()
            .flatten()
            .map(|dir| dir.join("cgroup.procs"))
            .collect()
    }

    /// Whether the kernel's OOM killer killed a process of this sandbox.
    pub(super) fn oom_killed(&self) -> bool {
        let file = match self.version {
            CgroupVersion::V2 => "memory.events",
            CgroupVersion::V1 => "memory.oom_control",
        };
        counter(&self.memory.join(file), "oom_kill") > 0
    }
}

/// The value of `key` in a flat-keyed cgroup file ("key value" lines).
fn counter(path: &Path, key: &str) -> u64 {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(' ')?;
            (name == key).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

impl Drop for SandboxCgroup {
    fn drop(&mut self) {
        // The sandbox's processes are dead by now, but the kernel may take a
        // moment to let go of them; a cgroup with tasks cannot be removed.
        for dir in [Some(&self.memory), self.pids.as_ref()]
            .into_iter()
            .flatten()
        {
            for _ in 0..200 {
                match fs::remove_dir(dir) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        thread::sleep(Duration::from_millis(5));
                    }
                    _ => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn membership_lines_are_parsed_per_hierarchy() {
        let text = "9:name=systemd:/\n8:pids:/a\n4:memory:/process_api/x\n1:cpu,cpuacct:/c\n0::/user.slice/s.scope\n";
        assert_eq!(
            membership_path(text, str::is_empty),
            Some(PathBuf::from("user.slice/s.scope"))
        );
        let has = |name: &'static str| move |c: &str| c.split(',').any(|c| c == name);
        assert_eq!(
            membership_path(text, has("memory")),
            Some(PathBuf::from("process_api/x"))
        );
        assert_eq!(membership_path(text, has("pids")), Some(PathBuf::from("a")));
        assert_eq!(
            membership_path(text, has("cpuacct")),
            Some(PathBuf::from("c"))
        );
        assert_eq!(membership_path(text, has("blkio")), None);
    }

    /// Skips (fails in CI, which runs as root with writable cgroups) when no
    /// cgroup can be had here.
    fn base() -> Option<&'static CgroupBase> {
        let base = cgroup_base();
        if base.is_none() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must let tbsim create cgroups"
            );
            eprintln!("skipping: no cgroup can be had here");
        }
        base
    }

    #[test]
    fn a_sandbox_cgroup_has_its_limits_and_is_removed() {
        let Some(base) = base() else { return };
        let cgroup = SandboxCgroup::create(base, Some(96 * MIB), 7).expect("cgroup");
        let read = |dir: &Path, file: &str| {
            fs::read_to_string(dir.join(file))
                .expect("limit file")
                .trim()
                .to_owned()
        };
        match cgroup.version {
            CgroupVersion::V2 => {
                assert_eq!(read(&cgroup.memory, "memory.max"), (96 * MIB).to_string());
            }
            CgroupVersion::V1 => {
                assert_eq!(
                    read(&cgroup.memory, "memory.limit_in_bytes"),
                    (96 * MIB).to_string()
                );
            }
        }
        if base.caps_processes() {
            let dir = cgroup.pids.as_ref().unwrap_or(&cgroup.memory);
            assert_eq!(read(dir, "pids.max"), "7");
        }
        assert!(!cgroup.oom_killed());
        let dirs: Vec<PathBuf> = [Some(&cgroup.memory), cgroup.pids.as_ref()]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        drop(cgroup);
        for dir in dirs {
            assert!(!dir.exists(), "{dir:?} was left behind");
        }
    }

    #[test]
    fn an_oom_kill_in_the_cgroup_is_seen() {
        let Some(base) = base() else { return };
        let cgroup = SandboxCgroup::create(base, Some(32 * MIB), 8).expect("cgroup");
        let procs = cgroup.procs_files();
        // The same join-then-exec step as the sandbox's; then 200 MiB.
        let status = Command::new("/bin/sh")
            .args(["-c", r#"for f in "$@"; do echo $$ > "$f" || exit 125; done; exec python3 -c "b = b'x' * (200 << 20)""#, "sh"])
            .args(&procs)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("sh");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        assert!(cgroup.oom_killed());
    }

    #[test]
    fn counters_are_read_by_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("memory.oom_control");
        fs::write(&file, "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").expect("write");
        assert_eq!(counter(&file, "oom_kill"), 3);
        assert_eq!(counter(&file, "oom"), 0);
        assert_eq!(counter(&dir.path().join("absent"), "oom_kill"), 0);
    }
}
