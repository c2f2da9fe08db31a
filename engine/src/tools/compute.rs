//! Compute tools: the calculator and sandboxed Python.
//!
//! `run_python` output is not reproducible by re-running (the interpreter, its
//! version and the host may differ), so its whole outcome, including the bytes of
//! files it wrote, is kept in the trajectory; replay applies the recorded outcome
//! instead of running the script again.

use std::collections::BTreeMap;

use base64::Engine;
use bevy_ecs::prelude::*;
use serde_json::{Value, json};

use super::{CallContext, ErrorKind, ToolError, ToolResultT};
use crate::path::VPath;
use crate::python::{PythonLimits, PythonRequest};
use crate::world::{File, Index, put_file, remove_file};

pub(super) fn calculator(expression: &str) -> ToolResultT {
    crate::calculator::evaluate(expression)
        .map(|r| json!({"expression": expression, "result": r}))
        .map_err(|e| ToolError::new(ErrorKind::Invalid, format!("calculator: {e}")))
}

/// Where `run_python` calls go. Returns the outcome record (see [`outcome_from_record`]).
pub trait PythonBackend: Send {
    /// Runs `code` over `files` (workspace-relative paths) for call `call_id` of `step`.
    fn run(
        &mut self,
        step: u64,
        call_id: &str,
        code: &str,
        files: &BTreeMap<String, Vec<u8>>,
    ) -> Value;
}

/// Runs scripts for real in the sandbox.
#[derive(Debug, Clone, Default)]
pub struct LivePython {
    /// Limits per call.
    pub limits: PythonLimits,
}

impl PythonBackend for LivePython {
    fn run(
        &mut self,
        _step: u64,
        _call_id: &str,
        code: &str,
        files: &BTreeMap<String, Vec<u8>>,
    ) -> Value {
        let req = PythonRequest {
            script: code,
            files,
            limits: self.limits,
        };
        match crate::python::run(&req) {
            Ok(o) => {
                let b64 = base64::engine::general_purpose::STANDARD;
                let written: BTreeMap<&String, String> =
                    o.written.iter().map(|(k, v)| (k, b64.encode(v))).collect();
                json!({"exit_code": o.exit_code, "stdout": o.stdout, "stderr": o.stderr, "timed_out": o.timed_out,
                       "memory_exceeded": o.memory_exceeded, "written": written, "deleted": o.deleted, "refused": o.refused})
            }
            Err(e) => json!({"error": e.to_string()}),
        }
    }
}

/// Replays recorded outcomes by (step, call id).
#[derive(Debug, Clone, Default)]
pub struct RecordedPython {
    /// Outcome records.
    pub outcomes: BTreeMap<(u64, String), Value>,
}

impl PythonBackend for RecordedPython {
    fn run(
        &mut self,
        step: u64,
        call_id: &str,
        _code: &str,
        _files: &BTreeMap<String, Vec<u8>>,
    ) -> Value {
        self.outcomes
            .get(&(step, call_id.to_owned()))
            .cloned()
            .unwrap_or_else(|| json!({"error": format!("replay: no recorded run_python outcome for step {step} call {call_id}")}))
    }
}

/// Decodes the written files of an outcome record.
pub fn outcome_from_record(record: &Value) -> BTreeMap<String, Vec<u8>> {
    let b64 = base64::engine::general_purpose::STANDARD;
    record["written"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), b64.decode(v.as_str()?).ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn run_python(
    world: &mut World,
    code: &str,
    ctx: &mut CallContext<'_>,
) -> Result<(Value, Value), ToolError> {
    if code.trim().is_empty() {
        return Err(ToolError::new(ErrorKind::Invalid, "the script is empty"));
    }
    let files: BTreeMap<String, Vec<u8>> = {
        let idx = world.resource::<Index>();
        idx.files
            .range("workspace/".to_owned()..)
            .take_while(|(k, _)| k.starts_with("workspace/"))
            .filter_map(|(k, e)| {
                Some((
                    k["workspace/".len()..].to_owned(),
                    world.get::<File>(*e)?.bytes.clone(),
                ))
            })
            .collect()
    };
    let record = ctx.python.run(ctx.step, ctx.call_id, code, &files);
    if let Some(err) = record["error"].as_str() {
        return Err(ToolError::new(
            ErrorKind::Unavailable,
            format!("run_python is unavailable: {err}"),
        ));
    }
    let mut refused: Vec<String> = record["refused"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut written = Vec::new();
    for (rel, bytes) in outcome_from_record(&record) {
        match VPath::parse(&format!("workspace/{rel}")) {
            Ok(p) if !world.resource::<Index>().folders.contains_key(p.as_str()) => {
                put_file(world, &p, bytes);
                written.push(p.as_str().to_owned());
            }
            _ => refused.push(format!("{rel}: not a valid workspace file path")),
        }
    }
    let mut deleted = Vec::new();
    for rel in record["deleted"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let p = format!("workspace/{rel}");
        if remove_file(world, &p) {
            deleted.push(p);
        }
    }
    let visible = json!({"exit_code": record["exit_code"], "stdout": record["stdout"], "stderr": record["stderr"],
                         "timed_out": record["timed_out"], "memory_exceeded": record["memory_exceeded"],
                         "written": written, "deleted": deleted, "refused": refused});
    Ok((visible, record))
}
