//! The family registry: one [`MetaTask`] implementation per meta-task family and one
//! list, [`FAMILIES`], that registers them.
//!
//! Everything the rest of the crate asks of a family (its key, functional domain,
//! milestone checkpoint, parameter type, variants, generator, the reference task it
//! imports from, the trivially-wrong answers the validity tests try) is answered
//! here, so adding a family is one `Family` variant, one module, one marker type in
//! [`meta_task`](super::meta_task) and one impl below. The registry is the only
//! module that imports the family modules; they name their marker, never the registry.
//! [`FamilyEntry`] is the object-safe face of [`MetaTask`] that the list holds.

use std::marker::PhantomData;

use super::{
    Ctx, Domain, Family, Parts, Variant, ads_strategy, attendance, changed_requirement,
    data_completion, event_planning, evoenv_args as evoenv, handoff_chain, kb_fix, meeting_attend,
    meeting_book, resume_select, sales, transaction_review, urgent_interrupt, website_monitor,
};
// The trait and the family markers live in `meta_task`, which the families import
// too; re-exported so `registry::X` keeps working for other crates.
pub use super::meta_task::{
    AdsStrategy, Attendance, ChangedRequirement, DataCompletion, EventPlanning, FamilyEntry,
    HandoffChain, KbFix, MeetingAttend, MeetingBook, MetaTask, Reference, ResumeSelect, Sales,
    TransactionReview, UrgentInterrupt, WebsiteMonitor,
};
use tbsim_scenario::{Scenario, TaskSpec};

/// The registry's entry for the family `T`.
pub struct Entry<T>(PhantomData<fn() -> T>);

impl<T> Entry<T> {
    /// The entry (a zero-sized value).
    pub const NEW: Self = Entry(PhantomData);
}

impl<T: MetaTask> std::fmt::Debug for Entry<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({})", T::KEY)
    }
}

impl std::fmt::Debug for dyn FamilyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FamilyEntry({})", self.key())
    }
}

impl<T: MetaTask> FamilyEntry for Entry<T> {
    fn key(&self) -> &'static str {
        T::KEY
    }
    fn domain(&self) -> Domain {
        T::DOMAIN
    }
    fn milestone(&self) -> Option<&'static str> {
        T::MILESTONE
    }
    fn min_window_minutes(&self) -> u32 {
        T::MIN_WINDOW_MINUTES
    }
    fn gateable(&self) -> bool {
        T::GATEABLE
    }
    fn reference(&self) -> Option<Reference> {
        T::REFERENCE
    }
    fn holds(&self, f: &Family) -> bool {
        T::params(f).is_some()
    }
    fn unset(&self) -> Family {
        T::wrap(T::Params::default())
    }
    fn variants(&self) -> Vec<Variant> {
        T::variants()
            .into_iter()
            .map(|(key, p)| Variant {
                key,
                family: T::wrap(p),
            })
            .collect()
    }
    fn generate(&self, ctx: &Ctx<'_>, f: &Family) -> Result<Parts, String> {
        let p = T::params(f).ok_or_else(|| {
            format!(
                "the `{}` generator was given a `{}` task",
                T::KEY,
                of(f).key()
            )
        })?;
        T::generate(ctx, p)
    }
    fn wrong_answers(&self, task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        T::wrong_answers(task, scenario)
    }
}

/// Loads a script family folder and registers it (see
/// [`super::script::register_dir`]), refusing a key a Rust family has: the registry
/// resolves keys to Rust families first, so such a script could never be drawn.
pub fn register_script_dir(
    dir: &std::path::Path,
) -> Result<&'static super::script::ScriptEntry, super::script_host::ScriptError> {
    let e = super::script::register_dir(dir)?;
    if FAMILIES.iter().any(|f| f.key() == e.key()) {
        return Err(super::script_host::ScriptError::at_file(
            e.script().file(),
            format!("`{}` is the key of a Rust family; choose another", e.key()),
        ));
    }
    Ok(e)
}

/// The registered family that `f` is.
pub fn of(f: &Family) -> &'static dyn FamilyEntry {
    if let Family::Script(key, _) = f {
        return super::script::entry_for(key);
    }
    FAMILIES
        .iter()
        .copied()
        .find(|e| e.holds(f))
        .expect("every `Family` variant is registered in `FAMILIES`")
}

/// The registered family with this key (Rust families, then script families).
pub fn by_key(key: &str) -> Option<&'static dyn FamilyEntry> {
    FAMILIES
        .iter()
        .copied()
        .find(|e| e.key() == key)
        .or_else(|| super::script::entry(key).map(|e| e as &'static dyn FamilyEntry))
}

/// The registered family of a generated task (by its `family` key).
pub fn of_task(task: &TaskSpec) -> Option<&'static dyn FamilyEntry> {
    by_key(&task.family)
}

/// The registered family with this reference task name.
pub fn by_reference_name(name: &str) -> Option<&'static dyn FamilyEntry> {
    FAMILIES
        .iter()
        .copied()
        .find(|e| e.reference().is_some_and(|r| r.name == name))
}

/// The reference task names with the keys of their families, in the reference's
/// hub order.
pub fn reference_names() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(usize, &'static str, &'static str)> = FAMILIES
        .iter()
        .filter_map(|e| e.reference().map(|r| (r.hub_position, r.name, e.key())))
        .collect();
    v.sort();
    v.into_iter().map(|(_, n, k)| (n, k)).collect()
}

/// `kb_fix`: see [`kb_fix`].
impl MetaTask for KbFix {
    type Params = kb_fix::Params;
    const KEY: &'static str = "kb_fix";
    const DOMAIN: Domain = Domain::ProactiveInquiry;
    const MILESTONE: Option<&'static str> = Some("links_fixed");
    // A hard KB fix can need a dozen chart owners, each asked in turn.
    const MIN_WINDOW_MINUTES: u32 = 4 * 60;
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "KB Link Fix",
        hub_position: 6,
        import: evoenv::kb,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::KbFix(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::KbFix(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        kb_fix::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        kb_fix::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        kb_fix::wrong_answers(task, scenario)
    }
}

/// `meeting_attend`: see [`meeting_attend`].
impl MetaTask for MeetingAttend {
    type Params = meeting_attend::Params;
    const KEY: &'static str = "meeting_attend";
    const DOMAIN: Domain = Domain::TimeManagement;
    const MILESTONE: Option<&'static str> = Some("attended_on_time");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Meeting Attend",
        hub_position: 1,
        import: evoenv::meeting,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::MeetingAttend(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::MeetingAttend(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        meeting_attend::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        meeting_attend::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        meeting_attend::wrong_answers(task, scenario)
    }
}

/// `transaction_review`: see [`transaction_review`].
impl MetaTask for TransactionReview {
    type Params = transaction_review::Params;
    const KEY: &'static str = "transaction_review";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("suppliers_correct");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Transaction Data Review",
        hub_position: 3,
        import: evoenv::transactions,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::TransactionReview(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::TransactionReview(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        transaction_review::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        transaction_review::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        transaction_review::wrong_answers(task, scenario)
    }
}

/// `meeting_book`: see [`meeting_book`].
impl MetaTask for MeetingBook {
    type Params = meeting_book::Params;
    const KEY: &'static str = "meeting_book";
    const DOMAIN: Domain = Domain::TimeManagement;
    const MILESTONE: Option<&'static str> = Some("booked");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Meeting Book",
        hub_position: 2,
        import: evoenv::meeting_book,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::MeetingBook(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::MeetingBook(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        meeting_book::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        meeting_book::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        meeting_book::wrong_answers(task, scenario)
    }
}

/// `resume_select`: see [`resume_select`].
impl MetaTask for ResumeSelect {
    type Params = resume_select::Params;
    const KEY: &'static str = "resume_select";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("shortlist_correct");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Resume Select",
        hub_position: 9,
        import: evoenv::resume,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::ResumeSelect(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::ResumeSelect(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        resume_select::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        resume_select::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        resume_select::wrong_answers(task, scenario)
    }
}

/// `sales`: see [`sales`].
impl MetaTask for Sales {
    type Params = sales::Params;
    const KEY: &'static str = "sales";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("handbook_consulted");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Sales Analysis",
        hub_position: 7,
        import: evoenv::sales,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::Sales(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::Sales(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        sales::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        sales::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        sales::wrong_answers(task, scenario)
    }
}

/// `website_monitor`: see [`website_monitor`].
impl MetaTask for WebsiteMonitor {
    type Params = website_monitor::Params;
    const KEY: &'static str = "website_monitor";
    const DOMAIN: Domain = Domain::ProactiveInquiry;
    const MILESTONE: Option<&'static str> = Some("root_cause");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Website Monitor",
        hub_position: 4,
        import: evoenv::website,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::WebsiteMonitor(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::WebsiteMonitor(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        website_monitor::variants()
    }
    /// Also contributes the monitored services.
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        website_monitor::generate_with_services(ctx, p).map(|(mut parts, services)| {
            parts.services = services;
            parts
        })
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        website_monitor::wrong_answers(task, scenario)
    }
}

/// `attendance`: see [`attendance`].
impl MetaTask for Attendance {
    type Params = attendance::Params;
    const KEY: &'static str = "attendance";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("rules_consulted");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Attendance Statistics",
        hub_position: 0,
        import: evoenv::attendance,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::Attendance(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::Attendance(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        attendance::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        attendance::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        attendance::wrong_answers(task, scenario)
    }
}

/// `data_completion`: see [`data_completion`].
impl MetaTask for DataCompletion {
    type Params = data_completion::Params;
    const KEY: &'static str = "data_completion";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("values_correct");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Data Completion",
        hub_position: 5,
        import: evoenv::data_completion,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::DataCompletion(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::DataCompletion(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        data_completion::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        data_completion::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        data_completion::wrong_answers(task, scenario)
    }
}

/// `urgent_interrupt`: see [`urgent_interrupt`].
impl MetaTask for UrgentInterrupt {
    type Params = urgent_interrupt::Params;
    const KEY: &'static str = "urgent_interrupt";
    const DOMAIN: Domain = Domain::TimeManagement;
    const MILESTONE: Option<&'static str> = None;
    const MIN_WINDOW_MINUTES: u32 = 5 * 60;
    const GATEABLE: bool = false;

    fn wrap(p: Self::Params) -> Family {
        Family::UrgentInterrupt(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::UrgentInterrupt(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        urgent_interrupt::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        urgent_interrupt::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        urgent_interrupt::wrong_answers(task, scenario)
    }
}

/// `changed_requirement`: see [`changed_requirement`].
impl MetaTask for ChangedRequirement {
    type Params = changed_requirement::Params;
    const KEY: &'static str = "changed_requirement";
    const DOMAIN: Domain = Domain::ProactiveInquiry;
    const MILESTONE: Option<&'static str> = Some("list_correct");
    const GATEABLE: bool = false;

    fn wrap(p: Self::Params) -> Family {
        Family::ChangedRequirement(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::ChangedRequirement(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        changed_requirement::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        changed_requirement::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        changed_requirement::wrong_answers(task, scenario)
    }
}

/// `handoff_chain`: see [`handoff_chain`].
impl MetaTask for HandoffChain {
    type Params = handoff_chain::Params;
    const KEY: &'static str = "handoff_chain";
    const DOMAIN: Domain = Domain::InformationSynthesis;
    const MILESTONE: Option<&'static str> = Some("output_correct");

    fn wrap(p: Self::Params) -> Family {
        Family::HandoffChain(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::HandoffChain(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        handoff_chain::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        handoff_chain::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        handoff_chain::wrong_answers(task, scenario)
    }
}

/// `ads_strategy`: see [`ads_strategy`].
impl MetaTask for AdsStrategy {
    type Params = ads_strategy::Params;
    const KEY: &'static str = "ads_strategy";
    const DOMAIN: Domain = Domain::StrategicModelling;
    const MILESTONE: Option<&'static str> = Some("optimal");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "ADs Strategy Plan",
        hub_position: 8,
        import: evoenv::ads,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::AdsStrategy(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::AdsStrategy(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        ads_strategy::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        ads_strategy::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        ads_strategy::wrong_answers(task, scenario)
    }
}

/// `event_planning`: see [`event_planning`].
impl MetaTask for EventPlanning {
    type Params = event_planning::Params;
    const KEY: &'static str = "event_planning";
    const DOMAIN: Domain = Domain::TimeManagement;
    const MILESTONE: Option<&'static str> = Some("event_date");
    const REFERENCE: Option<Reference> = Some(Reference {
        name: "Event Planning",
        hub_position: 10,
        import: evoenv::event,
    });

    fn wrap(p: Self::Params) -> Family {
        Family::EventPlanning(p)
    }
    fn params(f: &Family) -> Option<&Self::Params> {
        match f {
            Family::EventPlanning(p) => Some(p),
            _ => None,
        }
    }
    fn variants() -> Vec<(String, Self::Params)> {
        event_planning::variants()
    }
    fn generate(ctx: &Ctx<'_>, p: &Self::Params) -> Result<Parts, String> {
        event_planning::generate(ctx, p)
    }
    fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        event_planning::wrong_answers(task, scenario)
    }
}

/// Every family, in catalogue order (the order of `Family`'s variants).
pub static FAMILIES: [&dyn FamilyEntry; 14] = [
    &Entry::<KbFix>::NEW,
    &Entry::<MeetingAttend>::NEW,
    &Entry::<TransactionReview>::NEW,
    &Entry::<MeetingBook>::NEW,
    &Entry::<ResumeSelect>::NEW,
    &Entry::<Sales>::NEW,
    &Entry::<WebsiteMonitor>::NEW,
    &Entry::<Attendance>::NEW,
    &Entry::<DataCompletion>::NEW,
    &Entry::<UrgentInterrupt>::NEW,
    &Entry::<ChangedRequirement>::NEW,
    &Entry::<HandoffChain>::NEW,
    &Entry::<AdsStrategy>::NEW,
    &Entry::<EventPlanning>::NEW,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A distinct index per `Family` variant. The match has no wildcard, so a new
    /// variant does not compile until it is listed here (and then registered).
    fn variant_index(f: &Family) -> usize {
        match f {
            Family::KbFix(_) => 0,
            Family::MeetingAttend(_) => 1,
            Family::TransactionReview(_) => 2,
            Family::MeetingBook(_) => 3,
            Family::ResumeSelect(_) => 4,
            Family::Sales(_) => 5,
            Family::WebsiteMonitor(_) => 6,
            Family::Attendance(_) => 7,
            Family::DataCompletion(_) => 8,
            Family::UrgentInterrupt(_) => 9,
            Family::ChangedRequirement(_) => 10,
            Family::HandoffChain(_) => 11,
            Family::AdsStrategy(_) => 12,
            Family::EventPlanning(_) => 13,
            // Script families are registered at run time, never in `FAMILIES`.
            Family::Script(..) => usize::MAX,
        }
    }
    const VARIANTS: usize = 14;

    #[test]
    fn the_registry_lists_every_family_exactly_once_in_enum_order() {
        assert_eq!(FAMILIES.len(), VARIANTS);
        for (i, e) in FAMILIES.iter().enumerate() {
            let f = e.unset();
            assert_eq!(
                variant_index(&f),
                i,
                "{} is registered out of order",
                e.key()
            );
            let holders: Vec<&str> = FAMILIES
                .iter()
                .filter(|o| o.holds(&f))
                .map(|o| o.key())
                .collect();
            assert_eq!(holders, [e.key()], "exactly one entry holds {}", e.key());
            assert_eq!(of(&f).key(), e.key());
            assert_eq!(by_key(e.key()).map(|o| o.key()), Some(e.key()));
        }
    }

    #[test]
    fn every_variant_key_starts_with_its_family_key() {
        for e in FAMILIES {
            let vs = e.variants();
            assert!(!vs.is_empty(), "{} has no variants", e.key());
            for v in vs {
                assert!(v.key.starts_with(&format!("{}/", e.key())), "{}", v.key);
                assert_eq!(of(&v.family).key(), e.key());
                assert_eq!(v.family.unset(), e.unset());
            }
        }
    }

    #[test]
    fn reference_names_are_distinct_and_hub_positions_dense() {
        let refs: Vec<Reference> = FAMILIES.iter().filter_map(|e| e.reference()).collect();
        let mut positions: Vec<usize> = refs.iter().map(|r| r.hub_position).collect();
        positions.sort();
        assert_eq!(positions, (0..refs.len()).collect::<Vec<_>>());
        let names = reference_names();
        assert_eq!(names.len(), refs.len());
        assert_eq!(names[0], ("Attendance Statistics", "attendance"));
        for (n, k) in names {
            assert_eq!(by_reference_name(n).map(|e| e.key()), Some(k));
        }
        assert!(by_reference_name("Coffee Run").is_none());
    }

    #[test]
    fn a_generator_refuses_another_familys_parameters() {
        let e = by_key("kb_fix").unwrap();
        let other = by_key("sales").unwrap().unset();
        let err = super::super::with_test_ctx(1, "t", 40, |ctx| e.generate(ctx, &other))
            .expect_err("a sales task is not a kb_fix task");
        assert!(
            err.contains("`kb_fix` generator was given a `sales` task"),
            "{err}"
        );
    }
}
