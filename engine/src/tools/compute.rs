//! Compute tools: the calculator and sandboxed Python.
//!
//! `run_python` output is not reproducible by re-running (the interpreter, its
//! version and the host may differ), so its whole outcome, including the bytes of
//! files it wrote, is kept in the trajectory; replay applies the recorded outcome
//! instead of running the script again. That holds for every outcome: a call
//! refused because the sandbox was unavailable is recorded (as `{"error": ..}`)
//! like any other, so such runs replay too. The size of a record is bounded by
//! the sandbox's caps on output and on files brought back.

use std::collections::BTreeMap;

use base64::Engine;
use bevy_ecs::prelude::*;
use serde_json::{Value, json};

use super::{CallContext, ErrorKind, ToolError, ToolOutcome};
use crate::path::VPath;
use crate::python::{PythonLimits, PythonRequest};
use crate::world::{File, Index, put_file, remove_file};

pub(super) fn calculator(expression: &str) -> ToolOutcome {
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
    /// Bubblewrap binary to use instead of `$TBSIM_BWRAP` or `bwrap` (a
    /// configuration switch; a path that does not work makes the tool
    /// unavailable).
    pub bwrap: Option<std::ffi::OsString>,
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
        let outcome = match &self.bwrap {
            Some(bwrap) => crate::python::run_with_bwrap(&req, bwrap),
            None => crate::python::run(&req),
        };
        match outcome {
            Ok(o) => {
                let b64 = base64::engine::general_purpose::STANDARD;
                let written: BTreeMap<&String, String> =
                    o.written.iter().map(|(k, v)| (k, b64.encode(v))).collect();
                let mut record = json!({"exit_code": o.exit_code, "stdout": o.stdout, "stderr": o.stderr, "timed_out": o.timed_out,
                       "memory_exceeded": o.memory_exceeded, "written": written, "deleted": o.deleted, "refused": o.refused});
                // Only when a limit was hit, so ordinary records keep their shape.
                if !o.limits_hit.is_empty() {
                    let messages: Vec<String> = o
                        .limits_hit
                        .iter()
                        .map(|hit| hit.message(&self.limits))
                        .collect();
                    record["limits"] = json!(messages);
                }
                record
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

/// Runs the script and applies its outcome. The record (second) is returned
/// even when the call fails, so that replay meets the same failure.
pub(super) fn run_python(
    world: &mut World,
    code: &str,
    ctx: &mut CallContext<'_>,
) -> (ToolOutcome, Option<Value>) {
    if code.trim().is_empty() {
        return (
            Err(ToolError::new(ErrorKind::Invalid, "the script is empty")),
            None,
        );
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
        let error = ToolError::new(
            ErrorKind::Unavailable,
            format!("run_python is unavailable: {err}"),
        );
        return (Err(error), Some(record));
    }
    let mut refused: Vec<String> = record["refused"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut written = Vec::new();
    for (rel, bytes) in outcome_from_record(&record) {
        let parsed = VPath::parse(&format!("workspace/{rel}")).ok().filter(|p| {
            crate::path::check_name_limits(p.relative()).is_ok()
                && !world.resource::<Index>().folders.contains_key(p.as_str())
        });
        match parsed {
            Some(p) => {
                put_file(world, &p, bytes);
                written.push(p.as_str().to_owned());
            }
            None => refused.push(format!("{rel}: not a valid workspace file path")),
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
    let mut visible = json!({"exit_code": record["exit_code"], "stdout": record["stdout"], "stderr": record["stderr"],
                         "timed_out": record["timed_out"], "memory_exceeded": record["memory_exceeded"],
                         "written": written, "deleted": deleted, "refused": refused});
    if let Some(limits) = record.get("limits") {
        visible["limits"] = limits.clone();
    }
    (Ok(visible), Some(record))
}
