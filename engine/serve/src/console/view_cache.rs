//! Finished runs' end worlds, kept on disk between console processes.
//!
//! Opening a long recorded run means replaying it to its end (600 ms for 2,000
//! decisions) for the world the page shows first. A finished run's end world never
//! changes, so once a console has replayed one, it keeps what it rendered (the
//! world view without answers, and the detail's figures) in a cache directory of
//! its own, and the next console to open that run answers from it at once (the
//! [`super::worlds`] module checks it against a replay in the background).
//!
//! * **Where**: a directory of the console's (`tbsim view --cache`), never the run
//!   directory: a run's files stay exactly as recorded (replay, regrade and fork
//!   read them), a read-only or shared run directory works, and a run directory
//!   from elsewhere cannot carry an entry in. Copies and hard links of one run
//!   share an entry.
//! * **Keyed** by [`RunDigest`]: BLAKE3 of the trajectory's and the scenario
//!   copy's bytes, this tbsim's version and the entry format. A run that changed
//!   (grew, was edited) has another digest, so its old entry is never found.
//! * **Authenticated**: each entry carries a keyed BLAKE3 MAC under a random key
//!   made with the cache (`key`, readable by its owner only). An entry edited or
//!   truncated on disk, or copied from another cache, fails it and is removed,
//!   never served.
//! * **Bounded**: at most [`MAX_ENTRIES`] entries and [`MAX_BYTES`] bytes; the
//!   least recently used go first.
//!
//! Nothing here reaches an agent: the cache is the console's, on the host, and
//! holds only what the console's world route shows without answers.

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use tbsim_scenario::untrusted::{Links, read_capped};

/// Entries kept at most.
pub const MAX_ENTRIES: usize = 256;
/// Bytes kept at most (entries together).
pub const MAX_BYTES: u64 = 256 << 20;
/// The entry format (part of every digest: a new format finds no old entry).
const FORMAT: &str = "tbsim console view cache 1";
/// An entry file's name ends so.
const SUFFIX: &str = ".view";

/// Why the cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Its directory or key cannot be made or read.
    #[error("cannot use the view cache `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// The key file is not a key.
    #[error("the view cache's key `{0}` is not 32 bytes")]
    BadKey(PathBuf),
    /// The directory is (or is inside) a run directory, whose files stay exactly
    /// as recorded.
    #[error("the view cache `{0}` would be inside the run directory `{1}`")]
    InsideRun(PathBuf, PathBuf),
}

/// The run directory that `dir` is or would be made inside, if any. `dir` is
/// resolved as making it would: its longest existing part with links resolved,
/// then the rest with `..` taking a component off.
fn enclosing_run(dir: &Path) -> Option<PathBuf> {
    let parts: Vec<Component<'_>> = dir.components().collect();
    let (mut at, rest) = (0..=parts.len()).rev().find_map(|k| {
        let prefix: PathBuf = parts[..k].iter().collect();
        let prefix = if k == 0 { PathBuf::from(".") } else { prefix };
        Some((prefix.canonicalize().ok()?, &parts[k..]))
    })?;
    for c in rest {
        match c {
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(n) => at.push(n),
            _ => {}
        }
    }
    at.ancestors()
        .find(|a| {
            ["trajectory.jsonl", "run.json"]
                .iter()
                .any(|f| a.join(f).symlink_metadata().is_ok())
        })
        .map(Path::to_path_buf)
}

/// What a run directory's end world depends on (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunDigest(blake3::Hash);

impl RunDigest {
    /// The digest of the run in `dir`, or `None` when its files cannot be read
    /// (the replay then says why).
    pub fn of(dir: &Path) -> Option<RunDigest> {
        let traj = read_capped(
            &dir.join("trajectory.jsonl"),
            tbsim_engine::run_dir::MAX_TRAJECTORY_BYTES,
            Links::Refuse,
        )
        .ok()?;
        let scen = read_capped(
            &dir.join("scenario.ron"),
            tbsim_scenario::limits::MAX_SCENARIO_BYTES,
            Links::Refuse,
        )
        .ok()?;
        Some(RunDigest::of_bytes(&traj, &scen))
    }

    fn of_bytes(traj: &[u8], scen: &[u8]) -> RunDigest {
        let mut h = blake3::Hasher::new();
        h.update(FORMAT.as_bytes());
        h.update(b"\n");
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(b"\n");
        // Lengths first, so no two pairs of files hash alike.
        for part in [traj, scen] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        RunDigest(h.finalize())
    }

    fn file_name(&self) -> String {
        format!("{}{SUFFIX}", self.0.to_hex())
    }
}

/// A cached end world: the detail's figures and the world view, each as the
/// console renders it (JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The figures after the last decision (see [`super::worlds::EndFacts`]).
    pub facts: String,
    /// The world at the end, without answers, exactly as the world route answers.
    pub view: String,
}

/// The cache in one directory (see the module docs).
#[derive(Debug)]
pub struct ViewCache {
    dir: PathBuf,
    key: [u8; 32],
}

impl ViewCache {
    /// The cache in `dir`, made (with its key) if it is not there.
    pub fn open(dir: &Path) -> Result<ViewCache, CacheError> {
        let io = |e| CacheError::Io(dir.to_owned(), e);
        // Checked before anything is made: a run's directory never gains a file.
        if let Some(run) = enclosing_run(dir) {
            return Err(CacheError::InsideRun(dir.to_owned(), run));
        }
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(dir).map_err(io)?;
        let key_path = dir.join("key");
        if !key_path.exists() {
            // Made aside and linked into place: two consoles starting at once
            // agree on one key (the second link fails, and it reads the first's).
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).map_err(|e| io(std::io::Error::other(e.to_string())))?;
            let tmp = tempfile::Builder::new()
                .prefix(".key-")
                .tempfile_in(dir)
                .map_err(io)?;
            tmp.as_file().write_all(&key).map_err(io)?;
            tmp.as_file().sync_all().map_err(io)?;
            match std::fs::hard_link(tmp.path(), &key_path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
        }
        let bytes = read_capped(&key_path, 64, Links::Refuse)
            .map_err(|e| CacheError::Io(key_path.clone(), e.into_io()))?;
        let key = <[u8; 32]>::try_from(bytes.as_slice())
            .map_err(|_| CacheError::BadKey(key_path.clone()))?;
        Ok(ViewCache {
            dir: dir.to_owned(),
            key,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn mac(&self, digest: &RunDigest, facts: &str, view: &str) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        h.update(digest.0.as_bytes());
        h.update(&(facts.len() as u64).to_le_bytes());
        h.update(facts.as_bytes());
        h.update(view.as_bytes());
        h.finalize()
    }

    /// The entry for `digest`, if there is one and it is intact. One that is not
    /// (edited, torn, from another cache) is removed.
    pub fn get(&self, digest: &RunDigest) -> Option<Entry> {
        let path = self.dir.join(digest.file_name());
        let bytes = read_capped(&path, MAX_BYTES, Links::Refuse).ok()?;
        let entry = self.check(digest, &bytes);
        match &entry {
            // Used now: the last to be dropped when the cache is full.
            Some(_) => {
                let _ = File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        entry
    }

    /// `bytes` as an entry for `digest`: `<mac hex>\n<facts>\n<view>`, the MAC over
    /// the digest and both.
    fn check(&self, digest: &RunDigest, bytes: &[u8]) -> Option<Entry> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (mac, rest) = text.split_once('\n')?;
        let (facts, view) = rest.split_once('\n')?;
        let mac = blake3::Hash::from_hex(mac).ok()?;
        // `Hash`'s equality takes the same time whatever the bytes.
        (mac == self.mac(digest, facts, view)).then(|| Entry {
            facts: facts.to_owned(),
            view: view.to_owned(),
        })
    }

    /// Keeps `entry` for `digest` (replacing any), then drops the least recently
    /// used entries beyond the bounds.
    pub fn put(&self, digest: &RunDigest, entry: &Entry) -> Result<(), CacheError> {
        let io = |e| CacheError::Io(self.dir.clone(), e);
        if entry.facts.contains('\n') || entry.view.contains('\n') {
            return Err(io(std::io::Error::other(
                "an entry's parts are one line each",
            )));
        }
        let mac = self.mac(digest, &entry.facts, &entry.view);
        // Written aside and renamed into place: a reader sees a whole entry or none.
        let mut tmp = tempfile::Builder::new()
            .prefix(".entry-")
            .tempfile_in(&self.dir)
            .map_err(io)?;
        let f = tmp.as_file_mut();
        for part in [mac.to_hex().as_str(), "\n", &entry.facts, "\n", &entry.view] {
            f.write_all(part.as_bytes()).map_err(io)?;
        }
        tmp.persist(self.dir.join(digest.file_name()))
            .map_err(|e| io(e.error))?;
        self.prune();
        Ok(())
    }

    /// Removes the entry for `digest`, if any.
    pub fn remove(&self, digest: &RunDigest) {
        let _ = std::fs::remove_file(self.dir.join(digest.file_name()));
    }

    /// Drops the least recently used entries beyond [`MAX_ENTRIES`] or [`MAX_BYTES`].
    fn prune(&self) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(SUFFIX))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut bytes: u64 = entries.iter().map(|e| e.1).sum();
        // Newest last; ties by name, so which goes does not depend on listing order.
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
        let mut left = entries.len();
        for (_, len, path) in entries {
            if left <= MAX_ENTRIES && bytes <= MAX_BYTES {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                left -= 1;
                bytes -= len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> Entry {
        Entry {
            facts: format!("{{\"steps\":{n}}}"),
            view: format!("{{\"step\":{n},\"text\":\"{}\"}}", "x".repeat(n)),
        }
    }

    #[test]
    fn an_entry_reads_back_as_written_and_only_under_its_digest() {
        let tmp = tempfile::tempdir().unwrap();
        let c = ViewCache::open(&tmp.path().join("cache")).unwrap();
        let d = RunDigest::of_bytes(b"traj", b"scen");
        assert_eq!(c.get(&d), None, "nothing yet");
        c.put(&d, &entry(3)).unwrap();
        assert_eq!(c.get(&d), Some(entry(3)));
        // Another trajectory, another scenario, or the same bytes split otherwise.
        for other in [
            RunDigest::of_bytes(b"traj2", b"scen"),
            RunDigest::of_bytes(b"traj", b"scen2"),
            RunDigest::of_bytes(b"tra", b"jscen"),
        ] {
            assert_ne!(other, d);
            assert_eq!(c.get(&other), None);
        }
        // Replaced, then removed.
        c.put(&d, &entry(4)).unwrap();
        assert_eq!(c.get(&d), Some(entry(4)));
        c.remove(&d);
        assert_eq!(c.get(&d), None);
    }

    #[test]
    fn a_cache_is_never_made_inside_a_run_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("runs/busy-day-oracle");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("trajectory.jsonl"), "").unwrap();
        for inside in [run.clone(), run.join("cache"), run.join("a/b/cache")] {
            let e = ViewCache::open(&inside).unwrap_err();
            assert!(
                matches!(e, CacheError::InsideRun(_, ref r) if r.ends_with("busy-day-oracle")),
                "{e}"
            );
            assert!(!run.join("cache").exists() && !run.join("a").exists());
        }
        // Through `..` or a link, too.
        let e = ViewCache::open(&tmp.path().join("runs/x/../busy-day-oracle/c")).unwrap_err();
        assert!(matches!(e, CacheError::InsideRun(..)), "{e}");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&run, tmp.path().join("link")).unwrap();
            let e = ViewCache::open(&tmp.path().join("link/c")).unwrap_err();
            assert!(matches!(e, CacheError::InsideRun(..)), "{e}");
        }
        // A run not started yet (only its `run.json`) counts as well.
        let planned = tmp.path().join("runs/planned");
        std::fs::create_dir_all(&planned).unwrap();
        std::fs::write(planned.join("run.json"), "{}").unwrap();
        assert!(ViewCache::open(&planned.join("c")).is_err());
        // Beside the runs is fine.
        ViewCache::open(&tmp.path().join("runs/.console-cache")).unwrap();
    }

    #[test]
    fn the_digest_is_of_the_run_files_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path();
        assert_eq!(RunDigest::of(run), None, "no files");
        std::fs::write(run.join("trajectory.jsonl"), "a\n").unwrap();
        std::fs::write(run.join("scenario.ron"), "s").unwrap();
        let d = RunDigest::of(run).unwrap();
        assert_eq!(d, RunDigest::of_bytes(b"a\n", b"s"));
        std::fs::write(run.join("trajectory.jsonl"), "a\nb\n").unwrap();
        assert_ne!(RunDigest::of(run).unwrap(), d, "the run grew");
    }

    #[test]
    fn an_edited_torn_or_foreign_entry_is_not_served_and_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let c = ViewCache::open(&tmp.path().join("cache")).unwrap();
        let d = RunDigest::of_bytes(b"traj", b"scen");
        let path = c.dir().join(d.file_name());
        let good = {
            c.put(&d, &entry(5)).unwrap();
            std::fs::read(&path).unwrap()
        };
        let text = String::from_utf8(good.clone()).unwrap();
        let edits: Vec<Vec<u8>> = vec![
            text.replace("\"step\":5", "\"step\":6").into_bytes(),
            text.replace("{\"steps\":5}", "{\"steps\":7}").into_bytes(),
            good[..good.len() - 1].to_vec(),
            good[..40].to_vec(),
            Vec::new(),
            b"not an entry".to_vec(),
        ];
        for (i, bad) in edits.into_iter().enumerate() {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(c.get(&d), None, "edit {i}");
            assert!(!path.exists(), "edit {i}: removed");
        }
        // Another cache (another key) does not accept this one's entry.
        let other = ViewCache::open(&tmp.path().join("other")).unwrap();
        std::fs::write(other.dir().join(d.file_name()), &good).unwrap();
        assert_eq!(other.get(&d), None);
        // The same directory opened again keeps its key.
        std::fs::write(&path, &good).unwrap();
        let again = ViewCache::open(c.dir()).unwrap();
        assert_eq!(again.get(&d), Some(entry(5)));
    }

    #[test]
    fn the_least_recently_used_entries_go_beyond_the_bound() {
        let tmp = tempfile::tempdir().unwrap();
        let c = ViewCache::open(&tmp.path().join("cache")).unwrap();
        let digests: Vec<RunDigest> = (0..MAX_ENTRIES + 2)
            .map(|i| RunDigest::of_bytes(i.to_string().as_bytes(), b""))
            .collect();
        let t0 = SystemTime::now() - std::time::Duration::from_secs(10_000);
        let (full, beyond) = digests.split_at(MAX_ENTRIES);
        for (i, d) in full.iter().enumerate() {
            c.put(d, &entry(1)).unwrap();
            // Distinct times, oldest first, whatever the file system's resolution.
            let f = File::options()
                .write(true)
                .open(c.dir().join(d.file_name()))
                .unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(i as u64))
                .unwrap();
        }
        // Reading the first makes it the most recent; two more push two out.
        assert!(c.get(&digests[0]).is_some());
        for d in beyond {
            c.put(d, &entry(1)).unwrap();
        }
        let kept: Vec<bool> = digests.iter().map(|d| c.get(d).is_some()).collect();
        assert_eq!(kept.iter().filter(|k| **k).count(), MAX_ENTRIES);
        assert!(kept[0], "read last: kept");
        assert!(!kept[1] && !kept[2], "the oldest unread go");
        assert!(kept[3] && kept[MAX_ENTRIES + 1]);
    }
}
