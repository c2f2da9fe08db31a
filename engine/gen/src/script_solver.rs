//! The script solver: an agent that runs script families' own `solve(tools, task)`.
//!
//! It is what proves a script family's instances solvable from observations, as the
//! independent Rust solver does for the Rust families: the script sees only what
//! tools return. The agent runs in lockstep with the script. Each `tools.*` call
//! the script makes becomes a decision of real tool calls here (or none, for
//! `inbox` and `now`, which the agent answers from what it has observed), and the
//! script stays blocked in its host until the observation comes back. Tasks are
//! solved one at a time in the order they were released; a task goes to the first
//! family whose `claims(task)` says yes, or to the only family when there is one.
//!
//! Deterministic: the script's answers depend only on what it is given, and the
//! agent decides only from observations.

use serde_json::{Value, json};

use super::script::ScriptEntry;
use super::script_host::{ScriptError, SolveStep, Solving, claims};
use tbsim_engine::agent::{Agent, AgentFuture};
use tbsim_engine::protocol::{Decision, Notification, Observation, ToolCall, ToolResult};

/// What the agent is doing for the script's pending `tools` call.
#[derive(Debug)]
enum Pending {
    /// Nothing asked yet (no solve running, or just answered).
    None,
    /// The call was made as `tool`; its result answers the script through `answer`.
    Tool(Answer),
    /// Sent a message to `to`; waiting for the next message from them, which is
    /// after inbox index `since`.
    Reply { to: String, since: usize },
}

/// How a tool's result is handed back to the script.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// `{"ok", "result", "error"}`.
    Whole,
    /// The `content` text, or `None`.
    Text,
    /// The result value, or `None`.
    Value,
    /// Whether it worked.
    Ok,
    /// `None`.
    Nothing,
}

/// Runs script families' `solve` as an agent.
#[derive(Debug)]
pub struct ScriptSolver {
    families: Vec<&'static ScriptEntry>,
    /// Released tasks not yet solved (TaskReleased notifications as JSON), in order.
    queue: Vec<(Value, &'static ScriptEntry)>,
    seen: std::collections::BTreeSet<String>,
    inbox: Vec<Value>,
    solving: Option<(Solving, Value)>,
    pending: Pending,
    /// The shown time and the current task's deadline.
    now: String,
    n: u64,
    /// Every script failure, located, in order (a run's solver errors).
    errors: Vec<String>,
}

impl ScriptSolver {
    /// A solver for tasks of these families.
    pub fn new(families: Vec<&'static ScriptEntry>) -> ScriptSolver {
        ScriptSolver {
            families,
            queue: Vec::new(),
            seen: Default::default(),
            inbox: Vec::new(),
            solving: None,
            pending: Pending::None,
            now: String::new(),
            n: 0,
            errors: Vec::new(),
        }
    }

    /// The scripts' failures so far (`solve` errors, a family that could not say
    /// whether a task is its own), each as the script error's text.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    fn absorb(&mut self, n: &Notification) {
        match n {
            Notification::Message { .. } => {
                if let Ok(v) = serde_json::to_value(n) {
                    self.inbox.push(v);
                }
            }
            Notification::TaskReleased { task, .. } => {
                if !self.seen.insert(task.clone()) {
                    return;
                }
                // As the agent was told it: `{kind, at, task, title, objective, ...}`.
                let Ok(t) = serde_json::to_value(n) else {
                    return;
                };
                if let Some(f) = self.owner(&t) {
                    self.queue.push((t, f));
                }
            }
            _ => {}
        }
    }

    /// The family whose `solve` is for this task.
    fn owner(&mut self, task: &Value) -> Option<&'static ScriptEntry> {
        let solvers: Vec<&'static ScriptEntry> = self
            .families
            .iter()
            .copied()
            .filter(|f| f.script().defines("solve"))
            .collect();
        for f in &solvers {
            match claims(f.script(), task) {
                Ok(Some(true)) => return Some(f),
                Ok(Some(false)) => {}
                Ok(None) if solvers.len() == 1 => return Some(f),
                Ok(None) => {}
                Err(e) => self.errors.push(e.to_string()),
            }
        }
        None
    }

    fn call(&mut self, tool: &str, args: Value) -> Decision {
        self.n += 1;
        Decision {
            calls: vec![ToolCall {
                id: format!("script-{}", self.n),
                name: tool.to_owned(),
                arguments: args.to_string(),
            }],
        }
    }

    /// The deadline of the task being solved, as shown.
    fn deadline(&self) -> Option<String> {
        let (_, t) = self.solving.as_ref()?;
        t.get("deadline").and_then(Value::as_str).map(str::to_owned)
    }

    /// Hands `result` to the script and turns its next step into a decision,
    /// answering `inbox` and `now` on the spot. `None`: the solve ended.
    fn advance(&mut self, mut result: Value) -> Option<Decision> {
        loop {
            let (s, _) = self.solving.as_mut()?;
            let step = s.reply(result);
            match self.step(step) {
                Step::Decide(d) => return Some(d),
                Step::Answer(v) => result = v,
                Step::Ended => return None,
            }
        }
    }

    fn step(&mut self, step: Result<SolveStep, ScriptError>) -> Step {
        let (method, args) = match step {
            Ok(SolveStep::Call { method, args }) => (method, args),
            Ok(SolveStep::Done(Ok(_))) => return self.end(None),
            Ok(SolveStep::Done(Err(e))) | Err(e) => return self.end(Some(e)),
        };
        let arg = |k: &str| args.get(k).cloned().unwrap_or(Value::Null);
        let (tool, targs, answer) = match method.as_str() {
            "inbox" => return Step::Answer(Value::Array(self.inbox.clone())),
            "now" => return Step::Answer(json!(self.now)),
            "call" => {
                let name = arg("tool").as_str().unwrap_or("").to_owned();
                (name, arg("args"), Answer::Whole)
            }
            "read_file" => (
                "read_file".into(),
                json!({"path": arg("path")}),
                Answer::Text,
            ),
            "list_folder" => ("list_folder".into(), args.clone(), Answer::Value),
            "write_file" => (
                "write_file".into(),
                json!({"path": arg("path"), "content": arg("content")}),
                Answer::Ok,
            ),
            "colleagues" => ("list_colleagues".into(), json!({}), Answer::Value),
            "wait" => (
                "wait".into(),
                json!({"minutes": arg("minutes")}),
                Answer::Nothing,
            ),
            "wait_until" => (
                "wait".into(),
                json!({"until": arg("until")}),
                Answer::Nothing,
            ),
            "send_message" => {
                let to = arg("to").as_str().unwrap_or("").to_owned();
                self.pending = Pending::Reply {
                    to,
                    since: usize::MAX,
                };
                return Step::Decide(self.call(
                    "send_message",
                    json!({"to": arg("to"), "text": arg("text")}),
                ));
            }
            other => {
                // Not a method of `tools` (the host only sends its own): end the solve.
                let e = ScriptError::at_file("<tools>", format!("unknown tools method `{other}`"));
                return self.end(Some(e));
            }
        };
        self.pending = Pending::Tool(answer);
        Step::Decide(self.call(&tool, targs))
    }

    fn end(&mut self, error: Option<ScriptError>) -> Step {
        if let Some(e) = error {
            let task = self
                .solving
                .as_ref()
                .and_then(|(_, t)| t.get("task").and_then(Value::as_str))
                .unwrap_or("?")
                .to_owned();
            self.errors.push(format!("{task}: {e}"));
        }
        self.solving = None;
        self.pending = Pending::None;
        Step::Ended
    }

    /// The next decision once the pending call has its observation.
    fn resume(&mut self, results: &[ToolResult]) -> Option<Decision> {
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::None => None,
            Pending::Tool(answer) => {
                let r = results.first();
                let ok = r.is_some_and(|r| r.ok);
                let value = r.and_then(|r| r.result.clone()).unwrap_or(Value::Null);
                let v = match answer {
                    Answer::Whole => json!({
                        "ok": ok,
                        "result": value,
                        "error": r.and_then(|r| serde_json::to_value(&r.error).ok()).unwrap_or(Value::Null),
                    }),
                    Answer::Text if ok => value.get("content").cloned().unwrap_or(Value::Null),
                    Answer::Value if ok => value,
                    Answer::Ok => json!(ok),
                    Answer::Text | Answer::Value | Answer::Nothing => Value::Null,
                };
                self.advance(v)
            }
            Pending::Reply { to, since } => {
                // The send itself: its result starts the wait (or fails it).
                let since = if since == usize::MAX {
                    if !results.first().is_some_and(|r| r.ok) {
                        return self.advance(Value::Null);
                    }
                    // Replies that came with the send's own result count.
                    self.inbox.len() - self.arrived_with(results)
                } else {
                    since
                };
                let want = to.to_lowercase();
                let reply = self.inbox[since.min(self.inbox.len())..].iter().find(|m| {
                    ["from", "from_name"].iter().any(|k| {
                        m.get(*k)
                            .and_then(Value::as_str)
                            .is_some_and(|s| s.to_lowercase() == want)
                    })
                });
                if let Some(m) = reply {
                    let text = m.get("text").cloned().unwrap_or(Value::Null);
                    return self.advance(text);
                }
                let deadline = self.deadline().and_then(|d| iso(&d));
                if let (Some(d), Some(now)) = (&deadline, iso(&self.now))
                    && now >= *d
                {
                    return self.advance(Value::Null);
                }
                self.pending = Pending::Reply { to, since };
                let args = match deadline {
                    Some(d) => json!({ "until": d }),
                    None => json!({}),
                };
                Some(self.call("wait", args))
            }
        }
    }

    /// How many inbox messages came with these results (already absorbed).
    fn arrived_with(&self, results: &[ToolResult]) -> usize {
        results
            .iter()
            .flat_map(|r| &r.notifications)
            .filter(|n| matches!(n, Notification::Message { .. }))
            .count()
    }

    fn decide_now(&mut self, obs: &Observation) -> Decision {
        self.now.clone_from(&obs.time);
        for n in obs
            .results
            .iter()
            .flat_map(|r| &r.notifications)
            .chain(&obs.notifications)
        {
            self.absorb(n);
        }
        if obs.over {
            return Decision::default();
        }
        if self.solving.is_some()
            && let Some(d) = self.resume(&obs.results)
        {
            return d;
        }
        // Start the next task's solve; a solve that ends at once makes way for the next.
        while self.solving.is_none() && !self.queue.is_empty() {
            let (task, family) = self.queue.remove(0);
            match Solving::start(family.script(), &task) {
                Ok((s, step)) => {
                    self.solving = Some((s, task));
                    let first = match self.step(Ok(step)) {
                        Step::Decide(d) => Some(d),
                        Step::Answer(v) => self.advance(v),
                        Step::Ended => None,
                    };
                    if let Some(d) = first {
                        return d;
                    }
                }
                Err(e) => {
                    let key = task.get("task").and_then(Value::as_str).unwrap_or("?");
                    self.errors.push(format!("{key}: {e}"));
                }
            }
        }
        // Nothing to do: wait for the next notification.
        self.call("wait", json!({}))
    }
}

/// A shown time (`Wed 2025-10-01 14:30`) as the tools take it and as sorts
/// (`2025-10-01T14:30`).
fn iso(shown: &str) -> Option<String> {
    let mut parts = shown.split_whitespace();
    let (_, date, time) = (parts.next()?, parts.next()?, parts.next()?);
    Some(format!("{date}T{time}"))
}

/// What one step of the script asks of the agent.
enum Step {
    /// Make these calls.
    Decide(Decision),
    /// Answer the script at once with this.
    Answer(Value),
    /// The solve ended.
    Ended,
}

impl Agent for ScriptSolver {
    fn name(&self) -> String {
        "script-solver".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        let d = self.decide_now(obs);
        Box::pin(async move { Ok(d) })
    }
}
