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
}
