//! The agent's tools: the only way an agent reaches the world.
//!
//! A call is a tool name and a JSON arguments text. It is parsed into the tool's
//! argument struct ([`args`], from which the schema the agent is shown is derived),
//! and executed as the session's intern — no tool takes an
//! identity argument, and one that tries is refused as impersonation. Every failure
//! is a structured [`ToolError`] with a kind the engine counts; no input panics.

mod calendar;
mod chat;
mod compute;
mod files;
mod website;

use bevy_ecs::prelude::*;
use serde_json::{Value, json};

/// Whether `run_python` can run here (python3 is found, the bubblewrap sandbox
/// works) and how its limits are enforced on this host; the sandbox itself is
/// internal.
pub use crate::python::{
    CgroupVersion, Containment, Enforcement, containment, python_available, sandbox_available,
};
pub use compute::{LivePython, PythonBackend, RecordedPython, outcome_from_record};
pub use tbsim_core::protocol::args::ToolArgs;
pub use tbsim_core::protocol::catalogue::{TOOL_NAMES, ToolSpec, catalogue, check_args};
pub use tbsim_core::protocol::{Attachment, ErrorKind, ToolCall, ToolError};

use crate::time::{Epoch, SimDuration, SimTime};
pub(crate) use crate::world::display_name;
use crate::world::{Clock, History, Index, Intern, Npc, Task, TaskState};

/// How far the clock moves after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// By a fixed span.
    By(SimDuration),
    /// To an instant.
    Until(SimTime),
    /// Until a notification arrives (or the instant).
    UntilNotification(SimTime),
}

/// The outcome of executing one call, before time advances.
#[derive(Debug)]
pub struct Exec {
    /// Result value or error.
    pub result: Result<Value, ToolError>,
    /// Attachments.
    pub attachments: Vec<Attachment>,
    /// Data kept in the trajectory for replay (not shown to the agent).
    pub record: Option<Value>,
    /// Time advance.
    pub advance: Advance,
    /// Ends the run.
    pub finish: bool,
}

impl Exec {
    fn ok(v: Value, cost: SimDuration) -> Exec {
        Exec {
            result: Ok(v),
            attachments: Vec::new(),
            record: None,
            advance: Advance::By(cost),
            finish: false,
        }
    }
    /// An error outcome.
    pub fn from_error(e: ToolError) -> Exec {
        // Failed calls cost a minute: the agent spent effort, and a loop of bad calls
        // still lets the day move on.
        Exec {
            result: Err(e),
            attachments: Vec::new(),
            record: None,
            advance: Advance::By(SimDuration::minutes(1)),
            finish: false,
        }
    }
}

pub(crate) type ToolOutcome = Result<Value, ToolError>;

const IDENTITY_FIELDS: &[&str] = &[
    "sender",
    "from",
    "as",
    "as_user",
    "applicant",
    "agent",
    "agent_name",
    "identity",
    "user",
    "on_behalf_of",
    "author",
    "organizer",
    "acting_as",
];

/// Parses, validates and executes a call against the world at the current time.
pub fn execute(world: &mut World, call: &ToolCall, ctx: &mut CallContext<'_>) -> Exec {
    let cat = catalogue();
    let Some(spec) = cat.iter().find(|t| t.name == call.name) else {
        return Exec::from_error(ToolError::new(
            ErrorKind::UnknownTool,
            format!(
                "there is no tool `{}`; available tools: {}",
                call.name,
                TOOL_NAMES.join(", ")
            ),
        ));
    };
    // Over-long arguments are refused unread (a model's cut ones arrive as a marker).
    if let Some(m) = crate::protocol::arguments::refusal(&call.arguments) {
        return Exec::from_error(ToolError::new(
            ErrorKind::Schema,
            format!("{}: {m}", spec.name),
        ));
    }
    let text = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    let args: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Exec::from_error(ToolError::new(
                ErrorKind::MalformedJson,
                format!(
                    "the arguments are not valid JSON ({e}); send an object like {{\"path\": \"drive\"}}"
                ),
            ));
        }
    };
    if let Some(field) = args
        .as_object()
        .and_then(|m| m.keys().find(|k| IDENTITY_FIELDS.contains(&k.as_str())))
    {
        return Exec::from_error(ToolError::new(
            ErrorKind::Impersonation,
            format!(
                "`{field}` is not accepted: you always act as yourself, and the session fixes who that is; remove the field"
            ),
        ));
    }
    // The arguments are read into the tool's struct here and nowhere else. When they
    // do not fit, the schema walker says which field and what it expects, in the words
    // agents have always been shown (serde's own message is the fallback; the two
    // agree on what fits, which the catalogue's tests hold).
    let parsed = match ToolArgs::parse(spec.name, &args) {
        Ok(p) => p,
        Err(e) => {
            let m = check_args(&spec.parameters, &args).err().unwrap_or(e);
            return Exec::from_error(ToolError::new(
                ErrorKind::Schema,
                format!("{}: {m}", spec.name),
            ));
        }
    };
    record_call(world, spec.name);
    let cost = world
        .resource::<Clock>()
        .costs
        .get(spec.name)
        .copied()
        .unwrap_or(SimDuration::minutes(u64::from(spec.cost_minutes)));
    let out = match parsed {
        ToolArgs::ListColleagues(_) => chat::list_colleagues(world).map(|v| Exec::ok(v, cost)),
        ToolArgs::SendMessage(a) => {
            chat::send_message(world, &a.to, &a.text, ctx).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::CreateGroup(a) => {
            let members: Vec<&str> = a.members.iter().map(String::as_str).collect();
            chat::create_group(world, &a.name, &members).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::SendGroupMessage(a) => {
            chat::send_group_message(world, &a.group, &a.text, ctx).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::ReadMessages(a) => {
            chat::read_messages(world, a.with.as_deref()).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::ListFolder(a) => {
            files::list_folder(world, a.path.as_deref()).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::ReadFile(a) => files::read_file(world, &a.path).map(|(v, att)| Exec {
            attachments: att,
            ..Exec::ok(v, cost)
        }),
        ToolArgs::WriteFile(a) => {
            files::write_file(world, &a.path, &a.content).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::CopyFromDrive(a) => {
            files::copy_from_drive(world, &a.path, a.to.as_deref()).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::AvailableRooms(a) => {
            calendar::available_rooms(world, &a.start, &a.end).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::BookMeeting(a) => {
            let attendees: Vec<&str> = a.attendees.iter().map(String::as_str).collect();
            calendar::book_meeting(world, &a.title, &a.room, &a.start, &a.end, &attendees)
                .map(|v| Exec::ok(v, cost))
        }
        ToolArgs::CancelBooking(a) => {
            calendar::cancel_booking(world, &a.meeting).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::JoinMeeting(a) => {
            calendar::join_meeting(world, &a.meeting).map(|(v, end)| Exec {
                advance: Advance::Until(end),
                ..Exec::ok(v, cost)
            })
        }
        ToolArgs::MyCalendar(_) => calendar::my_calendar(world).map(|v| Exec::ok(v, cost)),
        ToolArgs::MyTasks(_) => my_tasks(world).map(|v| Exec::ok(v, cost)),
        ToolArgs::Calculator(a) => compute::calculator(&a.expression).map(|v| Exec::ok(v, cost)),
        ToolArgs::RunPython(a) => {
            // Failed calls keep their record too: replay needs every outcome.
            let (result, record) = compute::run_python(world, &a.code, ctx);
            let exec = match result {
                Ok(v) => Exec::ok(v, cost),
                Err(e) => Exec::from_error(e),
            };
            Ok(Exec { record, ..exec })
        }
        ToolArgs::ListServices(_) => website::list_services(world).map(|v| Exec::ok(v, cost)),
        ToolArgs::ServiceHealth(a) => {
            website::service_health(world, a.service.as_deref()).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::PageLoadTimes(a) => {
            website::page_load_times(world, a.window.as_deref(), a.page.as_deref())
                .map(|v| Exec::ok(v, cost))
        }
        ToolArgs::ErrorLogs(a) => {
            website::error_logs(world, &a.service, a.lines.map(|n| n.0)).map(|v| Exec::ok(v, cost))
        }
        ToolArgs::RebootServer(_) => website::reboot_server().map(|v| Exec::ok(v, cost)),
        ToolArgs::Wait(a) => wait(world, a.until.as_deref(), a.minutes.map(|n| n.0)),
        ToolArgs::Finish(_) => Ok(Exec {
            finish: true,
            ..Exec::ok(json!({"finished": true}), SimDuration(0))
        }),
    };
    out.unwrap_or_else(Exec::from_error)
}

/// Remembers the first well-formed call of each tool, for `Check::ToolCalled`. Only
/// the first call changes what a check can see, so only it bumps the revision.
fn record_call(world: &mut World, tool: &str) {
    let now = world.resource::<Clock>().now;
    let mut history = world.resource_mut::<History>();
    if history.tools_called.contains_key(tool) {
        return;
    }
    history.tools_called.insert(tool.to_owned(), now);
    crate::world::touch(world, crate::world::Input::Tool(tool.to_owned()));
}

/// Per-call context from the simulation.
pub struct CallContext<'a> {
    /// Where `run_python` goes.
    pub python: &'a mut dyn PythonBackend,
    /// Who answers messages to colleagues.
    pub npc: &'a mut dyn crate::npc::NpcEngine,
    /// Decision step number.
    pub step: u64,
    /// Call id.
    pub call_id: &'a str,
}

impl std::fmt::Debug for CallContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("step", &self.step)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

fn wait(world: &mut World, until: Option<&str>, minutes: Option<u64>) -> Result<Exec, ToolError> {
    let clock = world.resource::<Clock>();
    let now = clock.now;
    let end = clock.end;
    let target = match (until, minutes) {
        (Some(_), Some(_)) => {
            return Err(ToolError::new(
                ErrorKind::Schema,
                "wait: give either `until` or `minutes`, not both",
            ));
        }
        (Some(u), None) => {
            let t = parse_when(world, u)?;
            if t <= now {
                return Err(ToolError::new(
                    ErrorKind::Invalid,
                    format!(
                        "{} is not in the future (it is now {}); time never runs backwards",
                        u,
                        clock.epoch.display(now)
                    ),
                ));
            }
            Some(t.min(end))
        }
        (None, Some(m)) => {
            if m < 1 {
                return Err(ToolError::new(
                    ErrorKind::Invalid,
                    "minutes must be at least 1",
                ));
            }
            Some(now.after(SimDuration::minutes(m.min(1_000_000))).min(end))
        }
        (None, None) => None,
    };
    Ok(match target {
        // Like a person waiting, the agent is woken early by any notification.
        Some(t) => Exec {
            advance: Advance::UntilNotification(t),
            ..Exec::ok(
                json!({"wake_at": world.resource::<Clock>().epoch.display(t), "note": "a notification wakes you earlier"}),
                SimDuration(0),
            )
        },
        None => Exec {
            advance: Advance::UntilNotification(end),
            ..Exec::ok(
                json!({"waited": "until the next notification"}),
                SimDuration(0),
            )
        },
    })
}

fn my_tasks(world: &mut World) -> ToolOutcome {
    let epoch = world.resource::<Clock>().epoch;
    let mut q = world.query::<&Task>();
    let mut tasks: Vec<&Task> = q
        .iter(world)
        // A task closed without ever being released (its gate never opened) was never
        // the agent's: its objective must not surface when its deadline passes.
        .filter(|t| t.state != TaskState::Pending && t.released_at.is_some())
        .collect();
    tasks.sort_by_key(|t| t.order);
    let list: Vec<Value> = tasks
        .iter()
        .map(|t| {
            json!({
                "task": t.spec.key, "title": t.spec.title, "objective": t.spec.objective,
                "deadline": epoch.parse(&t.spec.deadline).map(|d| epoch.display(d)).unwrap_or_default(),
                "priority": t.spec.priority, "status": if t.state == TaskState::Closed { "deadline passed" } else { "open" },
                "released_at": t.released_at.map(|r| epoch.display(r)),
            })
        })
        .collect();
    Ok(json!({"tasks": list}))
}

/// Parses `HH:MM` (on the current day) or `YYYY-MM-DDTHH:MM`.
pub(crate) fn parse_when(world: &World, s: &str) -> Result<SimTime, ToolError> {
    let clock = world.resource::<Clock>();
    let s = s.trim();
    let bad = || {
        ToolError::new(
            ErrorKind::Schema,
            format!("`{s}` is not a time; use `HH:MM` (today) or `YYYY-MM-DDTHH:MM`"),
        )
    };
    if s.len() <= 8 && !s.contains('-') {
        let t = clock.epoch.parse(s).map_err(|_| bad())?;
        Ok(SimTime(Epoch::day_of(clock.now) * 86_400 + t.0))
    } else {
        clock.epoch.parse(s).map_err(|_| bad())
    }
}

/// Resolves a colleague by key or (case-insensitive) full name.
pub(crate) fn resolve_person(world: &World, who: &str) -> Result<(String, Entity), ToolError> {
    let idx = world.resource::<Index>();
    let me = world.resource::<Intern>();
    let w = who.trim();
    if w == me.key || w.eq_ignore_ascii_case(&me.name) {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            "that is you; pick a colleague",
        ));
    }
    let key = if w.starts_with("npc/") {
        Some(w.to_owned())
    } else {
        idx.names.get(&w.to_lowercase()).cloned()
    };
    match key.and_then(|k| idx.keys.get(&k).map(|e| (k, *e))) {
        Some((k, e)) if world.get::<Npc>(e).is_some() => Ok((k, e)),
        _ => Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no colleague called `{w}`; use list_colleagues to see keys and names"),
        )),
    }
}
