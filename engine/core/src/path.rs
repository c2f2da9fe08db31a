//! Confined virtual paths.
//!
//! The agent sees two roots: `drive/` (the shared drive, read-only) and
//! `workspace/` (its own files). Every path an agent or a scenario names is parsed
//! into a [`VPath`], which can only point inside one of them: absolute paths, `..`,
//! backslashes and control characters are refused. The world has no links, so a
//! parsed path can never lead outside its root.

use std::fmt;

/// Which root a path is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Root {
    /// The shared drive (read-only to the agent).
    Drive,
    /// The agent's workspace.
    Workspace,
}

/// A normalised path under one root, written `drive/a/b.md` or `workspace/x.json`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VPath {
    root: Root,
    full: String,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Empty path.
    #[error("the path is empty; use `drive/...` or `workspace/...`")]
    Empty,
    /// Starts with `/` or a drive letter.
    #[error("`{0}` is absolute; paths are relative, starting with `drive/` or `workspace/`")]
    Absolute(String),
    /// Contains `..`.
    #[error("`{0}` contains `..`; paths cannot leave `drive/` or `workspace/`")]
    Traversal(String),
    /// First component is not a root.
    #[error("`{0}` is outside the two roots; paths start with `drive/` or `workspace/`")]
    OutsideRoots(String),
    /// Bad characters.
    #[error("`{0}` contains a backslash or a control character")]
    BadCharacter(String),
    /// A component longer than [`MAX_NAME_BYTES`].
    #[error("`{0}` has a name longer than {MAX_NAME_BYTES} bytes")]
    NameTooLong(String),
    /// Longer than [`MAX_PATH_BYTES`].
    #[error("`{0}` is longer than {MAX_PATH_BYTES} bytes")]
    PathTooLong(String),
    /// More than [`MAX_DEPTH`] levels.
    #[error("`{0}` is nested more than {MAX_DEPTH} levels deep")]
    TooDeep(String),
}

/// Longest file or folder name in a workspace path, in bytes: what Linux file
/// systems hold (`NAME_MAX`), so the `run_python` sandbox can create it.
pub const MAX_NAME_BYTES: usize = 255;

/// Longest workspace path below `workspace/`, in bytes. Far below `PATH_MAX`
/// (4096) even with the sandbox's temporary folder in front.
pub const MAX_PATH_BYTES: usize = 1024;

/// Deepest workspace path below `workspace/`, in components.
pub const MAX_DEPTH: usize = 32;

/// Checks a workspace-relative path (`a/b.csv`) against the limits the
/// `run_python` sandbox can honour; `write_file`, `copy_from_drive` and the
/// sandbox's own results all obey them, so no stored file can break the tool.
pub fn check_name_limits(relative: &str) -> Result<(), PathError> {
    let shown = || {
        if relative.len() <= 80 {
            relative.to_owned()
        } else {
            let mut cut = 60;
            while !relative.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}… ({} bytes)", &relative[..cut], relative.len())
        }
    };
    if relative.split('/').any(|part| part.len() > MAX_NAME_BYTES) {
        Err(PathError::NameTooLong(shown()))
    } else if relative.len() > MAX_PATH_BYTES {
        Err(PathError::PathTooLong(shown()))
    } else if relative.split('/').count() > MAX_DEPTH {
        Err(PathError::TooDeep(shown()))
    } else {
        Ok(())
    }
}

impl VPath {
    /// Parses and normalises a path (`./` and repeated or trailing `/` are dropped).
    pub fn parse(input: &str) -> Result<VPath, PathError> {
        let s = input.trim();
        if s.is_empty() {
            return Err(PathError::Empty);
        }
        if s.starts_with('/') || s.starts_with('~') || s.as_bytes().get(1) == Some(&b':') {
            return Err(PathError::Absolute(input.to_owned()));
        }
        if s.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(PathError::BadCharacter(input.to_owned()));
        }
        let parts: Vec<&str> = s
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if parts.contains(&"..") {
            return Err(PathError::Traversal(input.to_owned()));
        }
        let root = match parts.first() {
            Some(&"drive") => Root::Drive,
            Some(&"workspace") => Root::Workspace,
            _ => return Err(PathError::OutsideRoots(input.to_owned())),
        };
        Ok(VPath {
            root,
            full: parts.join("/"),
        })
    }

    /// The root.
    pub fn root(&self) -> Root {
        self.root
    }
    /// Under `drive/`.
    pub fn is_drive(&self) -> bool {
        self.root == Root::Drive
    }
    /// Under `workspace/`.
    pub fn is_workspace(&self) -> bool {
        self.root == Root::Workspace
    }
    /// The normalised text, e.g. `drive/kb/a.md`.
    pub fn as_str(&self) -> &str {
        &self.full
    }
    /// Whether this is a root itself (`drive` or `workspace`).
    pub fn is_root(&self) -> bool {
        !self.full.contains('/')
    }
    /// The path below the root (`kb/a.md`), empty for a root.
    pub fn relative(&self) -> &str {
        self.full.split_once('/').map_or("", |(_, r)| r)
    }
    /// The last component.
    pub fn file_name(&self) -> &str {
        self.full.rsplit('/').next().unwrap_or(&self.full)
    }
    /// `self/child`, for a child name that is itself a valid relative path.
    pub fn join(&self, child: &str) -> Result<VPath, PathError> {
        VPath::parse(&format!("{}/{}", self.full, child))
    }
    /// Whether `other` is strictly below this path.
    pub fn contains(&self, other: &VPath) -> bool {
        other.full.len() > self.full.len()
            && other.full.starts_with(&self.full)
            && other.full.as_bytes()[self.full.len()] == b'/'
    }
}

impl fmt::Display for VPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_inside_paths() {
        assert_eq!(
            VPath::parse("./workspace//a/./b.md/").unwrap().as_str(),
            "workspace/a/b.md"
        );
        let p = VPath::parse("drive/kb/x.md").unwrap();
        assert!(p.is_drive());
        assert_eq!(p.relative(), "kb/x.md");
        assert_eq!(p.file_name(), "x.md");
        assert!(VPath::parse("drive").unwrap().is_root());
        assert!(VPath::parse("drive/kb").unwrap().contains(&p));
        assert!(!VPath::parse("drive/k").unwrap().contains(&p));
    }

    #[test]
    fn refuses_escapes() {
        for (bad, what) in [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("~/x", "absolute"),
            ("C:/x", "absolute"),
            ("workspace/../drive/x", ".."),
            ("drive/kb/../../secret", ".."),
            ("..", ".."),
            ("config.ron", "outside"),
            ("answers/x.json", "outside"),
            ("workspace\\..\\x", "backslash"),
            ("workspace/a\u{0}b", "control"),
        ] {
            assert!(VPath::parse(bad).is_err(), "{what}: {bad:?} accepted");
        }
    }

    #[test]
    fn name_limits_match_what_the_sandbox_can_create() {
        assert!(check_name_limits(&"a".repeat(MAX_NAME_BYTES)).is_ok());
        let long = "A".repeat(300) + ".txt";
        assert!(matches!(
            check_name_limits(&long),
            Err(PathError::NameTooLong(_))
        ));
        let wide = vec!["b".repeat(200); 6].join("/");
        assert!(matches!(
            check_name_limits(&wide),
            Err(PathError::PathTooLong(_))
        ));
        let deep = "d/".repeat(3000) + "x";
        let e = check_name_limits(&deep).unwrap_err();
        assert!(matches!(e, PathError::PathTooLong(_)));
        // Messages stay short whatever the path.
        assert!(e.to_string().len() < 150, "{e}");
        let nested = "d/".repeat(MAX_DEPTH) + "x";
        assert!(matches!(
            check_name_limits(&nested),
            Err(PathError::TooDeep(_))
        ));
        assert!(check_name_limits(&("d/".repeat(MAX_DEPTH - 1) + "x")).is_ok());
    }
}
