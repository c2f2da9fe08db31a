//! Capturing the script's stdout and stderr: bounded, scrubbed of temporary
//! paths, truncated with a marker.

use super::*;

/// Drains one pipe on its own thread so a chatty script never blocks on a
/// full pipe, keeping only the first `cap` bytes.
#[derive(Debug)]
pub(super) struct Reader {
    pub(super) captured: Arc<Mutex<Captured>>,
    pub(super) handle: JoinHandle<()>,
}

#[derive(Debug, Default)]
pub(super) struct Captured {
    pub(super) bytes: Vec<u8>,
    pub(super) truncated: bool,
}

impl Reader {
    pub(super) fn spawn(mut pipe: impl Read + Send + 'static, cap: usize) -> Self {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let sink = Arc::clone(&captured);
        let handle = thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            loop {
                let n = match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut sink = sink.lock().unwrap_or_else(|p| p.into_inner());
                let keep = n.min(cap.saturating_sub(sink.bytes.len()));
                sink.bytes.extend_from_slice(&buffer[..keep]);
                sink.truncated |= keep < n;
            }
        });
        Self { captured, handle }
    }

    /// Decodes, scrubs temporary paths and truncates. A reader that has not
    /// finished is abandoned (its thread ends when the pipe finally closes).
    pub(super) fn finish(self, replacements: &[(String, &'static str)], max: usize) -> String {
        let finished = self.handle.is_finished();
        if finished {
            let _ = self.handle.join();
        }
        let captured = self.captured.lock().unwrap_or_else(|p| p.into_inner());
        let truncated = captured.truncated || !finished;
        let mut text = String::from_utf8_lossy(&captured.bytes).into_owned();
        drop(captured);
        if truncated {
            strip_partial_path(&mut text, replacements);
        }
        for (from, to) in replacements {
            text = replace_path(&text, from, to);
        }
        truncate_output(text, truncated, max)
    }
}

/// Waits until every reader has seen end-of-file, or `grace` passes.
pub(super) fn wait_for_readers(readers: &[&Option<Reader>], grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        let done = readers
            .iter()
            .all(|r| r.as_ref().is_none_or(|r| r.handle.is_finished()));
        if done {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Sandbox paths to hide from the agent, longest first so that the
/// workspace form wins over the bare root: "<root>/ws/a.csv" -> "./a.csv",
/// "<root>/sandbox/script.py" -> "./script.py". Inside bubblewrap the paths
/// are fixed ("/workspace", "/sandbox"), but the host ones can still show up
/// in bubblewrap's own messages.
pub(super) fn path_replacements(root: &Path, bubblewrap: bool) -> Vec<(String, &'static str)> {
    let mut roots = vec![root.to_string_lossy().into_owned()];
    if let Ok(canonical) = root.canonicalize() {
        roots.push(canonical.to_string_lossy().into_owned());
    }
    roots.dedup();
    let mut pairs: Vec<(String, &'static str)> = roots
        .iter()
        .flat_map(|r| {
            [
                (format!("{r}/ws"), "."),
                (format!("{r}/sandbox"), "."),
                (r.clone(), "."),
            ]
        })
        .collect();
    if bubblewrap {
        pairs.push((WORKSPACE_MOUNT.to_owned(), "."));
        pairs.push((SCRIPT_MOUNT.to_owned(), "."));
    }
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    pairs
}

/// Replaces `from` only where it is a whole path: not preceded by a name
/// character or '/', and not followed by more of a file name, so that
/// "/workspace/a.csv" and "'/workspace'" change but "/workspaces" or
/// "/x/workspace" do not.
pub(super) fn replace_path(text: &str, from: &str, to: &str) -> String {
    pub(super) fn name_char(c: char) -> bool {
        c.is_alphanumeric() || c == '_' || c == '-'
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, _) in text.match_indices(from) {
        if start < copied {
            continue;
        }
        let end = start + from.len();
        let before = text[..start].chars().next_back();
        let mut after = text[end..].chars();
        let whole = !before.is_some_and(|c| name_char(c) || c == '.' || c == '/')
            && match after.next() {
                Some('.') => !after.next().is_some_and(|c| name_char(c) || c == '.'),
                Some(c) => !name_char(c),
                None => true,
            };
        if whole {
            out.push_str(&text[copied..start]);
            out.push_str(to);
            copied = end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// When capture stopped mid-path, the random part of the temporary name
/// would survive replacement; drop that fragment so output stays stable.
pub(super) fn strip_partial_path(text: &mut String, replacements: &[(String, &'static str)]) {
    let longest = replacements
        .iter()
        .filter_map(|(path, _)| {
            (1..path.len())
                .rev()
                .find(|&k| path.is_char_boundary(k) && text.ends_with(&path[..k]))
        })
        .max();
    if let Some(k) = longest {
        text.truncate(text.len() - k);
    }
}

pub(super) fn truncate_output(mut text: String, truncated: bool, max: usize) -> String {
    if !truncated && text.len() <= max {
        return text;
    }
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(TRUNCATION_MARKER);
    text.push('\n');
    text
}
