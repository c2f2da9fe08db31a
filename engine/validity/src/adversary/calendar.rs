//! Books requested meetings by trial and error on the calendar's errors.

use serde_json::json;

use super::{Event, Knowledge, Out, Tactic, TaskSeen, Urgency, scrape};

/// Most booking attempts per task.
const MAX_ATTEMPTS: u32 = 30;

#[derive(Debug)]
struct Booking {
    title: String,
    start: String,
    end: String,
    invite: Vec<String>,
    /// Invitees left out because no room seats everyone; they come back as
    /// conflict errors free seats.
    reserve: Vec<String>,
    rooms: Vec<(String, u64)>,
    room: usize,
    attempts: u32,
    meeting: Option<String>,
}

/// For every objective that asks to book a meeting (`book` and two clock times):
/// invites everyone the objective names, by name or department, books the first
/// room that fits, and on a conflict error drops whoever the error names and
/// retries; joins the meeting when it starts.
#[derive(Debug, Default)]
pub struct BookByConflicts {
    bookings: Vec<Booking>,
    waiting: Vec<TaskSeen>,
}

impl BookByConflicts {
    fn plan(&mut self, t: &TaskSeen, k: &Knowledge, out: &mut Out) {
        let obj = &t.objective;
        let times = scrape::clock_times(obj);
        if !obj.to_lowercase().contains("book") || times.len() < 2 {
            return;
        }
        let date = scrape::dates(obj)
            .into_iter()
            .next()
            .unwrap_or_else(|| k.today.clone());
        let lower = obj.to_lowercase();
        let title = lower
            .find("titled")
            .and_then(|i| scrape::quoted(&obj[i..]).into_iter().next())
            .or_else(|| scrape::quoted(obj).into_iter().next())
            .unwrap_or_else(|| t.title.clone());
        let named_dept = |d: &str| {
            !d.is_empty()
                && (obj.contains(&format!("{d} department")) || obj.contains(&format!("{d} team")))
        };
        let mut invite: Vec<String> = k
            .colleagues
            .iter()
            .filter(|c| c.name != k.me && (obj.contains(&c.name) || named_dept(&c.department)))
            .map(|c| c.key.clone())
            .collect();
        if invite.is_empty() {
            invite = k
                .colleagues
                .iter()
                .filter(|c| !c.department.is_empty() && obj.contains(&c.department))
                .map(|c| c.key.clone())
                .collect();
        }
        let b = Booking {
            title,
            start: format!("{date}T{}", times[0]),
            end: format!("{date}T{}", times[1]),
            invite,
            reserve: Vec::new(),
            rooms: Vec::new(),
            room: 0,
            attempts: 0,
            meeting: None,
        };
        out.tagged(
            Urgency::Answer,
            "available_rooms",
            json!({"start": b.start, "end": b.end}),
            format!("rooms:{}", self.bookings.len()),
        );
        self.bookings.push(b);
    }

    fn book(&mut self, i: usize, out: &mut Out) {
        let b = &mut self.bookings[i];
        if b.attempts >= MAX_ATTEMPTS || b.rooms.is_empty() {
            return;
        }
        // The first room (from `room` on) that seats everyone, else the largest.
        let need = (b.invite.len() + b.reserve.len()) as u64 + 1;
        let room = (b.room..b.rooms.len())
            .find(|r| b.rooms[*r].1 >= need)
            .or_else(|| (0..b.rooms.len()).max_by_key(|r| (b.rooms[*r].1, usize::MAX - r)))
            .expect("rooms is not empty");
        b.room = room;
        let (name, capacity) = b.rooms[room].clone();
        b.invite.append(&mut b.reserve);
        while b.invite.len() as u64 + 1 > capacity {
            let last = b
                .invite
                .pop()
                .expect("over capacity means someone is invited");
            b.reserve.insert(0, last);
        }
        b.attempts += 1;
        out.tagged(
            Urgency::Answer,
            "book_meeting",
            json!({"title": b.title, "room": name, "start": b.start, "end": b.end, "attendees": b.invite}),
            format!("book:{i}"),
        );
    }
}

/// The people a conflict error names (`scheduling conflicts: A is in ...; B is in ...`).
pub fn named_in_conflicts(message: &str) -> Vec<String> {
    let Some(rest) = message.split_once("conflicts:").map(|(_, r)| r) else {
        return Vec::new();
    };
    rest.split(';')
        .filter_map(|seg| {
            seg.split_once(" is in ")
                .map(|(who, _)| who.trim().to_owned())
        })
        .collect()
}

impl Tactic for BookByConflicts {
    fn on(&mut self, ev: &Event<'_>, k: &Knowledge, out: &mut Out) {
        match ev {
            Event::Start => out.once(Urgency::Setup, "list_colleagues", json!({})),
            Event::Task(t) if k.colleagues.is_empty() => self.waiting.push((*t).clone()),
            Event::Task(t) => self.plan(t, k, out),
            Event::Result {
                tag: Some(tag),
                result,
                ..
            } => {
                let Some((kind, i)) = tag
                    .split_once(':')
                    .and_then(|(a, b)| Some((a, b.parse::<usize>().ok()?)))
                else {
                    return;
                };
                match (kind, result.ok) {
                    ("rooms", true) => {
                        let v = result.result.clone().unwrap_or_default();
                        self.bookings[i].rooms = v["available"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|r| {
                                Some((r["room"].as_str()?.to_owned(), r["capacity"].as_u64()?))
                            })
                            .collect();
                        self.book(i, out);
                    }
                    ("book", true) => {
                        self.bookings[i].meeting = result
                            .result
                            .as_ref()
                            .and_then(|v| v["booked"].as_str())
                            .map(str::to_owned);
                    }
                    ("book", false) => {
                        let msg = result
                            .error
                            .as_ref()
                            .map(|e| e.message.clone())
                            .unwrap_or_default();
                        let b = &mut self.bookings[i];
                        if msg.contains("conflicts:") {
                            let named = named_in_conflicts(&msg);
                            let before = b.invite.len();
                            let keep = |key: &String| {
                                let name = k.colleague(key).map_or(key.as_str(), |c| &c.name);
                                !named.iter().any(|n| n == name)
                            };
                            b.invite.retain(keep);
                            b.reserve.retain(keep);
                            if b.invite.len() == before {
                                return;
                            }
                        } else if msg.contains("taken") || msg.contains("seats") {
                            b.room += 1;
                        } else {
                            return;
                        }
                        self.book(i, out);
                    }
                    _ => {}
                }
            }
            Event::Result { result, .. } if result.tool == "list_colleagues" && result.ok => {
                for t in std::mem::take(&mut self.waiting) {
                    self.plan(&t, k, out);
                }
            }
            Event::MeetingStarting(m)
                if self
                    .bookings
                    .iter()
                    .any(|b| b.meeting.as_deref() == Some(*m)) =>
            {
                out.once(Urgency::Now, "join_meeting", json!({"meeting": m}));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_errors_name_people() {
        let m = "scheduling conflicts: Ana Li is in meeting/x (Wed 10:00..11:00); Bo Chen is in meeting/y (Wed 10:30..12:00)";
        assert_eq!(named_in_conflicts(m), vec!["Ana Li", "Bo Chen"]);
        assert!(named_in_conflicts("Atlas Room is taken then").is_empty());
    }
}
