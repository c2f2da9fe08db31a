//! Semantic checks that RON parsing cannot do: references, uniqueness, time
//! consistency and dependency cycles. All problems are collected, not just the first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::load::{ErrorCode, Location, ScenarioError, ScenarioErrors};
use super::{Check, Condition, Content, FileSpec, Gate, Release, Scenario, WorldChange};
use crate::path::VPath;
use crate::time::{Epoch, SimTime};

struct Ctx<'a> {
    file: &'a Path,
    errors: Vec<ScenarioError>,
}

impl Ctx<'_> {
    fn err(&mut self, code: ErrorCode, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ScenarioError {
            file: self.file.to_path_buf(),
            code,
            location: Location::Path(path.into()),
            message: message.into(),
        });
    }
}

/// Checks a parsed scenario. With `assets_dir`, sidecar files are read and their
/// hashes checked; the loaded bytes are returned by path.
pub fn validate(
    s: &Scenario,
    file: &Path,
    assets_dir: Option<&Path>,
) -> Result<BTreeMap<String, Vec<u8>>, ScenarioErrors> {
    let mut cx = Ctx {
        file,
        errors: Vec::new(),
    };
    let mut assets = BTreeMap::new();

    // Clock.
    let epoch = match Epoch::from_timestamp(&s.clock.start) {
        Ok(e) => Some(e),
        Err(e) => {
            cx.err(ErrorCode::BadTime, "clock.start", e.to_string());
            None
        }
    };
    let Some(epoch) = epoch else {
        return Err(ScenarioErrors(cx.errors));
    };
    let time = |cx: &mut Ctx<'_>, path: &str, v: &str| -> Option<SimTime> {
        match epoch.parse(v) {
            Ok(t) => Some(t),
            Err(e) => {
                cx.err(ErrorCode::BadTime, path, e.to_string());
                None
            }
        }
    };
    let start = time(&mut cx, "clock.start", &s.clock.start).unwrap_or_default();
    let end = time(&mut cx, "clock.end", &s.clock.end);
    if let Some(end) = end
        && end <= start
    {
        cx.err(
            ErrorCode::BadValue,
            "clock.end",
            format!("the day must end after it starts ({})", s.clock.start),
        );
    }
    let end = end.unwrap_or(SimTime(u64::MAX));
    let open = time(&mut cx, "clock.office_open", &s.clock.office_open).map(|t| t.0 % 86_400);
    let close = time(&mut cx, "clock.office_close", &s.clock.office_close).map(|t| t.0 % 86_400);
    if let (Some(o), Some(c)) = (open, close)
        && o >= c
    {
        cx.err(
            ErrorCode::BadValue,
            "clock.office_close",
            "office hours must close after they open",
        );
    }
    for tool in s.clock.costs.keys() {
        if !crate::tools::TOOL_NAMES.contains(&tool.as_str()) {
            cx.err(
                ErrorCode::BadValue,
                format!("clock.costs.{tool}"),
                format!(
                    "unknown tool `{tool}`; expected one of: {}",
                    crate::tools::TOOL_NAMES.join(", ")
                ),
            );
        }
    }

    // Keys: one namespace, each kind with its prefix.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut key = |cx: &mut Ctx<'_>, path: String, k: &str, prefix: &str| {
        if !k.starts_with(prefix) || k.len() == prefix.len() {
            cx.err(
                ErrorCode::BadValue,
                &path,
                format!("key `{k}` must look like `{prefix}<name>`"),
            );
        }
        if let Some(first) = seen.get(k) {
            cx.err(
                ErrorCode::DuplicateKey,
                &path,
                format!("key `{k}` is already used at {first}"),
            );
        } else {
            seen.insert(k.to_owned(), path);
        }
    };
    key(&mut cx, "intern.key".into(), &s.intern.key, "agent/");
    for (i, p) in s.company.people.iter().enumerate() {
        key(&mut cx, format!("company.people[{i}].key"), &p.key, "npc/");
    }
    for (i, r) in s.rooms.iter().enumerate() {
        key(&mut cx, format!("rooms[{i}].key"), &r.key, "room/");
    }
    for (i, m) in s.meetings.iter().enumerate() {
        key(&mut cx, format!("meetings[{i}].key"), &m.key, "meeting/");
    }
    for (i, t) in s.tasks.iter().enumerate() {
        key(&mut cx, format!("tasks[{i}].key"), &t.key, "task/");
    }
    for (i, p) in s.company.people.iter().enumerate() {
        for (j, c) in p.clues.iter().enumerate() {
            key(
                &mut cx,
                format!("company.people[{i}].clues[{j}].key"),
                &c.key,
                "clue/",
            );
        }
    }

    let people: BTreeSet<&str> = s.company.people.iter().map(|p| p.key.as_str()).collect();
    let rooms: BTreeSet<&str> = s.rooms.iter().map(|r| r.key.as_str()).collect();
    let meetings: BTreeMap<&str, &super::MeetingSpec> =
        s.meetings.iter().map(|m| (m.key.as_str(), m)).collect();
    let tasks: BTreeMap<&str, &super::TaskSpec> =
        s.tasks.iter().map(|t| (t.key.as_str(), t)).collect();
    let clues: BTreeSet<&str> = s
        .company
        .people
        .iter()
        .flat_map(|p| p.clues.iter().map(|c| c.key.as_str()))
        .collect();
    let person = |cx: &mut Ctx<'_>, path: String, k: &str| {
        if !people.contains(k) {
            cx.err(
                ErrorCode::UnknownPerson,
                path,
                format!("no person with key `{k}` in company.people"),
            );
        }
    };

    if !people.contains(s.intern.manager.as_str()) {
        person(&mut cx, "intern.manager".into(), &s.intern.manager);
    }
    if s.tasks.is_empty() {
        cx.err(
            ErrorCode::BadValue,
            "tasks",
            "a scenario needs at least one task",
        );
    }

    // Files.
    let mut drive_files: BTreeSet<String> = BTreeSet::new();
    let mut check_file =
        |cx: &mut Ctx<'_>, path: String, f: &FileSpec, assets: &mut BTreeMap<String, Vec<u8>>| {
            match VPath::parse(&f.path) {
                Ok(p) => {
                    if p.is_drive() && !drive_files.insert(p.as_str().to_owned()) {
                        cx.err(
                            ErrorCode::DuplicateKey,
                            format!("{path}.path"),
                            format!("file `{}` is defined twice", f.path),
                        );
                    }
                }
                Err(e) => cx.err(ErrorCode::BadPath, format!("{path}.path"), e.to_string()),
            }
            if let Content::Sidecar {
                path: rel,
                blake3: want,
            } = &f.content
                && let Some(dir) = assets_dir
            {
                let full = dir.join(rel);
                match std::fs::read(&full) {
                    Ok(bytes) => {
                        let got = blake3::hash(&bytes).to_hex().to_string();
                        if &got != want {
                            cx.err(
                                ErrorCode::Asset,
                                format!("{path}.content"),
                                format!(
                                    "sidecar `{}` has BLAKE3 {got}, expected {want}",
                                    full.display()
                                ),
                            );
                        } else {
                            assets.insert(f.path.clone(), bytes);
                        }
                    }
                    Err(e) => cx.err(
                        ErrorCode::Asset,
                        format!("{path}.content"),
                        format!("cannot read sidecar `{}`: {e}", full.display()),
                    ),
                }
            }
        };
    for (i, f) in s.files.iter().enumerate() {
        check_file(&mut cx, format!("files[{i}]"), f, &mut assets);
    }
    for (i, ev) in s.events.iter().enumerate() {
        let at = time(&mut cx, &format!("events[{i}].at"), &ev.at);
        if let Some(at) = at
            && (at < start || at > end)
        {
            cx.err(
                ErrorCode::BadValue,
                format!("events[{i}].at"),
                "timed events must fall between clock.start and clock.end",
            );
        }
        match &ev.change {
            WorldChange::Message { from, .. } => {
                person(&mut cx, format!("events[{i}].change.from"), from)
            }
            WorldChange::File(f) => {
                check_file(&mut cx, format!("events[{i}].change"), f, &mut assets)
            }
        }
    }

    // People and clues.
    for (i, p) in s.company.people.iter().enumerate() {
        if let Some((lo, hi)) = p.reply_minutes
            && (lo == 0 || lo > hi)
        {
            cx.err(
                ErrorCode::BadValue,
                format!("company.people[{i}].reply_minutes"),
                format!("expected (min, max) minutes with 1 <= min <= max, found ({lo}, {hi})"),
            );
        }
        for (j, c) in p.clues.iter().enumerate() {
            let at = format!("company.people[{i}].clues[{j}]");
            if c.trigger.is_empty()
                || c.trigger
                    .iter()
                    .any(|g| g.is_empty() || g.iter().any(|w| w.trim().is_empty()))
            {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.trigger"),
                    "a trigger needs at least one group of non-empty alternatives",
                );
            }
            if let Some(t) = &c.task
                && !tasks.contains_key(t.as_str())
            {
                cx.err(
                    ErrorCode::UnknownTask,
                    format!("{at}.task"),
                    format!("no task with key `{t}`"),
                );
            }
            for (k, cond) in c.after.iter().enumerate() {
                condition(&mut cx, &format!("{at}.after[{k}]"), cond, &tasks, &clues);
            }
        }
    }

    // Meetings.
    for (i, m) in s.meetings.iter().enumerate() {
        let at = format!("meetings[{i}]");
        if !rooms.contains(m.room.as_str()) {
            cx.err(
                ErrorCode::UnknownRoom,
                format!("{at}.room"),
                format!("no room with key `{}`", m.room),
            );
        }
        person(&mut cx, format!("{at}.organizer"), &m.organizer);
        for (j, a) in m.attendees.iter().enumerate() {
            if a != &s.intern.key {
                person(&mut cx, format!("{at}.attendees[{j}]"), a);
            }
        }
        let (ms, me) = (
            time(&mut cx, &format!("{at}.start"), &m.start),
            time(&mut cx, &format!("{at}.end"), &m.end),
        );
        if let (Some(ms), Some(me)) = (ms, me) {
            if me <= ms {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.end"),
                    "a meeting must end after it starts",
                );
            } else {
                let day = Epoch::day_of(ms) * 86_400;
                let problem = if Epoch::day_of(ms) != Epoch::day_of(SimTime(me.0 - 1)) {
                    Some("it spans midnight".to_owned())
                } else if open.is_some_and(|o| ms.0 - day < o) {
                    Some(format!(
                        "it starts before the office opens at {}",
                        s.clock.office_open
                    ))
                } else if close.is_some_and(|c| me.0 - day > c) {
                    Some(format!(
                        "it ends after the office closes at {}",
                        s.clock.office_close
                    ))
                } else if ms < start {
                    Some(format!(
                        "it starts before the run starts ({})",
                        s.clock.start
                    ))
                } else if me > end {
                    Some(format!("it ends after the run ends ({})", s.clock.end))
                } else {
                    None
                };
                if let Some(problem) = problem {
                    cx.err(
                        ErrorCode::MeetingOutsideDay,
                        &at,
                        format!(
                            "meeting {}..{} is outside the working day: {problem}",
                            m.start, m.end
                        ),
                    );
                }
                if u64::from(m.announce_after_min) * 60 >= me.0 - ms.0 {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}.announce_after_min"),
                        "announcements must be made before the meeting ends",
                    );
                }
            }
        }
    }

    // Tasks.
    for (i, t) in s.tasks.iter().enumerate() {
        let at = format!("tasks[{i}]");
        person(&mut cx, format!("{at}.assigned_by"), &t.assigned_by);
        let deadline = time(&mut cx, &format!("{at}.deadline"), &t.deadline);
        let released = match &t.release {
            Release::Start => Some(start),
            Release::At(v) => time(&mut cx, &format!("{at}.release"), v),
            Release::AfterCheckpoint { task, checkpoint } => {
                checkpoint_ref(&mut cx, &format!("{at}.release"), task, checkpoint, &tasks);
                Some(start)
            }
            Release::InMeeting(mk) => match meetings.get(mk.as_str()) {
                Some(m) => epoch.parse(&m.start).ok().map(|t| {
                    t.after(crate::time::SimDuration::minutes(u64::from(
                        m.announce_after_min,
                    )))
                }),
                None => {
                    cx.err(
                        ErrorCode::UnknownMeeting,
                        format!("{at}.release"),
                        format!("no meeting with key `{mk}`"),
                    );
                    None
                }
            },
        };
        if let (Some(r), Some(d)) = (released, deadline) {
            if d <= r {
                cx.err(
                    ErrorCode::DeadlineBeforeRelease,
                    format!("{at}.deadline"),
                    format!(
                        "deadline {} is not after the release at {}",
                        epoch.iso(d),
                        epoch.iso(r)
                    ),
                );
            }
            if r < start || r > end {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.release"),
                    "the release must fall between clock.start and clock.end",
                );
            }
        }
        if t.checkpoints.is_empty() {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.checkpoints"),
                "a task needs at least one checkpoint",
            );
        }
        let mut cp_keys = BTreeSet::new();
        for (j, c) in t.checkpoints.iter().enumerate() {
            let cat = format!("{at}.checkpoints[{j}]");
            if !cp_keys.insert(c.key.as_str()) {
                cx.err(
                    ErrorCode::DuplicateKey,
                    format!("{cat}.key"),
                    format!("checkpoint `{}` appears twice in this task", c.key),
                );
            }
            if c.weight == 0 {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{cat}.weight"),
                    "weights must be at least 1",
                );
            }
            check_check(
                &mut cx,
                &format!("{cat}.check"),
                &c.check,
                &Refs {
                    meetings: &meetings,
                    clues: &clues,
                    drive_files: &drive_files,
                    people: &people,
                    epoch: &epoch,
                },
            );
        }
        for (j, step) in t.plan.iter().enumerate() {
            let pat = format!("{at}.plan[{j}]");
            if !crate::tools::TOOL_NAMES.contains(&step.tool.as_str()) {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{pat}.tool"),
                    format!("unknown tool `{}`", step.tool),
                );
            }
            if !matches!(
                serde_json::from_str::<serde_json::Value>(&step.args),
                Ok(serde_json::Value::Object(_))
            ) {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{pat}.args"),
                    "expected a JSON object in text, like `{\"path\": \"drive/x.md\"}`",
                );
            }
            match &step.gate {
                Gate::Ready => {}
                Gate::NotBefore(v) => {
                    time(&mut cx, &format!("{pat}.gate"), v);
                }
                Gate::ReplyFrom(p) => person(&mut cx, format!("{pat}.gate"), p),
            }
        }
    }

    // Release dependency cycles: task -> the task whose checkpoint it waits on.
    let deps: BTreeMap<&str, &str> = s
        .tasks
        .iter()
        .filter_map(|t| match &t.release {
            Release::AfterCheckpoint { task, .. } => Some((t.key.as_str(), task.as_str())),
            _ => None,
        })
        .collect();
    let mut reported: BTreeSet<&str> = BTreeSet::new();
    for (i, t) in s.tasks.iter().enumerate() {
        let mut chain = vec![t.key.as_str()];
        let mut cur = t.key.as_str();
        while let Some(&next) = deps.get(cur) {
            if let Some(pos) = chain.iter().position(|k| *k == next) {
                let cycle = &chain[pos..];
                if cycle.first() == Some(&t.key.as_str())
                    && !cycle.iter().any(|k| reported.contains(k))
                {
                    reported.extend(cycle.iter().copied());
                    let mut names: Vec<&str> = cycle.to_vec();
                    names.push(next);
                    cx.err(
                        ErrorCode::DependencyCycle,
                        format!("tasks[{i}].release"),
                        format!("release dependencies form a cycle: {}", names.join(" -> ")),
                    );
                }
                break;
            }
            chain.push(next);
            cur = next;
        }
    }

    if cx.errors.is_empty() {
        Ok(assets)
    } else {
        Err(ScenarioErrors(cx.errors))
    }
}

fn checkpoint_ref(
    cx: &mut Ctx<'_>,
    at: &str,
    task: &str,
    checkpoint: &str,
    tasks: &BTreeMap<&str, &super::TaskSpec>,
) {
    match tasks.get(task) {
        None => cx.err(
            ErrorCode::UnknownTask,
            at,
            format!("no task with key `{task}`"),
        ),
        Some(t) if !t.checkpoints.iter().any(|c| c.key == checkpoint) => cx.err(
            ErrorCode::UnknownCheckpoint,
            at,
            format!(
                "task `{task}` has no checkpoint `{checkpoint}`; it has: {}",
                t.checkpoints
                    .iter()
                    .map(|c| c.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Some(_) => {}
    }
}

fn condition(
    cx: &mut Ctx<'_>,
    at: &str,
    c: &Condition,
    tasks: &BTreeMap<&str, &super::TaskSpec>,
    clues: &BTreeSet<&str>,
) {
    match c {
        Condition::Disclosed(k) => {
            if !clues.contains(k.as_str()) {
                cx.err(
                    ErrorCode::UnknownClue,
                    at,
                    format!("no clue with key `{k}`"),
                );
            }
        }
        Condition::Released(t) => {
            if !tasks.contains_key(t.as_str()) {
                cx.err(
                    ErrorCode::UnknownTask,
                    at,
                    format!("no task with key `{t}`"),
                );
            }
        }
        Condition::Passed { task, checkpoint } => checkpoint_ref(cx, at, task, checkpoint, tasks),
    }
}

/// What a check may refer to.
struct Refs<'a> {
    meetings: &'a BTreeMap<&'a str, &'a super::MeetingSpec>,
    clues: &'a BTreeSet<&'a str>,
    drive_files: &'a BTreeSet<String>,
    people: &'a BTreeSet<&'a str>,
    epoch: &'a Epoch,
}

fn check_check(cx: &mut Ctx<'_>, at: &str, check: &Check, refs: &Refs<'_>) {
    let Refs {
        meetings,
        clues,
        drive_files,
        ..
    } = *refs;
    match check {
        Check::FileExists { path }
        | Check::FileText { path, .. }
        | Check::FileContains { path, .. }
        | Check::JsonStringSet { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonNumber { path, .. }
        | Check::JsonArray { path, .. } => match VPath::parse(path) {
            Ok(p) if p.is_workspace() => {}
            Ok(_) => cx.err(
                ErrorCode::BadPath,
                at.to_owned(),
                format!("`{path}`: answers are checked in `workspace/`"),
            ),
            Err(e) => cx.err(ErrorCode::BadPath, at.to_owned(), e.to_string()),
        },
        Check::Disclosed(keys) => {
            if keys.is_empty() {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    "Disclosed needs at least one clue key",
                );
            }
            for k in keys {
                if !clues.contains(k.as_str()) {
                    cx.err(
                        ErrorCode::UnknownClue,
                        at.to_owned(),
                        format!("no clue with key `{k}`"),
                    );
                }
            }
        }
        Check::Attended(m) => {
            if !meetings.contains_key(m.as_str()) {
                cx.err(
                    ErrorCode::UnknownMeeting,
                    at.to_owned(),
                    format!("no meeting with key `{m}`"),
                );
            }
        }
        Check::Consulted(p) => {
            let normal = VPath::parse(p)
                .map(|v| v.as_str().to_owned())
                .unwrap_or_else(|_| p.clone());
            if !drive_files.contains(&normal) {
                cx.err(
                    ErrorCode::UnknownFile,
                    at.to_owned(),
                    format!("no drive file `{p}` in files"),
                );
            }
        }
        Check::All(subs) => {
            if subs.is_empty() {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    "All needs at least one check",
                );
            }
            for (i, s) in subs.iter().enumerate() {
                check_check(cx, &format!("{at}.All[{i}]"), s, refs);
            }
        }
        Check::MessageSent {
            to,
            contains,
            absent,
            after,
        } => {
            if !refs.people.contains(to.as_str()) {
                cx.err(
                    ErrorCode::UnknownPerson,
                    at.to_owned(),
                    format!("no person with key `{to}` in company.people"),
                );
            }
            if contains.is_empty() {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    "MessageSent needs at least one string in `contains`",
                );
            }
            if contains.iter().chain(absent).any(|c| c.trim().is_empty()) {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    "MessageSent strings must not be empty",
                );
            }
            if let Some(c) = contains.iter().find(|c| {
                absent
                    .iter()
                    .any(|a| a.trim().eq_ignore_ascii_case(c.trim()))
            }) {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    format!("`{c}` is both required and forbidden, so the check can never pass"),
                );
            }
            if let Some(t) = after
                && let Err(e) = refs.epoch.parse(t)
            {
                cx.err(ErrorCode::BadTime, format!("{at}.after"), e.to_string());
            }
        }
    }
    if let Check::JsonRecords { tolerance, .. } | Check::JsonNumber { tolerance, .. } = check
        && !(tolerance.is_finite() && *tolerance >= 0.0)
    {
        cx.err(
            ErrorCode::BadValue,
            at.to_owned(),
            "tolerance must be a finite number >= 0",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario_with(check: &str) -> Scenario {
        let src = format!(
            r#"Scenario(
  name: "v",
  seed: 1,
  clock: ClockSpec(start: "2025-10-08T09:00", end: "2025-10-08T18:00"),
  company: Company(name: "Acme", people: [
    Person(key: "npc/ann", name: "Ann Lee", department: "Ops", position: "Manager"),
  ]),
  intern: Intern(key: "agent/intern", name: "Avery Smith", department: "Ops", manager: "npc/ann"),
  tasks: [TaskSpec(
    key: "task/t", family: "demo", variant: "demo/easy", difficulty: easy,
    title: "T", objective: "O", assigned_by: "npc/ann", release: Start,
    deadline: "2025-10-08T17:00",
    checkpoints: [CheckpointSpec(key: "c", description: "d", check: {check}, feedback: "f")],
  )],
)"#
        );
        super::super::parse_str(&src, Path::new("v.ron")).expect("parses")
    }

    fn codes(check: &str) -> Vec<ErrorCode> {
        match validate(&scenario_with(check), Path::new("v.ron"), None) {
            Ok(_) => Vec::new(),
            Err(e) => e.0.iter().map(|e| e.code).collect(),
        }
    }

    #[test]
    fn message_sent_is_checked() {
        assert!(codes(r#"MessageSent(to: "npc/ann", contains: ["4210"])"#).is_empty());
        assert!(
            codes(
                r#"MessageSent(to: "npc/ann", contains: ["4210"], absent: ["3980"], after: Some("2025-10-08T10:00"))"#
            )
            .is_empty()
        );
        assert_eq!(
            codes(r#"MessageSent(to: "npc/bob", contains: ["4210"])"#),
            [ErrorCode::UnknownPerson]
        );
        assert_eq!(
            codes(r#"MessageSent(to: "npc/ann", contains: [])"#),
            [ErrorCode::BadValue]
        );
        assert_eq!(
            codes(r#"MessageSent(to: "npc/ann", contains: ["x", " "])"#),
            [ErrorCode::BadValue]
        );
        assert_eq!(
            codes(r#"MessageSent(to: "npc/ann", contains: ["A1"], absent: ["a1"])"#),
            [ErrorCode::BadValue]
        );
        assert_eq!(
            codes(r#"MessageSent(to: "npc/ann", contains: ["x"], after: Some("noon"))"#),
            [ErrorCode::BadTime]
        );
        assert_eq!(
            codes(r#"All([MessageSent(to: "npc/zed", contains: ["x"])])"#),
            [ErrorCode::UnknownPerson]
        );
    }
}
