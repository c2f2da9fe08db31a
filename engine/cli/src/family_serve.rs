//! `tbsim serve --families DIR`: script families served while they are written.
//!
//! Each variant's instance at seed 0 is written as a scenario file
//! (`<key>-<variant>.ron`, the variant's `/` as `-`) into a directory of the
//! server's own, which is a scenario root like `--scenarios`. A watcher polls each
//! folder's `family.star` and, when it changes, loads the new text and rewrites the
//! instances; the next run started (from the console or the session API) reads the
//! new file. A script that no longer loads or generates leaves the last good
//! instances in place and says why on standard error. A variant added after start
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
    dir: PathBuf,
    stop: Arc<AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl Instances {
    /// Writes every family's instances and starts watching; `None` without families.
    pub(crate) fn start(families: &[PathBuf]) -> Result<Option<Instances>> {
        if families.is_empty() {
            return Ok(None);
        }
        let dir = std::env::temp_dir().join(format!("tbsim-serve-families-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut seen = Vec::new();
        for f in families {
            write_instances(f, &dir).map_err(anyhow::Error::msg)?;
            seen.push((f.clone(), modified(f)));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (stop, dir) = (Arc::clone(&stop), dir.clone());
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
            dir.display()
        );
        Ok(Some(Instances {
            dir,
            stop,
            watcher: Some(watcher),
        }))
    }

    /// The directory holding the instances.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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
                    "{} did not reload (the last good instances stay): {e}",
                    family.display()
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
    // Every variant generated: only then are the files replaced, each atomically.
    for (path, text) in files {
        let tmp = path.with_extension("ron.tmp");
        std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(out)
}
