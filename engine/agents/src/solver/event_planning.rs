//! Team outing planning: read the sign-up sheet, ask each participant when they are
//! free, take a day inside everyone's window, then read the guidelines, the places
//! list and the road map from the folder the brief names and work the itinerary out
//! as the guidelines define it (shortest routes along the roads, legs rounded up to
//! whole minutes, ticket prices of the date's period, the score normalised over every
//! itinerary).
//!
//! Everything comes from the files and the replies: the departure time, speed and
//! stays are read from the guidelines' text, prices and ratings from the places list,
//! roads from the map's JSON. The given itinerary, the metrics asked for and the
//! return deadline are read from the objective.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{
    Brief, Cx, Job, Next, backticked, file_text, first_number, listed, read, send, short_name,
    write,
};
use tbsim_core::protocol::ToolResult;
use tbsim_core::time::SimTime;

/// How long to wait for the last participant's reply before asking again.
const PATIENCE_SECS: u64 = 60 * 60;

/// The solver if the objective is a team outing.
pub(crate) fn recognise(task: &Brief) -> Option<Box<dyn Job>> {
    let o = &task.objective;
    if !(o.contains("team-building day out") && o.contains("signed up")) {
        return None;
    }
    let ticks = backticked(o);
    let signup = ticks
        .iter()
        .find(|p| p.starts_with("drive/") && p.ends_with(".txt"))?
        .clone();
    let folder = ticks
        .iter()
        .find(|p| p.starts_with("drive/") && p.ends_with('/'))?
        .trim_end_matches('/')
        .to_owned();
    let out = ticks
        .iter()
        .find(|p| p.starts_with("workspace/") && p.ends_with(".json"))?
        .clone();
    let metrics: Vec<String> = ticks
        .iter()
        .filter(|t| ["interest", "cost", "distance", "score"].contains(&t.as_str()))
        .cloned()
        .collect();
    let goal = if let Some(given) = given_plan(o) {
        Goal::Given(given)
    } else if o.contains("propose an itinerary") {
        Goal::Own
    } else {
        let words = [
            ("highest total interest", Metric::Interest),
            ("lowest cost", Metric::Cost),
            ("shortest total distance", Metric::Distance),
            ("highest overall score", Metric::Score),
        ];
        Goal::Best(words.iter().find(|(w, _)| o.contains(w))?.1)
    };
    let back_by = o
        .split_once("whether it is back by ")
        .and_then(|(_, rest)| hhmm(rest.get(..5)?));
    let month = o
        .strip_prefix("In ")
        .and_then(|r| r.split_once(" we are"))
        .map(|(m, _)| m.to_owned())
        .unwrap_or_default();
    let dept = o
        .split_once("taking the ")
        .and_then(|(_, r)| r.split_once(" department"))
        .map(|(d, _)| d.to_owned())
        .unwrap_or_default();
    Some(Box::new(Outing {
        signup,
        folder,
        out,
        metrics,
        goal,
        back_by,
        month,
        dept,
        phase: Phase::ReadSignup,
        people: Vec::new(),
        asked: Vec::new(),
        windows: BTreeMap::new(),
        files: Vec::new(),
        texts: BTreeMap::new(),
        reminded: false,
    }))
}

/// `(morning, lunch, afternoon)` from "(morning at X, lunch at Y, afternoon at Z)".
fn given_plan(o: &str) -> Option<(String, String, String)> {
    let rest = o.split_once("(morning at ")?.1;
    let (m, rest) = rest.split_once(", lunch at ")?;
    let (l, rest) = rest.split_once(", afternoon at ")?;
    let (a, _) = rest.split_once(')')?;
    Some((m.trim().into(), l.trim().into(), a.trim().into()))
}

/// Minutes since midnight of `HH:MM`.
fn hhmm(s: &str) -> Option<u32> {
    let (h, m) = s.trim().split_once(':')?;
    Some(h.parse::<u32>().ok()? * 60 + m.get(..2)?.parse::<u32>().ok()?)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Interest,
    Cost,
    Distance,
    Score,
}

#[derive(Debug, Clone, PartialEq)]
enum Goal {
    /// The brief's itinerary (morning, lunch, afternoon).
    Given((String, String, String)),
    /// Any itinerary of ours.
    Own,
    /// A best itinerary by this metric.
    Best(Metric),
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    ReadSignup,
    Ask(usize),
    ListFolder,
    ReadFiles(usize),
    AwaitReplies,
    Write,
    Done,
}

struct Outing {
    signup: String,
    folder: String,
    out: String,
    metrics: Vec<String>,
    goal: Goal,
    back_by: Option<u32>,
    month: String,
    dept: String,
    phase: Phase,
    /// Participants' keys, as the sign-up sheet names them.
    people: Vec<String>,
    /// Who was asked, the inbox length then, and when.
    asked: Vec<(String, usize, SimTime)>,
    /// Each participant's free days, `YYYY-MM-DD`.
    windows: BTreeMap<String, BTreeSet<String>>,
    /// The materials to read: guidelines, places list, road map.
    files: Vec<String>,
    texts: BTreeMap<String, String>,
    reminded: bool,
}

/// The days of the month a reply says its sender is free: the stretches it names
/// ("free from A to B", "and again from C to D"), or, when it names the days away
/// ("any day ... except from A to B"), every other day of that month.
fn free_days(text: &str) -> Option<BTreeSet<String>> {
    let dates = dates_in(text);
    let first = dates.first()?;
    let (y, m): (i32, u32) = (
        first.get(..4)?.parse().ok()?,
        first.get(5..7)?.parse().ok()?,
    );
    let day = |d: &String| d.get(8..10).and_then(|v| v.parse::<u32>().ok());
    let spans: Vec<(u32, u32)> = dates
        .chunks(2)
        .filter_map(|p| Some((day(p.first()?)?, day(p.get(1)?)?)))
        .collect();
    if spans.is_empty() {
        return None;
    }
    let away = text.contains("except");
    let last = match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    };
    Some(
        (1..=last)
            .filter(|d| spans.iter().any(|&(a, b)| (a..=b).contains(d)) != away)
            .map(|d| format!("{y:04}-{m:02}-{d:02}"))
            .collect(),
    )
}

/// The `YYYY-MM-DD` dates of a reply, in order.
fn dates_in(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter(|w| {
            w.len() == 10
                && w.as_bytes()[4] == b'-'
                && w.as_bytes()[7] == b'-'
                && w.chars().filter(char::is_ascii_digit).count() == 8
        })
        .map(str::to_owned)
        .collect()
}

impl Outing {
    /// Reads every reply of the participants asked so far; a reply naming two dates
    /// gives that person's window.
    fn collect(&mut self, cx: &Cx) {
        for (who, since, _) in &self.asked {
            if self.windows.contains_key(who) {
                continue;
            }
            for h in cx.replies_from(who, *since) {
                if let Some(days) = free_days(&h.text) {
                    self.windows.insert(who.clone(), days);
                    break;
                }
            }
        }
    }

    fn question(&self, first: &str) -> String {
        format!(
            "Hi {first}, I'm organising the {} team outing in {}. Which days are you free that month?",
            self.dept, self.month
        )
    }

    fn answer(&self) -> Option<String> {
        // The days every participant is free: the first of them suits everyone.
        let mut common = self.windows.values();
        let mut days = common.next()?.clone();
        for d in common {
            days = days.intersection(d).cloned().collect();
        }
        let start = days.first()?.clone();
        let text = |ext: &str, not: &str| {
            self.texts
                .iter()
                .find(|(p, _)| p.ends_with(ext) && !p.contains(not))
                .map(|(_, t)| t.as_str())
        };
        let rules = Rules::parse(text(".md", "\u{0}")?)?;
        let places = Places::parse(text(".txt", &self.signup)?)?;
        let roads = roads(text(".json", "\u{0}")?, &places)?;
        let day: u32 = start.get(8..10)?.parse().ok()?;
        let all = itineraries(&rules, &places, &roads, day)?;
        let pick = match &self.goal {
            Goal::Given((m, l, a)) => {
                let idx = |list: &[Place], n: &str| {
                    list.iter().position(|p| p.name.eq_ignore_ascii_case(n))
                };
                let (m, l, a) = (
                    idx(&places.sites, m)?,
                    idx(&places.restaurants, l)?,
                    idx(&places.sites, a)?,
                );
                all.iter()
                    .find(|t| (t.morning, t.lunch, t.afternoon) == (m, l, a))?
            }
            // Ours: the best overall, as good a proposal as any.
            Goal::Own => best(&all, Metric::Score)?,
            Goal::Best(metric) => best(&all, *metric)?,
        };
        let mut metrics = serde_json::Map::new();
        for k in &self.metrics {
            let v = match k.as_str() {
                "interest" => json!(pick.interest as f64 / 100.0),
                "cost" => json!(pick.cost),
                "distance" => json!(pick.distance as f64 / 100.0),
                _ => json!((pick.score * 10_000.0).round() / 10_000.0),
            };
            metrics.insert(k.clone(), v);
        }
        let mut answer = json!({
            "event_date": start,
            "plan": {
                "morning": places.sites[pick.morning].name,
                "lunch": places.restaurants[pick.lunch].name,
                "afternoon": places.sites[pick.afternoon].name,
            },
            "metrics": Value::Object(metrics),
        });
        if let Some(limit) = self.back_by {
            answer["end_time"] = json!(format!("{:02}:{:02}", pick.back / 60, pick.back % 60));
            answer["can_complete_on_time"] = json!(pick.back <= limit);
        }
        serde_json::to_string_pretty(&answer).ok()
    }
}

/// The day's timetable as the guidelines state it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rules {
    depart: u32,
    speed_kmh: i64,
    /// Morning, lunch, afternoon stays in minutes.
    stays: [u32; 3],
}

impl Rules {
    fn parse(text: &str) -> Option<Rules> {
        let depart = text
            .split_once("leaves the office at ")
            .and_then(|(_, r)| hhmm(r.get(..5)?))?;
        let speed = text
            .split_once("averages ")
            .and_then(|(_, r)| first_number(r.split_once("km/h")?.0))? as i64;
        // "spends N minutes there", once per stop, in the day's order.
        let stays: Vec<u32> = text
            .split("spends ")
            .skip(1)
            .filter_map(|r| first_number(r.split_once("minutes")?.0).map(|n| n as u32))
            .collect();
        Some(Rules {
            depart,
            speed_kmh: speed,
            stays: stays.try_into().ok()?,
        })
    }
}

#[derive(Debug, Clone)]
struct Place {
    name: String,
    /// Price per person on days (first, last) of the month; one period for a
    /// price that does not change.
    prices: Vec<(u32, u32, u32)>,
    /// Interest in hundredths.
    interest: i64,
}

impl Place {
    fn price_on(&self, day: u32) -> Option<u32> {
        self.prices
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&day))
            .map(|p| p.2)
    }
}

struct Places {
    sites: Vec<Place>,
    restaurants: Vec<Place>,
}

/// Periods and prices of a ticket line: `free`, `40 per person, all month`, or
/// `early month (1st to 10th) 36, mid month (11th to 20th) 40, late month (21st to month end) 48
/// per person`.
fn ticket(line: &str) -> Option<Vec<(u32, u32, u32)>> {
    let line = line.trim();
    if line.starts_with("free") {
        return Some(vec![(1, 31, 0)]);
    }
    if !line.contains('(') {
        return Some(vec![(1, 31, first_number(line)? as u32)]);
    }
    let mut out = Vec::new();
    for part in line.split('(').skip(1) {
        let (range, after) = part.split_once(')')?;
        let price = first_number(after)? as u32;
        let nums: Vec<u32> = range
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let (a, b) = match nums.as_slice() {
            [a, b] => (*a, *b),
            // "21st to month end" (or "day 21 on"): to the month's end.
            [a] if range.contains(" on") || range.contains("end") => (*a, 31),
            _ => return None,
        };
        out.push((a, b, price));
    }
    Some(out)
}

impl Places {
    fn parse(text: &str) -> Option<Places> {
        let (_, rest) = text.split_once("SITES")?;
        let (sites, restaurants) = rest.split_once("RESTAURANTS")?;
        let entries = |block: &str, price_label: &str| -> Option<Vec<Place>> {
            let mut out: Vec<Place> = Vec::new();
            for line in block.lines() {
                let t = line.trim();
                if let Some((n, rest)) = t.split_once(". ")
                    && !n.is_empty()
                    && n.chars().all(|c| c.is_ascii_digit())
                {
                    // "3. Willow Park (park)": the name is before the kind.
                    let name = rest.rsplit_once(" (").map_or(rest, |(n, _)| n);
                    out.push(Place {
                        name: name.trim().to_owned(),
                        prices: Vec::new(),
                        interest: 0,
                    });
                } else if let Some(p) = t.strip_prefix(price_label) {
                    out.last_mut()?.prices = ticket(p)?;
                } else if let Some(i) = t.strip_prefix("Interest:") {
                    out.last_mut()?.interest = (first_number(i)? * 100.0).round() as i64;
                }
            }
            Some(out)
        };
        Some(Places {
            sites: entries(sites, "Ticket:")?,
            restaurants: entries(restaurants, "Average price:")?,
        })
    }

    /// The index (office 0, sites, then restaurants) of a place name.
    fn node(&self, name: &str) -> Option<usize> {
        if name.eq_ignore_ascii_case("office") {
            return Some(0);
        }
        let n = self.sites.len();
        self.sites
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
            .map(|i| 1 + i)
            .or_else(|| {
                self.restaurants
                    .iter()
                    .position(|p| p.name.eq_ignore_ascii_case(name))
                    .map(|i| 1 + n + i)
            })
    }
}

/// Shortest road distances (hundredths of a km) between every two places, from the
/// map's JSON (`nodes` with `id` and `name`, `roads` with `from`, `to`, `km`).
fn roads(text: &str, places: &Places) -> Option<Vec<Vec<i64>>> {
    let v: Value = serde_json::from_str(text).ok()?;
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for n in v.get("nodes")?.as_array()? {
        let id = n.get("id")?.as_str()?;
        let name = n.get("name")?.as_str()?;
        ids.insert(id.to_owned(), places.node(name)?);
    }
    let n = 1 + places.sites.len() + places.restaurants.len();
    const FAR: i64 = i64::MAX / 4;
    let mut d = vec![vec![FAR; n]; n];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = 0;
    }
    for r in v.get("roads")?.as_array()? {
        let a = *ids.get(r.get("from")?.as_str()?)?;
        let b = *ids.get(r.get("to")?.as_str()?)?;
        let km = (r.get("km")?.as_f64()? * 100.0).round() as i64;
        d[a][b] = d[a][b].min(km);
        d[b][a] = d[b][a].min(km);
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if d[i][k] + d[k][j] < d[i][j] {
                    d[i][j] = d[i][k] + d[k][j];
                }
            }
        }
    }
    d.iter().flatten().all(|&x| x < FAR).then_some(d)
}

#[derive(Debug, Clone)]
struct Trip {
    morning: usize,
    lunch: usize,
    afternoon: usize,
    /// Hundredths.
    interest: i64,
    cost: u32,
    /// Hundredths of a km.
    distance: i64,
    score: f64,
    /// Return, minutes since midnight.
    back: u32,
}

impl Trip {
    fn value(&self, m: Metric) -> f64 {
        match m {
            Metric::Interest => self.interest as f64,
            Metric::Cost => f64::from(self.cost),
            Metric::Distance => self.distance as f64,
            Metric::Score => self.score,
        }
    }
}

/// Every itinerary (morning site, restaurant, different afternoon site) on `day`,
/// with the guidelines' metrics.
fn itineraries(rules: &Rules, p: &Places, d: &[Vec<i64>], day: u32) -> Option<Vec<Trip>> {
    let ns = p.sites.len();
    // A leg of h hundredths of a km at v km/h takes h * 60 / (v * 100) minutes,
    // rounded up.
    let per = rules.speed_kmh * 100;
    let minutes = |h: i64| ((h * 60 + per - 1) / per) as u32;
    let mut out = Vec::new();
    for m in 0..ns {
        for l in 0..p.restaurants.len() {
            for a in (0..ns).filter(|&a| a != m) {
                let stops = [0, 1 + m, 1 + ns + l, 1 + a, 0];
                let legs: Vec<i64> = stops.windows(2).map(|w| d[w[0]][w[1]]).collect();
                let travel: u32 = legs.iter().map(|&h| minutes(h)).sum();
                out.push(Trip {
                    morning: m,
                    lunch: l,
                    afternoon: a,
                    interest: p.sites[m].interest + p.restaurants[l].interest + p.sites[a].interest,
                    cost: p.sites[m].price_on(day)?
                        + p.restaurants[l].price_on(day)?
                        + p.sites[a].price_on(day)?,
                    distance: legs.iter().sum(),
                    score: 0.0,
                    back: rules.depart + travel + rules.stays.iter().sum::<u32>(),
                });
            }
        }
    }
    let range = |m: Metric| {
        let lo = out.iter().map(|t| t.value(m)).fold(f64::INFINITY, f64::min);
        let hi = out
            .iter()
            .map(|t| t.value(m))
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let (rc, ri, rd) = (
        range(Metric::Cost),
        range(Metric::Interest),
        range(Metric::Distance),
    );
    let norm = |v: f64, (lo, hi): (f64, f64)| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    for t in &mut out {
        t.score = 0.4 * (1.0 - norm(t.value(Metric::Cost), rc))
            + 0.4 * norm(t.value(Metric::Interest), ri)
            + 0.2 * (1.0 - norm(t.value(Metric::Distance), rd));
    }
    Some(out)
}

/// The first itinerary (in list order) with the best value of `m`.
fn best(all: &[Trip], m: Metric) -> Option<&Trip> {
    let higher = matches!(m, Metric::Interest | Metric::Score);
    all.iter().fold(None, |acc: Option<&Trip>, t| match acc {
        Some(b)
            if (higher && t.value(m) <= b.value(m)) || (!higher && t.value(m) >= b.value(m)) =>
        {
            Some(b)
        }
        _ => Some(t),
    })
}

impl Job for Outing {
    fn step(&mut self, cx: &Cx, last: Option<&ToolResult>) -> Next {
        let mut last = last;
        loop {
            match self.phase.clone() {
                Phase::ReadSignup => {
                    let Some(r) = last.take() else {
                        return read(&self.signup);
                    };
                    // "- Name (Position)" lines; the names as list_colleagues has them.
                    self.people = file_text(r)
                        .unwrap_or_default()
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("- "))
                        .filter_map(|l| cx.colleague(l.split(" (").next()?.trim()))
                        .map(|c| c.key.clone())
                        .collect();
                    self.phase = Phase::Ask(0);
                }
                Phase::Ask(i) => {
                    last.take();
                    let Some(who) = self.people.get(i).cloned() else {
                        self.phase = Phase::ListFolder;
                        continue;
                    };
                    let first = cx
                        .colleague(&who)
                        .map(|c| short_name(cx, &c.name))
                        .unwrap_or_default();
                    self.asked.push((who.clone(), cx.inbox.len(), cx.now));
                    self.phase = Phase::Ask(i + 1);
                    return send(&who, &self.question(&first));
                }
                Phase::ListFolder => {
                    let Some(r) = last.take() else {
                        return Next::Call("list_folder", json!({"path": self.folder}));
                    };
                    let files = listed(r);
                    let pick = |ext: &str| {
                        files
                            .iter()
                            .find(|p| p.ends_with(ext) && **p != self.signup)
                            .cloned()
                    };
                    self.files = [pick(".md"), pick(".txt"), pick(".json")]
                        .into_iter()
                        .flatten()
                        .collect();
                    self.phase = Phase::ReadFiles(0);
                }
                Phase::ReadFiles(i) => {
                    if let Some(r) = last.take() {
                        let text = file_text(r).unwrap_or_default().to_owned();
                        self.texts.insert(self.files[i - 1].clone(), text);
                    }
                    match self.files.get(i) {
                        Some(p) => {
                            self.phase = Phase::ReadFiles(i + 1);
                            return read(&p.clone());
                        }
                        None => self.phase = Phase::AwaitReplies,
                    }
                }
                Phase::AwaitReplies => {
                    last.take();
                    self.collect(cx);
                    if self.windows.len() == self.people.len() {
                        self.phase = Phase::Write;
                        continue;
                    }
                    // Ask once more whoever has not answered within the hour.
                    let latest = self.asked.iter().map(|a| a.2).max().unwrap_or(cx.now);
                    let due = SimTime(latest.0 + PATIENCE_SECS);
                    if cx.now < due {
                        return Next::Until(due);
                    }
                    if self.reminded {
                        // Nothing more to learn: answer with the windows there are.
                        self.phase = Phase::Write;
                        continue;
                    }
                    self.reminded = true;
                    let Some(who) = self
                        .people
                        .iter()
                        .find(|p| !self.windows.contains_key(*p))
                        .cloned()
                    else {
                        continue;
                    };
                    let first = cx
                        .colleague(&who)
                        .map(|c| short_name(cx, &c.name))
                        .unwrap_or_default();
                    self.asked.push((who.clone(), cx.inbox.len(), cx.now));
                    return send(&who, &self.question(&first));
                }
                Phase::Write => {
                    if last.take().is_some() {
                        self.phase = Phase::Done;
                        continue;
                    }
                    let Some(answer) = self.answer() else {
                        self.phase = Phase::Done;
                        continue;
                    };
                    return write(&self.out, &answer);
                }
                Phase::Done => return Next::Done,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_by_period() {
        assert_eq!(ticket("free"), Some(vec![(1, 31, 0)]));
        assert_eq!(ticket("40 per person, all month"), Some(vec![(1, 31, 40)]));
        assert_eq!(
            ticket(
                "early month (1st to 10th) 36, mid month (11th to 20th) 40, late month (21st to month end) 48 per person"
            ),
            Some(vec![(1, 10, 36), (11, 20, 40), (21, 31, 48)])
        );
    }

    #[test]
    fn given_itinerary_and_dates() {
        let o = "to work out these metrics of the itinerary we have in mind (morning at Willow Park, lunch at Red Kettle Grill, afternoon at Moss Farm): `cost`.";
        assert_eq!(
            given_plan(o),
            Some((
                "Willow Park".into(),
                "Red Kettle Grill".into(),
                "Moss Farm".into()
            ))
        );
        assert_eq!(
            dates_in("I'm free from 2025-11-03 to 2025-11-07, both days included."),
            vec!["2025-11-03", "2025-11-07"]
        );
    }
}
