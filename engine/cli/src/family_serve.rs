//! `tbsim serve --families DIR`: script families served while they are written.
//!
//! Each variant's instance at seed 0 is written as a scenario file
//! (`<key>-<variant>.ron`, the variant's `/` as `-`) into a directory of the
//! server's own, which is a scenario root like `--scenarios`. That directory is
//! made as `mkdtemp` makes one (a new random name, mode 0700, never one that
//! exists), and each file is written to a new file created exclusively in it,
//! then renamed into place: nobody else can read the instances (answers
//! included) or plant a link that a write would follow. A watcher polls each
//! folder's `family.star` and, when it changes, loads the new text and rewrites the
//! instances; the next run started (from the console or the session API) reads the
//! new file. A script that no longer loads or generates, or that crosses a bound
//! of its host (memory, time, depth, answer size: its host is killed, never the
//! server), leaves the last good instances in place and says why on standard
//! error. A variant added after start
//! needs a restart (scenario names are indexed when the server starts).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use tbsim_gen::{generate_scenario, to_ron};

/// How often the watcher looks at the scripts.
const POLL: Duration = Duration::from_millis(300);

/// The served instances and their watcher (stopped and removed on drop).
#[derive(Debug)]
pub(crate) struct Instances {
    dir: tempfile::TempDir,
    stop: Arc<AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl Instances {
    /// Writes every family's instances and starts watching; `None` without families.
    pub(crate) fn start(families: &[PathBuf]) -> Result<Option<Instances>> {
        if families.is_empty() {
            return Ok(None);
        }
        let dir = private_dir("tbsim-serve-families-")?;
        let mut seen = Vec::new();
        for f in families {
            write_instances(f, dir.path()).map_err(|e| anyhow::anyhow!("{}", escape(&e)))?;
            seen.push((f.clone(), modified(f)));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (stop, dir) = (Arc::clone(&stop), dir.path().to_owned());
            std::thread::Builder::new()
                .name("tbsim-families".into())
                .spawn(move || watch(seen, &dir, &stop))
                .context("cannot start the family watcher")?
        };
        eprintln!(
            "serving script families from {} (instances in {}; edits reload)",
            families
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            dir.path().display()
        );
        Ok(Some(Instances {
            dir,
            stop,
            watcher: Some(watcher),
        }))
    }

    /// The directory holding the instances.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
        // The TempDir removes the directory when it drops.
    }
}

/// A new private directory under the system's temporary directory: a fresh
/// random name created with mode 0700 (refused, and another name tried, if
/// anything exists there already), as `mkdtemp` does.
pub(crate) fn private_dir(prefix: &str) -> Result<tempfile::TempDir> {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o700));
    }
    b.tempdir().with_context(|| {
        format!(
            "cannot create a private directory in {}",
            std::env::temp_dir().display()
        )
    })
}

fn escape(text: &str) -> String {
    tbsim_core::term::escape(text).into_owned()
}

fn modified(family: &Path) -> Option<SystemTime> {
    std::fs::metadata(family.join("family.star"))
        .and_then(|m| m.modified())
        .ok()
}

fn watch(mut seen: Vec<(PathBuf, Option<SystemTime>)>, dir: &Path, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(POLL);
        for (family, last) in &mut seen {
            let now = modified(family);
            if now == *last {
                continue;
            }
            *last = now;
            match write_instances(family, dir) {
                Ok(names) => eprintln!("reloaded {}: {}", family.display(), names.join(", ")),
                Err(e) => eprintln!(
                    "{} did not reload (the last good instances stay): {}",
                    family.display(),
                    escape(&e)
                ),
            }
        }
    }
}

/// Loads `family` (replacing an earlier text of the same folder) and writes one
/// scenario per variant; the names written.
fn write_instances(family: &Path, dir: &Path) -> Result<Vec<String>, String> {
    let entry = tbsim_gen::registry::register_script_dir(family).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut files = Vec::new();
    for v in tbsim_gen::registry::FamilyEntry::variants(entry) {
        let mut plan = tbsim_validity::gate::plan(&v.key, 0, &v.family);
        plan.name = v.key.replace('/', "-");
        let s = generate_scenario(0, &plan).map_err(|e| format!("{}: {e}", v.key))?;
        // Variant keys are a-z, 0-9 and `_` (the host checks), `/` made `-`: still
        // checked here, as the name becomes a file.
        let file = tbsim_core::segment::Segment::parse(&format!("{}.ron", plan.name))
            .map_err(|e| format!("{}: {e}", v.key))?;
        files.push((dir.join(file.as_str()), to_ron(&s)));
        out.push(plan.name);
    }
    // Every variant generated: only then are the files replaced, each atomically,
    // from a new file created exclusively (O_EXCL, no link followed) beside it.
    for (path, text) in files {
        use std::io::Write as _;
        let mut tmp = tempfile::Builder::new()
            .prefix(".instance-")
            .tempfile_in(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        tmp.write_all(text.as_bytes())
            .map_err(|e| format!("{}: {e}", tmp.path().display()))?;
        tmp.persist(&path)
            .map_err(|e| format!("{}: {}", path.display(), e.error))?;
    }
    Ok(out)
}
