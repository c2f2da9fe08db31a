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
//! summarises it and the summary replaces it. Every call (turn, summary, reflection)
//! is reported in the [`TurnLog`] for the trajectory.
//!
//! To resume an interrupted run, the agent restores its conversation from the last
//! recorded turn's request plus its response, and its notes from the last recorded
//! reflection: nothing is asked again.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Agent, AgentError, AgentFuture, PastStep, TurnLog};
use crate::llm::client::{CallOutcome, ModelCaller};
use crate::llm::history::{HistoryPolicy, transcript};
use crate::llm::message::{Content, ImageUrl, Message, Part, Role, assistant_from, response_text, tool_schemas};
use crate::llm::prompt::{PromptBuilder, render_notifications, status_line};
use crate::sim::{Briefing, Decision, Observation, ToolResult};
use crate::world::Notification;

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
    tools: Vec<Value>,
    briefing: Option<Briefing>,
    messages: Vec<Message>,
    /// Ids of the last assistant message's calls, awaiting results.
    pending: Vec<String>,
    notes: Option<String>,
    day: u32,
    requests: u64,
    log: TurnLog,
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
            tools: tool_schemas(),
            briefing: None,
            messages: Vec::new(),
            pending: Vec::new(),
            notes: None,
            day: 1,
            requests: 0,
            log: TurnLog::default(),
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

    /// Sends one request and logs it. `Ok` holds the raw response.
    async fn call(&mut self, purpose: &str, body: Value) -> Result<Value, AgentError> {
        self.requests += 1;
        let CallOutcome { response, failures } =
            self.caller.call(body.clone(), self.requests).await;
        let mut rec = json!({"purpose": purpose, "model": self.caller.model(), "request": body});
        if !failures.is_empty() {
            rec["failures"] = json!(failures);
        }
        let out = match response {
            Ok(raw) => {
                let usage = self.caller.usage(&raw);
                rec["response"] = raw.clone();
                rec["usage"] = json!(usage);
                self.log.usage.add(&usage);
                Ok(raw)
            }
            Err(e) => {
                rec["response"] = Value::Null;
                rec["error"] = json!(e.to_string());
                Err(AgentError::Infra(format!("{purpose} call: {e}")))
            }
        };
        self.log.records.push(rec);
        out
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

    fn start_conversation(&mut self, b: &Briefing, opening: String) {
        self.messages = vec![
            Message::text(Role::System, self.prompts.system(b)),
            Message::text(Role::User, opening),
        ];
        self.pending.clear();
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
            self.start_conversation(b, opening);
            return Ok(());
        }
        // Every pending call gets its answer, in call order, before anything else.
        for id in std::mem::take(&mut self.pending) {
            let content = obs
                .results
                .iter()
                .find(|r| r.call_id == id)
                .map_or_else(|| json!({"ok": false, "error": "not executed"}).to_string(), tool_content);
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
                format!("{status}\n\n{}", render_notifications(notes.iter().copied())),
                Vec::new(),
            ));
            let record = transcript(&self.messages, 600, 40_000);
            let prompt = self
                .prompts
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
            return Err(AgentError::Agent("a new day began before any briefing".into()));
        };
        let rest = render_notifications(
            notes
                .iter()
                .copied()
                .filter(|n| !matches!(n, Notification::DayStarted { .. })),
        );
        let opening = format!(
            "{status}\n\n{}",
            self.prompts.day(day, &feedback, &rest, self.notes.as_deref())
        );
        self.start_conversation(&b, opening);
        if !images.is_empty() {
            self.messages.push(Self::user_message(String::new(), images));
        }
        Ok(())
    }

    async fn compress(&mut self) -> Result<(), AgentError> {
        let Some(span) = self.history.compress(&self.messages) else {
            return Ok(());
        };
        let prompt = self
            .prompts
            .summary(&transcript(&self.messages[span.clone()], 2_000, 200_000));
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
        self.messages.splice(span, [summary]);
        Ok(())
    }

    async fn turn(&mut self, obs: &Observation) -> Result<Decision, AgentError> {
        self.absorb(obs).await?;
        self.compress().await?;
        let body = self
            .caller
            .body(&self.messages, Some(&self.tools), None);
        let raw = self.call("turn", body).await?;
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
        Box::pin(self.turn(obs))
    }

    fn take_log(&mut self) -> TurnLog {
        std::mem::take(&mut self.log)
    }

    fn uses_model(&self) -> bool {
        true
    }

    fn resume(&mut self, past: &[PastStep]) -> Result<(), AgentError> {
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
        self.messages = messages;
        self.pending = calls.iter().map(|c| c.id.clone()).collect();
        self.messages.push(assistant);
        Ok(())
    }
}
