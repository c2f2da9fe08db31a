//! The run trajectory: an append-only JSON-lines record of everything observable.
//!
//! The first line is a header (format, versions, scenario hash, seed, agent). Then
//! come events as they pop, agent decisions, tool results (with the data replay
//! needs, such as `run_python` outputs), clue disclosures, checkpoint passes, the end
//! of the run and the final scores. A model-backed agent's requests and responses
//! (`model` lines, before the decision they led to) and model-played colleagues'
//! requests and replies (`npc` lines, within the call that asked) are recorded too,
//! without keys. Lines carry simulated time only, never wall-clock time or host
//! paths, so the same run always writes the same bytes; the one exception is what a
//! model provider puts in its own response (e.g. a `created` timestamp), which is
//! kept verbatim because replay and resume copy it rather than regenerate it. Each line is
//! flushed as it is written, and a model line as soon as its call completes: a crash
//! loses at most the step in flight, and of a decision in flight only the call that
//! had no answer yet.
//!
//! The digest is the BLAKE3 hash of all lines, each followed by `\n`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

/// Current trajectory format version.
pub const FORMAT: u32 = 1;

/// Writes and hashes trajectory lines.
pub struct Trajectory {
    file: Option<BufWriter<File>>,
    capture: Option<Vec<String>>,
    hasher: blake3::Hasher,
    lines: u64,
    io_error: Option<String>,
}

impl std::fmt::Debug for Trajectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

impl Trajectory {
    /// A trajectory written to `path` (created or truncated).
    pub fn to_file(path: &Path) -> std::io::Result<Self> {
        Ok(Trajectory {
            file: Some(BufWriter::new(File::create(path)?)),
            ..Self::in_memory()
        })
    }

    /// A trajectory kept in memory (see [`Trajectory::lines`]).
    pub fn in_memory() -> Self {
        Trajectory {
            file: None,
            capture: Some(Vec::new()),
            hasher: blake3::Hasher::new(),
            lines: 0,
            io_error: None,
        }
    }

    /// A trajectory that only hashes (benchmarks).
    pub fn digest_only() -> Self {
        Trajectory {
            file: None,
            capture: None,
            hasher: blake3::Hasher::new(),
            lines: 0,
            io_error: None,
        }
    }

    /// Appends one record as a JSON line.
    pub fn record<T: Serialize>(&mut self, record: &T) {
        match serde_json::to_string(record) {
            Ok(l) => self.record_raw(&l),
            Err(e) => {
                self.io_error
                    .get_or_insert_with(|| format!("cannot serialise a record: {e}"));
            }
        }
    }

    /// Writes one line as given (a line read from a trajectory, copied by replay).
    pub fn record_raw(&mut self, line: &str) {
        debug_assert!(!line.contains('\n'), "one line");
        self.hasher.update(line.as_bytes());
        self.hasher.update(b"\n");
        self.lines += 1;
        if let Some(f) = &mut self.file {
            let res = f
                .write_all(line.as_bytes())
                .and_then(|_| f.write_all(b"\n"))
                .and_then(|_| f.flush());
            if let Err(e) = res {
                self.io_error
                    .get_or_insert_with(|| format!("cannot write the trajectory: {e}"));
            }
        }
        if let Some(c) = &mut self.capture {
            c.push(line.to_owned());
        }
    }

    /// Hex BLAKE3 of every line so far.
    pub fn digest(&self) -> String {
        self.hasher.clone().finalize().to_hex().to_string()
    }

    /// Number of lines written.
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Captured lines (in-memory trajectories only).
    pub fn lines(&self) -> &[String] {
        self.capture.as_deref().unwrap_or(&[])
    }

    /// The first write error, if any (writing continues to be attempted).
    pub fn io_error(&self) -> Option<&str> {
        self.io_error.as_deref()
    }
}

/// Hex BLAKE3 over lines, as the trajectory computes it.
pub fn digest_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = blake3::Hasher::new();
    for l in lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_matches_file_bytes_and_helper() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut t = Trajectory::to_file(&p).unwrap();
        t.record(&serde_json::json!({"type": "header", "n": 1}));
        t.record(&serde_json::json!({"type": "end"}));
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(t.digest(), blake3::hash(&bytes).to_hex().to_string());
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(digest_lines(text.lines()), t.digest());
        assert_eq!(t.len(), 2);
    }
}
