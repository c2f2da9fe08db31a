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
//! DIR/index.html            the page (classic scripts, a CSP <meta>)
//! DIR/assets/…              the console's script and style, static.js
//! DIR/data/index.js         info, the runs list, each run's detail, the tool
//!                           catalogue, comparisons
//! DIR/data/run-<n>.js       run n's timeline, its world after every step and the
//!                           bytes of every file version shown (loaded when opened)
//! ```
//!
//! What is written is what the read-only console shows for a recorded run without
//! answers: everything passes through [`tbsim_engine::inspect`] with `answers`
//! off, run directories are named by their id, never their host path, and forking
//! (which needs a server) is not offered.
//!
//! Comparisons are precomputed: every pair of runs of one scenario (both ways
//! round), each scenario's
//! whole group (up to [`super::compare::MAX_RUNS`] runs), and every pair of
//! batches; the page says when a comparison asked for is not in the export.
//!
//! Worlds are kept small by interning: a world is stored as its per-step figures
//! and indices into a table of distinct tasks, files, chats and calendar values,
//! which change at few steps.

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

/// A file version: content type and bytes, stored once.
#[derive(Default)]
struct Blobs {
    list: Vec<(String, String)>,
    index: BTreeMap<(&'static str, Vec<u8>), usize>,
}

impl Blobs {
    fn add(&mut self, bytes: Vec<u8>, content_type: &'static str) -> usize {
        if let Some(i) = self.index.get(&(content_type, bytes.clone())) {
            return *i;
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        self.list.push((content_type.to_owned(), b64));
        self.index
            .insert((content_type, bytes), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// World keys stored through the interner (the rest are per-step figures).
const INTERNED: &[&str] = &["tasks", "files", "chats", "calendar"];

/// Run `found`'s data file: its timeline, its world after every step (0 to its
/// last), and every file version those worlds list.
fn run_data(console: &Console, id: &str, dir: &Path) -> Result<Value, ExportError> {
    let fail =
        |m: String| ExportError::Run(id.to_owned(), m.replace(&dir.display().to_string(), id));
    let epoch = console.epoch(dir).map_err(|e| fail(e.to_string()))?;
    let timeline =
        tbsim_engine::inspect::entries_from(&dir.join("trajectory.jsonl"), 0, &epoch, false)
            .map_err(|e| fail(e.to_string()))?;
    // One world advanced step by step (a replay from the start per step would be
    // quadratic in a long run's length).
    let replayer = tbsim_engine::replay::Replayer::open(dir).map_err(|e| fail(e.to_string()))?;
    let last = replayer.steps;
    let mut cursor = Some(replayer.cursor());
    let mut parts = Interner::default();
    let mut blobs = Blobs::default();
    let mut worlds = Vec::new();
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
        let mut files = BTreeMap::new();
        for f in &view.files {
            if let Some((bytes, ct)) = tbsim_engine::inspect::file_bytes(sim, &f.path) {
                files.insert(f.path.clone(), blobs.add(bytes, ct));
            }
        }
        let Ok(Value::Object(mut obj)) = serde_json::to_value(&view) else {
            return Err(fail("its world does not serialise".into()));
        };
        let mut refs = serde_json::Map::new();
        for k in INTERNED {
            if let Some(v) = obj.remove(*k) {
                refs.insert((*k).to_owned(), Value::from(parts.add(v)));
            }
        }
        refs.insert("file_bytes".into(), Value::from(parts.add(json!(files))));
        worlds.push(json!({ "view": obj, "refs": refs }));
    }
    Ok(json!({
        "timeline": timeline,
        "worlds": worlds,
        "parts": parts.values,
        "blobs": blobs.list.iter().map(|(t, b)| json!([t, b])).collect::<Vec<_>>(),
    }))
}

/// A script handing `value` to `TBSIM_STATIC.<method>`. JSON is JavaScript; the
/// two line separators JSON allows in strings are escaped all the same.
fn script(method: &str, key: Option<&str>, value: &Value) -> String {
    let text = value
        .to_string()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    match key {
        Some(k) => format!("TBSIM_STATIC.{method}({}, {text});\n", Value::from(k)),
        None => format!("TBSIM_STATIC.{method}({text});\n"),
    }
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
            let labels = vec![a.clone(), b.clone()];
            if let Ok(c) = console.compare_batches(&labels)
                && let Ok(v) = serde_json::to_value(c)
            {
                out.insert(format!("batches={a},{b}"), v);
                pairs += 1;
            }
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
            write(
                &dir.join("data").join(&name),
                script("run", Some(&f.id), &data).as_bytes(),
                &mut total,
            )?;
            details.insert(
                f.id.clone(),
                serde_json::to_value(&d)
                    .map_err(|e| ExportError::Run(f.id.clone(), e.to_string()))?,
            );
            files.insert(f.id.clone(), Value::from(format!("data/{name}")));
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
            script("index", None, &index).as_bytes(),
            &mut total,
        )?;
        Ok(Exported {
            runs: fixed.len(),
            comparisons: compares.len(),
            bytes: total,
        })
    }
}
