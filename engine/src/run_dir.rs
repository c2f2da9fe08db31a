//! Reading a run directory's files. A run directory is shared like a document, so
//! each file is read as untrusted input ([`tbsim_scenario::untrusted`]): a regular
//! file only (never a FIFO, a device or a symbolic link), opened without blocking,
//! and up to a size cap; trajectory lines are capped too ([`MAX_LINE_BYTES`]).
//! Errors name the file, never quote it.

use std::path::{Path, PathBuf};

use tbsim_scenario::untrusted::{self, Links};
use tbsim_scenario::{ErrorCode, LoadedScenario, Location, ScenarioError, ScenarioErrors};

pub use tbsim_scenario::untrusted::ReadError;

/// Largest `run.json`.
pub const MAX_RUN_FILE_BYTES: u64 = 1 << 20;
/// Largest `result.json`.
pub const MAX_RESULT_BYTES: u64 = 64 << 20;
/// Largest `trajectory.jsonl`: far above a long model run with full requests.
pub const MAX_TRAJECTORY_BYTES: u64 = 512 << 20;
/// Longest trajectory line.
pub const MAX_LINE_BYTES: usize = 32 << 20;

/// Reads a run directory file as text, up to `cap` bytes.
pub fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    untrusted::read_text(path, cap, Links::Refuse)
}

/// The plain trajectory's file name.
pub const TRAJECTORY: &str = "trajectory.jsonl";
/// The compressed trajectory's file name (see [`crate::zst`]).
pub const TRAJECTORY_ZST: &str = "trajectory.jsonl.zst";

/// The trajectory of run directory `dir`: `trajectory.jsonl`, or
/// `trajectory.jsonl.zst` when only that one exists.
pub fn trajectory_path(dir: &Path) -> PathBuf {
    let plain = dir.join(TRAJECTORY);
    let zst = dir.join(TRAJECTORY_ZST);
    if plain.symlink_metadata().is_err() && zst.symlink_metadata().is_ok() {
        zst
    } else {
        plain
    }
}

/// Whether the run in `dir` holds only a compressed trajectory.
pub fn is_compressed(dir: &Path) -> bool {
    trajectory_path(dir) != dir.join(TRAJECTORY)
}

/// Reads a trajectory (up to [`MAX_TRAJECTORY_BYTES`] of text). A zstd-compressed
/// one (see [`crate::zst`]) is recognised by its first bytes and
/// decompressed, with the same cap on the decompressed text.
pub fn read_trajectory(path: &Path) -> Result<String, ReadError> {
    use crate::zst;
    let bytes = untrusted::read_capped(path, MAX_TRAJECTORY_BYTES, Links::Refuse)?;
    let bytes = if zst::is_zstd(&bytes) {
        zst::decompress(&bytes, MAX_TRAJECTORY_BYTES).map_err(|e| match e {
            zst::ZstdError::TooLarge(cap) => ReadError::TooLarge {
                path: path.to_owned(),
                cap,
            },
            zst::ZstdError::Corrupt(m) => ReadError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, m),
            },
        })?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| ReadError::NotText(path.to_owned()))
}

/// Reads `result.json` (up to [`MAX_RESULT_BYTES`]).
pub fn read_result(path: &Path) -> Result<String, ReadError> {
    read_text(path, MAX_RESULT_BYTES)
}

/// Loads a run directory's `scenario.ron` (its sidecars are beside it): like
/// [`tbsim_scenario::load_file`], but a link is refused, so no host file can be
/// parsed (and quoted in a syntax error) in its place.
pub fn load_scenario(path: &Path) -> Result<LoadedScenario, ScenarioErrors> {
    let source = read_text(path, tbsim_scenario::limits::MAX_SCENARIO_BYTES).map_err(|e| {
        let code = match e {
            ReadError::TooLarge { .. } => ErrorCode::TooLarge,
            _ => ErrorCode::Io,
        };
        ScenarioErrors(vec![ScenarioError {
            file: path.to_owned(),
            code,
            location: Location::File,
            message: format!("cannot read the scenario file: {}", e.into_io()),
        }])
    })?;
    tbsim_scenario::load_text(path, source)
}

/// Writes a run directory file (`result.json`, `run.json`, `scenario.ron`, ...)
/// without following a symbolic link planted in its place (which could point at any
/// file of the host) and without blocking on a FIFO.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    untrusted::write_regular(path, bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn writes_never_go_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "original").unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::os::unix::fs::symlink(&victim, run.join("result.json")).unwrap();
        let e = write(&run.join("result.json"), b"{}").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
        write(&run.join("run.json"), b"{}").unwrap();
        assert_eq!(std::fs::read(run.join("run.json")).unwrap(), b"{}");
    }
}
