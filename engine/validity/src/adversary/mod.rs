//! Content-blind adversaries: scripted agents that try to score without doing the
//! work, so tests can hold the benchmark to a ceiling (issue 8).
//!
//! Each adversary is a set of [`Tactic`]s over one driver. The driver keeps what the
//! tools have returned ([`Knowledge`]: colleagues, files read, tasks released,
//! messages), hands every observation to each tactic as [`Event`]s, and issues the
//! calls they queue, most urgent first. Tactics see only tool results and
//! notifications, never the scenario, and "understand" text only through the
//! patterns in [`scrape`]. Nothing draws randomness: orders come from tool output
//! (which is itself deterministic), so the same world gives the same bytes.
//!
//! A decision carries queued calls while their catalogue cost stays within five
//! simulated minutes, so the adversary reacts to a meeting starting no later than
//! the on-time window allows; when nothing is queued it waits for the next
//! notification. It never calls `finish`: the day ends on its own.

mod answers;
mod calendar;
mod explore;
pub mod extract;
pub use crate::scrape;
mod social;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use tbsim_core::protocol::Notification;
use tbsim_core::protocol::{Decision, Observation, ToolResult};
use tbsim_core::protocol::{ToolCall, catalogue};
use tbsim_engine::agent::{Agent, AgentFuture};

/// Every adversary by name, with what it does (for `--help` and the docs).
pub const ADVERSARIES: &[(&str, &str)] = &[
    (
        "read-everything",
        "lists every drive and workspace folder and reads every file",
    ),
    (
        "list-everything",
        "calls every listing tool (folders, colleagues, tasks, calendar, messages, services, health, logs)",
    ),
    (
        "message-everyone",
        "asks every colleague, one by one, for help with each task's text",
    ),
    (
        "keyword-broadcast",
        "a group of all colleagues; posts each task's text plus a soup of domain keywords; forwards replies",
    ),
    (
        "majority-answers",
        "writes the commonest answer shape into every expected output ([], 0, true, first option)",
    ),
    (
        "enumerate-candidates",
        "writes candidate answers scraped from files one after another; messages every candidate owner",
    ),
    (
        "book-by-conflicts",
        "joins its meetings and books requested ones with everyone, dropping whoever a conflict error names",
    ),
    (
        "join-all-meetings",
        "joins every meeting on its calendar as it starts",
    ),
    (
        "copy-drive",
        "copies each input and every drive file with the output's extension onto the expected output",
    ),
    (
        "echo-objective",
        "writes the objective into every output and sends it back to whoever assigned it",
    ),
    (
        "impersonate",
        "messages everyone as the manager, approving whatever the intern asks, and reboots every service",
    ),
    (
        "parrot",
        "answers every colleague message with its own text",
    ),
    (
        "ask-for-answer",
        "asks the assigner and the manager for the exact content of each output file",
    ),
    (
        "extract",
        "reads everything and joins every meeting, then writes each output by the scan's best rule for its shape (see adversary::extract)",
    ),
    (
        "relay",
        "forwards each objective to colleagues one sentence at a time; answers with the median date, the first names and the first number of the replies",
    ),
    ("combined", "all of the above at once"),
];

/// The adversary `name` (without the `adversary:` prefix), if there is one.
pub fn by_name(name: &str) -> Option<Adversary> {
    let tactics: Vec<Box<dyn Tactic>> = match name {
        "combined" => ADVERSARIES
            .iter()
            .filter(|(n, _)| *n != "combined")
            .flat_map(|(n, _)| tactics(n))
            .collect(),
        n => tactics(n),
    };
    (!tactics.is_empty()).then(|| Adversary {
        name: format!("adversary:{name}"),
        tactics,
        k: Knowledge::default(),
        queue: BTreeMap::new(),
        owners: BTreeMap::new(),
        once: BTreeSet::new(),
        seq: 0,
        calls: 0,
    })
}

fn tactics(name: &str) -> Vec<Box<dyn Tactic>> {
    match name {
        "read-everything" => vec![Box::new(explore::ReadEverything::default())],
        "list-everything" => vec![Box::new(explore::ListEverything::default())],
        "join-all-meetings" => vec![Box::new(explore::JoinAllMeetings)],
        "message-everyone" => vec![Box::new(social::MessageEveryone::default())],
        "keyword-broadcast" => vec![Box::new(social::KeywordBroadcast::default())],
        "impersonate" => vec![Box::new(social::Impersonate::default())],
        "parrot" => vec![Box::new(social::Parrot::default())],
        "ask-for-answer" => vec![Box::new(social::AskForAnswer::default())],
        "majority-answers" => vec![Box::new(answers::MajorityAnswers)],
        "enumerate-candidates" => vec![Box::new(answers::EnumerateCandidates::default())],
        "copy-drive" => vec![Box::new(answers::CopyDrive::default())],
        "echo-objective" => vec![Box::new(answers::EchoObjective)],
        "extract" => vec![
            Box::new(extract::Extract::rules()),
            Box::new(explore::ReadEverything::default()),
            Box::new(explore::JoinAllMeetings),
        ],
        "relay" => vec![Box::new(extract::Extract::relay())],
        // Booking requests are handed out in meetings, so it attends them too.
        "book-by-conflicts" => vec![
            Box::new(calendar::BookByConflicts::default()),
            Box::new(explore::JoinAllMeetings),
        ],
        _ => Vec::new(),
    }
}

/// A colleague as `list_colleagues` shows them.
#[derive(Debug, Clone)]
pub struct Colleague {
    /// Key (`npc/...`).
    pub key: String,
    /// Full name.
    pub name: String,
    /// Department.
    pub department: String,
}

/// A task as its release notification showed it.
#[derive(Debug, Clone)]
pub struct TaskSeen {
    /// Key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Objective text.
    pub objective: String,
    /// Who assigned it (a name).
    pub assigned_by: String,
}

/// What the tools have told the adversary so far.
#[derive(Debug, Default)]
pub struct Knowledge {
    /// The intern's name.
    pub me: String,
    /// The manager's name.
    pub manager: String,
    /// Today's date (`YYYY-MM-DD`), from the briefing or the latest day start.
    pub today: String,
    /// Colleagues (empty until someone lists them).
    pub colleagues: Vec<Colleague>,
    /// Tasks released, in order.
    pub tasks: Vec<TaskSeen>,
    /// Text files read, by path (latest content).
    pub files: BTreeMap<String, String>,
    /// Services from `list_services`.
    pub services: Vec<String>,
    /// Page paths from `page_load_times`.
    pub pages: Vec<String>,
    /// Messages received: (sender name, text).
    pub heard: Vec<(String, String)>,
}

impl Knowledge {
    /// Every text the adversary has seen besides objectives: files, then messages.
    pub fn corpus(&self) -> impl Iterator<Item = &str> {
        self.files
            .values()
            .map(String::as_str)
            .chain(self.heard.iter().map(|(_, t)| t.as_str()))
    }

    /// A colleague by key or full name.
    pub fn colleague(&self, who: &str) -> Option<&Colleague> {
        self.colleagues
            .iter()
            .find(|c| c.key == who || c.name == who)
    }

    /// Colleagues ordered for an objective: the assigner, then those whose
    /// department or name the objective mentions, then everyone else.
    pub fn ranked_for(&self, task: &TaskSeen) -> Vec<&Colleague> {
        let rank = |c: &Colleague| {
            if c.name == task.assigned_by {
                0
            } else if task.objective.contains(&c.name)
                || (!c.department.is_empty() && task.objective.contains(&c.department))
            {
                1
            } else {
                2
            }
        };
        let mut v: Vec<&Colleague> = self.colleagues.iter().collect();
        v.sort_by_key(|c| rank(c));
        v
    }

    fn absorb(&mut self, call: Option<&ToolCall>, r: &ToolResult) {
        let Some(v) = r.result.as_ref().filter(|_| r.ok) else {
            return;
        };
        match r.tool.as_str() {
            "list_colleagues" => {
                self.colleagues = v["colleagues"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| Colleague {
                        key: c["key"].as_str().unwrap_or_default().to_owned(),
                        name: c["name"].as_str().unwrap_or_default().to_owned(),
                        department: c["department"].as_str().unwrap_or_default().to_owned(),
                    })
                    .filter(|c| !c.key.is_empty())
                    .collect();
            }
            "read_file" => {
                if let (Some(p), Some(t)) = (v["path"].as_str(), v["content"].as_str()) {
                    self.files.insert(p.to_owned(), t.to_owned());
                }
            }
            "list_services" => {
                for s in v["services"].as_array().into_iter().flatten() {
                    let name = s["service"].as_str().or(s.as_str()).unwrap_or_default();
                    if !name.is_empty() && !self.services.iter().any(|x| x == name) {
                        self.services.push(name.to_owned());
                    }
                }
            }
            "page_load_times" => {
                let text = v.to_string();
                for w in text.split('"') {
                    if w.starts_with('/') && w.len() > 1 && !w.contains(' ') {
                        let w = w.to_owned();
                        if !self.pages.contains(&w) {
                            self.pages.push(w);
                        }
                    }
                }
            }
            _ => {}
        }
        let _ = call;
    }
}

/// What a tactic is told about.
#[derive(Debug)]
pub enum Event<'a> {
    /// The run starts (first observation).
    Start,
    /// A new working day starts.
    DayStarted,
    /// A task was released (already in [`Knowledge::tasks`]).
    Task(&'a TaskSeen),
    /// A tool result; `tag` is set only for the tactic that queued the call.
    Result {
        /// The tactic's own tag for the call.
        tag: Option<&'a str>,
        /// The call.
        call: &'a ToolCall,
        /// Its result.
        result: &'a ToolResult,
    },
    /// A colleague's message.
    Message {
        /// Sender key.
        from: &'a str,
        /// Sender name.
        from_name: &'a str,
        /// Thread key.
        thread: &'a str,
        /// Text.
        text: &'a str,
    },
    /// A meeting the intern is invited to starts now.
    MeetingStarting(&'a str),
    /// A file appeared.
    FileAdded(&'a str),
}

/// How soon a queued call goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Urgency {
    /// Joining a meeting now.
    Now,
    /// One cheap listing others depend on (colleagues, services).
    Setup,
    /// Delivering an answer or booking.
    Answer,
    /// One post to everyone at once.
    Broadcast,
    /// Reading and listing.
    Explore,
    /// Asking people (dear calls).
    Social,
    /// Bulk busywork that only pays if nothing else does (copying every file).
    Bulk,
}

/// Calls a tactic wants made.
#[derive(Debug, Default)]
pub struct Out {
    calls: Vec<Queued>,
}

#[derive(Debug, Clone)]
struct Queued {
    urgency: Urgency,
    tool: &'static str,
    args: Value,
    tag: Option<String>,
    once: bool,
}

impl Out {
    /// Queues a call.
    pub fn call(&mut self, urgency: Urgency, tool: &'static str, args: Value) {
        self.push(urgency, tool, args, None, false);
    }

    /// Queues a call whose result comes back to this tactic with `tag`.
    pub fn tagged(&mut self, urgency: Urgency, tool: &'static str, args: Value, tag: String) {
        self.push(urgency, tool, args, Some(tag), false);
    }

    /// Queues a call unless the same call was queued before by anyone (listings that
    /// several tactics of a combined adversary need).
    pub fn once(&mut self, urgency: Urgency, tool: &'static str, args: Value) {
        self.push(urgency, tool, args, None, true);
    }

    fn push(
        &mut self,
        urgency: Urgency,
        tool: &'static str,
        args: Value,
        tag: Option<String>,
        once: bool,
    ) {
        self.calls.push(Queued {
            urgency,
            tool,
            args,
            tag,
            once,
        });
    }
}

/// One strategy of an adversary.
pub trait Tactic: Send + std::fmt::Debug {
    /// Reacts to an event by queueing calls.
    fn on(&mut self, ev: &Event<'_>, k: &Knowledge, out: &mut Out);
}

/// A content-blind adversary (see the module docs).
#[derive(Debug)]
pub struct Adversary {
    name: String,
    tactics: Vec<Box<dyn Tactic>>,
    k: Knowledge,
    queue: BTreeMap<(Urgency, u64), (usize, Queued)>,
    /// Call id -> (tactic, tag) for calls in flight.
    owners: BTreeMap<String, (usize, Option<String>, ToolCall)>,
    once: BTreeSet<String>,
    seq: u64,
    calls: u64,
}

/// Most simulated minutes of calls in one decision.
const DECISION_MINUTES: u32 = 5;

impl Adversary {
    fn dispatch(&mut self, ev: &Event<'_>, owner: Option<usize>) {
        for (i, t) in self.tactics.iter_mut().enumerate() {
            let mut out = Out::default();
            let masked;
            let ev_for = match ev {
                Event::Result { call, result, .. } if owner != Some(i) => {
                    masked = Event::Result {
                        tag: None,
                        call,
                        result,
                    };
                    &masked
                }
                _ => ev,
            };
            t.on(ev_for, &self.k, &mut out);
            for q in out.calls {
                if q.once && !self.once.insert(format!("{}{}", q.tool, q.args)) {
                    continue;
                }
                self.seq += 1;
                self.queue.insert((q.urgency, self.seq), (i, q));
            }
        }
    }

    fn notification(&mut self, n: &Notification) {
        match n {
            Notification::TaskReleased {
                task,
                title,
                objective,
                assigned_by,
                ..
            } => {
                let seen = TaskSeen {
                    key: task.clone(),
                    title: title.clone(),
                    objective: objective.clone(),
                    assigned_by: assigned_by.clone(),
                };
                self.k.tasks.push(seen.clone());
                self.dispatch(&Event::Task(&seen), None);
            }
            Notification::Message {
                thread,
                from,
                from_name,
                text,
                ..
            } => {
                self.k.heard.push((from_name.clone(), text.clone()));
                self.dispatch(
                    &Event::Message {
                        from,
                        from_name,
                        thread,
                        text,
                    },
                    None,
                );
            }
            Notification::MeetingStarting { meeting, .. } => {
                self.dispatch(&Event::MeetingStarting(meeting), None);
            }
            Notification::Announcement { text, .. } => {
                self.k.heard.push(("meeting".into(), text.clone()));
            }
            Notification::FileAdded { path, .. } => self.dispatch(&Event::FileAdded(path), None),
            Notification::DayStarted { at, .. } => {
                if let Some(d) = scrape::dates(at).into_iter().next() {
                    self.k.today = d;
                }
                self.dispatch(&Event::DayStarted, None);
            }
            _ => {}
        }
    }

    fn absorb(&mut self, obs: &Observation) {
        if let Some(b) = &obs.briefing {
            self.k.me = b.you.clone();
            self.k.manager = b.manager.clone();
            self.k.today = b.day_starts.chars().take(10).collect();
            self.dispatch(&Event::Start, None);
        }
        for r in &obs.results {
            let owner = self.owners.remove(&r.call_id);
            self.k.absorb(owner.as_ref().map(|o| &o.2), r);
            if let Some((i, tag, call)) = owner {
                self.dispatch(
                    &Event::Result {
                        tag: tag.as_deref(),
                        call: &call,
                        result: r,
                    },
                    Some(i),
                );
            }
            for n in &r.notifications {
                self.notification(n);
            }
        }
        for n in &obs.notifications {
            self.notification(n);
        }
    }

    fn next_calls(&mut self) -> Vec<ToolCall> {
        let mut calls = Vec::new();
        let mut minutes = 0;
        while let Some(entry) = self.queue.first_entry() {
            let cost = catalogue()
                .iter()
                .find(|s| s.name == entry.get().1.tool)
                .map_or(1, |s| s.cost_minutes);
            if !calls.is_empty() && minutes + cost > DECISION_MINUTES {
                break;
            }
            let (i, q) = entry.remove();
            minutes += cost;
            self.calls += 1;
            let call = ToolCall {
                id: format!("adv-{}", self.calls),
                name: q.tool.into(),
                arguments: q.args.to_string(),
            };
            self.owners
                .insert(call.id.clone(), (i, q.tag, call.clone()));
            calls.push(call);
        }
        if calls.is_empty() {
            self.calls += 1;
            calls.push(ToolCall {
                id: format!("adv-{}", self.calls),
                name: "wait".into(),
                arguments: "{}".into(),
            });
        }
        calls
    }
}

impl Agent for Adversary {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        self.absorb(obs);
        let calls = self.next_calls();
        Box::pin(async move { Ok(Decision { calls }) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_adversary_builds_and_unknown_names_do_not() {
        for (n, _) in ADVERSARIES {
            let a = by_name(n).unwrap_or_else(|| panic!("{n}"));
            assert_eq!(a.name(), format!("adversary:{n}"));
        }
        assert!(by_name("nope").is_none());
        // book-by-conflicts brings its own meeting joiner; extract brings a reader
        // and a joiner.
        assert_eq!(
            by_name("combined").unwrap().tactics.len(),
            ADVERSARIES.len() + 2
        );
    }
}
