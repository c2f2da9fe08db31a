//! The names of the built-in agents, for `--agent`'s help and the console's list.
//! A leaf module: the argument definitions and the agents' construction both read it.

/// The built-in agents by name (besides `llm:<alias>` and `adversary:<name>`, see
/// [`tbsim_validity::adversary::ADVERSARIES`]).
pub(crate) const BUILTIN_AGENTS: &[&str] = &["oracle", "idle", "solver", "script-solver"];

/// The `--agent` help of `run` and `fork`: the built-in agents and every adversary,
/// taken from the registries, so that a new adversary is listed without anyone
/// remembering the help text (`extract` and `relay` were missing from a hand-written
/// list).
pub(crate) fn agent_help(default: &str) -> String {
    let builtin: Vec<String> = BUILTIN_AGENTS.iter().map(|a| format!("`{a}`")).collect();
    let adversaries: Vec<&str> = tbsim_validity::adversary::ADVERSARIES
        .iter()
        .map(|(n, _)| *n)
        .collect();
    format!(
        "Agent: {}, `llm:<alias>` or `adversary:<name>` (a content-blind attacker: {}). Default: {default}.",
        builtin.join(", "),
        adversaries.join(", ")
    )
}
