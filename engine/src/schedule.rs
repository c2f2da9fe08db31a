//! How an agent scheduled its day: metrics computed from a run's trajectory and its
//! scenario, after the run (so `tbsim report` computes them for recorded runs too).
//!
//! ## Definitions
//!
//! Times are simulated seconds. A tool call *starts* at its decision's `t` (or where
//! the decision's previous call ended) and *ends* at its result's `t`.
//!
//! * **Attribution.** A call belongs to a task when one of its argument strings names
//!   something of that task: a file or folder the task's checkpoints or its
//!   objective (in backticks) name (the string equals it, lies below it, or is a
//!   folder holding it, at least one folder deep), a meeting its checkpoints name, a
//!   colleague who holds one of its clues or whom a checkpoint names, or the title a
//!   booking checkpoint asks for. Several tasks: the one named most often, then the
//!   one released last. Calls naming no task (`wait`, `my_tasks`, listing
//!   colleagues) belong to none.
//! * **Finished.** A task is finished when its last attributed call ends; a task the
//!   agent never touched is unfinished until its deadline. A task is *outstanding*
//!   from its release until it is finished; a task about a meeting only from the
//!   meeting's start, since it cannot be done sooner.
//! * **Release to first action**: start of the first attributed call minus the
//!   release.
//! * **Tardiness**: finish minus deadline when the agent was still working on the task
//!   after its deadline, else 0 (no value for tasks never touched).
//! * **Interrupt response**: for each meeting the intern is invited to or booked,
//!   the time of the `join_meeting` call minus the meeting's start (0 when joined
//!   early); meetings never joined count as missed.
//! * **Priority inversion**: time spent in calls on a task while another task of
//!   higher priority was released and outstanding when the call started.
//! * **Context switches**: changes of task between consecutive attributed calls.
//! * **Idle**: time spent in `wait` calls, nights between working days excluded.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::SimEvent;
use crate::time::Epoch;
use crate::trajectory::Line;
use tbsim_scenario::{Priority, Scenario};

/// One task's scheduling figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSchedule {
    /// Task key.
    pub task: String,
    /// Its priority.
    pub priority: Priority,
    /// Release time (`None`: never released).
    pub released: Option<u64>,
    /// Start of the first attributed call.
    pub first_action: Option<u64>,
    /// End of the last attributed call.
    pub finished: Option<u64>,
    /// `first_action - released`.
    pub release_to_first_action_secs: Option<u64>,
    /// Time past the deadline the agent was still working on it.
    pub tardiness_secs: Option<u64>,
    /// Time in attributed calls.
    pub time_on_task_secs: u64,
    /// Time in attributed calls while a higher-priority task was outstanding.
    pub inversion_secs: u64,
}

/// One meeting of the intern's and how fast it was joined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeetingResponse {
    /// Meeting key.
    pub meeting: String,
    /// When it started.
    pub start: u64,
    /// Join time minus start (0 when joined early; `None`: never joined).
    pub response_secs: Option<u64>,
}

/// A run's scheduling figures (see the module docs for definitions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Per task, in scenario order.
    pub tasks: Vec<TaskSchedule>,
    /// Per meeting of the intern's, by start time.
    pub meetings: Vec<MeetingResponse>,
    /// Mean release-to-first-action over tasks acted on.
    pub mean_release_to_first_action_secs: Option<f64>,
    /// Sum of tardiness.
    pub tardiness_secs: u64,
    /// Tasks with tardiness above 0.
    pub late_tasks: usize,
    /// Mean interrupt response over joined meetings.
    pub mean_interrupt_response_secs: Option<f64>,
    /// Meetings never joined.
    pub missed_meetings: usize,
    /// Sum of priority inversion time.
    pub inversion_secs: u64,
    /// Changes of task between consecutive attributed calls.
    pub context_switches: u64,
    /// Time in `wait`, nights excluded.
    pub idle_secs: u64,
    /// Calls attributed to no task.
    pub unattributed_calls: u64,
}

/// What names a task: its files and folders, meetings, colleagues and titles.
#[derive(Debug, Default)]
struct Handles {
    paths: BTreeSet<String>,
    keys: BTreeSet<String>,
    titles: BTreeSet<String>,
}

fn collect_strings(v: &Value, key: Option<&str>, out: &mut Vec<(Option<String>, String)>) {
    match v {
        Value::String(s) => out.push((key.map(str::to_owned), s.clone())),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, key, out)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| collect_strings(x, Some(k.as_str()), out)),
        _ => {}
    }
}

fn is_path(s: &str) -> bool {
    (s.starts_with("drive/") || s.starts_with("workspace/")) && !s.contains(char::is_whitespace)
}

fn handles(scenario: &Scenario) -> BTreeMap<String, Handles> {
    // Clue key -> holder.
    let mut holder: BTreeMap<&str, &str> = BTreeMap::new();
    for p in &scenario.company.people {
        for c in &p.clues {
            holder.insert(c.key.as_str(), p.key.as_str());
        }
    }
    let mut out = BTreeMap::new();
    for t in &scenario.tasks {
        let mut h = Handles::default();
        let mut strings = Vec::new();
        for cp in &t.checkpoints {
            if let Ok(v) = serde_json::to_value(&cp.check) {
                collect_strings(&v, None, &mut strings);
            }
        }
        for (key, s) in strings {
            if is_path(&s) {
                h.paths.insert(s.trim_end_matches('/').to_owned());
            } else if s.starts_with("npc/") || s.starts_with("meeting/") {
                h.keys.insert(s);
            } else if s.starts_with("clue/") {
                if let Some(p) = holder.get(s.as_str()) {
                    h.keys.insert((*p).to_owned());
                }
            } else if key.as_deref() == Some("title_contains") && s.len() >= 4 {
                h.titles.insert(s.to_lowercase());
            }
        }
        for (i, part) in t.objective.split('`').enumerate() {
            if i % 2 == 1 && is_path(part) {
                h.paths.insert(part.trim_end_matches('/').to_owned());
            }
        }
        for p in &scenario.company.people {
            if p.clues
                .iter()
                .any(|c| c.task.as_deref() == Some(t.key.as_str()))
            {
                h.keys.insert(p.key.clone());
            }
        }
        out.insert(t.key.clone(), h);
    }
    out
}

/// How many of a call's argument strings name the task.
fn hits(h: &Handles, args: &[(Option<String>, String)]) -> usize {
    args.iter()
        .filter(|(_, s)| {
            let s = s.trim().trim_end_matches('/');
            h.keys.contains(s)
                || h.paths.iter().any(|p| {
                    p == s
                        || p.strip_prefix(s).is_some_and(|r| r.starts_with('/')) && s.contains('/')
                        || s.strip_prefix(p.as_str())
                            .is_some_and(|r| r.starts_with('/'))
                })
                || {
                    let low = s.to_lowercase();
                    h.titles.iter().any(|t| low.contains(t.as_str()))
                }
        })
        .count()
}

/// One tool call as the trajectory shows it.
#[derive(Debug)]
struct Call {
    name: String,
    args: Vec<(Option<String>, String)>,
    meeting_arg: Option<String>,
    start: u64,
    end: u64,
}

/// Computes the figures from a run's trajectory lines (JSON, in order) and its
/// scenario. Unknown or malformed lines are skipped.
pub fn compute<'a>(scenario: &Scenario, lines: impl IntoIterator<Item = &'a str>) -> Schedule {
    let epoch = Epoch::from_timestamp(&scenario.clock.start).ok();
    let deadline = |s: &str| epoch.and_then(|e| e.parse(s).ok()).map(|t| t.0);
    let mut released: BTreeMap<String, u64> = BTreeMap::new();
    let mut starts: BTreeMap<String, u64> = BTreeMap::new();
    let mut nights: Vec<(u64, u64)> = Vec::new();
    let mut night_from: Option<u64> = None;
    let mut calls: Vec<Call> = Vec::new();
    let mut pending: Vec<(String, Value)> = Vec::new();
    let mut cursor = 0u64;
    let mut booked: BTreeSet<String> = BTreeSet::new();
    for line in lines {
        let Ok(line) = Line::parse(line) else {
            continue;
        };
        match line {
            Line::Event { t, event, .. } => match event {
                SimEvent::Release { task } => {
                    released.entry(task).or_insert(t.0);
                }
                SimEvent::MeetingStart { meeting } => {
                    starts.entry(meeting).or_insert(t.0);
                }
                SimEvent::DayEnd { .. } => night_from = Some(t.0),
                SimEvent::DayStart { .. } => {
                    if let Some(f) = night_from.take() {
                        nights.push((f, t.0));
                    }
                }
                _ => {}
            },
            Line::Decision { t, calls, .. } => {
                cursor = t.0;
                pending = calls
                    .into_iter()
                    .map(|c| {
                        let args =
                            serde_json::from_str::<Value>(&c.arguments).unwrap_or(Value::Null);
                        (c.name, args)
                    })
                    .collect();
                pending.reverse();
            }
            Line::Result { t, result, .. } => {
                let t = t.0;
                let Some((name, args)) = pending.pop() else {
                    continue;
                };
                let mut strings = Vec::new();
                collect_strings(&args, None, &mut strings);
                let meeting_arg = args["meeting"].as_str().map(str::to_owned);
                if name == "book_meeting"
                    && result.ok
                    && let Some(m) = result.result.as_ref().and_then(|r| r["booked"].as_str())
                {
                    booked.insert(m.to_owned());
                }
                calls.push(Call {
                    name,
                    args: strings,
                    meeting_arg,
                    start: cursor,
                    end: t.max(cursor),
                });
                cursor = t.max(cursor);
            }
            _ => {}
        }
    }

    let handles = handles(scenario);
    let order: BTreeMap<&str, usize> = scenario
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.key.as_str(), i))
        .collect();
    // Attribute each call.
    let owner: Vec<Option<&str>> = calls
        .iter()
        .map(|c| {
            scenario
                .tasks
                .iter()
                .filter_map(|t| {
                    let n = hits(&handles[&t.key], &c.args);
                    (n > 0).then(|| {
                        (
                            n,
                            released.get(&t.key).copied().unwrap_or(0),
                            t.key.as_str(),
                        )
                    })
                })
                .max_by(|a, b| {
                    (a.0, a.1)
                        .cmp(&(b.0, b.1))
                        .then(order[b.2].cmp(&order[a.2]))
                })
                .map(|x| x.2)
        })
        .collect();

    let mut per: Vec<TaskSchedule> = scenario
        .tasks
        .iter()
        .map(|t| TaskSchedule {
            task: t.key.clone(),
            priority: t.priority,
            released: released.get(&t.key).copied(),
            first_action: None,
            finished: None,
            release_to_first_action_secs: None,
            tardiness_secs: None,
            time_on_task_secs: 0,
            inversion_secs: 0,
        })
        .collect();
    for (c, o) in calls.iter().zip(&owner) {
        if let Some(k) = o {
            let ts = &mut per[order[k]];
            ts.first_action.get_or_insert(c.start);
            ts.finished = Some(c.end);
            ts.time_on_task_secs += c.end - c.start;
        }
    }
    for (ts, spec) in per.iter_mut().zip(&scenario.tasks) {
        if let (Some(r), Some(f)) = (ts.released, ts.first_action) {
            ts.release_to_first_action_secs = Some(f.saturating_sub(r));
        }
        if let (Some(fin), Some(d)) = (ts.finished, deadline(&spec.deadline)) {
            ts.tardiness_secs = Some(fin.saturating_sub(d));
        }
    }
    // Outstanding from release (or, for a task about a meeting, from the meeting's
    // start: it cannot be done sooner) to finish (or deadline, if never touched).
    let outstanding: Vec<Option<(u64, u64)>> = per
        .iter()
        .zip(&scenario.tasks)
        .map(|(ts, spec)| {
            let until = ts.finished.or_else(|| deadline(&spec.deadline))?;
            let meeting = handles[&spec.key]
                .keys
                .iter()
                .filter_map(|k| starts.get(k))
                .min()
                .copied();
            let from = ts.released?.max(meeting.unwrap_or(0));
            Some((from, until))
        })
        .collect();
    let mut inversion = 0;
    for (c, o) in calls.iter().zip(&owner) {
        let Some(k) = o else { continue };
        let me = order[k];
        let prio = per[me].priority;
        let inverted = per.iter().enumerate().any(|(i, other)| {
            i != me
                && other.priority > prio
                && outstanding[i].is_some_and(|(from, until)| from <= c.start && c.start < until)
        });
        if inverted {
            per[me].inversion_secs += c.end - c.start;
            inversion += c.end - c.start;
        }
    }
    let attributed: Vec<&str> = owner.iter().flatten().copied().collect();
    let context_switches = attributed.windows(2).filter(|w| w[0] != w[1]).count() as u64;
    let overlap = |a: u64, b: u64| -> u64 {
        nights
            .iter()
            .map(|&(n0, n1)| b.min(n1).saturating_sub(a.max(n0)))
            .sum()
    };
    let idle_secs = calls
        .iter()
        .filter(|c| c.name == "wait")
        .map(|c| (c.end - c.start).saturating_sub(overlap(c.start, c.end)))
        .sum();

    // The intern's meetings: invited in the scenario, or booked by the intern.
    let mut mine: BTreeSet<String> = scenario
        .meetings
        .iter()
        .filter(|m| m.attendees.contains(&scenario.intern.key))
        .map(|m| m.key.clone())
        .collect();
    mine.extend(booked);
    let mut meetings: Vec<MeetingResponse> = mine
        .into_iter()
        .filter_map(|m| {
            let start = *starts.get(&m)?;
            let joined = calls
                .iter()
                .find(|c| c.name == "join_meeting" && c.meeting_arg.as_deref() == Some(m.as_str()))
                .map(|c| c.start.saturating_sub(start));
            Some(MeetingResponse {
                meeting: m,
                start,
                response_secs: joined,
            })
        })
        .collect();
    meetings.sort_by(|a, b| (a.start, &a.meeting).cmp(&(b.start, &b.meeting)));

    let mean = |xs: Vec<u64>| -> Option<f64> {
        (!xs.is_empty()).then(|| xs.iter().sum::<u64>() as f64 / xs.len() as f64)
    };
    Schedule {
        mean_release_to_first_action_secs: mean(
            per.iter()
                .filter_map(|t| t.release_to_first_action_secs)
                .collect(),
        ),
        tardiness_secs: per.iter().filter_map(|t| t.tardiness_secs).sum(),
        late_tasks: per
            .iter()
            .filter(|t| t.tardiness_secs.is_some_and(|x| x > 0))
            .count(),
        mean_interrupt_response_secs: mean(
            meetings.iter().filter_map(|m| m.response_secs).collect(),
        ),
        missed_meetings: meetings
            .iter()
            .filter(|m| m.response_secs.is_none())
            .count(),
        inversion_secs: inversion,
        context_switches,
        idle_secs,
        unattributed_calls: owner.iter().filter(|o| o.is_none()).count() as u64,
        tasks: per,
        meetings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn busy_day() -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios/busy-day.ron");
        tbsim_scenario::load_file(&path).unwrap().scenario
    }

    fn text(line: &Line) -> String {
        serde_json::to_string(line).unwrap()
    }

    fn event(t: u64, event: SimEvent) -> String {
        text(&Line::Event {
            t: SimTime(t),
            class: crate::queue::EventClass::Release,
            seq: 0,
            event,
        })
    }

    fn release(t: u64, task: &str) -> String {
        event(t, SimEvent::Release { task: task.into() })
    }

    fn meeting_start(t: u64, meeting: &str) -> String {
        event(
            t,
            SimEvent::MeetingStart {
                meeting: meeting.into(),
            },
        )
    }

    /// A decision of one call at `t`, and its result at `end`.
    fn call(t: u64, end: u64, name: &str, args: Value) -> [String; 2] {
        [
            text(&Line::Decision {
                step: 1,
                t: SimTime(t),
                calls: vec![crate::protocol::ToolCall {
                    id: "c".into(),
                    name: name.into(),
                    arguments: args.to_string(),
                }],
                tokens_out: 0,
            }),
            text(&Line::Result {
                step: 1,
                call: "c".into(),
                t: SimTime(end),
                result: crate::protocol::ToolResult {
                    call_id: "c".into(),
                    tool: name.into(),
                    ok: true,
                    time: String::new(),
                    t: SimTime(end),
                    result: None,
                    error: None,
                    attachments: Vec::new(),
                    notifications: Vec::new(),
                },
                record: None,
            }),
        ]
    }

    /// busy-day: `task/kb-fix` (normal, due 15:30), `task/sync` (high, due 11:30,
    /// attend `meeting/sync-sync` at 10:00), `task/review` (low). Times are seconds
    /// after midnight of the scenario's day.
    #[test]
    fn hand_built_day_gives_the_defined_figures() {
        let s = busy_day();
        let mut lines = vec![release(32_400, "task/sync"), release(33_300, "task/kb-fix")];
        // 09:15 kb-fix work (normal) while sync (high) is released but its meeting
        // has not started: no inversion; the first action on kb-fix is at its release.
        lines.extend(call(
            33_300,
            33_360,
            "read_file",
            serde_json::json!({"path": "drive/kb/articles/expense_policy.md"}),
        ));
        // Unattributed: listing colleagues.
        lines.extend(call(
            33_360,
            33_420,
            "list_colleagues",
            serde_json::json!({}),
        ));
        // The review (low) read while kb-fix (normal) is outstanding: 60 s inverted.
        lines.push(release(33_400, "task/review"));
        lines.extend(call(
            33_420,
            33_480,
            "read_file",
            serde_json::json!({"path": "drive/finance/review/transaction_review_manual.md"}),
        ));
        // 10:00 the meeting starts; joined a minute late, till 10:30.
        lines.push(meeting_start(36_000, "meeting/sync-sync"));
        lines.extend(call(
            36_060,
            37_800,
            "join_meeting",
            serde_json::json!({"meeting": "meeting/sync-sync"}),
        ));
        // Waiting 400 s.
        lines.extend(call(
            37_800,
            38_200,
            "wait",
            serde_json::json!({"minutes": 7}),
        ));
        // 12:00: the sync decision written half an hour after its 11:30 deadline.
        lines.extend(call(
            43_200,
            43_260,
            "write_file",
            serde_json::json!({"path": "workspace/purchasing_sync_decision.json", "content": "{}"}),
        ));
        // Back to kb-fix: a switch.
        lines.extend(call(
            43_260,
            43_320,
            "write_file",
            serde_json::json!({"path": "workspace/expense_policy_fixed.md", "content": "x"}),
        ));
        let g = compute(&s, lines.iter().map(String::as_str));
        let task = |k: &str| g.tasks.iter().find(|t| t.task == k).unwrap();
        let kb = task("task/kb-fix");
        assert_eq!(kb.release_to_first_action_secs, Some(0));
        assert_eq!(kb.time_on_task_secs, 120);
        assert_eq!(kb.inversion_secs, 0, "sync's meeting had not started");
        assert_eq!(task("task/review").inversion_secs, 60);
        assert_eq!(kb.tardiness_secs, Some(0));
        let sync = task("task/sync");
        assert_eq!(sync.release_to_first_action_secs, Some(36_060 - 32_400));
        assert_eq!(sync.tardiness_secs, Some(43_260 - 41_400));
        assert_eq!(sync.inversion_secs, 0, "nothing outranks high here");
        assert_eq!(task("task/review").tardiness_secs, Some(0));
        assert_eq!((g.late_tasks, g.tardiness_secs), (1, 1_860));
        assert_eq!(g.meetings.len(), 1);
        assert_eq!(g.meetings[0].response_secs, Some(60));
        assert_eq!(g.missed_meetings, 0);
        assert_eq!(g.idle_secs, 400);
        // kb-fix, review, sync (meeting), sync (write), kb-fix: three switches.
        assert_eq!(g.context_switches, 3);
        assert_eq!(g.unattributed_calls, 2, "list_colleagues and wait");
        assert_eq!(g.inversion_secs, 60);
    }

    #[test]
    fn nights_are_not_idle_and_unjoined_meetings_are_missed() {
        let s = busy_day();
        let mut lines = vec![
            meeting_start(36_000, "meeting/sync-sync"),
            event(64_800, SimEvent::DayEnd { day: 1 }),
            event(118_800, SimEvent::DayStart { day: 2 }),
        ];
        // A wait from 17:00 to 09:30 the next day: 1 h before the night, 30 min after.
        lines.extend(call(61_200, 120_600, "wait", serde_json::json!({})));
        let g = compute(&s, lines.iter().map(String::as_str));
        assert_eq!(g.idle_secs, 3_600 + 1_800);
        assert_eq!(g.missed_meetings, 1);
        assert_eq!(g.mean_interrupt_response_secs, None);
        assert_eq!(g.context_switches, 0);
    }

    /// The oracle's real day: every released task is acted on and attributed, the
    /// meeting is joined on time, nothing is late.
    #[test]
    fn the_oracle_schedules_busy_day_on_time() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../content/scenarios/busy-day.ron");
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let (_, lines) = crate::run::run_in_memory(
            &loaded,
            &mut crate::agent::Oracle::new(&loaded.scenario),
            crate::protocol::SimConfig {
                agent: "oracle".into(),
                ..Default::default()
            },
            &Default::default(),
        );
        let g = compute(&loaded.scenario, lines.iter().map(String::as_str));
        for t in &g.tasks {
            assert!(t.released.is_some(), "{t:?}");
            assert!(t.first_action.is_some(), "{t:?} never attributed");
            assert_eq!(t.tardiness_secs, Some(0), "{t:?}");
        }
        assert_eq!(g.missed_meetings, 0);
        assert!(
            g.meetings
                .iter()
                .all(|m| m.response_secs.is_some_and(|r| r <= 300))
        );
    }
}
