//! Calendar tools: rooms, bookings and joining meetings.

use bevy_ecs::prelude::*;
use serde_json::{Value, json};

use super::{ErrorKind, ToolError, ToolOutcome, display_name, parse_when, resolve_person};
use crate::queue::EventClass;
use crate::time::{Epoch, SimTime};
use crate::world::{Clock, Index, Intern, Key, Meeting, Queue, Room, SimEvent};

fn interval(world: &World, start: &str, end: &str) -> Result<(SimTime, SimTime), ToolError> {
    let (s, e) = (parse_when(world, start)?, parse_when(world, end)?);
    let clock = world.resource::<Clock>();
    if e <= s {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            "the end must be after the start",
        ));
    }
    let day = Epoch::day_of(s) * 86_400;
    let (open, close) = clock.office;
    if Epoch::day_of(s) != Epoch::day_of(SimTime(e.0 - 1)) || s.0 - day < open || e.0 - day > close
    {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "meetings must fit within office hours, {} to {}, on one day",
                Epoch::clock(SimTime(open)),
                Epoch::clock(SimTime(close))
            ),
        ));
    }
    Ok((s, e))
}

fn overlaps(m: &Meeting, s: SimTime, e: SimTime) -> bool {
    !m.cancelled && m.start < e && m.end > s
}

fn rooms(world: &mut World) -> Vec<(String, String, u32)> {
    let mut q = world.query::<(&Key, &Room)>();
    let mut v: Vec<(String, String, u32)> = q
        .iter(world)
        .map(|(k, r)| (k.0.clone(), r.name.clone(), r.capacity))
        .collect();
    v.sort();
    v
}

fn meetings(world: &mut World) -> Vec<(String, Meeting)> {
    let mut q = world.query::<(&Key, &Meeting)>();
    let mut v: Vec<(String, Meeting)> = q
        .iter(world)
        .map(|(k, m)| (k.0.clone(), m.clone()))
        .collect();
    v.sort_by(|a, b| (a.1.start, &a.0).cmp(&(b.1.start, &b.0)));
    v
}

pub(super) fn available_rooms(world: &mut World, start: &str, end: &str) -> ToolOutcome {
    let (s, e) = interval(world, start, end)?;
    let busy: Vec<String> = meetings(world)
        .into_iter()
        .filter(|(_, m)| overlaps(m, s, e))
        .map(|(_, m)| m.room)
        .collect();
    let free: Vec<Value> = rooms(world)
        .into_iter()
        .filter(|(k, _, _)| !busy.contains(k))
        .map(|(k, n, c)| json!({"room": k, "name": n, "capacity": c}))
        .collect();
    let epoch = world.resource::<Clock>().epoch;
    Ok(json!({"from": epoch.display(s), "to": epoch.display(e), "available": free}))
}

pub(super) fn book_meeting(
    world: &mut World,
    title: &str,
    room: &str,
    start: &str,
    end: &str,
    attendees: &[&str],
) -> ToolOutcome {
    if title.trim().is_empty() {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            "the meeting needs a title",
        ));
    }
    let (s, e) = interval(world, start, end)?;
    let now = world.resource::<Clock>().now;
    if s < now {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            "that start time has passed; book a future slot",
        ));
    }
    let all_rooms = rooms(world);
    let Some((room_key, room_name, capacity)) = all_rooms
        .iter()
        .find(|(k, n, _)| k == room.trim() || n.eq_ignore_ascii_case(room.trim()))
        .cloned()
    else {
        let names: Vec<&str> = all_rooms.iter().map(|r| r.1.as_str()).collect();
        return Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no room `{room}`; rooms: {}", names.join(", ")),
        ));
    };
    let me = world.resource::<Intern>().key.clone();
    let mut people = vec![me.clone()];
    for a in attendees {
        let (k, _) = resolve_person(world, a)?;
        if !people.contains(&k) {
            people.push(k);
        }
    }
    if people.len() as u32 > capacity {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "{room_name} seats {capacity}; you invited {} people including you",
                people.len()
            ),
        ));
    }
    let all = meetings(world);
    if all
        .iter()
        .any(|(_, m)| m.room == room_key && overlaps(m, s, e))
    {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("{room_name} is taken then; use available_rooms"),
        ));
    }
    // Only the intern's own calendar is checked: other people's commitments are
    // theirs (and their managers') to tell, never the system's. Naming the invitees
    // who are busy would hand out exactly what a booking task asks the agent to find.
    let epoch = world.resource::<Clock>().epoch;
    let conflicts: Vec<String> = all
        .iter()
        .filter(|(_, m)| overlaps(m, s, e) && (m.organizer == me || m.attendees.contains(&me)))
        .map(|(_, m)| {
            format!(
                "\"{}\" ({}..{})",
                m.title,
                epoch.display(m.start),
                Epoch::clock(m.end)
            )
        })
        .collect();
    if !conflicts.is_empty() {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "you are already in {} then; pick another time",
                conflicts.join(", ")
            ),
        ));
    }
    let n = world
        .resource::<Index>()
        .keys
        .range("meeting/booked-".to_owned()..)
        .take_while(|(k, _)| k.starts_with("meeting/booked-"))
        .count()
        + 1;
    let key = format!("meeting/booked-{n:03}");
    let meeting = Meeting {
        title: title.trim().to_owned(),
        room: room_key.clone(),
        start: s,
        end: e,
        organizer: me,
        attendees: people[1..].to_vec(),
        agenda: String::new(),
        notes: String::new(),
        announce_at: s,
        open_at: s,
        on_time_until: s,
        joined_at: None,
        cancelled: false,
    };
    let ent = world.spawn((Key(key.clone()), meeting)).id();
    world.resource_mut::<Index>().keys.insert(key.clone(), ent);
    crate::world::touch(world, crate::world::Input::Meetings);
    let mut q = world.resource_mut::<Queue>();
    q.0.push(
        s,
        EventClass::Interrupt,
        SimEvent::MeetingStart {
            meeting: key.clone(),
        },
    );
    q.0.push(
        e,
        EventClass::Interrupt,
        SimEvent::MeetingEnd {
            meeting: key.clone(),
        },
    );
    let epoch = world.resource::<Clock>().epoch;
    let names: Vec<String> = people[1..].iter().map(|p| display_name(world, p)).collect();
    Ok(
        json!({"booked": key, "room": room_name, "start": epoch.display(s), "end": epoch.display(e), "attendees": names}),
    )
}

/// A meeting by key, or by its title (case-insensitive) among meetings that are not
/// cancelled and have not ended; a title shared by several of those is ambiguous.
fn meeting_entity(world: &mut World, key: &str) -> Result<Entity, ToolError> {
    let key = key.trim();
    if let Some(e) = world
        .resource::<Index>()
        .keys
        .get(key)
        .copied()
        .filter(|e| world.get::<Meeting>(*e).is_some())
    {
        return Ok(e);
    }
    let now = world.resource::<Clock>().now;
    let mut q = world.query::<(Entity, &Key, &Meeting)>();
    let mut hits: Vec<(String, Entity)> = q
        .iter(world)
        .filter(|(_, _, m)| !m.cancelled && m.end > now && m.title.eq_ignore_ascii_case(key))
        .map(|(e, k, _)| (k.0.clone(), e))
        .collect();
    hits.sort();
    match hits.len() {
        1 => Ok(hits[0].1),
        0 => Err(ToolError::new(
            ErrorKind::NotFound,
            format!("no meeting `{key}` (by key or title); my_calendar lists yours"),
        )),
        _ => Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "several meetings are titled `{key}`: {}; use the key",
                hits.iter()
                    .map(|h| h.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

pub(super) fn cancel_booking(world: &mut World, key: &str) -> ToolOutcome {
    let e = meeting_entity(world, key)?;
    let now = world.resource::<Clock>().now;
    let me = world.resource::<Intern>().key.clone();
    let m = world.get::<Meeting>(e).cloned().expect("checked");
    if m.organizer != me {
        return Err(ToolError::new(
            ErrorKind::Permission,
            format!(
                "only the organiser ({}) can cancel {key}",
                display_name(world, &m.organizer)
            ),
        ));
    }
    if m.cancelled {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("{key} is already cancelled"),
        ));
    }
    if m.start <= now {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("{key} has already started"),
        ));
    }
    if let Some(mut mm) = world.get_mut::<Meeting>(e) {
        mm.cancelled = true;
    }
    crate::world::touch(world, crate::world::Input::Meetings);
    Ok(json!({"cancelled": key.trim()}))
}

pub(super) fn join_meeting(world: &mut World, key: &str) -> Result<(Value, SimTime), ToolError> {
    let e = meeting_entity(world, key)?;
    let clock = world.resource::<Clock>().clone();
    let me = world.resource::<Intern>().key.clone();
    let m = world.get::<Meeting>(e).cloned().expect("checked");
    if m.cancelled {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("{key} was cancelled"),
        ));
    }
    if m.organizer != me && !m.attendees.contains(&me) {
        return Err(ToolError::new(
            ErrorKind::Permission,
            format!(
                "you are not invited to {key}; ask {}",
                display_name(world, &m.organizer)
            ),
        ));
    }
    if clock.now < m.open_at {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!(
                "{key} opens at {} (it starts at {}); wait until then",
                clock.epoch.display(m.open_at),
                Epoch::clock(m.start)
            ),
        ));
    }
    if clock.now >= m.end {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("{key} ended at {}", clock.epoch.display(m.end)),
        ));
    }
    if m.joined_at.is_some() {
        return Err(ToolError::new(
            ErrorKind::Invalid,
            format!("you already attended {key}"),
        ));
    }
    if let Some(mut mm) = world.get_mut::<Meeting>(e) {
        mm.joined_at = Some(clock.now);
    }
    crate::world::touch(world, crate::world::Input::Meetings);
    let room = world
        .resource::<Index>()
        .keys
        .get(&m.room)
        .and_then(|r| world.get::<Room>(*r))
        .map_or(m.room.clone(), |r| r.name.clone());
    let mut v = json!({"meeting": key.trim(), "title": m.title, "room": room, "joined": clock.epoch.display(clock.now),
                       "started": clock.epoch.display(m.start), "ends": clock.epoch.display(m.end)});
    if clock.now > m.announce_at {
        v["missed"] = json!(format!(
            "announcements were made at {}, before you arrived",
            Epoch::clock(m.announce_at)
        ));
    }
    if !m.notes.is_empty() {
        v["notes"] = json!(m.notes);
    }
    Ok((v, m.end))
}

pub(super) fn my_calendar(world: &mut World) -> ToolOutcome {
    let me = world.resource::<Intern>().key.clone();
    let epoch = world.resource::<Clock>().epoch;
    let list: Vec<Value> = meetings(world)
        .into_iter()
        .filter(|(_, m)| !m.cancelled && (m.organizer == me || m.attendees.contains(&me)))
        .map(|(k, m)| {
            let attendees: Vec<String> = m.attendees.iter().map(|a| display_name(world, a)).collect();
            let room = world.resource::<Index>().keys.get(&m.room).and_then(|r| world.get::<Room>(*r)).map_or(m.room.clone(), |r| r.name.clone());
            json!({"meeting": k, "title": m.title, "room": room, "start": epoch.display(m.start), "end": epoch.display(m.end),
                   "organizer": display_name(world, &m.organizer), "attendees": attendees, "agenda": m.agenda,
                   "attended": m.joined_at.is_some()})
        })
        .collect();
    Ok(json!({"meetings": list}))
}
