//! Judging answers without a simulation: the answer checks of a task and the
//! files an instance starts with.

use std::collections::BTreeMap;

use tbsim_scenario::{Check, LoadedScenario, TaskSpec};

/// The answer checks of a task: every predicate on what the agent delivers (files,
/// messages, bookings, domain checks), judged when the task closes.
pub fn answer_checks(check: &Check, out: &mut Vec<Check>) {
    match check {
        Check::All(v) => v.iter().for_each(|c| answer_checks(c, out)),
        c if c.kind() == tbsim_scenario::check::CheckKind::Answer => out.push(c.clone()),
        _ => {}
    }
}

/// The file a check judges, if it judges one (of a conjunction: its first).
pub fn check_path(c: &Check) -> Option<&str> {
    match c {
        Check::All(v) => v.iter().find_map(check_path),
        Check::FileExists { path }
        | Check::FileText { path, .. }
        | Check::FileContains { path, .. }
        | Check::JsonStringSet { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonNumber { path, .. }
        | Check::JsonArray { path, .. }
        | Check::CsvTable { path, .. } => Some(path),
        _ => None,
    }
}

/// Every file path a check judges, in order, each once.
pub fn check_paths(c: &Check) -> Vec<String> {
    let mut leaves = Vec::new();
    answer_checks(c, &mut leaves);
    let mut out: Vec<String> = Vec::new();
    for p in leaves.iter().filter_map(check_path) {
        if !out.iter().any(|x| x == p) {
            out.push(p.to_owned());
        }
    }
    out
}

/// Whether writing `content` at `path`, in a world holding no other file, passes
/// `check`.
pub fn passes_alone(check: &Check, path: &str, content: &str) -> bool {
    let none = BTreeMap::new();
    let view = Written {
        initial: &none,
        written: BTreeMap::from([(path, content.as_bytes())]),
    };
    tbsim_scenario::check::evaluate(check, &view)
}

/// The files of an instance as they stand with nothing done (every file the
/// scenario places, the timed ones too: answers are judged at the end of the day),
/// for judging answers written over them without running a simulation.
#[derive(Debug)]
pub struct InitialFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl InitialFiles {
    /// The files of `loaded` as placed.
    pub fn of(loaded: &LoadedScenario) -> InitialFiles {
        let files = loaded
            .scenario
            .all_files()
            .map(|f| (f.path.clone(), loaded.file_bytes(f)))
            .collect();
        InitialFiles { files }
    }

    /// Whether writing these workspace files (and doing nothing else) passes any
    /// checkpoint of `task`. Only `workspace/` is the agent's to write, as in a run.
    pub fn passes_any(&self, task: &TaskSpec, written: &[(String, String)]) -> bool {
        let view = Written {
            initial: &self.files,
            written: written
                .iter()
                .filter(|(p, _)| p.starts_with("workspace/"))
                .map(|(p, b)| (p.as_str(), b.as_bytes()))
                .collect(),
        };
        task.checkpoints
            .iter()
            .any(|c| tbsim_scenario::check::evaluate(&c.check, &view))
    }
}

/// A world in which the agent has written files over the initial ones and done
/// nothing else.
struct Written<'a> {
    initial: &'a BTreeMap<String, Vec<u8>>,
    written: BTreeMap<&'a str, &'a [u8]>,
}

impl tbsim_scenario::check::WorldView for Written<'_> {
    fn file(&self, path: &str) -> Option<&[u8]> {
        self.written
            .get(path)
            .copied()
            .or_else(|| self.initial.get(path).map(Vec::as_slice))
    }
}
