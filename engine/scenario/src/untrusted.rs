//! Reading files someone else may have made: a scenario pack's files, and every
//! file of a run directory (`run.json`, `trajectory.jsonl`, `result.json`,
//! `scenario.ron`), which are shared like documents.
//!
//! Such a file may be a FIFO (opening or reading it would wait forever), a link to
//! `/dev/zero` (reading never ends) or to a host file (whose contents an error
//! message could then quote). So a file is opened without blocking, must be a regular
//! file, is read up to a cap, and with [`Links::Refuse`] a final symbolic link is not
//! followed at all (tbsim never writes links into a run directory). Errors name the
//! file, never its contents.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Whether a final symbolic link is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (a scenario the user named on the command line may be a link).
    Follow,
    /// Refuse it (files inside a run directory).
    Refuse,
}

/// Why an untrusted file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A symbolic link where none is followed.
    #[error("`{0}` is a symbolic link; tbsim reads only regular files here")]
    Link(PathBuf),
    /// A FIFO, device, socket or directory.
    #[error("`{0}` is not a regular file")]
    NotRegular(PathBuf),
    /// Larger than the cap.
    #[error("`{path}` is larger than {cap} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap.
        cap: u64,
    },
    /// Not UTF-8.
    #[error("`{0}` is not UTF-8 text")]
    NotText(PathBuf),
    /// Missing, no permission, or a read error.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl ReadError {
    /// As an I/O error whose text does not repeat the path (for error types that
    /// name it already).
    pub fn into_io(self) -> std::io::Error {
        use std::io::{Error, ErrorKind};
        match self {
            ReadError::Io { source, .. } => source,
            ReadError::Link(_) => Error::new(
                ErrorKind::InvalidData,
                "it is a symbolic link; tbsim reads only regular files here",
            ),
            ReadError::NotRegular(_) => {
                Error::new(ErrorKind::InvalidData, "it is not a regular file")
            }
            ReadError::TooLarge { cap, .. } => Error::new(
                ErrorKind::InvalidData,
                format!("it is larger than {cap} bytes"),
            ),
            ReadError::NotText(_) => Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"),
        }
    }

    /// The file is missing (callers often treat that as "not there yet").
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading without blocking on a FIFO, and checks it is a regular
/// file before anything is read.
pub fn open_regular(path: &Path, links: Links) -> Result<std::fs::File, ReadError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if links == Links::Refuse {
            libc::O_NOFOLLOW
        } else {
            0
        };
        o.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let file = o.open(path).map_err(|source| {
        #[cfg(unix)]
        if links == Links::Refuse && source.raw_os_error() == Some(libc::ELOOP) {
            return ReadError::Link(path.to_owned());
        }
        ReadError::Io {
            path: path.to_owned(),
            source,
        }
    })?;
    let meta = file.metadata().map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(path.to_owned()));
    }
    Ok(file)
}

/// Reads at most `cap` bytes of the regular file `path`; a larger file is refused
/// (the bound holds even if the file grows while being read).
pub fn read_capped(path: &Path, cap: u64, links: Links) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path, links)?;
    let too_large = || ReadError::TooLarge {
        path: path.to_owned(),
        cap,
    };
    let len = file
        .metadata()
        .map_err(|source| ReadError::Io {
            path: path.to_owned(),
            source,
        })?
        .len();
    if len > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
pub fn read_text(path: &Path, cap: u64, links: Links) -> Result<String, ReadError> {
    String::from_utf8(read_capped(path, cap, links)?)
        .map_err(|_| ReadError::NotText(path.to_owned()))
}

/// Creates or replaces the regular file `path` with `bytes`, never through a symbolic
/// link planted in its place (which could point at any file of the host) and never
/// blocking on a FIFO.
///
/// The bytes go to a new file beside `path` that is then renamed over it, so a
/// reader sees the old file or the whole new one, never a half-written one (the
/// console calls a run finished as soon as its `result.json` exists). A rename
/// replaces a link rather than following it, so a link swapped in after the check
/// below still cannot redirect the write.
pub fn write_regular(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is a symbolic link; tbsim does not write through links in a run directory",
            ));
        }
        Ok(m) if !m.is_file() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is not a regular file",
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".tmp{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = path.with_file_name(tmp_name);
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = o.open(&tmp)?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.flush())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write replaces the file whole and leaves nothing beside it; links and FIFOs
    /// in its place are refused without touching what they point at.
    #[cfg(unix)]
    #[test]
    fn writes_replace_whole_files_and_refuse_links_and_fifos() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let p = d.join("result.json");
        write_regular(&p, b"{\"a\": 1}").unwrap();
        write_regular(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        let names: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("result.json")]);
        std::fs::write(d.join("victim"), "original").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("link.json")).unwrap();
        let e = write_regular(&d.join("link.json"), b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.join("victim")).unwrap(),
            "original"
        );
        let fifo = d.join("fifo.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let e = write_regular(&fifo, b"x").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_links_and_large_files_are_refused_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("ok.json"), "{}").unwrap();
        std::fs::write(d.join("host.env"), "OPENAI_API_KEY=sk-1").unwrap();
        std::os::unix::fs::symlink(d.join("host.env"), d.join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
        let fifo = d.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );

        assert_eq!(
            read_text(&d.join("ok.json"), 10, Links::Refuse).unwrap(),
            "{}"
        );
        let e = read_text(&d.join("link"), 100, Links::Refuse).unwrap_err();
        assert!(matches!(e, ReadError::Link(_)), "{e}");
        assert!(!e.to_string().contains("OPENAI"));
        assert!(matches!(
            read_text(&d.join("zero"), 100, Links::Follow).unwrap_err(),
            ReadError::NotRegular(_)
        ));
        assert!(matches!(
            read_text(&d.join("zero"), 100, Links::Refuse).unwrap_err(),
            ReadError::Link(_)
        ));
        assert!(matches!(
            read_text(&fifo, 100, Links::Refuse).unwrap_err(),
            ReadError::NotRegular(_)
        ));
        assert!(matches!(
            read_text(d, 100, Links::Refuse).unwrap_err(),
            ReadError::NotRegular(_)
        ));
        assert!(matches!(
            read_text(&d.join("host.env"), 5, Links::Refuse).unwrap_err(),
            ReadError::TooLarge { cap: 5, .. }
        ));
        assert!(
            read_text(&d.join("missing"), 5, Links::Refuse)
                .unwrap_err()
                .is_not_found()
        );
    }
}
