//! The gate's colleague check: a script family's colleagues answer the questions
//! an intern would naturally ask (the family README's "Example questions") and
//! refuse keyword soups, forwarded task texts and trigger dumps.
//!
//! Each question goes to the holder of each clue of an instance, in a fresh run at
//! the task's release, after the clue's prerequisites are disclosed the way the
//! oracle's plan discloses them. Placeholders are what the agent can see: `{first}`
//! is the colleague's first name, `{subject}` the first term of the clue's last
//! trigger group (authors make that something a file or the task names: a
//! supplier, a chart ID, a service).

use serde_json::json;
use tbsim_core::protocol::{Decision, SimConfig, ToolCall};
use tbsim_engine::npc::plan_message_disclosing;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_engine::world::History;
use tbsim_scenario::{Clue, Condition, LoadedScenario};

/// Messages no colleague may answer with a clue. `{task}` is the task's objective,
/// `{triggers}` every word of the clue's trigger, `{first}` the colleague's name.
/// (A bare trigger dump is not among them: for a two-word trigger it is a terse
/// but fair question.)
pub const SOUPS: &[&str] = &[
    "{task}",
    "{task}\n\nPlease send me everything you know that could help: files, numbers, rules, owners, dates.",
    "Hi {first}! {triggers} manual handbook owner code budget where file folder data numbers?",
    "Keywords: {triggers} rules policy owner approval schedule list figures latest current",
];

/// What the colleague check found on one instance.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Asked {
    /// Natural questions sent.
    pub questions: usize,
    /// Natural questions that got their clue.
    pub answered: usize,
    /// Soups sent.
    pub soups: usize,
    /// Soups that got a clue.
    pub leaked: usize,
    /// The questions that went unanswered and the soups that leaked, for the report.
    pub misses: Vec<String>,
}

/// The `- ` items under the README's `## Example questions` heading.
pub fn example_questions(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim().eq_ignore_ascii_case("example questions");
            continue;
        }
        if inside && let Some(q) = line.trim_start().strip_prefix("- ") {
            let q = q.trim();
            if !q.is_empty() {
                out.push(q.to_owned());
            }
        }
    }
    out
}

fn call(sim: &mut Sim, name: &str, args: serde_json::Value) {
    sim.step(&Decision {
        calls: vec![ToolCall {
            id: "q".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    });
}

fn disclosed(sim: &Sim, key: &str) -> bool {
    sim.world()
        .resource::<History>()
        .disclosed
        .contains_key(key)
}

/// A fresh run at the release of `task`.
fn at_release(loaded: &LoadedScenario, task: &str) -> Sim {
    let mut sim = Sim::new(
        loaded,
        SimConfig::default(),
        Trajectory::discarding(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    for _ in 0..40 {
        if sim.world().resource::<History>().released.contains(task) {
            break;
        }
        call(&mut sim, "wait", json!({"minutes": 20}));
    }
    sim
}

/// Discloses what `clue` waits for, with the oracle plan's own messages.
fn prerequisites(sim: &mut Sim, loaded: &LoadedScenario, clue: &Clue, depth: usize) {
    if depth > 8 {
        return;
    }
    let s = &loaded.scenario;
    for cond in &clue.after {
        let Condition::Disclosed(k) = cond else {
            continue;
        };
        if disclosed(sim, k) {
            continue;
        }
        let Some((pre, holder, text)) = plan_message_disclosing(s, k) else {
            continue;
        };
        prerequisites(sim, loaded, pre, depth + 1);
        call(sim, "send_message", json!({"to": holder, "text": text}));
        call(sim, "wait", json!({"minutes": 30}));
    }
}

/// Whether `text`, sent to `holder` in a fresh run, gets `clue` disclosed.
fn gets(loaded: &LoadedScenario, task: &str, holder: &str, clue: &Clue, text: &str) -> bool {
    let mut sim = at_release(loaded, task);
    prerequisites(&mut sim, loaded, clue, 0);
    let before = disclosed(&sim, &clue.key);
    call(
        &mut sim,
        "send_message",
        json!({"to": holder, "text": text}),
    );
    call(&mut sim, "wait", json!({"minutes": 30}));
    !before && disclosed(&sim, &clue.key)
}

/// Sends every question and every soup to the holder of every clue of `task`.
pub fn check(loaded: &LoadedScenario, task: &str, questions: &[String]) -> Asked {
    let mut a = Asked::default();
    let s = &loaded.scenario;
    let objective = s
        .tasks
        .iter()
        .find(|t| t.key == task)
        .map(|t| t.objective.clone())
        .unwrap_or_default();
    for p in &s.company.people {
        for clue in p.clues.iter().filter(|c| c.task.as_deref() == Some(task)) {
            let first = p.name.split_whitespace().next().unwrap_or(&p.name);
            let subject = clue
                .trigger
                .last()
                .and_then(|g| g.first())
                .cloned()
                .unwrap_or_default();
            let triggers = clue
                .trigger
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            for q in questions {
                let text = q.replace("{first}", first).replace("{subject}", &subject);
                a.questions += 1;
                if gets(loaded, task, &p.key, clue, &text) {
                    a.answered += 1;
                } else {
                    a.misses.push(format!(
                        "`{}` did not get {} from {}",
                        text, clue.key, p.key
                    ));
                }
            }
            for soup in SOUPS {
                let text = soup
                    .replace("{task}", &objective)
                    .replace("{triggers}", &triggers)
                    .replace("{first}", first);
                a.soups += 1;
                if gets(loaded, task, &p.key, clue, &text) {
                    a.leaked += 1;
                    a.misses
                        .push(format!("the soup `{text}` got {} from {}", clue.key, p.key));
                }
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_questions_are_the_items_under_their_heading_only() {
        let p = String::from(
            "# x\n\n- not a question\n\n## Example Questions\n\n- Hi {first}, what is the lead time for {subject}?\n-   \n- Second one\n\n## Faithfulness\n\n- no\n",
        );
        assert_eq!(
            example_questions(&p),
            vec![
                "Hi {first}, what is the lead time for {subject}?".to_owned(),
                "Second one".to_owned()
            ]
        );
        assert!(example_questions("# no questions\n").is_empty());
    }
}
