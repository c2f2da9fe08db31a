//! # tbsim-gen — scenario generation: suites of meta-task rules become scenario files
//!
//! Sits on `tbsim-core`, `tbsim-scenario` (what it writes) and `tbsim-engine` (to
//! check every generated scenario by running the oracle on it), and nothing above.
//!
//! A [`Suite`] lists scenarios; each names its day, company size and tasks, and each
//! task names a family with optional parameters (unset parameters are drawn). Every
//! draw comes from a stream keyed by `(suite seed, scenario name, task id, purpose)`,
//! so the same suite always yields byte-identical scenario files, and adding a task
//! never changes the others. Generated files are validated before they are written.
//!
//! Families: see `Family` (each family module documents its model and its
//! deliberate differences from the reference).

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod ads_strategy;
pub mod attendance;
pub mod bundled;
pub mod changed_requirement;
pub mod company;
pub mod corpus;
pub mod data_completion;
pub mod event_planning;
pub mod evoenv;
pub mod evoenv_args;
pub mod handoff_chain;
pub mod kb_fix;
pub mod meeting_attend;
pub mod meeting_book;
pub mod meta_task;
pub mod registry;
pub mod resume_select;
pub mod sales;
pub mod script;
pub mod script_child;
mod script_embed;
pub mod script_error;
pub mod script_host;
pub mod script_solver;
pub mod spec;
pub mod suite;
#[cfg(test)]
mod surface;
pub mod transaction_review;
pub mod urgent_interrupt;
pub mod website_monitor;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rand::RngExt;
use serde::{Deserialize, Serialize};

use tbsim_core::rng::{StreamRng, stream};
use tbsim_scenario::{
    ClockSpec, Clue, Company, Content, Difficulty, FileSpec, Intern, MeetingSpec, PlanStep,
    Priority, Release, Room, Scenario, TaskSpec, TimedEvent,
};

/// A suite of scenarios to generate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// Master seed for generation.
    pub seed: u64,
    /// Scenarios.
    pub scenarios: Vec<ScenarioPlan>,
}

/// One scenario to generate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioPlan {
    /// Name (also the file stem).
    pub name: String,
    /// What it exercises.
    #[serde(default)]
    pub description: String,
    /// The day, `YYYY-MM-DD`.
    pub date: String,
    /// Start of work, `HH:MM`.
    #[serde(default = "nine")]
    pub start: String,
    /// End of the day, `HH:MM`.
    #[serde(default = "six_pm")]
    pub end: String,
    /// Number of colleagues (at least 20).
    #[serde(default = "forty")]
    pub company_size: usize,
    /// Tasks, each of a distinct family.
    #[serde(default)]
    pub tasks: Vec<TaskPlan>,
    /// Several working days, each with its own tasks (instead of `tasks`).
    #[serde(default)]
    pub days: Vec<DayPlan>,
}

/// One working day's tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DayPlan {
    /// Tasks, each of a distinct family within the day.
    pub tasks: Vec<TaskPlan>,
}

impl ScenarioPlan {
    /// The plan's days (`tasks` is shorthand for a single day).
    pub fn day_plans(&self) -> Vec<&[TaskPlan]> {
        if self.days.is_empty() {
            vec![self.tasks.as_slice()]
        } else {
            self.days.iter().map(|d| d.tasks.as_slice()).collect()
        }
    }

    /// A plan `name` of one task `id` of `family` on `date`: a 09:00-18:00 day at a
    /// 40-person company, the task released at the start with no deadline (what the
    /// validity gate, the scan and the tests generate instances in).
    pub fn one_task(name: &str, date: &str, id: &str, family: Family) -> ScenarioPlan {
        ScenarioPlan {
            name: name.to_owned(),
            description: String::new(),
            date: date.to_owned(),
            start: nine(),
            end: six_pm(),
            company_size: forty(),
            tasks: vec![TaskPlan {
                id: id.to_owned(),
                family,
                release: ReleasePlan::default(),
                deadline: None,
                priority: Priority::default(),
            }],
            days: Vec::new(),
        }
    }
}

fn nine() -> String {
    "09:00".into()
}
fn six_pm() -> String {
    "18:00".into()
}
fn forty() -> usize {
    40
}

/// One task to generate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskPlan {
    /// Short id, unique in the scenario (becomes `task/<id>`).
    pub id: String,
    /// Family and parameters.
    pub family: Family,
    /// When it is released (meeting-announced tasks ignore this).
    #[serde(default)]
    pub release: ReleasePlan,
    /// Deadline, `HH:MM` (default: one hour before the day ends).
    #[serde(default)]
    pub deadline: Option<String>,
    /// Priority.
    #[serde(default)]
    pub priority: Priority,
}

/// When a generated task is released.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub enum ReleasePlan {
    /// At the start of the day.
    #[default]
    Start,
    /// At a time, `HH:MM`.
    At(String),
    /// When another task's checkpoint passes.
    AfterCheckpoint {
        /// The other task's id.
        task: String,
        /// Its checkpoint key.
        checkpoint: String,
    },
}

/// A family with its parameters; `None` means "draw it".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Family {
    /// Knowledge-base link fix.
    KbFix(kb_fix::Params),
    /// Attend a meeting; a task may be announced in it.
    MeetingAttend(meeting_attend::Params),
    /// Find abnormal suppliers in a transactions table.
    TransactionReview(transaction_review::Params),
    /// Book a meeting for exactly the colleagues who can attend, then attend it.
    MeetingBook(meeting_book::Params),
    /// Shortlist the resumes that meet every requirement.
    ResumeSelect(resume_select::Params),
    /// Quarterly sales figures from the sales teams' order exports.
    Sales(sales::Params),
    /// Find why the website is slow and get it fixed through its owner.
    WebsiteMonitor(website_monitor::Params),
    /// Compute attendance statistics from a month of punches under the rules.
    Attendance(attendance::Params),
    /// Fill the missing cells of a table from the relations between its columns.
    DataCompletion(data_completion::Params),
    /// A manager's urgent message interrupts a routine task.
    UrgentInterrupt(urgent_interrupt::Params),
    /// A colleague changes a parameter of a running task.
    ChangedRequirement(changed_requirement::Params),
    /// Each task's output is the next task's input.
    HandoffChain(handoff_chain::Params),
    /// Choose advertising channels within a budget (images carry the densities).
    AdsStrategy(ads_strategy::Params),
    /// Plan a team-building outing: common date, itinerary and its metrics.
    EventPlanning(event_planning::Params),
    /// A family written as a script (`content/families/<key>/family.star`), by key,
    /// with its parameters.
    Script(String, script::ScriptParams),
}

/// The paper's four functional domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Information synthesis and analysis.
    InformationSynthesis,
    /// Time management and scheduling.
    TimeManagement,
    /// Proactive inquiry and monitoring.
    ProactiveInquiry,
    /// Strategic modelling and optimisation.
    StrategicModelling,
}

/// A meta-task variant: a family with its categorical parameters fixed (numeric
/// parameters stay drawn). The counting rule is explained in `content/README.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Variant key, e.g. `kb_fix/hard`.
    pub key: String,
    /// The family with the variant's parameters.
    pub family: Family,
}

impl Family {
    /// The family's entry in the registry ([`registry::FAMILIES`]).
    pub fn entry(&self) -> &'static dyn registry::FamilyEntry {
        registry::of(self)
    }

    /// Every variant of every family, in family order.
    pub fn all_variants() -> Vec<Variant> {
        registry::FAMILIES
            .iter()
            .flat_map(|e| e.variants())
            .chain(
                script::entries()
                    .into_iter()
                    .flat_map(registry::FamilyEntry::variants),
            )
            .collect()
    }

    /// The same family with every parameter left to the generator.
    pub fn unset(&self) -> Family {
        self.entry().unset()
    }

    /// The checkpoint of the family's main task that later tasks may wait on, if
    /// every variant has one (the urgent interrupt's task varies by kind).
    pub fn milestone(&self) -> Option<&'static str> {
        self.entry().milestone()
    }

    /// Minutes a composite day must leave between the family's release and its
    /// deadline (its oracle plan, its interrupts and their slack).
    pub fn min_window_minutes(&self) -> u32 {
        self.entry().min_window_minutes()
    }

    /// Whether the family's task may be released on another task's checkpoint (the
    /// interrupt and the changed requirement are timed by the family itself).
    pub fn gateable(&self) -> bool {
        self.entry().gateable()
    }

    /// The family's functional domain.
    pub fn domain(&self) -> Domain {
        self.entry().domain()
    }

    /// The family's key.
    pub fn key(&self) -> &'static str {
        self.entry().key()
    }
}

/// A generation failure.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The suite file is unreadable or invalid.
    #[error("{0}")]
    Suite(String),
    /// A plan cannot be generated.
    #[error("scenario `{scenario}`: {message}")]
    Plan {
        /// Scenario name.
        scenario: String,
        /// What is wrong.
        message: String,
    },
    /// A generated scenario failed validation (a generator bug).
    #[error("generated scenario `{0}` is invalid:\n{1}")]
    Invalid(String, tbsim_scenario::ScenarioErrors),
    /// Output could not be written.
    #[error("cannot write `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Reads a suite file, with positioned errors.
pub fn load_suite(path: &Path) -> Result<Suite, GenError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| GenError::Suite(format!("{}: cannot read the suite: {e}", path.display())))?;
    ron::Options::default()
        .from_str::<Suite>(&text)
        .map_err(|e| GenError::Suite(tbsim_scenario::syntax_error(&text, path, &e).to_string()))
}

/// What one family generator contributes to a scenario.
#[derive(Debug, Default)]
pub struct Parts {
    /// Tasks (the main one first).
    pub tasks: Vec<TaskSpec>,
    /// Files.
    pub files: Vec<FileSpec>,
    /// Meetings.
    pub meetings: Vec<MeetingSpec>,
    /// Clues, by person key.
    pub clues: Vec<(String, Clue)>,
    /// Monitored services (website family).
    pub services: Vec<tbsim_scenario::ServiceSpec>,
    /// Timed world changes (e.g. a colleague's message at a set time).
    pub events: Vec<TimedEvent>,
}

/// Shared inputs for a family generator.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Task id (slug).
    pub id: &'a str,
    /// The company.
    pub company: &'a company::Roster,
    /// The day, `YYYY-MM-DD`.
    pub date: &'a str,
    /// Start of work, `HH:MM`.
    pub start: &'a str,
    /// Deadline, `HH:MM`.
    pub deadline: &'a str,
    /// Release.
    pub release: Release,
    /// Priority.
    pub priority: Priority,
    /// Rooms.
    pub rooms: &'a [Room],
    /// Suite seed.
    pub seed: u64,
    /// Day of the scenario, from 1.
    pub day: u32,
}

impl Ctx<'_> {
    /// `""` on day 1, `"_d2"` on day 2, ...: appended to the names of files a family
    /// writes, so the same family can recur on later days without collisions.
    pub fn suffix(&self) -> String {
        if self.day <= 1 {
            String::new()
        } else {
            format!("_d{}", self.day)
        }
    }
    /// Release at the start of this task's day (`Start` on day 1).
    pub fn day_start(&self) -> Release {
        if self.day <= 1 {
            Release::Start
        } else {
            Release::At(self.at(self.start))
        }
    }
    /// A drive folder for this family: `base` on day 1, `base/day2` on day 2, ...
    pub fn folder(&self, base: &str) -> String {
        if self.day <= 1 {
            base.to_owned()
        } else {
            format!("{base}/day{}", self.day)
        }
    }
    /// The stream for one purpose of this task.
    pub fn rng(&self, purpose: &str) -> StreamRng {
        stream(
            self.seed,
            &format!("gen/{}/{}/{}", self.scenario, self.id, purpose),
        )
    }
    /// `YYYY-MM-DDTHH:MM` on the scenario's day.
    pub fn at(&self, hhmm: &str) -> String {
        format!("{}T{hhmm}", self.date)
    }
    /// The task key.
    pub fn task_key(&self) -> String {
        format!("task/{}", self.id)
    }
}

/// Runs `f` with a day-1 context for unit-testing a generator: a company of `size`
/// drawn from `seed`, work from 09:00, a 17:00 deadline, released at the start.
#[cfg(test)]
pub(crate) fn with_test_ctx<T>(
    seed: u64,
    id: &str,
    size: usize,
    f: impl FnOnce(&Ctx<'_>) -> T,
) -> T {
    let roster = company::Roster::generate(seed, "s", size).expect("test company size is valid");
    let rooms = company::rooms();
    let ctx = Ctx {
        scenario: "s",
        id,
        company: &roster,
        date: "2025-10-01",
        start: "09:00",
        deadline: "17:00",
        release: Release::Start,
        priority: Priority::Normal,
        rooms: &rooms,
        seed,
        day: 1,
    };
    f(&ctx)
}

/// A plan step.
pub(crate) fn step(tool: &str, args: serde_json::Value) -> PlanStep {
    PlanStep {
        gate: tbsim_scenario::Gate::Ready,
        tool: tool.into(),
        args: args.to_string(),
    }
}

/// The difficulty rule (see `content/README.md`): a task is hard when its oracle plan
/// has at least 8 steps or it needs answers from at least 3 different people.
pub fn difficulty(plan: &[PlanStep], people_to_ask: usize) -> Difficulty {
    if plan.len() >= 8 || people_to_ask >= 3 {
        Difficulty::Hard
    } else {
        Difficulty::Easy
    }
}

/// English month names, January first (for document titles and messages).
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Picks `n` distinct indices below `len`, in draw order.
pub(crate) fn pick_distinct(rng: &mut StreamRng, len: usize, n: usize) -> Vec<usize> {
    let mut pool: Vec<usize> = (0..len).collect();
    let mut out = Vec::with_capacity(n.min(len));
    for _ in 0..n.min(len) {
        let i = rng.random_range(0..pool.len());
        out.push(pool.swap_remove(i));
    }
    out
}

fn plan_err(scenario: &str, message: impl Into<String>) -> GenError {
    GenError::Plan {
        scenario: scenario.to_owned(),
        message: message.into(),
    }
}

/// Builds one scenario from its plan.
/// Version of the generators' output: bumped whenever any family draws or words its
/// instances differently, so results name which generation their scenario came from.
pub const GENERATOR_VERSION: u32 = 3;

/// Generates one scenario from its plan.
pub fn generate_scenario(suite_seed: u64, plan: &ScenarioPlan) -> Result<Scenario, GenError> {
    let name = plan.name.as_str();
    if !plan.tasks.is_empty() && !plan.days.is_empty() {
        return Err(plan_err(
            name,
            "give either `tasks` (one day) or `days`, not both",
        ));
    }
    let days = plan.day_plans();
    if days.iter().any(|d| d.is_empty()) {
        return Err(plan_err(name, "every day needs at least one task"));
    }
    let mut ids = BTreeSet::new();
    for (d, tasks) in days.iter().enumerate() {
        let mut families = BTreeSet::new();
        for t in tasks.iter() {
            if !families.insert(t.family.key()) {
                return Err(plan_err(
                    name,
                    format!(
                        "day {}: family `{}` appears twice; use each family once per day",
                        d + 1,
                        t.family.key()
                    ),
                ));
            }
            if !ids.insert(t.id.as_str())
                || t.id.is_empty()
                || !t
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                return Err(plan_err(
                    name,
                    format!(
                        "task id `{}` must be unique in the scenario and use a-z, 0-9 and '-'",
                        t.id
                    ),
                ));
            }
        }
    }
    let roster = company::Roster::generate(suite_seed, name, plan.company_size)
        .map_err(|m| plan_err(name, m))?;
    let rooms = company::rooms();
    let default_deadline = {
        let (h, m) = plan
            .end
            .split_once(':')
            .ok_or_else(|| plan_err(name, "end must be HH:MM"))?;
        let h: u32 = h.parse().map_err(|_| plan_err(name, "end must be HH:MM"))?;
        format!("{:02}:{m}", h.saturating_sub(1))
    };
    let epoch = tbsim_core::time::Epoch::from_timestamp(&format!("{}T00:00", plan.date))
        .map_err(|e| plan_err(name, format!("date: {e}")))?;

    let mut scenario = Scenario {
        name: name.to_owned(),
        description: plan.description.clone(),
        generated_by: Some(format!("tbsim-gen/{GENERATOR_VERSION}")),
        seed: stream(suite_seed, &format!("gen/{name}/runtime-seed")).random_range(1..1_000_000),
        clock: ClockSpec {
            start: format!("{}T{}", plan.date, plan.start),
            end: format!("{}T{}", plan.date, plan.end),
            office_open: "09:00".into(),
            office_close: "18:00".into(),
            costs: Default::default(),
            turn_cost_secs: 0,
            days: days.len() as u32,
        },
        company: Company {
            name: corpus::COMPANY.to_owned(),
            people: roster.people.clone(),
        },
        intern: Intern {
            key: company::INTERN_KEY.into(),
            name: company::INTERN_NAME.into(),
            department: "Business Operations".into(),
            manager: roster.mentor.clone(),
        },
        rooms: rooms.clone(),
        files: vec![FileSpec {
            path: company::HANDBOOK.into(),
            content: Content::Text(corpus::fill(
                corpus::INTERN_HANDBOOK,
                &[("company", corpus::COMPANY)],
            )),
        }],
        meetings: Vec::new(),
        tasks: Vec::new(),
        events: Vec::new(),
        services: Vec::new(),
    };

    for (d, tasks) in days.iter().enumerate() {
        let date = epoch.iso(tbsim_core::time::SimTime(d as u64 * 86_400))[..10].to_owned();
        for t in tasks.iter() {
            let release = match &t.release {
                ReleasePlan::Start => {
                    if d == 0 {
                        Release::Start
                    } else {
                        Release::At(format!("{date}T{}", plan.start))
                    }
                }
                ReleasePlan::At(hm) => Release::At(format!("{date}T{hm}")),
                ReleasePlan::AfterCheckpoint { task, checkpoint } => {
                    if !tasks.iter().any(|o| &o.id == task) {
                        return Err(plan_err(
                            name,
                            format!(
                                "task `{}` waits on `{task}`, which is not a task of the same day",
                                t.id
                            ),
                        ));
                    }
                    Release::AfterCheckpoint {
                        task: format!("task/{task}"),
                        checkpoint: checkpoint.clone(),
                    }
                }
            };
            let deadline = t
                .deadline
                .clone()
                .unwrap_or_else(|| default_deadline.clone());
            let ctx = Ctx {
                scenario: name,
                id: &t.id,
                company: &roster,
                date: &date,
                start: &plan.start,
                deadline: &deadline,
                release,
                priority: t.priority,
                rooms: &rooms,
                seed: suite_seed,
                day: d as u32 + 1,
            };
            let parts = generate_parts(&ctx, &t.family)
                .map_err(|m| plan_err(name, format!("task `{}`: {m}", t.id)))?;
            // Files exist from the first day on, so two tasks (or two days) that write
            // one path must agree on its content: a day-2 task judged against a version
            // the agent never sees would be unsolvable.
            for f in parts.files {
                match scenario.files.iter().find(|g| g.path == f.path) {
                    None => scenario.files.push(f),
                    Some(g) if g.content == f.content => {}
                    Some(_) => {
                        return Err(plan_err(
                            name,
                            format!(
                                "task `{}` writes `{}` with content that differs from an earlier task's version of that file (generator bug: shared files must be the same for the whole scenario)",
                                t.id, f.path
                            ),
                        ));
                    }
                }
            }
            scenario.meetings.extend(parts.meetings);
            scenario.tasks.extend(parts.tasks);
            scenario.services.extend(parts.services);
            scenario.events.extend(parts.events);
            for (who, clue) in parts.clues {
                if let Some(p) = scenario.company.people.iter_mut().find(|p| p.key == who) {
                    p.clues.push(clue);
                }
            }
        }
    }
    scenario.files.sort_by(|a, b| a.path.cmp(&b.path));
    tbsim_scenario::validate(&scenario, Path::new(&format!("{name}.ron")), None)
        .map_err(|e| GenError::Invalid(name.to_owned(), e))?;
    Ok(scenario)
}

/// Runs the family's generator.
fn generate_parts(ctx: &Ctx<'_>, family: &Family) -> Result<Parts, String> {
    family.entry().generate(ctx, family)
}

/// One listed variant with its properties (for `tbsim metatasks`).
#[derive(Debug, Clone, Serialize)]
pub struct MetaTask {
    /// Family key.
    pub family: &'static str,
    /// Variant key.
    pub variant: String,
    /// The variant's fixed parameters (RON).
    pub params: String,
    /// Difficulty of a representative instance (seed 0), by the documented rule.
    pub difficulty: Difficulty,
    /// Functional domain.
    pub domain: Domain,
}

/// Lists every variant, generating one instance each to label its difficulty.
pub fn metatasks() -> Result<Vec<MetaTask>, GenError> {
    Family::all_variants()
        .into_iter()
        .map(|v| {
            let plan = ScenarioPlan {
                name: "metatask".into(),
                description: String::new(),
                date: "2025-10-01".into(),
                start: nine(),
                end: six_pm(),
                company_size: forty(),
                tasks: vec![TaskPlan {
                    id: "t".into(),
                    family: v.family.clone(),
                    release: ReleasePlan::Start,
                    deadline: None,
                    priority: Priority::Normal,
                }],
                days: Vec::new(),
            };
            let s = generate_scenario(0, &plan)?;
            let params = ron::ser::to_string(&v.family).unwrap_or_default();
            let difficulty = s
                .tasks
                .iter()
                .map(|t| t.difficulty)
                .max()
                .unwrap_or(Difficulty::Easy);
            Ok(MetaTask {
                family: v.family.key(),
                variant: v.key,
                params,
                difficulty,
                domain: v.family.domain(),
            })
        })
        .collect()
}

/// Serialises a scenario as readable RON (multi-line strings kept verbatim).
pub fn to_ron(s: &Scenario) -> String {
    let cfg = ron::ser::PrettyConfig::new()
        .indentor("  ")
        .escape_strings(false)
        .struct_names(true);
    let mut text = ron::ser::to_string_pretty(s, cfg).expect("scenarios serialise");
    text.push('\n');
    text
}

/// Generates every scenario of a suite: `(file name, RON text)` in suite order.
pub fn generate_suite(suite: &Suite) -> Result<Vec<(String, String)>, GenError> {
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for plan in &suite.scenarios {
        if !names.insert(plan.name.clone()) {
            return Err(plan_err(
                &plan.name,
                "scenario names must be unique in a suite",
            ));
        }
        let s = generate_scenario(suite.seed, plan)?;
        out.push((format!("{}.ron", plan.name), to_ron(&s)));
    }
    Ok(out)
}

/// Generates a suite into `dir`, returning the written paths.
pub fn write_suite(suite: &Suite, dir: &Path) -> Result<Vec<PathBuf>, GenError> {
    let files = generate_suite(suite)?;
    std::fs::create_dir_all(dir).map_err(|e| GenError::Io(dir.to_path_buf(), e))?;
    let mut written = Vec::new();
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| GenError::Io(p.clone(), e))?;
        written.push(p);
    }
    Ok(written)
}
