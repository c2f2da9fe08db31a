//! A static export of recorded runs: `tbsim view RUN… --export DIR`.
//!
//! The export is the console's own page with the answers to its API requests
//! written beside it, so it opens from disk (`file://`) or any static host with no
//! server. A page opened from disk may not `fetch()` local files, so the answers
//! are JavaScript files that hand their JSON to the page (`TBSIM_STATIC.index(…)`,
//! `TBSIM_STATIC.run(…)`), loaded with `<script>` elements, which the strict
//! content security policy allows (`script-src 'self'`); `assets/static.js` answers
//! the page's requests from them.
//!
//! ```text
//! DIR/index.html              the page (classic scripts, a CSP <meta>)
//! DIR/assets/…                the console's script and style, static.js
//! DIR/data/index.js           info, the runs list, each run's detail, the tool
//!                             catalogue, comparisons
//! DIR/data/run-<n>.js         run n's worlds (as changes, see `Worlds`), where its
//!                             timeline pages start, its messages (a model run)
//! DIR/data/run-<n>-tl-<k>.js  page k of its timeline (TIMELINE_PAGE entries)
//! DIR/data/run-<n>-files-<k>.js  file versions' bytes (about 2 MB a file)
//! ```
//!
//! Each file is loaded when the page first needs it, so a long run opens with
//! its worlds and the timeline pages shown first, and the export is about the
//! size of the trajectories (worlds store each distinct value once and each step
//! only what changed).
//!
//! What is written is what the read-only console shows for a recorded run without
//! answers: everything passes through [`tbsim_engine::inspect`] with `answers`
//! off, run directories are named by their id, never their host path, and forking
//! (which needs a server) is not offered.
//!
//! Comparisons are precomputed: every pair of runs of one scenario (both ways
//! round), each scenario's whole group (up to [`super::compare::MAX_RUNS`] runs),
//! and every pair of batches (both ways round); the page says when a comparison
//! asked for is not in the export.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value, json};

use super::{Console, Found, RunKind};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Writing the site failed.
    #[error("cannot write `{0}`: {1}")]
    Write(PathBuf, std::io::Error),
    /// The directory exists and is not empty (an export never overwrites).
    #[error("`{0}` exists and is not empty; export into a new or empty directory")]
    NotEmpty(PathBuf),
    /// A run could not be read (named by its id).
    #[error("cannot export run `{0}`: {1}")]
    Run(String, String),
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// Runs written.
    pub runs: usize,
    /// Comparisons precomputed.
    pub comparisons: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// At most this many comparisons are precomputed (pairs grow quadratically).
pub const MAX_COMPARISONS: usize = 64;

/// The page of an export: the console's page, its scripts loaded as classic
/// scripts (module scripts are refused from `file://`) by relative paths, and its
/// policy in a `<meta>` (no server sends headers).
const INDEX_HTML: &str = include_str!("assets/export.html");

const STATIC_JS: &str = include_str!("assets/static.js");

/// Timeline entries per page file (the page asks for 120, then 400 at a time).
pub const TIMELINE_PAGE: usize = 400;

/// A file-bytes file is closed once it holds this many bytes (base64).
pub const BLOB_FILE_BYTES: usize = 2 << 20;

/// Interns JSON values: each distinct value once, referred to by index.
#[derive(Default)]
struct Interner {
    values: Vec<Value>,
    index: BTreeMap<String, usize>,
}

impl Interner {
    fn add(&mut self, v: Value) -> usize {
        let key = v.to_string();
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        self.values.push(v);
        self.index.insert(key, self.values.len() - 1);
        self.values.len() - 1
    }
}

/// File versions: content type and bytes, each stored once, in files of about
/// [`BLOB_FILE_BYTES`] (a file's bytes are loaded when it is opened).
#[derive(Default)]
struct Blobs {
    /// Closed and open chunks: `[content type, base64]` each.
    chunks: Vec<Vec<Value>>,
    open_bytes: usize,
    index: BTreeMap<[u8; 32], (usize, usize)>,
}

impl Blobs {
    /// Where `bytes` is stored: `(chunk, index in it)`.
    fn add(&mut self, bytes: &[u8], content_type: &'static str) -> (usize, usize) {
        let mut h = blake3::Hasher::new();
        h.update(content_type.as_bytes());
        h.update(&[0]);
        h.update(bytes);
        let key = *h.finalize().as_bytes();
        if let Some(at) = self.index.get(&key) {
            return *at;
        }
        if self.chunks.is_empty() || self.open_bytes >= BLOB_FILE_BYTES {
            self.chunks.push(Vec::new());
            self.open_bytes = 0;
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.open_bytes += b64.len();
        let chunk = self.chunks.len() - 1;
        self.chunks[chunk].push(json!([content_type, b64]));
        let at = (chunk, self.chunks[chunk].len() - 1);
        self.index.insert(key, at);
        at
    }
}

/// A run's worlds, one per step, stored as changes: each distinct task, file
/// entry, calendar entry, chat thread (without its messages), chat message and
/// file version (path and where its bytes are) once in `items`; a step lists the
/// items of each part only when that part changed since the step before; a chat
/// thread's messages are a prefix of its log (messages are only ever added), so a
/// step says how many. `static.js` rebuilds a step's world from this.
#[derive(Default)]
struct Worlds {
    items: Interner,
    logs: BTreeMap<String, Vec<usize>>,
    steps: Vec<Value>,
    last: BTreeMap<&'static str, Value>,
}

impl Worlds {
    fn ids(&mut self, v: Option<Value>) -> Value {
        match v {
            Some(Value::Array(xs)) => Value::from(
                xs.into_iter()
                    .map(|x| self.items.add(x))
                    .collect::<Vec<_>>(),
            ),
            _ => json!([]),
        }
    }

    /// A thread's `[thread item, messages]`: `messages` a count of its log, or the
    /// message items when they are not a prefix of it.
    fn thread(&mut self, t: Value) -> Value {
        let Value::Object(mut t) = t else {
            return json!([self.items.add(t), 0]);
        };
        let messages = match t.remove("messages") {
            Some(Value::Array(ms)) => ms,
            _ => Vec::new(),
        };
        let key = t
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let meta = self.items.add(Value::Object(t));
        let ids: Vec<usize> = messages.into_iter().map(|m| self.items.add(m)).collect();
        let log = self.logs.entry(key).or_default();
        let shared = log.iter().zip(&ids).take_while(|(a, b)| a == b).count();
        if shared == log.len() {
            log.extend_from_slice(&ids[shared..]);
            json!([meta, ids.len()])
        } else if shared == ids.len() {
            json!([meta, ids.len()])
        } else {
            json!([meta, ids])
        }
    }

    fn add(&mut self, mut view: serde_json::Map<String, Value>, files: Vec<Value>) {
        let mut step = serde_json::Map::new();
        let mut parts: Vec<(&'static str, Value)> = Vec::new();
        for k in ["tasks", "files", "calendar"] {
            let v = view.remove(k);
            parts.push((k, self.ids(v)));
        }
        let chats = match view.remove("chats") {
            Some(Value::Array(ts)) => ts.into_iter().map(|t| self.thread(t)).collect(),
            _ => Vec::new(),
        };
        parts.push(("chats", Value::from(chats)));
        parts.push(("file_bytes", self.ids(Some(Value::from(files)))));
        for (k, v) in parts {
            if self.last.get(k) != Some(&v) {
                self.last.insert(k, v.clone());
                step.insert(k.to_owned(), v);
            }
        }
        step.insert("view".into(), Value::Object(view));
        self.steps.push(Value::Object(step));
    }
}

/// A run's data: its meta and worlds (one file), its timeline in pages and its
/// files' bytes in chunks (files of their own, loaded when asked for).
struct RunData {
    meta: Value,
    pages: Vec<Value>,
    blobs: Vec<Vec<Value>>,
}

/// Run `found`'s data: its timeline, its world after every step (0 to its last),
/// and every file version those worlds list.
fn run_data(console: &Console, id: &str, dir: &Path) -> Result<RunData, ExportError> {
    let fail =
        |m: String| ExportError::Run(id.to_owned(), m.replace(&dir.display().to_string(), id));
    let epoch = console.epoch(dir).map_err(|e| fail(e.to_string()))?;
    let mut timeline =
        tbsim_engine::inspect::entries_from(&dir.join("trajectory.jsonl"), 0, &epoch, false)
            .map_err(|e| fail(e.to_string()))?;
    let has_model = timeline
        .lines
        .iter()
        .any(|l| l.get("type").and_then(Value::as_str) == Some("model"));
    let messages = if has_model {
        Some(super::messages::conversation(&timeline.lines))
    } else {
        None
    };
    for l in &mut timeline.lines {
        super::messages::with_reply(l);
    }
    // One world advanced step by step (a replay from the start per step would be
    // quadratic in a long run's length).
    let replayer = tbsim_engine::replay::Replayer::open(dir).map_err(|e| fail(e.to_string()))?;
    let last = replayer.steps;
    let mut cursor = Some(replayer.cursor());
    let mut blobs = Blobs::default();
    let mut worlds = Worlds::default();
    for step in 0..=last {
        let mut c = cursor.take().expect("a world until the last step");
        replayer
            .advance(&mut c, step)
            .map_err(|e| fail(e.to_string()))?;
        // As `world_at`: a finished run's last step looks as the run ended (the
        // world is then no step's any more: it is the last one).
        let settled;
        let sim = if step == last {
            let mut sim = c.into_sim();
            tbsim_engine::inspect::settle_sim(&mut sim, &replayer.recorded, last);
            settled = sim;
            &settled
        } else {
            cursor = Some(c);
            cursor.as_ref().expect("just kept").sim()
        };
        let view = tbsim_engine::inspect::world_view(sim, &replayer.loaded, last, false);
        let mut files = Vec::new();
        for f in &view.files {
            if let Some((bytes, ct)) = tbsim_engine::inspect::file_bytes(sim, &f.path) {
                let (chunk, i) = blobs.add(&bytes, ct);
                files.push(json!([f.path, chunk, i]));
            }
        }
        let Ok(Value::Object(obj)) = serde_json::to_value(&view) else {
            return Err(fail("its world does not serialise".into()));
        };
        worlds.add(obj, files);
    }
    let firsts: Vec<Value> = timeline
        .lines
        .chunks(TIMELINE_PAGE)
        .map(|p| p[0].get("i").cloned().unwrap_or(Value::Null))
        .collect();
    let pages: Vec<Value> = timeline
        .lines
        .chunks(TIMELINE_PAGE)
        .map(|p| Value::from(p.to_vec()))
        .collect();
    Ok(RunData {
        meta: json!({
            "timeline": {
                "pages": firsts,
                "next": timeline.next,
                "finished": timeline.finished,
                "total": timeline.total,
            },
            "worlds": { "items": worlds.items.values, "logs": worlds.logs, "steps": worlds.steps },
            "blob_files": blobs.chunks.len(),
            "messages": messages,
        }),
        pages,
        blobs: blobs.chunks,
    })
}

/// A script handing `value` to `TBSIM_STATIC.<method>` after the arguments `keys`.
/// JSON is JavaScript; the two line separators JSON allows in strings are escaped
/// all the same.
fn script(method: &str, keys: &[Value], value: &Value) -> String {
    let text = value
        .to_string()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    let mut args: Vec<String> = keys.iter().map(Value::to_string).collect();
    args.push(text);
    format!("TBSIM_STATIC.{method}({});\n", args.join(", "))
}

fn write(path: &Path, bytes: &[u8], total: &mut u64) -> Result<(), ExportError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ExportError::Write(parent.to_owned(), e))?;
    }
    std::fs::write(path, bytes).map_err(|e| ExportError::Write(path.to_owned(), e))?;
    *total += bytes.len() as u64;
    Ok(())
}

/// The comparisons an export holds, by the query the page sends (`runs=a,b` or
/// `batches=A,B`), in a fixed order.
fn comparisons(console: &Console) -> BTreeMap<String, Value> {
    let runs: Vec<(&str, &str)> = console
        .fixed
        .iter()
        .filter(|f| f.kind == RunKind::Recorded)
        .map(|f| (f.id.as_str(), f.scenario.as_str()))
        .collect();
    let mut by_scenario: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, scen) in &runs {
        by_scenario.entry(scen).or_default().push(id);
    }
    let mut wanted: Vec<Vec<String>> = Vec::new();
    for ids in by_scenario.values() {
        for (i, a) in ids.iter().enumerate() {
            // Both ways round: the first run picked is the baseline.
            for b in &ids[i + 1..] {
                wanted.push(vec![(*a).to_owned(), (*b).to_owned()]);
                wanted.push(vec![(*b).to_owned(), (*a).to_owned()]);
            }
        }
        if ids.len() > 2 && ids.len() <= super::compare::MAX_RUNS {
            wanted.push(ids.iter().map(|s| (*s).to_owned()).collect());
        }
    }
    let mut out = BTreeMap::new();
    for ids in wanted.into_iter().take(MAX_COMPARISONS) {
        // A pair that cannot be compared (a cut-off run, say) is just left out.
        if let Ok(c) = console.compare(&ids)
            && let Ok(v) = serde_json::to_value(c)
        {
            out.insert(format!("runs={}", ids.join(",")), v);
        }
    }
    let batches: Vec<String> = super::compare::batches_of(runs.iter().map(|(id, _)| *id))
        .into_keys()
        .collect();
    let mut pairs = 0;
    for (i, a) in batches.iter().enumerate() {
        for b in &batches[i + 1..] {
            if pairs >= MAX_COMPARISONS {
                break;
            }
            // Both orders: the page offers either batch as the baseline.
            for (x, y) in [(a, b), (b, a)] {
                let labels = vec![x.clone(), y.clone()];
                if let Ok(c) = console.compare_batches(&labels)
                    && let Ok(v) = serde_json::to_value(c)
                {
                    out.insert(format!("batches={x},{y}"), v);
                }
            }
            pairs += 1;
        }
    }
    out
}

impl Console {
    /// Writes the static export of this console's recorded runs into `dir` (new or
    /// empty; see the module docs).
    pub fn export(&self, dir: &Path) -> Result<Exported, ExportError> {
        if let Ok(mut entries) = std::fs::read_dir(dir)
            && entries.next().is_some()
        {
            return Err(ExportError::NotEmpty(dir.to_owned()));
        }
        let mut total = 0;
        write(&dir.join("index.html"), INDEX_HTML.as_bytes(), &mut total)?;
        for (name, text) in super::routes::ASSETS {
            write(&dir.join("assets").join(name), text.as_bytes(), &mut total)?;
        }
        write(
            &dir.join("assets").join("static.js"),
            STATIC_JS.as_bytes(),
            &mut total,
        )?;
        let fixed: Vec<_> = self
            .fixed
            .iter()
            .filter(|f| f.kind == RunKind::Recorded)
            .cloned()
            .collect();
        let mut summaries = Vec::new();
        let mut details = serde_json::Map::new();
        let mut files = serde_json::Map::new();
        for (n, f) in fixed.iter().enumerate() {
            let d = self.detail_of(&Found::Fixed(f.clone()));
            summaries.push(d.summary.clone());
            let data = run_data(self, &f.id, &f.dir)?;
            let name = format!("run-{n}.js");
            let id = Value::from(f.id.as_str());
            write(
                &dir.join("data").join(&name),
                script("run", std::slice::from_ref(&id), &data.meta).as_bytes(),
                &mut total,
            )?;
            for (k, page) in data.pages.iter().enumerate() {
                write(
                    &dir.join("data").join(format!("run-{n}-tl-{k}.js")),
                    script("page", &[id.clone(), Value::from(k)], page).as_bytes(),
                    &mut total,
                )?;
            }
            for (k, chunk) in data.blobs.into_iter().enumerate() {
                write(
                    &dir.join("data").join(format!("run-{n}-files-{k}.js")),
                    script("blobs", &[id.clone(), Value::from(k)], &Value::from(chunk)).as_bytes(),
                    &mut total,
                )?;
            }
            details.insert(
                f.id.clone(),
                serde_json::to_value(&d)
                    .map_err(|e| ExportError::Run(f.id.clone(), e.to_string()))?,
            );
            files.insert(f.id.clone(), Value::from(format!("data/run-{n}")));
        }
        let compares = comparisons(self);
        let index = json!({
            "info": {
                "mode": "view",
                "read_only": true,
                "answers_allowed": false,
                "can_start": false,
                "static": true,
                "scenarios": [],
                "agents": [],
                "version": env!("CARGO_PKG_VERSION"),
            },
            "runs": summaries,
            "details": details,
            "files": files,
            "tools": tbsim_core::protocol::catalogue(),
            "compare": compares,
        });
        write(
            &dir.join("data").join("index.js"),
            script("index", &[], &index).as_bytes(),
            &mut total,
        )?;
        Ok(Exported {
            runs: fixed.len(),
            comparisons: compares.len(),
            bytes: total,
        })
    }
}
