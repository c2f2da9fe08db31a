//! Booking a meeting for a group: work out the guest list (a department, a
//! manager's team from the team sheet, or the managers of some departments), ask
//! each guest whether they can come, settle every "ask my manager" by asking that
//! manager about the person, then book a room for the slot with exactly those who
//! can come, and join when it starts.

use serde_json::{Value, json};

use super::{Brief, Cx, Job, Next, backticked, file_text, read, send, short_name};
use tbsim_core::protocol::ToolResult;
use tbsim_core::time::SimTime;

#[derive(Debug, Clone, PartialEq)]
enum Who {
    Department(String),
    Team { lead: String, sheet: String },
    Managers(Vec<String>),
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(&s[i..j])
}

/// The solver if the objective is a meeting to book.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if !o.starts_with("Please book a meeting titled") {
        return None;
    }
    let title = between(o, "titled \"", "\"")?.to_owned();
    let date = between(o, "today (", ")")?.to_owned();
    let start = between(o, ") from ", " to ")?.to_owned();
    let end = between(o, &format!("from {start} to "), " for ")?.to_owned();
    let who_text = between(o, &format!("{end} for "), ". Before booking")?;
    let who = if let Some(d) = between(who_text, "every member of the ", " department") {
        Who::Department(d.to_owned())
    } else if who_text.contains("'s team in ") {
        Who::Team {
            lead: who_text.split("'s team in ").next()?.to_owned(),
            sheet: backticked(who_text).into_iter().next()?,
        }
    } else {
        let list = between(who_text, "every manager in ", " (")?;
        Who::Managers(
            list.replace(" and ", ", ")
                .split(", ")
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        )
    };
    Some(Box::new(Book {
        title,
        start: format!("{date}T{start}"),
        end: format!("{date}T{end}"),
        who,
        guests: Vec::new(),
        phase: Phase::Guests,
        meeting: None,
    }))
}

#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Pending,
    Yes,
    No,
    /// Asking this manager (key) about them, from this inbox index.
    Manager(String, usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Guest {
    key: String,
    name: String,
    since: usize,
    answer: Answer,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Guests,
    ReadSheet,
    Ask(usize),
    Collect,
    Rooms,
    Book(String),
    Join,
    Done,
}

struct Book {
    title: String,
    start: String,
    end: String,
    who: Who,
    guests: Vec<Guest>,
    phase: Phase,
    meeting: Option<String>,
}

/// Whether a reply says the person cannot come, from what it says (a free reply
/// may carry "don't" or "no", a busy one none: issue 37).
fn negative(t: &str) -> bool {
    let t = t.to_lowercase();
    [
        "can't attend",
        "can't come",
        "cannot",
        "won't make",
        "count me out",
        "don't invite",
        "don't list",
        "off the invite",
        "leave me off",
        "clashes",
        "overlaps",
        "skip",
        "right across your slot",
        "keeps me busy",
        "i'm busy",
    ]
    .iter()
    .any(|w| t.contains(w))
        && !t.contains("doesn't clash")
        && !t.contains("no clash")
        && !t.contains("nothing clashes")
}

fn positive(t: &str) -> bool {
    let t = t.to_lowercase();
    [
        "count me in",
        "works for me",
        "i'll be at",
        "add me",
        "do invite",
        "keep ",
        "invite ",
        "is fine",
        "doesn't clash",
        "no clash",
        "nothing clashes",
        "i'll join",
        "won't miss",
        "include ",
    ]
    .iter()
    .any(|w| t.contains(w))
}

impl Book {
    fn ask_text(&self, first: &str) -> String {
        let (s, e) = (clock(&self.start), clock(&self.end));
        format!(
            "Hi {first}, I'm setting up the {} today from {s} to {e}. Are you available to attend?",
            self.title
        )
    }
}

/// "Which Florin do you mean: ...?": a colleague asking which person is meant.
fn asks_back(t: &str) -> bool {
    t.starts_with("Which ") && t.contains("do you mean")
}

fn clock(iso: &str) -> &str {
    iso.split('T').nth(1).unwrap_or(iso)
}

fn first_of(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

impl Job for Book {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::Guests => {
                    let mut people: Vec<(String, String)> = Vec::new();
                    match &self.who {
                        Who::Department(d) => {
                            for c in cx.in_department(d) {
                                people.push((c.key.clone(), c.name.clone()));
                            }
                        }
                        Who::Managers(ds) => {
                            for d in ds {
                                for c in cx.in_department(d) {
                                    if c.position.ends_with("Manager") {
                                        people.push((c.key.clone(), c.name.clone()));
                                    }
                                }
                            }
                        }
                        Who::Team { .. } => {
                            self.phase = Phase::ReadSheet;
                            continue;
                        }
                    }
                    self.set_guests(cx, people);
                }
                Phase::ReadSheet => {
                    let Who::Team { lead, sheet } = self.who.clone() else {
                        unreachable!("only teams have sheets")
                    };
                    if let Some(r) = last.take() {
                        let text = file_text(r).unwrap_or_default().to_owned();
                        let mut names = vec![lead.clone()];
                        let mut inside = false;
                        for l in text.lines() {
                            if let Some(h) = l.strip_prefix("## ") {
                                inside = h.starts_with(&format!("{lead} ("));
                                continue;
                            }
                            if inside && let Some(item) = l.trim().strip_prefix("- ") {
                                names
                                    .push(item.split(',').next().unwrap_or(item).trim().to_owned());
                            }
                        }
                        let people = names
                            .iter()
                            .filter_map(|n| {
                                cx.colleague(n).map(|c| (c.key.clone(), c.name.clone()))
                            })
                            .collect();
                        self.set_guests(cx, people);
                        continue;
                    }
                    return read(&sheet);
                }
                Phase::Ask(i) => {
                    last.take();
                    if let Some(g) = self.guests.get(i).cloned() {
                        self.guests[i].since = cx.inbox.len();
                        self.phase = Phase::Ask(i + 1);
                        return send(&g.key, &self.ask_text(&short_name(cx, &g.name)));
                    }
                    self.phase = Phase::Collect;
                }
                Phase::Collect => {
                    last.take();
                    let mut waiting = false;
                    for i in 0..self.guests.len() {
                        let g = self.guests[i].clone();
                        match &g.answer {
                            Answer::Pending => {
                                let replies = cx.replies_from(&g.key, g.since);
                                let Some(h) = replies.first() else {
                                    waiting = true;
                                    continue;
                                };
                                if asks_back(&h.text) && short_name(cx, &g.name) != g.name {
                                    // Not an answer: ask again, naming them in full.
                                    self.guests[i].since = cx.inbox.len();
                                    return send(&g.key, &self.ask_text(&g.name));
                                }
                                if negative(&h.text) {
                                    self.guests[i].answer = Answer::No;
                                } else if let Some(m) = cx
                                    .colleagues
                                    .iter()
                                    .find(|c| c.key != g.key && h.text.contains(&c.name))
                                {
                                    // One question at a time per manager, so their
                                    // newest paragraph answers the latest question.
                                    let busy = self.guests.iter().any(|o| matches!(&o.answer, Answer::Manager(k, _) if *k == m.key));
                                    if busy {
                                        waiting = true;
                                        continue;
                                    }
                                    // "Ask my manager": ask them about this person.
                                    let (s, e) = (clock(&self.start), clock(&self.end));
                                    let them = short_name(cx, &g.name);
                                    self.guests[i].answer =
                                        Answer::Manager(m.key.clone(), cx.inbox.len());
                                    return send(
                                        &m.key,
                                        &format!(
                                            "Hi {}, {them} wasn't sure about the {} today from {s} to {e}. Can {} attend, or should I leave {them} off the invite?",
                                            short_name(cx, &m.name),
                                            self.title,
                                            g.name
                                        ),
                                    );
                                } else if positive(&h.text) {
                                    self.guests[i].answer = Answer::Yes;
                                } else {
                                    self.guests[i].answer = Answer::No;
                                }
                            }
                            Answer::Manager(m, since) => {
                                let first = first_of(&g.name);
                                // Replies can repeat earlier answers: the last
                                // paragraph naming the person answers this question.
                                let got = cx
                                    .replies_from(m, *since)
                                    .into_iter()
                                    .flat_map(|h| {
                                        h.text.split("\n\n").map(str::to_owned).collect::<Vec<_>>()
                                    })
                                    .filter(|p| !asks_back(p))
                                    .rfind(|p| p.contains(first) || p.contains(&g.name));
                                match got {
                                    Some(p) => {
                                        let verdict = if negative(&p) {
                                            Answer::No
                                        } else {
                                            Answer::Yes
                                        };
                                        self.guests[i].answer = verdict;
                                        // The next guest waiting on this manager may ask now.
                                        return self.step(cx, None);
                                    }
                                    None => waiting = true,
                                }
                            }
                            Answer::Yes | Answer::No => {}
                        }
                    }
                    if waiting {
                        return Next::Idle;
                    }
                    self.phase = Phase::Rooms;
                }
                Phase::Rooms => {
                    if let Some(r) = last.take() {
                        let need = self.invited().len() + 1;
                        let mut rooms: Vec<(u64, String)> = r
                            .result
                            .as_ref()
                            .and_then(|v| v.get("available"))
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|x| {
                                Some((
                                    x.get("capacity")?.as_u64()?,
                                    x.get("room")?.as_str()?.to_owned(),
                                ))
                            })
                            .filter(|(c, _)| *c as usize >= need)
                            .collect();
                        rooms.sort();
                        let Some((_, room)) = rooms.into_iter().next() else {
                            self.phase = Phase::Done;
                            continue;
                        };
                        self.phase = Phase::Book(room);
                        continue;
                    }
                    return Next::Call(
                        "available_rooms",
                        json!({"start": self.start, "end": self.end}),
                    );
                }
                Phase::Book(room) => {
                    if let Some(r) = last.take() {
                        self.meeting = r
                            .result
                            .as_ref()
                            .and_then(|v| v.get("booked"))
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        self.phase = if self.meeting.is_some() {
                            Phase::Join
                        } else {
                            Phase::Done
                        };
                        continue;
                    }
                    return Next::Call(
                        "book_meeting",
                        json!({"title": self.title, "room": room, "start": self.start, "end": self.end,
                               "attendees": self.invited()}),
                    );
                }
                Phase::Join => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    let start = cx.parse_time(&self.start).unwrap_or(SimTime(0));
                    if cx.now < start {
                        return Next::Until(start);
                    }
                    return Next::Call("join_meeting", json!({"meeting": self.meeting}));
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}

impl Book {
    fn set_guests(&mut self, cx: &Cx, people: Vec<(String, String)>) {
        self.guests = people
            .into_iter()
            .filter(|(_, n)| n != cx.me)
            .map(|(key, name)| Guest {
                key,
                name,
                since: 0,
                answer: Answer::Pending,
            })
            .collect();
        self.phase = Phase::Ask(0);
    }

    fn invited(&self) -> Vec<String> {
        self.guests
            .iter()
            .filter(|g| g.answer == Answer::Yes)
            .map(|g| g.key.clone())
            .collect()
    }
}
