//! A run's settings as the agent's side chooses them, and why a run ends.

use serde::{Deserialize, Serialize};

/// Settings for one simulation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Master seed (default: the scenario's).
    pub seed: Option<u64>,
    /// Hints given with each released task (0-3).
    pub hints: u8,
    /// Thinking seconds per decision (default: the scenario's).
    pub turn_cost_secs: Option<u32>,
    /// Further thinking seconds per 1000 output tokens of a decision's model calls.
    #[serde(default)]
    pub token_cost_secs: Option<u32>,
    /// Agent name, recorded in the trajectory.
    pub agent: String,
    /// Mentor feedback between days.
    #[serde(default)]
    pub feedback: FeedbackPolicy,
}

/// How much mentor feedback the agent gets between days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackPolicy {
    /// None.
    None,
    /// Per task: how many checkpoints passed.
    Summary,
    /// The summary plus, for each failed checkpoint, what was missed and how to find it.
    #[default]
    Detailed,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The agent called `finish`.
    Finished,
    /// The working day ended.
    DayEnd,
    /// The step limit was reached.
    MaxSteps,
    /// The agent failed (e.g. it produced something unusable).
    AgentError,
    /// A model API stayed unavailable past the retry budget: the infrastructure
    /// failed, not the agent, so the run says nothing about the agent's ability.
    InfraError,
    /// The run's model-token budget was spent.
    TokenBudget,
    /// The run's simulated-time budget was spent.
    TimeBudget,
    /// The agent went away: an external agent's session was deleted, or idle past
    /// its timeout. Cut off from outside the simulation, like a limit.
    Abandoned,
    /// The model's context window could not hold the conversation: the server
    /// refused the request as too long. The agent's failure (its history outgrew
    /// what its model can read), scored as such; resuming would send the same
    /// request again, so the run is over.
    ContextExceeded,
}

impl EndReason {
    /// The reason as written in `result.json` (`finished`, `day_end`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Finished => "finished",
            EndReason::DayEnd => "day_end",
            EndReason::MaxSteps => "max_steps",
            EndReason::AgentError => "agent_error",
            EndReason::InfraError => "infra_error",
            EndReason::TokenBudget => "token_budget",
            EndReason::TimeBudget => "time_budget",
            EndReason::Abandoned => "abandoned",
            EndReason::ContextExceeded => "context_exceeded",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_reasons_display_as_serialised() {
        for r in [
            EndReason::Finished,
            EndReason::DayEnd,
            EndReason::MaxSteps,
            EndReason::AgentError,
            EndReason::InfraError,
            EndReason::TokenBudget,
            EndReason::TimeBudget,
            EndReason::Abandoned,
            EndReason::ContextExceeded,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.to_string());
        }
    }
}
