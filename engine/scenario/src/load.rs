//! Reading scenario files.

use std::path::{Path, PathBuf};

use super::Scenario;
use super::error::{ErrorCode, Location, ScenarioError, ScenarioErrors, syntax_error};
use super::limits::MAX_SCENARIO_BYTES;

/// Parses RON text into a [`Scenario`] without semantic checks. `file` names the
/// source in error messages.
pub fn parse_str(src: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    ron::Options::default()
        .from_str::<Scenario>(src)
        .map_err(|e| syntax_error(src, file, &e))
}

/// A scenario read from disk and validated.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// Where it was read from.
    pub path: PathBuf,
    /// The exact bytes read (runs keep a copy for replay).
    pub source: String,
    /// Lowercase hex BLAKE3 of `source`.
    pub blake3: String,
    /// Sidecar assets by drive/workspace path.
    pub assets: std::collections::BTreeMap<String, Vec<u8>>,
}

impl LoadedScenario {
    /// The bytes of file `f` of this scenario as the world holds them: text as
    /// is, a sidecar's loaded asset (empty if missing), a drawing rendered.
    pub fn file_bytes(&self, f: &super::FileSpec) -> Vec<u8> {
        match &f.content {
            super::Content::Text(t) => t.as_bytes().to_vec(),
            super::Content::Sidecar { .. } => self.assets.get(&f.path).cloned().unwrap_or_default(),
            super::Content::Drawing(d) => d.png(),
        }
    }
}

/// Reads, parses and validates a scenario file, loading its sidecar assets.
pub fn load_file(path: &Path) -> Result<LoadedScenario, ScenarioErrors> {
    let source = read_source(path)?;
    load_text(path, source)
}

/// Parses and validates `source`, read from `path` by the caller (sidecars are
/// looked up beside `path`).
pub fn load_text(path: &Path, source: String) -> Result<LoadedScenario, ScenarioErrors> {
    let scenario = parse_str(&source, path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let assets = super::validate(&scenario, path, Some(base))?;
    let blake3 = blake3::hash(source.as_bytes()).to_hex().to_string();
    Ok(LoadedScenario {
        scenario,
        path: path.to_path_buf(),
        source,
        blake3,
        assets,
    })
}

/// Reads the scenario file with a bound, so a huge or endless file (`/dev/zero`) is
/// refused after [`MAX_SCENARIO_BYTES`] rather than filling memory.
fn read_source(path: &Path) -> Result<String, ScenarioError> {
    use std::io::Read;
    let err = |code, message: String| ScenarioError {
        file: path.to_path_buf(),
        code,
        location: Location::File,
        message,
    };
    let io = |e: std::io::Error| err(ErrorCode::Io, format!("cannot read the scenario file: {e}"));
    // Not blocking on a FIFO, and never reading a device (`/dev/zero`) or directory.
    let file = crate::untrusted::open_regular(path, crate::untrusted::Links::Follow).map_err(
        |e| match e {
            crate::untrusted::ReadError::Io { source, .. } => io(source),
            _ => err(
                ErrorCode::Io,
                "cannot read the scenario file: it is not a regular file".into(),
            ),
        },
    )?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(err(
            ErrorCode::TooLarge,
            format!("the scenario file is larger than {MAX_SCENARIO_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        err(
            ErrorCode::Io,
            format!("cannot read the scenario file: it is not UTF-8 text ({e})"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_sequential() {
        for (i, c) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(c.as_str(), format!("TB{:04}", i + 1));
        }
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = parse_str(
            "Scenario(\n  name: \"x\",\n  sede: 1,\n)",
            Path::new("bad.ron"),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("bad.ron:3:"), "{text}");
        assert!(text.contains("error[TB0001]"), "{text}");
        assert!(text.contains("sede"), "{text}");
    }
}
