//! The answer-in-observation scan (`tbsim validity scan`, issue 25).
//!
//! For every scored answer checkpoint of a scenario's tasks, the scan collects
//! everything an agent can observe without reasoning ([`observe`]: every file
//! readable or copyable after release, every meeting's notes, every clue holder's
//! replies to the family's own questions asked one at a time, to the same question
//! forwarded to whoever a reply names and to the objective's ask-clauses, tool
//! errors, the objectives; follow-ups reached by closing what they wait on with the
//! oracle's answer), turns it
//! into candidate answers with generic rules ([`extract`]) and asks the engine's
//! checker whether a synthesised answer would pass ([`answer`]). A rule that
//! solves many instances of a checkpoint is an echo leak: the answer sits in what
//! the agent is shown, for a script to copy.
//!
//! The scan reads the scenario to judge (the checkpoints), to know a family's
//! workflow as a trained agent would (whom to ask and in which words: clue holders
//! and the family's questions) and to close gate tasks with the oracle's answer;
//! the probing itself is an ordinary agent that sees tool results only.

pub mod answer;
pub mod booking;
pub mod extract;
pub mod observe;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};
use tbsim_core::protocol::SimConfig;
use tbsim_core::time::Epoch;
use tbsim_engine::run::{RunLimits, run_unrecorded};
use tbsim_scenario::check::CheckKind;
use tbsim_scenario::{LoadedScenario, Release};

use answer::{Fill, Slot};
use extract::{Pool, Source, file_label};
use observe::{Mode, Observed, Prober, Questions, Unlock};
use tbsim_engine::npc::plan_message_disclosing;

/// Most phrasings of one question asked (each in its own world).
const MAX_PHRASINGS: usize = 4;

/// One checkpoint of one instance.
#[derive(Debug, Clone)]
pub struct CheckpointScan {
    /// Task family.
    pub family: String,
    /// Task variant.
    pub variant: String,
    /// Task key.
    pub task: String,
    /// Checkpoint key.
    pub checkpoint: String,
    /// Whether the task was released to the probing agent (a follow-up is reached
    /// when the task it waits on is closed with the oracle's answer).
    pub reached: bool,
    /// The rules whose synthesised answer passes it.
    pub solved_by: BTreeSet<String>,
    /// The answer's shape: its slots' kinds (`number`, `list + number`, ...).
    pub shape: String,
}

/// The questions an agent asks at each task's release: per clue of the task, its
/// holder and the family's own phrasings of the question (the oracle plan's
/// message that gets the clue, then the family README's example questions with
/// `{first}` and `{subject}` filled as the gate's colleague check fills them), in
/// the order the oracle's plan asks them (so a clue that waits on another comes
/// after it).
pub fn questions(loaded: &LoadedScenario) -> Questions {
    let s = &loaded.scenario;
    let first_task = s.tasks.first().map(|t| t.key.clone()).unwrap_or_default();
    // Every plan message in order, to rank clues by when the oracle asks for them.
    let plan_texts: Vec<(String, String)> = s
        .tasks
        .iter()
        .flat_map(|t| &t.plan)
        .filter(|p| p.tool == "send_message")
        .filter_map(|p| serde_json::from_str::<Value>(&p.args).ok())
        .filter_map(|a| Some((a["to"].as_str()?.to_owned(), a["text"].as_str()?.to_owned())))
        .collect();
    let mut per_task: BTreeMap<String, Vec<(usize, String, Vec<String>)>> = BTreeMap::new();
    for p in &s.company.people {
        let first = p.name.split_whitespace().next().unwrap_or(&p.name);
        for clue in &p.clues {
            let task = clue.task.clone().unwrap_or_else(|| first_task.clone());
            let Some(t) = s.tasks.iter().find(|t| t.key == task) else {
                continue;
            };
            let mut phrasings: Vec<String> = Vec::new();
            let mut order = usize::MAX;
            if let Some((_, _, text)) = plan_message_disclosing(s, &clue.key) {
                order = plan_texts
                    .iter()
                    .position(|(to, x)| *to == p.key && *x == text)
                    .unwrap_or(usize::MAX);
                phrasings.push(text);
            }
            let subject = clue
                .trigger
                .last()
                .and_then(|g| g.first())
                .cloned()
                .unwrap_or_default();
            if let Some(e) = tbsim_gen::script::entry(&t.family) {
                for q in crate::questions::example_questions(e.readme().unwrap_or_default()) {
                    let q = q.replace("{first}", first).replace("{subject}", &subject);
                    if !phrasings.contains(&q) {
                        phrasings.push(q);
                    }
                }
            }
            phrasings.truncate(MAX_PHRASINGS);
            if !phrasings.is_empty() {
                per_task
                    .entry(task)
                    .or_default()
                    .push((order, p.key.clone(), phrasings));
            }
        }
    }
    per_task
        .into_iter()
        .map(|(t, mut v)| {
            v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            (t, v.into_iter().map(|(_, h, q)| (h, q)).collect())
        })
        .collect()
}

/// The oracle's answer to every task another task waits on, played at its release
/// (every step of its plan but waiting, finishing and joining, which the explorer
/// does itself), and the workspace files those answers write (not sources: they
/// hold the answers).
pub fn oracle_unlock(loaded: &LoadedScenario) -> (Unlock, BTreeSet<String>) {
    let s = &loaded.scenario;
    let mut unlock = Unlock::new();
    let mut written = BTreeSet::new();
    let gates: BTreeSet<&str> = s
        .tasks
        .iter()
        .filter_map(|t| match &t.release {
            Release::AfterCheckpoint { task, .. } => Some(task.as_str()),
            _ => None,
        })
        .collect();
    for t in s.tasks.iter().filter(|t| gates.contains(t.key.as_str())) {
        let mut steps = Vec::new();
        for p in &t.plan {
            if matches!(p.tool.as_str(), "wait" | "finish" | "join_meeting") {
                continue;
            }
            let Ok(args) = serde_json::from_str::<Value>(&p.args) else {
                continue;
            };
            if p.tool == "write_file"
                && let Some(path) = args["path"].as_str()
            {
                written.insert(path.to_owned());
            }
            steps.push((p.tool.clone(), args));
        }
        unlock.insert(t.key.clone(), steps);
    }
    (unlock, written)
}

/// Everything observed in `loaded` by an agent that asks as an agent asks, with
/// the tasks others wait on closed by the oracle's answer.
pub fn observe(loaded: &LoadedScenario, seed: Option<u64>) -> Observed {
    let (unlock, _) = oracle_unlock(loaded);
    observe_with(loaded, seed, &unlock, &questions(loaded))
}

/// [`observe`] with the given answers played and questions asked.
pub fn observe_with(
    loaded: &LoadedScenario,
    seed: Option<u64>,
    unlock: &Unlock,
    questions: &Questions,
) -> Observed {
    let parts = questions
        .values()
        .flatten()
        .map(|(_, q)| q.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let limits = RunLimits {
        max_steps: 4000,
        ..RunLimits::default()
    };
    let run = |mode: Mode| {
        let mut p = Prober::asking(mode, unlock.clone(), questions.clone());
        let config = SimConfig {
            seed,
            agent: "scan".into(),
            ..SimConfig::default()
        };
        run_unrecorded(loaded, &mut p, config, &limits);
        p.seen
    };
    let mut seen = run(Mode::Explore);
    for part in 0..parts {
        seen.merge(run(Mode::Ask { part, parts }));
    }
    seen
}

/// The labelled sources of what was observed.
pub fn sources(seen: &Observed) -> Vec<Source> {
    sources_except(seen, &BTreeSet::new())
}

/// [`sources`] without the files at `written` (answers the scan itself wrote, which
/// would otherwise echo themselves).
fn sources_except(seen: &Observed, written: &BTreeSet<String>) -> Vec<Source> {
    let mut out = Vec::new();
    for (path, text) in &seen.files {
        if written.contains(path) {
            continue;
        }
        out.push(Source {
            label: file_label(path),
            text: text.clone(),
        });
    }
    let mut all_notes = Vec::new();
    for (_, text) in &seen.meetings {
        out.push(Source {
            label: "meeting".into(),
            text: text.clone(),
        });
        all_notes.push(text.as_str());
    }
    if !all_notes.is_empty() {
        out.push(Source {
            label: "every meeting".into(),
            text: all_notes.join("\n"),
        });
    }
    let assigners: BTreeSet<&str> = seen.tasks.iter().map(|t| t.2.as_str()).collect();
    let mut replies: Vec<&(String, String)> = seen.replies.iter().collect();
    // One order whatever world a reply came from: by sender, then text.
    replies.sort();
    let mut from_assigner = Vec::new();
    for (from, text) in &replies {
        out.push(Source {
            label: "reply".into(),
            text: text.clone(),
        });
        let name = seen
            .colleagues
            .iter()
            .find(|c| &c.0 == from)
            .map_or("", |c| c.1.as_str());
        if assigners.contains(name) {
            from_assigner.push(text.as_str());
        }
    }
    if !replies.is_empty() {
        out.push(Source {
            label: "every reply".into(),
            text: replies
                .iter()
                .map(|r| r.1.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        });
    }
    if !from_assigner.is_empty() {
        out.push(Source {
            label: "the assigner's replies".into(),
            text: from_assigner.join("\n"),
        });
    }
    for e in &seen.errors {
        out.push(Source {
            label: "tool error".into(),
            text: e.clone(),
        });
    }
    for (_, objective, _) in &seen.tasks {
        out.push(Source {
            label: "objective".into(),
            text: objective.clone(),
        });
    }
    out.sort();
    out.dedup();
    out
}

/// Scans one scenario: every scored answer checkpoint of every task.
///
/// Tasks released only when another task's checkpoint passes are reached by
/// closing that task with the oracle's answer (the question is whether the
/// follow-up leaks, not whether the rules solve the task it waits on); the
/// oracle's answer files are not sources.
pub fn scan(loaded: &LoadedScenario, seed: Option<u64>) -> Vec<CheckpointScan> {
    scan_observed(loaded, seed).0
}

/// [`scan`], and everything observed (for the probe, which learns from the same
/// observations).
pub fn scan_observed(
    loaded: &LoadedScenario,
    seed: Option<u64>,
) -> (Vec<CheckpointScan>, Observed) {
    let epoch = Epoch::from_timestamp(&loaded.scenario.clock.start).ok();
    let (unlock, written) = oracle_unlock(loaded);
    let seen = observe_with(loaded, seed, &unlock, &questions(loaded));
    let names: Vec<String> = seen.colleagues.iter().map(|c| c.1.clone()).collect();
    let mut pool = Pool::build(&sources_except(&seen, &written), &names);
    pool.bookings = booking::candidates(&seen);
    pool.epoch = epoch;
    let (out, _) = judge(loaded, &seen, &pool);
    (out, without_files(&seen, &written))
}

/// The observations without the files at `written` (the oracle's answers).
pub fn without_files(seen: &Observed, written: &BTreeSet<String>) -> Observed {
    let mut s = seen.clone();
    s.files.retain(|p, _| !written.contains(p));
    s
}

/// Judges every scored answer checkpoint against `pool`: the scans, and the first
/// passing answer of each checkpoint some rule solves, by (task, checkpoint).
#[allow(clippy::type_complexity)]
fn judge(
    loaded: &LoadedScenario,
    seen: &Observed,
    pool: &Pool,
) -> (
    Vec<CheckpointScan>,
    BTreeMap<(String, String), Vec<(Slot, Fill)>>,
) {
    let released: BTreeSet<&str> = seen.tasks.iter().map(|t| t.0.as_str()).collect();
    let mut out = Vec::new();
    let mut answers = BTreeMap::new();
    for t in &loaded.scenario.tasks {
        for cp in &t.checkpoints {
            if cp.check.kind() != CheckKind::Answer || cp.weight == 0 {
                continue;
            }
            let reached = released.contains(t.key.as_str());
            let leaves = answer::shape(&cp.check);
            let (solved_by, first) = if reached {
                answer::solve(&leaves, pool)
            } else {
                (BTreeSet::new(), None)
            };
            if let Some(f) = first {
                answers.insert((t.key.clone(), cp.key.clone()), f);
            }
            out.push(CheckpointScan {
                family: t.family.clone(),
                variant: t.variant.clone(),
                task: t.key.clone(),
                checkpoint: cp.key.clone(),
                reached,
                shape: shape_name(&leaves),
                solved_by,
            });
        }
    }
    (out, answers)
}

/// The kinds of an answer's slots, in order, joined with ` + `.
fn shape_name(leaves: &[answer::Leaf]) -> String {
    leaves
        .iter()
        .flat_map(|l| &l.slots)
        .map(|s| match (s.kind, &s.target, s.pointer.is_some()) {
            (answer::Kind::Number, ..) => "number",
            (answer::Kind::List, ..) => "list",
            (answer::Kind::Array, ..) => "records",
            (answer::Kind::Plan, ..) => "plan",
            (answer::Kind::Booking, ..) => "booking",
            (answer::Kind::Text, answer::Target::Message(_), _) => "message",
            (answer::Kind::Text, _, true) => "json text",
            (answer::Kind::Text, _, false) => "file text",
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A rule with its file's path left out (`largest number of a file`): the rule as
/// a script could play it on any task of the shape.
pub fn general_rule(label: &str) -> String {
    label
        .split(" + ")
        .map(|part| match part.find(" of file ") {
            Some(i) => format!("{} of a file", &part[..i]),
            None => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A follow-up's key without its scenario-specific task prefix: `task/t-2` and
/// `task/review-2` both give `-2` when the instance's first task is `t`/`review`.
fn stage(task: &str, first: &str) -> String {
    if first.is_empty() {
        return String::new();
    }
    task.strip_prefix(first).unwrap_or("").to_owned()
}

/// The figures of one family/checkpoint over many instances.
#[derive(Debug, Default, Clone)]
pub struct Row {
    /// Instances holding the checkpoint.
    pub instances: u64,
    /// Of those, instances whose task was never released to the probe.
    pub unreached: u64,
    /// Instances some rule solves.
    pub any: u64,
    /// Instances each rule solves.
    pub by_rule: BTreeMap<String, u64>,
    /// The answer's shape (the first instance's).
    pub shape: String,
}

impl Row {
    /// Instances the share is taken over: released to the probe.
    pub fn scanned(&self) -> u64 {
        self.instances - self.unreached
    }

    /// The rule solving the most instances (ties: the first label), and its count.
    pub fn best(&self) -> Option<(&str, u64)> {
        let mut best: Option<(&str, u64)> = None;
        for (l, &n) in &self.by_rule {
            if best.is_none_or(|b| n > b.1) {
                best = Some((l, n));
            }
        }
        best
    }

    /// The best rule's share of the scanned instances.
    pub fn best_share(&self) -> f64 {
        match (self.best(), self.scanned()) {
            (Some((_, n)), s) if s > 0 => n as f64 / s as f64,
            _ => 0.0,
        }
    }
}

/// Rows by `family/checkpoint` (follow-up stages keep their suffix).
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// The rows, sorted by key.
    pub rows: BTreeMap<String, Row>,
    /// Instances scanned.
    pub instances: u64,
}

impl Tally {
    /// Adds one instance's scan; `first_task` is its first task's key (stages of a
    /// chain are named by their suffix after it).
    pub fn add(&mut self, scans: &[CheckpointScan], first_task: &str) {
        self.instances += 1;
        for s in scans {
            let key = format!(
                "{}/{}{}",
                s.family,
                s.checkpoint,
                if stage(&s.task, first_task).is_empty() {
                    String::new()
                } else {
                    format!(" ({})", stage(&s.task, first_task))
                }
            );
            let row = self.rows.entry(key).or_default();
            row.instances += 1;
            if row.shape.is_empty() {
                row.shape.clone_from(&s.shape);
            }
            if !s.reached {
                row.unreached += 1;
            } else {
                if !s.solved_by.is_empty() {
                    row.any += 1;
                }
                for l in &s.solved_by {
                    *row.by_rule.entry(l.clone()).or_default() += 1;
                }
            }
        }
    }

    /// Rows whose best rule solves more than `max_share` of their instances.
    pub fn over(&self, max_share: f64) -> Vec<(&str, &Row)> {
        self.rows
            .iter()
            .filter(|(_, r)| r.best_share() > max_share)
            .map(|(k, r)| (k.as_str(), r))
            .collect()
    }

    /// The rule table the `extract` adversary is built from: per answer shape, each
    /// general rule (paths left out) that tops a row, with the instances it solves in
    /// the rows it tops, most first; rows no rule solves are left out.
    pub fn rules_by_shape(&self) -> BTreeMap<String, Vec<(String, u64)>> {
        let mut by: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for r in self.rows.values() {
            if let Some((best, n)) = r.best() {
                *by.entry(r.shape.clone())
                    .or_default()
                    .entry(general_rule(best))
                    .or_default() += n;
            }
        }
        by.into_iter()
            .map(|(shape, rules)| {
                let mut v: Vec<(String, u64)> = rules.into_iter().collect();
                v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                (shape, v)
            })
            .collect()
    }

    /// The Markdown table: one row per family/checkpoint.
    pub fn markdown(&self, max_share: f64) -> String {
        let mut s = String::from(
            "| family/checkpoint | scanned | unreached | any rule | best rule | best share | over |\n|---|--:|--:|--:|---|--:|---|\n",
        );
        for (k, r) in &self.rows {
            let (best, _) = r.best().unwrap_or(("—", 0));
            let share = r.best_share();
            let _ = writeln!(
                s,
                "| {k} | {} | {} | {} | {} | {:.3} | {} |",
                r.scanned(),
                r.unreached,
                r.any,
                best.replace('|', "\\|"),
                share,
                if share > max_share { "**yes**" } else { "" }
            );
        }
        s
    }

    /// The JSON report: every row with every rule's count (sorted by count, then
    /// label), the best rule and whether it is over `max_share`.
    pub fn json(&self, max_share: f64) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|(k, r)| {
                let mut rules: Vec<(&String, &u64)> = r.by_rule.iter().collect();
                rules.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                json!({
                    "checkpoint": k,
                    "shape": r.shape,
                    "instances": r.instances,
                    "scanned": r.scanned(),
                    "unreached": r.unreached,
                    "solved_by_any_rule": r.any,
                    "best_rule": r.best().map(|b| b.0),
                    "best_share": (r.best_share() * 1e6).round() / 1e6,
                    "over": r.best_share() > max_share,
                    "rules": rules.iter().map(|(l, n)| json!({"rule": l, "solved": n})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let rules: serde_json::Map<String, Value> = self
            .rules_by_shape()
            .into_iter()
            .map(|(shape, v)| {
                let list: Vec<Value> = v
                    .into_iter()
                    .map(|(rule, n)| json!({"rule": rule, "instances": n}))
                    .collect();
                (shape, Value::Array(list))
            })
            .collect();
        json!({
            "instances": self.instances,
            "max_share": max_share,
            "rows": rows,
            "rules_by_shape": rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_lose_their_paths_and_rows_rank_them_by_shape() {
        assert_eq!(
            general_rule("empty list + largest number of file drive/x/manual.md"),
            "empty list + largest number of a file"
        );
        let scan = |cp: &str, shape: &str, rules: &[&str]| CheckpointScan {
            family: "f".into(),
            variant: "f/v".into(),
            task: "task/t".into(),
            checkpoint: cp.into(),
            reached: true,
            solved_by: rules.iter().map(|r| (*r).to_owned()).collect(),
            shape: shape.into(),
        };
        let mut t = Tally::default();
        t.add(
            &[
                scan("a", "number", &["only number of meeting"]),
                scan("b", "number", &["largest number of file drive/1.md"]),
                scan("c", "number", &["largest number of file drive/2.md"]),
                scan("d", "list", &[]),
            ],
            "task/t",
        );
        let r = t.rules_by_shape();
        assert_eq!(
            r["number"],
            [
                ("largest number of a file".to_owned(), 2),
                ("only number of meeting".to_owned(), 1)
            ]
        );
        assert!(!r.contains_key("list"));
    }
}
