//! Chat tools: colleagues, direct and group messages, and the NPC replies they cause.

use std::collections::BTreeSet;

use bevy_ecs::prelude::*;
use rand::RngExt;
use serde_json::{Value, json};

use super::{CallContext, ErrorKind, ToolError, ToolOutcome, display_name, resolve_person};
use crate::npc::{ASK_WHAT, ActiveClue, BE_SPECIFIC, Line, Named, NpcQuery, Unspecific};
use crate::protocol::EndReason;
use crate::queue::EventClass;
use crate::time::SimDuration;
use crate::world::{
    ChatMessage, Clock, Company, History, Index, Intern, Key, Npc, Queue, Rngs, RunState, SimEvent,
    Specificity, Thread, Trace,
};

const MAX_TEXT: usize = 4000;

pub(super) fn list_colleagues(world: &mut World) -> ToolOutcome {
    let mut q = world.query::<(&Key, &Npc)>();
    let mut people: Vec<(&Key, &Npc)> = q.iter(world).collect();
    people.sort_by(|a, b| a.0.cmp(b.0));
    let list: Vec<Value> =
        people.iter().map(|(k, n)| json!({"key": k.0, "name": n.name, "department": n.department, "position": n.position})).collect();
    Ok(json!({"colleagues": list}))
}

fn check_text(text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::new(ErrorKind::Invalid, "the message is empty"));
    }
    if text.chars().count() > MAX_TEXT {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("the message is longer than {MAX_TEXT} characters"),
        ));
    }
    Ok(())
}

/// The DM thread with a person, created on first use.
fn dm_thread(world: &mut World, person: &str) -> Entity {
    let key = format!("thread/dm/{}", person.trim_start_matches("npc/"));
    if let Some(e) = world.resource::<Index>().keys.get(&key) {
        return *e;
    }
    let me = world.resource::<Intern>().key.clone();
    let title = display_name(world, person);
    let e = world
        .spawn((
            Key(key.clone()),
            Thread {
                title,
                members: vec![me, person.to_owned()],
                group: false,
                messages: Vec::new(),
                read: 0,
            },
        ))
        .id();
    world.resource_mut::<Index>().keys.insert(key, e);
    e
}

fn post(world: &mut World, thread: Entity, text: &str) {
    let now = world.resource::<Clock>().now;
    let me = world.resource::<Intern>().key.clone();
    if let Some(mut t) = world.get_mut::<Thread>(thread) {
        t.messages.push(ChatMessage {
            t: now,
            from: me,
            text: text.to_owned(),
        });
        t.read = t.messages.len();
    }
    let key = world
        .get::<Key>(thread)
        .map(|k| k.0.clone())
        .unwrap_or_default();
    crate::world::touch(world, crate::world::Input::Thread(key));
}

/// Whether the message just posted in `thread` is a specific question: its
/// concepts as judged (what clue triggers are matched against) if it is, else
/// what colleagues say instead.
fn verdict(world: &mut World, thread: Entity) -> Result<BTreeSet<String>, String> {
    let Some(t) = world.get::<Thread>(thread) else {
        return Ok(BTreeSet::new());
    };
    let text = t.messages.last().map_or("", |m| m.text.as_str());
    // The sender's previous message here: a sentence relayed in two pieces.
    let me = t.messages.last().map(|m| m.from.as_str());
    let earlier = t
        .messages
        .iter()
        .rev()
        .skip(1)
        .find(|m| Some(m.from.as_str()) == me)
        .map(|m| m.text.as_str());
    let addressee = addressee(world, t);
    match world
        .resource::<Specificity>()
        .0
        .judge_message_concepts(text, addressee, earlier)
    {
        Ok(words) => Ok(words),
        Err(Unspecific::Vague) => Err(ASK_WHAT.to_owned()),
        Err(_) => Err(BE_SPECIFIC.to_owned()),
    }
}

/// The one colleague a direct thread is with (`None` for a group).
fn addressee<'w>(world: &'w World, t: &Thread) -> Option<&'w str> {
    if t.group {
        return None;
    }
    let key = t.members.get(1)?;
    let e = world.resource::<Index>().keys.get(key).copied()?;
    world.get::<Npc>(e).map(|n| n.name.as_str())
}

/// What `npc` says to the message just posted in `thread`: the engine decides from
/// the clue rules whose conditions hold now (a task's clues only once it is
/// released). `direct` messages always get an answer; group members may stay
/// silent. `verdict` is the message's: its concepts if it is specific, else what to
/// say instead of any clue. An engine failure ends the run as an infrastructure
/// failure (the message itself was sent).
fn ask(
    world: &mut World,
    ctx: &mut CallContext<'_>,
    npc_key: &str,
    npc: Entity,
    thread: Entity,
    direct: bool,
    verdict: &Result<BTreeSet<String>, String>,
) -> Option<(String, Vec<String>)> {
    // Borrowed, not cloned: the world is only read until the engine has answered.
    let n = world.get::<Npc>(npc)?;
    let thread_key = world.get::<Key>(thread).map(|k| k.0.as_str())?;
    let messages: &[ChatMessage] = world
        .get::<Thread>(thread)
        .map_or(&[], |t| t.messages.as_slice());
    let scope = &world.resource::<Specificity>().0;
    let mut clarify = verdict.as_ref().err().cloned();
    let mut clues: Vec<ActiveClue> = Vec::new();
    if let Ok(words) = verdict {
        let history = world.resource::<History>();
        let active: Vec<_> = n
            .clues
            .iter()
            .filter(|c| {
                c.task.as_ref().is_none_or(|t| history.released.contains(t))
                    && c.after.iter().all(|cond| history.holds(cond))
            })
            .collect();
        // What the colleague may tell now: whom a shared first name means to them.
        let known: Vec<_> = active.iter().map(|c| &c.trigger).collect();
        for c in active {
            let mut triggered = c.trigger.matches(words);
            if triggered {
                match scope.who_for(words, &c.trigger, &known) {
                    Named::Clear => {}
                    Named::Other => triggered = false,
                    Named::Which(q) => {
                        clarify = Some(q);
                        break;
                    }
                }
            }
            clues.push(ActiveClue {
                key: c.key.clone(),
                // Exclusions are matching machinery, not subjects.
                topics: c
                    .topics
                    .iter()
                    .map(|g| {
                        g.iter()
                            .filter(|a| !a.trim().starts_with('!'))
                            .cloned()
                            .collect::<Vec<_>>()
                    })
                    .filter(|g| !g.is_empty())
                    .collect(),
                response: c.response.clone(),
                triggered,
                near: !triggered && !c.trigger.excluded(words) && c.trigger.near(words),
            });
        }
        if clarify.is_some() {
            clues.clear();
        }
    }
    let conversation: Vec<Line> = messages
        .iter()
        .map(|m| Line {
            from: m.from.clone(),
            name: display_name(world, &m.from),
            mine: m.from == npc_key,
            text: m.text.clone(),
        })
        .collect();
    let intern = world.resource::<Intern>().name.as_str();
    let company = world.resource::<Company>().0.as_str();
    let q = NpcQuery {
        step: ctx.step,
        call_id: ctx.call_id,
        npc: npc_key,
        name: &n.name,
        department: &n.department,
        position: &n.position,
        persona: &n.persona,
        default_reply: &n.default_reply,
        intern,
        company,
        thread: thread_key,
        direct,
        conversation,
        clues,
        clarify,
    };
    let now = world.resource::<Clock>().now;
    let (reply, record, failure) = match ctx.npc.reply(&q) {
        Ok(a) => (a.reply, a.record, None),
        Err(e) => (None, e.record.clone().map(|r| *r), Some(e)),
    };
    if let Some(record) = record {
        let line = crate::trajectory::Line::Npc(crate::trajectory::NpcLine {
            step: ctx.step,
            call: ctx.call_id.to_owned(),
            npc: npc_key.to_owned(),
            t: now,
            record,
        });
        world.resource_mut::<Trace>().0.push(&line);
    }
    if let Some(e) = failure {
        let mut run = world.resource_mut::<RunState>();
        run.infra_error.get_or_insert(e.to_string());
        run.over.get_or_insert(EndReason::InfraError);
    }
    reply
}

/// Schedules a reply with the person's seeded delay, never overtaking their earlier replies.
fn schedule_reply(
    world: &mut World,
    npc_key: &str,
    npc: Entity,
    thread: &str,
    reply: (String, Vec<String>),
) -> u64 {
    let now = world.resource::<Clock>().now;
    let (lo, hi, busy) = {
        let n = world.get::<Npc>(npc).expect("resolved person");
        (n.reply_minutes.0, n.reply_minutes.1, n.busy_until)
    };
    let minutes = world
        .resource_mut::<Rngs>()
        .0
        .get(&format!("{npc_key}/reply"))
        .random_range(lo..=hi);
    let at = now
        .after(SimDuration::minutes(u64::from(minutes)))
        .max(busy.after(SimDuration(1)));
    if let Some(mut n) = world.get_mut::<Npc>(npc) {
        n.busy_until = at;
    }
    let (text, clues) = reply;
    world.resource_mut::<Queue>().0.push(
        at,
        EventClass::Delivery,
        SimEvent::Deliver {
            thread: thread.to_owned(),
            from: npc_key.to_owned(),
            text,
            clues,
        },
    );
    at.since(now).as_minutes()
}

pub(super) fn send_message(
    world: &mut World,
    to: &str,
    text: &str,
    ctx: &mut CallContext<'_>,
) -> ToolOutcome {
    let (key, npc) = resolve_person(world, to)?;
    check_text(text)?;
    let thread = dm_thread(world, &key);
    post(world, thread, text);
    let thread_key = world
        .get::<Key>(thread)
        .map(|k| k.0.clone())
        .unwrap_or_default();
    let verdict = verdict(world, thread);
    if let Some(reply) = ask(world, ctx, &key, npc, thread, true, &verdict) {
        schedule_reply(world, &key, npc, &thread_key, reply);
    }
    Ok(
        json!({"sent_to": display_name(world, &key), "thread": thread_key, "note": "the reply will arrive as a notification"}),
    )
}

pub(super) fn create_group(world: &mut World, name: &str, members: &[&str]) -> ToolOutcome {
    if name.trim().is_empty() {
        return Err(ToolError::new(ErrorKind::Invalid, "the group needs a name"));
    }
    let me = world.resource::<Intern>().key.clone();
    let mut keys = vec![me];
    for m in members {
        let (k, _) = resolve_person(world, m)?;
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    if keys.len() < 3 {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            "a group needs at least two colleagues besides you; use send_message for one person",
        ));
    }
    let n = world.resource::<Index>().groups.len() + 1;
    let key = format!("thread/group/{n}");
    let names: Vec<String> = keys.iter().map(|k| display_name(world, k)).collect();
    let e = world
        .spawn((
            Key(key.clone()),
            Thread {
                title: name.trim().to_owned(),
                members: keys,
                group: true,
                messages: Vec::new(),
                read: 0,
            },
        ))
        .id();
    let mut idx = world.resource_mut::<Index>();
    idx.keys.insert(key.clone(), e);
    idx.groups.push(key.clone());
    Ok(json!({"group": key, "name": name.trim(), "members": names}))
}

pub(super) fn send_group_message(
    world: &mut World,
    group: &str,
    text: &str,
    ctx: &mut CallContext<'_>,
) -> ToolOutcome {
    check_text(text)?;
    let e = world
        .resource::<Index>()
        .keys
        .get(group.trim())
        .copied()
        .filter(|e| world.get::<Thread>(*e).is_some_and(|t| t.group))
        .ok_or_else(|| ToolError::new(ErrorKind::NotFound, format!("no group `{group}`; create one with create_group, or read_messages to list yours")))?;
    post(world, e, text);
    let members = world
        .get::<Thread>(e)
        .map(|t| t.members.clone())
        .unwrap_or_default();
    let verdict = verdict(world, e);
    for m in members.iter().skip(1) {
        let Some(npc) = world.resource::<Index>().keys.get(m).copied() else {
            continue;
        };
        if let Some(reply) = ask(world, ctx, m, npc, e, verdict.is_err(), &verdict) {
            schedule_reply(world, m, npc, group.trim(), reply);
        }
        // A message that is not specific gets one request to be specific, from the
        // group's first colleague, whoever holds what.
        if verdict.is_err() {
            break;
        }
    }
    Ok(
        json!({"sent_to": group.trim(), "members": members.len() - 1, "note": "members who know something relevant will reply as notifications"}),
    )
}

pub(super) fn read_messages(world: &mut World, with: Option<&str>) -> ToolOutcome {
    let epoch = world.resource::<Clock>().epoch;
    let Some(with) = with else {
        let mut q = world.query::<(&Key, &Thread)>();
        let mut threads: Vec<(&Key, &Thread)> = q.iter(world).collect();
        threads.sort_by(|a, b| a.0.cmp(b.0));
        let list: Vec<Value> = threads
            .iter()
            .map(|(k, t)| {
                json!({"thread": k.0, "title": t.title, "group": t.group, "messages": t.messages.len(),
                       "unread": t.messages.len() - t.read.min(t.messages.len()),
                       "last": t.messages.last().map(|m| epoch.display(m.t))})
            })
            .collect();
        return Ok(json!({"threads": list}));
    };
    let w = with.trim();
    let key = if w.starts_with("thread/") {
        w.to_owned()
    } else {
        let (p, _) = resolve_person(world, w)?;
        format!("thread/dm/{}", p.trim_start_matches("npc/"))
    };
    let Some(e) = world
        .resource::<Index>()
        .keys
        .get(&key)
        .copied()
        .filter(|e| world.get::<Thread>(*e).is_some())
    else {
        return Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no conversation `{w}` yet; read_messages without arguments lists them"),
        ));
    };
    let msgs = world
        .get::<Thread>(e)
        .map(|t| t.messages.clone())
        .unwrap_or_default();
    let list: Vec<Value> = msgs.iter().map(|m| json!({"at": epoch.display(m.t), "from": display_name(world, &m.from), "text": m.text})).collect();
    if let Some(mut t) = world.get_mut::<Thread>(e) {
        t.read = t.messages.len();
    }
    Ok(json!({"thread": key, "messages": list}))
}
