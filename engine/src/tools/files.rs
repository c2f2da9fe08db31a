//! File tools over the two confined roots.

use base64::Engine;
use bevy_ecs::prelude::*;
use serde_json::{Value, json};

use super::{Attachment, ErrorKind, ToolError, ToolOutcome};
use crate::path::{PathError, VPath, check_name_limits};
use crate::world::{History, Index, Input, file_bytes, put_file, touch};

/// Largest file the agent may write or read as text.
const MAX_TEXT_BYTES: usize = 1 << 20;

fn parse(p: &str) -> Result<VPath, ToolError> {
    VPath::parse(p).map_err(|e| {
        let kind = if matches!(e, PathError::Empty) {
            ErrorKind::Schema
        } else {
            ErrorKind::Path
        };
        ToolError::new(kind, e.to_string())
    })
}

fn is_folder(world: &World, p: &VPath) -> bool {
    p.is_root() || world.resource::<Index>().folders.contains_key(p.as_str())
}

/// Drive files that a colleague's clue points to and that the agent has not yet been
/// told about (no clue naming the path disclosed, never read by its exact path).
/// When a task makes "ask X where the manual is" its point, listing the drive must not
/// shortcut that step, so such files stay out of `list_folder` until the colleague has
/// named them; `read_file` of the exact path always works.
fn unlisted(world: &mut World) -> std::collections::BTreeSet<String> {
    remember_mentions(world);
    let history = world.resource::<History>();
    let idx = world.resource::<Index>();
    let mentions = world.resource::<Mentions>();
    idx.files
        .keys()
        .filter(|p| p.starts_with("drive/") && !history.consulted.contains(p.as_str()))
        .filter(|p| {
            mentions.by_path.get(p.as_str()).is_some_and(|keys| {
                !keys.is_empty() && !keys.iter().any(|k| history.disclosed.contains_key(k))
            })
        })
        .cloned()
        .collect()
}

/// For each drive path seen so far, the keys of the clues whose reply names it.
/// Clues are fixed when the world is built, so a path's entry never goes stale; it
/// is computed once per path instead of on every listing (the substring searches
/// were most of a long run's replay time).
#[derive(Resource, Default)]
struct Mentions {
    by_path: std::collections::BTreeMap<String, Vec<String>>,
}

/// Adds to [`Mentions`] the drive paths it does not hold yet.
fn remember_mentions(world: &mut World) {
    let known = world.get_resource::<Mentions>();
    let missing: Vec<String> = world
        .resource::<Index>()
        .files
        .keys()
        .filter(|p| p.starts_with("drive/"))
        .filter(|p| known.is_none_or(|m| !m.by_path.contains_key(p.as_str())))
        .cloned()
        .collect();
    if missing.is_empty() && known.is_some() {
        return;
    }
    let mut pointed: Vec<(String, String)> = Vec::new();
    let mut q = world.query::<&crate::world::Npc>();
    for npc in q.iter(world) {
        for c in npc.clues.iter() {
            pointed.push((c.key.clone(), c.response.clone()));
        }
    }
    let found: Vec<(String, Vec<String>)> = missing
        .into_iter()
        .map(|p| {
            let keys = pointed
                .iter()
                .filter(|(_, r)| mentions_path(r, &p))
                .map(|(k, _)| k.clone())
                .collect();
            (p, keys)
        })
        .collect();
    let mut m = world.get_resource_or_insert_with(Mentions::default);
    m.by_path.extend(found);
}

/// Whether `text` names `path` as a whole path (not as the prefix of a longer one).
fn mentions_path(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(i, _)| {
        let end = i + path.len();
        let before_ok = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-'));
        let after_ok = text[end..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-'));
        before_ok && after_ok
    })
}

/// Immediate children of a folder: (name, is_folder, size), leaving out `hidden`
/// files and folders that hold nothing else.
fn children(
    world: &World,
    dir: &VPath,
    hidden: &std::collections::BTreeSet<String>,
) -> Vec<(String, bool, usize)> {
    let idx = world.resource::<Index>();
    let prefix = format!("{}/", dir.as_str());
    let mut out: Vec<(String, bool, usize)> = Vec::new();
    // Folders whose every file is hidden are left out too (their files name them).
    let mut only_hidden: Vec<String> = Vec::new();
    for (path, e) in idx.files.range(prefix.clone()..) {
        let Some(rest) = path.strip_prefix(&prefix) else {
            break;
        };
        if hidden.contains(path.as_str()) {
            if let Some((folder, _)) = rest.split_once('/') {
                only_hidden.push(folder.to_owned());
            }
            continue;
        }
        match rest.split_once('/') {
            Some((folder, _)) => {
                if out.last().is_none_or(|l| l.0 != folder) {
                    out.push((folder.to_owned(), true, 0));
                }
            }
            None => {
                let size = world
                    .get::<crate::world::File>(*e)
                    .map_or(0, |f| f.bytes.len());
                out.push((rest.to_owned(), false, size));
            }
        }
    }
    // Empty folders have no files below them.
    for path in idx.folders.range(prefix.clone()..).map(|(p, _)| p) {
        let Some(rest) = path.strip_prefix(&prefix) else {
            break;
        };
        if !rest.contains('/')
            && !out.iter().any(|o| o.0 == rest)
            && !only_hidden.iter().any(|h| h == rest)
        {
            out.push((rest.to_owned(), true, 0));
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

pub(super) fn list_folder(world: &mut World, path: Option<&str>) -> ToolOutcome {
    let p = path.map(str::trim).unwrap_or("");
    if p.is_empty() || p == "." || p == "./" {
        return Ok(json!({"path": "", "entries": [
            {"name": "drive/", "kind": "folder", "about": "shared drive (read-only)"},
            {"name": "workspace/", "kind": "folder", "about": "your own files"}]}));
    }
    let dir = parse(p)?;
    if !is_folder(world, &dir) {
        return Err(
            if world.resource::<Index>().files.contains_key(dir.as_str()) {
                ToolError::new(
                    ErrorKind::Invalid,
                    format!("`{dir}` is a file; use read_file"),
                )
            } else {
                ToolError::new(
                    ErrorKind::NotFound,
                    format!("no folder `{dir}`; list its parent to see what exists"),
                )
            },
        );
    }
    let hidden = unlisted(world);
    let entries: Vec<Value> = children(world, &dir, &hidden)
        .into_iter()
        .map(|(name, folder, size)| {
            if folder {
                json!({"name": format!("{name}/"), "kind": "folder"})
            } else {
                json!({"name": name, "kind": "file", "bytes": size})
            }
        })
        .collect();
    Ok(json!({"path": dir.as_str(), "entries": entries}))
}

fn mime_of(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

pub(super) fn read_file(
    world: &mut World,
    path: &str,
) -> Result<(Value, Vec<Attachment>), ToolError> {
    let p = parse(path)?;
    if is_folder(world, &p) {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("`{p}` is a folder; use list_folder"),
        ));
    }
    let Some(bytes) = file_bytes(world, p.as_str()).map(<[u8]>::to_vec) else {
        return Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no file `{p}`; use list_folder to see what exists"),
        ));
    };
    if p.is_drive() {
        world
            .resource_mut::<History>()
            .consulted
            .insert(p.as_str().to_owned());
        touch(world, Input::Consulted(p.as_str().to_owned()));
    }
    if let Some(mime) = mime_of(&bytes) {
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Ok((
            json!({"path": p.as_str(), "kind": "image", "mime": mime, "bytes": bytes.len(), "note": "the image is attached"}),
            vec![Attachment {
                mime: mime.to_owned(),
                data,
            }],
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) if text.len() <= MAX_TEXT_BYTES => {
            Ok((json!({"path": p.as_str(), "content": text}), Vec::new()))
        }
        Ok(text) => Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "`{p}` is {} bytes, over the {MAX_TEXT_BYTES}-byte read limit; copy it and process it with run_python",
                text.len()
            ),
        )),
        Err(e) => Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "`{p}` is a binary file of {} bytes; copy it to your workspace and use run_python",
                e.as_bytes().len()
            ),
        )),
    }
}

fn writable(world: &World, p: &VPath) -> Result<(), ToolError> {
    if p.is_drive() {
        return Err(ToolError::new(
            ErrorKind::Permission,
            "the shared drive is read-only; write under `workspace/`",
        ));
    }
    if is_folder(world, p) {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("`{p}` is a folder; name a file inside it"),
        ));
    }
    // The same name limits as the run_python sandbox, which must be able to
    // create every workspace file.
    check_name_limits(p.relative()).map_err(|e| {
        ToolError::new(
            ErrorKind::Path,
            format!("{e}; workspace names are limited so that run_python can copy them"),
        )
    })?;
    // A file cannot sit where a folder is implied, nor below a file.
    let idx = world.resource::<Index>();
    let mut prefix = String::new();
    for part in p.as_str().split('/') {
        if !prefix.is_empty() {
            if idx.files.contains_key(&prefix) {
                return Err(ToolError::new(
                    ErrorKind::Invalid,
                    format!("`{prefix}` is a file, so nothing can be placed below it"),
                ));
            }
            prefix.push('/');
        }
        prefix.push_str(part);
    }
    Ok(())
}

pub(super) fn write_file(world: &mut World, path: &str, content: &str) -> ToolOutcome {
    let p = parse(path)?;
    writable(world, &p)?;
    if content.len() > MAX_TEXT_BYTES {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("the content is over {MAX_TEXT_BYTES} bytes"),
        ));
    }
    let existed = world.resource::<Index>().files.contains_key(p.as_str());
    put_file(world, &p, content.as_bytes().to_vec());
    Ok(json!({"path": p.as_str(), "bytes": content.len(), "created": !existed}))
}

pub(super) fn copy_from_drive(world: &mut World, path: &str, to: Option<&str>) -> ToolOutcome {
    let src = parse(path)?;
    if !src.is_drive() {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "`{src}` is not on the drive; copy_from_drive copies `drive/...` into `workspace/...`"
            ),
        ));
    }
    let src_is_folder = is_folder(world, &src);
    if !src_is_folder && !world.resource::<Index>().files.contains_key(src.as_str()) {
        return Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no file or folder `{src}` on the drive; use list_folder"),
        ));
    }
    let ws = VPath::parse("workspace").expect("root");
    let dest = match to {
        None => ws
            .join(src.file_name())
            .map_err(|e| ToolError::new(ErrorKind::Path, e.to_string()))?,
        Some(t) => {
            let d = parse(t)?;
            if !d.is_workspace() {
                return Err(ToolError::new(
                    ErrorKind::Permission,
                    "copies go into your workspace; use a `workspace/...` destination",
                ));
            }
            if t.trim_end().ends_with('/') || is_folder(world, &d) {
                d.join(src.file_name())
                    .map_err(|e| ToolError::new(ErrorKind::Path, e.to_string()))?
            } else {
                d
            }
        }
    };
    // (source, destination) pairs, sorted by source.
    let pairs: Vec<(String, VPath)> = if src_is_folder {
        // A folder copies what `list_folder` shows of it and nothing more: copying a
        // parent folder must not bring in a file a colleague has yet to point to
        // (issue 25). The exact path of such a file still copies, as it still reads.
        let hidden = unlisted(world);
        let prefix = format!("{}/", src.as_str());
        let sources: Vec<String> = world
            .resource::<Index>()
            .files
            .range(prefix.clone()..)
            .map(|(k, _)| k.clone())
            .take_while(|k| k.starts_with(&prefix))
            .filter(|k| !hidden.contains(k.as_str()))
            .collect();
        sources
            .into_iter()
            .map(|s| {
                let rel = s[prefix.len()..].to_owned();
                dest.join(&rel)
                    .map(|d| (s, d))
                    .map_err(|e| ToolError::new(ErrorKind::Path, e.to_string()))
            })
            .collect::<Result<_, _>>()?
    } else {
        vec![(src.as_str().to_owned(), dest.clone())]
    };
    for (_, d) in &pairs {
        writable(world, d)?;
    }
    let mut copied = Vec::new();
    for (s, d) in pairs {
        let bytes = file_bytes(world, &s)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        put_file(world, &d, bytes);
        world.resource_mut::<History>().consulted.insert(s.clone());
        touch(world, Input::Consulted(s));
        copied.push(d.as_str().to_owned());
    }
    Ok(json!({"copied": copied}))
}
