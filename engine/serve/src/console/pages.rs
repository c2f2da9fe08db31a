//! A run's timeline read a page at a time, without reading the whole trajectory.
//!
//! `inspect::entries_page` reads the whole file for any page: 18.8 MB for each of
//! the 2,000-decision run's 17 pages (the first among them, which the run's first
//! paint waits for), and again every [`super::routes::POLL`] for a live run's
//! stream. The console keeps, per trajectory, where each complete line starts
//! ([`LineIndex`]) and reads only a page's bytes. A trajectory only grows (a live
//! run appends lines): the index reads what was appended since; a file that shrank,
//! was replaced (another inode) or no longer ends a line where the index says is
//! indexed again from the start. Pages are the same entries `entries_page` gives
//! (a test compares them on every page of a run, a torn last line included).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tbsim_core::time::Epoch;
use tbsim_engine::inspect::{InspectError, Timeline, entry};
use tbsim_engine::run_dir::MAX_TRAJECTORY_BYTES;
use tbsim_engine::trajectory::Line;
use tbsim_scenario::untrusted::{Links, ReadError, open_regular};

/// Trajectories whose index is kept (the runs looked at last).
const KEPT: usize = 16;

/// Where the complete lines of one trajectory file start.
#[derive(Debug, Default)]
struct LineIndex {
    /// The file it describes (device and inode; 0 where unknown).
    file: (u64, u64),
    /// `starts[k]` is where line `k` starts; the last is one past the last
    /// complete line's newline (so `starts.len() - 1` lines are complete).
    starts: Vec<u64>,
    /// Whether a complete line is the run's `end` line.
    finished: bool,
    /// When it was last used (for dropping the least recently used).
    used: u64,
}

impl LineIndex {
    fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    fn end(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
    }

    /// Indexes the complete lines of `bytes`, which start at offset `at` (the end
    /// of the lines indexed so far).
    fn extend(&mut self, at: u64, bytes: &[u8]) {
        if self.starts.is_empty() {
            self.starts.push(at);
        }
        let mut line = 0;
        for (p, b) in bytes.iter().enumerate() {
            if *b == b'\n' {
                // Lines are written `type` first (trajectory format 2).
                if bytes[line..p].starts_with(br#"{"type":"end""#) {
                    self.finished = true;
                }
                line = p + 1;
                self.starts.push(at + line as u64);
            }
        }
    }
}

/// The console's line indexes, by trajectory path.
#[derive(Debug, Default)]
pub struct Pages {
    kept: Mutex<BTreeMap<PathBuf, Arc<Mutex<LineIndex>>>>,
    tick: std::sync::atomic::AtomicU64,
}

fn io(traj: &Path, e: ReadError) -> InspectError {
    InspectError::Io(traj.to_owned(), e.into_io())
}

fn io_err(traj: &Path, e: std::io::Error) -> InspectError {
    InspectError::Io(traj.to_owned(), e)
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

impl Pages {
    /// [`tbsim_engine::inspect::entries_page`] of `traj`: the entries of at most
    /// `limit` lines from line index `from` (0 is the header), hidden ones counted,
    /// with the same `next`, `finished` and `total`; only complete lines count.
    pub fn page(
        &self,
        traj: &Path,
        from: usize,
        limit: Option<usize>,
        epoch: &Epoch,
        answers: bool,
    ) -> Result<Timeline, InspectError> {
        let slot = {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            if !kept.contains_key(traj) && kept.len() >= KEPT {
                // One being read is in use: never the one dropped (nor waited for).
                let oldest = kept
                    .iter()
                    .min_by_key(|(_, i)| i.try_lock().map_or(u64::MAX, |i| i.used))
                    .map(|(p, _)| p.clone());
                if let Some(p) = oldest {
                    kept.remove(&p);
                }
            }
            Arc::clone(kept.entry(traj.to_owned()).or_default())
        };
        let mut index = slot.lock().unwrap_or_else(PoisonError::into_inner);
        index.used = self.tick.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut file = open_regular(traj, Links::Refuse).map_err(|e| io(traj, e))?;
        let meta = file.metadata().map_err(|e| io_err(traj, e))?;
        let len = meta.len();
        if len > MAX_TRAJECTORY_BYTES {
            return Err(io(
                traj,
                ReadError::TooLarge {
                    path: traj.to_owned(),
                    cap: MAX_TRAJECTORY_BYTES,
                },
            ));
        }
        if !still_holds(&index, &mut file, file_id(&meta), len).map_err(|e| io_err(traj, e))? {
            *index = LineIndex {
                file: file_id(&meta),
                used: index.used,
                ..LineIndex::default()
            };
        }
        let at = index.end();
        if len > at {
            let mut grown = Vec::with_capacity(usize::try_from(len - at).unwrap_or(0));
            file.seek(SeekFrom::Start(at))
                .map_err(|e| io_err(traj, e))?;
            (&mut file)
                .take(len - at)
                .read_to_end(&mut grown)
                .map_err(|e| io_err(traj, e))?;
            index.extend(at, &grown);
        } else if index.starts.is_empty() {
            index.starts.push(0);
        }

        let count = index.count();
        let until = limit.map_or(usize::MAX, |l| from.saturating_add(l));
        let (lo, hi) = (from.min(count), until.min(count));
        let mut lines = Vec::new();
        if lo < hi {
            let (a, b) = (index.starts[lo], index.starts[hi]);
            let mut bytes = vec![0; usize::try_from(b - a).unwrap_or(0)];
            file.seek(SeekFrom::Start(a)).map_err(|e| io_err(traj, e))?;
            file.read_exact(&mut bytes).map_err(|e| io_err(traj, e))?;
            for (k, raw) in bytes
                .strip_suffix(b"\n")
                .unwrap_or(&bytes)
                .split(|b| *b == b'\n')
                .enumerate()
            {
                let i = lo + k;
                let fmt = |m: String| InspectError::Format(traj.to_owned(), i + 1, m);
                let text = std::str::from_utf8(raw).map_err(|e| fmt(e.to_string()))?;
                let line = Line::parse(text).map_err(|e| fmt(e.to_string()))?;
                lines.extend(entry(&line, i, epoch, answers));
            }
        }
        Ok(Timeline {
            lines,
            next: count.min(until).max(from),
            finished: index.finished,
            total: count,
        })
    }
}

/// Whether `index` still describes the file open as `file`: the same file, no
/// shorter than what was indexed, and a line still ends where the index says.
fn still_holds(
    index: &LineIndex,
    file: &mut std::fs::File,
    id: (u64, u64),
    len: u64,
) -> std::io::Result<bool> {
    if index.starts.is_empty() || index.file != id || len < index.end() {
        return Ok(false);
    }
    let end = index.end();
    if end == 0 {
        return Ok(true);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(end - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A finished oracle run of a bundled scenario (its trajectory and epoch).
    fn run() -> (tempfile::TempDir, PathBuf, Epoch) {
        let tmp = tempfile::tempdir().unwrap();
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../content/scenarios/busy-day.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let dir = tmp.path().join("run");
        let mut oracle = tbsim_engine::agent::Oracle::new(&loaded.scenario);
        tbsim_engine::run::run_to_dir(
            &loaded,
            &mut oracle,
            tbsim_engine::protocol::SimConfig::default(),
            &tbsim_engine::run::RunLimits::default(),
            &dir,
        )
        .unwrap();
        let epoch = tbsim_engine::inspect::epoch_of(&loaded);
        (tmp, dir.join("trajectory.jsonl"), epoch)
    }

    fn same(pages: &Pages, traj: &Path, epoch: &Epoch, from: usize, limit: Option<usize>) {
        for answers in [false, true] {
            let want =
                tbsim_engine::inspect::entries_page(traj, from, limit, epoch, answers).unwrap();
            let got = pages.page(traj, from, limit, epoch, answers).unwrap();
            assert_eq!(got, want, "from {from}, limit {limit:?}, answers {answers}");
        }
    }

    #[test]
    fn every_page_is_what_the_whole_file_read_gives() {
        let (_tmp, traj, epoch) = run();
        let pages = Pages::default();
        let total = std::fs::read_to_string(&traj).unwrap().lines().count();
        assert!(total > 20, "a run of some length: {total} lines");
        for limit in [1, 7, 120] {
            let mut from = 0;
            while from <= total + 1 {
                same(&pages, &traj, &epoch, from, Some(limit));
                from += limit;
            }
        }
        same(&pages, &traj, &epoch, 0, None);
        same(&pages, &traj, &epoch, 5, None);
        same(&pages, &traj, &epoch, total + 3, None);
    }

    #[test]
    fn a_growing_file_and_a_torn_last_line_read_as_the_whole_file_does() {
        let (tmp, whole, epoch) = run();
        let text = std::fs::read(&whole).unwrap();
        let traj = tmp.path().join("growing.jsonl");
        let pages = Pages::default();
        // Written in uneven pieces, the last line of each but the last one torn.
        let mut f = std::fs::File::create(&traj).unwrap();
        let mut at = 0;
        for piece in [1usize, 900, 4096, 77, 20_000] {
            let to = (at + piece).min(text.len());
            f.write_all(&text[at..to]).unwrap();
            f.flush().unwrap();
            at = to;
            same(&pages, &traj, &epoch, 0, None);
            same(&pages, &traj, &epoch, 3, Some(5));
        }
        f.write_all(&text[at..]).unwrap();
        f.flush().unwrap();
        same(&pages, &traj, &epoch, 0, None);
        let t = pages.page(&traj, 0, None, &epoch, false).unwrap();
        assert!(t.finished, "the end line is read");
    }

    #[test]
    fn a_file_replaced_or_cut_is_indexed_again() {
        let (tmp, whole, epoch) = run();
        let text = std::fs::read(&whole).unwrap();
        let traj = tmp.path().join("t.jsonl");
        let pages = Pages::default();
        std::fs::write(&traj, &text).unwrap();
        same(&pages, &traj, &epoch, 0, None);
        // Cut to its first lines, in place.
        let cut = text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(4)
            .unwrap()
            .0
            + 1;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&traj)
            .unwrap()
            .set_len(cut as u64)
            .unwrap();
        same(&pages, &traj, &epoch, 0, None);
        // Replaced by another file (a new inode) holding the whole run again.
        let other = tmp.path().join("other.jsonl");
        std::fs::write(&other, &text).unwrap();
        std::fs::rename(&other, &traj).unwrap();
        same(&pages, &traj, &epoch, 0, Some(50));
        same(&pages, &traj, &epoch, 0, None);
    }

    #[test]
    fn a_bad_line_is_named_as_the_whole_file_read_names_it() {
        let (tmp, whole, epoch) = run();
        let mut text = std::fs::read(&whole).unwrap();
        let second = text.iter().position(|b| *b == b'\n').unwrap() + 1;
        text.splice(second..second, b"{not json}\n".iter().copied());
        let traj = tmp.path().join("bad.jsonl");
        std::fs::write(&traj, &text).unwrap();
        let want = tbsim_engine::inspect::entries_page(&traj, 0, Some(5), &epoch, false)
            .unwrap_err()
            .to_string();
        let got = Pages::default()
            .page(&traj, 0, Some(5), &epoch, false)
            .unwrap_err()
            .to_string();
        assert_eq!(got, want);
        // A page after it reads.
        same(&Pages::default(), &traj, &epoch, 2, Some(5));
    }
}
