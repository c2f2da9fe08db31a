//! The idle agent: waits for the day to end. It proves no checkpoint passes by itself.

use super::{Agent, AgentFuture};
use crate::protocol::ToolCall;
use crate::protocol::{Decision, Observation};

/// Does nothing but wait.
#[derive(Debug, Default)]
pub struct Idle {
    day_ends: Option<String>,
    n: u64,
}

impl Agent for Idle {
    fn name(&self) -> String {
        "idle".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        if let Some(b) = &obs.briefing {
            self.day_ends = Some(b.day_ends.clone());
        }
        self.n += 1;
        let args = match self.day_ends.take() {
            Some(end) => serde_json::json!({"until": end}).to_string(),
            None => "{}".to_owned(),
        };
        let call = ToolCall {
            id: format!("idle-{}", self.n),
            name: "wait".into(),
            arguments: args,
        };
        Box::pin(async move { Ok(Decision { calls: vec![call] }) })
    }
}
