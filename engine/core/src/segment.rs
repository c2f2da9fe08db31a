//! Host path segments built from untrusted text.
//!
//! Scenario names, agent labels, MCP client names and session ids end up in host
//! directory names (`<out>/<name>`, `runs/<name>-<agent>`). Such text comes from a
//! shared scenario pack, a run directory or a network client, so it must never be
//! able to name a parent (`..`), an absolute path, or a hidden file. Every path built
//! from such text goes through [`Segment`] and [`confined_join`]: a [`Segment`] is
//! one path component of `A-Z a-z 0-9 . _ -`, not starting with `.`, at most
//! [`MAX_SEGMENT_BYTES`] bytes, so joining it onto a directory always names a direct
//! child of that directory.

use std::fmt;
use std::path::{Path, PathBuf};

/// Longest segment, in bytes: leaves room for suffixes (`-fork12-llm-model`)
/// within a file system's 255-byte name limit.
pub const MAX_SEGMENT_BYTES: usize = 96;

/// One safe host path component. Built only by [`Segment::parse`] (strict) or
/// [`Segment::sanitize`] (lossy), so holding one proves the rules hold.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Segment(String);

/// Why a text is not a safe path segment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Empty text.
    #[error("the name is empty")]
    Empty,
    /// Longer than [`MAX_SEGMENT_BYTES`].
    #[error("the name is {0} bytes long; at most {MAX_SEGMENT_BYTES} are allowed")]
    TooLong(usize),
    /// Starts with `.` (hidden files, `.` and `..`).
    #[error("the name starts with `.`")]
    LeadingDot,
    /// A character outside `A-Z a-z 0-9 . _ -`.
    #[error("the name contains {0:?}; only A-Z, a-z, 0-9, `.`, `_` and `-` are allowed")]
    BadCharacter(char),
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

impl Segment {
    /// Accepts `text` only if it is already a safe segment.
    pub fn parse(text: &str) -> Result<Segment, SegmentError> {
        if text.is_empty() {
            return Err(SegmentError::Empty);
        }
        if let Some(c) = text.chars().find(|c| !allowed(*c)) {
            return Err(SegmentError::BadCharacter(c));
        }
        if text.starts_with('.') {
            return Err(SegmentError::LeadingDot);
        }
        if text.len() > MAX_SEGMENT_BYTES {
            return Err(SegmentError::TooLong(text.len()));
        }
        Ok(Segment(text.to_owned()))
    }

    /// Makes a safe segment out of any label (an agent `llm:gpt/4`, a client name):
    /// every disallowed character becomes `_`, a leading `.` becomes `_`, the text is
    /// cut to [`MAX_SEGMENT_BYTES`], and an empty label becomes `_`. Different labels
    /// may map to the same segment; callers that need uniqueness add their own.
    pub fn sanitize(label: &str) -> Segment {
        let mut s: String = label
            .chars()
            .map(|c| if allowed(c) { c } else { '_' })
            .take(MAX_SEGMENT_BYTES)
            .collect();
        if s.starts_with('.') {
            s.replace_range(0..1, "_");
        }
        if s.is_empty() {
            s.push('_');
        }
        Segment(s)
    }

    /// Joins several labels with `-`, each sanitised, and bounds the whole: the
    /// usual shape of a default run directory (`<scenario>-<agent>`).
    pub fn compose(parts: &[&str]) -> Segment {
        let joined: Vec<String> = parts.iter().map(|p| Segment::sanitize(p).0).collect();
        Segment::sanitize(&joined.join("-"))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<Path> for Segment {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

/// `parent/segment`: always a direct child of `parent`.
pub fn confined_join(parent: &Path, segment: &Segment) -> PathBuf {
    parent.join(&segment.0)
}

/// A sibling of `path` named `segment` (`path`'s parent joined with it): always in
/// the same directory as `path`.
pub fn confined_sibling(path: &Path, segment: &Segment) -> PathBuf {
    path.with_file_name(&segment.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_only_one_plain_component() {
        for ok in ["busy-day", "a", "meeting_only.v2", "X-001", &"a".repeat(96)] {
            assert_eq!(Segment::parse(ok).unwrap().as_str(), ok);
        }
        let bad = |s: &str| Segment::parse(s).unwrap_err();
        assert_eq!(bad(""), SegmentError::Empty);
        assert_eq!(bad("."), SegmentError::LeadingDot);
        assert_eq!(bad(".."), SegmentError::LeadingDot);
        assert_eq!(bad(".ssh"), SegmentError::LeadingDot);
        assert_eq!(bad("../../x"), SegmentError::BadCharacter('/'));
        assert_eq!(bad("/tmp/x"), SegmentError::BadCharacter('/'));
        assert_eq!(bad("a\\b"), SegmentError::BadCharacter('\\'));
        assert_eq!(bad("a b"), SegmentError::BadCharacter(' '));
        assert_eq!(bad("a\0b"), SegmentError::BadCharacter('\0'));
        assert_eq!(bad("é"), SegmentError::BadCharacter('é'));
        assert_eq!(bad("~"), SegmentError::BadCharacter('~'));
        assert_eq!(bad(&"a".repeat(97)), SegmentError::TooLong(97));
    }

    #[test]
    fn sanitized_labels_are_always_one_safe_component() {
        let cases = [
            ("llm:gpt-4", "llm_gpt-4"),
            ("..", "_."),
            (".", "_"),
            ("", "_"),
            ("../../etc", "_._.._etc"),
            ("/abs", "_abs"),
            ("Claude Desktop/1", "Claude_Desktop_1"),
        ];
        for (label, want) in cases {
            let s = Segment::sanitize(label);
            assert_eq!(s.as_str(), want, "{label:?}");
            assert_eq!(Segment::parse(s.as_str()).unwrap(), s, "{label:?}");
        }
        let long = Segment::sanitize(&"é".repeat(500));
        assert_eq!(long.as_str().len(), MAX_SEGMENT_BYTES);
        let c = Segment::compose(&["busy-day", "llm:../../x"]);
        assert_eq!(c.as_str(), "busy-day-llm_.._.._x");
        assert!(Segment::parse(c.as_str()).is_ok());
    }

    #[test]
    fn joins_stay_in_the_parent() {
        let parent = Path::new("/out/runs");
        for label in ["..", "../..", "/etc/passwd", "a/../../b", "", "\u{0}"] {
            let p = confined_join(parent, &Segment::sanitize(label));
            assert_eq!(p.parent(), Some(parent), "{label:?} -> {}", p.display());
            let s = confined_sibling(&parent.join("run"), &Segment::sanitize(label));
            assert_eq!(s.parent(), Some(parent), "{label:?} -> {}", s.display());
        }
    }
}
