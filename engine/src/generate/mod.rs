//! Scenario generation: suites of meta-task rules become scenario files.
//!
//! A [`Suite`] lists scenarios; each names its day, company size and tasks, and each
//! task names a family with optional parameters (unset parameters are drawn). Every
//! draw comes from a stream keyed by `(suite seed, scenario name, task id, purpose)`,
//! so the same suite always yields byte-identical scenario files, and adding a task
//! never changes the others. Generated files are validated before they are written.
//!
//! Families here: [`kb_fix`], [`meeting_attend`], [`transaction_review`].

pub mod ads_strategy;
pub mod company;
pub mod corpus;
pub mod event_planning;
pub mod kb_fix;
pub mod meeting_attend;
pub mod transaction_review;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::rng::{StreamRng, stream};
use crate::scenario::{
    ClockSpec, Clue, Company, Content, Difficulty, FileSpec, Intern, MeetingSpec, PlanStep,
    Priority, Release, Room, Scenario, TaskSpec,
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
    pub tasks: Vec<TaskPlan>,
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
    /// Choose advertising channels within a budget (images carry the densities).
    AdsStrategy(ads_strategy::Params),
    /// Plan a team-building outing: common date, itinerary and its metrics.
    EventPlanning(event_planning::Params),
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
    /// Every variant of every family, in family order.
    pub fn all_variants() -> Vec<Variant> {
        let mut v = Vec::new();
        v.extend(kb_fix::variants().into_iter().map(|(key, p)| Variant {
            key,
            family: Family::KbFix(p),
        }));
        v.extend(
            meeting_attend::variants()
                .into_iter()
                .map(|(key, p)| Variant {
                    key,
                    family: Family::MeetingAttend(p),
                }),
        );
        v.extend(
            transaction_review::variants()
                .into_iter()
                .map(|(key, p)| Variant {
                    key,
                    family: Family::TransactionReview(p),
                }),
        );
        v.extend(
            ads_strategy::variants()
                .into_iter()
                .map(|(key, p)| Variant {
                    key,
                    family: Family::AdsStrategy(p),
                }),
        );
        v.extend(
            event_planning::variants()
                .into_iter()
                .map(|(key, p)| Variant {
                    key,
                    family: Family::EventPlanning(p),
                }),
        );
        v
    }

    /// The family's functional domain.
    pub fn domain(&self) -> Domain {
        match self {
            Family::KbFix(_) => Domain::ProactiveInquiry,
            Family::MeetingAttend(_) => Domain::TimeManagement,
            Family::TransactionReview(_) => Domain::InformationSynthesis,
            Family::AdsStrategy(_) => Domain::StrategicModelling,
            Family::EventPlanning(_) => Domain::TimeManagement,
        }
    }

    /// The family's key.
    pub fn key(&self) -> &'static str {
        match self {
            Family::KbFix(_) => "kb_fix",
            Family::MeetingAttend(_) => "meeting_attend",
            Family::TransactionReview(_) => "transaction_review",
            Family::AdsStrategy(_) => "ads_strategy",
            Family::EventPlanning(_) => "event_planning",
        }
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
    Invalid(String, crate::scenario::ScenarioErrors),
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
        .map_err(|e| GenError::Suite(crate::scenario::syntax_error(&text, path, &e).to_string()))
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

/// A plan step.
pub(crate) fn step(tool: &str, args: serde_json::Value) -> PlanStep {
    PlanStep {
        gate: crate::scenario::Gate::Ready,
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
pub fn generate_scenario(suite_seed: u64, plan: &ScenarioPlan) -> Result<Scenario, GenError> {
    let name = plan.name.as_str();
    if plan.tasks.is_empty() {
        return Err(plan_err(name, "a scenario needs at least one task"));
    }
    let mut families = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for t in &plan.tasks {
        if !families.insert(t.family.key()) {
            return Err(plan_err(
                name,
                format!(
                    "family `{}` appears twice; each family writes fixed file names, so use it once per scenario",
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
                format!("task id `{}` must be unique and use a-z, 0-9 and '-'", t.id),
            ));
        }
    }
    let roster = company::Roster::generate(suite_seed, name, plan.company_size)
        .map_err(|m| plan_err(name, m))?;
    let rooms = company::rooms();
    let end_hm = plan.end.as_str();
    let default_deadline = {
        let (h, m) = end_hm
            .split_once(':')
            .ok_or_else(|| plan_err(name, "end must be HH:MM"))?;
        let h: u32 = h.parse().map_err(|_| plan_err(name, "end must be HH:MM"))?;
        format!("{:02}:{m}", h.saturating_sub(1))
    };

    let mut scenario = Scenario {
        name: name.to_owned(),
        description: plan.description.clone(),
        seed: stream(suite_seed, &format!("gen/{name}/runtime-seed")).random_range(1..1_000_000),
        clock: ClockSpec {
            start: format!("{}T{}", plan.date, plan.start),
            end: format!("{}T{}", plan.date, plan.end),
            office_open: "09:00".into(),
            office_close: "18:00".into(),
            costs: Default::default(),
            turn_cost_secs: 0,
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
    };

    for t in &plan.tasks {
        let release = match &t.release {
            ReleasePlan::Start => Release::Start,
            ReleasePlan::At(hm) => Release::At(format!("{}T{hm}", plan.date)),
            ReleasePlan::AfterCheckpoint { task, checkpoint } => {
                if !plan.tasks.iter().any(|o| &o.id == task) {
                    return Err(plan_err(
                        name,
                        format!("task `{}` waits on unknown task `{task}`", t.id),
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
            date: &plan.date,
            start: &plan.start,
            deadline: &deadline,
            release,
            priority: t.priority,
            rooms: &rooms,
            seed: suite_seed,
            day: 1,
        };
        let parts = match &t.family {
            Family::KbFix(p) => kb_fix::generate(&ctx, p),
            Family::MeetingAttend(p) => meeting_attend::generate(&ctx, p),
            Family::TransactionReview(p) => transaction_review::generate(&ctx, p),
            Family::AdsStrategy(p) => ads_strategy::generate(&ctx, p),
            Family::EventPlanning(p) => event_planning::generate(&ctx, p),
        }
        .map_err(|m| plan_err(name, format!("task `{}`: {m}", t.id)))?;
        for f in parts.files {
            if !scenario.files.iter().any(|g| g.path == f.path) {
                scenario.files.push(f);
            }
        }
        scenario.meetings.extend(parts.meetings);
        scenario.tasks.extend(parts.tasks);
        for (who, clue) in parts.clues {
            if let Some(p) = scenario.company.people.iter_mut().find(|p| p.key == who) {
                p.clues.push(clue);
            }
        }
    }
    scenario.files.sort_by(|a, b| a.path.cmp(&b.path));
    crate::scenario::validate(&scenario, Path::new(&format!("{name}.ron")), None)
        .map_err(|e| GenError::Invalid(name.to_owned(), e))?;
    Ok(scenario)
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
