//! Sidecar files: bytes a scenario keeps next to itself, which are untrusted input.
//!
//! A sidecar path is relative to the scenario's folder and must stay inside it: plain
//! components only (no `..`, no absolute or home paths, no backslashes), no symbolic
//! link resolving outside the folder, and a regular file of bounded size. Nothing
//! outside the folder is ever opened, so no message can reveal anything about such a
//! file (not even its hash). The same rules confine the copy written into a run
//! directory.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use super::limits::{self, MAX_SIDECAR_BYTES};

/// Why a sidecar was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SidecarError {
    /// The path is not confined to the scenario's folder, or names no regular file.
    Unsafe(String),
    /// The path is longer or deeper than the limits.
    PathLimit(String),
    /// The file is larger than the limit.
    TooLarge(String),
    /// The file cannot be read (missing, permissions).
    Io(String),
}

/// Checks a sidecar path's text; returns it as a relative path of plain components.
pub(crate) fn relative(rel: &str) -> Result<PathBuf, String> {
    if rel.is_empty() {
        return Err("the sidecar path is empty".into());
    }
    if rel.starts_with('/') || rel.starts_with('~') || rel.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "`{rel}` is absolute; sidecar paths are relative to the scenario's folder"
        ));
    }
    if rel.chars().any(|c| c == '\\' || c.is_control()) {
        return Err(format!(
            "`{rel}` contains a backslash or a control character"
        ));
    }
    let mut out = PathBuf::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "`{rel}` contains `..`; sidecars must be inside the scenario's folder"
                ));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "`{rel}` is absolute; sidecar paths are relative to the scenario's folder"
                ));
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("`{rel}` names no file"));
    }
    Ok(out)
}

/// Opens without following a final symbolic link and without blocking on a FIFO.
fn open_plain(p: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    o.open(p)
}

/// Reads the sidecar `rel` of the scenario in `dir`, charging its size to `budget`
/// (the bytes all sidecars of one scenario may still load).
pub(super) fn read(dir: &Path, rel: &str, budget: &mut u64) -> Result<Vec<u8>, SidecarError> {
    let relp = relative(rel).map_err(SidecarError::Unsafe)?;
    // `s.ron` has the parent ``, which names the current directory.
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Some(p) = limits::path_problem(rel) {
        return Err(SidecarError::PathLimit(p));
    }
    let io = |e: std::io::Error| SidecarError::Io(format!("cannot read sidecar `{rel}`: {e}"));
    let base = dir.canonicalize().map_err(|e| {
        SidecarError::Io(format!(
            "cannot open the scenario's folder for sidecar `{rel}`: {e}"
        ))
    })?;
    // Resolving every link first, then opening the resolved path without following
    // links, means the file opened is the one checked to be inside the folder.
    let full = base.join(&relp).canonicalize().map_err(io)?;
    if !full.starts_with(&base) {
        return Err(SidecarError::Unsafe(format!(
            "`{rel}` leads outside the scenario's folder through a symbolic link"
        )));
    }
    let file = open_plain(&full).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SidecarError::Unsafe(format!(
            "`{rel}` is not a regular file"
        )));
    }
    let cap = MAX_SIDECAR_BYTES.min(*budget);
    let too_large = || {
        if cap < MAX_SIDECAR_BYTES {
            SidecarError::TooLarge(format!(
                "sidecar `{rel}` goes past the {} bytes all sidecars of one scenario may hold",
                limits::MAX_SIDECAR_TOTAL_BYTES
            ))
        } else {
            SidecarError::TooLarge(format!(
                "sidecar `{rel}` is larger than {MAX_SIDECAR_BYTES} bytes"
            ))
        }
    };
    if meta.len() > cap {
        return Err(too_large());
    }
    // The size seen above may change while reading; the bound holds regardless.
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    *budget -= bytes.len() as u64;
    Ok(bytes)
}

/// Writes a sidecar's bytes to `out/rel`, never outside `out`: the path must be plain
/// and relative, and no existing directory or file on the way may be a symbolic link.
pub fn write_into(out: &Path, rel: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let refuse = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let relp = relative(rel).map_err(refuse)?;
    let parts: Vec<_> = relp.components().collect();
    let mut at = out.to_path_buf();
    for (i, c) in parts.iter().enumerate() {
        at.push(c);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse(format!(
                    "`{}` is a symbolic link; sidecars are not written through links",
                    at.display()
                )));
            }
            Ok(m) if !last && !m.is_dir() => {
                return Err(refuse(format!("`{}` is not a directory", at.display())));
            }
            Ok(m) if last && !m.is_file() => {
                return Err(refuse(format!("`{}` is not a regular file", at.display())));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !last {
                    std::fs::create_dir(&at)?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = o.open(&at)?;
    f.write_all(bytes)?;
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_plain() {
        assert_eq!(relative("a/./b.csv").unwrap(), PathBuf::from("a/b.csv"));
        for bad in [
            "",
            ".",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "~/x",
            "C:/x",
            "a\\b",
            "a\nb",
        ] {
            assert!(relative(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn reading_refuses_escapes_special_files_and_oversize() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pack");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(root.path().join("secret.txt"), "s3cret").unwrap();
        std::fs::write(dir.join("ok.txt"), "fine").unwrap();
        let mut budget = limits::MAX_SIDECAR_TOTAL_BYTES;
        assert_eq!(read(&dir, "ok.txt", &mut budget).unwrap(), b"fine");
        assert_eq!(budget, limits::MAX_SIDECAR_TOTAL_BYTES - 4);

        let unsafe_ = |r: Result<Vec<u8>, SidecarError>| matches!(r, Err(SidecarError::Unsafe(_)));
        assert!(unsafe_(read(&dir, "../secret.txt", &mut budget)));
        assert!(unsafe_(read(&dir, "/etc/passwd", &mut budget)));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.path().join("secret.txt"), dir.join("link")).unwrap();
            assert!(unsafe_(read(&dir, "link", &mut budget)));
            std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
            assert!(unsafe_(read(&dir, "zero", &mut budget)));
            // A link that stays inside the folder is fine.
            std::os::unix::fs::symlink("ok.txt", dir.join("alias")).unwrap();
            assert_eq!(read(&dir, "alias", &mut budget).unwrap(), b"fine");
            std::fs::create_dir(dir.join("sub")).unwrap();
            assert!(unsafe_(read(&dir, "sub", &mut budget)));
        }
        // Sparse: the size is seen before any byte is read.
        let big = std::fs::File::create(dir.join("big.bin")).unwrap();
        big.set_len(MAX_SIDECAR_BYTES + 1).unwrap();
        assert!(matches!(
            read(&dir, "big.bin", &mut budget),
            Err(SidecarError::TooLarge(_))
        ));
        let mut small_budget = 3;
        assert!(matches!(
            read(&dir, "ok.txt", &mut small_budget),
            Err(SidecarError::TooLarge(m)) if m.contains("all sidecars")
        ));
    }

    #[test]
    fn writing_stays_inside_the_run_directory() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("run");
        std::fs::create_dir(&out).unwrap();
        let victim = root.path().join("victim.txt");
        std::fs::write(&victim, "original").unwrap();
        assert!(write_into(&out, "../victim.txt", b"pwned").is_err());
        assert!(write_into(&out, "/tmp/x", b"pwned").is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.path(), out.join("up")).unwrap();
            assert!(write_into(&out, "up/victim.txt", b"pwned").is_err());
            std::os::unix::fs::symlink(&victim, out.join("v.txt")).unwrap();
            assert!(write_into(&out, "v.txt", b"pwned").is_err());
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
        let at = write_into(&out, "data/a.csv", b"x,y\n").unwrap();
        assert_eq!(at, out.join("data/a.csv"));
        assert_eq!(std::fs::read(at).unwrap(), b"x,y\n");
    }
}
