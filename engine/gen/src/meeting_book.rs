//! Meeting book: find out who can come, book the meeting for exactly them, attend it.
//!
//! The intern must book a meeting at a fixed slot for a group of colleagues — every
//! member of one department (`department`) or every manager of several departments,
//! looked up by department (`manager`) — inviting exactly those who can attend, and
//! then join it on time. Conflicts are real: each colleague who cannot come sits in
//! another meeting that overlaps the slot, so a booking that includes them fails
//! with the calendar's conflict list, and asking them (or, for the department, their
//! manager) explains why. In the department variant three members sound busy but
//! only `conflicts` of them are; the others' meetings end before the slot starts or
//! begin after it ends, and only the department's manager (asked about them by
//! name, after they raised it) can tell. In the manager variant the busy managers
//! decline outright. Scoring: everyone's availability confirmed, the meeting booked
//! in the slot under its title, exactly the right invitees, and joined within five
//! minutes of the start.
//!
//! Differences from the reference: the manager variant is scorable (bookings are
//! matched on simulated times, not on a serialised datetime that never matched);
//! managers are found by department, not by title alone, and the departments
//! involved are those whose managers fit one meeting room; the department is drawn
//! among those that fit a room, not always Marketing (in a company too large for
//! any department to fit, one manager's team, listed on a team sheet on the drive,
//! is invited instead); conflicts are meetings on the calendar, so the world agrees
//! with what colleagues say and a booking attempt reveals them; invitees are people
//! compared by key, so "A, B" formatting cannot lose anyone; inviting anyone extra
//! fails the invitee checkpoint; asking everyone is scored (the reference asked for
//! it but never checked); joining on time has a lower bound (the meeting opens at
//! its start); the task's deadline is the meeting's end; every NPC line is filled
//! in (no raw placeholders); and the feedback for a missing booking talks about the
//! booking, not about lateness.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::{
    Check, CheckpointSpec, Clue, Condition, Content, FileSpec, Gate, MeetingSpec, Person, Scenario,
    TaskSpec,
};

const PHRASES: &str = include_str!("corpus/meeting_book/phrases.txt");

/// Who is invited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Every member of one department.
    Department,
    /// Every manager of several departments.
    Manager,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Department => "department",
            Kind::Manager => "manager",
        }
    }
}

/// Parameters; unset ones are drawn uniformly from the reference's space.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Who is invited.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// `13:00`, `14:30` or `15:00`.
    #[serde(default)]
    pub start: Option<String>,
    /// 30, 60, 90 or 120 minutes.
    #[serde(default)]
    pub duration_min: Option<u32>,
    /// How many invitees really cannot come (1-3).
    #[serde(default)]
    pub conflicts: Option<u8>,
}

/// Allowed start times.
pub const STARTS: [&str; 3] = ["13:00", "14:30", "15:00"];
/// Allowed durations in minutes.
pub const DURATIONS: [u32; 4] = [30, 60, 90, 120];
/// How many department members sound busy (the reference's three).
const UNSURE: usize = 3;
/// Joining later than this after the start is late.
const LATE_MIN: u32 = 5;
/// The earliest a booking colleagues' meetings may start before the slot.
const LEAD_MIN: u32 = 60;

/// Words that make a message about availability (any one of them).
const ASK: &[&str] = &[
    "available",
    "availability",
    "free",
    "attend",
    "join",
    "come",
    "busy",
    "conflict",
    "clash",
    "schedule",
    "slot",
    "time",
    "invite",
    "include",
    "list",
    "leave",
    "exclude",
    "meeting",
    "make",
    "able",
    "participate",
    "work",
    "okay",
    "calendar",
    "there",
    "ok",
    "fine",
    "suit",
    "suitable",
    "convenient",
    "possible",
    "around",
    "count",
    "confirm",
    "show",
    "go",
    "agenda",
    "block",
];

/// The variants: kind x number of conflicts.
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for kind in [Kind::Department, Kind::Manager] {
        for c in 1..=3u8 {
            v.push((
                format!("meeting_book/{}/c{c}", kind.name()),
                Params {
                    kind: Some(kind),
                    conflicts: Some(c),
                    ..Params::default()
                },
            ));
        }
    }
    v
}

/// The entries of one `[section]` of a corpus file.
fn section(text: &'static str, name: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = h == name;
        } else if inside {
            out.push(line);
        }
    }
    out
}

/// A topic: `(title, keyword)`.
fn topics(name: &str) -> Vec<(&'static str, &'static str)> {
    section(PHRASES, name)
        .into_iter()
        .filter_map(|l| l.split_once('|').map(|(t, k)| (t.trim(), k.trim())))
        .collect()
}

fn pick<'a>(rng: &mut StreamRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

fn minutes(hm: &str) -> Option<u32> {
    tbsim_scenario::date::Clock::parse(hm).map(tbsim_scenario::date::Clock::minutes)
}

fn hm(min: u32) -> String {
    tbsim_scenario::date::Clock(min).to_string()
}

/// A colleague's other meeting.
#[derive(Debug, Clone)]
struct Busy {
    key: String,
    title: String,
    start: u32,
    end: u32,
    room: String,
    organizer: String,
    others: Vec<String>,
}

/// How an invitee stands.
#[derive(Debug, Clone)]
enum Standing {
    /// Free and says so.
    Free,
    /// In an overlapping meeting.
    Clash(Busy),
    /// In a meeting next to the slot; sounds busy but is free.
    FalseAlarm(Busy),
}

struct Invitee<'a> {
    person: &'a Person,
    standing: Standing,
}

impl Invitee<'_> {
    fn can_come(&self) -> bool {
        !matches!(self.standing, Standing::Clash(_))
    }
}

fn first_name(p: &Person) -> &str {
    p.name.split(' ').next().unwrap_or(&p.name)
}

fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut prng = ctx.rng("params");
    let kind = p
        .kind
        .unwrap_or_else(|| [Kind::Department, Kind::Manager][prng.random_range(0..2)]);
    let start = p
        .start
        .clone()
        .unwrap_or_else(|| pick(&mut prng, &STARTS).to_owned());
    let duration = p
        .duration_min
        .unwrap_or_else(|| DURATIONS[prng.random_range(0..DURATIONS.len())]);
    let conflicts = usize::from(p.conflicts.unwrap_or_else(|| prng.random_range(1..=3)));
    if !STARTS.contains(&start.as_str())
        || !DURATIONS.contains(&duration)
        || !(1..=3).contains(&conflicts)
    {
        return Err(format!(
            "meeting_book parameters out of range: start {start} (13:00|14:30|15:00), duration {duration} (30|60|90|120), conflicts {conflicts} (1-3)"
        ));
    }
    let s = minutes(&start).ok_or("bad start")?;
    let e = s + duration;
    let day_start = minutes(ctx.start).ok_or("the day's start must be HH:MM")?;
    let released = match &ctx.release {
        tbsim_scenario::Release::At(t) => t
            .split_once('T')
            .and_then(|(_, hm)| minutes(hm))
            .unwrap_or(day_start),
        _ => day_start,
    };
    if released.max(day_start) + LEAD_MIN > s {
        return Err(format!(
            "the meeting at {start} leaves less than {LEAD_MIN} minutes after the task is released ({}) to ask around and book",
            hm(released.max(day_start))
        ));
    }

    let mut people_rng = ctx.rng("people");
    let roster = ctx.company;
    let max_seats = ctx.rooms.iter().map(|r| r.capacity).max().unwrap_or(0) as usize;
    let departments: Vec<&str> = {
        let mut d: Vec<&str> = Vec::new();
        for p in roster.non_executives() {
            if !d.contains(&p.department.as_str()) {
                d.push(&p.department);
            }
        }
        d
    };
    // The invitees, the department manager who knows the team's schedule (department
    // variant), the departments named in the objective, and who sounds busy. Every
    // invitee and the intern fit the largest room: where only those who can come
    // fit, the room alone says that someone must be left off (a guest dropped to fit
    // was the one who could not come once in a dozen, issue 37).
    // `team`: the invitees are one manager's team, not a whole department.
    type GuestList<'p> = (
        Vec<&'p Person>,
        Option<&'p Person>,
        Vec<&'p str>,
        Vec<usize>,
        bool,
    );
    let (invited, lead, depts, unsure, team): GuestList<'_> = match kind {
        Kind::Department => {
            let fits: Vec<&str> = departments
                .iter()
                .copied()
                .filter(|d| {
                    let members = roster.department(d).len();
                    roster.staff(d).len() >= UNSURE
                        && !roster.managers(d).is_empty()
                        && members < max_seats
                })
                .collect();
            if fits.is_empty() {
                // In a large company no whole department fits a room: invite one
                // manager's team instead, as listed in the department's team sheet.
                let mut teams: Vec<(&str, Vec<&Person>)> = Vec::new();
                for d in &departments {
                    for t in teams_of(roster, d) {
                        if t.len() > UNSURE && t.len() < max_seats {
                            teams.push((d, t));
                        }
                    }
                }
                if teams.is_empty() {
                    return Err(format!(
                        "no department or team has a manager, at least {UNSURE} staff and few enough members for the largest room ({max_seats} seats); choose another company_size"
                    ));
                }
                let (d, members) = teams.swap_remove(people_rng.random_range(0..teams.len()));
                let unsure: Vec<usize> = pick_distinct(&mut people_rng, members.len() - 1, UNSURE)
                    .into_iter()
                    .map(|i| i + 1)
                    .collect();
                let lead = members[0];
                (members, Some(lead), vec![d], unsure, true)
            } else {
                let d = fits[people_rng.random_range(0..fits.len())];
                let members = roster.department(d);
                let lead = roster.managers(d)[0];
                let staff: Vec<usize> = (0..members.len())
                    .filter(|i| !members[*i].position.ends_with("Manager"))
                    .collect();
                let unsure: Vec<usize> = pick_distinct(&mut people_rng, staff.len(), UNSURE)
                    .into_iter()
                    .map(|i| staff[i])
                    .collect();
                (members, Some(lead), vec![d], unsure, false)
            }
        }
        Kind::Manager => {
            let mut order: Vec<&str> = departments.clone();
            let all: usize = order.iter().map(|d| roster.managers(d).len()).sum();
            let chosen: Vec<&str> = if all < max_seats {
                order
            } else {
                // Too many managers for one room: take departments in a random
                // order while their managers still fit.
                let mut chosen = Vec::new();
                let mut n = 0;
                while !order.is_empty() {
                    let d = order.remove(people_rng.random_range(0..order.len()));
                    let m = roster.managers(d).len();
                    if n + m < max_seats {
                        n += m;
                        chosen.push(d);
                    }
                }
                // Keep the objective's department order stable.
                departments
                    .iter()
                    .copied()
                    .filter(|d| chosen.contains(d))
                    .collect()
            };
            let managers: Vec<&Person> = chosen.iter().flat_map(|d| roster.managers(d)).collect();
            if managers.len() <= conflicts {
                return Err(format!(
                    "only {} managers fit one room; meeting_book needs more than {conflicts}",
                    managers.len()
                ));
            }
            let unsure = pick_distinct(&mut people_rng, managers.len(), conflicts);
            (managers, None, chosen, unsure, false)
        }
    };
    let mut outsiders: Vec<&Person> = roster
        .people
        .iter()
        .filter(|p| !invited.iter().any(|i| i.key == p.key))
        .collect();
    if outsiders.len() < UNSURE {
        return Err("meeting_book needs colleagues outside the invitees".into());
    }

    // Colleagues' meetings: the first `conflicts` unsure invitees clash with the slot;
    // the rest have a meeting right before or after it.
    let mut cal = ctx.rng("calendar");
    let (busy_titles, topic_list) = match kind {
        Kind::Department => (section(PHRASES, "staff_busy"), topics("department_topics")),
        Kind::Manager => (section(PHRASES, "manager_busy"), topics("manager_topics")),
    };
    let (title, keyword) = topic_list[cal.random_range(0..topic_list.len())];
    let need = invited.len() - conflicts + 1;
    let big: Vec<usize> = (0..ctx.rooms.len())
        .filter(|i| ctx.rooms[*i].capacity as usize >= need)
        .collect();
    let room = &ctx.rooms[big[cal.random_range(0..big.len())]];
    let titles = pick_distinct(&mut cal, busy_titles.len(), unsure.len());
    let mut standing: BTreeMap<usize, Standing> = BTreeMap::new();
    let mut taken: Vec<(u32, u32, String)> = Vec::new();
    for (n, (&who, t)) in unsure.iter().zip(&titles).enumerate() {
        let clash = n < conflicts;
        let (bs, be) = if clash {
            // Overlap the slot by at least 15 minutes, ending by 17:00 at the latest.
            loop {
                let bs = s - 45 + 15 * cal.random_range(0..(3 + duration / 15 - 1));
                let len = [30, 45, 60, 90][cal.random_range(0..4)];
                let be = bs + len;
                if be > s + 14 && bs + 15 <= e && be <= (17 * 60).max(e) {
                    break (bs, be);
                }
            }
        } else {
            let len = [30, 45, 60][cal.random_range(0..3)];
            if e + len <= 17 * 60 && cal.random_bool(0.5) {
                (e, e + len)
            } else {
                (s - len, s)
            }
        };
        // Organisers and guests are drawn without replacement, so nobody outside the
        // guest list is double-booked either.
        let organizer = outsiders.swap_remove(cal.random_range(0..outsiders.len()));
        let mut others = vec![];
        if outsiders.len() > UNSURE && cal.random_bool(0.5) {
            others.push(
                outsiders
                    .swap_remove(cal.random_range(0..outsiders.len()))
                    .key
                    .clone(),
            );
        }
        let seats = others.len() + 2;
        let free: Vec<&tbsim_scenario::Room> = ctx
            .rooms
            .iter()
            .filter(|r| {
                r.key != room.key
                    && r.capacity as usize >= seats
                    && !taken
                        .iter()
                        .any(|(ts, te, k)| k == &r.key && *ts < be && *te > bs)
            })
            .collect();
        let Some(r) = free.first() else {
            return Err("not enough rooms for colleagues' meetings".into());
        };
        taken.push((bs, be, r.key.clone()));
        let busy = Busy {
            key: format!("meeting/{}-{}", ctx.id, slug(busy_titles[*t])),
            title: busy_titles[*t].to_owned(),
            start: bs,
            end: be,
            room: r.key.clone(),
            organizer: organizer.key.clone(),
            others,
        };
        standing.insert(
            who,
            if clash {
                Standing::Clash(busy)
            } else {
                Standing::FalseAlarm(busy)
            },
        );
    }
    let invitees: Vec<Invitee<'_>> = invited
        .iter()
        .enumerate()
        .map(|(i, p)| Invitee {
            person: p,
            standing: standing.remove(&i).unwrap_or(Standing::Free),
        })
        .collect();

    // Distractors against a novelty rule ("invite whoever adds no new name or
    // time"): at least one free invitee, and each other one time in three, mentions
    // another colleague and a time outside the slot; each busy manager declines
    // without a reason one time in two. Only what a reply says separates them.
    let mut aside_rng = ctx.rng("asides");
    let free_ix: Vec<usize> = (0..invitees.len())
        .filter(|i| matches!(invitees[*i].standing, Standing::Free))
        .collect();
    let forced = free_ix[aside_rng.random_range(0..free_ix.len())];
    let taken_first: Vec<&str> = invitees.iter().map(|i| first_name(i.person)).collect();
    let peers: Vec<&Person> = outsiders
        .iter()
        .copied()
        .filter(|o| !taken_first.contains(&first_name(o)))
        .collect();
    if peers.is_empty() {
        return Err("meeting_book needs a colleague outside the invitees to mention".into());
    }
    // Times on the quarter hour, outside the slot and within the working day.
    let later: Vec<u32> = (1..=4)
        .map(|k| e + 15 * k)
        .filter(|t| *t <= 18 * 60)
        .collect();
    let earlier: Vec<u32> = (1..=4)
        .map(|k| s.saturating_sub(15 * k))
        .filter(|t| *t >= day_start)
        .collect();
    let mut aside: BTreeMap<usize, (String, String, String)> = BTreeMap::new();
    let mut plain_decline: Vec<usize> = Vec::new();
    for (i, inv) in invitees.iter().enumerate() {
        match inv.standing {
            Standing::Free if i == forced || aside_rng.random_bool(1.0 / 3.0) => {
                let peer = first_name(peers[aside_rng.random_range(0..peers.len())]).to_owned();
                let l = later[aside_rng.random_range(0..later.len())];
                let b = earlier[aside_rng.random_range(0..earlier.len())];
                aside.insert(i, (peer, hm(l), hm(b)));
            }
            Standing::Clash(_) if kind == Kind::Manager && aside_rng.random_bool(0.5) => {
                plain_decline.push(i);
            }
            _ => {}
        }
    }

    // What people say.
    let mut text = ctx.rng("text");
    let task = ctx.task_key();
    let (s_hm, e_hm) = (hm(s), hm(e));
    // The meeting by its title, its keyword or its start time.
    let subject = vec![title.to_owned(), keyword.to_owned(), s_hm.clone()];
    let ask: Vec<String> = ASK.iter().map(|w| (*w).to_owned()).collect();
    // Asking a manager about a member may name the meeting (its title, hours)
    // instead of an availability word, and naming both is still one question.
    let ask_about: Vec<String> = ask.iter().chain(&subject).cloned().collect();
    let mut clues: Vec<(String, Clue)> = Vec::new();
    let mut availability: BTreeMap<&str, String> = BTreeMap::new();
    let mut confirmations: Vec<String> = Vec::new();
    let mut meetings = Vec::new();
    for (ix, inv) in invitees.iter().enumerate() {
        let p = inv.person;
        let busy = match &inv.standing {
            Standing::Free => None,
            Standing::Clash(b) | Standing::FalseAlarm(b) => Some(b),
        };
        let vars = |b: Option<&Busy>, name: &str| -> Vec<(&'static str, String)> {
            let mut v = vec![
                ("title", title.to_owned()),
                ("start", s_hm.clone()),
                ("end", e_hm.clone()),
                ("name", name.to_owned()),
                ("manager", lead.map(|l| l.name.clone()).unwrap_or_default()),
                (
                    "manager_first",
                    lead.map(|l| first_name(l).to_owned()).unwrap_or_default(),
                ),
            ];
            if let Some(b) = b {
                v.push(("other", b.title.to_lowercase()));
                v.push(("other_start", hm(b.start)));
                v.push(("other_end", hm(b.end)));
            }
            v
        };
        let fill = |template: &str, v: &[(&'static str, String)]| {
            let pairs: Vec<(&str, &str)> = v.iter().map(|(k, s)| (*k, s.as_str())).collect();
            super::corpus::fill(template, &pairs)
        };
        let reply_kind = match (&inv.standing, kind) {
            (Standing::Free, _) if aside.contains_key(&ix) => "available_aside",
            (Standing::Free, _) => "available",
            (_, Kind::Department) => "unsure",
            (_, Kind::Manager) if plain_decline.contains(&ix) => "decline_plain",
            (_, Kind::Manager) => "decline",
        };
        let mut v = vars(busy, &p.name);
        if let Some((peer, l, b)) = aside.get(&ix) {
            v.push(("peer", peer.clone()));
            v.push(("later", l.clone()));
            v.push(("earlier", b.clone()));
        }
        let response = fill(pick(&mut text, &section(PHRASES, reply_kind)), &v);
        let key = format!("clue/{}/{}-availability", ctx.id, slug(&p.name));
        let mut trigger = vec![ask.clone(), subject.clone()];
        if lead.is_some_and(|l| l.key == p.key) {
            // Asked about a member, the manager does not answer about themself.
            trigger.push(
                invitees
                    .iter()
                    .filter(|o| o.person.key != p.key && first_name(o.person) != first_name(p))
                    .flat_map(|o| {
                        [
                            format!("!{}", o.person.name),
                            format!("!{}", first_name(o.person)),
                        ]
                    })
                    .collect(),
            );
        }
        clues.push((
            p.key.clone(),
            Clue {
                key: key.clone(),
                task: Some(task.clone()),
                trigger,
                after: Vec::new(),
                response,
            },
        ));
        availability.insert(p.key.as_str(), key.clone());
        if let Some(lead) = lead.filter(|l| l.key != p.key) {
            // Before the member has answered, the manager sends the intern to them;
            // the confirmation below (same trigger) replaces this once it applies.
            clues.push((
                lead.key.clone(),
                Clue {
                    key: format!("clue/{}/{}-ask-them", ctx.id, slug(&p.name)),
                    task: Some(task.clone()),
                    trigger: vec![vec![p.name.clone(), first_name(p).to_owned()], ask_about.clone()],
                    after: Vec::new(),
                    response: format!(
                        "I don't know {0}'s plans for that slot offhand. Please ask {0} directly first.",
                        first_name(p)
                    ),
                },
            ));
        }
        if let (Some(b), Some(lead)) = (busy, lead) {
            let template = if inv.can_come() {
                "confirm_free"
            } else {
                "confirm_clash"
            };
            let ckey = format!("clue/{}/{}-confirmed", ctx.id, slug(&p.name));
            clues.push((
                lead.key.clone(),
                Clue {
                    key: ckey.clone(),
                    task: Some(task.clone()),
                    trigger: vec![
                        vec![p.name.clone(), first_name(p).to_owned()],
                        ask_about.clone(),
                    ],
                    after: vec![Condition::Disclosed(key)],
                    response: fill(
                        pick(&mut text, &section(PHRASES, template)),
                        &vars(Some(b), first_name(p)),
                    ),
                },
            ));
            confirmations.push(ckey);
        }
        if let Some(b) = busy {
            let mut attendees = vec![p.key.clone()];
            attendees.extend(b.others.iter().cloned());
            meetings.push(MeetingSpec {
                key: b.key.clone(),
                title: b.title.clone(),
                room: b.room.clone(),
                start: ctx.at(&hm(b.start)),
                end: ctx.at(&hm(b.end)),
                organizer: b.organizer.clone(),
                attendees,
                agenda: String::new(),
                announce_after_min: 5,
                early_tolerance_min: 5,
                late_tolerance_min: 5,
                notes: String::new(),
            });
        }
    }
    meetings.sort_by(|a, b| a.key.cmp(&b.key));

    let eligible: Vec<String> = invitees
        .iter()
        .filter(|i| i.can_come())
        .map(|i| i.person.key.clone())
        .collect();
    let clashing: Vec<String> = invitees
        .iter()
        .filter(|i| !i.can_come())
        .map(|i| i.person.key.clone())
        .collect();

    // The oracle: ask everyone, read the replies, confirm the unsure with the
    // manager, book exactly those who can come, join at the start.
    let date = ctx.date;
    let sheet = team_sheet_path(ctx, depts[0]);
    let mut plan = vec![step("list_colleagues", json!({}))];
    if team {
        plan.push(step("read_file", json!({"path": sheet})));
    }
    for inv in &invitees {
        plan.push(step(
            "send_message",
            json!({"to": inv.person.key, "text": format!(
                "Hi {}, I'm setting up the {title} on {date} from {s_hm} to {e_hm}. Are you available to attend?",
                first_name(inv.person)
            )}),
        ));
    }
    for inv in &invitees {
        let mut read = step("read_messages", json!({"with": inv.person.key}));
        read.gate = Gate::ReplyFrom(inv.person.key.clone());
        plan.push(read);
    }
    if let Some(lead) = lead {
        let flagged: Vec<&str> = unsure.iter().map(|i| invited[*i].name.as_str()).collect();
        plan.push(step(
            "send_message",
            json!({"to": lead.key, "text": format!(
                "Thanks, {}. {} told me they might be busy during the {title} ({s_hm} to {e_hm}). Can they attend, or should I leave them off the invite?",
                first_name(lead), list(&flagged)
            )}),
        ));
        let mut read = step("read_messages", json!({"with": lead.key}));
        read.gate = Gate::ReplyFrom(lead.key.clone());
        plan.push(read);
    }
    plan.push(step(
        "book_meeting",
        json!({"title": title, "room": room.key, "start": ctx.at(&s_hm), "end": ctx.at(&e_hm), "attendees": eligible}),
    ));
    // Booked meetings are keyed in booking order, which other tasks may share: join by title.
    let mut join = step("join_meeting", json!({"meeting": title}));
    join.gate = Gate::NotBefore(ctx.at(&s_hm));
    plan.push(join);

    let mut must_confirm: Vec<String> = availability.values().cloned().collect();
    must_confirm.extend(confirmations);
    let booked = |must_invite: Vec<String>,
                  must_not_invite: Vec<String>,
                  only_listed: bool,
                  title_contains: Option<String>,
                  joined_within_min: Option<u32>| Check::Booked {
        title_contains,
        window_start: ctx.at(&s_hm),
        window_end: ctx.at(&e_hm),
        min_minutes: duration,
        must_invite,
        must_not_invite,
        only_listed,
        joined_within_min,
    };
    let who = match kind {
        Kind::Department if team => format!(
            "{}'s team in {} (every member listed under {} in `{sheet}`, {} included)",
            lead.map_or("", |l| l.name.as_str()),
            depts[0],
            lead.map_or("", |l| first_name(l)),
            lead.map_or("", |l| first_name(l)),
        ),
        Kind::Department => format!("every member of the {} department", depts[0]),
        Kind::Manager => format!(
            "every manager in {} (look them up by department)",
            list(&depts)
        ),
    };
    let checkpoints = vec![
        CheckpointSpec {
            key: "availability_confirmed".into(),
            description: "Everyone on the guest list was asked about the slot, and every doubt was settled".into(),
            weight: 1,
            check: Check::Disclosed(must_confirm),
            feedback: match kind {
                Kind::Department => "Not everyone's availability was confirmed. Message each member of the department about the meeting by its title; when someone says they might be busy, ask the department's manager about that person by name.".into(),
                Kind::Manager => "Not every manager was asked. Find the managers of each named department in list_colleagues and ask each one about the meeting by its title before booking.".into(),
            },
        },
        CheckpointSpec {
            key: "booked".into(),
            description: format!("A meeting titled \"{title}\" is booked from {s_hm} to {e_hm} with exactly the people who can attend"),
            weight: 1,
            // A booking counts only with the right guests: the slot and title are
            // in the brief, so booking them with everyone is no work at all.
            check: booked(eligible.clone(), clashing.clone(), true, Some(keyword.to_owned()), None),
            feedback: "No meeting with the requested title was booked for the requested slot with the right guests. Book it with book_meeting for exactly the start and end you were given (available_rooms lists free rooms), before it starts, inviting exactly those who can come.".into(),
        },
        CheckpointSpec {
            key: "attendees_right".into(),
            description: "Exactly the people who can attend are invited".into(),
            weight: 2,
            check: booked(eligible.clone(), clashing.clone(), true, None, None),
            feedback: match kind {
                Kind::Department => "The invite list was wrong. Invite every department member who can come (including the manager) and nobody else; leave off only those whose other meeting really overlaps the slot. A colleague who merely sounds busy may be free: their manager knows.".into(),
                Kind::Manager => "The invite list was wrong. Invite every manager of the named departments who can come and nobody else; leave off those who told you they are busy then (a failed booking also lists conflicts).".into(),
            },
        },
        CheckpointSpec {
            key: "attended_on_time".into(),
            description: format!("Joined the booked meeting (with the right guests) between its start and {LATE_MIN} minutes after"),
            weight: 1,
            // Joining one's own meeting counts only for the right meeting (as above).
            check: booked(eligible.clone(), clashing, true, None, Some(LATE_MIN)),
            feedback: format!("You did not join your meeting on time. A notification arrives when it starts; join it then with join_meeting (it opens at its start, and more than {LATE_MIN} minutes late counts as late)."),
        },
    ];
    let spec = ctx
        .task_spec::<super::meta_task::MeetingBook>(format!(
            "meeting_book/{}/c{conflicts}", kind.name()
        ))
        .key(task)
        .title(format!("Book the {title}"))
        .objective(format!(
            "Please book a meeting titled \"{title}\" today ({date}) from {s_hm} to {e_hm} for {who}. Before booking, ask each of them whether they can attend. Invite everyone who can and nobody else: anyone who cannot make it stays off the invite. Then attend the meeting yourself, joining when it starts (not more than {LATE_MIN} minutes late)."
        ))
        .deadline(ctx.at(&e_hm))
        .checkpoints(checkpoints)
        .hints(vec![
            "list_colleagues shows everyone's department and position.".into(),
            match kind {
                Kind::Department => "Ask each member about the meeting by its title. Someone unsure about their afternoon is not necessarily busy: ask their manager about them by name.".into(),
                Kind::Manager => "Ask each manager about the meeting by its title. A booking that fails lists who is in another meeting then.".into(),
            },
            format!("Book one meeting for exactly {s_hm} to {e_hm} under the given title, invite everyone who can come and no one else, then wait for it to start and join it."),
        ])
        .plan(plan, invitees.len())
        .build();
    if ctx.at(&e_hm) <= ctx.at(ctx.start) {
        return Err("the meeting ends before the day starts".into());
    }
    Ok(Parts {
        tasks: vec![spec],
        files: if team {
            vec![FileSpec {
                path: sheet,
                content: Content::Text(team_sheet(roster, depts[0])),
            }]
        } else {
            Vec::new()
        },
        meetings,
        clues,
        ..Default::default()
    })
}

/// A department's teams: each manager first, then the staff assigned to them in
/// turn (the roster has no reporting lines, so this rule defines them).
fn teams_of<'r>(roster: &'r super::company::Roster, dept: &str) -> Vec<Vec<&'r Person>> {
    let managers = roster.managers(dept);
    let mut teams: Vec<Vec<&Person>> = managers.iter().map(|m| vec![*m]).collect();
    for (i, p) in roster.staff(dept).into_iter().enumerate() {
        if let Some(t) = teams.get_mut(i % managers.len().max(1)) {
            t.push(p);
        }
    }
    teams
}

fn team_sheet_path(ctx: &Ctx<'_>, dept: &str) -> String {
    format!("{}/{}_teams.md", ctx.folder("drive/org"), slug(dept))
}

/// The team sheet of a department (a pure function of the roster, so two tasks
/// writing it write the same bytes).
fn team_sheet(roster: &super::company::Roster, dept: &str) -> String {
    let mut out =
        format!("# {dept} teams\n\nEach manager leads the people listed under their name.\n");
    for t in teams_of(roster, dept) {
        let _ = write!(out, "\n## {} ({})\n\n", t[0].name, t[0].position);
        for p in &t[1..] {
            let _ = writeln!(out, "- {}, {}", p.name, p.position);
        }
    }
    out
}

/// Meeting book has no answer file, so there is no file-shaped wrong answer.
pub fn wrong_answers(_task: &TaskSpec, _scenario: &Scenario) -> Vec<(String, String)> {
    Vec::new()
}

/// Trivially wrong guest lists for a task (label, attendee keys): everyone on the
/// list including those who cannot come, nobody, the eligible minus one, and the
/// eligible plus an outsider who is free at the time. None may pass
/// `attendees_right`.
pub fn wrong_bookings(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, Vec<String>)> {
    let Some(Check::Booked {
        must_invite,
        must_not_invite,
        ..
    }) = task
        .checkpoints
        .iter()
        .find(|c| c.key == "attendees_right")
        .map(|c| &c.check)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut everyone = must_invite.clone();
    everyone.extend(must_not_invite.iter().cloned());
    out.push(("every candidate".to_owned(), everyone));
    out.push(("nobody".to_owned(), Vec::new()));
    if let Some((_, rest)) = must_invite.split_last() {
        out.push(("one left out".to_owned(), rest.to_vec()));
    }
    let busy = |k: &str| {
        scenario
            .meetings
            .iter()
            .any(|m| m.organizer == k || m.attendees.iter().any(|a| a == k))
    };
    if let Some(o) = scenario.company.people.iter().find(|p| {
        !must_invite.contains(&p.key) && !must_not_invite.contains(&p.key) && !busy(&p.key)
    }) {
        let mut plus = must_invite.clone();
        plus.push(o.key.clone());
        out.push(("an outsider added".to_owned(), plus));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::company::{Roster, rooms};
    use tbsim_scenario::{Priority, Release};

    fn parts(seed: u64, p: &Params) -> Result<Parts, String> {
        crate::with_test_ctx(seed, "mb", 40, |ctx| generate(ctx, p))
    }

    fn booked_check(t: &TaskSpec, key: &str) -> (Vec<String>, Vec<String>) {
        match &t.checkpoints.iter().find(|c| c.key == key).unwrap().check {
            Check::Booked {
                must_invite,
                must_not_invite,
                ..
            } => (must_invite.clone(), must_not_invite.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_topic_and_phrase_section_is_present() {
        for s in [
            "staff_busy",
            "manager_busy",
            "available",
            "unsure",
            "confirm_clash",
            "confirm_free",
            "decline",
            "available_aside",
            "decline_plain",
        ] {
            assert!(section(PHRASES, s).len() >= 3, "{s}");
        }
        for s in ["department_topics", "manager_topics"] {
            let t = topics(s);
            assert!(t.len() >= 6, "{s}");
            for (title, kw) in t {
                assert!(title.to_lowercase().contains(kw), "{title} / {kw}");
            }
        }
    }

    #[test]
    fn conflicts_are_calendar_overlaps_and_false_alarms_are_not() {
        for seed in 0..60 {
            for kind in [Kind::Department, Kind::Manager] {
                let p = Params {
                    kind: Some(kind),
                    ..Params::default()
                };
                let parts = parts(seed, &p).unwrap();
                let t = &parts.tasks[0];
                let (eligible, clashing) = booked_check(t, "attendees_right");
                let Check::Booked {
                    window_start,
                    window_end,
                    ..
                } = &t.checkpoints[1].check
                else {
                    panic!()
                };
                let overlaps = |m: &MeetingSpec| m.start < *window_end && m.end > *window_start;
                let c = t.variant.chars().last().unwrap().to_digit(10).unwrap() as usize;
                assert_eq!(clashing.len(), c, "seed {seed}");
                assert!(!eligible.is_empty());
                for k in &clashing {
                    assert!(
                        parts
                            .meetings
                            .iter()
                            .any(|m| overlaps(m) && m.attendees.contains(k)),
                        "seed {seed}: {k} has a clashing meeting"
                    );
                }
                for k in &eligible {
                    assert!(
                        !parts
                            .meetings
                            .iter()
                            .any(|m| overlaps(m) && (m.attendees.contains(k) || &m.organizer == k)),
                        "seed {seed}: {k} is free"
                    );
                }
                if kind == Kind::Department {
                    assert_eq!(parts.meetings.len(), UNSURE, "three sound busy");
                } else {
                    assert_eq!(parts.meetings.len(), c);
                }
            }
        }
    }

    #[test]
    fn managers_come_from_the_named_departments() {
        let roster = Roster::generate(3, "s", 40).unwrap();
        let parts = parts(
            3,
            &Params {
                kind: Some(Kind::Manager),
                ..Params::default()
            },
        )
        .unwrap();
        let (eligible, clashing) = booked_check(&parts.tasks[0], "attendees_right");
        let all: Vec<&String> = eligible.iter().chain(&clashing).collect();
        let managers: Vec<&Person> = roster
            .people
            .iter()
            .filter(|p| p.position.ends_with("Manager"))
            .collect();
        assert_eq!(
            all.len(),
            managers.len(),
            "a 40-person company fits them all"
        );
        for m in managers {
            assert!(all.contains(&&m.key));
            assert!(parts.tasks[0].objective.contains(&m.department));
        }
    }

    #[test]
    fn large_companies_invite_one_team_from_its_sheet() {
        let roster = Roster::generate(5, "s", 200).unwrap();
        let rooms = rooms();
        let ctx = Ctx {
            scenario: "s",
            id: "mb",
            company: &roster,
            date: "2025-10-01",
            start: "09:00",
            deadline: "17:00",
            release: Release::Start,
            priority: Priority::Normal,
            rooms: &rooms,
            seed: 5,
            day: 1,
        };
        let p = Params {
            kind: Some(Kind::Department),
            conflicts: Some(1),
            ..Params::default()
        };
        let parts = generate(&ctx, &p).unwrap();
        let [sheet] = &parts.files[..] else {
            panic!("one team sheet")
        };
        let tbsim_scenario::Content::Text(text) = &sheet.content else {
            panic!()
        };
        let (eligible, clashing) = booked_check(&parts.tasks[0], "attendees_right");
        let everyone: Vec<&String> = eligible.iter().chain(&clashing).collect();
        let lead = roster
            .people
            .iter()
            .find(|p| {
                parts.tasks[0]
                    .objective
                    .contains(&format!("{}'s team", p.name))
            })
            .unwrap();
        // The team is the block under the lead's heading.
        let block = text
            .split("\n## ")
            .find(|b| b.starts_with(&lead.name))
            .unwrap();
        for k in &everyone {
            let p = roster.people.iter().find(|p| &&p.key == k).unwrap();
            assert!(block.contains(&p.name), "{} is in the team", p.name);
        }
        assert_eq!(
            block.lines().filter(|l| l.starts_with("- ")).count() + 1,
            everyone.len()
        );
        assert!(everyone.len() < 12);
    }

    #[test]
    fn every_line_is_filled_in() {
        for seed in 0..20 {
            let parts = parts(seed, &Params::default()).unwrap();
            for (_, c) in &parts.clues {
                assert!(!c.response.contains('{'), "{}", c.response);
            }
            assert!(!parts.tasks[0].objective.contains('{'));
        }
    }

    #[test]
    fn natural_questions_trigger_the_right_clues() {
        use tbsim_engine::npc::{Trigger, concepts};
        let parts = parts(
            4,
            &Params {
                kind: Some(Kind::Department),
                ..Params::default()
            },
        )
        .unwrap();
        let t = &parts.tasks[0];
        let title = t.title.trim_start_matches("Book the ");
        let (_, avail) = parts
            .clues
            .iter()
            .find(|(_, c)| c.key.ends_with("-availability"))
            .unwrap();
        let avail = Trigger::new(&avail.trigger);
        for q in [
            format!("Hi, are you free for the {title} tomorrow at 15:00?"),
            format!("Can you make it to the {title}?"),
            format!("Could you attend the {} meeting?", title.to_lowercase()),
            format!("Hello all, quick check on availability for the {title}."),
        ] {
            assert!(avail.matches(&concepts(&q)), "{q}");
        }
        for q in [
            "Are you free this afternoon?".to_owned(),
            format!("What is the {title} about?"),
        ] {
            assert!(!avail.matches(&concepts(&q)), "{q}");
        }
        let (_, confirm) = parts
            .clues
            .iter()
            .find(|(_, c)| c.key.ends_with("-confirmed"))
            .unwrap();
        let person = confirm
            .key
            .trim_end_matches("-confirmed")
            .rsplit('/')
            .next()
            .unwrap();
        let who = parts
            .clues
            .iter()
            .find(|(_, c)| c.key.ends_with(&format!("{person}-availability")))
            .map(|(k, _)| k.trim_start_matches("npc/").replace('-', " "))
            .unwrap();
        let first = who.split(' ').next().unwrap().to_owned();
        let confirm = Trigger::new(&confirm.trigger);
        for q in [
            format!("{who} said they might be busy. Can they attend?"),
            format!("Should I include {first} in the invite?"),
            format!("Is {first} free then, or should I leave them off?"),
        ] {
            assert!(confirm.matches(&concepts(&q)), "{q}");
        }
        assert!(!confirm.matches(&concepts("Can they attend?")));
    }

    /// A manager asked about a member by the meeting's title and hours (as the
    /// solver asks in traineebench-cl-033) hears one specific question, and it
    /// is the one about that member.
    #[test]
    fn asking_a_manager_about_a_member_by_the_meeting_is_one_question() {
        use tbsim_engine::npc::{Scope, Trigger, concepts};
        let mut asked = 0;
        for seed in 0..30 {
            let parts = parts(
                seed,
                &Params {
                    kind: Some(Kind::Department),
                    ..Params::default()
                },
            )
            .unwrap();
            let t = &parts.tasks[0];
            let title = t.title.trim_start_matches("Book the ");
            let hours = t
                .objective
                .split(" from ")
                .nth(1)
                .and_then(|r| r.split(" for ").next())
                .unwrap();
            let mut triggers: Vec<(Option<&str>, Trigger)> = parts
                .clues
                .iter()
                .map(|(_, c)| (c.task.as_deref(), Trigger::new(&c.trigger)))
                .collect();
            // Another task of the day whose clue the meeting's title also evokes
            // (in cl-033, "Offsite planning huddle" and an event-planning task,
            // whose words include "off"): with two tasks matched, three words
            // beyond the member's own clue make it two questions.
            let other = Trigger::new(&[
                vec![title.to_owned()],
                vec!["attend".to_owned(), "day off".to_owned()],
            ]);
            triggers.push((Some("task/another"), other));
            let scope = Scope::new(
                triggers.iter().map(|(k, tr)| (*k, tr)),
                std::iter::once(t.objective.as_str()),
                std::iter::empty(),
            );
            for (_, c) in parts
                .clues
                .iter()
                .filter(|(_, c)| c.key.ends_with("-ask-them"))
            {
                let who = &c.trigger[0][0];
                let q = format!(
                    "Hi, {who} wasn't sure about the {title} today from {hours}. Can {who} attend, or should I leave {who} off the invite?"
                );
                assert_eq!(scope.judge(&q), Ok(()), "seed {seed}: {q}");
                assert!(Trigger::new(&c.trigger).matches(&concepts(&q)), "{q}");
                asked += 1;
            }
        }
        assert!(asked > 0, "no manager was asked about a member");
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        for p in [
            Params {
                start: Some("09:00".into()),
                ..Params::default()
            },
            Params {
                duration_min: Some(45),
                ..Params::default()
            },
            Params {
                conflicts: Some(4),
                ..Params::default()
            },
        ] {
            assert!(parts(1, &p).unwrap_err().contains("out of range"));
        }
    }
}
