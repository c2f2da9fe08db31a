//! The trajectory's lines as one type: every line is a [`Line`], written with
//! [`super::Trajectory::push`] and read with [`Line::parse`] (which reads what
//! `serde_json::from_str::<Line>` reads, faster).
//!
//! Keys come out in the order the fields are declared here (`type` first), never in
//! an order that depends on how `serde_json` stores a map. The free-form parts (a
//! tool's result value, a `run_python` record, a model's response, a colleague's
//! request) are JSON values; their objects are written with their keys sorted (see
//! [`crate::protocol::sorted_json`]), whatever `serde_json`'s features.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::SimEvent;
use crate::protocol::sorted_json;
use crate::protocol::{EndReason, FeedbackPolicy, ModelRecord, ModelUsage, RequestBody};
use crate::protocol::{SimConfig, ToolCall, ToolResult};
use crate::queue::EventClass;
use crate::time::SimTime;
use tbsim_scenario::check::CheckKind;

/// One trajectory line. The variant is the line's `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The first line: format, versions, scenario and settings.
    Header(Header),
    /// An event popped from the queue.
    Event {
        /// When it popped.
        t: SimTime,
        /// Its tie-break class.
        class: EventClass,
        /// Its push sequence number.
        seq: u64,
        /// What happened.
        event: SimEvent,
    },
    /// An agent decision (step numbers from 1).
    Decision {
        /// The step.
        step: u64,
        /// When it was made.
        t: SimTime,
        /// The tool calls, in order.
        calls: Vec<ToolCall>,
        /// Output tokens its model calls produced (written only when above 0).
        #[serde(default, skip_serializing_if = "is_zero")]
        tokens_out: u64,
    },
    /// One of a model-backed agent's calls, before the decision it led to.
    Model(ModelLine),
    /// A model-played colleague's call, within the tool call that asked.
    Npc(NpcLine),
    /// A tool call's result.
    Result {
        /// The decision it belongs to.
        step: u64,
        /// The call id.
        call: String,
        /// When the call ended.
        t: SimTime,
        /// The result as the agent saw it.
        result: ToolResult,
        /// What replay needs to reproduce it (a `run_python` outcome), or `null`.
        #[serde(serialize_with = "sorted_json::option")]
        record: Option<Value>,
    },
    /// A colleague disclosed a clue.
    Disclosure {
        /// When.
        t: SimTime,
        /// The colleague's key.
        npc: String,
        /// The clue's key.
        clue: String,
        /// The task the clue belongs to, if any.
        task: Option<String>,
        /// Whether this is the clue's first disclosure.
        first: bool,
    },
    /// A checkpoint passed.
    Checkpoint {
        /// When.
        t: SimTime,
        /// The task's key.
        task: String,
        /// The checkpoint's key.
        checkpoint: String,
        /// Its kind.
        kind: CheckKind,
    },
    /// Human guidance, applied right before decision `step` (see the `live` module).
    Guidance(GuidanceLine),
    /// The mentor's feedback at the end of a working day.
    Feedback {
        /// When.
        t: SimTime,
        /// The day, from 1.
        day: u32,
        /// The feedback, one line each (empty with no feedback).
        lines: Vec<String>,
    },
    /// The run ended.
    End {
        /// When.
        t: SimTime,
        /// Why.
        reason: Option<EndReason>,
        /// Decisions made.
        steps: u64,
        /// Tool calls made.
        tool_calls: u64,
    },
    /// A task's final score (after the end, one line per task).
    Score {
        /// The task's key.
        task: String,
        /// Its checkpoint score.
        score: f64,
        /// Whether it succeeded.
        success: bool,
        /// The checkpoints passed, in scenario order.
        passed: Vec<String>,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The header line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The trajectory format ([`super::FORMAT`] when written by this build).
    pub format: u32,
    /// The tbsim version that wrote it.
    pub tbsim: String,
    /// The scenario's name.
    pub scenario: String,
    /// BLAKE3 of the scenario file.
    pub scenario_blake3: String,
    /// The master seed.
    pub seed: u64,
    /// The agent's name.
    pub agent: String,
    /// The hint level.
    pub hints: u8,
    /// Simulated seconds charged per decision (`null`: none).
    pub turn_cost_secs: Option<u32>,
    /// The mentor-feedback policy.
    pub feedback: FeedbackPolicy,
    /// Simulated seconds per 1000 output tokens (written only when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_cost_secs: Option<u32>,
    /// The run this one was forked from (written only for a fork).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkOf>,
}

/// Where a forked run comes from: its first `step` decisions (and everything up to
/// them) are its parent's, replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOf {
    /// The parent run directory's name (its last path component, never a host path).
    pub parent: String,
    /// BLAKE3 of the parent's trajectory lines up to the fork point (the header and
    /// every line before the parent's decision `step + 1`, each followed by `\n`).
    pub parent_digest: String,
    /// Decisions taken over from the parent.
    pub step: u64,
}

/// A `guidance` line: who guided, when, and what the agent was told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuidanceLine {
    /// The decision it precedes (it reaches the agent in the observation that
    /// decision is made on).
    pub step: u64,
    /// When.
    pub t: SimTime,
    /// Who sent it (`human:<name>`).
    pub by: String,
    /// The task it is about, if any.
    pub task: Option<String>,
    /// The hint tier given (1 is the first), or `null` for a message.
    pub tier: Option<u8>,
    /// What the agent was told.
    pub text: String,
}

impl Header {
    /// The simulation settings the run used.
    pub fn config(&self) -> SimConfig {
        SimConfig {
            seed: Some(self.seed),
            hints: self.hints,
            turn_cost_secs: self.turn_cost_secs,
            token_cost_secs: self.token_cost_secs,
            agent: self.agent.clone(),
            feedback: self.feedback,
        }
    }
}

/// A `model` line: where and when, then a [`ModelRecord`]'s fields (see the
/// trajectory module docs for `request` and `request_delta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelLine {
    /// The decision the call leads to.
    pub step: u64,
    /// When it was made.
    pub t: SimTime,
    /// `turn`, `summary` or `reflection`.
    pub purpose: String,
    /// The provider's model name.
    pub model: String,
    /// The request body as sent (absent when `request_delta` stands for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestBody>,
    /// The compact form of a turn request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_delta: Option<RequestBody>,
    /// Failed attempts before the outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// The response body (`null` when the call failed for good).
    #[serde(serialize_with = "sorted_json::value")]
    pub response: Value,
    /// Tokens and cost of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ModelUsage>,
    /// Why the call failed for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ModelLine {
    /// The line for `record`, made at `t` for decision `step`.
    pub fn new(step: u64, t: SimTime, record: &ModelRecord) -> ModelLine {
        ModelLine {
            step,
            t,
            purpose: record.purpose.to_owned(),
            model: record.model.clone(),
            request: record
                .request_delta
                .is_none()
                .then(|| record.request.clone()),
            request_delta: record.request_delta.clone(),
            failures: record.failures.clone(),
            response: record.response.clone(),
            usage: record.usage.clone(),
            error: record.error.clone(),
        }
    }
}

/// An `npc` line: which call asked which colleague, then what the engine recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NpcLine {
    /// The decision the asking call belongs to.
    pub step: u64,
    /// The asking call's id.
    pub call: String,
    /// The colleague's key.
    pub npc: String,
    /// When.
    pub t: SimTime,
    /// The model call.
    #[serde(flatten)]
    pub record: NpcRecord,
}

/// A model-played colleague's call as recorded (the npc module's `RecordedNpc`
/// replays it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpcRecord {
    /// The provider's model name.
    pub model: String,
    /// The request body (keys sorted: replay writes the line again from this).
    #[serde(serialize_with = "sorted_json::value")]
    pub request: Value,
    /// The response body (`null` when the call failed).
    #[serde(default, serialize_with = "sorted_json::value")]
    pub response: Value,
    /// The reply (`null`: silence, or the call failed).
    #[serde(default)]
    pub reply: Option<String>,
    /// The clues the reply discloses.
    #[serde(default)]
    pub clues: Vec<String>,
    /// Failed attempts (written only when the call failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Why the call failed (written only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The fields of each struct-like [`Line`] variant, for [`Line::parse`] to read a
/// line straight into once its `type` is known. Each mirrors its variant's fields
/// and deserialising attributes exactly (a field added to a variant and not here
/// fails to compile), plus the `type` key.
mod fields {
    use serde::Deserialize;
    use serde::de::IgnoredAny;
    use serde_json::Value;

    use super::Line;
    use crate::event::SimEvent;
    use crate::protocol::{EndReason, ToolCall, ToolResult};
    use crate::queue::EventClass;
    use crate::time::SimTime;
    use tbsim_scenario::check::CheckKind;

    #[derive(Deserialize)]
    pub(super) struct Event {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        t: SimTime,
        class: EventClass,
        seq: u64,
        event: SimEvent,
    }

    #[derive(Deserialize)]
    pub(super) struct Decision {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        step: u64,
        t: SimTime,
        calls: Vec<ToolCall>,
        #[serde(default)]
        tokens_out: u64,
    }

    #[derive(Deserialize)]
    pub(super) struct Result {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        step: u64,
        call: String,
        t: SimTime,
        result: ToolResult,
        record: Option<Value>,
    }

    #[derive(Deserialize)]
    pub(super) struct Disclosure {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        t: SimTime,
        npc: String,
        clue: String,
        task: Option<String>,
        first: bool,
    }

    #[derive(Deserialize)]
    pub(super) struct Checkpoint {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        t: SimTime,
        task: String,
        checkpoint: String,
        kind: CheckKind,
    }

    #[derive(Deserialize)]
    pub(super) struct Feedback {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        t: SimTime,
        day: u32,
        lines: Vec<String>,
    }

    #[derive(Deserialize)]
    pub(super) struct End {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        t: SimTime,
        reason: Option<EndReason>,
        steps: u64,
        tool_calls: u64,
    }

    #[derive(Deserialize)]
    pub(super) struct Score {
        // Declared (and ignored) so that a second `type` is an error, as it is to
        // the tagged enum.
        #[serde(rename = "type")]
        _tag: IgnoredAny,
        task: String,
        score: f64,
        success: bool,
        passed: Vec<String>,
    }

    impl From<Event> for Line {
        fn from(f: Event) -> Line {
            let Event {
                _tag: _,
                t,
                class,
                seq,
                event,
            } = f;
            Line::Event {
                t,
                class,
                seq,
                event,
            }
        }
    }
    impl From<Decision> for Line {
        fn from(f: Decision) -> Line {
            let Decision {
                _tag: _,
                step,
                t,
                calls,
                tokens_out,
            } = f;
            Line::Decision {
                step,
                t,
                calls,
                tokens_out,
            }
        }
    }
    impl From<Result> for Line {
        fn from(f: Result) -> Line {
            let Result {
                _tag: _,
                step,
                call,
                t,
                result,
                record,
            } = f;
            Line::Result {
                step,
                call,
                t,
                result,
                record,
            }
        }
    }
    impl From<Disclosure> for Line {
        fn from(f: Disclosure) -> Line {
            let Disclosure {
                _tag: _,
                t,
                npc,
                clue,
                task,
                first,
            } = f;
            Line::Disclosure {
                t,
                npc,
                clue,
                task,
                first,
            }
        }
    }
    impl From<Checkpoint> for Line {
        fn from(f: Checkpoint) -> Line {
            let Checkpoint {
                _tag: _,
                t,
                task,
                checkpoint,
                kind,
            } = f;
            Line::Checkpoint {
                t,
                task,
                checkpoint,
                kind,
            }
        }
    }
    impl From<Feedback> for Line {
        fn from(f: Feedback) -> Line {
            let Feedback {
                _tag: _,
                t,
                day,
                lines,
            } = f;
            Line::Feedback { t, day, lines }
        }
    }
    impl From<End> for Line {
        fn from(f: End) -> Line {
            let End {
                _tag: _,
                t,
                reason,
                steps,
                tool_calls,
            } = f;
            Line::End {
                t,
                reason,
                steps,
                tool_calls,
            }
        }
    }
    impl From<Score> for Line {
        fn from(f: Score) -> Line {
            let Score {
                _tag: _,
                task,
                score,
                success,
                passed,
            } = f;
            Line::Score {
                task,
                score,
                success,
                passed,
            }
        }
    }
}

/// The `type` of a line written as tbsim writes it (`{"type":"<name>",` first, the
/// name plain lower-case letters and `_`), else `None`.
fn leading_tag(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(r#"{"type":""#)?;
    let end = rest.find('"')?;
    let (tag, after) = rest.split_at(end);
    let plain = !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    (plain && after[1..].starts_with([',', '}'])).then_some(tag)
}

impl Line {
    /// Parses one line: what `serde_json::from_str::<Line>` gives, faster on the
    /// lines a simulation writes. serde's tagged enum must buffer a whole line into
    /// an intermediate tree before it knows the variant (a quarter of a long run's
    /// replay); a line that starts with its `type`, as every line tbsim writes
    /// does, is read straight into its variant's fields instead. Any other line,
    /// any line that fails that way, and the variants holding a struct of their own
    /// (header, model, npc, guidance: rarer, and their structs have no `type` to
    /// refuse a second one with) go through serde's tagged enum, so errors and odd
    /// but valid lines read exactly as before.
    pub fn parse(text: &str) -> serde_json::Result<Line> {
        use serde_json::from_str;
        let fast = match leading_tag(text) {
            Some("event") => from_str::<fields::Event>(text).map(Line::from).ok(),
            Some("decision") => from_str::<fields::Decision>(text).map(Line::from).ok(),
            Some("result") => from_str::<fields::Result>(text).map(Line::from).ok(),
            Some("disclosure") => from_str::<fields::Disclosure>(text).map(Line::from).ok(),
            Some("checkpoint") => from_str::<fields::Checkpoint>(text).map(Line::from).ok(),
            Some("feedback") => from_str::<fields::Feedback>(text).map(Line::from).ok(),
            Some("end") => from_str::<fields::End>(text).map(Line::from).ok(),
            Some("score") => from_str::<fields::Score>(text).map(Line::from).ok(),
            _ => None,
        };
        match fast {
            Some(line) => Ok(line),
            None => from_str(text),
        }
    }
}
