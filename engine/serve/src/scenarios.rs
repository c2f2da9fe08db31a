//! Scenario names to files, confined to the roots the server was given.
//!
//! A name is a file stem (`busy-day`, `traineebench-cl-002`) or a path relative to
//! a root, with or without `.ron` (`traineebench-cl/traineebench-cl-002`). Only
//! `.ron` files inside a root resolve: names with `..`, `.`, an absolute path or a
//! drive are refused outright, and a match is canonicalised and must still lie
//! inside its (canonical) root, so a symlink pointing out of a root leads nowhere.
//! Roots are searched in the order given; within a root, stems are indexed once at
//! startup in sorted path order (symlinked directories are not followed).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// A name that resolves to nothing readable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The name can never name a scenario (empty, too long, `..`, absolute).
    #[error(
        "`{0}` is not a scenario name: give a file stem or a path relative to a scenario root, without `..`"
    )]
    BadName(String),
    /// No scenario of that name.
    #[error("no scenario named `{0}`")]
    Unknown(String),
}

/// The longest scenario name accepted.
pub const MAX_NAME: usize = 512;

/// Where scenarios may be read from.
#[derive(Debug, Clone, Default)]
pub struct ScenarioRoots {
    roots: Vec<Root>,
}

#[derive(Debug, Clone)]
struct Root {
    dir: PathBuf,
    stems: BTreeMap<String, PathBuf>,
}

impl ScenarioRoots {
    /// Roots from directories (each canonicalised; searched in this order).
    pub fn new(dirs: &[PathBuf]) -> std::io::Result<ScenarioRoots> {
        let mut roots = Vec::new();
        for d in dirs {
            let dir = d.canonicalize()?;
            let mut files = Vec::new();
            walk(&dir, &mut files);
            files.sort();
            let mut stems = BTreeMap::new();
            for f in files {
                if let Some(stem) = f.file_stem().and_then(|s| s.to_str()) {
                    stems.entry(stem.to_owned()).or_insert(f);
                }
            }
            roots.push(Root { dir, stems });
        }
        Ok(ScenarioRoots { roots })
    }

    /// Every scenario's stem, sorted (for listings).
    pub fn stems(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .roots
            .iter()
            .flat_map(|r| r.stems.keys().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The file a name stands for (see the module docs).
    pub fn resolve(&self, name: &str) -> Result<PathBuf, ResolveError> {
        let bad = || ResolveError::BadName(name.to_owned());
        if name.is_empty() || name.len() > MAX_NAME || name.contains(['\0', '\\', ':']) {
            return Err(bad());
        }
        let rel = Path::new(name);
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(bad());
        }
        let with_ext = if rel.extension().is_some_and(|e| e == "ron") {
            rel.to_path_buf()
        } else {
            PathBuf::from(format!("{name}.ron"))
        };
        for root in &self.roots {
            if let Ok(p) = root.dir.join(&with_ext).canonicalize()
                && p.starts_with(&root.dir)
                && p.is_file()
                && p.extension().is_some_and(|e| e == "ron")
            {
                return Ok(p);
            }
            if !name.contains('/')
                && let Some(p) = root.stems.get(name)
                && let Ok(p) = p.canonicalize()
                && p.starts_with(&root.dir)
            {
                return Ok(p);
            }
        }
        Err(ResolveError::Unknown(name.to_owned()))
    }
}

/// `.ron` files at or below `dir`, not following symlinked directories.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "ron") {
            out.push(p);
        }
    }
}

/// Why the scenario named `name` (read from `path`) does not load, as told to a
/// client: positions and messages, but no host path (the server's directories are
/// none of an agent's business). Each error names the scenario as the client did,
/// or a sidecar by its file name.
pub fn client_message(name: &str, path: &Path, errors: &tbsim_scenario::ScenarioErrors) -> String {
    let dir = path.parent().unwrap_or(Path::new(""));
    let hidden = |text: &str| {
        let mut t = text.replace(&path.display().to_string(), name);
        if !dir.as_os_str().is_empty() {
            t = t.replace(&dir.display().to_string(), "<scenarios>");
        }
        t
    };
    let shown: Vec<tbsim_scenario::ScenarioError> = errors
        .0
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.file = if e.file == path {
                PathBuf::from(name)
            } else {
                e.file
                    .file_name()
                    .map_or_else(|| PathBuf::from(name), PathBuf::from)
            };
            e.message = hidden(&e.message);
            e
        })
        .collect();
    hidden(&tbsim_scenario::ScenarioErrors(shown).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_inside_the_roots_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.ron"), "x").unwrap();
        std::fs::write(root.join("sub/b.ron"), "x").unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        std::fs::write(tmp.path().join("secret.ron"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret.ron"), root.join("link.ron")).unwrap();
        let roots = ScenarioRoots::new(std::slice::from_ref(&root)).unwrap();
        let canon = root.canonicalize().unwrap();
        assert_eq!(roots.resolve("a").unwrap(), canon.join("a.ron"));
        assert_eq!(roots.resolve("a.ron").unwrap(), canon.join("a.ron"));
        assert_eq!(roots.resolve("b").unwrap(), canon.join("sub/b.ron"));
        assert_eq!(roots.resolve("sub/b").unwrap(), canon.join("sub/b.ron"));
        for bad in [
            "",
            "../secret",
            "sub/../a",
            "/etc/passwd",
            "./a",
            "a\\b",
            "c:x",
        ] {
            assert!(
                matches!(roots.resolve(bad), Err(ResolveError::BadName(_))),
                "{bad}"
            );
        }
        for unknown in ["secret", "notes.txt", "notes", "missing", "link"] {
            assert!(
                matches!(roots.resolve(unknown), Err(ResolveError::Unknown(_))),
                "{unknown}"
            );
        }
    }
}
