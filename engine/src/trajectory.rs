//! The run trajectory: an append-only JSON-lines record of everything observable.
//!
//! The first line is a header (format, versions, scenario hash, seed, agent). Then
//! come events as they pop, agent decisions, tool results (with the data replay
//! needs, such as `run_python` outputs), clue disclosures, checkpoint passes, the end
//! of the run and the final scores. A model-backed agent's requests and responses
//! (`model` lines, before the decision they led to) and model-played colleagues'
//! requests and replies (`npc` lines, within the call that asked) are recorded too,
//! without keys. Lines carry simulated time only, never wall-clock time or host
//! paths, so the same run always writes the same bytes; the one exception is what a
//! model provider puts in its own response (e.g. a `created` timestamp), which is
//! kept verbatim because replay and resume copy it rather than regenerate it. Each line is
//! flushed as it is written, and a model line as soon as its call completes: a crash
//! loses at most the step in flight, and of a decision in flight only the call that
//! had no answer yet.
//!
//! Every line is a [`Line`] (its `type` is the variant), written by
//! [`Trajectory::push`] and read back as one: keys come out in the order the type
//! declares them, `type` first. The header's `format` is [`FORMAT`]; a trajectory of
//! another format is refused with [`TrajectoryError::Version`].
//!
//! Format 2 holds the same lines as format 1, equal as JSON, except: the header's
//! `format`; keys in declared order (format 1 sorted them, `type` last), nested
//! protocol types (tool results, calls, notifications, events) included; free-form
//! values (tool result values, `run_python` records, model responses, colleagues'
//! requests) still have sorted keys; and an `npc` line of a failed colleague call
//! also carries `"response":null,"reply":null,"clues":[]`.
//!
//! Human guidance sent from a console (the `live` module) is recorded as `guidance`
//! lines (who, when, which task and hint tier, and the text the agent was told),
//! right before the decision it precedes and before that decision's model lines;
//! replay and resume apply them again at the same place. A forked run's header
//! carries `fork` (the parent's directory name, the digest of the lines it shares
//! with the parent, and the fork step; see the `fork` module).
//!
//! The digest is the BLAKE3 hash of all lines, each followed by `\n`.
//!
//! Reading one back ([`read_recorded`], for replay, resume and regrading) keeps
//! each model line as written and as parsed, and fails with a [`TrajectoryError`]
//! naming the file and line; a torn last line (a crash mid-write) is dropped.
//!
//! ## Model lines
//!
//! A `model` line holds `type`, `step`, `t`, `purpose` (`turn`, `summary` or
//! `reflection`), `model`, the request, `failures` (if any), `response` (`null` if
//! the call failed for good), `usage` and `error` (if any). The request is `request`,
//! the body exactly as sent, or for a turn request its compact form `request_delta`,
//! so that a conversation resent every turn is not written again every turn. A
//! `request_delta` is measured against the previous `turn` line of the trajectory
//! (whichever form it has, failed or not): `keep` says that the request's messages
//! start with the first `keep` messages of that line's request, `messages` holds the
//! messages after them, `"same_tools": true` stands for that line's `tools` (present
//! only when the tools are the same), and every other field (`model`, `tool_choice`,
//! `temperature`, `max_tokens`, ...) is the body's as sent. The agent writes the
//! compact form for every turn request after its first one, with `keep` the number
//! of messages it left unchanged since the previous turn request (all of them, or
//! those before the span a history summary replaced; 0 on a new day); a run's first
//! turn, summaries, reflections, and a turn right after a resumed run gave up recorded
//! lines are written in full. [`expand_requests`] restores the full requests (equal,
//! as JSON values, to the bodies sent); trajectories written before the compact form
//! existed only hold full requests and read the same.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::sorted_json::Sorted;
use crate::protocol::{Decision, EndReason, RequestBody};

mod line;
pub use crate::zst;

pub use line::{ForkOf, GuidanceLine, Header, Line, ModelLine, NpcLine, NpcRecord};

/// Current trajectory format version (2: every line is a [`Line`], keys in declared
/// order; 1: lines built as JSON maps, keys sorted).
pub const FORMAT: u32 = 2;

/// Writes and hashes trajectory lines.
pub struct Trajectory {
    file: Option<Sink>,
    capture: Option<Vec<String>>,
    /// The line being serialised (reused: one allocation per run, not per line).
    buf: Vec<u8>,
    hasher: blake3::Hasher,
    /// Lines (each with its `\n`) not yet given to `hasher`: hashed many chunks at
    /// a time (BLAKE3's wide SIMD path) instead of a line at a time. The digest
    /// does not depend on how the bytes are split between updates.
    unhashed: Vec<u8>,
    lines: u64,
    io_error: Option<String>,
    /// Lines are counted only: not serialised, hashed or kept (see [`Trajectory::discarding`]).
    discard: bool,
}

impl std::fmt::Debug for Trajectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

/// Where lines go.
enum Sink {
    /// Plain JSON lines, flushed after every line.
    Plain(Box<dyn Write + Send + Sync>),
    /// zstd frames (see [`zst`]).
    Zstd(zst::FrameWriter<BufWriter<File>>),
}

impl Sink {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let w: &mut dyn Write = match self {
            Sink::Plain(w) => w,
            Sink::Zstd(w) => w,
        };
        w.write_all(line)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

impl Trajectory {
    /// A trajectory written to `path` (created or truncated).
    pub fn to_file(path: &Path) -> std::io::Result<Self> {
        Ok(Trajectory {
            file: Some(Sink::Plain(Box::new(BufWriter::new(File::create(path)?)))),
            ..Self::in_memory()
        })
    }

    /// A trajectory written to `path` as zstd frames (`trajectory.jsonl.zst`; see
    /// [`zst`]): the same lines and digest as [`Trajectory::to_file`], in a
    /// fraction of the bytes. Call [`Trajectory::finish`] when the run is over.
    pub fn to_zstd_file(path: &Path) -> std::io::Result<Self> {
        let out = BufWriter::new(File::create(path)?);
        Ok(Trajectory {
            file: Some(Sink::Zstd(zst::FrameWriter::new(out))),
            ..Self::in_memory()
        })
    }

    /// A trajectory written to `out`, flushed after every line (tests give a
    /// writer that fails, as a full disk does).
    pub fn to_writer(out: Box<dyn Write + Send + Sync>) -> Self {
        Trajectory {
            file: Some(Sink::Plain(out)),
            capture: None,
            ..Self::in_memory()
        }
    }

    /// Writes out what a compressed trajectory still buffers (a plain one has
    /// nothing buffered). Idempotent; lines pushed later are written as usual.
    pub fn finish(&mut self) {
        if let Some(Sink::Zstd(w)) = &mut self.file
            && let Err(e) = w.finish()
        {
            self.io_error
                .get_or_insert_with(|| format!("cannot write the trajectory: {e}"));
        }
    }

    /// A trajectory kept in memory (see [`Trajectory::lines`]).
    pub fn in_memory() -> Self {
        Trajectory {
            file: None,
            capture: Some(Vec::new()),
            buf: Vec::new(),
            hasher: blake3::Hasher::new(),
            unhashed: Vec::new(),
            lines: 0,
            io_error: None,
            discard: false,
        }
    }

    /// A trajectory that only hashes (benchmarks).
    pub fn digest_only() -> Self {
        Trajectory {
            file: None,
            capture: None,
            buf: Vec::new(),
            hasher: blake3::Hasher::new(),
            unhashed: Vec::new(),
            lines: 0,
            io_error: None,
            discard: false,
        }
    }

    /// A trajectory that only counts its lines: for a world re-driven to be looked
    /// at (the console's), whose lines nobody reads. Serialising them was a seventh
    /// of a long run's replay. Its [`Trajectory::digest`] is that of no lines.
    pub fn discarding() -> Self {
        Trajectory {
            discard: true,
            ..Self::digest_only()
        }
    }

    /// Appends one line.
    pub fn push(&mut self, line: &Line) {
        if self.discard {
            self.lines += 1;
            return;
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        match serde_json::to_writer(&mut buf, line) {
            Ok(()) => self.record_serialised(&mut buf),
            Err(e) => {
                self.io_error
                    .get_or_insert_with(|| format!("cannot serialise a line: {e}"));
            }
        }
        self.buf = buf;
    }

    /// Records a line serde_json has just written into `buf` (valid UTF-8, one
    /// line): as [`Trajectory::record_raw`] does, hashing the line and its `\n` in
    /// one update. A line that needs redacting goes through `record_raw`.
    fn record_serialised(&mut self, buf: &mut Vec<u8>) {
        let Ok(line) = std::str::from_utf8(buf) else {
            self.io_error
                .get_or_insert_with(|| "cannot serialise a line: not UTF-8".to_owned());
            return;
        };
        if crate::protocol::secrets::redact_secrets(line).is_some() {
            let line = line.to_owned();
            self.record_raw(&line);
            return;
        }
        debug_assert!(!line.contains('\n'), "one line");
        if let Some(c) = &mut self.capture {
            c.push(line.to_owned());
        }
        let len = buf.len();
        buf.push(b'\n');
        self.hash(buf);
        self.lines += 1;
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_line(&buf[..len])
        {
            self.io_error
                .get_or_insert_with(|| format!("cannot write the trajectory: {e}"));
        }
    }

    /// Writes one line as given (a line read from a trajectory, copied by replay).
    pub fn record_raw(&mut self, line: &str) {
        debug_assert!(!line.contains('\n'), "one line");
        if self.discard {
            self.lines += 1;
            return;
        }
        // Configured API keys never reach a trajectory, whatever carried them here.
        let redacted = crate::protocol::secrets::redact_secrets(line);
        let line = redacted.as_deref().unwrap_or(line);
        self.hash(line.as_bytes());
        self.hash(b"\n");
        self.lines += 1;
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_line(line.as_bytes())
        {
            self.io_error
                .get_or_insert_with(|| format!("cannot write the trajectory: {e}"));
        }
        if let Some(c) = &mut self.capture {
            c.push(line.to_owned());
        }
    }

    /// Adds bytes to the digest (see `unhashed`).
    fn hash(&mut self, bytes: &[u8]) {
        /// Enough for BLAKE3 to hash 16 chunks of 1 KiB side by side.
        const BATCH: usize = 16 * 1024;
        self.unhashed.extend_from_slice(bytes);
        if self.unhashed.len() >= BATCH {
            self.hasher.update(&self.unhashed);
            self.unhashed.clear();
        }
    }

    /// Hex BLAKE3 of every line so far.
    pub fn digest(&self) -> String {
        let mut h = self.hasher.clone();
        h.update(&self.unhashed);
        h.finalize().to_hex().to_string()
    }

    /// Number of lines written.
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Captured lines (in-memory trajectories only).
    pub fn lines(&self) -> &[String] {
        self.capture.as_deref().unwrap_or(&[])
    }

    /// The first write error, if any (writing continues to be attempted).
    pub fn io_error(&self) -> Option<&str> {
        self.io_error.as_deref()
    }
}

/// Hex BLAKE3 over lines, as the trajectory computes it.
pub fn digest_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = blake3::Hasher::new();
    for l in lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex().to_string()
}

/// A `request_delta` that cannot be expanded (the trajectory is damaged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestDeltaError {
    /// No `turn` line with a request comes before it.
    #[error("a request_delta with no earlier turn request")]
    NoBase(usize),
    /// `keep` exceeds the previous turn request's messages.
    #[error("a request_delta keeps {keep} messages of {len}")]
    Keep {
        /// Index of the line in the slice.
        line: usize,
        /// The recorded `keep`.
        keep: u64,
        /// Messages in the previous turn request.
        len: usize,
    },
    /// The delta is not of the documented shape.
    #[error("malformed request_delta: {1}")]
    Malformed(usize, &'static str),
}

impl RequestDeltaError {
    /// Index (from 0) of the offending line in the slice given.
    pub fn line(&self) -> usize {
        match self {
            RequestDeltaError::NoBase(l) | RequestDeltaError::Malformed(l, _) => *l,
            RequestDeltaError::Keep { line, .. } => *line,
        }
    }
}

/// Replaces every `request_delta` of the model lines in `lines` (a trajectory's
/// lines, or model records, in order) by the full `request` it stands for (see the
/// module docs). Lines whose `type` is other than `model` are left alone; lines
/// without a `request_delta` are unchanged.
pub fn expand_requests(lines: &mut [serde_json::Value]) -> Result<(), RequestDeltaError> {
    use serde_json::Value;
    let mut last_turn: Option<usize> = None;
    for i in 0..lines.len() {
        let (before, rest) = lines.split_at_mut(i);
        let line = &mut rest[0];
        if line.get("type").is_some_and(|t| t != "model") {
            continue;
        }
        let Some(obj) = line.as_object_mut() else {
            continue;
        };
        if let Some(delta) = obj.remove("request_delta") {
            let base = &before[last_turn.ok_or(RequestDeltaError::NoBase(i))?]["request"];
            obj.insert("request".into(), expand_delta(i, base, delta)?);
        }
        if obj.get("purpose").is_some_and(|p| p == "turn")
            && obj.get("request").is_some_and(Value::is_object)
        {
            last_turn = Some(i);
        }
    }
    Ok(())
}

/// The full request a `request_delta` (of line `i`) stands for, against `base`, the
/// previous turn line's full request.
fn expand_delta(i: usize, base: &Value, delta: Value) -> Result<Value, RequestDeltaError> {
    let Value::Object(delta) = delta else {
        return Err(RequestDeltaError::Malformed(i, "not an object"));
    };
    let base_messages = base["messages"]
        .as_array()
        .ok_or(RequestDeltaError::Malformed(i, "the base has no messages"))?;
    let keep = delta
        .get("keep")
        .and_then(Value::as_u64)
        .ok_or(RequestDeltaError::Malformed(i, "no keep"))?;
    let kept = usize::try_from(keep)
        .ok()
        .and_then(|k| base_messages.get(..k))
        .ok_or(RequestDeltaError::Keep {
            line: i,
            keep,
            len: base_messages.len(),
        })?;
    let mut full = serde_json::Map::new();
    for (k, v) in delta {
        match k.as_str() {
            "keep" => {}
            "messages" => {
                let Value::Array(tail) = v else {
                    return Err(RequestDeltaError::Malformed(i, "messages"));
                };
                let mut all = kept.to_vec();
                all.extend(tail);
                full.insert(k, Value::Array(all));
            }
            "same_tools" => {
                let tools = base
                    .get("tools")
                    .filter(|_| v == true)
                    .ok_or(RequestDeltaError::Malformed(i, "same_tools"))?;
                full.insert("tools".into(), tools.clone());
            }
            _ => {
                full.insert(k, v);
            }
        }
    }
    if !full.contains_key("messages") {
        return Err(RequestDeltaError::Malformed(i, "no messages"));
    }
    Ok(Value::Object(full))
}

/// A trajectory that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryError {
    /// The file is missing or unreadable.
    #[error("cannot read `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// A line is not what the format says (1-based line number).
    #[error("`{0}` line {1}: {2}")]
    Format(PathBuf, usize, String),
    /// The header names a format other than [`FORMAT`].
    #[error(
        "`{path}` is a trajectory of format {found} (written by tbsim {tbsim}); this build of tbsim reads format {FORMAT} only: run the scenario again, or use the tbsim version that wrote it"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The format its header names (`none` if it names none).
        found: String,
        /// The tbsim version its header names (`unknown` if it names none).
        tbsim: String,
    },
}

/// A recorded model line: parsed, and as written (replay and resume copy the text,
/// so the bytes do not depend on how a `Value` orders its keys).
#[derive(Debug, Clone)]
pub struct RecordedLine {
    /// The line parsed, a compact turn request expanded to the full `request`.
    pub line: ModelLine,
    /// The same as a JSON value (what an agent resumes from).
    pub value: Value,
    /// The line as written.
    pub text: String,
}

/// A recorded decision with the model lines before it.
#[derive(Debug, Clone)]
pub struct RecordedStep {
    /// The model lines before the decision.
    pub records: Vec<RecordedLine>,
    /// The decision.
    pub decision: Decision,
    /// Output tokens its model calls produced.
    pub tokens_out: u64,
    /// Human guidance applied before it (before its model lines).
    pub guidance: Vec<GuidanceLine>,
}

/// What a trajectory holds for re-driving it.
#[derive(Debug)]
pub struct Recorded {
    /// The header line.
    pub header: Header,
    /// The decisions, in order.
    pub steps: Vec<RecordedStep>,
    /// Model lines after the last decision (a failed or interrupted turn).
    pub trailing: Vec<RecordedLine>,
    /// Guidance applied after the last decision (the run ended before another).
    pub trailing_guidance: Vec<GuidanceLine>,
    /// `run_python` outcomes, by step and call.
    pub python: BTreeMap<(u64, String), Value>,
    /// Model-played colleagues' lines.
    pub npc_lines: Vec<NpcLine>,
    /// Why the run ended, if it did.
    pub end: Option<EndReason>,
    /// The lines, unparsed (a torn last line dropped).
    pub lines: Vec<String>,
}

/// What the first line must say before the rest is read as [`Line`]s.
#[derive(Deserialize)]
struct Sniff {
    #[serde(rename = "type")]
    kind: String,
    format: Option<Value>,
    tbsim: Option<String>,
}

/// Reads the lines of a trajectory as [`Line`]s, each with its text. A torn last
/// line (a crash mid-write) is dropped. The header must name [`FORMAT`].
pub fn read_lines(traj: &Path) -> Result<Vec<(Line, String)>, TrajectoryError> {
    let text = crate::run_dir::read_trajectory(traj)
        .map_err(|e| TrajectoryError::Io(traj.to_owned(), e.into_io()))?;
    parse_lines(traj, &text)
}

/// [`read_lines`] on a trajectory's text (`traj` names it in errors).
pub fn parse_lines(traj: &Path, text: &str) -> Result<Vec<(Line, String)>, TrajectoryError> {
    let fmt = |line: usize, m: &str| TrajectoryError::Format(traj.to_owned(), line, m.to_owned());
    let raw: Vec<&str> = text.lines().collect();
    let torn = |i: usize| i + 1 == raw.len() && !text.ends_with('\n');
    let first = raw
        .first()
        .ok_or_else(|| fmt(1, "expected a header line"))?;
    match serde_json::from_str::<Sniff>(first) {
        Ok(h) if h.kind == "header" => {
            if h.format != Some(Value::from(FORMAT)) {
                return Err(TrajectoryError::Version {
                    path: traj.to_owned(),
                    found: h
                        .format
                        .map_or_else(|| "none".to_owned(), |f| f.to_string()),
                    tbsim: h.tbsim.unwrap_or_else(|| "unknown".to_owned()),
                });
            }
        }
        Err(_) if torn(0) => return Ok(Vec::new()),
        _ => return Err(fmt(1, "expected a header line")),
    }
    let mut out = Vec::with_capacity(raw.len());
    for (i, l) in raw.iter().enumerate() {
        if l.len() > crate::run_dir::MAX_LINE_BYTES {
            return Err(fmt(
                i + 1,
                &format!(
                    "the line is longer than {} bytes",
                    crate::run_dir::MAX_LINE_BYTES
                ),
            ));
        }
        match Line::parse(l) {
            Ok(line) => out.push((line, (*l).to_owned())),
            Err(_) if torn(i) => break,
            Err(e) => return Err(fmt(i + 1, &e.to_string())),
        }
    }
    Ok(out)
}

/// Reads a trajectory for re-driving it. A torn last line (a crash mid-write) is
/// dropped; a compact turn request is expanded (the text stays as written).
pub fn read_recorded(traj: &Path) -> Result<Recorded, TrajectoryError> {
    let fmt = |line: usize, m: &str| TrajectoryError::Format(traj.to_owned(), line, m.to_owned());
    let parsed = read_lines(traj)?;
    let mut lines = Vec::with_capacity(parsed.len());
    let mut header = None;
    let mut steps = Vec::new();
    let mut pending = Vec::new();
    let mut guidance = Vec::new();
    let mut python = BTreeMap::new();
    let mut npc_lines = Vec::new();
    let mut end = None;
    // The full request of the last `turn` line, which a `request_delta` is against.
    let mut last_turn: Option<Value> = None;
    for (i, (line, text)) in parsed.into_iter().enumerate() {
        match line {
            Line::Header(h) if i == 0 => header = Some(h),
            Line::Model(mut m) => {
                if let Some(delta) = m.request_delta.take() {
                    let base = last_turn
                        .as_ref()
                        .ok_or(RequestDeltaError::NoBase(i))
                        .and_then(|b| expand_delta(i, b, delta.value()))
                        .map_err(|e| fmt(i + 1, &e.to_string()))?;
                    m.request = Some(RequestBody::new(&Sorted(&base)));
                }
                if m.purpose == "turn"
                    && let Some(r) = &m.request
                {
                    let r = r.value();
                    if r.is_object() {
                        last_turn = Some(r);
                    }
                }
                let value = serde_json::to_value(Line::Model(m.clone()))
                    .map_err(|e| fmt(i + 1, &e.to_string()))?;
                pending.push(RecordedLine {
                    line: m,
                    value,
                    text: text.clone(),
                });
            }
            Line::Decision {
                calls, tokens_out, ..
            } => steps.push(RecordedStep {
                records: std::mem::take(&mut pending),
                decision: Decision { calls },
                tokens_out,
                guidance: std::mem::take(&mut guidance),
            }),
            Line::Guidance(g) => guidance.push(g),
            Line::Result {
                step,
                call,
                result,
                record: Some(record),
                ..
            } if result.tool == "run_python" && !record.is_null() => {
                python.insert((step, call), record);
            }
            Line::Npc(n) => npc_lines.push(n),
            Line::End { reason, .. } => end = reason,
            _ => {}
        }
        lines.push(text);
    }
    let header = header.ok_or_else(|| fmt(1, "expected a header line"))?;
    Ok(Recorded {
        header,
        steps,
        trailing: pending,
        trailing_guidance: guidance,
        python,
        npc_lines,
        end,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_deltas_expand_against_the_previous_turn_line() {
        use serde_json::json;
        let turn = |req: &str, body: serde_json::Value| json!({"type": "model", "purpose": "turn", req: body, "response": {}});
        let mut lines = vec![
            json!({"type": "header"}),
            turn(
                "request",
                json!({"model": "m", "messages": [1, 2, 3], "tools": ["t"]}),
            ),
            // Not a turn: never a base.
            json!({"type": "model", "purpose": "summary", "request": {"messages": [9]}}),
            json!({"type": "npc", "request_delta": {"keep": 0}}),
            turn(
                "request_delta",
                json!({"keep": 2, "model": "m", "messages": [4], "same_tools": true}),
            ),
            turn(
                "request_delta",
                json!({"keep": 3, "model": "n", "messages": [], "tools": ["u"]}),
            ),
        ];
        expand_requests(&mut lines).unwrap();
        assert_eq!(
            lines[4]["request"],
            json!({"model": "m", "messages": [1, 2, 4], "tools": ["t"]})
        );
        assert_eq!(
            lines[5]["request"],
            json!({"model": "n", "messages": [1, 2, 4], "tools": ["u"]})
        );
        assert!(lines[4].get("request_delta").is_none());
        assert_eq!(
            lines[3],
            json!({"type": "npc", "request_delta": {"keep": 0}})
        );

        let delta = |d| turn("request_delta", d);
        let base = turn("request", json!({"messages": [1]}));
        let err = |mut v: Vec<serde_json::Value>| expand_requests(&mut v).unwrap_err();
        assert_eq!(
            err(vec![delta(json!({"keep": 0, "messages": []}))]),
            RequestDeltaError::NoBase(0)
        );
        assert_eq!(
            err(vec![
                base.clone(),
                delta(json!({"keep": 2, "messages": []}))
            ]),
            RequestDeltaError::Keep {
                line: 1,
                keep: 2,
                len: 1
            }
        );
        assert_eq!(
            err(vec![
                base.clone(),
                delta(json!({"keep": 1, "messages": [], "same_tools": true}))
            ])
            .line(),
            1,
            "no tools to stand for"
        );
        assert_eq!(
            err(vec![base, delta(json!({"keep": 1}))]),
            RequestDeltaError::Malformed(1, "no messages")
        );
    }

    fn header(format: u32) -> Line {
        Line::Header(Header {
            format,
            tbsim: "0.1.0".into(),
            scenario: "s".into(),
            scenario_blake3: "b3".into(),
            seed: 7,
            agent: "oracle".into(),
            hints: 0,
            turn_cost_secs: None,
            feedback: crate::protocol::FeedbackPolicy::Detailed,
            token_cost_secs: None,
            fork: None,
        })
    }

    /// Keys come out in declared order, `type` first, whatever serde_json's features
    /// (a free-form value's keys sorted); and each line reads back as itself.
    #[test]
    fn lines_have_a_fixed_key_order_and_read_back() {
        use crate::event::SimEvent;
        use crate::protocol::{ModelRecord, ToolCall, ToolResult};
        use crate::queue::EventClass;
        use crate::time::SimTime;
        use serde_json::json;
        let mut free = serde_json::Map::new();
        free.insert("z".into(), json!(1));
        free.insert("a".into(), json!({"y": 2, "b": 3}));
        let record = ModelRecord {
            purpose: "turn",
            model: "m".into(),
            request: RequestBody::new(&json!({"messages": []})),
            request_delta: None,
            failures: Vec::new(),
            response: Value::Object(free.clone()),
            usage: None,
            error: None,
            timing: None,
        };
        let cases: Vec<(Line, &str)> = vec![
            (
                header(FORMAT),
                r#"{"type":"header","format":2,"tbsim":"0.1.0","scenario":"s","scenario_blake3":"b3","seed":7,"agent":"oracle","hints":0,"turn_cost_secs":null,"feedback":"detailed"}"#,
            ),
            (
                Line::Event {
                    t: SimTime(5),
                    class: EventClass::Release,
                    seq: 3,
                    event: SimEvent::Release {
                        task: "task/a".into(),
                    },
                },
                r#"{"type":"event","t":5,"class":"release","seq":3,"event":{"kind":"release","task":"task/a"}}"#,
            ),
            (
                Line::Decision {
                    step: 1,
                    t: SimTime(5),
                    calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "wait".into(),
                        arguments: "{}".into(),
                    }],
                    tokens_out: 12,
                },
                r#"{"type":"decision","step":1,"t":5,"calls":[{"id":"c1","name":"wait","arguments":"{}"}],"tokens_out":12}"#,
            ),
            (
                Line::Model(ModelLine::new(1, SimTime(5), &record)),
                r#"{"type":"model","step":1,"t":5,"purpose":"turn","model":"m","request":{"messages":[]},"response":{"a":{"b":3,"y":2},"z":1}}"#,
            ),
            (
                Line::Result {
                    step: 1,
                    call: "c1".into(),
                    t: SimTime(6),
                    result: ToolResult {
                        call_id: "c1".into(),
                        tool: "wait".into(),
                        ok: true,
                        time: "Mon 09:00".into(),
                        t: SimTime(6),
                        result: Some(Value::Object(free.clone())),
                        error: None,
                        attachments: Vec::new(),
                        notifications: Vec::new(),
                    },
                    record: Some(Value::Object(free)),
                },
                r#"{"type":"result","step":1,"call":"c1","t":6,"result":{"call_id":"c1","tool":"wait","ok":true,"time":"Mon 09:00","t":6,"result":{"a":{"b":3,"y":2},"z":1},"notifications":[]},"record":{"a":{"b":3,"y":2},"z":1}}"#,
            ),
            (
                Line::Npc(NpcLine {
                    step: 1,
                    call: "c1".into(),
                    npc: "npc/a".into(),
                    t: SimTime(6),
                    record: NpcRecord {
                        model: "m".into(),
                        request: json!({"messages": []}),
                        response: Value::Null,
                        reply: None,
                        clues: Vec::new(),
                        failures: vec!["timeout".into()],
                        error: Some("gave up".into()),
                    },
                }),
                r#"{"type":"npc","step":1,"call":"c1","npc":"npc/a","t":6,"model":"m","request":{"messages":[]},"response":null,"reply":null,"clues":[],"failures":["timeout"],"error":"gave up"}"#,
            ),
            (
                Line::Disclosure {
                    t: SimTime(6),
                    npc: "npc/a".into(),
                    clue: "clue/x".into(),
                    task: None,
                    first: true,
                },
                r#"{"type":"disclosure","t":6,"npc":"npc/a","clue":"clue/x","task":null,"first":true}"#,
            ),
            (
                Line::Checkpoint {
                    t: SimTime(6),
                    task: "task/a".into(),
                    checkpoint: "done".into(),
                    kind: tbsim_scenario::check::CheckKind::Event,
                },
                r#"{"type":"checkpoint","t":6,"task":"task/a","checkpoint":"done","kind":"event"}"#,
            ),
            (
                Line::Feedback {
                    t: SimTime(7),
                    day: 1,
                    lines: vec!["well done".into()],
                },
                r#"{"type":"feedback","t":7,"day":1,"lines":["well done"]}"#,
            ),
            (
                Line::End {
                    t: SimTime(8),
                    reason: Some(EndReason::Finished),
                    steps: 1,
                    tool_calls: 1,
                },
                r#"{"type":"end","t":8,"reason":"finished","steps":1,"tool_calls":1}"#,
            ),
            (
                Line::Score {
                    task: "task/a".into(),
                    score: 1.0,
                    success: true,
                    passed: vec!["done".into()],
                },
                r#"{"type":"score","task":"task/a","score":1.0,"success":true,"passed":["done"]}"#,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(serde_json::to_string(&line).unwrap(), want);
            assert_eq!(serde_json::from_str::<Line>(want).unwrap(), line, "{want}");
            assert_eq!(Line::parse(want).unwrap(), line, "{want}");
        }
    }

    /// `Line::parse` and serde's tagged enum agree on `text`: the same line, or
    /// the same error.
    fn parses_alike(text: &str) {
        let tagged = serde_json::from_str::<Line>(text).map_err(|e| e.to_string());
        let two_stage = Line::parse(text).map_err(|e| e.to_string());
        assert_eq!(two_stage, tagged, "{text}");
    }

    /// Every line of real runs, and lines that are not as tbsim writes them, read
    /// the same through `Line::parse` as through serde's tagged enum.
    #[test]
    fn the_two_stage_parse_reads_what_the_tagged_enum_reads() {
        use crate::agent::Oracle;
        use crate::run::{RunLimits, run_to_dir};
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/scenarios");
        let mut lines = Vec::new();
        for rel in ["busy-day.ron", "traineebench-cl/traineebench-cl-012.ron"] {
            let loaded = tbsim_scenario::load_file(&root.join(rel)).expect("bundled scenario");
            let dir = tempfile::tempdir().unwrap();
            let mut oracle = Oracle::new(&loaded.scenario);
            let config = crate::protocol::SimConfig::default();
            run_to_dir(
                &loaded,
                &mut oracle,
                config,
                &RunLimits::default(),
                dir.path(),
            )
            .expect("the oracle runs");
            let text = std::fs::read_to_string(dir.path().join("trajectory.jsonl")).unwrap();
            lines.extend(text.lines().map(str::to_owned));
        }
        let kinds: std::collections::BTreeSet<String> = lines
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string())
            .collect();
        assert!(kinds.len() >= 8, "most kinds of line: {kinds:?}");
        for l in &lines {
            parses_alike(l);
            assert!(Line::parse(l).is_ok(), "{l}");
        }
        // Not as tbsim writes them: `type` later, spaces, unknown or odd types,
        // fields missing, of the wrong kind, or unknown, a torn line.
        let odd = [
            r#"{"t":5,"type":"event","class":"release","seq":3,"event":{"kind":"release","task":"task/a"}}"#,
            r#"{ "type":"event","t":5,"class":"release","seq":3,"event":{"kind":"release","task":"task/a"}}"#,
            r#"{"type":"event","t":5,"class":"release","seq":3,"event":{"kind":"release","task":"task/a"},"extra":[1]}"#,
            r#"{"type":"event","t":5,"class":"release","seq":3}"#,
            r#"{"type":"event","t":"5","class":"release","seq":3,"event":{"kind":"release","task":"task/a"}}"#,
            r#"{"type":"decision","step":1,"t":5,"calls":[]}"#,
            r#"{"type":"decision","step":-1,"t":5,"calls":[]}"#,
            r#"{"type":"score","task":"a","score":1,"success":true,"passed":[]}"#,
            r#"{"type":"end","t":8,"reason":null,"steps":1,"tool_calls":1}"#,
            r#"{"type":"end"}"#,
            r#"{"type":"end","type":"end","t":8,"reason":null,"steps":1,"tool_calls":1}"#,
            r#"{"type":"end","t":8,"reason":null,"steps":1,"tool_calls":1,"type":"score"}"#,
            r#"{"type":"guidance","step":1,"t":5,"by":"human:a","task":null,"tier":null,"text":"hi"}"#,
            r#"{"type":"nonsense","t":1}"#,
            r#"{"type":"Event","t":1}"#,
            r#"{"type":"event","t":5,"class":"release","seq":3,"event":{"kind":"release","task":"task/a"}}"#,
            r#"{"type":"","t":1}"#,
            r#"{"type":"event""#,
            r#"{"type":"result","step":1,"call":"c1","t":6"#,
            r#"{"type":"feedback","t":7,"day":1,"lines":["a"]} trailing"#,
            r#"[]"#,
            "",
        ];
        for l in odd {
            parses_alike(l);
        }
    }

    #[test]
    fn another_format_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trajectory.jsonl");
        let mut t = Trajectory::to_file(&p).unwrap();
        t.push(&header(1));
        let err = read_recorded(&p).unwrap_err();
        assert!(
            matches!(&err, TrajectoryError::Version { path, found, .. } if path == &p && found == "1"),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains("format 1"), "{msg}");
        assert!(msg.contains("reads format 2"), "{msg}");
        assert!(msg.contains("trajectory.jsonl"), "{msg}");
        // A header with no format at all (or not a header) is refused too.
        std::fs::write(&p, "{\"type\":\"header\",\"tbsim\":\"0.0.1\"}\n").unwrap();
        let msg = read_recorded(&p).unwrap_err().to_string();
        assert!(
            msg.contains("format none") && msg.contains("0.0.1"),
            "{msg}"
        );
        std::fs::write(&p, "{\"type\":\"end\"}\n").unwrap();
        let msg = read_recorded(&p).unwrap_err().to_string();
        assert!(msg.contains("expected a header line"), "{msg}");
    }

    #[test]
    fn digest_matches_file_bytes_and_helper() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut t = Trajectory::to_file(&p).unwrap();
        t.push(&header(FORMAT));
        t.push(&Line::End {
            t: crate::time::SimTime(1),
            reason: None,
            steps: 0,
            tool_calls: 0,
        });
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(t.digest(), blake3::hash(&bytes).to_hex().to_string());
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(digest_lines(text.lines()), t.digest());
        assert_eq!(t.len(), 2);
    }

    /// Lines are hashed in batches: the digest is the file's at every line, for
    /// lines short and long, serialised or copied, across many batches.
    #[test]
    fn the_digest_is_the_bytes_hash_at_every_line_across_batches() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut t = Trajectory::to_file(&p).unwrap();
        t.push(&header(FORMAT));
        for i in 0..200_u64 {
            let text = "x\"é".repeat(usize::try_from(i * 37 % 1500).unwrap());
            if i % 3 == 0 {
                t.record_raw(&format!("{{\"n\":{i}}}"));
            } else {
                t.push(&Line::Feedback {
                    t: crate::time::SimTime(i),
                    day: 1,
                    lines: vec![text],
                });
            }
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(
                t.digest(),
                blake3::hash(&bytes).to_hex().to_string(),
                "line {i}"
            );
        }
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.len() > 100_000, "several batches");
        assert_eq!(digest_lines(text.lines()), t.digest());
        assert_eq!(t.len(), 201);
    }
}
