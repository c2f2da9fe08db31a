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

use serde::Serialize;
use serde_json::Value;

use crate::protocol::EndReason;
use crate::protocol::ToolCall;
use crate::protocol::{Decision, SimConfig};

/// Current trajectory format version.
pub const FORMAT: u32 = 1;

/// Writes and hashes trajectory lines.
pub struct Trajectory {
    file: Option<BufWriter<File>>,
    capture: Option<Vec<String>>,
    hasher: blake3::Hasher,
    lines: u64,
    io_error: Option<String>,
}

impl std::fmt::Debug for Trajectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

impl Trajectory {
    /// A trajectory written to `path` (created or truncated).
    pub fn to_file(path: &Path) -> std::io::Result<Self> {
        Ok(Trajectory {
            file: Some(BufWriter::new(File::create(path)?)),
            ..Self::in_memory()
        })
    }

    /// A trajectory kept in memory (see [`Trajectory::lines`]).
    pub fn in_memory() -> Self {
        Trajectory {
            file: None,
            capture: Some(Vec::new()),
            hasher: blake3::Hasher::new(),
            lines: 0,
            io_error: None,
        }
    }

    /// A trajectory that only hashes (benchmarks).
    pub fn digest_only() -> Self {
        Trajectory {
            file: None,
            capture: None,
            hasher: blake3::Hasher::new(),
            lines: 0,
            io_error: None,
        }
    }

    /// Appends one record as a JSON line.
    pub fn record<T: Serialize>(&mut self, record: &T) {
        match serde_json::to_string(record) {
            Ok(l) => self.record_raw(&l),
            Err(e) => {
                self.io_error
                    .get_or_insert_with(|| format!("cannot serialise a record: {e}"));
            }
        }
    }

    /// Writes one line as given (a line read from a trajectory, copied by replay).
    pub fn record_raw(&mut self, line: &str) {
        debug_assert!(!line.contains('\n'), "one line");
        // Configured API keys never reach a trajectory, whatever carried them here.
        let redacted = crate::protocol::secrets::redact_secrets(line);
        let line = redacted.as_deref().unwrap_or(line);
        self.hasher.update(line.as_bytes());
        self.hasher.update(b"\n");
        self.lines += 1;
        if let Some(f) = &mut self.file {
            let res = f
                .write_all(line.as_bytes())
                .and_then(|_| f.write_all(b"\n"))
                .and_then(|_| f.flush());
            if let Err(e) = res {
                self.io_error
                    .get_or_insert_with(|| format!("cannot write the trajectory: {e}"));
            }
        }
        if let Some(c) = &mut self.capture {
            c.push(line.to_owned());
        }
    }

    /// Hex BLAKE3 of every line so far.
    pub fn digest(&self) -> String {
        self.hasher.clone().finalize().to_hex().to_string()
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
            let Value::Object(delta) = delta else {
                return Err(RequestDeltaError::Malformed(i, "not an object"));
            };
            let base = &before[last_turn.ok_or(RequestDeltaError::NoBase(i))?]["request"];
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
            obj.insert("request".into(), Value::Object(full));
        }
        if obj.get("purpose").is_some_and(|p| p == "turn")
            && obj.get("request").is_some_and(Value::is_object)
        {
            last_turn = Some(i);
        }
    }
    Ok(())
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
}

/// A recorded model line: parsed, and as written (replay and resume copy the text,
/// so the bytes do not depend on how a `Value` orders its keys).
#[derive(Debug, Clone)]
pub struct RecordedLine {
    /// The line parsed (a compact turn request expanded to the full request).
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
}

/// What a trajectory holds for re-driving it.
#[derive(Debug)]
pub struct Recorded {
    /// The header line.
    pub header: Value,
    /// The decisions, in order.
    pub steps: Vec<RecordedStep>,
    /// Model lines after the last decision (a failed or interrupted turn).
    pub trailing: Vec<RecordedLine>,
    /// `run_python` outcomes, by step and call.
    pub python: BTreeMap<(u64, String), Value>,
    /// Model-played colleagues' lines.
    pub npc_lines: Vec<Value>,
    /// Why the run ended, if it did.
    pub end: Option<EndReason>,
    /// The lines, unparsed (a torn last line dropped).
    pub lines: Vec<String>,
}

/// Reads a trajectory. A torn last line (a crash mid-write) is dropped.
pub fn read_recorded(traj: &Path) -> Result<Recorded, TrajectoryError> {
    let text =
        std::fs::read_to_string(traj).map_err(|e| TrajectoryError::Io(traj.to_owned(), e))?;
    let fmt = |line: usize, m: &str| TrajectoryError::Format(traj.to_owned(), line, m.to_owned());
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut parsed = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Value>(l) {
            Ok(v) => parsed.push(v),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
            Err(e) => return Err(fmt(i + 1, &e.to_string())),
        }
    }
    lines.truncate(parsed.len());
    // Model lines may hold a turn request in its compact form: the agent and the
    // reuse of recorded calls work on full requests (the text stays as written).
    expand_requests(&mut parsed).map_err(|e| fmt(e.line() + 1, &e.to_string()))?;
    let header = parsed
        .first()
        .filter(|h| h["type"] == "header")
        .cloned()
        .ok_or_else(|| fmt(1, "expected a header line"))?;
    let mut steps = Vec::new();
    let mut pending = Vec::new();
    let mut python = BTreeMap::new();
    let mut npc_lines = Vec::new();
    let mut end = None;
    for (i, v) in parsed.iter().enumerate() {
        match v["type"].as_str() {
            Some("model") => pending.push(RecordedLine {
                value: v.clone(),
                text: lines[i].clone(),
            }),
            Some("decision") => {
                let calls: Vec<ToolCall> = serde_json::from_value(v["calls"].clone())
                    .map_err(|e| fmt(i + 1, &e.to_string()))?;
                steps.push(RecordedStep {
                    records: std::mem::take(&mut pending),
                    decision: Decision { calls },
                    tokens_out: v["tokens_out"].as_u64().unwrap_or(0),
                });
            }
            Some("result") if v["result"]["tool"] == "run_python" && !v["record"].is_null() => {
                let step = v["step"].as_u64().unwrap_or(0);
                let call = v["call"].as_str().unwrap_or_default().to_owned();
                python.insert((step, call), v["record"].clone());
            }
            Some("npc") => npc_lines.push(v.clone()),
            Some("end") => end = serde_json::from_value::<EndReason>(v["reason"].clone()).ok(),
            _ => {}
        }
    }
    Ok(Recorded {
        header,
        steps,
        trailing: pending,
        python,
        npc_lines,
        end,
        lines,
    })
}

/// The simulation settings recorded in a trajectory header.
pub fn config_from_header(header: &Value) -> SimConfig {
    SimConfig {
        seed: header["seed"].as_u64(),
        hints: header["hints"].as_u64().unwrap_or(0) as u8,
        turn_cost_secs: header["turn_cost_secs"].as_u64().map(|v| v as u32),
        token_cost_secs: header["token_cost_secs"].as_u64().map(|v| v as u32),
        agent: header["agent"].as_str().unwrap_or_default().to_owned(),
        feedback: serde_json::from_value(header["feedback"].clone()).unwrap_or_default(),
    }
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

    #[test]
    fn digest_matches_file_bytes_and_helper() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut t = Trajectory::to_file(&p).unwrap();
        t.record(&serde_json::json!({"type": "header", "n": 1}));
        t.record(&serde_json::json!({"type": "end"}));
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(t.digest(), blake3::hash(&bytes).to_hex().to_string());
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(digest_lines(text.lines()), t.digest());
        assert_eq!(t.len(), 2);
    }
}
