//! The built-in model-backed agent.
//!
//! The conversation follows the chat-completions protocol strictly, so any
//! OpenAI-compatible server accepts it:
//!
//! 1. `system`: the system prompt; `user`: the opening message (status line,
//!    briefing, first notifications, notes).
//! 2. Each turn, the model answers with text and tool calls. All calls of one
//!    assistant message become one [`Decision`] (parallel tool calls), run in order.
//! 3. Each call is answered by a `tool` message with the same id, holding the result
//!    as JSON. Then one `user` message carries the status line, every notification
//!    that arrived meanwhile, and any images the results returned (as `image_url`
//!    data-URL parts). Images and notifications never sit between tool messages, and
//!    there are no system messages after the first.
//! 4. A turn without tool calls is answered by the status message and a nudge.
//!
//! When a new working day starts, the conversation starts afresh (system prompt and
//! a new-day message with the mentor's feedback). With `--memory notes`, one
//! reflection call first writes the agent's notes from a transcript of the day and
//! the feedback; the notes open every later day.
//!
//! Before each turn the [`HistoryPolicy`] may pick a span to compress; the model
//! summarises it and the summary replaces it. Sizes are estimated and calibrated
//! against the prompt tokens the server reports for each call (see
//! [`crate::history`]); the ratio is rebuilt from the recorded calls on resume, so
//! a resumed run compresses where the uninterrupted one would.
//!
//! A reply the server cut off at the reply limit (`finish_reason: "length"`) is
//! counted ([`ModelUsage::cut_off`]) and the next message tells the model so. A
//! server that refuses a request as longer than the context window ends the run
//! as the agent's failure ([`AgentError::ContextFull`]). When the first turn's
//! prompt, as the server counted it, is too small to hold the tool catalogue that
//! was sent with it, the server's chat template dropped the tools: the agent warns
//! (the model never saw a tool). Every call (turn, summary, reflection)
//! goes into the agent's [`RecordSink`] the moment it completes, successful or not,
//! so the runner writes it to the trajectory while the rest of the decision is still
//! in flight.
//!
//! To resume an interrupted run, the agent restores its conversation from the last
//! recorded turn's request plus its response, and its notes from the last recorded
//! reflection. The calls recorded after the last decision (say, a summary whose turn
//! was cut short) answer the same calls when the agent makes them again: a call is
//! taken from the record when its purpose and request equal the next recorded one's,
//! and a call that failed for good is made again. Nothing completed is asked again.
//!
//! A turn request is recorded in compact form (`request_delta`, see
//! [`tbsim_engine::trajectory`]) relative to the previous turn line: the agent tracks how many
//! leading messages are unchanged since that request (the conversation only grows,
//! except where a summary replaces a span or a new day starts afresh). After a resume
//! the previous turn line is the last one recorded; if recorded lines are given up,
//! the next turn request is written in full.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::client::{CallOutcome, LlmError, ModelCaller, contain_reply, is_cut_off};
use crate::history::{HistoryPolicy, Sizing, catalogue_tokens, request_tokens, transcript};
use crate::message::{
    Content, ImageUrl, Message, Part, Role, assistant_from, response_text, tool_schemas_json,
};
use crate::prompt::{PromptBuilder, render_notifications, status_line};
use tbsim_core::protocol::ModelRecord;
use tbsim_core::protocol::ModelUsage;
use tbsim_core::protocol::Notification;
use tbsim_core::protocol::RequestBody;
use tbsim_core::protocol::{Briefing, Decision, Observation, ToolResult};
use tbsim_engine::agent::{Agent, AgentError, AgentFuture, PastStep, RecordSink, TurnLog};

/// What the agent carries from one day to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Memory {
    /// Nothing: each day starts with the mentor's feedback only.
    #[default]
    None,
    /// Notes written by a reflection call at the end of each day.
    Notes,
}

/// The model-backed agent.
pub struct LlmAgent {
    name: String,
    caller: Arc<dyn ModelCaller>,
    prompts: Arc<dyn PromptBuilder>,
    history: Box<dyn HistoryPolicy>,
    memory: Memory,
    tools: &'static RawValue,
    briefing: Option<Briefing>,
    messages: Vec<Message>,
    /// Ids of the last assistant message's calls, awaiting results.
    pending: Vec<String>,
    notes: Option<String>,
    day: u32,
    /// Model lines so far; numbers the next request (it seeds retry jitter).
    requests: u64,
    /// Usage of the decision in progress.
    usage: ModelUsage,
    sink: RecordSink,
    /// Model lines an interrupted run recorded after its last decision, oldest first,
    /// answering the calls they record when those are made again.
    recorded: VecDeque<Value>,
    /// The previous turn line of the trajectory, which the next turn request is
    /// written relative to (`None`: unknown, so the next one is written in full).
    base: Option<TurnBase>,
    /// Estimates against the server's counts (see [`crate::history`]).
    sizing: Sizing,
    /// Whether the first turn's prompt size was checked against the catalogue.
    catalogue_checked: bool,
    /// Whether the last turn's reply was cut off at the reply limit (the next
    /// message says so).
    cut_off: bool,
    /// Warnings not yet taken with [`Agent::take_log`].
    warnings: Vec<String>,
}

/// The estimated tokens of a request body (its messages and tool catalogue), as
/// the calibration measures it: the same for a live request and a recorded one.
fn request_estimate(request: &Value) -> usize {
    let msgs: Vec<Message> =
        serde_json::from_value(request["messages"].clone()).unwrap_or_default();
    let tools = request.get("tools").map(Value::to_string);
    request_tokens(&msgs, tools.as_deref())
}

/// What the next turn request's compact form is measured against.
#[derive(Debug, Clone, PartialEq)]
struct TurnBase {
    /// Leading messages of the conversation still equal to the previous turn
    /// request's: the conversation only grows, except where a summary replaces a
    /// span or a new day starts it afresh.
    shared: usize,
    /// The previous turn request's `tools`, as compact JSON text.
    tools: Option<String>,
}

impl TurnBase {
    /// The base a turn request leaves (all its messages are shared so far).
    fn after(body: &RequestBody) -> Option<TurnBase> {
        body.turn_shape()
            .map(|(shared, tools)| TurnBase { shared, tools })
    }
}

impl std::fmt::Debug for LlmAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmAgent")
            .field("name", &self.name)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

fn all_notifications(obs: &Observation) -> Vec<&Notification> {
    obs.results
        .iter()
        .flat_map(|r| r.notifications.iter())
        .chain(obs.notifications.iter())
        .collect()
}

fn tool_content(r: &ToolResult) -> String {
    let mut v = json!({"ok": r.ok, "time": r.time});
    match (&r.result, &r.error) {
        (Some(res), _) => v["result"] = res.clone(),
        (None, Some(e)) => v["error"] = json!({"kind": e.kind, "message": e.message}),
        _ => {}
    }
    if !r.attachments.is_empty() {
        v["attachments"] = json!(format!(
            "{} attachment(s), shown in the next message",
            r.attachments.len()
        ));
    }
    v.to_string()
}

impl LlmAgent {
    /// An agent named `name` (e.g. `llm:gpt`).
    pub fn new(
        name: impl Into<String>,
        caller: Arc<dyn ModelCaller>,
        prompts: Arc<dyn PromptBuilder>,
        history: Box<dyn HistoryPolicy>,
        memory: Memory,
    ) -> LlmAgent {
        LlmAgent {
            name: name.into(),
            caller,
            prompts,
            history,
            memory,
            tools: tool_schemas_json(),
            briefing: None,
            messages: Vec::new(),
            pending: Vec::new(),
            notes: None,
            day: 1,
            requests: 0,
            usage: ModelUsage::default(),
            sink: RecordSink::default(),
            recorded: VecDeque::new(),
            base: None,
            sizing: Sizing::new(catalogue_tokens(tool_schemas_json().get())),
            catalogue_checked: false,
            cut_off: false,
            warnings: Vec::new(),
        }
    }

    /// The calibration so far.
    pub fn sizing(&self) -> Sizing {
        self.sizing
    }

    /// Learns from a completed call: its request as sent and its usage. A turn's
    /// first count is also checked against the catalogue it carried.
    fn observe(&mut self, purpose: &str, request: &Value, usage: &ModelUsage) {
        let estimate = request_estimate(request);
        self.sizing.observe(estimate, usage.input_tokens);
        if purpose != "turn" || self.catalogue_checked || usage.input_tokens == 0 {
            return;
        }
        self.catalogue_checked = true;
        let catalogue = request
            .get("tools")
            .map_or(0, |t| catalogue_tokens(&t.to_string()));
        // Half the estimate: tokenizers differ, but not by a factor of two on JSON.
        if (usage.input_tokens as usize) < catalogue / 2 {
            self.warnings.push(format!(
                "the server counted {} prompt tokens for the first turn, but the tool catalogue sent with it alone is about {catalogue}: its chat template dropped the tools, so the model never saw them (llama.cpp: start llama-server with --jinja; or use a model whose chat template supports tools)",
                usage.input_tokens
            ));
        }
    }

    /// The conversation as it stands.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The notes carried between days.
    pub fn notes(&self) -> Option<&str> {
        self.notes.as_deref()
    }

    /// Sends one request and puts its record in the sink (or answers it from the
    /// interrupted run's record). `Ok` holds the raw response.
    async fn call(
        &mut self,
        purpose: &'static str,
        body: RequestBody,
    ) -> Result<Value, AgentError> {
        if let Some(raw) = self.answer_from_record(purpose, &body) {
            return Ok(raw);
        }
        // Only turn requests resend a conversation; the compact form is for them.
        let mut request_delta = None;
        if purpose == "turn" {
            let base = self.base.as_ref().map(|b| (b.shared, b.tools.as_deref()));
            let parts = body.turn_parts(base);
            request_delta = parts.as_ref().and_then(|p| p.1.clone());
            self.base = parts.map(|((shared, tools), _)| TurnBase { shared, tools });
        }
        self.requests += 1;
        let CallOutcome {
            response,
            failures,
            timing,
        } = self.caller.call(body.clone(), self.requests).await;
        let mut rec = ModelRecord {
            purpose,
            model: self.caller.model().to_owned(),
            request: body,
            request_delta,
            failures,
            response: Value::Null,
            usage: None,
            error: None,
            timing: Some(timing),
        };
        let out = match response {
            Ok(mut raw) => {
                // Before anything reads or records it (see `llm::reply`).
                contain_reply(self.caller.as_ref(), &mut raw);
                let usage = self.caller.usage(&raw);
                self.usage.add(&usage);
                self.observe(purpose, &rec.request.value(), &usage);
                rec.usage = Some(usage);
                rec.response = raw.clone();
                Ok(raw)
            }
            Err(e) => {
                rec.error = Some(e.to_string());
                Err(match e {
                    LlmError::ContextExceeded(_) => {
                        AgentError::ContextFull(format!("{purpose} call: {e}"))
                    }
                    _ => AgentError::Infra(format!("{purpose} call: {e}")),
                })
            }
        };
        self.sink.push(rec);
        out
    }

    /// The recorded response when the next recorded line is this call (same purpose,
    /// same request). Each line taken counts as a request, as it did when it was
    /// made, and its usage counts towards this decision; its line is already written.
    fn answer_from_record(&mut self, purpose: &str, body: &RequestBody) -> Option<Value> {
        if self.recorded.is_empty() {
            return None;
        }
        // Recorded requests went through a `Value`: compare as values, not text.
        let sent = body.value();
        while let Some(line) = self.recorded.front() {
            if line["purpose"] != purpose || line["request"] != sent {
                self.drop_recorded();
                return None;
            }
            let line = self.recorded.pop_front().expect("a front line");
            self.count_recorded(&line);
            if purpose == "turn" {
                // That line (with this very request) is now the previous turn line.
                self.base = TurnBase::after(body);
            }
            if line["response"].is_object() {
                return Some(line["response"].clone());
            }
            // It failed for good: make the call again (a later line may be that retry).
        }
        None
    }

    fn count_recorded(&mut self, line: &Value) {
        self.requests += 1;
        if let Ok(u) = ModelUsage::deserialize(&line["usage"]) {
            self.usage.add(&u);
            self.observe_line(line);
        }
    }

    /// [`LlmAgent::observe`] for a recorded line (with its full request).
    fn observe_line(&mut self, line: &Value) {
        if let (Some(purpose), Ok(u)) = (
            line["purpose"].as_str(),
            ModelUsage::deserialize(&line["usage"]),
        ) && line["response"].is_object()
        {
            self.observe(purpose, &line["request"], &u);
        }
    }

    /// Gives up the recorded lines not taken: the agent asks differently now, so they
    /// only count (their lines stay in the trajectory).
    fn drop_recorded(&mut self) {
        for line in std::mem::take(&mut self.recorded) {
            if line["purpose"] == "turn" {
                // A turn line the agent did not make is now the previous one: rather
                // than track it, write the next turn request in full.
                self.base = None;
            }
            self.count_recorded(&line);
        }
    }

    /// Replaces, in the last assistant message, the long arguments of the calls that
    /// failed by a short marker (`llm::reply`): they are never re-sent in bulk. That
    /// message was not in any request yet, so the compact form stays exact.
    fn shrink_refused(&mut self, pending: &[String], results: &[ToolResult]) {
        let Some(last) = self.messages.last_mut() else {
            return;
        };
        if last.role != Role::Assistant {
            return;
        }
        for call in &mut last.tool_calls {
            let failed = pending.contains(&call.id)
                && results
                    .iter()
                    .find(|r| r.call_id == call.id)
                    .is_none_or(|r| !r.ok);
            if failed && let Some(m) = crate::reply::shrink_refused(&call.function.arguments) {
                call.function.arguments = m;
            }
        }
    }

    fn image_parts(results: &[ToolResult]) -> Vec<Part> {
        results
            .iter()
            .flat_map(|r| r.attachments.iter())
            .filter(|a| a.mime.starts_with("image/"))
            .map(|a| Part::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{};base64,{}", a.mime, a.data),
                },
            })
            .collect()
    }

    fn user_message(text: String, images: Vec<Part>) -> Message {
        if images.is_empty() {
            return Message::text(Role::User, text);
        }
        let mut parts = vec![Part::Text { text }];
        parts.extend(images);
        Message {
            content: Some(Content::Parts(parts)),
            ..Message::text(Role::User, "")
        }
    }

    fn start_conversation(&mut self, b: &Briefing, opening: String, images: Vec<Part>) {
        self.messages = vec![
            Message::text(Role::System, self.prompts.system(b)),
            Self::user_message(opening, images),
        ];
        self.pending.clear();
        if let Some(b) = &mut self.base {
            b.shared = 0;
        }
    }

    /// Turns an observation into messages (and, on a new day, a reflection call).
    async fn absorb(&mut self, obs: &Observation) -> Result<(), AgentError> {
        let status = status_line(&obs.time, obs.step);
        if let Some(b) = &obs.briefing {
            self.briefing = Some(b.clone());
            let notes = render_notifications(obs.notifications.iter());
            let opening = format!(
                "{status}\n\n{}",
                self.prompts.task(b, &notes, self.notes.as_deref())
            );
            self.start_conversation(b, opening, Vec::new());
            return Ok(());
        }
        // Every pending call gets its answer, in call order, before anything else.
        let pending = std::mem::take(&mut self.pending);
        self.shrink_refused(&pending, &obs.results);
        for id in pending {
            let content = obs.results.iter().find(|r| r.call_id == id).map_or_else(
                || json!({"ok": false, "error": "not executed"}).to_string(),
                tool_content,
            );
            self.messages.push(Message::tool(&id, content));
        }
        let notes = all_notifications(obs);
        let new_day = notes.iter().find_map(|n| match n {
            Notification::DayStarted { day, feedback, .. } => Some((*day, feedback.clone())),
            _ => None,
        });
        let images = Self::image_parts(&obs.results);
        let Some((day, feedback)) = new_day else {
            let mut text = format!("{status}\n\n{}", render_notifications(notes));
            if std::mem::take(&mut self.cut_off) {
                text.push_str("\n\n");
                text.push_str(&self.prompts.cut_off(self.caller.max_tokens()));
            }
            if obs.results.is_empty() {
                text.push_str("\n\n");
                text.push_str(&self.prompts.nudge());
            }
            self.messages.push(Self::user_message(text, images));
            return Ok(());
        };
        let feedback = if feedback.is_empty() {
            "(none)".to_owned()
        } else {
            feedback.join("\n")
        };
        if self.memory == Memory::Notes {
            // The day's record includes its last results, so reflect after adding them.
            self.messages.push(Self::user_message(
                format!(
                    "{status}\n\n{}",
                    render_notifications(notes.iter().copied())
                ),
                Vec::new(),
            ));
            let record = transcript(&self.messages, 600, self.transcript_room(40_000));
            let prompt =
                self.prompts
                    .reflection(self.day, &record, &feedback, self.notes.as_deref());
            let body = self
                .caller
                .body(&[Message::text(Role::User, prompt)], None, None);
            let raw = self.call("reflection", body).await?;
            let text = response_text(&raw).trim().to_owned();
            if !text.is_empty() {
                self.notes = Some(text);
            }
        }
        self.day = day;
        let Some(b) = self.briefing.clone() else {
            return Err(AgentError::Agent(
                "a new day began before any briefing".into(),
            ));
        };
        let rest = render_notifications(
            notes
                .iter()
                .copied()
                .filter(|n| !matches!(n, Notification::DayStarted { .. })),
        );
        let opening = format!(
            "{status}\n\n{}",
            self.prompts
                .day(day, &feedback, &rest, self.notes.as_deref())
        );
        self.start_conversation(&b, opening, images);
        Ok(())
    }

    async fn compress(&mut self) -> Result<(), AgentError> {
        let Some(span) = self.history.compress(&self.messages, &self.sizing) else {
            return Ok(());
        };
        let room = self.transcript_room(200_000);
        let prompt = self
            .prompts
            .summary(&transcript(&self.messages[span.clone()], 2_000, room));
        let body = self
            .caller
            .body(&[Message::text(Role::User, prompt)], None, None);
        let raw = self.call("summary", body).await?;
        let summary = Message::text(
            Role::User,
            format!(
                "Summary of your earlier work (the full log was condensed):\n{}",
                response_text(&raw).trim()
            ),
        );
        if let Some(b) = &mut self.base {
            b.shared = b.shared.min(span.start);
        }
        self.messages.splice(span, [summary]);
        Ok(())
    }

    /// Characters of transcript a summary or reflection request may hold: `cap`,
    /// or less when the history limit (a small context window) says so, leaving
    /// room for the request's own instructions.
    fn transcript_room(&self, cap: usize) -> usize {
        let tokens = self
            .sizing
            .unscaled(self.history.limit())
            .saturating_sub(800);
        tokens.saturating_mul(4).clamp(2_000, cap)
    }

    async fn turn(&mut self, obs: &Observation) -> Result<Decision, AgentError> {
        self.absorb(obs).await?;
        self.compress().await?;
        let body = self.caller.body(&self.messages, Some(self.tools), None);
        let raw = self.call("turn", body).await?;
        self.cut_off = is_cut_off(&raw);
        let (assistant, calls) = assistant_from(&raw, obs.step + 1);
        self.pending = calls.iter().map(|c| c.id.clone()).collect();
        self.messages.push(assistant);
        Ok(Decision { calls })
    }
}

impl Agent for LlmAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        Box::pin(async move {
            let out = self.turn(obs).await;
            // Recorded lines belong to the decision after them, whatever it used.
            self.drop_recorded();
            out
        })
    }

    fn take_log(&mut self) -> TurnLog {
        TurnLog {
            records: self.sink.drain(),
            usage: std::mem::take(&mut self.usage),
            warnings: std::mem::take(&mut self.warnings),
        }
    }

    fn record_sink(&self) -> Option<RecordSink> {
        Some(self.sink.clone())
    }

    fn uses_model(&self) -> bool {
        true
    }

    fn resume(&mut self, past: &[PastStep], pending: &[Value]) -> Result<(), AgentError> {
        self.recorded = pending.iter().cloned().collect();
        let Some(first) = past.first() else {
            return Ok(());
        };
        self.briefing = first.observation.briefing.clone();
        for p in past {
            for n in all_notifications(&p.observation) {
                if let Notification::DayStarted { day, .. } = n {
                    self.day = *day;
                }
            }
        }
        let records: Vec<&Value> = past.iter().flat_map(|p| p.records.iter()).collect();
        self.requests = records.len() as u64;
        // The calibration (and the catalogue check) as the calls left them.
        for r in &records {
            self.observe_line(r);
        }
        if let Some(r) = records
            .iter()
            .rev()
            .find(|r| r["purpose"] == "reflection" && r["response"].is_object())
        {
            let text = response_text(&r["response"]).trim().to_owned();
            self.notes = (!text.is_empty()).then_some(text);
        }
        let last = past.last().expect("not empty");
        let turn = last
            .records
            .iter()
            .rev()
            .find(|r| r["purpose"] == "turn" && r["response"].is_object())
            .ok_or_else(|| {
                AgentError::Agent(format!(
                    "step {} has no recorded model turn to continue from",
                    past.len()
                ))
            })?;
        let messages: Vec<Message> = serde_json::from_value(turn["request"]["messages"].clone())
            .map_err(|e| AgentError::Agent(format!("the recorded request is unreadable: {e}")))?;
        let step = turn["step"].as_u64().unwrap_or(past.len() as u64);
        let (assistant, calls) = assistant_from(&turn["response"], step);
        if calls != last.decision.calls {
            return Err(AgentError::Agent(
                "the last recorded response does not match the last recorded decision".into(),
            ));
        }
        // The next turn is written relative to the last turn line, if that is the one
        // the conversation continues (it is, unless the records are odd).
        let last_turn = records.iter().rev().find(|r| r["purpose"] == "turn");
        self.base = last_turn
            .filter(|r| std::ptr::eq(**r, turn))
            .map(|_| TurnBase {
                shared: messages.len(),
                // Compact text, as serde_json writes a value: the form the live
                // schemas were serialised in, so an unchanged catalogue compares equal.
                tools: turn["request"].get("tools").map(Value::to_string),
            });
        self.messages = messages;
        self.pending = calls.iter().map(|c| c.id.clone()).collect();
        self.messages.push(assistant);
        self.cut_off = is_cut_off(&turn["response"]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use super::*;
    use crate::client::{CallFuture, usage_with_prices};
    use crate::history::SummaryPolicy;
    use crate::prompt::Templates;
    use tbsim_core::protocol::Attachment;
    use tbsim_core::protocol::ModelUsage;
    use tbsim_core::time::SimTime;
    use tbsim_engine::agent::block_on;
    use tbsim_engine::trajectory::expand_requests;

    /// Answers from a queue and keeps every request and its ordinal.
    #[derive(Default)]
    struct Mock {
        replies: Mutex<VecDeque<Value>>,
        bodies: Mutex<Vec<Value>>,
        ordinals: Mutex<Vec<u64>>,
    }

    impl ModelCaller for Mock {
        fn model(&self) -> &str {
            "mock"
        }
        fn body(
            &self,
            messages: &[Message],
            tools: Option<&RawValue>,
            _t: Option<f64>,
        ) -> RequestBody {
            let mut b = json!({"model": "mock", "messages": messages});
            if let Some(t) = tools {
                b["tools"] = serde_json::from_str(t.get()).unwrap();
            }
            RequestBody::new(&b)
        }
        fn call(&self, body: RequestBody, ordinal: u64) -> CallFuture {
            self.bodies.lock().unwrap().push(body.value());
            self.ordinals.lock().unwrap().push(ordinal);
            let r = self.replies.lock().unwrap().pop_front();
            Box::pin(async move {
                CallOutcome {
                    response: r.ok_or(crate::LlmError::Exhausted {
                        attempts: 1,
                        last: "no reply queued".into(),
                    }),
                    failures: Vec::new(),
                    timing: Default::default(),
                }
            })
        }
        fn usage(&self, raw: &Value) -> ModelUsage {
            usage_with_prices(raw, None, None)
        }
    }

    fn reply(content: &str, calls: &[(&str, &str, &str)]) -> Value {
        let tc: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
            })
            .collect();
        json!({"choices": [{"message": {"role": "assistant", "content": content, "tool_calls": tc}}],
               "usage": {"prompt_tokens": 100, "completion_tokens": 7}})
    }

    fn text_reply(content: &str) -> Value {
        json!({"choices": [{"message": {"role": "assistant", "content": content}}],
               "usage": {"prompt_tokens": 50, "completion_tokens": 5}})
    }

    fn briefing() -> Briefing {
        Briefing {
            you: "Alex Kim".into(),
            key: "agent/alex-kim".into(),
            department: "Finance".into(),
            manager: "Dana Li".into(),
            company: "Acme".into(),
            day_starts: "2024-03-04T09:00:00".into(),
            day_ends: "2024-03-04T17:00:00".into(),
        }
    }

    fn obs(step: u64, results: Vec<ToolResult>, notifications: Vec<Notification>) -> Observation {
        Observation {
            step,
            time: format!("Mon 2024-03-04 09:{step:02}"),
            t: SimTime(step),
            briefing: (step == 0).then(briefing),
            results,
            notifications,
            over: false,
        }
    }

    fn result(id: &str, tool: &str, notes: Vec<Notification>, images: usize) -> ToolResult {
        ToolResult {
            call_id: id.into(),
            tool: tool.into(),
            ok: true,
            time: "Mon 09:01".into(),
            t: SimTime(60),
            result: Some(json!({"fine": true})),
            error: None,
            attachments: (0..images)
                .map(|_| Attachment {
                    mime: "image/png".into(),
                    data: "iVBORw0K".into(),
                })
                .collect(),
            notifications: notes,
        }
    }

    fn message(text: &str) -> Notification {
        Notification::Message {
            at: "Mon 09:03".into(),
            thread: "thread/dm/dana-li".into(),
            from: "npc/dana-li".into(),
            from_name: "Dana Li".into(),
            text: text.into(),
        }
    }

    fn agent(mock: Arc<Mock>, threshold: usize, memory: Memory) -> LlmAgent {
        LlmAgent::new(
            "llm:mock",
            mock,
            Arc::new(Templates::builtin()),
            Box::new(SummaryPolicy {
                threshold,
                window: None,
                keep_turns: 1,
                head: 2,
            }),
            memory,
        )
    }

    fn roles(body: &Value) -> Vec<String> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn parallel_calls_ids_images_and_notifications_follow_the_protocol() {
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            reply(
                "plan",
                &[
                    ("a", "read_file", r#"{"path":"drive/x.png"}"#),
                    ("", "my_tasks", "{}"),
                ],
            ),
            reply("no tools this time", &[]),
            reply("", &[("z", "finish", "{}")]),
        ]);
        let mut a = agent(mock.clone(), usize::MAX, Memory::None);
        let d = block_on(a.decide(&obs(0, vec![], vec![message("welcome")]))).unwrap();
        let ids: Vec<&str> = d.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "call_1_1"], "one decision holds every call");
        let log = a.take_log();
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.usage.output_tokens, 7);

        let results = vec![
            result("a", "read_file", vec![], 1),
            result("call_1_1", "my_tasks", vec![message("reply from Dana")], 0),
        ];
        let d = block_on(a.decide(&obs(1, results, vec![]))).unwrap();
        assert!(d.calls.is_empty());
        let body = mock.bodies.lock().unwrap()[1].clone();
        assert_eq!(
            roles(&body),
            ["system", "user", "assistant", "tool", "tool", "user"],
            "tool results come right after the calls, then one user message"
        );
        let m = &body["messages"];
        assert_eq!(m[3]["tool_call_id"], "a");
        assert_eq!(m[4]["tool_call_id"], "call_1_1");
        assert_eq!(m[2]["tool_calls"][1]["id"], "call_1_1");
        let last = &m[5]["content"];
        assert!(last[0]["text"].as_str().unwrap().contains("step 1"));
        assert!(
            last[0]["text"]
                .as_str()
                .unwrap()
                .contains("reply from Dana")
        );
        assert_eq!(
            last[1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0K"
        );
        assert!(body["tools"].as_array().unwrap().len() > 10);

        // A turn without calls is answered with the status and a nudge.
        let d = block_on(a.decide(&obs(2, vec![], vec![]))).unwrap();
        assert_eq!(d.calls[0].name, "finish");
        let body = mock.bodies.lock().unwrap()[2].clone();
        assert_eq!(roles(&body).last().unwrap(), "user");
        let nudge = Templates::builtin().nudge();
        assert!(
            body["messages"][7]["content"]
                .as_str()
                .unwrap()
                .contains(&nudge)
        );
    }

    #[test]
    fn history_is_summarised_without_splitting_calls_from_results() {
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            reply("", &[("a", "my_tasks", "{}")]),
            reply("", &[("b", "my_tasks", "{}")]),
            text_reply("SUMMARY-TEXT"),
            reply("", &[("c", "finish", "{}")]),
        ]);
        // A threshold just above the opening messages: the third turn compresses.
        let mut a = agent(mock.clone(), 1, Memory::None);
        a.history = Box::new(SummaryPolicy {
            threshold: 1,
            window: None,
            keep_turns: 1,
            head: 2,
        });
        block_on(a.decide(&obs(0, vec![], vec![]))).unwrap();
        block_on(a.decide(&obs(1, vec![result("a", "my_tasks", vec![], 0)], vec![]))).unwrap();
        let log = a.take_log();
        let purposes: Vec<&str> = log.records.iter().map(|r| r.purpose).collect();
        assert_eq!(
            purposes,
            ["turn", "turn"],
            "one assistant turn is kept: nothing to cut yet"
        );
        block_on(a.decide(&obs(2, vec![result("b", "my_tasks", vec![], 0)], vec![]))).unwrap();
        let log = a.take_log();
        let purposes: Vec<&str> = log.records.iter().map(|r| r.purpose).collect();
        assert_eq!(purposes, ["summary", "turn"]);
        let body = &log.records[1].request.value();
        assert_eq!(
            roles(body),
            ["system", "user", "user", "assistant", "tool", "user"]
        );
        assert!(
            body["messages"][2]["content"]
                .as_str()
                .unwrap()
                .contains("SUMMARY-TEXT")
        );
        assert_eq!(body["messages"][3]["tool_calls"][0]["id"], "b");
        assert_eq!(body["messages"][4]["tool_call_id"], "b");
    }

    #[test]
    fn notes_are_written_between_days_and_restored_on_resume() {
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            reply("", &[("a", "wait", "{}")]),
            text_reply("NOTE: ask Dana first."),
            reply("", &[("b", "my_tasks", "{}")]),
        ]);
        let mut a = agent(mock.clone(), usize::MAX, Memory::Notes);
        let o0 = obs(0, vec![], vec![]);
        let d0 = block_on(a.decide(&o0)).unwrap();
        let r0 = values(a.take_log());
        let day2 = Notification::DayStarted {
            at: "Tue 09:00".into(),
            day: 2,
            feedback: vec!["Task X: 1/2 checkpoints.".into()],
        };
        let o1 = obs(1, vec![result("a", "wait", vec![day2], 0)], vec![]);
        let d1 = block_on(a.decide(&o1)).unwrap();
        let r1 = values(a.take_log());
        assert!(
            r1[1].get("request_delta").is_some(),
            "the new day's turn is compact"
        );
        let [r0, r1] = expanded([r0, r1]);
        assert_eq!(r1[0]["purpose"], "reflection");
        let reflection = r1[0]["request"]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(reflection.contains("Task X: 1/2") && reflection.contains("YOU CALLED wait"));
        let opening = r1[1]["request"]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            opening.contains("day 2") && opening.contains("NOTE: ask Dana first."),
            "{opening}"
        );
        assert_eq!(
            roles(&r1[1]["request"]),
            ["system", "user"],
            "a new day starts a new conversation"
        );

        let mut b = agent(Arc::new(Mock::default()), usize::MAX, Memory::Notes);
        let past = vec![
            PastStep {
                observation: o0,
                records: r0.iter().map(|r| with_step(r, 1)).collect(),
                decision: d0,
            },
            PastStep {
                observation: o1,
                records: r1.iter().map(|r| with_step(r, 2)).collect(),
                decision: d1,
            },
        ];
        b.resume(&past, &[]).unwrap();
        assert_eq!(b.messages(), a.messages());
        assert_eq!(b.notes(), a.notes());
        assert_eq!(b.pending, a.pending);
        assert_eq!(
            b.sizing(),
            a.sizing(),
            "the calibration is rebuilt from the record"
        );
        assert_ne!(a.sizing().ratio, 1.0, "it learnt from the server's counts");
    }

    #[test]
    fn a_cut_off_reply_is_counted_and_told_and_a_full_context_is_the_agents_failure() {
        let mock = Arc::new(Mock::default());
        let mut cut = text_reply("I will call write_file with {\"path\": \"work");
        cut["choices"][0]["finish_reason"] = json!("length");
        mock.replies.lock().unwrap().push_back(cut);
        let mut a = agent(mock.clone(), usize::MAX, Memory::None);
        let d = block_on(a.decide(&obs(0, vec![], vec![]))).unwrap();
        assert!(d.calls.is_empty());
        let log = a.take_log();
        assert_eq!(log.usage.cut_off, 1);
        // The first turn's prompt (100 tokens) cannot have held the catalogue sent.
        assert_eq!(log.warnings.len(), 1);
        assert!(log.warnings[0].contains("--jinja"), "{:?}", log.warnings);
        // The next message says so (the mock has no reply left: the call fails).
        assert!(block_on(a.decide(&obs(1, vec![], vec![]))).is_err());
        let told = a.messages().last().unwrap().text_content();
        assert!(
            told.contains("cut off at the reply limit") && told.contains("did not call any tool"),
            "{told}"
        );
        assert!(a.take_log().warnings.is_empty(), "warned once");
    }

    /// Three decisions, the third after a history summary: each step's observation,
    /// records (as trajectory lines) and decision, and the agent to go on with.
    struct Summarised {
        agent: LlmAgent,
        mock: Arc<Mock>,
        steps: Vec<(Observation, Vec<Value>, Decision)>,
    }

    fn summarised() -> Summarised {
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            reply("", &[("a", "my_tasks", "{}")]),
            reply("", &[("b", "my_tasks", "{}")]),
            text_reply("SUMMARY-TEXT"),
            reply("", &[("c", "wait", "{}")]),
        ]);
        let mut a = agent(mock.clone(), 1, Memory::None);
        let observations = [
            obs(0, vec![], vec![]),
            obs(1, vec![result("a", "my_tasks", vec![], 0)], vec![]),
            obs(2, vec![result("b", "my_tasks", vec![], 0)], vec![]),
        ];
        let mut steps = Vec::new();
        for (i, o) in observations.into_iter().enumerate() {
            let d = block_on(a.decide(&o)).unwrap();
            let records: Vec<Value> = values(a.take_log())
                .iter()
                .map(|r| with_step(r, i as u64 + 1))
                .collect();
            steps.push((o, records, d));
        }
        // As resume reads them: with full requests.
        let mut all: Vec<Value> = steps.iter().flat_map(|s| s.1.clone()).collect();
        expand_requests(&mut all).unwrap();
        let mut all = all.into_iter();
        for s in &mut steps {
            s.1 = all.by_ref().take(s.1.len()).collect();
        }
        let purposes: Vec<&Value> = steps[2].1.iter().map(|r| &r["purpose"]).collect();
        assert_eq!(purposes, ["summary", "turn"]);
        Summarised {
            agent: a,
            mock,
            steps,
        }
    }

    fn past(steps: &[(Observation, Vec<Value>, Decision)]) -> Vec<PastStep> {
        steps
            .iter()
            .map(|(o, r, d)| PastStep {
                observation: o.clone(),
                records: r.clone(),
                decision: d.clone(),
            })
            .collect()
    }

    #[test]
    fn calls_recorded_after_the_last_decision_are_answered_from_the_record() {
        let mut x = summarised();
        let (o2, pending, d2) = x.steps[2].clone();
        let b_mock = Arc::new(Mock::default());
        let mut b = agent(b_mock.clone(), 1, Memory::None);
        b.resume(&past(&x.steps[..2]), &pending).unwrap();
        let d = block_on(b.decide(&o2)).unwrap();
        assert!(
            b_mock.bodies.lock().unwrap().is_empty(),
            "neither the summary nor the turn is asked again"
        );
        assert_eq!(d, d2, "the recorded decision");
        assert_eq!(b.messages(), x.agent.messages(), "the summarised history");
        let log = b.take_log();
        assert!(log.records.is_empty(), "their lines are already written");
        assert_eq!(log.usage.calls, 2);
        assert_eq!(
            log.usage.output_tokens,
            5 + 7,
            "both count for the decision"
        );
        assert_eq!(b.requests, x.agent.requests);

        // Later calls go out as in an uninterrupted run, with the same ordinals.
        let o3 = obs(3, vec![result("c", "wait", vec![], 0)], vec![]);
        for m in [&x.mock, &b_mock] {
            m.replies
                .lock()
                .unwrap()
                .extend([text_reply("SUMMARY-2"), reply("", &[("d", "finish", "{}")])]);
        }
        block_on(x.agent.decide(&o3)).unwrap();
        block_on(b.decide(&o3)).unwrap();
        assert_eq!(
            *b_mock.bodies.lock().unwrap(),
            x.mock.bodies.lock().unwrap()[4..]
        );
        let (xs, bs) = (values(x.agent.take_log()), values(b.take_log()));
        assert!(bs[1].get("request_delta").is_some());
        assert_eq!(
            bs, xs,
            "written relative to the reused turn line, as without the interruption"
        );
        assert_eq!(*b_mock.ordinals.lock().unwrap(), [5, 6]);
        assert_eq!(x.mock.ordinals.lock().unwrap()[4..], [5, 6]);
    }

    #[test]
    fn a_recorded_call_is_reused_only_for_the_same_request() {
        let x = summarised();
        let (o2, pending, d2) = x.steps[2].clone();

        // The summary was asked of other messages: it and everything after it is
        // asked again, and the given-up lines still count.
        let mut changed = pending.clone();
        changed[0]["request"]["messages"][0]["content"] = json!("another prompt");
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            text_reply("SUMMARY-TEXT"),
            reply("", &[("c", "wait", "{}")]),
        ]);
        let mut b = agent(mock.clone(), 1, Memory::None);
        b.resume(&past(&x.steps[..2]), &changed).unwrap();
        assert_eq!(block_on(b.decide(&o2)).unwrap(), d2);
        let asked = mock.bodies.lock().unwrap().clone();
        let sent: Vec<Value> = pending.iter().map(|r| r["request"].clone()).collect();
        assert_eq!(asked, sent, "both calls go out");
        assert_eq!(
            *mock.ordinals.lock().unwrap(),
            [5, 6],
            "after the two lines"
        );
        let log = b.take_log();
        let purposes: Vec<&str> = log.records.iter().map(|r| r.purpose).collect();
        assert_eq!(purposes, ["summary", "turn"]);
        assert_eq!(log.usage.calls, 4, "two recorded lines and two new calls");

        // A turn that failed for good is made again; the summary before it is not.
        let mut failed = pending.clone();
        failed[1]["response"] = Value::Null;
        failed[1]["error"] = json!("the model API failed 3 times");
        failed[1].as_object_mut().unwrap().remove("usage");
        let mock = Arc::new(Mock::default());
        mock.replies
            .lock()
            .unwrap()
            .push_back(reply("", &[("c", "wait", "{}")]));
        let mut b = agent(mock.clone(), 1, Memory::None);
        b.resume(&past(&x.steps[..2]), &failed).unwrap();
        assert_eq!(block_on(b.decide(&o2)).unwrap(), d2);
        assert_eq!(*mock.bodies.lock().unwrap(), [sent[1].clone()]);
        assert_eq!(
            *mock.ordinals.lock().unwrap(),
            [5],
            "the retry follows the failed call's line"
        );
        let log = b.take_log();
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].purpose, "turn");
        assert_eq!(log.usage.calls, 2);
    }

    fn values(log: TurnLog) -> Vec<Value> {
        log.records
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    }

    /// Records of consecutive logs, with full requests (expanded as one trajectory).
    fn expanded<const N: usize>(logs: [Vec<Value>; N]) -> [Vec<Value>; N] {
        let mut all: Vec<Value> = logs.iter().flatten().cloned().collect();
        expand_requests(&mut all).unwrap();
        let mut all = all.into_iter();
        logs.map(|l| all.by_ref().take(l.len()).collect())
    }

    #[test]
    fn turn_requests_are_recorded_compactly_and_expand_to_the_bodies_sent() {
        let mock = Arc::new(Mock::default());
        mock.replies.lock().unwrap().extend([
            reply("", &[("a", "read_file", r#"{"path":"drive/x.png"}"#)]),
            reply("", &[("b", "my_tasks", "{}")]),
            text_reply("SUMMARY-TEXT"),
            reply("", &[("c", "my_tasks", "{}")]),
            reply("", &[("d", "my_tasks", "{}")]),
            text_reply("SUMMARY-2"),
            reply("", &[("e", "finish", "{}")]),
        ]);
        let mut a = agent(mock.clone(), 1, Memory::None);
        let observations = [
            obs(0, vec![], vec![message("welcome")]),
            obs(1, vec![result("a", "read_file", vec![], 1)], vec![]),
            obs(2, vec![result("b", "my_tasks", vec![], 0)], vec![]),
            obs(3, vec![result("c", "my_tasks", vec![], 0)], vec![]),
        ];
        let mut lines = Vec::new();
        for (i, o) in observations.iter().enumerate() {
            block_on(a.decide(o)).unwrap();
            let mut log = values(a.take_log());
            for r in &mut log {
                r["type"] = json!("model");
                r["step"] = json!(i + 1);
            }
            lines.extend(log);
        }
        let sent = mock.bodies.lock().unwrap().clone();
        let purposes: Vec<&str> = lines
            .iter()
            .map(|l| l["purpose"].as_str().unwrap())
            .collect();
        assert_eq!(
            purposes,
            ["turn", "turn", "summary", "turn", "summary", "turn"]
        );
        for (i, l) in lines.iter().enumerate() {
            let compact = l["purpose"] == "turn" && i > 0;
            assert_eq!(l.get("request_delta").is_some(), compact, "line {i}");
            assert_eq!(l.get("request").is_some(), !compact, "line {i}");
        }
        let delta = |i: usize| &lines[i]["request_delta"];
        // Turn 2 keeps turn 1's two messages; after a summary only the head before
        // the replaced span (system and opening) is kept.
        assert_eq!(delta(1)["keep"], 2);
        assert_eq!(delta(3)["keep"], 2);
        assert_eq!(delta(5)["keep"], 2);
        assert!(
            delta(1)["messages"][0]["tool_calls"].is_array(),
            "the rest starts with the assistant message"
        );
        assert!(delta(1).get("tools").is_none() && delta(1)["same_tools"] == true);
        assert_eq!(delta(1)["model"], "mock");

        expand_requests(&mut lines).unwrap();
        let requests: Vec<Value> = lines.iter().map(|l| l["request"].clone()).collect();
        assert_eq!(requests, sent, "every request is recorded exactly");
        assert!(lines.iter().all(|l| l.get("request_delta").is_none()));

        // Without summaries, an image read early is written once however many turns
        // resend it.
        let mock = Arc::new(Mock::default());
        let mut a = agent(mock.clone(), usize::MAX, Memory::None);
        let mut lines = Vec::new();
        for (i, o) in observations.iter().enumerate() {
            let id = ["a", "b", "c", "d"][i];
            mock.replies
                .lock()
                .unwrap()
                .push_back(reply("", &[(id, "my_tasks", "{}")]));
            block_on(a.decide(o)).unwrap();
            lines.extend(values(a.take_log()));
        }
        let sent = mock.bodies.lock().unwrap().clone();
        let count = |vs: &[Value]| -> usize {
            vs.iter()
                .map(|v| v.to_string().matches("base64,iVBORw0K").count())
                .sum()
        };
        assert_eq!(count(&sent), 3, "turns 2 to 4 send it");
        assert_eq!(count(&lines), 1, "only turn 2's line holds it");
        let keeps: Vec<&Value> = lines[1..]
            .iter()
            .map(|l| &l["request_delta"]["keep"])
            .collect();
        assert_eq!(keeps, [2, 5, 8]);
        expand_requests(&mut lines).unwrap();
        let requests: Vec<Value> = lines.iter().map(|l| l["request"].clone()).collect();
        assert_eq!(requests, sent);
    }

    fn with_step(r: &Value, step: u64) -> Value {
        let mut r = r.clone();
        r["step"] = json!(step);
        r
    }
}
