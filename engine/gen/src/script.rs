//! Script families (evaluated by the `tbsim-script` host, [`super::script_host`]) in the registry: a family written as
//! `content/families/<name>/family.star` is generated, listed and drawn exactly like
//! a Rust one, as `Family::Script(key, params)`.
//!
//! The bundled script families are compiled into the binary; more are registered
//! at run time from a folder ([`register_dir`], `--families DIR`). Each loaded
//! family is one [`ScriptEntry`], kept for the life of the process.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde::Deserialize;

use super::meta_task::{FamilyEntry, Reference};
use super::script_host::{GenInput, ScriptError, ScriptFamily};
use super::{Ctx, Domain, Family, Parts, Variant, difficulty};
use tbsim_scenario::{
    CheckpointSpec, Clue, FileSpec, MeetingSpec, PlanStep, Scenario, TaskSpec, TimedEvent,
};

/// A script family's parameters: a JSON object (unset keys are the script's to draw).
pub type ScriptParams = BTreeMap<String, serde_json::Value>;

pub use crate::bundled::BUNDLED;

/// A loaded script family as the registry holds it.
#[derive(Debug)]
pub struct ScriptEntry {
    family: ScriptFamily,
    readme: Option<String>,
    key: &'static str,
    milestone: Option<&'static str>,
    domain: Domain,
}

impl ScriptEntry {
    /// The loaded script.
    pub fn script(&self) -> &ScriptFamily {
        &self.family
    }

    /// The family's `README.md` (embedded for bundled families, read beside the
    /// script for a folder), if it has one.
    pub fn readme(&self) -> Option<&str> {
        self.readme.as_deref()
    }

    /// The script's `wrong_answers(task, scenario)`, with its errors; `scenario` is
    /// the scenario as JSON (converted once by a caller asking for several tasks).
    pub fn script_wrong_answers(
        &self,
        task: &TaskSpec,
        scenario: &serde_json::Value,
    ) -> Result<Vec<(String, String)>, ScriptError> {
        let t = serde_json::to_value(task)
            .map_err(|e| ScriptError::at_file(self.family.file(), format!("the task: {e}")))?;
        self.family.wrong_answers(&t, scenario)
    }

    fn new(family: ScriptFamily, readme: Option<String>) -> Result<ScriptEntry, ScriptError> {
        let domain: Domain = serde_json::from_value(serde_json::json!(family.domain()))
            .map_err(|e| ScriptError::at_file(family.file(), format!("domain: {e}")))?;
        // Registered once per process; the registry hands out `'static` entries.
        let key: &'static str = Box::leak(family.key().to_owned().into_boxed_str());
        let milestone = family
            .milestone()
            .map(|m| &*Box::leak(m.to_owned().into_boxed_str()));
        Ok(ScriptEntry {
            family,
            readme,
            key,
            milestone,
            domain,
        })
    }
}

/// Why the bundled script families are not registered, when they are not: the
/// host could not be started (a tbsim installed without `tbsim-script`). Rust
/// families work regardless; naming a script family then says this.
static HOST_PROBLEM: OnceLock<ScriptError> = OnceLock::new();

fn registered() -> &'static Mutex<Vec<&'static ScriptEntry>> {
    static R: OnceLock<Mutex<Vec<&'static ScriptEntry>>> = OnceLock::new();
    R.get_or_init(|| {
        let mut v = Vec::new();
        for (name, src, readme) in BUNDLED {
            let file = format!("content/families/{name}/family.star");
            match ScriptFamily::from_source(&file, src)
                .and_then(|f| ScriptEntry::new(f, Some(readme.to_owned())))
            {
                Ok(f) => v.push(&*Box::leak(Box::new(f))),
                Err(e) if e.file == "<host>" => {
                    let _ = HOST_PROBLEM.set(e);
                    break;
                }
                // The bundled scripts are tested; one that fails is a build defect.
                Err(e) => panic!("bundled family {name} loads: {e}"),
            }
        }
        Mutex::new(v)
    })
}

/// Why script families are unavailable in this process, if they are (no host).
pub fn unavailable() -> Option<&'static ScriptError> {
    registered();
    HOST_PROBLEM.get()
}

/// Every registered script family (bundled first, then by registration).
pub fn entries() -> Vec<&'static ScriptEntry> {
    registered()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// The registered script family with this key.
pub fn entry(key: &str) -> Option<&'static ScriptEntry> {
    entries().into_iter().find(|e| e.key == key)
}

/// Loads `dir/family.star` and registers it. A family already registered under
/// the same key with the same text is returned as it is; another text under a
/// registered key, or a key of a Rust family, is refused.
pub fn register_dir(dir: &Path) -> Result<&'static ScriptEntry, ScriptError> {
    let family = ScriptFamily::load_dir(dir)?;
    let readme = super::script_host::read_readme(dir)?;
    register_with(family, readme)
}

/// Registers a loaded family (see [`register_dir`]).
pub fn register(family: ScriptFamily) -> Result<&'static ScriptEntry, ScriptError> {
    register_with(family, None)
}

fn register_with(
    family: ScriptFamily,
    readme: Option<String>,
) -> Result<&'static ScriptEntry, ScriptError> {
    let mut reg = registered().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = reg.iter().position(|e| e.key == family.key()) {
        let e = reg[i];
        let same_source = e.family.source() == family.source();
        return if same_source && (readme.is_none() || e.readme == readme) {
            Ok(e)
        } else if same_source || same_file(e.family.file(), family.file()) {
            // The same script with its README edited, or
            // the folder a bundled (or earlier) copy came from, edited since: the
            // author's version wins, as they are checking what they are writing.
            let n: &'static ScriptEntry = Box::leak(Box::new(ScriptEntry::new(family, readme)?));
            reg[i] = n;
            Ok(n)
        } else {
            Err(ScriptError::at_file(
                family.file(),
                format!(
                    "a different family `{}` is already registered (from {})",
                    family.key(),
                    e.family.file()
                ),
            ))
        };
    }
    let e: &'static ScriptEntry = Box::leak(Box::new(ScriptEntry::new(family, readme)?));
    reg.push(e);
    Ok(e)
}

/// Whether two script paths name one file (`content/families/x/family.star` as
/// bundled, and the same folder named from elsewhere).
fn same_file(a: &str, b: &str) -> bool {
    let canon = |p: &str| std::fs::canonicalize(p).ok();
    a == b || canon(a).is_some_and(|x| Some(x) == canon(b))
}

/// The entry of a `Script` family whose key nobody registered: it generates
/// nothing and says why.
#[derive(Debug)]
pub struct Unknown(&'static str);

/// The entry for `Family::Script(key, _)`, registered or not.
pub fn entry_for(key: &str) -> &'static dyn FamilyEntry {
    match entry(key) {
        Some(e) => e,
        None => {
            static UNKNOWN: OnceLock<Mutex<BTreeMap<String, &'static Unknown>>> = OnceLock::new();
            let mut m = UNKNOWN
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            *m.entry(key.to_owned()).or_insert_with(|| {
                Box::leak(Box::new(Unknown(Box::leak(
                    key.to_owned().into_boxed_str(),
                ))))
            })
        }
    }
}

impl FamilyEntry for Unknown {
    fn key(&self) -> &'static str {
        self.0
    }
    fn domain(&self) -> Domain {
        Domain::InformationSynthesis
    }
    fn milestone(&self) -> Option<&'static str> {
        None
    }
    fn min_window_minutes(&self) -> u32 {
        3 * 60
    }
    fn gateable(&self) -> bool {
        false
    }
    fn reference(&self) -> Option<Reference> {
        None
    }
    fn holds(&self, f: &Family) -> bool {
        matches!(f, Family::Script(k, _) if k == self.0)
    }
    fn unset(&self) -> Family {
        Family::Script(self.0.to_owned(), ScriptParams::new())
    }
    fn variants(&self) -> Vec<Variant> {
        Vec::new()
    }
    fn generate(&self, _: &Ctx<'_>, _: &Family) -> Result<Parts, String> {
        let known: Vec<&str> = entries().iter().map(|e| e.key).collect();
        let why = HOST_PROBLEM
            .get()
            .map(|e| format!("; script families are unavailable: {e}"))
            .unwrap_or_default();
        Err(format!(
            "no script family `{}` (registered: {}; load one with --families DIR){why}",
            self.0,
            known.join(", ")
        ))
    }
    fn wrong_answers(&self, _: &TaskSpec, _: &Scenario) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// What `generate` returns, in the scenario format's shapes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptParts<'a> {
    #[serde(borrow)]
    tasks: Vec<ScriptTask<'a>>,
    #[serde(default)]
    files: Vec<FileSpec>,
    #[serde(default)]
    clues: Vec<HeldClue>,
    #[serde(default)]
    meetings: Vec<MeetingSpec>,
    #[serde(default)]
    events: Vec<TimedEvent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeldClue {
    holder: String,
    clue: Clue,
}

/// A task as a script writes it; the rest comes from the context, as
/// `Ctx::task_spec` gives a Rust family's tasks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptTask<'a> {
    variant: String,
    title: String,
    objective: String,
    checkpoints: Vec<CheckpointSpec>,
    #[serde(default)]
    hints: Vec<String>,
    #[serde(borrow)]
    plan: Vec<ScriptStep<'a>>,
    #[serde(default)]
    people_to_ask: usize,
    #[serde(default)]
    key: Option<String>,
    /// When the task is released (default: as the suite plans the family's task).
    /// A follow-up task is `{"AfterCheckpoint": {"task": <key>, "checkpoint": <key>}}`.
    #[serde(default)]
    release: Option<tbsim_scenario::Release>,
    /// Who assigns it (a person key; default: the intern's manager).
    #[serde(default)]
    assigned_by: Option<String>,
    /// Its deadline, `HH:MM` on the task's day or a full timestamp (default: the
    /// suite's deadline for the family's task).
    #[serde(default)]
    deadline: Option<String>,
}

/// An oracle plan step as a script writes it: `args` is the arguments' JSON text
/// (as the scenario format holds it) or, as `step()` leaves it, the arguments
/// themselves, whose JSON text is taken as written: a file's content in a
/// `write_file` step is then escaped once on the way, not twice.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptStep<'a> {
    #[serde(default)]
    gate: tbsim_scenario::Gate,
    tool: String,
    #[serde(borrow)]
    args: &'a serde_json::value::RawValue,
}

impl ScriptStep<'_> {
    fn step(self) -> Result<PlanStep, serde_json::Error> {
        let text = self.args.get();
        let args = if text.starts_with('"') {
            serde_json::from_str(text)?
        } else {
            text.to_owned()
        };
        Ok(PlanStep {
            gate: self.gate,
            tool: self.tool,
            args,
        })
    }
}

impl ScriptEntry {
    fn input<'a>(ctx: &'a Ctx<'_>) -> GenInput<'a> {
        GenInput {
            seed: ctx.seed,
            scenario: ctx.scenario,
            id: ctx.id,
            date: ctx.date,
            start: ctx.start,
            deadline: ctx.deadline,
            day: ctx.day,
            people: &ctx.company.people,
            mentor: &ctx.company.mentor,
            release: &ctx.release,
            rooms: ctx.rooms,
        }
    }

    fn parts(&self, ctx: &Ctx<'_>, out: &crate::script_host::OkText) -> Result<Parts, String> {
        let file = self.family.file();
        let p: ScriptParts = serde_json::from_str(out.get()).map_err(|e| {
            format!(
                "{file}: error[TB0026]: `generate` returned data the scenario format refuses: {e}"
            )
        })?;
        if p.tasks.is_empty() {
            return Err(format!(
                "{file}: error[TB0026]: `generate` returned no task"
            ));
        }
        let mut tasks = Vec::new();
        for t in p.tasks {
            let plan = t
                .plan
                .into_iter()
                .map(ScriptStep::step)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    format!("{file}: error[TB0026]: a plan step's `args` is not JSON text: {e}")
                })?;
            let variant = format!("{}/{}", self.key, t.variant);
            if !self.family.variants().iter().any(|v| v.key == variant) {
                return Err(format!(
                    "{file}: error[TB0026]: `generate` returned a task of undeclared variant `{}`",
                    t.variant
                ));
            }
            tasks.push(TaskSpec {
                key: t.key.unwrap_or_else(|| ctx.task_key()),
                family: self.key.to_owned(),
                variant,
                difficulty: difficulty(&plan, t.people_to_ask),
                title: t.title,
                objective: t.objective,
                assigned_by: t.assigned_by.unwrap_or_else(|| ctx.company.mentor.clone()),
                release: t.release.unwrap_or_else(|| ctx.release.clone()),
                deadline: match t.deadline {
                    Some(d) if d.len() == 5 => ctx.at(&d),
                    Some(d) => d,
                    None => ctx.at(ctx.deadline),
                },
                priority: ctx.priority,
                checkpoints: t.checkpoints,
                hints: t.hints,
                plan,
            });
        }
        Ok(Parts {
            tasks,
            files: p.files,
            meetings: p.meetings,
            clues: p.clues.into_iter().map(|c| (c.holder, c.clue)).collect(),
            services: Vec::new(),
            events: p.events,
        })
    }
}

impl FamilyEntry for ScriptEntry {
    fn key(&self) -> &'static str {
        self.key
    }
    fn domain(&self) -> Domain {
        self.domain
    }
    fn milestone(&self) -> Option<&'static str> {
        self.milestone
    }
    fn min_window_minutes(&self) -> u32 {
        self.family.min_window_minutes().unwrap_or(3 * 60)
    }
    fn gateable(&self) -> bool {
        true
    }
    fn reference(&self) -> Option<Reference> {
        None
    }
    fn holds(&self, f: &Family) -> bool {
        matches!(f, Family::Script(k, _) if k == self.key)
    }
    fn unset(&self) -> Family {
        Family::Script(self.key.to_owned(), ScriptParams::new())
    }
    fn variants(&self) -> Vec<Variant> {
        self.family
            .variants()
            .iter()
            .map(|v| Variant {
                key: v.key.clone(),
                family: Family::Script(
                    self.key.to_owned(),
                    v.params
                        .as_object()
                        .map(|m| m.clone().into_iter().collect())
                        .unwrap_or_default(),
                ),
            })
            .collect()
    }
    fn generate(&self, ctx: &Ctx<'_>, f: &Family) -> Result<Parts, String> {
        let Family::Script(k, params) = f else {
            return Err(format!(
                "the `{}` script was given a `{}` task",
                self.key,
                f.key()
            ));
        };
        if k != self.key {
            return Err(format!("the `{}` script was given a `{k}` task", self.key));
        }
        let params = serde_json::Value::Object(params.clone().into_iter().collect());
        let out = self
            .family
            .generate(&Self::input(ctx), &params)
            .map_err(|e| e.to_string())?;
        self.parts(ctx, &out)
    }
    fn wrong_answers(&self, task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
        let (Ok(t), Ok(s)) = (serde_json::to_value(task), serde_json::to_value(scenario)) else {
            return Vec::new();
        };
        // A failing `wrong_answers` is reported by `tbsim family check`, which calls
        // the script directly; here it just contributes nothing.
        self.family.wrong_answers(&t, &s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_steps_arguments_are_kept_as_the_json_text_they_arrive_as() {
        let steps: Vec<ScriptStep> = serde_json::from_str(
            r#"[{"tool":"write_file","args":{"path":"w/a.md","content":"x\n\"y\"","n":[1,2.5]}},
                {"gate":{"ReplyFrom":"npc/b"},"tool":"read_messages","args":"{\"with\":\"npc/b\"}"}]"#,
        )
        .unwrap();
        let steps: Vec<PlanStep> = steps.into_iter().map(|s| s.step().unwrap()).collect();
        assert_eq!(
            steps[0].args,
            r#"{"path":"w/a.md","content":"x\n\"y\"","n":[1,2.5]}"#
        );
        assert_eq!(steps[1].args, r#"{"with":"npc/b"}"#);
        assert_eq!(
            steps[1].gate,
            tbsim_scenario::Gate::ReplyFrom("npc/b".into())
        );
        assert_eq!(steps[0].gate, tbsim_scenario::Gate::Ready);
    }
}
