//! What the families and the registry share: the [`MetaTask`] trait, the reference
//! mapping ([`Reference`]) and one zero-sized marker type per family.
//!
//! The families name their marker (`ctx.task_spec::<KbFix>(…)`) and the registry
//! implements [`MetaTask`] for it, so the registry is the only module that imports
//! the family modules and no family imports the registry.

use serde_json::Value;

use super::{Ctx, Domain, Family, Parts, Variant};
use tbsim_scenario::{Scenario, TaskSpec};

/// The reference implementation's name for a family, and how its arguments map
/// (`tbsim gen --from-evoenv`).
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    /// The reference's task name, e.g. `"KB Link Fix"`.
    pub name: &'static str,
    /// Position in the reference's task hub (the order its names are listed in).
    pub hub_position: usize,
    /// Maps the task's `arguments` (at JSON path `at`) onto this family's parameters.
    pub import: fn(args: &Value, at: &str) -> Result<Family, String>,
}

/// One meta-task family.
pub trait MetaTask: 'static {
    /// The family's parameters; every field unset (`Default`) means "draw it".
    type Params: Clone + Default + std::fmt::Debug + PartialEq;
    /// The family's key (`TaskSpec::family`, the first part of every variant key).
    const KEY: &'static str;
    /// The family's functional domain.
    const DOMAIN: Domain;
    /// The checkpoint of the family's main task that later tasks may wait on, if
    /// every variant has one.
    const MILESTONE: Option<&'static str>;
    /// Minutes a composite day must leave between the family's release and its
    /// deadline (its oracle plan, its interrupts and their slack).
    const MIN_WINDOW_MINUTES: u32 = 3 * 60;
    /// Whether the family's task may be released on another task's checkpoint
    /// (families that time their own releases may not).
    const GATEABLE: bool = true;
    /// The reference task this family imports, if the reference has one.
    const REFERENCE: Option<Reference> = None;

    /// The `Family` value holding `p`.
    fn wrap(p: Self::Params) -> Family;
    /// This family's parameters, when `f` is this family.
    fn params(f: &Family) -> Option<&Self::Params>;
    /// The family's variants: `(variant key, parameters)`.
    fn variants() -> Vec<(String, Self::Params)>;
    /// Generates one instance.
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String>;
    /// Trivially wrong answers for the validity tests: `(path, content)` pairs
    /// that must pass no checkpoint of `task`.
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)>;
}

/// `kb_fix`: see [`kb_fix`](super::kb_fix); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct KbFix;

/// `meeting_attend`: see [`meeting_attend`](super::meeting_attend); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeetingAttend;

/// `transaction_review`: see [`transaction_review`](super::transaction_review); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct TransactionReview;

/// `meeting_book`: see [`meeting_book`](super::meeting_book); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeetingBook;

/// `resume_select`: see [`resume_select`](super::resume_select); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResumeSelect;

/// `sales`: see [`sales`](super::sales); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sales;

/// `website_monitor`: see [`website_monitor`](super::website_monitor); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebsiteMonitor;

/// `attendance`: see [`attendance`](super::attendance); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Attendance;

/// `data_completion`: see [`data_completion`](super::data_completion); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct DataCompletion;

/// `urgent_interrupt`: see [`urgent_interrupt`](super::urgent_interrupt); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct UrgentInterrupt;

/// `changed_requirement`: see [`changed_requirement`](super::changed_requirement); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChangedRequirement;

/// `handoff_chain`: see [`handoff_chain`](super::handoff_chain); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandoffChain;

/// `ads_strategy`: see [`ads_strategy`](super::ads_strategy); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct AdsStrategy;

/// `event_planning`: see [`event_planning`](super::event_planning); its [`MetaTask`] impl is in the registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventPlanning;

/// A registered family, as the registry holds it (the object-safe [`MetaTask`]).
pub trait FamilyEntry: Sync {
    /// See [`MetaTask::KEY`].
    fn key(&self) -> &'static str;
    /// See [`MetaTask::DOMAIN`].
    fn domain(&self) -> Domain;
    /// See [`MetaTask::MILESTONE`].
    fn milestone(&self) -> Option<&'static str>;
    /// See [`MetaTask::MIN_WINDOW_MINUTES`].
    fn min_window_minutes(&self) -> u32;
    /// See [`MetaTask::GATEABLE`].
    fn gateable(&self) -> bool;
    /// See [`MetaTask::REFERENCE`].
    fn reference(&self) -> Option<Reference>;
    /// Whether `f` is this family.
    fn holds(&self, f: &Family) -> bool;
    /// The family with every parameter left to the generator.
    fn unset(&self) -> Family;
    /// Every variant of the family.
    fn variants(&self) -> Vec<Variant>;
    /// Generates one instance of `f`, which must be this family.
    fn generate(&self, ctx: &Ctx<'_>, f: &Family) -> Result<Parts, String>;
    /// See [`MetaTask::wrong_answers`].
    fn wrong_answers(&self, task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)>;
}
