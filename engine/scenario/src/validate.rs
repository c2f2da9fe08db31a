//! Semantic checks that RON parsing cannot do: references, uniqueness, time
//! consistency and dependency cycles. All problems are collected, not just the first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::error::{ErrorCode, Location, ScenarioError, ScenarioErrors};
use super::limits;
use super::sidecar::{self, SidecarError};
use super::{
    BudgetAspect, Check, Condition, Content, DomainCheck, Drawing, FileSpec, Gate, OutingAspect,
    Release, Scenario, Shape, WorldChange,
};
use crate::path::VPath;
use crate::time::{Epoch, SimTime};

struct Ctx<'a> {
    file: &'a Path,
    errors: Vec<ScenarioError>,
    /// Knapsack optima already computed, by a hash of (capacity, items): checkpoints
    /// of one task share their items, and a repeated instance costs one lookup.
    budget_memo: BTreeMap<[u8; 32], i64>,
    /// Knapsack cells left for distinct budget checks (bounds validation time).
    budget_cells_left: u64,
    /// Outing maps already solved, by a hash of the map: their outings.
    outing_memo: BTreeMap<[u8; 32], Vec<crate::check::Outing>>,
}

impl Ctx<'_> {
    fn new(file: &Path) -> Ctx<'_> {
        Ctx {
            file,
            errors: Vec::new(),
            budget_memo: BTreeMap::new(),
            budget_cells_left: limits::MAX_BUDGET_CELLS_TOTAL,
            outing_memo: BTreeMap::new(),
        }
    }
}

/// A stable hash of a value's RON text, to key memos without comparing whole values.
fn digest<T: serde::Serialize>(v: &T) -> [u8; 32] {
    let text = ron::to_string(v).unwrap_or_default();
    *blake3::hash(text.as_bytes()).as_bytes()
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
    let mut cx = Ctx::new(file);
    let mut assets = BTreeMap::new();

    // Limits first: past them the checks below could take long, so stop there.
    for b in limits::walk(s) {
        cx.err(b.code, b.path, b.message);
    }
    if !cx.errors.is_empty() {
        return Err(ScenarioErrors(cx.errors));
    }
    let mut sidecar_budget = limits::MAX_SIDECAR_TOTAL_BYTES;

    // The name becomes a host directory name (`<out>/<name>`), so it must be one
    // plain path segment: never `..`, `/`, or a hidden file.
    if let Err(e) = tbsim_core::segment::Segment::parse(&s.name) {
        cx.err(
            ErrorCode::BadName,
            "name",
            format!(
                "{:?} cannot name a run directory: {e} (a scenario name is one path segment \
                 of 1-{} bytes, not starting with `.`)",
                s.name,
                tbsim_core::segment::MAX_SEGMENT_BYTES
            ),
        );
    }

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
    if !(1..=366).contains(&s.clock.days) {
        cx.err(
            ErrorCode::BadValue,
            "clock.days",
            format!("expected 1 to 366 working days, found {}", s.clock.days),
        );
    }
    if end.is_some_and(|e| e.0 - Epoch::day_of(e) * 86_400 > 86_400 - 1 || Epoch::day_of(e) != 0)
        && s.clock.days > 1
    {
        cx.err(
            ErrorCode::BadValue,
            "clock.end",
            "with several days, `end` must fall on the first day (each day repeats its hours)",
        );
    }
    // The run ends at the last day's end.
    let end = end.map_or(SimTime(u64::MAX), |e| {
        SimTime(e.0 + u64::from(s.clock.days.saturating_sub(1)) * 86_400)
    });
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
        if !crate::protocol::TOOL_NAMES.contains(&tool.as_str()) {
            cx.err(
                ErrorCode::BadValue,
                format!("clock.costs.{tool}"),
                format!(
                    "unknown tool `{tool}`; expected one of: {}",
                    crate::protocol::TOOL_NAMES.join(", ")
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
    for (i, sv) in s.services.iter().enumerate() {
        key(&mut cx, format!("services[{i}].key"), &sv.key, "service/");
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
                    if let Some(problem) = limits::path_problem(p.as_str()) {
                        cx.err(ErrorCode::PathLimit, format!("{path}.path"), problem);
                    } else if p.is_drive() && !drive_files.insert(p.as_str().to_owned()) {
                        cx.err(
                            ErrorCode::DuplicateKey,
                            format!("{path}.path"),
                            format!("file `{}` is defined twice", f.path),
                        );
                    }
                }
                Err(e) => cx.err(ErrorCode::BadPath, format!("{path}.path"), e.to_string()),
            }
            if let Content::Drawing(d) = &f.content {
                check_drawing(cx, &format!("{path}.content"), d);
            }
            if let Content::Sidecar {
                path: rel,
                blake3: want,
            } = &f.content
            {
                let at = format!("{path}.content.path");
                // Checked without the folder too, so a generated or in-memory
                // scenario with an escaping sidecar is refused the same way.
                if let Err(m) = sidecar::relative(rel) {
                    cx.err(ErrorCode::SidecarPath, at, m);
                } else if let Some(m) = limits::path_problem(rel) {
                    cx.err(ErrorCode::PathLimit, at, m);
                } else if let Some(dir) = assets_dir {
                    match sidecar::read(dir, rel, &mut sidecar_budget) {
                        Ok(bytes) => {
                            let got = blake3::hash(&bytes).to_hex().to_string();
                            if &got != want {
                                cx.err(
                                    ErrorCode::Asset,
                                    format!("{path}.content"),
                                    format!("sidecar `{rel}` has BLAKE3 {got}, expected {want}"),
                                );
                            } else {
                                assets.insert(f.path.clone(), bytes);
                            }
                        }
                        Err(SidecarError::Unsafe(m)) => cx.err(ErrorCode::SidecarPath, at, m),
                        Err(SidecarError::PathLimit(m)) => cx.err(ErrorCode::PathLimit, at, m),
                        Err(SidecarError::TooLarge(m)) => cx.err(ErrorCode::TooLarge, at, m),
                        Err(SidecarError::Io(m)) => {
                            cx.err(ErrorCode::Asset, format!("{path}.content"), m)
                        }
                    }
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

    // Monitored services.
    let series = |cx: &mut Ctx<'_>, at: &str, points: &[super::Point], min: f64| {
        if points.is_empty() {
            cx.err(ErrorCode::BadValue, at, "a series needs at least one point");
        }
        let mut last: Option<SimTime> = None;
        for (k, p) in points.iter().enumerate() {
            if let Some(t) = time(cx, &format!("{at}[{k}].at"), &p.at) {
                if last.is_some_and(|l| t < l) {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}[{k}].at"),
                        "points must be in time order",
                    );
                }
                last = Some(t);
            }
            if !p.value.is_finite() || p.value < min {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}[{k}].value"),
                    format!("expected a finite number >= {min}, found {}", p.value),
                );
            }
        }
    };
    let mut service_names = BTreeSet::new();
    for (i, sv) in s.services.iter().enumerate() {
        let at = format!("services[{i}]");
        let name = sv.name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.name"),
                "a service name must be one non-empty word (e.g. `content-db-02`)",
            );
        } else if !service_names.insert(name.to_lowercase()) {
            cx.err(
                ErrorCode::DuplicateKey,
                format!("{at}.name"),
                format!("service name `{name}` is used twice"),
            );
        }
        let mut metric_names = BTreeSet::new();
        for (j, m) in sv.metrics.iter().enumerate() {
            let mat = format!("{at}.metrics[{j}]");
            if m.name.trim().is_empty() || !metric_names.insert(m.name.as_str()) {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{mat}.name"),
                    format!(
                        "metric names must be non-empty and unique in the service, found `{}`",
                        m.name
                    ),
                );
            }
            series(
                &mut cx,
                &format!("{mat}.points"),
                &m.points,
                f64::NEG_INFINITY,
            );
            if let Some((w, c)) = m.thresholds
                && (!w.is_finite() || !c.is_finite() || w == c)
            {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{mat}.thresholds"),
                    "thresholds are (warning, critical), finite and different",
                );
            }
        }
        let mut paths = BTreeSet::new();
        for (j, p) in sv.pages.iter().enumerate() {
            let pat = format!("{at}.pages[{j}]");
            if !p.path.starts_with('/') || !paths.insert(p.path.as_str()) {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{pat}.path"),
                    format!(
                        "page paths start with `/` and are unique in the service, found `{}`",
                        p.path
                    ),
                );
            }
            let mut windows = BTreeSet::new();
            for (k, w) in p.load_ms.iter().enumerate() {
                if !super::PAGE_WINDOWS.contains(&w.window.as_str())
                    || !windows.insert(w.window.as_str())
                {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{pat}.load_ms[{k}].window"),
                        format!(
                            "unknown or repeated window `{}`; expected each of {} once",
                            w.window,
                            super::PAGE_WINDOWS.join(", ")
                        ),
                    );
                }
                series(
                    &mut cx,
                    &format!("{pat}.load_ms[{k}].points"),
                    &w.points,
                    0.0,
                );
            }
            if windows.len() != super::PAGE_WINDOWS.len() {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{pat}.load_ms"),
                    format!(
                        "every page needs each window: {}",
                        super::PAGE_WINDOWS.join(", ")
                    ),
                );
            }
        }
        for (j, l) in sv.logs.iter().enumerate() {
            time(&mut cx, &format!("{at}.logs[{j}].at"), &l.at);
            if l.text.trim().is_empty() {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.logs[{j}].text"),
                    "a log line needs text",
                );
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
        if let Some(d) = deadline
            && d > end
        {
            cx.err(
                ErrorCode::NeverMet,
                format!("{at}.deadline"),
                format!(
                    "deadline {} is after the run ends ({}); use a time within the scenario's days",
                    t.deadline,
                    epoch.iso(end)
                ),
            );
        }
        let released = match &t.release {
            Release::Start => Some(start),
            Release::At(v) => time(&mut cx, &format!("{at}.release"), v),
            Release::AfterCheckpoint { task, checkpoint } => {
                checkpoint_ref(&mut cx, &format!("{at}.release"), task, checkpoint, &tasks);
                // An answer is judged when its task closes, so a gate on one opens at
                // the gate task's deadline at the earliest.
                // (Within a release cycle TB0007 says all there is to say.)
                let cyclic = {
                    let mut cur = task.as_str();
                    let mut seen = BTreeSet::new();
                    loop {
                        if cur == t.key || !seen.insert(cur) {
                            break cur == t.key;
                        }
                        match tasks.get(cur).map(|g| &g.release) {
                            Some(Release::AfterCheckpoint { task, .. }) => cur = task.as_str(),
                            _ => break false,
                        }
                    }
                };
                let gate = tasks.get(task.as_str()).filter(|_| !cyclic).and_then(|g| {
                    let c = g.checkpoints.iter().find(|c| &c.key == checkpoint)?;
                    (c.check.kind() == crate::check::CheckKind::Answer)
                        .then(|| epoch.parse(&g.deadline).ok())
                        .flatten()
                });
                Some(gate.unwrap_or(start))
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
        } else if !t.checkpoints.iter().any(|c| c.check.kind().scored()) {
            cx.err(
                ErrorCode::NothingScored,
                format!("{at}.checkpoints"),
                "every checkpoint of this task is a diagnostic (Consulted, Disclosed, ToolCalled), \
                 which weighs nothing; add an answer (a file, message or booking check) or Attended",
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
                    epoch: &epoch,
                    run: (start, end),
                    run_text: (&s.clock.start, &s.clock.end),
                    depth: 0,
                    people: &people,
                    meetings: &meetings,
                    clues: &clues,
                    drive_files: &drive_files,
                },
            );
        }
        for (j, step) in t.plan.iter().enumerate() {
            let pat = format!("{at}.plan[{j}]");
            if !crate::protocol::TOOL_NAMES.contains(&step.tool.as_str()) {
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
                    if let Some(g) = time(&mut cx, &format!("{pat}.gate"), v)
                        && g > end
                    {
                        cx.err(
                            ErrorCode::NeverMet,
                            format!("{pat}.gate"),
                            format!("{v} is after the run ends ({})", epoch.iso(end)),
                        );
                    }
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

/// What checks may refer to.
struct Refs<'a> {
    epoch: &'a Epoch,
    /// The run's first and last instants: times outside them can never be met.
    run: (SimTime, SimTime),
    /// `clock.start` and `clock.end` as written, for messages.
    run_text: (&'a str, &'a str),
    /// How deep in `All(...)` this check is.
    depth: usize,
    people: &'a BTreeSet<&'a str>,
    meetings: &'a BTreeMap<&'a str, &'a super::MeetingSpec>,
    clues: &'a BTreeSet<&'a str>,
    drive_files: &'a BTreeSet<String>,
}

fn check_check(cx: &mut Ctx<'_>, at: &str, check: &Check, refs: &Refs<'_>) {
    let Refs {
        meetings,
        clues,
        drive_files,
        ..
    } = refs;
    match check {
        Check::FileExists { path }
        | Check::FileText { path, .. }
        | Check::FileContains { path, .. }
        | Check::JsonStringSet { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonNumber { path, .. }
        | Check::JsonArray { path, .. }
        | Check::CsvTable { path, .. } => match VPath::parse(path) {
            Ok(p) if p.is_workspace() => {
                if let Some(m) = limits::path_problem(p.as_str()) {
                    cx.err(ErrorCode::PathLimit, at.to_owned(), m);
                }
            }
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
        Check::ToolCalled { tool, .. } => {
            if !crate::protocol::TOOL_NAMES.contains(&tool.as_str()) {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    format!(
                        "unknown tool `{tool}`; expected one of: {}",
                        crate::protocol::TOOL_NAMES.join(", ")
                    ),
                );
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
            if let Some(t) = after {
                match refs.epoch.parse(t) {
                    Err(e) => cx.err(ErrorCode::BadTime, format!("{at}.after"), e.to_string()),
                    Ok(v) if v >= refs.run.1 => cx.err(
                        ErrorCode::NeverMet,
                        format!("{at}.after"),
                        format!(
                            "{t} is not before the run ends ({}), so no message can come after it",
                            refs.epoch.iso(refs.run.1)
                        ),
                    ),
                    Ok(_) => {}
                }
            }
        }
        Check::Domain(d) => check_domain(cx, &format!("{at}.Domain"), d),
        Check::All(subs) => {
            if subs.is_empty() {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    "All needs at least one check",
                );
            }
            if refs.depth + 1 >= limits::MAX_CHECK_DEPTH {
                cx.err(
                    ErrorCode::TooMany,
                    at.to_owned(),
                    format!(
                        "`All(...)` is nested more than {} deep",
                        limits::MAX_CHECK_DEPTH
                    ),
                );
                return;
            }
            let inner = Refs {
                depth: refs.depth + 1,
                ..*refs
            };
            for (i, s) in subs.iter().enumerate() {
                check_check(cx, &format!("{at}.All[{i}]"), s, &inner);
            }
        }
        Check::Booked { .. } => check_booked(cx, at, check, refs),
    }
    if let Check::CsvTable {
        expected, columns, ..
    } = check
    {
        match crate::check::parse_csv(expected) {
            Some(rows) if !rows.is_empty() => {
                let header: Vec<&str> = rows[0].iter().map(|h| h.trim()).collect();
                if columns.is_empty() {
                    cx.err(
                        ErrorCode::BadValue,
                        at.to_owned(),
                        "CsvTable needs at least one column to compare",
                    );
                }
                for c in columns {
                    if !header.contains(&c.trim()) {
                        cx.err(
                            ErrorCode::BadValue,
                            at.to_owned(),
                            format!(
                                "column `{c}` is not in the expected header ({})",
                                header.join(", ")
                            ),
                        );
                    }
                }
                if let Some(i) = rows.iter().position(|r| r.len() != header.len()) {
                    cx.err(
                        ErrorCode::BadValue,
                        at.to_owned(),
                        format!(
                            "expected table row {i} has {} cells; the header has {}",
                            rows[i].len(),
                            header.len()
                        ),
                    );
                }
            }
            _ => cx.err(
                ErrorCode::BadValue,
                at.to_owned(),
                "CsvTable `expected` must be CSV text with a header row",
            ),
        }
    }
    if let Check::JsonRecords { tolerance, .. }
    | Check::JsonNumber { tolerance, .. }
    | Check::CsvTable { tolerance, .. } = check
        && !(tolerance.is_finite() && *tolerance >= 0.0)
    {
        cx.err(
            ErrorCode::BadValue,
            at.to_owned(),
            "tolerance must be a finite number >= 0",
        );
    }
}

fn check_booked(cx: &mut Ctx<'_>, at: &str, check: &Check, refs: &Refs<'_>) {
    let Check::Booked {
        title_contains,
        window_start,
        window_end,
        min_minutes,
        must_invite,
        must_not_invite,
        only_listed: _,
        joined_within_min,
    } = check
    else {
        return;
    };
    let mut time = |field: &str, v: &str| match refs.epoch.parse(v) {
        Ok(t) => Some(t),
        Err(e) => {
            cx.err(ErrorCode::BadTime, format!("{at}.{field}"), e.to_string());
            None
        }
    };
    let (from, to) = (
        time("window_start", window_start),
        time("window_end", window_end),
    );
    if let (Some(from), Some(to)) = (from, to) {
        let (first, last) = refs.run;
        if from < first || to > last {
            cx.err(
                ErrorCode::NeverMet,
                format!("{at}.window_start"),
                format!(
                    "the window {window_start}..{window_end} is not within the run ({}..{}), so no meeting can be booked in it",
                    refs.run_text.0,
                    refs.epoch.iso(last)
                ),
            );
        }
        if to <= from {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.window_end"),
                "the window must end after it starts",
            );
        } else if *min_minutes == 0 || u64::from(*min_minutes) * 60 > to.0 - from.0 {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.min_minutes"),
                format!(
                    "min_minutes must be between 1 and the window's length ({} minutes), found {min_minutes}",
                    (to.0 - from.0) / 60
                ),
            );
        }
    }
    if title_contains.as_ref().is_some_and(|t| t.trim().is_empty()) {
        cx.err(
            ErrorCode::BadValue,
            format!("{at}.title_contains"),
            "title_contains must not be empty (leave it out to accept any title)",
        );
    }
    if joined_within_min.is_some_and(|n| n > 24 * 60) {
        cx.err(
            ErrorCode::BadValue,
            format!("{at}.joined_within_min"),
            "joined_within_min must be at most a day (1440 minutes)",
        );
    }
    for (field, list) in [
        ("must_invite", must_invite),
        ("must_not_invite", must_not_invite),
    ] {
        for (i, k) in list.iter().enumerate() {
            if !refs.people.contains(k.as_str()) {
                cx.err(
                    ErrorCode::UnknownPerson,
                    format!("{at}.{field}[{i}]"),
                    format!("no person with key `{k}` in company.people"),
                );
            }
        }
    }
    for k in must_invite {
        if must_not_invite.contains(k) {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.must_not_invite"),
                format!("`{k}` is both in must_invite and in must_not_invite"),
            );
        }
    }
}

/// Most shapes in one drawing.
const MAX_SHAPES: usize = 20_000;
/// Coordinates and sizes beyond this are certainly mistakes.
const MAX_COORD: i64 = 16_384;
/// Longest text shape, in characters.
const MAX_TEXT_CHARS: usize = 200;

/// Drawings are rendered at load time, so their cost and validity are bounded here:
/// canvas sides, shape count, coordinates, colours (`#rrggbb`, at most 256 distinct),
/// thickness and scale, and text the built-in font can draw.
fn check_drawing(cx: &mut Ctx<'_>, at: &str, d: &Drawing) {
    use crate::raster::{MAX_COLOURS, MAX_SIDE, font_supports, parse_colour};
    for (name, v) in [("width", d.width), ("height", d.height)] {
        if !(1..=MAX_SIDE).contains(&v) {
            cx.err(
                ErrorCode::BadValue,
                format!("{at}.{name}"),
                format!("a drawing's {name} must be 1-{MAX_SIDE} pixels, found {v}"),
            );
        }
    }
    if d.shapes.len() > MAX_SHAPES {
        cx.err(
            ErrorCode::BadValue,
            format!("{at}.shapes"),
            format!(
                "a drawing may have at most {MAX_SHAPES} shapes, found {}",
                d.shapes.len()
            ),
        );
    }
    let mut colours: BTreeSet<[u8; 3]> = BTreeSet::new();
    let mut colour = |cx: &mut Ctx<'_>, path: String, c: &str| match parse_colour(c) {
        Some(rgb) => {
            colours.insert(rgb);
        }
        None => cx.err(
            ErrorCode::BadValue,
            path,
            format!("`{c}` is not a colour; write `#rrggbb` in hex, like `#d7301f`"),
        ),
    };
    colour(cx, format!("{at}.background"), &d.background);
    for (i, s) in d.shapes.iter().enumerate() {
        let sat = format!("{at}.shapes[{i}]");
        let (coords, sizes, c): (Vec<i32>, Vec<u32>, &str) = match s {
            Shape::Rect(x, y, w, h, fill) => (vec![*x, *y], vec![*w, *h], fill),
            Shape::Line(x1, y1, x2, y2, t, col) => {
                if !(1..=32).contains(t) {
                    cx.err(
                        ErrorCode::BadValue,
                        &sat,
                        format!("line thickness must be 1-32 pixels, found {t}"),
                    );
                }
                (vec![*x1, *y1, *x2, *y2], vec![], col)
            }
            Shape::Disc(x, y, r, fill) => (vec![*x, *y], vec![*r], fill),
            Shape::Text(x, y, scale, col, text) => {
                if !(1..=8).contains(scale) {
                    cx.err(
                        ErrorCode::BadValue,
                        &sat,
                        format!("text scale must be 1-8, found {scale}"),
                    );
                }
                let bad: BTreeSet<char> = text.chars().filter(|c| !font_supports(*c)).collect();
                if !bad.is_empty() {
                    cx.err(
                        ErrorCode::BadValue,
                        &sat,
                        format!(
                            "the built-in font cannot draw {}; it has space, letters, digits and the punctuation !\"#$%&'()*+,-./:;<=>?@[\\]^_",
                            bad.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join(", ")
                        ),
                    );
                }
                if text.chars().count() > MAX_TEXT_CHARS {
                    cx.err(
                        ErrorCode::BadValue,
                        &sat,
                        format!("text is longer than {MAX_TEXT_CHARS} characters"),
                    );
                }
                (vec![*x, *y], vec![], col)
            }
        };
        if coords.iter().any(|v| i64::from(*v).abs() > MAX_COORD)
            || sizes.iter().any(|v| i64::from(*v) > MAX_COORD)
        {
            cx.err(
                ErrorCode::BadValue,
                &sat,
                format!("coordinates and sizes must lie within +-{MAX_COORD} pixels"),
            );
        }
        colour(cx, sat, c);
    }
    if colours.len() > MAX_COLOURS {
        cx.err(
            ErrorCode::BadValue,
            format!("{at}.shapes"),
            format!(
                "a drawing may use at most {MAX_COLOURS} distinct colours, found {}",
                colours.len()
            ),
        );
    }
}

/// Largest knapsack table a budget check may need (items x capacity).
const MAX_BUDGET_CELLS: u64 = 20_000_000;
/// Most outings a map may allow.
const MAX_OUTINGS: usize = 20_000;

fn workspace_path(cx: &mut Ctx<'_>, at: &str, path: &str) {
    match VPath::parse(path) {
        Ok(p) if p.is_workspace() => {
            if let Some(m) = limits::path_problem(p.as_str()) {
                cx.err(ErrorCode::PathLimit, at.to_owned(), m);
            }
        }
        Ok(_) => cx.err(
            ErrorCode::BadPath,
            at.to_owned(),
            format!("`{path}`: answers are checked in `workspace/`"),
        ),
        Err(e) => cx.err(ErrorCode::BadPath, at.to_owned(), e.to_string()),
    }
}

fn tolerance_ok(cx: &mut Ctx<'_>, at: &str, v: f64) {
    if !(v.is_finite() && v >= 0.0) {
        cx.err(
            ErrorCode::BadValue,
            at.to_owned(),
            "tolerance must be a finite number >= 0",
        );
    }
}

/// Domain checks carry the instance data, so validation proves it consistent: the
/// stored best budget value is the exact optimum, outing maps are connected and
/// named uniquely, given outings and dates exist.
fn check_domain(cx: &mut Ctx<'_>, at: &str, d: &DomainCheck) {
    use crate::check::{budget_best, outings, parse_date, parse_hhmm};
    match d {
        DomainCheck::Budget(b) => {
            workspace_path(cx, at, &b.path);
            let mut ids = BTreeSet::new();
            for (i, (id, cost, value)) in b.items.iter().enumerate() {
                let key = id
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase();
                if key.is_empty() || !ids.insert(key) {
                    cx.err(
                        ErrorCode::DuplicateKey,
                        format!("{at}.items[{i}]"),
                        format!("item id `{id}` is empty or used twice"),
                    );
                }
                if *cost == 0 || !(value.is_finite() && *value >= 0.0) {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}.items[{i}]"),
                        "costs must be at least 1 and values finite and >= 0",
                    );
                } else if ((value * 100.0).round() - value * 100.0).abs() > 1e-6 {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}.items[{i}]"),
                        format!("value {value} has more than two decimals"),
                    );
                }
            }
            let cells = (b.items.len() as u64).saturating_mul(b.capacity.saturating_add(1));
            if b.items.is_empty() || b.capacity == 0 || cells > MAX_BUDGET_CELLS {
                cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    format!(
                        "a budget check needs items, a capacity of at least 1, and items x capacity <= {MAX_BUDGET_CELLS}"
                    ),
                );
            } else {
                let key = digest(&(b.capacity, &b.items));
                let best = match cx.budget_memo.get(&key) {
                    Some(best) => Some(*best),
                    None if cells <= cx.budget_cells_left => {
                        cx.budget_cells_left -= cells;
                        let (best, _) = budget_best(&b.items, b.capacity);
                        cx.budget_memo.insert(key, best);
                        Some(best)
                    }
                    None => {
                        // Each distinct instance is solved exactly; their total is
                        // bounded so that validation time stays linear in the file.
                        cx.err(
                            ErrorCode::TooMany,
                            at.to_owned(),
                            format!(
                                "the distinct budget checks of this scenario need more than {} knapsack cells (items x capacity) together",
                                limits::MAX_BUDGET_CELLS_TOTAL
                            ),
                        );
                        None
                    }
                };
                if let Some(best) = best
                    && (best as f64 / 100.0 - b.best).abs() > 0.004
                {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}.best"),
                        format!(
                            "best is {}, but the best selection within {} is worth {:.2}",
                            b.best,
                            b.capacity,
                            best as f64 / 100.0
                        ),
                    );
                }
            }
            match &b.aspect {
                BudgetAspect::Valid | BudgetAspect::WithinCapacity => {}
                BudgetAspect::Cost { relative, .. } | BudgetAspect::Value { relative, .. } => {
                    tolerance_ok(cx, at, *relative)
                }
                BudgetAspect::Optimal { tolerance } => tolerance_ok(cx, at, *tolerance),
            }
        }
        DomainCheck::Outing(o) => {
            workspace_path(cx, at, &o.path);
            let (s1, s2, s3) = o.map.stays;
            if o.map.sites.len() > 40
                || o.map.restaurants.len() > 40
                || u64::from(s1) + u64::from(s2) + u64::from(s3) > 24 * 60
            {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.map"),
                    "a map has at most 40 sites and 40 restaurants, and stays add up to at most a day",
                );
                return;
            }
            let key = digest(&o.map);
            if !cx.outing_memo.contains_key(&key) {
                if cx.outing_memo.len() >= limits::MAX_OUTING_MAPS {
                    cx.err(
                        ErrorCode::TooMany,
                        format!("{at}.map"),
                        format!(
                            "more than {} distinct outing maps in one scenario",
                            limits::MAX_OUTING_MAPS
                        ),
                    );
                    return;
                }
                match outings(&o.map) {
                    Err(e) => cx.err(ErrorCode::BadValue, format!("{at}.map"), e),
                    Ok(all) => {
                        cx.outing_memo.insert(key, all);
                    }
                }
            }
            let solved = cx.outing_memo.contains_key(&key);
            let all = cx.outing_memo.get(&key).map_or(0, Vec::len);
            if all > MAX_OUTINGS {
                cx.err(
                    ErrorCode::BadValue,
                    format!("{at}.map"),
                    format!("the map allows {all} outings; at most {MAX_OUTINGS}"),
                );
            }
            if let Some((m, l, a)) = &o.given
                && solved
            {
                let fold = |s: &str| {
                    s.split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .to_lowercase()
                };
                let index = |list: &[(String, u32, f64)], name: &str| {
                    let name = fold(name);
                    list.iter().position(|x| fold(&x.0) == name)
                };
                let found = match (
                    index(&o.map.sites, m),
                    index(&o.map.restaurants, l),
                    index(&o.map.sites, a),
                ) {
                    (Some(im), Some(il), Some(ia)) => cx.outing_memo.get(&key).is_some_and(|all| {
                        all.iter()
                            .any(|x| x.morning == im && x.lunch == il && x.afternoon == ia)
                    }),
                    _ => false,
                };
                if !found {
                    cx.err(
                        ErrorCode::BadValue,
                        format!("{at}.given"),
                        format!("({m}, {l}, {a}) is not a feasible outing on this map"),
                    );
                }
            }
            match &o.aspect {
                OutingAspect::Metric { tolerance, .. } => tolerance_ok(cx, at, *tolerance),
                OutingAspect::OnTime { limit } if parse_hhmm(limit).is_none() => cx.err(
                    ErrorCode::BadTime,
                    format!("{at}.aspect"),
                    format!("`{limit}` is not HH:MM"),
                ),
                _ => {}
            }
        }
        DomainCheck::DateIn {
            path, first, last, ..
        } => {
            workspace_path(cx, at, path);
            match (parse_date(first), parse_date(last)) {
                (Some(f), Some(l)) if f <= l => {}
                _ => cx.err(
                    ErrorCode::BadValue,
                    at.to_owned(),
                    format!("`{first}`..`{last}` is not a range of YYYY-MM-DD dates"),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;
    use crate::spec::CheckpointSpec;

    fn with_check(check: Check) -> Result<(), String> {
        let file = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../content/scenarios/meeting-only.ron"
        ));
        let text = std::fs::read_to_string(file).expect("bundled scenario");
        let mut s = parse_str(&text, file).expect("parses");
        s.tasks[0].checkpoints.push(CheckpointSpec {
            key: "booked".into(),
            description: String::new(),
            weight: 1,
            check,
            feedback: String::new(),
        });
        validate(&s, file, None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn booked() -> Check {
        Check::Booked {
            title_contains: Some("review".into()),
            window_start: "2025-10-08T13:00".into(),
            window_end: "2025-10-08T14:00".into(),
            min_minutes: 60,
            must_invite: vec!["npc/ugo-xu".into()],
            must_not_invite: vec!["npc/nadia-jensen".into()],
            only_listed: true,
            joined_within_min: Some(5),
        }
    }

    #[test]
    fn booked_checks_are_validated() {
        assert_eq!(with_check(booked()), Ok(()));
        // Written by hand, the optional fields may be left out.
        let short: Check = ron::from_str(
            r#"Booked(window_start: "2025-10-08T13:00", window_end: "2025-10-08T15:00", min_minutes: 30)"#,
        )
        .expect("optional fields default");
        assert!(matches!(
            &short,
            Check::Booked { title_contains: None, must_invite, only_listed: false, joined_within_min: None, .. } if must_invite.is_empty()
        ));
        assert_eq!(with_check(short), Ok(()));
        let bad = |f: fn(&mut Check)| {
            let mut c = booked();
            f(&mut c);
            with_check(c).unwrap_err()
        };
        let e = bad(|c| {
            if let Check::Booked { window_start, .. } = c {
                *window_start = "1pm".into();
            }
        });
        assert!(e.contains("window_start"), "{e}");
        let e = bad(|c| {
            if let Check::Booked { window_end, .. } = c {
                *window_end = "2025-10-08T12:00".into();
            }
        });
        assert!(e.contains("must end after it starts"), "{e}");
        let e = bad(|c| {
            if let Check::Booked { min_minutes, .. } = c {
                *min_minutes = 61;
            }
        });
        assert!(e.contains("min_minutes"), "{e}");
        let e = bad(|c| {
            if let Check::Booked { must_invite, .. } = c {
                must_invite.push("npc/nobody".into());
            }
        });
        assert!(e.contains("npc/nobody"), "{e}");
        let e = bad(|c| {
            if let Check::Booked {
                must_not_invite, ..
            } = c
            {
                must_not_invite.push("npc/ugo-xu".into());
            }
        });
        assert!(e.contains("both in must_invite"), "{e}");
        let e = bad(|c| {
            if let Check::Booked { title_contains, .. } = c {
                *title_contains = Some(" ".into());
            }
        });
        assert!(e.contains("title_contains"), "{e}");
    }
}

#[cfg(test)]
mod csv_table_tests {
    use super::*;

    /// A bundled kb_fix scenario (the generator sits above this crate).
    fn base() -> Scenario {
        let file = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../content/scenarios/kb-fix-medium.ron"
        ));
        let text = std::fs::read_to_string(file).expect("bundled scenario");
        crate::parse_str(&text, file).expect("parses")
    }

    fn errors_with(check: Check) -> Vec<String> {
        let mut s = base();
        s.tasks[0].checkpoints[0].check = check;
        match validate(&s, Path::new("v.ron"), None) {
            Ok(_) => Vec::new(),
            Err(e) => e.0.into_iter().map(|e| e.message).collect(),
        }
    }

    fn table(path: &str, expected: &str, columns: &[&str], tolerance: f64) -> Check {
        Check::CsvTable {
            path: path.into(),
            expected: expected.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            tolerance,
        }
    }

    #[test]
    fn csv_tables_are_validated() {
        let ok = table("workspace/a.csv", "x,y\n1,2\n", &["y"], 0.01);
        assert!(errors_with(ok).is_empty());
        let cases = [
            (
                table("drive/a.csv", "x,y\n1,2\n", &["y"], 0.0),
                "answers are checked",
            ),
            (
                table("workspace/a.csv", "x,y\n1,2\n", &["z"], 0.0),
                "column `z`",
            ),
            (
                table("workspace/a.csv", "x,y\n1,2\n", &[], 0.0),
                "at least one column",
            ),
            (
                table("workspace/a.csv", "x,y\n1\n", &["y"], 0.0),
                "has 1 cells",
            ),
            (table("workspace/a.csv", "", &["y"], 0.0), "header row"),
            (
                table("workspace/a.csv", "x,\"y\n", &["y"], 0.0),
                "header row",
            ),
            (
                table("workspace/a.csv", "x,y\n1,2\n", &["y"], f64::NAN),
                "NaN is not a finite number",
            ),
        ];
        for (check, want) in cases {
            let errs = errors_with(check);
            assert!(
                errs.iter().any(|e| e.contains(want)),
                "expected `{want}` in {errs:?}"
            );
        }
    }
}

#[cfg(test)]
mod message_sent_tests {
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

#[cfg(test)]
mod drawing_tests {
    use super::*;
    use crate::spec::{BudgetCheck, OutingCheck, OutingMap};

    fn problems(f: impl FnOnce(&mut Ctx<'_>)) -> Vec<String> {
        let mut cx = Ctx::new(Path::new("t.ron"));
        f(&mut cx);
        cx.errors
            .iter()
            .map(|e| format!("{:?}: {}", e.location, e.message))
            .collect()
    }

    #[test]
    fn drawings_are_bounded_and_their_colours_valid() {
        let ok = Drawing {
            width: 10,
            height: 10,
            background: "#ffffff".into(),
            shapes: vec![
                Shape::Rect(0, 0, 5, 5, "#000000".into()),
                Shape::Text(0, 0, 1, "#ff0000".into(), "Grid 0-9".into()),
            ],
        };
        assert!(problems(|cx| check_drawing(cx, "d", &ok)).is_empty());
        let bad = Drawing {
            width: 0,
            height: 4096,
            background: "white".into(),
            shapes: vec![
                Shape::Line(0, 0, 99_999, 0, 0, "#12345".into()),
                Shape::Text(0, 0, 9, "#000000".into(), "caf\u{e9} {x}".into()),
                Shape::Disc(0, 0, 3, "#00ff00".into()),
            ],
        };
        let p = problems(|cx| check_drawing(cx, "d", &bad)).join("\n");
        for want in [
            "width must be 1-2048",
            "height must be 1-2048",
            "`white` is not a colour",
            "thickness must be 1-32",
            "`#12345` is not a colour",
            "within +-16384",
            "scale must be 1-8",
            "cannot draw '{', '}', '\u{e9}'",
        ] {
            assert!(p.contains(want), "{want} in:\n{p}");
        }
        let many = Drawing {
            width: 10,
            height: 10,
            background: "#ffffff".into(),
            shapes: (0..300)
                .map(|i| Shape::Rect(0, 0, 1, 1, format!("#0000{:02x}", i % 256)).clone())
                .chain((0..2).map(|i| Shape::Rect(0, 0, 1, 1, format!("#01{i:02x}00"))))
                .collect(),
        };
        let p = problems(|cx| check_drawing(cx, "d", &many)).join("\n");
        assert!(p.contains("at most 256 distinct colours, found 259"), "{p}");
    }

    #[test]
    fn domain_checks_must_carry_consistent_data() {
        let mut b = BudgetCheck {
            path: "workspace/plan.json".into(),
            selection: "/selected".into(),
            aspect: BudgetAspect::Optimal { tolerance: 0.05 },
            capacity: 700,
            best: 1720.5,
            items: vec![
                ("A".into(), 400, 1000.5),
                ("B".into(), 300, 700.25),
                ("C".into(), 300, 720.0),
            ],
        };
        let run = |d: DomainCheck| problems(|cx| check_domain(cx, "c", &d)).join("\n");
        assert_eq!(run(DomainCheck::Budget(b.clone())), "");
        b.best = 1800.0;
        b.items.push(("a".into(), 0, 0.0));
        b.items.push(("D".into(), 5000, 1.234));
        b.path = "drive/plan.json".into();
        let p = run(DomainCheck::Budget(b));
        for want in [
            "answers are checked in `workspace/`",
            "`a` is empty or used twice",
            "costs must be at least 1",
            "value 1.234 has more than two decimals",
            "best is 1800, but the best selection within 700 is worth 1720.50",
        ] {
            assert!(p.contains(want), "{want} in:\n{p}");
        }
        let map = OutingMap {
            base: "Office".into(),
            sites: vec![("A".into(), 20, 4.0), ("B".into(), 0, 3.5)],
            restaurants: vec![("R".into(), 60, 4.5)],
            roads: vec![
                ("Office".into(), "A".into(), 10.0),
                ("A".into(), "R".into(), 5.0),
                ("R".into(), "B".into(), 4.0),
            ],
            depart: "09:00".into(),
            speed_kmh: 30,
            stays: (120, 90, 120),
        };
        let mut o = OutingCheck {
            path: "workspace/o.json".into(),
            aspect: OutingAspect::OnTime {
                limit: "17:30".into(),
            },
            given: Some(("A".into(), "R".into(), "B".into())),
            map: map.clone(),
        };
        assert_eq!(run(DomainCheck::Outing(o.clone())), "");
        o.given = Some(("A".into(), "R".into(), "A".into()));
        o.aspect = OutingAspect::OnTime {
            limit: "5pm".into(),
        };
        o.map.roads.pop();
        let p = run(DomainCheck::Outing(o.clone()));
        assert!(p.contains("do not connect"), "{p}");
        assert!(p.contains("`5pm` is not HH:MM"), "{p}");
        o.map = map;
        let p = run(DomainCheck::Outing(o));
        assert!(p.contains("(A, R, A) is not a feasible outing"), "{p}");
        let date = |first: &str, last: &str| DomainCheck::DateIn {
            path: "workspace/o.json".into(),
            pointer: "/d".into(),
            first: first.into(),
            last: last.into(),
        };
        assert_eq!(run(date("2025-11-02", "2025-11-02")), "");
        assert!(run(date("2025-11-03", "2025-11-02")).contains("not a range"));
        assert!(run(date("2025-11-31", "2025-12-02")).contains("not a range"));
    }
}

#[cfg(test)]
mod linear_tests {
    use super::*;
    use crate::spec::{BudgetCheck, OutingCheck, OutingMap};

    /// Ten items that all fit: the optimum is their total value.
    fn budget(i: usize) -> DomainCheck {
        let items: Vec<(String, u64, f64)> = (0..10)
            .map(|k| (format!("item {k}"), k as u64 + 1, (i * 10 + k) as f64))
            .collect();
        let best = items.iter().map(|x| x.2).sum();
        DomainCheck::Budget(BudgetCheck {
            path: "workspace/plan.json".into(),
            selection: "/selected".into(),
            aspect: BudgetAspect::Valid,
            capacity: 99_999,
            best,
            items,
        })
    }

    #[test]
    fn budget_checks_cost_at_most_the_total_cell_budget() {
        // The reported attack: 400 budget checks in one file, each solved afresh.
        // Each of these needs 10 x 100,000 = 1,000,000 knapsack cells.
        let mut cx = Ctx::new(Path::new("t.ron"));
        for i in 0..400 {
            check_domain(&mut cx, &format!("c{i}"), &budget(i));
        }
        let spent = limits::MAX_BUDGET_CELLS_TOTAL - cx.budget_cells_left;
        assert_eq!(spent, 40 * 1_000_000);
        assert_eq!(cx.budget_memo.len(), 40);
        assert_eq!(cx.errors.len(), 360);
        assert!(cx.errors.iter().all(|e| e.code == ErrorCode::TooMany));

        // The same instance repeated is solved once, however often it appears.
        let mut cx = Ctx::new(Path::new("t.ron"));
        for i in 0..400 {
            check_domain(&mut cx, &format!("c{i}"), &budget(7));
        }
        assert!(cx.errors.is_empty(), "{:?}", cx.errors);
        assert_eq!(cx.budget_memo.len(), 1);
        assert_eq!(
            limits::MAX_BUDGET_CELLS_TOTAL - cx.budget_cells_left,
            1_000_000
        );
    }

    #[test]
    fn outing_maps_are_solved_once_each_and_bounded_in_number() {
        let map = |i: u32| OutingMap {
            base: "Office".into(),
            sites: vec![("A".into(), 20, 4.0), ("B".into(), i, 3.5)],
            restaurants: vec![("R".into(), 60, 4.5)],
            roads: vec![
                ("Office".into(), "A".into(), 10.0),
                ("A".into(), "R".into(), 5.0),
                ("R".into(), "B".into(), 4.0),
            ],
            depart: "09:00".into(),
            speed_kmh: 30,
            stays: (120, 90, 120),
        };
        let check = |i: u32| {
            DomainCheck::Outing(OutingCheck {
                path: "workspace/o.json".into(),
                aspect: OutingAspect::OnTime {
                    limit: "17:30".into(),
                },
                given: Some(("A".into(), "R".into(), "B".into())),
                map: map(i),
            })
        };
        let mut cx = Ctx::new(Path::new("t.ron"));
        for i in 0..300 {
            check_domain(&mut cx, "c", &check(i));
        }
        assert_eq!(cx.outing_memo.len(), limits::MAX_OUTING_MAPS);
        assert_eq!(cx.errors.len(), 100);
        assert!(cx.errors.iter().all(|e| e.code == ErrorCode::TooMany));
        let mut cx = Ctx::new(Path::new("t.ron"));
        for _ in 0..300 {
            check_domain(&mut cx, "c", &check(0));
        }
        assert!(cx.errors.is_empty(), "{:?}", cx.errors);
        assert_eq!(cx.outing_memo.len(), 1);
    }

    #[test]
    fn stays_that_overflow_are_an_error_not_a_panic() {
        let mut cx = Ctx::new(Path::new("t.ron"));
        let o = OutingCheck {
            path: "workspace/o.json".into(),
            aspect: OutingAspect::OnTime {
                limit: "17:30".into(),
            },
            given: None,
            map: OutingMap {
                base: "Office".into(),
                sites: vec![],
                restaurants: vec![],
                roads: vec![],
                depart: "09:00".into(),
                speed_kmh: 30,
                stays: (u32::MAX, u32::MAX, 1),
            },
        };
        check_domain(&mut cx, "c", &DomainCheck::Outing(o));
        assert_eq!(cx.errors.len(), 1);
        assert!(cx.errors[0].message.contains("stays add up"));
    }
}

#[cfg(test)]
mod walk_tests {
    use super::*;

    #[test]
    fn the_walk_names_fields_variants_and_indices() {
        let file = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../content/scenarios/meeting-only.ron"
        ));
        let text = std::fs::read_to_string(file).expect("bundled scenario");
        let mut s = crate::parse_str(&text, file).expect("parses");
        assert!(limits::walk(&s).is_empty());
        s.tasks[0].checkpoints[0].check = Check::All(vec![Check::JsonNumber {
            path: "workspace/a.json".into(),
            pointer: "/x".into(),
            expected: 1.0,
            tolerance: f64::INFINITY,
        }]);
        s.clock.costs.insert("k".repeat(300), Default::default());
        let found: Vec<String> = limits::walk(&s)
            .into_iter()
            .map(|b| format!("{} {}", b.code, b.path))
            .collect();
        assert_eq!(
            found,
            [
                format!("TB0020 clock.costs.{}", "k".repeat(300)),
                "TB0023 tasks[0].checkpoints[0].check.All[0].JsonNumber.tolerance".to_owned(),
            ]
        );
    }
}
