//! Placeholder until written.

use super::families_b::{TaskInfo, TaskSolver};

/// The solver if the objective is of this family.
pub fn recognise(_task: &TaskInfo) -> Option<Box<dyn TaskSolver>> {
    None
}
