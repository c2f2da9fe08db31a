//! The workspace copy: writing the inputs in (one bad name refuses that file
//! only) and reading the results back under the caps.

use super::*;

/// An input file that could not be placed in the sandbox is refused, not
/// fatal: one bad name must not disable the tool for the rest of the run.
pub(super) fn write_inputs(
    workspace: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    owner: Option<u32>,
    refused: &mut Vec<String>,
) -> BTreeMap<String, Vec<u8>> {
    let mut placed = BTreeMap::new();
    for (path, bytes) in files {
        if let Err(reason) = validate_path(path) {
            refused.push(format!(
                "{}: not copied into the sandbox ({reason})",
                shorten(path)
            ));
            continue;
        }
        let target = workspace.join(path);
        let written = create_parents(workspace, path, owner)
            .and_then(|()| fs::write(&target, bytes))
            .and_then(|()| chown_to(&target, owner));
        match written {
            Ok(()) => {
                placed.insert(path.clone(), bytes.clone());
            }
            Err(e) => refused.push(format!(
                "{}: not copied into the sandbox ({e})",
                shorten(path)
            )),
        }
    }
    placed
}

/// Creates the folders above `path`, owned by the sandbox user when there is one.
pub(super) fn create_parents(workspace: &Path, path: &str, owner: Option<u32>) -> io::Result<()> {
    let mut folder = workspace.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        folder.push(part);
        match fs::create_dir(&folder) {
            Ok(()) => chown_to(&folder, owner)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && folder.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub(super) fn chown_to(path: &Path, owner: Option<u32>) -> io::Result<()> {
    match owner {
        Some(uid) => std::os::unix::fs::chown(path, Some(uid), Some(uid)),
        None => Ok(()),
    }
}

/// At most 80 characters of a path, for messages.
pub(super) fn shorten(path: &str) -> String {
    if path.chars().count() <= 80 {
        return path.to_owned();
    }
    let head: String = path.chars().take(60).collect();
    format!("{head}… ({} bytes)", path.len())
}

/// Paths are workspace-relative with '/' separators, within the name limits
/// every workspace path obeys ([`crate::path::check_name_limits`]).
pub(super) fn validate_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        Err("the path is empty".to_owned())
    } else if path.starts_with('/') {
        Err("absolute paths are not allowed, use a workspace-relative path".to_owned())
    } else if path.contains('\0') {
        Err("the path contains a NUL byte".to_owned())
    } else if path.split('/').any(|part| part == "..") {
        Err("'..' is not allowed".to_owned())
    } else if path.split('/').any(|part| part.is_empty() || part == ".") {
        Err("empty or '.' path segments are not allowed".to_owned())
    } else {
        crate::path::check_name_limits(path).map_err(|e| e.to_string())
    }
}

#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub(super) written: BTreeMap<String, Vec<u8>>,
    pub(super) refused: Vec<String>,
    /// Every path that is (still) a regular file, changed or not.
    pub(super) present: BTreeSet<String>,
}

/// Reads the workspace copy back without following symlinks. Iterative, so a
/// deeply nested tree cannot exhaust the stack. Files are taken in path order,
/// so which ones fit under the caps does not depend on the directory order.
pub(super) fn collect_workspace(
    workspace: &Path,
    inputs: &BTreeMap<String, Vec<u8>>,
    limits: &PythonLimits,
) -> Snapshot {
    let mut snapshot = Snapshot::default();
    let mut regular = Vec::new();
    let mut pending = vec![(workspace.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                let shown = if prefix.is_empty() { "." } else { &prefix };
                snapshot.refused.push(format!(
                    "{}: folder could not be read ({e})",
                    shorten(shown)
                ));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let relative = format!("{prefix}{}", name.to_string_lossy());
            if name.to_str().is_none() {
                snapshot.refused.push(format!(
                    "{}: file name is not valid UTF-8",
                    shorten(&relative)
                ));
                continue;
            }
            let path = entry.path();
            let metadata = match fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    snapshot
                        .refused
                        .push(format!("{}: could not be read ({e})", shorten(&relative)));
                    continue;
                }
            };
            let kind = metadata.file_type();
            let reason = if kind.is_dir() {
                pending.push((path, format!("{relative}/")));
                continue;
            } else if kind.is_symlink() {
                "symbolic link".to_owned()
            } else if kind.is_fifo() {
                "named pipe".to_owned()
            } else if kind.is_socket() {
                "socket".to_owned()
            } else if kind.is_block_device() || kind.is_char_device() {
                "device file".to_owned()
            } else if !kind.is_file() {
                "not a regular file".to_owned()
            } else if let Err(e) = crate::path::check_name_limits(&relative) {
                e.to_string()
            } else {
                regular.push((relative, path, metadata));
                continue;
            };
            snapshot
                .refused
                .push(format!("{}: {reason}", shorten(&relative)));
        }
    }
    regular.sort_by(|a, b| a.0.cmp(&b.0));
    let mut back_bytes = 0u64;
    // Why a new or changed file of `size` bytes cannot come back, if it cannot.
    let over_cap = |count: usize, back: u64, size: u64| {
        if count >= limits.max_files_back {
            Some(format!(
                "not brought back, at most {} new or changed files are brought back per run",
                limits.max_files_back
            ))
        } else if back.saturating_add(size) > limits.max_bytes_back {
            Some(format!(
                "not brought back, at most {} of new or changed files are brought back per run",
                show_bytes(limits.max_bytes_back)
            ))
        } else {
            None
        }
    };
    for (relative, path, metadata) in regular {
        let original = inputs.get(&relative);
        // A regular file that is not brought back still exists: not deleted.
        snapshot.present.insert(relative.clone());
        // Refused before reading when it cannot be an unchanged input, so
        // that a flood of files is never read into memory.
        let maybe_unchanged = original.is_some_and(|o| o.len() as u64 == metadata.len());
        if !maybe_unchanged
            && metadata.len() <= limits.max_file_bytes
            && let Some(reason) = over_cap(snapshot.written.len(), back_bytes, metadata.len())
        {
            snapshot.refused.push(format!("{relative}: {reason}"));
            continue;
        }
        let bytes = match read_regular_file(&path, &metadata, original, limits.max_file_bytes) {
            Ok(bytes) => bytes,
            Err(reason) => {
                snapshot.refused.push(format!("{relative}: {reason}"));
                continue;
            }
        };
        if original == Some(&bytes) {
            continue;
        }
        let size = bytes.len() as u64;
        match over_cap(snapshot.written.len(), back_bytes, size) {
            Some(reason) => snapshot.refused.push(format!("{relative}: {reason}")),
            None => {
                back_bytes += size;
                snapshot.written.insert(relative, bytes);
            }
        }
    }
    snapshot.refused.sort();
    snapshot
}

/// Reads a file that `symlink_metadata` called regular, refusing it if it is
/// too big or if the path was swapped for something else in the meantime.
pub(super) fn read_regular_file(
    path: &Path,
    metadata: &fs::Metadata,
    original: Option<&Vec<u8>>,
    max_file_bytes: u64,
) -> Result<Vec<u8>, String> {
    // An unchanged oversized input is not news; only new big content is refused.
    let limit = match original {
        Some(bytes) if bytes.len() as u64 == metadata.len() => max_file_bytes.max(metadata.len()),
        _ => max_file_bytes,
    };
    if metadata.len() > limit {
        return Err(format!("larger than {max_file_bytes} bytes"));
    }
    let file = fs::File::open(path).map_err(|e| format!("could not be read ({e})"))?;
    let opened = file
        .metadata()
        .map_err(|e| format!("could not be read ({e})"))?;
    if !opened.is_file() || opened.dev() != metadata.dev() || opened.ino() != metadata.ino() {
        return Err("changed while being read".to_owned());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not be read ({e})"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {max_file_bytes} bytes"));
    }
    Ok(bytes)
}
