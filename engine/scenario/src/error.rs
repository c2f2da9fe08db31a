//! The errors a bad scenario produces: a stable code (each with a page under
//! `docs/errors/`), where (file, line and column, or the object path) and what was
//! expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// Stable error codes; each has a page under `docs/errors/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorCode {
    /// TB0001: the file is not valid RON for the scenario schema.
    Syntax,
    /// TB0002: a person key that does not exist.
    UnknownPerson,
    /// TB0003: a file path that does not exist on the drive.
    UnknownFile,
    /// TB0004: a task key that does not exist.
    UnknownTask,
    /// TB0005: a meeting key that does not exist.
    UnknownMeeting,
    /// TB0006: a key used twice.
    DuplicateKey,
    /// TB0007: tasks whose releases wait on each other in a cycle.
    DependencyCycle,
    /// TB0008: a deadline not after the release.
    DeadlineBeforeRelease,
    /// TB0009: a meeting outside office hours or the run.
    MeetingOutsideDay,
    /// TB0010: a checkpoint that does not exist on its task.
    UnknownCheckpoint,
    /// TB0011: a malformed time.
    BadTime,
    /// TB0012: a path outside `drive/` and `workspace/`, or with `..`.
    BadPath,
    /// TB0013: a room key that does not exist.
    UnknownRoom,
    /// TB0014: a sidecar asset missing or with the wrong hash.
    Asset,
    /// TB0015: a value out of its allowed range.
    BadValue,
    /// TB0016: a clue key that does not exist.
    UnknownClue,
    /// TB0017: the file could not be read.
    Io,
    /// TB0018: a sidecar path that leaves the scenario's folder or names no regular file.
    SidecarPath,
    /// TB0019: more objects of one kind than the limits allow.
    TooMany,
    /// TB0020: a string longer than the limits allow.
    TooLong,
    /// TB0021: a path longer or deeper than the limits allow.
    PathLimit,
    /// TB0022: a scenario or sidecar file larger than the limits allow.
    TooLarge,
    /// TB0023: a value no run can ever meet (not a finite number, or a time outside the run).
    NeverMet,
    /// TB0024: a task whose checkpoints are all diagnostics, so nothing it asks is scored.
    NothingScored,
    /// TB0025: a scenario name that is not one safe path segment.
    BadName,
}

impl ErrorCode {
    /// Every code, in order.
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::Syntax,
        ErrorCode::UnknownPerson,
        ErrorCode::UnknownFile,
        ErrorCode::UnknownTask,
        ErrorCode::UnknownMeeting,
        ErrorCode::DuplicateKey,
        ErrorCode::DependencyCycle,
        ErrorCode::DeadlineBeforeRelease,
        ErrorCode::MeetingOutsideDay,
        ErrorCode::UnknownCheckpoint,
        ErrorCode::BadTime,
        ErrorCode::BadPath,
        ErrorCode::UnknownRoom,
        ErrorCode::Asset,
        ErrorCode::BadValue,
        ErrorCode::UnknownClue,
        ErrorCode::Io,
        ErrorCode::SidecarPath,
        ErrorCode::TooMany,
        ErrorCode::TooLong,
        ErrorCode::PathLimit,
        ErrorCode::TooLarge,
        ErrorCode::NeverMet,
        ErrorCode::NothingScored,
        ErrorCode::BadName,
    ];

    /// `TB0001` form.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Syntax => "TB0001",
            ErrorCode::UnknownPerson => "TB0002",
            ErrorCode::UnknownFile => "TB0003",
            ErrorCode::UnknownTask => "TB0004",
            ErrorCode::UnknownMeeting => "TB0005",
            ErrorCode::DuplicateKey => "TB0006",
            ErrorCode::DependencyCycle => "TB0007",
            ErrorCode::DeadlineBeforeRelease => "TB0008",
            ErrorCode::MeetingOutsideDay => "TB0009",
            ErrorCode::UnknownCheckpoint => "TB0010",
            ErrorCode::BadTime => "TB0011",
            ErrorCode::BadPath => "TB0012",
            ErrorCode::UnknownRoom => "TB0013",
            ErrorCode::Asset => "TB0014",
            ErrorCode::BadValue => "TB0015",
            ErrorCode::UnknownClue => "TB0016",
            ErrorCode::Io => "TB0017",
            ErrorCode::SidecarPath => "TB0018",
            ErrorCode::TooMany => "TB0019",
            ErrorCode::TooLong => "TB0020",
            ErrorCode::PathLimit => "TB0021",
            ErrorCode::TooLarge => "TB0022",
            ErrorCode::NeverMet => "TB0023",
            ErrorCode::NothingScored => "TB0024",
            ErrorCode::BadName => "TB0025",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a scenario an error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A line and column (1-based), for syntax errors.
    LineCol(usize, usize),
    /// An object path such as `tasks[2].release`, for semantic errors.
    Path(String),
    /// The whole file.
    File,
}

/// One problem in one scenario file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// Stable code.
    pub code: ErrorCode,
    /// Where.
    pub location: Location,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match &self.location {
            Location::LineCol(l, c) => {
                write!(f, "{file}:{l}:{c}: error[{}]: {}", self.code, self.message)
            }
            Location::Path(p) => write!(f, "{file}: error[{}]: {p}: {}", self.code, self.message),
            Location::File => write!(f, "{file}: error[{}]: {}", self.code, self.message),
        }
    }
}

/// Every problem found in a scenario file (never empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl From<ScenarioError> for ScenarioErrors {
    fn from(e: ScenarioError) -> Self {
        ScenarioErrors(vec![e])
    }
}

/// Turns a RON error into a positioned error, pointing where a person would look.
pub fn syntax_error(src: &str, file: &Path, e: &ron::error::SpannedError) -> ScenarioError {
    let (mut line, mut col) = (e.span.start.line, e.span.start.col);
    let mut message = e.code.to_string();
    match &e.code {
        // RON notices a missing comma at the next value; the comma belongs at the end
        // of the previous non-blank line.
        ron::Error::ExpectedComma => {
            let lines: Vec<&str> = src.lines().collect();
            if let Some((i, l)) = lines
                .iter()
                .enumerate()
                .take(line.saturating_sub(1))
                .rev()
                .find(|(_, l)| !l.trim().is_empty())
            {
                line = i + 1;
                col = l.trim_end().chars().count() + 1;
            }
            message = "expected a comma after this value".into();
        }
        ron::Error::IntegerOutOfBounds => {
            // Point at the number's sign, if any, and say what fits.
            if let Some(l) = src.lines().nth(line.saturating_sub(1)) {
                let before: String = l.chars().take(col.saturating_sub(1)).collect();
                if before.ends_with('-') {
                    col -= 1;
                }
            }
            message = "integer out of range: this field takes a whole number that is not negative and fits its type".into();
        }
        _ => {}
    }
    ScenarioError {
        file: file.to_path_buf(),
        code: ErrorCode::Syntax,
        location: Location::LineCol(line, col),
        message,
    }
}
