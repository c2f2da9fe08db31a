//! The task-spec builder: every generated task starts from its context's defaults.
//!
//! `ctx.task_spec::<F>(variant)` starts a [`TaskSpec`] of family `F` with the task's
//! key, the mentor as assigner, the context's release, deadline and priority; the
//! family then sets what differs, its wording, checkpoints, hints and plan
//! ([`TaskSpecBuilder::plan`] also labels the difficulty by the documented rule).

use super::meta_task::MetaTask;
use super::{Ctx, difficulty};
use tbsim_scenario::{CheckpointSpec, Difficulty, PlanStep, Priority, Release, TaskSpec};

/// Builds one generated [`TaskSpec`]; start it with [`Ctx::task_spec`].
#[derive(Debug)]
#[must_use = "call `build` to get the task"]
pub struct TaskSpecBuilder {
    spec: TaskSpec,
}

impl Ctx<'_> {
    /// A task of family `F` and variant `variant` (the full key, `<family>/...`):
    /// key `task/<id>`, assigned by the mentor, released, due and prioritised as
    /// the context says, easy until a plan says otherwise.
    pub fn task_spec<F: MetaTask>(&self, variant: impl Into<String>) -> TaskSpecBuilder {
        TaskSpecBuilder {
            spec: TaskSpec {
                key: self.task_key(),
                family: F::KEY.to_owned(),
                variant: variant.into(),
                difficulty: Difficulty::Easy,
                title: String::new(),
                objective: String::new(),
                assigned_by: self.company.mentor.clone(),
                release: self.release.clone(),
                deadline: self.at(self.deadline),
                priority: self.priority,
                checkpoints: Vec::new(),
                hints: Vec::new(),
                plan: Vec::new(),
            },
        }
    }
}

impl TaskSpecBuilder {
    /// The task key (default `task/<id>`).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.spec.key = key.into();
        self
    }
    /// The title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.title = title.into();
        self
    }
    /// The objective, as the agent reads it.
    pub fn objective(mut self, objective: impl Into<String>) -> Self {
        self.spec.objective = objective.into();
        self
    }
    /// Who assigns it, a person key (default: the mentor).
    pub fn assigned_by(mut self, person: impl Into<String>) -> Self {
        self.spec.assigned_by = person.into();
        self
    }
    /// When it is released (default: the context's release).
    pub fn release(mut self, release: Release) -> Self {
        self.spec.release = release;
        self
    }
    /// Its deadline, a timestamp (default: the context's deadline on its day).
    pub fn deadline(mut self, timestamp: impl Into<String>) -> Self {
        self.spec.deadline = timestamp.into();
        self
    }
    /// Its priority (default: the context's).
    pub fn priority(mut self, priority: Priority) -> Self {
        self.spec.priority = priority;
        self
    }
    /// Its checkpoints.
    pub fn checkpoints(mut self, checkpoints: Vec<CheckpointSpec>) -> Self {
        self.spec.checkpoints = checkpoints;
        self
    }
    /// Its hints, least revealing first.
    pub fn hints(mut self, hints: Vec<String>) -> Self {
        self.spec.hints = hints;
        self
    }
    /// Its oracle plan, and the difficulty the rule gives that plan with answers
    /// needed from `people_to_ask` people ([`difficulty`]).
    pub fn plan(mut self, plan: Vec<PlanStep>, people_to_ask: usize) -> Self {
        self.spec.difficulty = difficulty(&plan, people_to_ask);
        self.spec.plan = plan;
        self
    }
    /// Sets the difficulty directly (after [`Self::plan`], when the task's
    /// difficulty is that of another plan).
    pub fn difficulty(mut self, difficulty: Difficulty) -> Self {
        self.spec.difficulty = difficulty;
        self
    }
    /// The task.
    pub fn build(self) -> TaskSpec {
        debug_assert!(
            self.spec
                .variant
                .strip_prefix(self.spec.family.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
            "variant `{}` of family `{}`",
            self.spec.variant,
            self.spec.family
        );
        debug_assert!(
            !self.spec.title.is_empty() && !self.spec.objective.is_empty(),
            "{}: a task needs a title and an objective",
            self.spec.key
        );
        self.spec
    }
}

#[cfg(test)]
mod tests {
    use super::super::meta_task::KbFix;
    use super::super::{step, with_test_ctx};
    use super::*;

    #[test]
    fn defaults_come_from_the_context() {
        with_test_ctx(3, "kb", 40, |ctx| {
            let t = ctx
                .task_spec::<KbFix>("kb_fix/easy")
                .title("T")
                .objective("O")
                .build();
            assert_eq!(t.key, "task/kb");
            assert_eq!(t.family, "kb_fix");
            assert_eq!(t.variant, "kb_fix/easy");
            assert_eq!(t.assigned_by, ctx.company.mentor);
            assert_eq!(t.release, Release::Start);
            assert_eq!(t.deadline, "2025-10-01T17:00");
            assert_eq!(t.priority, Priority::Normal);
            assert_eq!(t.difficulty, Difficulty::Easy);
            assert!(t.checkpoints.is_empty() && t.hints.is_empty() && t.plan.is_empty());
        });
    }

    #[test]
    fn the_plan_sets_the_difficulty_by_the_rule() {
        with_test_ctx(3, "kb", 40, |ctx| {
            let plan = vec![step("wait", serde_json::json!({})); 8];
            let t = ctx
                .task_spec::<KbFix>("kb_fix/hard")
                .title("T")
                .objective("O")
                .plan(plan.clone(), 0)
                .build();
            assert_eq!(t.difficulty, Difficulty::Hard);
            assert_eq!(t.plan, plan);
            let t = ctx
                .task_spec::<KbFix>("kb_fix/hard")
                .title("T")
                .objective("O")
                .plan(plan[..2].to_vec(), 3)
                .build();
            assert_eq!(t.difficulty, Difficulty::Hard);
            let t = ctx
                .task_spec::<KbFix>("kb_fix/easy")
                .title("T")
                .objective("O")
                .plan(plan[..2].to_vec(), 2)
                .key("task/other")
                .deadline("2025-10-01T12:00")
                .priority(Priority::Urgent)
                .build();
            assert_eq!(t.difficulty, Difficulty::Easy);
            assert_eq!(t.key, "task/other");
            assert_eq!(t.deadline, "2025-10-01T12:00");
            assert_eq!(t.priority, Priority::Urgent);
        });
    }
}
